"""The IR core through the public builder API (``import relay_nb as relay``)."""

from __future__ import annotations

import copy
import dataclasses
import pickle

import numpy as np
import pytest

import relay_nb as relay
from relay_nb.errors import RelayError
from relay_nb.ir.attrs import EMPTY_ATTRS, Attrs, freeze_value
from relay_nb.ir.expr import with_fields
from relay_nb.ir.functor import post_order
from relay_nb.ir.structural import structural_equal
from relay_nb.ir.ty import Any as AnyDim
from relay_nb.op.registry import get_op, register_op


@pytest.fixture(scope="module", autouse=True)
def arithmetic_ops():
    """The sugar needs add/subtract/multiply/divide/negative; register stand-ins only if the
    op families do not provide them (never overriding a real registration)."""
    for name, arity in (("add", 2), ("subtract", 2), ("multiply", 2), ("divide", 2), ("negative", 1), ("log", 1)):
        try:
            get_op(name)
        except Exception:
            register_op(name, arity, override=True)
    yield


# --- builders ---------------------------------------------------------------------------


def test_var_with_shape_and_dtype():
    x = relay.var("x", shape=(2, 3))
    assert x.name_hint == "x"
    assert x.type_annotation == relay.TensorType((2, 3), "float32")
    y = relay.var("y", shape=[4], dtype="int8")
    assert y.type_annotation == relay.TensorType((4,), "int8")
    s = relay.var("s", "int32")  # a dtype string means a scalar
    assert s.type_annotation == relay.TensorType((), "int32")
    t = relay.var("t", relay.TupleType([relay.TensorType((1,))]))
    assert isinstance(t.type_annotation, relay.TupleType)
    assert relay.var("u").type_annotation is None
    with pytest.raises(ValueError):
        relay.var("bad", relay.TensorType((1,)), shape=(1,))


@pytest.mark.parametrize(
    "value, dtype, expected",
    [
        (1, None, "int32"),
        (1.5, None, "float32"),
        (True, None, "bool"),
        ([1, 2], None, "int32"),
        ([1.0, 2.0], None, "float32"),
        (np.array([1, 2], dtype="int64"), None, "int64"),
        (np.array([1.0], dtype="float64"), None, "float32"),  # TVM's rule: float64 -> float32
        (np.float16(2), None, "float16"),
        (3, "int8", "int8"),
        (3, "float64", "float64"),
        (0, "uint64", "uint64"),
        ([[1, 0]], "bool", "bool"),
    ],
)
def test_const_dtypes(value, dtype, expected):
    c = relay.const(value, dtype)
    assert isinstance(c, relay.Constant)
    assert c.data.dtype == np.dtype(expected)
    assert c.data.shape == np.shape(value)


def test_const_scalar_and_passthrough():
    c = relay.const(2.0)
    assert c.is_scalar and c.data.ndim == 0
    assert relay.const(c) is c
    assert not relay.const([1.0]).is_scalar


def test_constant_data_is_read_only_and_not_aliased():
    source = np.zeros((2, 2), dtype="float32")
    c = relay.const(source)
    source[0, 0] = 5.0  # the constant owns a copy
    assert c.data[0, 0] == 0.0
    with pytest.raises(ValueError):
        c.data[0, 0] = 1.0
    assert not c.data.flags.writeable


def test_node_constructors():
    x, y = relay.var("x", shape=(2,)), relay.var("y", shape=(2,))
    add = get_op("add")
    call = relay.Call(add, [x, y])
    assert call.op is add and call.args == (x, y)  # lists become tuples
    assert call.attrs is None and call.type_args == ()
    tup = relay.Tuple([x, y])
    assert tup.fields == (x, y) and len(tup) == 2 and tup[1] is y
    item = relay.TupleGetItem(tup, 1)
    assert item.tuple_value is tup and item.index == 1
    f = relay.Function([x, y], call)
    assert f.params == (x, y) and f.body is call and f.ret_type is None
    assert f.type_params == () and f.attrs == EMPTY_ATTRS
    v = relay.var("v")
    let = relay.Let(v, call, v)
    assert (let.var, let.value, let.body) == (v, call, v)
    cond = relay.var("c", "bool")
    ite = relay.If(cond, x, y)
    assert (ite.cond, ite.true_branch, ite.false_branch) == (cond, x, y)
    a = relay.TypeVar("a")
    poly = relay.Function([relay.var("z", a)], x, ret_type=a, type_params=[a])
    assert poly.type_params == (a,)
    g = relay.GlobalVar("g")
    assert g.name_hint == "g" and repr(g) == "GlobalVar(@g)"
    assert repr(x) == "Var(%x)"


def test_calling_an_expression_builds_a_call():
    f = relay.var("f")
    x = relay.var("x")
    c = f(x, 1)
    assert isinstance(c, relay.Call) and c.op is f
    assert c.args[0] is x and isinstance(c.args[1], relay.Constant)


def test_operator_sugar():
    x, y = relay.var("x", shape=(2,)), relay.var("y", shape=(2,))
    cases = [
        (x + y, "add", (x, y)),
        (x - y, "subtract", (x, y)),
        (x * y, "multiply", (x, y)),
        (x / y, "divide", (x, y)),
    ]
    for expr, name, args in cases:
        assert isinstance(expr, relay.Call)
        assert expr.op is get_op(name)
        assert expr.args == args
    neg = -x
    assert neg.op is get_op("negative") and neg.args == (x,)
    # numbers become literal constants that adopt the other operand's dtype later
    r = 1 + x
    assert r.op is get_op("add") and r.args[1] is x
    assert isinstance(r.args[0], relay.Constant) and r.args[0].is_literal
    m = x * 2.5
    assert m.args[1].data.dtype == np.float32 and m.args[1].is_literal
    assert (2 - x).args[0].data.item() == 2
    explicit = x + relay.const(1.0)
    assert not explicit.args[1].is_literal


# --- identity, immutability, sharing --------------------------------------------------------


def test_nodes_are_immutable():
    x = relay.var("x")
    call = relay.Call(get_op("add"), (x, x))
    with pytest.raises(dataclasses.FrozenInstanceError):
        x.name_hint = "y"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        call.args = ()  # type: ignore[misc]
    with pytest.raises(AttributeError):
        relay.const(1).data = np.zeros(1)  # type: ignore[misc]
    with pytest.raises(AttributeError):
        relay.TensorType((1,)).dtype = "int8"  # type: ignore[misc]


def test_identity_equality():
    a, b = relay.var("x"), relay.var("x")
    assert a != b and a == a
    assert len({a, b}) == 2
    assert relay.const(1) != relay.const(1)
    env = {a: 1, b: 2}
    assert env[a] == 1 and env[b] == 2
    # structural comparison is a separate function
    assert structural_equal(relay.const(1), relay.const(1))


def test_types_are_values_typevars_identities():
    assert relay.TensorType((2, 3), "float32") == relay.TensorType((2, 3), "float32")
    assert hash(relay.TensorType((2,))) == hash(relay.TensorType((2,)))
    assert relay.TupleType([relay.TensorType(())]) == relay.TupleType((relay.TensorType(()),))
    assert relay.TypeVar("a") != relay.TypeVar("a")
    assert relay.GlobalTypeVar("List") == relay.GlobalTypeVar("List")
    assert relay.FuncType([relay.TensorType(())], relay.TensorType(())).arg_types == (relay.TensorType(()),)
    assert relay.scalar_type("bool") == relay.TensorType((), "bool")
    assert relay.TensorType((AnyDim, 3)).is_dynamic()
    with pytest.raises(ValueError):
        relay.TensorType((AnyDim, 3)).concrete_shape
    assert relay.TensorType((2, 3)).concrete_shape == (2, 3)


def test_relay_any_is_the_dynamic_dimension():
    assert relay.Any is AnyDim


def test_reusing_an_object_shares_the_node():
    x = relay.var("x", shape=(2,))
    y = relay.log(x) if hasattr(relay, "log") else relay.Call(get_op("log"), (x,))
    z = relay.Call(get_op("add"), (y, y))
    assert z.args[0] is z.args[1]
    nodes = list(post_order(z))
    assert nodes.count(y) == 1  # a DAG: the shared node appears once
    assert [n for n in nodes if n is x] == [x]
    # rebuilding gives a different (tree-shaped) but structurally equal program
    tree = relay.Call(get_op("add"), (relay.Call(get_op("log"), (x,)), relay.Call(get_op("log"), (x,))))
    assert tree.args[0] is not tree.args[1]
    assert structural_equal(z, tree)


def test_op_objects_are_unique_per_name():
    assert get_op("add") is relay.op.get("add")
    add = get_op("add")
    assert copy.copy(add) is add and copy.deepcopy(add) is add
    assert pickle.loads(pickle.dumps(add)) is add


def test_deepcopy_and_pickle_keep_sharing():
    x = relay.var("x", shape=(2,))
    y = relay.Call(get_op("log"), (x,))
    f = relay.Function([x], relay.Call(get_op("add"), (y, y), Attrs({"k": [1, 2]}, "relay.attrs.Test")))
    for g in (copy.deepcopy(f), pickle.loads(pickle.dumps(f))):
        assert g is not f
        assert g.body.args[0] is g.body.args[1]
        assert g.body.args[0].args[0] is g.params[0]
        assert structural_equal(f, g)


# --- spans, fields, checked types --------------------------------------------------------------


def test_spans_are_optional():
    x = relay.var("x")
    assert x.span is None
    src = relay.Source("cell", "add(%x, %x)")
    span = relay.Span(src, 1, 1, 1, 12)
    call = relay.Call(get_op("add"), (x, x), span=span)
    assert call.span is span and str(span) == "cell:1:1"
    moved = with_fields(call, args=(x,))
    assert moved.span is span and moved.args == (x,) and call.args == (x, x)
    assert dataclasses.replace(call, span=None).span is None


def test_checked_type_before_and_after_inference():
    x = relay.var("x", shape=(2,))
    with pytest.raises(RelayError, match="InferType"):
        x.checked_type
    x.set_checked_type(relay.TensorType((2,)))
    assert x.checked_type == relay.TensorType((2,))


def test_function_attrs():
    x = relay.var("x")
    f = relay.Function([x], x)
    assert not f.is_primitive
    g = f.with_attr("Primitive", 1)
    assert g.is_primitive and not f.is_primitive and g.params == f.params
    assert g.attrs["Primitive"] == 1 and g.attrs.type_key == "DictAttrs"
    h = relay.Function([x], x, attrs={"Inline": 1})
    assert isinstance(h.attrs, Attrs) and h.attrs.Inline == 1


def test_tuple_wrapper():
    t = relay.Tuple([relay.var("a"), relay.var("b"), relay.var("c")])
    w = relay.TupleWrapper(t, 3)
    assert w.astuple() is t and len(w) == 3
    assert w[0].tuple_value is t and w[-1].index == 2
    assert [item.index for item in w] == [0, 1, 2]
    with pytest.raises(IndexError):
        w[3]


# --- ADTs and patterns ----------------------------------------------------------------------


def _list_adt():
    lst = relay.GlobalTypeVar("List")
    a = relay.TypeVar("a")
    cons = relay.Constructor("Cons", [a, relay.TypeCall(lst, [a])], lst, 0)
    nil = relay.Constructor("Nil", [], lst, 1)
    return relay.TypeData(lst, [a], [cons, nil]), cons, nil


def test_type_data_and_constructors():
    td, cons, nil = _list_adt()
    assert td.name == "List"
    assert td.constructors == (cons, nil) and td.type_vars[0].name_hint == "a"
    assert td.constructor("Nil") is nil
    with pytest.raises(KeyError):
        td.constructor("Missing")
    assert td.self_type() == relay.TypeCall(td.header, td.type_vars)
    assert cons.inputs[1] == relay.TypeCall(relay.GlobalTypeVar("List"), (td.type_vars[0],))
    assert cons.belong_to == td.header and cons.tag == 0 and repr(nil) == "Constructor(Nil)"
    x = relay.var("x")
    value = cons(x, nil())
    assert isinstance(value, relay.Call) and value.op is cons
    assert value.args[1].op is nil and value.args[1].args == ()


def test_match_and_patterns():
    td, cons, nil = _list_adt()
    xs, h, t = relay.var("xs"), relay.var("h"), relay.var("t")
    m = relay.Match(
        xs,
        [
            relay.Clause(relay.PatternConstructor(cons, [relay.PatternVar(h), relay.PatternWildcard()]), h),
            relay.Clause(relay.PatternTuple([relay.PatternVar(t)]), t),
        ],
        complete=False,
    )
    assert len(m.clauses) == 2 and not m.complete
    assert isinstance(m.clauses, tuple) and isinstance(m.clauses[0].lhs.patterns, tuple)
    assert m.clauses[0].lhs.constructor is cons
    assert relay.Match(xs, []).complete


def test_references():
    v = relay.var("v")
    r = relay.RefCreate(v)
    assert relay.RefRead(r).ref is r
    w = relay.RefWrite(r, v)
    assert (w.ref, w.value) == (r, v)


# --- attributes -------------------------------------------------------------------------------


def test_attrs_access_and_immutability():
    attrs = Attrs({"axis": [1, 2], "keepdims": np.bool_(True), "eps": np.float32(0.5)}, "relay.attrs.ReduceAttrs")
    assert attrs.axis == (1, 2) and attrs["axis"] == (1, 2)  # lists are frozen to tuples
    assert attrs.keepdims is True and isinstance(attrs.eps, float)
    assert list(attrs) == ["axis", "keepdims", "eps"] and len(attrs) == 3
    assert attrs.type_key == "relay.attrs.ReduceAttrs"
    with pytest.raises(AttributeError, match="immutable"):
        attrs.axis = 3
    with pytest.raises(AttributeError, match="has no attribute 'exclude'"):
        attrs.exclude
    with pytest.raises(KeyError):
        attrs["exclude"]
    changed = attrs.with_fields(axis=0, exclude=True)
    assert changed.axis == 0 and changed.exclude is True and attrs.axis == (1, 2)
    assert "axis=(1, 2)" in repr(attrs)


def test_attrs_equality_and_hash():
    a = Attrs({"axis": (1,), "eps": 1e-5}, "relay.attrs.X")
    b = Attrs({"axis": [1], "eps": 1e-5}, "relay.attrs.X")
    assert a == b and hash(a) == hash(b)
    assert a != Attrs({"axis": (1,), "eps": 1e-5}, "relay.attrs.Y")
    assert a != Attrs({"axis": (2,), "eps": 1e-5}, "relay.attrs.X")
    assert Attrs({"v": True}) != Attrs({"v": 1})  # bool is not int
    nan = Attrs({"v": float("nan")})
    assert nan == Attrs({"v": float("nan")}) and hash(nan) == hash(Attrs({"v": float("nan")}))
    assert Attrs({"v": np.array([[1, 2]])}) == Attrs({"v": ((1, 2),)})
    assert Attrs({"d": {"a": 1, "b": 2}}) == Attrs({"d": {"b": 2, "a": 1}})
    assert hash(Attrs({"d": {"a": 1, "b": 2}})) == hash(Attrs({"d": {"b": 2, "a": 1}}))
    assert (a == 3) is False
    assert freeze_value([np.int64(3), [1.0]]) == (3, (1.0,))


def test_attrs_copy_and_pickle():
    a = Attrs({"axis": [1, 2], "name": "x"}, "relay.attrs.X")
    for b in (copy.copy(a), copy.deepcopy(a), pickle.loads(pickle.dumps(a))):
        assert b == a and b.type_key == "relay.attrs.X" and b.axis == (1, 2)


def test_sugar_literals_take_the_other_operands_dtype():
    # x * 2 + 1.5 with a float16 x: the numbers are literals, so everything is float16
    x = relay.var("x", shape=(2,), dtype="float16")
    mod = relay.transform.InferType()(relay.IRModule.from_expr(x * 2 + 1.5))
    assert mod["main"].checked_type.ret_type == relay.TensorType((2,), "float16")
