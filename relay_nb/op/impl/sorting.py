"""numpy implementations of sorting and selection (:mod:`relay_nb.op.sorting`).

Sorts are stable in both directions: equal elements keep their input order, also when
sorting descending (TVM's CPU kernels use a stable sort).  ``unique``'s padding (TVM
leaves it undefined) is 0 for the values and counts and the input length for ``indices``.
"""

from __future__ import annotations

import numpy as np

from ...errors import EvalError
from ._util import impl, norm_axis


def stable_argsort(x: np.ndarray, axis: int, ascending: bool) -> np.ndarray:
    if ascending:
        return np.argsort(x, axis=axis, kind="stable")
    # Descending and stable: sort the reversed axis ascending, then read it backwards.
    n = x.shape[axis]
    rev = np.argsort(np.flip(x, axis), axis=axis, kind="stable")
    return n - 1 - np.flip(rev, axis)


@impl("argsort")
def _argsort(args, attrs, out):
    x = args[0]
    return stable_argsort(x, norm_axis(attrs["axis"], x.ndim), attrs["is_ascend"])


@impl("sort")
def _sort(args, attrs, out):
    x = args[0]
    axis = norm_axis(attrs["axis"], x.ndim)
    return np.take_along_axis(x, stable_argsort(x, axis, attrs["is_ascend"]), axis)


@impl("topk")
def _topk(args, attrs, out):
    x = args[0]
    axis = norm_axis(attrs["axis"], x.ndim)
    k = attrs["k"]
    order = stable_argsort(x, axis, attrs["is_ascend"])
    if k is not None and k >= 1:
        order = np.take(order, np.arange(k), axis=axis)
    values = np.take_along_axis(x, order, axis)
    return {"both": (values, order), "values": values, "indices": order}[attrs["ret_type"]]


@impl("unique")
def _unique(args, attrs, out):
    x = args[0]
    n = x.shape[0]
    values, first, inverse, counts = np.unique(x, return_index=True, return_inverse=True, return_counts=True)
    if not attrs["sorted"]:
        # Order of first occurrence: renumber the sorted uniques by where they first appear.
        order = np.argsort(first, kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(len(order))
        values, first, counts, inverse = values[order], first[order], counts[order], rank[inverse]
    m = len(values)

    def pad(a, fill):
        return np.concatenate([a, np.full(n - m, fill, dtype=a.dtype)])

    fields = [pad(values, 0), pad(first, n), inverse.reshape(n), np.array([m])]
    if attrs["return_counts"]:
        fields.append(pad(counts, 0))
    return tuple(fields)


@impl("searchsorted")
def _searchsorted(args, attrs, out):
    seq, values = args
    side = "right" if attrs["right"] else "left"
    if seq.ndim == 1:
        return np.searchsorted(seq, values, side=side)
    if seq.shape[:-1] != values.shape[:-1]:
        raise EvalError(f"sorted_sequence {seq.shape} and values {values.shape} differ along the outer axes")
    flat_seq = seq.reshape(-1, seq.shape[-1])
    flat_val = values.reshape(-1, values.shape[-1])
    rows = [np.searchsorted(s, v, side=side) for s, v in zip(flat_seq, flat_val)]
    return np.array(rows, dtype=np.int64).reshape(values.shape)
