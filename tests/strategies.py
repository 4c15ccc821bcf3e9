"""Shared hypothesis strategies: random well-formed, well-typed Relay programs.

``programs()`` draws a ``fn (%p0: float32, ..., %c: bool) -> float32`` (extends the
generator of test_roundtrip.py): lets (some dead), tuples and projections, ``if``,
closures called directly or through a let, unary and binary operators, sharing of
nodes within and across scopes (a node is reused only where its free variables are in
scope), structurally equal duplicates of calls (for CSE), reference cells (allocated,
written and read in a let chain), and calls to the module's helper globals.

``modules()`` draws an IRModule: helper globals ``@h0, @h1, ...`` of type
``fn (float32) -> float32`` (some marked ``Inline=1``, later ones may call earlier
ones), a recursive global ``@count`` (a loop), and ``@main`` built by ``programs()``.
"""

from __future__ import annotations

import functools

import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

import relay_nb as relay
from relay_nb.ir.expr import (
    Call,
    Constant,
    Expr,
    Function,
    GlobalVar,
    If,
    Let,
    RefCreate,
    RefRead,
    RefWrite,
    Tuple,
    TupleGetItem,
)
from relay_nb.ir.module import IRModule
from relay_nb.op.registry import get_op

UNARY = ("log", "exp", "negative", "sqrt", "nn.relu", "tanh")
BINARY = ("add", "multiply", "subtract", "maximum")
SCALAR = relay.scalar_type("float32")
NAMES = st.sampled_from(["x", "y", "v", "a", "x1", "", "_t"])

FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _const(draw) -> Constant:
    value = draw(st.floats(-100, 100, allow_nan=False, width=32))
    return Constant(np.asarray(value, "float32"))


@st.composite
def programs(draw, max_nodes: int = 40, n_params=None, globals_=(), refs: bool = True):
    """A random ``fn (%p.., %c: bool) -> float32``; ``globals_`` are callable
    ``fn (float32) -> float32`` global vars."""
    budget = [max_nodes]
    count = draw(st.integers(1, 3)) if n_params is None else n_params
    params = [relay.var(f"p{i}", "float32") for i in range(count)]
    cond_var = relay.var("c", "bool")

    def spend() -> bool:
        budget[0] -= 1
        return budget[0] > 0

    def scalar(env: list, pool: list, depth: int) -> tuple[Expr, frozenset]:
        usable = [p for p in pool if p[1] <= set(env)]
        kinds = ["var", "const"]
        if spend() and depth < 6:
            kinds += ["unary", "binary", "binary", "let", "dead", "if", "tuple", "closure"]
            kinds += ["ref"] * refs + ["global"] * bool(globals_)
        if usable:
            kinds += ["shared", "shared", "dup"]
        kind = draw(st.sampled_from(kinds))
        if kind == "var":
            v = draw(st.sampled_from([e for e in env if e is not cond_var]))
            return v, frozenset([v])
        if kind == "const":
            return _const(draw), frozenset()
        if kind == "shared":
            return draw(st.sampled_from(usable))
        if kind == "dup":  # a structurally equal, distinct copy of a call
            e, fs = draw(st.sampled_from(usable))
            if type(e) is Call:
                return Call(e.op, e.args, e.attrs, e.type_args), fs
            return e, fs
        if kind == "unary":
            a, fa = scalar(env, pool, depth + 1)
            out = (Call(get_op(draw(st.sampled_from(UNARY))), (a,)), fa)
        elif kind == "binary":
            a, fa = scalar(env, pool, depth + 1)
            b, fb = scalar(env, pool, depth + 1)
            out = (Call(get_op(draw(st.sampled_from(BINARY))), (a, b)), fa | fb)
        elif kind in ("let", "dead"):
            v = relay.var(draw(NAMES), "float32") if draw(st.booleans()) else relay.var(draw(NAMES))
            value, fv = scalar(env, pool, depth + 1)
            inner = env + [v] if kind == "let" else env
            body, fb = scalar(inner, pool, depth + 1)
            out = (Let(v, value, body), fv | (fb - {v}))
        elif kind == "if":
            then, ft = scalar(env, pool, depth + 1)
            other, fo = scalar(env, pool, depth + 1)
            if draw(st.booleans()):
                a, fa = scalar(env, pool, depth + 1)
                b, fb = scalar(env, pool, depth + 1)
                cond, fc = Call(get_op("less"), (a, b)), fa | fb
            else:
                cond, fc = cond_var, frozenset([cond_var])
            out = (If(cond, then, other), fc | ft | fo)
        elif kind == "tuple":
            fields = [scalar(env, pool, depth + 1) for _ in range(draw(st.integers(1, 3)))]
            tup = Tuple(tuple(f for f, _ in fields))
            fs = frozenset().union(*(s for _, s in fields))
            out = (TupleGetItem(tup, draw(st.integers(0, len(fields) - 1))), fs)
        elif kind == "ref":
            # let %r = ref(a); let %w = ref_write(%r, b); ref_read(%r)   (or b unused: dead write)
            r, w = relay.var("r"), relay.var("w")
            a, fa = scalar(env, pool, depth + 1)
            b, fb = scalar(env, pool, depth + 1)
            read = RefRead(r)
            body = read if draw(st.booleans()) else Call(get_op("add"), (read, b))
            out = (Let(r, RefCreate(a), Let(w, RefWrite(r, b), body)), fa | fb)
            return out  # not pooled: a shared cell operation is not what programs do
        elif kind == "global":
            g = draw(st.sampled_from(list(globals_)))
            a, fa = scalar(env, pool, depth + 1)
            out = (Call(g, (a,)), fa)
        else:  # closure, called right away or through a let
            y = relay.var(draw(NAMES), "float32")
            body, fb = scalar(env + [y], pool, depth + 1)
            fn = Function((y,), body, SCALAR)
            arg, fa = scalar(env, pool, depth + 1)
            if draw(st.booleans()):
                out = (Call(fn, (arg,)), (fb - {y}) | fa)
            else:
                f = relay.var("f")
                out = (Let(f, fn, Call(f, (arg,))), (fb - {y}) | fa)
        pool.append(out)
        return out

    env = params + [cond_var]
    body, _ = scalar(env, [], 0)
    return Function(tuple(env), body, SCALAR)


COUNT = """
def @count(%n: int32, %acc: float32) -> float32 {
  if (less(%n, 1)) { %acc } else { @count(subtract(%n, 1), add(%acc, 1f)) }
}
"""


@st.composite
def modules(draw, max_nodes: int = 30, refs: bool = True):
    """An IRModule with helper globals, a recursive ``@count`` and a random ``@main``."""
    mod = relay.parse(COUNT)
    count = mod.get_global_var("count")
    helpers: list[GlobalVar] = []
    for i in range(draw(st.integers(0, 3))):
        body = draw(
            programs(
                max_nodes=max(4, max_nodes // 3), n_params=1, globals_=tuple(helpers), refs=refs
            )
        )
        (p, c) = body.params
        # The helper takes one float; its condition is fixed by the argument's sign.
        fn = Function(
            (p,),
            Let(c, Call(get_op("less"), (p, Constant(np.asarray(0, "float32")))), body.body),
            SCALAR,
        )
        if draw(st.booleans()):
            fn = fn.with_attr("Inline", 1)
        gv = mod.add(f"h{i}", fn)
        helpers.append(gv)
    main = draw(programs(max_nodes=max_nodes, globals_=tuple(helpers), refs=refs))
    if draw(st.booleans()):  # use the recursive global too
        body = Call(
            get_op("add"),
            (main.body, Call(count, (Constant(np.asarray(3, "int32")), main.params[0]))),
        )
        main = Function(main.params, body, SCALAR)
    mod.add("main", main)
    return mod


def as_module(fn: Function) -> IRModule:
    mod = IRModule()
    mod["main"] = fn
    return mod


# -- big programs for the scale tests (10,000 / 100,000 nodes) ----------------------------


@functools.cache  # built once per session; passes never change their input
def big_let_chain(n: int) -> IRModule:
    """``fn (%x) { let %v0 = add(%x, 1f); let %v1 = add(%v0, 1f); ... %v(n-1) }``."""
    from relay_nb.ir.expr import Var

    add, one = get_op("add"), relay.const(1.0)
    x = relay.var("x", "float32")
    vs = [Var(f"v{i}") for i in range(n)]
    body: Expr = vs[-1]
    for i in range(n - 1, -1, -1):
        body = Let(vs[i], Call(add, (vs[i - 1] if i else x, one)), body)
    return IRModule({"main": Function((x,), body)})


@functools.cache
def big_dag(n: int) -> IRModule:
    """A dataflow graph of ``n`` calls, each node used twice (a Fibonacci-like DAG)."""
    add, mul = get_op("add"), get_op("multiply")
    x = relay.var("x", "float32")
    a, b = x, Call(get_op("log"), (x,))
    for i in range(n - 1):
        a, b = b, Call(add if i % 2 else mul, (a, b))
    return IRModule({"main": Function((x,), b)})


@functools.cache
def big_mixed(n: int) -> IRModule:
    """About ``n`` nodes of let-bound ifs (sharing a value across branches), closures
    capturing let variables, and their calls."""
    from relay_nb.ir.expr import Var

    add, mul, log = get_op("add"), get_op("multiply"), get_op("log")
    x, c = relay.var("x", "float32"), relay.var("c", "bool")
    binds = []
    prev: Expr = x
    for i in range(n // 12):
        t = Call(log, (prev,))
        v, f, w = Var(f"v{i}"), Var(f"f{i}"), Var(f"w{i}")
        binds.append((v, If(c, Call(add, (prev, t)), Call(mul, (t, t)))))
        y = relay.var("y", "float32")
        binds.append((f, Function((y,), Call(add, (y, v)))))
        binds.append((w, Call(f, (v,))))
        prev = w
    body = prev
    for var, value in reversed(binds):
        body = Let(var, value, body)
    return IRModule({"main": Function((x, c), body)})


__all__ = ["FAST", "as_module", "big_dag", "big_let_chain", "big_mixed", "modules", "programs"]
