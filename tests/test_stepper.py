"""PassStepper: the widget model driven headless (buttons, slider, filter, panes)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import numpy as np
import pytest

import relay_nb as relay
from relay_nb.ir.expr import Op
from relay_nb.notebook.stepper import PassStepper, diff_html
from relay_nb.transform import function_pass

SIMPLE = """
def @main(%x: Tensor[(2, 3), float32]) {
  %0 = multiply(%x, 1f);
  %1 = add(%0, add(2f, 3f));
  add(%1, %x)
}
"""


class _AddToSubtract(relay.ExprMutator):
    def visit_call(self, call):
        new = super().visit_call(call)
        if isinstance(new.op, Op) and new.op.name == "add":
            return relay.subtract(*new.args)
        return new


@function_pass(opt_level=0, name="AddToSubtract")
def add_to_subtract(func, mod, ctx):
    return _AddToSubtract().visit(func)


def _stepper(passes=("SimplifyExpr", "FoldConstant", "DeadCodeElimination"), **kw):
    return PassStepper(relay.parse(SIMPLE), passes=list(passes), executor="interpreter", **kw)


def _text(html_value: str) -> str:
    return re.sub(r"<[^>]+>", "", html_value)


def test_buttons_move_over_the_steps():
    s = _stepper()
    names = [st.name for st in s.trace]
    assert s.current is s.trace[0] and s.prev_button.disabled
    seen = [s.current.name]
    for _ in range(len(names) - 1):
        s.next_button.click()
        seen.append(s.current.name)
    assert seen == names and s.next_button.disabled
    s.next_button.click()  # at the end: stays
    assert s.current is s.trace[-1]
    s.prev_button.click()
    assert s.current is s.trace[-2]
    assert len(s.slider.options) == len(names) and s.play.max == len(names) - 1


def test_stable_classes_and_descriptions_for_browser_tests():
    s = _stepper()
    assert (
        "relay-stepper-next" in s.next_button._dom_classes and s.next_button.description == "next ▶"
    )
    assert (
        "relay-stepper-prev" in s.prev_button._dom_classes
        and s.prev_button.tooltip == "previous pass"
    )
    assert "relay-stepper-changed-only" in s.changed_only._dom_classes
    assert "relay-stepper" in s.widget._dom_classes


def test_diff_pane_shows_before_and_after_with_changes_marked():
    s = _stepper()
    s.go(next(st.index for st in s.trace if st.name == "FoldConstant"))
    value = s.diff.value
    assert "relay-diff-chg-old" in value and "relay-diff-chg-new" in value
    # the line `%0 = add(2f, 3f);` faces `%0 = add(%x, 5f);`, differences marked
    assert (
        '<td class="relay-diff-chg-old">  %0 = add(<mark>2f</mark>, <mark>3f</mark>);</td>' in value
    )
    assert (
        '<td class="relay-diff-chg-new">  %0 = add(<mark>%x</mark>, <mark>5f</mark>);</td>' in value
    )
    assert '<td class="relay-diff-del">  %1 = add(%x, %0);</td>' in value
    assert "FoldConstant" in s.header.value and "result matches the original" in s.header.value
    s.go(next(st.index for st in s.trace if st.name == "DeadCodeElimination"))
    assert "did not change the program" in s.diff.value
    assert "unchanged" in s.header.value


def test_changed_only_filter():
    s = _stepper()
    all_steps = len(s.trace)
    changed = [st.index for st in s.trace if st.changed]
    assert 0 < len(changed) < all_steps
    s.changed_only.value = True
    assert s.visible == changed and len(s.slider.options) == len(changed)
    rows = re.findall(r'data-step="(\d+)"', s.pass_list.value)
    assert [int(r) for r in rows] == changed
    assert all(s.current.changed for _ in [0])
    visited = [s.current.index]
    while not s.next_button.disabled:
        s.next_button.click()
        visited.append(s.current.index)
    assert visited == changed
    s.changed_only.value = False
    assert s.visible == list(range(all_steps)) and s.current.index == changed[-1]


def _click_row(s, index: int) -> None:
    """What widgets/step_table.js sends when a row of the list is clicked."""
    s.pass_list._handle_custom_msg({"step": index}, [])


def test_clicking_a_row_shows_that_step():
    s = _stepper()
    last = len(s.trace) - 1
    _click_row(s, last)
    assert s.current is s.trace[last] and s.next_button.disabled
    assert f'relay-step-current" data-step="{last}"' in s.pass_list.value
    _click_row(s, 0)
    assert s.current is s.trace[0]
    hidden = next(st.index for st in s.trace if not st.changed)
    s.changed_only.value = True
    _click_row(s, hidden)  # a row the filter hides (a click that raced the redraw) turns it off
    assert s.current.index == hidden and not s.changed_only.value
    _click_row(s, 99)  # out of range: ignored
    _click_row(s, True)
    assert s.current.index == hidden


def _numbers_shown(s) -> tuple[str, str, str]:
    row = re.search(r'relay-step-current" data-step="\d+"><td class="relay-num">(\d+)</td>', s.pass_list.value)
    header = re.search(r"step (\d+) of", s.header.value)
    return row.group(1), header.group(1), s.slider.label


def test_a_step_has_one_number_in_the_list_the_header_and_the_slider():
    s = _stepper()
    for st in s.trace:
        s.go(st.index)
        assert _numbers_shown(s) == (str(st.index + 1),) * 3
    s.changed_only.value = True
    for _ in s.visible:
        assert _numbers_shown(s) == (str(s.current.index + 1),) * 3
        s.next()


def test_the_pipeline_header_lists_the_passes_with_spaces():
    s = _stepper()
    assert "<b>SimplifyExpr, FoldConstant, DeadCodeElimination</b>" in s.summary.value


def test_changed_only_with_nothing_changed_disables_navigation():
    s = _stepper(passes=["DeadCodeElimination"])
    s.changed_only.value = True
    assert s.visible == [] and s.current is None
    assert s.next_button.disabled and s.slider.disabled
    assert "no pass changed the program" in s.header.value


def test_pass_list_marks_changed_time_and_validation():
    s = _stepper()
    table = s.pass_list.value
    for st in s.trace:
        row = re.search(rf'<tr class="([^"]*)" data-step="{st.index}">(.*?)</tr>', table).groups()
        assert ("relay-step-changed" in row[0]) == st.changed
        assert st.name in row[1] and f"{st.seconds * 1e3:.2f} ms" in row[1]
        assert "✓ match" in row[1]
    assert 'relay-step-current" data-step="0"' in table


def test_wrong_user_pass_is_red_and_named():
    s = _stepper(passes=["FoldConstant", add_to_subtract])
    bad = s.trace.flagged
    assert bad.name == "AddToSubtract"
    assert "relay-bad" in s.summary.value and "AddToSubtract" in _text(s.summary.value)
    row = re.search(
        rf'<tr class="([^"]*)" data-step="{bad.index}">(.*?)</tr>', s.pass_list.value
    ).groups()
    assert "relay-step-flagged" in row[0] and "✗ mismatch" in row[1]
    s.go(bad.index)
    assert "result differs from the original" in s.header.value
    # the validation pane shows both values and the difference, computed independently
    x = s.trace.inputs[0]
    expected_diff = np.max(np.abs((x + 5 + x) - (x - 5 - x)))
    m = re.search(r"max \|difference\| ([0-9.e+-]+)", s.validation.value)
    assert m and float(m.group(1)) == pytest.approx(expected_diff, rel=1e-2)


def test_stepper_defaults_to_opt_level_three():
    mod = relay.parse(open(relay.__path__[0] + "/examples/conv_block.relay").read())
    s = PassStepper(mod, executor="interpreter")
    assert s.trace.pipeline.label == "O3"
    assert s.trace[-1].name == "FuseOps" and s.trace.flagged is None


def test_top_level_name_and_default_executor():
    assert relay.PassStepper is PassStepper
    s = PassStepper(relay.parse(SIMPLE), passes="FoldConstant")  # executor="jit" by default
    assert s.trace.executors == ["jit", "interpreter"]
    fold = next(st for st in s.trace if st.name == "FoldConstant")
    assert set(fold.results) == {"jit", "interpreter"} and fold.results_match
    s.go(fold.index)
    assert "<b>jit</b>" in s.validation.value and "<b>interpreter</b>" in s.validation.value


def test_mimebundle_is_the_widget():
    s = _stepper()
    bundle = s._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert bundle["application/vnd.jupyter.widget-view+json"]["model_id"] == s.widget.model_id
    assert "PassStepper" in bundle["text/plain"]


def test_stylesheet_ships_with_the_view():
    s = _stepper()
    assert ".relay-diff" in s.style.value and s.style.value.startswith("<style>")


def test_graph_tab_highlights_changed_nodes():
    s = _stepper()
    step = next(st for st in s.trace if st.name == "FoldConstant")
    s.go(step.index)
    assert s.graph_panes.children == ()  # graphs are drawn only when their tab is open
    s.tabs.selected_index = 1
    before, after = s.graph_panes.children
    assert before.title.startswith("before") and after.title.startswith("after")
    lit = [info["label"].split("\n")[0] for info in after.nodes.values() if info["highlighted"]]
    assert "5f" in lit
    gone = [info["label"].split("\n")[0] for info in before.nodes.values() if info["highlighted"]]
    assert any(label.startswith("add") for label in gone)
    assert set(before.nodes).isdisjoint(after.nodes)  # distinct ids: both panes in one page
    s.graph_mode.value = "anf"
    anf_before, anf_after = s.graph_panes.children
    assert anf_after is not after and "let %" in anf_after.text
    assert any(v["highlighted"] for v in anf_after.nodes.values())
    s.graph_mode.value = "dag"
    assert s.graph_panes.children == (before, after)  # cached


def test_graph_tab_shows_the_after_pane_before_the_before_pane_is_drawn():
    """A big step's panes come one at a time: a note in each at the click, then "after"
    (what the step made) with the note where "before" goes, then both; switching back
    to a drawn step shows both at once."""
    s = _stepper()
    step = next(st for st in s.trace if st.name == "FoldConstant")
    s.go(step.index)
    shown = []
    s.graph_panes.observe(lambda c: shown.append(c["new"]), names="children")
    s.tabs.selected_index = 1
    assert len(shown) == 3
    notes = [pane.value for pane in shown[0]]
    assert ["drawing the program before FoldConstant" in notes[0],
            "drawing the program after FoldConstant" in notes[1]] == [True, True]  # fmt: skip
    waiting, first_after = shown[1]
    assert waiting is shown[0][0] and first_after.title.startswith("after")
    before, after = shown[2]
    assert after is first_after and before.title.startswith("before")
    assert s.graph_views(step) == (before, after)
    shown.clear()
    s.tabs.selected_index = 0
    s.tabs.selected_index = 1  # drawn already: both at once
    assert shown == [] and s.graph_panes.children == (before, after)


def _prefix(view) -> str:
    return next(iter(view.nodes)).rsplit("n", 1)[0]


@pytest.mark.parametrize("mode", ["dag", "anf"])
def test_shared_graph_views_are_exactly_fresh_builds(mode):
    from relay_nb.viz.explore import explore

    s = _stepper(passes=("SimplifyExpr", "FoldConstant", "AddToSubtract"),
                 namespace={"AddToSubtract": add_to_subtract})  # fmt: skip
    changed = [step for step in s.trace if step.changed]
    assert [step.name for step in changed] == ["SimplifyExpr", "FoldConstant", "AddToSubtract"]
    for step in changed:
        before, after = s.graph_views(step, mode)
        for view, mod, marked in ((before, step.before, step.removed_nodes),
                                  (after, step.after, step.changed_nodes)):  # fmt: skip
            fresh = explore(mod, mode=mode, highlight=marked, id_prefix=_prefix(view))
            assert view.data == fresh.data  # rows, strings, groups, text, highlight
            assert any(view.nodes[i]["highlighted"] for i in view.nodes)
        assert set(before.nodes).isdisjoint(after.nodes)


@pytest.mark.parametrize("mode", ["dag", "anf"])
def test_stepping_reuses_the_program_both_steps_show(mode):
    s = _stepper(passes=("SimplifyExpr", "FoldConstant"))
    first, second = (step for step in s.trace if step.changed)
    assert first.after is second.before
    _, after = s.graph_views(first, mode)
    before, _ = s.graph_views(second, mode)
    # One hierarchy, one set of rows: only the highlighted rows are new.
    assert before.hierarchy is after.hierarchy
    assert before.data["groups"] is after.data["groups"]
    rows = {r[0]: r for r in after.data["nodes"]}
    for row in before.data["nodes"]:
        assert (row is rows[row[0]]) == (row[11:] == [] and rows[row[0]][11:] == [])
    assert before.data != after.data  # the highlights differ: removed vs made


def test_the_text_diff_and_the_graph_print_a_program_once(monkeypatch):
    import relay_nb.viz.locate as locate_mod

    calls = []
    real = locate_mod._LocatingPrinter.print_module

    def counting(self, mod):
        calls.append(mod)
        return real(self, mod)

    monkeypatch.setattr(locate_mod._LocatingPrinter, "print_module", counting)
    s = _stepper(passes=("SimplifyExpr",))
    step = s.trace[-1]
    s.go(step.index)
    assert step.changed and calls[-2:] == [step.before, step.after]  # for the text diff
    printed = len(calls)
    s.tabs.selected_index = 1  # the DAG graphs use those printouts
    assert len(s.graph_panes.children) == 2 and len(calls) == printed
    assert s._text(step.before) == step.before.astext(show_types=False)


def test_the_text_diff_shows_the_metadata_section():
    mod = relay.parse(SIMPLE)
    big = relay.const(np.arange(200, dtype="float32").reshape(2, 100))
    main = mod["main"]
    fn = relay.Function(main.params, relay.add(relay.sum(big), relay.sum(main.body)))
    mod = relay.IRModule.from_expr(fn)
    s = PassStepper(mod, passes=["SimplifyExpr"], executor="interpreter")
    text = mod.astext(show_types=False)
    assert "#[metadata]" in text and s._text(s.trace[0].before) == text


# --- diff_html -----------------------------------------------------------------------------------


def test_diff_html_marks_inserts_deletes_and_changes():
    html = diff_html("a\nb = f(1)\nc\n", "a\nb = f(2)\nc\nd\n")
    assert '<td class="relay-diff-same">a</td>' in html
    assert (
        'relay-diff-chg-old">b = f(<mark>1</mark>)' in html
        and 'relay-diff-chg-new">b = f(<mark>2</mark>)' in html
    )
    assert '<td class="relay-diff-ins">d</td>' in html
    # lines with nothing in common are a deletion and an insertion, not a "change"
    html = diff_html("x\nb\n", "x\nB\n")
    assert (
        '<td class="relay-diff-del">b</td>' in html and '<td class="relay-diff-ins">B</td>' in html
    )
    html = diff_html("a\nb\n", "a\n")
    assert '<td class="relay-diff-del">b</td>' in html


def test_diff_html_escapes_and_collapses_context():
    before = "\n".join(f"line {i} <x>" for i in range(30))
    after = before.replace("line 15 <x>", "line 15 <y>")
    html = diff_html(before, after, context=2)
    assert "&lt;x&gt;" in html and "<x>" not in html
    assert "unchanged lines" in html
    assert (
        html.count('<tr><td class="relay-diff-lineno">') == 9
    )  # 2 + 2 kept per collapsed run, 1 changed
    assert "unchanged lines" not in diff_html(before, after, context=None)


def _rows(html_text: str) -> list[list[str]]:
    """Each row of a diff as its cells' classes and texts (marks kept as ``[...]``)."""
    out = []
    for row in html_text.split("<tr")[2:]:
        cells = re.findall(r'<td(?: class="([^"]*)")?[^>]*>(.*?)</td>', row)
        out.append(
            [f"{cls}:{re.sub('</?mark>', lambda m: '[' if m.group() == '<mark>' else ']', text)}"
             for cls, text in cells if cls != "relay-diff-lineno"]
        )  # fmt: skip
    return out


RENUMBERED_BEFORE = """def @main(%x) {
  %0 = exp(%x);
  %1 = squeeze(%0, axis=[1]);
  %2 = reshape(%1, newshape=[6]);
  %3 = tanh(%2);
  %4 = sigmoid(%3);
  %5 = nn.relu(%4);
  %6 = negative(%5);
  %7 = abs(%6);
  %8 = sqrt(%7);
  %9 = add(%8, %3);
  multiply(%9, %4)
}"""
RENUMBERED_AFTER = """def @main(%x) {
  %0 = exp(%x);
  %1 = reshape(%0, newshape=[6]);
  %2 = tanh(%1);
  %3 = sigmoid(%2);
  %4 = nn.relu(%3);
  %5 = negative(%4);
  %6 = abs(%5);
  %7 = sqrt(%6);
  %8 = add(%7, %2);
  multiply(%8, %3)
}"""


def test_diff_html_shows_a_renumbering_as_unchanged_and_marks_only_the_moved_reference():
    rows = _rows(diff_html(RENUMBERED_BEFORE, RENUMBERED_AFTER, context=2))
    assert rows == [
        ["relay-diff-same:def @main(%x) {"] * 2,
        ["relay-diff-same:  %0 = exp(%x);"] * 2,
        ["relay-diff-del:  %1 = squeeze(%0, axis=[1]);", "relay-diff-empty:"],
        # the definition's new number is a renumbering; its operand is a real change
        ["relay-diff-chg-old:  %2 = reshape([%1], newshape=[6]);",
         "relay-diff-chg-new:  %1 = reshape([%0], newshape=[6]);"],
        ["relay-diff-renum:  %3 = tanh(%2);", "relay-diff-renum:  %2 = tanh(%1);"],
        ["relay-diff-renum:  %4 = sigmoid(%3);", "relay-diff-renum:  %3 = sigmoid(%2);"],
        [":⋯ 5 unchanged lines (5 only renumbered) ⋯"],
        ["relay-diff-renum:  multiply(%9, %4)", "relay-diff-renum:  multiply(%8, %3)"],
        ["relay-diff-same:}"] * 2,
    ]  # fmt: skip


def test_diff_html_calls_a_reference_to_another_node_a_change_even_with_the_same_shape():
    before = "  %0 = exp(%x);\n  %1 = tanh(%x);\n  %2 = subtract(%0, %1);\n  %2"
    after = "  %0 = exp(%x);\n  %1 = tanh(%x);\n  %2 = subtract(%1, %0);\n  %2"
    rows = _rows(diff_html(before, after, context=None))
    assert rows[2] == [
        "relay-diff-chg-old:  %2 = subtract([%0], [%1]);",
        "relay-diff-chg-new:  %2 = subtract([%1], [%0]);",
    ]
    assert [r[0].split(":")[0] for r in rows] == [
        "relay-diff-same", "relay-diff-same", "relay-diff-chg-old", "relay-diff-same"
    ]  # fmt: skip
    # a node that went and came back under its old number is no renumbering either
    before = "  %0 = exp(%x);\n  %1 = tanh(%0);\n  %1"
    after = "  %0 = exp(%y);\n  %1 = tanh(%0);\n  %1"
    assert [r[0].split(":")[0] for r in _rows(diff_html(before, after, context=None))] == [
        "relay-diff-chg-old", "relay-diff-same", "relay-diff-same"
    ]  # fmt: skip


def test_diff_html_pairs_a_long_run_of_identical_shapes_after_a_removal():
    # 400 lines of one shape: difflib treats so common a line as junk (autojunk), and the
    # lines must still pair up around the rare ones
    n = 400
    before = ["def @main(%x) {", "  %0 = exp(%x);", "  %1 = squeeze(%0, axis=[1]);",
              "  %2 = reshape(%1, newshape=[6]);"]  # fmt: skip
    before += [f"  %{k} = tanh(%{k - 1});" for k in range(3, n)] + [f"  %{n - 1}", "}"]
    after = ["def @main(%x) {", "  %0 = exp(%x);", "  %1 = reshape(%0, newshape=[6]);"]
    after += [f"  %{k - 1} = tanh(%{k - 2});" for k in range(3, n)] + [f"  %{n - 2}", "}"]
    value = diff_html("\n".join(before), "\n".join(after))
    kinds = [r[0].split(":")[0] for r in _rows(value)]
    assert kinds == [
        "relay-diff-same", "relay-diff-same", "relay-diff-del", "relay-diff-chg-old",
        "relay-diff-renum", "relay-diff-renum", "relay-diff-renum", "",
        "relay-diff-renum", "relay-diff-renum", "relay-diff-same",
    ]  # fmt: skip
    assert "⋯ 393 unchanged lines (393 only renumbered) ⋯" in value


def test_stepper_diff_of_a_pass_that_removes_an_early_node_is_the_removal():
    mod = relay.parse(
        '#[version = "0.0.5"]\n'
        + RENUMBERED_BEFORE.replace("@main(%x)", "@main(%x: Tensor[(2, 1, 3), float32])")
    )
    s = PassStepper(mod, passes=["SimplifyExpr"], executor="interpreter")
    s.go(next(st.index for st in s.trace if st.name == "SimplifyExpr"))
    rows = _rows(s.diff.value)
    changed = [r for r in rows if "relay-diff-renum" not in r[0] and "relay-diff-same" not in r[0]]
    assert [r[0].split(":")[0] for r in changed] == ["relay-diff-del", "relay-diff-chg-old", ""]
    assert "⋯ 3 unchanged lines (3 only renumbered) ⋯" in changed[2][0]


STEP_TABLE_DRIVER = r"""
const esm = process.argv[2];
const mod = await import(esm);
const handlers = {}, sent = [];
const model = {
  v: '<div class="relay-steps-scroll"><table><tr data-step="0"></tr><tr data-step="3"></tr></table></div>',
  get(name) { return this.v; },
  on(event, f) { (handlers[event] = handlers[event] || []).push(f); },
  off(event, f) { handlers[event] = (handlers[event] || []).filter((g) => g !== f); },
  send(content) { sent.push(content); },
};
const listeners = {};
const scroll = { scrollTop: 0 };
const el = {
  classList: { list: [], add(c) { this.list.push(c); } },
  innerHTML: "",
  querySelector(sel) { return sel === ".relay-steps-scroll" ? scroll : null; },
  contains(node) { return node.inside === true; },
  addEventListener(event, f) { listeners[event] = f; },
  removeEventListener(event, f) { if (listeners[event] === f) delete listeners[event]; },
};
const row = (step) => ({ inside: true, getAttribute: (a) => (a === "data-step" ? String(step) : null) });
const cleanup = mod.default.render({ model, el });
const first = el.innerHTML;
scroll.scrollTop = 40;
model.v = "<table>redrawn</table>";
handlers["change:value"].forEach((f) => f());
listeners.click({ target: { closest: (sel) => (sel === "tr[data-step]" ? row(3) : null) } });
listeners.click({ target: { closest: () => null } });  // a click outside the rows
cleanup();
console.log(JSON.stringify({ first, redrawn: el.innerHTML, sent, scrollTop: scroll.scrollTop,
  left: Object.keys(listeners).length + (handlers["change:value"] || []).length, cls: el.classList.list }));
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_step_table_front_end_sends_the_clicked_rows_step(tmp_path):
    from relay_nb.notebook import _assets

    script = tmp_path / "drive.mjs"
    script.write_text(STEP_TABLE_DRIVER)
    esm = _assets.asset_path("step_table.js").as_uri()
    out = subprocess.run(["node", str(script), esm], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout)
    assert 'data-step="3"' in r["first"] and r["redrawn"] == "<table>redrawn</table>"
    assert r["sent"] == [{"step": 3}]  # one message, for the row; none for the outside click
    assert r["left"] == 0 and r["cls"] == ["relay-step-table"]
