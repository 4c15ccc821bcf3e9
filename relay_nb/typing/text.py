"""Types as text, for type-error messages.

This is deliberately independent of the printer (:mod:`relay_nb.syntax.printer`), so a type
error can always be rendered, and it follows the printer's conventions: a rank-0 tensor is
its dtype (``float32``), ``Tensor[(2), float32]`` (TVM writes a rank-1 shape without the
trailing comma), ``(A, B)`` / ``(A,)`` / ``()`` tuples, ``fn (A) -> B`` / ``fn [A](A) -> A`` functions,
``ref(T)``, ``List[A]`` / ``Nat[]`` type calls.  An unknown prints as ``_``; the dtype of an
unsuffixed literal whose dtype is still open prints as its default (``int32``).
"""

from __future__ import annotations

from typing import Any

from ..ir.ty import (
    AnyDim,
    FuncType,
    GlobalTypeVar,
    IncompleteType,
    RefType,
    TensorType,
    TupleType,
    Type,
    TypeCall,
    TypeRelation,
    TypeVar,
)


def dim_text(d: Any) -> str:
    if type(d) is int:
        return str(d)
    if isinstance(d, AnyDim):
        return "?"
    if isinstance(d, TypeVar):
        return d.name_hint
    if isinstance(d, IncompleteType):
        return "_"
    return str(d)


def shape_text(shape: Any) -> str:
    """``(2, 3)``, ``(2)``, ``()``; a shape variable prints as its name."""
    if isinstance(shape, tuple):
        return "(" + ", ".join(dim_text(d) for d in shape) + ")"
    return dim_text(shape)


def dtype_text(dtype: Any) -> str:
    if type(dtype) is str:
        return dtype
    if isinstance(dtype, TypeVar):
        return dtype.name_hint
    if isinstance(dtype, IncompleteType):
        return dtype.default or "_"
    return str(dtype)


def type_text(t: Any) -> str:
    """The Relay text of type ``t`` (never raises; unknowns print as ``_``)."""
    try:
        return _text(t)
    except RecursionError:
        return "<a type too deeply nested to print>"


def _text(t: Any) -> str:
    cls = type(t)
    if cls is TensorType:
        if isinstance(t.shape, tuple) and not t.shape:
            return dtype_text(t.dtype)
        return f"Tensor[{shape_text(t.shape)}, {dtype_text(t.dtype)}]"
    if cls is TupleType:
        if len(t.fields) == 1:
            return f"({_text(t.fields[0])},)"
        return "(" + ", ".join(_text(f) for f in t.fields) + ")"
    if cls is FuncType:
        params = " "
        if t.type_params:
            params = " [" + ", ".join(_text(p) for p in t.type_params) + "]"
        out = (
            f"fn{params}(" + ", ".join(_text(a) for a in t.arg_types) + f") -> {_text(t.ret_type)}"
        )
        if t.type_constraints:
            out += " where " + ", ".join(_text(c) for c in t.type_constraints)
        return out
    if cls is TypeRelation:
        name = getattr(t.func, "name", None) or getattr(t.func, "__name__", "Relation")
        return f"{name}(" + ", ".join(_text(a) for a in t.args) + ")"
    if cls is RefType:
        return f"ref({_text(t.value)})"
    if cls is TypeCall:
        return f"{_text(t.func)}[" + ", ".join(_text(a) for a in t.args) + "]"
    if cls is TypeVar:
        return t.name_hint
    if cls is GlobalTypeVar:
        return t.name_hint
    if cls is IncompleteType:
        return t.default or "_"
    if isinstance(t, Type):
        return type(t).__name__
    return str(t)


__all__ = ["type_text", "shape_text", "dtype_text", "dim_text"]
