"""The ONNX operator table: ``ONNX_OPS[op_type](inputs, attrs, opset) -> Relay``.

Each converter is a short function (tinygrad's style, not TVM's class per op with
``_impl_vN`` methods): ``inputs`` is an :class:`~relay_nb.frontend.onnx.Inputs`
(expressions, static values and shapes), ``attrs`` the node's attributes as Python values
(plus ``_outputs``, the node's output count), ``opset`` the model's default-domain opset.
A converter returns one expression, a tuple-typed expression, or a list (one per output).

Ops that need a Relay operator the registry may not have (``topk``, ``cumsum``, ...) are
listed in :data:`NEEDS`; while that operator is missing the ONNX op counts as unsupported.

This file holds the table, its helpers, the elementwise ops and the reductions; the other
families add themselves from :mod:`.onnx_nn` (products, convolution, pooling,
normalization), :mod:`.onnx_tensor` (shapes, data movement), :mod:`.onnx_quant` and
:mod:`.onnx_rnn`.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from .. import op as _op_pkg  # noqa: F401  (registers the operators)
from ..ir.expr import Expr, const
from ..op import api as R
from ..op import nn
from ..op.registry import has_op
from .common import FrontendError, dtype_of, shape_of
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


_FOLDS = {"Sum": R.add, "Mean": R.add, "Max": R.maximum, "Min": R.minimum}


@onnx_op(*_FOLDS)
def variadic(inputs, attrs, opset):
    kind = attrs["_op"]
    args = [inputs[i] for i in range(len(inputs)) if inputs.has(i)]
    out = args[0]
    for a in args[1:]:
        out = _FOLDS[kind](out, a)
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


# the other converter families register themselves into ONNX_OPS
from . import onnx_nn, onnx_quant, onnx_rnn, onnx_tensor  # noqa: E402,F401

from .onnx_nn import matmul_nd  # noqa: E402

__all__ = ["ONNX_OPS", "NEEDS", "missing_relay_ops", "onnx_op", "matmul_nd"]
