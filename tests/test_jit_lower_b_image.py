"""Property tests: the JIT's index rules for image.crop_and_resize, image.dilation2d and
image.grid_sample agree with the interpreter (exactly: the same float operations in the
same order) and run natively, fused with their consumers."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jit_testing import check, compares, random_array, tensor

import relay_nb as relay

PROPS = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _rng(data) -> np.random.Generator:
    return np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))


def _nhwc(shape, layout):
    n, c, h, w = shape
    return shape if layout == "NCHW" else (n, h, w, c)


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@compares(8)
@PROPS
@given(data=st.data())
def test_crop_and_resize(layout, data):
    rng = _rng(data)
    n, c, h, w = 2, 2, data.draw(st.integers(1, 5)), data.draw(st.integers(1, 5))
    nb = data.draw(st.integers(1, 3))
    crop = [data.draw(st.integers(1, 4)) for _ in range(2)]
    method = data.draw(st.sampled_from(["bilinear", "nearest_neighbor"]))
    dtype = data.draw(st.sampled_from(["float32", "float64"]))
    out_dtype = data.draw(st.sampled_from(["", "float32", "int32"]))
    x = random_array(rng, _nhwc((n, c, h, w), layout), dtype)
    boxes = rng.uniform(-0.3, 1.3, (nb, 4)).astype("float32")
    idx = rng.integers(0, n, nb).astype("int32")
    check(
        f"def @main(%x: {tensor(x.shape, dtype)}, %b: {tensor((nb, 4), 'float32')}, %i: {tensor((nb,), 'int32')}) {{"
        f" %0 = image.crop_and_resize(%x, %b, %i, crop_size={crop}, layout=\"{layout}\", method=\"{method}\","
        f" extrapolation_value=-7f, out_dtype=\"{out_dtype}\"); negative(%0) }}",
        x, boxes, idx, rtol=0, atol=0,
    )


def test_crop_and_resize_reports_a_bad_box_index_as_the_interpreter_does():
    mod = relay.parse(
        "def @main(%x: Tensor[(1, 1, 2, 2), float32], %b: Tensor[(2, 4), float32], %i: Tensor[(2), int32]) {"
        " image.crop_and_resize(%x, %b, %i, crop_size=[2, 2]) }"
    )
    x = np.ones((1, 1, 2, 2), "float32")
    boxes = np.zeros((2, 4), "float32")
    for executor in ("interpreter", "jit"):
        run = relay.create_executor(executor, mod=mod).evaluate()
        with pytest.raises(relay.RelayError, match=r"box index 3 is not an image index in \[0, 1\)"):
            run(x, boxes, np.array([0, 3], "int32"))


@pytest.mark.parametrize("layouts", [("NCHW", "IHW"), ("NHWC", "HWI")])
@compares(8)
@PROPS
@given(data=st.data())
def test_dilation2d(layouts, data):
    dl, kl = layouts
    rng = _rng(data)
    kh, kw = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3))
    strides = [data.draw(st.integers(1, 2)) for _ in range(2)]
    dil = [data.draw(st.integers(1, 2)) for _ in range(2)]
    pads = [data.draw(st.integers(0, 2)) for _ in range(4)]
    # only images the dilated window fits in (padded): every example is compared
    min_h = max(1, (kh - 1) * dil[0] + 1 - pads[0] - pads[2])
    min_w = max(1, (kw - 1) * dil[1] + 1 - pads[1] - pads[3])
    n, c = 1, data.draw(st.integers(1, 3))
    h, w = data.draw(st.integers(min_h, min_h + 5)), data.draw(st.integers(min_w, min_w + 5))
    dtype = data.draw(st.sampled_from(["float32", "int32"]))
    x = random_array(rng, _nhwc((n, c, h, w), dl), dtype, special=True)
    wshape = (c, kh, kw) if kl == "IHW" else (kh, kw, c)
    k = random_array(rng, wshape, dtype)
    check(
        f"def @main(%x: {tensor(x.shape, dtype)}, %k: {tensor(wshape, dtype)}) {{"
        f" %0 = image.dilation2d(%x, %k, strides={strides}, padding={pads}, dilations={dil},"
        f" data_layout=\"{dl}\", kernel_layout=\"{kl}\"); add(%0, %0) }}",
        x, k, rtol=0, atol=0,
    )


@pytest.mark.parametrize("method", ["bilinear", "nearest", "bicubic"])
@compares(8)
@PROPS
@given(data=st.data())
def test_grid_sample_2d(method, data):
    rng = _rng(data)
    n, c = data.draw(st.integers(1, 2)), data.draw(st.integers(1, 2))
    h, w = data.draw(st.integers(1, 5)), data.draw(st.integers(1, 5))
    oh, ow = data.draw(st.integers(1, 4)), data.draw(st.integers(1, 4))
    mode = data.draw(st.sampled_from(["zeros", "border", "reflection"]))
    align = data.draw(st.booleans())
    dtype = data.draw(st.sampled_from(["float32", "float64"]))
    x = random_array(rng, (n, c, h, w), dtype, special=data.draw(st.booleans()))
    grid = rng.uniform(-1.6, 1.6, (n, 2, oh, ow)).astype(dtype)
    if data.draw(st.booleans()):  # points exactly on pixel centres and edges
        grid[..., 0] = rng.choice([-1.0, 0.0, 1.0, 0.5, -3.0], (n, 2, oh)).astype(dtype)
    check(
        f"def @main(%x: {tensor(x.shape, dtype)}, %g: {tensor(grid.shape, dtype)}) {{"
        f' %0 = image.grid_sample(%x, %g, method="{method}", padding_mode="{mode}",'
        f" align_corners={align}); multiply(%0, %0) }}",
        x, grid, rtol=0, atol=0,
    )


@compares(6)
@PROPS
@given(data=st.data())
def test_grid_sample_3d(data):
    rng = _rng(data)
    shape = (1, 2, *(data.draw(st.integers(1, 4)) for _ in range(3)))
    out = tuple(data.draw(st.integers(1, 3)) for _ in range(3))
    method = data.draw(st.sampled_from(["bilinear", "nearest"]))
    mode = data.draw(st.sampled_from(["zeros", "border", "reflection"]))
    align = data.draw(st.booleans())
    x = random_array(rng, shape, "float32")
    grid = rng.uniform(-1.6, 1.6, (1, 3, *out)).astype("float32")
    check(
        f"def @main(%x: {tensor(shape, 'float32')}, %g: {tensor(grid.shape, 'float32')}) {{"
        f' image.grid_sample(%x, %g, method="{method}", padding_mode="{mode}", align_corners={align},'
        f' layout="NCDHW") }}',
        x, grid, rtol=0, atol=0,
    )
