"""Algebraic data type definitions (``type List[A] { Cons(A, List[A]), Nil }``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from .expr import Constructor
from .span import Span
from .ty import GlobalTypeVar, TypeCall, TypeVar


@dataclass(frozen=True, slots=True, eq=False)
class TypeData:
    """An ADT: its name (``header``), type parameters and constructors.

    ``constructors`` may be empty for ``extern type`` declarations.
    """

    header: GlobalTypeVar
    type_vars: tuple[TypeVar, ...] = ()
    constructors: tuple[Constructor, ...] = ()
    span: Optional[Span] = field(default=None, kw_only=True, repr=False)

    def __post_init__(self) -> None:
        for name in ("type_vars", "constructors"):
            value = getattr(self, name)
            if not isinstance(value, tuple):
                object.__setattr__(self, name, tuple(value))

    @property
    def name(self) -> str:
        return self.header.name_hint

    def constructor(self, name: str) -> Constructor:
        for ctor in self.constructors:
            if ctor.name_hint == name:
                return ctor
        raise KeyError(f"type {self.name} has no constructor {name!r}")

    def self_type(self) -> TypeCall:
        """``Name[A, B]`` applied to its own type parameters."""
        return TypeCall(self.header, self.type_vars)


__all__ = ["TypeData"]
