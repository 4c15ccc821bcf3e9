"""numpy implementations of :mod:`relay_nb.op.nn_train` (TVM's ``topi.nn`` semantics).

* ``nn.nll_loss``: ``loss = -weights[t] * predictions[n, t, ...]`` where ``t != ignore_index``
  (0 elsewhere); ``mean`` divides the sum by the sum of the weights used (NaN when every
  target is ignored, as a float 0/0), ``sum`` sums, ``none`` keeps the targets' shape.  A
  target outside ``[0, C)`` that is not ignored is an EvalError (TVM reads out of bounds).
* ``nn.cross_entropy``: ``-sum(y * log(x)) / batch``; ``..._with_logits``: ``-sum(y * x) / batch``.
* ``nn.max_pool2d_grad`` gives each window's gradient to the window's *first* maximum (row
  major), ``nn.avg_pool2d_grad`` shares it among the elements the forward pool divided by;
  padding (and ``ceil_mode``'s extra) receives nothing.  Loops run over the kernel taps,
  never over pixels.
* ``nn.conv2d_backward_weight``: ``dW[o, c, i, j] = sum_{n, y, x} grad[n, o, y, x] *
  data_padded[n, g * Cg + c, y * s + i * d, x * s + j * d]``.
"""

from __future__ import annotations

import numpy as np

from ...errors import EvalError
from ._util import convert, ints_n, impl, layout_perm, lowest, out_dtype, pad_pairs, to_layout
from .nn import _windows

# --- losses -----------------------------------------------------------------------------------


@impl("nn.nll_loss")
def _nll_loss(args, attrs, out):
    pred, targets, weights = args
    c = pred.shape[1]
    valid = targets != attrs["ignore_index"]
    bad = valid & ((targets < 0) | (targets >= c))
    if bad.any():
        raise EvalError(f"target {int(targets[bad].flat[0])} is not a class index in [0, {c})")
    t = np.where(valid, targets, 0).astype(np.int64)
    picked = np.take_along_axis(pred, t[:, None], axis=1)[:, 0]
    w = np.where(valid, weights[t], 0).astype(pred.dtype)
    loss = -picked * w
    if attrs["reduction"] == "none":
        return loss
    if attrs["reduction"] == "sum":
        return np.sum(loss, dtype=pred.dtype)
    return np.sum(loss, dtype=pred.dtype) / np.sum(w, dtype=pred.dtype)


@impl("nn.cross_entropy")
def _cross_entropy(args, attrs, out):
    x, y = args
    return -np.sum(y * np.log(x)) / x.dtype.type(x.shape[0])


@impl("nn.cross_entropy_with_logits")
def _cross_entropy_with_logits(args, attrs, out):
    x, y = args
    return -np.sum(y * x) / x.dtype.type(x.shape[0])


# --- pool gradients ---------------------------------------------------------------------------


def _pool_geometry(attrs, shape):
    pool = ints_n(attrs["pool_size"], 2, "pool_size")
    strides = ints_n(attrs["strides"], 2, "strides")
    dilation = ints_n(attrs["dilation"], 2, "dilation")
    pads = pad_pairs(attrs["padding"], 2)
    extra = [s - 1 if attrs["ceil_mode"] else 0 for s in strides]
    widths = [(0, 0), (0, 0)] + [(lo, hi + e) for (lo, hi), e in zip(pads, extra)]
    span = [(k - 1) * d + 1 for k, d in zip(pool, dilation)]
    return pool, strides, dilation, pads, widths, span


def _scatter_taps(shape, pool, strides, dilation, out_hw, value_of_tap):
    """Sum ``value_of_tap(i, j)`` (an ``(N, C, OH, OW)`` array) into a padded-size result at
    each window's tap ``(i, j)``: strided slices, one per tap."""
    acc = np.zeros(shape, dtype=np.float64)
    oh, ow = out_hw
    for i in range(pool[0]):
        for j in range(pool[1]):
            y0, x0 = i * dilation[0], j * dilation[1]
            acc[
                :,
                :,
                y0 : y0 + (oh - 1) * strides[0] + 1 : strides[0],
                x0 : x0 + (ow - 1) * strides[1] + 1 : strides[1],
            ] += value_of_tap(i, j)
    return acc


def _pool_grad(kind):
    def run(args, attrs, out):
        grad, data = args
        layout = attrs["layout"]
        perm = layout_perm(layout, "NCHW")
        x = np.transpose(data, perm)
        g = np.transpose(grad, layout_perm(attrs["out_layout"] or layout, "NCHW")).astype(
            np.float64
        )
        pool, strides, dilation, pads, widths, span = _pool_geometry(attrs, x.shape)
        fill = lowest(x.dtype) if kind == "max" else 0
        padded = np.pad(x, widths, constant_values=fill)
        win = _windows(padded, span, strides, dilation)  # (N, C, OH, OW, kh, kw)
        if win.shape[2:4] != g.shape[2:]:
            raise EvalError(f"out_grad {grad.shape} is not the pool's output {win.shape[:4]}")
        if kind == "max":
            flat = win.reshape(win.shape[:4] + (-1,))
            first = np.argmax(flat, axis=-1)  # the first maximum, row major

            def tap(i, j):
                return np.where(first == i * pool[1] + j, g, 0.0)
        else:
            mask = np.zeros(padded.shape[2:])
            h, w = x.shape[2:]
            if attrs["count_include_pad"]:
                ph, pw = h + sum(pads[0]), w + sum(pads[1])
                mask[:ph, :pw] = 1
            else:
                mask[pads[0][0] : pads[0][0] + h, pads[1][0] : pads[1][0] + w] = 1
            counts = _windows(mask[None, None], span, strides, dilation).sum(axis=(-2, -1))[0, 0]
            share = g / np.maximum(counts, 1)

            def tap(i, j):
                return share

        acc = _scatter_taps(padded.shape, pool, strides, dilation, g.shape[2:], tap)
        (top, _), (left, _) = pads
        result = acc[:, :, top : top + x.shape[2], left : left + x.shape[3]]
        return to_layout(convert(result, x.dtype), "NCHW", layout)

    return run


impl("nn.max_pool2d_grad")(_pool_grad("max"))
impl("nn.avg_pool2d_grad")(_pool_grad("avg"))


# --- conv2d weight gradient -------------------------------------------------------------------


@impl("nn.conv2d_backward_weight")
def _conv2d_backward_weight(args, attrs, out):
    grad, data = args
    dt = out_dtype(out, attrs["out_dtype"], grad)
    g = convert(np.transpose(grad, layout_perm(attrs["data_layout"], "NCHW")), dt)
    x = convert(np.transpose(data, layout_perm(attrs["kernel_layout"], "NCHW")), dt)
    kernel = ints_n(attrs["kernel_size"], 2, "kernel_size")
    strides = ints_n(attrs["strides"], 2, "strides")
    dilation = ints_n(attrs["dilation"], 2, "dilation")
    pads = pad_pairs(attrs["padding"], 2)
    groups = attrs["groups"]
    n, c = x.shape[:2]
    o = g.shape[1]
    if c % groups or o % groups:
        raise EvalError(f"channels {c} -> {o} do not divide into groups={groups}")
    padded = np.pad(x, [(0, 0), (0, 0)] + list(pads))
    span = [(k - 1) * d + 1 for k, d in zip(kernel, dilation)]
    win = _windows(padded, span, strides, dilation)[:, :, : g.shape[2], : g.shape[3]]
    if win.shape[2:4] != g.shape[2:]:
        raise EvalError(f"grad {grad.shape} does not fit the convolution of data {data.shape}")
    win = win.reshape((n, groups, c // groups) + win.shape[2:])
    gg = g.reshape((n, groups, o // groups) + g.shape[2:])
    dw = np.einsum("ngcyxij,ngoyx->gocij", win, gg, optimize=True)
    dw = dw.reshape((o, c // groups) + tuple(kernel))
    return to_layout(dw, "OIHW", attrs["out_layout"] or "OIHW")
