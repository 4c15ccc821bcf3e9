"""detect_feature and is_dataflow (seed 000's dataflow and control fragments)."""

from __future__ import annotations

import relay_nb as relay
from relay_nb.analysis import Feature, detect_feature, is_dataflow
from relay_nb.ir.expr import Call, Function, Var
from relay_nb.op.registry import get_op

F = Feature


def test_tvm_numbering():
    assert [f.name for f in Feature][:3] == ["fVar", "fGlobalVar", "fConstant"]
    assert F.fGraph == 15 and F.fLetRec == 16


def test_dataflow_features():
    e = relay.parse_expr("fn (%x) { %1 = log(%x); add(%1, %1) }")
    assert detect_feature(e) == {F.fVar, F.fFunction, F.fOp, F.fCall, F.fGraph}


def test_tree_has_no_graph_feature():
    e = relay.parse_expr("fn (%x) { add(log(%x), 1f) }")
    assert F.fGraph not in detect_feature(e)
    assert F.fConstant in detect_feature(e)


def test_control_features():
    mod = relay.parse(
        """
        type List[A] { Cons(A, List[A]), Nil }
        def @main(%l: List[float32], %c: bool) {
          let %r = ref(1f);
          let %w = ref_write(%r, 2f);
          let %t = (ref_read(%r), 0f);
          if (%c) { %t.0 } else {
            match (%l) { Cons(%h, _) => %h, Nil => @main(Nil, %c) }
          }
        }
        """
    )
    found = detect_feature(mod)
    for f in (
        F.fLet,
        F.fIf,
        F.fMatch,
        F.fRefCreate,
        F.fRefRead,
        F.fRefWrite,
        F.fTuple,
        F.fTupleGetItem,
        F.fConstructor,
        F.fGlobalVar,
        F.fConstant,
    ):
        assert f in found, f


def test_letrec():
    e = relay.parse_expr("fn (%n: int32) { let %f = fn (%k: int32) -> int32 { %f(%k) }; %f(%n) }")
    assert F.fLetRec in detect_feature(e)
    assert F.fLetRec not in detect_feature(relay.parse_expr("fn (%x) { let %y = %x; %y }"))


def test_two_argument_form():
    a = relay.parse_expr("fn (%x) { %x }")
    b = relay.parse_expr("fn (%c: bool) { if (%c) { 1 } else { 2 } }")
    assert F.fIf in detect_feature(a, b)


def test_is_dataflow_fragment():
    assert is_dataflow(relay.parse_expr("fn (%x) { (log(%x), %x).0 }"))
    assert is_dataflow(relay.parse_expr("fn (%x) { let %y = log(%x); add(%y, %y) }"))
    assert not is_dataflow(relay.parse_expr("fn (%c: bool) { if (%c) { 1 } else { 2 } }"))
    assert not is_dataflow(relay.parse_expr("fn (%x) { ref(%x) }"))


def test_is_dataflow_follows_calls():
    mod = relay.parse(
        """
        def @muladd(%x, %y, %z) { add(multiply(%x, %y), %z) }
        def @main(%x: float32) { @muladd(@muladd(%x, 1f, 2f), 2f, 3f) }
        """
    )
    assert is_dataflow(mod)  # seed 000: a call to a dataflow function is dataflow
    rec = relay.parse(
        """
        def @f(%x: int32) -> int32 { @f(%x) }
        def @main(%x: int32) { @f(%x) }
        """
    )
    assert not is_dataflow(rec)  # recursion is control
    branchy = relay.parse(
        """
        def @g(%c: bool) { if (%c) { 1 } else { 2 } }
        def @main(%c: bool) { @g(%c) }
        """
    )
    assert not is_dataflow(branchy)
    # A local function with a dataflow body is dataflow; calling a parameter is not.
    assert is_dataflow(relay.parse_expr("fn (%x) { let %f = fn (%y) { log(%y) }; %f(%x) }"))
    f = Var("f")
    assert not is_dataflow(Function((f,), Call(f, ())))
    assert is_dataflow(Function((Var("x"),), Call(get_op("log"), (relay.const(1.0),))))
