"""ToGraphNormalForm: lets back to dataflow; GNF(ANF(dag)) is the dag, sharing kept."""

from __future__ import annotations

import time

import numpy as np
import pytest
from hypothesis import given
from pass_testing import check_pass
from strategies import FAST, big_dag, big_let_chain, big_mixed, modules, programs

import relay_nb as relay
from relay_nb.analysis import detect_feature, well_formed
from relay_nb.analysis.feature import Feature
from relay_nb.ir.expr import Call, Let
from relay_nb.ir.functor import post_order
from relay_nb.transform import ToANormalForm, ToGraphNormalForm

CASES = {
    "gnf_seed004_anf": """
def @main(%x: float32) {
  let %v1 = log(%x);
  let %v2 = add(%v1, %v1);
  %v2
}""",
    "gnf_branches_and_closure": """
def @main(%x: float32, %c: bool) {
  let %a = log(%x);
  let %f = fn (%y: float32) { let %z = multiply(%y, %a); %z };
  let %b = if (%c) { let %d = add(%a, 1f); %d } else { %a };
  %f(%b)
}""",
    # effects stay let-bound; pure values around them are inlined
    "gnf_refs_kept": """
def @main(%x: float32) {
  let %r = ref(%x);
  let %one = add(%x, 1f);
  let %w = ref_write(%r, %one);
  let %v = ref_read(%r);
  (%w, %v, %one)
}""",
    # a recursive let cannot be substituted into itself
    "gnf_letrec_kept": """
def @main(%n: int32) {
  let %f = fn (%k: int32) -> int32 { if (equal(%k, 0)) { 0 } else { %f(subtract(%k, 1)) } };
  let %m = add(%n, 1);
  %f(%m)
}""",
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_golden(case, golden):
    inputs = [np.int32(4)] if "letrec" in case else None
    check_pass(ToGraphNormalForm(), CASES[case], golden=golden, case=case, inputs=inputs)


def test_expected_text():
    check_pass(
        ToGraphNormalForm(),
        CASES["gnf_seed004_anf"],
        "def @main(%x: float32) { %1 = log(%x); add(%1, %1) }",
    )


def test_refs_keep_their_lets():
    out = ToGraphNormalForm()(relay.parse(CASES["gnf_refs_kept"]))["main"]
    kept = [n.var.name_hint for n in post_order(out) if type(n) is Let]
    assert sorted(kept) == ["r", "v", "w"]


def test_round_trip_of_a_dag_keeps_sharing():
    dag = relay.parse(
        """
        def @main(%x: float32, %c: bool) {
          %1 = log(%x);
          %2 = exp(%1);
          %3 = if (%c) { add(%2, %1) } else { %2 };
          %4 = fn (%y: float32) { multiply(%y, %2) };
          (%3, %4(%1), %3)
        }
        """
    )
    back = ToGraphNormalForm()(ToANormalForm()(dag))
    relay.assert_structural_equal(back, dag, map_free_vars=True)
    logs = [
        n
        for n in post_order(back["main"])
        if type(n) is Call and getattr(n.op, "name", "") == "log"
    ]
    exps = [
        n
        for n in post_order(back["main"])
        if type(n) is Call and getattr(n.op, "name", "") == "exp"
    ]
    assert len(logs) == 1 and len(exps) == 1  # each shared node appears once
    assert Feature.fGraph in detect_feature(back)


def test_graph_form_is_identity():
    mod = relay.parse("def @main(%x: float32) { %1 = log(%x); add(%1, %1) }")
    assert ToGraphNormalForm()(mod)["main"] is mod["main"]


def test_untouched_subtrees_are_the_same_objects():
    mod = relay.parse(
        """
        def @main(%x: float32) {
          %1 = add(log(%x), exp(%x));
          let %v = negative(%x);
          (%1, %v)
        }
        """
    )
    main = mod["main"]
    out = ToGraphNormalForm()(mod)["main"]
    old_add = next(n for n in post_order(main) if type(n) is Call and n.op.name == "add")
    new_add = next(n for n in post_order(out) if type(n) is Call and n.op.name == "add")
    assert new_add is old_add
    assert out.body.fields[1] is main.body.value  # the inlined value is the same node


@FAST
@given(programs(refs=False))
def test_round_trip_random_programs(fn):
    mod = relay.IRModule({"main": fn})
    gnf = ToGraphNormalForm()(mod)
    back = ToGraphNormalForm()(ToANormalForm()(gnf))
    relay.assert_structural_equal(back, gnf, map_free_vars=True)
    assert Feature.fLet not in detect_feature(back) or Feature.fLetRec in detect_feature(back)


@FAST
@given(modules())
def test_random_modules(mod):
    check_pass(ToGraphNormalForm(), mod)


@pytest.mark.parametrize("build", [big_let_chain, big_dag, big_mixed])
def test_scale(build):
    mod = build(100_000)
    start = time.perf_counter()
    out = ToGraphNormalForm()(mod)
    assert time.perf_counter() - start < 20
    assert well_formed(out["main"])
    if build is big_let_chain:
        assert Feature.fLet not in detect_feature(out)
