"""numpy implementations of :mod:`relay_nb.op.image_extra` (TVM's ``topi.image`` semantics).

* ``image.resize1d`` / ``image.resize3d``: the separable resize of ``image.resize2d`` on one
  or three axes; ``roi`` holds the starts then the ends in axis order (TVM's documented
  format; its 3-d compute reads them in reverse, which is not reproduced).
* ``image.crop_and_resize``: box ``[y1, x1, y2, x2]`` maps crop row ``y`` to image row
  ``y1 * (H - 1) + y * (y2 - y1) * (H - 1) / (crop_h - 1)`` (columns alike); bilinear
  interpolation reads clamped neighbours, nearest neighbour rounds halves away from zero;
  rows or columns outside ``[0, H - 1]`` get ``extrapolation_value``.  A crop size of 1 takes
  the box centre (TensorFlow's rule; TVM divides by zero there).
* ``image.dilation2d``: ``max over (i, j) of pad0(data)[n, c, y*s + i*d, x*s + j*d] +
  weight[c, i, j]``.
* ``image.affine_grid``: points ``-1 + k * (2 - 1e-7) / (n - 1)`` along H and W (TVM's
  slightly shortened step), transformed by each 2 x 3 matrix.
* ``image.grid_sample``: normalized coordinates become pixel ones (``align_corners``:
  ``(v + 1) * (size - 1) / 2``, else ``(v + 1) * size / 2 - 0.5``), then ``border`` clamps
  and ``reflection`` reflects them; pixels outside the image read as 0.  ``nearest`` rounds
  halves to even; ``bicubic`` (2-d) uses PyTorch's A = -0.75 and applies the padding mode to
  its integer taps.
"""

from __future__ import annotations

import numpy as np

from ...errors import EvalError
from ._util import convert, impl, ints_n, layout_perm, np_dtype, out_dtype, pad_pairs, to_layout
from .image import resize_nd
from .nn import _windows


def _resize(spatial):
    def run(args, attrs, out):
        if attrs["size"] is None:
            raise EvalError("size must be given")
        return resize_nd(
            args[0],
            spatial,
            attrs["size"],
            attrs["layout"],
            attrs["method"],
            attrs["coordinate_transformation_mode"],
            attrs["rounding_method"],
            attrs["cubic_alpha"],
            attrs["cubic_exclude"],
            attrs["extrapolation_value"],
            attrs["roi"],
            out_dtype(out, attrs["out_dtype"], args[0]),
        )

    return run


impl("image.resize1d")(_resize("W"))
impl("image.resize3d")(_resize("DHW"))


def _float_type(x: np.ndarray) -> np.dtype:
    return np.dtype(np.float64) if x.dtype == np.float64 else np.dtype(np.float32)


# --- crop_and_resize --------------------------------------------------------------------------


def _box_coords(start, end, n_in, n_out, ft):
    """``(num_boxes, n_out)`` input coordinates of the crop positions along one axis."""
    start, end = start.astype(ft)[:, None], end.astype(ft)[:, None]
    span = ft.type(n_in - 1)
    if n_out == 1:
        return ft.type(0.5) * (start + end) * span
    steps = np.arange(n_out, dtype=ft)[None, :]
    return start * span + steps * (end - start) * span / ft.type(n_out - 1)


@impl("image.crop_and_resize")
def _crop_and_resize(args, attrs, out):
    data, boxes, indices = args
    layout = attrs["layout"]
    x = np.transpose(data, layout_perm(layout, "NCHW"))
    n, _, h, w = x.shape
    bad = (indices < 0) | (indices >= n)
    if bad.any():
        raise EvalError(f"box index {int(indices[bad][0])} is not an image index in [0, {n})")
    ch, cw = ints_n(attrs["crop_size"], 2, "crop_size")
    ft = _float_type(x)
    ys = _box_coords(boxes[:, 0], boxes[:, 2], h, ch, ft)[:, :, None]  # (B, ch, 1)
    xs = _box_coords(boxes[:, 1], boxes[:, 3], w, cw, ft)[:, None, :]  # (B, 1, cw)
    b = indices.astype(np.int64)[:, None, None]
    xf = x.astype(ft)

    def read(yy, xx):  # clamped reads: (B, ch, cw, C) -> (B, C, ch, cw)
        return np.moveaxis(xf[b, :, np.clip(yy, 0, h - 1), np.clip(xx, 0, w - 1)], -1, 1)

    if attrs["method"] == "nearest_neighbor":
        # TVM's round: halves away from zero
        value = read(
            (np.sign(ys) * np.floor(np.abs(ys) + 0.5)).astype(np.int64),
            (np.sign(xs) * np.floor(np.abs(xs) + 0.5)).astype(np.int64),
        )
    elif attrs["method"] == "bilinear":
        y0, x0 = np.floor(ys).astype(np.int64), np.floor(xs).astype(np.int64)
        fy, fx = (ys - y0)[:, None], (xs - x0)[:, None]
        top = read(y0, x0) * (1 - fx) + read(y0, x0 + 1) * fx
        bottom = read(y0 + 1, x0) * (1 - fx) + read(y0 + 1, x0 + 1) * fx
        value = top * (1 - fy) + bottom * fy
    else:
        raise EvalError(f"method must be bilinear or nearest_neighbor, got {attrs['method']!r}")
    outside = ((ys < 0) | (ys > h - 1)) | ((xs < 0) | (xs > w - 1))
    value = np.where(outside[:, None], ft.type(attrs["extrapolation_value"]), value)
    dt = out_dtype(out, attrs["out_dtype"], data)
    return to_layout(convert(value, dt), "NCHW", layout, "layout")


# --- dilation2d -------------------------------------------------------------------------------


@impl("image.dilation2d")
def _dilation2d(args, attrs, out):
    data, weight = args
    dl = attrs["data_layout"]
    dt = out_dtype(out, attrs["out_dtype"], np.result_type(data, weight).name)
    x = convert(np.transpose(data, layout_perm(dl, "NCHW")), dt)
    k = convert(np.transpose(weight, layout_perm(attrs["kernel_layout"], "IHW")), dt)
    strides = ints_n(attrs["strides"], 2, "strides")
    dilations = ints_n(attrs["dilations"], 2, "dilations")
    padded = np.pad(x, [(0, 0), (0, 0)] + pad_pairs(attrs["padding"], 2))
    span = [(s - 1) * d + 1 for s, d in zip(k.shape[1:], dilations)]
    win = _windows(padded, span, strides, dilations)  # (N, C, OH, OW, kh, kw)
    y = np.max(win + k[None, :, None, None], axis=(-2, -1))
    return to_layout(y, "NCHW", dl)


# --- affine_grid and grid_sample ----------------------------------------------------------------


@impl("image.affine_grid")
def _affine_grid(args, attrs, out):
    theta = args[0]
    h, w = attrs["target_shape"]
    ft = theta.dtype if theta.dtype.kind == "f" else np_dtype("float32")
    ys = ft.type(-1) + np.arange(h, dtype=ft) * ft.type((2.0 - 1e-7) / (h - 1))
    xs = ft.type(-1) + np.arange(w, dtype=ft) * ft.type((2.0 - 1e-7) / (w - 1))
    t = theta.astype(ft)[:, :, :, None, None]  # (N, 2, 3, 1, 1)
    return t[:, :, 0] * xs[None, None, None, :] + t[:, :, 1] * ys[None, None, :, None] + t[:, :, 2]


def _unnormalize(v, size, align, ft):
    if align:
        return (v + 1) * ft.type(size - 1) / 2
    return ft.type(-0.5) + (v + 1) * ft.type(size) / 2


def _reflect(v, size, align, ft):
    """TVM's reflection of coordinates into ``[0, size - 1]`` (align) or ``[-0.5, size - 0.5]``."""
    span, start = (size - 1, 0.0) if align else (size, -0.5)
    if span <= 0:
        return np.zeros_like(v)
    inside = (v >= start) & (v <= span + start)
    dist = np.abs(start - v)
    times = np.trunc(dist).astype(np.int64) // span
    extra = dist - times * span
    flipped = np.where(times % 2 == 0, extra + start, span - extra + start)
    return np.where(inside, v, flipped).astype(ft)


def _pad_coord(v, size, mode, align, ft):
    if mode == "reflection":
        v = _reflect(v, size, align, ft)
    if mode in ("reflection", "border"):
        v = np.clip(v, 0, size - 1).astype(ft)
    return v


def _read_zero(x, idx):
    """``x (N, C, *S)`` at integer points ``idx[k] (N, *O)``; 0 outside: ``(N, C, *O)``."""
    sizes = x.shape[2:]
    valid = np.ones(idx[0].shape, bool)
    for i, n in zip(idx, sizes):
        valid &= (i >= 0) & (i < n)
    clipped = [np.clip(i, 0, n - 1) for i, n in zip(idx, sizes)]
    b = np.arange(x.shape[0]).reshape((-1,) + (1,) * (idx[0].ndim - 1))
    value = np.moveaxis(x[(b, slice(None), *clipped)], -1, 1)
    return np.where(valid[:, None], value, 0)


def _cubic_weights(t):
    a = -0.75

    def near(f):
        return ((a + 2) * f - (a + 3)) * f * f + 1

    def far(f):
        return ((a * f - 5 * a) * f + 8 * a) * f - 4 * a

    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


@impl("image.grid_sample")
def _grid_sample(args, attrs, out):
    data, grid = args
    nd = data.ndim - 2
    ft = _float_type(data)
    x = data.astype(ft)
    sizes = x.shape[2:]
    align, mode = attrs["align_corners"], attrs["padding_mode"]
    # grid channel k addresses spatial axis nd - 1 - k (x is W, the last axis)
    raw = [_unnormalize(grid[:, nd - 1 - a].astype(ft), sizes[a], align, ft) for a in range(nd)]
    method = attrs["method"]
    if method == "bicubic":
        if nd != 2:
            raise EvalError("bicubic grid_sample is 2-d only")
        (y, xx), (h, w) = raw, sizes
        y0, x0 = np.floor(y).astype(np.int64), np.floor(xx).astype(np.int64)
        wy, wx = _cubic_weights(y - y0), _cubic_weights(xx - x0)
        result = 0
        for i in range(4):
            row = _pad_coord((y0 - 1 + i).astype(ft), h, mode, align, ft).astype(np.int64)
            line = 0
            for j in range(4):
                col = _pad_coord((x0 - 1 + j).astype(ft), w, mode, align, ft).astype(np.int64)
                line = line + _read_zero(x, [row, col]) * wx[j][:, None]
            result = result + line * wy[i][:, None]
        return result
    coords = [_pad_coord(c, n, mode, align, ft) for c, n in zip(raw, sizes)]
    if method == "nearest":
        return _read_zero(x, [np.rint(c).astype(np.int64) for c in coords])
    if method != "bilinear":
        raise EvalError(f"method must be bilinear, nearest or bicubic, got {method!r}")
    lows = [np.floor(c).astype(np.int64) for c in coords]
    fracs = [c - lo for c, lo in zip(coords, lows)]
    result = 0
    for corner in np.ndindex(*(2,) * nd):
        weight = 1
        for f, bit in zip(fracs, corner):
            weight = weight * (f if bit else 1 - f)
        points = [lo + bit for lo, bit in zip(lows, corner)]
        result = result + _read_zero(x, points) * weight[:, None]
    return result
