"""Image operators (``image.*``) and their builders; this module is ``relay.image``."""

from __future__ import annotations

from ..errors import RelayTypeError
from ..ir.expr import Expr
from ..ir.ty import TensorType
from ..typing.relations import check_dims, forward_relation
from ._common import as_tuple, call, layout_axes, register, schema, tensor, type_text
from .registry import OpPattern

RESIZE_METHODS = ("nearest_neighbor", "linear", "cubic")


@forward_relation("Resize2D")
def resize2d_rel(inputs, attrs, reporter):
    """H and W become ``size``; the dtype is ``out_dtype`` or the input's."""
    data = tensor(inputs[0], "data")
    ax = layout_axes(attrs["layout"], "NCHW", "layout")
    if len(data.shape) != 4:
        raise RelayTypeError(f"data must have rank 4 ({attrs['layout']}), found {type_text(data)}")
    if attrs["method"] not in RESIZE_METHODS:
        raise RelayTypeError(
            f"method must be one of {', '.join(RESIZE_METHODS)}, got {attrs['method']!r}"
        )
    if attrs["size"] is None:
        raise RelayTypeError("size must be given")
    h, w = as_tuple(attrs["size"], 2, "size")
    check_dims((h, w), "size")
    shape = list(data.shape)
    shape[ax["H"]], shape[ax["W"]] = h, w
    return TensorType(tuple(shape), attrs["out_dtype"] or data.dtype)


register(
    "image.resize2d",
    1,
    resize2d_rel,
    attrs=schema(
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
    pattern=OpPattern.INJECTIVE,
    arg_names=("data",),
    doc="Resize the H x W plane of an image batch to ``size`` by nearest neighbor, (bi)linear "
    "or (bi)cubic interpolation; ``coordinate_transformation_mode`` maps output pixels to input "
    "coordinates as in ONNX Resize.",
)


def resize2d(
    data,
    size,
    roi=None,
    layout="NCHW",
    method="linear",
    coordinate_transformation_mode="half_pixel",
    rounding_method="",
    cubic_alpha=-0.5,
    cubic_exclude=0,
    extrapolation_value=0.0,
    out_dtype="",
) -> Expr:
    """Resize images to ``size = (height, width)``, as ``tvm.relay.image.resize2d``.

    >>> y = relay.image.resize2d(x, (64, 64), method="nearest_neighbor")
    """
    return call(
        "image.resize2d",
        data,
        size=tuple(size),
        roi=tuple(roi or (0.0, 0.0, 0.0, 0.0)),
        layout=layout,
        method=method,
        coordinate_transformation_mode=coordinate_transformation_mode,
        rounding_method=rounding_method,
        cubic_alpha=cubic_alpha,
        cubic_exclude=cubic_exclude,
        extrapolation_value=extrapolation_value,
        out_dtype=out_dtype or "",
    )


__all__ = ["resize2d"]

# relay.image is this module: the rest of TVM's image family lives in image_extra and is
# re-exported here (imported last: it builds on RESIZE_METHODS above).
from . import image_extra as _image_extra  # noqa: E402
from .image_extra import *  # noqa: E402,F401,F403

__all__ += _image_extra.__all__
