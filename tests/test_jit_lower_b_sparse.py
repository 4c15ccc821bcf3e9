"""Property tests: the JIT's buffer rules for nn.sparse_dense (and sparse_dense_padded),
nn.sparse_conv2d and nn.sparse_transpose walk the stored entries natively and agree with
the interpreter (which densifies): exactly for integers and the transpose, to a tolerance
for float sums; malformed structure is an error in both, never an out-of-bounds read."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jit_testing import REDUCE_RTOL, check, compares, random_array, tensor

import relay_nb as relay

PROPS = settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _rng(data) -> np.random.Generator:
    return np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))


def _bsr(rng, rows: int, col_blocks: int, block: tuple, dtype: str, spare: int = 0):
    """Random BSR (or CSR for block ()) arrays: entries per row in random column order,
    duplicates allowed, and ``spare`` unused entries of storage past indptr[-1]."""
    counts = rng.integers(0, col_blocks + 2, rows)
    indptr = np.concatenate([[0], np.cumsum(counts)]).astype("int32")
    nnz = int(indptr[-1]) + spare
    indices = rng.integers(0, max(col_blocks, 1), nnz).astype("int32")
    values = random_array(rng, (nnz, *block), dtype)
    return values, indices, indptr


def _tol(dtype):
    return {"rtol": REDUCE_RTOL[dtype], "atol": 1e-3} if dtype.startswith("float") else {}


@pytest.mark.parametrize("op", ["nn.sparse_dense", "nn.internal.sparse_dense_padded"])
@compares(8)
@PROPS
@given(data=st.data())
def test_sparse_dense(op, data):
    rng = _rng(data)
    block = data.draw(st.sampled_from([(), (1, 1), (2, 1), (2, 3)]))
    bs_r, bs_c = (block + (1, 1))[:2] if block else (1, 1)
    rows, col_blocks = data.draw(st.integers(0, 4)), data.draw(st.integers(1, 3))
    m, k = data.draw(st.integers(1, 4)), col_blocks * bs_c
    lhs = data.draw(st.booleans())
    dtype = data.draw(st.sampled_from(["float32", "int32", "int8"]))
    values, indices, indptr = _bsr(rng, rows, col_blocks, block, dtype, spare=data.draw(st.integers(0, 2)))
    x = random_array(rng, (m, k), dtype)
    check(
        f"def @main(%x: {tensor(x.shape, dtype)}, %d: {tensor(values.shape, dtype)}, %i: {tensor(indices.shape, 'int32')},"
        f" %p: {tensor(indptr.shape, 'int32')}) {{ %0 = {op}(%x, %d, %i, %p, sparse_lhs={lhs}); add(%0, %0) }}",
        x, values, indices, indptr, **_tol(dtype),
    )


@pytest.mark.parametrize("layout", ["NHWC", "NCHW"])
@compares(6)
@PROPS
@given(data=st.data())
def test_sparse_conv2d(layout, data):
    rng = _rng(data)
    k = data.draw(st.sampled_from([1, 3]))
    c = data.draw(st.integers(1, 3))
    n_cols = c * k * k
    bs_r, bs_c = data.draw(st.sampled_from([b for b in [(1, 1), (2, 1), (1, 3)] if n_cols % b[1] == 0]))
    rows = data.draw(st.integers(1, 3))
    dtype = data.draw(st.sampled_from(["float32", "int32"]))
    values, indices, indptr = _bsr(rng, rows, n_cols // bs_c, (bs_r, bs_c), dtype)
    shape = (1, 3, 4, c) if layout == "NHWC" else (1, c, 3, 4)
    x = random_array(rng, shape, dtype)
    check(
        f"def @main(%x: {tensor(shape, dtype)}, %d: {tensor(values.shape, dtype)}, %i: {tensor(indices.shape, 'int32')},"
        f" %p: {tensor(indptr.shape, 'int32')}) {{"
        f' nn.sparse_conv2d(%x, %d, %i, %p, layout="{layout}", kernel_size=[{k}, {k}]) }}',
        x, values, indices, indptr, **_tol(dtype),
    )


@compares(8)
@PROPS
@given(data=st.data())
def test_sparse_transpose(data):
    rng = _rng(data)
    n = data.draw(st.integers(0, 5))
    values, indices, indptr = _bsr(rng, n, n, (), "float32", spare=data.draw(st.integers(0, 2)))
    indices = indices % max(n, 1)
    check(
        f"def @main(%d: {tensor(values.shape, 'float32')}, %i: {tensor(indices.shape, 'int32')},"
        f" %p: {tensor(indptr.shape, 'int32')}) {{ nn.sparse_transpose(%d, %i, %p) }}",
        values, indices, indptr, rtol=0, atol=0,
    )


@pytest.mark.parametrize(
    "indices, indptr, message",
    [
        ([0, 5], [0, 1, 2], "column index 5 is outside a matrix of 4 columns"),
        ([0, 1], [0, 2, 1], "does not index 2 entries"),
        ([0, 1], [0, 1, 3], "does not index 2 entries"),
    ],
)
def test_malformed_structure_is_an_error_in_both_executors(indices, indptr, message):
    mod = relay.parse(
        "def @main(%x: Tensor[(2, 4), float32], %d: Tensor[(2), float32], %i: Tensor[(2), int32],"
        " %p: Tensor[(3), int32]) { nn.sparse_dense(%x, %d, %i, %p) }"
    )
    args = (np.ones((2, 4), "float32"), np.ones(2, "float32"), np.array(indices, "int32"), np.array(indptr, "int32"))
    for executor in ("interpreter", "jit"):
        with pytest.raises(relay.RelayError, match=message):
            relay.create_executor(executor, mod=mod).evaluate()(*args)
    assert relay.build(mod).kernels[0].native
