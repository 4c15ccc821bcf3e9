"""numpy implementations of :mod:`relay_nb.op.nn_sparse`.

Each sparse operand is expanded to a dense matrix (``bsr_to_dense``) and the product is a
numpy matmul: the interpreter's job is the answer, not sparse speed.  Malformed sparse
inputs (an ``indptr`` that decreases or runs past the data, a column outside the matrix) are
EvalErrors, where TVM reads out of bounds.
"""

from __future__ import annotations

import numpy as np

from ...errors import EvalError
from ._util import impl


def bsr_to_dense(data, indices, indptr, n_cols: int) -> np.ndarray:
    """The dense matrix of CSR (``data`` 1-d) or BSR (``(nnz, bs_r[, bs_c])``) arrays."""
    blocks = data.reshape(data.shape[0], 1, 1) if data.ndim == 1 else data
    if blocks.ndim == 2:
        blocks = blocks[:, :, None]
    _, bs_r, bs_c = blocks.shape
    ptr = indptr.astype(np.int64)
    if len(ptr) == 0 or ptr[0] < 0 or np.any(np.diff(ptr) < 0) or ptr[-1] > len(blocks):
        raise EvalError(f"indptr {ptr.tolist()} does not index {len(blocks)} entries")
    if len(indices) < ptr[-1]:
        raise EvalError(f"indptr needs {ptr[-1]} indices, found {len(indices)}")
    rows = len(ptr) - 1
    if n_cols % bs_c:
        raise EvalError(f"{n_cols} columns are not a whole number of {bs_c}-wide blocks")
    out = np.zeros((rows * bs_r, n_cols), blocks.dtype)
    for r in range(rows):
        for j in range(ptr[r], ptr[r + 1]):
            col = int(indices[j])
            if not 0 <= col * bs_c < n_cols:
                raise EvalError(f"column index {col} is outside a matrix of {n_cols} columns")
            out[r * bs_r : (r + 1) * bs_r, col * bs_c : (col + 1) * bs_c] += blocks[j]
    return out


def _sparse_dense(args, attrs, out):
    dense, data, indices, indptr = args
    s = bsr_to_dense(data, indices, indptr, dense.shape[1])
    if attrs["sparse_lhs"]:
        return s @ dense.T.astype(s.dtype)
    return dense @ s.T.astype(dense.dtype)


impl("nn.sparse_dense")(_sparse_dense)
impl("nn.internal.sparse_dense_padded")(_sparse_dense)


@impl("nn.sparse_transpose")
def _sparse_transpose(args, attrs, out):
    """CSR of the transpose: entries sorted by (column, row), as a counting sort."""
    data, indices, indptr = args
    n = len(indptr) - 1
    ptr = indptr.astype(np.int64)
    rows = np.repeat(np.arange(n), np.diff(ptr))
    cols = indices[: ptr[-1]].astype(np.int64)
    if np.any((cols < 0) | (cols >= n)):
        raise EvalError(f"a column index is outside the square matrix of {n} rows")
    order = np.lexsort((rows, cols))
    t_ptr = np.zeros(n + 1, np.int64)
    np.add.at(t_ptr, cols + 1, 1)
    # entries past indptr[-1] (unused storage) stay where they are, so the shapes are kept
    t_data, t_indices = data.copy(), indices.copy()
    t_data[: ptr[-1]] = data[: ptr[-1]][order]
    t_indices[: ptr[-1]] = rows[order]
    return t_data, t_indices, np.cumsum(t_ptr).astype(indptr.dtype)


@impl("nn.sparse_add")
def _sparse_add(args, attrs, out):
    dense, data, indices, indptr = args
    return dense + bsr_to_dense(data, indices, indptr, dense.shape[1])


@impl("nn.sparse_conv2d")
def _sparse_conv2d(args, attrs, out):
    """im2col with TVM's column orders, then a dense product with the expanded weight."""
    x, data, indices, indptr = args
    nhwc = attrs["layout"] == "NHWC"
    if not nhwc:
        x = np.transpose(x, (0, 2, 3, 1))
    n, h, w, c = x.shape
    if tuple(attrs["kernel_size"]) == (1, 1):
        cols = x.reshape(n * h * w, c)
    else:  # 3 x 3, padding 1, stride 1
        xp = np.pad(x, [(0, 0), (1, 1), (1, 1), (0, 0)])
        taps = np.stack([xp[:, i : i + h, j : j + w] for i in range(3) for j in range(3)], axis=3)
        # taps: (n, h, w, 9, c); NHWC flattens (kh, kw, c), NCHW (c, kh, kw)
        cols = taps if nhwc else np.swapaxes(taps, 3, 4)
        cols = cols.reshape(n * h * w, 9 * c)
    weight = bsr_to_dense(data, indices, indptr, cols.shape[1])
    y = (cols @ weight.T.astype(cols.dtype)).reshape(n, h, w, -1)
    return y if nhwc else np.transpose(y, (0, 3, 1, 2))


__all__ = ["bsr_to_dense"]
