"""numpy implementations of the nn ops, against naive nested-loop references written here
(convolutions, transposed convolutions, pools, adaptive pools) and hand formulas."""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from relay_nb.errors import EvalError
from relay_nb.op.registry import get_column, make_attrs


@pytest.fixture(autouse=True)
def _no_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


def run(name, *args, out=None, **attrs):
    return get_column("impl")[name](
        [np.asarray(a) for a in args], make_attrs(name, attrs) if attrs else None, out
    )


RNG = np.random.default_rng(1234)


def randn(*shape, dtype="float64"):
    return RNG.standard_normal(shape).astype(dtype)


# --- naive references ---------------------------------------------------------------------------


def conv_ref(x, w, strides, pads, dilation, groups):
    """Direct definition: out[n, o, p...] = sum_{c, k...} x[n, g*Cg + c, p*s - pad + k*d] * w[o, c, k]."""
    nd = x.ndim - 2
    n_ = x.shape[0]
    o_, cg = w.shape[:2]
    ks = w.shape[2:]
    og = o_ // groups
    outs = [
        (x.shape[2 + i] + pads[i][0] + pads[i][1] - ((ks[i] - 1) * dilation[i] + 1)) // strides[i]
        + 1
        for i in range(nd)
    ]
    out = np.zeros((n_, o_, *outs), dtype=np.result_type(x, w))
    for n in range(n_):
        for o in range(o_):
            g = o // og
            for p in itertools.product(*[range(s) for s in outs]):
                acc = 0
                for c in range(cg):
                    for k in itertools.product(*[range(s) for s in ks]):
                        pos = [
                            p[i] * strides[i] - pads[i][0] + k[i] * dilation[i] for i in range(nd)
                        ]
                        if all(0 <= pos[i] < x.shape[2 + i] for i in range(nd)):
                            acc += x[(n, g * cg + c, *pos)] * w[(o, c, *k)]
                out[(n, o, *p)] = acc
    return out


def conv_transpose_ref(x, w, strides, pads, dilation, groups, output_padding):
    """Scatter definition: every input pixel adds x * w[ci, oo, k] at h*s - pad + k*d."""
    n_, c_, *sp = x.shape
    _, og, *ks = w.shape
    cg = c_ // groups
    outs = [
        (sp[i] - 1) * strides[i]
        - pads[i][0]
        - pads[i][1]
        + (ks[i] - 1) * dilation[i]
        + 1
        + output_padding[i]
        for i in range(len(sp))
    ]
    out = np.zeros((n_, og * groups, *outs))
    for n in range(n_):
        for ci in range(c_):
            g = ci // cg
            for h in itertools.product(*[range(s) for s in sp]):
                for oo in range(og):
                    for k in itertools.product(*[range(s) for s in ks]):
                        pos = [
                            h[i] * strides[i] - pads[i][0] + k[i] * dilation[i]
                            for i in range(len(sp))
                        ]
                        if all(0 <= pos[i] < outs[i] for i in range(len(sp))):
                            out[(n, g * og + oo, *pos)] += x[(n, ci, *h)] * w[(ci, oo, *k)]
    return out


def pool_ref(x, kind, pool, strides, pads, dilation, ceil_mode, count_include_pad):
    """TVM's pooling by windows: positions p*s - pad_before + k*d."""
    nd = x.ndim - 2
    sp = x.shape[2:]
    outs = []
    for i in range(nd):
        total = sp[i] + pads[i][0] + pads[i][1] - ((pool[i] - 1) * dilation[i] + 1)
        outs.append((total + (strides[i] - 1 if ceil_mode else 0)) // strides[i] + 1)
    out = np.zeros(x.shape[:2] + tuple(outs), dtype=x.dtype)
    lowest = np.finfo(x.dtype).min if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    for nc in itertools.product(range(x.shape[0]), range(x.shape[1])):
        for p in itertools.product(*[range(o) for o in outs]):
            vals, included = [], 0
            for k in itertools.product(*[range(s) for s in pool]):
                pos = [p[i] * strides[i] - pads[i][0] + k[i] * dilation[i] for i in range(nd)]
                inside = all(0 <= pos[i] < sp[i] for i in range(nd))
                if inside:
                    vals.append(x[(*nc, *pos)])
                if all(-pads[i][0] <= pos[i] < sp[i] + pads[i][1] for i in range(nd)):
                    included += 1
            if kind == "max":
                out[(*nc, *p)] = max(vals) if vals else lowest
            else:
                divisor = included if count_include_pad else len(vals)
                out[(*nc, *p)] = sum(vals) / max(divisor, 1)
    return out


# --- convolution --------------------------------------------------------------------------------


@st.composite
def conv2d_case(draw):
    groups = draw(st.sampled_from([1, 2]))
    cg = draw(st.integers(1, 2))
    og = draw(st.integers(1, 2))
    kh, kw = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    strides = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    dilation = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    padding = draw(
        st.one_of(
            st.tuples(st.integers(0, 2)),
            st.tuples(st.integers(0, 2), st.integers(0, 2)),
            st.tuples(*[st.integers(0, 2)] * 4),
        )
    )
    h = draw(st.integers((kh - 1) * dilation[0] + 1, 6))
    w = draw(st.integers((kw - 1) * dilation[1] + 1, 6))
    return groups, cg, og, (kh, kw), strides, dilation, padding, (h, w)


def _pairs(padding, n):
    p = list(padding)
    if len(p) == 1:
        p = p * (2 * n)
    elif len(p) == n:
        p = p * 2
    return [(p[i], p[i + n]) for i in range(n)]


@settings(max_examples=40, deadline=None)
@given(conv2d_case())
def test_conv2d_against_loops(case):
    groups, cg, og, k, strides, dilation, padding, (h, w) = case
    x = randn(2, cg * groups, h, w)
    wt = randn(og * groups, cg, *k)
    got = run(
        "nn.conv2d", x, wt, strides=strides, padding=padding, dilation=dilation, groups=groups
    )
    expected = conv_ref(x, wt, strides, _pairs(padding, 2), dilation, groups)
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-10)


def test_conv2d_depthwise_and_nhwc_hwio():
    x = randn(1, 4, 5, 5)
    wt = randn(4, 1, 3, 3)  # depthwise: one filter per channel
    expected = conv_ref(x, wt, (1, 1), [(1, 1), (1, 1)], (1, 1), 4)
    got = run("nn.conv2d", x, wt, padding=(1, 1), groups=4, channels=4, kernel_size=(3, 3))
    np.testing.assert_allclose(got, expected, rtol=1e-10)
    # NHWC data with HWIO weights gives the same numbers, transposed
    x2, w2 = randn(1, 3, 6, 5), randn(2, 3, 2, 3)
    expected = conv_ref(x2, w2, (2, 1), [(0, 1), (1, 0)], (1, 1), 1)
    got = run(
        "nn.conv2d",
        x2.transpose(0, 2, 3, 1),
        w2.transpose(2, 3, 1, 0),
        strides=(2, 1),
        padding=(0, 1, 1, 0),
        data_layout="NHWC",
        kernel_layout="HWIO",
    )
    np.testing.assert_allclose(got, expected.transpose(0, 2, 3, 1), rtol=1e-10)
    got = run("nn.conv2d", x2, w2, strides=(2, 1), padding=(0, 1, 1, 0), out_layout="NHWC")
    np.testing.assert_allclose(got, expected.transpose(0, 2, 3, 1), rtol=1e-10)


def test_conv2d_out_dtype_accumulates_wide():
    x = np.full((1, 2, 3, 3), 100, "int8")
    wt = np.full((1, 2, 3, 3), 100, "int8")
    got = run("nn.conv2d", x, wt, out_dtype="int32")
    assert got.dtype == np.int32 and got.tolist() == [[[[180000]]]]


def test_conv2d_float32_stays_float32():
    x, wt = randn(1, 2, 4, 4, dtype="float32"), randn(3, 2, 3, 3, dtype="float32")
    got = run("nn.conv2d", x, wt)
    assert got.dtype == np.float32
    np.testing.assert_allclose(
        got,
        conv_ref(x.astype("float64"), wt.astype("float64"), (1, 1), [(0, 0)] * 2, (1, 1), 1),
        # float32 accumulation of 18 products: absolute error near cancellation, not relative
        rtol=1e-5,
        atol=1e-5,
    )


def test_conv1d_and_conv3d_against_loops():
    x, wt = randn(2, 4, 9), randn(6, 2, 3)
    got = run("nn.conv1d", x, wt, strides=[2], padding=[1, 2], dilation=[2], groups=2)
    np.testing.assert_allclose(got, conv_ref(x, wt, (2,), [(1, 2)], (2,), 2), rtol=1e-10)
    x, wt = randn(1, 2, 4, 5, 4), randn(3, 2, 2, 3, 2)
    got = run("nn.conv3d", x, wt, strides=[1, 2, 1], padding=[1, 0, 1], dilation=[1, 1, 2])
    np.testing.assert_allclose(
        got, conv_ref(x, wt, (1, 2, 1), [(1, 1), (0, 0), (1, 1)], (1, 1, 2), 1), rtol=1e-10
    )
    got = run(
        "nn.conv3d",
        x.transpose(0, 2, 3, 4, 1),
        wt.transpose(2, 3, 4, 1, 0),
        data_layout="NDHWC",
        kernel_layout="DHWIO",
    )
    np.testing.assert_allclose(
        got,
        conv_ref(x, wt, (1, 1, 1), [(0, 0)] * 3, (1, 1, 1), 1).transpose(0, 2, 3, 4, 1),
        rtol=1e-10,
    )


@settings(max_examples=30, deadline=None)
@given(
    st.integers(1, 3),
    st.integers(1, 3),
    st.integers(1, 2),
    st.integers(0, 2),
    st.integers(1, 2),
    st.sampled_from([1, 2]),
    st.integers(0, 1),
)
def test_conv2d_transpose_against_scatter(k, stride, dilation, pad, og, groups, extra):
    extra = min(extra, stride - 1) if stride > 1 else 0
    x = randn(1, 2 * groups, 3, 4)
    wt = randn(2 * groups, og, k, k)
    kwargs = {
        "strides": (stride, stride),
        "padding": (pad, pad),
        "dilation": (dilation, dilation),
        "groups": groups,
    }
    assume(2 * stride - 2 * pad + (k - 1) * dilation + 1 + extra > 0)  # a nonempty output (3 - 1 = 2)
    expected = conv_transpose_ref(
        x, wt, (stride,) * 2, [(pad, pad)] * 2, (dilation,) * 2, groups, (extra,) * 2
    )
    got = run("nn.conv2d_transpose", x, wt, output_padding=(extra, extra), **kwargs)
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)


def test_conv2d_transpose_hand_values():
    # 1x1 input, 2x2 kernel, stride 2: the kernel itself
    x = np.array([[[[2.0]]]])
    wt = np.array([[[[1.0, 2.0], [3.0, 4.0]]]])
    assert run("nn.conv2d_transpose", x, wt, strides=(2, 2)).tolist() == [[[[2, 4], [6, 8]]]]
    # output_padding adds a row and column at the end
    got = run("nn.conv2d_transpose", x, wt, strides=(2, 2), output_padding=(1, 1))
    assert got.tolist() == [[[[2, 4, 0], [6, 8, 0], [0, 0, 0]]]]


# --- pooling ------------------------------------------------------------------------------------


@st.composite
def pool_case(draw):
    nd = draw(st.sampled_from([1, 2, 2, 3]))
    pool = tuple(draw(st.integers(1, 3)) for _ in range(nd))
    strides = tuple(draw(st.integers(1, 3)) for _ in range(nd))
    dilation = tuple(draw(st.integers(1, 2)) for _ in range(nd))
    pads = [(draw(st.integers(0, 2)), draw(st.integers(0, 2))) for _ in range(nd)]
    sizes = tuple(
        draw(st.integers((p - 1) * d + 1, 6 if nd < 3 else 5)) for p, d in zip(pool, dilation)
    )
    return nd, pool, strides, dilation, pads, sizes, draw(st.booleans()), draw(st.booleans())


@settings(max_examples=60, deadline=None)
@given(pool_case())
def test_pools_against_window_loops(case):
    nd, pool, strides, dilation, pads, sizes, ceil_mode, include = case
    x = randn(1, 2, *sizes)
    padding = [p[0] for p in pads] + [p[1] for p in pads]
    common = {
        "pool_size": pool,
        "strides": strides,
        "dilation": dilation,
        "padding": padding,
        "ceil_mode": ceil_mode,
    }
    got = run(f"nn.max_pool{nd}d", x, **common)
    np.testing.assert_array_equal(
        got, pool_ref(x, "max", pool, strides, pads, dilation, ceil_mode, False)
    )
    got = run(f"nn.avg_pool{nd}d", x, count_include_pad=include, **common)
    expected = pool_ref(x, "avg", pool, strides, pads, dilation, ceil_mode, include)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


def test_pool_hand_values():
    x = np.arange(16, dtype="float32").reshape(1, 1, 4, 4)
    assert run("nn.max_pool2d", x, pool_size=(2, 2), strides=(2, 2)).tolist() == [
        [[[5, 7], [13, 15]]]
    ]
    assert run("nn.avg_pool2d", x, pool_size=(2, 2), strides=(2, 2)).tolist() == [
        [[[2.5, 4.5], [10.5, 12.5]]]
    ]
    # padding 1: the corner window holds only x[0, 0] = 0 and x[0, 1], x[1, 0], x[1, 1]
    got = run("nn.avg_pool2d", x, pool_size=(3, 3), padding=(1, 1), strides=(3, 3))
    assert got[0, 0, 0, 0] == (0 + 1 + 4 + 5) / 4
    got = run(
        "nn.avg_pool2d", x, pool_size=(3, 3), padding=(1, 1), strides=(3, 3), count_include_pad=True
    )
    assert got[0, 0, 0, 0] == (0 + 1 + 4 + 5) / 9
    # ceil_mode: a 3rd window hanging over the edge
    assert run("nn.max_pool2d", x, pool_size=(2, 2), strides=(3, 3)).shape == (1, 1, 1, 1)
    got = run("nn.max_pool2d", x, pool_size=(2, 2), strides=(3, 3), ceil_mode=True)
    assert got.tolist() == [[[[5, 7], [13, 15]]]]


def test_pool_nhwc_and_int():
    x = np.arange(16, dtype="int32").reshape(1, 4, 4, 1)
    got = run("nn.avg_pool2d", x, pool_size=(2, 2), strides=(2, 2), layout="NHWC")
    assert got.dtype == np.int32 and got[..., 0].tolist() == [[[2, 4], [10, 12]]]  # truncated
    got = run(
        "nn.max_pool2d", x, pool_size=(2, 2), strides=(2, 2), layout="NHWC", out_layout="NCHW"
    )
    assert got.tolist() == [[[[5, 7], [13, 15]]]]


def test_global_pools():
    x = randn(2, 3, 4, 5)
    np.testing.assert_allclose(
        run("nn.global_avg_pool2d", x), x.mean(axis=(2, 3), keepdims=True), rtol=1e-12
    )
    assert (run("nn.global_max_pool2d", x) == x.max(axis=(2, 3), keepdims=True)).all()
    got = run("nn.global_avg_pool2d", x.transpose(0, 2, 3, 1), layout="NHWC")
    assert got.shape == (2, 1, 1, 3)


def adaptive_ref(x, kind, oh, ow):
    h, w = x.shape[2:]
    out = np.zeros(x.shape[:2] + (oh, ow))
    for i in range(oh):
        hs, he = math.floor(i * h / oh), math.ceil((i + 1) * h / oh)
        for j in range(ow):
            ws, we = math.floor(j * w / ow), math.ceil((j + 1) * w / ow)
            window = x[:, :, hs:he, ws:we]
            out[:, :, i, j] = window.mean(axis=(2, 3)) if kind == "avg" else window.max(axis=(2, 3))
    return out


@pytest.mark.parametrize(
    "in_hw, out_hw", [((5, 7), (3, 2)), ((4, 4), (4, 4)), ((3, 5), (5, 3)), ((6, 6), (1, 1))]
)
def test_adaptive_pools_against_loops(in_hw, out_hw):
    x = randn(1, 2, *in_hw)
    np.testing.assert_allclose(
        run("nn.adaptive_avg_pool2d", x, output_size=out_hw),
        adaptive_ref(x, "avg", *out_hw),
        rtol=1e-12,
    )
    np.testing.assert_array_equal(
        run("nn.adaptive_max_pool2d", x, output_size=out_hw), adaptive_ref(x, "max", *out_hw)
    )


def test_adaptive_pool_defaults_and_layout():
    x = randn(1, 2, 3, 4)
    assert run("nn.adaptive_avg_pool2d", x).shape == (1, 2, 3, 4)  # empty output_size keeps H, W
    got = run("nn.adaptive_max_pool2d", x.transpose(0, 2, 3, 1), output_size=[2], layout="NHWC")
    np.testing.assert_array_equal(got, adaptive_ref(x, "max", 2, 2).transpose(0, 2, 3, 1))


# --- normalization and activations ---------------------------------------------------------------


def test_batch_norm():
    x = randn(2, 3, 4, dtype="float32")
    gamma, beta = np.array([1.0, 2.0, 0.5], "float32"), np.array([0.0, 1.0, -1.0], "float32")
    mean, var = np.array([0.1, -0.2, 0.3], "float32"), np.array([1.0, 4.0, 0.25], "float32")
    out, m, v = run("nn.batch_norm", x, gamma, beta, mean, var)
    assert out.dtype == np.float32 and (m == mean).all() and (v == var).all()
    for c in range(3):
        expected = (x[:, c, :] - mean[c]) / np.sqrt(var[c] + 1e-5) * gamma[c] + beta[c]
        np.testing.assert_allclose(out[:, c, :], expected, rtol=1e-5, atol=1e-6)
    out, _, _ = run(
        "nn.batch_norm", x, gamma, beta, mean, var, center=False, scale=False, epsilon=0.0
    )
    np.testing.assert_allclose(out[:, 1, :], (x[:, 1, :] + 0.2) / 2, rtol=1e-6)
    xl = x.transpose(0, 2, 1)  # channels last
    out, _, _ = run("nn.batch_norm", xl, gamma, beta, mean, var, axis=-1)
    np.testing.assert_allclose(
        out[..., 2], (xl[..., 2] - 0.3) / np.sqrt(0.25 + 1e-5) * 0.5 - 1, rtol=1e-5
    )


def test_layer_norm():
    x = randn(2, 5)
    gamma, beta = np.arange(5.0), np.ones(5)
    got = run("nn.layer_norm", x, gamma, beta, epsilon=1e-3)
    for i in range(2):
        m = sum(x[i]) / 5
        v = sum((t - m) ** 2 for t in x[i]) / 5
        expected = [(x[i, j] - m) / math.sqrt(v + 1e-3) * gamma[j] + 1 for j in range(5)]
        np.testing.assert_allclose(got[i], expected, rtol=1e-10)
    got = run("nn.layer_norm", x.T.copy(), gamma[:2], beta[:2], axis=0, center=False, scale=False)
    np.testing.assert_allclose(got.mean(axis=0), 0, atol=1e-12)


def test_dropout_is_identity_with_full_mask():
    x = randn(3, 2)
    out, mask = run("nn.dropout", x, rate=0.3)
    assert (out == x).all() and not np.shares_memory(out, x) and (mask == 1).all()


def test_softmax():
    x = randn(3, 4, 5, dtype="float32")
    for axis in (-1, 0, 1):
        got = run("nn.softmax", x, axis=axis)
        assert got.dtype == np.float32
        np.testing.assert_allclose(got.sum(axis=axis), 1, rtol=1e-6)
        e = np.exp(x.astype("float64"))
        np.testing.assert_allclose(got, e / e.sum(axis=axis, keepdims=True), rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(
            run("nn.log_softmax", x, axis=axis),
            np.log(e / e.sum(axis=axis, keepdims=True)),
            rtol=1e-5,
            atol=1e-6,
        )
    big = np.array([[1000.0, 1001.0, -1000.0]], "float32")  # no overflow
    got = run("nn.softmax", big)
    np.testing.assert_allclose(got, [[1 / (1 + math.e), math.e / (1 + math.e), 0]], rtol=1e-6)
    np.testing.assert_allclose(
        run("nn.log_softmax", big)[0, :2],
        [-math.log(1 + math.e), -math.log(1 + 1 / math.e)],
        rtol=1e-6,
    )


def test_activations():
    x = np.array([-2.0, 0.0, 3.0], "float32")
    assert run("nn.relu", x).tolist() == [0, 0, 3]
    assert run("nn.leaky_relu", x, alpha=0.5).tolist() == [-1, 0, 3]
    # integers: alpha is converted to the dtype first, as TVM's make_const does
    assert run("nn.leaky_relu", np.array([-4, 4], "int32"), alpha=0.5).tolist() == [0, 4]
    data = np.array([[[-1.0, 1.0]], [[-1.0, 1.0]]], "float32").transpose(1, 0, 2)  # (1, 2, 2)
    got = run("nn.prelu", data, np.array([0.1, 0.2], "float32"))
    np.testing.assert_allclose(got, [[[-0.1, 1.0], [-0.2, 1.0]]], rtol=1e-6)


def test_dense_matmul_batch_matmul():
    a, w = randn(2, 3, 4), randn(5, 4)
    got = run("nn.dense", a, w)
    for i, j, u in itertools.product(range(2), range(3), range(5)):
        assert abs(got[i, j, u] - sum(a[i, j, k] * w[u, k] for k in range(4))) < 1e-12
    got = run(
        "nn.dense", np.full((1, 3), 100, "int8"), np.full((2, 3), 100, "int8"), out_dtype="int32"
    )
    assert got.dtype == np.int32 and got.tolist() == [[30000, 30000]]
    m, n = randn(3, 4), randn(4, 2)
    np.testing.assert_allclose(run("nn.matmul", m, n), m @ n, rtol=1e-12)
    np.testing.assert_allclose(
        run("nn.matmul", m.T.copy(), n.T.copy(), transpose_a=True, transpose_b=True),
        m @ n,
        rtol=1e-12,
    )
    x, y = randn(2, 3, 4), randn(2, 5, 4)
    got = run("nn.batch_matmul", x, y)  # transpose_b=True by default
    for b, i, j in itertools.product(range(2), range(3), range(5)):
        assert abs(got[b, i, j] - sum(x[b, i, k] * y[b, j, k] for k in range(4))) < 1e-12
    got = run("nn.batch_matmul", x, randn(1, 4, 6), transpose_b=False)  # batch 1 broadcasts
    assert got.shape == (2, 3, 6)
    got = run("nn.batch_matmul", x.transpose(0, 2, 1).copy(), y, transpose_a=True)
    np.testing.assert_allclose(got, np.einsum("bik,bjk->bij", x, y), rtol=1e-12)


def test_bias_add():
    x = np.zeros((2, 3, 2), "float32")
    got = run("nn.bias_add", x, np.array([1.0, 2.0, 3.0], "float32"))
    assert got[:, :, 0].tolist() == [[1, 2, 3], [1, 2, 3]]
    got = run("nn.bias_add", x, np.array([5.0, 6.0], "float32"), axis=-1)
    assert got[1, 2].tolist() == [5, 6]


def test_pad():
    x = np.array([[1, 2], [3, 4]], "int32")
    got = run("nn.pad", x, np.array(9, "int32"), pad_width=[[1, 0], [0, 2]])
    assert got.tolist() == [[9, 9, 9, 9], [1, 2, 9, 9], [3, 4, 9, 9]]
    got = run("nn.pad", x, np.array(7.9, "float32"), pad_width=[[0, 0], [1, 0]])
    assert got.dtype == np.int32 and got.tolist() == [[7, 1, 2], [7, 3, 4]]
    got = run("nn.pad", x, np.array(0, "int32"), pad_width=[[1, 1], [1, 1]], pad_mode="edge")
    assert got.tolist() == [[1, 1, 2, 2], [1, 1, 2, 2], [3, 3, 4, 4], [3, 3, 4, 4]]
    got = run("nn.pad", np.array([1, 2, 3]), np.array(0), pad_width=[[2, 2]], pad_mode="reflect")
    assert got.tolist() == [3, 2, 1, 2, 3, 2, 1]


def test_batch_flatten():
    x = np.arange(24).reshape(2, 3, 4)
    got = run("nn.batch_flatten", x)
    assert got.shape == (2, 12) and got[1].tolist() == list(range(12, 24))
    assert run("nn.batch_flatten", np.zeros((0, 3, 2))).shape == (0, 6)


def test_upsampling():
    x = np.array([[[[1.0, 2.0], [3.0, 4.0]]]], "float32")
    got = run("nn.upsampling", x, scale_h=2.0, scale_w=2.0)
    assert got.tolist() == [[[[1, 1, 2, 2], [1, 1, 2, 2], [3, 3, 4, 4], [3, 3, 4, 4]]]]
    # bilinear with aligned corners: corners kept, thirds in between
    got = run("nn.upsampling", x, scale_h=1.5, scale_w=1.5, method="bilinear", align_corners=True)
    np.testing.assert_allclose(got, [[[[1, 1.5, 2], [2, 2.5, 3], [3, 3.5, 4]]]], rtol=1e-6)
    # asymmetric bilinear: in = out / scale, clamped at the border
    got = run("nn.upsampling", x, scale_h=2.0, scale_w=2.0, method="bilinear")
    np.testing.assert_allclose(got[0, 0, 0], [1, 1.5, 2, 2], rtol=1e-6)
    np.testing.assert_allclose(got[0, 0, :, 0], [1, 2, 3, 3], rtol=1e-6)
    got = run("nn.upsampling", x.transpose(0, 2, 3, 1), scale_h=2.0, scale_w=1.0, layout="NHWC")
    assert got.shape == (1, 4, 2, 1) and got[0, :, 1, 0].tolist() == [2, 2, 4, 4]


def test_bad_inputs_are_eval_errors():
    with pytest.raises(EvalError):
        run("nn.conv2d", randn(1, 3, 4, 4), randn(2, 2, 3, 3))  # 3 channels, weight expects 2
    with pytest.raises(EvalError):
        run("nn.conv2d", randn(1, 2, 2, 2), randn(1, 2, 3, 3))  # kernel larger than input
    with pytest.raises(EvalError):
        run("nn.conv2d", randn(1, 2, 4, 4, 4), randn(1, 2, 3, 3), data_layout="NCHW4c")
