"""ExprVisitor / ExprMutator / post_order (relay_nb.ir.functor)."""

from __future__ import annotations

import sys

import pytest

import relay_nb as relay
from relay_nb.errors import RelayError
from relay_nb.ir.expr import (
    Call,
    Clause,
    Constant,
    Function,
    If,
    Let,
    Match,
    Op,
    PatternConstructor,
    PatternVar,
    PatternWildcard,
    RefCreate,
    RefRead,
    RefWrite,
    Tuple,
    TupleGetItem,
)
from relay_nb.ir.functor import (
    ExprMutator,
    ExprVisitor,
    expr_children,
    pattern_vars,
    post_order,
    post_order_visit,
)
from relay_nb.ir.structural import structural_equal
from relay_nb.op.registry import get_op, register_op


def _op(name: str, arity: int) -> Op:
    try:
        return get_op(name)
    except Exception:  # op families are written in parallel: only fill a gap
        return register_op(name, arity, override=True)


ADD = _op("add", 2)
SUB = _op("subtract", 2)
MUL = _op("multiply", 2)
LOG = _op("log", 1)


def add(a, b):
    return Call(ADD, (a, b))


def log(a):
    return Call(LOG, (a,))


class Counter(ExprVisitor):
    """Counts how many times each visit_* runs, per node."""

    def __init__(self):
        super().__init__()
        self.calls: list = []
        self.vars: list = []

    def visit_call(self, call):
        self.calls.append(call)
        super().visit_call(call)

    def visit_var(self, var):
        self.vars.append(var)


# --- memoization --------------------------------------------------------------------------


def test_dag_node_visited_once():
    x = relay.var("x")
    shared = log(x)  # seed 004: %1 used twice is computed (and visited) once
    root = add(shared, shared)
    v = Counter()
    v.visit(root)
    assert v.calls.count(shared) == 1 and v.calls.count(root) == 1
    assert v.vars == [x]
    v.visit(root)  # memoized: visiting again does nothing
    assert len(v.calls) == 2


def test_exponential_paths_linear_visit():
    x = relay.var("x")
    e = x
    for _ in range(300):  # 2**300 paths through the DAG
        e = add(e, e)
    v = Counter()
    v.visit(e)
    assert len(v.calls) == 300
    m = ExprMutator()
    assert m.visit(e) is e


def test_visitor_covers_every_kind():
    x, r, h = relay.var("x"), relay.var("r"), relay.var("h")
    lst = relay.GlobalTypeVar("List")
    cons = relay.Constructor("Cons", [], lst)
    body = Let(
        r,
        RefCreate(x),
        Tuple(
            [
                RefWrite(r, RefRead(r)),
                TupleGetItem(Tuple([x]), 0),
                If(relay.const(True), relay.GlobalVar("g"), Call(cons, (x,))),
                Match(x, [Clause(PatternConstructor(cons, [PatternVar(h)]), h), Clause(PatternWildcard(), x)]),
            ]
        ),
    )
    f = Function([x], body)
    seen = []

    class All(ExprVisitor):
        def _dispatch(self, expr):
            seen.append(type(expr).__name__)
            return super()._dispatch(expr)

    All().visit(f)
    for kind in (
        "Function", "Var", "Let", "RefCreate", "Tuple", "RefWrite", "RefRead", "TupleGetItem",
        "If", "Constant", "GlobalVar", "Call", "Constructor", "Match",
    ):
        assert kind in seen, kind
    assert ExprMutator().visit(f) is f
    # post_order reaches every node once, binders included
    nodes = list(post_order(f))
    assert len(nodes) == len({id(n) for n in nodes})
    assert h in nodes and r in nodes


# --- mutators -------------------------------------------------------------------------------


def test_mutator_returns_same_object_when_nothing_changes():
    x, y = relay.var("x"), relay.var("y")
    f = Function([x], Let(y, log(x), Tuple([add(y, x), TupleGetItem(Tuple([x, y]), 1)])))
    assert ExprMutator().visit(f) is f


class MulToAdd(ExprMutator):
    def visit_call(self, call):
        new = super().visit_call(call)
        if new.op is MUL:
            return Call(ADD, new.args, span=new.span)
        return new


def test_mutator_keeps_sharing_when_something_changes():
    x = relay.var("x")
    shared = Call(MUL, (x, x))
    untouched = log(x)
    root = Tuple([add(shared, untouched), add(shared, untouched)])
    out = MulToAdd().visit(root)
    assert out is not root
    first, second = out.fields
    assert first.args[0] is second.args[0]  # the rewritten shared node is still shared
    assert first.args[0].op is ADD
    assert first.args[1] is untouched  # an unchanged subtree is the same object
    assert structural_equal(out, Tuple([add(add(x, x), log(x))] * 2))


def test_subclass_overriding_visit_var_renames():
    x, z = relay.var("x"), relay.var("z")
    f = add(log(x), x)

    class Rename(ExprMutator):
        def visit_var(self, var):
            return z if var is x else var

    out = Rename().visit(f)
    assert out.args[1] is z and out.args[0].args[0] is z


class InlineLets(ExprMutator):
    """Seed 004: "keep a map of var to the expressions ... this will effectively remove
    all the lets in the program"."""

    def __init__(self):
        super().__init__()
        self.var_map: dict = {}

    def visit_let(self, let):
        self.var_map[let.var] = self.visit(let.value)
        return self.visit(let.body)

    def visit_var(self, var):
        return self.var_map.get(var, var)


def test_seed_004_var_map_substitution_in_visit_let():
    x = relay.var("x")
    v1, v2 = relay.var("v1"), relay.var("v2")
    anf = Let(v1, log(x), Let(v2, add(v1, relay.const(1.0)), add(v2, v1)))
    out = InlineLets().visit(anf)
    l1 = log(x)
    expected = add(add(l1, relay.const(1.0)), l1)
    assert structural_equal(out, expected)
    # the dataflow form keeps log(x) shared: bound once, used twice
    assert out.args[1] is out.args[0].args[0]


def test_seed_004_pattern_detection_through_var_map():
    # "detect add(log(x), y)": in ANF the first argument is a var; look it up in the map.
    x, y, v = relay.var("x"), relay.var("y"), relay.var("v")
    program = Let(v, log(x), add(v, y))
    found = []

    class Detect(ExprVisitor):
        def __init__(self):
            super().__init__()
            self.bound = {}

        def visit_let(self, let):
            self.bound[let.var] = let.value
            super().visit_let(let)

        def visit_call(self, call):
            if call.op is ADD:
                first = self.bound.get(call.args[0], call.args[0])
                if isinstance(first, Call) and first.op is LOG:
                    found.append(call)
            super().visit_call(call)

    Detect().visit(program)
    assert found == [program.body]


def test_overridden_visit_call_sees_arguments_first():
    x = relay.var("x")
    inner = log(x)
    outer = add(inner, inner)
    order = []

    class Order(ExprVisitor):
        def visit_call(self, call):
            order.append(call)
            super().visit_call(call)

    Order().visit(outer)
    assert order == [inner, outer]  # dataflow is visited children first


def test_mutator_rewrites_match_patterns_and_functions():
    x, h = relay.var("x"), relay.var("h")
    lst = relay.GlobalTypeVar("List")
    cons = relay.Constructor("Cons", [], lst)
    f = Function([x], Match(x, [Clause(PatternConstructor(cons, [PatternVar(h)]), h)]))
    fresh = {}

    class Fresh(ExprMutator):
        def visit_var(self, var):
            return fresh.setdefault(var, relay.var(var.name_hint + "_"))

    out = Fresh().visit(f)
    assert out.params[0] is fresh[x]
    clause = out.body.clauses[0]
    assert clause.lhs.patterns[0].var is fresh[h] and clause.rhs is fresh[h]
    assert structural_equal(out, f)


# --- post order ----------------------------------------------------------------------------


def test_post_order_order():
    x, y = relay.var("x"), relay.var("y")
    lg = log(x)
    body = add(y, x)
    let = Let(y, lg, body)
    f = Function([x], let)
    assert list(post_order(f)) == [x, y, LOG, lg, ADD, body, let, f]
    seen = []
    post_order_visit(f, seen.append)
    assert seen == [x, y, LOG, lg, ADD, body, let, f]
    assert expr_children(let) == (y, lg, body)
    assert pattern_vars(PatternConstructor(relay.Constructor("C", [], relay.GlobalTypeVar("T")), [PatternVar(x), PatternWildcard(), PatternVar(y)])) == [x, y]


# --- depth --------------------------------------------------------------------------------


def let_chain(n):
    vs = [relay.var(f"v{i}") for i in range(n)]
    body = vs[-1]
    for i in range(n - 1, 0, -1):
        body = Let(vs[i], Call(MUL, (vs[i - 1], relay.const(2.0))), body)
    return Function([vs[0]], body)


def dataflow_chain(n):
    x = relay.var("x")
    e = x
    for i in range(n):
        e = Call(MUL if i % 2 else ADD, (e, relay.const(1.0)))
    return Function([x], e)


N = 100_000


def test_deep_let_chain_visit_and_mutate():
    limit = sys.getrecursionlimit()
    f = let_chain(N)
    v = Counter()
    v.visit(f)
    assert len(v.calls) == N - 1
    assert ExprMutator().visit(f) is f
    out = MulToAdd().visit(f)
    assert out is not f
    node, lets = out.body, 0
    while isinstance(node, Let):
        assert node.value.op is ADD
        lets += 1
        node = node.body
    assert lets == N - 1
    assert len(list(post_order(f))) == 4 * (N - 1) + 1 + 2  # each let: let, var, call, const
    assert sys.getrecursionlimit() == limit


def test_deep_dataflow_visit_and_mutate():
    limit = sys.getrecursionlimit()
    f = dataflow_chain(N)
    v = Counter()
    v.visit(f)
    assert len(v.calls) == N
    assert ExprMutator().visit(f) is f
    out = MulToAdd().visit(f)
    node, calls = out.body, 0
    while isinstance(node, Call):
        assert node.op is ADD
        calls += 1
        node = node.args[0]
    assert calls == N and node is f.params[0]
    assert sys.getrecursionlimit() == limit


def test_deep_let_chain_with_dataflow_values():
    # every let value is itself a deep dataflow chain, and the body a deep let chain
    x = relay.var("x")
    e = x
    for _ in range(20_000):
        e = add(e, relay.const(1.0))
    chain = let_chain(20_000)
    f = Function([x], Let(relay.var("big"), e, chain.body))
    assert ExprMutator().visit(f) is f
    Counter().visit(f)


def test_user_visitor_recursing_too_deeply_gets_relay_error():
    f = let_chain(N)
    with pytest.raises(RelayError, match="too deeply"):
        InlineLets().visit(f)  # overrides visit_let: one Python frame per let
    small = InlineLets().visit(let_chain(200))
    assert not isinstance(small, Let) and isinstance(small, Function)
    # the functor is still usable after the error
    m = InlineLets()
    with pytest.raises(RelayError):
        m.visit(f)
    assert isinstance(m.visit(let_chain(10)), Function)


def test_deeply_nested_scopes_give_relay_error_not_crash():
    e = relay.var("leaf")
    for i in range(20_000):
        e = Function([relay.var(f"p{i}")], e)
    with pytest.raises(RelayError):
        ExprVisitor().visit(e)
    with pytest.raises(RelayError):
        ExprMutator().visit(e)
    # post_order has no such limit
    assert sum(1 for _ in post_order(e)) == 2 * 20_000 + 1


def test_visiting_a_non_expression_is_a_relay_error():
    with pytest.raises(RelayError, match="not a Relay expression"):
        ExprVisitor().visit(42)  # type: ignore[arg-type]


def test_constants_and_ops_pass_through_mutator():
    c = relay.const([1.0, 2.0])
    assert ExprMutator().visit(c) is c
    assert isinstance(ExprMutator().visit(c), Constant)
    assert ExprMutator().visit(ADD) is ADD
