"""Structural equality and hashing (relay_nb.ir.structural)."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import relay_nb as relay
from relay_nb.ir.adt import TypeData
from relay_nb.ir.attrs import Attrs
from relay_nb.ir.expr import (
    Call,
    Clause,
    Constant,
    Constructor,
    Function,
    GlobalVar,
    If,
    Let,
    Match,
    MetaRef,
    Op,
    PatternConstructor,
    PatternTuple,
    PatternVar,
    PatternWildcard,
    RefCreate,
    RefRead,
    RefWrite,
    Tuple,
    TupleGetItem,
    Var,
)
from relay_nb.ir.functor import post_order
from relay_nb.ir.module import IRModule
from relay_nb.ir.span import Source, Span
from relay_nb.ir.structural import (
    assert_structural_equal,
    first_difference,
    structural_equal,
    structural_hash,
)
from relay_nb.ir.ty import (
    Any as AnyDim,
)
from relay_nb.ir.ty import (
    FuncType,
    GlobalTypeVar,
    IncompleteType,
    Kind,
    RefType,
    TensorType,
    TupleType,
    TypeCall,
    TypeVar,
)
from relay_nb.op.registry import get_op, register_op

T = TensorType((2, 3), "float32")


def _op(name: str) -> Op:
    try:
        return get_op(name)
    except Exception:  # the op families are written in parallel; never clobber a real op
        return register_op(name, 2 if name not in ("log", "negative") else 1, override=True)


ADD = _op("add")
SUB = _op("subtract")
LOG = _op("log")


def add(a, b):
    return Call(ADD, (a, b))


def sub(a, b):
    return Call(SUB, (a, b))


def log(a):
    return Call(LOG, (a,))


def eq(a, b, **kw):
    """structural_equal, checked to be symmetric and consistent with the hash."""
    result = structural_equal(a, b, **kw)
    assert structural_equal(b, a, **kw) == result
    if result:
        assert structural_hash(a, **kw) == structural_hash(b, **kw)
    return result


# --- variables -------------------------------------------------------------------------


def test_alpha_equivalent_functions():
    x, y = Var("x", T), Var("y", T)
    a, b = Var("a", T), Var("b", T)
    assert eq(Function((x, y), sub(x, y)), Function((a, b), sub(a, b)))
    assert not eq(Function((x, y), sub(x, y)), Function((a, b), sub(b, a)))


def test_names_are_ignored_but_annotations_are_not():
    x, y = Var("x", T), Var("x", T)
    assert eq(Function((x,), x), Function((y,), y))
    z = Var("x", TensorType((2, 3), "float16"))
    assert not eq(Function((x,), x), Function((z,), z))
    assert not eq(Function((x,), x), Function((Var("x"),), Var("x")))


def test_shared_body_with_swapped_params_is_not_equal():
    # TVM's counterexample to an identity shortcut: same body object, swapped binders.
    x, y = Var("x"), Var("y")
    body = sub(x, y)
    assert not eq(Function((x, y), body), Function((y, x), body))
    assert eq(Function((x, y), body), Function((x, y), body))


def test_free_vars_identity_unless_mapped():
    x, y = Var("x", T), Var("y", T)
    assert eq(x, x)
    assert not eq(x, y)
    assert eq(x, y, map_free_vars=True)
    assert eq(add(x, x), add(y, y), map_free_vars=True)
    # mapping is consistent and one-to-one
    assert not eq(add(x, x), add(x, y), map_free_vars=True)
    assert not eq(add(x, y), add(x, x), map_free_vars=True)
    # mapped free vars must agree on their annotation
    assert not eq(x, Var("x", TensorType((3,), "float32")), map_free_vars=True)


def test_free_var_vs_bound_var():
    x, y = Var("x"), Var("y")
    f = Function((x,), add(x, y))
    g = Function((y,), add(y, y))
    assert not eq(f, g)
    assert not eq(f, g, map_free_vars=True)


def test_let_binds_var_recursively():
    x, y = Var("x"), Var("y")
    c = relay.const(1.0)
    assert eq(Let(x, c, x), Let(y, c, y))
    assert eq(Let(x, add(x, c), x), Let(y, add(y, c), y))  # recursive let
    z = Var("z")
    assert not eq(Let(x, c, x), Let(y, c, z))


def test_nested_shadowing_by_different_vars():
    x1, x2 = Var("x"), Var("x")
    a, b = Var("a"), Var("b")
    lhs = Function((x1,), Function((x2,), add(x1, x2)))
    rhs = Function((a,), Function((b,), add(a, b)))
    assert eq(lhs, rhs)
    assert not eq(lhs, Function((a,), Function((b,), add(b, a))))


# --- leaves ------------------------------------------------------------------------------


def test_global_vars_by_name_ops_by_name():
    assert eq(GlobalVar("f"), GlobalVar("f"))
    assert not eq(GlobalVar("f"), GlobalVar("g"))
    assert eq(ADD, get_op("add"))
    assert not eq(ADD, SUB)
    assert not eq(GlobalVar("add"), ADD)


def test_constants():
    assert eq(relay.const(1.0), relay.const(1.0))
    assert not eq(relay.const(1.0), relay.const(2.0))
    assert not eq(relay.const(1.0), relay.const(1.0, "float64"))
    assert not eq(relay.const(1), relay.const(1.0))
    assert not eq(relay.const([1, 2]), relay.const([[1, 2]]))
    assert eq(relay.const(np.arange(6).reshape(2, 3)), relay.const(np.arange(6).reshape(2, 3)))
    # bitwise: NaN equals the same NaN, -0.0 differs from 0.0
    assert eq(relay.const(float("nan")), relay.const(float("nan")))
    assert not eq(relay.const(-0.0), relay.const(0.0))
    # is_literal and span are ignored
    span = Span(Source("s", "1"), 1, 1)
    lit = Constant(np.asarray(3, "int32"), is_literal=True, span=span)
    assert eq(lit, relay.const(3))
    # non-contiguous data compares by value
    data = np.arange(12, dtype="float32").reshape(3, 4)
    assert eq(Constant(data.T), Constant(np.ascontiguousarray(data.T)))


def test_constructor_by_name_and_adt():
    lst = GlobalTypeVar("List")
    a = TypeVar("a")
    cons1 = Constructor("Cons", (a, TypeCall(lst, (a,))), lst)
    cons2 = Constructor("Cons", (), GlobalTypeVar("List"))
    assert eq(cons1, cons2)
    assert not eq(cons1, Constructor("Cons", (), GlobalTypeVar("Other")))
    assert not eq(cons1, Constructor("Nil", (), lst))


def test_attrs():
    x = Var("x")
    a1 = Attrs({"axis": 1, "keepdims": False}, "relay.attrs.ReduceAttrs")
    a2 = Attrs({"axis": 1, "keepdims": False}, "relay.attrs.ReduceAttrs")
    a3 = Attrs({"axis": 2, "keepdims": False}, "relay.attrs.ReduceAttrs")
    assert eq(Call(ADD, (x,), a1), Call(ADD, (x,), a2))
    assert not eq(Call(ADD, (x,), a1), Call(ADD, (x,), a3))
    # no attrs and empty attrs mean the same
    assert eq(Call(ADD, (x,), None), Call(ADD, (x,), Attrs({})))
    assert eq(a1, a2) and not eq(a1, a3)
    f = Function((x,), x)
    assert not eq(f, f.with_attr("Primitive", 1))
    assert eq(f.with_attr("Primitive", 1), Function((x,), x).with_attr("Primitive", 1))


def test_spans_and_checked_types_are_ignored():
    src = Source("a", "x")
    x = Var("x")
    c1 = Call(ADD, (x, x), span=Span(src, 1, 1))
    c2 = Call(ADD, (x, x), span=Span(src, 9, 9))
    c2.set_checked_type(T)
    assert eq(c1, c2)


def test_call_type_args_compared():
    x = Var("x")
    assert not eq(Call(ADD, (x,), type_args=(T,)), Call(ADD, (x,)))
    assert eq(Call(ADD, (x,), type_args=(T,)), Call(ADD, (x,), type_args=(TensorType((2, 3)),)))


# --- every expression kind ----------------------------------------------------------------


def _all_kinds(names=("x", "r", "h", "t")):
    x = Var(names[0], T)
    r = Var(names[1])
    h, t = Var(names[2]), Var(names[3])
    lst = GlobalTypeVar("List")
    cons = Constructor("Cons", (), lst)
    nil = Constructor("Nil", (), lst)
    match = Match(
        x,
        (
            Clause(PatternConstructor(cons, (PatternVar(h), PatternVar(t))), Tuple((h, t))),
            Clause(PatternConstructor(nil, ()), Tuple(())),
            Clause(PatternTuple((PatternWildcard(), PatternVar(h))), h),
            Clause(PatternWildcard(), x),
        ),
        complete=False,
    )
    body = Let(
        r,
        RefCreate(x),
        Tuple(
            (
                RefWrite(r, log(RefRead(r))),
                TupleGetItem(Tuple((x, x)), 1),
                If(relay.const(True), GlobalVar("g"), Call(cons, (x, Call(nil, ())))),
                match,
                MetaRef("relay.Constant", 0, T),
            )
        ),
    )
    return Function((x,), body, ret_type=None)


def test_every_kind_alpha_equal_and_hash_consistent():
    a, b = _all_kinds(), _all_kinds(("p", "q", "u", "v"))
    assert eq(a, b)
    assert structural_hash(a) == structural_hash(b)
    assert eq(a, a)


def test_every_kind_detects_changes():
    base = _all_kinds()
    body = base.body
    tup = body.body
    r = body.var
    variants = [
        Function(base.params, Let(r, RefCreate(base.params[0]), Tuple(tup.fields[:-1]))),
        Function(base.params, Let(r, RefRead(base.params[0]), tup)),
        Function(base.params, Let(r, body.value, Tuple(tup.fields[:1] + (TupleGetItem(tup.fields[1].tuple_value, 0),) + tup.fields[2:]))),
        Function(base.params, Let(r, body.value, Tuple(tup.fields[:4] + (MetaRef("relay.Constant", 1, T),)))),
        Function(base.params, Let(r, body.value, Tuple(tup.fields[:3] + (Match(tup.fields[3].data, tup.fields[3].clauses, True), tup.fields[4])))),
        Function(base.params, Let(r, body.value, Tuple(tup.fields[:3] + (Match(tup.fields[3].data, tup.fields[3].clauses[:3], False), tup.fields[4])))),
    ]
    for v in variants:
        assert not eq(base, v)


def test_pattern_vars_bind():
    h1, h2 = Var("h"), Var("k")
    c1 = Clause(PatternVar(h1), h1)
    c2 = Clause(PatternVar(h2), h2)
    assert eq(c1, c2)
    assert eq(PatternVar(h1), PatternVar(h2))
    assert not eq(Clause(PatternVar(h1), h1), Clause(PatternVar(h2), h1))
    assert not eq(PatternWildcard(), PatternVar(h1))


# --- types -------------------------------------------------------------------------------


def test_types():
    assert eq(T, TensorType((2, 3), "float32"))
    assert not eq(T, TensorType((3, 2), "float32"))
    assert not eq(T, TensorType((2, 3), "int32"))
    assert eq(TensorType((AnyDim, 3)), TensorType((AnyDim, 3)))
    assert not eq(TensorType((AnyDim, 3)), TensorType((1, 3)))
    assert eq(TupleType((T, T)), TupleType((T, T)))
    assert eq(RefType(T), RefType(T))
    assert not eq(RefType(T), T)
    assert eq(TypeCall(GlobalTypeVar("List"), (T,)), TypeCall(GlobalTypeVar("List"), (T,)))


def test_type_params_are_binders():
    a, b = TypeVar("a"), TypeVar("b")
    assert eq(FuncType((a,), a, (a,)), FuncType((b,), b, (b,)))
    assert not eq(FuncType((a,), a, (a,)), FuncType((b,), a, (b,)))
    assert not eq(a, b)
    assert eq(a, b, map_free_vars=True)
    assert not eq(TypeVar("s", Kind.ShapeVar), TypeVar("s", Kind.Type), map_free_vars=True)
    # function type params bind in annotations and the return type
    x, y = Var("x", a), Var("y", b)
    assert eq(Function((x,), x, a, (a,)), Function((y,), y, b, (b,)))
    assert not eq(Function((x,), x, a, (a,)), Function((y,), y, a, (b,)))


def test_shape_variables():
    s1, s2 = TypeVar("s", Kind.ShapeVar), TypeVar("t", Kind.ShapeVar)
    assert eq(FuncType((TensorType(s1),), TensorType(s1), (s1,)), FuncType((TensorType(s2),), TensorType(s2), (s2,)))
    assert not eq(TensorType(s1), TensorType((2,)))


def test_incomplete_types_are_identities():
    i1, i2 = IncompleteType(), IncompleteType()
    assert eq(i1, i1)
    assert not eq(i1, i2)
    assert eq(i1, i2, map_free_vars=True)


def test_type_data():
    a, b = TypeVar("a"), TypeVar("b")
    lst1, lst2 = GlobalTypeVar("List"), GlobalTypeVar("List")
    td1 = TypeData(lst1, (a,), (Constructor("Cons", (a, TypeCall(lst1, (a,))), lst1, 0), Constructor("Nil", (), lst1, 1)))
    td2 = TypeData(lst2, (b,), (Constructor("Cons", (b, TypeCall(lst2, (b,))), lst2, 0), Constructor("Nil", (), lst2, 1)))
    assert eq(td1, td2)
    td3 = TypeData(lst2, (b,), (Constructor("Cons", (b, T), lst2, 0), Constructor("Nil", (), lst2, 1)))
    assert not eq(td1, td3)
    td4 = TypeData(lst2, (b,), (Constructor("Nil", (), lst2, 1),))
    assert not eq(td1, td4)


# --- modules and containers ---------------------------------------------------------------


def _module(order=("f", "g"), swap=False):
    gf, gg = GlobalVar("f"), GlobalVar("g")
    x, y = Var("x", T), Var("y", T)
    f = Function((x,), Call(gg, (x,)))  # f and g call each other
    g = Function((y,), Call(gf, (sub(y, y) if not swap else add(y, y),)))
    funcs = {"f": f, "g": g}
    return IRModule({name: funcs[name] for name in order})


def test_modules_compare_functions_by_name():
    assert eq(_module(), _module(order=("g", "f")))
    assert not eq(_module(), _module(swap=True))
    diff = first_difference(_module(), _module(swap=True))
    assert diff is not None
    assert diff.path == "@g.body.args[0].op"
    assert "subtract" in str(diff) and "add" in str(diff)


def test_module_missing_function():
    m1 = _module()
    m2 = _module()
    m2.remove("f")
    assert not eq(m1, m2)
    with pytest.raises(AssertionError, match="global functions"):
        assert_structural_equal(m1, m2)


def test_module_type_definitions():
    a = TypeVar("a")
    lst = GlobalTypeVar("List")
    td = TypeData(lst, (a,), (Constructor("Nil", (), lst),))
    m1, m2 = _module(), _module()
    m1.add_type(td)
    assert not eq(m1, m2)
    b = TypeVar("b")
    m2.add_type(TypeData(GlobalTypeVar("List"), (b,), (Constructor("Nil", (), GlobalTypeVar("List")),)))
    assert eq(m1, m2)


def test_containers():
    x, y = Var("x"), Var("y")
    assert eq([x, T], (x, T))
    assert not eq([x], [x, x])
    assert eq({"a": T, "b": 1}, {"b": 1, "a": T})
    assert not eq({"a": T}, {"b": T})
    assert eq({GlobalVar("f"): 1}, {GlobalVar("f"): 1})
    assert eq([x, y], [y, x], map_free_vars=True)
    assert eq(None, None) and not eq(None, x)
    assert eq(1, 1) and not eq(1, True) and eq("a", "a")


# --- DAGs --------------------------------------------------------------------------------


def test_sharing_does_not_need_to_match():
    x = Var("x")
    shared = log(x)
    dag = add(shared, shared)
    tree = add(log(x), log(x))
    assert eq(dag, tree)
    a, b = Var("a"), Var("b")
    f = Function((a,), a)
    assert eq(Tuple((f, f)), Tuple((Function((a,), a), Function((b,), b))))
    assert eq(Tuple((Function((a,), a), Function((b,), b))), Tuple((f, f)))


def test_dag_comparison_is_linear():
    # 2**200 paths: only memoization of compared pairs makes this finish.
    def chain(p):
        e = p
        for _ in range(200):
            e = add(e, e)
        return Function((p,), e)

    a, b = chain(Var("p")), chain(Var("q"))
    assert eq(a, a)
    assert eq(a, b)
    assert structural_hash(a) == structural_hash(b)


def test_hash_distinguishes_common_differences():
    x, y = Var("x"), Var("y")
    h = structural_hash
    assert h(Function((x, y), sub(x, y))) != h(Function((x, y), sub(y, x)))
    assert h(add(x, x)) != h(sub(x, x))
    assert h(relay.const(1.0)) != h(relay.const(2.0))
    assert h(x) != h(y)
    assert h(x, map_free_vars=True) == h(y, map_free_vars=True)
    assert h(T) != h(TensorType((2, 3), "int32"))


def test_hash_is_deterministic_for_closed_programs():
    assert structural_hash(_all_kinds()) == structural_hash(_all_kinds())
    assert structural_hash(_module()) == structural_hash(_module(order=("g", "f")))


# --- messages ------------------------------------------------------------------------------


def test_assert_message_names_path_and_both_sides():
    x, y = Var("x", T), Var("y", T)
    lhs = IRModule({"main": Function((x,), add(x, log(x)))})
    rhs = IRModule({"main": Function((y,), add(y, sub(y, y)))})
    with pytest.raises(AssertionError) as info:
        assert_structural_equal(lhs, rhs)
    msg = str(info.value)
    assert "@main.body.args[1]" in msg
    assert "log(%x)" in msg and "subtract(%y, %y)" in msg


def test_assert_message_for_vars():
    x, y, z = Var("x"), Var("y"), Var("z")
    with pytest.raises(AssertionError, match=r"body: .*%x.*%y.*%z"):
        assert_structural_equal(Function((x,), x), Function((y,), z))
    with pytest.raises(AssertionError, match="map_free_vars"):
        assert_structural_equal(x, y)
    assert_structural_equal(x, y, map_free_vars=True)


def test_first_difference_none_when_equal():
    assert first_difference(_all_kinds(), _all_kinds(("a", "b", "c", "d"))) is None


def test_mismatch_text_is_short_on_huge_programs():
    lhs, rhs = _let_chain(20000), _let_chain(20000, last_op=SUB)
    diff = first_difference(lhs, rhs)
    assert diff is not None and diff.path == "body×19999.value.op"
    assert len(str(diff)) < 300 and str(diff).count("\n") == 2


# --- depth -------------------------------------------------------------------------------


def _let_chain(n, last_op=ADD):
    vs = [Var(f"v{i}", T) for i in range(n)]
    body = vs[-1]
    for i in range(n - 1, 0, -1):
        body = Let(vs[i], Call(last_op if i == n - 1 else ADD, (vs[i - 1], vs[i - 1])), body)
    return Function((vs[0],), body)


def _dataflow_chain(n):
    p = Var("p", T)
    e = p
    for i in range(n):
        e = add(e, relay.const(float(i % 7)))
    return Function((p,), e)


def test_deep_let_chain_at_default_recursion_limit():
    limit = sys.getrecursionlimit()
    a, b = _let_chain(100_000), _let_chain(100_000)
    assert structural_equal(a, b)
    assert structural_hash(a) == structural_hash(b)
    assert not structural_equal(a, _let_chain(100_000, last_op=SUB))
    assert sys.getrecursionlimit() == limit


def test_deep_dataflow_chain_at_default_recursion_limit():
    a, b = _dataflow_chain(100_000), _dataflow_chain(100_000)
    assert structural_equal(a, b)
    assert structural_hash(a) == structural_hash(b)
    c = _dataflow_chain(99_999)
    assert not structural_equal(a, c)


def test_deeply_nested_scopes():
    def nest(n, tag):
        e = Var("leaf" + tag)
        inner = e
        params = []
        for i in range(n):
            p = Var(f"p{i}{tag}")
            params.append(p)
            inner = If(relay.const(True), Function((p,), inner), relay.const(0.0))
        return Function((e,), inner)

    a, b = nest(30_000, "a"), nest(30_000, "b")
    assert structural_equal(a, b)
    assert structural_hash(a) == structural_hash(b)


# --- hypothesis: random programs and alpha-renamed / re-shared copies ---------------------

_LEAF_CONSTS = [0.0, 1.0, 2.5]


@st.composite
def programs(draw):
    """A random closed Function built from a small recipe, as a list of instructions."""
    n = draw(st.integers(1, 25))
    return [
        (
            draw(st.sampled_from(["add", "sub", "log", "let", "fn", "tuple", "proj", "if", "const"])),
            draw(st.integers(0, 1000)),
            draw(st.integers(0, 1000)),
        )
        for _ in range(n)
    ]


def build(recipe, share: bool, prefix: str):
    """Evaluate a recipe into an expression; ``share`` reuses nodes (DAG) or rebuilds them
    (tree) so both forms are structurally equal; names depend on ``prefix``."""
    p = Var(prefix + "p", T)
    pool: list = [lambda: p]  # thunks: calling one builds (or returns) a node
    counter = [0]

    def fresh(name):
        counter[0] += 1
        return Var(f"{prefix}{name}{counter[0]}")

    def node(thunk):
        if share:
            value = thunk()
            return lambda: value
        return thunk

    for kind, i, j in recipe:
        a, b = pool[i % len(pool)], pool[j % len(pool)]
        if kind == "add":
            pool.append(node(lambda a=a, b=b: add(a(), b())))
        elif kind == "sub":
            pool.append(node(lambda a=a, b=b: sub(a(), b())))
        elif kind == "log":
            pool.append(node(lambda a=a: log(a())))
        elif kind == "const":
            pool.append(node(lambda i=i: relay.const(_LEAF_CONSTS[i % 3])))
        elif kind == "let":
            def mk(a=a, b=b):
                v = fresh("v")
                return Let(v, a(), add(v, b()))
            pool.append(node(mk))
        elif kind == "fn":
            def mk(a=a):
                v = fresh("f")
                return Call(Function((v,), add(v, a())), (a(),))
            pool.append(node(mk))
        elif kind == "tuple":
            pool.append(node(lambda a=a, b=b: TupleGetItem(Tuple((a(), b())), 0)))
        elif kind == "proj":
            pool.append(node(lambda a=a: TupleGetItem(Tuple((a(),)), 0)))
        elif kind == "if":
            pool.append(node(lambda a=a, b=b: If(relay.const(True), a(), b())))
    return Function((p,), pool[-1]())


@settings(max_examples=150, deadline=None)
@given(programs())
def test_random_programs_equal_modulo_names_and_sharing(recipe):
    dag = build(recipe, share=True, prefix="a")
    tree = build(recipe, share=False, prefix="b")
    assert structural_equal(dag, tree)
    assert structural_equal(tree, dag)
    assert structural_hash(dag) == structural_hash(tree)
    assert structural_hash(dag, map_free_vars=True) == structural_hash(tree, map_free_vars=True)
    # without the enclosing function %p is free: equal only when free vars may be mapped
    assert structural_equal(dag.body, tree.body, map_free_vars=True)
    assert structural_hash(dag.body, map_free_vars=True) == structural_hash(tree.body, map_free_vars=True)
    assert not structural_equal(dag.body, tree.body) or dag.params[0] not in list(post_order(dag.body))


@settings(max_examples=150, deadline=None)
@given(programs(), programs())
def test_random_programs_equal_implies_equal_hash(r1, r2):
    a = build(r1, share=True, prefix="a")
    b = build(r2, share=False, prefix="b")
    same = structural_equal(a, b)
    assert structural_equal(b, a) == same
    if same:
        assert structural_hash(a) == structural_hash(b)


# --- with the text format -----------------------------------------------------------------


def test_parsed_programs_compare_modulo_names():
    head = '#[version = "0.0.5"]\n'
    a = relay.parse(head + "def @main(%x: float32) { let %y = add(%x, 1f); %y }")
    b = relay.parse(head + "def @main(%a: float32) { let %b = add(%a, 1f); %b }")
    c = relay.parse(head + "def @main(%a: float32) { let %b = add(%a, 2f); %b }")
    assert_structural_equal(a, b)
    assert structural_hash(a) == structural_hash(b)
    diff = first_difference(a, c)
    assert diff is not None and diff.path == "@main.body.value.args[1]"
    assert "1.0" in str(diff) and "2.0" in str(diff)
