"""The JIT's depthwise conv2d kernel (vector loops over the output width, static masks at
the padding): random shapes against the interpreter, every dtype it takes, and the same
bits for every thread count."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from jit_anchor_harness import Kernel, random_array

import relay_nb as relay

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def run(x_shape, w_shape, dt="float32", epilogue=True, seed=0, **attrs):
    attrs.setdefault("groups", x_shape[1])
    kernel = Kernel(relay.nn.conv2d, [x_shape, w_shape], [dt, dt], epilogue=epilogue, **attrs)
    assert kernel.handled
    rng = np.random.default_rng(seed)
    x, w = random_array(rng, x_shape, dt), random_array(rng, w_shape, dt)
    got, want = kernel(x, w), kernel.expected(x, w)
    assert got.shape == want.shape and got.dtype == want.dtype
    if got.dtype.kind == "f":
        eps = np.finfo(got.dtype).eps
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=64 * eps * w_shape[2] * w_shape[3])
    else:
        np.testing.assert_array_equal(got, want)


@st.composite
def depthwise_convs(draw):
    c, mult = draw(st.integers(1, 5)), draw(st.integers(1, 2))
    kh, kw = draw(st.integers(1, 5)), draw(st.integers(1, 5))
    sh, sw = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    dh, dw = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    pad = tuple(draw(st.integers(0, 3)) for _ in range(4))
    h, w = draw(st.integers(1, 20)), draw(st.integers(1, 45))
    assume(h + pad[0] + pad[2] >= (kh - 1) * dh + 1 and w + pad[1] + pad[3] >= (kw - 1) * dw + 1)
    n = draw(st.integers(1, 2))
    attrs = dict(strides=(sh, sw), padding=pad, dilation=(dh, dw), groups=c)
    return (n, c, h, w), (c * mult, 1, kh, kw), attrs


@SETTINGS
@given(conv=depthwise_convs(), epilogue=st.booleans())
def test_depthwise_float32(conv, epilogue):
    x_shape, w_shape, attrs = conv
    run(x_shape, w_shape, epilogue=epilogue, **attrs)


@pytest.mark.parametrize(
    "x_shape,w_shape,attrs",
    [
        ((1, 4, 7, 7), (4, 1, 3, 3), dict(padding=(1, 1))),  # one 8-lane vector per row
        ((1, 3, 14, 14), (3, 1, 5, 5), dict(padding=(2, 2), strides=(2, 2))),
        ((1, 2, 112, 112), (2, 1, 3, 3), dict(padding=(1, 1))),  # a loop over row vectors
        ((1, 2, 113, 97), (2, 1, 3, 3), dict(padding=(0, 1, 1, 0), strides=(2, 2))),
        ((1, 2, 30, 30), (2, 1, 31, 31), dict(padding=(15, 15))),  # all boundary: the GEMM's
    ],
)
def test_depthwise_model_shapes(x_shape, w_shape, attrs):
    run(x_shape, w_shape, **attrs)


@pytest.mark.parametrize("dt", ["float64", "int32", "int64", "int16"])
def test_depthwise_other_dtypes(dt):
    run((2, 3, 11, 19), (6, 1, 5, 3), dt, padding=(2, 1, 1, 2), strides=(2, 1))


DEPTHWISE = (
    "def @main(%x: Tensor[(1, 96, {h}, {w}), float32], %w: Tensor[(96, 1, {k}, {k}), float32]) {{"
    " clip(nn.conv2d(%x, %w, strides=[{s}, {s}], padding=[{p}, {p}, {p}, {p}], groups=96), a_min=0f, a_max=6f) }}"
)


@pytest.mark.parametrize("k, s", [(3, 1), (3, 2), (5, 2)])
def test_depthwise_runs_its_own_loops_and_gives_the_same_bits_for_every_thread_count(k, s):
    h, w = 57 * s, 61 * s  # work enough to split
    mod = relay.parse(DEPTHWISE.format(k=k, s=s, p=k // 2, h=h, w=w))
    rng = np.random.default_rng(1)
    x, w = rng.standard_normal((1, 96, h, w), "float32"), rng.standard_normal((96, 1, k, k), "float32")
    libs = {t: relay.build(mod, threads=t) for t in (1, 2, 3)}
    (kernel,) = [kn for kn in libs[1].kernels if kn.native]
    assert "dwr.head" in kernel.ir  # the depthwise kernel's row loop, not the GEMM's
    want = libs[1](x, w)
    np.testing.assert_allclose(want, relay.create_executor("debug", mod=mod).evaluate()(x, w), rtol=1e-5, atol=1e-5)
    for t in (2, 3):
        assert [kn for kn in libs[t].kernels if kn.native and kn.chunks(t) > 1]
        assert libs[t](x, w).tobytes() == want.tobytes()
