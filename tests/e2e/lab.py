"""Driving a notebook in JupyterLab the way a person does: open it, Run → Run All Cells,
wait until every cell has run, read what the page shows.

Every wait is on the page's state (selectors, prompts, the kernel status), never a
fixed sleep; timeouts are generous because a cold kernel compiles LLVM kernels.
"""

from __future__ import annotations

import re
import time

# JupyterLab's DOM (4.x): stable class names of its public CSS.
NOTEBOOK = ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook"
CODE_PROMPTS = f"{NOTEBOOK} .jp-CodeCell .jp-InputArea-prompt"
# The status bar reads "Python 3 (ipykernel) | Idle" once the kernel answered over a
# working connection (the toolbar's execution indicator says idle even before a kernel).
_KERNEL_IDLE_JS = """() => {
  const bar = document.querySelector('#jp-main-statusbar');
  const text = bar ? bar.innerText : '';
  return /\\| Idle\\b/.test(text) && !/No Kernel/.test(text);
}"""

_STATE_JS = """(selector) => {
  const prompts = Array.from(document.querySelectorAll(selector)).map(p => p.textContent.trim());
  return {
    total: prompts.length,
    running: prompts.filter(t => t.includes('*')).length,
    done: prompts.filter(t => /\\[\\d+\\]/.test(t)).length,
  };
}"""


def accept_dialog(page) -> bool:
    """Accept an open dialog (e.g. "Select Kernel": its default is the notebook's kernel)."""
    button = page.locator(".jp-Dialog .jp-mod-accept")
    if button.count() and button.first.is_visible():
        button.first.click()
        return True
    return False


def open_notebook(page, url: str, timeout_ms: float = 180_000) -> None:
    """Load ``url`` (``/lab/tree/NAME.ipynb?token=...``) and wait for the notebook and an
    idle kernel."""
    page.goto(url, timeout=timeout_ms, wait_until="domcontentloaded")
    page.wait_for_selector(f"{NOTEBOOK} .jp-Cell", timeout=timeout_ms)
    wait_kernel_idle(page, timeout_ms)
    accept_dialog(page)


def wait_kernel_idle(page, timeout_ms: float = 180_000) -> None:
    """Wait until the status bar shows the notebook's kernel connected and idle."""
    page.wait_for_function(_KERNEL_IDLE_JS, timeout=timeout_ms)


def run_all_cells(page, timeout_ms: float = 30_000, attempts: int = 3, start_s: float = 20.0) -> int:
    """Run → Run All Cells, through the menu bar; wait until a cell has started and
    return how many tries that took.

    If no cell starts within ``start_s`` (a dialog was in the way, the click landed while
    the page was still settling), dismiss any dialog and choose the menu item again:
    nothing ran, so nothing runs twice."""
    for attempt in range(attempts):
        accept_dialog(page)
        page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click(timeout=timeout_ms)
        page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Run All Cells$")).click(
            timeout=timeout_ms
        )
        deadline = time.monotonic() + start_s
        while time.monotonic() < deadline:
            state = prompt_state(page)
            if state["running"] or state["done"]:
                return attempt + 1
            page.wait_for_timeout(250)
    raise TimeoutError(f"Run All Cells started no cell in {attempts} attempts: {prompt_state(page)}")


def prompt_state(page) -> dict:
    """How many code cells there are, how many are queued/running (``[*]``), how many ran."""
    return page.evaluate(_STATE_JS, CODE_PROMPTS)


def wait_until_executed(page, timeout_s: float = 600.0) -> dict:
    """After :func:`run_all_cells`: wait until no cell is queued or running and the kernel
    is idle; return the prompt state.  Run All stops at a failing cell, leaving the cells
    after it unnumbered."""
    deadline = time.monotonic() + timeout_s
    state = prompt_state(page)
    while time.monotonic() < deadline:
        state = prompt_state(page)
        if state["running"] == 0:
            # All prompts settled: make sure the kernel agrees.
            wait_kernel_idle(page, max(1.0, deadline - time.monotonic()) * 1e3)
            if prompt_state(page)["running"] == 0:
                return prompt_state(page)
        page.wait_for_timeout(250)  # poll interval, not a wait for something to happen
    raise TimeoutError(f"cells still running after {timeout_s:.0f} s: {state}")


def error_outputs(page) -> list[str]:
    """The text of every output that shows a Python traceback."""
    texts = page.locator(f"{NOTEBOOK} .jp-OutputArea-output").all_inner_texts()
    return [t for t in texts if "Traceback" in t]


__all__ = [
    "CODE_PROMPTS",
    "accept_dialog",
    "NOTEBOOK",
    "error_outputs",
    "open_notebook",
    "prompt_state",
    "run_all_cells",
    "wait_kernel_idle",
    "wait_until_executed",
]
