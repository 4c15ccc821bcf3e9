"""relay_nb.op.nn_contrib: packed-layout convolutions and dense, Winograd and GEMM weight
transforms and the convolutions consuming them -- relations, values against naive loops and
hand-written matrices, text round trip."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import relay_nb as relay
from relay_nb.errors import RelayTypeError
from relay_nb.ir.ty import Any

try:
    from ._reporter import T, infer
except ImportError:
    from _reporter import T, infer


try:
    from .ops_testing import no_warnings, run_impl as run  # noqa: F401  (no_warnings: autouse)
except ImportError:
    from ops_testing import no_warnings, run_impl as run  # noqa: F401


RNG = np.random.default_rng(17)


def conv2d_ref(x, w, stride=1, pad=0, groups=1):
    """out[n, o, y, x] = sum_{c, i, j} xpad[n, g*Cg + c, y*s + i, x*s + j] * w[o, c, i, j]."""
    n_, c_, h, wd = x.shape
    o_, cg, kh, kw = w.shape
    xp = np.pad(x, [(0, 0), (0, 0), (pad, pad), (pad, pad)])
    oh, ow = (h + 2 * pad - kh) // stride + 1, (wd + 2 * pad - kw) // stride + 1
    out = np.zeros((n_, o_, oh, ow))
    for n, o, y, xx in itertools.product(range(n_), range(o_), range(oh), range(ow)):
        g = o // (o_ // groups)
        for c, i, j in itertools.product(range(cg), range(kh), range(kw)):
            out[n, o, y, xx] += xp[n, g * cg + c, y * stride + i, xx * stride + j] * w[o, c, i, j]
    return out


def pack_nchw(x, c):
    """NCHW -> NCHW{c}c by hand: element (n, C, h, w) -> (n, C // c, h, w, C % c)."""
    n, ch, h, w = x.shape
    out = np.zeros((n, ch // c, h, w, c))
    for i in range(ch):
        out[:, i // c, :, :, i % c] = x[:, i]
    return out


def pack_oihw(w, i_, o_):
    """OIHW -> OIHW{i}i{o}o by hand."""
    o, ci, kh, kw = w.shape
    out = np.zeros((o // o_, ci // i_, kh, kw, i_, o_))
    for a, b in itertools.product(range(o), range(ci)):
        out[a // o_, b // i_, :, :, b % i_, a % o_] = w[a, b]
    return out


# --- relations --------------------------------------------------------------------------------

SHAPES = [
    (
        "nn.contrib_conv2d_NCHWc",
        [T((1, 2, 6, 6, 4)), T((3, 2, 3, 3, 4, 2))],
        {"data_layout": "NCHW4c", "kernel_layout": "OIHW4i2o", "out_layout": "NCHW2c", "padding": [1, 1]},
        T((1, 3, 6, 6, 2)),
    ),
    (
        "nn.contrib_depthwise_conv2d_NCHWc",
        [T((1, 2, 6, 6, 4)), T((2, 1, 3, 3, 1, 4))],
        {"data_layout": "NCHW4c", "kernel_layout": "OIHW1i4o", "groups": 8},
        T((1, 2, 4, 4, 4)),
    ),
    ("nn.contrib_dense_pack", [T((5, 6)), T((2, 6, 4))], {"weight_layout": "NC4n"}, T((5, 8))),
    ("nn.contrib_conv2d_winograd_weight_transform", [T((8, 4, 3, 3))], {"tile_size": 4}, T((6, 6, 8, 4))),
    ("nn.contrib_conv3d_winograd_weight_transform", [T((8, 4, 3, 3, 3))], {"tile_size": 2}, T((4, 4, 4, 8, 4))),
    ("nn.contrib_conv3d_winograd_weight_transform", [T((8, 4, 1, 3, 3))], {"tile_size": 2}, T((4, 4, 1, 8, 4))),
    ("nn.contrib_conv2d_winograd_nnpack_weight_transform", [T((8, 4, 3, 3))], {"convolution_algorithm": 2}, T((8, 4, 8, 8))),
    (
        "nn.contrib_conv2d_winograd_without_weight_transform",
        [T((1, 4, 8, 8)), T((6, 6, 8, 4))],
        {"tile_size": 4, "kernel_size": [3, 3], "channels": 8, "padding": [1, 1]},
        T((1, 8, 8, 8)),
    ),
    (
        "nn.contrib_conv2d_winograd_without_weight_transform",
        [T((Any, 4, 8, 8)), T((6, 6, 8, 4))],
        {"tile_size": 4, "kernel_size": [3, 3], "channels": 8},
        T((Any, 8, 6, 6)),
    ),
    (
        "nn.contrib_conv3d_winograd_without_weight_transform",
        [T((1, 4, 5, 8, 8)), T((4, 4, 4, 8, 4))],
        {"tile_size": 2, "kernel_size": [3, 3, 3], "channels": 8},
        T((1, 8, 3, 6, 6)),
    ),
    # K = 3*3*5 = 45 -> 48 (4 * tile_K = 8); N = 6 -> 8 (tile_N = 4)
    ("nn.contrib_conv2d_gemm_weight_transform", [T((3, 3, 5, 6))], {"tile_N": 4, "tile_K": 2}, T((2, 24, 2, 4))),
    ("nn.contrib_conv2d_gemm_weight_transform", [T((3, 3, 5, 6), "int8")], {"tile_N": 4, "tile_K": 2}, T((2, 24, 4, 2), "int8")),
    (
        "nn.contrib_conv2d_gemm_without_weight_transform",
        [T((1, 8, 8, 5)), T((2, 24, 2, 4))],
        {"kernel_size": [3, 3], "channels": 6, "data_layout": "NHWC", "kernel_layout": "HWIO"},
        T((1, 6, 6, 6)),
    ),
]


@pytest.mark.parametrize("op, args, attrs, expected", SHAPES, ids=[c[0] for c in SHAPES])
def test_shapes(op, args, attrs, expected):
    assert infer(op, *args, **attrs) == expected


ERRORS = [
    ("nn.contrib_conv2d_NCHWc", [T((1, 2, 6, 6, 4)), T((3, 3, 3, 3, 4, 2))], {"data_layout": "NCHW4c", "kernel_layout": "OIHW4i2o"}, "input channels 8 do not match weight's 12"),
    ("nn.contrib_conv2d_NCHWc", [T((1, 2, 6, 6, 4)), T((3, 2, 3, 3, 4, 2))], {"data_layout": "NCHW4c", "kernel_layout": "OIHW4i2o", "out_layout": "NCHW4c"}, "dimension C=6 is not divisible by 4"),
    ("nn.contrib_dense_pack", [T((5, 7)), T((2, 6, 4))], {"weight_layout": "NC4n"}, "data has 7 features but the weight 6"),
    ("nn.contrib_dense_pack", [T((5, 6)), T((8, 6))], {}, "rank 3 or 4"),
    ("nn.contrib_conv2d_winograd_weight_transform", [T((8, 4, 3, 3))], {"tile_size": 9}, "tile_size must be 2 to 8"),
    ("nn.contrib_conv2d_winograd_weight_transform", [T((8, 4, 1, 1))], {"tile_size": 2}, "kernel sizes 3 to 7"),
    ("nn.contrib_conv2d_winograd_nnpack_weight_transform", [T((8, 4, 5, 5))], {"convolution_algorithm": 2}, "3 x 3 kernels"),
    ("nn.contrib_conv2d_winograd_without_weight_transform", [T((1, 4, 8, 8)), T((6, 6, 8, 4))], {"tile_size": 4}, "kernel_size and channels must be given"),
    ("nn.contrib_conv2d_gemm_weight_transform", [T((3, 3, 5))], {"tile_N": 4, "tile_K": 2}, "HWIO \\(rank 4\\)"),
]


@pytest.mark.parametrize("op, args, attrs, message", ERRORS, ids=[c[0] for c in ERRORS])
def test_errors(op, args, attrs, message):
    with pytest.raises(RelayTypeError, match=message):
        infer(op, *args, **attrs)


# --- packed layouts ---------------------------------------------------------------------------


def test_conv2d_nchwc_against_loops():
    x = RNG.standard_normal((1, 8, 5, 5))
    w = RNG.standard_normal((6, 8, 3, 3))
    got = run("nn.contrib_conv2d_NCHWc", pack_nchw(x, 4), pack_oihw(w, 4, 2), padding=[1, 1],
              data_layout="NCHW4c", kernel_layout="OIHW4i2o", out_layout="NCHW2c")  # fmt: skip
    np.testing.assert_allclose(got, pack_nchw(conv2d_ref(x, w, pad=1), 2), rtol=1e-10)


def test_depthwise_conv2d_nchwc_against_loops():
    x = RNG.standard_normal((1, 8, 5, 5))
    w = RNG.standard_normal((8, 1, 3, 3))
    got = run("nn.contrib_depthwise_conv2d_NCHWc", pack_nchw(x, 4), pack_oihw(w, 1, 4),
              groups=8, data_layout="NCHW4c", kernel_layout="OIHW1i4o")  # fmt: skip
    np.testing.assert_allclose(got, pack_nchw(conv2d_ref(x, w, groups=8), 4), rtol=1e-10)


def test_dense_pack_against_loops():
    x = RNG.standard_normal((3, 6))
    w = RNG.standard_normal((8, 6))
    packed = np.zeros((2, 6, 4))
    for n, k in itertools.product(range(8), range(6)):
        packed[n // 4, k, n % 4] = w[n, k]
    got = run("nn.contrib_dense_pack", x, packed, weight_layout="NC4n")
    want = [[sum(x[m, k] * w[n, k] for k in range(6)) for n in range(8)] for m in range(3)]
    np.testing.assert_allclose(got, want, rtol=1e-10)


# --- winograd ---------------------------------------------------------------------------------

# TVM's G for F(2, 3) (points 0, -1, 1, inf) and F(4, 3) (points 0, -1, 1, 1/2, -2, inf)
G23 = np.array([[1, 0, 0], [1 / 2, -1 / 2, 1 / 2], [1 / 2, 1 / 2, 1 / 2], [0, 0, 1]])
G43 = np.array(
    [
        [1, 0, 0],
        [-1 / 3, 1 / 3, -1 / 3],
        [1 / 3, 1 / 3, 1 / 3],
        [-16 / 15, -8 / 15, -4 / 15],
        [1 / 15, -2 / 15, 4 / 15],
        [0, 0, 1],
    ]
)


@pytest.mark.parametrize("tile, g", [(2, G23), (4, G43)])
def test_winograd_weight_transform_is_g_w_gt(tile, g):
    w = RNG.standard_normal((2, 3, 3, 3))
    got = run("nn.contrib_conv2d_winograd_weight_transform", w, tile_size=tile)
    for o, i in itertools.product(range(2), range(3)):
        np.testing.assert_allclose(got[:, :, o, i], g @ w[o, i] @ g.T, rtol=1e-12, atol=1e-12)


def test_winograd_matrix_computes_a_1d_convolution():
    """G from the weight transform with Lavin's F(2, 3) A and B (rows for the points
    0, -1, 1, inf) gives the correlation of 4 inputs with 3 taps."""
    at = np.array([[1, 1, 1, 0], [0, -1, 1, -1]])
    bt = np.array([[1, 0, -1, 0], [0, -1, 1, 0], [0, 1, 1, 0], [0, 1, 0, -1]])
    d, k = RNG.standard_normal(4), RNG.standard_normal(3)
    # a kernel k (x) e_1: its transform's column 2 is (G k) * (G e_1)[2] = (G k) / 2
    u = run("nn.contrib_conv2d_winograd_weight_transform",
            np.outer(k, [0, 1, 0])[None, None], tile_size=2)  # fmt: skip
    gk = u[:, 2, 0, 0] * 2
    y = at @ (gk * (bt @ d))
    np.testing.assert_allclose(y, [d[0:3] @ k, d[1:4] @ k], rtol=1e-12)


@pytest.mark.parametrize("tile", [2, 4, 6])
def test_winograd_conv2d_equals_conv2d(tile):
    x = RNG.standard_normal((1, 3, 7, 6))
    w = RNG.standard_normal((4, 3, 3, 3))
    u = run("nn.contrib_conv2d_winograd_weight_transform", w, tile_size=tile)
    got = run("nn.contrib_conv2d_winograd_without_weight_transform", x, u, tile_size=tile,
              kernel_size=[3, 3], channels=4, padding=[1, 1])  # fmt: skip
    np.testing.assert_allclose(got, conv2d_ref(x, w, pad=1), rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("depth", [3, 1])
def test_winograd_conv3d_equals_conv3d(depth):
    x = RNG.standard_normal((1, 2, 4, 5, 5))
    w = RNG.standard_normal((3, 2, depth, 3, 3))
    u = run("nn.contrib_conv3d_winograd_weight_transform", w, tile_size=2)
    got = run("nn.contrib_conv3d_winograd_without_weight_transform", x, u, tile_size=2,
              kernel_size=[depth, 3, 3], channels=3)  # fmt: skip
    want = run("nn.conv3d", x, w)
    np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-10)


def test_nnpack_weight_transform_is_f63_in_oi88():
    w = RNG.standard_normal((2, 2, 3, 3))
    got = run("nn.contrib_conv2d_winograd_nnpack_weight_transform", w, convolution_algorithm=2)
    u = run("nn.contrib_conv2d_winograd_weight_transform", w, tile_size=6)
    np.testing.assert_allclose(got, np.transpose(u, (2, 3, 0, 1)), rtol=1e-12)


# --- gemm -------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float32", "int8"])
def test_gemm_weight_transform_against_loops(dtype):
    w = RNG.integers(-5, 5, (3, 3, 5, 6)).astype(dtype)
    got = run("nn.contrib_conv2d_gemm_weight_transform", w, tile_N=4, tile_K=2)
    flat = np.zeros((48, 8), dtype)
    flat[:45, :6] = w.reshape(45, 6)
    for a, b, c, d in itertools.product(*map(range, got.shape)):
        if dtype == "int8":  # (N tile, K tile, n, k)
            assert got[a, b, c, d] == flat[b * 2 + d, a * 4 + c]
        else:  # (N tile, K tile, k, n)
            assert got[a, b, c, d] == flat[b * 2 + c, a * 4 + d]


@pytest.mark.parametrize("dtype", ["float64", "int8"])
def test_gemm_conv2d_equals_conv2d(dtype):
    x = RNG.integers(-3, 3, (1, 6, 6, 5)).astype(dtype)  # NHWC
    w = RNG.integers(-3, 3, (3, 3, 5, 6)).astype(dtype)  # HWIO
    packed = run("nn.contrib_conv2d_gemm_weight_transform", w, tile_N=4, tile_K=2)
    got = run("nn.contrib_conv2d_gemm_without_weight_transform", x, packed, kernel_size=[3, 3],
              channels=6, data_layout="NHWC", kernel_layout="HWIO", out_dtype="int32"
              if dtype == "int8" else "")  # fmt: skip
    want = conv2d_ref(x.transpose(0, 3, 1, 2).astype(float), w.transpose(3, 2, 0, 1).astype(float))
    np.testing.assert_allclose(got, want.transpose(0, 2, 3, 1))


# --- programs and text ------------------------------------------------------------------------


def test_a_winograd_program_runs_and_prints_back():
    x = relay.var("x", shape=(1, 3, 6, 6))
    w = relay.var("w", shape=(4, 3, 3, 3))
    u = relay.nn.contrib_conv2d_winograd_weight_transform(w, 4)
    y = relay.nn.contrib_conv2d_winograd_without_weight_transform(
        x, u, 4, padding=(1, 1), channels=4, kernel_size=(3, 3)
    )
    mod = relay.transform.InferType()(relay.IRModule.from_expr(relay.Function([x, w], y)))
    text = mod.astext()
    again = relay.transform.InferType()(relay.parse(text))
    assert relay.structural_equal(mod["main"], again["main"], map_free_vars=True)
    assert again.astext() == text
    xs, ws = RNG.standard_normal((1, 3, 6, 6)), RNG.standard_normal((4, 3, 3, 3))
    got = relay.create_executor("interpreter", mod=mod).evaluate()(xs.astype("float32"), ws.astype("float32"))
    np.testing.assert_allclose(got, conv2d_ref(xs, ws, pad=1), rtol=1e-3, atol=1e-4)


def test_packed_calls_print_back():
    cases = [
        relay.nn.contrib_conv2d_nchwc(
            relay.var("x", shape=(1, 2, 6, 6, 4)), relay.var("k", shape=(3, 2, 3, 3, 4, 2)),
            padding=(1, 1), channels=6, kernel_size=(3, 3), data_layout="NCHW4c",
            kernel_layout="OIHW4i2o", out_layout="NCHW2c",
        ),
        relay.nn.contrib_dense_pack(relay.var("d", shape=(2, 6)), relay.var("p", shape=(2, 6, 4)),
                                    weight_layout="NC4n"),  # fmt: skip
        relay.nn.contrib_conv2d_gemm_weight_transform(relay.var("h", shape=(3, 3, 5, 6)), 4, 2),
        relay.nn.contrib_conv2d_winograd_nnpack_weight_transform(relay.var("n", shape=(2, 2, 3, 3)), 2),
        relay.nn.contrib_conv3d_winograd_weight_transform(relay.var("c", shape=(2, 2, 3, 3, 3)), 2),
    ]
    for expr in cases:
        m1 = relay.transform.InferType()(
            relay.IRModule.from_expr(relay.Function(relay.analysis.free_vars(expr), expr))
        )
        text = m1.astext()
        m2 = relay.transform.InferType()(relay.parse(text))
        assert relay.structural_equal(m1["main"], m2["main"], map_free_vars=True)
        assert m2.astext() == text
