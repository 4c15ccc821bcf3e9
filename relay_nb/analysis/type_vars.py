"""Type variables of types and expressions: free, bound and all (TVM's names).

A type variable is *bound* by the ``type_params`` of a :class:`Function` or of a
:class:`FuncType`; it is *free* where it is used outside every binder of it.  In an
expression, type variables occur in parameter and ``let`` annotations, return types,
call type arguments, and the binders' own ``type_params``.

>>> f = relay.parse_expr("fn [A](%x: A) -> A { %x }")
>>> free_type_vars(f), [t.name_hint for t in bound_type_vars(f)]
([], ['A'])

Iterative over expressions (any depth) and types.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..ir.expr import Call, Expr, Function, Var
from ..ir.functor import expr_children, post_order
from ..ir.ty import (
    FuncType,
    IncompleteType,
    RefType,
    TensorType,
    TupleType,
    Type,
    TypeCall,
    TypeRelation,
    TypeVar,
)


def _type_occurrences(ty: Type) -> Iterator[tuple[TypeVar, frozenset]]:
    """Each TypeVar occurring in ``ty`` with the FuncType-bound vars around it."""
    stack: list[tuple[object, frozenset]] = [(ty, frozenset())]
    while stack:
        t, bound = stack.pop()
        if isinstance(t, TypeVar):
            yield t, bound
        elif isinstance(t, TensorType):
            # Shape or dtype may be type variables in polymorphic signatures.
            if isinstance(t.shape, tuple):
                stack.extend((d, bound) for d in reversed(t.shape) if isinstance(d, TypeVar))
            else:
                stack.append((t.shape, bound))
            if isinstance(t.dtype, TypeVar):
                stack.append((t.dtype, bound))
        elif isinstance(t, TupleType):
            stack.extend((f, bound) for f in reversed(t.fields))
        elif isinstance(t, FuncType):
            inner = bound | frozenset(t.type_params)
            for tp in reversed(t.type_params):
                yield tp, inner  # a binder occurrence, bound by definition
            stack.extend((c, inner) for c in reversed(t.type_constraints))
            stack.append((t.ret_type, inner))
            stack.extend((a, inner) for a in reversed(t.arg_types))
        elif isinstance(t, RefType):
            stack.append((t.value, bound))
        elif isinstance(t, TypeCall):
            stack.extend((a, bound) for a in reversed(t.args))
            stack.append((t.func, bound))
        elif isinstance(t, TypeRelation):
            stack.extend((a, bound) for a in reversed(t.args))
        elif isinstance(t, IncompleteType):
            pass


def _expr_types(node: Expr) -> list[Type]:
    """The types written on ``node`` itself (annotations, type args)."""
    t = type(node)
    out: list[Type] = []
    if t is Var and node.type_annotation is not None:
        out.append(node.type_annotation)
    elif t is Function:
        out.extend(node.type_params)
        out.extend(p.type_annotation for p in node.params if p.type_annotation is not None)
        if node.ret_type is not None:
            out.append(node.ret_type)
    elif t is Call:
        out.extend(node.type_args)
    return out


def _occurrences(e: Expr | Type) -> Iterator[tuple[TypeVar, bool]]:
    """(type var, is it bound there?) for every occurrence, in order."""
    if isinstance(e, Type):
        for tv, bound in _type_occurrences(e):
            yield tv, tv in bound
        return
    # The type variables bound around each node: a function's type params scope over
    # its annotations and body.  Parents are reached before children in reverse post
    # order; a DAG node shared under different binders keeps the intersection (a
    # variable is free there if it is free in some reading).
    around: dict[Expr, frozenset] = {e: frozenset()}
    inside: dict[Function, frozenset] = {}
    order = list(post_order(e))
    for node in reversed(order):
        scope = around.get(node, frozenset())
        if type(node) is Function:
            scope = inside[node] = scope | frozenset(node.type_params)
        for child in expr_children(node):
            prev = around.get(child)
            around[child] = scope if prev is None else prev & scope
    for node in order:
        scope = inside[node] if type(node) is Function else around.get(node, frozenset())
        for ty in _expr_types(node):
            for tv, bound in _type_occurrences(ty):
                yield tv, tv in bound or tv in scope


def _unique(items: Iterator[TypeVar]) -> list[TypeVar]:
    seen: set = set()
    out = []
    for tv in items:
        if tv not in seen:
            seen.add(tv)
            out.append(tv)
    return out


def all_type_vars(e: Expr | Type, mod: object = None) -> list[TypeVar]:
    """Every type variable occurring in ``e`` (an expression or a type), in order."""
    return _unique(tv for tv, _ in _occurrences(e))


def bound_type_vars(e: Expr | Type, mod: object = None) -> list[TypeVar]:
    """Type variables bound in ``e`` by a function's or function type's type params."""
    return _unique(tv for tv, bound in _occurrences(e) if bound)


def free_type_vars(e: Expr | Type, mod: object = None) -> list[TypeVar]:
    """Type variables used in ``e`` outside every binder of them, in order.

    >>> free_type_vars(relay.parse_expr("fn [A](%x: A, %y: B) { %x }"))   # [B]
    """
    return _unique(tv for tv, bound in _occurrences(e) if not bound)


__all__ = ["all_type_vars", "bound_type_vars", "free_type_vars"]
