"""Property tests: the JIT's index rules for vision.roi_align and vision.roi_pool (run-time
windows: the sampling grid and pooling window follow each ROI's values) agree exactly with
the interpreter and run natively."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jit_testing import check, compares, random_array, tensor

PROPS = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _rng(data) -> np.random.Generator:
    return np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))


def _rois(rng, count: int, n: int, h: int, w: int, scale: float) -> np.ndarray:
    """ROIs ``[batch, x1, y1, x2, y2]`` in input coordinates, some partly outside the image."""
    x = rng.uniform(-2, w / scale + 2, (count, 2))
    y = rng.uniform(-2, h / scale + 2, (count, 2))
    rois = np.stack([rng.integers(0, n, count), x.min(1), y.min(1), x.max(1), y.max(1)], 1)
    return rois.astype("float32")


def _data(data, layout):
    rng = _rng(data)
    n, c, h, w = data.draw(st.integers(1, 2)), data.draw(st.integers(1, 3)), data.draw(st.integers(1, 6)), data.draw(st.integers(1, 6))
    shape = (n, c, h, w) if layout == "NCHW" else (n, h, w, c)
    scale = data.draw(st.sampled_from([1.0, 0.5, 0.25]))
    pooled = [data.draw(st.integers(1, 3)) for _ in range(2)]
    rois = _rois(rng, data.draw(st.integers(1, 3)), n, h, w, scale)
    return rng, shape, scale, pooled, rois


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@compares(8)
@PROPS
@given(data=st.data())
def test_roi_align(layout, data):
    rng, shape, scale, pooled, rois = _data(data, layout)
    mode = data.draw(st.sampled_from(["avg", "max"]))
    ratio = data.draw(st.sampled_from([-1, 0, 1, 2]))
    dtype = data.draw(st.sampled_from(["float32", "float64"]))
    x = random_array(rng, shape, dtype)
    check(
        f"def @main(%x: {tensor(shape, dtype)}, %r: {tensor(rois.shape, 'float32')}) {{"
        f" %0 = vision.roi_align(%x, %r, pooled_size={pooled}, spatial_scale={scale}f, sample_ratio={ratio},"
        f' layout="{layout}", mode="{mode}"); nn.relu(%0) }}',
        x, rois, rtol=0, atol=0,
    )


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@compares(8)
@PROPS
@given(data=st.data())
def test_roi_pool(layout, data):
    rng, shape, scale, pooled, rois = _data(data, layout)
    dtype = data.draw(st.sampled_from(["float32", "int32"]))
    x = random_array(rng, shape, dtype, special=True)
    check(
        f"def @main(%x: {tensor(shape, dtype)}, %r: {tensor(rois.shape, 'float32')}) {{"
        f" %0 = vision.roi_pool(%x, %r, pooled_size={pooled}, spatial_scale={scale}f, layout=\"{layout}\");"
        f" add(%0, %0) }}",
        x, rois, rtol=0, atol=0,
    )


@pytest.mark.parametrize("op", ["roi_align", "roi_pool"])
def test_a_bad_batch_index_is_an_error_in_both_executors(op):
    import relay_nb as relay

    mod = relay.parse(
        "def @main(%x: Tensor[(1, 1, 3, 3), float32], %r: Tensor[(2, 5), float32]) {"
        f" %0 = vision.{op}(%x, %r, pooled_size=[2, 2], spatial_scale=1f); strided_slice(%0, begin=[0], end=[1]) }}"
    )
    x = np.arange(9, dtype="float32").reshape(1, 1, 3, 3)
    rois = np.array([[0, 0, 0, 2, 2], [1, 0, 0, 2, 2]], "float32")  # only the first is read after
    for executor in ("interpreter", "jit"):
        with pytest.raises(relay.RelayError, match="index 1 is out of"):
            relay.create_executor(executor, mod=mod).evaluate()(x, rois)
    ok = rois.copy()
    ok[1, 0] = -1  # Python's negative index: the last image
    check(mod, x, ok, rtol=0, atol=0)
