"""Run-time values of the reference interpreter.

Tensors are ``numpy.ndarray`` (0-d for scalars) and tuples are Python tuples, so results
are ordinary Python data.  ADT values, closures and references get small classes with
readable reprs (``Cons(1, Cons(2, Nil))``).

Inside the interpreter a scalar may also be a numpy *scalar* (``np.int32(3)``): they
compute fifty times faster than 0-d arrays.  :func:`to_api` turns them back into 0-d
arrays wherever a value leaves the interpreter.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from ..ir.expr import Constructor, Function, Var


class ConstructorValue:
    """An ADT value: the constructor that built it and its fields."""

    __slots__ = ("constructor", "fields")

    def __init__(self, constructor: Constructor, fields: tuple):
        self.constructor = constructor
        self.fields = fields if type(fields) is tuple else tuple(fields)

    @property
    def tag(self) -> int:
        return self.constructor.tag

    def __eq__(self, other: object) -> bool:
        return values_equal(self, other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return format_value(self)


class Closure:
    """A function value: the Function and the values of its free variables.

    Calling it from Python evaluates the body with the interpreter that created it.
    """

    __slots__ = ("func", "env", "name", "_call")

    def __init__(self, func: Function, env: dict, name: str = "", call: Optional[Callable] = None):
        self.func = func
        self.env = env
        self.name = name
        self._call = call

    def __call__(self, *args: Any) -> Any:
        if self._call is None:
            from ..errors import EvalError

            raise EvalError("this closure is not attached to an interpreter")
        return self._call(self, args)

    def __repr__(self) -> str:
        params = ", ".join("%" + p.name_hint for p in self.func.params)
        label = f" {self.name}" if self.name else ""
        return f"<closure{label} fn ({params})>"


class RefValue:
    """A mutable reference cell (``ref(v)``)."""

    __slots__ = ("value",)

    def __init__(self, value: Any):
        self.value = value

    def __repr__(self) -> str:
        return f"ref({format_value(self.value)})"


def format_value(value: Any) -> str:
    """Readable text for any run-time value (iterative: deep ADT lists are fine)."""
    out: list[str] = []
    stack: list[Any] = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str) and v.startswith("\0"):
            out.append(v[1:])
        elif isinstance(v, ConstructorValue):
            name = v.constructor.name_hint
            if not v.fields:
                out.append(name)
                continue
            out.append(name + "(")
            stack.append("\0)")
            for i, f in enumerate(reversed(v.fields)):
                stack.append(f)
                if i < len(v.fields) - 1:
                    stack.append("\0, ")
        elif isinstance(v, tuple):
            out.append("(")
            stack.append("\0,)" if len(v) == 1 else "\0)")
            for i, f in enumerate(reversed(v)):
                stack.append(f)
                if i < len(v) - 1:
                    stack.append("\0, ")
        elif isinstance(v, np.ndarray):
            out.append(repr(v.item()) if v.ndim == 0 else np.array2string(v, separator=", "))
        elif isinstance(v, np.generic):
            out.append(repr(v.item()))
        else:
            out.append(repr(v))
    return "".join(out)


def values_equal(a: Any, b: Any) -> bool:
    """Structural equality of run-time values (tensors compared exactly)."""
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        if isinstance(x, ConstructorValue):
            if not isinstance(y, ConstructorValue) or x.constructor.name_hint != y.constructor.name_hint:
                return False
            if len(x.fields) != len(y.fields):
                return False
            stack.extend(zip(x.fields, y.fields))
        elif isinstance(x, tuple):
            if not isinstance(y, tuple) or len(x) != len(y):
                return False
            stack.extend(zip(x, y))
        elif isinstance(x, (np.ndarray, np.generic)) or isinstance(y, (np.ndarray, np.generic)):
            xa, ya = np.asarray(x), np.asarray(y)
            if xa.shape != ya.shape or not np.array_equal(xa, ya, equal_nan=xa.dtype.kind == "f"):
                return False
        elif isinstance(x, RefValue):
            if x is not y:
                return False
        elif x is not y and x != y:
            return False
    return True


def to_api(value: Any) -> Any:
    """``value`` as the public API shows it: numpy scalars inside become 0-d arrays.

    Tuples and ADT values are rebuilt only where something changed (a shared sub-value is
    converted once); a reference is converted in place, so it stays the same cell.
    Iterative, so a 100,000-element ADT list is fine.

    Examples
    --------
    >>> to_api((np.int32(3), np.ones(2)))
    (array(3, dtype=int32), array([1., 1.]))
    """
    t = type(value)
    if t is np.ndarray:
        return value
    if isinstance(value, np.generic):
        return np.array(value)
    if t is not tuple and t is not ConstructorValue and t is not RefValue:
        return value
    done: dict[int, Any] = {}
    stack: list[tuple[Any, bool]] = [(value, False)]
    while stack:
        v, expanded = stack.pop()
        key = id(v)
        if key in done and not expanded:
            continue
        if isinstance(v, np.generic):
            done[key] = np.array(v)
            continue
        tv = type(v)
        if tv is tuple or tv is ConstructorValue:
            fields = v if tv is tuple else v.fields
            if not expanded:
                stack.append((v, True))
                stack.extend((f, False) for f in fields if id(f) not in done and _may_change(f))
                continue
            new = tuple(done.get(id(f), f) for f in fields)
            changed = any(a is not b for a, b in zip(new, fields))
            done[key] = v if not changed else new if tv is tuple else ConstructorValue(v.constructor, new)
        elif tv is RefValue:
            done[key] = v
            if not expanded:
                stack.append((v, True))
                if _may_change(v.value):
                    stack.append((v.value, False))
                continue
            v.value = done.get(id(v.value), v.value)
        else:
            done[key] = v
    return done[id(value)]


def _may_change(v: Any) -> bool:
    t = type(v)
    return t is tuple or t is ConstructorValue or t is RefValue or (t is not np.ndarray and isinstance(v, np.generic))


__all__ = ["ConstructorValue", "Closure", "RefValue", "format_value", "values_equal", "to_api", "Var"]
