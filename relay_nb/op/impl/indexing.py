"""numpy implementations of gather/scatter and indexing (:mod:`relay_nb.op.indexing`).

Defined behaviours where TVM's kernels read or write out of bounds (a notebook must not
crash): an index outside ``[-n, n)`` is an :class:`EvalError` naming it (negative indices
count from the end, as TVM's scatter kernels and ONNX do).  Scatters apply their updates
one after the other in row-major order, so with repeated indices the last ``update``
wins and ``mean`` averages pairwise, ``(old + new) / 2``, as TVM's kernel does.
``reverse_sequence`` clips lengths into ``[0, n]``.
"""

from __future__ import annotations

import numpy as np

from ...errors import EvalError
from ..indexing import SCATTER_ND_MODES
from ._util import convert, impl, int_divide, norm_axis, out_dtype


def checked_index(idx: np.ndarray, n: int, what: str = "index") -> np.ndarray:
    """``idx`` with negative entries counted from ``n``; EvalError if one is outside [-n, n)."""
    idx = np.asarray(idx).astype(np.int64)
    bad = (idx < -n) | (idx >= n)
    if bad.any():
        raise EvalError(f"{what} {int(idx[bad].flat[0])} is out of range for a dimension of {n}")
    return np.where(idx < 0, idx + n, idx)


def _grid(shape: tuple, axis: int, replace: np.ndarray) -> tuple:
    """Index arrays of every position of ``shape``, with ``replace`` along ``axis``."""
    grids = list(np.indices(shape, sparse=True))
    grids[axis] = replace
    return tuple(grids)


@impl("gather")
def _gather(args, attrs, out):
    data, indices = args
    axis = norm_axis(attrs["axis"], data.ndim)
    idx = checked_index(indices, data.shape[axis])
    return data[_grid(indices.shape, axis, idx)]


@impl("gather_nd")
def _gather_nd(args, attrs, out):
    data, indices = args
    m, b = indices.shape[0], attrs["batch_dims"]
    ys = indices.shape[1:]
    # A batch coordinate is the position's own (an arange along that axis of the result).
    batch = [np.arange(ys[i]).reshape((-1,) + (1,) * (len(ys) - 1 - i)) for i in range(b)]
    coords = [checked_index(indices[i], data.shape[b + i]) for i in range(m)]
    return data[tuple(batch + coords)]


_REDUCE = {
    "update": lambda old, new: new,
    "add": lambda old, new: old + new,
    "mul": lambda old, new: old * new,
    "mean": lambda old, new: (old + new) / 2,
    "min": np.minimum,
    "max": np.maximum,
}


@impl("scatter_elements")
def _scatter_elements(args, attrs, out):
    data, indices, updates = args
    axis = norm_axis(attrs["axis"], data.ndim)
    if attrs["reduction"] not in _REDUCE:
        raise EvalError(f"unknown reduction {attrs['reduction']!r}")
    result = data.copy()
    idx = checked_index(indices, data.shape[axis])
    fn = _REDUCE[attrs["reduction"]]
    # One step along the axis at a time: within a step every destination is distinct.
    for k in range(indices.shape[axis]):
        sel = np.take(idx, [k], axis=axis)
        where = _grid(sel.shape, axis, sel)
        new = np.take(updates, [k], axis=axis)
        result[where] = convert(fn(result[where], new), result.dtype)
    return result


@impl("scatter_nd")
def _scatter_nd(args, attrs, out):
    data, indices, updates = args
    mode = attrs["mode"]
    if mode not in SCATTER_ND_MODES:
        raise EvalError(f"unknown mode {mode!r}")
    m = indices.shape[0]
    result = data.copy()
    # Rows of (index tuple, update slice), applied in order.
    tuples = indices.reshape(m, -1).T
    slices = updates.reshape((tuples.shape[0],) + data.shape[m:])
    fn = _REDUCE[mode]
    for t, u in zip(tuples, slices):
        where = tuple(int(checked_index(v, data.shape[i])) for i, v in enumerate(t))
        result[where] = convert(fn(result[where], u), result.dtype)
    return result


@impl("adv_index")
def _adv_index(args, attrs, out):
    data, *index = args[0]
    return data[tuple(checked_index(i, data.shape[a]) for a, i in enumerate(index))]


@impl("one_hot")
def _one_hot(args, attrs, out):
    indices, on, off = args
    depth = attrs["depth"]
    hot = indices[..., None] == np.arange(depth)
    axis = indices.ndim if attrs["axis"] == -1 else norm_axis(attrs["axis"], indices.ndim + 1)
    dt = out_dtype(out, attrs["dtype"], on)
    return np.moveaxis(np.where(hot, on.astype(dt), off.astype(dt)), -1, axis)


@impl("meshgrid")
def _meshgrid(args, attrs, out):
    vectors = [v.reshape(-1) for v in args[0]]
    return tuple(np.meshgrid(*vectors, indexing=attrs["indexing"]))


@impl("sequence_mask")
def _sequence_mask(args, attrs, out):
    data, valid = args
    axis = attrs["axis"]
    steps = np.arange(data.shape[axis]).reshape((-1, 1) if axis == 0 else (1, -1))
    lengths = valid.reshape((1, -1) if axis == 0 else (-1, 1))
    keep = (steps < lengths).reshape(data.shape[:2] + (1,) * (data.ndim - 2))
    return np.where(keep, data, convert(np.asarray(attrs["mask_value"]), data.dtype))


@impl("reverse_sequence")
def _reverse_sequence(args, attrs, out):
    data, lengths = args
    batch = norm_axis(attrs["batch_axis"], data.ndim)
    seq = norm_axis(attrs["seq_axis"], data.ndim)
    n = data.shape[seq]
    lengths = np.clip(lengths.astype(np.int64), 0, n)
    steps = np.arange(n)
    # source[b, t] = L_b - 1 - t for t < L_b, else t.
    shape = [1] * data.ndim
    shape[batch], shape[seq] = -1, 1
    lens = lengths.reshape(shape)
    shape[batch], shape[seq] = 1, -1
    t = steps.reshape(shape)
    src = np.where(t < lens, lens - 1 - t, t)
    src = np.broadcast_to(src, tuple(data.shape[a] if a in (batch, seq) else 1 for a in range(data.ndim)))
    return np.take_along_axis(data, np.broadcast_to(src, data.shape), axis=seq)


@impl("slice_like")
def _slice_like(args, attrs, out):
    data, like = args
    axes = range(min(data.ndim, like.ndim)) if attrs["axes"] is None else [norm_axis(a, data.ndim) for a in attrs["axes"]]
    index = [slice(None)] * data.ndim
    for a in axes:
        index[a] = slice(0, like.shape[a])
    return data[tuple(index)]


STRIDE_MESSAGE = "strided_set: strides must not be 0"


def broadcast_message(j: int, d: int, k: int) -> str:
    """The error of a ``v`` that does not fit the slice (a template with ``{detail}``, the
    slice's length, shared with the JIT)."""
    return f"strided_set: axis {j} of v ({d}) does not broadcast to the {{detail}} elements the slice has along axis {k}"


@impl("strided_set")
def _strided_set(args, attrs, out):
    """``data[begin:end:strides] = v`` over the leading ``min(len(begin), len(end))`` axes
    (Python's slice rules; missing strides are 1); ``v`` broadcasts to the slice."""
    data, v, begin, end, strides = args
    n = min(begin.size, end.size)
    if n > data.ndim:
        raise EvalError(f"{n} slice bounds for a rank-{data.ndim} tensor")
    steps = [int(s) for s in strides.reshape(-1)[:n]] + [1] * max(0, n - strides.size)
    if 0 in steps:
        raise EvalError(STRIDE_MESSAGE)
    index = tuple(slice(int(b), int(e), s) for b, e, s in zip(begin.reshape(-1), end.reshape(-1), steps))
    region = data[index].shape
    lead = data.ndim - v.ndim
    if lead < 0:
        raise EvalError(f"v has rank {v.ndim}, more than the data's {data.ndim}")
    for j, d in enumerate(v.shape):
        if d != 1 and d != region[lead + j]:
            raise EvalError(broadcast_message(j, d, lead + j).format(detail=region[lead + j]))
    result = data.copy()
    result[index] = v
    return result


def diag_length(rows: int, cols: int, d: int) -> int:
    """The length of diagonal ``d`` (``j - i == d``) of a rows x cols matrix."""
    return max(0, min(rows + min(0, d), cols - max(0, d)))


@impl("matrix_set_diag")
def _matrix_set_diag(args, attrs, out):
    data, diag = args
    k1, k2 = attrs["k1"], attrs["k2"]
    rows, cols = data.shape[-2:]
    width = diag.shape[-1]
    result = data.copy()
    for d in range(k1, k2 + 1):
        values = diag if k1 == k2 else diag[..., k2 - d, :]
        length = diag_length(rows, cols, d)
        right = attrs["super_diag_right_align"] if d >= 0 else attrs["sub_diag_right_align"]
        offset = width - length if right else 0
        i = np.arange(length) + max(0, -d)
        result[..., i, i + d] = values[..., offset : offset + length]
    return result


@impl("trilu")
def _trilu(args, attrs, out):
    data, k = args
    return (np.triu if attrs["upper"] else np.tril)(data, int(k))


@impl("argwhere")
def _argwhere(args, attrs, out):
    return np.argwhere(args[0] != 0)


@impl("unravel_index")
def _unravel_index(args, attrs, out):
    """Coordinates by repeated division from the innermost dim (TVM's arithmetic)."""
    indices, shape = args
    idx = indices.astype(np.int64)
    coords = []
    for dim in reversed(shape.astype(np.int64).tolist()):
        d = np.asarray(dim, np.int64)
        coords.append(idx - int_divide(idx, d, "floor") * d if dim else np.zeros_like(idx))
        idx = int_divide(idx, d, "floor")
    return np.stack(coords[::-1]) if coords else np.zeros((0,) + indices.shape, indices.dtype)


def permutation_message(n: int) -> str:
    """The error of a non-permutation (a template with ``{detail}``, shared with the JIT)."""
    return f"invert_permutation: data is not a permutation of 0..{n - 1} (value {{detail}} is out of range or repeated)"


@impl("invert_permutation")
def _invert_permutation(args, attrs, out):
    data = args[0].astype(np.int64)
    n = data.shape[0]
    # The first value (in order) that is out of range or repeats an earlier one.
    repeated = np.ones(n, bool)
    repeated[np.unique(data, return_index=True)[1]] = False
    bad = (data < 0) | (data >= n) | repeated
    if bad.any():
        raise EvalError(permutation_message(n).format(detail=int(data[np.argmax(bad)])))
    inverse = np.empty(n, np.int64)
    inverse[data] = np.arange(n)
    return inverse


@impl("sparse_to_dense")
def _sparse_to_dense(args, attrs, out):
    indices, values, default = args
    shape = tuple(attrs["output_shape"])
    result = np.full(shape, default, dtype=out_dtype(out, values))
    coords = indices.reshape(-1, 1) if indices.ndim < 2 else indices
    values = np.broadcast_to(values, (coords.shape[0],))
    for c, v in zip(coords, values):
        result[tuple(int(checked_index(x, shape[a])) for a, x in enumerate(c))] = v
    return result


@impl("sparse_fill_empty_rows")
def _sparse_fill_empty_rows(args, attrs, out):
    """Entries in row order (stable within a row), a default entry for each empty row."""
    indices, values, dense_shape, default = args
    rows = int(dense_shape[0])
    ndims = indices.shape[1]
    present = np.zeros(rows, bool)
    present[checked_index(indices[:, 0], rows, "row")] = True
    empty = np.flatnonzero(~present)
    filler = np.zeros((len(empty), ndims), np.int64)
    filler[:, 0] = empty
    all_idx = np.concatenate([indices.astype(np.int64), filler])
    all_val = np.concatenate([values, np.full(len(empty), default, values.dtype)])
    order = np.argsort(all_idx[:, 0], kind="stable")
    return all_idx[order], all_val[order], (~present).astype(np.int64)


SPARSE_RESHAPE_MINUS_ONE = "sparse_reshape: only one dimension of new_shape can be -1"
SPARSE_RESHAPE_SIZE = "sparse_reshape: cannot reshape {detail} elements into new_shape"


@impl("sparse_reshape")
def _sparse_reshape(args, attrs, out):
    """Each entry's row-major position in ``prev_shape``, unravelled in ``new_shape`` (one
    -1 inferred); floor division, a 0 dim gives coordinate 0 (messages shared with the JIT)."""
    indices, prev_shape, new_shape = args
    prev = prev_shape.astype(np.int64)
    new = new_shape.astype(np.int64).copy()
    total = int(np.prod(prev))
    unknown = np.flatnonzero(new == -1)
    if len(unknown) > 1:
        raise EvalError(SPARSE_RESHAPE_MINUS_ONE)
    if len(unknown):
        rest = int(np.prod(new[new != -1]))
        if rest == 0 or total % rest:
            raise EvalError(SPARSE_RESHAPE_SIZE.format(detail=total))
        new[unknown[0]] = total // rest
    if int(np.prod(new)) != total:
        raise EvalError(SPARSE_RESHAPE_SIZE.format(detail=total))
    flat = np.zeros(indices.shape[0], np.int64)
    for i, d in enumerate(prev):
        flat = flat * d + indices[:, i].astype(np.int64)
    coords = np.zeros((indices.shape[0], len(new)), np.int64)
    for i in range(len(new) - 1, -1, -1):
        coords[:, i] = flat % new[i] if new[i] else 0
        flat = flat // new[i] if new[i] else flat
    return coords, new


@impl("sliding_window")
def _sliding_window(args, attrs, out):
    data = args[0]
    axis = norm_axis(attrs["axis"], data.ndim)
    window, strides = attrs["window_shape"], attrs["strides"]
    axes = tuple(range(axis, data.ndim))
    view = np.lib.stride_tricks.sliding_window_view(data, tuple(window), axis=axes)
    index = (slice(None),) * axis + tuple(slice(None, None, s) for s in strides)
    return view[index]
