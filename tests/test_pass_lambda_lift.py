"""LambdaLift: nested functions become globals; closures take their captured vars."""

from __future__ import annotations

import time

import numpy as np
import pytest
from hypothesis import given
from pass_testing import check_pass
from strategies import FAST, big_dag, big_let_chain, big_mixed, modules

import relay_nb as relay
from relay_nb.analysis import free_vars, well_formed
from relay_nb.ir.expr import Function
from relay_nb.ir.functor import post_order
from relay_nb.transform import LambdaLift

CASES = {
    # no free variables: the function itself becomes the global
    "lift_closed": """
def @main(%x: float32) {
  let %id = fn (%y: float32) { %y };
  %id(%x)
}""",
    # captures %x: the global takes it and returns the closure (Closure=1)
    "lift_closure": """
def @main(%x: float32) {
  let %f = fn (%y: float32) { add(%x, %y) };
  %f(log(%x))
}""",
    # recursive let-bound closures recurse through their global
    "lift_letrec": """
def @main(%x: float32, %n: int32) {
  let %loop = fn (%k: int32, %acc: float32) -> float32 {
    if (equal(%k, 0)) { %acc } else { %loop(subtract(%k, 1), add(%acc, %x)) }
  };
  %loop(%n, 0f)
}""",
    # nested closures: the inner one is lifted first; seed 000's closure yielding zeros
    "lift_nested": """
def @main(%x: float32) {
  let %make = fn (%a: float32) {
    fn (%b: float32) { fn (%c: float32) { add(add(%a, %b), multiply(%c, %x)) } }
  };
  %make(1f)(2f)(%x)
}""",
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_golden(case, golden):
    inputs = [np.float32(0.5), np.int32(4)] if case == "lift_letrec" else None
    out = check_pass(LambdaLift(), CASES[case], golden=golden, case=case, inputs=inputs)
    _check_lifted(out)


def _check_lifted(mod):
    """No global contains a nested fn, except the closure a lifted global returns."""
    for gv, fn in mod.functions.items():
        body = fn.body
        if (
            fn.attrs.get("Closure", 0) == 0
            and type(body) is Function
            and body.attrs.get("Closure", 0)
        ):
            body = body.body
        nested = [
            n for n in post_order(body) if type(n) is Function and not n.attrs.get("Primitive", 0)
        ]
        assert not nested, f"@{gv.name_hint} still has a nested function"
        assert not free_vars(fn)


def test_expected_closure():
    check_pass(
        LambdaLift(),
        CASES["lift_closure"],
        """
def @lifted_main_0(%x: float32) { fn (%y: float32, Closure=1) { add(%x, %y) } }
def @main(%x: float32) {
  let %f = @lifted_main_0(%x);
  %f(log(%x))
}""",
    )


def test_letrec_through_global():
    out = LambdaLift()(relay.parse(CASES["lift_letrec"]))
    lifted = out["lifted_main_0"]
    calls = [n for n in post_order(lifted) if type(n).__name__ == "GlobalVar"]
    assert calls and all(g.name_hint == "lifted_main_0" for g in calls)


def test_no_nested_function_is_identity():
    mod = relay.parse("def @main(%x: float32) { log(%x) }")
    assert LambdaLift()(mod)["main"] is mod["main"]


def test_untouched_subtrees_are_the_same_objects():
    mod = relay.parse(
        "def @main(%x: float32) { let %f = fn (%y: float32) { add(%x, log(%y)) }; %f(exp(%x)) }"
    )
    closure = mod["main"].body.value
    out = LambdaLift()(mod)
    lifted = out["lifted_main_0"]
    assert lifted.body.body.args[1] is closure.body.args[1]  # log(%y) is not rebuilt
    assert lifted.params[0] is not mod["main"].params[0]  # a fresh parameter
    assert out["main"].body.body.args[0] is mod["main"].body.body.args[0]


def test_names_do_not_clash():
    mod = relay.parse(
        """
        def @lifted_main_0(%x: float32) { %x }
        def @main(%x: float32) { let %f = fn (%y: float32) { add(%x, %y) }; %f(@lifted_main_0(%x)) }
        """
    )
    out = check_pass(LambdaLift(), mod)
    assert "lifted_main_1" in out


def test_registered():
    assert relay.transform.get_pass("LambdaLift").info.opt_level == 1


@FAST
@given(modules())
def test_random_modules(mod):
    out = check_pass(LambdaLift(), mod)
    _check_lifted(out)


@pytest.mark.parametrize("build", [big_let_chain, big_dag, big_mixed])
def test_scale(build):
    mod = build(100_000)
    start = time.perf_counter()
    out = LambdaLift()(mod)
    assert time.perf_counter() - start < 20
    assert well_formed(out["main"])
    if build is big_mixed:
        assert len(out.functions) == 1 + 100_000 // 12
