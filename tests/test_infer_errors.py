"""Type errors: what they say, and that they point at the offending node's source span."""

from __future__ import annotations

import numpy as np
import pytest

from relay_nb.errors import RelayError, RelayTypeError
from relay_nb.ir.adt import TypeData
from relay_nb.ir.expr import (
    Call,
    Clause,
    Constructor,
    Function,
    If,
    Let,
    Match,
    PatternConstructor,
    PatternTuple,
    PatternVar,
    Tuple,
    TupleGetItem,
    const,
    var,
)
from relay_nb.ir.module import IRModule
from relay_nb.ir.span import Source, Span
from relay_nb.ir.ty import GlobalTypeVar, TensorType, TypeCall, TypeVar
from relay_nb.op.registry import get_op, has_op, register_op
from relay_nb.transform import InferType
from relay_nb.typing.infer import infer_type
from relay_nb.typing.relations import broadcast_comp_rel, broadcast_rel

for _name, _rel in (("add", broadcast_rel), ("equal", broadcast_comp_rel)):
    if not has_op(_name):
        register_op(_name, 2, type_rel=_rel)

SOURCE = Source(
    "prog.relay",
    "def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(4, 3), float32]) {\n  add(%x, %y)\n}\n",
)


def at(line, col, end_col=0):
    return Span(SOURCE, line, col, line if end_col else 0, end_col)


def add(a, b, span=None):
    return Call(get_op("add"), (a, b), span=span)


def T(*shape, dtype="float32"):
    return TensorType(tuple(shape), dtype)


def raises(fn, match):
    with pytest.raises(RelayTypeError, match=match) as info:
        fn()
    assert isinstance(info.value, RelayError)
    return info.value


def test_broadcast_error_has_op_name_location_and_caret():
    x, y = var("x", shape=(2, 3)), var("y", shape=(4, 3))
    call = add(x, y, span=at(2, 3, 14))
    mod = IRModule({"main": Function([x, y], call)})
    err = raises(lambda: InferType()(mod), "add: shapes \\(2, 3\\) and \\(4, 3\\) do not broadcast")
    assert err.span == call.span
    text = str(err)
    assert "prog.relay:2:3" in text
    assert "  add(%x, %y)" in text
    assert "^^^^^^^^^^^" in text
    assert err.line == 2 and err.column == 3


def test_dtype_mismatch():
    x, y = var("x", shape=(2,)), var("y", shape=(2,), dtype="int32")
    raises(lambda: infer_type(add(x, y, span=at(2, 3))), "add: dtype mismatch: float32 vs int32")


def test_global_arity():
    a, b = var("a"), var("b")
    mod = IRModule()
    mod.add("f", Function([a, b], add(a, b)))
    call = Call(mod.get_global_var("f"), (const(1), const(2), const(3)), span=at(2, 3))
    mod.add("main", Function([], call))
    err = raises(lambda: InferType()(mod), "@f expects 2 arguments, got 3")
    assert err.span == call.span


def test_op_arity():
    raises(
        lambda: infer_type(Call(get_op("add"), (const(1),), span=at(2, 3))),
        "add expects 2 arguments, got 1",
    )


def test_argument_type_mismatch_points_at_the_argument():
    x = var("x", "float32")
    f = var("f")
    arg = const(np.ones((2,), "int32"))
    object.__setattr__(arg, "span", at(2, 7))
    e = Let(f, Function([x], x), Call(f, (arg,), span=at(2, 3)))
    err = raises(
        lambda: infer_type(e),
        "%f expects argument 0 of type float32, found Tensor\\[\\(2\\), int32\\]",
    )
    assert err.span == arg.span


def test_tuple_index_out_of_range():
    node = TupleGetItem(Tuple([const(1), const(2)]), 3, span=at(2, 3))
    err = raises(lambda: infer_type(node), "tuple index 3 out of range for a 2-tuple")
    assert err.span == node.span


def test_projection_of_a_non_tuple():
    raises(
        lambda: infer_type(TupleGetItem(const(1), 0)),
        "cannot take field 0 of a value of type int32: it is not a tuple",
    )


def test_cannot_call_a_tensor():
    x = var("x", shape=(2,))
    call = Call(x, (const(1),), span=at(2, 3))
    err = raises(
        lambda: infer_type(Function([x], call)),
        "cannot call a value of type Tensor\\[\\(2\\), float32\\]",
    )
    assert err.span == call.span


def test_if_condition_must_be_bool():
    cond = const(1)
    object.__setattr__(cond, "span", at(2, 7))
    err = raises(
        lambda: infer_type(If(cond, const(1), const(2))), "if condition must be bool, found int32"
    )
    assert err.span == cond.span
    # the seed's fact example compares (10, 10) tensors: a rank-2 condition is not a bool
    x = var("x", shape=(10, 10))
    cond = Call(get_op("equal"), (x, const(np.zeros((10, 10), "float32"))))
    raises(
        lambda: infer_type(Function([x], If(cond, x, x))),
        "if condition must be bool, found Tensor\\[\\(10, 10\\), bool\\]",
    )


def test_if_branches_must_agree():
    raises(
        lambda: infer_type(If(const(True), const(1), const(2.0))),
        "if branches have different types: then-branch int32, else-branch float32",
    )


def test_return_annotation_mismatch():
    body = const(1)
    object.__setattr__(body, "span", at(2, 3))
    fn = Function([], body, T())
    err = raises(
        lambda: infer_type(fn), "function declared to return float32 but its body has type int32"
    )
    assert err.span == body.span


def test_let_annotation_mismatch():
    v = var("v", "float32")
    raises(
        lambda: infer_type(Let(v, const(1), v)),
        "let %v is annotated float32 but its value has type int32",
    )


def make_list():
    lst = GlobalTypeVar("List")
    a = TypeVar("A")
    cons = Constructor("Cons", (a, TypeCall(lst, (a,))), lst, 0)
    nil = Constructor("Nil", (), lst, 1)
    return TypeData(lst, (a,), (cons, nil)), cons, nil


def test_constructor_field_mismatch():
    tdata, cons, nil = make_list()
    mod = IRModule()
    mod.add_type(tdata)
    bad = const(2)
    object.__setattr__(bad, "span", at(2, 10))
    mod.add("main", Function([], Call(cons, (const(1), bad), span=at(2, 3))))
    err = raises(
        lambda: InferType()(mod),
        "constructor Cons expects field 1 of type List\\[A\\], found int32",
    )
    assert err.span == bad.span
    mod.add("main", Function([], Call(cons, (const(1),), span=at(2, 3))), update=True)
    raises(lambda: InferType()(mod), "constructor Cons expects 2 arguments, got 1")


def test_pattern_errors():
    tdata, cons, nil = make_list()
    mod = IRModule()
    mod.add_type(tdata)
    x = var("x", "int32")
    m = Match(x, [Clause(PatternConstructor(nil), const(1))], span=at(2, 3))
    mod.add("main", Function([x], m))
    raises(
        lambda: InferType()(mod),
        "pattern Nil matches values of type List\\[A\\], but the value has type int32",
    )
    xs = var("xs")
    m = Match(
        xs, [Clause(PatternConstructor(cons, [PatternVar(var("h"))]), const(1))], complete=False
    )
    mod.add("main", Function([xs], m), update=True)
    raises(lambda: InferType()(mod), "constructor Cons has 2 fields, but the pattern gives 1")
    p = var("p", shape=(2,))
    m = Match(p, [Clause(PatternTuple([PatternVar(var("a"))]), const(1))])
    raises(
        lambda: infer_type(Function([p], m)),
        "a tuple pattern with 1 field cannot match a value of type Tensor\\[\\(2\\), float32\\]",
    )


def test_match_arms_must_agree():
    p = var("p", "int32")
    a, b = var("a"), var("b")
    m = Match(
        Tuple([p, p]),
        [
            Clause(PatternTuple([PatternVar(a), PatternVar(b)]), a),
            Clause(PatternVar(var("c")), const(1.0)),
        ],
    )
    raises(
        lambda: infer_type(Function([p], m)),
        "match arms have different types: arm 0 has type int32, arm 1 has type float32",
    )


def test_occurs_check():
    f = var("f")
    raises(lambda: infer_type(Function([f], Call(f, (f,)))), "infinite type")


def test_undefined_global():
    mod = IRModule()
    ghost = mod.intern_global_var("ghost")
    mod.add("main", Function([], Call(ghost, ())))
    raises(lambda: InferType()(mod), "global @ghost is not defined in the module")
