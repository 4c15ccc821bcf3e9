"""The JIT's tiled dense / matmul / batch_matmul kernels, compiled standalone.

Each case builds a kernel function around ``emit_anchor`` (tests/jit_anchor_harness.py),
runs it on random arrays and compares with the interpreter's numpy implementation:
exactly for integers, to a float tolerance that grows with K. Shapes are drawn so that
every path runs — the few-row ``dot`` / ``axpy`` kernels, the packed tiled kernel with
ragged edges, several K slabs and several column blocks, the plain loops for mixed
dtypes — and the add-one epilogue shows that each output element is finished once.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jit_anchor_harness import Kernel, random_array

import relay_nb as relay
from relay_nb.backend.llvm.kernels import _memory, driver

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def check(kernel: Kernel, arrays, k: int) -> None:
    got = kernel(*arrays)
    want = kernel.expected(*arrays)
    assert got.shape == want.shape and got.dtype == want.dtype
    if got.dtype.kind == "f":
        eps = np.finfo(got.dtype).eps
        np.testing.assert_allclose(got, want, rtol=1e-5 if eps < 1e-10 else 1e-4, atol=8 * eps * max(k, 1) * 4)
    else:
        np.testing.assert_array_equal(got, want)


def run(op, shapes, dtypes, k, epilogue=False, seed=0, scratch=False, **attrs):
    kernel = Kernel(op, shapes, dtypes, epilogue=epilogue, scratch=scratch, **attrs)
    assert kernel.handled
    rng = np.random.default_rng(seed)
    check(kernel, [random_array(rng, s, d) for s, d in zip(shapes, dtypes)], k)
    return kernel


# rows: few (dot/axpy), around the 6-row tile, many (several row blocks of 120)
rows = st.one_of(st.integers(1, 13), st.integers(14, 40), st.sampled_from([121, 250]))
inner = st.one_of(st.integers(1, 40), st.sampled_from([255, 256, 257, 520]))
cols = st.one_of(st.integers(1, 40), st.sampled_from([16, 17, 100]))


@SETTINGS
@given(m=rows, k=inner, n=cols, epilogue=st.booleans(), scratch=st.booleans())
def test_dense_float32(m, k, n, epilogue, scratch):
    run(relay.nn.dense, [(m, k), (n, k)], ["float32"] * 2, k, epilogue, scratch=scratch)


@SETTINGS
@given(m=rows, k=inner, n=cols, ta=st.booleans(), tb=st.booleans(), epilogue=st.booleans())
def test_matmul_transposes(m, k, n, ta, tb, epilogue):
    a = (k, m) if ta else (m, k)
    b = (n, k) if tb else (k, n)
    run(relay.nn.matmul, [a, b], ["float32"] * 2, k, epilogue, transpose_a=ta, transpose_b=tb)


@SETTINGS
@given(
    batch=st.integers(1, 3),
    broadcast=st.sampled_from(["none", "a", "b"]),
    m=st.integers(1, 20),
    k=st.integers(1, 40),
    n=st.integers(1, 40),
    ta=st.booleans(),
    tb=st.booleans(),
    epilogue=st.booleans(),
)
def test_batch_matmul(batch, broadcast, m, k, n, ta, tb, epilogue):
    ba = 1 if broadcast == "a" else batch
    bb = 1 if broadcast == "b" else batch
    a = (ba, k, m) if ta else (ba, m, k)
    b = (bb, n, k) if tb else (bb, k, n)
    run(relay.nn.batch_matmul, [a, b], ["float32"] * 2, k, epilogue, transpose_a=ta, transpose_b=tb)


@pytest.mark.parametrize("dt", ["float64", "int32", "int64", "int16", "uint8"])
@pytest.mark.parametrize("m,k,n", [(3, 7, 5), (13, 30, 21), (7, 300, 18)])
def test_dense_other_dtypes(dt, m, k, n):
    run(relay.nn.dense, [(m, k), (n, k)], [dt, dt], k, epilogue=True)
    run(relay.nn.matmul, [(m, k), (k, n)], [dt, dt], k, epilogue=False)


@pytest.mark.parametrize("src,out", [("int8", "int32"), ("int16", "int64"), ("uint8", "int32"), ("float32", "float64")])
def test_out_dtype_converts_before_multiplying(src, out):
    # int8 inputs accumulate in int32 (the interpreter converts first, as TVM's compute)
    run(relay.nn.dense, [(9, 40), (11, 40)], [src, src], 40, epilogue=True, out_dtype=out)
    run(relay.nn.batch_matmul, [(2, 9, 40), (2, 11, 40)], [src, src], 40, out_dtype=out)


def test_dense_leading_axes_flatten_into_rows():
    run(relay.nn.dense, [(2, 3, 37), (20, 37)], ["float32"] * 2, 37, epilogue=True)
    run(relay.nn.dense, [(37,), (20, 37)], ["float32"] * 2, 37, epilogue=True)


def test_matmul_transpose_a_batches_leading_axes():
    run(relay.nn.matmul, [(3, 25, 14), (25, 30)], ["float32"] * 2, 25, epilogue=True, transpose_a=True)
    run(relay.nn.matmul, [(25,), (25, 30)], ["float32"] * 2, 25)


def test_many_column_blocks_and_slabs():
    # N > driver.NC splits the columns into blocks, K > 256 into slabs: the epilogue then
    # runs per row of each block, once, after the last slab
    run(relay.nn.matmul, [(14, 300), (300, 4200)], ["float32"] * 2, 300, epilogue=True)
    run(relay.nn.dense, [(130, 520), (4200, 520)], ["float32"] * 2, 520, epilogue=True)
    # BERT's intermediate matmul: six column blocks, three slabs, two row blocks (6 + 4 rows
    # past the last full register tile of the second) and a ragged last column panel
    run(relay.nn.matmul, [(130, 768), (768, 3081)], ["float32"] * 2, 768, epilogue=True)


@pytest.mark.parametrize("m,k,n", [(0, 5, 4), (4, 0, 5), (4, 5, 0), (20, 0, 17)])
def test_zero_size(m, k, n):
    # K = 0 is a product of empty sums: zeros (plus the epilogue's one)
    run(relay.nn.dense, [(m, k), (n, k)], ["float32"] * 2, k, epilogue=True)


@pytest.mark.parametrize("m,k,n", [(1, 1000, 3), (2, 9, 1000), (5, 40, 33), (12, 33, 33), (13, 17, 9), (32, 20, 7), (33, 5, 5)])
def test_few_rows_paths(m, k, n):
    # few rows stream B in place: dot products for dense, masked axpy tiles for matmul
    assert driver.SMALL_M == {"dot": 32, "axpy": 12}
    run(relay.nn.dense, [(m, k), (n, k)], ["float32"] * 2, k, epilogue=True)
    run(relay.nn.matmul, [(m, k), (k, n)], ["float32"] * 2, k, epilogue=True)


def test_fallback_without_scratch_memory(monkeypatch):
    # if malloc fails the kernel computes each block with plain loops: same results
    monkeypatch.setattr(_memory, "FORCE_FAIL", True)
    for shapes, k in [([(40, 300), (40, 300)], 300), ([(33, 7), (5, 7)], 7)]:
        run(relay.nn.dense, shapes, ["float32"] * 2, k, epilogue=True)
        run(relay.nn.dense, shapes, ["float64"] * 2, k, epilogue=True)


def test_nonfinite_values_propagate():
    kernel = Kernel(relay.nn.matmul, [(7, 3), (3, 20)], ["float32"] * 2)
    a = np.ones((7, 3), "float32")
    b = np.ones((3, 20), "float32")
    a[2, 1] = np.inf
    b[0, 5] = np.nan
    got = kernel(a, b)
    np.testing.assert_array_equal(got, kernel.expected(a, b))


def test_declines_what_it_does_not_handle():
    kernel = Kernel(relay.nn.dense, [(4, 3), (5, 3)], ["float16"] * 2)
    assert not kernel.handled
    kernel = Kernel(relay.nn.dense, [(4, 3), (5, 3)], ["bool"] * 2)
    assert not kernel.handled


def test_packing_buffers_from_the_callers_workspace():
    # with AnchorCall.scratch the tiled kernel carves its packing buffers from the
    # workspace (allocated by the caller in Python) instead of calling malloc
    kernel = run(relay.nn.dense, [(40, 300), (40, 300)], ["float32"] * 2, 300, epilogue=True, scratch=True)
    assert kernel.workspace_bytes >= (42 * 150 + 150 * 48) * 4  # two K slabs of 150
    assert "malloc" not in kernel.compiled.ir
    kernel = run(relay.nn.dense, [(40, 300), (40, 300)], ["float32"] * 2, 300)
    assert "malloc" in kernel.compiled.ir


# --- end to end: through the JIT executor, against the interpreter --------------------------


def _both(mod, args):
    want = relay.create_executor("interpreter", mod=mod).evaluate()(*args)
    got = relay.create_executor("jit", mod=mod).evaluate()(*args)
    return got, want


def _runtime_calls(mod) -> str:
    """The tiled-kernel runtime routines the built module's kernels call."""
    lib = relay.build(mod)
    return " ".join(k.ir for k in lib.report().kernels if k.native)


@pytest.mark.parametrize("batch", [1, 4, 37])
def test_jit_executor_dense_bias_relu(batch):
    x = relay.var("x", shape=(batch, 300))
    w = relay.var("w", shape=(70, 300))
    bias = relay.var("b", shape=(70,))
    y = relay.nn.relu(relay.nn.bias_add(relay.nn.dense(x, w), bias))
    mod = relay.IRModule.from_expr(relay.Function([x, w, bias], y))
    rng = np.random.default_rng(batch)
    args = [rng.standard_normal(s).astype("float32") for s in [(batch, 300), (70, 300), (70,)]]
    got, want = _both(mod, args)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    assert (got == 0).any() and (got > 0).any()  # relu did something
    routine = "relay_nb_dot_float32" if batch <= 32 else "relay_nb_gemm_block_float32"
    assert routine in _runtime_calls(mod)


def test_jit_executor_batch_matmul_softmax_block():
    q = relay.var("q", shape=(2, 40, 16))
    k = relay.var("k", shape=(2, 40, 16))
    scores = relay.nn.batch_matmul(q, k) * relay.const(0.25)
    y = relay.nn.softmax(scores)
    mod = relay.IRModule.from_expr(relay.Function([q, k], y))
    rng = np.random.default_rng(7)
    args = [rng.standard_normal(s).astype("float32") for s in [(2, 40, 16), (2, 40, 16)]]
    got, want = _both(mod, args)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)
    assert "relay_nb_gemm_block_float32" in _runtime_calls(mod)


@pytest.mark.parametrize("n", [1, 4, 7, 2049])
def test_a_batch_1_dense_gives_the_same_bits_on_every_call(n):
    # the single-row dot kernel sweeps B's rows in the opposite direction on alternate
    # calls (the part of a big weight read last is still in L2): each element is the same
    # dot product either way, the ragged last tile included
    mod = relay.parse(f"def @main(%x: Tensor[(1, 301), float32], %w: Tensor[({n}, 301), float32]) {{ nn.dense(%x, %w) }}")
    rng = np.random.default_rng(n)
    x, w = rng.standard_normal((1, 301)).astype("float32"), rng.standard_normal((n, 301)).astype("float32")
    lib = relay.build(mod, threads=1)
    first = lib(x, w)
    np.testing.assert_allclose(first, x @ w.T, rtol=1e-4, atol=1e-4)
    for _ in range(3):
        assert lib(x, w).tobytes() == first.tobytes()
