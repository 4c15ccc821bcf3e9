"""The ATen operator table: ``ATEN_OPS[op overload](args) -> Relay``.

Keys are core ATen op overloads (``torch.ops.aten.convolution.default``), what
``ExportedProgram.run_decompositions()`` leaves; each converter is a short function of
an :class:`~relay_nb.frontend.pytorch.Args` (schema arguments with defaults filled in,
plus the output's static shape and dtype from the FX graph).  A converter returns one
expression, or a list for an op with several outputs (``None`` for an output that is
not supported: using it is an error naming the node).

Dtypes follow PyTorch's promotion: arithmetic is done in the node's output dtype
(``int64 / float`` -> float32), comparisons in the promoted dtype of their operands.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import torch

from .. import op as _op_pkg  # noqa: F401  (registers the operators)
from ..ir.expr import Call, Constant, Expr, const
from ..op import api as R
from ..op import nn
from ..op._common import call
from ..op.image import resize2d
from ..op.registry import has_op
from . import onnx_ops
from .common import FrontendError, dtype_of
from .pytorch import Args, relay_dtype

aten = torch.ops.aten
ATEN_OPS: dict[Any, Callable[[Args], Any]] = {}

# ATen op -> Relay operators it needs that other branches add; see missing_relay_ops().
NEEDS: dict[Any, tuple[str, ...]] = {
    aten.cumsum.default: ("cumsum",),
    aten.topk.default: ("topk",),
    aten.sort.default: ("sort", "argsort"),
    aten.gather.default: ("gather",),
    aten.scatter.src: ("scatter_elements",),
    aten.scatter.value: ("scatter_elements",),
    aten.scatter_add.default: ("scatter_elements",),
}


def missing_relay_ops() -> dict[Any, list[str]]:
    """ATen op -> the Relay operators it needs that are not registered (yet)."""
    out = {}
    for aten_overload, needs in NEEDS.items():
        gone = [n for n in needs if not has_op(n)]
        if gone:
            out[aten_overload] = gone
    return out


def aten_op(*overloads: Any) -> Callable:
    def deco(fn: Callable) -> Callable:
        for o in overloads:
            ATEN_OPS[o] = fn
        return fn

    return deco


# --- small helpers --------------------------------------------------------------------------


def _const(array: np.ndarray) -> Expr:
    """A constant of exactly ``array``'s dtype (``relay.const`` makes float64 float32)."""
    return const(array, str(array.dtype))


def _as(x: Any, dtype: str) -> Expr:
    """``x`` (an expression or a Python number) as an expression of ``dtype``."""
    if isinstance(x, Expr):
        return x if dtype_of(x) == dtype else R.cast(x, dtype)
    return _const(np.asarray(x, dtype=dtype))


def _promoted(a: Args, i: int, j: int) -> str:
    return relay_dtype(torch.result_type(a.val(i), a.val(j)))


def _bool(x: Expr) -> Expr:
    return x if dtype_of(x) == "bool" else R.not_equal(x, _as(0, dtype_of(x)))


def _axis(d: int, rank: int) -> int:
    return d + rank if d < 0 else d


def _axes(dims: Any, rank: int) -> Any:
    """Reduction axes: None or [] means all of them (as ATen's ``dim=None``/``[]``)."""
    if dims is None or (isinstance(dims, (list, tuple)) and not dims):
        return None
    dims = dims if isinstance(dims, (list, tuple)) else [dims]
    return [_axis(int(d), rank) for d in dims]


def _n(v: Any, n: int) -> list[int]:
    """An int or a 1-element list spread to ``n`` ints (``stride=2`` -> ``[2, 2]``)."""
    v = list(v) if isinstance(v, (list, tuple)) else [v]
    return [int(x) for x in (v * n if len(v) == 1 else v)]


def _untranspose(b: Expr) -> Expr:
    """``b.T`` without a transpose of a transpose: addmm's ``mat2`` is ``permute(weight)``."""
    if isinstance(b, Call) and getattr(b.op, "name", "") == "transpose":
        if tuple(b.attrs["axes"] or ()) in ((1, 0), ()):  # () reverses: the same for 2-d
            return b.args[0]
    if isinstance(b, Constant):
        return _const(np.ascontiguousarray(b.data.T))
    return R.transpose(b, (1, 0))


# --- elementwise ----------------------------------------------------------------------------

_UNARY = {
    aten.sigmoid.default: R.sigmoid, aten.tanh.default: R.tanh, aten.exp.default: R.exp,
    aten.log.default: R.log, aten.sqrt.default: R.sqrt, aten.rsqrt.default: R.rsqrt,
    aten.neg.default: R.negative, aten.abs.default: R.abs, aten.erf.default: R.erf,
    aten.floor.default: R.floor, aten.ceil.default: R.ceil, aten.trunc.default: R.trunc,
    aten.sin.default: R.sin, aten.cos.default: R.cos, aten.tan.default: R.tan,
    aten.sign.default: R.sign, aten.relu.default: nn.relu, aten.log2.default: R.log2,
    aten.asin.default: R.asin, aten.acos.default: R.acos, aten.atan.default: R.atan,
    aten.sinh.default: R.sinh, aten.cosh.default: R.cosh, aten.isnan.default: R.isnan,
    aten.isinf.default: R.isinf, aten.log10.default: R.log10, aten.asinh.default: R.asinh,
    aten.acosh.default: R.acosh, aten.atanh.default: R.atanh,
}


def _unary(fn: Callable) -> Callable:
    def convert(a: Args) -> Expr:
        # an integer input of a float function (sigmoid(int)) is computed in the output
        # dtype; a predicate (isnan) keeps its input's
        return fn(_as(a[0], a.dtype) if a.dtype != "bool" else a[0])

    return convert


for _o, _fn in _UNARY.items():
    ATEN_OPS[_o] = _unary(_fn)


@aten_op(aten.reciprocal.default)
def reciprocal(a):
    return R.divide(_as(1, a.dtype), _as(a[0], a.dtype))


@aten_op(aten.expm1.default)
def expm1(a):
    return R.subtract(R.exp(_as(a[0], a.dtype)), _as(1, a.dtype))


@aten_op(aten.log1p.default)
def log1p(a):
    return R.log(R.add(_as(a[0], a.dtype), _as(1, a.dtype)))


@aten_op(aten.round.default)
def round_(a):
    return onnx_ops._round_even(a[0])  # torch rounds half to even, as ONNX


@aten_op(aten.logical_not.default)
def logical_not(a):
    return R.logical_not(_bool(a[0]))


@aten_op(aten.bitwise_not.default)
def bitwise_not(a):
    return R.logical_not(a[0]) if a.dtype == "bool" else R.bitwise_not(a[0])


def _arith(fn: Callable) -> Callable:
    def convert(a: Args) -> Expr:
        return fn(_as(a[0], a.dtype), _as(a[1], a.dtype))

    return convert


for _o, _fn in {
    aten.mul.Tensor: R.multiply, aten.mul.Scalar: R.multiply, aten.maximum.default: R.maximum,
    aten.minimum.default: R.minimum, aten.remainder.Tensor: R.floor_mod,
    aten.remainder.Scalar: R.floor_mod, aten.fmod.Tensor: R.trunc_mod,
    aten.fmod.Scalar: R.trunc_mod, aten.pow.Tensor_Tensor: R.power,
    aten.pow.Tensor_Scalar: R.power, aten.pow.Scalar: R.power,
}.items():
    ATEN_OPS[_o] = _arith(_fn)


@aten_op(aten.add.Tensor, aten.add.Scalar, aten.sub.Tensor, aten.sub.Scalar)
def add_sub(a):
    x, y = _as(a[0], a.dtype), _as(a[1], a.dtype)
    if a["alpha"] not in (None, 1):  # add(x, y, alpha) = x + alpha * y
        y = R.multiply(y, _as(a["alpha"], a.dtype))
    return (R.add if a.op == "add" else R.subtract)(x, y)


@aten_op(aten.div.Tensor, aten.div.Scalar, aten.div.Tensor_mode, aten.div.Scalar_mode)
def div(a):
    mode = a["rounding_mode"] if "rounding_mode" in a.names else None
    x, y = _as(a[0], a.dtype), _as(a[1], a.dtype)
    is_int = "int" in a.dtype
    if mode == "floor":
        return R.floor_divide(x, y) if is_int else R.floor(R.divide(x, y))
    if mode == "trunc":
        return R.trunc_divide(x, y) if is_int else R.trunc(R.divide(x, y))
    return R.divide(x, y)


_COMPARE = {
    "eq": R.equal, "ne": R.not_equal, "lt": R.less, "le": R.less_equal, "gt": R.greater,
    "ge": R.greater_equal,
}
for _name, _fn in _COMPARE.items():
    for _ov in ("Tensor", "Scalar"):

        def _compare(a, fn=_fn):
            dt = _promoted(a, 0, 1)
            return fn(_as(a[0], dt), _as(a[1], dt))

        ATEN_OPS[getattr(getattr(aten, _name), _ov)] = _compare


_LOGICAL = {"and": R.logical_and, "or": R.logical_or, "xor": R.logical_xor}
_BITWISE = {"and": R.bitwise_and, "or": R.bitwise_or, "xor": R.bitwise_xor}


@aten_op(aten.logical_and.default, aten.logical_or.default, aten.logical_xor.default)
def logical(a):
    y = a[1] if isinstance(a[1], Expr) else _as(a[1], "bool")
    return _LOGICAL[a.op.partition("_")[2]](_bool(a[0]), _bool(y))


@aten_op(aten.bitwise_and.Tensor, aten.bitwise_or.Tensor, aten.bitwise_xor.Tensor,
         aten.bitwise_and.Scalar, aten.bitwise_or.Scalar, aten.bitwise_xor.Scalar)
def bitwise(a):
    x, y = _as(a[0], a.dtype), _as(a[1], a.dtype)
    return (_LOGICAL if a.dtype == "bool" else _BITWISE)[a.op.partition("_")[2]](x, y)


@aten_op(aten.where.self)
def where(a):
    return R.where(_bool(a[0]), _as(a[1], a.dtype), _as(a[2], a.dtype))


@aten_op(aten.clamp.default, aten.hardtanh.default)
def clamp(a):
    lo, hi = (a[1], a[2])
    lo = -np.inf if lo is None else float(lo)
    hi = np.inf if hi is None else float(hi)
    return R.clip(_as(a[0], a.dtype), lo, hi)


@aten_op(aten.clamp.Tensor)
def clamp_tensor(a):
    x = _as(a[0], a.dtype)
    if a[1] is not None:
        x = R.maximum(x, _as(a[1], a.dtype))
    if a[2] is not None:
        x = R.minimum(x, _as(a[2], a.dtype))
    return x


@aten_op(aten.leaky_relu.default)
def leaky_relu(a):
    return nn.leaky_relu(a[0], alpha=float(a[1]))


@aten_op(aten.elu.default)
def elu(a):
    # scale * (x if x > 0 else alpha * (exp(x * input_scale) - 1))
    x = a[0]
    expm1 = R.subtract(R.exp(R.multiply(x, _as(a["input_scale"], a.dtype))), _as(1, a.dtype))
    neg = R.multiply(_as(a["alpha"], a.dtype), expm1)
    out = R.where(R.greater(x, _as(0, a.dtype)), x, neg)
    return out if a["scale"] == 1 else R.multiply(out, _as(a["scale"], a.dtype))


@aten_op(aten.gelu.default)
def gelu(a):
    return onnx_ops.gelu([a[0]], {"approximate": a["approximate"]}, 20)


# --- matrix products ------------------------------------------------------------------------


@aten_op(aten.addmm.default)
def addmm(a):
    bias, x, w = a[0], a[1], a[2]
    out = nn.dense(x, _untranspose(w))  # x @ w == dense(x, w.T): torch's Linear is permute + addmm
    if a["alpha"] != 1:
        out = R.multiply(out, _as(a["alpha"], a.dtype))
    if a["beta"] != 1:
        bias = R.multiply(bias, _as(a["beta"], a.dtype))
    return R.add(bias, out) if a["beta"] != 0 else out


@aten_op(aten.mm.default)
def mm(a):
    return nn.dense(a[0], _untranspose(a[1]))


@aten_op(aten.bmm.default)
def bmm(a):
    return nn.batch_matmul(a[0], a[1], transpose_b=False)


# --- convolution, pooling, normalization ----------------------------------------------------

_CONV = {1: nn.conv1d, 2: nn.conv2d, 3: nn.conv3d}


@aten_op(aten.convolution.default)
def convolution(a):
    x, w, b = a[0], a[1], a[2]
    ws = a.shape_of(1)
    nd = len(ws) - 2
    strides, padding, dilation = _n(a["stride"], nd), _n(a["padding"], nd), _n(a["dilation"], nd)
    groups = int(a["groups"])
    if a["transposed"]:
        if nd != 2:
            raise FrontendError(f"only 2-d transposed convolution is supported, not {nd}-d")
        out = nn.conv2d_transpose(
            x, w, strides=strides, padding=padding, dilation=dilation, groups=groups,
            channels=ws[1] * groups, kernel_size=ws[2:], output_padding=_n(a["output_padding"], 2),
        )
    else:
        out = _CONV[nd](
            x, w, strides=strides, padding=padding, dilation=dilation, groups=groups,
            channels=ws[0], kernel_size=ws[2:],
        )
    return nn.bias_add(out, b, axis=1) if b is not None else out


_MAX_POOL = {2: nn.max_pool2d, 3: nn.max_pool3d}
_AVG_POOL = {1: nn.avg_pool1d, 2: nn.avg_pool2d, 3: nn.avg_pool3d}


@aten_op(aten.max_pool2d_with_indices.default, aten.max_pool3d_with_indices.default)
def max_pool(a):
    nd = len(a.shape_of(0)) - 2
    kernel = _n(a["kernel_size"], nd)
    strides = _n(a["stride"], nd) if a["stride"] else kernel
    out = _MAX_POOL[nd](
        a[0], pool_size=kernel, strides=strides, padding=_n(a["padding"], nd),
        dilation=_n(a["dilation"], nd), ceil_mode=bool(a["ceil_mode"]),
    )
    return [out, None]  # the indices output is not supported


@aten_op(aten.avg_pool1d.default, aten.avg_pool2d.default, aten.avg_pool3d.default)
def avg_pool(a):
    nd = len(a.shape_of(0)) - 2
    if "divisor_override" in a.names and a["divisor_override"] is not None:
        raise FrontendError("avg_pool with divisor_override is not supported")
    kernel = _n(a["kernel_size"], nd)
    strides = _n(a["stride"], nd) if a["stride"] else kernel
    return _AVG_POOL[nd](
        a[0], pool_size=kernel, strides=strides, padding=_n(a["padding"], nd),
        ceil_mode=bool(a["ceil_mode"]), count_include_pad=bool(a["count_include_pad"]),
    )


@aten_op(aten._adaptive_avg_pool2d.default)
def adaptive_avg_pool2d(a):
    return nn.adaptive_avg_pool2d(a[0], output_size=_n(a[1], 2))


@aten_op(aten.adaptive_max_pool2d.default)
def adaptive_max_pool2d(a):
    return [nn.adaptive_max_pool2d(a[0], output_size=_n(a[1], 2)), None]


def _ones(n: int, dtype: str, value: float = 1.0) -> Expr:
    return _const(np.full((n,), value, dtype=dtype))


@aten_op(aten._native_batch_norm_legit_no_training.default)
def batch_norm(a):
    x = a[0]
    c = a.shape_of(0)[1]
    w = a[1] if a[1] is not None else _ones(c, a.dtype)
    b = a[2] if a[2] is not None else _ones(c, a.dtype, 0.0)
    out = nn.batch_norm(x, w, b, a[3], a[4], axis=1, epsilon=float(a["eps"]))
    return [out[0], None, None]  # saved mean/invstd are training outputs


def _normalize(x: Expr, axes: list[int], eps: float) -> Expr:
    """(x - mean) / sqrt(var + eps) over ``axes`` (biased variance, as the norms use)."""
    mean = R.mean(x, axes, keepdims=True)
    var = R.variance(x, axes, keepdims=True)
    return R.divide(R.subtract(x, mean), R.sqrt(R.add(var, _as(eps, dtype_of(x)))))


@aten_op(aten.native_layer_norm.default)
def layer_norm(a):
    x, shape, eps = a[0], list(a[1]), float(a[4])
    rank = len(a.shape_of(0))
    if len(shape) == 1:
        w = a[2] if a[2] is not None else _ones(shape[0], a.dtype)
        b = a[3] if a[3] is not None else _ones(shape[0], a.dtype, 0.0)
        return [nn.layer_norm(x, w, b, axis=-1, epsilon=eps), None, None]
    out = _normalize(x, list(range(rank - len(shape), rank)), eps)
    if a[2] is not None:
        out = R.multiply(out, a[2])
    if a[3] is not None:
        out = R.add(out, a[3])
    return [out, None, None]


@aten_op(aten.native_group_norm.default)
def group_norm(a):
    x, w, b = a[0], a[1], a[2]
    n, c, groups, eps = int(a[3]), int(a[4]), int(a[6]), float(a[7])
    shape = a.shape_of(0)
    out = R.reshape(_normalize(R.reshape(x, (n, groups, -1)), [2], eps), shape)
    per_channel = (c,) + (1,) * (len(shape) - 2)
    if w is not None:
        out = R.multiply(out, R.reshape(w, per_channel))
    if b is not None:
        out = R.add(out, R.reshape(b, per_channel))
    return [out, None, None]


@aten_op(aten._softmax.default, aten._log_softmax.default)
def softmax(a):
    fn = nn.log_softmax if a.op == "_log_softmax" else nn.softmax
    return fn(_as(a[0], a.dtype), axis=int(a[1]))


# --- reductions -----------------------------------------------------------------------------


def _reduce(fn: Callable, cast: bool = True) -> Callable:
    def convert(a: Args) -> Expr:
        x = a[0]
        rank = len(a.shape_of(0))
        dims = a[1] if len(a) > 1 and "dim" in a.names[1] else None
        keep = bool(a["keepdim"]) if "keepdim" in a.names else False
        out = fn(_as(x, a.dtype) if cast else x, _axes(dims, rank), keepdims=keep)
        return out

    return convert


for _o, _fn in {
    aten.mean.dim: R.mean, aten.mean.default: R.mean, aten.sum.dim_IntList: R.sum,
    aten.sum.default: R.sum, aten.amax.default: R.max, aten.amin.default: R.min,
    aten.max.default: R.max, aten.min.default: R.min, aten.prod.dim_int: R.prod,
    aten.prod.default: R.prod,
}.items():
    ATEN_OPS[_o] = _reduce(_fn)


@aten_op(aten.any.dim, aten.any.dims, aten.any.default,
         aten.all.dim, aten.all.dims, aten.all.default)
def any_all(a):
    fn = R.any if a.op == "any" else R.all
    rank = len(a.shape_of(0))
    dims = a[1] if len(a) > 1 and a.names[1] == "dim" else None
    keep = bool(a["keepdim"]) if "keepdim" in a.names else False
    return fn(_bool(a[0]), _axes(dims, rank), keepdims=keep)


@aten_op(aten.max.dim, aten.min.dim)
def max_min_dim(a):
    is_max = a.op == "max"
    rank = len(a.shape_of(0))
    axis, keep = _axis(int(a[1]), rank), bool(a["keepdim"])
    values = (R.max if is_max else R.min)(a[0], [axis], keepdims=keep)
    idx = (R.argmax if is_max else R.argmin)(a[0], [axis], keepdims=keep)
    return [values, R.cast(idx, "int64")]


@aten_op(aten.argmax.default, aten.argmin.default)
def arg_reduce(a):
    fn = R.argmax if a.op == "argmax" else R.argmin
    x = a[0]
    if a["dim"] is None:
        x = R.reshape(x, (-1,))
        axis = [0]
    else:
        axis = [_axis(int(a["dim"]), len(a.shape_of(0)))]
    out = fn(x, axis, keepdims=bool(a["keepdim"]))
    return R.reshape(R.cast(out, "int64"), a.shape)


@aten_op(aten.var.correction, aten.var.dim)
def var(a):
    if "unbiased" in a.names:
        correction = 1 if a["unbiased"] else 0
    else:
        correction = 1 if a["correction"] is None else float(a["correction"])
    if correction not in (0, 1):
        raise FrontendError(f"var with correction={correction} is not supported (only 0 and 1)")
    axes = _axes(a["dim"], len(a.shape_of(0)))
    x = _as(a[0], a.dtype)
    return R.variance(x, axes, keepdims=bool(a["keepdim"]), unbiased=correction == 1)


# --- shapes and data movement ---------------------------------------------------------------


@aten_op(aten.view.default, aten._unsafe_view.default, aten.reshape.default)
def view(a):
    return R.reshape(a[0], a.shape)


@aten_op(aten.permute.default)
def permute(a):
    rank = len(a.shape_of(0))
    return R.transpose(a[0], [_axis(int(d), rank) for d in a[1]])


@aten_op(aten.expand.default)
def expand(a):
    return a[0] if a.shape_of(0) == a.shape else R.broadcast_to(a[0], a.shape)


@aten_op(aten.clone.default, aten.alias.default, aten.lift_fresh_copy.default, aten.detach.default)
def identity(a):
    return a[0]


@aten_op(aten._to_copy.default)
def to_copy(a):
    return _as(a[0], a.dtype)


@aten_op(aten.copy.default)
def copy(a):
    src = _as(a[1], a.dtype)
    return src if a.shape_of(1) == a.shape else R.broadcast_to(src, a.shape)


@aten_op(aten._assert_tensor_metadata.default, aten._assert_scalar.default,
         aten.sym_constrain_range_for_size.default)
def no_value(a):
    return None  # checks torch.export leaves in the graph; the shapes here are static


@aten_op(aten.unsqueeze.default)
def unsqueeze(a):
    return R.expand_dims(a[0], _axis(int(a[1]), len(a.shape_of(0)) + 1))


@aten_op(aten.squeeze.dims, aten.squeeze.dim, aten.squeeze.default)
def squeeze(a):
    shape = a.shape_of(0)
    dims = a[1] if len(a) > 1 else None
    if dims is None:
        dims = range(len(shape))
    elif not isinstance(dims, (list, tuple)):
        dims = [dims]
    axes = [d for d in (_axis(int(d), len(shape)) for d in dims) if shape[d] == 1]
    return R.squeeze(a[0], axes) if axes else a[0]


@aten_op(aten.cat.default)
def cat(a):
    parts = [(_as(t, a.dtype), a.val(0)[i]) for i, t in enumerate(a[0])]
    # torch lets a 1-d empty tensor join anything; it adds nothing
    parts = [e for e, v in parts if not (tuple(v.shape) == (0,) and len(a.shape) != 1)]
    rank = len(a.shape)
    return parts[0] if len(parts) == 1 else R.concatenate(parts, _axis(int(a[1]), rank))


@aten_op(aten.slice.Tensor)
def slice_(a):
    shape = a.shape_of(0)
    dim = _axis(int(a[1]), len(shape))
    begin, end, step = slice(a[2], a[3], a[4]).indices(shape[dim])
    if (begin, end, step) == (0, shape[dim], 1):
        return a[0]
    return R.strided_slice(a[0], [begin], [max(end, begin)], [step], axes=[dim])


@aten_op(aten.select.int)
def select(a):
    shape = a.shape_of(0)
    dim = _axis(int(a[1]), len(shape))
    index = int(a[2]) + (shape[dim] if int(a[2]) < 0 else 0)
    return R.take(a[0], _const(np.asarray(index, dtype="int64")), axis=dim)


@aten_op(aten.split_with_sizes.default, aten.split.Tensor)
def split(a):
    shape = a.shape_of(0)
    dim = _axis(int(a[2]), len(shape))
    if isinstance(a[1], (list, tuple)):
        sizes = [int(s) for s in a[1]]
    else:
        chunk = int(a[1])
        sizes = [min(chunk, shape[dim] - i) for i in range(0, shape[dim], chunk)]
    points = [int(p) for p in np.cumsum(sizes)[:-1]]
    if not points:
        return [a[0]]
    out = R.split(a[0], points, dim)
    return [out[i] for i in range(len(sizes))]


def _scatter_positions(x: Expr, src: Expr, dim: int, size: int, positions: list) -> Expr:
    """``x`` with ``src``'s slices written at ``positions`` of axis ``dim``.

    One gather over ``concatenate([x, src])``: index ``j`` reads ``x``'s own slice, except
    at the written positions, which read ``src``'s (past ``x``'s ``size`` slices).
    """
    index = np.arange(size, dtype="int64")
    index[positions] = size + np.arange(len(positions), dtype="int64")
    return R.take(R.concatenate([x, src], dim), _const(index), axis=dim)


@aten_op(aten.slice_scatter.default)
def slice_scatter(a):
    shape = a.shape_of(0)
    dim = _axis(int(a["dim"]), len(shape))
    positions = list(range(*slice(a["start"], a["end"], a["step"]).indices(shape[dim])))
    if not positions:
        return a[0]
    return _scatter_positions(a[0], _as(a[1], a.dtype), dim, shape[dim], positions)


@aten_op(aten.select_scatter.default)
def select_scatter(a):
    shape = a.shape_of(0)
    dim = _axis(int(a["dim"]), len(shape))
    index = int(a["index"]) % shape[dim]
    src = R.expand_dims(_as(a[1], a.dtype), dim)
    return _scatter_positions(a[0], src, dim, shape[dim], [index])


@aten_op(aten.unbind.int)
def unbind(a):
    shape = a.shape_of(0)
    dim = _axis(int(a[1]), len(shape))
    return [R.take(a[0], _const(np.asarray(i, dtype="int64")), axis=dim) for i in range(shape[dim])]


@aten_op(aten.as_strided.default)
def as_strided(a):
    src = a.val(0)
    if not src.is_contiguous():
        raise FrontendError("as_strided of a non-contiguous tensor is not supported")
    offset = int(a[3] or 0)
    size, stride = [int(s) for s in a[1]], [int(s) for s in a[2]]
    # the element each output position reads, in the input's (contiguous) storage
    index = np.full(size, offset, dtype="int64")
    for d, (n, s) in enumerate(zip(size, stride)):
        index += (np.arange(n) * s).reshape([-1 if i == d else 1 for i in range(len(size))])
    flat = R.reshape(a[0], (-1,))
    if np.array_equal(index.reshape(-1), np.arange(index.size)) and index.size == src.numel():
        return R.reshape(a[0], size)  # the usual case: a view that only renames the shape
    return R.take(flat, _const(index), axis=0)


@aten_op(aten.diagonal.default)
def diagonal(a):
    # a view with static shapes is a gather: numpy's diagonal of the element numbers says
    # which element each output position reads
    shape = a.shape_of(0)
    numbers = np.arange(int(np.prod(shape)), dtype="int64").reshape(shape)
    index = np.diagonal(numbers, int(a["offset"]), int(a["dim1"]), int(a["dim2"]))
    index = np.ascontiguousarray(index)
    return R.take(R.reshape(a[0], (-1,)), _const(index), axis=0)


@aten_op(aten.constant_pad_nd.default)
def constant_pad(a):
    pad = [int(p) for p in a[1]]
    rank = len(a.shape_of(0))
    if any(p < 0 for p in pad):
        raise FrontendError("negative padding (cropping) is not supported")
    width = [[0, 0] for _ in range(rank)]
    for i in range(len(pad) // 2):  # pairs start at the last dimension
        width[rank - 1 - i] = [pad[2 * i], pad[2 * i + 1]]
    return nn.pad(a[0], width, _as(float(a[2]), a.dtype))


_PAD_MODES = {"reflection": "reflect", "replication": "edge"}


@aten_op(aten.reflection_pad1d.default, aten.reflection_pad2d.default,
         aten.reflection_pad3d.default, aten.replication_pad1d.default,
         aten.replication_pad2d.default, aten.replication_pad3d.default)
def mode_pad(a):
    pad = [int(p) for p in a[1]]
    rank = len(a.shape_of(0))
    width = [[0, 0] for _ in range(rank)]
    for i in range(len(pad) // 2):  # pairs start at the last dimension
        width[rank - 1 - i] = [pad[2 * i], pad[2 * i + 1]]
    return nn.pad(a[0], width, pad_mode=_PAD_MODES[a.op.partition("_")[0]])


@aten_op(aten.embedding.default)
def embedding(a):
    return R.take(a[0], a[1], axis=0)


@aten_op(aten.index_select.default)
def index_select(a):
    return R.take(a[0], a[2], axis=_axis(int(a[1]), len(a.shape_of(0))))


@aten_op(aten.index.Tensor)
def index(a):
    picks = [(d, t) for d, t in enumerate(a[1]) if t is not None]
    if len(picks) != 1 or dtype_of(picks[0][1]) == "bool":
        raise FrontendError(
            "indexing with more than one index tensor, or with a boolean mask, is not supported"
        )
    d, idx = picks[0]
    return R.take(a[0], idx, axis=d)


@aten_op(aten.repeat.default)
def repeat(a):
    return R.tile(a[0], [int(r) for r in a[1]])


@aten_op(aten.flip.default)
def flip(a):
    out = a[0]
    for d in a[1]:
        out = R.reverse(out, _axis(int(d), len(a.shape)))
    return out


# --- creating tensors -----------------------------------------------------------------------


@aten_op(aten.arange.default, aten.arange.start, aten.arange.start_step)
def arange(a):
    args = [a[i] for i in range(len(a)) if a.names[i] in ("start", "end", "step")]
    return _const(np.arange(*args).astype(a.dtype))


@aten_op(aten.full.default, aten.full_like.default)
def full(a):
    return R.full(_as(a[1], a.dtype), a.shape, a.dtype)


@aten_op(aten.empty.memory_format, aten.empty_strided.default)
def empty(a):
    return R.full(_as(0, a.dtype), a.shape, a.dtype)  # any value will do: it gets overwritten


@aten_op(aten.scalar_tensor.default)
def scalar_tensor(a):
    return _as(a[0], a.dtype)


@aten_op(aten.fill.Scalar)
def fill(a):
    return R.full(_as(a[1], a.dtype), a.shape, a.dtype)


@aten_op(aten.upsample_nearest2d.vec, aten.upsample_bilinear2d.vec)
def upsample(a):
    if a.op == "upsample_nearest2d":
        # out[i] = in[floor(i * in / out)]
        return resize2d(a[0], a.shape[2:], method="nearest_neighbor",
                        coordinate_transformation_mode="asymmetric", rounding_method="floor")
    mode = "align_corners" if a["align_corners"] else "pytorch_half_pixel"
    return resize2d(a[0], a.shape[2:], method="linear", coordinate_transformation_mode=mode)


# --- ops on Relay operators other branches add (see NEEDS) ----------------------------------


@aten_op(aten.cumsum.default)
def cumsum(a):
    axis = _axis(int(a[1]), max(len(a.shape_of(0)), 1))
    return call("cumsum", _as(a[0], a.dtype), axis=axis, dtype=a.dtype, exclusive=False)


@aten_op(aten.topk.default)
def topk(a):
    axis = _axis(int(a["dim"]), len(a.shape_of(0)))
    # Relay's topk always returns its k sorted; an unsorted torch.topk may order them freely
    return call(
        "topk", a[0], k=int(a[1]), axis=axis, ret_type="both", is_ascend=not a["largest"],
        dtype="int64",
    )


@aten_op(aten.sort.default)
def sort(a):
    axis = _axis(int(a["dim"]), len(a.shape_of(0)))
    ascend = not a["descending"]
    return [call("sort", a[0], axis=axis, is_ascend=ascend),
            call("argsort", a[0], axis=axis, is_ascend=ascend, dtype="int64")]


@aten_op(aten.gather.default)
def gather(a):
    return call("gather", a[0], a[2], axis=_axis(int(a[1]), len(a.shape_of(0))))


@aten_op(aten.scatter.src, aten.scatter.value, aten.scatter_add.default)
def scatter(a):
    x, index = a[0], a[2]
    axis = _axis(int(a[1]), len(a.shape_of(0)))
    ishape = a.shape_of(2)
    if isinstance(a[3], Expr):
        updates = _as(a[3], a.dtype)
        if a.shape_of(3) != ishape:  # only the part of src that index covers is used
            updates = R.strided_slice(updates, [0] * len(ishape), list(ishape))
    else:
        updates = R.full(_as(a[3], a.dtype), ishape, a.dtype)
    reduction = "add" if a.op == "scatter_add" else "update"
    return call("scatter_elements", x, index, updates, axis=axis, reduction=reduction)


__all__ = ["ATEN_OPS", "NEEDS", "aten_op", "missing_relay_ops"]
