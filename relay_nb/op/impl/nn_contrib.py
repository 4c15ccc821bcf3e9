"""numpy implementations of :mod:`relay_nb.op.nn_contrib`: every contrib op is computed by
converting to the canonical layout / kernel and running the plain conv2d / conv3d / dense.

The Winograd matrix ``G`` is built from TVM's interpolation points by the Cook-Toom
construction: row ``i`` of a finite point ``a_i`` is ``a_i^j / prod_{k != i} (a_i - a_k)``
(the first row's sign made positive), the last row (the point at infinity) selects the
kernel's last tap.
"""

from __future__ import annotations

import functools

import numpy as np

from ...errors import EvalError
from ..transform import parse_layout
from ._util import convert, impl, ints_n, layout_perm, out_dtype, pad_pairs, to_layout
from .nn import conv_nd
from .transform import layout_transform

# TVM's winograd_util interpolation points by degree (tile + kernel - 2), from
# Barabasz et al., "Error analysis and improving the accuracy of Winograd convolution".
_POINTS = {
    3: [0, -1, 1],
    4: [0, -1, 1, 1 / 2],
    5: [0, -1, 1, 1 / 2, -2],
    6: [0, -1, 1, 1 / 2, -2, -1 / 2],
    7: [0, -1, 1, 1 / 2, -1 / 2, 2, -2],
    8: [0, -1, 1, 1 / 2, -1 / 2, 2, -2, -1 / 4],
    9: [0, -1, 1, 1 / 2, -1 / 2, 2, -2, -1 / 4, 4],
    10: [0, -1, 1, 1 / 2, -1 / 2, 2, -2, -1 / 4, 3 / 4, -4 / 3],
    11: [0, -1, 1, 1 / 2, -1 / 2, 2, -2, -1 / 4, 4, 3 / 4, -4 / 3],
    12: [0, -1, 1, 1 / 2, -1 / 2, 2, -2, -1 / 4, 4, 3 / 4, -4 / 3, 1 / 4],
    13: [0, -1, 1, 1 / 2, -1 / 2, 2, -2, -1 / 4, 4, 1 / 4, -3 / 4, 4 / 3, -4],
}


@functools.cache
def winograd_g(tile: int, kernel: int) -> np.ndarray:
    """The ``(tile + kernel - 1, kernel)`` kernel-transform matrix ``G`` (float64)."""
    if not 1 < tile < 9 or not 2 < kernel < 8:
        raise EvalError(f"no Winograd transform for tile {tile} and kernel {kernel}")
    pts = _POINTS[tile + kernel - 2]
    alpha = tile + kernel - 1
    g = np.zeros((alpha, kernel))
    for i, a in enumerate(pts):
        denom = np.prod([a - b for k, b in enumerate(pts) if k != i])
        if i == 0 and denom < 0:
            denom = -denom
        g[i] = [a**j / denom for j in range(kernel)]
    g[alpha - 1, kernel - 1] = 1.0
    return g


def _transform(w: np.ndarray, gs: list) -> np.ndarray:
    """``w (O, I, k1, ...)`` with ``G_a`` applied along each kernel axis: ``(alpha..., O, I)``."""
    out = w
    for axis, g in enumerate(gs):
        if g is not None:
            out = np.moveaxis(np.tensordot(g, out, axes=([1], [2 + axis])), 0, 2 + axis)
    nd = len(gs)
    return np.moveaxis(out, (0, 1), (nd, nd + 1))


def _untransform(u: np.ndarray, gs: list) -> np.ndarray:
    """The kernel ``(O, I, k...)`` whose transform is ``u (alpha..., O, I)``: ``G^+`` per axis."""
    nd = len(gs)
    out = np.moveaxis(u, (nd, nd + 1), (0, 1))
    for axis, g in enumerate(gs):
        if g is not None:
            inverse = np.linalg.pinv(g)
            out = np.moveaxis(np.tensordot(inverse, out, axes=([1], [2 + axis])), 0, 2 + axis)
    return out


def _float(w: np.ndarray) -> np.ndarray:
    return w if w.dtype.kind == "f" else w.astype(np.float64)


@impl("nn.contrib_conv2d_winograd_weight_transform")
def _winograd_weight(args, attrs, out):
    w = _float(args[0])
    t = attrs["tile_size"]
    return _transform(w, [winograd_g(t, k) for k in w.shape[2:]]).astype(w.dtype)


@impl("nn.contrib_conv3d_winograd_weight_transform")
def _winograd3d_weight(args, attrs, out):
    w = _float(args[0])
    t = attrs["tile_size"]
    d, h, wd = w.shape[2:]
    if 2 < d < 8:
        return _transform(w, [winograd_g(t, k) for k in (d, h, wd)]).astype(w.dtype)
    # depth kept: (alpha, alpha, D, O, I)
    u = _transform(w, [None, winograd_g(t, h), winograd_g(t, wd)])  # (D, ah, aw, O, I)
    return np.moveaxis(u, 0, 2).astype(w.dtype)


@impl("nn.contrib_conv2d_winograd_nnpack_weight_transform")
def _nnpack_weight(args, attrs, out):
    w = _float(args[0])
    g = winograd_g(6, 3)
    u = _transform(w, [g, g])  # (8, 8, O, I)
    return np.moveaxis(u, (0, 1), (2, 3))


def _kernel_from(u: np.ndarray, attrs, nd: int) -> np.ndarray:
    """Recover the OI... kernel of a transformed weight (the without-transform convs)."""
    ks = ints_n(attrs["kernel_size"], nd, "kernel_size")
    t = attrs["tile_size"]
    u = _float(u)
    if nd == 3 and not 2 < ks[0] < 8:
        # (ah, aw, D, O, I): the depth was not transformed
        flat = np.moveaxis(u, 2, 0)  # (D, ah, aw, O, I)
        return _untransform(flat, [None, winograd_g(t, ks[1]), winograd_g(t, ks[2])])
    if u.shape[:nd] != tuple(t + k - 1 for k in ks):
        raise EvalError(f"weight {u.shape} is not a tile-{t} Winograd transform of a {ks} kernel")
    return _untransform(u, [winograd_g(t, k) for k in ks])


def _conv_with(nd, data, w, attrs, out):
    """conv{nd}d of ``data`` (in ``data_layout``) with a canonical OI... kernel."""
    spatial = "HW" if nd == 2 else "DHW"
    dl = attrs["data_layout"]
    dt = out_dtype(out, attrs["out_dtype"], data)
    x = convert(layout_transform(data, dl, "NC" + spatial), dt)
    y = conv_nd(
        x,
        convert(w, dt),
        ints_n(attrs["strides"], nd, "strides"),
        ints_n(attrs["dilation"], nd, "dilation"),
        pad_pairs(attrs["padding"], nd),
        attrs["groups"],
    )
    return layout_transform(y, "NC" + spatial, attrs["out_layout"] or dl)


@impl("nn.contrib_conv2d_winograd_without_weight_transform")
def _winograd_conv2d(args, attrs, out):
    return _conv_with(2, args[0], _kernel_from(args[1], attrs, 2), attrs, out)


@impl("nn.contrib_conv3d_winograd_without_weight_transform")
def _winograd_conv3d(args, attrs, out):
    return _conv_with(3, args[0], _kernel_from(args[1], attrs, 3), attrs, out)


def _nchwc(args, attrs, out):
    data, weight = args
    w = layout_transform(weight, attrs["kernel_layout"], "OIHW")
    return _conv_with(2, data, w, attrs, out)


impl("nn.contrib_conv2d_NCHWc")(_nchwc)
impl("nn.contrib_depthwise_conv2d_NCHWc")(_nchwc)


@impl("nn.contrib_dense_pack")
def _dense_pack(args, attrs, out):
    data, weight = args
    w = layout_transform(weight, attrs["weight_layout"], "NC")
    dt = out_dtype(out, attrs["out_dtype"], data)
    return convert(data, dt) @ convert(w, dt).T


# --- gemm -------------------------------------------------------------------------------------


def _gemm_tiles(dtype) -> bool:
    """8-bit kernels are tiled (tile_N, tile_K), others (tile_K, tile_N)."""
    return np.dtype(dtype) in (np.dtype(np.int8), np.dtype(np.uint8))


@impl("nn.contrib_conv2d_gemm_weight_transform")
def _gemm_weight(args, attrs, out):
    w = args[0]
    tn, tk = attrs["tile_N"], attrs["tile_K"]
    kh, kw, ci, co = w.shape
    k, n = kh * kw * ci, co
    flat = w.reshape(k, n)
    kp, np_ = k + (-k) % (4 * tk), n + (-n) % tn
    flat = np.pad(flat, [(0, kp - k), (0, np_ - n)])
    tiles = flat.reshape(kp // tk, tk, np_ // tn, tn)  # [K tile, k, N tile, n]
    if _gemm_tiles(w.dtype):
        return tiles.transpose(2, 0, 3, 1)  # (N/tn, K/tk, tn, tk)
    return tiles.transpose(2, 0, 1, 3)  # (N/tn, K/tk, tk, tn)


@impl("nn.contrib_conv2d_gemm_without_weight_transform")
def _gemm_conv2d(args, attrs, out):
    data, packed = args
    kh, kw = ints_n(attrs["kernel_size"], 2, "kernel_size")
    dl = attrs["data_layout"]
    ci = data.shape[layout_perm(dl, "NCHW")[1]]
    co = attrs["channels"]
    if _gemm_tiles(packed.dtype):
        flat = packed.transpose(1, 3, 0, 2)  # (K/tk, tk, N/tn, tn)
    else:
        flat = packed.transpose(1, 2, 0, 3)
    flat = flat.reshape(flat.shape[0] * flat.shape[1], flat.shape[2] * flat.shape[3])
    k = kh * kw * ci // attrs["groups"]
    if flat.shape[0] < k or flat.shape[1] < co:
        raise EvalError(f"weight {packed.shape} does not hold a {kh}x{kw}x{ci}x{co} kernel")
    hwio = flat[:k, :co].reshape(kh, kw, ci // attrs["groups"], co)
    return _conv_with(2, data, np.transpose(hwio, (3, 2, 0, 1)), attrs, out)


__all__ = ["winograd_g"]
