"""Fast scalar operators: the interpreter's shortcut past the registry's impl wrapper.

An op call whose arguments and result are scalars of known dtypes (``%n * @fact(%n - 1)``)
does not need the general wrapper of :mod:`relay_nb.op.impl` (argument conversion, an
``errstate`` block, a result check, a fresh 0-d array: about 5 µs).  numpy's *scalar* types
already compute with the same rules as its ufuncs on arrays (two's-complement wrap-around,
IEEE floats, float16 through float32), so most ops become one Python operator on numpy
scalars (about 40 ns).  The cases where Relay defines something numpy does not (integer
division truncating toward zero, ``x / 0 == 0``, ``INT_MIN / -1``, integer powers with a
negative exponent, TVM's NaN rule for max/min) get small functions here.

The contract, tested against the impl column on edge values: for every entry, the result
equals ``impl(args, attrs, out_type)`` in value and dtype.  Callers run under
``np.errstate(all="ignore")`` (the interpreter enters it once per evaluation), since numpy
scalars warn on overflow where the defined behaviour is to wrap.

A :class:`ScalarOp` is either a *template* (a Python expression over ``{0}``, ``{1}``,
which the function compiler (codegen.py) pastes into generated code; operands are always plain names)
or a function (which it calls); ``fn`` is the callable form of both.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional

import numpy as np

from ..op.impl._util import convert
from ..op.impl.tensor import float_power


@dataclass(frozen=True)
class ScalarOp:
    """One fast path: ``template`` to paste into generated code (or None), ``fn`` to call."""

    name: str
    fn: Callable[..., Any]
    template: Optional[str] = None


def _int_div(floor: bool) -> Callable[[Any, Any], Any]:
    """Integer division: floor or truncation; ``x / 0 == 0``; ``INT_MIN / -1`` wraps."""

    def div(a: Any, b: Any) -> Any:
        if b == 0:
            return a - a  # zero of a's dtype
        q = a // b  # numpy floors, and wraps INT_MIN // -1 to INT_MIN
        if not floor and q * b != a and (a < 0) != (b < 0):
            q = q + (b // b)  # one of the dtype: floor -> truncation
        return q

    return div


def _int_mod(floor: bool) -> Callable[[Any, Any], Any]:
    div = _int_div(floor)

    def mod(a: Any, b: Any) -> Any:
        if b == 0:
            return a - a
        return a - div(a, b) * b

    return mod


def _int_power(a: Any, b: Any) -> Any:
    """``a ** b``; a negative exponent gives the truncated real result (0 unless |a| == 1)."""
    if b >= 0:
        return a**b
    zero = a - a
    one = zero + 1
    if a == one:
        return one
    if a == -one:
        return -one if b % 2 else one
    return zero


def _float_floor_div(a: Any, b: Any) -> Any:
    return np.floor(a / b)


def _float_trunc_div(a: Any, b: Any) -> Any:
    return np.trunc(a / b)


def _float_mod(a: Any, b: Any) -> Any:
    return np.fmod(a, b)


_INT = "iu"
_NUM = "iuf"
_BOOL = "b"

# op -> [(dtype kinds it applies to, template or function)]; args and result share a dtype.
_SAME_DTYPE: dict[str, list[tuple[str, Any]]] = {
    "add": [(_NUM + _BOOL, "{0} + {1}")],
    "subtract": [(_NUM, "{0} - {1}")],
    "multiply": [(_NUM + _BOOL, "{0} * {1}")],
    "divide": [("f", "{0} / {1}"), (_INT, _int_div(floor=False))],
    "floor_divide": [("f", _float_floor_div), (_INT, _int_div(floor=True))],
    "trunc_divide": [("f", _float_trunc_div), (_INT, _int_div(floor=False))],
    "mod": [("f", _float_mod), (_INT, _int_mod(floor=False))],
    "floor_mod": [("f", np.remainder), (_INT, _int_mod(floor=True))],  # exact, see op.impl.tensor
    "trunc_mod": [("f", _float_mod), (_INT, _int_mod(floor=False))],
    "power": [("f", float_power), (_INT, _int_power)],  # not **: that differs on -0.0
    # TVM's max/min: a > b ? a : b (a NaN in a gives b).
    "maximum": [(_NUM + _BOOL, "({0} if {0} > {1} else {1})")],
    "minimum": [(_NUM + _BOOL, "({0} if {0} < {1} else {1})")],
    "logical_and": [(_BOOL, "{0} & {1}")],
    "logical_or": [(_BOOL, "{0} | {1}")],
    "logical_xor": [(_BOOL, "{0} ^ {1}")],
    "bitwise_and": [(_INT + _BOOL, "{0} & {1}")],
    "bitwise_or": [(_INT + _BOOL, "{0} | {1}")],
    "bitwise_xor": [(_INT + _BOOL, "{0} ^ {1}")],
    "left_shift": [(_INT, "{0} << {1}")],
    "right_shift": [(_INT, "{0} >> {1}")],
    "negative": [(_NUM, "-{0}"), (_BOOL, "~{0}")],
    "abs": [(_NUM, "abs({0})")],
    "logical_not": [(_BOOL, "~{0}")],
    "bitwise_not": [(_INT + _BOOL, "~{0}")],
    "copy": [(_NUM + _BOOL, "{0}")],
}

# Comparisons: both arguments share a dtype, the result is bool.
_COMPARE = {
    "equal": "{0} == {1}",
    "not_equal": "{0} != {1}",
    "less": "{0} < {1}",
    "less_equal": "{0} <= {1}",
    "greater": "{0} > {1}",
    "greater_equal": "{0} >= {1}",
}

_SCALAR_DTYPES = frozenset(
    ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32", "float64"]
)


def _from_template(name: str, template: str, arity: int) -> ScalarOp:
    params = ["a", "b"][:arity]
    # Our own fixed templates, never program text: this is how codegen.py uses them.
    fn = eval(f"lambda {', '.join(params)}: {template.format(*params)}")  # noqa: S307
    return ScalarOp(name, fn, template)


def _cast(dtype: str) -> ScalarOp:
    dt = np.dtype(dtype)

    def cast(a: Any) -> Any:
        if type(a) is dt.type:
            return a
        return convert(np.asarray(a), dt)[()]

    return ScalarOp("cast", cast)


_CACHE: dict[tuple, Optional[ScalarOp]] = {}


def scalar_op(name: str, arg_dtypes: tuple[str, ...], out_dtype: str, attrs: Any = None) -> Optional[ScalarOp]:
    """The fast path for op ``name`` on scalar arguments of ``arg_dtypes``, or None.

    Examples
    --------
    >>> scalar_op("multiply", ("int32", "int32"), "int32").template
    '{0} * {1}'
    >>> scalar_op("divide", ("int8", "int8"), "int8").fn(np.int8(-7), np.int8(2))
    np.int8(-3)
    """
    if out_dtype not in _SCALAR_DTYPES or any(d not in _SCALAR_DTYPES for d in arg_dtypes):
        return None
    if name == "cast":
        target = getattr(attrs, "get", lambda *_: None)("dtype")
        if len(arg_dtypes) != 1 or target != out_dtype:
            return None
        return _cast(out_dtype)
    key = (name, arg_dtypes, out_dtype)
    if key in _CACHE:
        return _CACHE[key]
    found: Optional[ScalarOp] = None
    kind = np.dtype(out_dtype).kind
    if name in _COMPARE:
        if len(arg_dtypes) == 2 and arg_dtypes[0] == arg_dtypes[1] and out_dtype == "bool":
            found = _from_template(name, _COMPARE[name], 2)
    elif name in _SAME_DTYPE and all(d == out_dtype for d in arg_dtypes):
        for kinds, rule in _SAME_DTYPE[name]:
            if kind in kinds:
                arity = (2 if "{1}" in rule else 1) if isinstance(rule, str) else 2
                if len(arg_dtypes) != arity:
                    break
                found = _from_template(name, rule, arity) if isinstance(rule, str) else ScalarOp(name, rule)
                break
    _CACHE[key] = found
    return found


__all__ = ["ScalarOp", "scalar_op"]
