"""Helpers for the end-to-end test in a real JupyterLab driven by headless Chromium
(tests/test_e2e_jupyterlab.py): starting the server, getting the browser, driving the page."""
