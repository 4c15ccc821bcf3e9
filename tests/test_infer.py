"""Type inference (relay_nb.typing.infer, relay.transform.InferType), built with the Python builder."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from relay_nb.errors import RelayTypeError
from relay_nb.ir.adt import TypeData
from relay_nb.ir.expr import (
    Call,
    Clause,
    Constant,
    Constructor,
    Function,
    If,
    Let,
    Match,
    MetaRef,
    PatternConstructor,
    PatternTuple,
    PatternVar,
    PatternWildcard,
    RefCreate,
    RefRead,
    RefWrite,
    TempExpr,
    Tuple,
    TupleGetItem,
    const,
    var,
)
from relay_nb.ir.functor import post_order
from relay_nb.ir.module import IRModule
from relay_nb.ir.ty import (
    Any,
    FuncType,
    GlobalTypeVar,
    IncompleteType,
    Kind,
    RefType,
    TensorType,
    TupleType,
    TypeCall,
    TypeRelation,
    TypeVar,
)
from relay_nb.op.registry import get_op, make_attrs, register_op
from relay_nb.transform import InferType
from relay_nb.typing.infer import check_type, infer_type
from relay_nb.typing.relations import Relation, broadcast_rel
from relay_nb.typing.text import type_text


def op(name):
    return get_op(name)


def add(a, b):
    return Call(op("add"), (a, b))


def sub(a, b):
    return Call(op("subtract"), (a, b))


def mul(a, b):
    return Call(op("multiply"), (a, b))


def equal(a, b):
    return Call(op("equal"), (a, b))


def lit(value):
    """An unsuffixed literal, as the parser makes for ``1`` or ``1.5``."""
    dtype = "int32" if isinstance(value, int) else "float32"
    return Constant(np.asarray(value, dtype), is_literal=True)


def T(*shape, dtype="float32"):
    return TensorType(tuple(shape), dtype)


def text(t):
    return type_text(t)


def infer_main(fn, *defs, types=()):
    mod = IRModule()
    for tdata in types:
        mod.add_type(tdata)
    for name, f in defs:
        mod.add(name, f)
    mod.add("main", fn)
    return InferType()(mod)


def all_typed(root):
    missing = [n for n in post_order(root) if n._checked_type is None]
    assert not missing, missing[:5]


# --- the pass ---------------------------------------------------------------------------


def test_pass_returns_new_module_and_metadata():
    x = var("x", shape=(2, 3))
    mod = IRModule({"main": Function([x], add(x, x))})
    new = InferType()(mod)
    assert new is not mod
    assert new["main"] is mod["main"]  # nodes are shared, not copied
    info = InferType().info
    assert (info.name, info.opt_level, info.required) == ("InferType", 0, ())
    from relay_nb.transform.infra import Pass, get_pass

    assert isinstance(InferType(), Pass) and isinstance(get_pass("InferType"), InferType)
    import relay_nb as relay

    assert relay.transform.InferType is InferType


def test_every_node_gets_a_checked_type():
    x = var("x", shape=(2, 3))
    y = var("y", shape=(3,))
    t = Tuple([add(x, y), const(1.0)])
    body = Let(var("z"), TupleGetItem(t, 0), mul(TupleGetItem(t, 0), TupleGetItem(t, 1)))
    mod = IRModule({"main": Function([x, y], body)})
    new = InferType()(mod)
    all_typed(new["main"])
    assert new["main"].checked_type == FuncType((T(2, 3), T(3)), T(2, 3))
    gv = new.get_global_var("main")
    assert gv.checked_type == new["main"].checked_type
    assert text(x.checked_type) == "Tensor[(2, 3), float32]"
    # the op node gets the op's polymorphic type
    add_type = op("add").checked_type
    assert isinstance(add_type, FuncType) and len(add_type.type_params) == 3
    assert add_type.type_constraints[0].func is op("add").get_attr("type_rel")


def test_broadcast_forward():
    x = var("x", shape=(4, 1, 3))
    y = var("y", shape=(5, 3))
    assert infer_type(Function([x, y], add(x, y))).ret_type == T(4, 5, 3)


def test_dynamic_dims():
    x = var("x", TensorType((Any, 3), "float32"))
    y = var("y", shape=(2, 3))
    ret = infer_type(Function([x, y], add(x, y))).ret_type
    assert text(ret) == "Tensor[(2, 3), float32]"


def test_infer_type_on_expression_and_check_type():
    x = var("x", shape=(2,))
    assert infer_type(add(x, x)) == T(2)
    assert check_type(add(x, x), T(2)) == T(2)
    assert check_type(add(x, x), TensorType((IncompleteType(Kind.ShapeVar),), "float32")) == T(2)
    with pytest.raises(RelayTypeError, match="expected type Tensor\\[\\(3\\), float32\\], found"):
        check_type(add(x, x), T(3))


def test_idempotent():
    a, b = var("a"), var("b")
    mod = IRModule({"f": Function([a, b], add(a, b))})
    t1 = text(InferType()(mod)["f"].checked_type)
    t2 = text(InferType()(InferType()(mod))["f"].checked_type)
    assert t1 == t2 == "fn [A, B, C](A, B) -> C where Broadcast(A, B, C)"


# --- seed 000 examples ------------------------------------------------------------------


def test_seed_call_example_literals_take_float32():
    # let %c = 1; let %f = fn(%x : Tensor[(), float32], %y : Tensor[(), float32]) { %x + %y + %c };
    # %f(10, 11)
    c, f = var("c"), var("f")
    x, y = var("x", "float32"), var("y", "float32")
    ten, eleven, one = lit(10), lit(11), lit(1)
    e = Let(c, one, Let(f, Function([x, y], add(add(x, y), c)), Call(f, (ten, eleven))))
    assert infer_type(e) == T()
    assert c.checked_type == T()
    assert one.checked_type == T() and ten.checked_type == T() and eleven.checked_type == T()


def test_literal_defaults_and_limits():
    one = lit(1)
    assert infer_type(Let(var("c"), one, var("d"))) is not None
    assert one.checked_type == T(dtype="int32")
    half = lit(1.5)
    infer_type(Tuple([half]))
    assert half.checked_type == T(dtype="float32")
    # an int literal becomes int64 / float16 when the context says so
    x = var("x", "int64")
    assert infer_type(add(x, lit(1))) == T(dtype="int64")
    h = var("h", "float16")
    assert infer_type(add(lit(2), h)) == T(dtype="float16")
    # two literals together: float wins
    assert infer_type(add(lit(1), lit(2.5))) == T(dtype="float32")
    assert infer_type(add(lit(1), lit(2))) == T(dtype="int32")
    # a float literal cannot become an int
    i = var("i", "int32")
    with pytest.raises(
        RelayTypeError, match="dtype mismatch: int32 vs float32 \\(a float literal\\)"
    ):
        infer_type(add(i, lit(1.5)))
    # a literal can not become bool
    b = var("b", "bool")
    with pytest.raises(RelayTypeError, match="dtype mismatch"):
        infer_type(Call(op("logical_and"), (b, lit(1))))


def test_seed_recursive_let_fact():
    x = var("x", "float32")
    fact = var("fact")
    body = If(
        equal(x, const(0.0)),
        const(1.0),
        mul(x, Call(fact, (sub(x, const(1.0)),))),
    )
    e = Let(fact, Function([x], body, T()), Call(fact, (const(10.0),)))
    assert infer_type(e) == T()
    assert fact.checked_type == FuncType((T(),), T())
    all_typed(e)


def test_recursive_let_without_annotations_is_inferred():
    x = var("x")
    loop = var("loop")
    body = If(equal(x, const(0)), x, Call(loop, (sub(x, const(1)),)))
    e = Let(loop, Function([x], body), Call(loop, (const(5),)))
    assert infer_type(e) == T(dtype="int32")
    assert loop.checked_type == FuncType((T(dtype="int32"),), T(dtype="int32"))


def test_seed_closure_example():
    g, f = var("g"), var("f")
    x_in, y, x_out = var("x"), var("y"), var("x")
    zeros = const(np.zeros((10, 10), "float32"))
    ones = const(np.ones((10, 10), "float32"))
    e = Let(
        g,
        Function([], Let(x_in, zeros, Function([y], mul(y, x_in)))),
        Let(f, Call(g, ()), Let(x_out, ones, Call(f, (x_out,)))),
    )
    assert infer_type(e) == T(10, 10)
    assert f.checked_type == FuncType((T(10, 10),), T(10, 10))


def test_seed_tuple_example():
    a = var("a", shape=(10, 10))
    b = var("b", "float32")
    c = var("c", shape=(100, 100))
    tup = var("tup")
    body = Let(tup, Tuple([a, b]), Tuple([add(TupleGetItem(tup, 0), TupleGetItem(tup, 1)), c]))
    t = infer_type(Function([a, b, c], body))
    assert t.ret_type == TupleType((T(10, 10), T(100, 100)))
    assert tup.checked_type == TupleType((T(10, 10), T()))


def test_seed_ackermann_global_recursion():
    m, n = var("m", "int32"), var("n", "int32")
    mod = IRModule()
    ack = mod.intern_global_var("ackermann")
    body = If(
        equal(m, lit(0)),
        add(n, lit(1)),
        If(
            Call(op("logical_and"), (Call(op("greater"), (m, lit(0))), equal(n, lit(0)))),
            Call(ack, (sub(m, lit(1)), lit(1))),
            Call(ack, (sub(m, lit(1)), Call(ack, (m, sub(n, lit(1)))))),
        ),
    )
    mod.add("ackermann", Function([m, n], body, T(dtype="int32")))
    new = InferType()(mod)
    assert new["ackermann"].checked_type == FuncType((T(dtype="int32"),) * 2, T(dtype="int32"))
    all_typed(new["ackermann"])


# --- polymorphism ---------------------------------------------------------------------------


def test_explicit_type_params_identity():
    t = TypeVar("t")
    x = var("x", t)
    ident = Function([x], x, t, [t])
    ft = infer_type(ident)
    assert text(ft) == "fn [t](t) -> t"
    f = var("id")
    e = Let(f, ident, Tuple([Call(f, (const(1),)), Call(f, (const(2.0),))]))
    assert infer_type(e) == TupleType((T(dtype="int32"), T()))


def test_shape_and_base_type_params():
    s = TypeVar("s", Kind.ShapeVar)
    bt = TypeVar("bt", Kind.BaseType)
    x = var("x", TensorType(s, bt))
    f = Function([x], x, type_params=[s, bt])
    assert text(infer_type(f)) == "fn [s, bt](Tensor[s, bt]) -> Tensor[s, bt]"
    g = var("g")
    y = var("y", shape=(2, 7), dtype="int8")
    assert infer_type(Function([y], Let(g, f, Call(g, (y,))))).ret_type == T(2, 7, dtype="int8")


def test_explicit_type_args_and_side_table():
    t = TypeVar("t")
    x = var("x", t)
    mod = IRModule()
    mod.add("id", Function([x], x, t, [t]))
    ident = mod.get_global_var("id")
    call_a = Call(ident, (const(1.0),), type_args=(T(),))
    call_b = Call(ident, (const(1),))
    mod.add("main", Function([], Tuple([call_a, call_b])))
    p = InferType()
    new = p(mod)
    assert new["main"].checked_type.ret_type == TupleType((T(), T(dtype="int32")))
    assert p.type_args[call_a] == (T(),)
    assert p.type_args[call_b] == (T(dtype="int32"),)
    bad = Call(ident, (const(1),), type_args=(T(),))
    mod.add("main", Function([], bad), update=True)
    with pytest.raises(RelayTypeError, match="@id expects argument 0 of type t, found int32"):
        InferType()(mod)
    mod.add("main", Function([], Call(ident, (const(1),), type_args=(T(), T()))), update=True)
    with pytest.raises(RelayTypeError, match="@id expects 1 type argument, got 2"):
        InferType()(mod)


def test_generalization_of_unannotated_global():
    a, b = var("a"), var("b")
    mod = IRModule()
    mod.add("f", Function([a, b], add(a, b)))
    f = mod.get_global_var("f")
    p, q, r = var("p", shape=(2, 3)), var("q", shape=(3,)), var("r", "int32")
    mod.add("main", Function([p, q, r], Tuple([Call(f, (p, q)), Call(f, (r, r))])))
    new = InferType()(mod)
    ft = new["f"].checked_type
    assert text(ft) == "fn [A, B, C](A, B) -> C where Broadcast(A, B, C)"
    assert all(isinstance(tp, TypeVar) for tp in ft.type_params)
    assert isinstance(ft.type_constraints[0], TypeRelation)
    assert new["main"].checked_type.ret_type == TupleType((T(2, 3), T(dtype="int32")))
    assert new.get_global_var("f").checked_type is ft
    # the parameters' own checked types are the type variables
    assert a.checked_type is ft.type_params[0]


def test_generalized_constraints_checked_at_each_call():
    a, b = var("a"), var("b")
    mod = IRModule()
    mod.add("f", Function([a, b], add(a, b)))
    f = mod.get_global_var("f")
    p, q = var("p", shape=(2, 3)), var("q", shape=(4, 3))
    mod.add("main", Function([p, q], Call(f, (p, q))))
    with pytest.raises(
        RelayTypeError, match="@f: shapes \\(2, 3\\) and \\(4, 3\\) do not broadcast"
    ):
        InferType()(mod)


def test_generalized_identity_and_chain():
    x = var("x")
    mod = IRModule()
    mod.add("id", Function([x], x))
    ident = mod.get_global_var("id")
    u, w = var("u"), var("w")
    k = u
    for _ in range(3):
        k = add(k, w)
    mod.add("chain", Function([u, w], k))
    chain = mod.get_global_var("chain")
    y = var("y", shape=(3,))
    mod.add("main", Function([y], Call(chain, (Call(ident, (y,)), const(np.ones(3, "float32"))))))
    new = InferType()(mod)
    assert text(new["id"].checked_type) == "fn [A](A) -> A"
    ct = new["chain"].checked_type
    assert len(ct.type_constraints) == 3
    assert new["main"].checked_type.ret_type == T(3)


def test_callees_typed_first_whatever_the_order():
    x = var("x", shape=(2,))
    mod = IRModule()
    helper = mod.intern_global_var("helper")
    mod.add("main", Function([x], Call(helper, (x,))))
    h = var("h")
    mod.add("helper", Function([h], mul(h, h)))
    new = InferType()(mod)
    assert new["main"].checked_type.ret_type == T(2)


def test_mutual_recursion():
    n, m = var("n", "int32"), var("m", "int32")
    mod = IRModule()
    even, odd = mod.intern_global_var("even"), mod.intern_global_var("odd")
    mod.add(
        "even", Function([n], If(equal(n, const(0)), const(True), Call(odd, (sub(n, const(1)),))))
    )
    mod.add(
        "odd", Function([m], If(equal(m, const(0)), const(False), Call(even, (sub(m, const(1)),))))
    )
    new = InferType()(mod)
    assert new["even"].checked_type == FuncType((T(dtype="int32"),), T(dtype="bool"))
    assert new["odd"].checked_type == FuncType((T(dtype="int32"),), T(dtype="bool"))


def test_mutual_recursion_unannotated_is_generalized_together():
    a, b = var("a"), var("b")
    mod = IRModule()
    ping, pong = mod.intern_global_var("ping"), mod.intern_global_var("pong")
    mod.add("ping", Function([a], Call(pong, (a,))))
    mod.add("pong", Function([b], Call(ping, (b,))))
    new = InferType()(mod)
    assert text(new["ping"].checked_type) == "fn [A, B](A) -> B"


def test_higher_order_and_polymorphic_values():
    x = var("x")
    mod = IRModule()
    mod.add("id", Function([x], x))
    ident = mod.get_global_var("id")
    f, v = var("f", FuncType((T(dtype="int32"),), T(dtype="int32"))), var("v", "int32")
    mod.add("apply", Function([f, v], Call(f, (v,))))
    apply = mod.get_global_var("apply")
    g = var("g")
    mod.add(
        "main",
        Function(
            [], Let(g, ident, Tuple([Call(apply, (ident, const(3))), Call(g, (const(1.0),))]))
        ),
    )
    new = InferType()(mod)
    assert new["main"].checked_type.ret_type == TupleType((T(dtype="int32"), T()))


def test_op_as_a_value():
    f = var("f")
    x, y = var("x", shape=(2,)), var("y", shape=(2,))
    e = Function([x, y], Let(f, op("add"), Call(f, (x, y))))
    assert infer_type(e).ret_type == T(2)


def test_where_constraint_in_function_type_annotation():
    a, b, c = TypeVar("a"), TypeVar("b"), TypeVar("c")
    fty = FuncType((a, b), c, (a, b, c), (TypeRelation(broadcast_rel, (a, b, c), 2, None),))
    f = var("f", fty)
    x, y = var("x", shape=(2, 3)), var("y", shape=(3,))
    assert infer_type(Function([f, x, y], Call(f, (x, y)))).ret_type == T(2, 3)
    z = var("z", shape=(4,))
    with pytest.raises(RelayTypeError, match="%f: shapes \\(2, 3\\) and \\(4,\\) do not broadcast"):
        infer_type(Function([f, x, z], Call(f, (x, z))))


def test_tuple_projection_of_unknown_generalizes():
    t = var("t")
    mod = IRModule()
    mod.add("second", Function([t], TupleGetItem(t, 1)))
    second = mod.get_global_var("second")
    mod.add("main", Function([], Call(second, (Tuple([const(1), const(2.0)]),))))
    new = InferType()(mod)
    assert text(new["second"].checked_type) == "fn [A, B](A) -> B where TupleGetItem(A, B)"
    assert new["main"].checked_type.ret_type == T()
    mod.add("main", Function([], Call(second, (Tuple([const(1)]),))), update=True)
    with pytest.raises(RelayTypeError, match="tuple index 1 out of range for a 1-tuple"):
        InferType()(mod)


def test_unused_polymorphic_local_function_is_fine():
    x = var("x", shape=(2,))
    a = var("a")
    g = var("g")
    e = Function([x], Let(g, Function([a], add(a, x)), x))
    assert infer_type(e).ret_type == T(2)
    assert isinstance(a.checked_type, TypeVar)


def test_var_annotation_with_incomplete_type():
    x = var("x", shape=(2, 2))
    y = var("y", TensorType((IncompleteType(Kind.ShapeVar), 2), IncompleteType(Kind.BaseType)))
    z = var("z", IncompleteType())
    e = Function([x], Let(y, add(x, x), Let(z, y, z)))
    assert infer_type(e).ret_type == T(2, 2)
    assert y.checked_type == T(2, 2)


# --- ADTs ---------------------------------------------------------------------------------


def make_list():
    lst = GlobalTypeVar("List")
    a = TypeVar("A")
    cons = Constructor("Cons", (a, TypeCall(lst, (a,))), lst, 0)
    nil = Constructor("Nil", (), lst, 1)
    return TypeData(lst, (a,), (cons, nil)), cons, nil


def make_nat():
    nat = GlobalTypeVar("Nat")
    z = Constructor("Z", (), nat, 0)
    s = Constructor("S", (TypeCall(nat, ()),), nat, 1)
    return TypeData(nat, (), (z, s)), z, s


def test_list_length_and_map():
    tdata, cons, nil = make_list()
    mod = IRModule()
    mod.add_type(tdata)
    length = mod.intern_global_var("length")
    l, h, t = var("l"), var("h"), var("t")
    mod.add(
        "length",
        Function(
            [l],
            Match(
                l,
                [
                    Clause(
                        PatternConstructor(cons, [PatternVar(h), PatternVar(t)]),
                        add(const(1), Call(length, (t,))),
                    ),
                    Clause(PatternConstructor(nil, []), const(0)),
                ],
            ),
        ),
    )
    mp = mod.intern_global_var("map")
    f, xs, y, ys = var("f"), var("xs"), var("y"), var("ys")
    mod.add(
        "map",
        Function(
            [f, xs],
            Match(
                xs,
                [
                    Clause(
                        PatternConstructor(cons, [PatternVar(y), PatternVar(ys)]),
                        Call(cons, (Call(f, (y,)), Call(mp, (f, ys)))),
                    ),
                    Clause(PatternConstructor(nil, []), Call(nil, ())),
                ],
            ),
        ),
    )
    lst = Call(cons, (const(1.5), Call(cons, (const(2.5), Call(nil, ())))))
    v = var("v")
    mod.add(
        "main",
        Function(
            [], Tuple([Call(length, (lst,)), Call(mp, (Function([v], equal(v, const(1.5))), lst))])
        ),
    )
    new = InferType()(mod)
    assert text(new["length"].checked_type) == "fn [A](List[A]) -> int32"
    assert text(new["map"].checked_type) == "fn [A, B](fn (A) -> B, List[A]) -> List[B]"
    assert text(new["main"].checked_type.ret_type) == "(int32, List[bool])"
    assert text(cons.checked_type) == "fn [A](A, List[A]) -> List[A]"
    assert text(h.checked_type) == "A"


def test_nat_match_examples():
    tdata, z, s = make_nat()
    nat = TypeCall(tdata.header, ())
    v, n = var("v", nat), var("n")
    dec = Function(
        [v],
        Match(
            v,
            [
                Clause(PatternConstructor(z), Call(z, ())),
                Clause(PatternConstructor(s, [PatternVar(n)]), n),
            ],
        ),
        nat,
    )
    v2, n2 = var("v", nat), var("n")
    dec2 = Function(
        [v2],
        Match(
            v2,
            [
                Clause(PatternConstructor(s, [PatternConstructor(s, [PatternVar(n2)])]), n2),
                Clause(PatternWildcard(), v2),
            ],
        ),
        nat,
    )
    mod = IRModule()
    mod.add_type(tdata)
    mod.add("dec", dec)
    mod.add("dec2", dec2)
    mod.add(
        "main",
        Function([], Call(mod.get_global_var("dec2"), (Call(s, (Call(s, (Call(z, ()),)),)),))),
    )
    new = InferType()(mod)
    assert text(new["dec"].checked_type) == "fn (Nat[]) -> Nat[]"
    assert text(new["dec2"].checked_type) == "fn (Nat[]) -> Nat[]"
    assert n2.checked_type == nat
    assert text(new["main"].checked_type) == "fn () -> Nat[]"


def test_bare_adt_name_means_type_call():
    tdata, z, s = make_nat()
    v = var("v", tdata.header)  # ``Nat`` without brackets
    mod = IRModule()
    mod.add_type(tdata)
    mod.add("main", Function([v], Call(s, (v,))))
    new = InferType()(mod)
    assert text(new["main"].checked_type) == "fn (Nat[]) -> Nat[]"


def test_tuple_patterns():
    a, b = var("a"), var("b")
    p = var("p", shape=(2,))
    q = var("q", "int32")
    e = Function(
        [p, q],
        Match(Tuple([p, q]), [Clause(PatternTuple([PatternVar(a), PatternVar(b)]), Tuple([b, a]))]),
    )
    assert infer_type(e).ret_type == TupleType((T(dtype="int32"), T(2)))


def test_non_exhaustive_match_is_an_error_but_match_question_is_not():
    tdata, cons, nil = make_list()
    mod = IRModule()
    mod.add_type(tdata)
    xs, h, t = var("xs"), var("h"), var("t")
    clause = Clause(PatternConstructor(cons, [PatternVar(h), PatternVar(t)]), h)
    mod.add("head", Function([xs], Match(xs, [clause])))
    with pytest.raises(RelayTypeError, match="does not handle the following cases: Nil"):
        InferType()(mod)
    mod.add("head", Function([xs], Match(xs, [clause], complete=False)), update=True)
    assert text(InferType()(mod)["head"].checked_type) == "fn [A](List[A]) -> A"
    # nested: Cons(_, Nil) only
    mod.add(
        "single",
        Function(
            [xs],
            Match(
                xs,
                [
                    Clause(
                        PatternConstructor(cons, [PatternWildcard(), PatternConstructor(nil)]),
                        const(1),
                    )
                ],
            ),
        ),
    )
    with pytest.raises(RelayTypeError, match="Cons\\(_, Cons\\(_, _\\)\\), Nil"):
        InferType()(mod)


# --- references ----------------------------------------------------------------------------


def test_refs():
    # let %i = ref(1); let %a = ref_read(%i); let %u = ref_write(%i, 2); %a + ref_read(%i)
    i, a, u = var("i"), var("a"), var("u")
    e = Let(
        i, RefCreate(lit(1)), Let(a, RefRead(i), Let(u, RefWrite(i, lit(2)), add(a, RefRead(i))))
    )
    assert infer_type(e) == T(dtype="int32")
    assert i.checked_type == RefType(T(dtype="int32"))
    assert u.checked_type == TupleType(())
    r = var("r")
    assert text(infer_type(Function([r], RefRead(r)))) == "fn [A](ref(A)) -> A"
    with pytest.raises(
        RelayTypeError, match="ref_write: the reference holds int32 but the value has type float32"
    ):
        infer_type(Let(i, RefCreate(const(1)), RefWrite(i, const(2.0))))
    with pytest.raises(RelayTypeError, match="ref_read expects a reference, found int32"):
        infer_type(RefRead(const(1)))


# --- meta refs, temp exprs, kinds --------------------------------------------------------------


def test_meta_ref():
    m = MetaRef("relay.Constant", 0, T(64, 3))
    assert infer_type(add(m, m)) == T(64, 3)
    with pytest.raises(
        RelayTypeError, match="meta\\[relay.Constant\\]\\[1\\] is missing from the meta table"
    ):
        infer_type(MetaRef("relay.Constant", 1))


def test_temp_expr_must_be_realized():
    from dataclasses import dataclass

    @dataclass(frozen=True, slots=True, eq=False)
    class Scaled(TempExpr):
        def realize(self):
            return const(1)

    with pytest.raises(
        RelayTypeError, match="Scaled is a pass-internal TempExpr: it must be realized"
    ):
        infer_type(add(Scaled(), const(1)))


def test_kind_errors():
    s = TypeVar("s", Kind.ShapeVar)
    with pytest.raises(
        RelayTypeError, match="type variable s has kind Shape and cannot be used as a type"
    ):
        infer_type(Function([var("x", s)], var("x"), type_params=[s]))
    bt = TypeVar("bt", Kind.BaseType)
    with pytest.raises(RelayTypeError, match="type variable bt of kind BaseType used as a shape"):
        infer_type(Function([var("x", TensorType(bt, "float32"))], const(1), type_params=[bt]))
    with pytest.raises(RelayTypeError, match="type variable s of kind Shape used as a dtype"):
        infer_type(Function([var("x", TensorType((1,), s))], const(1), type_params=[s]))
    with pytest.raises(RelayTypeError, match="unknown dtype 'flaot32'"):
        infer_type(Function([var("x", TensorType((1,), "flaot32"))], const(1)))
    tdata, cons, nil = make_list()
    mod = IRModule()
    mod.add_type(tdata)
    with pytest.raises(RelayTypeError, match="type List expects 1 type argument, got 0"):
        infer_type(Function([var("x", TypeCall(tdata.header, ()))], const(1)), mod)
    with pytest.raises(RelayTypeError, match="type Tree is not defined"):
        infer_type(Function([var("x", TypeCall(GlobalTypeVar("Tree"), ()))], const(1)), mod)


def test_adt_definition_checked():
    lst = GlobalTypeVar("Bad")
    a, b = TypeVar("A"), TypeVar("B")
    ctor = Constructor("Mk", (b,), lst, 0)
    mod = IRModule()
    mod.add_type(TypeData(lst, (a,), (ctor,)))
    mod.add("main", Function([], const(1)))
    with pytest.raises(
        RelayTypeError, match="constructor Mk uses type variable B, which is not a parameter of Bad"
    ):
        InferType()(mod)


# --- relations: pending, unsolvable, buggy -------------------------------------------------


def test_relation_pending_until_argument_known():
    a = var("a")
    w = var("w", shape=(3,))
    f = var("f")
    x = var("x", shape=(2, 3))
    # %f's parameter is unknown when add runs; it is solved when %f is called.
    e = Function([x, w], Let(f, Function([a], add(a, w)), Call(f, (x,))))
    assert infer_type(e).ret_type == T(2, 3)


def test_unsolvable_relation_with_known_inputs():
    never = Relation("Never", lambda types, n, attrs, reporter: False)
    register_op("test_infer.never", 1, type_rel=never, override=True)
    x = var("x", shape=(2,))
    with pytest.raises(
        RelayTypeError,
        match="test_infer.never: the type relation Never cannot be solved for Tensor\\[\\(2\\), float32\\]",
    ):
        infer_type(Function([x], Call(get_op("test_infer.never"), (x,))))


def test_buggy_relation_becomes_a_type_error():
    def boom(types, n, attrs, reporter):
        raise ValueError("oops")

    register_op("test_infer.boom", 1, type_rel=Relation("Boom", boom), override=True)
    x = var("x", shape=(2,))
    with pytest.raises(
        RelayTypeError, match="test_infer.boom: type relation Boom failed: ValueError: oops"
    ):
        infer_type(Function([x], Call(get_op("test_infer.boom"), (x,))))


def test_op_without_relation():
    register_op("test_infer.untyped", 1, type_rel=None, override=True)
    x = var("x", shape=(2,))
    with pytest.raises(RelayTypeError, match="operator test_infer.untyped has no type relation"):
        infer_type(Call(get_op("test_infer.untyped"), (x,)))


def test_op_attrs_reach_the_relation():
    x = var("x", shape=(1, 4, 5))
    b = var("b", shape=(4,))
    call = Call(get_op("nn.bias_add"), (x, b), make_attrs("nn.bias_add", {"axis": 1}))
    assert infer_type(call) == T(1, 4, 5)


def test_literal_in_generalized_function_stays_polymorphic():
    # def @inc(%x) { %x + 1 }: the literal's dtype follows %x at each call
    x = var("x")
    mod = IRModule()
    mod.add("inc", Function([x], add(x, lit(1))))
    inc = mod.get_global_var("inc")
    f, i = var("f", shape=(3,)), var("i", "int8")
    mod.add("main", Function([f, i], Tuple([Call(inc, (f,)), Call(inc, (i,))])))
    new = InferType()(mod)
    # the literal is a scalar whose dtype is the type parameter C
    assert text(new["inc"].checked_type) == "fn [A, B, C](A) -> B where Broadcast(A, Tensor[(), C], B)"
    assert new["main"].checked_type.ret_type == TupleType((T(3), T(dtype="int8")))
    # a literal not tied to a parameter takes its default
    mod.add("one", Function([], lit(1)))
    assert text(InferType()(mod)["one"].checked_type) == "fn () -> int32"
    # ... and so does an instance whose literal nothing constrains... (float literal into int: error)
    mod.add("half", Function([x], add(x, lit(0.5))), update=True)
    mod.add("main", Function([i], Call(mod.get_global_var("half"), (i,))), update=True)
    with pytest.raises(
        RelayTypeError, match="@half: dtype mismatch: int8 vs float32 \\(a float literal\\)"
    ):
        InferType()(mod)


def where(*relations):
    """Function attrs carrying ``where`` clauses, as the parser stores them."""
    from relay_nb.ir.attrs import Attrs

    return Attrs({"type_constraints": tuple(relations)}, "DictAttrs")


def test_where_clause_on_a_monomorphic_function():
    # fn(%x, %y) where Broadcast { add(%x, %y) }: the relation holds over (x, y, result)
    x, y = var("x"), var("y")
    f = var("f")
    fn = Function([x, y], add(x, y), attrs=where(TypeRelation(broadcast_rel, (), 2)))
    p, q = var("p", shape=(2, 3)), var("q", shape=(3,))
    assert infer_type(Function([p, q], Let(f, fn, Call(f, (p, q))))).ret_type == T(2, 3)
    # on a definition whose types are known, the clause is checked right there
    a, b = var("a", shape=(2, 3)), var("b", shape=(4, 3))
    with pytest.raises(
        RelayTypeError, match="where Broadcast: shapes \\(2, 3\\) and \\(4, 3\\) do not broadcast"
    ):
        infer_type(Function([a, b], a, attrs=where(TypeRelation(broadcast_rel, (), 2))))


def test_where_clause_on_a_global_becomes_part_of_its_type():
    x, y = var("x"), var("y")
    mod = IRModule()
    mod.add("f", Function([x, y], x, attrs=where(TypeRelation(broadcast_rel, (), 2))))
    new = InferType()(mod)
    assert text(new["f"].checked_type) == "fn [A, B](A, B) -> A where Broadcast(A, B, A)"
    p, q = var("p", shape=(2, 3)), var("q", shape=(5,))
    mod.add("main", Function([p, q], Call(mod.get_global_var("f"), (p, q))))
    with pytest.raises(RelayTypeError, match="@f: shapes \\(2, 3\\) and \\(5,\\) do not broadcast"):
        InferType()(mod)


def test_where_clause_of_a_polymorphic_function_is_assumed_in_its_body():
    a, b, c = TypeVar("A"), TypeVar("B"), TypeVar("C")
    x, y = var("x", a), var("y", b)
    rel = TypeRelation(broadcast_rel, (a, b, c), 2)
    poly = Function([x, y], add(x, y), c, [a, b, c], attrs=where(rel))
    mod = IRModule()
    mod.add("plus", poly)
    g = var("g")
    a2, b2, c2 = TypeVar("A"), TypeVar("B"), TypeVar("C")
    x2, y2 = var("x", a2), var("y", b2)
    local = Function(
        [x2, y2],
        add(x2, y2),
        c2,
        [a2, b2, c2],
        attrs=where(TypeRelation(broadcast_rel, (a2, b2, c2), 2)),
    )
    p, q = var("p", shape=(2, 3)), var("q", shape=(3,))
    mod.add(
        "main",
        Function(
            [p, q],
            Let(g, local, Tuple([Call(mod.get_global_var("plus"), (p, q)), Call(g, (q, p))])),
        ),
    )
    new = InferType()(mod)
    assert text(new["plus"].checked_type) == "fn [A, B, C](A, B) -> C where Broadcast(A, B, C)"
    assert new["main"].checked_type.ret_type == TupleType((T(2, 3), T(2, 3)))
    # without the clause, add on two arbitrary types cannot be justified in a local function
    a3, b3, c3 = TypeVar("A"), TypeVar("B"), TypeVar("C")
    x3, y3 = var("x", a3), var("y", b3)
    bare = Function([x3, y3], add(x3, y3), c3, [a3, b3, c3])
    with pytest.raises(
        RelayTypeError,
        match="add: the type relation Broadcast cannot be solved for the polymorphic types A, B",
    ):
        infer_type(Function([p, q], Let(g, bare, Call(g, (p, q)))))


_shapes = st.lists(st.sampled_from([1, 2, 3]), min_size=0, max_size=3).map(tuple)


@settings(max_examples=60, deadline=None)
@given(st.lists(_shapes, min_size=1, max_size=5), st.data())
def test_broadcast_chains_agree_with_numpy(shapes, data):
    params = [var(f"p{i}", shape=s) for i, s in enumerate(shapes)]
    e = params[0]
    expected = shapes[0]
    ok = True
    for p, s in zip(params[1:], shapes[1:]):
        name = data.draw(st.sampled_from(["add", "multiply", "subtract"]))
        e = Call(op(name), (e, p))
        try:
            expected = np.broadcast_shapes(expected, s)
        except ValueError:
            ok = False
    if ok:
        assert infer_type(Function(params, e)).ret_type == T(*expected)
    else:
        with pytest.raises(RelayTypeError, match="do not broadcast"):
            infer_type(Function(params, e))
    # the same program with unannotated parameters, called with the shapes: same answer
    untyped = [var(f"q{i}") for i in range(len(shapes))]
    body = untyped[0]
    for q, call in zip(untyped[1:], _calls(e)):
        body = Call(call.op, (body, q))
    mod = IRModule()
    mod.add("f", Function(untyped, body))
    mod.add("main", Function(params, Call(mod.get_global_var("f"), tuple(params))))
    if ok:
        assert InferType()(mod)["main"].checked_type.ret_type == T(*expected)
    else:
        with pytest.raises(RelayTypeError, match="@f: shapes .* do not broadcast"):
            InferType()(mod)


def _calls(e):
    out = []
    while isinstance(e, Call):
        out.append(e)
        e = e.args[0]
    return list(reversed(out))
