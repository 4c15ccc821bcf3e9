"""Property tests: the nn.contrib_* convolutions and dense run natively in the JIT by
decomposition into the ops the interpreter reduces them to (layout transforms, the GEMM
and Winograd weight transforms as pad / reshape / transpose / einsum) and agree with the
interpreter: exactly for integers and pure data movement, to a tolerance for float sums."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jit_testing import REDUCE_RTOL, check, compares, random_array, tensor

import relay_nb as relay

PROPS = settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _rng(data) -> np.random.Generator:
    return np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))


def _tol(dtype: str) -> dict:
    return {"rtol": REDUCE_RTOL[dtype], "atol": 1e-3} if dtype.startswith("float") else {}


@compares(6)
@PROPS
@given(data=st.data())
def test_conv2d_nchwc(data):
    rng = _rng(data)
    ic, oc = data.draw(st.sampled_from([2, 4])), data.draw(st.sampled_from([2, 4]))
    ci, co = data.draw(st.sampled_from([1, 2])), data.draw(st.sampled_from([1, 2]))
    h, w = data.draw(st.integers(3, 6)), data.draw(st.integers(3, 6))
    k = data.draw(st.integers(1, 3))
    pad = data.draw(st.integers(0, 1))
    stride = data.draw(st.integers(1, 2))
    out_c = data.draw(st.sampled_from([1, 2]))
    dtype = data.draw(st.sampled_from(["float32", "int32"]))
    xs = (1, ic // ci, h, w, ci)
    ws = (oc // co, ic // ci, k, k, ci, co)
    x, wt = random_array(rng, xs, dtype), random_array(rng, ws, dtype)
    check(
        f"def @main(%x: {tensor(xs, dtype)}, %w: {tensor(ws, dtype)}) {{"
        f" %0 = nn.contrib_conv2d_NCHWc(%x, %w, strides=[{stride}, {stride}], padding=[{pad}, {pad}],"
        f' data_layout="NCHW{ci}c", kernel_layout="OIHW{ci}i{co}o", out_layout="NCHW{out_c}c"); nn.relu(%0) }}',
        x, wt, **_tol(dtype),
    )


@compares(4)
@PROPS
@given(data=st.data())
def test_depthwise_conv2d_nchwc(data):
    rng = _rng(data)
    c, cb = data.draw(st.sampled_from([(4, 2), (4, 4), (2, 1)]))
    h, w = data.draw(st.integers(3, 5)), data.draw(st.integers(3, 5))
    xs = (1, c // cb, h, w, cb)
    ws = (c // cb, 1, 3, 3, 1, cb)
    x, wt = random_array(rng, xs, "float32"), random_array(rng, ws, "float32")
    check(
        f"def @main(%x: {tensor(xs, 'float32')}, %w: {tensor(ws, 'float32')}) {{"
        f" nn.contrib_depthwise_conv2d_NCHWc(%x, %w, padding=[1, 1], groups={c},"
        f' data_layout="NCHW{cb}c", kernel_layout="OIHW1i{cb}o") }}',
        x, wt, **_tol("float32"),
    )


@compares(6)
@PROPS
@given(data=st.data())
def test_dense_pack(data):
    rng = _rng(data)
    m, k = data.draw(st.integers(1, 5)), data.draw(st.integers(1, 7))
    bn, nb = data.draw(st.sampled_from([1, 2, 4])), data.draw(st.integers(1, 3))
    dtype = data.draw(st.sampled_from(["float32", "int16"]))
    out = "int32" if dtype == "int16" else ""
    x, wt = random_array(rng, (m, k), dtype), random_array(rng, (nb, k, bn), dtype)
    check(
        f"def @main(%x: {tensor((m, k), dtype)}, %w: {tensor((nb, k, bn), dtype)}) {{"
        f' %0 = nn.contrib_dense_pack(%x, %w, weight_layout="NC{bn}n", out_dtype="{out}"); add(%0, %0) }}',
        x, wt, **_tol(dtype),
    )


@compares(6)
@PROPS
@given(data=st.data())
def test_gemm_weight_transform_and_conv(data):
    rng = _rng(data)
    kh, kw = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3))
    ci, co = data.draw(st.integers(1, 5)), data.draw(st.integers(1, 6))
    tn, tk = data.draw(st.sampled_from([2, 4])), data.draw(st.sampled_from([1, 2]))
    dtype = data.draw(st.sampled_from(["float32", "int8"]))
    h, w = kh + data.draw(st.integers(0, 3)), kw + data.draw(st.integers(0, 3))
    ws, xs = (kh, kw, ci, co), (1, h, w, ci)
    wt, x = random_array(rng, ws, dtype), random_array(rng, xs, dtype)
    out = ', out_dtype="int32"' if dtype == "int8" else ""
    # the transform alone: pure data movement, exact
    check(f"def @main(%w: {tensor(ws, dtype)}) {{ nn.contrib_conv2d_gemm_weight_transform(%w, tile_N={tn}, tile_K={tk}) }}", wt)
    check(
        f"def @main(%x: {tensor(xs, dtype)}, %w: {tensor(ws, dtype)}) {{"
        f" %0 = nn.contrib_conv2d_gemm_weight_transform(%w, tile_N={tn}, tile_K={tk});"
        f" nn.contrib_conv2d_gemm_without_weight_transform(%x, %0, kernel_size=[{kh}, {kw}], channels={co},"
        f' data_layout="NHWC", kernel_layout="HWIO"{out}) }}',
        x, wt, **_tol(dtype),
    )


@compares(6)
@PROPS
@given(data=st.data())
def test_winograd_2d(data):
    rng = _rng(data)
    tile, k = data.draw(st.sampled_from([(2, 3), (4, 3), (2, 5)]))
    ci, co = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3))
    h = k + data.draw(st.integers(0, 4))
    pad = data.draw(st.integers(0, 1))
    ws, xs = (co, ci, k, k), (1, ci, h, h)
    wt, x = random_array(rng, ws, "float32"), random_array(rng, xs, "float32")
    check(f"def @main(%w: {tensor(ws, 'float32')}) {{ nn.contrib_conv2d_winograd_weight_transform(%w, tile_size={tile}) }}",
          wt, **_tol("float32"))
    check(
        f"def @main(%x: {tensor(xs, 'float32')}, %w: {tensor(ws, 'float32')}) {{"
        f" %0 = nn.contrib_conv2d_winograd_weight_transform(%w, tile_size={tile});"
        f" %1 = nn.contrib_conv2d_winograd_without_weight_transform(%x, %0, tile_size={tile},"
        f" kernel_size=[{k}, {k}], channels={co}, padding=[{pad}, {pad}]); nn.relu(%1) }}",
        x, wt, **_tol("float32"),
    )


@pytest.mark.parametrize("depth", [3, 1])
@compares(3)
@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_winograd_3d(depth, data):
    rng = _rng(data)
    ci, co = data.draw(st.integers(1, 2)), data.draw(st.integers(1, 2))
    ws, xs = (co, ci, depth, 3, 3), (1, ci, depth + 1, 4, 5)
    wt, x = random_array(rng, ws, "float32"), random_array(rng, xs, "float32")
    check(
        f"def @main(%x: {tensor(xs, 'float32')}, %w: {tensor(ws, 'float32')}) {{"
        f" %0 = nn.contrib_conv3d_winograd_weight_transform(%w, tile_size=2);"
        f" nn.contrib_conv3d_winograd_without_weight_transform(%x, %0, tile_size=2,"
        f" kernel_size=[{depth}, 3, 3], channels={co}) }}",
        x, wt, **_tol("float32"),
    )


def test_the_decomposition_stays_inside_the_kernel():
    """The user's module keeps the contrib op (printouts unchanged); the kernel is one
    native kernel whose ops are the contrib op and its fused consumer."""
    mod = relay.parse(
        "def @main(%x: Tensor[(1, 2, 4, 4, 2), float32], %w: Tensor[(2, 2, 3, 3, 2, 2), float32]) {"
        ' %0 = nn.contrib_conv2d_NCHWc(%x, %w, padding=[1, 1], data_layout="NCHW2c",'
        ' kernel_layout="OIHW2i2o"); nn.relu(%0) }'
    )
    lib = relay.build(mod)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 2, 4, 4, 2)).astype("float32")
    w = rng.standard_normal((2, 2, 3, 3, 2, 2)).astype("float32")
    ref = relay.create_executor("interpreter", mod=mod).evaluate()(x, w)
    np.testing.assert_allclose(lib(x, w), ref, rtol=1e-5, atol=1e-5)
    assert "nn.contrib_conv2d_NCHWc(" in mod.astext() and "nn.conv2d(" not in mod.astext()
    (kernel,) = lib.kernels
    assert kernel.native and kernel.ops == ["nn.contrib_conv2d_NCHWc", "nn.relu"]
    assert "nn.contrib_conv2d_NCHWc" in kernel.source
    assert lib.report().native_ops == ["nn.contrib_conv2d_NCHWc", "nn.relu"]


def test_constants_a_decomposition_adds_keep_rebinding_right():
    """The Winograd matrix is a constant of the kernel: a function differing only in its own
    constant reuses the compiled code with both constants in the same order."""
    from relay_nb.backend.llvm.cache import KernelCache

    cache = KernelCache()
    w = np.random.default_rng(1).standard_normal((2, 2, 3, 3)).astype("float32")
    outs = []
    for c in ("1f", "5f"):
        mod = relay.parse(
            "def @main(%w: Tensor[(2, 2, 3, 3), float32]) {"
            f" %0 = nn.contrib_conv2d_winograd_weight_transform(%w, tile_size=2); add(%0, {c}) }}"
        )
        ref = relay.create_executor("interpreter", mod=mod).evaluate()(w)
        lib = relay.build(mod, cache=cache)
        out = lib(w)
        np.testing.assert_allclose(out, ref, rtol=1e-6, atol=1e-6)
        assert lib.kernels[0].native
        outs.append(out)
    assert cache.stats()["compiles"] == 1 and cache.stats()["rebinds"] == 1
    np.testing.assert_allclose(outs[1] - outs[0], 4, rtol=1e-5)


@compares(6)
@PROPS
@given(data=st.data())
def test_bitserial_dense(data):
    rng = _rng(data)
    shape = tuple(data.draw(st.integers(1, 3)) for _ in range(data.draw(st.integers(1, 3))))
    units = data.draw(st.integers(1, 4))
    dbits, wbits = data.draw(st.integers(0, 3)), data.draw(st.integers(1, 3))
    unipolar = data.draw(st.booleans())
    dtype = data.draw(st.sampled_from(["int8", "uint8", "int32"]))
    out = data.draw(st.sampled_from(["int16", "int32", "int64"]))
    x = random_array(rng, shape, dtype, special=True)
    w = random_array(rng, (units, shape[-1]), dtype, special=True)
    check(
        f"def @main(%x: {tensor(shape, dtype)}, %w: {tensor(w.shape, dtype)}) {{"
        f" nn.bitserial_dense(%x, %w, units={units}, data_bits={dbits}, weight_bits={wbits},"
        f' unipolar={unipolar}, out_dtype="{out}") }}',
        x, w,
    )


@pytest.mark.parametrize("layouts", [("NCHW", "OIHW"), ("NHWC", "HWIO")])
@compares(6)
@PROPS
@given(data=st.data())
def test_bitserial_conv2d(layouts, data):
    dl, kl = layouts
    rng = _rng(data)
    c, o = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3))
    k, s, p = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 2)), data.draw(st.integers(0, 1))
    h, w = k + data.draw(st.integers(0, 3)), k + data.draw(st.integers(0, 3))
    xs = (1, c, h, w) if dl == "NCHW" else (1, h, w, c)
    ws = (o, c, k, k) if kl == "OIHW" else (k, k, c, o)
    abits, wbits = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 2))
    unipolar = data.draw(st.booleans())
    x, wt = random_array(rng, xs, "uint8"), random_array(rng, ws, "int8", special=True)
    check(
        f"def @main(%x: {tensor(xs, 'uint8')}, %w: {tensor(ws, 'int8')}) {{"
        f" %0 = nn.bitserial_conv2d(%x, %w, strides=[{s}, {s}], padding=[{p}, {p}], kernel_size=[{k}, {k}],"
        f" channels={o}, activation_bits={abits}, weight_bits={wbits}, data_layout=\"{dl}\", kernel_layout=\"{kl}\","
        f' unipolar={unipolar}, out_dtype="int32"); add(%0, 1) }}',
        x, wt,
    )
