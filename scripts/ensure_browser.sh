#!/usr/bin/env bash
# Make sure the end-to-end JupyterLab test (tests/test_e2e_jupyterlab.py) has its browser:
# Debian's chromium at /usr/bin/chromium, and Playwright for Python (the driver only;
# Playwright's own browser downloads do not work on a closed network, so none is fetched).
#
#   scripts/ensure_browser.sh        # exit 0 when /usr/bin/chromium and playwright are usable
#
# apt-get runs only when chromium is missing, non-interactively, as root (or through sudo
# without a password).  Exit status 1 (with the reason on stderr) when it cannot be
# installed; the e2e test then skips with that reason.
set -uo pipefail

CHROMIUM=/usr/bin/chromium
# The same Python as main.sh and test.sh (inherited from test.sh, else chosen the same way).
source "$(dirname "${BASH_SOURCE[0]}")/python_env.sh"
PYTHON=$RELAY_NB_PYTHON

say() { echo "ensure_browser: $*" >&2; }

if [ ! -x "$CHROMIUM" ]; then
    if ! command -v apt-get >/dev/null 2>&1; then
        say "no $CHROMIUM and no apt-get to install it (not a Debian-like system)"
        exit 1
    fi
    SUDO=""
    if [ "$(id -u)" != "0" ]; then
        if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
            SUDO="sudo -n"
        else
            say "no $CHROMIUM, and not root (nor passwordless sudo) to apt-get install chromium"
            exit 1
        fi
    fi
    say "installing Debian's chromium with apt-get"
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq >/dev/null || say "apt-get update failed; trying the install anyway"
    if ! $SUDO apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null; then
        say "apt-get install chromium failed"
        exit 1
    fi
fi

if ! "$CHROMIUM" --headless --no-sandbox --disable-gpu --version >/dev/null 2>&1; then
    say "$CHROMIUM is installed but does not start"
    exit 1
fi

if ! "$PYTHON" -c "import playwright.sync_api" 2>/dev/null; then
    say "installing Playwright for Python with pip (the driver; no browser download)"
    if ! "$PYTHON" -m pip install --quiet --disable-pip-version-check "playwright>=1.40"; then
        say "pip install playwright failed"
        exit 1
    fi
fi

echo "ensure_browser: $("$CHROMIUM" --version 2>/dev/null), playwright $("$PYTHON" -c 'import importlib.metadata as m; print(m.version("playwright"))')"
