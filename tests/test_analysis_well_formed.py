"""well_formed / check_well_formed: each Var bound once, used only in its scope."""

from __future__ import annotations

import pytest
from hypothesis import given
from strategies import FAST, programs

import relay_nb as relay
from relay_nb.analysis import check_well_formed, well_formed
from relay_nb.errors import RelayError
from relay_nb.ir.expr import (
    Call,
    Clause,
    Function,
    If,
    Let,
    Match,
    PatternTuple,
    PatternVar,
    Tuple,
    TupleGetItem,
    Var,
)
from relay_nb.op.registry import get_op

ADD = get_op("add")


def test_simple_programs_are_well_formed():
    assert well_formed(relay.parse_expr("fn (%x) { let %y = %x; %y }"))
    assert well_formed(relay.parse_expr("fn (%x) { %1 = log(%x); add(%1, %1) }"))
    mod = relay.parse(
        "def @main(%x: float32) { let %f = fn (%y: float32) { add(%x, %y) }; %f(%x) }"
    )
    assert well_formed(mod)
    assert well_formed(mod["main"])


def test_free_variables_of_the_top_expression_are_allowed():
    x = Var("x")
    assert well_formed(Call(ADD, (x, x)))
    assert well_formed(Let(Var("y"), x, x))


def test_variable_bound_twice():
    x, y = Var("x"), Var("y")
    bad = Function((x,), Tuple((Let(y, x, y), Let(y, x, y))))
    assert not well_formed(bad)
    with pytest.raises(RelayError, match="%y is bound twice"):
        check_well_formed(bad)
    assert not well_formed(Function((x,), Function((x,), x)))  # a parameter rebound


def test_shared_binder_counts_once():
    # One let node used twice in a DAG is one binding.
    x, y = Var("x"), Var("y")
    let = Let(y, Call(ADD, (x, x)), y)
    assert well_formed(Function((x,), Tuple((let, let))))


def test_use_outside_scope():
    x, y = Var("x"), Var("y")
    bad = Function((x,), Tuple((Let(y, x, y), y)))
    assert not well_formed(bad)
    with pytest.raises(RelayError, match="%y is used outside the scope that binds it"):
        check_well_formed(bad)


def test_use_of_a_parameter_outside_its_function():
    x, y = Var("x"), Var("y")
    bad = Function((x,), Tuple((Function((y,), y), y)))
    assert not well_formed(bad)


def test_pattern_variable_scope():
    x, a, b = Var("x"), Var("a"), Var("b")
    pat = PatternTuple((PatternVar(a), PatternVar(b)))
    good = Function((x,), Match(Tuple((x, x)), (Clause(pat, Call(ADD, (a, b))),)))
    assert well_formed(good)
    bad = Function((x,), Tuple((Match(Tuple((x, x)), (Clause(pat, a),)), b)))
    assert not well_formed(bad)


def test_recursive_let_sees_itself():
    mod = relay.parse(
        "def @main(%n: int32) { let %f = fn (%k: int32) -> int32 "
        "{ if (equal(%k, 0)) { 0 } else { %f(subtract(%k, 1)) } }; %f(%n) }"
    )
    assert well_formed(mod)


def test_shared_node_across_scopes():
    x, y = Var("x"), Var("y")
    uses_y = Call(ADD, (y, y))
    # Shared between the let's body and outside it: the outside use escapes %y.
    assert not well_formed(Function((x,), Tuple((Let(y, x, uses_y), uses_y))))
    # Shared between two branches, using only %x: fine.
    shared = Call(ADD, (x, x))
    c = Var("c")
    assert well_formed(Function((x, c), If(c, shared, TupleGetItem(Tuple((shared,)), 0))))


def test_error_names_the_span():
    mod = relay.parse("def @main(%x: float32) { let %y = %x; %y }")
    func = mod["main"]
    y = func.body.var
    bad = Function(func.params, Tuple((func.body, y)))
    with pytest.raises(RelayError) as info:
        check_well_formed(bad)
    assert "%y" in str(info.value)


def test_module_error_names_the_global():
    x, y = Var("x"), Var("y")
    mod = relay.IRModule({"main": Function((x,), Tuple((Let(y, x, y), y)))})
    with pytest.raises(RelayError, match="@main is not well formed"):
        check_well_formed(mod)


def test_deep_let_chain_and_graph():
    x = Var("x")
    vs = [Var(f"v{i}") for i in range(100_000)]
    body = vs[-1]
    for i in range(len(vs) - 1, -1, -1):
        body = Let(vs[i], Call(ADD, (vs[i - 1] if i else x, x)), body)
    assert well_formed(Function((x,), body))
    node = x
    for _ in range(100_000):
        node = Call(ADD, (node, node))
    assert well_formed(Function((x,), node))


@FAST
@given(programs())
def test_random_programs_are_well_formed(fn):
    assert well_formed(fn)
