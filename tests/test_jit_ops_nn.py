"""Property tests: the neural-network ops — pools (static, global, adaptive; every layout
permutation), softmax / log_softmax, layer_norm, batch_norm, dense / matmul /
batch_matmul, conv1d/2d/3d with strides, dilation, padding and groups — with fused
epilogues, against the interpreter."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jit_testing import check, compares, random_array, tensor

import relay_nb as relay

PROPS = settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
CONTRACT = {"rtol": 1e-4, "atol": 1e-4}


def contract_tolerance(x: np.ndarray, w: np.ndarray, terms: int) -> dict:
    """Tolerances for a sum of ``terms`` products of ``x`` and ``w`` elements in float32:
    an output that cancels to near zero keeps the rounding error of its largest terms,
    about eps * terms * max|x| * max|w|, which a fixed atol cannot bound."""
    bound = float(np.abs(x).max(initial=0)) * float(np.abs(w).max(initial=0)) * terms
    return {"rtol": 1e-4, "atol": max(1e-4, 8 * float(np.finfo(np.float32).eps) * bound)}


def _rng(data) -> np.random.Generator:
    return np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))


def ints(values) -> str:
    return "[" + ", ".join(str(int(v)) for v in values) + "]"


def _span(window: int, dilation: int) -> int:
    return (window - 1) * dilation + 1


@pytest.mark.parametrize("kind", ["max", "avg"])
@compares(PROPS.max_examples)
@PROPS
@given(data=st.data())
def test_pool2d_with_padding_strides_dilation_ceil_mode(kind, data):
    """Only windows that fit the padded input are drawn (the relation rejects the others:
    test_pool_relation_rejects_exactly_the_windows_that_do_not_fit), so every example runs."""
    layout = data.draw(st.sampled_from(["NCHW", "NHWC"]))
    pool = [data.draw(st.integers(1, 3)) for _ in range(2)]
    strides = [data.draw(st.integers(1, 3)) for _ in range(2)]
    dilation = [data.draw(st.integers(1, 2)) for _ in range(2)]
    pads = [data.draw(st.integers(0, p - 1)) for p in pool]
    padding = pads * 2
    smallest = [max(3, _span(p, d) - 2 * q) for p, d, q in zip(pool, dilation, pads)]
    n, c = 2, data.draw(st.integers(1, 3))
    h, w = (data.draw(st.integers(lo, 9)) for lo in smallest)
    ceil = data.draw(st.booleans())
    shape = (n, c, h, w) if layout == "NCHW" else (n, h, w, c)
    dtype = data.draw(st.sampled_from(["float32", "int32"]))
    x = random_array(_rng(data), shape, dtype, special=dtype == "float32")
    extra = f", count_include_pad={data.draw(st.booleans())}" if kind == "avg" else ""
    text = (
        f"def @main(%x: {tensor(shape, dtype)}) {{ nn.{kind}_pool2d(%x, pool_size={ints(pool)}, strides={ints(strides)}, "
        f'dilation={ints(dilation)}, padding={ints(padding)}, layout="{layout}", ceil_mode={ceil}{extra}) }}'
    )
    check(text, x, rtol=1e-5)


def _accepts(text: str) -> bool:
    """Whether type inference accepts ``text``; any failure other than a RelayError fails."""
    try:
        relay.transform.InferType()(relay.parse(text))
    except relay.RelayError:
        return False
    return True


def test_pool_relation_rejects_exactly_the_windows_that_do_not_fit():
    """Over every window on one axis: rejected iff the dilated window is wider than the
    padded input (whatever the stride and ceil_mode), and accepted otherwise."""
    verdicts = {True: 0, False: 0}
    for size, pool, dilation, stride, ceil in itertools.product(range(1, 7), (1, 2, 3), (1, 2), (1, 3), (False, True)):
        for pad in range(pool):
            text = (
                f"def @main(%x: Tensor[(1, 1, {size}, 4), float32]) {{ nn.max_pool2d(%x, pool_size=[{pool}, 1], "
                f"strides=[{stride}, 1], dilation=[{dilation}, 1], padding=[{pad}, 0, {pad}, 0], ceil_mode={ceil}) }}"
            )
            fits = size + 2 * pad >= _span(pool, dilation)
            assert _accepts(text) == fits, text
            verdicts[fits] += 1
    assert min(verdicts.values()) > 20, verdicts  # both sides of the boundary are exercised


@pytest.mark.parametrize("op", ["max_pool1d", "avg_pool1d", "max_pool3d", "avg_pool3d"])
def test_pool1d_and_pool3d(op):
    rng = np.random.default_rng(0)
    nd = int(op[-2])
    shape = (1, 2) + (5,) * nd
    x = random_array(rng, shape, "float32")
    check(f"def @main(%x: {tensor(shape, 'float32')}) {{ nn.{op}(%x, pool_size={ints([2] * nd)}, strides={ints([2] * nd)}, padding={ints([1] * nd)}) }}", x)


@pytest.mark.parametrize("op", ["global_avg_pool2d", "global_max_pool2d"])
@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_global_pools(op, layout):
    x = random_array(np.random.default_rng(1), (2, 3, 4, 5), "float32", special=True)
    check(f'def @main(%x: Tensor[(2, 3, 4, 5), float32]) {{ nn.{op}(%x, layout="{layout}") }}', x, rtol=1e-5)


@pytest.mark.parametrize("op", ["adaptive_avg_pool2d", "adaptive_max_pool2d"])
@PROPS
@given(data=st.data())
def test_adaptive_pools(op, data):
    h, w = data.draw(st.integers(1, 9)), data.draw(st.integers(1, 9))
    oh, ow = data.draw(st.integers(1, 5)), data.draw(st.integers(1, 5))
    x = random_array(_rng(data), (1, 2, h, w), "float32")
    check(f"def @main(%x: Tensor[(1, 2, {h}, {w}), float32]) {{ nn.{op}(%x, output_size=[{oh}, {ow}]) }}", x, rtol=1e-5)


@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
@PROPS
@given(data=st.data())
def test_softmax_along_any_axis(op, data):
    rank = data.draw(st.integers(1, 4))
    shape = tuple(data.draw(st.lists(st.integers(1, 5), min_size=rank, max_size=rank)))
    axis = data.draw(st.integers(-rank, rank - 1))
    dtype = data.draw(st.sampled_from(["float32", "float64"]))
    x = random_array(_rng(data), shape, dtype)
    check(f"def @main(%x: {tensor(shape, dtype)}) {{ nn.{op}(%x, axis={axis}) }}", x, rtol=1e-5, atol=1e-6)


@PROPS
@given(data=st.data())
def test_layer_norm_and_batch_norm(data):
    rank = data.draw(st.integers(2, 4))
    shape = tuple(data.draw(st.lists(st.integers(1, 5), min_size=rank, max_size=rank)))
    axis = data.draw(st.integers(-rank, rank - 1))
    scale, center = data.draw(st.booleans()), data.draw(st.booleans())
    rng = _rng(data)
    x = random_array(rng, shape, "float32")
    c = shape[axis]
    g, b = random_array(rng, (c,), "float32"), random_array(rng, (c,), "float32")
    var = np.abs(random_array(rng, (c,), "float32"))
    vec = tensor((c,), "float32")
    check(
        f"def @main(%x: {tensor(shape, 'float32')}, %g: {vec}, %b: {vec}) "
        f"{{ nn.layer_norm(%x, %g, %b, axis={axis}, epsilon=1e-3, scale={scale}, center={center}) }}",
        x, g, b, rtol=1e-4, atol=1e-5,
    )  # fmt: skip
    check(
        f"def @main(%x: {tensor(shape, 'float32')}, %g: {vec}, %b: {vec}, %m: {vec}, %v: {vec}) "
        f"{{ nn.batch_norm(%x, %g, %b, %m, %v, axis={axis}, scale={scale}, center={center}) }}",
        x, g, b, b, var, rtol=1e-5, atol=1e-5,
    )  # fmt: skip


@PROPS
@given(data=st.data())
def test_dense_matmul_batch_matmul_with_epilogues(data):
    m, n, k = (data.draw(st.integers(1, 9)) for _ in range(3))
    dtype = data.draw(st.sampled_from(["float32", "int32"]))
    rng = _rng(data)
    x, w, bias = random_array(rng, (m, k), dtype), random_array(rng, (n, k), dtype), random_array(rng, (n,), dtype)
    check(
        f"def @main(%x: {tensor((m, k), dtype)}, %w: {tensor((n, k), dtype)}, %b: {tensor((n,), dtype)}) "
        f"{{ %0 = nn.dense(%x, %w); %1 = nn.bias_add(%0, %b, axis=-1); nn.relu(%1) }}",
        x, w, bias, **CONTRACT,
    )  # fmt: skip
    ta, tb = data.draw(st.booleans()), data.draw(st.booleans())
    a = random_array(rng, (k, m) if ta else (m, k), dtype)
    bm = random_array(rng, (n, k) if tb else (k, n), dtype)
    check(
        f"def @main(%a: {tensor(a.shape, dtype)}, %b: {tensor(bm.shape, dtype)}) "
        f"{{ nn.matmul(%a, %b, transpose_a={ta}, transpose_b={tb}) }}",
        a, bm, **CONTRACT,
    )  # fmt: skip
    batch = data.draw(st.integers(1, 3))
    ba = random_array(rng, (batch, k, m) if ta else (batch, m, k), dtype)
    bb = random_array(rng, (1 if data.draw(st.booleans()) else batch, n, k) if tb else (batch, k, n), dtype)
    check(
        f"def @main(%a: {tensor(ba.shape, dtype)}, %b: {tensor(bb.shape, dtype)}) "
        f"{{ %0 = nn.batch_matmul(%a, %b, transpose_a={ta}, transpose_b={tb}); add(%0, %0) }}",
        ba, bb, **CONTRACT,
    )  # fmt: skip


@compares(PROPS.max_examples)
@PROPS
@given(data=st.data())
def test_conv2d_with_strides_dilation_padding_groups_and_epilogue(data):
    """Only kernels that fit the padded input are drawn (the relation rejects the others:
    test_conv_relation_rejects_exactly_the_kernels_that_do_not_fit)."""
    groups = data.draw(st.sampled_from([1, 2]))
    cin = groups * data.draw(st.integers(1, 3))
    cout = groups * data.draw(st.integers(1, 3))
    kh, kw = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3))
    strides = [data.draw(st.integers(1, 2)) for _ in range(2)]
    dilation = [data.draw(st.integers(1, 2)) for _ in range(2)]
    padding = [data.draw(st.integers(0, 2)) for _ in range(4)]  # top, left, bottom, right
    h = data.draw(st.integers(max(1, _span(kh, dilation[0]) - padding[0] - padding[2]), 8))
    w = data.draw(st.integers(max(1, _span(kw, dilation[1]) - padding[1] - padding[3]), 8))
    dtype = data.draw(st.sampled_from(["float32", "int32"]))
    rng = _rng(data)
    x = random_array(rng, (1, cin, h, w), dtype)
    wt = random_array(rng, (cout, cin // groups, kh, kw), dtype)
    bias = random_array(rng, (cout,), dtype)
    text = (
        f"def @main(%x: {tensor(x.shape, dtype)}, %w: {tensor(wt.shape, dtype)}, %b: {tensor((cout,), dtype)}) {{ "
        f"%0 = nn.conv2d(%x, %w, strides={ints(strides)}, dilation={ints(dilation)}, padding={ints(padding)}, groups={groups}); "
        f"%1 = nn.bias_add(%0, %b); nn.relu(%1) }}"
    )
    check(text, x, wt, bias, **CONTRACT)


def test_conv_relation_rejects_exactly_the_kernels_that_do_not_fit():
    """Over every kernel on one axis: rejected iff the dilated kernel is wider than the
    padded input, accepted otherwise."""
    verdicts = {True: 0, False: 0}
    for size, k, dilation, stride in itertools.product(range(1, 7), (1, 2, 3), (1, 2), (1, 2)):
        for before, after in itertools.product(range(3), repeat=2):
            text = (
                f"def @main(%x: Tensor[(1, 1, {size}, 3), float32], %w: Tensor[(1, 1, {k}, 1), float32]) {{ "
                f"nn.conv2d(%x, %w, strides=[{stride}, 1], dilation=[{dilation}, 1], padding=[{before}, 0, {after}, 0]) }}"
            )
            fits = size + before + after >= _span(k, dilation)
            assert _accepts(text) == fits, text
            verdicts[fits] += 1
    assert min(verdicts.values()) > 20, verdicts


@pytest.mark.parametrize("nd", [1, 3])
def test_conv1d_and_conv3d(nd):
    rng = np.random.default_rng(2)
    x = random_array(rng, (1, 2) + (5,) * nd, "float32")
    w = random_array(rng, (3, 2) + (3,) * nd, "float32")
    check(
        f"def @main(%x: {tensor(x.shape, 'float32')}, %w: {tensor(w.shape, 'float32')}) "
        f"{{ nn.conv{nd}d(%x, %w, padding={ints([1] * nd)}) }}",
        x, w, **CONTRACT,
    )  # fmt: skip


def test_pool_fuses_with_its_epilogue_into_one_kernel():
    x = random_array(np.random.default_rng(3), (1, 2, 6, 6), "float32")
    ex = check("def @main(%x: Tensor[(1, 2, 6, 6), float32]) { %0 = nn.max_pool2d(%x, pool_size=[2, 2], strides=[2, 2]); nn.relu(%0) }", x)
    assert [k.ops for k in ex.kernels] == [["nn.max_pool2d", "nn.relu"]]


@pytest.mark.parametrize("method", ["nearest_neighbor", "linear", "cubic"])
@pytest.mark.parametrize(
    "mode", ["half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel", "tf_half_pixel_for_nn", "tf_crop_and_resize"]
)
def test_resize2d_every_method_and_coordinate_mode(method, mode):
    x = random_array(np.random.default_rng(4), (1, 2, 5, 7), "float32")
    text = (
        f'def @main(%x: Tensor[(1, 2, 5, 7), float32]) {{ image.resize2d(%x, size=[8, 4], method="{method}", '
        f'coordinate_transformation_mode="{mode}", roi=[0.1, 0.2, 0.8, 0.9], cubic_exclude=1) }}'
    )
    check(text, x)


@pytest.mark.parametrize("method", ["nearest_neighbor", "bilinear", "bicubic"])
@pytest.mark.parametrize("layout,align", [("NCHW", False), ("NHWC", True)])
def test_upsampling(method, layout, align):
    shape = (1, 2, 5, 7) if layout == "NCHW" else (1, 5, 7, 2)
    x = random_array(np.random.default_rng(5), shape, "float32")
    check(
        f'def @main(%x: {tensor(shape, "float32")}) {{ nn.upsampling(%x, scale_h=2, scale_w=1.5, method="{method}", '
        f'layout="{layout}", align_corners={align}) }}',
        x,
    )


@compares(PROPS.max_examples)
@PROPS
@given(data=st.data())
def test_conv2d_transpose(data):
    groups = data.draw(st.sampled_from([1, 2]))
    cin = groups * data.draw(st.integers(1, 2))
    cout = data.draw(st.integers(1, 3))
    k = data.draw(st.integers(1, 3))
    s, d = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 2))
    p = data.draw(st.integers(0, k - 1))
    op = data.draw(st.integers(0, s - 1))
    rng = _rng(data)
    x = random_array(rng, (2, cin, 4, 5), "float32")
    w = random_array(rng, (cin, cout, k, k), "float32")
    text = (
        f"def @main(%x: {tensor(x.shape, 'float32')}, %w: {tensor(w.shape, 'float32')}) {{ %0 = nn.conv2d_transpose(%x, %w, "
        f"strides=[{s}, {s}], dilation=[{d}, {d}], padding=[{p}, {p}], output_padding=[{op}, {op}], groups={groups}); nn.relu(%0) }}"
    )
    # every drawn case is well-typed: out >= 2 on each axis
    check(text, x, w, **contract_tolerance(x, w, (cin // groups) * k * k))
