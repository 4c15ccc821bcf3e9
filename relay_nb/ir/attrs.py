"""Immutable attribute maps for operator calls and functions.

``call.attrs.axis`` and ``call.attrs["axis"]`` both work, as in TVM.  Values are
normalised to hashable Python values (lists become tuples, numpy scalars become Python
scalars) so two attribute maps compare and hash structurally.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Iterator

import numpy as np


def freeze_value(value: Any) -> Any:
    """Normalise an attribute value: lists/tuples -> tuples, numpy scalars -> Python."""
    if isinstance(value, (list, tuple)):
        return tuple(freeze_value(v) for v in value)
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        # 0-d -> scalar; others -> nested tuples (an array value would break == and hash).
        return value.item() if value.ndim == 0 else freeze_value(value.tolist())
    return value


class Attrs(Mapping):
    """An immutable, ordered attribute map with a TVM-style type key.

    The type key names the schema (``"relay.attrs.Conv2DAttrs"``); function attributes
    use ``"DictAttrs"``.
    """

    __slots__ = ("type_key", "_fields", "_hash")

    def __init__(self, fields: Mapping[str, Any] | None = None, type_key: str = "DictAttrs"):
        object.__setattr__(self, "type_key", type_key)
        object.__setattr__(
            self, "_fields", {k: freeze_value(v) for k, v in (fields or {}).items()}
        )
        object.__setattr__(self, "_hash", None)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Attrs are immutable; build a new one with .with_fields()")

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            # Private/dunder lookups (copy and pickle probe __setstate__ etc. on an
            # uninitialised instance) must not recurse into self._fields.
            raise AttributeError(name)
        try:
            return self._fields[name]
        except KeyError:
            raise AttributeError(
                f"{self.type_key} has no attribute {name!r}; it has {sorted(self._fields)}"
            ) from None

    def __getitem__(self, key: str) -> Any:
        return self._fields[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._fields)

    def __len__(self) -> int:
        return len(self._fields)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Attrs):
            return NotImplemented
        return self.type_key == other.type_key and _same_values(self._fields, other._fields)

    def __hash__(self) -> int:
        if self._hash is None:
            object.__setattr__(
                self, "_hash", hash((self.type_key, tuple(_hashable(i) for i in self._fields.items())))
            )
        return self._hash

    def __reduce__(self):
        # Rebuild through __init__ (copy, deepcopy and pickle), since __setattr__ is blocked.
        return (Attrs, (dict(self._fields), self.type_key))

    def with_fields(self, **changes: Any) -> "Attrs":
        """A copy with some fields replaced or added."""
        return Attrs({**self._fields, **changes}, self.type_key)

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={v!r}" for k, v in self._fields.items())
        return f"{self.type_key}({inner})"


def _object_key(value: Any) -> Any:
    """A key comparing IR objects held in attributes by value, as TVM's structural equality
    compares attribute objects: a constant (``const_shape=meta[relay.Constant][0]``) by its
    data, an unresolved ``meta[VirtualDevice][0]`` by its reference, a meta-table object by
    its fields.  None for any other value."""
    kind = type(value).__name__
    if kind == "Constant" and isinstance(getattr(value, "data", None), np.ndarray):
        data = value.data
        return ("const", data.dtype.str, data.shape, data.tobytes())
    if kind == "MetaRef":
        return ("meta", value.type_key, value.index)
    if kind == "MetaObject":
        return ("object", value.type_key, tuple(sorted(value.attrs.items())), value.repr_str,
                value.keys, value.data)
    return None


def _hashable(value: Any) -> Any:
    if isinstance(value, float) and value != value:  # NaN: make it hash/compare stably
        return ("nan",)
    key = _object_key(value)
    if key is not None:
        return key
    if isinstance(value, tuple):
        return tuple(_hashable(v) for v in value)
    if isinstance(value, dict):  # order-insensitive, as dict equality is
        return ("dict", frozenset((k, _hashable(v)) for k, v in value.items()))
    try:
        hash(value)
        return value
    except TypeError:
        return repr(value)


def _same_values(a: Any, b: Any) -> bool:
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same_values(a[k], b[k]) for k in a)
    if isinstance(a, tuple):
        return (
            isinstance(b, tuple) and len(a) == len(b) and all(_same_values(x, y) for x, y in zip(a, b))
        )
    if isinstance(a, float) and isinstance(b, float) and a != a and b != b:
        return True
    if type(a) is bool or type(b) is bool:
        return type(a) is type(b) and a == b
    key = _object_key(a)
    if key is not None:
        return key == _object_key(b)
    return a == b


class UnresolvedAttrs(Attrs):
    """A call's attributes written as ``meta[relay.attrs.XAttrs][i]`` in a text whose
    ``#[metadata]`` section is missing (TVM prints so with ``show_meta_data=False``).

    The fields are unknown: the program reads, prints back unchanged and can be viewed,
    but type inference reports that the call's attributes are missing.
    """

    __slots__ = ("index",)

    def __init__(self, type_key: str, index: int):
        super().__init__({}, type_key)
        object.__setattr__(self, "index", index)

    @property
    def ref(self) -> str:
        return f"meta[{self.type_key}][{self.index}]"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Attrs):
            return NotImplemented
        return isinstance(other, UnresolvedAttrs) and (other.type_key, other.index) == (
            self.type_key,
            self.index,
        )

    def __hash__(self) -> int:
        return hash(("unresolved", self.type_key, self.index))

    def __repr__(self) -> str:
        return f"UnresolvedAttrs({self.ref})"


EMPTY_ATTRS = Attrs({}, "DictAttrs")
