"""Convolution-like ops of vision models: ``nn.correlation`` (FlowNet's cost volume) and
``nn.deformable_conv2d`` (a convolution sampling at learned offsets).

Relations follow ``src/relay/op/nn/{correlation,convolution}.cc`` of TVM 0.19; builders the
signatures of ``python/tvm/relay/op/nn/nn.py``, re-exported as ``relay.nn.*``.
"""

from __future__ import annotations

from ..errors import RelayTypeError
from ..ir.expr import Expr
from ..ir.ty import Any, TensorType
from ..typing.relations import forward_relation, is_known, shape_text
from ._common import (
    as_tuple,
    call,
    ints,
    is_static,
    layout_axes,
    out_dtype,
    pad_tuple,
    padding_pairs,
    register,
    relation,
    same_dim,
    schema,
    tensor,
    type_text,
)
from .registry import OpPattern


@forward_relation("Correlation")
def _correlation_rel(inputs, attrs, reporter):
    a = tensor(inputs[0], "data1")
    b = tensor(inputs[1], "data2")
    if attrs["layout"] != "NCHW":
        raise RelayTypeError(f"layout must be NCHW, got {attrs['layout']!r}")
    if len(a.shape) != 4 or len(b.shape) != 4 or not all(map(same_dim, a.shape, b.shape)):
        raise RelayTypeError(
            f"data1 and data2 must be NCHW tensors of one shape, found {shape_text(a.shape)} "
            f"and {shape_text(b.shape)}"
        )
    k = attrs["kernel_size"]
    if k < 1 or k % 2 == 0:
        raise RelayTypeError(f"kernel_size must be a positive odd number, got {k}")
    s1, s2, md = attrs["stride1"], attrs["stride2"], attrs["max_displacement"]
    if s1 < 1 or s2 < 1 or md < 0:
        raise RelayTypeError("stride1 and stride2 must be positive, max_displacement >= 0")
    (pt, pb), (pl, pr) = padding_pairs(attrs["padding"], 2, "padding")
    border = md + (k - 1) // 2
    side = 2 * (md // s2) + 1
    out = [a.shape[0], side * side]
    for size, pad in ((a.shape[2], pt + pb), (a.shape[3], pl + pr)):
        if not is_static(size):
            out.append(Any)
            continue
        n = (size + pad - 2 * border + s1 - 1) // s1
        if n <= 0:
            raise RelayTypeError(
                f"the padded input ({size + pad}) is smaller than the border 2 * {border}"
            )
        out.append(n)
    return TensorType(tuple(out), reporter.unify_dtype(a.dtype, b.dtype))


@relation("DeformableConv2D")
def _deformable_conv2d_rel(types, num_inputs, attrs, reporter):
    """Like conv2d's; the offset gets the shape ``(N, 2 * kh * kw * deformable_groups, OH, OW)``
    in the data layout, and an unknown weight its shape from channels and kernel_size."""
    if not is_known(types[0]):
        return False
    data = tensor(types[0], "data")
    dl = layout_axes(attrs["data_layout"], "NCHW", "data_layout")
    kl = layout_axes(attrs["kernel_layout"], "OIHW", "kernel_layout")
    ol = attrs["out_layout"] or attrs["data_layout"]
    layout_axes(ol, "NCHW", "out_layout")
    if len(data.shape) != 4:
        raise RelayTypeError(f"data must have rank 4, found {type_text(data)}")
    n, c, h, w = (data.shape[dl[a]] for a in "NCHW")
    groups, dg = attrs["groups"], attrs["deformable_groups"]
    if groups < 1 or dg < 1:
        raise RelayTypeError("groups and deformable_groups must be positive")
    if is_static(c) and (c % groups or c % dg):
        raise RelayTypeError(
            f"{c} input channels do not divide into groups={groups} and deformable_groups={dg}"
        )
    channels = attrs["channels"]
    ksize = as_tuple(attrs["kernel_size"], 2, "kernel_size") if attrs["kernel_size"] else None
    if not is_known(types[2]):
        if channels is None or ksize is None:
            return False
        per_group = c // groups if is_static(c) else Any
        dims = {"O": channels, "I": per_group, "H": ksize[0], "W": ksize[1]}
        layout = attrs["kernel_layout"]
        reporter.assign(types[2], TensorType(tuple(dims[a] for a in layout), data.dtype))
        weight_dims = dims
    else:
        weight = tensor(types[2], "weight")
        if len(weight.shape) != 4:
            raise RelayTypeError(f"weight must have rank 4, found {type_text(weight)}")
        weight_dims = {a: weight.shape[i] for a, i in kl.items()}
        if ksize is not None and not all(
            same_dim(weight_dims[a], k) for a, k in zip("HW", ksize)
        ):
            raise RelayTypeError(
                f"kernel_size {list(ksize)} does not match the weight's "
                f"{shape_text((weight_dims['H'], weight_dims['W']))}"
            )
        if channels is not None and not same_dim(channels, weight_dims["O"]):
            raise RelayTypeError(
                f"channels={channels} does not match the weight's {weight_dims['O']}"
            )
        if is_static(c) and is_static(weight_dims["I"]) and c // groups != weight_dims["I"]:
            raise RelayTypeError(
                f"input channels {c} do not match weight's {weight_dims['I']} (groups={groups})"
            )
    kh, kw = weight_dims["H"], weight_dims["W"]
    strides = as_tuple(attrs["strides"], 2, "strides")
    dilation = as_tuple(attrs["dilation"], 2, "dilation")
    pads = padding_pairs(attrs["padding"], 2, "padding")
    out = {"N": n, "C": weight_dims["O"]}
    for i, (a, size, k) in enumerate((("H", h, kh), ("W", w, kw))):
        if not (is_static(size) and is_static(k)):
            out[a] = Any
            continue
        span = (k - 1) * dilation[i] + 1
        out[a] = (size + sum(pads[i]) - span) // strides[i] + 1
        if out[a] <= 0:
            padded = size + sum(pads[i])
            raise RelayTypeError(
                f"the kernel spans {span} but the padded input has {padded} on axis {a}"
            )
    taps = 2 * kh * kw * dg if is_static(kh) and is_static(kw) else Any
    offset = {"N": n, "C": taps, "H": out["H"], "W": out["W"]}
    reporter.assign(
        types[1], TensorType(tuple(offset[a] for a in attrs["data_layout"]), data.dtype)
    )
    dtype = out_dtype(attrs, data.dtype, reporter=reporter)
    reporter.assign(types[3], TensorType(tuple(out[a] for a in ol), dtype))
    return True


register(
    "nn.correlation",
    2,
    _correlation_rel,
    attrs=schema(
        "relay.attrs.CorrelationAttrs",
        ("kernel_size", "int", 1),
        ("max_displacement", "int", 1),
        ("stride1", "int", 1),
        ("stride2", "int", 1),
        ("padding", "ints", (0, 0)),
        ("is_multiply", "bool", True),
        ("layout", "str", "NCHW"),
    ),
    pattern=OpPattern.OUT_ELEMWISE_FUSABLE,
    arg_names=("data1", "data2"),
    doc="FlowNet's correlation: for each displacement within ``max_displacement`` (step "
    "``stride2``), the mean over channels and a ``kernel_size`` patch of ``data1 * data2`` "
    "(or ``|data1 - data2|``) at the displaced position.",
)

register(
    "nn.deformable_conv2d",
    3,
    _deformable_conv2d_rel,
    attrs=schema(
        "relay.attrs.DeformableConv2DAttrs",
        ("strides", "ints", (1, 1)),
        ("padding", "ints", (0, 0)),
        ("dilation", "ints", (1, 1)),
        ("deformable_groups", "int", 1),
        ("groups", "int", 1),
        ("channels", "optional_int", None),
        ("kernel_size", "optional_ints", None),
        ("data_layout", "str", "NCHW"),
        ("kernel_layout", "str", "OIHW"),
        ("out_layout", "str", ""),
        ("out_dtype", "dtype", ""),
    ),
    pattern=OpPattern.OUT_ELEMWISE_FUSABLE,
    arg_names=("data", "offset", "weight"),
    doc="Deformable convolution v1: each kernel tap reads the data at its regular position "
    "plus a learned ``(dy, dx)`` offset, bilinearly interpolated (zero outside the image).",
)


def correlation(data1, data2, kernel_size, max_displacement, stride1, stride2, padding,
                is_multiply, layout) -> Expr:  # fmt: skip
    """FlowNet's correlation layer (``layout`` must be NCHW)."""
    return call(
        "nn.correlation",
        data1,
        data2,
        kernel_size=kernel_size,
        max_displacement=max_displacement,
        stride1=stride1,
        stride2=stride2,
        padding=ints(padding, 2),
        is_multiply=is_multiply,
        layout=layout,
    )


def deformable_conv2d(
    data,
    offset,
    weight,
    strides=(1, 1),
    padding=(0, 0),
    dilation=(1, 1),
    deformable_groups=1,
    groups=1,
    channels=None,
    kernel_size=None,
    data_layout="NCHW",
    kernel_layout="OIHW",
    out_layout="",
    out_dtype="",
) -> Expr:
    """Deformable convolution: ``offset`` is ``(N, 2 * kh * kw * deformable_groups, OH, OW)``."""
    return call(
        "nn.deformable_conv2d",
        data,
        offset,
        weight,
        strides=ints(strides, 2),
        padding=pad_tuple(padding, 2),
        dilation=ints(dilation, 2),
        deformable_groups=deformable_groups,
        groups=groups,
        channels=channels,
        kernel_size=ints(kernel_size, 2),
        data_layout=data_layout,
        kernel_layout=kernel_layout,
        out_layout=out_layout,
        out_dtype=out_dtype,
    )


__all__ = ["correlation", "deformable_conv2d"]
