"""The top-level operator builders: ``relay.add``, ``relay.reshape``, ``relay.sum``, ...

Signatures and defaults follow TVM's ``python/tvm/relay/op/{tensor,transform,reduce}.py``
so TVM teaching code runs unchanged.  A builder only builds a :class:`Call` (its
attributes checked against the op's schema); types are found later by InferType.
Python numbers become literal constants, so ``relay.multiply(x, 2)`` takes ``x``'s dtype.

The elementwise builders are generated from the op tables of :mod:`.tensor`.  (This module
defines ``sum``, ``max``, ``abs``... like TVM; it never needs Python's built-ins of those
names.)
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any as PyAny

import numpy as np

from ..ir.expr import Call, Constant, Expr, TupleWrapper
from ._common import call, ints
from .tensor import BINARY_OPS, COMPARISON_OPS, PREDICATE_OPS, UNARY_OPS

__all__: list[str] = []


def _export(fn: Callable) -> Callable:
    __all__.append(fn.__name__)
    return fn


# --- elementwise, from the tables ---------------------------------------------------------


def _make_builder(name: str, doc: str, params: tuple[str, ...]) -> Callable:
    """A builder ``name(lhs, rhs)`` / ``name(data)`` with a real signature (for help())."""
    sig = inspect.Signature(
        [inspect.Parameter(p, inspect.Parameter.POSITIONAL_OR_KEYWORD) for p in params]
    )

    def build(*args: PyAny, **kwargs: PyAny) -> Call:
        try:
            bound = sig.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"{name}{sig}: {e}") from None
        return call(name, *bound.args)

    build.__name__ = build.__qualname__ = name
    build.__signature__ = sig
    build.__doc__ = f"{doc}\n\nBuilds ``{name}({', '.join(params)})``."
    return build


for _name, _doc in BINARY_OPS + COMPARISON_OPS:
    globals()[_name] = _export(_make_builder(_name, _doc, ("lhs", "rhs")))
for _name, _doc in UNARY_OPS + PREDICATE_OPS:
    globals()[_name] = _export(_make_builder(_name, _doc, ("data",)))


@_export
def clip(a, a_min, a_max) -> Call:
    """Clamp ``a`` into ``[a_min, a_max]``."""
    return call("clip", a, a_min=a_min, a_max=a_max)


@_export
def cast(data, dtype) -> Call:
    """Convert ``data`` to ``dtype`` (``relay.cast(x, "int32")``)."""
    return call("cast", data, dtype=str(dtype))


@_export
def cast_like(data, dtype_like) -> Call:
    return call("cast_like", data, dtype_like)


@_export
def where(condition, x, y) -> Call:
    """``x`` where ``condition`` holds, else ``y`` (broadcasting)."""
    return call("where", condition, x, y)


@_export
def zeros(shape, dtype) -> Call:
    """A tensor of zeros: ``relay.zeros((2, 3), "float32")``."""
    return call("zeros", shape=ints(shape), dtype=dtype)


@_export
def ones(shape, dtype) -> Call:
    return call("ones", shape=ints(shape), dtype=dtype)


@_export
def full(fill_value, shape=(), dtype="") -> Call:
    """A tensor of ``shape`` filled with ``fill_value``."""
    return call("full", fill_value, shape=ints(shape), dtype=dtype)


@_export
def full_like(data, fill_value) -> Call:
    return call("full_like", data, fill_value)


def _bound(value, dtype):
    """An arange bound as (argument, attribute value)."""
    if isinstance(value, Constant):
        return value, value.data.item() if value.data.ndim == 0 else None
    if isinstance(value, Expr):
        return value, None
    return Constant(np.asarray(value, dtype)), value


@_export
def arange(start, stop=None, step=None, dtype="float32") -> Call:
    """Evenly spaced values in ``[start, stop)``: ``relay.arange(5)`` is 0, 1, 2, 3, 4."""
    if stop is None:
        start, stop = 0, start
    if step is None:
        step = 1
    (a, sa), (b, sb), (c, sc) = (_bound(v, dtype) for v in (start, stop, step))
    return call("arange", a, b, c, start=sa, stop=sb, step=sc, dtype=dtype)


# --- reductions -----------------------------------------------------------------------------


def _axis(axis):
    return [axis] if isinstance(axis, int) else (None if axis is None else list(axis))


def _reduce_builder(name: str) -> Callable:
    def build(data, axis=None, keepdims=False, exclude=False) -> Call:
        return call(name, data, axis=_axis(axis), keepdims=keepdims, exclude=exclude)

    build.__name__ = build.__qualname__ = name
    build.__doc__ = (
        f"``{name}`` over ``axis`` (an int, a list, or None for all axes); ``keepdims`` keeps "
        "reduced axes as size 1, ``exclude`` reduces the axes *not* listed."
    )
    return build


for _name in ("sum", "mean", "max", "min", "prod", "all", "any"):
    globals()[_name] = _export(_reduce_builder(_name))


@_export
def argmax(data, axis=None, keepdims=False, exclude=False, select_last_index=False) -> Call:
    """int32 indices of the maxima over ``axis``."""
    return call(
        "argmax",
        data,
        axis=_axis(axis),
        keepdims=keepdims,
        exclude=exclude,
        select_last_index=select_last_index,
    )


@_export
def argmin(data, axis=None, keepdims=False, exclude=False, select_last_index=False) -> Call:
    """int32 indices of the minima over ``axis``."""
    return call(
        "argmin",
        data,
        axis=_axis(axis),
        keepdims=keepdims,
        exclude=exclude,
        select_last_index=select_last_index,
    )


@_export
def variance(
    data, axis=None, keepdims=False, exclude=False, unbiased=False, with_mean=None
) -> Call:
    """Variance over ``axis``: ``variance(data, mean(data, axis, keepdims=True))`` as in TVM."""
    m = globals()["mean"](data, axis, True, exclude) if with_mean is None else with_mean
    return call(
        "variance", data, m, axis=_axis(axis), keepdims=keepdims, exclude=exclude, unbiased=unbiased
    )


@_export
def std(data, axis=None, keepdims=False, exclude=False, unbiased=False) -> Call:
    """Standard deviation: ``sqrt(variance(...))`` (TVM has no ``std`` op either)."""
    return call("sqrt", variance(data, axis, keepdims, exclude, unbiased))


@_export
def mean_variance(data, axis=None, keepdims=False, exclude=False, unbiased=False) -> TupleWrapper:
    """``(mean, variance)`` over ``axis`` as a 2-field TupleWrapper."""
    from ..ir.expr import Tuple

    m = globals()["mean"](data, axis, keepdims, exclude)
    return TupleWrapper(Tuple((m, variance(data, axis, keepdims, exclude, unbiased))), 2)


@_export
def mean_std(data, axis=None, keepdims=False, exclude=False, unbiased=False) -> TupleWrapper:
    """``(mean, std)`` over ``axis`` as a 2-field TupleWrapper."""
    from ..ir.expr import Tuple

    m = globals()["mean"](data, axis, keepdims, exclude)
    return TupleWrapper(Tuple((m, std(data, axis, keepdims, exclude, unbiased))), 2)


# --- transforms ----------------------------------------------------------------------------


@_export
def reshape(data, newshape, allowzero=False) -> Call:
    """Reshape; ``newshape`` may use TVM's special values 0, -1, -2, -3, -4.

    >>> relay.reshape(x, (0, -1))      # keep dim 0, flatten the rest
    """
    return call("reshape", data, newshape=ints(newshape), allowzero=allowzero)


@_export
def reshape_like(data, shape_like, lhs_begin=0, lhs_end=None, rhs_begin=0, rhs_end=None) -> Call:
    return call(
        "reshape_like",
        data,
        shape_like,
        lhs_begin=lhs_begin,
        lhs_end=lhs_end,
        rhs_begin=rhs_begin,
        rhs_end=rhs_end,
    )


@_export
def transpose(data, axes=None) -> Call:
    """Permute axes (reverse them when ``axes`` is None)."""
    return call("transpose", data, axes=ints(axes))


@_export
def squeeze(data, axis=None) -> Call:
    return call("squeeze", data, axis=ints(axis))


@_export
def expand_dims(data, axis, num_newaxis=1) -> Call:
    return call("expand_dims", data, axis=axis, num_newaxis=num_newaxis)


@_export
def concatenate(data, axis) -> Call:
    """Join a list of tensors (or a tuple-typed expression) along ``axis``."""
    return call("concatenate", data, axis=axis)


@_export
def stack(data, axis) -> Call:
    """Stack a list of same-shaped tensors along a new axis."""
    return call("stack", data, axis=axis)


@_export
def split(data, indices_or_sections, axis=0) -> TupleWrapper:
    """Split into a TupleWrapper: ``relay.split(x, 3)[0]`` or ``relay.split(x, [2, 5], axis=1)``."""
    if isinstance(indices_or_sections, (int, np.integer)):
        ios, size = int(indices_or_sections), int(indices_or_sections)
    else:
        ios = ints(indices_or_sections)
        size = len(ios) + 1
    return TupleWrapper(call("split", data, indices_or_sections=ios, axis=axis), size)


@_export
def take(a, indices, axis=None, batch_dims=0, mode="clip") -> Call:
    """Gather ``a`` at ``indices`` along ``axis`` (of the flattened ``a`` when None)."""
    return call("take", a, indices, batch_dims=batch_dims, axis=axis, mode=mode)


@_export
def strided_slice(data, begin, end, strides=None, axes=None, slice_mode="end") -> Call:
    """``data[begin:end:strides]`` per axis (``relay.strided_slice(x, [0, 1], [2, 3])``)."""
    return call(
        "strided_slice",
        data,
        begin=ints(begin),
        end=ints(end),
        strides=ints(strides or [1]),
        slice_mode=slice_mode,
        axes=ints(axes),
    )


@_export
def broadcast_to(data, shape) -> Call:
    return call("broadcast_to", data, shape=ints(shape))


@_export
def broadcast_to_like(data, broadcast_type) -> Call:
    return call("broadcast_to_like", data, broadcast_type)


@_export
def collapse_sum_like(data, collapse_type) -> Call:
    return call("collapse_sum_like", data, collapse_type)


@_export
def tile(data, reps) -> Call:
    return call("tile", data, reps=ints(reps))


@_export
def repeat(data, repeats, axis) -> Call:
    return call("repeat", data, repeats=repeats, axis=axis)


@_export
def reverse(data, axis) -> Call:
    return call("reverse", data, axis=axis)


@_export
def layout_transform(data, src_layout, dst_layout) -> Call:
    """Convert between layouts: ``relay.layout_transform(x, "NCHW", "NHWC")``."""
    return call("layout_transform", data, src_layout=src_layout, dst_layout=dst_layout)


@_export
def shape_of(data, dtype="int32") -> Call:
    return call("shape_of", data, dtype=dtype)

# Device and debugging builders at the top level, as in TVM (relay.device_copy, relay.op.debug).
from .annotation import call_lowered, debug, device_copy  # noqa: E402

__all__ += ["call_lowered", "debug", "device_copy"]

# Builders defined next to their ops (sorting, scans, indexing, signal, misc): relay.topk ...
from . import indexing as _indexing, misc as _misc, scan as _scan, signal as _signal, sorting as _sorting  # noqa: E402
from .indexing import *  # noqa: E402,F401,F403
from .misc import *  # noqa: E402,F401,F403
from .scan import *  # noqa: E402,F401,F403
from .signal import *  # noqa: E402,F401,F403
from .sorting import *  # noqa: E402,F401,F403

for _family in (_indexing, _misc, _scan, _signal, _sorting):
    __all__ += _family.__all__
