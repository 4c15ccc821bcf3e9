"""ToANormalForm as a pass: golden cases, semantics, sharing, identity, scale."""

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
from relay_nb.transform import ToANormalForm, ToANormalFormExpr
from relay_nb.transform.anf import is_a_normal_form

CASES = {
    # seed 004: the shared log is bound once and used twice
    "anf_seed004_dag": """
def @main(%x: float32) {
  %1 = log(%x);
  add(%1, %1)
}""",
    # seed 004: where to compute %1 with an if; used in one branch only: bound inside it
    "anf_if_scope": """
def @main(%x: float32, %c: bool) {
  %1 = log(%x);
  if (%c) { add(%1, 1f) } else { %x }
}""",
    # used in both branches: bound before the if
    "anf_if_shared": """
def @main(%x: float32, %c: bool) {
  %1 = log(%x);
  if (%c) { add(%1, 1f) } else { %1 }
}""",
    # seed 004: the closure example; %1 used only inside the closure stays inside it
    "anf_closure": """
def @main(%x: float32) {
  %1 = log(%x);
  %2 = fn (%y: float32) { add(%y, %1) };
  %2(%x)
}""",
    "anf_refs": """
def @main(%x: float32) {
  %0 = ref(%x);
  %1 = ref_write(%0, add(%x, 1f));
  (%1, ref_read(%0))
}""",
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_golden(case, golden):
    out = check_pass(ToANormalForm(), CASES[case], golden=golden, case=case)
    assert all(is_a_normal_form(f) for f in out.functions.values())


def test_dag_node_bound_once():
    mod = relay.parse(CASES["anf_seed004_dag"])
    body = ToANormalForm()(mod)["main"].body
    assert type(body) is Let and body.value.op.name == "log"
    add = body.body.value
    assert add.args[0] is body.var and add.args[1] is body.var
    # exactly two bindings: log and add
    assert type(body.body.body) is not Let


def test_expected_text():
    check_pass(
        ToANormalForm(),
        CASES["anf_if_shared"],
        """
def @main(%x: float32, %c: bool) {
  let %a = log(%x);
  let %b = if (%c) { let %d = add(%a, 1f); %d } else { %a };
  %b
}""",
    )


def test_already_anf_is_identity():
    mod = relay.parse(CASES["anf_closure"])
    once = ToANormalForm()(mod)
    twice = ToANormalForm()(once)
    assert twice["main"] is once["main"]
    atom = relay.parse("def @main(%x: float32) { %x }")
    assert ToANormalForm()(atom)["main"] is atom["main"]


def test_untouched_subtrees_and_primitive_functions():
    mod = relay.parse(
        """
        def @prim(%x: float32, Primitive=1) { add(log(%x), 1f) }
        def @main(%x: float32) { %x }
        """
    )
    out = ToANormalForm()(mod)
    assert out["prim"] is mod["prim"]
    assert out["main"] is mod["main"]


def test_expr_form():
    e = relay.parse_expr("fn (%x) { add(log(%x), 1f) }")
    anf = ToANormalFormExpr(e)
    assert is_a_normal_form(anf) and ToANormalFormExpr(anf) is anf


def test_registered():
    assert type(relay.transform.get_pass("ToANormalForm")) is ToANormalForm
    assert ToANormalForm().info.opt_level == 1


@FAST
@given(modules())
def test_random_modules(mod):
    out = check_pass(ToANormalForm(), mod)
    assert all(is_a_normal_form(f) for f in out.functions.values())
    again = ToANormalForm()(out)
    assert all(again[gv] is f for gv, f in out.functions.items())  # idempotent, same objects


@pytest.mark.parametrize("build", [big_let_chain, big_dag, big_mixed])
def test_scale(build):
    mod = build(100_000)
    start = time.perf_counter()
    out = ToANormalForm()(mod)
    assert time.perf_counter() - start < 20
    assert is_a_normal_form(out["main"]) and well_formed(out["main"])


def test_semantics_of_a_big_chain():
    mod = big_let_chain(10_000)
    check_pass(ToANormalForm(), mod, inputs=[np.float32(0.5)])


# A one-scope program (dataflow nodes and an opaque function only) is rebuilt by a loop
# over its post order; any let, if, match or function sends it through the general
# rebuild.  Both must bind the same values in the same order.
_ONE_SCOPE = """
def @main(%x: Tensor[(2), float32]) {
  %0 = log(%x);
  %1 = (%0, %x);
  %2 = %1.0;
  %3 = fn (%p: Tensor[(2), float32], Primitive=1) { exp(%p) };
  %4 = %3(%2);
  %5 = ref(%4);
  %6 = ref_write(%5, %0);
  %7 = ref_read(%5);
  (%6, add(%7, %0), %1.1)
}"""


def test_one_scope_rebuild_matches_the_general_one():
    from relay_nb.viz.anf import anf_with_origins

    mod = relay.transform.InferType()(relay.parse(_ONE_SCOPE))
    fn = mod["main"]
    v = relay.var("v")
    general = relay.Function(fn.params, relay.Let(v, fn.params[0], fn.body), fn.ret_type)
    general.set_checked_type(fn.checked_type)
    flat_out = ToANormalFormExpr(fn)
    general_out = ToANormalFormExpr(general)
    flat_text = relay.astext(flat_out, show_types=True)
    general_text = relay.astext(general_out, show_types=True)
    assert general_text.replace("  let %v = %x;\n", "", 1) == flat_text
    t2 = "Tensor[(2), float32]"
    assert relay.astext(flat_out, show_types=False).splitlines()[2:] == [
        "  let %x1 = log(%x);",
        "  let %x2 = (%x1, %x);",
        "  let %x3 = %x2.0;",
        "  let %x4 = fn (%p: Tensor[(2), float32], Primitive=1) {",
        "    exp(%p)",
        "  };",
        "  let %x5 = %x4(%x3);",
        "  let %x6 = ref(%x5);",
        "  let %x7 = ref_write(%x6, %x1);",
        "  let %x8 = ref_read(%x6);",
        "  let %x9 = add(%x8, %x1);",
        "  let %x10 = %x2.1;",
        "  let %x11 = (%x7, %x9, %x10);",
        "  %x11",
        "}",
    ]
    assert f"let %x2 /* ty=({t2}, {t2}) */ = (%x1, %x) /* ty=({t2}, {t2}) */;" in flat_text
    # the ANF view's origin map: each binding's value and variable -> the node it replaces
    flat_anf, flat_origin = anf_with_origins(fn)
    general_anf, general_origin = anf_with_origins(general)

    def bound(origin, body):
        out = []
        while type(body) is Let:
            out.append((origin.get(body.var), origin.get(body.value)))
            body = body.body
        return out

    flat_seq = bound(flat_origin, flat_anf.body)
    assert len(flat_seq) == 11 and all(a is not None and a is b for a, b in flat_seq)
    general_seq = bound(general_origin, general_anf.body)
    assert general_seq[0] == (None, None)  # let %v = %x: no new node
    assert [a for a, _ in general_seq[1:]] == [a for a, _ in flat_seq]
