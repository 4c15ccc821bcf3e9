"""Programs for the printer's golden and round-trip tests, built with the Python builder.

``CASES`` maps a case name to a function building the program (a Function, an expression
or an IRModule); ``test_printer_golden.py`` prints each one in graph and A-normal form and
compares with ``tests/golden/printer/<case>.out``, and ``test_roundtrip.py`` parses the
text back.  Every case is a well-formed program; most are well typed.
"""

from __future__ import annotations

import numpy as np

import relay_nb as relay
from relay_nb.ir.adt import TypeData
from relay_nb.ir.attrs import Attrs
from relay_nb.ir.expr import (
    Call,
    Clause,
    Constant,
    Constructor,
    Function,
    If,
    Let,
    Match,
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
from relay_nb.ir.module import IRModule
from relay_nb.ir.ty import GlobalTypeVar, TensorType, TupleType, TypeCall, TypeVar

T23 = TensorType((2, 3), "float32")


def f32(name: str) -> Var:
    return relay.var(name, "float32")


def lit(value, dtype: str) -> Constant:
    return Constant(np.asarray(value, dtype))


# -- seed 004 ------------------------------------------------------------------------------


def seed004_dag():
    """The two-node dataflow graph: ``%1`` (log) is used twice and computed once."""
    x = relay.var("x", shape=(2, 3))
    v1 = relay.log(x)
    return relay.Function([x], relay.add(v1, v1))


def seed004_if_scope():
    """Where is ``%1`` computed?  The DAG does not say; A-normal form must.

    ``log(%x)`` is used in both branches (ANF binds it before the ``if``); ``sqrt(%x)`` only
    in the else branch (bound inside it).
    """
    x = relay.var("x", shape=(2, 3))
    c = relay.var("c", "bool")
    v1 = relay.log(x)
    then = relay.exp(v1)
    other = relay.add(v1, relay.sqrt(x))
    return relay.Function([x, c], relay.If(c, then, other))


def seed004_closure():
    """Seed 004's closure: ``%1 = log(%x)`` used only inside ``fn (%y)``.

    ``@dataflow`` is the graph (no scope for ``%1``); ``@with_let`` is the same program
    with ``let %v1 = log(%x)``, which fixes the computation outside the closure.
    """
    mod = IRModule()
    x = relay.var("x", shape=(2, 3))
    y = relay.var("y", shape=(2, 3))
    v1 = relay.log(x)
    mod["dataflow"] = Function((x,), Function((y,), relay.add(y, v1)))
    x2 = relay.var("x", shape=(2, 3))
    y2 = relay.var("y", shape=(2, 3))
    lv = relay.var("v1")
    mod["with_let"] = Function((x2,), Let(lv, relay.log(x2), Function((y2,), relay.add(y2, lv))))
    return mod


def seed004_module():
    """Seed 004's module: ``@muladd``, ``@myfunc`` and the recursive ``@myfunc``."""
    mod = IRModule()
    x, y, z = f32("x"), f32("y"), f32("z")
    muladd = mod.add("muladd", Function((x, y, z), relay.add(relay.multiply(x, y), z)))
    x1 = f32("x")
    one, two, three = relay.const(1.0), relay.const(2.0), relay.const(3.0)
    c1 = Call(muladd, (x1, one, two))
    mod["myfunc"] = Function((x1,), Call(muladd, (c1, two, three)))
    rec = mod.intern_global_var("recursive")
    n = relay.var("x", "int32")
    c3 = Call(rec, (relay.subtract(n, relay.const(1)),))
    body = If(relay.equal(n, relay.const(1)), n, relay.add(c3, c3))
    mod[rec] = Function((n,), body)
    return mod


# -- sharing ------------------------------------------------------------------------------


def sharing_across_scopes():
    """TVM's test docstring case: ``add(%s, %s)`` shared by two lambdas in two branches.

    Graph form prints it as ``%0`` inside the first lambda and refers to ``%0`` from the
    second (graph labels are global); A-normal form binds it before the ``if``.
    """
    s = f32("s")
    c = relay.var("c", "bool")
    shared = relay.add(s, s)
    a, b = f32("a"), f32("b")
    f1 = Function((a,), relay.multiply(shared, a))
    f2 = Function((b,), relay.subtract(shared, b))
    return Function((s, c), If(c, f1, f2))


def sharing_dag():
    """A diamond and a node shared between a let value, a tuple and a closure."""
    x = relay.var("x", shape=(2, 3))
    a = relay.exp(x)
    b = relay.log(a)
    c = relay.sqrt(a)
    d = relay.add(b, c)  # diamond a -> (b, c) -> d
    v = relay.var("v")
    y = relay.var("y", shape=(2, 3))
    body = Let(v, d, Tuple((v, d, Function((y,), relay.multiply(y, b)))))
    return Function((x,), body)


# -- every node kind ----------------------------------------------------------------------


def _list_adt(mod: IRModule):
    lst = GlobalTypeVar("List")
    a = TypeVar("A")
    cons = Constructor("Cons", (a, TypeCall(lst, (a,))), lst, 0)
    nil = Constructor("Nil", (), lst, 1)
    mod.add_type(TypeData(lst, (a,), (cons, nil)))
    return lst, cons, nil


def all_node_kinds():
    """One module using every expression, pattern and type form."""
    mod = IRModule()
    lst, cons, nil = _list_adt(mod)
    pair = GlobalTypeVar("Pair")
    pa, pb = TypeVar("A"), TypeVar("B")
    mkpair = Constructor("MkPair", (pa, pb), pair, 0)
    mod.add_type(TypeData(pair, (pa, pb), (mkpair,)))
    opaque = GlobalTypeVar("Opaque")
    mod.add_type(TypeData(opaque, (), ()))  # an extern type: printed last

    # def @length[A](%l: List[A]) -> int32: a recursive match with a wildcard.
    ta = TypeVar("A")
    length = mod.intern_global_var("length")
    l, t = relay.var("l", TypeCall(lst, (ta,))), relay.var("t")
    arms = (
        Clause(
            PatternConstructor(cons, (PatternWildcard(), PatternVar(t))),
            relay.add(relay.const(1), Call(length, (t,))),
        ),
        Clause(PatternConstructor(nil), relay.const(0)),
    )
    mod[length] = Function((l,), Match(l, arms), relay.scalar_type("int32"), (ta,))

    # def @hd[A](%l: List[A]) -> A: an incomplete match (match?).
    tb = TypeVar("A")
    l2, h = relay.var("l", TypeCall(lst, (tb,))), relay.var("h")
    hd_arm = Clause(PatternConstructor(cons, (PatternVar(h), PatternWildcard())), h)
    mod["hd"] = Function((l2,), Match(l2, (hd_arm,), complete=False), tb, (tb,))

    # def @swap[A, B](%p: Pair[A, B]) -> Pair[B, A]: constructor pattern and call.
    sa, sb = TypeVar("A"), TypeVar("B")
    p, pa_, pb_ = relay.var("p", TypeCall(pair, (sa, sb))), relay.var("a"), relay.var("b")
    swap_arm = Clause(
        PatternConstructor(mkpair, (PatternVar(pa_), PatternVar(pb_))), Call(mkpair, (pb_, pa_))
    )
    mod["swap"] = Function((p,), Match(p, (swap_arm,)), TypeCall(pair, (sb, sa)), (sa, sb))

    # def @refs(): references.
    r, u = relay.var("r"), relay.var("u")
    refs_body = Let(r, RefCreate(relay.const(1)), Let(u, RefWrite(r, relay.const(2)), RefRead(r)))
    mod["refs"] = Function((), refs_body)

    # def @main: tuples, projections, nested and tuple patterns, closures, type params,
    # function attributes, calls of a global, a local function, a constructor.
    x = f32("x")
    tt = relay.var(
        "t",
        TupleType(
            (
                relay.scalar_type("float32"),
                TupleType((relay.scalar_type("float32"), relay.scalar_type("bool"))),
            )
        ),
    )
    inner = TupleGetItem(TupleGetItem(tt, 1), 0)  # %t.1.0: the inner projection is hoisted
    one_list = Call(cons, (x, Call(nil, ())))
    two_list = Call(cons, (inner, one_list))
    q, w = relay.var("q"), relay.var("w")
    nested = Match(
        two_list,
        (
            Clause(
                PatternConstructor(
                    cons,
                    (PatternVar(q), PatternConstructor(cons, (PatternVar(w), PatternWildcard()))),
                ),
                relay.add(q, w),
            ),
            Clause(PatternWildcard(), x),
        ),
    )
    ta2 = TypeVar("T")
    v = relay.var("v", ta2)
    ident = Function((v,), v, ta2, (ta2,), Attrs({"Inline": 1, "Composite": "id"}))
    idv = relay.var("id")
    ea, eb = f32("e"), f32("f")
    tup_match = Match(
        Tuple((x, x)),
        (Clause(PatternTuple((PatternVar(ea), PatternVar(eb))), relay.multiply(ea, eb)),),
    )
    g = f32("g")
    one_tuple = Match(Tuple((x,)), (Clause(PatternTuple((PatternVar(g),)), g),))
    main_body = Let(
        idv,
        ident,
        Tuple(
            (
                Call(idv, (nested,)),
                Call(length, (one_list,)),
                tup_match,
                one_tuple,
                Call(Function((f32("k"),), x), (relay.const(1.0),)),
                Tuple(()),
                Tuple((x,)),
                Call(mod.get_global_var("refs"), ()),
            )
        ),
    )
    mod["main"] = Function((x, tt), main_body)
    return mod


def hoisted_let_and_match():
    """A let or a match where TVM's grammar wants an infix expression: parenthesised."""
    mod = IRModule()
    lst, cons, _ = _list_adt(mod)
    x = f32("x")
    xs = relay.var("xs", TypeCall(lst, (relay.scalar_type("float32"),)))
    a, b, c = f32("a"), relay.var("b"), f32("c")
    h, m = relay.var("h"), relay.var("m")

    def head_or(default):
        return Match(
            xs,
            (
                Clause(
                    PatternConstructor(
                        cons,
                        (
                            PatternVar(h) if default is None else PatternWildcard(),
                            PatternWildcard(),
                        ),
                    ),
                    h if default is None else default,
                ),
                Clause(PatternWildcard(), x),
            ),
        )

    let_arg = Let(a, relay.log(x), a)  # a let as a call argument: hoisted %0 = (...)
    let_val = Let(c, relay.exp(x), c)  # a let as a let value: let %b = (...)
    match_val = head_or(None)  # a match as a let value: let %m = (match ...)
    match_arg = head_or(relay.const(0.0))  # a match as an argument: %N = (match ...)
    body = Let(
        b,
        let_val,
        Let(m, match_val, relay.multiply(relay.add(let_arg, b), relay.add(match_arg, m))),
    )
    mod["main"] = Function((x, xs), body)
    return mod


# -- literals and names -------------------------------------------------------------------


def scalars():
    """Every scalar dtype with a literal, and those that go through the meta table."""
    values = [
        lit(3, "int32"),
        lit(-2, "int32"),
        lit(7, "int16"),
        lit(-9_000_000_000, "int64"),
        lit(0.5, "float32"),
        lit(-1.0, "float32"),
        lit(0.1, "float16"),
        lit(1.0 / 3.0, "float64"),
        lit(True, "bool"),
        lit(False, "bool"),
        lit(np.inf, "float32"),
        lit(-np.inf, "float32"),
        lit(np.nan, "float32"),  # meta: NaN has no spelling
        lit(np.inf, "float64"),  # meta: only float32 has inff
        lit(5, "int8"),  # meta: no int8 literal
        lit(200, "uint8"),  # meta
        Constant(np.arange(6, dtype="float32").reshape(2, 3)),  # meta: not a scalar
    ]
    return Tuple(tuple(values))


def float_precision():
    """Floats printed with the shortest digits that read back exactly at their dtype."""
    values = [
        lit(0.1, "float32"),
        lit(1.0 / 3.0, "float32"),
        lit(1.0 / 3.0, "float64"),
        lit(0.1, "float16"),
        lit(65504.0, "float16"),
        lit(1e-5, "float32"),
        lit(3.4028235e38, "float32"),
        lit(1e-45, "float32"),  # the smallest subnormal
        lit(-0.0, "float32"),
        lit(1e16, "float32"),
        lit(123456789.0, "float64"),
        lit(2.5e-300, "float64"),
        lit(16777217.0, "float64"),
    ]
    return Tuple(tuple(values))


def names():
    """Name uniquification (one table per print job) and names TVM cannot read."""
    mod = IRModule()
    x1, x2 = f32("x"), f32("x")
    mod["first"] = Function((x1,), x1)
    user_x1 = f32("x1")  # a user name that collides with a generated one
    mod["second"] = Function((x2, user_x1), relay.add(x2, user_x1))
    odd = [
        f32(""),
        f32("_"),
        f32("1"),
        f32("layer1.weight"),
        f32("a-b c"),
        f32("gpu_0/conv_w"),
        f32("é"),
        f32("a//b"),
    ]
    body = odd[0]
    for v in odd[1:]:
        body = relay.add(body, v)
    mod["third"] = Function(tuple(odd), body)
    return mod


def attributes():
    """Operator attributes (non-default ones, in schema order) and function attributes."""
    data = relay.var("data", shape=(1, 3, 8, 8))
    w = relay.var("w", shape=(4, 3, 3, 3))
    conv = relay.nn.conv2d(data, w, strides=(2, 2), padding=(1, 1), channels=4, kernel_size=(3, 3))
    relu = relay.nn.relu(conv)
    sm = relay.nn.softmax(relu, axis=1)
    cast = relay.cast(sm, "float16")
    tr = relay.transpose(cast, axes=(0, 2, 3, 1))
    s = relay.sum(tr, axis=(1, 2), keepdims=True)
    lrelu = relay.nn.leaky_relu(s, alpha=0.2)
    body = Function(
        (data, w),
        lrelu,
        attrs=Attrs({"Primitive": 1, "global_symbol": "fused_conv", "relay.reshape_only": 0}),
    )
    return body


def free_variables():
    """Free variables are declared with ``free_var`` where first reached."""
    a, b = f32("a"), f32("b")
    y = f32("y")
    inner = Function((y,), relay.add(y, b))  # %b first reached inside the closure
    return Tuple((relay.multiply(a, a), inner, b))


def deep_nesting():
    """Closures in branches in closures: scopes in scopes."""
    x = f32("x")
    c = relay.var("c", "bool")
    e = relay.exp(x)
    y = f32("y")
    z = f32("z")
    inner = Function((z,), If(c, relay.add(z, e), relay.multiply(z, relay.log(e))))
    mid = Function((y,), Call(inner, (relay.add(y, e),)))
    return Function((x, c), If(c, Call(mid, (x,)), relay.negative(e)))


def meta_section():
    """A tensor constant, printed with the full #[metadata] section."""
    x = relay.var("x", shape=(2, 2))
    w = Constant(np.array([[1.0, 2.0], [3.0, 4.0]], dtype="float32"))
    return relay.Function([x], relay.add(relay.multiply(x, w), w))


def typed_module():
    """After type inference every call, variable and function gets a ``ty=`` comment."""
    mod = IRModule()
    x = relay.var("x", shape=(2, 3))
    y = relay.var("y", shape=(3,))
    v = relay.var("v")
    body = Let(
        v, relay.add(x, y), relay.Tuple((relay.exp(v), relay.sum(v, axis=1), relay.const(2.0)))
    )
    mod["main"] = Function((x, y), TupleGetItem(body, 1))
    from relay_nb.transform.infer_type import InferType

    return InferType()(mod)


CASES = {
    "seed004_dag": seed004_dag,
    "seed004_if_scope": seed004_if_scope,
    "seed004_closure": seed004_closure,
    "seed004_module": seed004_module,
    "sharing_across_scopes": sharing_across_scopes,
    "sharing_dag": sharing_dag,
    "all_node_kinds": all_node_kinds,
    "hoisted_let_and_match": hoisted_let_and_match,
    "scalars": scalars,
    "float_precision": float_precision,
    "names": names,
    "attributes": attributes,
    "free_variables": free_variables,
    "deep_nesting": deep_nesting,
    "meta_section": meta_section,
    "typed_module": typed_module,
}

# Cases whose golden text includes the #[metadata] section (the others leave it out).
WITH_METADATA = {"meta_section"}


def test_cases_build():
    for name, build in CASES.items():
        assert build() is not None, name
