"""Every Relay code example of the seed documents, as a .relay file next to this test.

* 000_*.relay: "Expressions in Relay" (seed 000; seed 001 is the same page as HTML).
* 004_*.relay: "Introduction to Relay IR" (seed 004). Seed 002 is its Chinese version:
  its three ``.. code::`` blocks are the same three programs (only indentation differs),
  so they are not repeated here.

Each file holds the example verbatim (seed 000 lost its indentation in the plain-text
export; the text is kept as it is). Examples that read inputs they do not declare
(``%1 = %a + %b ...``) parse as module bodies whose free variables become @main's
parameters. 000_21..23 use the ``data Nat`` of 000_20, as the seed says ("suppose we
have an ADT for natural numbers"), through ``init_module``.

Two examples are broken in the seed itself; their tests pin the exact error location and
say why.  Type checking and evaluation of these examples are tested elsewhere.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import relay_nb as relay
from relay_nb.errors import ParseError
from relay_nb.ir.expr import (
    Call,
    Constant,
    Function,
    GlobalVar,
    If,
    Let,
    Match,
    Op,
    PatternConstructor,
    PatternVar,
    PatternWildcard,
    Tuple,
    TupleGetItem,
)
from relay_nb.ir.ty import GlobalTypeVar, Kind, TensorType, TupleType, TypeCall

HERE = Path(__file__).parent
ALL = sorted(p.name for p in HERE.glob("*.relay"))
BROKEN = {"000_02_fn_minimal.relay", "000_11_type_args.relay"}
NEEDS_NAT = {"000_21_match_pred.relay", "000_22_match_nested.relay", "000_23_match_order.relay"}


def read(name: str) -> str:
    return (HERE / name).read_text(encoding="utf-8")


def load(name: str) -> relay.IRModule:
    init = relay.parse(read("000_20_data_nat.relay")) if name in NEEDS_NAT else None
    return relay.parse(read(name), source_name=name, init_module=init)


def op(call) -> str:
    assert isinstance(call, Call) and isinstance(call.op, Op), call
    return call.op.name


def test_the_examples_are_all_here():
    assert len(ALL) == 26


@pytest.mark.parametrize("name", [n for n in ALL if n not in BROKEN])
def test_example_parses(name):
    mod = load(name)
    assert len(mod.functions) + len(mod.type_definitions) >= 1


@pytest.mark.parametrize("name", [n for n in ALL if n not in BROKEN])
def test_example_round_trips_through_the_printer(name):
    mod = load(name)
    again = relay.parse(mod.astext())
    assert relay.structural_equal(mod, again, map_free_vars=True)


# ---------------------------------------------------------------- the broken ones


def test_fn_minimal_uses_a_placeholder():
    # `fn() { body }` shows the shape of a function; `body` stands for any expression,
    # and read literally it is an operator name that does not exist.
    with pytest.raises(ParseError) as info:
        load("000_02_fn_minimal.relay")
    err = info.value
    assert (err.line, err.column) == (1, 8)
    assert "unknown operator body" in err.message
    # with a real body it is the smallest function
    assert relay.parse_expr("fn() { () }").params == ()


def test_type_args_example_has_a_typo_and_is_incomplete():
    text = read("000_11_type_args.relay")
    # 1. The seed writes `Tensor[(), bool)]` (a ')' where ']' belongs), line 2 column 65.
    with pytest.raises(ParseError) as info:
        relay.parse(text, source_name="000_11")
    err = info.value
    assert (err.line, err.column) == (2, 65)
    assert "expected ']' to close the '['" in err.message and "found ')'" in err.message
    # 2. With the typo fixed the fragment still ends without ';' and a body after
    #    `let %x2 : () = %f(%x1, %x1)`: the error is at the end of the input.
    fixed = text.replace("bool)]>", "bool]>")
    with pytest.raises(ParseError) as info:
        relay.parse(fixed)
    assert "unexpected end of input: expected ';'" in info.value.message
    assert (info.value.line, info.value.column) == (4, 28)  # right after `%f(%x1, %x1)`
    # 3. Completed, it parses: the explicit type arguments land in Call.type_args.
    done = fixed.replace("%f(%x1, %x1)\n", "%f(%x1, %x1);\n%x2\n")
    f = relay.parse(done)["main"]
    assert [p.name_hint for p in f.params] == ["f"]
    first = f.body.value
    assert first.type_args == (TensorType((), "bool"),) * 3
    assert [a.data.item() for a in first.args] == [True, False]
    assert f.body.body.var.type_annotation == TupleType(())


# ---------------------------------------------------------------- what the others mean


def test_000_01_shadowing():
    f = load("000_01_shadowing.relay")["main"]
    a1 = f.body.var
    b = f.body.body.var
    a2 = f.body.body.body.var
    assert a1 is not a2
    assert f.body.body.body.value.args == (a1, a1)  # %a + %a reads the first %a
    assert f.body.body.body.body.args == (a2, b)


def test_000_03_and_04_functions():
    f = load("000_03_fn_add.relay")["main"]
    assert op(f.body) == "add" and f.body.args == f.params
    f = load("000_04_fn_typed.relay")["main"]
    t = TensorType((10, 10), "float32")
    assert [p.type_annotation for p in f.params] == [t, t] and f.ret_type == t


def test_000_05_recursive_let():
    f = load("000_05_fact.relay")["main"]
    fact = f.body.var
    inner = f.body.value
    assert isinstance(inner, Function)
    cond = inner.body
    assert isinstance(cond, If) and op(cond.cond) == "equal"
    assert isinstance(cond.cond.args[1], Constant) and cond.cond.args[1].data.shape == (10, 10)
    rec = cond.false_branch.args[1]
    assert rec.op is fact  # %fact is visible in its own (function) value
    assert f.body.body.op is fact


def test_000_06_closure():
    f = load("000_06_closure.relay")["main"]
    g = f.body.value
    inner_let = g.body
    closure = inner_let.body
    assert isinstance(closure, Function) and closure.body.args[1] is inner_let.var
    outer_x = f.body.body.body.var
    assert outer_x is not inner_let.var


def test_000_07_08_polymorphism():
    f = load("000_07_poly_identity.relay")["main"]
    (t,) = f.type_params
    assert t.kind == Kind.Type and f.params[0].type_annotation is t and f.ret_type is t
    f = load("000_08_poly_tensor.relay")["main"]
    s, bt = f.type_params
    assert (s.kind, bt.kind) == (Kind.ShapeVar, Kind.BaseType)
    assert f.params[0].type_annotation.shape is s and f.ret_type is None


def test_000_09_where_clause():
    f = load("000_09_where_broadcast.relay")["main"]
    (rel,) = f.attrs["type_constraints"]
    assert rel.func.name == "Broadcast" and rel.args == () and rel.num_inputs == 2


def test_000_10_call():
    f = load("000_10_call.relay")["main"]
    c = f.body.var
    fn = f.body.body.value
    assert op(fn.body) == "add" and fn.body.args[1] is c
    call = f.body.body.body
    assert [a.data.item() for a in call.args] == [10, 11] and all(a.is_literal for a in call.args)


def test_000_12_free_inputs():
    f = load("000_12_call_broadcast.relay")["main"]
    assert [p.name_hint for p in f.params] == ["f", "a", "b"]
    assert f.body.var.type_annotation == TensorType((100, 100, 100), "float32")


def test_000_13_ackermann():
    mod = load("000_13_ackermann.relay")
    f = mod["ackermann"]
    gv = mod.get_global_var("ackermann")
    top = f.body
    assert isinstance(top, If) and isinstance(top.false_branch, If)  # else if
    cond2 = top.false_branch.cond
    assert op(cond2) == "logical_and"  # &&
    last = top.false_branch.false_branch
    assert last.op is gv and last.args[1].op is gv
    assert op(last.args[0]) == "subtract"


def test_000_14_15_tuples():
    f = load("000_14_tuples.relay")["main"]
    tup = f.body.var
    result = f.body.body
    assert isinstance(result, Tuple) and result.fields[1] is f.params[2]
    add = result.fields[0]
    assert all(isinstance(x, TupleGetItem) and x.tuple_value is tup for x in add.args)
    f = load("000_15_projection.relay")["main"]
    assert isinstance(f.body, TupleGetItem) and f.body.index == 1
    assert f.body.tuple_value.fields == f.params


def test_000_16_17_lets():
    f = load("000_16_let_constant.relay")["main"]
    assert f.body.value.data.shape == (10, 10) and f.body.body.args == (f.body.var, f.body.var)
    f = load("000_17_let_reorder.relay")["main"]
    assert [p.name_hint for p in f.params] == ["a", "b", "c", "d"]


def test_000_18_graph_bindings_match_the_python_builder():
    # the seed's Python twin: sum1 = relay.add(a, b); sum2 = relay.add(sum1, sum1); ...
    f = load("000_18_graph_bindings.relay")["main"]
    a, b = relay.var("a"), relay.var("b")
    sum1 = relay.add(a, b)
    sum2 = relay.add(sum1, sum1)
    built = relay.Function([a, b], relay.multiply(sum2, sum2))
    assert relay.structural_equal(f, built, map_free_vars=True)
    assert f.body.args[0] is f.body.args[1]


def test_000_19_if():
    f = load("000_19_if.relay")["main"]
    t, u = f.params
    assert isinstance(f.body, If) and f.body.true_branch is t and f.body.false_branch is u


def test_000_20_to_23_nat():
    nat = relay.parse(read("000_20_data_nat.relay"))
    _z, s = nat.get_type("Nat").constructors
    assert s.inputs == (TypeCall(GlobalTypeVar("Nat"), ()),)
    m = load("000_21_match_pred.relay")["main"].body
    assert isinstance(m, Match) and len(m.clauses) == 2
    assert m.clauses[1].rhs is m.clauses[1].lhs.patterns[0].var
    m = load("000_22_match_nested.relay")["main"].body
    nested = m.clauses[0].lhs
    assert isinstance(nested.patterns[0], PatternConstructor)
    assert isinstance(nested.patterns[0].patterns[0], PatternVar)
    assert isinstance(m.clauses[1].lhs, PatternWildcard)
    m = load("000_23_match_order.relay")["main"].body
    assert isinstance(m.clauses[0].lhs, PatternWildcard) and len(m.clauses) == 4
    last = m.clauses[3].rhs
    assert last.op.name_hint == "S" and last.args[0].op.name_hint == "Z"


def test_004_01_module_of_two_functions():
    mod = load("004_01_module.relay")
    muladd = mod.get_global_var("muladd")
    f = mod["muladd"]
    assert op(f.body) == "add" and op(f.body.args[0]) == "multiply"  # mul -> multiply
    g = mod["myfunc"]
    # %1 and %2 are bound again in @myfunc: there they name @myfunc's own nodes
    assert g.body.op is muladd and isinstance(g.body.op, GlobalVar)
    assert g.body.args[0].op is muladd and g.body.args[0].args[0] is g.params[0]


def test_004_02_recursion():
    mod = load("004_02_recursion.relay")
    f = mod["myfunc"]
    assert isinstance(f.body, If) and op(f.body.cond) == "equal"
    add = f.body.false_branch
    assert op(add) == "add" and add.args[0] is add.args[1]
    rec = add.args[0]
    assert rec.op is mod.get_global_var("myfunc") and op(rec.args[0]) == "subtract"


def test_004_03_closure_and_graph_binding_scope():
    f = load("004_03_closure_scope.relay")["main"]
    inner = f.body
    assert isinstance(inner, Function)
    add = inner.body
    assert add.args[0] is inner.params[0]
    assert op(add.args[1]) == "log" and add.args[1].args[0] is f.params[0]


def test_let_bindings_example_of_004_text():
    # seed 004's prose: "if we change %1 = log(%x) to let %v1 = log(%x)"
    e = relay.parse_expr(
        "fn (%x) {\n  let %v1 = log(%x);\n  %2 = fn(%y) {\n    add(%y, %v1)\n  }\n  %2\n}"
    )
    assert isinstance(e.body, Let) and e.body.body.body.args[1] is e.body.var
