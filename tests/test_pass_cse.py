"""EliminateCommonSubexpr: equal operator calls become one shared node."""

from __future__ import annotations

import time

import pytest
from hypothesis import given
from pass_testing import check_pass
from strategies import FAST, big_dag, big_let_chain, big_mixed, modules

import relay_nb as relay
from relay_nb.analysis import well_formed
from relay_nb.ir.expr import Call, RefCreate
from relay_nb.ir.functor import post_order
from relay_nb.transform import EliminateCommonSubexpr

CASES = {
    # the textbook case: two identical subtrees become one, bottom-up
    "cse_tree": """
def @main(%x: float32, %y: float32) {
  %1 = add(log(%x), %y);
  %2 = add(log(%x), %y);
  multiply(%1, %2)
}""",
    # attributes must match
    "cse_attrs": """
def @main(%x: Tensor[(2, 3), float32]) {
  (sum(%x, axis=[0]), sum(%x, axis=[1]), sum(%x, axis=[0]))
}""",
    # scope: an outer value is reused inside a branch; a value of one branch is not
    # reused in the other branch, nor a closure's outside it
    "cse_scopes": """
def @main(%x: float32, %c: bool) {
  %1 = log(%x);
  let %f = fn (%y: float32) { add(exp(%x), log(%x)) };
  %2 = if (%c) { (log(%x), negative(%x)).1 } else { negative(%x) };
  (%1, %2, exp(%x), %f(%x))
}""",
    # references and function calls are never merged
    "cse_effects": """
def @f(%x: float32) { %x }
def @main(%x: float32) {
  let %a = ref(%x);
  let %b = ref(%x);
  let %w = ref_write(%a, 2f);
  (ref_read(%a), ref_read(%b), @f(%x), @f(%x))
}""",
    # projections of the same tuple
    "cse_projection": """
def @main(%x: float32) {
  %0 = (log(%x), exp(%x));
  add(%0.0, %0.0)
}""",
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_golden(case, golden):
    check_pass(EliminateCommonSubexpr(), CASES[case], golden=golden, case=case)


def test_expected():
    check_pass(
        EliminateCommonSubexpr(),
        CASES["cse_tree"],
        "def @main(%x: float32, %y: float32) { %1 = add(log(%x), %y); multiply(%1, %1) }",
    )


def _count(mod, name):
    return sum(
        1 for n in post_order(mod["main"]) if type(n) is Call and getattr(n.op, "name", "") == name
    )


def test_scopes():
    out = EliminateCommonSubexpr()(relay.parse(CASES["cse_scopes"]))
    # The closure (a let value, visited before the let's body) keeps its own log; the
    # branch reuses the outer one.
    assert _count(out, "log") == 2
    assert _count(out, "negative") == 2  # one per branch
    assert _count(out, "exp") == 2  # the closure's is not reused outside


def test_effects_are_not_merged():
    out = EliminateCommonSubexpr()(relay.parse(CASES["cse_effects"]))
    main = out["main"]
    assert sum(1 for n in post_order(main) if type(n) is RefCreate) == 2
    calls = [n for n in post_order(main) if type(n) is Call and type(n.op).__name__ == "GlobalVar"]
    assert len(calls) == 2


def test_scalar_constants_compare_by_value():
    out = EliminateCommonSubexpr()(
        relay.parse("def @main(%x: float32) { (add(%x, 1f), add(%x, 1f), add(%x, 2f)) }")
    )
    fields = out["main"].body.fields
    assert fields[0] is fields[1] and fields[2] is not fields[0]


def test_fskip():
    skip_log = EliminateCommonSubexpr(fskip=lambda e: getattr(e.op, "name", "") == "log")
    out = check_pass(skip_log, CASES["cse_tree"])
    assert _count(out, "log") == 2 and _count(out, "add") == 2


def test_identity_and_registry():
    mod = relay.parse("def @main(%x: float32) { add(log(%x), exp(%x)) }")
    assert EliminateCommonSubexpr()(mod)["main"] is mod["main"]
    info = relay.transform.get_pass("EliminateCommonSubexpr").info
    assert info.opt_level == 3 and info.required == ("InferType",)


def test_untouched_subtrees_are_the_same_objects():
    mod = relay.parse(
        "def @main(%x: float32, %y: float32) { (exp(%y), add(log(%x), 1f), add(log(%x), 1f)) }"
    )
    old = mod["main"].body.fields
    new = EliminateCommonSubexpr()(mod)["main"].body.fields
    assert new[0] is old[0] and new[1] is old[1] and new[2] is old[1]


def test_idempotent():
    once = EliminateCommonSubexpr()(relay.parse(CASES["cse_scopes"]))
    assert EliminateCommonSubexpr()(once)["main"] is once["main"]


@FAST
@given(modules())
def test_random_modules(mod):
    once = check_pass(EliminateCommonSubexpr(), mod)
    assert EliminateCommonSubexpr()(once)["main"] is once["main"]


def _duplicated_dag(n):
    # big_dag with every node built twice: CSE must fold it back to n nodes
    x = relay.var("x", "float32")
    add, log = relay.op.get("add"), relay.op.get("log")
    a = b = x
    for _ in range(n // 2):
        a, b = Call(add, (a, b)), Call(add, (a, b))
    return relay.IRModule({"main": relay.Function((x,), Call(add, (a, Call(log, (b,)))))})


@pytest.mark.parametrize("build", [big_let_chain, big_dag, big_mixed, _duplicated_dag])
def test_scale(build):
    mod = build(100_000)
    start = time.perf_counter()
    out = EliminateCommonSubexpr()(mod)
    assert time.perf_counter() - start < 20
    assert well_formed(out["main"])
    if build is _duplicated_dag:
        assert _count(out, "add") == 50_001
