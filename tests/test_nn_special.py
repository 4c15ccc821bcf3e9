"""relay_nb.op.nn_special: correlation and deformable_conv2d -- relations, values against
naive loops written from the definitions, text round trip."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import relay_nb as relay
from relay_nb.errors import RelayTypeError
from relay_nb.ir.ty import Any, IncompleteType

try:
    from ._reporter import T, infer, solve
except ImportError:
    from _reporter import T, infer, solve


try:
    from .ops_testing import no_warnings, run_impl as run  # noqa: F401  (no_warnings: autouse)
except ImportError:
    from ops_testing import no_warnings, run_impl as run  # noqa: F401


RNG = np.random.default_rng(11)

CORR = {"kernel_size": 3, "max_displacement": 2, "stride1": 1, "stride2": 1, "padding": [2, 2]}


def test_correlation_shapes():
    # padded 12, border 3 -> 6 rows; side 5 -> 25 channels
    assert infer("nn.correlation", T((1, 4, 8, 8)), T((1, 4, 8, 8)), **CORR) == T((1, 25, 6, 6))
    attrs = dict(CORR, stride1=2, stride2=2)  # side 3; ceil(6 / 2) = 3
    assert infer("nn.correlation", T((2, 4, 8, 8)), T((2, 4, 8, 8)), **attrs) == T((2, 9, 3, 3))
    assert infer("nn.correlation", T((Any, 4, Any, 8)), T((Any, 4, Any, 8)), **CORR) == T(
        (Any, 25, Any, 6)
    )


@pytest.mark.parametrize(
    "attrs, b, message",
    [
        ({}, (1, 4, 8, 9), "same shape|one shape"),
        ({"kernel_size": 2}, (1, 4, 8, 8), "positive odd number"),
        ({"layout": "NHWC"}, (1, 4, 8, 8), "layout must be NCHW"),
        ({"max_displacement": 6, "padding": [0, 0]}, (1, 4, 8, 8), "smaller than the border"),
    ],
)
def test_correlation_errors(attrs, b, message):
    with pytest.raises(RelayTypeError, match=message):
        infer("nn.correlation", T((1, 4, 8, 8)), T(b), **dict(CORR, **attrs))


def correlation_ref(a, b, k, md, s1, s2, pad, multiply):
    n_, c_, h, w = a.shape
    pa = np.pad(a, [(0, 0), (0, 0), (pad, pad), (pad, pad)])
    pb = np.pad(b, [(0, 0), (0, 0), (pad, pad), (pad, pad)])
    r = md // s2
    side = 2 * r + 1
    border = md + (k - 1) // 2
    oh = math.ceil((h + 2 * pad - 2 * border) / s1)
    ow = math.ceil((w + 2 * pad - 2 * border) / s1)
    out = np.zeros((n_, side * side, oh, ow))
    for n, q, i, j in itertools.product(range(n_), range(side * side), range(oh), range(ow)):
        y1, x1 = i * s1 + md, j * s1 + md
        y2, x2 = y1 + (q // side - r) * s2, x1 + (q % side - r) * s2
        acc = 0.0
        for c, dy, dx in itertools.product(range(c_), range(k), range(k)):
            u, v = pa[n, c, y1 + dy, x1 + dx], pb[n, c, y2 + dy, x2 + dx]
            acc += u * v if multiply else abs(u - v)
        out[n, q, i, j] = acc / (k * k * c_)
    return out


@pytest.mark.parametrize(
    "k, md, s1, s2, pad, multiply",
    [(3, 2, 1, 1, 2, True), (1, 2, 2, 2, 0, False), (3, 4, 2, 2, 3, True)],
)
def test_correlation_against_loops(k, md, s1, s2, pad, multiply):
    a, b = RNG.standard_normal((2, 3, 7, 6)), RNG.standard_normal((2, 3, 7, 6))
    got = run("nn.correlation", a, b, kernel_size=k, max_displacement=md, stride1=s1,
              stride2=s2, padding=[pad, pad], is_multiply=multiply)  # fmt: skip
    np.testing.assert_allclose(got, correlation_ref(a, b, k, md, s1, s2, pad, multiply), rtol=1e-10)


# --- deformable_conv2d ------------------------------------------------------------------------


def test_deformable_conv2d_shapes_and_inferred_offset():
    solved, types = solve(
        "nn.deformable_conv2d",
        T((1, 4, 8, 8)),
        IncompleteType(),
        T((6, 2, 3, 3)),
        padding=[1, 1],
        groups=2,
        deformable_groups=2,
    )
    assert solved and types[1] == T((1, 36, 8, 8)) and types[-1] == T((1, 6, 8, 8))
    solved, types = solve(
        "nn.deformable_conv2d",
        T((1, 8, 8, 4)),
        IncompleteType(),
        IncompleteType(),
        channels=5,
        kernel_size=[3, 3],
        strides=[2, 2],
        data_layout="NHWC",
        kernel_layout="HWIO",
    )
    assert types[2] == T((3, 3, 4, 5)) and types[1] == T((1, 3, 3, 18))
    assert types[-1] == T((1, 3, 3, 5))


@pytest.mark.parametrize(
    "w, attrs, message",
    [
        (T((6, 3, 3, 3)), {}, "input channels 4 do not match weight's 3"),
        (T((6, 4, 3, 3)), {"kernel_size": [5, 5]}, "kernel_size \\[5, 5\\] does not match"),
        (T((6, 4, 3, 3)), {"channels": 4}, "channels=4 does not match"),
        (T((6, 4, 3, 3)), {"deformable_groups": 3}, "do not divide into"),
        (T((6, 4, 9, 9)), {}, "the kernel spans 9 but the padded input has 8"),
    ],
)
def test_deformable_conv2d_errors(w, attrs, message):
    with pytest.raises(RelayTypeError, match=message):
        infer("nn.deformable_conv2d", T((1, 4, 8, 8)), T((1, 18, 6, 6)), w, **attrs)


def _sample(img, y, x):
    """Bilinear sample of a 2-d image, zero outside [0, H) x [0, W) (written out per corner)."""
    h, w = img.shape
    if y < 0 or x < 0 or y >= h or x >= w:
        return 0.0
    y0, x0 = math.floor(y), math.floor(x)
    y1, x1 = min(y0 + 1, h - 1), min(x0 + 1, w - 1)
    fy, fx = y - y0, x - x0
    return (
        img[y0, x0] * (1 - fy) * (1 - fx)
        + img[y0, x1] * (1 - fy) * fx
        + img[y1, x0] * fy * (1 - fx)
        + img[y1, x1] * fy * fx
    )


def deformable_ref(x, off, w, s, pad, d, groups, dg):
    n_, c_, h, wd = x.shape
    o_, cg, kh, kw = w.shape
    oh, ow = off.shape[2:]
    out = np.zeros((n_, o_, oh, ow))
    for n, o, y, xx in itertools.product(range(n_), range(o_), range(oh), range(ow)):
        g = o // (o_ // groups)
        for c, i, j in itertools.product(range(cg), range(kh), range(kw)):
            ch = g * cg + c
            k = (ch // (c_ // dg)) * kh * kw * 2 + (i * kw + j) * 2
            py = y * s - pad + i * d + off[n, k, y, xx]
            px = xx * s - pad + j * d + off[n, k + 1, y, xx]
            out[n, o, y, xx] += _sample(x[n, ch], py, px) * w[o, c, i, j]
    return out


@pytest.mark.parametrize(
    "s, pad, d, groups, dg", [(1, 1, 1, 1, 1), (2, 1, 1, 2, 2), (1, 2, 2, 1, 2)]
)
def test_deformable_conv2d_against_loops(s, pad, d, groups, dg):
    x = RNG.standard_normal((1, 4, 6, 5))
    w = RNG.standard_normal((4, 4 // groups, 3, 3))
    oh = (6 + 2 * pad - (2 * d + 1)) // s + 1
    ow = (5 + 2 * pad - (2 * d + 1)) // s + 1
    off = RNG.uniform(-2.5, 2.5, (1, 2 * 9 * dg, oh, ow))
    got = run("nn.deformable_conv2d", x, off, w, strides=[s, s], padding=[pad, pad],
              dilation=[d, d], groups=groups, deformable_groups=dg)  # fmt: skip
    np.testing.assert_allclose(got, deformable_ref(x, off, w, s, pad, d, groups, dg), rtol=1e-10)


def test_deformable_conv2d_with_zero_offsets_is_conv2d():
    x = RNG.standard_normal((2, 3, 5, 5))
    w = RNG.standard_normal((4, 3, 3, 3))
    off = np.zeros((2, 18, 5, 5))
    got = run("nn.deformable_conv2d", x, off, w, padding=[1, 1])
    np.testing.assert_allclose(got, run("nn.conv2d", x, w, padding=[1, 1]), rtol=1e-10)


def test_printed_calls_parse_back():
    x = relay.var("x", shape=(1, 4, 8, 8))
    y = relay.var("y", shape=(1, 4, 8, 8))
    cases = [
        relay.nn.correlation(x, y, 3, 2, 1, 1, (2, 2), False, "NCHW"),
        relay.nn.deformable_conv2d(
            x, relay.var("o", shape=(1, 18, 8, 8)), relay.var("w", shape=(5, 4, 3, 3)),
            padding=(1, 1), channels=5, kernel_size=(3, 3),
        ),
    ]
    for expr in cases:
        m1 = relay.transform.InferType()(
            relay.IRModule.from_expr(relay.Function(relay.analysis.free_vars(expr), expr))
        )
        text = m1.astext()
        m2 = relay.transform.InferType()(relay.parse(text))
        assert relay.structural_equal(m1["main"], m2["main"], map_free_vars=True)
        assert m2.astext() == text
