"""DeadCodeElimination: unused lets go, effects stay; inline_once; ignore_impurity."""

from __future__ import annotations

import time

import numpy as np
import pytest
from hypothesis import given
from pass_testing import check_pass
from strategies import FAST, big_dag, big_let_chain, big_mixed, modules

import relay_nb as relay
from relay_nb.analysis import well_formed
from relay_nb.ir.expr import Let
from relay_nb.ir.functor import post_order
from relay_nb.transform import DeadCodeElimination

CASES = {
    "dce_unused": """
def @main(%x: float32) {
  let %a = log(%x);
  let %b = add(%x, 1f);
  %b
}""",
    # %a only feeds the dead %b: both go in one run
    "dce_cascade": """
def @main(%x: float32) {
  let %a = log(%x);
  let %b = add(%a, 1f);
  let %c = exp(%x);
  %c
}""",
    # a write is kept (and the cell it writes); an unused read or allocation is not
    "dce_refs": """
def @main(%x: float32) {
  let %r = ref(%x);
  let %w = ref_write(%r, 2f);
  let %u = ref_read(%r);
  let %s = ref(1f);
  ref_read(%r)
}""",
    # a call to a global that writes a reference is kept; one to a pure global is not
    "dce_global_effects": """
def @bump(%r: ref(float32)) { ref_write(%r, add(ref_read(%r), 1f)) }
def @twice(%x: float32) { multiply(%x, 2f) }
def @main(%x: float32) {
  let %r = ref(%x);
  let %b = @bump(%r);
  let %t = @twice(%x);
  ref_read(%r)
}""",
    "dce_nested_scopes": """
def @main(%x: float32, %c: bool) {
  let %f = fn (%y: float32) { let %dead = log(%y); %y };
  if (%c) { let %d = exp(%x); %f(%x) } else { %x }
}""",
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_golden(case, golden):
    check_pass(DeadCodeElimination(), CASES[case], golden=golden, case=case)


def test_expected():
    check_pass(
        DeadCodeElimination(),
        CASES["dce_cascade"],
        "def @main(%x: float32) { let %c = exp(%x); %c }",
    )
    check_pass(
        DeadCodeElimination(),
        CASES["dce_refs"],
        "def @main(%x: float32) { let %r = ref(%x); let %w = ref_write(%r, 2f); ref_read(%r) }",
    )


def test_inline_once(golden):
    text = """
def @main(%x: float32) {
  let %a = log(%x);
  let %b = add(%a, %a);
  let %c = exp(%b);
  let %f = fn (%y: float32) { multiply(%y, %c) };
  let %r = ref(%x);
  let %v = ref_read(%r);
  %f(%v)
}"""
    out = check_pass(
        DeadCodeElimination(inline_once=True), text, golden=golden, case="dce_inline_once"
    )
    kept = sorted(n.var.name_hint for n in post_order(out["main"]) if type(n) is Let)
    # %a is used twice, %c inside a closure, %r/%v touch a reference: they stay.
    assert kept == ["a", "c", "r", "v"]


def test_ignore_impurity():
    # The flag promises the program has no effects; here it has, so the write goes too
    # and the result changes (that is what the flag is for: not checking).
    out = check_pass(
        DeadCodeElimination(ignore_impurity=True), CASES["dce_refs"], evaluate_main=False
    )
    assert [n.var.name_hint for n in post_order(out["main"]) if type(n) is Let] == ["r"]


def test_recursive_let_kept_when_used():
    text = """
def @main(%n: int32) {
  let %f = fn (%k: int32) -> int32 { if (equal(%k, 0)) { 0 } else { %f(subtract(%k, 1)) } };
  let %g = 1;
  %f(%n)
}"""
    out = check_pass(DeadCodeElimination(inline_once=True), text, inputs=[np.int32(3)])
    assert [n.var.name_hint for n in post_order(out["main"]) if type(n) is Let] == ["f"]


def test_nothing_dead_is_identity():
    mod = relay.parse("def @main(%x: float32) { let %a = log(%x); add(%a, %a) }")
    assert DeadCodeElimination()(mod)["main"] is mod["main"]


def test_untouched_subtrees_are_the_same_objects():
    mod = relay.parse(CASES["dce_nested_scopes"])
    main = mod["main"]
    out = DeadCodeElimination()(mod)["main"]
    assert out.body.body.false_branch is main.body.body.false_branch
    assert out.body.value is not main.body.value  # the closure lost its dead let


def test_dag_sharing_kept():
    mod = relay.parse("def @main(%x: float32) { %1 = log(%x); let %d = exp(%1); add(%1, %1) }")
    out = DeadCodeElimination()(mod)["main"]
    assert out.body.args[0] is out.body.args[1] is mod["main"].body.body.args[0]


def test_registered():
    p = relay.transform.get_pass("DeadCodeElimination")
    assert p.info.opt_level == 1 and not p.inline_once


@FAST
@given(modules())
def test_random_modules(mod):
    out = check_pass(DeadCodeElimination(), mod)
    again = DeadCodeElimination()(out)
    assert all(again[gv] is f for gv, f in out.functions.items())  # nothing dead is left
    check_pass(DeadCodeElimination(inline_once=True), mod)


@pytest.mark.parametrize("build", [big_let_chain, big_dag, big_mixed])
def test_scale(build):
    mod = build(100_000)
    for p in (DeadCodeElimination(), DeadCodeElimination(inline_once=True)):
        start = time.perf_counter()
        out = p(mod)
        assert time.perf_counter() - start < 20
        assert well_formed(out["main"])


def test_dead_chain_cascades_at_scale():
    # 100,000 lets where only the first is used: everything else disappears in one run.
    mod = big_let_chain(100_000)
    main = mod["main"]
    first = main.body
    dead = relay.Function(
        main.params,
        relay.Let(first.var, first.value, relay.Let(first.body.var, first.body.value, first.var)),
    )
    out = DeadCodeElimination()(relay.IRModule({"main": dead}))["main"]
    assert type(out.body) is Let and out.body.body is first.var
