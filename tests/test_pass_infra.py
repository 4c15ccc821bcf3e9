"""The pass infrastructure of seed 003: contexts, enabling rules, Sequential, decorators,
instruments."""

from __future__ import annotations

import io
import threading

import numpy as np
import pytest

import relay_nb as relay
from relay_nb.transform.infra import (
    FunctionPass,
    ModulePass,
    PassContext,
    PassInfo,
    Sequential,
    function_pass,
    module_pass,
    register_pass,
)
from relay_nb.transform.instrument import (
    PassInstrument,
    PassRecorder,
    PassTimingInstrument,
    PrintAfterAll,
)


def identity_module() -> relay.IRModule:
    x = relay.var("x", shape=(2,))
    return relay.IRModule.from_expr(relay.Function([x], x))


def tuple_wrapping_pass(name: str, opt_level: int = 0, required=()) -> ModulePass:
    """A pass that wraps @main's body in a 1-tuple, so each run is visible."""

    def run(mod, ctx):
        main = mod["main"]
        return mod.with_functions({mod.get_global_var("main"): relay.Function(main.params, relay.Tuple([main.body]))})

    return ModulePass(run, PassInfo(name, opt_level, required))


def depth(mod) -> int:
    body, n = mod["main"].body, 0
    while isinstance(body, relay.Tuple):
        body, n = body.fields[0], n + 1
    return n


def test_default_context_is_opt_level_2_and_contexts_nest():
    assert PassContext.current().opt_level == 2
    with PassContext(opt_level=3) as outer:
        assert PassContext.current() is outer
        with PassContext(opt_level=0) as inner:
            assert PassContext.current() is inner
        assert PassContext.current() is outer
    assert PassContext.current().opt_level == 2


def test_context_stack_is_thread_local():
    seen = []
    with PassContext(opt_level=4):
        t = threading.Thread(target=lambda: seen.append(PassContext.current().opt_level))
        t.start()
        t.join()
    assert seen == [2]


def test_bad_opt_level_is_a_relay_error():
    with pytest.raises(relay.RelayError, match="opt_level"):
        PassContext(opt_level=7)


def test_pass_enabled_rules():
    ctx = PassContext(opt_level=1, required_pass=["Big"], disabled_pass=["Low"])
    assert ctx.pass_enabled(PassInfo("Any", 1))
    assert not ctx.pass_enabled(PassInfo("High", 3))
    assert ctx.pass_enabled(PassInfo("Big", 3))  # required beats opt_level
    assert not ctx.pass_enabled(PassInfo("Low", 0))  # disabled beats everything


def test_module_pass_returns_new_module_and_leaves_input_intact():
    mod = identity_module()
    out = tuple_wrapping_pass("Wrap")(mod)
    assert depth(out) == 1 and depth(mod) == 0


def test_sequential_runs_enabled_passes_only():
    seq = Sequential([tuple_wrapping_pass("A", 1), tuple_wrapping_pass("B", 3), tuple_wrapping_pass("C", 2)])
    with PassContext(opt_level=2):
        assert depth(seq(identity_module())) == 2
    with PassContext(opt_level=3):
        assert depth(seq(identity_module())) == 3
    with PassContext(opt_level=3, disabled_pass=["A"]):
        assert depth(seq(identity_module())) == 2
    with PassContext(opt_level=0, required_pass=["B"]):
        assert depth(seq(identity_module())) == 1


def test_sequential_resolves_required_passes_by_name():
    register_pass("WrapOnce", lambda: tuple_wrapping_pass("WrapOnce"))
    seq = Sequential([tuple_wrapping_pass("Needy", 0, required=["WrapOnce"])])
    assert depth(seq(identity_module())) == 2


class _CountInferType:
    def __init__(self):
        self.names = []

    def run_before_pass(self, mod, info):
        self.names.append(info.name)


def _conv_bn_module() -> relay.IRModule:
    x = relay.var("x", shape=(1, 3, 8, 8))
    w = relay.const(np.ones((4, 3, 3, 3), "float32"))
    g, b, m, v = (relay.const(np.full(4, k, "float32")) for k in (1.5, 0.5, 0.1, 2.0))
    y = relay.nn.batch_norm(relay.nn.conv2d(x, w, padding=(1, 1)), g, b, m, v)[0]
    return relay.IRModule.from_expr(relay.Function([x], relay.nn.relu(relay.reshape(relay.reshape(y, (4, 64)), (1, 4, 8, 8)))))


def test_a_required_infer_type_after_passes_that_keep_types_does_not_run_again():
    seen = _CountInferType()
    with PassContext(instruments=[seen]):
        out = relay.optimize(_conv_bn_module())
    # the pipeline's own InferType; every later pass keeps the types (it ran 7 times before)
    assert seen.names.count("InferType") == 1, seen.names
    from relay_nb.ir.functor import post_order

    assert all(n._checked_type is not None for n in post_order(out["main"]) if not isinstance(n, relay.Op))
    assert out.astext(show_types=True) == relay.transform.InferType()(out).astext(show_types=True)


def test_a_required_infer_type_runs_after_a_pass_that_does_not_keep_types():
    @function_pass(opt_level=0, name="ReluTwice")
    def relu_twice(func, mod, ctx):  # rebuilds @main: the new call has no type
        return relay.Function(func.params, relay.nn.relu(func.body))

    seen = _CountInferType()
    simplify = relay.transform.get_pass("SimplifyExpr")
    with PassContext(instruments=[seen]):
        out = Sequential([relay.transform.InferType(), relu_twice, simplify])(_conv_bn_module())
    assert seen.names == ["sequential", "InferType", "ReluTwice", "InferType", "SimplifyExpr"]
    assert out["main"].body._checked_type is not None


def test_unknown_required_pass_is_a_clear_error():
    seq = Sequential([tuple_wrapping_pass("Needy", 0, required=["NoSuchPass"])])
    with pytest.raises(relay.RelayError, match="unknown pass NoSuchPass"):
        seq(identity_module())


def test_function_pass_decorator_on_a_function_skips_primitive_functions():
    @function_pass(opt_level=1, name="WrapBodies")
    def wrap(func, mod, ctx):
        return relay.Function(func.params, relay.Tuple([func.body]))

    assert isinstance(wrap, FunctionPass) and wrap.info == PassInfo("WrapBodies", 1)
    mod = identity_module()
    y = relay.var("y", shape=(2,))
    mod["prim"] = relay.Function([y], y).with_attr("Primitive", 1)
    out = wrap(mod)
    assert isinstance(out["main"].body, relay.Tuple)
    assert out["prim"] is mod["prim"]


def test_module_pass_decorator_on_a_class_takes_constructor_arguments():
    @module_pass(opt_level=2)
    class WrapN:
        def __init__(self, n):
            self.n = n

        def transform_module(self, mod, ctx):
            for _ in range(self.n):
                mod = tuple_wrapping_pass("inner")(mod)
            return mod

    p = WrapN(3)
    assert isinstance(p, ModulePass) and p.info.name == "WrapN" and p.n == 3
    assert depth(p(identity_module())) == 3


def test_decorated_function_with_wrong_arity_is_rejected():
    with pytest.raises(relay.RelayError, match="must take 2 arguments"):

        @module_pass
        def bad(mod):
            return mod


def test_pass_returning_a_non_module_is_a_clear_error():
    broken = ModulePass(lambda mod, ctx: None, PassInfo("Broken"))
    with pytest.raises(relay.RelayError, match="Broken returned NoneType"):
        broken(identity_module())


def test_instrument_hooks_order_and_should_run():
    events = []

    class Spy(PassInstrument):
        def enter_pass_ctx(self):
            events.append("enter")

        def exit_pass_ctx(self):
            events.append("exit")

        def should_run(self, mod, info):
            return info.name != "Skipped"

        def run_before_pass(self, mod, info):
            events.append(f"before {info.name}")

        def run_after_pass(self, mod, info):
            events.append(f"after {info.name}")

    seq = Sequential([tuple_wrapping_pass("A"), tuple_wrapping_pass("Skipped")], name="seq")
    with PassContext(instruments=[Spy()]):
        out = seq(identity_module())
    assert depth(out) == 1
    assert events == ["enter", "before seq", "before A", "after A", "after seq", "exit"]


def test_timing_instrument_reports_nested_passes():
    timing = PassTimingInstrument()
    seq = Sequential([tuple_wrapping_pass("A"), tuple_wrapping_pass("B")], name="pipeline")
    with PassContext(instruments=[timing]):
        seq(identity_module())
    report = timing.render().splitlines()
    assert report[0] == "pass timing:"
    assert report[1].lstrip().startswith("pipeline: ") and report[1].startswith("  pipeline")
    assert report[2].startswith("    A: ") and report[3].startswith("    B: ")
    assert report[2].endswith("%")


def test_recorder_keeps_before_after_and_changed():
    rec = PassRecorder(leaves_only=True, changed=lambda a, b: depth(a) != depth(b))
    noop = ModulePass(lambda mod, ctx: mod, PassInfo("Noop"))
    seq = Sequential([tuple_wrapping_pass("A"), noop])
    with PassContext(instruments=[rec]):
        seq(identity_module())
    assert [r.name for r in rec.records] == ["A", "Noop"]
    assert [r.changed for r in rec.records] == [True, False]
    assert depth(rec.records[0].before) == 0 and depth(rec.records[0].after) == 1
    assert all(r.seconds >= 0 for r in rec.records)


def test_print_after_all_writes_each_module(monkeypatch):
    out = io.StringIO()
    monkeypatch.setattr(relay.IRModule, "astext", lambda self, **kw: f"<{depth(self)}>")
    with PassContext(instruments=[PrintAfterAll(out)]):
        Sequential([tuple_wrapping_pass("A")], name="s")(identity_module())
    assert out.getvalue() == "// after A\n<1>\n// after s\n<1>\n"


def test_a_pass_recursing_too_deeply_is_a_relay_error_naming_it():
    from relay_nb.ir.expr import If

    def depth(e):  # a user's recursive helper: one Python frame per if
        return 1 + depth(e.false_branch) if isinstance(e, If) else 0

    @relay.transform.function_pass(opt_level=0, name="CountDepth")
    def count(f, mod, ctx):
        depth(f.body)
        return f

    text = "def @main(%x: int32) { " + "if (%x == 0) { 0 } else { " * 3_000 + "1" + " }" * 3_000 + " }"
    mod = relay.parse(text)
    with pytest.raises(relay.RelayError, match="CountDepth: .*nested too deeply"):
        count(mod)
