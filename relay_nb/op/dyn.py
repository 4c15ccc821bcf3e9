"""Dynamic-shape operators (``dyn.*``); this module is ``relay.dyn``.

Each is a static operator whose shape-like attribute became a tensor *argument*:
``dyn.reshape(%x, %newshape)`` is ``reshape(%x, newshape=...)`` with the new shape known
only at run time.  As in TVM, the result's *rank* is known from the argument's static
length, its dims are ``?``.  The interpreter runs them by reading the argument's values and
calling the static operator's implementation, so both share one meaning.

Each op keeps its static twin's attrs type (``dyn.reshape`` has ``ReshapeAttrs``), with the
fields that became arguments optional, so TVM's printouts read.
"""

from __future__ import annotations

from ..errors import RelayTypeError
from ..ir.expr import Expr
from ..ir.ty import Any, TensorType
from ..typing.relations import forward_relation
from ._common import call, is_static, layout_axes, register, schema, tensor, type_text
from .registry import OpPattern

DYN_TO_STATIC = {
    "dyn.reshape": "reshape",
    "dyn.tile": "tile",
    "dyn.broadcast_to": "broadcast_to",
    "dyn.zeros": "zeros",
    "dyn.ones": "ones",
    "dyn.full": "full",
    "dyn.expand_dims": "expand_dims",
    "dyn.squeeze": "squeeze",
    "dyn.strided_slice": "strided_slice",
    "dyn.nn.pad": "nn.pad",
    "dyn.nn.upsampling": "nn.upsampling",
    "dyn.image.resize2d": "image.resize2d",
    "dyn.nn.upsampling3d": "nn.upsampling3d",
    "dyn.one_hot": "one_hot",
    "dyn.topk": "topk",
    "dyn.sparse_to_dense": "sparse_to_dense",
}
"""Each dynamic operator and the static operator it becomes once its arguments are known."""


def static_length(t, what: str) -> int:
    """The static length of a 1-d shape-like argument (TVM requires a static rank)."""
    t = tensor(t, what)
    if len(t.shape) != 1:
        raise RelayTypeError(f"{what} must be a 1-d tensor, found {type_text(t)}")
    n = t.shape[0]
    if not is_static(n):
        raise RelayTypeError(f"{what} must have a static length (the result's rank)")
    return n


def _integer(t, what: str) -> None:
    dtype = t.dtype
    if isinstance(dtype, str) and not dtype.startswith(("int", "uint")):
        raise RelayTypeError(f"{what} must hold integers, found {type_text(t)}")


def _shape_arg(t, what: str = "shape") -> int:
    n = static_length(t, what)
    _integer(tensor(t), what)
    return n


def _scalar(t, what: str) -> TensorType:
    t = tensor(t, what)
    if t.shape != ():
        raise RelayTypeError(f"{what} must be a scalar, found {type_text(t)}")
    return t


@forward_relation("DynamicReshape")
def reshape_rel(inputs, attrs, reporter):
    data = tensor(inputs[0], "data")
    return TensorType((Any,) * _shape_arg(inputs[1], "newshape"), data.dtype)


@forward_relation("DynamicTile")
def tile_rel(inputs, attrs, reporter):
    data = tensor(inputs[0], "data")
    n = _shape_arg(inputs[1], "reps")
    return TensorType((Any,) * max(n, len(data.shape)), data.dtype)


@forward_relation("DynamicBroadCastTo")
def broadcast_to_rel(inputs, attrs, reporter):
    data = tensor(inputs[0], "data")
    n = _shape_arg(inputs[1])
    if n < len(data.shape):
        raise RelayTypeError(
            f"the target shape has {n} dims, fewer than the data's {len(data.shape)}"
        )
    return TensorType((Any,) * n, data.dtype)


@forward_relation("DynamicInitOp")
def init_rel(inputs, attrs, reporter):
    return TensorType((Any,) * _shape_arg(inputs[0]), attrs["dtype"] or "float32")


@forward_relation("DynamicFull")
def full_rel(inputs, attrs, reporter):
    value = _scalar(inputs[0], "fill_value")
    return TensorType((Any,) * _shape_arg(inputs[1]), attrs["dtype"] or value.dtype)


@forward_relation("DynamicExpandDims")
def expand_dims_rel(inputs, attrs, reporter):
    data = tensor(inputs[0], "data")
    _integer(_scalar(inputs[1], "axis"), "axis")
    if attrs["num_newaxis"] < 0:
        raise RelayTypeError(f"num_newaxis must be at least 0, got {attrs['num_newaxis']}")
    return TensorType((Any,) * (len(data.shape) + attrs["num_newaxis"]), data.dtype)


@forward_relation("DynSqueeze")
def squeeze_rel(inputs, attrs, reporter):
    data = tensor(inputs[0], "data")
    n = _shape_arg(inputs[1], "axes")
    if n > len(data.shape):
        raise RelayTypeError(f"cannot squeeze {n} axes of a rank-{len(data.shape)} tensor")
    return TensorType((Any,) * (len(data.shape) - n), data.dtype)


@forward_relation("DynStridedSlice")
def strided_slice_rel(inputs, attrs, reporter):
    """The first ``len(begin)`` dims become ``?``; the others are kept."""
    data = tensor(inputs[0], "data")
    lengths = [_shape_arg(t, what) for t, what in zip(inputs[1:], ("begin", "end", "strides"))]
    if len(set(lengths)) != 1:
        raise RelayTypeError(
            f"begin, end and strides must have the same length, got {', '.join(map(str, lengths))}"
        )
    n = lengths[0]
    if n > len(data.shape):
        raise RelayTypeError(f"cannot slice {n} axes of a rank-{len(data.shape)} tensor")
    return TensorType((Any,) * n + tuple(data.shape[n:]), data.dtype)


@forward_relation("DynamicPad")
def pad_rel(inputs, attrs, reporter):
    data = tensor(inputs[0], "data")
    width = tensor(inputs[1], "pad_width")
    if len(width.shape) != 2:
        raise RelayTypeError(f"pad_width must be a 2-d tensor, found {type_text(width)}")
    _integer(width, "pad_width")
    _scalar(inputs[2], "pad_value")
    rows, cols = width.shape
    if is_static(rows) and rows != len(data.shape) or is_static(cols) and cols != 2:
        raise RelayTypeError(
            f"pad_width must have shape ({len(data.shape)}, 2) for rank-{len(data.shape)} "
            f"data, found {type_text(width)}"
        )
    return TensorType((Any,) * len(data.shape), data.dtype)


def _spatial_any(data: TensorType, layout: str, spatial: str, letters: str) -> tuple:
    ax = layout_axes(layout, letters, "layout")
    if len(data.shape) != len(letters):
        raise RelayTypeError(f"data must have rank {len(letters)} ({layout}), found {type_text(data)}")
    shape = list(data.shape)
    for c in spatial:
        shape[ax[c]] = Any
    return tuple(shape)


@forward_relation("DynamicUpSampling")
def upsampling_rel(inputs, attrs, reporter):
    data = tensor(inputs[0], "data")
    _scalar(inputs[1], "scale_h")
    _scalar(inputs[2], "scale_w")
    return TensorType(_spatial_any(data, attrs["layout"], "HW", "NCHW"), data.dtype)


@forward_relation("DynResize2D")
def resize2d_rel(inputs, attrs, reporter):
    data = tensor(inputs[0], "data")
    if static_length(inputs[1], "size") != 2:
        raise RelayTypeError(f"size must hold 2 values, found {type_text(inputs[1])}")
    static_length(inputs[2], "roi")
    shape = _spatial_any(data, attrs["layout"], "HW", "NCHW")
    return TensorType(shape, attrs["out_dtype"] or data.dtype)


@forward_relation("DynamicUpSampling3D")
def upsampling3d_rel(inputs, attrs, reporter):
    data = tensor(inputs[0], "data")
    for t, what in zip(inputs[1:], ("scale_d", "scale_h", "scale_w")):
        _scalar(t, what)
    return TensorType(_spatial_any(data, attrs["layout"], "DHW", "NCDHW"), data.dtype)


@forward_relation("DynOneHot")
def one_hot_rel(inputs, attrs, reporter):
    """indices' shape with a ``?`` axis (of length ``depth``) inserted at ``axis``."""
    indices = tensor(inputs[0], "indices")
    _integer(indices, "indices")
    for t, what in zip(inputs[1:], ("on_value", "off_value", "depth")):
        _scalar(t, what)
    _integer(tensor(inputs[3]), "depth")
    rank = len(indices.shape) + 1
    axis = attrs["axis"]
    if not -rank <= axis < rank:
        raise RelayTypeError(f"axis {axis} is out of range for a rank-{rank} result")
    axis %= rank
    shape = list(indices.shape)
    shape.insert(axis, Any)
    return TensorType(tuple(shape), attrs["dtype"] or "int32")


@forward_relation("DynTopK")
def topk_rel(inputs, attrs, reporter):
    """The axis becomes ``?`` (``k`` is known at run time); values, indices or both."""
    data = tensor(inputs[0], "data")
    k = tensor(inputs[1], "k")
    if len(k.shape) > 1 or (k.shape and k.shape[0] != 1):
        raise RelayTypeError(f"k must be a scalar or a tensor of shape (1,), found {type_text(k)}")
    _integer(k, "k")
    rank = len(data.shape)
    axis = attrs["axis"]
    if not -rank <= axis < rank:
        raise RelayTypeError(f"axis {axis} is out of range for a rank-{rank} tensor")
    shape = list(data.shape)
    shape[axis % rank] = Any
    values = TensorType(tuple(shape), data.dtype)
    indices = TensorType(tuple(shape), attrs["dtype"] or "int32")
    kind = attrs["ret_type"]
    if kind == "both":
        from ..ir.ty import TupleType

        return TupleType((values, indices))
    if kind == "values":
        return values
    if kind == "indices":
        return indices
    raise RelayTypeError(f"ret_type must be both, values or indices, got {kind!r}")


@forward_relation("DynSparseToDense")
def sparse_to_dense_rel(inputs, attrs, reporter):
    indices = tensor(inputs[0], "sparse_indices")
    _integer(indices, "sparse_indices")
    values = tensor(inputs[1], "sparse_values")
    default = _scalar(inputs[2], "default_value")
    reporter.unify_dtype(values.dtype, default.dtype)
    if len(indices.shape) > 2 or len(values.shape) > 1:
        raise RelayTypeError("sparse_indices must have rank 0 to 2 and sparse_values rank 0 or 1")
    return TensorType((Any,) * _shape_arg(inputs[3], "output_shape"), values.dtype)


_INIT_ATTRS = schema("relay.attrs.InitOpAttrs", ("shape", "optional_ints", None), ("dtype", "dtype", ""))

_OPS = [
    # name, inputs, relation, attrs, pattern, argument names, doc
    (
        "dyn.reshape",
        2,
        reshape_rel,
        schema(
            "relay.attrs.ReshapeAttrs",
            ("newshape", "optional_ints", None),
            ("allowzero", "bool", False),
        ),
        OpPattern.INJECTIVE,
        ("data", "newshape"),
        "reshape to the shape held by the ``newshape`` tensor (``0`` and ``-1`` as in reshape)",
    ),
    (
        "dyn.tile",
        2,
        tile_rel,
        schema("relay.attrs.TileAttrs", ("reps", "optional_ints", None)),
        OpPattern.INJECTIVE,
        ("data", "reps"),
        "tile by the repetitions held by the ``reps`` tensor",
    ),
    (
        "dyn.broadcast_to",
        2,
        broadcast_to_rel,
        _INIT_ATTRS,
        OpPattern.BROADCAST,
        ("data", "shape"),
        "broadcast to the shape held by the ``shape`` tensor",
    ),
    (
        "dyn.zeros",
        1,
        init_rel,
        _INIT_ATTRS,
        OpPattern.ELEMWISE,
        ("shape",),
        "zeros of the shape held by the ``shape`` tensor",
    ),
    (
        "dyn.ones",
        1,
        init_rel,
        _INIT_ATTRS,
        OpPattern.ELEMWISE,
        ("shape",),
        "ones of the shape held by the ``shape`` tensor",
    ),
    (
        "dyn.full",
        2,
        full_rel,
        _INIT_ATTRS,
        OpPattern.ELEMWISE,
        ("fill_value", "shape"),
        "``fill_value`` everywhere in the shape held by the ``shape`` tensor",
    ),
    (
        "dyn.expand_dims",
        2,
        expand_dims_rel,
        schema("relay.attrs.DynExpandDimsAttrs", ("num_newaxis", "int", 1)),
        OpPattern.INJECTIVE,
        ("data", "axis"),
        "insert ``num_newaxis`` axes of size 1 at the position held by the ``axis`` scalar",
    ),
    (
        "dyn.squeeze",
        2,
        squeeze_rel,
        schema("relay.attrs.SqueezeAttrs", ("axis", "optional_ints", None)),
        OpPattern.INJECTIVE,
        ("data", "axes"),
        "remove the size-1 axes listed in the ``axes`` tensor",
    ),
    (
        "dyn.strided_slice",
        4,
        strided_slice_rel,
        schema(
            "relay.attrs.StridedSliceAttrs",
            ("begin", "optional_ints", None),
            ("end", "optional_ints", None),
            ("strides", "optional_ints", None),
            ("slice_mode", "str", "end"),
            ("axes", "optional_ints", None),
        ),
        OpPattern.INJECTIVE,
        ("data", "begin", "end", "strides"),
        "slice the leading axes by the ``begin`` / ``end`` / ``strides`` tensors",
    ),
    (
        "dyn.nn.pad",
        3,
        pad_rel,
        schema(
            "relay.attrs.PadAttrs", ("pad_width", "any", None), ("pad_mode", "str", "constant")
        ),
        OpPattern.INJECTIVE,
        ("data", "pad_width", "pad_value"),
        "pad by the ``(rank, 2)`` tensor ``pad_width``",
    ),
    (
        "dyn.nn.upsampling",
        3,
        upsampling_rel,
        schema(
            "relay.attrs.UpSamplingAttrs",
            ("scale_h", "optional_float", None),
            ("scale_w", "optional_float", None),
            ("layout", "str", "NCHW"),
            ("method", "str", "nearest_neighbor"),
            ("align_corners", "bool", False),
        ),
        OpPattern.INJECTIVE,
        ("data", "scale_h", "scale_w"),
        "upsample H and W by the ``scale_h`` / ``scale_w`` scalars",
    ),
    (
        "dyn.image.resize2d",
        3,
        resize2d_rel,
        schema(
            "relay.attrs.Resize2DAttrs",
            ("size", "optional_ints", None),
            ("roi", "floats", (0.0, 0.0, 0.0, 0.0)),
            ("layout", "str", "NCHW"),
            ("method", "str", "linear"),
            ("coordinate_transformation_mode", "str", "half_pixel"),
            ("rounding_method", "str", "round"),
            ("cubic_alpha", "float", -0.5),
            ("cubic_exclude", "int", 0),
            ("extrapolation_value", "float", 0.0),
            ("out_dtype", "dtype", ""),
        ),
        OpPattern.INJECTIVE,
        ("data", "size", "roi"),
        "resize H x W to the ``size`` tensor's two values (``roi`` for tf_crop_and_resize)",
    ),
]

_OPS += [
    (
        "dyn.nn.upsampling3d",
        4,
        upsampling3d_rel,
        schema(
            "relay.attrs.UpSampling3DAttrs",
            ("scale_d", "optional_float", None),
            ("scale_h", "optional_float", None),
            ("scale_w", "optional_float", None),
            ("layout", "str", "NCDHW"),
            ("method", "str", "nearest_neighbor"),
            ("coordinate_transformation_mode", "str", "half_pixel"),
        ),
        OpPattern.INJECTIVE,
        ("data", "scale_d", "scale_h", "scale_w"),
        "upsample D, H and W by the ``scale_d`` / ``scale_h`` / ``scale_w`` scalars",
    ),
    (
        "dyn.one_hot",
        4,
        one_hot_rel,
        schema(
            "relay.attrs.OneHotAttrs",
            ("depth", "optional_int", None),
            ("axis", "int", -1),
            ("dtype", "dtype", ""),
        ),
        OpPattern.OUT_ELEMWISE_FUSABLE,
        ("indices", "on_value", "off_value", "depth"),
        "one-hot vectors whose length is the ``depth`` scalar",
    ),
    (
        "dyn.topk",
        2,
        topk_rel,
        schema(
            "relay.attrs.TopkAttrs",
            ("k", "optional_int", None),
            ("axis", "int", -1),
            ("ret_type", "str", "both"),
            ("is_ascend", "bool", False),
            ("dtype", "dtype", "int32"),
        ),
        OpPattern.OPAQUE,
        ("data", "k"),
        "the ``k`` largest (or smallest) elements, ``k`` a run-time scalar",
    ),
    (
        "dyn.sparse_to_dense",
        4,
        sparse_to_dense_rel,
        schema("relay.attrs.SparseToDenseAttrs", ("output_shape", "optional_ints", None)),
        OpPattern.OPAQUE,
        ("sparse_indices", "sparse_values", "default_value", "output_shape"),
        "a dense tensor of the shape held by ``output_shape``",
    ),
]

for _name, _n, _rel, _attrs, _pattern, _args, _doc in _OPS:
    register(
        _name,
        _n,
        _rel,
        attrs=_attrs,
        pattern=_pattern,
        arg_names=_args,
        doc=f"``{DYN_TO_STATIC[_name]}`` with a run-time argument: {_doc}.",
    )


# --- builders, as in tvm.relay.op.dyn -------------------------------------------------------


def reshape(data, newshape, allowzero=False) -> Expr:
    """``dyn.reshape(data, newshape)``: ``newshape`` is a 1-d integer tensor expression."""
    return call("dyn.reshape", data, newshape, allowzero=allowzero)


def tile(data, reps) -> Expr:
    return call("dyn.tile", data, reps)


def broadcast_to(data, shape) -> Expr:
    return call("dyn.broadcast_to", data, shape)


def zeros(shape, dtype="float32") -> Expr:
    return call("dyn.zeros", shape, dtype=dtype)


def ones(shape, dtype="float32") -> Expr:
    return call("dyn.ones", shape, dtype=dtype)


def full(fill_value, shape, dtype="") -> Expr:
    return call("dyn.full", fill_value, shape, dtype=dtype)


def expand_dims(data, axis, num_newaxis=1) -> Expr:
    return call("dyn.expand_dims", data, axis, num_newaxis=num_newaxis)


def squeeze(data, axes) -> Expr:
    return call("dyn.squeeze", data, axes)


def strided_slice(data, begin, end, strides, slice_mode="end") -> Expr:
    return call("dyn.strided_slice", data, begin, end, strides, slice_mode=slice_mode)


def one_hot(indices, on_value, off_value, depth, axis=-1, dtype="int32") -> Expr:
    return call("dyn.one_hot", indices, on_value, off_value, depth, axis=axis, dtype=dtype)


def topk(data, k, axis=-1, ret_type="both", is_ascend=False, dtype="int32") -> Expr:
    out = call("dyn.topk", data, k, axis=axis, ret_type=ret_type, is_ascend=is_ascend, dtype=dtype)
    if ret_type == "both":
        from ..ir.expr import TupleWrapper

        return TupleWrapper(out, 2)
    return out


def sparse_to_dense(sparse_indices, output_shape, sparse_values, default_value=0) -> Expr:
    return call("dyn.sparse_to_dense", sparse_indices, sparse_values, default_value, output_shape)


__all__ = [
    "DYN_TO_STATIC",
    "broadcast_to",
    "expand_dims",
    "full",
    "one_hot",
    "sparse_to_dense",
    "topk",
    "ones",
    "reshape",
    "squeeze",
    "strided_slice",
    "tile",
    "zeros",
]
