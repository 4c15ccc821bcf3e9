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


__all__ = [
    "DYN_TO_STATIC",
    "broadcast_to",
    "expand_dims",
    "full",
    "ones",
    "reshape",
    "squeeze",
    "strided_slice",
    "tile",
    "zeros",
]
