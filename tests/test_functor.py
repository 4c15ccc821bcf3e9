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


def nested_functions(n):
    e = relay.var("leaf")
    for i in range(n):
        e = Function([relay.var(f"p{i}")], e)
    return e


def test_deeply_nested_scopes_visit_and_mutate_without_recursion():
    e = nested_functions(20_000)
    ExprVisitor().visit(e)
    assert ExprMutator().visit(e) is e
    # an if/else chain through the default methods, rebuilt when a leaf changes
    x = relay.var("x")
    chain = x
    for i in range(20_000):
        chain = If(relay.const(True), Call(MUL, (x, relay.const(float(i)))), chain)
    out = MulToAdd().visit(chain)
    node, depth = out, 0
    while isinstance(node, If):
        assert node.true_branch.op is ADD
        node, depth = node.false_branch, depth + 1
    assert depth == 20_000 and node is x


class ScopeDepth(ExprMutator):
    """A generator scope method: counts how deep each constant sits in functions."""

    def __init__(self):
        super().__init__()
        self.depth = 0
        self.seen: dict = {}

    def visit_constant(self, c):
        self.seen[c] = self.depth
        return c

    def visit_function(self, fn):
        self.depth += 1
        try:
            body = yield fn.body  # visit the body without a Python frame per level
        finally:
            self.depth -= 1
        return self._rebuild_function(fn, fn.params, body)


def test_generator_scope_methods_keep_their_context_at_any_depth():
    leaf = relay.const(1.0)
    e = leaf
    for i in range(20_000):
        e = Function([relay.var(f"p{i}")], e)
    m = ScopeDepth()
    assert m.visit(e) is e
    assert m.seen[leaf] == 20_000 and m.depth == 0


def test_errors_reach_generator_methods_as_with_recursion():
    class Boom(ScopeDepth):
        def visit_constant(self, c):
            raise ValueError("boom")

    e = Function([relay.var("p")], Function([relay.var("q")], relay.const(1.0)))
    m = Boom()
    with pytest.raises(ValueError, match="boom"):
        m.visit(e)
    assert m.depth == 0  # each waiting generator's finally ran

    class Recover(ExprMutator):
        def visit_function(self, fn):
            try:
                body = yield fn.body
            except ValueError:
                body = relay.const(0.0)  # handled where it happened, as with recursion
            return self._rebuild_function(fn, fn.params, body)

        def visit_call(self, call):
            raise ValueError("no calls")

    out = Recover().visit(Function([relay.var("p")], add(relay.const(1.0), relay.const(2.0))))
    assert isinstance(out.body, Constant) and float(out.body.data) == 0.0


def test_recursing_user_method_error_names_construct_and_line():
    text = "fn (%x: float32) { " + "if (%x > 0f) { %x } else { " * 3_000 + "%x" + " }" * 3_000 + " }"
    f = relay.parse_expr(text)

    class Recursive(ExprMutator):  # a plain method calling self.visit per level
        def visit_if(self, ite):
            return If(self.visit(ite.cond), self.visit(ite.true_branch), self.visit(ite.false_branch))

    with pytest.raises(RelayError) as info:
        Recursive().visit(f)
    msg = str(info.value)
    assert "if/else expressions nested too deeply" in msg and "line 1" in msg
    assert "yield" in msg  # how to write it so it has no limit
    assert info.value.line == 1 and info.value.column == 20


def test_visiting_a_non_expression_is_a_relay_error():
    with pytest.raises(RelayError, match="not a Relay expression"):
        ExprVisitor().visit(42)  # type: ignore[arg-type]


def test_constants_and_ops_pass_through_mutator():
    c = relay.const([1.0, 2.0])
    assert ExprMutator().visit(c) is c
    assert isinstance(ExprMutator().visit(c), Constant)
    assert ExprMutator().visit(ADD) is ADD
