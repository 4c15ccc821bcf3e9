"""Property tests: the JIT's buffer rule for nn.deformable_conv2d agrees with the
interpreter (bilinear sampling at offset positions in float64, then the grouped
contraction: a float sum, to a tolerance) and runs natively."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jit_testing import REDUCE_RTOL, check, compares, random_array, tensor

PROPS = settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _rng(data) -> np.random.Generator:
    return np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))


def _place(shape_nchw, layout):
    return tuple(shape_nchw["NCHW".index(a)] for a in layout)


@pytest.mark.parametrize("layouts", [("NCHW", "OIHW"), ("NHWC", "HWIO")])
@compares(8)
@PROPS
@given(data=st.data())
def test_deformable_conv2d(layouts, data):
    dl, kl = layouts
    rng = _rng(data)
    groups, dg = data.draw(st.sampled_from([(1, 1), (1, 2), (2, 1), (2, 2)]))
    c = data.draw(st.sampled_from([1, 2])) * groups * dg
    o = data.draw(st.integers(1, 2)) * groups
    k = data.draw(st.integers(1, 3))
    s, p, d = data.draw(st.integers(1, 2)), data.draw(st.integers(0, 1)), data.draw(st.integers(1, 2))
    span = d * (k - 1) + 1
    h, w = span + data.draw(st.integers(0, 3)), span + data.draw(st.integers(0, 3))
    oh, ow = (h + 2 * p - span) // s + 1, (w + 2 * p - span) // s + 1
    dtype = data.draw(st.sampled_from(["float32", "float64"]))
    xs = _place((1, c, h, w), dl)
    offs = _place((1, dg * 2 * k * k, oh, ow), dl)
    ws = tuple({"O": o, "I": c // groups, "H": k, "W": k}[a] for a in kl)
    x = random_array(rng, xs, dtype)
    off = (rng.uniform(-2.5, 2.5, offs) * rng.choice([1, 0], offs)).astype(dtype)  # some exact taps
    wt = random_array(rng, ws, dtype)
    check(
        f"def @main(%x: {tensor(xs, dtype)}, %o: {tensor(offs, dtype)}, %w: {tensor(ws, dtype)}) {{"
        f" %0 = nn.deformable_conv2d(%x, %o, %w, strides=[{s}, {s}], padding=[{p}, {p}], dilation=[{d}, {d}],"
        f" deformable_groups={dg}, groups={groups}, channels={o}, kernel_size=[{k}, {k}],"
        f' data_layout="{dl}", kernel_layout="{kl}"); nn.relu(%0) }}',
        x, off, wt, rtol=REDUCE_RTOL[dtype], atol=1e-3,
    )


def test_integer_data_is_computed_in_float64_and_converted():
    rng = np.random.default_rng(3)
    x = rng.integers(-9, 10, (1, 2, 4, 4)).astype("int32")
    off = rng.integers(-4, 5, (1, 18, 4, 4)).astype("int32")  # the data's dtype: whole-pixel moves
    w = rng.integers(-3, 4, (2, 2, 3, 3)).astype("int32")
    check(
        "def @main(%x: Tensor[(1, 2, 4, 4), int32], %o: Tensor[(1, 18, 4, 4), int32],"
        " %w: Tensor[(2, 2, 3, 3), int32]) { nn.deformable_conv2d(%x, %o, %w, padding=[1, 1], channels=2,"
        " kernel_size=[3, 3]) }",
        x, off, w,
    )
