"""Property tests: the JIT's transposed convolutions in 1, 2 and 3 dimensions (one n-d
anchor rule; conv1d_transpose and conv3d_transpose are issue 12's) agree with the
interpreter, compile natively and take an elementwise epilogue in place."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jit_testing import REDUCE_RTOL, check, compares, random_array, tensor

PROPS = settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SPATIAL = {1: "W", 2: "HW", 3: "DHW"}


def _rng(data) -> np.random.Generator:
    return np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))


@pytest.mark.parametrize("nd", [1, 2, 3])
@compares(8)
@PROPS
@given(data=st.data())
def test_conv_transpose(nd, data):
    groups = data.draw(st.integers(1, 2))
    cg, og = data.draw(st.integers(1, 2)), data.draw(st.integers(1, 2))
    n = data.draw(st.integers(1, 2))
    sizes = [data.draw(st.integers(1, 4)) for _ in range(nd)]
    kernel = [data.draw(st.integers(1, 3)) for _ in range(nd)]
    strides = [data.draw(st.integers(1, 3)) for _ in range(nd)]
    dilation = [data.draw(st.integers(1, 2)) for _ in range(nd)]
    pad = [data.draw(st.integers(0, 2)) for _ in range(2 * nd)]
    extra = [data.draw(st.integers(0, max(s, d) - 1)) for s, d in zip(strides, dilation)]
    for d in range(nd):
        span = (kernel[d] - 1) * dilation[d] + 1
        if (sizes[d] - 1) * strides[d] + span + extra[d] - pad[d] - pad[d + nd] < 1:
            pad[d] = pad[d + nd] = 0  # the padding would crop the whole output
    dtype = data.draw(st.sampled_from(["float32", "int32"]))
    rng = _rng(data)
    x = random_array(rng, (n, cg * groups, *sizes), dtype)
    w = random_array(rng, (cg * groups, og, *kernel), dtype)
    sp = SPATIAL[nd]
    check(
        f"def @main(%x: {tensor(x.shape, dtype)}, %w: {tensor(w.shape, dtype)}) {{"
        f" nn.conv{nd}d_transpose(%x, %w, strides={strides}, padding={pad}, dilation={dilation},"
        f' output_padding={extra}, groups={groups}, channels={og * groups}, kernel_size={kernel},'
        f' data_layout="NC{sp}", kernel_layout="IO{sp}") }}',
        x,
        w,
        rtol=REDUCE_RTOL.get(dtype),
        atol=1e-3 if dtype == "float32" else None,
    )


@pytest.mark.parametrize("nd", [1, 3])
def test_conv_transpose_takes_its_epilogue_in_place(nd):
    sp = SPATIAL[nd]
    x = np.arange(2 * 3**nd, dtype="float32").reshape((1, 2) + (3,) * nd) / 7
    w = np.linspace(-1, 1, 2 * 2 * 2**nd, dtype="float32").reshape((2, 2) + (2,) * nd)
    ex = check(
        f"def @main(%x: {tensor(x.shape, 'float32')}, %w: {tensor(w.shape, 'float32')}) {{"
        f' nn.relu(nn.conv{nd}d_transpose(%x, %w, strides={[2] * nd}, kernel_size={[2] * nd}, channels=2,'
        f' data_layout="NC{sp}", kernel_layout="IO{sp}")) }}',
        x,
        w,
        rtol=1e-5,
    )
    assert len(ex.kernels) == 1 and ex.kernels[0].ops == [f"nn.conv{nd}d_transpose", "nn.relu"]


@compares(10)
@PROPS
@given(data=st.data())
def test_correlation(data):
    k = data.draw(st.sampled_from([1, 3]))
    md = data.draw(st.integers(0, 3))
    s1, s2 = data.draw(st.integers(1, 2)), data.draw(st.integers(1, 2))
    pad = [data.draw(st.integers(0, 3)) for _ in range(2)]
    n, c = data.draw(st.integers(1, 2)), data.draw(st.integers(1, 3))
    h, w = data.draw(st.integers(1, 8)), data.draw(st.integers(1, 8))
    border = md + (k - 1) // 2
    pad = [p if size + 2 * p > 2 * border else border for p, size in zip(pad, (h, w))]
    dtype = data.draw(st.sampled_from(["float32", "float64"]))
    multiply = data.draw(st.booleans())
    rng = _rng(data)
    a, b = random_array(rng, (n, c, h, w), dtype), random_array(rng, (n, c, h, w), dtype)
    t = tensor(a.shape, dtype)
    check(
        f"def @main(%a: {t}, %b: {t}) {{ nn.correlation(%a, %b, kernel_size={k}, max_displacement={md},"
        f" stride1={s1}, stride2={s2}, padding={pad}, is_multiply={multiply}) }}",
        a,
        b,
        rtol=REDUCE_RTOL[dtype],
        atol=1e-4,
    )
