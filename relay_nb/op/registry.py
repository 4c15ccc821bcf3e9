"""The column-based operator registry of seed 000.

An operator is a key (its name); each kind of metadata is a *column*: a dict from op name
to value.  Columns used by the core:

=================  =================================================================
``num_inputs``     number of positional arguments (-1: variadic)
``arg_names``      names of the positional arguments (docs, builder API)
``attrs_schema``   an :class:`AttrSchema` (fields with defaults), or None: no attrs
``type_rel``       the type relation (see :mod:`relay_nb.typing.relations`)
``TOpPattern``     fusion pattern kind, numbered as TVM numbers it (:class:`OpPattern`)
``doc``            one-paragraph documentation
=================  =================================================================

Later layers add columns (``impl`` for numpy, ``llvm`` for the JIT, ``grad``) with
:func:`register_column` — the registry never needs to know about them.
"""

from __future__ import annotations

import difflib
import enum
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Optional, Sequence

from ..errors import AttrError, RelayError
from ..ir.attrs import Attrs, _same_values, freeze_value
from ..ir.expr import Op


class OpPattern(enum.IntEnum):
    """Fusion pattern kinds, with TVM's numbers (``include/tvm/relay/op_attr_types.h``)."""

    ELEMWISE = 0
    BROADCAST = 1
    INJECTIVE = 2
    COMM_REDUCE = 3
    OUT_ELEMWISE_FUSABLE = 4
    TUPLE = 7
    OPAQUE = 8


# --- attribute schemas ------------------------------------------------------------------

_NO_DEFAULT = object()


@dataclass(frozen=True)
class AttrField:
    """One field of an attribute schema.

    ``kind`` is one of ``int``, ``float``, ``bool``, ``str``, ``dtype`` (a dtype string,
    ``""`` meaning unspecified), ``ints`` (a list of ints), ``int_or_ints``, ``any``
    (left as parsed), ``optional_int`` (int or None), ``floats``, ``ints_nested``.
    """

    name: str
    kind: str
    default: Any = _NO_DEFAULT
    doc: str = ""

    @property
    def required(self) -> bool:
        return self.default is _NO_DEFAULT

    @property
    def frozen_default(self) -> Any:
        """The default as an :class:`Attrs` holds it (what a value compares against)."""
        return freeze_value(self.default)


@dataclass(frozen=True)
class AttrSchema:
    """The declared attributes of an op (TVM's ``XxxAttrs`` node)."""

    type_key: str
    fields: tuple[AttrField, ...] = ()

    def field_names(self) -> list[str]:
        return [f.name for f in self.fields]

    def get(self, name: str) -> Optional[AttrField]:
        for f in self.fields:
            if f.name == name:
                return f
        return None


def _coerce(op_name: str, f: AttrField, value: Any) -> Any:
    """Check and normalise one attribute value; raise AttrError on a bad one."""
    value = freeze_value(value)
    kind = f.kind

    def bad(expected: str) -> AttrError:
        return AttrError(f"{op_name}: attribute {f.name} expects {expected}, got {value!r}")

    if kind == "any":
        return value
    if value is None:
        if kind.startswith("optional") or f.default is None:
            return None
        raise bad(kind)
    if kind in ("int", "optional_int"):
        if isinstance(value, bool) or not isinstance(value, int):
            raise bad("an integer")
        return value
    if kind in ("float", "optional_float"):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise bad("a number")
        return float(value)
    if kind == "bool":
        if isinstance(value, bool):
            return value
        if isinstance(value, int) and value in (0, 1):
            return bool(value)
        raise bad("True or False")
    if kind == "str":
        if not isinstance(value, str):
            raise bad("a string")
        return value
    if kind == "dtype":
        if not isinstance(value, str):
            raise bad('a dtype string such as "float32"')
        if value and not is_valid_dtype(value):
            raise AttrError(f"{op_name}: attribute {f.name}: {unknown_dtype_text(value)}")
        return value
    if kind in ("ints", "optional_ints"):
        if isinstance(value, int) and not isinstance(value, bool):
            return (value,)
        if not isinstance(value, tuple) or not all(
            isinstance(v, int) and not isinstance(v, bool) for v in value
        ):
            raise bad("a list of integers")
        return value
    if kind == "int_or_ints":
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, tuple) and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
            return value
        raise bad("an integer or a list of integers")
    if kind == "floats":
        if not isinstance(value, tuple) or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in value
        ):
            raise bad("a list of numbers")
        return tuple(float(v) for v in value)
    if kind == "ints_nested":
        if not isinstance(value, tuple) or not all(
            isinstance(v, tuple) and all(isinstance(x, int) and not isinstance(x, bool) for x in v)
            for v in value
        ):
            raise bad("a list of integer lists such as [[0, 0], [1, 1]]")
        return value
    raise RelayError(f"internal: unknown attribute kind {kind!r} for {op_name}.{f.name}")


_SCALAR_DTYPES = {
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint1",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float16",
    "float32",
    "float64",
    "bfloat16",
}


def unknown_dtype_text(dtype: str) -> str:
    """What to say about a dtype string that :func:`is_valid_dtype` refuses."""
    from ..ir.ty import complex_dtype_message, is_complex_dtype

    if is_complex_dtype(dtype):
        return complex_dtype_message(dtype)
    return f"unknown dtype {dtype!r}"


def is_valid_dtype(dtype: str) -> bool:
    """True for TVM dtype strings: ``float32``, ``int8``, ``bool``, vector ``int8x4``."""
    if dtype in _SCALAR_DTYPES:
        return True
    base, sep, lanes = dtype.partition("x")
    return bool(sep) and base in _SCALAR_DTYPES and lanes.isdigit() and int(lanes) > 0


# --- the registry ---------------------------------------------------------------------

_OPS: dict[str, Op] = {}
_COLUMNS: dict[str, dict[str, Any]] = {}
_BUILTINS_LOADED = False


def _ensure_builtins() -> None:
    """Import the op families (relay_nb.op.*) once, so lookups see every built-in op."""
    global _BUILTINS_LOADED
    if not _BUILTINS_LOADED:
        _BUILTINS_LOADED = True
        import importlib

        importlib.import_module("relay_nb.op")


def get_column(column: str) -> dict[str, Any]:
    """The dict for ``column`` (created empty if new)."""
    col = _COLUMNS.get(column)
    if col is None:
        col = _COLUMNS[column] = {}
    return col


def register_column(column: str, op_name: str, value: Any, override: bool = False) -> None:
    """Set one cell of the registry (``register_column("impl", "add", np.add)``)."""
    if op_name not in _OPS:
        raise RelayError(f"cannot set {column} of unknown operator {op_name!r}")
    col = get_column(column)
    if op_name in col and not override:
        raise RelayError(f"{column} of {op_name} is already registered (pass override=True)")
    col[op_name] = value


def column_rule(column: str, *op_names: str, override: bool = False) -> Callable:
    """Decorator filling ``column`` for several ops with the decorated function.

    >>> @column_rule("impl", "exp", "log")
    ... def unary(op_name, *args, attrs): ...
    """

    def deco(fn: Callable) -> Callable:
        for name in op_names:
            register_column(column, name, fn, override=override)
        return fn

    return deco


def type_rule(*op_names: str, override: bool = False) -> Callable:
    """Decorator registering a type relation for ops (the ``type_rel`` column)."""
    return column_rule("type_rel", *op_names, override=override)


def register_op(
    name: str,
    num_inputs: int,
    type_rel: Optional[Callable] = None,
    attrs: Optional[AttrSchema] = None,
    pattern: OpPattern = OpPattern.OPAQUE,
    doc: str = "",
    arg_names: Sequence[str] = (),
    override: bool = False,
    **columns: Any,
) -> Op:
    """Register (or with ``override=True`` re-register) an operator and return its Op.

    Users can call this from a notebook; the op is usable in text right away::

        register_op("my.square", 1, type_rel=identity_rel, pattern=OpPattern.ELEMWISE)
    """
    if name in _OPS and not override:
        raise RelayError(f"operator {name!r} is already registered (pass override=True)")
    op = _OPS.get(name) or Op(name)
    _OPS[name] = op
    cells = {
        "num_inputs": num_inputs,
        "arg_names": tuple(arg_names),
        "attrs_schema": attrs,
        "type_rel": type_rel,
        "TOpPattern": OpPattern(pattern),
        "doc": doc,
        **columns,
    }
    for column, value in cells.items():
        get_column(column)[name] = value
    return op


def get_op(name: str) -> Op:
    """The Op named ``name``; a RelayError suggesting close names if there is none."""
    op = _OPS.get(name)
    if op is None:
        _ensure_builtins()
        op = _OPS.get(name)
    if op is None:
        raise RelayError(unknown_op_message(name))
    return op


def unknown_op_message(name: str) -> str:
    _ensure_builtins()
    close = difflib.get_close_matches(name, list(_OPS), n=3, cutoff=0.6)
    hint = f"; did you mean {' or '.join(close)}?" if close else ""
    return f"unknown operator {name}{hint}"


def has_op(name: str) -> bool:
    _ensure_builtins()
    return name in _OPS


def list_ops() -> list[str]:
    """Names of all registered operators, sorted."""
    _ensure_builtins()
    return sorted(_OPS)


def make_attrs(op: Op | str, kwargs: Optional[Mapping[str, Any]] = None) -> Optional[Attrs]:
    """Build an op's attribute map from keyword values, checked against its schema.

    Unknown keys and bad values raise :class:`AttrError`; omitted fields get defaults;
    missing required fields are an error.  Ops without a schema accept no attributes.
    """
    name = op if isinstance(op, str) else op.name
    schema: Optional[AttrSchema] = get_column("attrs_schema").get(name)
    kwargs = dict(kwargs or {})
    if schema is None:
        if kwargs:
            raise AttrError(f"operator {name} takes no attributes, got {', '.join(kwargs)}")
        return None
    fields: dict[str, Any] = {}
    for f in schema.fields:
        if f.name in kwargs:
            fields[f.name] = _coerce(name, f, kwargs.pop(f.name))
        elif f.required:
            raise AttrError(f"{name}: missing required attribute {f.name}")
        else:
            fields[f.name] = freeze_value(f.default)
    if kwargs:
        unknown = next(iter(kwargs))
        close = difflib.get_close_matches(unknown, schema.field_names(), n=1)
        hint = f"; did you mean {close[0]}?" if close else ""
        known = ", ".join(schema.field_names()) or "none"
        raise AttrError(f"{name}: unknown attribute {unknown}{hint} (known: {known})")
    return Attrs(fields, schema.type_key)


def non_default_attrs(op: Op, attrs: Optional[Attrs]) -> list[tuple[str, Any]]:
    """The (name, value) pairs that differ from the schema's defaults, in schema order.

    This is what the printer writes, as TVM's printer does.
    """
    if attrs is None:
        return []
    schema: Optional[AttrSchema] = get_column("attrs_schema").get(op.name)
    if schema is None or attrs.type_key != schema.type_key:
        return list(attrs.items())
    out = []
    for f in schema.fields:
        if f.name not in attrs:
            continue
        value = attrs[f.name]  # already frozen, as Attrs holds its values
        if f.required or not _same_values(value, f.frozen_default):
            out.append((f.name, value))
    return out


__all__ = [
    "OpPattern",
    "AttrField",
    "AttrSchema",
    "is_valid_dtype",
    "unknown_dtype_text",
    "get_column",
    "register_column",
    "column_rule",
    "type_rule",
    "register_op",
    "get_op",
    "has_op",
    "list_ops",
    "make_attrs",
    "non_default_attrs",
    "unknown_op_message",
]
