#!/usr/bin/env bash
# Install relay_nb with its test extras and run the whole test suite, including the
# end-to-end JupyterLab test (scripts/ensure_browser.sh provides Chromium and Playwright;
# when it cannot, that one test reports a skip with the reason).
#
# The Python used is chosen by scripts/python_env.sh: the active virtualenv/conda env, else
# .venv/ in the checkout (created on first use); RELAY_NB_USE_ACTIVE_PYTHON=1 uses the
# `python` on PATH instead.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/python_env.sh
"$RELAY_NB_PYTHON" -m pip install --quiet --disable-pip-version-check -e ".[test]"
bash scripts/ensure_browser.sh || echo "test.sh: browser unavailable; the e2e test will skip" >&2
"$RELAY_NB_PYTHON" -m pytest -q "$@"
