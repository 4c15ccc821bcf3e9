"""Kind checking of written types (annotations, ADT definitions, explicit type arguments).

Seed 000: "Type parameters are classified by kind and can only appear in parts of the type
signature where their kind is appropriate (e.g., type parameters of kind Shape can only
appear where a shape would be expected in a tensor type)".  :func:`check_kinds` enforces
that, checks dtypes and ADT arities, and normalizes a bare ADT name used as a type into a
zero-argument type call (``Nat`` means ``Nat[]``).
"""

from __future__ import annotations

from typing import Any, Optional

from ..errors import RelayTypeError
from ..ir.ty import (
    AnyDim,
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
from .text import type_text

_KIND_NAMES = {
    Kind.Type: "Type",
    Kind.ShapeVar: "Shape",
    Kind.BaseType: "BaseType",
    Kind.Constraint: "Constraint",
    Kind.AdtHandle: "AdtHandle",
    Kind.TypeData: "TypeData",
}


def kind_name(kind: Kind) -> str:
    return _KIND_NAMES.get(kind, str(kind))


def _valid_dtype(dtype: str) -> bool:
    from ..op.registry import is_valid_dtype

    return is_valid_dtype(dtype)


def _dtype_text(dtype: str) -> str:
    from ..op.registry import unknown_dtype_text

    return unknown_dtype_text(dtype)


def check_kinds(t: Any, mod: Any = None, span: Any = None, what: str = "annotation") -> Any:
    """``t`` checked for kind sanity; returns it (normalized), or raises RelayTypeError.

    ``mod`` (an IRModule, optional) is used to check ADT names and their arity.
    """
    cls = type(t)
    # Fast path: the common annotation, a tensor type with a static shape.
    if cls is TensorType and type(t.shape) is tuple and type(t.dtype) is str:
        for d in t.shape:
            if type(d) is not int or d < 0:
                break
        else:
            if not _valid_dtype(t.dtype):
                raise RelayTypeError(
                    f"{_dtype_text(t.dtype)} (in {what} {type_text(t)})", _where(t, span)
                )
            return t
    try:
        return _check(t, mod, span, what)
    except RecursionError:
        raise RelayTypeError(f"the {what} is too deeply nested", span) from None


def _where(t: Any, span: Any) -> Any:
    return getattr(t, "span", None) or span


def _check(t: Any, mod: Any, span: Any, what: str) -> Any:
    cls = type(t)
    if cls is IncompleteType:
        return t
    if cls is TypeVar:
        if t.kind not in (Kind.Type,):
            raise RelayTypeError(
                f"type variable {t.name_hint} has kind {kind_name(t.kind)} and cannot be used as a type"
                f" (in {what})",
                _where(t, span),
            )
        return t
    if cls is GlobalTypeVar:
        return _check(TypeCall(t, ()), mod, span, what)
    if cls is TensorType:
        shape = t.shape
        if type(shape) is tuple:
            for d in shape:
                if type(d) is int:
                    if d < 0:
                        raise RelayTypeError(
                            f"negative dimension {d} in {what} {type_text(t)}", _where(t, span)
                        )
                elif isinstance(d, AnyDim) or type(d) is IncompleteType:
                    pass
                elif type(d) is TypeVar:
                    if d.kind is not Kind.ShapeVar:
                        raise RelayTypeError(
                            f"type variable {d.name_hint} of kind {kind_name(d.kind)} used as a dimension"
                            f" in {what} {type_text(t)}",
                            _where(t, span),
                        )
                else:
                    raise RelayTypeError(f"bad dimension {d!r} in {what}", _where(t, span))
        elif type(shape) is TypeVar:
            if shape.kind is not Kind.ShapeVar:
                raise RelayTypeError(
                    f"type variable {shape.name_hint} of kind {kind_name(shape.kind)} used as a shape"
                    f" in {what} {type_text(t)}",
                    _where(t, span),
                )
        elif type(shape) is not IncompleteType:
            raise RelayTypeError(f"bad shape {shape!r} in {what}", _where(t, span))
        dtype = t.dtype
        if type(dtype) is str:
            if not _valid_dtype(dtype):
                raise RelayTypeError(
                    f"{_dtype_text(dtype)} (in {what} {type_text(t)})", _where(t, span)
                )
        elif type(dtype) is TypeVar:
            if dtype.kind is not Kind.BaseType:
                raise RelayTypeError(
                    f"type variable {dtype.name_hint} of kind {kind_name(dtype.kind)} used as a dtype"
                    f" in {what} {type_text(t)}",
                    _where(t, span),
                )
        elif type(dtype) is not IncompleteType:
            raise RelayTypeError(f"bad dtype {dtype!r} in {what}", _where(t, span))
        return t
    if cls is TupleType:
        fields = tuple(_check(f, mod, span, what) for f in t.fields)
        if all(a is b for a, b in zip(fields, t.fields)):
            return t
        return TupleType(fields, t.span)
    if cls is FuncType:
        args = tuple(_check(a, mod, span, what) for a in t.arg_types)
        ret = _check(t.ret_type, mod, span, what)
        for c in t.type_constraints:
            if type(c) is not TypeRelation or not callable(c.func):
                raise RelayTypeError(f"bad type constraint {c!r} in {what}", _where(t, span))
        if ret is t.ret_type and all(a is b for a, b in zip(args, t.arg_types)):
            return t
        return FuncType(args, ret, t.type_params, t.type_constraints, t.span)
    if cls is RefType:
        v = _check(t.value, mod, span, what)
        return t if v is t.value else RefType(v, t.span)
    if cls is TypeCall:
        func = t.func
        if type(func) is GlobalTypeVar:
            if mod is not None:
                tdata = mod.type_definitions.get(func)
                if tdata is None:
                    raise RelayTypeError(
                        f"type {func.name_hint} is not defined (in {what})", _where(t, span)
                    )
                if len(tdata.type_vars) != len(t.args):
                    n = len(tdata.type_vars)
                    raise RelayTypeError(
                        f"type {func.name_hint} expects {n} type argument{'s' if n != 1 else ''}, "
                        f"got {len(t.args)} (in {what} {type_text(t)})",
                        _where(t, span),
                    )
        elif type(func) is TypeVar:
            pass
        else:
            raise RelayTypeError(
                f"{type_text(func)} is not a type constructor (in {what})", _where(t, span)
            )
        args = tuple(_check(a, mod, span, what) for a in t.args)
        if all(a is b for a, b in zip(args, t.args)):
            return t
        return TypeCall(func, args, t.span)
    if cls is TypeRelation:
        return t
    raise RelayTypeError(f"{type(t).__name__} is not a type (in {what})", span)


def check_type_data(tdata: Any, mod: Any) -> None:
    """An ADT definition: its constructors use only its own type parameters."""
    params = set(tdata.type_vars)
    names = {v.name_hint for v in tdata.type_vars}
    for ctor in tdata.constructors:
        for i, field in enumerate(ctor.inputs):
            what = f"field {i} of constructor {ctor.name_hint}"
            check_kinds(field, mod, ctor.span or tdata.span, what)
            found: dict = {}
            from .unify import collect_vars

            collect_vars(field, found, (TypeVar,))
            for v in found:
                if v not in params and v.name_hint not in names:
                    raise RelayTypeError(
                        f"constructor {ctor.name_hint} uses type variable {v.name_hint}, "
                        f"which is not a parameter of {tdata.header.name_hint}",
                        ctor.span or tdata.span,
                    )


def type_params_ok(params: Optional[tuple], span: Any = None) -> None:
    for p in params or ():
        if type(p) is not TypeVar:
            raise RelayTypeError(f"type parameter {p!r} is not a type variable", span)


__all__ = ["check_kinds", "check_type_data", "kind_name"]
