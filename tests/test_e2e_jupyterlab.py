"""End to end in a real JupyterLab, driven by headless Chromium (issue 6 §5).

A JupyterLab server (random port and token, a temporary root holding a copy of the
tutorials) serves tutorial 02; Playwright opens it, runs every cell through the menu,
checks that the DAG and ANF drawings are in the page, then steps the pass stepper with
its "next" button to the step flagged red and checks that the diff view changed.
Screenshots go to build/e2e/.  The test skips only when Chromium cannot be installed
(scripts/ensure_browser.sh failed); everything else is a failure.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

from e2e.browser import browser  # noqa: F401  (the fixture)
from e2e.lab import NOTEBOOK, error_outputs, open_notebook, run_all_cells, wait_until_executed
from e2e.server import start_lab

ROOT = Path(__file__).resolve().parents[1]
TUTORIALS = ROOT / "tutorials"
OUT = ROOT / "build" / "e2e"
NOTEBOOK_NAME = "02_dataflow_vs_anf.ipynb"
FLAGGED_PASS = "NaiveCSE"  # the deliberately wrong pass at the end of tutorial 02


def _tutorial_root(tmp_path: Path) -> Path:
    """The workspace scripts/main.sh serves: copies of the tutorials (JupyterLab writes to
    what it opens; the checkout must stay clean)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("lab_workspace", ROOT / "scripts" / "lab_workspace.py")
    workspace = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(workspace)
    root = tmp_path / "tutorials"
    workspace.copy_tutorials(root, TUTORIALS)
    return root


def _rgb(css: str) -> tuple[int, int, int]:
    found = re.findall(r"\d+", css)
    assert len(found) >= 3, css
    r, g, b = (int(v) for v in found[:3])
    return r, g, b


def _current_step(stepper) -> tuple[int, str, str]:
    row = stepper.locator("tr.relay-step-current")
    return (
        int(row.get_attribute("data-step")),
        row.get_attribute("class") or "",
        row.locator("td.relay-pass").inner_text().strip(),
    )


def test_tutorial_02_runs_in_jupyterlab_and_the_stepper_reaches_the_flagged_pass(browser, tmp_path):
    start = time.perf_counter()
    OUT.mkdir(parents=True, exist_ok=True)
    server = start_lab(_tutorial_root(tmp_path), tmp_path / "lab")
    context = None
    try:
        context = browser.new_context(viewport={"width": 1400, "height": 1500})
        page = context.new_page()
        page.set_default_timeout(120_000)
        open_notebook(page, server.url(f"/lab/tree/{NOTEBOOK_NAME}"))
        tries = run_all_cells(page)
        state = wait_until_executed(page, timeout_s=600)
        errors = error_outputs(page)
        page.screenshot(path=str(OUT / "02_after_run_all.png"))
        assert not errors, errors[0][:2000]
        assert state["total"] > 10 and state["done"] == state["total"], (state, server.log_tail())
        print(f"Run All Cells: {tries} tries; cells: {state}")

        # The DAG and the ANF, side by side: two SVGs in each comparison output.
        comparisons = page.locator(f"{NOTEBOOK} .relay-nb-compare")
        comparisons.nth(2).wait_for()
        assert comparisons.count() == 3
        first = comparisons.first
        svgs = first.locator("svg")
        assert svgs.count() == 2
        dag, anf = svgs.nth(0), svgs.nth(1)
        assert dag.locator("g.node").count() >= 3 and anf.locator("g.node").count() >= 3
        assert "shared: used 2×" in dag.inner_html()  # %1 = log(%x) drawn once, used twice
        assert "%x1 = log(%x)" in anf.text_content()  # the let binding of the same node
        assert dag.bounding_box()["width"] > 50 and anf.bounding_box()["width"] > 50
        first.scroll_into_view_if_needed()
        first.screenshot(path=str(OUT / "02_compare_dag_anf.png"))

        # The stepper: click "next" until the flagged step.
        stepper = page.locator(f"{NOTEBOOK} .relay-stepper")
        stepper.locator("tr.relay-step-current").wait_for()  # the widget view renders after the kernel is idle
        assert stepper.count() == 1
        stepper.scroll_into_view_if_needed()
        diff = stepper.locator(".relay-stepper-diff")
        next_button = stepper.locator("button.relay-stepper-next")
        index, classes, name = _current_step(stepper)
        assert index == 0 and "relay-step-flagged" not in classes
        first_diff = diff.inner_html()
        stepper.screenshot(path=str(OUT / "02_stepper_first_step.png"))
        rows = stepper.locator("tr[data-step]").count()
        clicks = 0
        while "relay-step-flagged" not in classes:
            assert clicks < rows, f"no flagged step after {clicks} clicks of next"
            next_button.click()
            clicks += 1
            page.wait_for_function(
                "([el, i]) => { const r = el.querySelector('tr.relay-step-current');"
                " return r && r.getAttribute('data-step') !== String(i); }",
                arg=[stepper.element_handle(), index],
            )
            index, classes, name = _current_step(stepper)
        assert name == FLAGGED_PASS and clicks == index

        flagged_diff = diff.inner_html()
        assert flagged_diff != first_diff
        assert re.search(r"relay-diff-(chg-new|ins|del)", flagged_diff)  # the pass's change is marked
        # the merged log(%y) went, so `add(%1, %3)` is now `add(%1, %2)`: renumbered, not changed
        assert 'class="relay-diff-renum">  add(%1, %2)' in flagged_diff
        header = stepper.locator(".relay-stepper-header").inner_text()
        assert "result differs from the original" in header
        row = stepper.locator("tr.relay-step-current.relay-step-flagged td.relay-pass")
        r, g, b = _rgb(row.evaluate("el => getComputedStyle(el).color"))
        assert r > 150 and g < 110 and b < 110, f"flagged step is not drawn red: rgb({r}, {g}, {b})"
        stepper.screenshot(path=str(OUT / "02_stepper_flagged_step.png"))

        # Clicking a row of the list shows that step (widgets/step_table.js -> PassStepper.go).
        stepper.locator('tr[data-step="0"]').click()
        page.wait_for_function(
            "el => { const r = el.querySelector('tr.relay-step-current');"
            " return r && r.getAttribute('data-step') === '0'; }",
            arg=stepper.element_handle(),
        )
        # The header is another widget, updated by its own message after the table's: wait
        # for it too (reading it at once raced on a loaded machine).
        page.wait_for_function(
            "el => { const h = el.querySelector('.relay-stepper-header');"
            " return h && h.innerText.startsWith('step 1 of'); }",
            arg=stepper.element_handle(),
        )
        assert stepper.locator(".relay-stepper-header").inner_text().startswith("step 1 of")
        stepper.locator(f'tr[data-step="{index}"]').click()  # back to the flagged step
        page.wait_for_function(
            "([el, i]) => { const r = el.querySelector('tr.relay-step-current');"
            " return r && r.getAttribute('data-step') === String(i); }",
            arg=[stepper.element_handle(), index],
        )
        page.wait_for_function(  # and the header (its own widget) shows that step again
            "el => { const h = el.querySelector('.relay-stepper-header');"
            " return h && h.innerText.includes('result differs from the original'); }",
            arg=stepper.element_handle(),
        )

        # The graph tab: before/after drawings (anywidget views), nodes inspectable.
        stepper.locator(".lm-TabBar-tab", has_text="graph").click()
        explorers = stepper.locator(".relay-ex")  # the graph explorer (relay.viz.explore)
        explorers.nth(1).locator("g.relay-ex-node").first.wait_for()
        assert explorers.count() == 2
        after = explorers.nth(1)
        kind = after.locator(".relay-ex-info td.relay-ex-kind")
        merged = None  # log(%x) took log(%y)'s uses: hovering it says so
        logs = after.locator("g.relay-ex-node", has_text="log")
        for k in range(logs.count()):
            logs.nth(k).dispatch_event("mouseover")
            kind.wait_for()
            if "shared: 3 uses" in kind.inner_text():
                merged = logs.nth(k)
                break
        assert merged is not None, kind.inner_text()
        merged.dispatch_event("click")  # selects the node's line in the text view
        after.locator(".relay-ex-line-selected").first.wait_for()
        assert "log(%x)" in after.locator(".relay-ex-line-selected").first.inner_text()
        stepper.screenshot(path=str(OUT / "02_stepper_graph_tab.png"))
        page.screenshot(path=str(OUT / "02_page_flagged.png"), full_page=True)
    except BaseException:
        if context is not None and context.pages:
            context.pages[0].screenshot(path=str(OUT / "02_failure.png"))
        print(f"jupyter lab log:\n{server.log_tail(60)}")
        raise
    finally:
        if context is not None:
            context.close()
        server.stop()
        seconds = time.perf_counter() - start
        (OUT / "duration.txt").write_text(f"test_e2e_jupyterlab: {seconds:.1f} s\n", encoding="utf-8")
        print(f"e2e JupyterLab test: {seconds:.1f} s; screenshots in {OUT}")
