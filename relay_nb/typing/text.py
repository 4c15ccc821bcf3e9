"""Types as Relay text: the one type writer, used by error messages and the printer.

Conventions (the printer's, which are TVM's): a rank-0 tensor is its dtype (``float32``),
``Tensor[(2), float32]`` (a rank-1 shape has no trailing comma), ``(A, B)`` / ``(A,)`` /
``()`` tuples, ``fn (A) -> B`` / ``fn [A](A) -> A`` functions, ``ref(T)``, ``List[A]`` /
``Nat[]`` type calls.  An unknown prints as ``_``; the dtype of an unsuffixed literal whose
dtype is still open prints as its default (``int32``).  The writer is iterative with a
cache, so very deep types are fine and a type shared many times is rendered once.
"""

from __future__ import annotations

from typing import Any

import numpy as np

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

_ID = object()


def _tkey(t: Any) -> Any:
    """The cache key of a type: leaf types are values (equal types share one entry);
    compound types go by identity, since hashing or comparing a deep one recurses."""
    if type(t) is TensorType:
        try:
            hash(t)
            return t
        except TypeError:
            pass
    elif isinstance(t, (TypeVar, GlobalTypeVar, IncompleteType, str)):
        return t
    return (_ID, id(t))


def dim_text(d: Any) -> str:
    """One dimension: ``3``, ``?`` (dynamic), a shape variable's name, ``_`` (unknown)."""
    if type(d) is int:
        return str(d)
    if isinstance(d, AnyDim):
        return "?"
    if isinstance(d, TypeVar):
        return d.name_hint
    if isinstance(d, IncompleteType):
        return "_"
    if isinstance(d, (int, np.integer)) and not isinstance(d, bool):
        return str(int(d))
    return str(d)


def _leaf_text(t: Any) -> str:
    if isinstance(t, str):
        return t
    if isinstance(t, (TypeVar, GlobalTypeVar)):
        return t.name_hint
    if isinstance(t, IncompleteType):
        return t.default or "_"
    if t is None:
        return "_"
    return str(t)


def _type_children(t: Any) -> tuple:
    if isinstance(t, TupleType):
        return t.fields
    if isinstance(t, FuncType):
        return (*t.arg_types, t.ret_type, *t.type_constraints)
    if isinstance(t, TypeRelation):
        return t.args
    if isinstance(t, RefType):
        return (t.value,)
    if isinstance(t, TypeCall):
        return t.args
    return ()


def _type_combine(t: Any, kids: list[str]) -> str:
    if isinstance(t, TensorType):
        dtype = _leaf_text(t.dtype) if not isinstance(t.dtype, str) else t.dtype
        shape = t.shape
        if isinstance(shape, (tuple, list)):
            if not shape and not isinstance(t.dtype, TypeVar):  # a dtype variable keeps Tensor[(), A]
                return dtype
            return "Tensor[(" + ", ".join(dim_text(d) for d in shape) + "), " + dtype + "]"
        return "Tensor[" + _leaf_text(shape) + ", " + dtype + "]"
    if isinstance(t, TupleType):
        if len(kids) == 1:
            return "(" + kids[0] + ",)"
        return "(" + ", ".join(kids) + ")"
    if isinstance(t, FuncType):
        n = len(t.arg_types)
        text = "fn "
        if t.type_params:
            text += "[" + ", ".join(tp.name_hint for tp in t.type_params) + "]"
        text += "(" + ", ".join(kids[:n]) + ") -> " + kids[n]
        if t.type_constraints:
            text += " where " + ", ".join(kids[n + 1 :])
        return text
    if isinstance(t, TypeRelation):
        func = t.func
        name = getattr(func, "name", None) or getattr(func, "__name__", None) or str(func)
        return name + "(" + ", ".join(kids) + ")"
    if isinstance(t, RefType):
        return "ref(" + kids[0] + ")"
    if isinstance(t, TypeCall):
        return _leaf_text(t.func) + "[" + ", ".join(kids) + "]"
    if isinstance(t, (TypeVar, GlobalTypeVar, IncompleteType)) or t is None:
        return _leaf_text(t)
    if isinstance(t, Type):
        return type(t).__name__
    return str(t)


class TypeWriter:
    """Types to text with a cache, children first, with an explicit stack."""

    __slots__ = ("cache", "keep")

    def __init__(self) -> None:
        self.cache: dict[Any, str] = {}
        self.keep: list = []  # keeps id()-keyed types alive while their id is a key

    def __call__(self, ty: Any) -> str:
        cache = self.cache
        key = _tkey(ty)
        hit = cache.get(key)
        if hit is not None:
            return hit
        stack: list[tuple[Any, bool]] = [(ty, False)]
        while stack:
            t, ready = stack.pop()
            k = _tkey(t)
            if k in cache:
                continue
            kids = _type_children(t)
            if not ready:
                missing = [c for c in kids if _tkey(c) not in cache]
                if missing:
                    stack.append((t, True))
                    stack.extend((c, False) for c in reversed(missing))
                    continue
            if type(k) is tuple:
                self.keep.append(t)
            cache[k] = _type_combine(t, [cache[_tkey(c)] for c in kids])
        return cache[key]


def shape_text(shape: Any) -> str:
    """``(2, 3)``, ``(2)``, ``()``; a shape variable prints as its name."""
    if isinstance(shape, tuple):
        return "(" + ", ".join(dim_text(d) for d in shape) + ")"
    return dim_text(shape)


def dtype_text(dtype: Any) -> str:
    return dtype if type(dtype) is str else _leaf_text(dtype)


def type_text(t: Any) -> str:
    """The Relay text of type ``t`` (never raises; unknowns print as ``_``)."""
    return TypeWriter()(t)
