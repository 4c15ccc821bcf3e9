"""numpy implementations of the reductions (:mod:`relay_nb.op.reduce`).

The axes come from the same rule as the relation (TVM's ``GetReduceAxes``: ``axis=None``
is every axis, negative axes count from the end, ``exclude`` takes the complement).
Sums and products accumulate in the tensor's own dtype (``int32`` wraps, as in TVM, where
numpy would widen to ``int64``); ``mean`` is that sum divided by the element count with
TVM's ``divide`` (truncating for integers).  An empty ``max``/``min`` is the dtype's
lowest/highest value (TVM's reduction identities); ``argmax``/``argmin`` over several axes
return the flat index within the reduced axes, as TVM's ``CommReduceIdx`` does, and -1
over no elements (the index its reducers start from).
"""

from __future__ import annotations

import math

import numpy as np

from ..reduce import reduce_axes
from ._util import divide_by_count, extreme, highest, impl, known_dtype, lowest


def _axes(x, attrs):
    return tuple(reduce_axes(x.ndim, attrs["axis"], attrs["exclude"]))


def _count(x, axes):
    return math.prod(x.shape[a] for a in axes)


def _dtype(x, out):
    dt = known_dtype(out)
    return dt if dt is not None else x.dtype


@impl("sum")
def _sum(args, attrs, out):
    x = args[0]
    dt = _dtype(x, out)
    return np.sum(
        x.astype(dt, copy=False), axis=_axes(x, attrs), keepdims=attrs["keepdims"], dtype=dt
    )


@impl("prod")
def _prod(args, attrs, out):
    x = args[0]
    dt = _dtype(x, out)
    return np.prod(
        x.astype(dt, copy=False), axis=_axes(x, attrs), keepdims=attrs["keepdims"], dtype=dt
    )


@impl("mean")
def _mean(args, attrs, out):
    x = args[0]
    dt = _dtype(x, out)
    axes = _axes(x, attrs)
    total = np.sum(x.astype(dt, copy=False), axis=axes, keepdims=attrs["keepdims"], dtype=dt)
    return divide_by_count(np.asarray(total), _count(x, axes), dt)


def _extreme(kind, identity):
    def run(args, attrs, out):
        x = args[0]
        axes = _axes(x, attrs)
        extra = {"initial": identity(x.dtype)} if x.size == 0 or _count(x, axes) == 0 else {}
        return extreme(x, axes, kind, attrs["keepdims"], **extra)

    return run


impl("max")(_extreme("max", lowest))
impl("min")(_extreme("min", highest))


@impl("all")
def _all(args, attrs, out):
    x = args[0]
    return np.all(x != 0, axis=_axes(x, attrs), keepdims=attrs["keepdims"])


@impl("any")
def _any(args, attrs, out):
    x = args[0]
    return np.any(x != 0, axis=_axes(x, attrs), keepdims=attrs["keepdims"])


def _arg_reduce(fn):
    def run(args, attrs, out):
        x = args[0]
        axes = _axes(x, attrs)
        keep = [a for a in range(x.ndim) if a not in axes]
        if _count(x, axes) == 0:  # TVM's argmax/argmin reducers start from index -1
            shape = [1 if a in axes else d for a, d in enumerate(x.shape)]
            return np.full(shape if attrs["keepdims"] else [x.shape[a] for a in keep], -1, np.int32)
        # Reduced axes last, in increasing order, then flattened: the flat index is TVM's.
        moved = np.transpose(x, keep + list(axes))
        # the count, not -1: numpy cannot infer -1 when a kept axis is empty
        flat = moved.reshape(moved.shape[: len(keep)] + (_count(x, axes),))
        if attrs["select_last_index"]:
            idx = flat.shape[-1] - 1 - fn(flat[..., ::-1], axis=-1)
        else:
            idx = fn(flat, axis=-1)
        idx = idx.astype(np.int32)
        if attrs["keepdims"]:
            idx = idx.reshape(tuple(1 if a in axes else d for a, d in enumerate(x.shape)))
        return idx

    return run


impl("argmax")(_arg_reduce(np.argmax))
impl("argmin")(_arg_reduce(np.argmin))


@impl("variance")
def _variance(args, attrs, out):
    """``sum((data - mean) ** 2) / (N - unbiased)`` over the axes, in data's dtype.  On
    ``bool``, as the sum, an OR: True where some element differs from its mean."""
    x, mean = args
    dt = _dtype(x, out)
    axes = _axes(x, attrs)
    if dt.kind == "b":  # True - False: numpy refuses; the JIT's i1 subtract is XOR
        diff = np.not_equal(x, mean)
    else:
        diff = (x.astype(dt, copy=False) - mean.astype(dt, copy=False)).astype(dt)
    total = np.sum(diff * diff, axis=axes, keepdims=attrs["keepdims"], dtype=dt)
    count = _count(x, axes) - (1 if attrs["unbiased"] else 0)
    return divide_by_count(np.asarray(total), count, dt)
