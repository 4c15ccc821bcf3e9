"""The JIT's conv2d kernel (implicit im2col + the tiled GEMM), compiled standalone.

Random NCHW/OIHW convolutions — strides, asymmetric padding, dilation, groups, sizes that
are no multiple of the 6 x 16 register tile — against the interpreter's numpy
implementation, with and without the add-one epilogue (each output element finished
exactly once). Larger cases cover several K slabs and column blocks; the plain-loop
paths (int8 into int32, no scratch memory) are checked the same way.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from jit_anchor_harness import Kernel, random_array

import relay_nb as relay
from relay_nb.backend.llvm.kernels import _memory

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def run(x_shape, w_shape, dt="float32", epilogue=False, seed=0, **attrs):
    kernel = Kernel(relay.nn.conv2d, [x_shape, w_shape], [dt, dt], epilogue=epilogue, **attrs)
    assert kernel.handled
    rng = np.random.default_rng(seed)
    x, w = random_array(rng, x_shape, dt), random_array(rng, w_shape, dt)
    got, want = kernel(x, w), kernel.expected(x, w)
    assert got.shape == want.shape and got.dtype == want.dtype
    if got.dtype.kind == "f":
        k = w_shape[1] * w_shape[2] * w_shape[3]
        eps = np.finfo(got.dtype).eps
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=32 * eps * k)
    else:
        np.testing.assert_array_equal(got, want)
    return kernel


@st.composite
def convolutions(draw):
    groups = draw(st.integers(1, 3))
    cg, og = draw(st.integers(1, 4)), draw(st.sampled_from([1, 2, 5, 7, 13]))
    kh, kw = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    sh, sw = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    dh, dw = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    pad = tuple(draw(st.integers(0, 2)) for _ in range(4))
    h, w = draw(st.integers(1, 12)), draw(st.integers(1, 20))
    # the padded input must hold one (dilated) window
    assume(h + pad[0] + pad[2] >= (kh - 1) * dh + 1 and w + pad[1] + pad[3] >= (kw - 1) * dw + 1)
    n = draw(st.integers(1, 2))
    attrs = dict(strides=(sh, sw), padding=pad, dilation=(dh, dw), groups=groups)
    return (n, cg * groups, h, w), (og * groups, cg, kh, kw), attrs


@SETTINGS
@given(conv=convolutions(), epilogue=st.booleans())
def test_conv2d_float32(conv, epilogue):
    x_shape, w_shape, attrs = conv
    run(x_shape, w_shape, epilogue=epilogue, **attrs)


@pytest.mark.parametrize(
    "x_shape,w_shape,attrs",
    [
        ((1, 64, 16, 16), (20, 64, 3, 3), dict(padding=(1, 1))),  # K = 576: three slabs
        ((1, 4, 70, 70), (6, 4, 1, 1), {}),  # 4900 output pixels: two column blocks
        ((2, 40, 9, 9), (8, 20, 3, 3), dict(groups=2, strides=(2, 2), padding=(1, 1))),
        ((1, 8, 10, 10), (8, 1, 3, 3), dict(groups=8, padding=(1, 1))),  # depthwise
    ],
)
def test_conv2d_blocks_and_groups(x_shape, w_shape, attrs):
    run(x_shape, w_shape, epilogue=True, **attrs)


@pytest.mark.parametrize("dt", ["float64", "int32", "int64", "int16"])
def test_conv2d_other_dtypes(dt):
    run((2, 4, 7, 6), (6, 2, 3, 2), dt, epilogue=True, padding=(1, 0, 2, 1), strides=(2, 1), groups=2)


def test_conv2d_int8_accumulates_in_int32():
    run((1, 6, 5, 5), (4, 6, 3, 3), "int8", epilogue=True, padding=(1, 1), out_dtype="int32")


@pytest.mark.parametrize("padding", [(0, 0), (1, 2)])
def test_conv2d_fallback_without_scratch_memory(monkeypatch, padding):
    monkeypatch.setattr(_memory, "FORCE_FAIL", True)
    run((2, 6, 9, 8), (10, 3, 3, 3), epilogue=True, padding=padding, groups=2, dilation=(2, 1))
    run((1, 30, 8, 8), (7, 30, 3, 3), epilogue=True, padding=padding)  # K = 270: two slabs


def test_conv2d_empty_image_all_padding():
    # H = 0 with padding 1 on both sides: the output row reads only padding
    run((1, 2, 0, 3), (3, 2, 2, 1), epilogue=True, padding=(1, 0, 1, 0))


def test_conv2d_zero_batch():
    run((0, 2, 5, 5), (3, 2, 3, 3), epilogue=True)


def test_conv2d_declines_other_layouts():
    kernel = Kernel(
        relay.nn.conv2d, [(1, 5, 5, 2), (3, 3, 2, 4)], ["float32"] * 2,
        data_layout="NHWC", kernel_layout="HWIO",
    )
    assert not kernel.handled


def test_conv2d_packing_buffers_from_the_workspace():
    kernel = Kernel(relay.nn.conv2d, [(2, 8, 9, 9), (12, 8, 3, 3)], ["float32"] * 2,
                    epilogue=True, scratch=True, padding=(1, 1))
    assert "malloc" not in kernel.compiled.ir and kernel.workspace_bytes > 0
    rng = np.random.default_rng(3)
    x, w = random_array(rng, (2, 8, 9, 9), "float32"), random_array(rng, (12, 8, 3, 3), "float32")
    np.testing.assert_allclose(kernel(x, w), kernel.expected(x, w), rtol=1e-4, atol=1e-4)


# --- end to end: through the JIT executor, against the interpreter --------------------------


def test_jit_executor_conv_bias_relu_residual():
    x = relay.var("x", shape=(2, 16, 14, 14))
    w = relay.var("w", shape=(16, 16, 3, 3))
    bias = relay.var("b", shape=(16,))
    y = relay.nn.conv2d(x, w, padding=(1, 1), channels=16, kernel_size=(3, 3))
    y = relay.add(relay.nn.relu(relay.nn.bias_add(y, bias)), x)  # the residual
    mod = relay.IRModule.from_expr(relay.Function([x, w, bias], y))
    rng = np.random.default_rng(11)
    args = [rng.standard_normal(s).astype("float32") for s in [(2, 16, 14, 14), (16, 16, 3, 3), (16,)]]
    want = relay.create_executor("interpreter", mod=mod).evaluate()(*args)
    got = relay.create_executor("jit", mod=mod).evaluate()(*args)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    lib = relay.build(mod)
    kernels = [k for k in lib.report().kernels if "nn.conv2d" in k.ops]
    assert len(kernels) == 1 and kernels[0].native
    assert {"nn.bias_add", "nn.relu", "add"} <= set(kernels[0].ops)  # fused after the conv
    assert "relay_nb_conv_block_float32" in kernels[0].ir


def test_jit_executor_resnet_block():
    # conv-bn-relu, conv-bn, residual add, relu; strided 1x1 projection shortcut
    x = relay.var("x", shape=(1, 8, 12, 12))

    def conv_bn(data, name, cin, cout, k, stride):
        w = relay.var(f"{name}_w", shape=(cout, cin, k, k))
        params = [relay.var(f"{name}_{p}", shape=(cout,)) for p in ("g", "b", "m", "v")]
        y = relay.nn.conv2d(data, w, strides=(stride, stride), padding=(k // 2, k // 2))
        return relay.nn.batch_norm(y, *params)[0], [w] + params

    a, pa = conv_bn(x, "a", 8, 16, 3, 2)
    bb, pb = conv_bn(relay.nn.relu(a), "b", 16, 16, 3, 1)
    s, ps = conv_bn(x, "s", 8, 16, 1, 2)
    y = relay.nn.relu(relay.add(bb, s))
    params = [x] + pa + pb + ps
    mod = relay.transform.InferType()(relay.IRModule.from_expr(relay.Function(params, y)))
    rng = np.random.default_rng(5)
    args = []
    for p in params:
        shape = p.checked_type.concrete_shape
        v = rng.standard_normal(shape).astype("float32")
        args.append(np.abs(v) + 0.5 if p.name_hint.endswith("_v") else v)
    want = relay.create_executor("interpreter", mod=mod).evaluate()(*args)
    got = relay.create_executor("jit", mod=mod).evaluate()(*args)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
