"""numpy implementations of :mod:`relay_nb.op.nn_extra` (TVM's ``topi.nn`` semantics).

* ``nn.lrn``: ``x / (bias + alpha / size * s) ^ beta`` where ``s`` sums ``x^2`` over the
  ``size`` channels centred on each one (``size // 2`` before, zero-padded at the ends).
* ``nn.l2_normalize``: ``x / sqrt(max(sum(x^2, axis), eps))``; ``axis=None`` (TVM's null
  array) or an empty one reduces every axis.
* ``nn.group_norm`` / ``nn.instance_norm``: mean and (biased) variance per group of
  channels / per channel, over the spatial axes; then ``gamma`` and ``beta`` per channel.
* ``nn.fast_softmax`` is the exact softmax (TVM's fast exponential is an approximation
  of it, within a few ulp).
* ``nn.upsampling3d`` resizes D, H and W to ``round(size * scale)`` with the 3-d resize
  (nearest neighbor with TVM's rounding for the mode, or trilinear).
* Adaptive 1-d / 3-d pools use the windows of the 2-d ones:
  ``[floor(i * in / out), ceil((i + 1) * in / out))``.
"""

from __future__ import annotations

import numpy as np

from ...errors import EvalError
from ._util import (
    convert,
    divide_by_count,
    impl,
    ints_n,
    is_float,
    layout_perm,
    norm_axis,
    to_layout,
)
from .image import resize_nd
from .nn import _adaptive_bounds, _conv

# --- normalizations ---------------------------------------------------------------------------


def _work(x: np.ndarray) -> np.ndarray:
    return x if is_float(x.dtype) else x.astype(np.float64)


@impl("nn.lrn")
def _lrn(args, attrs, out):
    x = _work(args[0])
    axis = norm_axis(attrs["axis"], x.ndim)
    size = attrs["size"]
    sq = np.moveaxis(x * x, axis, -1)
    half = size // 2
    padded = np.pad(sq, [(0, 0)] * (sq.ndim - 1) + [(half, size - 1 - half)])
    windows = np.lib.stride_tricks.sliding_window_view(padded, size, axis=-1)
    total = np.moveaxis(windows.sum(axis=-1), -1, axis)
    dt = x.dtype.type
    scale = dt(attrs["bias"]) + dt(attrs["alpha"]) / dt(size) * total
    return x / np.power(scale, dt(attrs["beta"]))


@impl("nn.l2_normalize")
def _l2_normalize(args, attrs, out):
    x = _work(args[0])
    axes = tuple(norm_axis(a, x.ndim) for a in attrs["axis"] or ()) or None
    total = np.sum(x * x, axis=axes, keepdims=True)
    return x / np.sqrt(np.maximum(total, x.dtype.type(attrs["eps"])))


def _normalize(x, axes, eps):
    mean = np.mean(x, axis=axes, keepdims=True)
    var = np.mean((x - mean) ** 2, axis=axes, keepdims=True)
    return (x - mean) / np.sqrt(var + x.dtype.type(eps))


def _affine(y, gamma, beta, axis, attrs):
    shape = [1] * y.ndim
    shape[axis] = -1
    if attrs["scale"]:
        y = y * gamma.astype(y.dtype).reshape(shape)
    if attrs["center"]:
        y = y + beta.astype(y.dtype).reshape(shape)
    return y


@impl("nn.group_norm")
def _group_norm(args, attrs, out):
    x, gamma, beta = args
    x = _work(x)
    axis = norm_axis(attrs["axis"], x.ndim)
    g = attrs["num_groups"]
    c = x.shape[axis]
    if g < 1 or c % g:
        raise EvalError(f"{c} channels cannot be split into {g} groups")
    moved = np.moveaxis(x, axis, 1)
    grouped = moved.reshape((moved.shape[0], g, c // g) + moved.shape[2:])
    y = _normalize(grouped, tuple(range(2, grouped.ndim)), attrs["epsilon"])
    y = np.moveaxis(y.reshape(moved.shape), 1, axis)
    return _affine(y, gamma, beta, axis, attrs)


@impl("nn.instance_norm")
def _instance_norm(args, attrs, out):
    x, gamma, beta = args
    x = _work(x)
    axis = norm_axis(attrs["axis"], x.ndim)
    axes = tuple(a for a in range(1, x.ndim) if a != axis)
    return _affine(_normalize(x, axes, attrs["epsilon"]), gamma, beta, axis, attrs)


@impl("nn.fast_softmax")
def _fast_softmax(args, attrs, out):
    x = _work(args[0])
    axis = norm_axis(attrs["axis"], x.ndim)
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


# --- pixel shuffles ---------------------------------------------------------------------------


def depth_to_space(x: np.ndarray, b: int, mode: str) -> np.ndarray:
    """NCHW: channel ``(i, j, c)`` (DCR) or ``(c, i, j)`` (CRD) goes to pixel ``(h*b+i, w*b+j)``."""
    n, c, h, w = x.shape
    if c % (b * b):
        raise EvalError(f"{c} channels are not divisible by block_size^2 = {b * b}")
    if mode == "DCR":
        y = x.reshape(n, b, b, c // (b * b), h, w).transpose(0, 3, 4, 1, 5, 2)
    else:
        y = x.reshape(n, c // (b * b), b, b, h, w).transpose(0, 1, 4, 2, 5, 3)
    return y.reshape(n, c // (b * b), h * b, w * b)


def space_to_depth(x: np.ndarray, b: int) -> np.ndarray:
    """NCHW: pixel ``(h*b+i, w*b+j)`` of channel c goes to channel ``(i, j, c)``."""
    n, c, h, w = x.shape
    if h % b or w % b:
        raise EvalError(f"spatial size {h} x {w} is not divisible by block_size {b}")
    y = x.reshape(n, c, h // b, b, w // b, b).transpose(0, 3, 5, 1, 2, 4)
    return y.reshape(n, c * b * b, h // b, w // b)


@impl("nn.depth_to_space")
def _depth_to_space(args, attrs, out):
    layout = attrs["layout"]
    x = np.transpose(args[0], layout_perm(layout, "NCHW"))
    return to_layout(depth_to_space(x, attrs["block_size"], attrs["mode"]), "NCHW", layout)


@impl("nn.space_to_depth")
def _space_to_depth(args, attrs, out):
    layout = attrs["layout"]
    x = np.transpose(args[0], layout_perm(layout, "NCHW"))
    return to_layout(space_to_depth(x, attrs["block_size"]), "NCHW", layout)


# --- padding and dilation ---------------------------------------------------------------------


@impl("nn.mirror_pad")
def _mirror_pad(args, attrs, out):
    x = args[0]
    widths = [tuple(int(v) for v in w) for w in attrs["pad_width"]]
    if len(widths) != x.ndim:
        raise EvalError(f"pad_width {attrs['pad_width']} does not fit a rank-{x.ndim} tensor")
    mode = {"SYMMETRIC": "symmetric", "REFLECT": "reflect"}.get(attrs["mode"])
    if mode is None:
        raise EvalError(f"mode must be SYMMETRIC or REFLECT, got {attrs['mode']!r}")
    for n, (lo, hi) in zip(x.shape, widths):
        if max(lo, hi) > (n - 1 if mode == "reflect" else n):
            raise EvalError(f"{attrs['mode']} padding {[lo, hi]} is too wide for an axis of {n}")
    return np.pad(x, widths, mode=mode)


@impl("nn.dilate")
def _dilate(args, attrs, out):
    x = args[0]
    strides = tuple(attrs["strides"])
    if len(strides) != x.ndim or min(strides, default=1) < 1:
        raise EvalError(f"strides {list(strides)} do not fit a rank-{x.ndim} tensor")
    shape = tuple((n - 1) * s + 1 if n else 0 for n, s in zip(x.shape, strides))
    y = np.full(shape, convert(np.float64(attrs["dilation_value"]), x.dtype), x.dtype)
    y[tuple(slice(None, None, s) for s in strides)] = x
    return y


# --- 3-d upsampling, 1-d / 3-d adaptive pools and transposed convolutions --------------------


@impl("nn.upsampling3d")
def _upsampling3d(args, attrs, out):
    x = args[0]
    layout = attrs["layout"]
    perm = layout_perm(layout, "NCDHW")
    size = [
        int(x.shape[perm[2 + i]] * attrs["scale_" + a] + 0.5) for i, a in enumerate("dhw")
    ]
    method = {"trilinear": "linear"}.get(attrs["method"], attrs["method"])
    return resize_nd(
        x, "DHW", size, layout, method, attrs["coordinate_transformation_mode"], ""
    )


def adaptive_pool_nd(x: np.ndarray, kind: str, size) -> np.ndarray:
    """Adaptive pooling of a canonical ``(N, C, *spatial)`` tensor, one axis at a time
    (both the maximum and the window average are separable)."""
    for axis, n_out in enumerate(size, start=2):
        n_in = x.shape[axis]
        if n_out < 0:
            raise EvalError(f"output_size must not be negative, got {list(size)}")
        if n_out and not n_in:
            raise EvalError("cannot pool an empty window")
        starts, ends = _adaptive_bounds(n_in, n_out)
        parts = []
        for s, e in zip(starts, ends):
            window = np.take(x, np.arange(s, e), axis=axis)
            if kind == "max":
                parts.append(np.max(window, axis=axis))
            else:
                total = np.sum(window, axis=axis, dtype=x.dtype)
                parts.append(divide_by_count(total, e - s, x.dtype))
        shape = list(x.shape)
        shape[axis] = 0
        x = np.stack(parts, axis=axis) if parts else np.zeros(shape, x.dtype)
    return x


def _adaptive_pool(kind: str, spatial: str):
    def run(args, attrs, out):
        layout = attrs["layout"]
        x = np.transpose(args[0], layout_perm(layout, "NC" + spatial))
        size = attrs["output_size"]
        size = x.shape[2:] if not size else ints_n(size, len(spatial), "output_size")
        y = adaptive_pool_nd(x, kind, size)
        return to_layout(y, "NC" + spatial, attrs["out_layout"] or layout)

    return run


for _nd, _spatial in ((1, "W"), (3, "DHW")):
    for _kind in ("avg", "max"):
        impl(f"nn.adaptive_{_kind}_pool{_nd}d")(_adaptive_pool(_kind, _spatial))


def _conv_transpose(nd: int):
    """conv2d_transpose's implementation for ``nd`` spatial dims (conv_transpose_nd is n-d)."""
    run = _conv(nd, transposed=True)

    def conv_transpose(args, attrs, out):
        return run(args, attrs, out)

    return conv_transpose


impl("nn.conv1d_transpose")(_conv_transpose(1))
impl("nn.conv3d_transpose")(_conv_transpose(3))


# --- batch <-> space --------------------------------------------------------------------------


@impl("nn.space_to_batch_nd")
def _space_to_batch_nd(args, attrs, out):
    """Pad, split each spatial dim into ``(d / b, b)``, and move the block offsets to the
    front of the batch (TensorFlow's order: block offsets outermost)."""
    x = args[0]
    block = tuple(attrs["block_shape"])
    m = len(block)
    pads = [(0, 0)] + [tuple(p) for p in attrs["paddings"]] + [(0, 0)] * (x.ndim - 1 - m)
    x = np.pad(x, pads, constant_values=convert(np.float64(attrs["pad_value"]), x.dtype))
    n = x.shape[0]
    split = [n]
    for i, b in enumerate(block):
        if x.shape[1 + i] % b:
            raise EvalError(f"padded dim {x.shape[1 + i]} is not divisible by its block {b}")
        split += [x.shape[1 + i] // b, b]
    rest = list(x.shape[1 + m :])
    y = x.reshape(split + rest)
    order = [2 + 2 * i for i in range(m)] + [0] + [1 + 2 * i for i in range(m)]
    order += list(range(1 + 2 * m, y.ndim))
    y = y.transpose(order)
    return y.reshape([n * int(np.prod(block))] + [split[1 + 2 * i] for i in range(m)] + rest)


@impl("nn.batch_to_space_nd")
def _batch_to_space_nd(args, attrs, out):
    x = args[0]
    block = tuple(attrs["block_shape"])
    m = len(block)
    total = int(np.prod(block))
    if x.shape[0] % total:
        raise EvalError(f"batch {x.shape[0]} is not divisible by the block size {total}")
    n = x.shape[0] // total
    spatial = list(x.shape[1 : 1 + m])
    rest = list(x.shape[1 + m :])
    y = x.reshape(list(block) + [n] + spatial + rest)
    # (b1..bm, N, s1..sm) -> (N, s1, b1, s2, b2, ...)
    order = [m]
    for i in range(m):
        order += [m + 1 + i, i]
    order += list(range(2 * m + 1, y.ndim))
    y = y.transpose(order).reshape([n] + [s * b for s, b in zip(spatial, block)] + rest)
    index = [slice(None)]
    for (lo, hi), size in zip(attrs["crops"], y.shape[1 : 1 + m]):
        if lo + hi > size:
            raise EvalError(f"crops {[lo, hi]} exceed a dim of {size}")
        index.append(slice(lo, size - hi))
    return y[tuple(index)]


# --- fifo buffer ---------------------------------------------------------------------------------


@impl("nn.fifo_buffer")
def _fifo_buffer(args, attrs, out):
    """``concatenate([buffer, data], axis)`` without its first ``len(data)`` entries."""
    data, buf = args
    axis = norm_axis(attrs["axis"], buf.ndim)
    joined = np.concatenate([buf, data.astype(buf.dtype)], axis=axis)
    return np.take(joined, np.arange(data.shape[axis], joined.shape[axis]), axis=axis)


__all__ = ["adaptive_pool_nd", "depth_to_space", "space_to_depth"]
