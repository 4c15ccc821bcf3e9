"""``qnn.*`` values against hand-computed int8/uint8 results (TVM's canonicalized programs),
with saturation and rounding ties, and requantize against an exact rational reference."""

from __future__ import annotations

import math
import warnings
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import relay_nb as relay
from relay_nb.errors import EvalError

qnn = relay.qnn.op


@pytest.fixture(autouse=True)
def _no_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


def f32(v):
    return relay.const(np.float32(v))


def i32(v):
    return relay.const(np.int32(v))


def run(expr, *args):
    """Type-check ``expr`` (free vars in order) and evaluate it in the interpreter."""
    params = relay.analysis.free_vars(expr)
    mod = relay.transform.InferType()(relay.IRModule.from_expr(relay.Function(params, expr)))
    return relay.create_executor("interpreter", mod=mod).evaluate()(*args)


def var(name, value):
    return relay.var(name, shape=np.shape(value), dtype=str(np.asarray(value).dtype))


def q8(values, dtype="int8"):
    return np.array(values, dtype)


# --- quantize / dequantize ------------------------------------------------------------------


def test_quantize_rounds_halves_away_from_zero_and_saturates():
    x = np.array([-1.0, -0.25, 0.25, 0.75, 1.25, 100.0, -100.0], "float32")
    # x / 0.5 = -2, -0.5, 0.5, 1.5, 2.5, 200, -200 -> round -2, -1, 1, 2, 3 -> + 1 -> clip
    got = run(qnn.quantize(var("x", x), f32(0.5), i32(1)), x)
    assert got.dtype == np.int8
    assert got.tolist() == [-1, 0, 2, 3, 4, 127, -128]
    got = run(qnn.quantize(var("x", x), f32(0.5), i32(10), out_dtype="uint8"), x)
    assert got.tolist() == [8, 9, 11, 12, 13, 210, 0]


def test_quantize_per_axis():
    x = np.ones((2, 2), "float32")
    s = relay.const(np.array([0.5, 0.25], "float32"))
    z = relay.const(np.array([0, 1], "int32"))
    assert run(qnn.quantize(var("x", x), s, z, axis=1), x).tolist() == [[2, 5], [2, 5]]
    assert run(qnn.quantize(var("x", x), s, z, axis=0), x).tolist() == [[2, 2], [5, 5]]


def test_quantize_nan_clips_to_the_top_as_tvm_clip_does():
    x = np.array([np.nan, np.inf, -np.inf], "float32")
    assert run(qnn.quantize(var("x", x), f32(1), i32(0)), x).tolist() == [127, 127, -128]


def test_dequantize():
    q = q8([-128, 0, 127])
    got = run(qnn.dequantize(var("q", q), f32(0.5), i32(-1)), q)
    assert got.dtype == np.float32 and got.tolist() == [-63.5, 0.5, 64.0]
    s = relay.const(np.array([1.0, 0.5], "float32"))
    z = relay.const(np.array([0, 2], "int32"))
    q = q8([[4, 4], [6, 6]], "uint8")
    assert run(qnn.dequantize(var("q", q), s, z, axis=0), q).tolist() == [[4, 4], [2, 2]]
    # float16: values beyond its range clip to its largest finite value
    q = np.array([2**30], "int32")
    got = run(qnn.dequantize(var("q", q), f32(1), i32(0), out_dtype="float16"), q)
    assert got.dtype == np.float16 and got.tolist() == [65504.0]


# --- requantize -----------------------------------------------------------------------------

TIES = q8([-3, -2, -1, 0, 1, 2, 3], "int32")


@pytest.mark.parametrize(
    "rounding, compute, expected",
    [
        # x * 0.5 = -1.5, -1, -0.5, 0, 0.5, 1, 1.5
        ("UPWARD", "None", [-1, -1, 0, 0, 1, 1, 2]),
        ("None", "None", [-1, -1, 0, 0, 1, 1, 2]),  # TVM's default rounding is UPWARD
        ("TONEAREST", "None", [-2, -1, -1, 0, 1, 1, 2]),
        ("UPWARD", "float32", [-1, -1, 0, 0, 1, 1, 2]),
        ("TONEAREST", "float64", [-2, -1, -1, 0, 1, 1, 2]),
    ],
)
def test_requantize_rounding_ties(rounding, compute, expected):
    e = qnn.requantize(
        var("q", TIES),
        f32(1),
        i32(0),
        f32(2),
        i32(0),
        rounding=rounding,
        compute_dtype=compute,
        out_dtype="int8",
    )
    assert run(e, TIES).tolist() == expected


def test_requantize_saturates_to_the_output_dtype():
    q = np.array([1000, -1000, 10], "int32")
    e = qnn.requantize(var("q", q), f32(1), i32(0), f32(2), i32(5), out_dtype="int8")
    assert run(e, q).tolist() == [127, -128, 10]  # 500 + 5, -500 + 5, 5 + 5
    e = qnn.requantize(var("q", q), f32(1), i32(0), f32(2), i32(5), out_dtype="uint8")
    assert run(e, q).tolist() == [255, 0, 10]
    e = qnn.requantize(var("q", q), f32(1), i32(0), f32(2), i32(5), out_dtype="int32")
    assert run(e, q).tolist() == [505, -495, 10]


def test_requantize_per_channel():
    q = q8([[3, 3, 3], [-3, -3, -3]])
    s = relay.const(np.array([1, 2, 4], "float32"))
    z = relay.const(np.array([0, 1, 0], "int32"))
    # multipliers 0.5, 1, 2 on q - zp: (1.5 -> 2, 2, 6) and (-1.5 -> -1, -4, -6)
    e = qnn.requantize(var("q", q), s, z, f32(2), i32(0), axis=1, out_dtype="int8")
    assert run(e, q).tolist() == [[2, 2, 6], [-1, -4, -6]]


def _reference_requantize(q, s_in, s_out, zp_in, zp_out, nearest):
    """The fixed-point result as exact rationals, one element at a time."""
    m = float(np.float32(s_in)) / float(np.float32(s_out))
    frac, shift = math.frexp(m)
    sig = math.floor(frac * 2**31 + 0.5)
    if sig == 2**31:
        sig, shift = sig // 2, shift + 1
    exact = Fraction(sig, 2**31) * Fraction(2) ** shift
    out = []
    for v in q:
        t = (int(v) - zp_in) * exact
        half = Fraction(1, 2)
        r = math.floor(t + half) if not nearest or t >= 0 else math.ceil(t - half)
        out.append(min(127, max(-128, r + zp_out)))
    return out


@settings(max_examples=60, deadline=None)
@given(
    q=st.lists(st.integers(-128, 127), min_size=1, max_size=8),
    s_in=st.floats(0.001, 4.0),
    s_out=st.floats(0.001, 4.0),
    zp_in=st.integers(-20, 20),
    zp_out=st.integers(-20, 20),
    nearest=st.booleans(),
)
def test_requantize_matches_exact_fixed_point_arithmetic(q, s_in, s_out, zp_in, zp_out, nearest):
    data = np.array(q, "int8")
    e = qnn.requantize(
        var("q", data),
        f32(s_in),
        i32(zp_in),
        f32(s_out),
        i32(zp_out),
        rounding="TONEAREST" if nearest else "UPWARD",
        out_dtype="int8",
    )
    assert run(e, data).tolist() == _reference_requantize(q, s_in, s_out, zp_in, zp_out, nearest)


# --- simulated quantize / dequantize -----------------------------------------------------


def test_simulated_quantize_and_dequantize():
    x = np.array([[0.26, -300.0], [0.3, 1.0]], "float32")
    got = run(qnn.simulated_quantize(var("x", x), f32(0.5), i32(1), out_dtype="int8"), x)
    assert got.dtype == np.float32 and got.tolist() == [[2, -128], [2, 3]]
    got = run(qnn.simulated_quantize(var("x", x), f32(0.5), i32(1), out_dtype="disable"), x)
    assert np.array_equal(got, x)
    # per-channel along the last axis: scales 0.5, 0.25
    s = relay.const(np.array([0.5, 0.25], "float32"))
    z = relay.const(np.array([0, 0], "int32"))
    got = run(qnn.simulated_quantize(var("x", x), s, z, out_dtype="uint8"), x)
    assert got.tolist() == [[1, 0], [1, 4]]
    q = np.array([2.0, -128.0], "float32")
    got = run(qnn.simulated_dequantize(var("q", q), f32(0.5), i32(1), in_dtype="int8"), q)
    assert got.tolist() == [0.5, -64.5]


# --- binary ops ---------------------------------------------------------------------------


def binary(op, lhs, rhs, ls, lz, rs, rz, os, oz, **kw):
    return run(
        op(
            var("l", lhs), var("r", rhs), f32(ls), i32(lz), f32(rs), i32(rz), f32(os), i32(oz), **kw
        ),
        lhs,
        rhs,
    ).tolist()


def test_add_requantizes_both_sides_then_adds():
    # lhs 10, 20 at 0.5 -> 5, 10; rhs 4, -100 at 0.25 -> 1, -25; tie: 1 * 0.5 -> 1 (UPWARD)
    assert binary(qnn.add, q8([10, 20, 1]), q8([4, -100, 1]), 0.5, 0, 0.25, 0, 1, 0) == [6, -15, 1]
    # each side gets the output zero point, then one is taken away: 5 + 3 + 1 + 3 - 3
    assert binary(qnn.add, q8([10]), q8([4]), 0.5, 0, 0.25, 0, 1, 3) == [9]
    assert binary(qnn.add, q8([127, -128]), q8([127, -128]), 1, 0, 1, 0, 1, 0) == [127, -128]
    u = q8([250, 3], "uint8")
    assert binary(qnn.add, u, u, 1, 0, 1, 0, 1, 0) == [255, 6]


def test_add_broadcasts():
    lhs, rhs = q8([[1, 2], [3, 4]]), q8([10])
    assert binary(qnn.add, lhs, rhs, 1, 0, 1, 0, 1, 0) == [[11, 12], [13, 14]]


def test_subtract():
    assert binary(qnn.subtract, q8([10, 20]), q8([4, -100]), 0.5, 0, 0.25, 0, 1, 0) == [4, 35]
    # (5 + 3) - (1 + 3) + 3
    assert binary(qnn.subtract, q8([10]), q8([4]), 0.5, 0, 0.25, 0, 1, 3) == [7]
    assert binary(qnn.subtract, q8([-128]), q8([127]), 1, 0, 1, 0, 1, 0) == [-128]


def test_mul():
    # (3 - 1) * 5 = 10, (-4 - 1) * 5 = -25 at scale 0.25 -> 2.5 -> 3 (halves up), -6.25 -> -6
    assert binary(qnn.mul, q8([3, -4]), q8([5, 5]), 0.5, 1, 0.5, 0, 1, 0) == [3, -6]
    assert binary(qnn.mul, q8([100]), q8([100]), 1, 0, 1, 0, 1, 0) == [127]


def test_mul_per_channel():
    lhs, rhs = q8([[2, 2], [4, 4]]), q8([[3, 3], [3, 3]])
    ls = relay.const(np.array([1.0, 0.5], "float32"))
    rs = relay.const(np.array([1.0, 0.5], "float32"))
    z = relay.const(np.array([0, 0], "int32"))
    e = qnn.mul(var("l", lhs), var("r", rhs), ls, z, rs, z, f32(1), i32(0), lhs_axis=1, rhs_axis=1)
    # products 6 and 12; channel scales 1 and 0.25: 6, 1.5 -> 2, 12, 3
    assert run(e, lhs, rhs).tolist() == [[6, 2], [12, 3]]
    bad = qnn.mul(
        var("l", lhs), var("r", rhs), ls, z, rs, z, f32(1), i32(0), lhs_axis=1, rhs_axis=0
    )
    with pytest.raises(EvalError, match="lhs_axis and rhs_axis are not the same"):
        run(bad, lhs, rhs)


def test_concatenate_requantizes_each_input():
    a, b = q8([1, 2]), q8([4, 5])
    e = qnn.concatenate(
        [var("a", a), var("b", b)], [f32(1), f32(0.5)], [i32(0), i32(0)], f32(1), i32(0), axis=0
    )
    assert run(e, a, b).tolist() == [1, 2, 2, 3]  # 4 * 0.5 = 2, 5 * 0.5 = 2.5 -> 3


# --- dense, batch_matmul, convolutions ----------------------------------------------------


def test_dense_subtracts_zero_points():
    x, w = q8([[1, 2], [3, 4]]), q8([[1, 0], [2, -1]])
    e = qnn.dense(var("x", x), var("w", w), i32(1), i32(0), f32(1), f32(1), units=2)
    got = run(e, x, w)
    # (x - 1) = [[0, 1], [2, 3]] times w.T
    assert got.dtype == np.int32 and got.tolist() == [[0, -1], [2, 1]]
    wz = relay.const(np.array([0, 1], "int32"))
    ws = relay.const(np.array([1, 1], "float32"))
    e = qnn.dense(var("x", x), var("w", w), i32(1), wz, f32(1), ws, units=2)
    assert run(e, x, w).tolist() == [[0, -2], [2, -4]]  # w - [0, 1] = [[1, 0], [1, -2]]


def test_dense_sums_in_int32_and_wraps_like_tvm():
    n = 2**17 + 1  # 16384 * n just exceeds 2**31
    x = np.full((1, n), -128, "int8")
    w = np.full((1, n), -128, "int8")
    e = qnn.dense(var("x", x), var("w", w), i32(0), i32(0), f32(1), f32(1), units=1)
    assert run(e, x, w).tolist() == [[16384 * n - 2**32]]
    e = qnn.dense(
        var("x", x), var("w", w), i32(0), i32(0), f32(1), f32(1), units=1, out_dtype="int64"
    )
    assert run(e, x, w).tolist() == [[16384 * n]]


def test_contrib_dense_pack_unpacks_the_weight():
    x = q8([[1, 2, 3, 4]])
    w = np.arange(16, dtype="int8").reshape(4, 4)
    packed = w.reshape(2, 2, 2, 2).transpose(0, 2, 1, 3).copy()  # NC2n2c
    e = qnn.contrib_dense_pack(
        var("x", x), var("w", packed), i32(0), i32(0), f32(1), f32(1), kernel_layout="NC2n2c"
    )
    assert run(e, x, packed).tolist() == (x.astype(int) @ w.T.astype(int)).tolist()


def test_batch_matmul():
    x = q8([[[1, 2], [3, 4]]])
    y = q8([[[1, 1], [0, 2]]])
    e = qnn.batch_matmul(var("x", x), var("y", y), i32(1), i32(1), f32(1), f32(1))
    # (x - 1) = [[0, 1], [2, 3]]; (y - 1) = [[0, 0], [-1, 1]]; x @ y.T
    assert run(e, x, y).tolist() == [[[0, 1], [0, 1]]]


def test_conv2d_pads_with_the_zero_point():
    x = q8([[[[1, 2], [3, 4]]]])
    w = q8([[[[1]]], [[[2]]]])  # two output channels, 1x1
    wz = relay.const(np.array([0, 1], "int32"))
    ws = relay.const(np.array([1, 1], "float32"))
    e = qnn.conv2d(
        var("x", x),
        var("w", w),
        i32(1),
        wz,
        f32(1),
        ws,
        kernel_size=(1, 1),
        channels=2,
        padding=(1, 1),
    )
    got = run(e, x, w)
    inner = [[0, 1], [2, 3]]  # x - 1; padding contributes (zp - zp) = 0
    assert got.dtype == np.int32
    assert got[0, 0].tolist() == [[0, 0, 0, 0], [0, *inner[0], 0], [0, *inner[1], 0], [0, 0, 0, 0]]
    assert got[0, 1].tolist() == got[0, 0].tolist()  # (2 - 1) * (x - 1)


def test_conv2d_transpose():
    x = q8([[[[1, 2], [3, 4]]]])
    w = np.full((1, 1, 2, 2), 2, "int8")
    e = qnn.conv2d_transpose(
        var("x", x), var("w", w), i32(1), i32(1), f32(1), f32(1), kernel_size=(2, 2), channels=1
    )
    # full correlation of [[0, 1], [2, 3]] with a 2x2 of ones
    assert run(e, x, w)[0, 0].tolist() == [[0, 1, 1], [2, 6, 4], [2, 5, 3]]


def test_avg_pool2d_requantizes_then_divides_truncating():
    x = q8([[[[1, 2], [3, 4]]]])
    e = qnn.avg_pool2d(
        var("x", x), f32(1), i32(0), f32(1), i32(0), (2, 2), (1, 1), (0, 0), (1, 1), layout="NCHW"
    )
    assert run(e, x).tolist() == [[[[2]]]]  # 10 / 4 = 2.5 -> 2
    e = qnn.avg_pool2d(
        var("x", x), f32(1), i32(0), f32(0.5), i32(0), (2, 2), (1, 1), (0, 0), (1, 1), layout="NCHW"
    )
    assert run(e, x).tolist() == [[[[5]]]]  # 2, 4, 6, 8 -> 20 / 4


# --- softmax, leaky_relu, unary -------------------------------------------------------------


def test_softmax_integer_algorithm():
    x = q8([[0, 0], [0, -8]])
    # row 0 at scale 1: two equal exps, 2**30 // 2 >> 23 = 64 (0.5 at scale 1/128)
    e = qnn.softmax(var("x", x), f32(1), i32(0), f32(1 / 128), i32(0))
    assert run(e, x)[0].tolist() == [64, 64]
    # row 1 at scale 1/8: x0 = 8, x_p = 0, -11, q = 0, 1, exps 16, 6, sum 22,
    # 2**30 // 22 = 48806446, * (16, 6) >> 23 = 93, 34 (0.7311, 0.2689 of 128)
    e = qnn.softmax(var("x", x), f32(0.125), i32(0), f32(1 / 128), i32(0))
    assert run(e, x)[1].tolist() == [93, 34]


def test_softmax_rejects_a_scale_above_one():
    x = q8([1])
    with pytest.raises(EvalError, match="input scale must be at most 1"):
        run(qnn.softmax(var("x", x), f32(2), i32(0), f32(1), i32(0)), x)


def test_leaky_relu_in_fixed_point():
    x = q8([-10, 10, -128])
    e = qnn.leaky_relu(var("x", x), 0.25, f32(1), i32(0), f32(1), i32(0))
    assert run(e, x).tolist() == [-2, 10, -32]  # -2.5 rounds up to -2
    # with zero points 2: alpha * q = -2.5 -> -2, (1 - alpha) * 2 = 1.5 -> 2: sum 0
    x = q8([-10, 5])
    e = qnn.leaky_relu(var("x", x), 0.25, f32(1), i32(2), f32(1), i32(2))
    assert run(e, x).tolist() == [0, 5]


@pytest.mark.parametrize(
    "op, x, dtype, s, z, os, oz, expected",
    [
        # dequantized 0, 1.0 -> exp 1, 2.718 -> / 0.05 -> 20, 54.4
        ("exp", [0, 10], "int8", 0.1, 0, 0.05, 0, [20, 54]),
        ("sqrt", [4, 9], "uint8", 1, 0, 0.5, 0, [4, 6]),
        # -2.5 -> 2.5 -> tie rounds away from zero -> 3
        ("abs", [-5, 4], "int8", 0.5, 0, 1, 0, [3, 2]),
        ("hardswish", [-4, -1, 0, 1, 4], "int8", 1, 0, 0.5, 0, [0, -1, 0, 1, 8]),
        # log(0) = -inf -> -128; log(e^2) at scale 1... log(1) = 0 -> zp
        ("log", [0, 1], "int8", 1, 0, 1, 5, [-128, 5]),
        # sqrt of a negative is NaN, which clips to the top (TVM's clip)
        ("sqrt", [-1], "int8", 1, 0, 1, 0, [127]),
        ("rsqrt", [4], "uint8", 1, 0, 0.25, 0, [2]),
        ("sigmoid", [0, 100], "int8", 1, 0, 1 / 128, 0, [64, 127]),
        ("tanh", [10, -10], "int8", 0.1, 0, 1 / 64, 0, [49, -49]),  # tanh(1) * 64 = 48.7
        ("erf", [0, 20], "int8", 0.1, 0, 0.01, 0, [0, 100]),  # erf(2) = 0.99532
    ],
)
def test_unary_ops_dequantize_compute_quantize(op, x, dtype, s, z, os, oz, expected):
    data = np.array(x, dtype)
    got = run(getattr(qnn, op)(var("x", data), f32(s), i32(z), f32(os), i32(oz)), data)
    assert got.dtype == np.dtype(dtype) and got.tolist() == expected


def test_conv2d_layouts_and_depthwise_per_channel_zero_points():
    rng = np.random.default_rng(0)
    x = rng.integers(-128, 128, size=(1, 2, 5, 5)).astype("int8")
    w = rng.integers(-128, 128, size=(2, 1, 3, 3)).astype("int8")  # depthwise: groups = 2
    wz = relay.const(np.array([3, -2], "int32"))
    ws = relay.const(np.array([1, 1], "float32"))

    def conv(xv, wv, **kw):
        e = qnn.conv2d(
            var("x", xv), var("w", wv), i32(5), wz, f32(1), ws,
            kernel_size=(3, 3), channels=2, groups=2, padding=(1, 1), **kw,
        )  # fmt: skip
        return run(e, xv, wv)

    nchw = conv(x, w)
    # independent reference: per-channel correlation of the shifted tensors, zero padding
    xs = np.pad(x.astype(np.int64) - 5, ((0, 0), (0, 0), (1, 1), (1, 1)))
    ref = np.zeros((1, 2, 5, 5), np.int64)
    for c, zp in enumerate((3, -2)):
        k = w[c, 0].astype(np.int64) - zp
        for i in range(5):
            for j in range(5):
                ref[0, c, i, j] = (xs[0, c, i : i + 3, j : j + 3] * k).sum()
    assert nchw.tolist() == ref.tolist()
    nhwc = conv(
        x.transpose(0, 2, 3, 1).copy(),
        w.transpose(2, 3, 1, 0).copy(),
        data_layout="NHWC",
        kernel_layout="HWIO",
    )
    assert nhwc.transpose(0, 3, 1, 2).tolist() == ref.tolist()
