"""The machinery shared by the numpy implementations: registration, dtypes, results.

Every implementation is registered through :func:`impl`, which wraps it so that

* a call without attributes (a ``Call`` built by hand) sees the schema's defaults;
* numpy never prints a warning (``np.errstate(all="ignore")``): the semantics of the
  corner cases (division by zero, overflow, NaN) are defined in :mod:`relay_nb.op.impl`;
* every failure is an :class:`EvalError` whose message starts with the op name;
* the result is a fresh ``numpy.ndarray`` (0-d for scalars, never a numpy scalar, never
  a view of an argument) of the dtype the type relation inferred (``out_type``), and of
  its shape: a disagreement between relation and implementation is an :class:`EvalError`
  naming both, not a silent wrong answer further down the program.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ...errors import EvalError, RelayError
from ...ir.ty import TensorType, TupleType
from ...util import MEMORY_LIMIT, too_big
from ..registry import get_column, make_attrs, register_column

Impl = Callable[[list, Any, Any], Any]


# --- dtypes ---------------------------------------------------------------------------------


@functools.cache
def np_dtype(dtype: Any) -> np.dtype:
    """The numpy dtype of a TVM dtype string (``uint1`` is bool); EvalError if numpy has none."""
    if isinstance(dtype, np.dtype):
        return dtype
    if dtype == "uint1":
        return np.dtype(bool)
    if dtype == "bfloat16":
        raise EvalError("bfloat16 tensors cannot be computed by the numpy interpreter")
    try:
        return np.dtype(dtype)
    except TypeError:
        raise EvalError(f"dtype {dtype!r} is not supported by the numpy interpreter") from None


def known_dtype(ty: Any) -> np.dtype | None:
    """The numpy dtype of a TensorType whose dtype is known, else None."""
    if isinstance(ty, TensorType) and isinstance(ty.dtype, str) and ty.dtype:
        return np_dtype(ty.dtype)
    return None


def out_dtype(out: Any, *fallback: Any) -> np.dtype:
    """The result dtype: the inferred one when the program was type-checked, else the first
    non-empty fallback (a dtype string, numpy dtype or array)."""
    dt = known_dtype(out)
    if dt is not None:
        return dt
    for f in fallback:
        if isinstance(f, np.ndarray):
            return f.dtype
        if f:
            return np_dtype(f)
    raise EvalError("cannot tell the result dtype (type-check the program first)")


def is_int(dt: np.dtype) -> bool:
    return dt.kind in "iu"


def is_float(dt: np.dtype) -> bool:
    return dt.kind == "f"


def convert(x: Any, dtype: Any) -> np.ndarray:
    """``x`` as an array of ``dtype`` with TVM's ``cast`` semantics, made total.

    Integer to narrower integer wraps; float to integer truncates toward zero and, where C
    leaves it undefined, saturates (NaN becomes 0, out-of-range values the nearest bound);
    anything to bool is ``x != 0``.
    """
    dt = np_dtype(dtype)
    x = np.asarray(x)
    if x.dtype == dt:
        return x
    if dt.kind == "b":
        return x != 0
    if is_int(dt) and x.dtype.kind in "fc":
        info = np.iinfo(dt)
        f = np.trunc(x.real.astype(np.float64))
        # float(info.max) may round up (2**63): ">=" sends exactly that value to the bound.
        hi = f >= float(info.max)
        lo = f <= float(info.min)
        bad = hi | lo | np.isnan(f)
        safe = np.where(bad, 0, f).astype(dt)
        return np.where(hi, dt.type(info.max), np.where(lo, dt.type(info.min), safe))
    return x.astype(dt)


def lowest(dt: np.dtype) -> Any:
    """The smallest finite value of ``dt`` (TVM's ``min_value``: the max-pool padding)."""
    if dt.kind == "b":
        return False
    if is_int(dt):
        return np.iinfo(dt).min
    return np.finfo(dt).min


def highest(dt: np.dtype) -> Any:
    if dt.kind == "b":
        return True
    if is_int(dt):
        return np.iinfo(dt).max
    return np.finfo(dt).max


def extreme(
    x: np.ndarray, axes: tuple, kind: str, keepdims: bool = False, **extra: Any
) -> np.ndarray:
    """``np.max`` / ``np.min`` over ``axes`` as the JIT's loop takes it: a NaN wins, and of
    equal values the first in row-major order over ``axes`` -- which shows only for a zero,
    since ``-0.0 == 0.0`` and numpy's vectorized reduction returns either sign."""
    m = (np.max if kind == "max" else np.min)(x, axis=axes, keepdims=True, **extra)
    if x.dtype.kind == "f" and x.size and (m == 0).any():
        keep = [a for a in range(x.ndim) if a not in axes]
        count = math.prod(x.shape[a] for a in axes)
        flat = np.transpose(x, keep + list(axes)).reshape([x.shape[a] for a in keep] + [count])
        first = np.argmax(flat == 0, axis=-1)[..., None]  # where m is 0, some element is
        zero = np.take_along_axis(flat, first, -1)[..., 0]
        kept = m.reshape(zero.shape)
        m = np.where(kept == 0, zero, kept).reshape(m.shape)
    return m if keepdims else np.squeeze(m, axis=axes)


def int_divide(a: np.ndarray, b: np.ndarray, rounding: str) -> np.ndarray:
    """Integer division rounding ``"trunc"`` (C) or ``"floor"``; ``x / 0 == 0``.

    ``INT_MIN / -1`` wraps to ``INT_MIN`` (C leaves it undefined).  Computed without ever
    dividing by 0 or -1, so numpy has nothing to warn about.
    """
    a, b = np.broadcast_arrays(a, b)
    special = (b == 0) | (b == -1) if b.dtype.kind == "i" else (b == 0)
    safe = np.where(special, 1, b).astype(b.dtype)
    q = np.floor_divide(a, safe)
    if rounding == "trunc" and a.dtype.kind == "i":
        r = a - q * safe
        q = q + ((r != 0) & ((a < 0) != (safe < 0))).astype(q.dtype)
    if b.dtype.kind == "i":
        q = np.where(b == -1, np.negative(a), q)  # -INT_MIN wraps to INT_MIN
    return np.where(b == 0, 0, q).astype(a.dtype)


def int_mod(a: np.ndarray, b: np.ndarray, rounding: str) -> np.ndarray:
    """The remainder of :func:`int_divide`: ``a - q * b``; ``x % 0 == 0``."""
    a, b = np.broadcast_arrays(a, b)
    q = int_divide(a, b, rounding)
    r = (a - q * b).astype(a.dtype)
    return np.where(b == 0, 0, r).astype(a.dtype)


def divide_by_count(total: np.ndarray, count: Any, dt: np.dtype) -> np.ndarray:
    """``total / count`` in ``dt`` as TVM's ``divide`` does it (truncating for integers)."""
    if is_int(dt):
        return int_divide(total.astype(dt), np.asarray(count).astype(dt), "trunc")
    if dt.kind == "b":
        return total.astype(dt)
    return (total / np.asarray(count).astype(dt)).astype(dt)


# --- axes and layouts -------------------------------------------------------------------------


def norm_axis(axis: int, rank: int, what: str = "axis") -> int:
    if not -rank <= axis < rank:
        raise EvalError(f"{what} {axis} is out of range for a rank-{rank} tensor")
    return axis + rank if axis < 0 else axis


def layout_perm(layout: str, canonical: str, what: str = "layout") -> list[int]:
    """The permutation taking a ``layout`` tensor to ``canonical`` order (``np.transpose``)."""
    if sorted(layout) != sorted(canonical):
        raise EvalError(
            f"{what} {layout!r} is not supported by the interpreter: use a permutation of "
            f"{', '.join(canonical)}"
        )
    return [layout.index(c) for c in canonical]


def to_layout(x: np.ndarray, canonical: str, layout: str, what: str = "out_layout") -> np.ndarray:
    """A ``canonical``-order tensor transposed to ``layout``."""
    if sorted(layout) != sorted(canonical):
        raise EvalError(f"{what} {layout!r} is not supported: use a permutation of {canonical}")
    return np.transpose(x, [canonical.index(c) for c in layout])


def ints_n(value: Any, n: int, what: str) -> tuple[int, ...]:
    """An int or 1 or ``n`` ints as ``n`` ints (strides, dilation, pool_size...)."""
    if isinstance(value, (int, np.integer)):
        return (int(value),) * n
    value = tuple(int(v) for v in value)
    if len(value) == 1:
        return value * n
    if len(value) != n:
        raise EvalError(f"{what} must have 1 or {n} values, got {list(value)}")
    return value


def pad_pairs(padding: Any, n: int) -> list[tuple[int, int]]:
    """TVM's 1, ``n`` or ``2n`` padding values as ``[(before, after)] * n``."""
    pads = ints_n(padding, 1, "padding") if isinstance(padding, int) else tuple(padding)
    if len(pads) == 1:
        pads = pads * (2 * n)
    elif len(pads) == n:
        pads = tuple(pads) * 2
    if len(pads) != 2 * n:
        raise EvalError(f"padding must have 1, {n} or {2 * n} values, got {list(pads)}")
    if min(pads) < 0:
        raise EvalError(f"padding must not be negative, got {list(pads)}")
    return [(int(pads[i]), int(pads[i + n])) for i in range(n)]


# --- registration -----------------------------------------------------------------------------


def _as_arg(value: Any) -> Any:
    if isinstance(value, tuple):
        return tuple(_as_arg(v) for v in value)
    if isinstance(value, np.ndarray):
        return value
    if isinstance(value, (bool, int, float, complex, np.generic, list)):
        return np.asarray(value)
    return value


def _leaves(args: Sequence[Any]):
    for a in args:
        if isinstance(a, tuple):
            yield from _leaves(a)
        elif isinstance(a, np.ndarray):
            yield a


def _shape_text(shape: Sequence[Any]) -> str:
    from ...typing.relations import shape_text

    return shape_text(tuple(shape))


def finish(op_name: str, value: Any, ty: Any, args: Sequence[Any] = ()) -> Any:
    """The value an op returns: fresh arrays of the inferred dtype, checked against the shape."""
    if isinstance(value, tuple):
        fields = ty.fields if isinstance(ty, TupleType) and len(ty.fields) == len(value) else None
        return tuple(
            finish(op_name, v, fields[i] if fields else None, args) for i, v in enumerate(value)
        )
    arr = np.asarray(value)
    if isinstance(ty, TensorType):
        if isinstance(ty.dtype, str) and ty.dtype:
            arr = convert(arr, ty.dtype)
        shape = ty.shape
        if isinstance(shape, tuple) and (
            len(shape) != arr.ndim
            or any(type(d) is int and d != s for d, s in zip(shape, arr.shape))
        ):
            raise EvalError(
                f"internal error: the result has shape {_shape_text(arr.shape)} but the type "
                f"relation says {_shape_text(shape)} (please report this)"
            )
    if not arr.flags.writeable or any(np.may_share_memory(arr, a) for a in _leaves(args)):
        arr = arr.copy()
    return arr


def _out_of_memory(ty: Any) -> str:
    """What numpy's MemoryError means, worded as the JIT's check words it."""
    if isinstance(ty, TensorType) and isinstance(ty.shape, tuple) and isinstance(ty.dtype, str):
        if all(type(d) is int for d in ty.shape) and ty.dtype:
            nbytes = math.prod(ty.shape) * np.dtype(ty.dtype).itemsize
            if nbytes > MEMORY_LIMIT:
                return too_big(nbytes, "its result")
    return "ran out of memory"


def impl(*op_names: str) -> Callable[[Impl], Impl]:
    """Register ``fn(args, attrs, out_type)`` as the ``impl`` of ``op_names``.

    ``args`` are numpy arrays (tuples of them for tuple arguments), ``attrs`` the call's
    attributes (the schema's defaults when the call has none), ``out_type`` the inferred
    type or None.  ``fn`` may return arrays of any dtype: the wrapper converts.
    """

    def deco(fn: Impl) -> Impl:
        for name in op_names:
            register_column("impl", name, _wrap(name, fn))
        return fn

    return deco


def _wrap(name: str, fn: Impl) -> Impl:
    has_schema = get_column("attrs_schema").get(name) is not None
    prefix = name + ": "

    def run(args: list, attrs: Any = None, out_type: Any = None) -> Any:
        args = [_as_arg(a) for a in args]
        try:
            if attrs is None and has_schema:
                attrs = make_attrs(name)
            with np.errstate(all="ignore"):
                return finish(name, fn(args, attrs, out_type), out_type, args)
        except RelayError as exc:
            # Shared shape helpers raise type errors; at run time they are evaluation errors.
            if isinstance(exc, EvalError) and exc.message.startswith(prefix):
                raise
            raise EvalError(prefix + exc.message, exc.span) from None
        except (ValueError, TypeError, IndexError, ArithmeticError) as exc:
            raise EvalError(prefix + str(exc)) from None
        except MemoryError:
            raise EvalError(prefix + _out_of_memory(out_type)) from None

    run.__name__ = run.__qualname__ = "impl_" + name.replace(".", "_")
    run.__doc__ = f"numpy implementation of {name}: ``impl(args, attrs, out_type)``."
    run.__wrapped__ = fn  # type: ignore[attr-defined]
    return run


__all__ = [
    "convert",
    "divide_by_count",
    "extreme",
    "finish",
    "highest",
    "impl",
    "int_divide",
    "int_mod",
    "ints_n",
    "is_float",
    "is_int",
    "known_dtype",
    "layout_perm",
    "lowest",
    "norm_axis",
    "np_dtype",
    "out_dtype",
    "pad_pairs",
    "to_layout",
]
