"""numpy implementations of the neural-network operators (:mod:`relay_nb.op.nn`).

Convolutions and pools work on the canonical layouts (``NC`` + spatial for data, ``OI`` +
spatial for conv weights, ``IO`` + spatial for transposed-conv weights): other layouts,
which must be permutations of those letters, are transposed in and out.  Windows are
``sliding_window_view``s sliced by stride and dilation, contracted with ``einsum`` (an
im2col the numpy way): no Python loop runs over pixels.

* ``out_dtype`` (conv, dense, matmul, batch_matmul): inputs are converted to it before
  multiplying, as TVM's compute does, so ``int8`` inputs accumulate in ``int32``.
* Pools follow TVM's ``pool_impl_nd``: max pools pad with the dtype's lowest value;
  ``ceil_mode`` adds ``stride - 1`` padding at the end; average pools divide by the number
  of window positions inside the input (``count_include_pad=False``) or inside the input
  plus the user's padding (``True``; never the ceil-mode extra), at least 1.
* Adaptive pools use TVM's windows ``[floor(i * in / out), ceil((i + 1) * in / out))``.
* ``nn.batch_norm`` is the inference form of TVM's SimplifyInference:
  ``x * scale + shift`` with ``scale = gamma / sqrt(var + eps)`` and
  ``shift = beta - mean * scale``; it returns ``(out, moving_mean, moving_var)``.
  ``nn.dropout`` is the identity and returns ``(data, ones)``: nothing is dropped.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ...errors import EvalError
from ._util import (
    convert,
    divide_by_count,
    extreme,
    impl,
    ints_n,
    is_float,
    layout_perm,
    lowest,
    norm_axis,
    out_dtype,
    pad_pairs,
    to_layout,
)
from .image import resize2d

_SPATIAL = {1: "W", 2: "HW", 3: "DHW"}
_OUT = "xyz"
_KER = "ijk"


def _float_work(x: np.ndarray) -> np.ndarray:
    """Floats stay in their dtype; other tensors are computed in float64."""
    return x if is_float(x.dtype) else x.astype(np.float64)


def _along(vec: np.ndarray, axis: int, ndim: int) -> np.ndarray:
    """A 1-d per-channel vector shaped to broadcast along ``axis`` of a rank-``ndim`` tensor."""
    shape = [1] * ndim
    shape[axis] = -1
    return vec.reshape(shape)


# --- activations ------------------------------------------------------------------------------


@impl("nn.relu")
def _relu(args, attrs, out):
    """``max(x, 0)`` with TVM's select semantics (``x > 0 ? x : 0``: ``relu(nan) == 0``)."""
    x = args[0]
    return np.where(x > 0, x, x.dtype.type(0))


@impl("nn.leaky_relu")
def _leaky_relu(args, attrs, out):
    """``x`` where ``x > 0``, else ``x * alpha`` with alpha converted to x's dtype (as TVM)."""
    x = args[0]
    alpha = convert(np.float64(attrs["alpha"]), x.dtype)
    return np.where(x > 0, x, x * alpha)


@impl("nn.prelu")
def _prelu(args, attrs, out):
    x, alpha = args
    a = _along(alpha.astype(x.dtype, copy=False), norm_axis(attrs["axis"], x.ndim), x.ndim)
    return np.where(x > 0, x, x * a)


@impl("nn.softmax")
def _softmax(args, attrs, out):
    x = _float_work(args[0])
    axis = norm_axis(attrs["axis"], x.ndim)
    if x.size == 0:  # no element to normalize (and np.max of nothing raises)
        return x.copy()
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


@impl("nn.log_softmax")
def _log_softmax(args, attrs, out):
    x = _float_work(args[0])
    axis = norm_axis(attrs["axis"], x.ndim)
    if x.size == 0:  # no element to normalize (and np.max of nothing raises)
        return x.copy()
    shifted = x - np.max(x, axis=axis, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))


# --- dense and matmul -------------------------------------------------------------------------


def _mm_inputs(args, attrs, out):
    a, b = args
    dt = out_dtype(out, attrs["out_dtype"], np.result_type(a, b).name)
    return convert(a, dt), convert(b, dt)


@impl("nn.dense")
def _dense(args, attrs, out):
    """``data @ weight.T``: data ``(..., K)``, weight ``(units, K)``."""
    a, w = _mm_inputs(args, attrs, out)
    if w.ndim != 2 or a.ndim < 1 or a.shape[-1] != w.shape[1]:
        raise EvalError(f"shapes {a.shape} and {w.shape} do not match")
    return np.matmul(a, w.T)


@impl("nn.matmul")
def _matmul(args, attrs, out):
    a, b = _mm_inputs(args, attrs, out)
    if attrs["transpose_a"]:
        a = np.swapaxes(a, -1, -2)
    if attrs["transpose_b"]:
        b = b.T
    return np.matmul(a, b)


@impl("nn.batch_matmul")
def _batch_matmul(args, attrs, out):
    """``(B, M, K) x (B, N, K) -> (B, M, N)`` by default; a batch of 1 broadcasts."""
    a, b = _mm_inputs(args, attrs, out)
    if a.ndim != 3 or b.ndim != 3:
        raise EvalError(f"inputs must have rank 3, got {a.shape} and {b.shape}")
    if attrs["transpose_a"]:
        a = np.swapaxes(a, 1, 2)
    if attrs["transpose_b"]:
        b = np.swapaxes(b, 1, 2)
    return np.matmul(a, b)


@impl("nn.bias_add")
def _bias_add(args, attrs, out):
    x, bias = args
    return x + _along(bias.astype(x.dtype, copy=False), norm_axis(attrs["axis"], x.ndim), x.ndim)


# --- convolution ------------------------------------------------------------------------------


def _windows(x: np.ndarray, span, strides, dilation) -> np.ndarray:
    """``(N, C, *out, *kernel)`` windows of a padded ``(N, C, *spatial)`` tensor (a view)."""
    nd = x.ndim - 2
    for i in range(nd):
        if x.shape[2 + i] < span[i]:
            raise EvalError(
                f"the window spans {span[i]} but the padded input has {x.shape[2 + i]} on a "
                "spatial axis"
            )
    win = sliding_window_view(x, tuple(span), axis=tuple(range(2, 2 + nd)))
    index = (slice(None), slice(None))
    index += tuple(slice(None, None, s) for s in strides)
    index += tuple(slice(None, None, d) for d in dilation)
    return win[index]


def conv_nd(x, w, strides, dilation, pads, groups) -> np.ndarray:
    """Grouped, strided, dilated, padded correlation: x ``(N, C, *S)``, w ``(O, C/groups, *K)``."""
    nd = x.ndim - 2
    n, c = x.shape[:2]
    o, cg = w.shape[:2]
    kernel = w.shape[2:]
    if groups < 1 or c != cg * groups or o % groups:
        raise EvalError(f"{c} input channels, weight {w.shape} and groups={groups} do not fit")
    if any(s < 1 for s in strides) or any(d < 1 for d in dilation):
        raise EvalError("strides and dilation must be positive")
    if any(p for pair in pads for p in pair):
        x = np.pad(x, [(0, 0), (0, 0)] + [tuple(p) for p in pads])
    span = [(k - 1) * d + 1 for k, d in zip(kernel, dilation)]
    win = _windows(x, span, strides, dilation)
    out_sp = win.shape[2 : 2 + nd]
    win = win.reshape((n, groups, cg) + out_sp + tuple(kernel))
    wg = w.reshape((groups, o // groups, cg) + tuple(kernel))
    so, sk = _OUT[:nd], _KER[:nd]
    y = np.einsum(f"ngc{so}{sk},goc{sk}->ngo{so}", win, wg, optimize=True)
    return y.reshape((n, o) + out_sp)


def conv_transpose_nd(x, w, strides, dilation, pads, output_padding, groups) -> np.ndarray:
    """Transposed convolution: x ``(N, C, *S)``, w ``(C, O/groups, *K)`` (IO layout).

    The input is dilated by the strides, padded by ``span - 1 - pad`` (plus the output
    padding at the end), and correlated with the flipped kernel whose in/out axes swap.
    """
    nd = x.ndim - 2
    n, c = x.shape[:2]
    ci, og = w.shape[:2]
    kernel = w.shape[2:]
    if groups < 1 or c != ci or c % groups:
        raise EvalError(f"{c} input channels, weight {w.shape} and groups={groups} do not fit")
    if any(s < 1 for s in strides) or any(d < 1 for d in dilation):
        raise EvalError("strides and dilation must be positive")
    cg = c // groups
    wc = w.reshape((groups, cg, og) + tuple(kernel)).swapaxes(1, 2)
    wc = wc.reshape((groups * og, cg) + tuple(kernel))
    wc = np.flip(wc, axis=tuple(range(2, 2 + nd)))
    sp = x.shape[2:]
    dilated = np.zeros(
        (n, c) + tuple((s - 1) * st + 1 if s else 0 for s, st in zip(sp, strides)), x.dtype
    )
    dilated[(slice(None), slice(None)) + tuple(slice(None, None, st) for st in strides)] = x
    span = [(k - 1) * d + 1 for k, d in zip(kernel, dilation)]
    widths, crop = [], [slice(None), slice(None)]
    for i in range(nd):
        lo = span[i] - 1 - pads[i][0]
        hi = span[i] - 1 - pads[i][1] + output_padding[i]
        widths.append((max(lo, 0), max(hi, 0)))
        size = dilated.shape[2 + i] + max(lo, 0) + max(hi, 0)
        crop.append(slice(max(-lo, 0), size - max(-hi, 0)))
    padded = np.pad(dilated, [(0, 0), (0, 0)] + widths)[tuple(crop)]
    return conv_nd(padded, wc, (1,) * nd, dilation, [(0, 0)] * nd, groups)


def _conv(nd, transposed=False):
    spatial = _SPATIAL[nd]

    def run(args, attrs, out):
        data, weight = args
        dl = attrs["data_layout"]
        ol = attrs["out_layout"] or dl
        dt = out_dtype(out, attrs["out_dtype"], np.result_type(data, weight).name)
        x = convert(np.transpose(data, layout_perm(dl, "NC" + spatial, "data_layout")), dt)
        canon_w = ("IO" if transposed else "OI") + spatial
        w = np.transpose(weight, layout_perm(attrs["kernel_layout"], canon_w, "kernel_layout"))
        w = convert(w, dt)
        strides = ints_n(attrs["strides"], nd, "strides")
        dilation = ints_n(attrs["dilation"], nd, "dilation")
        pads = pad_pairs(attrs["padding"], nd)
        if transposed:
            extra = ints_n(attrs["output_padding"], nd, "output_padding")
            y = conv_transpose_nd(x, w, strides, dilation, pads, extra, attrs["groups"])
        else:
            y = conv_nd(x, w, strides, dilation, pads, attrs["groups"])
        return to_layout(y, "NC" + spatial, ol)

    return run


impl("nn.conv1d")(_conv(1))
impl("nn.conv2d")(_conv(2))
impl("nn.conv3d")(_conv(3))
impl("nn.conv2d_transpose")(_conv(2, transposed=True))


# --- pooling ----------------------------------------------------------------------------------


def _count_windows(mask: np.ndarray, span: int, stride: int, dilation: int) -> np.ndarray:
    """How many (dilated) positions of each window fall on ones of a 1-d 0/1 mask."""
    return sliding_window_view(mask, span)[::stride, ::dilation].sum(axis=-1)


def pool_nd(x, kind, pool, strides, dilation, pads, ceil_mode, count_include_pad=False):
    """Max or average pooling of a canonical ``(N, C, *spatial)`` tensor (TVM's pool_impl_nd)."""
    nd = x.ndim - 2
    if any(s < 1 for s in strides) or any(d < 1 for d in dilation) or any(k < 1 for k in pool):
        raise EvalError("pool_size, strides and dilation must be positive")
    extra = [s - 1 if ceil_mode else 0 for s in strides]
    widths = [(0, 0), (0, 0)] + [(b, a + e) for (b, a), e in zip(pads, extra)]
    span = [(k - 1) * d + 1 for k, d in zip(pool, dilation)]
    dt = x.dtype
    window_axes = tuple(range(2 + nd, 2 + 2 * nd))
    if kind == "max":
        padded = np.pad(x, widths, constant_values=lowest(dt)) if any(map(any, widths)) else x
        return extreme(_windows(padded, span, strides, dilation), window_axes, "max")
    padded = np.pad(x, widths) if any(map(any, widths)) else x
    total = np.sum(_windows(padded, span, strides, dilation), axis=window_axes, dtype=dt)
    divisor = np.ones((), dtype=np.int64)
    for i in range(nd):
        size = x.shape[2 + i]
        (before, after), e = pads[i], extra[i]
        if count_include_pad:
            mask = np.r_[np.ones(before + size + after, np.int64), np.zeros(e, np.int64)]
        else:
            mask = np.r_[
                np.zeros(before, np.int64), np.ones(size, np.int64), np.zeros(after + e, np.int64)
            ]
        counts = _count_windows(mask, span[i], strides[i], dilation[i])
        divisor = np.multiply.outer(divisor, counts)
    return divide_by_count(np.asarray(total), np.maximum(divisor, 1), dt)


def _pool(nd, kind):
    spatial = _SPATIAL[nd]

    def run(args, attrs, out):
        layout = attrs["layout"]
        x = np.transpose(args[0], layout_perm(layout, "NC" + spatial))
        y = pool_nd(
            x,
            kind,
            ints_n(attrs["pool_size"], nd, "pool_size"),
            ints_n(attrs["strides"], nd, "strides"),
            ints_n(attrs["dilation"], nd, "dilation"),
            pad_pairs(attrs["padding"], nd),
            attrs["ceil_mode"],
            attrs.get("count_include_pad", False),
        )
        return to_layout(y, "NC" + spatial, attrs["out_layout"] or layout)

    return run


for _nd in (1, 2, 3):
    for _kind in ("max", "avg"):
        impl(f"nn.{_kind}_pool{_nd}d")(_pool(_nd, _kind))


def _adaptive_bounds(n_in: int, n_out: int):
    """TVM's adaptive windows: ``[floor(i * in / out), ceil((i + 1) * in / out))``."""
    i = np.arange(n_out)
    return (i * n_in) // n_out, -((-(i + 1) * n_in) // n_out)


def adaptive_pool2d(x: np.ndarray, kind: str, size) -> np.ndarray:
    """Adaptive pooling of a canonical NCHW tensor to ``size = (out_h, out_w)``."""
    dt = x.dtype
    h, w = x.shape[2:]
    oh, ow = size
    if oh < 0 or ow < 0:
        raise EvalError(f"output_size must not be negative, got {[oh, ow]}")
    if oh == 0 or ow == 0:
        return np.zeros(x.shape[:2] + (oh, ow), dt)
    (hs, he), (ws, we) = _adaptive_bounds(h, oh), _adaptive_bounds(w, ow)
    if kind == "max" and (h == 0 or w == 0):
        raise EvalError("cannot take the maximum of an empty window")
    # Both kinds are separable: reduce the W windows, then the H windows (a loop over
    # output rows and columns, not pixels).  Each window reads only its own elements: a
    # product with 0/1 masks would let one NaN or inf reach every window (0 * inf is NaN).
    # A bool window sums to its OR, as ``sum`` does.
    if kind == "avg":
        cols = np.stack([x[..., s:e].sum(axis=-1, dtype=dt) for s, e in zip(ws, we)], axis=-1)
        total = np.stack([cols[:, :, s:e].sum(axis=2, dtype=dt) for s, e in zip(hs, he)], axis=2)
        return divide_by_count(total, np.multiply.outer(he - hs, we - ws), dt)
    # first-wins maxima compose: the first of the first maxima of each row (see extreme)
    cols_max = np.stack([extreme(x[..., s:e], (3,), "max") for s, e in zip(ws, we)], axis=-1)
    return np.stack([extreme(cols_max[:, :, s:e], (2,), "max") for s, e in zip(hs, he)], axis=2)


def _global_pool(kind):
    def run(args, attrs, out):
        layout = attrs["layout"]
        x = np.transpose(args[0], layout_perm(layout, "NCHW"))
        if kind == "avg":
            total = np.sum(x, axis=(2, 3), keepdims=True, dtype=x.dtype)
            y = divide_by_count(total, x.shape[2] * x.shape[3], x.dtype)
        else:
            extra = {"initial": lowest(x.dtype)} if x.shape[2] * x.shape[3] == 0 else {}
            y = extreme(x, (2, 3), "max", keepdims=True, **extra)
        return to_layout(y, "NCHW", attrs["out_layout"] or layout)

    return run


def _adaptive_pool(kind):
    def run(args, attrs, out):
        layout = attrs["layout"]
        x = np.transpose(args[0], layout_perm(layout, "NCHW"))
        size = attrs["output_size"]
        size = x.shape[2:] if not size else ints_n(size, 2, "output_size")
        y = adaptive_pool2d(x, kind, size)
        return to_layout(y, "NCHW", attrs["out_layout"] or layout)

    return run


impl("nn.global_avg_pool2d")(_global_pool("avg"))
impl("nn.global_max_pool2d")(_global_pool("max"))
impl("nn.adaptive_avg_pool2d")(_adaptive_pool("avg"))
impl("nn.adaptive_max_pool2d")(_adaptive_pool("max"))


# --- normalization ----------------------------------------------------------------------------


@impl("nn.batch_norm")
def _batch_norm(args, attrs, out):
    x, gamma, beta, mean, var = args
    dt = x.dtype
    axis = norm_axis(attrs["axis"], x.ndim)
    eps = dt.type(attrs["epsilon"])
    scale = dt.type(1) / np.sqrt(var.astype(dt) + eps)
    if attrs["scale"]:
        scale = gamma.astype(dt) * scale
    shift = -mean.astype(dt) * scale
    if attrs["center"]:
        shift = shift + beta.astype(dt)
    y = x * _along(scale, axis, x.ndim) + _along(shift, axis, x.ndim)
    return y, mean, var


@impl("nn.layer_norm")
def _layer_norm(args, attrs, out):
    x, gamma, beta = args
    dt = x.dtype
    axis = norm_axis(attrs["axis"], x.ndim)
    n = x.shape[axis]
    mean = divide_by_count(np.sum(x, axis=axis, keepdims=True, dtype=dt), n, dt)
    diff = x - mean
    var = divide_by_count(np.sum(diff * diff, axis=axis, keepdims=True, dtype=dt), n, dt)
    y = diff / np.sqrt(var + dt.type(attrs["epsilon"]))
    if attrs["scale"]:
        y = y * _along(gamma.astype(dt), axis, x.ndim)
    if attrs["center"]:
        y = y + _along(beta.astype(dt), axis, x.ndim)
    return y


@impl("nn.dropout")
def _dropout(args, attrs, out):
    x = args[0]
    return x.copy(), np.ones_like(x)


# --- shape ops --------------------------------------------------------------------------------


@impl("nn.pad")
def _pad(args, attrs, out):
    x, value = args
    widths = [tuple(int(v) for v in w) for w in attrs["pad_width"]]
    if len(widths) != x.ndim or any(len(w) != 2 or min(w) < 0 for w in widths):
        raise EvalError(f"pad_width {attrs['pad_width']} does not fit a rank-{x.ndim} tensor")
    mode = attrs["pad_mode"]
    if not widths:  # a scalar: nothing to pad (np.pad reads [] as float widths and fails)
        return x.copy()
    if mode == "constant":
        return np.pad(x, widths, constant_values=convert(value.reshape(()), x.dtype))
    if mode in ("edge", "reflect"):
        shape = [d + a + b for d, (a, b) in zip(x.shape, widths)]
        if math.prod(shape) == 0:  # nothing to copy: an empty result
            return np.zeros(shape, x.dtype)
        if any(d == 0 and a + b for d, (a, b) in zip(x.shape, widths)):
            raise EvalError(f"{mode} padding of an empty axis")
        return np.pad(x, widths, mode=mode)
    raise EvalError(f"pad_mode must be constant, edge or reflect, got {mode!r}")


@impl("nn.batch_flatten")
def _batch_flatten(args, attrs, out):
    x = args[0]
    if x.ndim == 0:
        raise EvalError("the input must have at least one dimension")
    return x.reshape(x.shape[0], math.prod(x.shape[1:]))


@impl("nn.upsampling")
def _upsampling(args, attrs, out):
    """TVM's upsampling: resize2d to ``round(size * scale)`` with asymmetric coordinates
    (``align_corners`` when asked); bilinear / bicubic are linear / cubic resizes."""
    x = args[0]
    layout = attrs["layout"]
    perm = layout_perm(layout, "NCHW")
    h, w = x.shape[perm[2]], x.shape[perm[3]]
    size = (int(h * attrs["scale_h"] + 0.5), int(w * attrs["scale_w"] + 0.5))
    method = attrs["method"]
    method = {"bilinear": "linear", "bicubic": "cubic"}.get(method, method)
    mode = "align_corners" if attrs["align_corners"] else "asymmetric"
    if x.size == 0 or 0 in size:  # nothing to interpolate (the taps of an empty axis divide by 0)
        shape = [x.shape[perm[0]], x.shape[perm[1]], *size]
        return to_layout(np.zeros(shape, x.dtype), "NCHW", layout)
    return resize2d(x, size, layout, method, mode, "")
