"""numpy implementation of ``image.resize2d`` (TVM's ``topi.image.resize2d``).

Every output pixel is mapped to an input coordinate by ``coordinate_transformation_mode``
(``half_pixel``: ``(x + 0.5) * in / out - 0.5``; ``align_corners``:
``x * (in - 1) / (out - 1)``; ``asymmetric``: ``x * in / out``; also
``pytorch_half_pixel``, ``tf_half_pixel_for_nn`` and ``tf_crop_and_resize`` with ``roi``),
then interpolated:

* ``nearest_neighbor`` rounds the coordinate with ``rounding_method``: ``round`` (halves
  away from zero), ``floor`` / ``ceil`` (with TVM's 1e-5 nudge), ``round_prefer_floor``,
  ``round_prefer_ceil``; an empty rounding method means ``round`` for ``align_corners``
  and ``floor`` otherwise, as in TVM.
* ``linear`` blends the two neighbours along W, then along H.
* ``cubic`` uses the 4-tap cubic convolution kernel with ``cubic_alpha``;
  ``cubic_exclude`` drops taps outside the image and renormalises.

Pixels outside the image are clamped to the border (``tf_crop_and_resize`` returns
``extrapolation_value`` for coordinates outside the image).  Coordinates and weights are
computed in float32 as TVM does (float64 for float64 images).  One case TVM leaves
undefined is defined here: ``align_corners`` with an output size of 1 maps to coordinate 0
(TVM divides by ``out - 1 == 0``).  The interpolation is separable, so it is done one axis
at a time with gathered taps: no loop over pixels.
"""

from __future__ import annotations

import numpy as np

from ...errors import EvalError
from ._util import convert, impl, ints_n, layout_perm, np_dtype, out_dtype, to_layout

COORDINATE_MODES = (
    "half_pixel",
    "align_corners",
    "asymmetric",
    "pytorch_half_pixel",
    "tf_half_pixel_for_nn",
    "tf_crop_and_resize",
)


def _coordinates(n_out, n_in, mode, start, end, ft):
    """Input coordinates of output positions 0..n_out-1 along one axis (TVM's get_inx)."""
    x = np.arange(n_out, dtype=ft)
    one, half = ft.type(1), ft.type(0.5)
    scale = ft.type(n_in) / ft.type(n_out)
    if mode == "half_pixel":
        return (x + half) * scale - half
    if mode == "align_corners":
        if n_out == 1:
            return np.zeros(1, ft)
        return ft.type(n_in - 1) / ft.type(n_out - 1) * x
    if mode == "asymmetric":
        return scale * x
    if mode == "pytorch_half_pixel":
        return (x + half) * scale - half if n_out > 1 else np.zeros(n_out, ft)
    if mode == "tf_half_pixel_for_nn":
        return (x + half) * scale
    if mode == "tf_crop_and_resize":
        s, e = ft.type(start), ft.type(end)
        if n_out > 1:
            return s * ft.type(n_in - 1) + x * (e - s) * ft.type(n_in - 1) / ft.type(n_out - 1)
        return np.full(n_out, half * (s + e) * ft.type(n_in - 1) * one, ft)
    raise EvalError(
        f"coordinate_transformation_mode must be one of {', '.join(COORDINATE_MODES)}, got {mode!r}"
    )


def _int_div_scale(n_in, n_out):
    """TVM's can_convert_multiply_to_intdiv: an integer upscale factor small enough."""
    if n_out % n_in:
        return 0
    factor = n_out // n_in
    return factor if factor <= 1 / (1e-5 * n_in + 1e-5) else 0


def _round_half_away(x):
    t = np.trunc(x)
    return t + np.where(np.abs(x - t) >= 0.5, np.sign(x), 0).astype(x.dtype)


def _nearest_index(coord, rounding, ft):
    eps = ft.type(1e-5)
    if rounding == "round":
        r = _round_half_away(coord)
    elif rounding == "round_prefer_floor":
        r = np.ceil(coord - ft.type(0.5))
    elif rounding == "round_prefer_ceil":
        r = np.floor(coord + ft.type(0.5))
    elif rounding == "floor":
        r = np.floor(coord + eps)
    elif rounding == "ceil":
        r = np.ceil(coord - eps)
    else:
        raise EvalError(
            "rounding_method must be round, floor, ceil, round_prefer_floor or "
            f"round_prefer_ceil, got {rounding!r}"
        )
    return r.astype(np.int64)


def _cubic_weights(t, alpha, ft):
    """TVM's _cubic_spline_weights, constants folded in double as Python does."""
    a = ft.type(alpha)
    t2 = t * t
    t3 = t * t * t
    w1 = a * (t3 - ft.type(2) * t2 + t)
    w2 = ft.type(alpha + 2) * t3 - ft.type(3 + alpha) * t2 + ft.type(1)
    w3 = -ft.type(alpha + 2) * t3 + ft.type(3 + 2 * alpha) * t2 - a * t
    w4 = -a * t3 + a * t2
    return [w1, w2, w3, w4]


def _taps(n_out, n_in, mode, method, rounding, alpha, exclude, start, end, ft):
    """(coordinates, [(indices, weights or None)]) for one axis."""
    coord = _coordinates(n_out, n_in, mode, start, end, ft)
    if method == "nearest_neighbor":
        factor = _int_div_scale(n_in, n_out) if mode == "asymmetric" else 0
        if factor:
            idx = np.arange(n_out) // factor
        else:
            idx = _nearest_index(
                coord, rounding or ("round" if mode == "align_corners" else "floor"), ft
            )
        return coord, [(np.clip(idx, 0, n_in - 1), None)]
    base = np.floor(coord)
    frac = (coord - base).astype(ft)
    base = base.astype(np.int64)
    if method == "linear":
        return coord, [
            (np.clip(base, 0, n_in - 1), (ft.type(1) - frac).astype(ft)),
            (np.clip(base + 1, 0, n_in - 1), frac),
        ]
    if method == "cubic":
        weights = _cubic_weights(frac, alpha, ft)
        if exclude:
            weights = [
                np.where((base - 1 + i < 0) | (base + i > n_in), ft.type(0), w).astype(ft)
                for i, w in enumerate(weights)
            ]
            total = weights[0] + weights[1] + weights[2] + weights[3]
            weights = [(w / total).astype(ft) for w in weights]
        return coord, [(np.clip(base + i - 1, 0, n_in - 1), w) for i, w in enumerate(weights)]
    raise EvalError(f"method must be nearest_neighbor, linear or cubic, got {method!r}")


def _apply(x, axis, taps):
    """Gather the taps along ``axis`` and blend them with their weights (in order)."""
    acc = None
    shape = [1] * x.ndim
    shape[axis] = -1
    for idx, w in taps:
        part = np.take(x, idx, axis=axis)
        if w is not None:
            part = part * w.reshape(shape)
        acc = part if acc is None else acc + part
    return acc


def resize_nd(
    data: np.ndarray,
    spatial: str,
    size,
    layout: str,
    method: str = "linear",
    coordinate_transformation_mode: str = "half_pixel",
    rounding_method: str = "",
    cubic_alpha: float = -0.5,
    cubic_exclude: int = 0,
    extrapolation_value: float = 0.0,
    roi=None,
    dtype=None,
) -> np.ndarray:
    """Resize the ``spatial`` axes (``"W"``, ``"HW"``, ``"DHW"``) of ``data`` to ``size``.

    ``roi`` holds all the starts then all the ends (``tf_crop_and_resize`` only).
    """
    nd = len(spatial)
    canon = "NC" + spatial
    x = np.transpose(data, layout_perm(layout, canon))
    size = ints_n(size, nd, "size")
    if min(size) < 0:
        raise EvalError(f"size must not be negative, got {list(size)}")
    dt = np_dtype(dtype) if dtype is not None else x.dtype
    if 0 in x.shape[2:] and int(np.prod(size)):
        raise EvalError("cannot resize an empty image to a non-empty one")
    ft = np.dtype(np.float64) if x.dtype == np.float64 else np.dtype(np.float32)
    roi = tuple(roi) if roi else (0.0,) * (2 * nd)
    if len(roi) != 2 * nd:
        raise EvalError(f"roi must have {2 * nd} values, got {list(roi)}")
    args = (method, rounding_method, cubic_alpha, cubic_exclude)
    if method != "nearest_neighbor":
        x = x.astype(ft)
    outside = np.zeros((1,) * nd, bool)
    # The innermost axis first, as TVM's formula nests the interpolations.
    for i in reversed(range(nd)):
        n_in = x.shape[2 + i]
        coord, taps = _taps(size[i], n_in, coordinate_transformation_mode, *args, roi[i], roi[i + nd], ft)
        x = _apply(x, 2 + i, taps)
        shape = [1] * nd
        shape[i] = -1
        outside = outside | ((coord < 0) | (coord > n_in - 1)).reshape(shape)
    if coordinate_transformation_mode == "tf_crop_and_resize":
        x = np.where(outside, np.asarray(extrapolation_value, ft), x)
    return to_layout(convert(x, dt), canon, layout, "layout")


def resize2d(
    data: np.ndarray,
    size,
    layout: str = "NCHW",
    method: str = "linear",
    coordinate_transformation_mode: str = "half_pixel",
    rounding_method: str = "",
    cubic_alpha: float = -0.5,
    cubic_exclude: int = 0,
    extrapolation_value: float = 0.0,
    roi=(0.0, 0.0, 0.0, 0.0),
    dtype=None,
) -> np.ndarray:
    """Resize the H x W plane of ``data`` to ``size`` (see the module docstring)."""
    return resize_nd(
        data,
        "HW",
        size,
        layout,
        method,
        coordinate_transformation_mode,
        rounding_method,
        cubic_alpha,
        cubic_exclude,
        extrapolation_value,
        roi,
        dtype,
    )


@impl("image.resize2d")
def _resize2d(args, attrs, out):
    data = args[0]
    if attrs["size"] is None:
        raise EvalError("resize2d: size must be given")
    return resize2d(
        data,
        attrs["size"],
        attrs["layout"],
        attrs["method"],
        attrs["coordinate_transformation_mode"],
        attrs["rounding_method"],
        attrs["cubic_alpha"],
        attrs["cubic_exclude"],
        attrs["extrapolation_value"],
        attrs["roi"],
        out_dtype(out, attrs["out_dtype"], data),
    )
