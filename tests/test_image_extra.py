"""relay_nb.op.image_extra: resize1d / resize3d, crop_and_resize, dilation2d, affine_grid,
grid_sample -- relations (accept / reject), values against per-pixel loops written from the
definitions, text round trip."""

from __future__ import annotations

import itertools
import math

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


RNG = np.random.default_rng(5)

SHAPES = [
    ("image.resize1d", [T((1, 3, 8))], {"size": [5]}, T((1, 3, 5))),
    ("image.resize1d", [T((1, 8, 3))], {"size": [5], "layout": "NWC", "out_dtype": "float16"}, T((1, 5, 3), "float16")),
    ("image.resize3d", [T((1, 3, 2, 4, 4))], {"size": [4, 8, 8]}, T((1, 3, 4, 8, 8))),
    ("image.resize3d", [T((Any, 3, 2, 4, 4))], {"size": [4, 8, 8]}, T((Any, 3, 4, 8, 8))),
    ("image.crop_and_resize", [T((2, 3, 8, 8)), T((5, 4)), T((5,), "int32")], {"crop_size": [4, 3]}, T((5, 3, 4, 3))),
    ("image.crop_and_resize", [T((2, 8, 8, 3)), T((Any, 4)), T((Any,), "int32")], {"crop_size": [4, 3], "layout": "NHWC"}, T((Any, 4, 3, 3))),
    ("image.dilation2d", [T((1, 3, 8, 8)), T((3, 3, 3))], {}, T((1, 3, 6, 6))),
    ("image.dilation2d", [T((1, 8, 8, 3)), T((3, 3, 3))], {"padding": [1, 1], "strides": [2, 2], "data_layout": "NHWC", "kernel_layout": "HWI"}, T((1, 4, 4, 3))),
    ("image.affine_grid", [T((4, 2, 3))], {"target_shape": [5, 6]}, T((4, 2, 5, 6))),
    ("image.grid_sample", [T((2, 3, 8, 8)), T((2, 2, 4, 5))], {}, T((2, 3, 4, 5))),
    ("image.grid_sample", [T((2, 3, 4, 8, 8)), T((2, 3, 2, 4, 5))], {"layout": "NCDHW"}, T((2, 3, 2, 4, 5))),
]


@pytest.mark.parametrize("op, args, attrs, expected", SHAPES, ids=[c[0] for c in SHAPES])
def test_shapes(op, args, attrs, expected):
    assert infer(op, *args, **attrs) == expected


ERRORS = [
    ("image.resize1d", [T((1, 3, 8, 1))], {"size": [5]}, "data must have rank 3"),
    ("image.resize1d", [T((1, 3, 8))], {}, "size must be given"),
    ("image.resize3d", [T((1, 3, 2, 4, 4))], {"size": [4, 8]}, "size must have 1 or 3 values"),
    ("image.resize3d", [T((1, 3, 2, 4, 4))], {"size": [4], "method": "bilinear"}, "method must be one of"),
    ("image.resize1d", [T((1, 3, 8))], {"size": [4], "roi": [0.0, 0.5, 1.0]}, "roi must have 2 values"),
    ("image.crop_and_resize", [T((2, 3, 8, 8)), T((5, 3)), T((5,), "int32")], {"crop_size": [4, 4]}, "boxes must have shape \\(num_boxes, 4\\)"),
    ("image.crop_and_resize", [T((2, 3, 8, 8)), T((5, 4)), T((4,), "int32")], {"crop_size": [4, 4]}, "box_indices must have shape"),
    ("image.crop_and_resize", [T((2, 3, 8, 8)), T((5, 4)), T((5,))], {"crop_size": [4, 4]}, "box_indices must be integers"),
    ("image.crop_and_resize", [T((2, 3, 8, 8)), T((5, 4)), T((5,), "int32")], {"crop_size": [4, 4], "method": "cubic"}, "bilinear or nearest_neighbor"),
    ("image.dilation2d", [T((1, 3, 8, 8)), T((4, 3, 3))], {}, "data has 3 channels but the weight 4"),
    ("image.dilation2d", [T((1, 3, 2, 2)), T((3, 3, 3))], {}, "the kernel spans 3"),
    ("image.dilation2d", [T((1, 3, 8, 8)), T((3, 3, 3))], {"kernel_layout": "OIHW"}, "kernel_layout 'OIHW' is not supported"),
    ("image.affine_grid", [T((4, 3, 3))], {"target_shape": [5, 6]}, "batch of 2 x 3 matrices"),
    ("image.affine_grid", [T((4, 2, 3))], {"target_shape": [5]}, "target_shape must be \\(height, width\\)"),
    ("image.grid_sample", [T((2, 3, 8, 8)), T((2, 3, 4, 5))], {}, "grid must have shape \\(N, 2, H, W\\)"),
    ("image.grid_sample", [T((2, 3, 8, 8)), T((1, 2, 4, 5))], {}, "grid has batch 1 but data 2"),
    ("image.grid_sample", [T((2, 3, 8, 8)), T((2, 2, 4, 5))], {"padding_mode": "edge"}, "zeros, border or reflection"),
    ("image.grid_sample", [T((2, 3, 4, 8, 8)), T((2, 3, 2, 4, 5))], {"layout": "NCDHW", "method": "bicubic"}, "method must be one of bilinear, nearest"),
]


@pytest.mark.parametrize("op, args, attrs, message", ERRORS, ids=[c[0] for c in ERRORS])
def test_errors(op, args, attrs, message):
    with pytest.raises(RelayTypeError, match=message):
        infer(op, *args, **attrs)


# --- resize -----------------------------------------------------------------------------------


def _linear_1d(row, pos):
    """Linear interpolation of a 1-d sequence at ``pos`` with clamped neighbours."""
    i = math.floor(pos)
    f = pos - i
    n = len(row)
    return row[min(max(i, 0), n - 1)] * (1 - f) + row[min(max(i + 1, 0), n - 1)] * f


def test_resize1d_linear_half_pixel_against_loops():
    x = RNG.standard_normal((2, 3, 5))
    got = run("image.resize1d", x, size=[7])
    for n, c, i in itertools.product(range(2), range(3), range(7)):
        pos = (i + 0.5) * 5 / 7 - 0.5
        assert got[n, c, i] == pytest.approx(_linear_1d(x[n, c], pos), rel=1e-6)


def test_resize1d_nearest_asymmetric_nwc():
    x = np.array([[[1.0], [2.0], [3.0]]])  # NWC, W = 3
    got = run("image.resize1d", x, size=[6], layout="NWC", method="nearest_neighbor",
              coordinate_transformation_mode="asymmetric", rounding_method="floor")  # fmt: skip
    assert got[0, :, 0].tolist() == [1, 1, 2, 2, 3, 3]


def test_resize3d_trilinear_align_corners_against_loops():
    x = RNG.standard_normal((1, 2, 2, 3, 3))
    size = (3, 4, 5)
    got = run("image.resize3d", x, size=list(size), coordinate_transformation_mode="align_corners")
    for c, d, h, w in itertools.product(range(2), *map(range, size)):
        pos = [o * (n - 1) / (s - 1) for o, n, s in zip((d, h, w), x.shape[2:], size)]
        planes = [
            [_linear_1d(x[0, c, dd, hh], pos[2]) for hh in range(3)] for dd in range(2)
        ]
        rows = [_linear_1d(p, pos[1]) for p in planes]
        assert got[0, c, d, h, w] == pytest.approx(_linear_1d(rows, pos[0]), rel=1e-5)


# --- crop_and_resize --------------------------------------------------------------------------


def _crop_ref(x, boxes, idx, ch, cw, method, extrap):
    n_, c_, h, w = x.shape
    out = np.zeros((len(boxes), c_, ch, cw))
    for b, (y1, x1, y2, x2) in enumerate(boxes):
        for i, j in itertools.product(range(ch), range(cw)):
            yy = y1 * (h - 1) + i * (y2 - y1) * (h - 1) / (ch - 1)
            xx = x1 * (w - 1) + j * (x2 - x1) * (w - 1) / (cw - 1)
            for c in range(c_):
                if not (0 <= yy <= h - 1 and 0 <= xx <= w - 1):
                    out[b, c, i, j] = extrap
                elif method == "nearest_neighbor":
                    out[b, c, i, j] = x[idx[b], c, math.floor(yy + 0.5), math.floor(xx + 0.5)]
                else:
                    rows = [_linear_1d(x[idx[b], c, r], xx) for r in range(h)]
                    out[b, c, i, j] = _linear_1d(rows, yy)
    return out


@pytest.mark.parametrize("method", ["bilinear", "nearest_neighbor"])
def test_crop_and_resize_against_loops(method):
    x = RNG.standard_normal((2, 2, 5, 6))
    boxes = np.array([[0.0, 0.0, 1.0, 1.0], [0.1, 0.2, 0.7, 0.9], [-0.2, 0.5, 0.6, 1.3]])
    idx = np.array([1, 0, 1], "int32")
    got = run("image.crop_and_resize", x.astype("float32"), boxes.astype("float32"), idx,
              crop_size=[4, 3], method=method, extrapolation_value=-9.0)  # fmt: skip
    want = _crop_ref(x.astype("float32").astype(np.float64), boxes, idx, 4, 3, method, -9.0)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_crop_and_resize_rejects_a_bad_box_index():
    with pytest.raises(relay.RelayError, match="box index 2 is not an image index"):
        run("image.crop_and_resize", np.zeros((2, 1, 3, 3)), np.zeros((1, 4)),
            np.array([2], "int32"), crop_size=[2, 2])  # fmt: skip


# --- dilation2d -------------------------------------------------------------------------------


def test_dilation2d_against_loops():
    x = RNG.standard_normal((1, 2, 6, 5))
    k = RNG.standard_normal((2, 2, 3))
    got = run("image.dilation2d", x, k, strides=[2, 1], padding=[1, 1], dilations=[1, 2])
    xp = np.pad(x, [(0, 0), (0, 0), (1, 1), (1, 1)])
    oh, ow = (8 - 2) // 2 + 1, (7 - 5) // 1 + 1
    assert got.shape == (1, 2, oh, ow)
    for c, y, xx in itertools.product(range(2), range(oh), range(ow)):
        best = max(xp[0, c, y * 2 + i, xx + j * 2] + k[c, i, j] for i in range(2) for j in range(3))
        assert got[0, c, y, xx] == pytest.approx(best)


# --- affine_grid and grid_sample --------------------------------------------------------------


def test_affine_grid_identity_and_shift():
    theta = np.array([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]], [[0.0, 2.0, 0.5], [1.0, 0.0, -1.0]]])
    got = run("image.affine_grid", theta, target_shape=[3, 4])
    ys = [-1 + i * (2 - 1e-7) / 2 for i in range(3)]
    xs = [-1 + j * (2 - 1e-7) / 3 for j in range(4)]
    for i, j in itertools.product(range(3), range(4)):
        assert got[0, :, i, j] == pytest.approx([xs[j], ys[i]])
        assert got[1, :, i, j] == pytest.approx([2 * ys[i] + 0.5, xs[j] - 1])


def _reflect_ref(v, lo, hi):
    """Reflect v into [lo, hi] by folding it back and forth (a loop, not a formula)."""
    while v < lo or v > hi:
        v = 2 * lo - v if v < lo else 2 * hi - v
    return v


def _grid_ref(x, grid, method, mode, align):
    n_, c_, h, w = x.shape
    out = np.zeros((n_, c_) + grid.shape[2:])

    def pixel(n, c, yy, xx):
        return x[n, c, yy, xx] if 0 <= yy < h and 0 <= xx < w else 0.0

    for n, i, j in itertools.product(range(n_), *map(range, grid.shape[2:])):
        gx, gy = grid[n, 0, i, j], grid[n, 1, i, j]
        if align:
            px, py = (gx + 1) * (w - 1) / 2, (gy + 1) * (h - 1) / 2
            lo_x, hi_x, lo_y, hi_y = 0, w - 1, 0, h - 1
        else:
            px, py = (gx + 1) * w / 2 - 0.5, (gy + 1) * h / 2 - 0.5
            lo_x, hi_x, lo_y, hi_y = -0.5, w - 0.5, -0.5, h - 0.5
        if mode == "reflection":
            px, py = _reflect_ref(px, lo_x, hi_x), _reflect_ref(py, lo_y, hi_y)
        if mode in ("reflection", "border"):
            px, py = min(max(px, 0), w - 1), min(max(py, 0), h - 1)
        for c in range(c_):
            if method == "nearest":
                out[n, c, i, j] = pixel(n, c, round(py), round(px))  # Python rounds half to even
            else:
                y0, x0 = math.floor(py), math.floor(px)
                fy, fx = py - y0, px - x0
                out[n, c, i, j] = (
                    pixel(n, c, y0, x0) * (1 - fy) * (1 - fx)
                    + pixel(n, c, y0, x0 + 1) * (1 - fy) * fx
                    + pixel(n, c, y0 + 1, x0) * fy * (1 - fx)
                    + pixel(n, c, y0 + 1, x0 + 1) * fy * fx
                )
    return out


@pytest.mark.parametrize(
    "method, mode, align",
    list(itertools.product(["bilinear", "nearest"], ["zeros", "border", "reflection"], [True, False])),
)
def test_grid_sample_2d_against_loops(method, mode, align):
    x = RNG.standard_normal((2, 2, 4, 5))
    grid = RNG.uniform(-1.6, 1.6, (2, 2, 3, 4))
    got = run("image.grid_sample", x, grid, method=method, padding_mode=mode, align_corners=align)
    np.testing.assert_allclose(got, _grid_ref(x, grid, method, mode, align), rtol=1e-10, atol=1e-12)


def _keys(d, a=-0.75):
    """Keys' cubic convolution kernel at distance d."""
    d = abs(d)
    if d <= 1:
        return (a + 2) * d**3 - (a + 3) * d**2 + 1
    if d < 2:
        return a * d**3 - 5 * a * d**2 + 8 * a * d - 4 * a
    return 0.0


@pytest.mark.parametrize("mode", ["zeros", "border"])
def test_grid_sample_bicubic_against_loops(mode):
    x = RNG.standard_normal((1, 2, 5, 6))
    grid = RNG.uniform(-1.3, 1.3, (1, 2, 3, 3))
    got = run("image.grid_sample", x, grid, method="bicubic", padding_mode=mode)
    h, w = 5, 6
    for c, i, j in itertools.product(range(2), range(3), range(3)):
        px, py = (grid[0, 0, i, j] + 1) * (w - 1) / 2, (grid[0, 1, i, j] + 1) * (h - 1) / 2
        total = 0.0
        for ty in range(math.floor(py) - 1, math.floor(py) + 3):
            for tx in range(math.floor(px) - 1, math.floor(px) + 3):
                ry, rx = ty, tx
                if mode == "border":
                    ry, rx = min(max(ty, 0), h - 1), min(max(tx, 0), w - 1)
                value = x[0, c, ry, rx] if 0 <= ry < h and 0 <= rx < w else 0.0
                total += value * _keys(py - ty) * _keys(px - tx)
        assert got[0, c, i, j] == pytest.approx(total, rel=1e-9, abs=1e-12)


def test_grid_sample_3d_trilinear_of_a_linear_function():
    d, h, w = 3, 4, 5
    zz, yy, xx = np.meshgrid(np.arange(d), np.arange(h), np.arange(w), indexing="ij")
    x = (1.0 * xx + 10.0 * yy + 100.0 * zz)[None, None]
    pts = RNG.uniform(-1, 1, (1, 3, 2, 2, 2))
    got = run("image.grid_sample", x, pts, layout="NCDHW")
    want = (pts[0, 0] + 1) * (w - 1) / 2 + 10 * (pts[0, 1] + 1) * (h - 1) / 2
    want = want + 100 * (pts[0, 2] + 1) * (d - 1) / 2
    np.testing.assert_allclose(got[0, 0], want, rtol=1e-10)


def test_affine_grid_then_grid_sample_identity_program():
    """A spatial transformer with the identity matrix gives back its input (interpreter)."""
    data = relay.var("data", shape=(1, 2, 4, 4))
    theta = relay.var("theta", shape=(1, 2, 3))
    y = relay.image.grid_sample(data, relay.image.affine_grid(theta, (4, 4)))
    mod = relay.transform.InferType()(relay.IRModule.from_expr(relay.Function([data, theta], y)))
    x = RNG.standard_normal((1, 2, 4, 4)).astype("float32")
    ident = np.array([[[1, 0, 0], [0, 1, 0]]], "float32")
    got = relay.create_executor("interpreter", mod=mod).evaluate()(x, ident)
    np.testing.assert_allclose(got, x, rtol=1e-5, atol=1e-5)


def test_printed_calls_parse_back():
    x = relay.var("x", shape=(1, 3, 8, 8))
    cases = [
        relay.image.resize1d(relay.var("a", shape=(1, 3, 8)), [4], method="cubic"),
        relay.image.resize3d(relay.var("v", shape=(1, 3, 2, 4, 4)), (4, 8, 8),
                             coordinate_transformation_mode="align_corners"),  # fmt: skip
        relay.image.crop_and_resize(x, relay.var("b", shape=(2, 4)),
                                    relay.var("i", shape=(2,), dtype="int32"), (3, 3),
                                    extrapolation_value=1.5),  # fmt: skip
        relay.image.dilation2d(x, relay.var("k", shape=(3, 2, 2)), padding=(1, 1)),
        relay.image.affine_grid(relay.var("t", shape=(1, 2, 3)), (5, 5)),
        relay.image.grid_sample(x, relay.var("g", shape=(1, 2, 4, 4)), padding_mode="border",
                                align_corners=False),  # fmt: skip
    ]
    for expr in cases:
        m1 = relay.transform.InferType()(
            relay.IRModule.from_expr(relay.Function(relay.analysis.free_vars(expr), expr))
        )
        text = m1.astext()
        m2 = relay.transform.InferType()(relay.parse(text))
        assert relay.structural_equal(m1["main"], m2["main"], map_free_vars=True)
        assert m2.astext() == text
