"""numpy implementations of :mod:`relay_nb.op.misc` (einsum, collapse_sum_to, ...).

``fixed_point_multiply`` is TVM's ``q_multiply_shift`` in 64-bit integers:
``(x << left) * multiplier``, plus ``2**(right + 30)``, shifted right by ``right + 31``
(``left``/``right`` are the positive/negative parts of ``shift``): rounding halves up.
"""

from __future__ import annotations

import numpy as np

from ..misc import (
    eval_index,
    index_map_ranges,
    parse_auto_scheduler_layout,
    parse_index_map,
    reverse_newshape,
)
from ._util import impl, norm_axis, out_dtype
from .transform import collapse_sum


@impl("einsum")
def _einsum(args, attrs, out):
    operands = args[0]
    dt = out_dtype(out, operands[0])
    return np.einsum(attrs["equation"], *[o.astype(dt, copy=False) for o in operands], dtype=dt)


@impl("collapse_sum_to")
def _collapse_sum_to(args, attrs, out):
    x, shape = args
    return collapse_sum(x, tuple(int(d) for d in shape.reshape(-1)))


@impl("contrib_reverse_reshape")
def _reverse_reshape(args, attrs, out):
    x = args[0]
    return x.reshape(reverse_newshape(x.shape, tuple(attrs["newshape"])))


@impl("ndarray_size")
def _ndarray_size(args, attrs, out):
    return np.asarray(args[0].size)


@impl("reinterpret")
def _reinterpret(args, attrs, out):
    x = np.ascontiguousarray(args[0])
    return x.view(out_dtype(out, attrs["dtype"]))


def q_multiply_shift(x, multiplier, left, right):
    """``round((x << left) * multiplier / 2**(right + 31))``, halves rounded up, in int64."""
    x = x.astype(np.int64) << np.asarray(left, np.int64)
    total = np.asarray(right, np.int64) + 31
    return (x * np.asarray(multiplier, np.int64) + (np.int64(1) << (total - 1))) >> total


@impl("fixed_point_multiply")
def _fixed_point_multiply(args, attrs, out):
    shift = attrs["shift"]
    return q_multiply_shift(args[0], attrs["multiplier"], max(shift, 0), max(-shift, 0))


@impl("fixed_point_multiply_per_axis")
def _fixed_point_multiply_per_axis(args, attrs, out):
    x, mult, left, right = args
    axis = norm_axis(attrs["axes"][0], x.ndim)
    shape = [1] * x.ndim
    shape[axis] = -1
    left = left.reshape(shape) if attrs["is_lshift_required"] else 0
    right = right.reshape(shape) if attrs["is_rshift_required"] else 0
    return q_multiply_shift(x, mult.reshape(shape), left, right)


@impl("auto_scheduler_layout_transform")
def _auto_scheduler_layout_transform(args, attrs, out):
    """Split each source axis into its destination axes (in destination order), then
    transpose into the destination order."""
    x = args[0]
    _, src_axes = parse_auto_scheduler_layout(attrs["src_layout"])
    dst_shape, dst_axes = parse_auto_scheduler_layout(attrs["dst_layout"])
    split_shape, positions = [], []
    for name in src_axes:
        for j, (d, a) in enumerate(zip(dst_shape, dst_axes)):
            if a == name:
                split_shape.append(d)
                positions.append(j)
    split = x.reshape(split_shape)
    return np.transpose(split, np.argsort(positions))


@impl("meta_schedule_layout_transform")
def _meta_schedule_layout_transform(args, attrs, out):
    """Every element moves to the index the map gives it, counted from the index's lowest
    possible value (the relation's extents); positions no element maps to are 0, and when
    several map to one position the last in row-major order wins."""
    x = args[0]
    params, outs = parse_index_map(attrs["index_map"])
    if x.size == 0:
        return np.zeros((0,) * len(outs), x.dtype)
    ranges = index_map_ranges(outs, params, x.shape)
    env = dict(zip(params, np.indices(x.shape)))
    env["const"] = np.int64
    coords = tuple(np.broadcast_to(eval_index(node, env), x.shape) - lo for node, (lo, _) in zip(outs, ranges))
    result = np.zeros(tuple(hi - lo + 1 for lo, hi in ranges), x.dtype)
    result[coords] = x
    return result
