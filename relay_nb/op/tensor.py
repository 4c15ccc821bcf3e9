"""Elementwise, broadcasting, cast, selection and tensor-creating operators.

Rules are tables: one row per op, registered by a loop, with TVM's names, attribute
type keys and fusion patterns (binary arithmetic and comparisons are ``BROADCAST``,
unary math ``ELEMWISE``).  The Python builders (``relay.add``...) are in :mod:`.api`.
"""

from __future__ import annotations

import math

from ..errors import RelayTypeError
from ..ir.ty import Any, IncompleteType, TensorType
from ..typing.relations import (
    broadcast_comp_rel,
    broadcast_rel,
    broadcast_shapes,
    check_dims,
    forward_relation,
    is_known,
)
from ._common import register, relation, schema, tensor, type_text
from .registry import OpPattern

# --- relations --------------------------------------------------------------------------


@forward_relation("Elemwise")
def elemwise_rel(inputs, attrs, reporter):
    """One tensor in, a tensor of the same type out."""
    return tensor(inputs[0])


@forward_relation("ElemwiseBool")
def elemwise_bool_rel(inputs, attrs, reporter):
    """One tensor in, a ``bool`` tensor of its shape out (isnan, isinf, isfinite)."""
    return TensorType(tensor(inputs[0]).shape, "bool")


@forward_relation("Cast")
def cast_rel(inputs, attrs, reporter):
    return TensorType(tensor(inputs[0]).shape, attrs["dtype"])


@forward_relation("CastLike")
def cast_like_rel(inputs, attrs, reporter):
    return TensorType(tensor(inputs[0], "data").shape, tensor(inputs[1], "dtype_like").dtype)


@forward_relation("Where")
def where_rel(inputs, attrs, reporter):
    """``condition``, ``x`` and ``y`` broadcast together; x and y share a dtype."""
    cond = tensor(inputs[0], "condition")
    x = tensor(inputs[1], "x")
    y = tensor(inputs[2], "y")
    dtype = reporter.unify_dtype(x.dtype, y.dtype)
    return TensorType(broadcast_shapes(cond.shape, broadcast_shapes(x.shape, y.shape)), dtype)


def _scalar(t, what):
    t = tensor(t, what)
    if t.shape != ():
        raise RelayTypeError(f"{what} must be a scalar, found {type_text(t)}")
    return t


@forward_relation("InitOp")
def init_rel(inputs, attrs, reporter):
    """zeros / ones: the shape and dtype come from the attributes (float32 by default)."""
    check_dims(attrs["shape"], "shape")
    return TensorType(tuple(attrs["shape"]), attrs["dtype"] or "float32")


@forward_relation("Full")
def full_rel(inputs, attrs, reporter):
    fill = _scalar(inputs[0], "fill_value")
    check_dims(attrs["shape"], "shape")
    return TensorType(tuple(attrs["shape"]), attrs["dtype"] or fill.dtype)


@forward_relation("FullLike")
def full_like_rel(inputs, attrs, reporter):
    """The type of ``data``; the scalar fill value is converted (as TVM, no dtype check)."""
    _scalar(inputs[1], "fill_value")
    return tensor(inputs[0], "data")


def _scalar_value(v):
    """An arange bound given as a number or a scalar Constant; None if not static."""
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return v
    data = getattr(v, "data", None)
    if data is not None and getattr(data, "ndim", None) == 0:
        return data.item()
    return None


@relation("Arange")
def arange_rel(types, num_inputs, attrs, reporter):
    """start, stop and step are scalars of ``dtype``; the length is known when the
    attributes hold the bounds (as the builder records them), else it is ``?``."""
    dtype = attrs["dtype"] or "float32"
    for t, what in zip(types[:3], ("start", "stop", "step")):
        if isinstance(t, IncompleteType):
            reporter.assign(t, TensorType((), dtype))
        elif is_known(t):
            reporter.unify_dtype(_scalar(t, what).dtype, dtype)
    bounds = [_scalar_value(attrs.get(k)) for k in ("start", "stop", "step")]
    if None in bounds:
        length = Any
    else:
        start, stop, step = bounds
        if step == 0:
            raise RelayTypeError("step must not be 0")
        length = max(math.ceil((stop - start) / step), 0)
    reporter.assign(types[3], TensorType((length,), dtype))
    return True


# --- tables -------------------------------------------------------------------------------

BINARY_OPS = [
    ("add", "Elementwise ``lhs + rhs`` with NumPy broadcasting."),
    ("subtract", "Elementwise ``lhs - rhs`` with NumPy broadcasting."),
    ("multiply", "Elementwise ``lhs * rhs`` with NumPy broadcasting."),
    ("divide", "Elementwise ``lhs / rhs`` with NumPy broadcasting (C division for integers)."),
    ("floor_divide", "Elementwise ``floor(lhs / rhs)`` with NumPy broadcasting."),
    ("trunc_divide", "Elementwise ``trunc(lhs / rhs)`` with NumPy broadcasting."),
    ("mod", "Elementwise remainder with the sign of ``lhs`` (C ``fmod``), broadcasting."),
    ("floor_mod", "Elementwise remainder with the sign of ``rhs`` (Python ``%``), broadcasting."),
    ("trunc_mod", "Elementwise truncated remainder (as ``mod``), broadcasting."),
    ("power", "Elementwise ``lhs ** rhs`` with NumPy broadcasting."),
    ("maximum", "Elementwise maximum of two tensors with NumPy broadcasting."),
    ("minimum", "Elementwise minimum of two tensors with NumPy broadcasting."),
    ("logical_and", "Elementwise logical AND of two bool tensors, broadcasting."),
    ("logical_or", "Elementwise logical OR of two bool tensors, broadcasting."),
    ("logical_xor", "Elementwise logical XOR of two bool tensors, broadcasting."),
    ("bitwise_and", "Elementwise bitwise AND of two integer tensors, broadcasting."),
    ("bitwise_or", "Elementwise bitwise OR of two integer tensors, broadcasting."),
    ("bitwise_xor", "Elementwise bitwise XOR of two integer tensors, broadcasting."),
    ("left_shift", "Elementwise ``lhs << rhs`` on integer tensors, broadcasting."),
    ("right_shift", "Elementwise ``lhs >> rhs`` on integer tensors, broadcasting."),
]

COMPARISON_OPS = [
    ("equal", "Elementwise ``lhs == rhs``; a bool tensor of the broadcast shape."),
    ("not_equal", "Elementwise ``lhs != rhs``; a bool tensor of the broadcast shape."),
    ("less", "Elementwise ``lhs < rhs``; a bool tensor of the broadcast shape."),
    ("less_equal", "Elementwise ``lhs <= rhs``; a bool tensor of the broadcast shape."),
    ("greater", "Elementwise ``lhs > rhs``; a bool tensor of the broadcast shape."),
    ("greater_equal", "Elementwise ``lhs >= rhs``; a bool tensor of the broadcast shape."),
]

UNARY_OPS = [
    ("negative", "Elementwise negation ``-x``."),
    ("abs", "Elementwise absolute value."),
    ("exp", "Elementwise natural exponential ``e ** x``."),
    ("log", "Elementwise natural logarithm."),
    ("log2", "Elementwise base-2 logarithm."),
    ("log10", "Elementwise base-10 logarithm."),
    ("sqrt", "Elementwise square root."),
    ("rsqrt", "Elementwise reciprocal square root ``1 / sqrt(x)``."),
    ("sigmoid", "Elementwise logistic sigmoid ``1 / (1 + exp(-x))``."),
    ("tanh", "Elementwise hyperbolic tangent."),
    ("erf", "Elementwise Gauss error function."),
    ("sin", "Elementwise sine."),
    ("cos", "Elementwise cosine."),
    ("tan", "Elementwise tangent."),
    ("sinh", "Elementwise hyperbolic sine."),
    ("cosh", "Elementwise hyperbolic cosine."),
    ("asin", "Elementwise inverse sine."),
    ("acos", "Elementwise inverse cosine."),
    ("atan", "Elementwise inverse tangent."),
    ("asinh", "Elementwise inverse hyperbolic sine."),
    ("acosh", "Elementwise inverse hyperbolic cosine."),
    ("atanh", "Elementwise inverse hyperbolic tangent."),
    ("floor", "Elementwise floor: the largest integer not greater than x."),
    ("ceil", "Elementwise ceiling: the smallest integer not less than x."),
    ("round", "Elementwise rounding to the nearest integer."),
    ("trunc", "Elementwise truncation toward zero."),
    ("sign", "Elementwise sign: -1, 0 or 1."),
    ("logical_not", "Elementwise logical NOT of a bool tensor."),
    ("bitwise_not", "Elementwise bitwise NOT of an integer tensor."),
    ("fast_exp", "Elementwise exponential by a fast approximation (same type as exp)."),
    ("fast_tanh", "Elementwise tanh by a fast approximation (same type as tanh)."),
    ("fast_erf", "Elementwise erf by a fast approximation (same type as erf)."),
    ("copy", "A copy of the tensor: same type, a new buffer."),
    ("zeros_like", "A tensor of zeros with the type of the input."),
    ("ones_like", "A tensor of ones with the type of the input."),
]

PREDICATE_OPS = [
    ("isnan", "Elementwise test for NaN; a bool tensor of the input's shape."),
    ("isinf", "Elementwise test for infinity; a bool tensor of the input's shape."),
    ("isfinite", "Elementwise test for a finite value; a bool tensor of the input's shape."),
]

INIT_ATTRS = schema("relay.attrs.InitOpAttrs", ("shape", "ints"), ("dtype", "dtype", ""))

for _name, _doc in BINARY_OPS:
    register(
        _name, 2, broadcast_rel, pattern=OpPattern.BROADCAST, doc=_doc, arg_names=("lhs", "rhs")
    )
for _name, _doc in COMPARISON_OPS:
    register(
        _name,
        2,
        broadcast_comp_rel,
        pattern=OpPattern.BROADCAST,
        doc=_doc,
        arg_names=("lhs", "rhs"),
    )
for _name, _doc in UNARY_OPS:
    register(_name, 1, elemwise_rel, pattern=OpPattern.ELEMWISE, doc=_doc, arg_names=("data",))
for _name, _doc in PREDICATE_OPS:
    register(_name, 1, elemwise_bool_rel, pattern=OpPattern.ELEMWISE, doc=_doc, arg_names=("data",))

register(
    "clip",
    1,
    elemwise_rel,
    attrs=schema("relay.attrs.ClipAttrs", ("a_min", "float"), ("a_max", "float")),
    pattern=OpPattern.ELEMWISE,
    arg_names=("data",),
    doc="Clamp every element into ``[a_min, a_max]``; the type is unchanged.",
)
register(
    "cast",
    1,
    cast_rel,
    attrs=schema("relay.attrs.CastAttrs", ("dtype", "dtype")),
    pattern=OpPattern.ELEMWISE,
    arg_names=("data",),
    doc="Convert every element to ``dtype``; the shape is unchanged.",
)
register(
    "cast_like",
    2,
    cast_like_rel,
    pattern=OpPattern.ELEMWISE,
    arg_names=("data", "dtype_like"),
    doc="Convert ``data`` to the dtype of ``dtype_like``; the shape of ``data`` is kept.",
)
register(
    "where",
    3,
    where_rel,
    pattern=OpPattern.BROADCAST,
    arg_names=("condition", "x", "y"),
    doc="Select from ``x`` where ``condition`` is true and from ``y`` elsewhere; the three "
    "shapes broadcast together, as in ``numpy.where``.",
)
register(
    "zeros",
    0,
    init_rel,
    attrs=INIT_ATTRS,
    pattern=OpPattern.ELEMWISE,
    doc="A tensor of zeros of the given ``shape`` and ``dtype``; it takes no arguments.",
)
register(
    "ones",
    0,
    init_rel,
    attrs=INIT_ATTRS,
    pattern=OpPattern.ELEMWISE,
    doc="A tensor of ones of the given ``shape`` and ``dtype``; it takes no arguments.",
)
register(
    "full",
    1,
    full_rel,
    attrs=INIT_ATTRS,
    pattern=OpPattern.ELEMWISE,
    arg_names=("fill_value",),
    doc="A tensor of ``shape`` filled with the scalar ``fill_value``; its dtype is ``dtype`` "
    "or, when that is empty, the fill value's.",
)
register(
    "full_like",
    2,
    full_like_rel,
    pattern=OpPattern.ELEMWISE,
    arg_names=("data", "fill_value"),
    doc="A tensor with the type of ``data`` filled with the scalar ``fill_value``.",
)
register(
    "arange",
    3,
    arange_rel,
    attrs=schema(
        "relay.attrs.ArangeAttrs",
        ("start", "any", None),
        ("stop", "any", None),
        ("step", "any", None),
        ("dtype", "dtype", "float32"),
    ),
    pattern=OpPattern.OPAQUE,
    arg_names=("start", "stop", "step"),
    doc="Evenly spaced values in ``[start, stop)`` with ``step``.  The bounds are arguments; "
    "as in TVM they are also kept as attributes, which give the static length "
    "``ceil((stop - start) / step)`` (``?`` when they are absent).",
)
