"""Sorting and selection: argsort, sort, topk, unique, searchsorted (and their builders).

Relations follow TVM's ``src/relay/op/algorithm/*.cc`` and ``UniqueRel``.  Index results
default to ``int32`` when the attrs leave ``dtype`` unset (TVM's Python builders pass
``"int32"``; its C++ default is an unset dtype).  ``unique`` has TVM's *padded* outputs:
every field has the input's length and ``num_unique`` says how much of it is valid.
"""

from __future__ import annotations

from ..errors import RelayTypeError
from ..ir.expr import Call, TupleWrapper
from ..ir.ty import TensorType, TupleType
from ..typing.relations import forward_relation, shape_text
from ._common import call, is_int_dtype, is_static, norm_axis, register, same_dim, schema, tensor

__all__ = ["argsort", "sort", "topk", "unique", "searchsorted"]

TOPK_RET_TYPES = ("both", "values", "indices")


def index_dtype(attrs) -> str:
    return attrs["dtype"] or "int32"


@forward_relation("Argsort")
def argsort_rel(inputs, attrs, reporter):
    data = tensor(inputs[0], "data")
    norm_axis(attrs["axis"], len(data.shape))
    return TensorType(data.shape, index_dtype(attrs))


@forward_relation("Sort")
def sort_rel(inputs, attrs, reporter):
    data = tensor(inputs[0], "data")
    norm_axis(attrs["axis"], len(data.shape))
    return data


@forward_relation("TopK")
def topk_rel(inputs, attrs, reporter):
    """``k < 1`` (or unset) keeps the whole axis; ``ret_type`` picks the result's fields."""
    data = tensor(inputs[0], "data")
    axis = norm_axis(attrs["axis"], len(data.shape))
    if attrs["ret_type"] not in TOPK_RET_TYPES:
        raise RelayTypeError(
            f"ret_type must be one of {', '.join(TOPK_RET_TYPES)}, got {attrs['ret_type']!r}"
        )
    k = attrs["k"]
    shape = list(data.shape)
    if k is not None and k >= 1:
        if is_static(shape[axis]) and k > shape[axis]:
            raise RelayTypeError(f"k = {k} is larger than the axis length {shape[axis]}")
        shape[axis] = k
    values = TensorType(tuple(shape), data.dtype)
    indices = TensorType(tuple(shape), index_dtype(attrs))
    return {"both": TupleType((values, indices)), "values": values, "indices": indices}[
        attrs["ret_type"]
    ]


@forward_relation("Unique")
def unique_rel(inputs, attrs, reporter):
    """(unique, indices, inverse_indices, num_unique[, counts]), each padded to the length."""
    data = tensor(inputs[0], "data")
    if len(data.shape) != 1:
        raise RelayTypeError(f"data must be a 1-D tensor, found shape {shape_text(data.shape)}")
    fields = [
        TensorType(data.shape, data.dtype),
        TensorType(data.shape, "int32"),
        TensorType(data.shape, "int32"),
        TensorType((1,), "int32"),
    ]
    if attrs["return_counts"]:
        fields.append(TensorType(data.shape, "int32"))
    return TupleType(tuple(fields))


@forward_relation("SearchSorted")
def searchsorted_rel(inputs, attrs, reporter):
    """A 1-D sorted sequence serves every value; else the leading dims must agree."""
    seq = tensor(inputs[0], "sorted_sequence")
    values = tensor(inputs[1], "values")
    reporter.unify_dtype(seq.dtype, values.dtype)
    if not values.shape:
        raise RelayTypeError("values must have rank at least 1")
    if len(seq.shape) != 1:
        if len(seq.shape) != len(values.shape):
            raise RelayTypeError(
                f"sorted_sequence {shape_text(seq.shape)} must be 1-D or have the rank of "
                f"values {shape_text(values.shape)}"
            )
        if not all(same_dim(a, b) for a, b in zip(seq.shape[:-1], values.shape[:-1])):
            raise RelayTypeError(
                f"sorted_sequence {shape_text(seq.shape)} and values {shape_text(values.shape)} "
                "differ along the outer axes"
            )
    if is_int_dtype(attrs["dtype"]) is False:
        raise RelayTypeError(f"dtype must be an integer type, got {attrs['dtype']!r}")
    return TensorType(values.shape, attrs["dtype"])


ARGSORT_ATTRS = schema(
    "relay.attrs.ArgsortAttrs", ("axis", "int", -1), ("is_ascend", "bool", True), ("dtype", "dtype", "")
)

register(
    "argsort",
    1,
    argsort_rel,
    attrs=ARGSORT_ATTRS,
    arg_names=("data",),
    doc="The indices that sort ``data`` along ``axis`` (stable; descending with is_ascend=False).",
)
register(
    "sort",
    1,
    sort_rel,
    attrs=ARGSORT_ATTRS,
    arg_names=("data",),
    doc="``data`` sorted along ``axis``.",
)
register(
    "topk",
    1,
    topk_rel,
    attrs=schema(
        "relay.attrs.TopkAttrs",
        ("k", "optional_int", None),
        ("axis", "int", -1),
        ("ret_type", "str", "both"),
        ("is_ascend", "bool", False),
        ("dtype", "dtype", ""),
    ),
    arg_names=("data",),
    doc="The ``k`` largest (smallest with is_ascend) elements along ``axis`` and/or their "
    "indices, in sorted order.",
)
register(
    "unique",
    1,
    unique_rel,
    attrs=schema(
        "relay.attrs.UniqueAttrs", ("sorted", "bool", True), ("return_counts", "bool", False)
    ),
    arg_names=("data",),
    doc="The distinct elements of a 1-D tensor, the index of each one's first occurrence, "
    "each element's position in the unique list, how many there are (and their counts); "
    "outputs are padded to the input's length.",
)
register(
    "searchsorted",
    2,
    searchsorted_rel,
    attrs=schema("relay.attrs.SearchSortedAttrs", ("right", "bool", False), ("dtype", "dtype", "int32")),
    arg_names=("sorted_sequence", "values"),
    doc="Where each value would be inserted into the innermost axis of ``sorted_sequence`` to "
    "keep it sorted (before equal elements, after them with right=True).",
)


# --- builders (TVM's python/tvm/relay/op/algorithm.py) ------------------------------------


def argsort(data, axis=-1, is_ascend=1, dtype="int32") -> Call:
    """The indices that sort ``data`` along ``axis``: ``relay.argsort(x, axis=0)``."""
    return call("argsort", data, axis=axis, is_ascend=bool(is_ascend), dtype=dtype)


def sort(data, axis=-1, is_ascend=1) -> Call:
    """``data`` sorted along ``axis``."""
    return call("sort", data, axis=axis, is_ascend=bool(is_ascend))


def topk(data, k=1, axis=-1, ret_type="both", is_ascend=False, dtype="int32"):
    """The top ``k`` values and/or indices; ``ret_type="both"`` gives a 2-field TupleWrapper."""
    c = call("topk", data, k=k, axis=axis, ret_type=ret_type, is_ascend=is_ascend, dtype=dtype)
    return TupleWrapper(c, 2) if ret_type == "both" else c


def unique(data, is_sorted=True, return_counts=False) -> TupleWrapper:
    """``unique(data)`` as a TupleWrapper of its 4 (5 with counts) padded outputs."""
    c = call("unique", data, sorted=is_sorted, return_counts=return_counts)
    return TupleWrapper(c, 5 if return_counts else 4)


def searchsorted(sorted_sequence, values, right=False, dtype="int32") -> Call:
    """Insertion points of ``values`` into ``sorted_sequence`` (innermost axis)."""
    return call("searchsorted", sorted_sequence, values, right=right, dtype=dtype)

