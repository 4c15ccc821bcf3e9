"""Relay types.

Types are *values*: frozen dataclasses compared structurally, so ``TensorType((2, 3),
"float32") == TensorType((2, 3), "float32")``.  The exceptions are the type-level
*variables* (``TypeVar``, ``IncompleteType``), which, like expression ``Var``s, are
identities: two ``TypeVar("a")`` are different binders.  ``GlobalTypeVar`` (the name of an
ADT) compares by name, because a module has at most one ADT of a given name.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any as _PyAny
from typing import Callable, Optional, Union

from .span import Span


class Kind(enum.IntEnum):
    """Kinds of type variables (TVM numbering)."""

    Type = 0
    ShapeVar = 1
    BaseType = 2
    Constraint = 4
    AdtHandle = 5
    TypeData = 6


class Type:
    """Base of every Relay type."""

    __slots__ = ()

    def __str__(self) -> str:  # pragma: no cover - thin delegation
        from ..syntax.printer import type_to_text

        return type_to_text(self)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self}>"

    # -- notebook display (relay_nb.viz.html: highlighted text, types on hover) ---------
    def _repr_html_(self) -> str:
        from ..viz.html import repr_html

        return repr_html(self)

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        from ..viz.html import mimebundle

        return mimebundle(self, include, exclude)

    def is_dynamic(self) -> bool:
        return False


class AnyDim:
    """A dynamic dimension, written ``?`` in the text format."""

    __slots__ = ()
    _instance: "AnyDim | None" = None

    def __new__(cls) -> "AnyDim":
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "?"

    def __reduce__(self):
        return (AnyDim, ())


Any = AnyDim()
"""The dynamic dimension ``?`` (a singleton)."""

Dim = Union[int, AnyDim, "TypeVar", "IncompleteType"]
"""A shape dimension: a static int, ``Any``, or (during inference) an unknown."""


@dataclass(frozen=True, slots=True, eq=False)
class TypeVar(Type):
    """A type parameter (``A`` in ``fn [A](%x: A) -> A``). Identity, like ``Var``."""

    name_hint: str
    kind: Kind = Kind.Type
    span: Optional[Span] = field(default=None, repr=False)


@dataclass(frozen=True, slots=True, eq=False)
class IncompleteType(Type):
    """An unknown to be solved by type inference (``_`` in the text format)."""

    kind: Kind = Kind.Type
    hint: str = ""
    # For dtype unknowns created for unsuffixed literals: the dtype they default to
    # when nothing constrains them ("int32" or "float32"); "" for ordinary unknowns.
    default: str = field(default="", repr=False)


@dataclass(frozen=True, slots=True)
class GlobalTypeVar(Type):
    """The name of an ADT (``List`` in ``List[A]``); compared by name."""

    name_hint: str
    kind: Kind = field(default=Kind.AdtHandle, compare=False)


@dataclass(frozen=True, slots=True)
class TensorType(Type):
    """``Tensor[(d0, d1, ...), dtype]``; rank 0 is a scalar such as ``float32``.

    ``shape`` is a tuple of dims, or a ``TypeVar`` of kind ShapeVar for shape-polymorphic
    signatures (``Tensor[s, bt]``); ``dtype`` is a dtype string, or a TypeVar of kind
    BaseType / an IncompleteType during inference.
    """

    shape: _PyAny = ()
    dtype: _PyAny = "float32"
    span: Optional[Span] = field(default=None, compare=False, repr=False)

    @property
    def concrete_shape(self) -> tuple[int, ...]:
        """The shape as ints; raises ValueError if any dim is not static."""
        if not isinstance(self.shape, tuple) or not all(type(d) is int for d in self.shape):
            raise ValueError(f"shape of {self} is not static")
        return self.shape  # type: ignore[return-value]

    def is_dynamic(self) -> bool:
        return isinstance(self.shape, tuple) and any(d is Any for d in self.shape)


def complex_dtype_message(dtype: _PyAny) -> str:
    """Why a complex dtype is refused.  Relay (like TVM) has no complex tensors; numpy
    makes them easy to create by accident (``1j``), and accepting one half way would
    silently drop the imaginary part, so every entry point refuses them in these words."""
    return (
        f"complex dtype {dtype} is not supported: Relay has no complex tensors (neither has "
        "TVM); keep the real and imaginary parts in two float tensors"
    )


def is_complex_dtype(dtype: _PyAny) -> bool:
    """True for ``complex64`` / ``complex128`` (a string or a numpy dtype)."""
    if isinstance(dtype, str):
        return dtype.startswith("complex")
    return getattr(dtype, "kind", None) == "c"


def scalar_type(dtype: str) -> TensorType:
    """The rank-0 tensor type of ``dtype`` (``scalar_type("bool")`` is ``bool``)."""
    return TensorType((), dtype)


@dataclass(frozen=True, slots=True)
class TupleType(Type):
    """``(T1, T2, ...)``; ``()`` is the unit type."""

    fields: tuple[Type, ...] = ()
    span: Optional[Span] = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.fields, tuple):
            object.__setattr__(self, "fields", tuple(self.fields))


@dataclass(frozen=True, slots=True)
class TypeRelation(Type):
    """A type constraint ``Rel(args...)`` solved by an externally defined relation.

    ``func`` is a :class:`relay_nb.typing.relations.Relation`; the last ``args`` entry
    is the output when ``num_inputs == len(args) - 1``.
    """

    func: _PyAny
    args: tuple[Type, ...]
    num_inputs: int
    attrs: _PyAny = None


@dataclass(frozen=True, slots=True)
class FuncType(Type):
    """``fn [A, B](T1, T2) -> R`` with optional relation constraints."""

    arg_types: tuple[Type, ...]
    ret_type: Type
    type_params: tuple[TypeVar, ...] = ()
    type_constraints: tuple[TypeRelation, ...] = ()
    span: Optional[Span] = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        for name in ("arg_types", "type_params", "type_constraints"):
            value = getattr(self, name)
            if not isinstance(value, tuple):
                object.__setattr__(self, name, tuple(value))


@dataclass(frozen=True, slots=True)
class RefType(Type):
    """The type of a mutable reference cell holding a ``value``."""

    value: Type
    span: Optional[Span] = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class TypeCall(Type):
    """An ADT applied to type arguments: ``List[float32]``; ``Nat[]`` has no args."""

    func: Type  # GlobalTypeVar (or a TypeVar of kind AdtHandle)
    args: tuple[Type, ...] = ()
    span: Optional[Span] = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.args, tuple):
            object.__setattr__(self, "args", tuple(self.args))


RelationFn = Callable[..., bool]

UNIT = TupleType(())
"""The unit type ``()``."""

BOOL = TensorType((), "bool")

__all__ = [
    "Kind",
    "Type",
    "AnyDim",
    "Any",
    "Dim",
    "TypeVar",
    "IncompleteType",
    "GlobalTypeVar",
    "TensorType",
    "scalar_type",
    "complex_dtype_message",
    "is_complex_dtype",
    "TupleType",
    "TypeRelation",
    "FuncType",
    "RefType",
    "TypeCall",
    "UNIT",
    "BOOL",
]
