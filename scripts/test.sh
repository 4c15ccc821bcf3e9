#!/usr/bin/env bash
# Install relay_nb with its test extras and run the whole test suite, including the
# end-to-end JupyterLab test (scripts/ensure_browser.sh provides Chromium and Playwright;
# when it cannot, that one test reports a skip with the reason).
set -euo pipefail
cd "$(dirname "$0")/.."
python -m pip install --quiet --disable-pip-version-check -e ".[test]"
bash scripts/ensure_browser.sh || echo "test.sh: browser unavailable; the e2e test will skip" >&2
python -m pytest -q "$@"
