"""Gather, scatter and indexing: gather, gather_nd, scatter_elements, scatter_nd, adv_index,
one_hot, meshgrid, sequence_mask, reverse_sequence, slice_like, strided_set,
matrix_set_diag, trilu, argwhere, unravel_index, invert_permutation, the sparse helpers
(sparse_to_dense, sparse_fill_empty_rows, sparse_reshape) and sliding_window.

Relations follow ``src/relay/op/tensor/transform.cc`` (TVM 0.19), with its ICHECKs turned
into messages.  Results whose size depends on values (``argwhere``, the rows of
``sparse_fill_empty_rows``) have a ``?`` dimension, as in TVM.  One deviation:
``sparse_fill_empty_rows`` types its new values with the values' dtype (TVM's relation
says ``int64`` for all three fields, which would truncate float values); and
``matrix_set_diag`` expects diagonals as long as TensorFlow's rule says (its kernel's),
where TVM's relation asks for a longer one when the band is off-centre.
"""

from __future__ import annotations

import numpy as np

from ..errors import RelayTypeError
from ..ir.expr import Call, TupleWrapper
from ..ir.ty import Any, TensorType, TupleType
from ..typing.relations import broadcast_shapes, forward_relation, shape_text
from ._common import (
    call,
    ints,
    is_int_dtype,
    is_static,
    norm_axis,
    pick_dim,
    register,
    same_dim,
    schema,
    tensor,
    tensors_of_tuple,
    to_expr,
)
from .registry import OpPattern

__all__ = [
    "gather",
    "gather_nd",
    "scatter_elements",
    "scatter_nd",
    "adv_index",
    "one_hot",
    "meshgrid",
    "sequence_mask",
    "reverse_sequence",
    "slice_like",
    "strided_set",
    "matrix_set_diag",
    "trilu",
    "argwhere",
    "unravel_index",
    "invert_permutation",
    "sparse_to_dense",
    "sparse_fill_empty_rows",
    "sparse_reshape",
    "sliding_window",
]


def _int_tensor(t, what: str) -> TensorType:
    tt = tensor(t, what)
    if is_int_dtype(tt.dtype) is False:
        raise RelayTypeError(f"{what} must be integers, found {tt.dtype}")
    return tt


def _check_dims(a: tuple, b: tuple, what: str) -> tuple:
    """Two shapes that must agree (dynamic dims match anything), merged."""
    if len(a) != len(b) or not all(same_dim(x, y) for x, y in zip(a, b)):
        raise RelayTypeError(f"{what}: shapes {shape_text(a)} and {shape_text(b)} differ")
    return tuple(pick_dim(x, y) for x, y in zip(a, b))


def _leading_index_count(indices: TensorType, op: str) -> int:
    m = indices.shape[0] if indices.shape else None
    if not is_static(m):
        raise RelayTypeError(
            f"{op} needs a static first axis of indices (the index tuple), got "
            f"{shape_text(indices.shape)}"
        )
    return m


# --- gather / scatter ----------------------------------------------------------------------


@forward_relation("Gather")
def gather_rel(inputs, attrs, reporter):
    """``out[i..., j, k...] = data[i..., indices[i..., j, k...], k...]``: indices' shape."""
    data = tensor(inputs[0], "data")
    indices = _int_tensor(inputs[1], "indices")
    if attrs["axis"] is None:
        raise RelayTypeError("axis must be given")
    if len(data.shape) != len(indices.shape):
        raise RelayTypeError(
            f"data {shape_text(data.shape)} and indices {shape_text(indices.shape)} must have "
            "the same rank"
        )
    axis = norm_axis(attrs["axis"], len(data.shape))
    for i, (d, n) in enumerate(zip(data.shape, indices.shape)):
        if i != axis and not same_dim(d, n):
            raise RelayTypeError(
                f"indices {shape_text(indices.shape)} and data {shape_text(data.shape)} differ "
                f"in dimension {i}"
            )
    return TensorType(indices.shape, data.dtype)


@forward_relation("GatherND")
def gather_nd_rel(inputs, attrs, reporter):
    """indices (M, Y...) pick ``data[b..., idx_0, ..., idx_{M-1}, :]``: shape Y + rest."""
    data = tensor(inputs[0], "data")
    indices = _int_tensor(inputs[1], "indices")
    if indices.shape and not is_static(indices.shape[0]) and attrs["index_rank"] is not None:
        m = attrs["index_rank"]  # what index_rank is for: a dynamic first axis of indices
    else:
        m = _leading_index_count(indices, "gather_nd")
    b = attrs["batch_dims"]
    if b < 0 or m + b > len(data.shape):
        raise RelayTypeError(
            f"{m} indices after {b} batch dims do not fit data of rank {len(data.shape)}"
        )
    for i in range(b):
        if not same_dim(data.shape[i], indices.shape[i + 1]):
            raise RelayTypeError(
                f"batch dimension {i} of data {shape_text(data.shape)} and indices "
                f"{shape_text(indices.shape)} differ"
            )
    return TensorType(indices.shape[1:] + data.shape[m + b :], data.dtype)


SCATTER_REDUCTIONS = ("update", "add", "mul", "mean", "min", "max")
SCATTER_ND_MODES = ("update", "add", "mul", "min", "max")


@forward_relation("ScatterElements")
def scatter_elements_rel(inputs, attrs, reporter):
    data = tensor(inputs[0], "data")
    indices = _int_tensor(inputs[1], "indices")
    updates = tensor(inputs[2], "updates")
    reporter.unify_dtype(data.dtype, updates.dtype)
    norm_axis(attrs["axis"], len(data.shape))
    if attrs["reduction"] not in SCATTER_REDUCTIONS:
        raise RelayTypeError(
            f"reduction must be one of {', '.join(SCATTER_REDUCTIONS)}, got {attrs['reduction']!r}"
        )
    _check_dims(indices.shape, updates.shape, "indices and updates")
    if len(indices.shape) != len(data.shape):
        raise RelayTypeError(
            f"indices {shape_text(indices.shape)} must have the rank of data {shape_text(data.shape)}"
        )
    return TensorType(data.shape, data.dtype)


@forward_relation("ScatterND")
def scatter_nd_rel(inputs, attrs, reporter):
    """indices (M, Y...) and updates (Y..., X_M...) write into data (X_0...X_{N-1})."""
    data = tensor(inputs[0], "data")
    indices = _int_tensor(inputs[1], "indices")
    updates = tensor(inputs[2], "updates")
    reporter.unify_dtype(data.dtype, updates.dtype)
    if attrs["mode"] not in SCATTER_ND_MODES:
        raise RelayTypeError(
            f"mode must be one of {', '.join(SCATTER_ND_MODES)}, got {attrs['mode']!r}"
        )
    m = _leading_index_count(indices, "scatter_nd")
    if m > len(data.shape):
        raise RelayTypeError(f"{m} indices do not fit data of rank {len(data.shape)}")
    expected = indices.shape[1:] + data.shape[m:]
    _check_dims(updates.shape, expected, "updates and indices[1:] + data[M:]")
    return TensorType(data.shape, data.dtype)


@forward_relation("AdvIndex")
def adv_index_rel(inputs, attrs, reporter):
    """``data[i0, i1, ...]`` with NumPy advanced indexing of the leading axes."""
    fields = tensors_of_tuple(inputs[0], "inputs")
    data, index = fields[0], fields[1:]
    if not index:
        raise RelayTypeError("adv_index needs at least one index tensor after the data")
    if len(index) > len(data.shape):
        raise RelayTypeError(f"too many indices ({len(index)}) for data of rank {len(data.shape)}")
    shape = index[0].shape
    for i, t in enumerate(index):
        if is_int_dtype(t.dtype) is False and t.dtype != "bool":
            raise RelayTypeError(f"index {i} must be integers, found {t.dtype}")
        shape = broadcast_shapes(shape, t.shape)
    return TensorType(shape + data.shape[len(index) :], data.dtype)


# --- construction and masks --------------------------------------------------------------


@forward_relation("OneHot")
def one_hot_rel(inputs, attrs, reporter):
    indices = _int_tensor(inputs[0], "indices")
    on = tensor(inputs[1], "on_value")
    off = tensor(inputs[2], "off_value")
    if on.shape or off.shape:
        raise RelayTypeError("on_value and off_value must be scalars")
    if attrs["depth"] <= 0:
        raise RelayTypeError(f"depth must be positive, got {attrs['depth']}")
    # The result has attrs.dtype (on/off values are cast to it, as TVM's kernel does).
    dtype = attrs["dtype"] or reporter.unify_dtype(on.dtype, off.dtype)
    rank = len(indices.shape)
    axis = rank if attrs["axis"] == -1 else norm_axis(attrs["axis"], rank, extra=1)
    shape = indices.shape[:axis] + (attrs["depth"],) + indices.shape[axis:]
    return TensorType(shape, dtype)


@forward_relation("Meshgrid")
def meshgrid_rel(inputs, attrs, reporter):
    fields = tensors_of_tuple(inputs[0], "data")
    if attrs["indexing"] not in ("ij", "xy"):
        raise RelayTypeError(f"indexing must be 'ij' or 'xy', got {attrs['indexing']!r}")
    dtype = fields[0].dtype
    grid = []
    for i, f in enumerate(fields):
        dtype = reporter.unify_dtype(dtype, f.dtype)
        if len(f.shape) > 1:
            raise RelayTypeError(f"field {i} must be a scalar or a 1-D vector, found {shape_text(f.shape)}")
        grid.append(f.shape[0] if f.shape else 1)
    if attrs["indexing"] == "xy" and len(grid) >= 2:
        grid[0], grid[1] = grid[1], grid[0]
    return TupleType(tuple(TensorType(tuple(grid), dtype) for _ in fields))


@forward_relation("SequenceMask")
def sequence_mask_rel(inputs, attrs, reporter):
    """data (T, B, ...) with axis=0, or (B, T, ...) with axis=1; valid_length (B,)."""
    data = tensor(inputs[0], "data")
    valid = tensor(inputs[1], "valid_length")  # integer or float lengths (MXNet's are float)
    if attrs["axis"] not in (0, 1):
        raise RelayTypeError(f"axis must be 0 or 1, got {attrs['axis']}")
    if len(data.shape) < 2:
        raise RelayTypeError(f"data must have rank at least 2, found {shape_text(data.shape)}")
    _check_dims(valid.shape, (data.shape[1 - attrs["axis"]],), "valid_length and the batch axis")
    return data


@forward_relation("ReverseSequence")
def reverse_sequence_rel(inputs, attrs, reporter):
    data = tensor(inputs[0], "data")
    lengths = _int_tensor(inputs[1], "seq_lengths")
    rank = len(data.shape)
    if len(lengths.shape) != 1:
        raise RelayTypeError(f"seq_lengths must be a 1-D vector, found {shape_text(lengths.shape)}")
    batch = norm_axis(attrs["batch_axis"], rank, "batch_axis")
    seq = norm_axis(attrs["seq_axis"], rank, "seq_axis")
    if batch == seq:
        raise RelayTypeError("batch_axis and seq_axis must differ")
    if not same_dim(lengths.shape[0], data.shape[batch]):
        raise RelayTypeError(
            f"seq_lengths has {lengths.shape[0]} entries but the batch axis has {data.shape[batch]}"
        )
    return data


@forward_relation("SliceLike")
def slice_like_rel(inputs, attrs, reporter):
    data = tensor(inputs[0], "data")
    like = tensor(inputs[1], "shape_like")
    shape = list(data.shape)
    if attrs["axes"] is None:
        axes = list(range(min(len(data.shape), len(like.shape))))
    else:
        if not attrs["axes"]:
            raise RelayTypeError("axes cannot be empty")
        axes = [norm_axis(a, len(data.shape)) for a in attrs["axes"]]
    for a in axes:
        if a >= len(like.shape):
            raise RelayTypeError(f"axis {a} exceeds the rank {len(like.shape)} of shape_like")
        if is_static(like.shape[a]) and is_static(shape[a]) and like.shape[a] > shape[a]:
            raise RelayTypeError(
                f"axis {a}: shape_like's {like.shape[a]} exceeds the data's {shape[a]}"
            )
        shape[a] = like.shape[a]
    return TensorType(tuple(shape), data.dtype)


@forward_relation("StridedSet")
def strided_set_rel(inputs, attrs, reporter):
    """``data`` with ``data[begin:end:strides] = v``; begin/end/strides are 1-D int tensors."""
    data = tensor(inputs[0], "data")
    v = tensor(inputs[1], "v")
    reporter.unify_dtype(data.dtype, v.dtype)
    for t, what in zip(inputs[2:5], ("begin", "end", "strides")):
        t = _int_tensor(t, what)
        if len(t.shape) != 1:
            raise RelayTypeError(f"{what} must be a 1-D tensor, found {shape_text(t.shape)}")
    return data


def _max_diag_len(rows, cols, k1, k2):
    """The longest of diagonals k1..k2 (TensorFlow's rule; TVM's relation has a variant
    that disagrees with its own kernel for off-centre bands)."""
    if not (is_static(rows) and is_static(cols)):
        return Any
    return min(rows + min(0, k2), cols - max(0, k1))


@forward_relation("MatrixSetDiag")
def matrix_set_diag_rel(inputs, attrs, reporter):
    """Diagonals k1..k2 of the innermost matrices of ``input`` replaced by ``diagonal``."""
    data = tensor(inputs[0], "input")
    diag = tensor(inputs[1], "diagonal")
    reporter.unify_dtype(data.dtype, diag.dtype)
    k1, k2 = attrs["k1"], attrs["k2"]
    if k2 < k1:
        raise RelayTypeError(f"k2 ({k2}) must not be smaller than k1 ({k1})")
    if len(data.shape) < 2:
        raise RelayTypeError(f"input must have rank at least 2, found {shape_text(data.shape)}")
    rows, cols = data.shape[-2:]
    if (is_static(rows) and rows <= -k1) or (is_static(cols) and cols <= k2):
        raise RelayTypeError(f"diagonals {k1}..{k2} lie outside {rows} x {cols} matrices")
    batch = data.shape[:-2]
    expected = batch + ((k2 - k1 + 1,) if k1 != k2 else ()) + (_max_diag_len(rows, cols, k1, k2),)
    _check_dims(diag.shape, expected, "diagonal and the input's diagonals")
    return data


@forward_relation("Trilu")
def trilu_rel(inputs, attrs, reporter):
    data = tensor(inputs[0], "data")
    k = _int_tensor(inputs[1], "k")
    if k.shape:
        raise RelayTypeError(f"k must be a 0-D tensor, found {shape_text(k.shape)}")
    if len(data.shape) < 2:
        raise RelayTypeError(f"data must have rank at least 2, found {shape_text(data.shape)}")
    return data


# --- index arithmetic ------------------------------------------------------------------------


@forward_relation("ArgWhere")
def argwhere_rel(inputs, attrs, reporter):
    cond = tensor(inputs[0], "condition")
    return TensorType((Any, len(cond.shape)), "int32")


@forward_relation("UnRavelIndex")
def unravel_index_rel(inputs, attrs, reporter):
    indices = _int_tensor(inputs[0], "indices")
    shape = _int_tensor(inputs[1], "shape")
    if len(shape.shape) != 1:
        raise RelayTypeError(f"shape must be a 1-D tensor, found {shape_text(shape.shape)}")
    if len(indices.shape) > 1:
        raise RelayTypeError(f"indices must be a scalar or 1-D, found {shape_text(indices.shape)}")
    return TensorType((shape.shape[0],) + indices.shape, indices.dtype)


@forward_relation("InvertPermutation")
def invert_permutation_rel(inputs, attrs, reporter):
    data = _int_tensor(inputs[0], "data")
    if len(data.shape) != 1:
        raise RelayTypeError(f"data must be a 1-D permutation, found {shape_text(data.shape)}")
    return data


# --- sparse helpers ---------------------------------------------------------------------------


@forward_relation("SparseToDense")
def sparse_to_dense_rel(inputs, attrs, reporter):
    indices = _int_tensor(inputs[0], "sparse_indices")
    values = tensor(inputs[1], "sparse_values")
    default = tensor(inputs[2], "default_value")
    dtype = reporter.unify_dtype(values.dtype, default.dtype)
    if len(indices.shape) > 2:
        raise RelayTypeError("sparse_indices must be 0-D, 1-D or 2-D")
    if len(values.shape) > 1:
        raise RelayTypeError("sparse_values must be 0-D or 1-D")
    if default.shape:
        raise RelayTypeError("default_value must be a scalar")
    if len(indices.shape) == 2 and is_static(indices.shape[1]) and indices.shape[1] != len(attrs["output_shape"]):
        raise RelayTypeError(
            f"sparse_indices give {indices.shape[1]} coordinates for a rank-"
            f"{len(attrs['output_shape'])} output"
        )
    return TensorType(tuple(attrs["output_shape"]), dtype)


@forward_relation("SparseFillEmptyRows")
def sparse_fill_empty_rows_rel(inputs, attrs, reporter):
    """(new_indices (?, ndims), new_values (?,), empty_row_indicator (?,))."""
    indices = _int_tensor(inputs[0], "sparse_indices")
    values = tensor(inputs[1], "sparse_values")
    dense = _int_tensor(inputs[2], "dense_shape")
    default = tensor(inputs[3], "default_value")
    dtype = reporter.unify_dtype(values.dtype, default.dtype)
    if len(indices.shape) != 2 or len(values.shape) != 1 or len(dense.shape) != 1:
        raise RelayTypeError(
            "sparse_indices must be 2-D, sparse_values and dense_shape 1-D, found "
            f"{shape_text(indices.shape)}, {shape_text(values.shape)}, {shape_text(dense.shape)}"
        )
    return TupleType(
        (
            TensorType((Any, indices.shape[1]), "int64"),
            TensorType((Any,), dtype),
            TensorType((Any,), "int64"),
        )
    )


@forward_relation("SparseReshape")
def sparse_reshape_rel(inputs, attrs, reporter):
    indices = _int_tensor(inputs[0], "sparse_indices")
    prev = _int_tensor(inputs[1], "prev_shape")
    new = _int_tensor(inputs[2], "new_shape")
    if len(indices.shape) != 2 or len(prev.shape) != 1 or len(new.shape) != 1:
        raise RelayTypeError("sparse_indices must be 2-D, prev_shape and new_shape 1-D")
    return TupleType(
        (TensorType((indices.shape[0], new.shape[0]), indices.dtype), TensorType(new.shape, new.dtype))
    )


@forward_relation("SlidingWindow")
def sliding_window_rel(inputs, attrs, reporter):
    """Windows over axes [axis, rank): (leading dims, window counts, window shape)."""
    data = tensor(inputs[0], "data")
    axis = norm_axis(attrs["axis"], len(data.shape))
    window, strides = attrs["window_shape"], attrs["strides"]
    n = len(data.shape) - axis
    if len(window) != n or len(strides) != n:
        raise RelayTypeError(
            f"window_shape and strides must have {n} values (rank - axis), got "
            f"{list(window)} and {list(strides)}"
        )
    counts = []
    for d, w, s in zip(data.shape[axis:], window, strides):
        if w < 1 or s < 1:
            raise RelayTypeError("window_shape and strides must be positive")
        if is_static(d) and w > d:
            raise RelayTypeError(f"window {w} is longer than the dimension {d}")
        counts.append((d - w) // s + 1 if is_static(d) else Any)
    return TensorType(data.shape[:axis] + tuple(counts) + tuple(window), data.dtype)


# --- registration -------------------------------------------------------------------------

_P = OpPattern
INDEXING_OPS = [
    # name, inputs, relation, attrs, pattern, arg names, doc
    ("gather", 2, gather_rel, schema("relay.attrs.GatherAttrs", ("axis", "optional_int", None)),
     _P.INJECTIVE, ("data", "indices"),
     "``out[..., j, ...] = data[..., indices[..., j, ...], ...]`` along ``axis`` (ONNX GatherElements)."),
    ("gather_nd", 2, gather_nd_rel,
     schema("relay.attrs.GatherNDAttrs", ("batch_dims", "int", 0), ("index_rank", "optional_int", None)),
     _P.INJECTIVE, ("data", "indices"),
     "Gather slices of ``data`` at the index tuples in the first axis of ``indices``."),
    ("scatter_elements", 3, scatter_elements_rel,
     schema("relay.attrs.ScatterElementsAttrs", ("axis", "int", 0), ("reduction", "str", "update")),
     _P.OPAQUE, ("data", "indices", "updates"),
     "A copy of ``data`` with ``updates`` written (or reduced) at ``indices`` along ``axis``."),
    ("scatter_nd", 3, scatter_nd_rel, schema("relay.attrs.ScatterNDAttrs", ("mode", "str", "update")),
     _P.OPAQUE, ("data", "indices", "updates"),
     "A copy of ``data`` with ``updates`` written (or accumulated) at the index tuples of ``indices``."),
    ("adv_index", 1, adv_index_rel, None, _P.INJECTIVE, ("inputs",),
     "NumPy advanced indexing ``data[i0, i1, ...]`` of a tuple ``(data, i0, i1, ...)``."),
    ("one_hot", 3, one_hot_rel,
     schema("relay.attrs.OneHotAttrs", ("depth", "int", 1), ("axis", "int", -1), ("dtype", "dtype", "")),
     _P.OUT_ELEMWISE_FUSABLE, ("indices", "on_value", "off_value"),
     "``on_value`` where the new ``axis`` equals the index, else ``off_value``."),
    ("meshgrid", 1, meshgrid_rel, schema("relay.attrs.MeshgridAttrs", ("indexing", "str", "ij")),
     _P.INJECTIVE, ("data",), "Coordinate grids from a tuple of 1-D vectors."),
    ("sequence_mask", 2, sequence_mask_rel,
     schema("relay.attrs.SequenceMaskAttrs", ("mask_value", "float", 0.0), ("axis", "int", 0)),
     _P.INJECTIVE, ("data", "valid_length"),
     "Set the steps at or beyond each sequence's valid length to ``mask_value``."),
    ("reverse_sequence", 2, reverse_sequence_rel,
     schema("relay.attrs.ReverseSequenceAttrs", ("seq_axis", "int", 1), ("batch_axis", "int", 0)),
     _P.INJECTIVE, ("data", "seq_lengths"),
     "Reverse the first ``seq_lengths[b]`` steps of each batch entry along ``seq_axis``."),
    ("slice_like", 2, slice_like_rel, schema("relay.attrs.SliceLikeAttrs", ("axes", "optional_ints", None)),
     _P.INJECTIVE, ("data", "shape_like"),
     "The leading part of ``data`` with ``shape_like``'s size on ``axes`` (all when None)."),
    ("strided_set", 5, strided_set_rel, None, _P.INJECTIVE, ("data", "v", "begin", "end", "strides"),
     "A copy of ``data`` with the strided slice ``begin:end:strides`` set to ``v``."),
    ("matrix_set_diag", 2, matrix_set_diag_rel,
     schema("relay.attrs.MatrixSetDiagAttrs", ("k1", "int", 0), ("k2", "int", 0),
            ("super_diag_right_align", "bool", True), ("sub_diag_right_align", "bool", False)),
     _P.INJECTIVE, ("input", "diagonal"),
     "Replace diagonals ``k1..k2`` of the innermost matrices (TensorFlow's MatrixSetDiagV3)."),
    ("trilu", 2, trilu_rel, schema("relay.attrs.TriluAttrs", ("upper", "bool", True)),
     _P.ELEMWISE, ("data", "k"),
     "Keep the upper (``j - i >= k``) or lower (``j - i <= k``) triangle, zero the rest."),
    ("argwhere", 1, argwhere_rel, None, _P.OPAQUE, ("condition",),
     "The int32 coordinates of the non-zero elements, one row each (a ``?`` row count)."),
    ("unravel_index", 2, unravel_index_rel, None, _P.INJECTIVE, ("indices", "shape"),
     "Flat indices into ``shape`` as coordinate rows: out[i, j] is index j's i-th coordinate."),
    ("invert_permutation", 1, invert_permutation_rel, None, _P.INJECTIVE, ("data",),
     "The inverse of a 1-D permutation: ``out[data[i]] = i``."),
    ("sparse_to_dense", 3, sparse_to_dense_rel,
     schema("relay.attrs.SparseToDenseAttrs", ("output_shape", "ints")),
     _P.OPAQUE, ("sparse_indices", "sparse_values", "default_value"),
     "A dense ``output_shape`` tensor of ``default_value`` with ``sparse_values`` at ``sparse_indices``."),
    ("sparse_fill_empty_rows", 4, sparse_fill_empty_rows_rel, None, _P.OPAQUE,
     ("sparse_indices", "sparse_values", "dense_shape", "default_value"),
     "Give every empty row of a sparse (COO) tensor one ``default_value`` entry in column 0."),
    ("sparse_reshape", 3, sparse_reshape_rel, None, _P.INJECTIVE,
     ("sparse_indices", "prev_shape", "new_shape"),
     "The indices of a sparse (COO) tensor after a reshape (one -1 allowed), and the new shape."),
    ("sliding_window", 1, sliding_window_rel,
     schema("relay.attrs.SlidingWindowAttrs", ("axis", "int"), ("window_shape", "ints"), ("strides", "ints")),
     _P.OPAQUE, ("data",), "Every window of ``window_shape`` over the axes from ``axis`` on."),
]  # fmt: skip

for _name, _n, _rel, _attrs, _pattern, _args, _doc in INDEXING_OPS:
    register(_name, _n, _rel, attrs=_attrs, pattern=_pattern, doc=_doc, arg_names=_args)


# --- builders (TVM's python/tvm/relay/op/transform.py) --------------------------------------


def gather(data, axis, indices) -> Call:
    """``relay.gather(data, axis, indices)`` (TVM's argument order)."""
    return call("gather", data, indices, axis=axis)


def gather_nd(data, indices, batch_dims=0, index_rank=None) -> Call:
    """Slices of ``data`` at the index tuples in ``indices``' first axis: ``relay.gather_nd(x, idx)``."""
    return call("gather_nd", data, indices, batch_dims=batch_dims, index_rank=index_rank)


def scatter_elements(data, indices, updates, axis=0, reduction="update") -> Call:
    """``data`` with ``updates`` put at ``indices`` along ``axis`` (``reduction``: update, add, mul, mean, min, max)."""
    return call("scatter_elements", data, indices, updates, axis=axis, reduction=reduction)


def scatter_nd(data, indices, updates, mode="update") -> Call:
    """``data`` with ``updates`` written at the index tuples of ``indices`` (``mode``: update, add, mul, min, max)."""
    return call("scatter_nd", data, indices, updates, mode=mode)


def adv_index(inputs) -> Call:
    """``relay.adv_index([data, i0, i1])``: ``data[i0, i1]`` with NumPy's advanced indexing."""
    return call("adv_index", to_expr(list(inputs)))


def one_hot(indices, on_value, off_value, depth, axis, dtype) -> Call:
    """``relay.one_hot(labels, relay.const(1.0), relay.const(0.0), 10, -1, "float32")``."""
    return call("one_hot", indices, on_value, off_value, depth=int(depth), axis=axis, dtype=dtype)


def meshgrid(data, indexing="ij") -> TupleWrapper:
    """One grid per vector of ``data``: ``gx, gy = relay.meshgrid([x, y], "xy")``."""
    data = list(data)
    return TupleWrapper(call("meshgrid", to_expr(data), indexing=indexing), len(data))


def sequence_mask(data, valid_length, mask_value=0, axis=0) -> Call:
    """Steps at or past ``valid_length[b]`` become ``mask_value`` (data is (T, B, ...) for axis 0)."""
    return call("sequence_mask", data, valid_length, mask_value=float(mask_value), axis=axis)


def reverse_sequence(data, seq_lengths, seq_axis=1, batch_axis=0) -> Call:
    """Reverse the first ``seq_lengths[b]`` steps along ``seq_axis`` for each batch entry ``b``."""
    return call("reverse_sequence", data, seq_lengths, seq_axis=seq_axis, batch_axis=batch_axis)


def slice_like(data, shape_like, axes=None) -> Call:
    """``data[:n0, :n1, ...]`` with the sizes of ``shape_like`` (on ``axes`` only, when given)."""
    return call("slice_like", data, shape_like, axes=ints(axes))


def strided_set(data, v, begin, end, strides=None) -> Call:
    """``data`` with ``data[begin:end:strides] = v``; begin/end/strides are int tensors
    (lists become int64 constants; strides default to ``[1]``, as in TVM)."""
    strides = [1] if strides is None else strides
    return call("strided_set", data, v, _index_vector(begin), _index_vector(end), _index_vector(strides))


def _index_vector(value):
    if isinstance(value, (list, tuple)):
        return to_expr(np.asarray(value, "int64"))
    return value


def matrix_set_diag(data, diagonal, k=0, align="RIGHT_LEFT") -> Call:
    """TVM's ``k`` (int or (k1, k2)) and ``align`` ("RIGHT_LEFT", "LEFT_RIGHT", ...)."""
    k1, k2 = (k, k) if isinstance(k, int) else (k[0], k[1])
    super_right = align[:5] == "RIGHT"
    sub_right = align[-5:] == "RIGHT"
    return call(
        "matrix_set_diag", data, diagonal, k1=k1, k2=k2,
        super_diag_right_align=super_right, sub_diag_right_align=sub_right,
    )  # fmt: skip


def trilu(data, k, upper=True) -> Call:
    """``k`` as an int becomes an int32 constant (TVM's builder does the same)."""
    if isinstance(k, int):
        k = to_expr(np.asarray(k, "int32"))
    return call("trilu", data, k, upper=upper)


def argwhere(condition) -> Call:
    """The coordinates of the non-zero elements, one int32 row each: ``relay.argwhere(x > 0)``."""
    return call("argwhere", condition)


def unravel_index(indices, shape) -> Call:
    """Flat ``indices`` into ``shape`` as coordinates, one row per dimension."""
    return call("unravel_index", indices, shape)


def invert_permutation(data) -> Call:
    """The inverse permutation: ``out[data[i]] = i``."""
    return call("invert_permutation", data)


def sparse_to_dense(sparse_indices, output_shape, sparse_values, default_value=0) -> Call:
    """TVM's argument order; ``output_shape`` is a list of ints (an attribute)."""
    return call(
        "sparse_to_dense", sparse_indices, sparse_values, default_value, output_shape=ints(output_shape)
    )


def sparse_fill_empty_rows(sparse_indices, sparse_values, dense_shape, default_value) -> TupleWrapper:
    """``(new_indices, new_values, empty_row_indicator)`` of a COO tensor with its empty rows filled."""
    c = call("sparse_fill_empty_rows", sparse_indices, sparse_values, dense_shape, default_value)
    return TupleWrapper(c, 3)


def sparse_reshape(sparse_indices, prev_shape, new_shape) -> TupleWrapper:
    """``(new_indices, new_shape)`` of a COO tensor reshaped from ``prev_shape`` to ``new_shape``."""
    return TupleWrapper(call("sparse_reshape", sparse_indices, prev_shape, new_shape), 2)


def sliding_window(data, axis, window_shape, strides) -> Call:
    """Every ``window_shape`` window over the axes from ``axis`` on, ``strides`` apart."""
    return call("sliding_window", data, axis=axis, window_shape=ints(window_shape), strides=ints(strides))
