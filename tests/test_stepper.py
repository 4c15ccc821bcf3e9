"""PassStepper: the widget model driven headless (buttons, slider, filter, panes)."""

from __future__ import annotations

import re

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
    assert s.slider.max == len(names) - 1 and s.play.max == len(names) - 1


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
    assert s.visible == changed and s.slider.max == len(changed) - 1
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
