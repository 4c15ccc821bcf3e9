"""Property tests: the JIT's rules for the training ops nn.max_pool2d_grad,
nn.avg_pool2d_grad and nn.conv2d_backward_weight (issue 12) agree with the interpreter and
compile natively.  The pool gradients add in the interpreter's float64 order, so they are
compared bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jit_testing import REDUCE_RTOL, check, compares, random_array, tensor

import relay_nb as relay

PROPS = settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _rng(data) -> np.random.Generator:
    return np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))


def _result_shape(program: str) -> tuple:
    mod = relay.transform.InferType()(relay.parse(program))
    return tuple(mod["main"].body.checked_type.shape)


@pytest.mark.parametrize("kind", ["max", "avg"])
@compares(12)
@PROPS
@given(data=st.data())
def test_pool2d_grad(kind, data):
    layout = data.draw(st.sampled_from(["NCHW", "NHWC"]))
    dims = {"N": data.draw(st.integers(1, 2)), "C": data.draw(st.integers(1, 3))}
    dims.update(H=data.draw(st.integers(1, 7)), W=data.draw(st.integers(1, 7)))
    pool = [data.draw(st.integers(1, 3)) for _ in range(2)]
    strides = [data.draw(st.integers(1, 3)) for _ in range(2)]
    dilation = [data.draw(st.integers(1, 2)) for _ in range(2)]
    pad = [data.draw(st.integers(0, p - 1)) for p in pool + pool]
    ceil = data.draw(st.booleans())
    for d, a in enumerate("HW"):  # the padded input holds at least one window
        dims[a] = max(dims[a], (pool[d] - 1) * dilation[d] + 1 - pad[d] - pad[d + 2])
    dtype = data.draw(st.sampled_from(["float32", "float64", "int32"]))
    extra = f", count_include_pad={data.draw(st.booleans())}" if kind == "avg" else ""
    geo = (
        f"pool_size={pool}, strides={strides}, dilation={dilation}, padding={pad},"
        f' layout="{layout}", ceil_mode={ceil}{extra}'
    )
    xshape = tuple(dims[a] for a in layout)
    gshape = _result_shape(f"def @main(%x: {tensor(xshape, dtype)}) {{ nn.{kind}_pool2d(%x, {geo}) }}")
    rng = _rng(data)
    # ties matter for max (the first maximum gets the gradient): draw from few values
    x = random_array(rng, xshape, dtype, special=True)
    if data.draw(st.booleans()):
        x = rng.integers(-2, 2, xshape).astype(dtype)
    g = random_array(rng, gshape, dtype)
    check(
        f"def @main(%g: {tensor(gshape, dtype)}, %x: {tensor(xshape, dtype)}) {{"
        f" nn.{kind}_pool2d_grad(%g, %x, {geo}) }}",
        g,
        x,
        rtol=0,
        atol=0,
    )


@compares(10)
@PROPS
@given(data=st.data())
def test_conv2d_backward_weight(data):
    groups = data.draw(st.integers(1, 2))
    cg, og = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3))
    n, h, w = data.draw(st.integers(1, 2)), data.draw(st.integers(1, 6)), data.draw(st.integers(1, 6))
    kernel = [data.draw(st.integers(1, 3)) for _ in range(2)]
    strides = [data.draw(st.integers(1, 2)) for _ in range(2)]
    dilation = [data.draw(st.integers(1, 2)) for _ in range(2)]
    pad = [data.draw(st.integers(0, 2)) for _ in range(4)]
    # the padded input holds at least one window
    h = max(h, (kernel[0] - 1) * dilation[0] + 1 - pad[0] - pad[2])
    w = max(w, (kernel[1] - 1) * dilation[1] + 1 - pad[1] - pad[3])
    layout = data.draw(st.sampled_from(["NCHW", "NHWC"]))
    dtype = data.draw(st.sampled_from(["float32", "float64", "int32"]))
    wlayout = data.draw(st.sampled_from(["OIHW", "HWIO"]))
    dims = {"N": n, "C": cg * groups, "H": h, "W": w}
    xshape = tuple(dims[a] for a in layout)
    conv = (
        f"strides={strides}, padding={pad}, dilation={dilation}, groups={groups}, kernel_size={kernel}"
    )
    forward = (
        f"def @main(%x: {tensor(xshape, dtype)}, %k: {tensor((og * groups, cg, *kernel), dtype)}) {{"
        f' nn.conv2d(%x, %k, {conv}, data_layout="{layout}", kernel_layout="OIHW") }}'
    )
    gshape = _result_shape(forward)
    rng = _rng(data)
    x, g = random_array(rng, xshape, dtype), random_array(rng, gshape, dtype)
    rtol = REDUCE_RTOL.get(dtype)
    check(
        f"def @main(%g: {tensor(gshape, dtype)}, %x: {tensor(xshape, dtype)}) {{"
        f' nn.conv2d_backward_weight(%g, %x, {conv}, data_layout="{layout}", kernel_layout="{layout}",'
        f' out_layout="{wlayout}") }}',
        g,
        x,
        rtol=rtol,
        atol=1e-3 if rtol else None,
    )
