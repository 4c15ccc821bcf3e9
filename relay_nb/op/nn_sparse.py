"""Sparse ``nn`` operators on CSR / BSR matrices given as ``(data, indices, indptr)``:
sparse_dense (and its GPU form nn.internal.sparse_dense_padded), sparse_transpose, sparse_add
and sparse_conv2d.

A CSR matrix has ``data`` and ``indices`` of length nnz and ``indptr`` of rows + 1; a BSR
matrix has ``data`` of shape ``(nnz_blocks, bs_r, bs_c)``, block-column ``indices`` and
block-row ``indptr``.  Relations follow ``src/relay/op/nn/sparse.cc``: the number of rows
comes from ``indptr``, the number of columns from the dense operand.
"""

from __future__ import annotations

from ..errors import RelayTypeError
from ..ir.expr import Expr, TupleWrapper
from ..ir.ty import Any, TensorType, TupleType
from ..typing.relations import forward_relation
from ._common import (
    call,
    ints,
    is_int_dtype,
    is_static,
    register,
    same_dim,
    schema,
    tensor,
    type_text,
)
from .registry import OpPattern


_WEIGHT_PARTS = ("weight_data", "weight_indices", "weight_indptr")
_SPARSE_PARTS = ("sparse_data", "sparse_indices", "sparse_indptr")


def _operands(types, names):
    return [tensor(t, what) for t, what in zip(types, names)]


def _rows(indptr: TensorType, block_rows=1):
    n = indptr.shape[0]
    return (n - 1) * block_rows if is_static(n) and is_static(block_rows) else Any


def _check_sparse(data, indices, indptr, ranks=(1, 3)):
    if len(data.shape) not in ranks:
        kinds = " or ".join(f"{r}" for r in ranks)
        raise RelayTypeError(
            f"sparse data must have rank {kinds} (CSR or BSR), found {type_text(data)}"
        )
    for t, what in ((indices, "indices"), (indptr, "indptr")):
        if len(t.shape) != 1:
            raise RelayTypeError(f"{what} must be 1-d, found {type_text(t)}")
        if is_int_dtype(t.dtype) is False:
            raise RelayTypeError(f"{what} must be integers, found {t.dtype}")
    if not same_dim(data.shape[0], indices.shape[0]):
        raise RelayTypeError(
            f"data has {data.shape[0]} entries but indices {indices.shape[0]}"
        )
    return data.shape[1] if len(data.shape) >= 2 else 1


@forward_relation("SparseDense")
def _sparse_dense_rel(inputs, attrs, reporter):
    dense = tensor(inputs[0], "data")
    sdata, sind, sptr = _operands(inputs[1:], _WEIGHT_PARTS)
    bs_r = _check_sparse(sdata, sind, sptr)
    if len(dense.shape) != 2:
        raise RelayTypeError(f"the dense operand must be a matrix, found {type_text(dense)}")
    dtype = reporter.unify_dtype(dense.dtype, sdata.dtype)
    if attrs["sparse_lhs"]:
        return TensorType((_rows(sptr, bs_r), dense.shape[0]), dtype)
    return TensorType((dense.shape[0], _rows(sptr, bs_r)), dtype)


@forward_relation("SparseTranspose")
def _sparse_transpose_rel(inputs, attrs, reporter):
    data, indices, indptr = _operands(inputs, _SPARSE_PARTS)
    _check_sparse(data, indices, indptr, ranks=(1,))
    return TupleType((data, indices, indptr))


@forward_relation("SparseAdd")
def _sparse_add_rel(inputs, attrs, reporter):
    dense = tensor(inputs[0], "dense_data")
    data, indices, indptr = _operands(inputs[1:], _SPARSE_PARTS)
    _check_sparse(data, indices, indptr, ranks=(1,))
    if len(dense.shape) != 2:
        raise RelayTypeError(f"dense_data must be a matrix, found {type_text(dense)}")
    if not same_dim(indptr.shape[0], dense.shape[0] + 1 if is_static(dense.shape[0]) else Any):
        raise RelayTypeError(
            f"indptr has {indptr.shape[0]} entries for a matrix of {dense.shape[0]} rows"
        )
    if isinstance(data.dtype, str) and isinstance(dense.dtype, str) and data.dtype != dense.dtype:
        raise RelayTypeError(
            f"sparse and dense data must have one dtype, found {data.dtype} and {dense.dtype}"
        )
    return dense


@forward_relation("SparseConv2d")
def _sparse_conv2d_rel(inputs, attrs, reporter):
    dense = tensor(inputs[0], "dense_data")
    sdata, sind, sptr = _operands(inputs[1:], _WEIGHT_PARTS)
    bs_r = _check_sparse(sdata, sind, sptr, ranks=(2, 3))
    if len(dense.shape) != 4:
        raise RelayTypeError(f"dense_data must have rank 4, found {type_text(dense)}")
    if tuple(attrs["kernel_size"]) not in ((1, 1), (3, 3)):
        raise RelayTypeError(
            f"kernel_size must be [1, 1] or [3, 3], got {list(attrs['kernel_size'])}"
        )
    co = _rows(sptr, bs_r)
    n, a, b, c = dense.shape
    if attrs["layout"] == "NHWC":
        shape = (n, a, b, co)
    elif attrs["layout"] == "NCHW":
        shape = (n, co, b, c)
    else:
        raise RelayTypeError(f"layout must be NHWC or NCHW, got {attrs['layout']!r}")
    return TensorType(shape, reporter.unify_dtype(dense.dtype, sdata.dtype))


_SPARSE_DENSE_ATTRS = schema("relay.attrs.SparseDenseAttrs", ("sparse_lhs", "bool", False))
_WEIGHT_ARGS = ("data", "weight_data", "weight_indices", "weight_indptr")

register(
    "nn.sparse_dense",
    4,
    _sparse_dense_rel,
    attrs=_SPARSE_DENSE_ATTRS,
    pattern=OpPattern.OUT_ELEMWISE_FUSABLE,
    arg_names=_WEIGHT_ARGS,
    doc="``data @ W^T`` with a CSR or BSR weight ``W`` (``sparse_lhs``: ``W @ data^T``).",
)
register(
    "nn.internal.sparse_dense_padded",
    4,
    _sparse_dense_rel,
    attrs=_SPARSE_DENSE_ATTRS,
    pattern=OpPattern.OUT_ELEMWISE_FUSABLE,
    arg_names=_WEIGHT_ARGS,
    doc="The sparse_dense whose rows are padded (with zero entries) for GPUs; the same product.",
)
register(
    "nn.sparse_transpose",
    3,
    _sparse_transpose_rel,
    attrs=schema("relay.attrs.SparseTransposeAttrs"),
    pattern=OpPattern.OUT_ELEMWISE_FUSABLE,
    arg_names=("sparse_data", "sparse_indices", "sparse_indptr"),
    doc="Transpose a square CSR matrix: the result is its transpose's (data, indices, indptr).",
)
register(
    "nn.sparse_add",
    4,
    _sparse_add_rel,
    pattern=OpPattern.OPAQUE,
    arg_names=("dense_data", "sparse_data", "sparse_indices", "sparse_indptr"),
    doc="``dense + S`` for a CSR matrix ``S`` of the dense matrix's shape.",
)
register(
    "nn.sparse_conv2d",
    4,
    _sparse_conv2d_rel,
    attrs=schema(
        "relay.attrs.SparseConv2DAttrs", ("layout", "str", "NHWC"), ("kernel_size", "ints", (1, 1))
    ),
    pattern=OpPattern.OUT_ELEMWISE_FUSABLE,
    arg_names=("dense_data", "weight_data", "weight_indices", "weight_indptr"),
    doc="1 x 1 or 3 x 3 ('same', stride 1) convolution with a BSR weight over the flattened "
    "kernel: ``(O, I)`` for 1 x 1, ``(O, 9 I)`` ordered HWI (NHWC) or IHW (NCHW) for 3 x 3.",
)


def sparse_dense(dense_mat, sparse_mat, sparse_lhs=False) -> Expr:
    """``dense_mat @ sparse_mat^T``; ``sparse_mat`` is ``(data, indices, indptr)`` or an object
    with those attributes (a scipy CSR / BSR matrix of constants)."""
    parts = _parts(sparse_mat)
    return call("nn.sparse_dense", dense_mat, *parts, sparse_lhs=sparse_lhs)


def _parts(sparse_mat):
    if hasattr(sparse_mat, "indptr"):
        return sparse_mat.data, sparse_mat.indices, sparse_mat.indptr
    return tuple(sparse_mat)


def sparse_transpose(x) -> TupleWrapper:
    """The transpose of a square CSR matrix ``x = (data, indices, indptr)``, as a 3-tuple."""
    return TupleWrapper(call("nn.sparse_transpose", *_parts(x)), 3)


def sparse_add(dense_mat, sparse_mat) -> Expr:
    """``dense_mat + S`` for a CSR ``sparse_mat = (data, indices, indptr)``."""
    return call("nn.sparse_add", dense_mat, *_parts(sparse_mat))


def sparse_conv2d(dense_data, weight_data, weight_indices, weight_indptr, layout="NHWC",
                  kernel_size=1) -> Expr:  # fmt: skip
    """A 1 x 1 or 3 x 3 convolution with the BSR weight (weight_data, weight_indices,
    weight_indptr)."""
    return call(
        "nn.sparse_conv2d",
        dense_data,
        weight_data,
        weight_indices,
        weight_indptr,
        layout=layout,
        kernel_size=ints(kernel_size, 2),
    )


__all__ = ["sparse_add", "sparse_conv2d", "sparse_dense", "sparse_transpose"]
