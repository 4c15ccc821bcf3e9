"""The type language's machinery: unification, the solver, kinds, type text, exhaustiveness."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from relay_nb.errors import RelayTypeError
from relay_nb.ir.adt import TypeData
from relay_nb.ir.expr import (
    Call,
    Clause,
    Constructor,
    Function,
    Match,
    PatternConstructor,
    PatternTuple,
    PatternVar,
    PatternWildcard,
    var,
)
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
from relay_nb.typing.exhaustive import unmatched_cases
from relay_nb.typing.infer import global_sccs
from relay_nb.typing.kinds import check_kinds
from relay_nb.typing.relations import broadcast_rel
from relay_nb.typing.solver import TypeSolver
from relay_nb.typing.text import type_text
from relay_nb.typing.unify import Unifier, UnifyError, is_ground, literal_fits, subst


def T(*shape, dtype="float32"):
    return TensorType(tuple(shape), dtype)


# --- type text ----------------------------------------------------------------------------


def test_type_text():
    a = TypeVar("A")
    lst = GlobalTypeVar("List")
    assert type_text(T()) == "float32"
    assert type_text(T(2)) == "Tensor[(2), float32]"
    assert type_text(TensorType((Any, 3), "int8")) == "Tensor[(?, 3), int8]"
    assert type_text(TupleType(())) == "()"
    assert type_text(TupleType((T(),))) == "(float32,)"
    assert type_text(FuncType((a,), a, (a,))) == "fn [A](A) -> A"
    assert type_text(RefType(T())) == "ref(float32)"
    assert type_text(TypeCall(lst, (a,))) == "List[A]"
    assert type_text(TypeCall(GlobalTypeVar("Nat"), ())) == "Nat[]"
    assert type_text(IncompleteType()) == "_"
    b, c = TypeVar("B"), TypeVar("C")
    ft = FuncType((a, b), c, (a, b, c), (TypeRelation(broadcast_rel, (a, b, c), 2, None),))
    assert type_text(ft) == "fn [A, B, C](A, B) -> C where Broadcast(A, B, C)"


# --- unification --------------------------------------------------------------------------


def test_unify_binds_unknowns_through_structure():
    u = Unifier()
    x, y = IncompleteType(), IncompleteType()
    u.unify(TupleType((x, T(2))), TupleType((T(3), y)))
    assert u.resolve(x) == T(3) and u.resolve(y) == T(2)
    s, d = IncompleteType(Kind.ShapeVar), IncompleteType(Kind.BaseType)
    u.unify(TensorType(s, d), T(4, 5, dtype="int8"))
    assert u.resolve(TensorType(s, d)) == T(4, 5, dtype="int8")
    dim = IncompleteType(Kind.ShapeVar)
    u.unify(TensorType((dim, 3), "float32"), T(7, 3))
    assert u.find(dim) == 7


def test_unify_chains_and_path_compression():
    u = Unifier()
    xs = [IncompleteType() for _ in range(50)]
    for a, b in zip(xs, xs[1:]):
        u.unify(a, b)
    u.unify(xs[0], T(1))
    assert all(u.resolve(x) == T(1) for x in xs)


def test_unify_mismatches():
    u = Unifier()
    with pytest.raises(UnifyError, match="dtype mismatch: float32 vs int32"):
        u.unify(T(2), T(2, dtype="int32"))
    with pytest.raises(UnifyError, match="shape mismatch: \\(2, 3\\) vs \\(4, 3\\)"):
        u.unify(T(2, 3), T(4, 3))
    with pytest.raises(UnifyError, match="shape mismatch"):
        u.unify(T(2), T(2, 1))
    with pytest.raises(UnifyError, match="type mismatch"):
        u.unify(TupleType((T(),)), TupleType((T(), T())))
    with pytest.raises(UnifyError, match="type mismatch"):
        u.unify(T(), RefType(T()))
    with pytest.raises(UnifyError, match="type mismatch"):
        u.unify(TypeVar("a"), TypeVar("a"))  # two binders, not the same variable


def test_any_dim_matches_any_dim():
    u = Unifier()
    u.unify(TensorType((Any, 3), "float32"), T(5, 3))  # Any against a number
    u.unify(TensorType((Any, 3), "float32"), TensorType((7, Any), "float32"))  # both sides
    d = IncompleteType()
    u.unify(TensorType((Any, d), "float32"), T(5, 3))
    assert u.resolve(d) == 3  # the dims next to an Any are still unified
    # Any matches one dimension, nothing more: the other dims, the rank and the dtype count
    with pytest.raises(UnifyError, match="shape mismatch"):
        u.unify(TensorType((Any, 3), "float32"), T(5, 4))
    with pytest.raises(UnifyError, match="shape mismatch"):
        u.unify(TensorType((Any, 3), "float32"), T(5, 3, 1))
    with pytest.raises(UnifyError, match="dtype mismatch"):
        u.unify(TensorType((Any, 3), "int32"), T(5, 3))


def test_occurs_check():
    u = Unifier()
    x = IncompleteType()
    with pytest.raises(UnifyError, match="infinite type"):
        u.unify(x, TupleType((x, T())))
    with pytest.raises(UnifyError, match="infinite type"):
        u.unify(x, FuncType((x,), T()))


def test_function_types_alpha_equivalent_and_instantiated():
    u = Unifier()
    a, b = TypeVar("a"), TypeVar("b")
    u.unify(FuncType((a,), a, (a,)), FuncType((b,), b, (b,)))
    # a polymorphic function where a monomorphic one is expected: instantiated
    u.unify(FuncType((a,), a, (a,)), FuncType((T(),), T()))
    with pytest.raises(UnifyError):
        u.unify(FuncType((a,), a, (a,)), FuncType((T(),), T(dtype="int32")))


def test_literal_dtypes():
    assert literal_fits("int32", "float16") and literal_fits("int32", "uint8")
    assert literal_fits("float32", "float64") and not literal_fits("float32", "int32")
    assert not literal_fits("int32", "bool") and literal_fits("bool", "bool")
    u = Unifier()
    lit_i = u.literal_dtype("int32")
    u.unify(TensorType((), lit_i), T(dtype="float64"))
    assert u.find(lit_i) == "float64"
    lit_f = u.literal_dtype("float32")
    with pytest.raises(UnifyError, match="dtype mismatch: int8 vs float32 \\(a float literal\\)"):
        u.unify(TensorType((), lit_f), T(dtype="int8"))
    # two literals merge; the float default wins; a plain unknown takes the literal
    l1, l2, plain = (
        u.literal_dtype("int32"),
        u.literal_dtype("float32"),
        IncompleteType(Kind.BaseType),
    )
    u.unify_dtype(l1, l2)
    u.unify_dtype(plain, l1)
    r = u.find(plain)
    assert isinstance(r, IncompleteType) and r.default == "float32"


def test_subst_and_ground():
    a, s, d = TypeVar("a"), TypeVar("s", Kind.ShapeVar), TypeVar("d", Kind.BaseType)
    t = TupleType((a, TensorType(s, d), FuncType((a,), a, (a,))))
    out = subst(t, {a: T(), s: (2,), d: "int8"})
    assert out.fields[0] == T() and out.fields[1] == T(2, dtype="int8")
    assert out.fields[2].arg_types[0] is a  # shadowed by the inner binder
    assert is_ground(out) and not is_ground(TupleType((IncompleteType(),)))


@given(
    st.lists(st.integers(0, 4), min_size=0, max_size=4),
    st.lists(st.integers(0, 4), min_size=0, max_size=4),
)
def test_unify_tensor_types_agrees_with_equality(s1, s2):
    u = Unifier()
    a, b = T(*s1), T(*s2)
    try:
        u.unify(a, b)
        ok = True
    except UnifyError:
        ok = False
    assert ok == (a == b)


# --- the solver ---------------------------------------------------------------------------


def test_relations_are_parked_and_woken():
    solver = TypeSolver()
    x, y, out = IncompleteType(), IncompleteType(), IncompleteType()
    p = solver.add_relation(broadcast_rel, (x, y, out), 2, None, None, "add")
    assert not p.done
    solver.unify(x, T(2, 3))
    solver.drain()
    assert not p.done  # still waiting for y
    solver.unify(y, T(3))
    solver.drain()
    assert p.done and solver.resolve(out) == T(2, 3)


def test_relation_errors_are_prefixed():
    solver = TypeSolver()
    with pytest.raises(RelayTypeError, match="add: shapes \\(2,\\) and \\(3,\\) do not broadcast"):
        solver.add_relation(broadcast_rel, (T(2), T(3), IncompleteType()), 2, None, None, "add")


def test_instantiate_queues_constraints():
    solver = TypeSolver()
    a, b, c = TypeVar("a"), TypeVar("b"), TypeVar("c")
    ft = FuncType((a, b), c, (a, b, c), (TypeRelation(broadcast_rel, (a, b, c), 2, None),))
    mono, inst = solver.instantiate(ft, None, "@f")
    assert len(inst) == 3 and not mono.type_params
    solver.unify(mono.arg_types[0], T(4, 1))
    solver.unify(mono.arg_types[1], T(5))
    solver.drain()
    assert solver.resolve(mono.ret_type) == T(4, 5)


# --- kinds ----------------------------------------------------------------------------------


def test_check_kinds():
    s, bt, a = TypeVar("s", Kind.ShapeVar), TypeVar("bt", Kind.BaseType), TypeVar("a")
    assert check_kinds(TensorType(s, bt)) == TensorType(s, bt)
    assert check_kinds(TensorType((s, 3), "float32"))
    for bad, msg in [
        (s, "has kind Shape and cannot be used as a type"),
        (TensorType(a, "float32"), "used as a shape"),
        (TensorType((bt,), "float32"), "used as a dimension"),
        (TensorType((1,), a), "used as a dtype"),
        (TensorType((-1,), "float32"), "negative dimension"),
        (TensorType((1,), "float33"), "unknown dtype"),
    ]:
        with pytest.raises(RelayTypeError, match=msg):
            check_kinds(bad)
    nat = GlobalTypeVar("Nat")
    mod = IRModule()
    mod.add_type(TypeData(nat, (), (Constructor("Z", (), nat),)))
    assert check_kinds(nat, mod) == TypeCall(nat, ())
    with pytest.raises(RelayTypeError, match="type Nat expects 0 type arguments, got 1"):
        check_kinds(TypeCall(nat, (T(),)), mod)


# --- exhaustiveness -------------------------------------------------------------------------


def test_unmatched_cases():
    lst = GlobalTypeVar("List")
    a = TypeVar("A")
    cons = Constructor("Cons", (a, TypeCall(lst, (a,))), lst, 0)
    nil = Constructor("Nil", (), lst, 1)
    mod = IRModule()
    mod.add_type(TypeData(lst, (a,), (cons, nil)))
    x = var("x")

    def m(*pats):
        return Match(x, [Clause(p, x) for p in pats])

    assert unmatched_cases(m(PatternWildcard()), mod) == []
    assert unmatched_cases(m(PatternConstructor(nil)), mod) == ["Cons(_, _)"]
    assert (
        unmatched_cases(
            m(
                PatternConstructor(nil),
                PatternConstructor(cons, [PatternVar(var("h")), PatternWildcard()]),
            ),
            mod,
        )
        == []
    )
    assert unmatched_cases(
        m(PatternConstructor(cons, [PatternWildcard(), PatternConstructor(nil)])), mod
    ) == [
        "Cons(_, Cons(_, _))",
        "Nil",
    ]
    assert unmatched_cases(m(PatternTuple([PatternConstructor(nil), PatternWildcard()])), mod) == [
        "(Cons(_, _), _)"
    ]


# --- the call graph -------------------------------------------------------------------------


def test_global_sccs_callees_first():
    mod = IRModule()
    names = ["main", "a", "b", "leaf"]
    gv = {n: mod.intern_global_var(n) for n in names}
    mod.add("main", Function([], Call(gv["a"], ())))
    mod.add("a", Function([], Call(gv["b"], ())))
    mod.add("b", Function([], Call(gv["a"], (Call(gv["leaf"], ()),))))
    mod.add("leaf", Function([], Call(gv["leaf"], ())))
    sccs = global_sccs(mod)
    assert sccs == [["leaf"], ["a", "b"], ["main"]]
