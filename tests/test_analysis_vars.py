"""Free/bound/all type variables, the analysis namespace, unmatched_cases, effects."""

from __future__ import annotations

import relay_nb as relay
from relay_nb.analysis import (
    all_type_vars,
    bound_type_vars,
    free_type_vars,
    free_vars,
    post_order_visit,
    unmatched_cases,
)
from relay_nb.analysis.effects import Effects
from relay_nb.ir.expr import Call, Function, Var
from relay_nb.ir.ty import FuncType, TensorType, TupleType, TypeVar
from relay_nb.op.registry import get_op


def test_type_vars_of_types():
    a, b = TypeVar("A"), TypeVar("B")
    t = FuncType((a, TupleType((b,))), a, (a,))
    assert free_type_vars(t) == [b]
    assert bound_type_vars(t) == [a]
    assert set(all_type_vars(t)) == {a, b}


def test_type_vars_of_expressions():
    a, b = TypeVar("A"), TypeVar("B")
    x, y = Var("x", a), Var("y", b)
    f = Function((x, y), x, a, (a,))
    assert free_type_vars(f) == [b]
    assert bound_type_vars(f) == [a]
    inner = Function((y,), y, b)  # B free in the inner function, bound by the outer one
    outer = Function((Var("z"),), inner, None, (b,))
    assert free_type_vars(inner) == [b]
    assert free_type_vars(outer) == []


def test_type_vars_in_call_type_args_and_shapes():
    s = TypeVar("s")
    x = Var("x", TensorType(s, "float32"))
    call = Call(get_op("log"), (x,), None, (TensorType((2,), TypeVar("d")),))
    assert {t.name_hint for t in free_type_vars(call)} == {"s", "d"}


def test_parsed_polymorphic_function():
    f = relay.parse_expr("fn [A](%x: A) -> A { %x }")
    assert free_type_vars(f) == []
    assert [t.name_hint for t in bound_type_vars(f)] == ["A"]


def test_namespace_exports():
    seen = []
    post_order_visit(relay.parse_expr("fn (%x) { log(%x) }"), seen.append)
    assert type(seen[-1]).__name__ == "Function"
    assert relay.analysis.free_vars is free_vars
    assert relay.analysis.well_formed(relay.parse_expr("fn (%x) { %x }"))


def test_unmatched_cases_is_exported():
    mod = relay.parse(
        """
        type List[A] { Cons(A, List[A]), Nil }
        def @main(%l: List[float32]) { match? (%l) { Cons(%h, Nil) => %h } }
        """
    )
    match = mod["main"].body
    assert sorted(unmatched_cases(match, mod)) == ["Cons(_, Cons(_, _))", "Nil"]


def test_effects():
    mod = relay.parse(
        """
        def @writes(%r: ref(float32)) { ref_write(%r, 1f) }
        def @pure(%x: float32) { add(%x, %x) }
        def @main(%x: float32, %f: fn (float32) -> float32) {
          let %r = ref(%x);
          (@writes(%r), @pure(%x), ref_read(%r), %f(%x), fn () { ref_write(%r, 2f) })
        }
        """
    )
    fx = Effects(mod)
    tup = mod["main"].body.body
    w, p, read, unknown, closure = tup.fields
    assert fx.writes(w) and fx.touches_refs(w)
    assert fx.pure(p)
    assert fx.touches_refs(read) and not fx.writes(read)
    assert fx.writes(unknown)  # a call to a parameter may do anything
    assert fx.pure(closure)  # making a closure runs nothing
    # A module without references has no effects at all.
    clean = relay.parse("def @main(%x: float32, %f: fn (float32) -> float32) { %f(%x) }")
    assert Effects(clean).pure(clean["main"].body)
