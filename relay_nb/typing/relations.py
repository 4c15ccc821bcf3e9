"""Type relations: the constraints operators (and ``where`` clauses) put on types.

A relation is called by the solver of :mod:`relay_nb.typing.infer` as::

    rel(types, num_inputs, attrs, reporter) -> bool

``types`` are the argument types followed by the result type(s), already resolved as far
as the solver knows them (an unknown is an :class:`IncompleteType`).  The relation either
returns ``False`` (not enough is known yet: the solver calls it again later), or records
what it can conclude with ``reporter.assign(a, b)`` (unify) and returns ``True`` (solved).
A relation that finds the types inconsistent raises :class:`RelayTypeError` with a message
without location such as ``shapes (2, 3) and (4, 3) do not broadcast``; the solver adds the
operator name and the call's source location.

Most operators compute their output from their inputs; :func:`forward_relation` turns such
a function into a relation.  Dtypes of unsuffixed literals are unknowns of kind BaseType
(``IncompleteType(Kind.BaseType, default="int32")``); use ``reporter.unify_dtype`` to
compare dtypes so a literal takes the dtype its context needs (seed 000's ``%f(10, 11)``).
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Protocol, Sequence

from ..errors import RelayTypeError
from ..ir.ty import Any as AnyDimValue
from ..ir.ty import IncompleteType, Kind, TensorType, TupleType, Type, TypeVar


class AttrValueError(RelayTypeError):
    """A relation's complaint about the value of attribute ``attr``: the solver points the
    caret at that attribute (``shape=[2, -3]``) rather than at the whole call."""

    def __init__(self, attr: str, message: str):
        super().__init__(message)
        self.attr = attr


def check_dims(dims: Sequence[Any], attr: str, what: str = "") -> None:
    """A result shape taken (or computed) from attribute ``attr`` has no negative static
    dimension; numpy and the JIT would only fail at run time, with a raw ValueError."""
    bad = [d for d in dims if type(d) is int and d < 0]
    if bad:
        shown = what or f"{attr} {list(dims)}"
        raise AttrValueError(attr, f"{shown} gives a negative dimension {bad[0]}")


class TypeReporter(Protocol):
    """What a relation may ask of the solver."""

    def assign(self, a: Type, b: Type) -> None:
        """Unify ``a`` and ``b``; raises RelayTypeError when they cannot be equal."""

    def resolve(self, t: Type) -> Type:
        """``t`` with every solved unknown replaced by its solution."""

    def unify_dtype(self, a: Any, b: Any) -> Any:
        """Unify two dtypes (strings or BaseType unknowns); returns the common one."""

    def fresh(self, kind: Kind = Kind.Type) -> IncompleteType:
        """A new unknown."""


class Relation:
    """A named type relation (``Broadcast``, ``Identity``, ``Conv2D``...)."""

    __slots__ = ("name", "fn")

    def __init__(self, name: str, fn: Callable[..., bool]):
        self.name = name
        self.fn = fn

    def __call__(self, types: list[Type], num_inputs: int, attrs: Any, reporter: TypeReporter) -> bool:
        return self.fn(types, num_inputs, attrs, reporter)

    def __repr__(self) -> str:
        return f"Relation({self.name})"


def is_known(t: Type) -> bool:
    """True when ``t`` is concrete enough for a forward relation to compute from it.

    Unknown types, and tensors whose *shape* is unknown, are not; a dtype unknown (from a
    literal) is fine — relations unify dtypes through the reporter.
    """
    if isinstance(t, (IncompleteType, TypeVar)):
        return False
    if isinstance(t, TensorType):
        return isinstance(t.shape, tuple) and not any(isinstance(d, (IncompleteType, TypeVar)) for d in t.shape)
    if isinstance(t, TupleType):
        return all(is_known(f) for f in t.fields)
    return True


def forward_relation(name: str) -> Callable[[Callable[..., Type]], Relation]:
    """Make a relation from ``fn(inputs, attrs, reporter) -> output type``.

    The relation waits until every input :func:`is_known`, then assigns the output.
    """

    def deco(fn: Callable[..., Type]) -> Relation:
        def rel(types: list[Type], num_inputs: int, attrs: Any, reporter: TypeReporter) -> bool:
            inputs = types[:num_inputs]
            if not all(is_known(t) for t in inputs):
                return False
            out = fn(inputs, attrs, reporter)
            reporter.assign(types[num_inputs], out)
            return True

        rel.__doc__ = fn.__doc__
        return Relation(name, rel)

    return deco


def expect_tensor(t: Type, what: str = "argument") -> TensorType:
    """``t`` as a TensorType, or a RelayTypeError saying what was found instead."""
    if not isinstance(t, TensorType):
        from .text import type_text

        raise RelayTypeError(f"{what} must be a tensor, found {type_text(t)}")
    return t


def shape_text(shape: Sequence[Any]) -> str:
    """``(2, 3)`` / ``(5,)`` / ``()`` with ``?`` for dynamic dims, as messages show shapes."""
    dims = ["?" if d is AnyDimValue else str(d) for d in shape]
    if len(dims) == 1:
        return f"({dims[0]},)"
    return "(" + ", ".join(dims) + ")"


def broadcast_shapes(a: Sequence[Any], b: Sequence[Any]) -> tuple[Any, ...]:
    """NumPy broadcasting of two static/dynamic shapes; RelayTypeError if they clash."""
    out = []
    for i in range(max(len(a), len(b))):
        da = a[len(a) - 1 - i] if i < len(a) else 1
        db = b[len(b) - 1 - i] if i < len(b) else 1
        if da is AnyDimValue or db is AnyDimValue:
            other = db if da is AnyDimValue else da
            out.append(AnyDimValue if other is AnyDimValue or other == 1 else other)
        elif da == db or db == 1:
            out.append(da)
        elif da == 1:
            out.append(db)
        else:
            raise RelayTypeError(f"shapes {shape_text(a)} and {shape_text(b)} do not broadcast")
    return tuple(reversed(out))


@forward_relation("Identity")
def identity_rel(inputs: list[Type], attrs: Any, reporter: TypeReporter) -> Type:
    """The output has the type of the (first) input."""
    return inputs[0]


@forward_relation("Broadcast")
def broadcast_rel(inputs: list[Type], attrs: Any, reporter: TypeReporter) -> Type:
    """Two tensors of one dtype; the output shape is their NumPy broadcast."""
    a = expect_tensor(inputs[0], "left operand")
    b = expect_tensor(inputs[1], "right operand")
    dtype = reporter.unify_dtype(a.dtype, b.dtype)
    return TensorType(broadcast_shapes(a.shape, b.shape), dtype)


@forward_relation("BroadcastComp")
def broadcast_comp_rel(inputs: list[Type], attrs: Any, reporter: TypeReporter) -> Type:
    """As Broadcast, but the output is ``bool`` (comparisons)."""
    a = expect_tensor(inputs[0], "left operand")
    b = expect_tensor(inputs[1], "right operand")
    reporter.unify_dtype(a.dtype, b.dtype)
    return TensorType(broadcast_shapes(a.shape, b.shape), "bool")


RELATIONS: dict[str, Relation] = {
    r.name: r for r in (identity_rel, broadcast_rel, broadcast_comp_rel)
}
"""Relations usable by name in ``where`` clauses (``fn (%x, %y) where Broadcast {...}``)."""


def register_relation(rel: Relation) -> Relation:
    """Make ``rel`` usable by name in ``where`` clauses."""
    RELATIONS[rel.name] = rel
    return rel


def lookup_relation(name: str) -> Optional[Relation]:
    return RELATIONS.get(name)


__all__ = [
    "AttrValueError",
    "check_dims",
    "TypeReporter",
    "Relation",
    "is_known",
    "forward_relation",
    "expect_tensor",
    "shape_text",
    "broadcast_shapes",
    "identity_rel",
    "broadcast_rel",
    "broadcast_comp_rel",
    "RELATIONS",
    "register_relation",
    "lookup_relation",
]
