"""Gradient rules: the registry's ``grad`` column, as TVM's ``op/_tensor_grad.py``.

A rule is ``rule(call, out_grad) -> [input gradient, ...]``, one entry per argument of
``call`` (``None`` for an argument that has no gradient, such as integer indices or a
boolean condition).  ``call`` is the forward call, whose arguments and result carry their
``checked_type``; a rule may mention ``call`` itself for the forward *result* (``exp``:
``out_grad * call``) — :func:`relay_nb.transform.gradient` substitutes the value already
computed.  ``out_grad`` is the adjoint of the result (a Tuple expression for ops returning
tuples).  Rules build their gradients with the ordinary builders (``relay.multiply`` ...),
undoing broadcasting with ``collapse_sum_like``.  Scalars are constants of the operand's
dtype (:func:`_c`), not unsuffixed literals: a typed program prints a literal with its
inferred dtype, so literals would not parse back to the same constants.

Add a rule from a notebook with the decorator::

    @grad_rule("my.square")
    def _square_grad(call, g):
        x = call.args[0]
        return [relay.multiply(g, relay.multiply(x, relay.const(2.0, x.checked_type.dtype)))]

Covered: elementwise arithmetic and math (add ... power, maximum/minimum, mod, abs, clip,
trigonometric and hyperbolic functions, erf, the zero-gradient roundings), cast, copy,
where, full/full_like, reductions (sum, mean, max, min, variance), shape ops (reshape,
transpose, squeeze, expand_dims, concatenate, stack, split, take, strided_slice,
broadcast_to, collapse_sum_like, tile, repeat, reverse, layout_transform, pad), and
``nn``: relu, leaky_relu, prelu, softmax, log_softmax, dense, matmul, batch_matmul,
bias_add, conv1d, conv2d, conv2d_transpose, max/avg pools in 1-d and 2-d, global pools,
batch_flatten, upsampling (nearest, integer scales), dropout, batch_norm (inference
form), layer_norm.  Convolution gradients are convolutions: the data gradient of
``conv2d`` is a ``conv2d_transpose`` and its weight gradient a ``conv2d`` of the data
with the output gradient; pooling gradients scatter through a grouped
``conv2d_transpose`` with a constant kernel.

Not covered (``gradient`` raises "no gradient registered for ..." when a gradient would
have to flow through them): ``prod`` (its gradient divides by zeros), ``conv3d`` and 3-d
pools (no ``conv3d_transpose`` to express them), adaptive pools, ``image.resize2d`` and
non-nearest upsampling, ``take`` with ``batch_dims``, edge/reflect ``pad``.  Integer and
boolean ops (comparisons, argmax, shape_of, bitwise ops) carry no gradient and need no rule.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import RelayError
from ..ir.expr import Call, Constant, Expr, Tuple, TupleGetItem
from ..ir.ty import TensorType, TupleType
from . import api as _op
from . import nn as _nn
from ._common import as_tuple, norm_axis, padding_pairs
from .reduce import reduce_axes
from .registry import column_rule, get_column, make_attrs

GradRule = Callable[[Call, Expr], Sequence[Expr | None]]


def grad_rule(*op_names: str, override: bool = False) -> Callable[[GradRule], GradRule]:
    """Decorator registering a gradient rule for ops (the ``grad`` column)."""
    return column_rule("grad", *op_names, override=override)


def get_grad_rule(op_name: str) -> GradRule | None:
    """The gradient rule of ``op_name``, or None."""
    return get_column("grad").get(op_name)


# --- helpers -----------------------------------------------------------------------------------


def _tensor(e: Expr) -> TensorType:
    ty = e.checked_type
    if not isinstance(ty, TensorType):
        raise RelayError(f"internal: expected a tensor, found {ty}")
    return ty


def _shape(e: Expr) -> tuple[int, ...]:
    shape = _tensor(e).shape
    if not isinstance(shape, tuple) or not all(type(d) is int for d in shape):
        raise RelayError(f"gradient needs static shapes, found {_tensor(e)}", e.span)
    return shape


def _dtype(e: Expr) -> str:
    return _tensor(e).dtype


def _attrs(call: Call):
    return call.attrs if call.attrs is not None else make_attrs(call.op.name)


def _const(value: Any, dtype: str) -> Constant:
    return Constant(np.asarray(value, dtype=dtype))


def _c(value: Any, like: Expr) -> Constant:
    """A scalar constant of ``like``'s dtype (not a literal: the program prints and parses
    back with the same constants)."""
    return _const(value, _dtype(like))


def _unbroadcast(g: Expr, x: Expr, out_shape: tuple) -> Expr:
    """``g`` (of the broadcast shape) summed back to the shape of ``x``."""
    if _shape(x) == tuple(out_shape):
        return g
    return _op.collapse_sum_like(g, x)


def _binary(call: Call, g: Expr, dx: Expr, dy: Expr) -> list[Expr]:
    x, y = call.args
    out = _shape(call)
    return [_unbroadcast(dx, x, out), _unbroadcast(dy, y, out)]


def _zeros(g: Expr) -> Expr:
    return _op.zeros_like(g)


def _select(cond: Expr, g: Expr) -> Expr:
    """``g`` where ``cond`` holds, 0 elsewhere."""
    return _op.where(cond, g, _zeros(g))


def _along(v: Expr, axis: int, rank: int) -> Expr:
    """A 1-d ``v`` reshaped to broadcast along ``axis`` of a rank-``rank`` tensor."""
    return _op.reshape(v, [1] * axis + [-1] + [1] * (rank - axis - 1))


# --- elementwise -------------------------------------------------------------------------------


@grad_rule("add")
def _add_grad(call, g):
    return _binary(call, g, g, g)


@grad_rule("subtract")
def _subtract_grad(call, g):
    return _binary(call, g, g, _op.negative(g))


@grad_rule("multiply")
def _multiply_grad(call, g):
    x, y = call.args
    return _binary(call, g, _op.multiply(g, y), _op.multiply(g, x))


@grad_rule("divide")
def _divide_grad(call, g):
    # z = x / y:  dx = g / y,  dy = -g * z / y
    _, y = call.args
    return _binary(call, g, _op.divide(g, y), _op.negative(_op.divide(_op.multiply(g, call), y)))


@grad_rule("power")
def _power_grad(call, g):
    # z = x ** y:  dx = g * y * x ** (y - 1),  dy = g * z * log(x)
    x, y = call.args
    dx = _op.multiply(g, _op.multiply(y, _op.power(x, _op.subtract(y, _c(1, y)))))
    dy = _op.multiply(g, _op.multiply(call, _op.log(x)))
    return _binary(call, g, dx, dy)


@grad_rule("maximum")
def _maximum_grad(call, g):
    x, y = call.args  # ties go to x, as TVM's rule
    return _binary(call, g, _select(_op.greater_equal(x, y), g), _select(_op.less(x, y), g))


@grad_rule("minimum")
def _minimum_grad(call, g):
    x, y = call.args
    return _binary(call, g, _select(_op.less_equal(x, y), g), _select(_op.greater(x, y), g))


@grad_rule("mod", "trunc_mod")
def _mod_grad(call, g):
    # x mod y = x - trunc(x / y) * y
    x, y = call.args
    return _binary(call, g, g, _op.negative(_op.multiply(g, _op.trunc(_op.divide(x, y)))))


@grad_rule("floor_mod")
def _floor_mod_grad(call, g):
    x, y = call.args
    return _binary(call, g, g, _op.negative(_op.multiply(g, _op.floor(_op.divide(x, y)))))


@grad_rule("floor_divide", "trunc_divide")
def _step_binary_grad(call, g):
    return _binary(call, g, _zeros(g), _zeros(g))


@grad_rule("negative")
def _negative_grad(call, g):
    return [_op.negative(g)]


@grad_rule("copy")
def _copy_grad(call, g):
    return [g]


@grad_rule("exp", "fast_exp")
def _exp_grad(call, g):
    return [_op.multiply(g, call)]


@grad_rule("log")
def _log_grad(call, g):
    return [_op.divide(g, call.args[0])]


@grad_rule("log2")
def _log2_grad(call, g):
    return [_op.divide(g, _op.multiply(call.args[0], _c(math.log(2.0), call)))]


@grad_rule("log10")
def _log10_grad(call, g):
    return [_op.divide(g, _op.multiply(call.args[0], _c(math.log(10.0), call)))]


@grad_rule("sqrt")
def _sqrt_grad(call, g):
    return [_op.divide(_op.multiply(g, _c(0.5, call)), call)]


@grad_rule("rsqrt")
def _rsqrt_grad(call, g):
    # d x^(-1/2) = -1/2 x^(-3/2) = -1/2 * z / x
    return [_op.multiply(g, _op.divide(_op.multiply(call, _c(-0.5, call)), call.args[0]))]


@grad_rule("sigmoid")
def _sigmoid_grad(call, g):
    return [_op.multiply(g, _op.multiply(call, _op.subtract(_c(1, call), call)))]


@grad_rule("tanh", "fast_tanh")
def _tanh_grad(call, g):
    return [_op.multiply(g, _op.subtract(_c(1, call), _op.multiply(call, call)))]


@grad_rule("erf", "fast_erf")
def _erf_grad(call, g):
    x = call.args[0]
    slope = _op.exp(_op.negative(_op.multiply(x, x)))
    return [_op.multiply(g, _op.multiply(slope, _c(2.0 / math.sqrt(math.pi), x)))]


@grad_rule("sin")
def _sin_grad(call, g):
    return [_op.multiply(g, _op.cos(call.args[0]))]


@grad_rule("cos")
def _cos_grad(call, g):
    return [_op.negative(_op.multiply(g, _op.sin(call.args[0])))]


@grad_rule("tan")
def _tan_grad(call, g):
    return [_op.multiply(g, _op.add(_op.multiply(call, call), _c(1, call)))]


@grad_rule("sinh")
def _sinh_grad(call, g):
    return [_op.multiply(g, _op.cosh(call.args[0]))]


@grad_rule("cosh")
def _cosh_grad(call, g):
    return [_op.multiply(g, _op.sinh(call.args[0]))]


def _one_minus_square(x):
    return _op.subtract(_c(1, x), _op.multiply(x, x))


@grad_rule("asin")
def _asin_grad(call, g):
    return [_op.multiply(g, _op.rsqrt(_one_minus_square(call.args[0])))]


@grad_rule("acos")
def _acos_grad(call, g):
    return [_op.negative(_op.multiply(g, _op.rsqrt(_one_minus_square(call.args[0]))))]


@grad_rule("atan")
def _atan_grad(call, g):
    x = call.args[0]
    return [_op.divide(g, _op.add(_op.multiply(x, x), _c(1, x)))]


@grad_rule("asinh")
def _asinh_grad(call, g):
    x = call.args[0]
    return [_op.multiply(g, _op.rsqrt(_op.add(_op.multiply(x, x), _c(1, x))))]


@grad_rule("acosh")
def _acosh_grad(call, g):
    x = call.args[0]
    return [_op.multiply(g, _op.rsqrt(_op.subtract(_op.multiply(x, x), _c(1, x))))]


@grad_rule("atanh")
def _atanh_grad(call, g):
    return [_op.divide(g, _one_minus_square(call.args[0]))]


@grad_rule("abs")
def _abs_grad(call, g):
    return [_op.multiply(g, _op.sign(call.args[0]))]


@grad_rule("clip")
def _clip_grad(call, g):
    x = call.args[0]
    a = _attrs(call)
    inside = _op.logical_and(
        _op.greater_equal(x, _c(a["a_min"], x)), _op.less_equal(x, _c(a["a_max"], x))
    )
    return [_select(inside, g)]


@grad_rule("floor", "ceil", "round", "trunc", "sign", "zeros_like", "ones_like")
def _step_grad(call, g):
    # piecewise constant: the gradient is 0 (where it exists)
    return [_zeros(call.args[0])]


@grad_rule("full_like")
def _full_like_grad(call, g):
    data, fill = call.args
    return [_zeros(data), _op.cast_like(_op.sum(g), fill)]


@grad_rule("full")
def _full_grad(call, g):
    return [_op.cast_like(_op.sum(g), call.args[0])]


@grad_rule("cast")
def _cast_grad(call, g):
    return [_op.cast(g, _dtype(call.args[0]))]


@grad_rule("cast_like")
def _cast_like_grad(call, g):
    return [_op.cast_like(g, call.args[0]), None]


@grad_rule("where")
def _where_grad(call, g):
    cond, x, y = call.args
    out = _shape(call)
    return [
        None,
        _unbroadcast(_select(cond, g), x, out),
        _unbroadcast(_op.where(cond, _zeros(g), g), y, out),
    ]


# --- reductions --------------------------------------------------------------------------------


def _reduced(call: Call) -> tuple[Expr, tuple, list[int]]:
    """(data, data shape, reduced axes) of a reduction."""
    x = call.args[0]
    shape = _shape(x)
    a = _attrs(call)
    return x, shape, reduce_axes(len(shape), a["axis"], a["exclude"])


def _keep(e: Expr, call: Call, shape: tuple, axes: list[int]) -> Expr:
    """A reduction's result (or its gradient) with the reduced axes kept as size 1."""
    if _attrs(call)["keepdims"]:
        return e
    return _op.reshape(e, [1 if i in axes else d for i, d in enumerate(shape)])


@grad_rule("sum")
def _sum_grad(call, g):
    x, shape, axes = _reduced(call)
    return [_op.broadcast_to_like(_keep(g, call, shape, axes), x)]


@grad_rule("mean")
def _mean_grad(call, g):
    x, shape, axes = _reduced(call)
    count = math.prod(shape[a] for a in axes)
    return [_op.broadcast_to_like(_op.divide(_keep(g, call, shape, axes), _c(count, x)), x)]


@grad_rule("max", "min")
def _max_grad(call, g):
    # The gradient goes to the extreme elements, shared equally between ties.
    x, shape, axes = _reduced(call)
    hit = _op.cast(_op.equal(x, _keep(call, call, shape, axes)), _dtype(x))
    share = _op.divide(hit, _op.sum(hit, axes, keepdims=True))
    return [_op.multiply(_keep(g, call, shape, axes), share)]


@grad_rule("variance")
def _variance_grad(call, g):
    # var = sum((x - m)^2) / N:  dx = 2 (x - m) g / N,  dm = -sum(dx)
    x, m = call.args
    shape = _shape(x)
    a = _attrs(call)
    axes = reduce_axes(len(shape), a["axis"], a["exclude"])
    count = math.prod(shape[i] for i in axes) - (1 if a["unbiased"] else 0)
    g = _keep(g, call, shape, axes)
    dx = _op.multiply(_op.multiply(g, _op.subtract(x, m)), _c(2.0 / max(count, 1), x))
    return [dx, _unbroadcast(_op.negative(dx), m, shape)]


# --- shape ops ---------------------------------------------------------------------------------


@grad_rule("reshape", "nn.batch_flatten", "expand_dims", "squeeze")
def _reshape_grad(call, g):
    return [_op.reshape_like(g, call.args[0])]


@grad_rule("dyn.reshape")
def _dyn_reshape_grad(call, g):
    return [_op.reshape_like(g, call.args[0]), None]  # no gradient for the integer shape


@grad_rule("reshape_like")
def _reshape_like_grad(call, g):
    return [_op.reshape_like(g, call.args[0]), None]


@grad_rule("transpose")
def _transpose_grad(call, g):
    rank = len(_shape(call.args[0]))
    axes = _attrs(call)["axes"]
    axes = list(reversed(range(rank))) if not axes else [norm_axis(a, rank) for a in axes]
    return [_op.transpose(g, [int(i) for i in np.argsort(axes)])]


@grad_rule("layout_transform")
def _layout_transform_grad(call, g):
    a = _attrs(call)
    return [_op.layout_transform(g, a["dst_layout"], a["src_layout"])]


@grad_rule("broadcast_to")
def _broadcast_to_grad(call, g):
    return [_unbroadcast(g, call.args[0], _shape(call))]


@grad_rule("broadcast_to_like")
def _broadcast_to_like_grad(call, g):
    return [_unbroadcast(g, call.args[0], _shape(call)), None]


@grad_rule("collapse_sum_like")
def _collapse_sum_like_grad(call, g):
    return [_op.broadcast_to_like(g, call.args[0]), None]


@grad_rule("reverse")
def _reverse_grad(call, g):
    return [_op.reverse(g, _attrs(call)["axis"])]


@grad_rule("tile")
def _tile_grad(call, g):
    # out dims interleave (rep_i, d_i): reshape to that and sum the rep axes
    x = call.args[0]
    shape = _shape(x)
    reps = tuple(_attrs(call)["reps"])
    n = max(len(reps), len(shape))
    full = (1,) * (n - len(shape)) + shape
    reps = (1,) * (n - len(reps)) + reps
    split = [v for r, d in zip(reps, full) for v in (r, d)]
    summed = _op.sum(_op.reshape(g, split), list(range(0, 2 * n, 2)))
    return [_op.reshape_like(summed, x)]


@grad_rule("repeat")
def _repeat_grad(call, g):
    x = call.args[0]
    shape = _shape(x)
    a = _attrs(call)
    axis = norm_axis(a["axis"], len(shape))
    split = list(shape[: axis + 1]) + [a["repeats"]] + list(shape[axis + 1 :])
    return [_op.sum(_op.reshape(g, split), [axis + 1])]


@grad_rule("concatenate")
def _concatenate_grad(call, g):
    fields = call.args[0].checked_type
    if not isinstance(fields, TupleType):
        raise RelayError("internal: concatenate of a non-tuple")
    rank = len(fields.fields[0].shape)
    axis = norm_axis(_attrs(call)["axis"], rank)
    if len(fields.fields) == 1:
        return [Tuple((g,))]
    bounds = np.cumsum([f.shape[axis] for f in fields.fields])[:-1]
    return [_op.split(g, [int(b) for b in bounds], axis).astuple()]


@grad_rule("stack")
def _stack_grad(call, g):
    fields = call.args[0].checked_type
    n = len(fields.fields)
    axis = norm_axis(_attrs(call)["axis"], len(_shape(call)))
    parts = _op.split(g, n, axis)
    return [Tuple(tuple(_op.squeeze(parts[i], [axis]) for i in range(n)))]


@grad_rule("split")
def _split_grad(call, g):
    axis = _attrs(call)["axis"]
    return [_op.concatenate(g, axis)]


def _scatter_axis(g: Expr, positions: Expr, n: int, axis: int, shape: tuple, dtype: str) -> Expr:
    """The adjoint of gathering ``positions`` (an int tensor of k indices) along ``axis``:
    ``g`` of shape ``shape`` (k at ``axis``) is summed into ``n`` slots with a one-hot
    matrix product (there is no scatter op in Relay's core set)."""
    k = shape[axis]
    pre, post = math.prod(shape[:axis]), math.prod(shape[axis + 1 :])
    onehot = _op.cast(
        _op.equal(_op.reshape(positions, [k, 1]), _const(np.arange(n).reshape(1, n), "int64")),
        dtype,
    )  # (k, n)
    g3 = _op.transpose(_op.reshape(g, [pre, k, post]), [0, 2, 1])  # (pre, post, k)
    out = _nn.dense(g3, _op.transpose(onehot, [1, 0]))  # (pre, post, n)
    out = _op.transpose(out, [0, 2, 1])
    return _op.reshape(out, list(shape[:axis]) + [n] + list(shape[axis + 1 :]))


@grad_rule("take")
def _take_grad(call, g):
    data, indices = call.args
    a = _attrs(call)
    shape = _shape(data)
    if a["batch_dims"] not in (0, None):
        raise RelayError("no gradient registered for take with batch_dims != 0", call.span)
    idx_shape = _shape(indices)
    k = math.prod(idx_shape)
    if a["axis"] is None:
        n, axis, gshape = math.prod(shape), 0, (k,)
        g = _op.reshape(g, [k])
    else:
        axis = norm_axis(a["axis"], len(shape))
        n = shape[axis]
        gshape = shape[:axis] + (k,) + shape[axis + 1 :]
        g = _op.reshape(g, list(gshape))
    idx = _op.cast(_op.reshape(indices, [k]), "int64")
    if a["mode"] == "wrap":
        idx = _op.floor_mod(idx, _const(n, "int64"))
    else:  # clip (and in-range "fast")
        idx = _op.minimum(_op.maximum(idx, _const(0, "int64")), _const(n - 1, "int64"))
    out = _scatter_axis(g, idx, n, axis, gshape, _dtype(data))
    return [_op.reshape_like(out, data), None]


@grad_rule("strided_slice")
def _strided_slice_grad(call, g):
    from .impl.transform import _slices

    x = call.args[0]
    shape = _shape(x)
    slices = _slices(np.empty(shape, dtype=bool), _attrs(call))
    dtype = _dtype(x)
    widths, gather = [], []
    for axis, (sl, n) in enumerate(zip(slices, shape)):
        pos = np.arange(n)[sl]
        contiguous = len(pos) > 0 and np.array_equal(pos, np.arange(pos[0], pos[0] + len(pos)))
        if contiguous:
            widths.append((int(pos[0]), int(n - pos[0] - len(pos))))
        else:
            widths.append((0, 0))
            gather.append((axis, pos))
    cur = list(_shape(call))
    for axis, pos in gather:
        g = _scatter_axis(g, _const(pos, "int64"), shape[axis], axis, tuple(cur), dtype)
        cur[axis] = shape[axis]
    if any(w != (0, 0) for w in widths):
        g = _nn.pad(g, widths, pad_value=_c(0, x))
    return [g]


@grad_rule("nn.pad")
def _pad_grad(call, g):
    x, value = call.args
    a = _attrs(call)
    if a["pad_mode"] != "constant":
        raise RelayError(f"no gradient registered for nn.pad with pad_mode={a['pad_mode']}")
    shape = _shape(x)
    begin = [int(w[0]) for w in a["pad_width"]]
    dx = _op.strided_slice(g, begin, [b + d for b, d in zip(begin, shape)])
    dvalue = _op.cast_like(_op.subtract(_op.sum(g), _op.sum(dx)), value)
    return [dx, dvalue]


# --- nn: activations and dense layers ----------------------------------------------------------


@grad_rule("nn.relu")
def _relu_grad(call, g):
    x = call.args[0]
    return [_select(_op.greater(x, _c(0, x)), g)]


@grad_rule("nn.leaky_relu")
def _leaky_relu_grad(call, g):
    x = call.args[0]
    alpha = _c(_attrs(call)["alpha"], x)
    return [_op.where(_op.greater(x, _c(0, x)), g, _op.multiply(g, alpha))]


@grad_rule("nn.prelu")
def _prelu_grad(call, g):
    x, alpha = call.args
    rank = len(_shape(x))
    axis = norm_axis(_attrs(call)["axis"], rank)
    positive = _op.greater(x, _c(0, x))
    dx = _op.where(positive, g, _op.multiply(g, _along(alpha, axis, rank)))
    dalpha = _op.sum(_op.where(positive, _zeros(g), _op.multiply(g, x)), [axis], exclude=True)
    return [dx, dalpha]


@grad_rule("nn.softmax")
def _softmax_grad(call, g):
    axis = _attrs(call)["axis"]
    inner = _op.sum(_op.multiply(g, call), axis, keepdims=True)
    return [_op.multiply(_op.subtract(g, inner), call)]


@grad_rule("nn.log_softmax")
def _log_softmax_grad(call, g):
    axis = _attrs(call)["axis"]
    return [_op.subtract(g, _op.multiply(_op.sum(g, axis, keepdims=True), _op.exp(call)))]


@grad_rule("nn.dense")
def _dense_grad(call, g):
    # y = x W^T:  dx = g W,  dW = g^T x (over all leading axes of x)
    x, w = call.args
    units, k = _shape(w)
    dx = _nn.dense(g, _op.transpose(w, [1, 0]))
    if len(_shape(x)) == 2:
        g2, x2 = g, x
    else:
        g2, x2 = _op.reshape(g, [-1, units]), _op.reshape(x, [-1, k])
    dw = _nn.dense(_op.transpose(g2, [1, 0]), _op.transpose(x2, [1, 0]))
    return [dx, dw]


def _matmul_grads(mm: Callable, a: Expr, b: Expr, g: Expr, ta: bool, tb: bool):
    """Gradients of ``op(a) @ op(b)`` (op = transpose when flagged) with the product ``mm``."""
    if not ta:
        da = mm(g, b, transpose_a=False, transpose_b=not tb)
    elif not tb:
        da = mm(b, g, transpose_a=False, transpose_b=True)
    else:
        da = mm(b, g, transpose_a=True, transpose_b=True)
    if not tb:
        db = mm(a, g, transpose_a=not ta, transpose_b=False)
    elif not ta:
        db = mm(g, a, transpose_a=True, transpose_b=False)
    else:
        db = mm(g, a, transpose_a=True, transpose_b=True)
    return da, db


@grad_rule("nn.matmul")
def _matmul_grad(call, g):
    a, b = call.args
    attrs = _attrs(call)
    ta, tb = attrs["transpose_a"], attrs["transpose_b"]
    a_shape = _shape(a)
    if len(a_shape) > 2:
        if ta:
            raise RelayError("no gradient registered for nn.matmul of a transposed rank > 2 tensor")
        a2 = _op.reshape(a, [-1, a_shape[-1]])
        g2 = _op.reshape(g, [-1, _shape(call)[-1]])
        da, db = _matmul_grads(_nn.matmul, a2, b, g2, ta, tb)
        return [_op.reshape_like(da, a), db]
    da, db = _matmul_grads(_nn.matmul, a, b, g, ta, tb)
    return [da, db]


@grad_rule("nn.batch_matmul")
def _batch_matmul_grad(call, g):
    a, b = call.args
    attrs = _attrs(call)
    da, db = _matmul_grads(_nn.batch_matmul, a, b, g, attrs["transpose_a"], attrs["transpose_b"])
    # a batch of 1 broadcasts: its gradient sums over the batch
    batch = _shape(call)[0]
    da = da if _shape(a)[0] == batch else _op.sum(da, [0], keepdims=True)
    db = db if _shape(b)[0] == batch else _op.sum(db, [0], keepdims=True)
    return [da, db]


@grad_rule("nn.bias_add")
def _bias_add_grad(call, g):
    return [g, _op.sum(g, [_attrs(call)["axis"]], exclude=True)]


@grad_rule("nn.dropout")
def _dropout_grad(call, g):
    # inference form: the output is the input (the mask carries no gradient)
    return [g.fields[0] if isinstance(g, Tuple) else TupleGetItem(g, 0)]


@grad_rule("nn.batch_norm")
def _batch_norm_grad(call, g):
    # inference form: y = (x - mean) * s + beta with s = gamma / sqrt(var + eps);
    # outputs 1 and 2 are mean and var passed through.
    x, gamma, beta, mean, var = call.args
    a = _attrs(call)
    rank = len(_shape(x))
    axis = norm_axis(a["axis"], rank)
    gy, gm, gv = g.fields if isinstance(g, Tuple) else [TupleGetItem(g, i) for i in range(3)]
    rstd = _op.rsqrt(_op.add(var, _c(a["epsilon"], x)))
    scale = _op.multiply(gamma, rstd) if a["scale"] else rstd
    dx = _op.multiply(gy, _along(scale, axis, rank))
    s0 = _op.sum(gy, [axis], exclude=True)
    centered = _op.sum(
        _op.multiply(gy, _op.subtract(x, _along(mean, axis, rank))), [axis], exclude=True
    )
    dgamma = _op.multiply(centered, rstd) if a["scale"] else _zeros(gamma)
    dbeta = s0 if a["center"] else _zeros(beta)
    dmean = _op.add(_op.negative(_op.multiply(s0, scale)), gm)
    # d rstd / d var = -1/2 rstd^3
    drstd = _op.multiply(centered, gamma) if a["scale"] else centered
    dvar = _op.add(
        _op.multiply(
            drstd, _op.multiply(_op.multiply(rstd, _op.multiply(rstd, rstd)), _c(-0.5, x))
        ),
        gv,
    )
    return [dx, dgamma, dbeta, dmean, dvar]


@grad_rule("nn.layer_norm")
def _layer_norm_grad(call, g):
    # xhat = (x - mu) * rstd;  dx = rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat))
    x, gamma, beta = call.args
    a = _attrs(call)
    rank = len(_shape(x))
    axis = norm_axis(a["axis"], rank)
    mu = _op.mean(x, axis, keepdims=True)
    centered = _op.subtract(x, mu)
    var = _op.mean(_op.multiply(centered, centered), axis, keepdims=True)
    rstd = _op.rsqrt(_op.add(var, _c(a["epsilon"], x)))
    xhat = _op.multiply(centered, rstd)
    dxhat = _op.multiply(g, _along(gamma, axis, rank)) if a["scale"] else g
    dx = _op.multiply(
        rstd,
        _op.subtract(
            _op.subtract(dxhat, _op.mean(dxhat, axis, keepdims=True)),
            _op.multiply(xhat, _op.mean(_op.multiply(dxhat, xhat), axis, keepdims=True)),
        ),
    )
    dgamma = _op.sum(_op.multiply(g, xhat), [axis], exclude=True) if a["scale"] else _zeros(gamma)
    dbeta = _op.sum(g, [axis], exclude=True) if a["center"] else _zeros(beta)
    return [dx, dgamma, dbeta]


# --- nn: convolution and pooling ---------------------------------------------------------------


def _relayout(e: Expr, src: str, dst: str) -> Expr:
    """``e`` transposed from layout ``src`` to ``dst`` (permutations of the same letters)."""
    if src == dst:
        return e
    return _op.transpose(e, [src.index(c) for c in dst])


def _permute(shape: tuple, src: str, dst: str) -> tuple:
    return tuple(shape[src.index(c)] for c in dst)


def _conv_weight_grad(
    data: Expr, out_grad: Expr, dshape, gshape, kernel, strides, dilation, pads, groups
) -> Expr:
    """dW[o, c, kh, kw] = sum over n, oh, ow of g[n, o, oh, ow] * x[n, c, oh*s + kh*d, ...]:
    a convolution of the data (channels as batch, batch as channels) with the output
    gradient as kernel, where strides and dilation trade places.  ``data`` is NCHW,
    ``out_grad`` NCHW; the result is OIHW."""
    n, c, h, w = dshape
    o = gshape[1]
    cg = c // groups
    if groups == 1:
        xt = _op.transpose(data, [1, 0, 2, 3])  # (C, N, H, W)
    else:  # channels (g, cg) -> batch cg, channels (g, n)
        xt = _op.reshape(data, [n, groups, cg, h, w])
        xt = _op.reshape(_op.transpose(xt, [2, 1, 0, 3, 4]), [cg, groups * n, h, w])
    gt = _op.transpose(out_grad, [1, 0, 2, 3])  # (O, N, OH, OW)
    dw = _nn.conv2d(xt, gt, strides=dilation, padding=pads, dilation=strides, groups=groups)
    # The correlation may run past the kernel on the far side: keep the kernel's extent.
    full = [
        (size + pads[i] + pads[i + 2] - ((gshape[2 + i] - 1) * strides[i] + 1)) // dilation[i] + 1
        for i, size in enumerate((h, w))
    ]
    if full != list(kernel):
        dw = _op.strided_slice(dw, [0, 0, 0, 0], [cg, o, kernel[0], kernel[1]])
    return _op.transpose(dw, [1, 0, 2, 3])


def _conv_params(a):
    strides = as_tuple(a["strides"], 2, "strides")
    dilation = as_tuple(a["dilation"], 2, "dilation")
    (pt, pb), (pl, pr) = padding_pairs(a["padding"], 2)
    return strides, dilation, (pt, pl, pb, pr), a["groups"]


@grad_rule("nn.conv2d")
def _conv2d_grad(call, g):
    x, w = call.args
    a = _attrs(call)
    dl, kl = a["data_layout"], a["kernel_layout"]
    ol = a["out_layout"] or dl
    dshape = _permute(_shape(x), dl, "NCHW")
    wshape = _permute(_shape(w), kl, "OIHW")
    gshape = _permute(_shape(call), ol, "NCHW")
    strides, dilation, pads, groups = _conv_params(a)
    xc, wc, gc = _relayout(x, dl, "NCHW"), _relayout(w, kl, "OIHW"), _relayout(g, ol, "NCHW")
    kernel = wshape[2:]
    # Data gradient: the transposed convolution, with output padding restoring rows the
    # strided windows never reached.
    extra = []
    for i in range(2):
        span = (kernel[i] - 1) * dilation[i] + 1
        reached = (gshape[2 + i] - 1) * strides[i] - pads[i] - pads[i + 2] + span
        extra.append(dshape[2 + i] - reached)
    dx = _nn.conv2d_transpose(
        gc,
        wc,
        strides=strides,
        padding=pads,
        dilation=dilation,
        groups=groups,
        output_padding=extra,
    )
    dw = _conv_weight_grad(xc, gc, dshape, gshape, kernel, strides, dilation, pads, groups)
    return [_relayout(dx, "NCHW", dl), _relayout(dw, "OIHW", kl)]


@grad_rule("nn.conv2d_transpose")
def _conv2d_transpose_grad(call, g):
    # y = conv^T(x, W) is the adjoint of x = conv(y, W): dx = conv(g, W); dW as conv's
    # weight gradient with the roles of data and output gradient swapped.
    x, w = call.args
    a = _attrs(call)
    dl, kl = a["data_layout"], a["kernel_layout"]
    ol = a["out_layout"] or dl
    dshape = _permute(_shape(x), dl, "NCHW")
    wshape = _permute(_shape(w), kl, "IOHW")
    gshape = _permute(_shape(call), ol, "NCHW")
    strides, dilation, pads, groups = _conv_params(a)
    xc, wc, gc = _relayout(x, dl, "NCHW"), _relayout(w, kl, "IOHW"), _relayout(g, ol, "NCHW")
    dx = _nn.conv2d(gc, wc, strides=strides, padding=pads, dilation=dilation, groups=groups)
    span = [(k - 1) * d + 1 for k, d in zip(wshape[2:], dilation)]
    got = [(gshape[2 + i] + pads[i] + pads[i + 2] - span[i]) // strides[i] + 1 for i in range(2)]
    if got != list(dshape[2:]):
        dx = _op.strided_slice(dx, [0, 0, 0, 0], list(dshape))
    dw = _conv_weight_grad(gc, xc, gshape, dshape, wshape[2:], strides, dilation, pads, groups)
    return [_relayout(dx, "NCHW", dl), _relayout(dw, "IOHW", kl)]


@dataclass(frozen=True)
class _Pool:
    """The geometry of a pooling call, in NCHW terms (a 1-d pool is lifted to H = 1)."""

    dshape: tuple  # input (N, C, H, W)
    oshape: tuple  # output (N, C, OH, OW)
    pool: tuple
    strides: tuple
    dilation: tuple
    before: tuple  # padding before (top, left)
    after: tuple  # padding after (bottom, right)
    ceil_mode: bool
    count_include_pad: bool

    @staticmethod
    def of(call: Call, nd: int) -> _Pool:
        a = _attrs(call)
        spatial = "NC" + "HW"[2 - nd :]
        layout = a["layout"]
        out_layout = a["out_layout"] or layout
        pads = padding_pairs(a["padding"], nd)
        lift = (1,) * (2 - nd)  # 1-d: a unit H axis in front of W

        def pair(name: str) -> tuple:
            return lift + tuple(as_tuple(a[name], nd, name))

        dshape = _permute(_shape(call.args[0]), layout, spatial)
        oshape = _permute(_shape(call), out_layout, spatial)
        return _Pool(
            dshape[:2] + lift + dshape[2:],
            oshape[:2] + lift + oshape[2:],
            pair("pool_size"),
            pair("strides"),
            pair("dilation"),
            (0,) * (2 - nd) + tuple(p[0] for p in pads),
            (0,) * (2 - nd) + tuple(p[1] for p in pads),
            a["ceil_mode"],
            a.get("count_include_pad", False),
        )

    def span(self, i: int) -> int:
        return (self.pool[i] - 1) * self.dilation[i] + 1

    def reach(self, i: int) -> int:
        """How far the windows reach on spatial axis ``i``, from the padded input's start."""
        return (self.oshape[2 + i] - 1) * self.strides[i] + self.span(i)

    def overhang(self, i: int) -> int:
        """How far the windows reach past the input's end on axis ``i`` (into padding)."""
        return max(self.reach(i) - self.before[i] - self.dshape[2 + i], 0)

    def scatter(self, z: Expr, kernel: Constant) -> Expr:
        """Sum per-window values back onto the input: a grouped transposed convolution.

        ``z`` is ``(N, C*K, OH, OW)`` (K values per window), ``kernel`` the constant
        ``(C*K, 1, KH, KW)`` spreading each onto its window position.  The transposed
        convolution's padding crops the pooling's padding away, and its output padding
        restores input rows that no window reached.
        """
        extra = [max(self.before[i] + self.dshape[2 + i] - self.reach(i), 0) for i in range(2)]
        return _nn.conv2d_transpose(
            z,
            kernel,
            strides=self.strides,
            padding=(*self.before, self.overhang(0), self.overhang(1)),
            dilation=self.dilation,
            groups=self.dshape[1],
            output_padding=extra,
        )


def _avg_pool_dx(geo: _Pool, g: Expr, dtype: str) -> Expr:
    """The data gradient of an average pool, NCHW: ``g`` over each window's divisor."""
    counts = []
    for i in range(2):
        size, before, after = geo.dshape[2 + i], geo.before[i], geo.after[i]
        extra = geo.strides[i] - 1 if geo.ceil_mode else 0
        # the divisor of each window, exactly as the forward op counts it
        if geo.count_include_pad:
            mask = np.r_[np.ones(before + size + after), np.zeros(extra)]
        else:
            mask = np.r_[np.zeros(before), np.ones(size), np.zeros(after + extra)]
        step, span, dil = geo.strides[i], geo.span(i), geo.dilation[i]
        counts.append(
            [mask[o * step : o * step + span : dil].sum() for o in range(geo.oshape[2 + i])]
        )
    divisor = np.maximum(np.multiply.outer(counts[0], counts[1]), 1)
    kernel = np.ones((geo.dshape[1], 1, *geo.pool), dtype)
    return geo.scatter(_op.divide(g, _const(divisor, dtype)), _const(kernel, dtype))


def _max_pool_dx(geo: _Pool, x: Expr, y: Expr, g: Expr, dtype: str) -> Expr:
    """The data gradient of a max pool, NCHW (``x`` input, ``y`` result, ``g`` adjoint).

    Each window's gradient goes to its first maximal element (as TVM's pool_grad): for
    each window offset k, select where the shifted input equals the result and no earlier
    offset did; stack the K selections and scatter them back.
    """
    n, c = geo.dshape[:2]
    oh, ow = geo.oshape[2:]
    (sh, sw), (kh, kw) = geo.strides, geo.pool
    if any(geo.before) or geo.overhang(0) or geo.overhang(1):
        lowest = _const(np.finfo(dtype).min, dtype)  # the forward op's padding value
        widths = (
            (0, 0),
            (0, 0),
            (geo.before[0], geo.overhang(0)),
            (geo.before[1], geo.overhang(1)),
        )
        x = _nn.pad(x, widths, lowest)
    zero = _zeros(g)
    taken = None
    parts = []
    for i in range(kh):
        for j in range(kw):
            top, left = i * geo.dilation[0], j * geo.dilation[1]
            shifted = _op.strided_slice(
                x,
                [0, 0, top, left],
                [n, c, top + (oh - 1) * sh + 1, left + (ow - 1) * sw + 1],
                [1, 1, sh, sw],
            )
            hit = _op.equal(shifted, y)
            if taken is None:
                first, taken = hit, hit
            else:
                first = _op.logical_and(hit, _op.logical_not(taken))
                taken = _op.logical_or(taken, hit)
            parts.append(_op.where(first, g, zero))
    k = kh * kw
    z = _op.reshape(_op.stack(parts, 2), [n, c * k, oh, ow])
    kernel = np.zeros((c, k, kh, kw), dtype)
    for i in range(kh):
        for j in range(kw):
            kernel[:, i * kw + j, i, j] = 1
    return geo.scatter(z, _const(kernel.reshape((c * k, 1, kh, kw)), dtype))


def _pool_grad(kind: str, nd: int):
    """The rule of ``nn.{kind}_pool{nd}d``: the NCHW gradient above, between layouts (a
    1-d pool gets a unit H axis and loses it again)."""
    spatial = "NC" + "HW"[2 - nd :]

    def rule(call, g):
        a = _attrs(call)
        layout, out_layout = a["layout"], a["out_layout"] or a["layout"]
        geo = _Pool.of(call, nd)
        dtype = _dtype(call)

        def canonical(e: Expr, src: str) -> Expr:
            e = _relayout(e, src, spatial)
            return _op.expand_dims(e, 2) if nd == 1 else e

        gc = canonical(g, out_layout)
        if kind == "avg":
            dx = _avg_pool_dx(geo, gc, dtype)
        else:
            x, y = canonical(call.args[0], layout), canonical(call, out_layout)
            dx = _max_pool_dx(geo, x, y, gc, dtype)
        if nd == 1:
            dx = _op.squeeze(dx, [2])
        return [_relayout(dx, spatial, layout)]

    return rule


for _nd in (1, 2):
    for _kind in ("max", "avg"):
        grad_rule(f"nn.{_kind}_pool{_nd}d")(_pool_grad(_kind, _nd))


@grad_rule("nn.conv1d")
def _conv1d_grad(call, g):
    # conv1d is conv2d with a unit H axis: differentiate that, then drop the axis.
    x, w = call.args
    a = _attrs(call)
    dl, kl = a["data_layout"], a["kernel_layout"]
    ol = a["out_layout"] or dl

    def lifted(e: Expr, src: str, dst: str, shape: tuple) -> Expr:
        e = _op.expand_dims(_relayout(e, src, dst), 2)
        e.set_checked_type(TensorType((*shape[:2], 1, *shape[2:]), _dtype(call)))
        return e

    xs = lifted(x, dl, "NCW", _permute(_shape(x), dl, "NCW"))
    ws = lifted(w, kl, "OIW", _permute(_shape(w), kl, "OIW"))
    gs = lifted(g, ol, "NCW", _permute(_shape(call), ol, "NCW"))
    ((pl, pr),) = padding_pairs(a["padding"], 1)
    conv = _nn.conv2d(
        xs,
        ws,
        strides=(1, *as_tuple(a["strides"], 1, "strides")),
        padding=(0, pl, 0, pr),
        dilation=(1, *as_tuple(a["dilation"], 1, "dilation")),
        groups=a["groups"],
    )
    conv.set_checked_type(gs.checked_type)
    dx, dw = _conv2d_grad(conv, gs)
    return [
        _relayout(_op.squeeze(dx, [2]), "NCW", dl),
        _relayout(_op.squeeze(dw, [2]), "OIW", kl),
    ]


@grad_rule("nn.upsampling")
def _upsampling_grad(call, g):
    # nearest neighbour by integer scales copies each pixel into a block: sum the blocks
    x = call.args[0]
    a = _attrs(call)
    sh, sw = a["scale_h"], a["scale_w"]
    if a["method"] != "nearest_neighbor" or sh != int(sh) or sw != int(sw):
        raise RelayError(
            "no gradient registered for nn.upsampling other than nearest_neighbor by integer "
            f"scales (got {a['method']} by {sh} x {sw})",
            call.span,
        )
    layout = a["layout"]
    n, c, h, w = _permute(_shape(x), layout, "NCHW")
    gc = _op.reshape(_relayout(g, layout, "NCHW"), [n, c, h, int(sh), w, int(sw)])
    return [_relayout(_op.sum(gc, [3, 5]), "NCHW", layout)]


@grad_rule("nn.global_avg_pool2d")
def _global_avg_pool2d_grad(call, g):
    x = call.args[0]
    layout = _attrs(call)["layout"]
    shape = _shape(x)
    count = shape[layout.index("H")] * shape[layout.index("W")]
    ol = _attrs(call)["out_layout"] or layout
    return [_op.broadcast_to_like(_op.divide(_relayout(g, ol, layout), _c(count, x)), x)]


@grad_rule("nn.global_max_pool2d")
def _global_max_pool2d_grad(call, g):
    # The gradient goes to the maximal elements, shared equally between ties.
    x = call.args[0]
    a = _attrs(call)
    layout = a["layout"]
    ol = a["out_layout"] or layout
    axes = [layout.index("H"), layout.index("W")]
    hit = _op.cast(_op.equal(x, _relayout(call, ol, layout)), _dtype(x))
    share = _op.divide(hit, _op.sum(hit, axes, keepdims=True))
    return [_op.multiply(_relayout(g, ol, layout), share)]


__all__ = ["GradRule", "get_grad_rule", "grad_rule"]
