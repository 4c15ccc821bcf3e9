"""ONNX quantization: Quantize/DequantizeLinear and the QLinear/Integer products, in exact
int32 arithmetic and ORT-style requantization (no ``qnn.*`` operator needed)."""

from __future__ import annotations


import numpy as np

from ..ir.expr import Expr
from ..op import api as R
from ..op import nn
from .common import FrontendError, dtype_of, fold, shape_of
from .onnx_ops import _axis, _round_even, onnx_op
from .onnx_nn import conv_call, matmul_call


def _q_axis_param(v: Expr, like: Expr, axis: int) -> Expr:
    s, r = shape_of(v), len(shape_of(like))
    if len(s) == 1 and r > 1 and s[0] != 1:
        a = _axis(axis, r)
        return R.reshape(v, tuple(-1 if i == a else 1 for i in range(r)))
    return v


@onnx_op("DequantizeLinear")
def dequantize(inputs, attrs, opset):
    if attrs.get("block_size", 0):
        raise FrontendError("blocked quantization (block_size) is not supported")
    x, scale = inputs[0], inputs[1]
    axis = int(attrs.get("axis", 1))
    out = R.cast(x, dtype_of(scale))
    if inputs.has(2):
        out = R.subtract(out, R.cast(_q_axis_param(inputs[2], x, axis), dtype_of(scale)))
    return R.multiply(out, _q_axis_param(scale, x, axis))


@onnx_op("QuantizeLinear")
def quantize(inputs, attrs, opset):
    if attrs.get("block_size", 0):
        raise FrontendError("blocked quantization (block_size) is not supported")
    x, scale = inputs[0], inputs[1]
    axis = int(attrs.get("axis", 1))
    dt = dtype_of(inputs[2]) if inputs.has(2) else "uint8"
    info = np.iinfo(dt)
    out = _round_even(R.divide(x, _q_axis_param(scale, x, axis)))
    if inputs.has(2):
        out = R.add(out, R.cast(_q_axis_param(inputs[2], x, axis), dtype_of(x)))
    return R.cast(R.clip(out, float(info.min), float(info.max)), dt)


def _int32_centered(q: Expr, zp: Expr | None, like: Expr, axis: int) -> Expr:
    """``int32(q) - int32(zero_point)``: the exact integer values a quantized tensor means."""
    out = R.cast(q, "int32")
    return out if zp is None else R.subtract(out, fold(R.cast(_q_axis_param(zp, like, axis), "int32")))


def _requantize(acc: Expr, multiplier: Expr, zp: Expr | None, dt: str) -> Expr:
    """int32 accumulators to ``dt``: round_half_even(acc * multiplier) + zp, saturated (as ORT)."""
    out = _round_even(R.multiply(R.cast(acc, "float32"), multiplier))
    if zp is not None:
        out = R.add(out, fold(R.cast(zp, "float32")))
    info = np.iinfo(dt)
    return R.cast(R.clip(out, float(info.min), float(info.max)), dt)


def _multiplier(inputs, ia: int, ib: int, iy: int, out_rank: int, channel_axis: int) -> Expr:
    """x_scale * w_scale / y_scale in float32 (per output channel when w_scale is a vector)."""
    m = fold(R.divide(R.multiply(inputs[ia], inputs[ib]), inputs[iy]))
    n = shape_of(m)
    if len(n) == 1 and n[0] != 1:
        a = _axis(channel_axis, out_rank)
        m = fold(R.reshape(m, tuple(-1 if i == a else 1 for i in range(out_rank))))
    return m


@onnx_op("QLinearConv")
def qlinear_conv(inputs, attrs, opset):
    # x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, B(int32)
    x, w = inputs[0], inputs[3]
    xi = _int32_centered(x, inputs[2], x, 1)
    wi = fold(_int32_centered(w, inputs[5], w, 0))
    acc = conv_call(xi, wi, attrs, out_dtype="int32")
    if inputs.has(8):
        acc = nn.bias_add(acc, inputs[8], axis=1)
    m = _multiplier(inputs, 1, 4, 6, len(shape_of(x)), 1)
    return _requantize(acc, m, inputs[7], dtype_of(inputs[7]))


@onnx_op("QLinearMatMul")
def qlinear_matmul(inputs, attrs, opset):
    # a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp
    a, b = inputs[0], inputs[3]
    if any(d != 1 for d in shape_of(inputs[1])):
        raise FrontendError("QLinearMatMul with a per-row a_scale is not supported")
    # a's zero point may be per row (axis -2), b's per column (axis -1)
    acc = matmul_call(_int32_centered(a, inputs[2], a, -2), fold(_int32_centered(b, inputs[5], b, -1)))
    m = _multiplier(inputs, 1, 4, 6, len(shape_of(acc)), -1)
    return _requantize(acc, m, inputs[7], dtype_of(inputs[7]))


@onnx_op("ConvInteger")
def conv_integer(inputs, attrs, opset):
    x, w = inputs[0], inputs[1]
    xi = _int32_centered(x, inputs[2] if inputs.has(2) else None, x, 1)
    wi = fold(_int32_centered(w, inputs[3] if inputs.has(3) else None, w, 0))
    return conv_call(xi, wi, attrs, out_dtype="int32")


@onnx_op("MatMulInteger")
def matmul_integer(inputs, attrs, opset):
    a, b = inputs[0], inputs[1]
    ai = _int32_centered(a, inputs[2] if inputs.has(2) else None, a, -2)
    bi = fold(_int32_centered(b, inputs[3] if inputs.has(3) else None, b, -1))
    return matmul_call(ai, bi)
