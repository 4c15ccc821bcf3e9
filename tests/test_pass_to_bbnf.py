"""ToBasicBlockNormalForm: only values shared between blocks get a let."""

from __future__ import annotations

import time

import pytest
from hypothesis import given
from pass_testing import check_pass
from strategies import FAST, big_dag, big_let_chain, big_mixed, modules

import relay_nb as relay
from relay_nb.analysis import well_formed
from relay_nb.ir.expr import Call, Let
from relay_nb.ir.functor import post_order
from relay_nb.transform import ToANormalForm, ToBasicBlockNormalForm

CASES = {
    # seed 004: %1 shared by both branches gets a let before the if; the rest stays a graph
    "bbnf_if_shared": """
def @main(%x: float32, %c: bool) {
  %1 = log(%x);
  %2 = exp(%x);
  %3 = if (%c) { add(%1, %2) } else { %1 };
  %4 = negative(%x);
  (%3, %2, %4, %4)
}""",
    # shared between a closure and the outer block: bound before the closure
    "bbnf_closure": """
def @main(%x: float32) {
  %1 = log(%x);
  %2 = fn (%y: float32) { add(%y, %1) };
  (%2(%x), %1)
}""",
    # used only inside the closure: stays there (computed at each call, as written)
    "bbnf_closure_only": """
def @main(%x: float32) {
  %1 = log(%x);
  %2 = fn (%y: float32) { add(%y, %1) };
  %2(%x)
}""",
    # a value shared across two let bodies' blocks goes after the let it depends on
    "bbnf_after_let": """
def @main(%x: float32, %c: bool) {
  let %a = negative(%x);
  %1 = add(%a, 1f);
  if (%c) { %1 } else { multiply(%1, 2f) }
}""",
    # with references, effects keep their order: the shared read stays after the write
    "bbnf_refs": """
def @main(%x: float32, %c: bool) {
  let %r = ref(%x);
  %1 = ref_read(%r);
  (ref_write(%r, 2f), if (%c) { %1 } else { add(%1, 1f) })
}""",
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_golden(case, golden):
    check_pass(ToBasicBlockNormalForm(), CASES[case], golden=golden, case=case)


def test_expected_text():
    check_pass(
        ToBasicBlockNormalForm(),
        CASES["bbnf_if_shared"],
        """
def @main(%x: float32, %c: bool) {
  let %s = log(%x);
  let %e = exp(%x);
  %3 = if (%c) { add(%s, %e) } else { %s };
  %4 = negative(%x);
  (%3, %e, %4, %4)
}""",
    )


def test_exactly_the_cross_block_value_is_bound():
    out = ToBasicBlockNormalForm()(relay.parse(CASES["bbnf_if_shared"]))["main"]
    lets = [n for n in post_order(out) if type(n) is Let]
    assert [let.value.op.name for let in lets] == ["exp", "log"]  # post order: inner first
    negs = [n for n in post_order(out) if type(n) is Call and n.op.name == "negative"]
    assert len(negs) == 1  # shared within one block: stays a graph node


def test_ref_effect_order():
    out = ToBasicBlockNormalForm()(relay.parse(CASES["bbnf_refs"]))["main"]
    names = []
    node = out.body
    while type(node) is Let:
        names.append(type(node.value).__name__)
        node = node.body
    assert names.index("RefWrite") < names.index("RefRead")


def test_anf_and_trees_are_unchanged():
    mod = relay.parse(CASES["bbnf_if_shared"])
    anf = ToANormalForm()(mod)
    assert ToBasicBlockNormalForm()(anf)["main"] is anf["main"]
    tree = relay.parse("def @main(%x: float32, %c: bool) { if (%c) { log(%x) } else { exp(%x) } }")
    assert ToBasicBlockNormalForm()(tree)["main"] is tree["main"]


def test_untouched_subtrees_are_the_same_objects():
    mod = relay.parse(CASES["bbnf_if_shared"])
    main = mod["main"]
    out = ToBasicBlockNormalForm()(mod)["main"]
    for name in ("exp", "negative", "log"):
        old = next(n for n in post_order(main) if type(n) is Call and n.op.name == name)
        new = next(n for n in post_order(out) if type(n) is Call and n.op.name == name)
        assert new is old


def test_idempotent():
    mod = relay.parse(CASES["bbnf_closure"])
    once = ToBasicBlockNormalForm()(mod)
    assert ToBasicBlockNormalForm()(once)["main"] is once["main"]


@FAST
@given(modules())
def test_random_modules(mod):
    once = check_pass(ToBasicBlockNormalForm(), mod)
    again = ToBasicBlockNormalForm()(once)
    assert all(again[gv] is f for gv, f in once.functions.items())  # idempotent


@pytest.mark.parametrize("build", [big_let_chain, big_dag, big_mixed])
def test_scale(build):
    mod = build(100_000)
    start = time.perf_counter()
    out = ToBasicBlockNormalForm()(mod)
    assert time.perf_counter() - start < 20
    assert well_formed(out["main"])
