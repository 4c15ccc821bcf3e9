"""ONNX converters for products, convolutions, pooling and normalization."""

from __future__ import annotations


import numpy as np

from ..ir.expr import Expr
from ..op import api as R
from ..op import nn
from .common import FrontendError, fold, is_static, shape_of
from .onnx_ops import _axis, _scalar, onnx_op


# --- matrix products --------------------------------------------------------------------


@onnx_op("MatMul")
def matmul(inputs, attrs, opset):
    return matmul_call(inputs[0], inputs[1])


def matmul_call(a: Expr, b: Expr) -> Expr:
    """numpy.matmul semantics (1-d operands, broadcast batch dims) in Relay products."""
    sa, sb = shape_of(a), shape_of(b)
    if len(sa) == 2 and len(sb) == 2:
        return nn.matmul(a, b)
    if len(sb) == 2 and len(sa) > 2:
        # (..., K) @ (K, N): one 2-d product over the flattened leading dims
        flat = R.reshape(a, (-1, sa[-1]))
        lead = tuple(-1 if type(d) is not int else d for d in sa[:-1])
        if lead.count(-1) > 1:
            raise FrontendError("MatMul with several dynamic leading dimensions is not supported")
        return R.reshape(nn.matmul(flat, b), lead + (sb[1],))
    if len(sa) == 1 or len(sb) == 1:
        a2 = R.expand_dims(a, 0) if len(sa) == 1 else a
        b2 = R.expand_dims(b, 1) if len(sb) == 1 else b
        out = matmul_nd(a2, b2)
        return R.squeeze(out, [-2] if len(sa) == 1 else [-1])
    return matmul_nd(a, b)


def matmul_nd(a: Expr, b: Expr) -> Expr:
    """Batched (..., M, K) @ (..., K, N) with numpy broadcasting of the batch dims."""
    sa, sb = shape_of(a), shape_of(b)
    batch = _broadcast(sa[:-2], sb[:-2])
    if not is_static(batch):
        return _matmul_dynamic_batch(a, b, sa, sb)
    n = int(np.prod(batch)) if batch else 1
    a3 = R.reshape(R.broadcast_to(a, batch + sa[-2:]) if tuple(sa[:-2]) != batch else a, (n,) + tuple(sa[-2:]))
    b3 = R.reshape(R.broadcast_to(b, batch + sb[-2:]) if tuple(sb[:-2]) != batch else b, (n,) + tuple(sb[-2:]))
    out = nn.batch_matmul(a3, b3, transpose_b=False)
    return R.reshape(out, batch + (sa[-2], sb[-1]))


def _matmul_dynamic_batch(a: Expr, b: Expr, sa: tuple, sb: tuple) -> Expr:
    """(B..., M, K) @ (B..., K, N) with one dynamic batch dim and no broadcasting."""
    same = len(sa) == len(sb) and all(
        (type(x) is int and x == y) or (type(x) is not int and type(y) is not int)
        for x, y in zip(sa[:-2], sb[:-2])
    )
    dynamic = [d for d in sa[:-2] if type(d) is not int]
    if not same or len(dynamic) != 1:
        raise FrontendError("MatMul with these dynamic batch dimensions is not supported")
    a3 = R.reshape(a, (-1,) + tuple(sa[-2:]))
    b3 = R.reshape(b, (-1,) + tuple(sb[-2:]))
    out = nn.batch_matmul(a3, b3, transpose_b=False)
    return R.reshape(out, tuple(-1 if type(d) is not int else d for d in sa[:-2]) + (sa[-2], sb[-1]))


def _broadcast(a: tuple, b: tuple) -> tuple:
    n = max(len(a), len(b))
    a, b = (1,) * (n - len(a)) + tuple(a), (1,) * (n - len(b)) + tuple(b)
    return tuple(y if x == 1 else x for x, y in zip(a, b))


@onnx_op("Gemm")
def gemm(inputs, attrs, opset):
    a, b = inputs[0], inputs[1]
    alpha, beta = float(attrs.get("alpha", 1.0)), float(attrs.get("beta", 1.0))
    if attrs.get("transA", 0):
        a = R.transpose(a, (1, 0))
    # dense computes a @ w.T, so torch's Linear (transB=1) maps to it directly
    w = b if attrs.get("transB", 0) else R.transpose(b, (1, 0))
    out = nn.dense(a, fold(w))
    if alpha != 1.0:
        out = R.multiply(out, _scalar(alpha, out))
    if inputs.has(2):
        c = inputs[2]
        if beta != 1.0:
            c = R.multiply(c, _scalar(beta, c))
        out = R.add(out, c)
    return out


# --- convolution and pooling ------------------------------------------------------------


def _pads(attrs, nd: int, spatial: tuple, kernel: list, strides: list, dilations: list) -> list:
    """ONNX ``pads`` (begins then ends), resolving ``auto_pad`` from the static shape."""
    auto = attrs.get("auto_pad", "NOTSET")
    if auto in ("SAME_UPPER", "SAME_LOWER"):
        if not is_static(spatial):
            raise FrontendError("auto_pad SAME needs static spatial dimensions")
        begins, ends = [], []
        for size, k, s, d in zip(spatial, kernel, strides, dilations):
            out = -(-size // s)
            total = max((out - 1) * s + (k - 1) * d + 1 - size, 0)
            small, big = total // 2, total - total // 2
            begins.append(small if auto == "SAME_UPPER" else big)
            ends.append(big if auto == "SAME_UPPER" else small)
        return begins + ends
    if auto == "VALID":
        return [0] * (2 * nd)
    return list(attrs.get("pads", [0] * (2 * nd)))


_CONV = {1: nn.conv1d, 2: nn.conv2d, 3: nn.conv3d}


@onnx_op("Conv")
def conv(inputs, attrs, opset):
    out = conv_call(inputs[0], inputs[1], attrs)
    return nn.bias_add(out, inputs[2], axis=1) if inputs.has(2) else out


def conv_call(x: Expr, w: Expr, attrs, out_dtype: str = "") -> Expr:
    """The N-d convolution of an ONNX Conv-like node (no bias)."""
    ws = shape_of(w)
    nd = len(ws) - 2
    kernel = list(attrs.get("kernel_shape", ws[2:]))
    strides = list(attrs.get("strides", [1] * nd))
    dil = list(attrs.get("dilations", [1] * nd))
    pads = _pads(attrs, nd, shape_of(x)[2:], kernel, strides, dil)
    return _CONV[nd](
        x, w, strides=strides, padding=pads, dilation=dil, groups=int(attrs.get("group", 1)),
        channels=ws[0], kernel_size=kernel, out_dtype=out_dtype,
    )


@onnx_op("ConvTranspose")
def conv_transpose(inputs, attrs, opset):
    x, w = inputs[0], inputs[1]
    ws, xs = shape_of(w), shape_of(x)
    if len(ws) != 4:
        raise FrontendError("only 2-d ConvTranspose is supported")
    groups = int(attrs.get("group", 1))
    kernel = list(attrs.get("kernel_shape", ws[2:]))
    strides = list(attrs.get("strides", [1, 1]))
    dil = list(attrs.get("dilations", [1, 1]))
    opad = list(attrs.get("output_padding", [0, 0]))
    full = [(xs[2 + i] - 1) * strides[i] + (kernel[i] - 1) * dil[i] + 1 + opad[i] for i in range(2)]
    if "output_shape" in attrs:
        total = [full[i] - int(attrs["output_shape"][-2 + i]) for i in range(2)]
        up = attrs.get("auto_pad", "NOTSET") != "SAME_LOWER"
        pads = [t // 2 if up else t - t // 2 for t in total] + [t - t // 2 if up else t // 2 for t in total]
    elif attrs.get("auto_pad", "NOTSET") in ("SAME_UPPER", "SAME_LOWER"):
        total = [full[i] - xs[2 + i] * strides[i] for i in range(2)]
        up = attrs["auto_pad"] == "SAME_UPPER"
        pads = [t // 2 if up else t - t // 2 for t in total] + [t - t // 2 if up else t // 2 for t in total]
    else:
        pads = list(attrs.get("pads", [0, 0, 0, 0]))
    out = nn.conv2d_transpose(
        x, w, strides=strides, padding=(0, 0), dilation=dil, groups=groups,
        channels=ws[1] * groups, kernel_size=kernel, output_padding=opad,
    )
    if any(pads):
        # crop begins/ends: conv2d_transpose's padding is symmetric only
        out = R.strided_slice(out, [pads[0], pads[1]], [full[0] - pads[2], full[1] - pads[3]], axes=[2, 3])
    return nn.bias_add(out, inputs[2], axis=1) if inputs.has(2) else out


_POOLS = {
    ("MaxPool", 1): nn.max_pool1d, ("MaxPool", 2): nn.max_pool2d, ("MaxPool", 3): nn.max_pool3d,
    ("AveragePool", 1): nn.avg_pool1d, ("AveragePool", 2): nn.avg_pool2d,
    ("AveragePool", 3): nn.avg_pool3d,
}


@onnx_op("MaxPool", "AveragePool")
def pool(inputs, attrs, opset):
    x = inputs[0]
    kernel = list(attrs["kernel_shape"])
    nd = len(kernel)
    strides = list(attrs.get("strides", [1] * nd))
    dil = list(attrs.get("dilations", [1] * nd))
    pads = _pads(attrs, nd, shape_of(x)[2:], kernel, strides, dil)
    kw = dict(pool_size=kernel, strides=strides, padding=pads, ceil_mode=bool(attrs.get("ceil_mode", 0)))
    if attrs["_op"] == "AveragePool":
        kw["count_include_pad"] = bool(attrs.get("count_include_pad", 0))
        if any(d != 1 for d in dil):
            raise FrontendError("AveragePool with dilations is not supported")
    else:
        kw["dilation"] = dil
    if attrs.get("_outputs", 1) > 1:
        raise FrontendError("MaxPool's Indices output is not supported")
    return _POOLS[(attrs["_op"], nd)](x, **kw)


@onnx_op("GlobalAveragePool", "GlobalMaxPool")
def global_pool(inputs, attrs, opset):
    x = inputs[0]
    rank = len(shape_of(x))
    if rank == 4:
        return (nn.global_avg_pool2d if attrs["_op"] == "GlobalAveragePool" else nn.global_max_pool2d)(x)
    axes = list(range(2, rank))
    return (R.mean if attrs["_op"] == "GlobalAveragePool" else R.max)(x, axes, keepdims=True)


@onnx_op("BatchNormalization")
def batch_norm(inputs, attrs, opset):
    if attrs.get("training_mode", 0):
        raise FrontendError("BatchNormalization in training mode is not supported")
    out = nn.batch_norm(*(inputs[i] for i in range(5)), epsilon=float(attrs.get("epsilon", 1e-5)))
    return out[0]


def _per_channel(v: Expr, rank: int) -> Expr:
    """A (C,) vector shaped (C, 1, ..., 1) to broadcast against NC... data."""
    return R.reshape(v, (-1,) + (1,) * (rank - 2))


@onnx_op("InstanceNormalization")
def instance_norm(inputs, attrs, opset):
    x, scale, bias = inputs[0], inputs[1], inputs[2]
    rank = len(shape_of(x))
    axes = list(range(2, rank))
    eps = float(attrs.get("epsilon", 1e-5))
    mean = R.mean(x, axes, keepdims=True)
    var = R.variance(x, axes, keepdims=True)
    norm = R.divide(R.subtract(x, mean), R.sqrt(R.add(var, _scalar(eps, x))))
    return R.add(R.multiply(norm, fold(_per_channel(scale, rank))), fold(_per_channel(bias, rank)))


@onnx_op("LayerNormalization")
def layer_norm(inputs, attrs, opset):
    x = inputs[0]
    rank = len(shape_of(x))
    axis = _axis(int(attrs.get("axis", -1)), rank)
    eps = float(attrs.get("epsilon", 1e-5))
    if attrs.get("_outputs", 1) > 1:
        raise FrontendError("LayerNormalization's Mean/InvStdDev outputs are not supported")
    scale = inputs[1]
    bias = inputs[2] if inputs.has(2) else None
    if axis == rank - 1:
        beta = bias if bias is not None else R.zeros_like(scale)
        return nn.layer_norm(x, scale, fold(beta), axis=-1, epsilon=eps)
    axes = list(range(axis, rank))
    mean = R.mean(x, axes, keepdims=True)
    var = R.variance(x, axes, keepdims=True)
    out = R.multiply(R.divide(R.subtract(x, mean), R.sqrt(R.add(var, _scalar(eps, x)))), scale)
    return R.add(out, bias) if bias is not None else out


@onnx_op("LRN")
def lrn(inputs, attrs, opset):
    # y = x / (bias + alpha/size * sum of x^2 over a window of `size` channels)^beta
    x = inputs[0]
    size = int(attrs["size"])
    alpha, beta = float(attrs.get("alpha", 1e-4)), float(attrs.get("beta", 0.75))
    bias = float(attrs.get("bias", 1.0))
    xs = shape_of(x)
    c = xs[1]
    before, after = (size - 1) // 2, size - 1 - (size - 1) // 2
    sq = nn.pad(R.multiply(x, x), [(0, 0), (before, after)] + [(0, 0)] * (len(xs) - 2))
    total = None
    for i in range(size):
        part = R.strided_slice(sq, [i], [i + c], axes=[1])
        total = part if total is None else R.add(total, part)
    denom = R.power(R.add(_scalar(bias, x), R.multiply(total, _scalar(alpha / size, x))), _scalar(beta, x))
    return R.divide(x, denom)


@onnx_op("Dropout")
def dropout(inputs, attrs, opset):
    x = inputs[0]
    if attrs.get("_outputs", 1) > 1:
        return [x, fold(R.ones(shape_of(x), "bool"))]
    return x
