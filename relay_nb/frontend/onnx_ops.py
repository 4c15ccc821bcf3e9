"""The ONNX operator table: ``ONNX_OPS[op_type](inputs, attrs, opset) -> Relay``.

Each converter is a short function (tinygrad's style, not TVM's class per op with
``_impl_vN`` methods): ``inputs`` is an :class:`~relay_nb.frontend.onnx.Inputs`
(expressions, static values and shapes), ``attrs`` the node's attributes as Python values
(plus ``_outputs``, the node's output count), ``opset`` the model's default-domain opset.
A converter returns one expression, a tuple-typed expression, or a list (one per output).

Ops that need a Relay operator the registry may not have (``topk``, ``cumsum``, ...) are
listed in :data:`NEEDS`; while that operator is missing the ONNX op counts as unsupported.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from .. import op as _op_pkg  # noqa: F401  (registers the operators)
from ..ir.expr import Expr, Tuple, const
from ..ir.ty import Any as AnyDim
from ..op import api as R
from ..op import nn
from ..op._common import call
from ..op.registry import has_op
from .common import Dim, FrontendError, dtype_of, fold, is_static, shape_elements, shape_of, type_of
from .onnx import elem_dtype

ONNX_OPS: dict[str, Callable[..., Any]] = {}

# ONNX op -> Relay ops it needs that other branches add; see missing_relay_ops().
NEEDS: dict[str, tuple[str, ...]] = {
    "TopK": ("topk",),
    "CumSum": ("cumsum",),
    "GatherElements": ("gather",),
    "GatherND": ("gather_nd",),
    "OneHot": ("one_hot",),
    "Einsum": ("einsum",),
    "ScatterElements": ("scatter_elements",),
    "Scatter": ("scatter_elements",),
    "ScatterND": ("scatter_nd",),
    "Hardmax": ("one_hot",),
}


def missing_relay_ops() -> dict[str, list[str]]:
    """ONNX op -> the Relay operators it needs that are not registered (yet)."""
    out = {}
    for onnx_op, needs in NEEDS.items():
        gone = [n for n in needs if not has_op(n)]
        if gone:
            out[onnx_op] = gone
    return out


def onnx_op(*names: str) -> Callable:
    def deco(fn: Callable) -> Callable:
        for n in names:
            ONNX_OPS[n] = fn
        return fn

    return deco


# --- small helpers ----------------------------------------------------------------------


def _axis(a: int, rank: int) -> int:
    return a + rank if a < 0 else a


def _ints(v: Any) -> list[int]:
    return [int(x) for x in np.asarray(v).reshape(-1)]


def _scalar(value: float, like: Expr) -> Expr:
    return const(np.asarray(value, dtype=dtype_of(like)))


def _static(inputs, i: int, what: str) -> np.ndarray:
    v = inputs.value(i)
    if v is None:
        raise FrontendError(f"{what} must be a constant (or computable from shapes)")
    return v


def _axes_arg(inputs, attrs, i: int, since: int, opset: int):
    """Axes from attribute ``axes`` (before ``since``) or input ``i`` (from ``since``)."""
    if opset >= since and inputs.has(i):
        return _ints(_static(inputs, i, "axes"))
    return list(attrs["axes"]) if "axes" in attrs else None


# --- elementwise ------------------------------------------------------------------------

_UNARY = {
    "Relu": nn.relu, "Sigmoid": R.sigmoid, "Tanh": R.tanh, "Sqrt": R.sqrt, "Exp": R.exp,
    "Log": R.log, "Neg": R.negative, "Abs": R.abs, "Erf": R.erf, "Floor": R.floor,
    "Ceil": R.ceil, "Sin": R.sin, "Cos": R.cos, "Sign": R.sign, "Not": R.logical_not,
    "Identity": lambda x: x, "IsNaN": R.isnan, "Tan": R.tan, "Asin": R.asin, "Acos": R.acos,
    "Atan": R.atan, "Sinh": R.sinh, "Cosh": R.cosh, "Asinh": R.asinh, "Acosh": R.acosh,
    "Atanh": R.atanh, "BitwiseNot": R.bitwise_not,
}
for _name, _fn in _UNARY.items():
    ONNX_OPS[_name] = (lambda fn: lambda inputs, attrs, opset: fn(inputs[0]))(_fn)

_BINARY = {
    "Add": R.add, "Sub": R.subtract, "Mul": R.multiply, "Equal": R.equal, "Less": R.less,
    "Greater": R.greater, "LessOrEqual": R.less_equal, "GreaterOrEqual": R.greater_equal,
    "And": R.logical_and, "Or": R.logical_or, "Xor": R.logical_xor,
    "BitwiseAnd": R.bitwise_and, "BitwiseOr": R.bitwise_or, "BitwiseXor": R.bitwise_xor,
}
for _name, _fn in _BINARY.items():
    ONNX_OPS[_name] = (lambda fn: lambda inputs, attrs, opset: fn(inputs[0], inputs[1]))(_fn)


def _round_even(x: Expr) -> Expr:
    """Round half to even, as ONNX (Relay's ``round`` rounds halves away from zero)."""
    f = R.floor(x)
    d = R.subtract(x, f)
    half = _scalar(0.5, x)
    tie = R.add(f, R.floor_mod(f, _scalar(2.0, x)))  # f + (f mod 2): the even neighbour
    up = R.add(f, _scalar(1.0, x))
    return R.where(R.greater(d, half), up, R.where(R.less(d, half), f, tie))


@onnx_op("Round")
def round_(inputs, attrs, opset):
    return _round_even(inputs[0])


@onnx_op("Div")
def div(inputs, attrs, opset):
    a, b = inputs[0], inputs[1]
    # integer Div truncates toward zero in ONNX (C semantics)
    return R.trunc_divide(a, b) if "int" in dtype_of(a) else R.divide(a, b)


@onnx_op("Mod")
def mod(inputs, attrs, opset):
    fmod = attrs.get("fmod", 0)
    return (R.trunc_mod if fmod else R.floor_mod)(inputs[0], inputs[1])


@onnx_op("Pow")
def pow_(inputs, attrs, opset):
    x, y = inputs[0], inputs[1]
    if dtype_of(y) != dtype_of(x):
        y = R.cast(y, dtype_of(x))
    return R.power(x, y)


@onnx_op("Reciprocal")
def reciprocal(inputs, attrs, opset):
    return R.divide(_scalar(1.0, inputs[0]), inputs[0])


@onnx_op("Sum", "Max", "Min", "Mean")
def variadic(inputs, attrs, opset, _fns={"Sum": R.add, "Max": R.maximum, "Min": R.minimum}):
    kind = attrs["_op"]
    args = [inputs[i] for i in range(len(inputs)) if inputs.has(i)]
    out = args[0]
    for a in args[1:]:
        out = _fns.get(kind, R.add)(out, a)
    if kind == "Mean":
        out = R.divide(out, _scalar(float(len(args)), out))
    return out


@onnx_op("LeakyRelu")
def leaky_relu(inputs, attrs, opset):
    return nn.leaky_relu(inputs[0], alpha=float(attrs.get("alpha", 0.01)))


@onnx_op("PRelu")
def prelu(inputs, attrs, opset):
    x, slope = inputs[0], inputs[1]
    # slope broadcasts (unidirectionally) against x: max(0,x) + slope*min(0,x)
    zero = _scalar(0.0, x)
    return R.add(R.maximum(x, zero), R.multiply(slope, R.minimum(x, zero)))


@onnx_op("Elu")
def elu(inputs, attrs, opset):
    x, alpha = inputs[0], float(attrs.get("alpha", 1.0))
    neg = R.multiply(_scalar(alpha, x), R.subtract(R.exp(x), _scalar(1.0, x)))
    return R.where(R.greater(x, _scalar(0.0, x)), x, neg)


@onnx_op("Selu")
def selu(inputs, attrs, opset):
    x = inputs[0]
    alpha = float(attrs.get("alpha", 1.67326319217681884765625))
    gamma = float(attrs.get("gamma", 1.05070102214813232421875))
    neg = R.multiply(_scalar(alpha, x), R.subtract(R.exp(x), _scalar(1.0, x)))
    return R.multiply(_scalar(gamma, x), R.where(R.greater(x, _scalar(0.0, x)), x, neg))


@onnx_op("Softplus")
def softplus(inputs, attrs, opset):
    x = inputs[0]
    return R.log(R.add(R.exp(x), _scalar(1.0, x)))


@onnx_op("Softsign")
def softsign(inputs, attrs, opset):
    x = inputs[0]
    return R.divide(x, R.add(R.abs(x), _scalar(1.0, x)))


@onnx_op("Mish")
def mish(inputs, attrs, opset):
    x = inputs[0]
    return R.multiply(x, R.tanh(softplus(inputs, attrs, opset)))


@onnx_op("Celu")
def celu(inputs, attrs, opset):
    # max(0, x) + min(0, alpha * (exp(x / alpha) - 1))
    x, alpha = inputs[0], float(attrs.get("alpha", 1.0))
    neg = R.multiply(_scalar(alpha, x), R.subtract(R.exp(R.divide(x, _scalar(alpha, x))), _scalar(1.0, x)))
    return R.add(R.maximum(x, _scalar(0.0, x)), R.minimum(neg, _scalar(0.0, x)))


@onnx_op("ThresholdedRelu")
def thresholded_relu(inputs, attrs, opset):
    x = inputs[0]
    return R.where(R.greater(x, _scalar(float(attrs.get("alpha", 1.0)), x)), x, R.zeros_like(x))


@onnx_op("Shrink")
def shrink(inputs, attrs, opset):
    x = inputs[0]
    lambd, bias = float(attrs.get("lambd", 0.5)), float(attrs.get("bias", 0.0))
    lo = R.where(R.less(x, _scalar(-lambd, x)), R.add(x, _scalar(bias, x)), R.zeros_like(x))
    return R.where(R.greater(x, _scalar(lambd, x)), R.subtract(x, _scalar(bias, x)), lo)


@onnx_op("IsInf")
def is_inf(inputs, attrs, opset):
    x = inputs[0]
    pos, neg = attrs.get("detect_positive", 1), attrs.get("detect_negative", 1)
    inf = R.isinf(x)
    if pos and neg:
        return inf
    sign = R.greater(x, _scalar(0.0, x)) if pos else R.less(x, _scalar(0.0, x))
    return R.logical_and(inf, sign) if (pos or neg) else R.logical_and(inf, R.logical_not(inf))


@onnx_op("BitShift")
def bit_shift(inputs, attrs, opset):
    fn = R.left_shift if attrs["direction"] == "LEFT" else R.right_shift
    return fn(inputs[0], inputs[1])


@onnx_op("LpNormalization")
def lp_normalization(inputs, attrs, opset):
    x = inputs[0]
    axis, p = int(attrs.get("axis", -1)), int(attrs.get("p", 2))
    norm = R.sum(R.abs(x), [axis], keepdims=True) if p == 1 else R.sqrt(R.sum(R.multiply(x, x), [axis], keepdims=True))
    return R.divide(x, norm)


@onnx_op("MeanVarianceNormalization")
def mean_variance_normalization(inputs, attrs, opset):
    x = inputs[0]
    axes = list(attrs.get("axes", [0, 2, 3]))
    mean = R.mean(x, axes, keepdims=True)
    var = R.variance(x, axes, keepdims=True)
    return R.divide(R.subtract(x, mean), R.add(R.sqrt(var), _scalar(1e-9, x)))


@onnx_op("HardSigmoid")
def hard_sigmoid(inputs, attrs, opset):
    x = inputs[0]
    alpha, beta = float(attrs.get("alpha", 0.2)), float(attrs.get("beta", 0.5))
    return R.clip(R.add(R.multiply(x, _scalar(alpha, x)), _scalar(beta, x)), 0.0, 1.0)


@onnx_op("HardSwish")
def hard_swish(inputs, attrs, opset):
    x = inputs[0]
    gate = R.clip(R.add(R.multiply(x, _scalar(1.0 / 6.0, x)), _scalar(0.5, x)), 0.0, 1.0)
    return R.multiply(x, gate)


@onnx_op("Gelu")
def gelu(inputs, attrs, opset):
    x = inputs[0]
    if attrs.get("approximate", "none") == "tanh":
        # 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
        inner = R.add(x, R.multiply(_scalar(0.044715, x), R.multiply(x, R.multiply(x, x))))
        t = R.tanh(R.multiply(_scalar(math.sqrt(2.0 / math.pi), x), inner))
    else:
        t = R.erf(R.multiply(x, _scalar(1.0 / math.sqrt(2.0), x)))
    return R.multiply(R.multiply(_scalar(0.5, x), x), R.add(_scalar(1.0, x), t))


@onnx_op("Clip")
def clip(inputs, attrs, opset):
    x = inputs[0]
    if opset < 11:
        return R.clip(x, float(attrs.get("min", -np.inf)), float(attrs.get("max", np.inf)))
    out = x
    for i, fn in ((1, R.maximum), (2, R.minimum)):
        if not inputs.has(i):
            continue
        v = inputs.value(i)
        # a constant bound stays an attribute of clip; a computed one becomes max/min
        out = fn(out, inputs[i] if v is None else _scalar(float(v), x))
    if all(inputs.value(i) is not None or not inputs.has(i) for i in (1, 2)):
        lo = float(inputs.value(1)) if inputs.has(1) else -np.inf
        hi = float(inputs.value(2)) if inputs.has(2) else np.inf
        return R.clip(x, lo, hi)
    return out


@onnx_op("Where")
def where(inputs, attrs, opset):
    return R.where(inputs[0], inputs[1], inputs[2])


@onnx_op("Cast")
def cast(inputs, attrs, opset):
    return R.cast(inputs[0], elem_dtype(int(attrs["to"])))


@onnx_op("CastLike")
def cast_like(inputs, attrs, opset):
    return R.cast(inputs[0], dtype_of(inputs[1]))


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


# --- softmax and reductions -------------------------------------------------------------


@onnx_op("Softmax", "LogSoftmax")
def softmax(inputs, attrs, opset):
    x = inputs[0]
    fn = nn.softmax if attrs["_op"] == "Softmax" else nn.log_softmax
    shape = shape_of(x)
    if opset >= 13:
        return fn(x, axis=int(attrs.get("axis", -1)))
    # before opset 13 the input is coerced to 2-d at `axis` (default 1)
    axis = _axis(int(attrs.get("axis", 1)), len(shape))
    if axis == len(shape) - 1:
        return fn(x, axis=-1)
    flat = R.reshape(x, (int(np.prod(shape[:axis])), -1))
    return R.reshape(fn(flat, axis=1), shape)


_REDUCE = {
    "ReduceMean": R.mean, "ReduceSum": R.sum, "ReduceMax": R.max, "ReduceMin": R.min,
    "ReduceProd": R.prod,
}


@onnx_op(*_REDUCE, "ReduceL1", "ReduceL2", "ReduceSumSquare", "ReduceLogSumExp", "ReduceLogSum")
def reduce(inputs, attrs, opset):
    kind, x = attrs["_op"], inputs[0]
    since = 13 if kind == "ReduceSum" else 18
    axes = _axes_arg(inputs, attrs, 1, since, opset)
    keep = bool(attrs.get("keepdims", 1))
    if not axes:
        if attrs.get("noop_with_empty_axes", 0):
            return x
        axes = None
    if kind in _REDUCE:
        return _REDUCE[kind](x, axes, keepdims=keep)
    if kind == "ReduceL1":
        return R.sum(R.abs(x), axes, keepdims=keep)
    if kind == "ReduceL2":
        return R.sqrt(R.sum(R.multiply(x, x), axes, keepdims=keep))
    if kind == "ReduceSumSquare":
        return R.sum(R.multiply(x, x), axes, keepdims=keep)
    if kind == "ReduceLogSum":
        return R.log(R.sum(x, axes, keepdims=keep))
    m = R.max(x, axes, keepdims=True)
    out = R.add(R.log(R.sum(R.exp(R.subtract(x, m)), axes, keepdims=True)), m)
    return out if keep else R.squeeze(out, axes if axes is not None else None)


@onnx_op("ArgMax", "ArgMin")
def arg_reduce(inputs, attrs, opset):
    fn = R.argmax if attrs["_op"] == "ArgMax" else R.argmin
    out = fn(
        inputs[0], axis=[int(attrs.get("axis", 0))], keepdims=bool(attrs.get("keepdims", 1)),
        select_last_index=bool(attrs.get("select_last_index", 0)),
    )
    return R.cast(out, "int64")


# --- shapes and data movement -----------------------------------------------------------


@onnx_op("Shape")
def shape(inputs, attrs, opset):
    s = shape_of(inputs[0])
    start, end = int(attrs.get("start", 0)), attrs.get("end")
    if is_static(s):
        return const(np.asarray(s, dtype="int64")[start:end])
    out = R.shape_of(inputs[0], "int64")
    if start or end is not None:
        out = R.strided_slice(out, [start], [len(s) if end is None else int(end)])
    return out


@onnx_op("Size")
def size(inputs, attrs, opset):
    s = shape_of(inputs[0])
    if is_static(s):
        return const(np.asarray(int(np.prod(s)), dtype="int64"))
    return R.prod(R.shape_of(inputs[0], "int64"))


@onnx_op("Constant")
def constant(inputs, attrs, opset):
    for key, dt in (("value", None), ("value_float", "float32"), ("value_floats", "float32"),
                    ("value_int", "int64"), ("value_ints", "int64")):
        if key in attrs:
            return const(np.asarray(attrs[key], dtype=dt))
    raise FrontendError(f"Constant with attributes {sorted(attrs)} is not supported")


@onnx_op("ConstantOfShape")
def constant_of_shape(inputs, attrs, opset):
    value = np.asarray(attrs.get("value", np.zeros(1, "float32"))).reshape(-1)
    fill = const(value[0])
    s = inputs.value(0)
    if s is None:
        return call("dyn.full", fill, inputs[0], dtype=str(value.dtype))
    return R.full(fill, tuple(_ints(s)), str(value.dtype))


@onnx_op("Reshape")
def reshape(inputs, attrs, opset):
    x = inputs[0]
    s = inputs.value(1)
    allowzero = bool(attrs.get("allowzero", 0))
    if s is None:
        static = _partly_known_shape(x, inputs[1]) if not allowzero else None
        if static is None:
            return call("dyn.reshape", x, inputs[1], allowzero=allowzero)
        return R.reshape(x, static)
    return R.reshape(x, tuple(_ints(s)), allowzero=allowzero)


def _partly_known_shape(x: Expr, shape: Expr):
    """A static ``newshape`` for a computed shape: x's own dims become 0, one unknown -1."""
    elems = shape_elements(shape)
    if elems is None:
        return None
    out = []
    for i, e in enumerate(elems):
        if isinstance(e, Dim):
            # 0 copies x's dim i: right when the element *is* that dim
            e = 0 if e.src is x and e.axis == i else None
        out.append(e)
    unknown = [i for i, e in enumerate(out) if e is None]
    if len(unknown) > 1 or (unknown and -1 in out):
        return None
    return tuple(-1 if e is None else e for e in out)


@onnx_op("Flatten")
def flatten(inputs, attrs, opset):
    x = inputs[0]
    s = shape_of(x)
    axis = _axis(int(attrs.get("axis", 1)), len(s))
    if is_static(s):
        return R.reshape(x, (int(np.prod(s[:axis])), int(np.prod(s[axis:]))))
    if is_static(s[axis:]):
        return R.reshape(x, (-1, int(np.prod(s[axis:]))))
    if axis == 1:
        return nn.batch_flatten(x)
    raise FrontendError("Flatten of this dynamic shape is not supported")


@onnx_op("Transpose")
def transpose(inputs, attrs, opset):
    perm = attrs.get("perm")
    return R.transpose(inputs[0], tuple(perm) if perm is not None else None)


@onnx_op("Concat")
def concat(inputs, attrs, opset):
    args = [inputs[i] for i in range(len(inputs)) if inputs.has(i)]
    return R.concatenate(args, int(attrs["axis"]))


@onnx_op("Split")
def split(inputs, attrs, opset):
    x = inputs[0]
    s = shape_of(x)
    axis = _axis(int(attrs.get("axis", 0)), len(s))
    sizes = _ints(inputs.value(1)) if opset >= 13 and inputs.has(1) else attrs.get("split")
    n = attrs.get("num_outputs", attrs["_outputs"])
    if sizes is None:
        if not isinstance(s[axis], int):
            return R.split(x, n, axis)
        chunk = -(-s[axis] // n)
        sizes = [min(chunk, s[axis] - i * chunk) for i in range(n)]
    points = list(np.cumsum(sizes)[:-1])
    out = R.split(x, [int(p) for p in points], axis) if points else None
    return [x] if out is None else [out[i] for i in range(len(sizes))]


@onnx_op("Slice")
def slice_(inputs, attrs, opset):
    x = inputs[0]
    s = shape_of(x)
    if opset < 10:
        starts, ends = list(attrs["starts"]), list(attrs["ends"])
        axes, steps = attrs.get("axes"), None
    else:
        starts, ends = _ints(_static(inputs, 1, "starts")), _ints(_static(inputs, 2, "ends"))
        axes = _ints(inputs.value(3)) if inputs.has(3) else None
        steps = _ints(inputs.value(4)) if inputs.has(4) else None
    axes = [_axis(a, len(s)) for a in (axes if axes is not None else range(len(starts)))]
    steps = steps or [1] * len(starts)
    out = x
    begin, end, stride, sl_axes = [], [], [], []
    for a, b, e, st in zip(axes, starts, ends, steps):
        dim = s[a]
        if not isinstance(dim, int):
            raise FrontendError("Slice of a dynamic dimension is not supported")
        b, e, st = slice(b, e, st).indices(dim)
        if st < 0:
            # walk a reversed axis forwards: index i there is dim-1-i here
            out = R.reverse(out, a)
            b, e, st = dim - 1 - b, dim - 1 - e, -st
        begin.append(b), end.append(max(e, b)), stride.append(st), sl_axes.append(a)
    return R.strided_slice(out, begin, end, stride, axes=sl_axes)


@onnx_op("Squeeze")
def squeeze(inputs, attrs, opset):
    axes = _axes_arg(inputs, attrs, 1, 13, opset)
    return R.squeeze(inputs[0], axes if axes else None)


@onnx_op("Unsqueeze")
def unsqueeze(inputs, attrs, opset):
    axes = _axes_arg(inputs, attrs, 1, 13, opset)
    x = inputs[0]
    rank = len(shape_of(x)) + len(axes)
    for a in sorted(_axis(a, rank) for a in axes):
        x = R.expand_dims(x, a)
    return x


@onnx_op("Gather")
def gather(inputs, attrs, opset):
    x, idx = inputs[0], inputs[1]
    s = shape_of(x)
    axis = _axis(int(attrs.get("axis", 0)), len(s))
    v = inputs.value(1)
    if v is not None and isinstance(s[axis], int):
        # negative indices count from the end
        idx = const(np.where(v < 0, v + s[axis], v).astype(v.dtype))
    else:
        dt = dtype_of(idx)
        dim = const(np.asarray(s[axis], dt)) if isinstance(s[axis], int) else R.take(R.shape_of(x, dt), const(axis))
        idx = R.where(R.less(idx, R.cast(const(0), dtype_of(idx))), R.add(idx, dim), idx)
    return R.take(x, idx, axis=axis)


@onnx_op("Expand")
def expand(inputs, attrs, opset):
    x = inputs[0]
    target = inputs.value(1)
    if target is None:
        return call("dyn.broadcast_to", x, inputs[1])
    # ONNX Expand broadcasts both ways: a 1 in the target keeps x's dim
    return R.broadcast_to(x, _broadcast(shape_of(x), tuple(_ints(target))))


@onnx_op("Tile")
def tile(inputs, attrs, opset):
    return R.tile(inputs[0], tuple(_ints(_static(inputs, 1, "repeats"))))


@onnx_op("Range")
def range_(inputs, attrs, opset):
    vals = [inputs.value(i) for i in range(3)]
    dt = dtype_of(inputs[0])
    if all(v is not None for v in vals):
        return const(np.arange(vals[0], vals[1], vals[2]).astype(dt))
    return R.arange(inputs[0], inputs[1], inputs[2], dtype=dt)


@onnx_op("Pad")
def pad(inputs, attrs, opset):
    x = inputs[0]
    rank = len(shape_of(x))
    if opset < 11:
        pads, value = list(attrs["pads"]), float(attrs.get("value", 0.0))
    else:
        pads = _ints(_static(inputs, 1, "pads"))
        value = float(inputs.value(2)) if inputs.has(2) else 0.0
    axes = _ints(inputs.value(3)) if opset >= 18 and inputs.has(3) else list(range(rank))
    width = [(0, 0)] * rank
    n = len(axes)
    for j, a in enumerate(axes):
        width[_axis(a, rank)] = (pads[j], pads[j + n])
    mode = attrs.get("mode", "constant")
    return nn.pad(x, width, value, pad_mode={"constant": "constant", "reflect": "reflect", "edge": "edge"}[mode])


@onnx_op("DepthToSpace")
def depth_to_space(inputs, attrs, opset):
    x = inputs[0]
    n, c, h, w = shape_of(x)
    b = int(attrs["blocksize"])
    if attrs.get("mode", "DCR") == "DCR":
        t = R.transpose(R.reshape(x, (n, b, b, c // (b * b), h, w)), (0, 3, 4, 1, 5, 2))
    else:
        t = R.transpose(R.reshape(x, (n, c // (b * b), b, b, h, w)), (0, 1, 4, 2, 5, 3))
    return R.reshape(t, (n, c // (b * b), h * b, w * b))


@onnx_op("SpaceToDepth")
def space_to_depth(inputs, attrs, opset):
    x = inputs[0]
    n, c, h, w = shape_of(x)
    b = int(attrs["blocksize"])
    t = R.transpose(R.reshape(x, (n, c, h // b, b, w // b, b)), (0, 3, 5, 1, 2, 4))
    return R.reshape(t, (n, c * b * b, h // b, w // b))


@onnx_op("Trilu")
def trilu(inputs, attrs, opset):
    x = inputs[0]
    s = shape_of(x)
    if not is_static(s[-2:]):
        raise FrontendError("Trilu needs static last two dimensions")
    k = int(inputs.value(1)) if inputs.has(1) else 0
    ones = np.ones(s[-2:], dtype=bool)
    mask = np.triu(ones, k) if attrs.get("upper", 1) else np.tril(ones, k)
    return R.where(const(mask), x, R.zeros_like(x))


@onnx_op("Resize", "Upsample")
def resize(inputs, attrs, opset):
    x = inputs[0]
    s = shape_of(x)
    if len(s) != 4:
        raise FrontendError("only 4-d (NCHW) Resize is supported")
    if attrs["_op"] == "Upsample" or opset < 11:
        scales = attrs.get("scales")
        scales = list(scales) if scales is not None else list(_static(inputs, 1, "scales"))
        sizes = None
    else:
        scales = inputs.value(2) if inputs.has(2) else None
        scales = list(scales) if scales is not None and np.size(scales) else None
        sizes = _ints(_static(inputs, 3, "sizes")) if inputs.has(3) else None
    if sizes is None:
        sizes = [int(math.floor(d * float(f))) for d, f in zip(s, scales)]
    mode = attrs.get("mode", "nearest")
    method = {"nearest": "nearest_neighbor", "linear": "linear", "bilinear": "linear", "cubic": "cubic"}[mode]
    ctm = attrs.get("coordinate_transformation_mode", "half_pixel" if opset >= 11 else "asymmetric")
    if mode == "nearest" and opset < 11:
        rounding = "floor"
    else:
        rounding = attrs.get("nearest_mode", "round_prefer_floor") if method == "nearest_neighbor" else ""
    from ..op.image import resize2d

    return resize2d(
        x, sizes[2:], method=method, coordinate_transformation_mode=ctm, rounding_method=rounding,
        cubic_alpha=float(attrs.get("cubic_coeff_a", -0.75)), cubic_exclude=int(attrs.get("exclude_outside", 0)),
        extrapolation_value=float(attrs.get("extrapolation_value", 0.0)),
    )


# --- quantization (float arithmetic; QLinear* would need qnn.*) -------------------------


def _q_axis_param(v: Expr, like: Expr, axis: int) -> Expr:
    s, r = shape_of(v), len(shape_of(like))
    if len(s) == 1 and r > 1 and s[0] != 1:
        a = _axis(axis, r)
        return R.reshape(v, tuple(-1 if i == a else 1 for i in range(r)))
    return v


@onnx_op("DequantizeLinear")
def dequantize(inputs, attrs, opset):
    x, scale = inputs[0], inputs[1]
    axis = int(attrs.get("axis", 1))
    out = R.cast(x, dtype_of(scale))
    if inputs.has(2):
        out = R.subtract(out, R.cast(_q_axis_param(inputs[2], x, axis), dtype_of(scale)))
    return R.multiply(out, _q_axis_param(scale, x, axis))


@onnx_op("QuantizeLinear")
def quantize(inputs, attrs, opset):
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


# --- ops on Relay operators other branches add -------------------------------------------


@onnx_op("TopK")
def topk(inputs, attrs, opset):
    k = int(_static(inputs, 1, "K").reshape(-1)[0]) if opset >= 10 else int(attrs["k"])
    out = call(
        "topk", inputs[0], k=k, axis=int(attrs.get("axis", -1)), ret_type="both",
        is_ascend=not bool(attrs.get("largest", 1)), dtype="int64",
    )
    return out


@onnx_op("CumSum")
def cumsum(inputs, attrs, opset):
    x = inputs[0]
    axis = int(_static(inputs, 1, "axis").reshape(-1)[0])
    if attrs.get("reverse", 0):
        x = R.reverse(x, axis)
    out = call("cumsum", x, axis=axis, exclusive=bool(attrs.get("exclusive", 0)))
    return R.reverse(out, axis) if attrs.get("reverse", 0) else out


@onnx_op("GatherElements")
def gather_elements(inputs, attrs, opset):
    return call("gather", inputs[0], inputs[1], axis=int(attrs.get("axis", 0)))


@onnx_op("GatherND")
def gather_nd(inputs, attrs, opset):
    idx = inputs[1]
    rank = len(shape_of(idx))
    # Relay's gather_nd takes the index tuple on the first axis
    idx = R.transpose(idx, (rank - 1,) + tuple(range(rank - 1)))
    return call("gather_nd", inputs[0], idx, batch_dims=int(attrs.get("batch_dims", 0)))


@onnx_op("OneHot")
def one_hot(inputs, attrs, opset):
    depth = int(_static(inputs, 1, "depth").reshape(-1)[0])
    values = inputs[2]
    idx = inputs[0]
    # negative indices count back from depth
    neg = R.less(idx, fold(R.cast(const(0), dtype_of(idx))))
    idx = R.where(neg, R.add(idx, fold(R.cast(const(depth), dtype_of(idx)))), idx)
    off = R.take(values, const(0))
    on = R.take(values, const(1))
    return call("one_hot", idx, on, off, depth=depth, axis=int(attrs.get("axis", -1)), dtype=dtype_of(values))


@onnx_op("ScatterElements", "Scatter")
def scatter_elements(inputs, attrs, opset):
    reduction = attrs.get("reduction", "none")
    return call("scatter_elements", inputs[0], inputs[1], inputs[2], axis=int(attrs.get("axis", 0)),
                reduction="update" if reduction == "none" else reduction)


@onnx_op("ScatterND")
def scatter_nd(inputs, attrs, opset):
    idx = inputs[1]
    rank = len(shape_of(idx))
    # Relay's scatter_nd, as its gather_nd, takes the index tuple on the first axis
    idx = R.transpose(idx, (rank - 1,) + tuple(range(rank - 1)))
    reduction = attrs.get("reduction", "none")
    return call("scatter_nd", inputs[0], idx, inputs[2], mode="update" if reduction == "none" else reduction)


@onnx_op("Hardmax")
def hardmax(inputs, attrs, opset):
    x = inputs[0]
    s = shape_of(x)
    axis = _axis(int(attrs.get("axis", -1 if opset >= 13 else 1)), len(s))
    if opset < 13:
        raise FrontendError("Hardmax before opset 13 (2-d coercion) is not supported")
    idx = R.argmax(x, axis=[axis], keepdims=False)
    one, zero = const(np.asarray(1, dtype_of(x))), const(np.asarray(0, dtype_of(x)))
    return call("one_hot", idx, one, zero, depth=int(s[axis]), axis=axis, dtype=dtype_of(x))


@onnx_op("Einsum")
def einsum(inputs, attrs, opset):
    args = [inputs[i] for i in range(len(inputs))]
    return call("einsum", Tuple(tuple(args)), equation=attrs["equation"])


from . import onnx_rnn  # noqa: E402,F401  (adds LSTM, GRU, RNN)

__all__ = ["ONNX_OPS", "NEEDS", "missing_relay_ops", "onnx_op", "matmul_nd"]
