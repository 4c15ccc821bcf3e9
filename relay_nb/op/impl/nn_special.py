"""numpy implementations of :mod:`relay_nb.op.nn_special` (TVM's ``topi.nn`` semantics).

* ``nn.correlation`` (``topi.nn.correlation_nchw``): both inputs are zero-padded; output
  channel ``q`` is the displacement ``((q // side - r) * stride2, (q % side - r) * stride2)``
  with ``r = max_displacement // stride2``, ``side = 2r + 1``; output pixel ``(i, j)``
  compares the patch at ``(i * stride1 + max_displacement, j * stride1 + max_displacement)``
  of data1 with the displaced patch of data2, summing ``a * b`` (or ``|a - b|``) over the
  channels and the ``kernel_size`` patch, divided by ``kernel_size^2 * C``.
* ``nn.deformable_conv2d`` (``topi.nn.deformable_conv2d_nchw``): tap ``(i, j)`` of output
  pixel ``(y, x)`` samples channel ``c`` at ``(y * s - pad + i * d + dy, x * s - pad + j * d +
  dx)`` where ``(dy, dx)`` are offset channels ``2 * (i * kw + j)`` and ``+1`` of the
  channel's deformable group (groups of ``2 * kh * kw`` offset channels); bilinear, zero
  outside ``[0, H) x [0, W)``, the upper neighbour clamped to the last row / column.
  The sampled columns are then contracted with the weight as a grouped convolution.
  Loops run over displacements / kernel taps and groups, never over pixels.
"""

from __future__ import annotations

import numpy as np

from ._util import convert, impl, ints_n, layout_perm, out_dtype, pad_pairs, to_layout


def _work(x: np.ndarray) -> np.ndarray:
    return x if x.dtype.kind == "f" else x.astype(np.float64)


@impl("nn.correlation")
def _correlation(args, attrs, out):
    a, b = (_work(v) for v in args)
    k, md = attrs["kernel_size"], attrs["max_displacement"]
    s1, s2 = attrs["stride1"], attrs["stride2"]
    pads = [(0, 0), (0, 0)] + pad_pairs(attrs["padding"], 2)
    pa, pb = np.pad(a, pads), np.pad(b, pads)
    n, c, hp, wp = pa.shape
    border = md + (k - 1) // 2
    oh, ow = (hp - 2 * border + s1 - 1) // s1, (wp - 2 * border + s1 - 1) // s1
    r = md // s2
    side = 2 * r + 1
    result = np.zeros((n, side * side, oh, ow), pa.dtype)
    rows, cols = np.arange(oh) * s1 + md, np.arange(ow) * s1 + md
    for q in range(side * side):
        dy, dx = (q // side - r) * s2, (q % side - r) * s2
        for i in range(k):
            for j in range(k):
                p1 = pa[:, :, rows[:, None] + i, cols[None, :] + j]
                p2 = pb[:, :, rows[:, None] + i + dy, cols[None, :] + j + dx]
                term = p1 * p2 if attrs["is_multiply"] else np.abs(p1 - p2)
                result[:, q] += term.sum(axis=1)
    return result / pa.dtype.type(k * k * c)


def bilinear_zero(x: np.ndarray, ys: np.ndarray, xs: np.ndarray) -> np.ndarray:
    """Sample ``x (N, C, H, W)`` at per-sample points ``ys, xs (N, *P)``: ``(N, C, *P)``;
    zero outside ``[0, H) x [0, W)`` (TVM's deformable sampling)."""
    n, c, h, w = x.shape
    outside = (ys < 0) | (xs < 0) | (ys >= h) | (xs >= w)
    y0 = np.clip(np.floor(ys), 0, h - 1).astype(np.int64)
    x0 = np.clip(np.floor(xs), 0, w - 1).astype(np.int64)
    y1, x1 = np.minimum(y0 + 1, h - 1), np.minimum(x0 + 1, w - 1)
    fy, fx = ys - np.floor(ys), xs - np.floor(xs)
    nn = np.arange(n).reshape((n,) + (1,) * (ys.ndim - 1))

    def at(yy, xx):  # (N, *P, C) -> (N, C, *P)
        return np.moveaxis(x[nn, :, yy, xx], -1, 1)

    def expand(v):
        return v[:, None]

    top = at(y0, x0) * expand(1 - fx) + at(y0, x1) * expand(fx)
    bottom = at(y1, x0) * expand(1 - fx) + at(y1, x1) * expand(fx)
    value = top * expand(1 - fy) + bottom * expand(fy)
    return np.where(expand(outside), 0, value)


@impl("nn.deformable_conv2d")
def _deformable_conv2d(args, attrs, out):
    data, offset, weight = args
    dl = attrs["data_layout"]
    dt = out_dtype(out, attrs["out_dtype"], data)
    x = _work(convert(np.transpose(data, layout_perm(dl, "NCHW")), dt))
    off = _work(np.transpose(offset, layout_perm(dl, "NCHW", "offset layout")))
    w = _work(convert(np.transpose(weight, layout_perm(attrs["kernel_layout"], "OIHW")), dt))
    strides = ints_n(attrs["strides"], 2, "strides")
    dilation = ints_n(attrs["dilation"], 2, "dilation")
    (top, _), (left, _) = pad_pairs(attrs["padding"], 2)
    groups, dg = attrs["groups"], attrs["deformable_groups"]
    n, c = x.shape[:2]
    o, cg, kh, kw = w.shape
    oh, ow = off.shape[2:]
    cpd = c // dg
    base_y = (np.arange(oh) * strides[0] - top)[None, :, None]
    base_x = (np.arange(ow) * strides[1] - left)[None, None, :]
    cols = np.empty((n, c, kh, kw, oh, ow), x.dtype)
    for g in range(dg):
        chans = x[:, g * cpd : (g + 1) * cpd]
        for i in range(kh):
            for j in range(kw):
                k = g * kh * kw * 2 + (i * kw + j) * 2
                ys = base_y + i * dilation[0] + off[:, k]
                xs = base_x + j * dilation[1] + off[:, k + 1]
                cols[:, g * cpd : (g + 1) * cpd, i, j] = bilinear_zero(chans, ys, xs)
    cols = cols.reshape(n, groups, cg, kh, kw, oh, ow)
    wg = w.reshape(groups, o // groups, cg, kh, kw)
    y = np.einsum("ngcijyx,gocij->ngoyx", cols, wg, optimize=True).reshape(n, o, oh, ow)
    return to_layout(y, "NCHW", attrs["out_layout"] or dl)
