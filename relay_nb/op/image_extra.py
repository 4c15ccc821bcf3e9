"""The rest of TVM's ``image`` family: 1-d and 3-d resize, crop_and_resize, dilation2d
(morphological), affine_grid and grid_sample (spatial transformers).

Relations follow ``src/relay/op/image/{resize,dilation2d,grid_sample}.cc`` of TVM 0.19;
builders the signatures of ``python/tvm/relay/op/image/image.py``.  :mod:`relay_nb.op.image`
re-exports the builders, so they are ``relay.image.resize1d`` and so on.
"""

from __future__ import annotations

from ..errors import RelayTypeError
from ..ir.expr import Expr
from ..ir.ty import Any, TensorType
from ..typing.relations import forward_relation, shape_text
from ._common import (
    as_tuple,
    call,
    ints,
    is_int_dtype,
    is_static,
    layout_axes,
    pad_tuple,
    padding_pairs,
    register,
    same_dim,
    schema,
    tensor,
    type_text,
)
from .image import RESIZE_METHODS
from .registry import OpPattern


def _resize_rel(name: str, spatial: str):
    """The spatial dims become ``size``; the dtype is ``out_dtype`` or the input's."""
    nd = len(spatial)

    @forward_relation(name)
    def rel(inputs, attrs, reporter):
        data = tensor(inputs[0], "data")
        ax = layout_axes(attrs["layout"], "NC" + spatial, "layout")
        if len(data.shape) != nd + 2:
            raise RelayTypeError(
                f"data must have rank {nd + 2} ({attrs['layout']}), found {type_text(data)}"
            )
        if attrs["method"] not in RESIZE_METHODS:
            raise RelayTypeError(
                f"method must be one of {', '.join(RESIZE_METHODS)}, got {attrs['method']!r}"
            )
        if attrs["size"] is None:
            raise RelayTypeError("size must be given")
        size = as_tuple(attrs["size"], nd, "size")
        if attrs["roi"] and len(attrs["roi"]) != 2 * nd:
            raise RelayTypeError(f"roi must have {2 * nd} values, got {list(attrs['roi'])}")
        shape = list(data.shape)
        for a, s in zip(spatial, size):
            shape[ax[a]] = s
        return TensorType(tuple(shape), attrs["out_dtype"] or data.dtype)

    return rel


@forward_relation("CropAndResize")
def _crop_and_resize_rel(inputs, attrs, reporter):
    data = tensor(inputs[0], "data")
    boxes = tensor(inputs[1], "boxes")
    indices = tensor(inputs[2], "box_indices")
    ax = layout_axes(attrs["layout"], "NCHW", "layout")
    if len(data.shape) != 4:
        raise RelayTypeError(f"data must have rank 4 ({attrs['layout']}), found {type_text(data)}")
    if len(boxes.shape) != 2 or not same_dim(boxes.shape[1], 4):
        raise RelayTypeError(f"boxes must have shape (num_boxes, 4), found {type_text(boxes)}")
    if len(indices.shape) != 1 or not same_dim(indices.shape[0], boxes.shape[0]):
        raise RelayTypeError(
            f"box_indices must have shape (num_boxes,) = ({boxes.shape[0]},), found "
            f"{shape_text(indices.shape)}"
        )
    if is_int_dtype(indices.dtype) is False:
        raise RelayTypeError(f"box_indices must be integers, found {indices.dtype}")
    if attrs["method"] not in ("bilinear", "nearest_neighbor"):
        raise RelayTypeError(
            f"method must be bilinear or nearest_neighbor, got {attrs['method']!r}"
        )
    if attrs["crop_size"] is None:
        raise RelayTypeError("crop_size must be given")
    h, w = as_tuple(attrs["crop_size"], 2, "crop_size")
    out = {"N": boxes.shape[0], "C": data.shape[ax["C"]], "H": h, "W": w}
    return TensorType(tuple(out[a] for a in attrs["layout"]), attrs["out_dtype"] or data.dtype)


@forward_relation("Dilation2D")
def _dilation2d_rel(inputs, attrs, reporter):
    data = tensor(inputs[0], "data")
    weight = tensor(inputs[1], "weight")
    dl = layout_axes(attrs["data_layout"], "NCHW", "data_layout")
    kl = layout_axes(attrs["kernel_layout"], "IHW", "kernel_layout")
    if len(data.shape) != 4 or len(weight.shape) != 3:
        raise RelayTypeError(
            f"data must have rank 4 and weight rank 3, found {type_text(data)} and "
            f"{type_text(weight)}"
        )
    c = data.shape[dl["C"]]
    if not same_dim(c, weight.shape[kl["I"]]):
        raise RelayTypeError(f"data has {c} channels but the weight {weight.shape[kl['I']]}")
    strides = as_tuple(attrs["strides"], 2, "strides")
    dilations = as_tuple(attrs["dilations"], 2, "dilation")
    pads = padding_pairs(attrs["padding"], 2, "padding")
    out = {"N": data.shape[dl["N"]], "C": c}
    for i, a in enumerate("HW"):
        size, k = data.shape[dl[a]], weight.shape[kl[a]]
        if not (is_static(size) and is_static(k)):
            out[a] = Any
            continue
        span = (k - 1) * dilations[i] + 1
        out[a] = (size + sum(pads[i]) - span) // strides[i] + 1
        if out[a] <= 0:
            padded = size + sum(pads[i])
            raise RelayTypeError(
                f"the kernel spans {span} but the padded input has {padded} on axis {a}"
            )
    dtype = attrs["out_dtype"] or reporter.unify_dtype(data.dtype, weight.dtype)
    return TensorType(tuple(out[a] for a in attrs["data_layout"]), dtype)


@forward_relation("AffineGrid")
def _affine_grid_rel(inputs, attrs, reporter):
    data = tensor(inputs[0], "data")
    if len(data.shape) != 3 or not same_dim(data.shape[1], 2) or not same_dim(data.shape[2], 3):
        raise RelayTypeError(f"data must be a batch of 2 x 3 matrices, found {type_text(data)}")
    target = attrs["target_shape"]
    if len(target) != 2 or min(target) < 2:
        raise RelayTypeError(
            f"target_shape must be (height, width), both at least 2, got {list(target)}"
        )
    return TensorType((data.shape[0], 2, *target), data.dtype)


@forward_relation("GridSample")
def _grid_sample_rel(inputs, attrs, reporter):
    data = tensor(inputs[0], "data")
    grid = tensor(inputs[1], "grid")
    nd = len(data.shape) - 2
    if nd not in (2, 3):
        raise RelayTypeError(f"data must have rank 4 or 5, found {type_text(data)}")
    spatial = "HW" if nd == 2 else "DHW"
    if attrs["layout"] != "NC" + spatial:
        raise RelayTypeError(
            f"layout must be NC{spatial} for rank-{nd + 2} data, got {attrs['layout']!r}"
        )
    if len(grid.shape) != nd + 2 or not same_dim(grid.shape[1], nd):
        raise RelayTypeError(
            f"grid must have shape (N, {nd}, {', '.join(spatial)}), found {shape_text(grid.shape)}"
        )
    if not same_dim(grid.shape[0], data.shape[0]):
        raise RelayTypeError(f"grid has batch {grid.shape[0]} but data {data.shape[0]}")
    methods = ("bilinear", "nearest", "bicubic") if nd == 2 else ("bilinear", "nearest")
    if attrs["method"] not in methods:
        raise RelayTypeError(f"method must be one of {', '.join(methods)}, got {attrs['method']!r}")
    if attrs["padding_mode"] not in ("zeros", "border", "reflection"):
        raise RelayTypeError(
            f"padding_mode must be zeros, border or reflection, got {attrs['padding_mode']!r}"
        )
    reporter.unify_dtype(data.dtype, grid.dtype)
    return TensorType(data.shape[:2] + grid.shape[2:], data.dtype)


# --- registration -------------------------------------------------------------------------


def _resize_attrs(key: str, nd: int, layout: str):
    return schema(
        key,
        ("size", "optional_ints", None),
        ("roi", "floats", (0.0,) * (2 * nd)),
        ("layout", "str", layout),
        ("method", "str", "linear"),
        ("coordinate_transformation_mode", "str", "half_pixel"),
        ("rounding_method", "str", "round"),
        ("cubic_alpha", "float", -0.5),
        ("cubic_exclude", "int", 0),
        ("extrapolation_value", "float", 0.0),
        ("out_dtype", "dtype", ""),
    )


IMAGE_EXTRA_OPS = [
    *[
        (
            f"image.resize{nd}d",
            1,
            _resize_rel(f"Resize{nd}D", spatial),
            _resize_attrs(f"relay.attrs.Resize{nd}DAttrs", nd, "NC" + spatial),
            OpPattern.INJECTIVE,
            ("data",),
            f"Resize the {' x '.join(spatial)} axes to ``size`` (nearest neighbor, linear or "
            "cubic), as image.resize2d does for H x W.",
        )
        for nd, spatial in ((1, "W"), (3, "DHW"))
    ],
    (
        "image.crop_and_resize",
        3,
        _crop_and_resize_rel,
        schema(
            "relay.attrs.CropAndResizeAttrs",
            ("crop_size", "optional_ints", None),
            ("layout", "str", "NCHW"),
            ("method", "str", "bilinear"),
            ("extrapolation_value", "float", 0.0),
            ("out_dtype", "dtype", ""),
        ),
        OpPattern.INJECTIVE,
        ("data", "boxes", "box_indices"),
        "TensorFlow's crop_and_resize: each box ``[y1, x1, y2, x2]`` (normalized) of image "
        "``box_indices[i]`` is resampled to ``crop_size``; points outside the image get "
        "``extrapolation_value``.",
    ),
    (
        "image.dilation2d",
        2,
        _dilation2d_rel,
        schema(
            "relay.attrs.Dilation2DAttrs",
            ("strides", "ints", (1, 1)),
            ("padding", "ints", (0, 0)),
            ("dilations", "ints", (1, 1)),
            ("data_layout", "str", "NCHW"),
            ("kernel_layout", "str", "IHW"),
            ("out_dtype", "dtype", ""),
        ),
        OpPattern.OUT_ELEMWISE_FUSABLE,
        ("data", "weight"),
        "Morphological dilation: the maximum of ``data + weight`` over each (strided, dilated) "
        "window, per channel; padding is zeros.",
    ),
    (
        "image.affine_grid",
        1,
        _affine_grid_rel,
        schema("relay.attrs.AffineGridAttrs", ("target_shape", "ints")),
        OpPattern.INJECTIVE,
        ("data",),
        "The sampling grid ``theta @ (x, y, 1)`` of a batch of 2 x 3 affine matrices over a "
        "``target_shape`` grid of points in [-1, 1] (x along W, y along H).",
    ),
    (
        "image.grid_sample",
        2,
        _grid_sample_rel,
        schema(
            "relay.attrs.GridSampleAttrs",
            ("method", "str", "bilinear"),
            ("layout", "str", "NCHW"),
            ("padding_mode", "str", "zeros"),
            ("align_corners", "bool", True),
        ),
        OpPattern.INJECTIVE,
        ("data", "grid"),
        "Sample ``data`` at the normalized points of ``grid`` (``grid[:, 0]`` is x, ``[:, 1]`` "
        "y, ``[:, 2]`` z), by bilinear, nearest or bicubic interpolation.",
    ),
]

for _name, _n, _rel, _attrs, _pattern, _args, _doc in IMAGE_EXTRA_OPS:
    register(_name, _n, _rel, attrs=_attrs, pattern=_pattern, doc=_doc, arg_names=_args)


# --- builders (TVM's python/tvm/relay/op/image/image.py signatures) ------------------------


def _resize(op, nd, data, size, roi, layout, method, coordinate_transformation_mode,
            rounding_method, cubic_alpha, cubic_exclude, extrapolation_value,
            out_dtype):  # fmt: skip
    return call(
        op,
        data,
        size=ints(size, nd),
        roi=tuple(float(v) for v in roi) if roi is not None else (0.0,) * (2 * nd),
        layout=layout,
        method=method,
        coordinate_transformation_mode=coordinate_transformation_mode,
        rounding_method=rounding_method,
        cubic_alpha=cubic_alpha,
        cubic_exclude=cubic_exclude,
        extrapolation_value=extrapolation_value,
        out_dtype=out_dtype or "",
    )


def resize1d(data, size, roi=None, layout="NCW", method="linear",
             coordinate_transformation_mode="half_pixel", rounding_method="", cubic_alpha=-0.5,
             cubic_exclude=0, extrapolation_value=0.0, out_dtype=None) -> Expr:  # fmt: skip
    """Resize the W axis of ``(N, C, W)`` data to ``size``."""
    return _resize("image.resize1d", 1, data, size, roi, layout, method,
                   coordinate_transformation_mode, rounding_method, cubic_alpha, cubic_exclude,
                   extrapolation_value, out_dtype)  # fmt: skip


def resize3d(data, size, roi=None, layout="NCDHW", method="linear",
             coordinate_transformation_mode="half_pixel", rounding_method="", cubic_alpha=-0.5,
             cubic_exclude=0, extrapolation_value=0.0, out_dtype=None) -> Expr:  # fmt: skip
    """Resize the D, H and W axes of volumes to ``size = (d, h, w)``."""
    return _resize("image.resize3d", 3, data, size, roi, layout, method,
                   coordinate_transformation_mode, rounding_method, cubic_alpha, cubic_exclude,
                   extrapolation_value, out_dtype)  # fmt: skip


def crop_and_resize(data, boxes, box_indices, crop_size, layout="NCHW", method="bilinear",
                    extrapolation_value=0, out_dtype=None) -> Expr:  # fmt: skip
    """Crop boxes out of images and resize them to ``crop_size`` (TensorFlow's op).

    >>> crops = relay.image.crop_and_resize(images, boxes, box_indices, (7, 7))
    """
    return call(
        "image.crop_and_resize",
        data,
        boxes,
        box_indices,
        crop_size=ints(crop_size, 2),
        layout=layout,
        method=method,
        extrapolation_value=extrapolation_value,
        out_dtype=out_dtype or "",
    )


def dilation2d(data, weight, strides=(1, 1), padding=(0, 0), dilations=(1, 1),
               data_layout="NCHW", kernel_layout="IHW", out_dtype="") -> Expr:  # fmt: skip
    """Morphological dilation: the max of ``data + weight`` over each window (weight
    ``(C, kh, kw)``)."""
    return call(
        "image.dilation2d",
        data,
        weight,
        strides=ints(strides, 2),
        padding=pad_tuple(padding, 2),
        dilations=ints(dilations, 2),
        data_layout=data_layout,
        kernel_layout=kernel_layout,
        out_dtype=out_dtype,
    )


def affine_grid(data, target_shape=None) -> Expr:
    """The sampling grid of 2 x 3 affine matrices over ``target_shape = (H, W)``.

    >>> grid = relay.image.affine_grid(theta, (32, 32))"""
    return call("image.affine_grid", data, target_shape=ints(target_shape))


def grid_sample(data, grid, method="bilinear", layout="NCHW", padding_mode="zeros",
                align_corners=True) -> Expr:  # fmt: skip
    """Sample ``data`` at the normalized points of ``grid``.

    >>> y = relay.image.grid_sample(x, relay.image.affine_grid(theta, (32, 32)))"""
    return call(
        "image.grid_sample",
        data,
        grid,
        method=method,
        layout=layout,
        padding_mode=padding_mode,
        align_corners=align_corners,
    )


__all__ = [
    "affine_grid",
    "crop_and_resize",
    "dilation2d",
    "grid_sample",
    "resize1d",
    "resize3d",
]
