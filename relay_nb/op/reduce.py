"""Reductions: sum, mean, max, min, prod, all, any, argmax, argmin, variance.

All share TVM's axis rule (``GetReduceAxes``): ``axis=None`` reduces every axis, a list
reduces those axes (negative ones count from the end), ``exclude=True`` reduces the
*other* axes, and ``keepdims=True`` keeps reduced axes as size 1.  ``std`` is not an op in
TVM: ``relay.std`` builds ``sqrt(variance(...))`` (see :mod:`.api`).
"""

from __future__ import annotations

from ..errors import RelayTypeError
from ..ir.ty import TensorType
from ..typing.relations import forward_relation, shape_text
from ._common import broadcasts_to, norm_axis, register, schema, tensor
from .registry import OpPattern


def reduce_axes(rank: int, axis, exclude: bool) -> list[int]:
    """The axes a reduction removes, sorted (TVM's GetReduceAxes)."""
    if axis is None:
        return list(range(rank))
    axes = []
    for a in axis:
        n = norm_axis(a, rank)
        if n in axes:
            raise RelayTypeError(f"axis {a} is given twice")
        axes.append(n)
    if exclude:
        return [i for i in range(rank) if i not in axes]
    return sorted(axes)


def reduce_shape(shape: tuple, attrs) -> tuple:
    axes = reduce_axes(len(shape), attrs["axis"], attrs["exclude"])
    if attrs["keepdims"]:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


@forward_relation("Reduce")
def reduce_rel(inputs, attrs, reporter):
    data = tensor(inputs[0], "data")
    return TensorType(reduce_shape(data.shape, attrs), data.dtype)


@forward_relation("ReduceBool")
def reduce_bool_rel(inputs, attrs, reporter):
    """all / any: a bool tensor in, a bool tensor out."""
    data = tensor(inputs[0], "data")
    return TensorType(reduce_shape(data.shape, attrs), reporter.unify_dtype(data.dtype, "bool"))


@forward_relation("ArgReduce")
def arg_reduce_rel(inputs, attrs, reporter):
    """argmax / argmin: int32 indices of the reduced shape."""
    return TensorType(reduce_shape(tensor(inputs[0], "data").shape, attrs), "int32")


@forward_relation("Variance")
def variance_rel(inputs, attrs, reporter):
    """``variance(data, mean)``: ``mean`` is data's mean over the same axes (kept as size 1)."""
    data = tensor(inputs[0], "data")
    mean = tensor(inputs[1], "mean")
    reporter.unify_dtype(data.dtype, mean.dtype)
    if not broadcasts_to(mean.shape, data.shape):
        raise RelayTypeError(
            f"the mean's shape {shape_text(mean.shape)} does not broadcast to the data's "
            f"{shape_text(data.shape)}"
        )
    return TensorType(reduce_shape(data.shape, attrs), data.dtype)


_AXIS = ("axis", "optional_ints", None)
REDUCE_ATTRS = schema(
    "relay.attrs.ReduceAttrs", _AXIS, ("keepdims", "bool", False), ("exclude", "bool", False)
)
ARG_REDUCE_ATTRS = schema(
    "relay.attrs.ArgReduceAttrs",
    _AXIS,
    ("keepdims", "bool", False),
    ("select_last_index", "bool", False),
    ("exclude", "bool", False),
)
VARIANCE_ATTRS = schema(
    "relay.attrs.VarianceAttrs",
    _AXIS,
    ("keepdims", "bool", False),
    ("exclude", "bool", False),
    ("unbiased", "bool", False),
)

REDUCE_OPS = [
    ("sum", reduce_rel, REDUCE_ATTRS, "The sum of the elements over the given axes."),
    ("mean", reduce_rel, REDUCE_ATTRS, "The arithmetic mean of the elements over the given axes."),
    ("max", reduce_rel, REDUCE_ATTRS, "The largest element over the given axes."),
    ("min", reduce_rel, REDUCE_ATTRS, "The smallest element over the given axes."),
    ("prod", reduce_rel, REDUCE_ATTRS, "The product of the elements over the given axes."),
    ("all", reduce_bool_rel, REDUCE_ATTRS, "Logical AND of a bool tensor over the given axes."),
    ("any", reduce_bool_rel, REDUCE_ATTRS, "Logical OR of a bool tensor over the given axes."),
    (
        "argmax",
        arg_reduce_rel,
        ARG_REDUCE_ATTRS,
        (
            "The int32 index of the largest element over the given axes (the first one, or the "
            "last with ``select_last_index``)."
        ),
    ),
    (
        "argmin",
        arg_reduce_rel,
        ARG_REDUCE_ATTRS,
        (
            "The int32 index of the smallest element over the given axes (the first one, or the "
            "last with ``select_last_index``)."
        ),
    ),
]

for _name, _rel, _attrs, _doc in REDUCE_OPS:
    register(
        _name, 1, _rel, attrs=_attrs, pattern=OpPattern.COMM_REDUCE, doc=_doc, arg_names=("data",)
    )

register(
    "variance",
    2,
    variance_rel,
    attrs=VARIANCE_ATTRS,
    pattern=OpPattern.COMM_REDUCE,
    arg_names=("data", "mean"),
    doc="The variance of ``data`` over the given axes, given its ``mean`` over them (kept "
    "dims); ``unbiased`` divides by ``N - 1``.  ``relay.variance`` computes the mean for you.",
)
