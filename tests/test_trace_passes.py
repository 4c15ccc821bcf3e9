"""trace_passes: steps, changed flags, validation and the flagged pass, without a front end."""

from __future__ import annotations

import numpy as np
import pytest

import relay_nb as relay
from relay_nb.errors import RelayError
from relay_nb.ir.expr import Op
from relay_nb.notebook.trace import make_inputs, resolve_passes, trace_passes, values_close
from relay_nb.transform import function_pass

EXECUTORS = ["interpreter", "jit"]

SIMPLE = """
def @main(%x: Tensor[(2, 3), float32]) {
  %0 = multiply(%x, 1f);
  %1 = add(%0, add(2f, 3f));
  add(%1, %x)
}
"""

CONV = open(relay.__path__[0] + "/examples/conv_block.relay").read()


class _AddToSubtract(relay.ExprMutator):
    def visit_call(self, call):
        new = super().visit_call(call)
        if isinstance(new.op, Op) and new.op.name == "add":
            return relay.subtract(*new.args)
        return new


@function_pass(opt_level=0, name="AddToSubtract")
def add_to_subtract(func, mod, ctx):
    """A deliberately wrong pass: it changes what the program computes."""
    return _AddToSubtract().visit(func)


@function_pass(opt_level=0, name="Identity")
def identity(func, mod, ctx):
    return func


@function_pass(opt_level=0, name="Explodes")
def explodes(func, mod, ctx):
    raise ValueError("boom")


def test_steps_record_each_pass_with_before_after_and_changed():
    mod = relay.parse(SIMPLE)
    steps = trace_passes(
        mod, ["SimplifyExpr", "FoldConstant", "DeadCodeElimination"], executor="interpreter"
    )
    names = [s.name for s in steps]
    assert "SimplifyExpr" in names and "FoldConstant" in names and "DeadCodeElimination" in names
    assert [s.index for s in steps] == list(range(len(steps)))
    # Consecutive steps chain: each before is the previous after.
    assert steps[0].before is mod
    for a, b in zip(steps, steps[1:]):
        assert b.before is a.after
    simplify = next(s for s in steps if s.name == "SimplifyExpr")
    fold = next(s for s in steps if s.name == "FoldConstant")
    assert simplify.changed and fold.changed
    assert "multiply" not in simplify.after.astext()
    assert "5f" in fold.after.astext()
    dce = next(s for s in steps if s.name == "DeadCodeElimination")
    assert not dce.changed
    assert all(s.seconds >= 0 for s in steps)
    assert all(s.results_match is True for s in steps)
    assert steps.flagged is None and steps.first_mismatch is None


def test_results_are_the_original_value_computed_independently():
    mod = relay.parse(SIMPLE)
    x = np.arange(6, dtype="float32").reshape(2, 3)
    steps = trace_passes(mod, "SimplifyExpr,FoldConstant", inputs=[x], executor="interpreter")
    expected = x * 1 + 5 + x  # numpy, by hand
    for step in steps:
        np.testing.assert_allclose(step.result, expected)
    np.testing.assert_allclose(steps.reference["interpreter"], expected)
    # inputs by parameter name
    by_name = trace_passes(mod, "FoldConstant", inputs={"x": x}, executor="interpreter")
    np.testing.assert_allclose(by_name[-1].result, expected)


def test_changed_nodes_are_exactly_the_new_exprs():
    mod = relay.parse(SIMPLE)
    steps = trace_passes(mod, ["FoldConstant"], executor="interpreter")
    step = steps[-1]
    consts = [n for n in step.changed_nodes if isinstance(n, relay.Constant)]
    assert [float(c.data) for c in consts] == [5.0]
    before_nodes = set()
    for f in step.before.functions.values():
        before_nodes.update(relay.ir.functor.post_order(f))
    assert step.changed_nodes and all(n not in before_nodes for n in step.changed_nodes)
    # %x is untouched, so it is not a changed node
    assert step.after["main"].params[0] not in step.changed_nodes
    unchanged = trace_passes(mod, [identity], executor="interpreter")[-1]
    assert not unchanged.changed and unchanged.changed_nodes == []


def _reached(mod):
    """Every node of ``mod`` in post order, function by function, each once."""
    out, seen = [], set()
    for f in mod.functions.values():
        for n in relay.ir.functor.post_order(f):
            if n not in seen:
                seen.add(n)
                out.append(n)
    return out


def test_removed_and_changed_nodes_equal_the_full_set_difference():
    # The diff stops at subtrees the two programs share; it must equal comparing every
    # node of one program with every node of the other, in the same order.
    mod = relay.parse(CONV)
    steps = trace_passes(mod, "O3", executor="interpreter")
    assert any(s.changed for s in steps)
    for step in steps:
        before, after = _reached(step.before), _reached(step.after)
        after_set, before_set = set(after), set(before)
        assert step.removed_nodes == [n for n in before if n not in after_set], step.name
        assert step.changed_nodes == [n for n in after if n not in before_set], step.name
        if step.before is step.after:
            assert step.removed_nodes == step.changed_nodes == []


@pytest.mark.parametrize("executor", EXECUTORS)
def test_wrong_user_pass_is_flagged(executor):
    mod = relay.parse(SIMPLE)
    steps = trace_passes(
        mod, ["FoldConstant", add_to_subtract, "DeadCodeElimination"], executor=executor
    )
    bad = steps.flagged
    assert bad is not None and bad.name == "AddToSubtract"
    assert bad.flagged and bad.changed and bad.results_match is False
    assert [s for s in steps if s.flagged] == [bad]
    x = steps.inputs[0]
    np.testing.assert_allclose(bad.result, x * 1 - 5 - x, rtol=1e-6)
    # steps before the bad one still match
    assert all(s.results_match for s in steps[: bad.index])
    assert "first mismatch: step" in steps.summary() and "AddToSubtract" in steps.summary()


def test_user_pass_by_name_from_a_namespace():
    mod = relay.parse(SIMPLE)
    steps = trace_passes(
        mod, "FoldConstant,bad", namespace={"bad": add_to_subtract}, executor="interpreter"
    )
    assert steps.flagged.name == "AddToSubtract"
    with pytest.raises(RelayError, match="unknown pass"):
        trace_passes(mod, "FoldConstant,nope", executor="interpreter")


def test_a_pass_that_raises_becomes_an_error_step():
    mod = relay.parse(SIMPLE)
    steps = trace_passes(
        mod, ["FoldConstant", explodes, "DeadCodeElimination"], executor="interpreter"
    )
    last = steps[-1]
    assert last.name == "Explodes" and "boom" in last.error and last.flagged
    assert last.before is steps[-2].after and not last.changed
    assert steps.final is last.before


def test_opt_level_pipeline_on_a_cnn_block():
    mod = relay.parse(CONV)
    steps = trace_passes(mod, "O3", executor="interpreter")
    changed = [s.name for s in steps if s.changed]
    assert changed[-1] == "FuseOps"
    assert all(s.results_match for s in steps)
    fuse = next(s for s in steps if s.name == "FuseOps")
    assert fuse.executed and fuse.results_match
    assert any(
        isinstance(n, relay.Function) and n.attrs.get("Primitive") for n in fuse.changed_nodes
    )
    assert steps.flagged is None
    # unchanged steps are not re-run: their validation is carried over
    assert all(not s.executed for s in steps if not s.changed)
    assert steps.final is steps[-1].after


def test_random_inputs_follow_param_types_deterministically():
    mod = relay.parse(
        "def @main(%a: Tensor[(2, 3), float32], %b: Tensor[(4), int32], %c: bool, "
        "%d: (Tensor[(1), uint8], Tensor[(), float64])) { %a }"
    )
    a, b, c, d = make_inputs(mod)
    assert a.shape == (2, 3) and a.dtype == np.float32 and np.all(np.abs(a) <= 2)
    assert b.dtype == np.int32 and c.dtype == np.bool_ and c.shape == ()
    assert d[0].dtype == np.uint8 and d[1].dtype == np.float64
    again = make_inputs(mod)
    assert np.array_equal(a, again[0]) and np.array_equal(b, again[1])
    assert not np.array_equal(a, make_inputs(mod, seed=1)[0])


def test_program_that_cannot_get_random_inputs_is_not_validated():
    text = """
    type List[A] { Cons(A, List[A]), Nil }
    def @main(%l: List[int32]) { %l }
    """
    steps = trace_passes(relay.parse(text), "DeadCodeElimination", executor="interpreter")
    assert steps.inputs is None and all(s.results_match is None for s in steps)
    assert any("cannot make a random input for %l" in n for n in steps.notes)
    assert steps.flagged is None


def test_adt_results_compared_structurally():
    text = """
    type List[A] { Cons(A, List[A]), Nil }
    def @main(%x: int32) { Cons(add(%x, 1), Cons(%x, Nil)) }
    """
    mod = relay.parse(text)
    good = trace_passes(
        mod,
        "FoldConstant,DeadCodeElimination",
        inputs=[np.array(3, "int32")],
        executor="interpreter",
    )
    assert good.flagged is None
    bad = trace_passes(
        mod, [add_to_subtract], inputs=[np.array(3, "int32")], executor="interpreter"
    )
    assert bad.flagged.name == "AddToSubtract"
    assert bad[-1].result.fields[0].item() == 2


def test_values_close_rules():
    f = np.array([1.0, 2.0], "float32")
    assert values_close(f, f + 1e-7)
    assert not values_close(f, f + 1e-2)
    assert values_close(np.array([np.nan], "float32"), np.array([np.nan], "float32"))
    i = np.array([1, 2], "int32")
    assert values_close(i, i.copy()) and not values_close(i, i + 1)
    assert not values_close(i, i.astype("int64"))  # dtype is part of the value
    assert values_close((f, (i,)), (f.copy(), (i.copy(),)))
    assert not values_close((f,), (f, f))
    assert not values_close(f, (f,))


def test_resolve_passes_forms():
    assert resolve_passes("O2").opt_level == 2 and resolve_passes(3).opt_level == 3
    assert [p.info.name for p in resolve_passes("FoldConstant, FuseOps").passes] == [
        "FoldConstant",
        "FuseOps",
    ]
    assert resolve_passes(add_to_subtract).passes == [add_to_subtract]
    with pytest.raises(RelayError, match="O0..O3"):
        resolve_passes("O7")
    with pytest.raises(RelayError, match="no passes"):
        resolve_passes("")
    with pytest.raises(RelayError, match="not a pass"):
        resolve_passes([42.0])


def test_bad_arguments_are_relay_errors():
    mod = relay.parse(SIMPLE)
    with pytest.raises(RelayError, match="IRModule"):
        trace_passes("def @main() { 1 }", "O1")
    with pytest.raises(RelayError, match="unknown executor"):
        trace_passes(mod, "O1", executor="gpu")


def test_explicit_passes_run_whatever_their_opt_level():
    # EliminateCommonSubexpr is an opt-level-3 pass; naming it means running it.
    mod = relay.parse("def @main(%x: Tensor[(2), float32]) { add(log(%x), log(%x)) }")
    steps = trace_passes(mod, ["EliminateCommonSubexpr"], executor="interpreter")
    assert steps[-1].name == "EliminateCommonSubexpr" and steps[-1].changed
    assert steps[-1].results_match


def test_an_executor_that_cannot_run_the_original_is_dropped_with_a_note(monkeypatch):
    import relay_nb.notebook.trace as trace_module

    real = trace_module._runner

    def runner(kind, mod):
        if kind == "jit":
            raise RelayError("this JIT cannot compile that")
        return real(kind, mod)

    monkeypatch.setattr(trace_module, "_runner", runner)
    steps = trace_passes(relay.parse(SIMPLE), ["FoldConstant", add_to_subtract], executor="jit")
    assert steps.executors == ["interpreter"]
    assert any(
        "the jit cannot run the original program" in n and "cannot compile" in n
        for n in steps.notes
    )
    assert steps.flagged.name == "AddToSubtract"  # the interpreter still checks every step


def test_a_step_that_no_longer_runs_is_flagged(monkeypatch):
    import relay_nb.notebook.trace as trace_module

    real = trace_module._runner
    mod = relay.parse(SIMPLE)

    def runner(kind, m):
        if m is not mod:
            raise RelayError("boom at run time")
        return real(kind, m)

    monkeypatch.setattr(trace_module, "_runner", runner)
    steps = trace_passes(mod, ["FoldConstant"], executor="interpreter")
    bad = steps.flagged
    assert bad.name == "FoldConstant" and "boom at run time" in bad.error and bad.status == "error"


def test_jit_checks_every_step_too():
    steps = trace_passes(relay.parse(SIMPLE), "O3", executor="jit")
    assert steps.executors == ["jit", "interpreter"]
    fused = [s for s in steps if s.executed]
    assert fused and all(set(s.results) == {"jit", "interpreter"} for s in fused)
    assert steps.flagged is None


def test_nan_results_on_random_inputs_retry_with_positive_inputs():
    mod = relay.parse("def @main(%x: Tensor[(4), float32]) { sqrt(%x) }")
    steps = trace_passes(mod, [add_to_subtract, "FoldConstant"], executor="interpreter")
    assert np.all(steps.inputs[0] > 0) and np.all(np.isfinite(steps.reference["interpreter"]))
    assert any("[0.1, 2]" in n for n in steps.notes)
    # given inputs are used as they are, NaN or not
    x = np.array([-1, 1, 4, 9], "float32")
    given = trace_passes(mod, "FoldConstant", inputs=[x], executor="interpreter")
    assert given.inputs[0] is x and np.isnan(given.reference["interpreter"][0])
    # a program that is NaN whatever the inputs is said to be so
    nan = relay.parse("def @main(%x: Tensor[(4), float32]) { log(negative(abs(%x))) }")
    assert any(
        "NaN or infinite" in n
        for n in trace_passes(nan, "FoldConstant", executor="interpreter").notes
    )


def test_module_without_main_is_traced_but_not_executed():
    mod = relay.parse("def @f(%x: int32) { add(%x, add(1, 2)) }")
    steps = trace_passes(mod, "FoldConstant", executor="interpreter")
    assert steps[-1].name == "FoldConstant" and steps[-1].changed
    assert steps.inputs is None and any("no @main" in n for n in steps.notes)
    assert all(s.results_match is None and s.status == "unchecked" for s in steps)


def test_wrong_number_of_inputs_is_a_note_not_a_crash():
    steps = trace_passes(relay.parse(SIMPLE), "FoldConstant", inputs=[], executor="interpreter")
    assert steps.executors == [] and steps.flagged is None
    assert any("expects 1 arguments, got 0" in n for n in steps.notes)
