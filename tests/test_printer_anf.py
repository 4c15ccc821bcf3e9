"""A-normal form: relay_nb.transform.to_a_normal_form and ``astext(form="anf")``.

The placement rule (module docstring of to_a_normal_form): a value is bound once, in the
innermost scope enclosing all of its uses, where it is first needed.
"""

from __future__ import annotations

import sys

import pytest
from test_printer_cases import CASES

import relay_nb as relay
from relay_nb.errors import RelayError
from relay_nb.ir.attrs import Attrs
from relay_nb.ir.expr import (
    Call,
    Constant,
    Expr,
    Function,
    If,
    Let,
    Match,
    Tuple,
    TupleGetItem,
    Var,
)
from relay_nb.ir.functor import post_order
from relay_nb.ir.module import IRModule
from relay_nb.ir.structural import assert_structural_equal
from relay_nb.ir.ty import TensorType
from relay_nb.syntax.printer import astext, pretty_print
from relay_nb.transform.to_a_normal_form import to_a_normal_form

F32 = TensorType((), "float32")
ATOMS = (Var, Constant, relay.GlobalVar, relay.Op, relay.Constructor, relay.MetaRef)


def f32(name: str) -> Var:
    return relay.var(name, "float32")


def anf_text(e: Expr) -> str:
    return pretty_print(to_a_normal_form(e))


def assert_anf(e: Expr) -> None:
    """Operands are atoms; every scope (function body, branch, arm, root) ends in an atom
    after its lets; let values are never lets."""
    scopes = [e.body if isinstance(e, Function) else e]
    for node in post_order(e):
        if isinstance(node, Call):
            assert all(isinstance(a, ATOMS) for a in (node.op, *node.args)), node
        elif isinstance(node, Tuple):
            assert all(isinstance(a, ATOMS) for a in node.fields)
        elif isinstance(node, TupleGetItem):
            assert isinstance(node.tuple_value, ATOMS)
        elif isinstance(node, If):
            assert isinstance(node.cond, ATOMS)
            scopes += [node.true_branch, node.false_branch]
        elif isinstance(node, Match):
            assert isinstance(node.data, ATOMS)
            scopes += [c.rhs for c in node.clauses]
        elif isinstance(node, Function) and node is not e and not node.attrs.get("Primitive"):
            scopes.append(node.body)
        elif isinstance(node, Let):
            assert not isinstance(node.value, Let)
    for s in scopes:
        while isinstance(s, Let):
            s = s.body
        assert isinstance(s, ATOMS), s


# -- the placement rule ---------------------------------------------------------------------


def test_shared_value_bound_once():
    x = relay.var("x", shape=(2, 3))
    v = relay.log(x)
    f = relay.Function([x], relay.add(v, v))
    assert anf_text(f) == (
        "fn (%x: Tensor[(2, 3), float32]) {\n  let %x1 = log(%x);\n  let %x2 = add(%x1, %x1);\n  %x2\n}"
    )


def test_value_used_in_both_branches_is_bound_before_the_if():
    x, c = f32("x"), relay.var("c", "bool")
    v = relay.log(x)
    only_else = relay.sqrt(x)
    f = Function((x, c), If(c, relay.exp(v), relay.add(v, only_else)))
    text = anf_text(f)
    assert text.index("log(%x)") < text.index("if (%c)")
    assert text.index("sqrt(%x)") > text.index("} else {")


def test_value_used_only_inside_a_closure_is_bound_inside_it():
    x, y = f32("x"), f32("y")
    v = relay.log(x)
    f = Function((x,), Function((y,), relay.add(y, v)))
    text = anf_text(f)
    assert text.index("fn (%y") < text.index("log(%x)")


def test_value_shared_by_a_closure_and_its_parent_is_bound_in_the_parent():
    x, y = f32("x"), f32("y")
    v = relay.log(x)
    f = Function((x,), Tuple((v, Function((y,), relay.add(y, v)))))
    text = anf_text(f)
    assert text.index("log(%x)") < text.index("fn (%y")
    assert text.count("log(") == 1


def test_match_arms_are_scopes():
    from test_printer_cases import _list_adt

    mod = IRModule()
    _, cons, _ = _list_adt(mod)
    x, xs, h = f32("x"), relay.var("xs"), relay.var("h")
    both = relay.exp(x)
    one = relay.log(x)
    arms = (
        relay.Clause(
            relay.PatternConstructor(cons, (relay.PatternVar(h), relay.PatternWildcard())),
            relay.add(h, both),
        ),
        relay.Clause(relay.PatternWildcard(), relay.multiply(both, one)),
    )
    text = anf_text(Function((x, xs), Match(xs, arms)))
    assert text.index("exp(%x)") < text.index("match (%xs)")
    assert text.index("log(%x)") > text.index("_ => {")


def test_values_using_a_let_variable_come_after_its_let():
    x, a = f32("x"), relay.var("a")
    shared = relay.exp(x)  # does not use %a: may go anywhere before its first use
    uses_a = relay.add(a, shared)
    f = Function((x,), Let(a, relay.log(x), relay.multiply(uses_a, uses_a)))
    text = anf_text(f)
    assert text.index("let %a = log(%x)") < text.index("add(%a,")
    assert_anf(to_a_normal_form(f))


def test_existing_lets_keep_their_variable():
    x, a, b = f32("x"), relay.var("a"), relay.var("b")
    f = Function((x,), Let(a, relay.log(x), Let(b, a, relay.add(a, b))))
    assert (
        anf_text(f)
        == "fn (%x: float32) {\n  let %a = log(%x);\n  let %b = %a;\n  let %x1 = add(%a, %b);\n  %x1\n}"
    )


def test_let_of_a_shared_value_aliases_the_first_binding():
    x, a = f32("x"), relay.var("a")
    v = relay.log(x)
    f = Function((x,), relay.add(v, Let(a, v, a)))
    assert (
        anf_text(f)
        == "fn (%x: float32) {\n  let %x1 = log(%x);\n  let %a = %x1;\n  let %x2 = add(%x1, %a);\n  %x2\n}"
    )


def test_nested_let_values_are_flattened():
    x, a, b = f32("x"), relay.var("a"), relay.var("b")
    f = Function((x,), Let(a, Let(b, relay.exp(x), relay.log(b)), a))
    assert anf_text(f) == "fn (%x: float32) {\n  let %b = exp(%x);\n  let %a = log(%b);\n  %a\n}"


def test_recursive_local_function():
    n, f = relay.var("n", "int32"), relay.var("f")
    fn = Function(
        (n,), If(relay.less(n, relay.const(1)), n, Call(f, (relay.subtract(n, relay.const(1)),)))
    )
    e = Let(f, fn, Call(f, (relay.const(10),)))
    out = to_a_normal_form(e)
    assert isinstance(out, Let) and out.var is f and isinstance(out.value, Function)
    assert_anf(out)


def test_node_shared_across_a_recursive_binding_is_refused():
    n, f = relay.var("n", "int32"), relay.var("f")
    shared = Call(f, (relay.const(1),))  # uses %f inside its own function and after it
    e = Let(f, Function((n,), relay.add(shared, n)), shared)
    with pytest.raises(RelayError, match="recursive function"):
        to_a_normal_form(e)


def test_primitive_functions_are_kept_whole():
    x, p = f32("x"), f32("p")
    fused = Function((p,), relay.exp(relay.log(p)), attrs=Attrs({"Primitive": 1}))
    f = Function((x,), Call(fused, (x,)))
    out = to_a_normal_form(f)
    assert out.body.value is fused


def test_constants_are_atoms():
    x = f32("x")
    assert anf_text(Function((x,), relay.add(x, relay.const(1.0)))) == (
        "fn (%x: float32) {\n  let %x1 = add(%x, 1f);\n  %x1\n}"
    )


def test_atomic_bodies_are_left_alone():
    x = f32("x")
    f = Function((x,), x)
    assert to_a_normal_form(f) is f
    assert to_a_normal_form(x) is x


def test_non_function_roots():
    x = f32("x")
    out = to_a_normal_form(relay.add(relay.exp(x), x))
    # The let variable is named before its value is printed (it may be recursive), so
    # the free %x, first reached in that value, is written %x1.
    assert (
        pretty_print(out)
        == "free_var %x1: float32;\nlet %x = exp(%x1);\nlet %x2 = add(%x, %x1);\n%x2"
    )


def test_checked_types_carried_to_new_nodes():
    from relay_nb.transform.infer_type import InferType

    mod = InferType()(IRModule.from_expr(CASES["seed004_dag"]()))
    out = to_a_normal_form(mod["main"])
    assert (
        "let %x1 /* ty=Tensor[(2, 3), float32] */ = log(%x) /* ty=Tensor[(2, 3), float32] */;"
        in astext(out)
    )


# -- properties over the test programs --------------------------------------------------------


def functions_of(obj):
    if isinstance(obj, IRModule):
        return list(obj.functions.values())
    return [obj]


@pytest.mark.parametrize("name", sorted(CASES))
def test_cases_are_anf_idempotent_and_pure(name):
    for fn in functions_of(CASES[name]()):
        before = astext(fn, show_types=False)
        out = to_a_normal_form(fn)
        assert astext(fn, show_types=False) == before  # the input is not modified
        assert_anf(out)
        again = to_a_normal_form(out)
        assert_structural_equal(again, out, map_free_vars=True)
        assert astext(again) == astext(out)


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_compound_node_bound_once(name):
    """A DAG stays a DAG: n distinct computations give n bindings, not one per use."""
    for fn in functions_of(CASES[name]()):
        root = fn.body if isinstance(fn, Function) else fn
        compound = [
            n for n in post_order(root)
            if isinstance(n, (Call, Tuple, TupleGetItem, If, Match, Function, relay.RefCreate, relay.RefRead, relay.RefWrite))
        ]  # fmt: skip
        if fn.attrs.get("Primitive") if isinstance(fn, Function) else False:
            continue
        out = to_a_normal_form(fn)
        out_root = out.body if isinstance(out, Function) else out
        lets = [n for n in post_order(out_root) if isinstance(n, Let)]
        original_lets = [n for n in post_order(root) if isinstance(n, Let)]
        # Every compound node gets one binding of its own, plus the lets that existed.
        assert len(lets) <= len(compound) + len(original_lets)
        bound = [n.value for n in lets if not isinstance(n.value, ATOMS)]
        assert len(bound) == len(set(map(id, bound)))


# -- size ---------------------------------------------------------------------------------------


def test_100k_let_chain_and_dataflow_chain():
    assert sys.getrecursionlimit() <= 1100
    x = f32("x")
    body: Expr = x
    vs = [relay.var("v") for _ in range(100_000)]
    for i in range(len(vs) - 1, -1, -1):
        body = Let(vs[i], relay.add(vs[i - 1] if i else x, x), body)
    out = to_a_normal_form(Function((x,), body))
    assert_anf(out)
    e: Expr = x
    for _ in range(100_000):
        e = relay.add(e, e)
    out = to_a_normal_form(Function((x,), e))
    n = 0
    node = out.body
    while isinstance(node, Let):
        n += 1
        node = node.body
    assert n == 100_000


def test_deep_branch_nesting():
    x, c = f32("x"), relay.var("c", "bool")
    shared = relay.exp(x)
    e: Expr = relay.add(shared, x)
    for _ in range(2_000):
        e = If(c, e, relay.negative(shared))
    out = to_a_normal_form(Function((x, c), e))
    assert pretty_print(out).count("exp(") == 1
    assert_anf(out)


def test_let_values_printed_in_place_or_through_the_driver_and_located():
    """A let whose value is a call of printed operands is written by ``_g_let`` itself;
    one whose operands are not printed yet, or whose value is shared (hoisted as %N),
    goes through the driver: the text is the same either way, and every located node's
    position points at its own text."""
    from relay_nb.viz.locate import locate

    x = relay.var("x", shape=(2,))
    shared = relay.log(x)  # a graph node used by a let value: printed first as %0
    a, b, c, d = (relay.var(n) for n in "abcd")
    twice = relay.exp(x)  # one call bound by two lets: hoisted once
    body = relay.Let(
        a,
        relay.add(shared, shared),
        relay.Let(b, relay.add(a, relay.const(1.0)), relay.Let(c, twice, relay.Let(d, twice, relay.Tuple([b, c, d])))),
    )
    fn = relay.Function([x], body)
    expected = [
        "fn (%x: Tensor[(2), float32]) {",
        "  %0 = log(%x);",
        "  let %a = add(%0, %0);",
        "  let %b = add(%a, 1f);",
        "  %1 = exp(%x);",
        "  let %c = %1;",
        "  let %d = %1;",
        "  (%b, %c, %d)",
        "}",
    ]
    assert relay.astext(fn).splitlines()[1:] == expected
    located = locate(fn)
    assert located.text.splitlines()[1:] == expected
    lines = located.text.split("\n")
    seen = 0
    for node, (line, column) in located.positions.items():
        at = lines[line - 1][column - 1 :]
        if isinstance(node, Call):
            assert at.startswith(node.op.name + "("), (at, node)
        elif isinstance(node, Var):
            assert at.startswith(located.names[node]), (at, node)
        elif isinstance(node, Constant):
            assert at.startswith("1f"), at
        seen += 1
    assert seen >= 11 and located.names[twice] == "%1"
    assert located.positions[twice] == (6, 8) and located.positions[d] == (8, 7)
