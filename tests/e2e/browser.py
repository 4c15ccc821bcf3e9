"""Debian's Chromium, driven by Playwright for Python.

Playwright's own browser downloads do not work on a closed network, so the test uses the
system Chromium (``/usr/bin/chromium``), installed when missing by
``scripts/ensure_browser.sh``.  Without the background-networking flags Chromium's own
connections (updates, sync, field trials) are refused here and slow the page down.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Optional

import pytest

ROOT = Path(__file__).resolve().parents[2]
ENSURE = ROOT / "scripts" / "ensure_browser.sh"
CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def ensure_browser(timeout: float = 900.0) -> Optional[str]:
    """Run ``scripts/ensure_browser.sh``; None when Chromium and Playwright are usable,
    else the reason they are not (the script's last words)."""
    try:
        # The interpreter running the tests is the one that needs Playwright (without this
        # the script would pick, or create, the checkout's .venv).
        env = dict(os.environ, RELAY_NB_PYTHON=sys.executable)
        done = subprocess.run(
            ["bash", str(ENSURE)], capture_output=True, text=True, timeout=timeout, env=env
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{ENSURE.name} could not run: {exc}"
    if done.returncode != 0:
        lines = (done.stderr or done.stdout).strip().splitlines()
        return lines[-1] if lines else f"{ENSURE.name} exited with {done.returncode}"
    return None


def launch(playwright, timeout_ms: float = 60_000):
    """A headless Chromium browser from the system install."""
    return playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS, timeout=timeout_ms)


@pytest.fixture(scope="module")
def browser():
    """The e2e tests' Chromium (import it into a test module); skips only when Chromium
    cannot be installed."""
    reason = ensure_browser()
    if reason is not None:
        pytest.skip(f"Chromium cannot be installed here ({reason})")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = launch(playwright)
        try:
            yield chromium
        finally:
            chromium.close()


__all__ = ["ARGS", "CHROMIUM", "browser", "ensure_browser", "launch"]
