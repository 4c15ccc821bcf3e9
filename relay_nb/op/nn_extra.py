"""The rest of TVM's ``nn`` family: normalizations, pixel shuffles, mirror padding, 1-d / 3-d
adaptive pools and transposed convolutions, dilate, the batch <-> space reshuffles.

Relations follow ``src/relay/op/nn/{nn,pad,pooling,convolution}.cc`` of TVM 0.19, with their
internal checks turned into messages; builders have the signatures of TVM's
``python/tvm/relay/op/nn/nn.py``.  :mod:`relay_nb.op.nn` re-exports the builders, so they are
``relay.nn.lrn`` and so on, as in TVM.
"""

from __future__ import annotations

from ..errors import RelayTypeError
from ..ir.expr import Expr
from ..ir.ty import Any, TensorType
from ..typing.relations import Relation, forward_relation
from ._common import (
    as_tuple,
    call,
    ints,
    is_static,
    layout_axes,
    norm_axis,
    product,
    register,
    schema,
    tensor,
    type_text,
)
from .nn import _SOFTMAX, _channel_rel, _conv, _conv_attrs, _conv_rel, _scaled, _softmax_rel
from .registry import OpPattern

# --- normalizations -----------------------------------------------------------------------


@forward_relation("LRN")
def _lrn_rel(inputs, attrs, reporter):
    data = tensor(inputs[0], "data")
    norm_axis(attrs["axis"], len(data.shape))
    if attrs["size"] < 1:
        raise RelayTypeError(f"size must be positive, got {attrs['size']}")
    return data


@forward_relation("L2Normalize")
def _l2_normalize_rel(inputs, attrs, reporter):
    data = tensor(inputs[0], "data")
    for a in attrs["axis"] or ():
        norm_axis(a, len(data.shape))
    return data


def _grouped_norm_rel(name: str):
    """group_norm / instance_norm: gamma and beta are per-channel vectors (as TVM assigns
    them), the result has the data's type; TVM asserts a rank above 2 for instance_norm."""
    base = _channel_rel(name, ("gamma", "beta"), lambda d, v: d)

    def rel(types, num_inputs, attrs, reporter):
        data = types[0]
        if isinstance(data, TensorType) and isinstance(data.shape, tuple):
            if name == "InstanceNorm" and len(data.shape) < 3:
                raise RelayTypeError(f"data must have rank 3 or more, found {type_text(data)}")
            if name == "GroupNorm":
                c = data.shape[norm_axis(attrs["axis"], len(data.shape))]
                g = attrs["num_groups"]
                if g < 1:
                    raise RelayTypeError(f"num_groups must be positive, got {g}")
                if is_static(c) and c % g:
                    raise RelayTypeError(f"{c} channels cannot be split into {g} groups")
        return base.fn(types, num_inputs, attrs, reporter)

    return Relation(name, rel)


# --- pixel shuffles -----------------------------------------------------------------------


def _subpixel_rel(name: str, to_space: bool):
    """depth_to_space: C / b^2, H * b, W * b; space_to_depth the inverse (NCHW or NHWC)."""

    @forward_relation(name)
    def rel(inputs, attrs, reporter):
        data = tensor(inputs[0], "data")
        ax = layout_axes(attrs["layout"], "NCHW", "layout")
        if len(data.shape) != 4:
            raise RelayTypeError(
                f"data must have rank 4 ({attrs['layout']}), found {type_text(data)}"
            )
        b = attrs["block_size"]
        if b < 1:
            raise RelayTypeError(f"block_size must be positive, got {b}")
        if to_space and attrs["mode"] not in ("DCR", "CRD"):
            raise RelayTypeError(f"mode must be DCR or CRD, got {attrs['mode']!r}")
        shape = list(data.shape)
        c, h, w = ax["C"], ax["H"], ax["W"]
        if to_space:
            if is_static(shape[c]) and shape[c] % (b * b):
                raise RelayTypeError(
                    f"{shape[c]} channels are not divisible by block_size^2 = {b * b}"
                )
            shape[c] = shape[c] // (b * b) if is_static(shape[c]) else Any
            for a in (h, w):
                shape[a] = shape[a] * b if is_static(shape[a]) else Any
        else:
            for a in (h, w):
                if is_static(shape[a]) and shape[a] % b:
                    raise RelayTypeError(
                        f"spatial size {shape[a]} is not divisible by block_size {b}"
                    )
                shape[a] = shape[a] // b if is_static(shape[a]) else Any
            shape[c] = shape[c] * b * b if is_static(shape[c]) else Any
        return TensorType(tuple(shape), data.dtype)

    return rel


# --- padding and dilation -----------------------------------------------------------------


@forward_relation("MirrorPad")
def _mirror_pad_rel(inputs, attrs, reporter):
    data = tensor(inputs[0], "data")
    widths = attrs["pad_width"]
    mode = attrs["mode"]
    if mode not in ("SYMMETRIC", "REFLECT"):
        raise RelayTypeError(f"mode must be SYMMETRIC or REFLECT, got {mode!r}")
    if len(widths) != len(data.shape):
        raise RelayTypeError(
            f"pad_width has {len(widths)} entries for a rank-{len(data.shape)} tensor"
        )
    shape = []
    for i, (d, w) in enumerate(zip(data.shape, widths)):
        if len(w) != 2 or min(w) < 0:
            raise RelayTypeError(
                f"each pad_width entry must be [before, after] >= 0, got {list(w)}"
            )
        # A mirror copies at most the axis itself (less its edge when reflecting).
        limit = d - 1 if mode == "REFLECT" else d
        if is_static(d) and max(w) > limit:
            raise RelayTypeError(
                f"{mode} padding of {max(w)} on axis {i} needs at most {limit} (the axis has {d})"
            )
        shape.append(d + w[0] + w[1] if is_static(d) else Any)
    return TensorType(tuple(shape), data.dtype)


@forward_relation("Dilate")
def _dilate_rel(inputs, attrs, reporter):
    data = tensor(inputs[0], "data")
    strides = attrs["strides"]
    if len(strides) != len(data.shape):
        raise RelayTypeError(
            f"strides has {len(strides)} values for a rank-{len(data.shape)} tensor"
        )
    if any(s < 1 for s in strides):
        raise RelayTypeError(f"strides must be positive, got {list(strides)}")
    shape = tuple(
        ((d - 1) * s + 1 if d else 0) if is_static(d) else Any for d, s in zip(data.shape, strides)
    )
    return TensorType(shape, data.dtype)


# --- 3-d upsampling, 1-d / 3-d adaptive pools ------------------------------------------------


@forward_relation("UpSampling3D")
def _upsampling3d_rel(inputs, attrs, reporter):
    data = tensor(inputs[0], "data")
    ax = layout_axes(attrs["layout"], "NCDHW", "layout")
    if len(data.shape) != 5:
        raise RelayTypeError(f"data must have rank 5 ({attrs['layout']}), found {type_text(data)}")
    if attrs["method"] not in ("nearest_neighbor", "trilinear"):
        raise RelayTypeError(
            f"method must be nearest_neighbor or trilinear, got {attrs['method']!r}"
        )
    shape = list(data.shape)
    for a in "DHW":
        shape[ax[a]] = _scaled(shape[ax[a]], attrs["scale_" + a.lower()])
    return TensorType(tuple(shape), data.dtype)


def _adaptive_rel(name: str, spatial: str):
    """The spatial dims become ``output_size`` (one value repeats; empty keeps them)."""
    nd = len(spatial)

    @forward_relation(name)
    def rel(inputs, attrs, reporter):
        data = tensor(inputs[0], "data")
        ax = layout_axes(attrs["layout"], "NC" + spatial, "layout")
        out_layout = attrs["out_layout"] or attrs["layout"]
        layout_axes(out_layout, "NC" + spatial, "out_layout")
        if len(data.shape) != nd + 2:
            raise RelayTypeError(
                f"data must have rank {nd + 2} ({attrs['layout']}), found {type_text(data)}"
            )
        size = attrs["output_size"]
        sizes = as_tuple(size, nd, "output_size") if size else [data.shape[ax[a]] for a in spatial]
        out = {"N": data.shape[ax["N"]], "C": data.shape[ax["C"]], **dict(zip(spatial, sizes))}
        return TensorType(tuple(out[a] for a in out_layout), data.dtype)

    return rel


# --- batch <-> space ----------------------------------------------------------------------


def _block_pairs(attrs, key: str, data: TensorType, what: str):
    block = attrs["block_shape"]
    pairs = attrs[key]
    if len(pairs) != len(block):
        raise RelayTypeError(f"{what} must be given for each of the {len(block)} block dims")
    if len(block) >= len(data.shape):
        raise RelayTypeError(
            f"block_shape has {len(block)} dims but the input has rank {len(data.shape)}"
        )
    if any(b < 1 for b in block):
        raise RelayTypeError(f"block_shape must be positive, got {list(block)}")
    for p in pairs:
        if len(p) != 2 or min(p) < 0:
            raise RelayTypeError(f"each {what} entry must be [before, after] >= 0, got {list(p)}")
    return block, pairs


@forward_relation("SpaceToBatchND")
def _space_to_batch_rel(inputs, attrs, reporter):
    data = tensor(inputs[0], "data")
    block, pads = _block_pairs(attrs, "paddings", data, "paddings")
    shape = list(data.shape)
    for i, (b, (lo, hi)) in enumerate(zip(block, pads)):
        d = shape[i + 1]
        if not is_static(d):
            shape[i + 1] = Any
            continue
        if (d + lo + hi) % b:
            raise RelayTypeError(
                f"padded spatial dim {i} ({d + lo + hi}) is not divisible by its block {b}"
            )
        shape[i + 1] = (d + lo + hi) // b
    shape[0] = shape[0] * product(block) if is_static(shape[0]) else Any
    return TensorType(tuple(shape), data.dtype)


@forward_relation("BatchToSpaceND")
def _batch_to_space_rel(inputs, attrs, reporter):
    data = tensor(inputs[0], "data")
    block, crops = _block_pairs(attrs, "crops", data, "crops")
    shape = list(data.shape)
    total = product(block)
    if is_static(shape[0]):
        if shape[0] % total:
            raise RelayTypeError(f"batch {shape[0]} is not divisible by the block size {total}")
        shape[0] //= total
    for i, (b, (lo, hi)) in enumerate(zip(block, crops)):
        d = shape[i + 1]
        if not is_static(d):
            continue
        if d * b - lo - hi < 0:
            raise RelayTypeError(f"crops {[lo, hi]} exceed spatial dim {i} of size {d * b}")
        shape[i + 1] = d * b - lo - hi
    return TensorType(tuple(shape), data.dtype)


# --- fifo buffer -------------------------------------------------------------------------


@forward_relation("FIFOBuffer")
def _fifo_buffer_rel(inputs, attrs, reporter):
    data = tensor(inputs[0], "data")
    buf = tensor(inputs[1], "buffer")
    if len(data.shape) != len(buf.shape):
        raise RelayTypeError(
            f"data and buffer must have the same rank, found {type_text(data)} and {type_text(buf)}"
        )
    axis = norm_axis(attrs["axis"], len(buf.shape))
    for i, (d, b) in enumerate(zip(data.shape, buf.shape)):
        if i != axis and is_static(d) and is_static(b) and d != b:
            raise RelayTypeError(f"data and buffer differ on axis {i}: {d} and {b}")
    d, b = data.shape[axis], buf.shape[axis]
    if is_static(d) and is_static(b) and d >= b:
        raise RelayTypeError(f"data ({d} on axis {axis}) must be shorter than the buffer ({b})")
    return TensorType(buf.shape, reporter.unify_dtype(data.dtype, buf.dtype))


# --- registration -------------------------------------------------------------------------

_NORM = (("epsilon", "float", 1e-5), ("center", "bool", True), ("scale", "bool", True))
_SUBPIXEL = schema(
    "relay.attrs.SubPixelAttrs",
    ("block_size", "int", 1),
    ("layout", "str", "NCHW"),
    ("mode", "str", "DCR"),
)


def _adaptive_attrs(key: str, spatial: str):
    return schema(
        key,
        ("output_size", "optional_ints", ()),
        ("layout", "str", "NC" + spatial),
        ("out_layout", "str", ""),
    )


NN_EXTRA_OPS = [
    # name, inputs, relation, attrs, pattern, arg names, doc
    (
        "nn.lrn",
        1,
        _lrn_rel,
        schema(
            "relay.attrs.LRNAttrs",
            ("size", "int", 5),
            ("axis", "int", 1),
            ("bias", "float", 2.0),
            ("alpha", "float", 0.0001),
            ("beta", "float", 0.75),
        ),
        OpPattern.OPAQUE,
        ("data",),
        "Local response normalization across ``size`` neighbouring channels: "
        "``x / (bias + alpha / size * sum(x^2)) ^ beta``.",
    ),
    (
        "nn.l2_normalize",
        1,
        _l2_normalize_rel,
        schema("relay.attrs.L2NormalizeAttrs", ("eps", "float"), ("axis", "optional_ints")),
        OpPattern.OUT_ELEMWISE_FUSABLE,
        ("data",),
        "``x / sqrt(max(sum(x^2, axis), eps))``; an empty ``axis`` normalizes over all axes.",
    ),
    (
        "nn.group_norm",
        3,
        _grouped_norm_rel("GroupNorm"),
        schema(
            "relay.attrs.GroupNormAttrs", ("num_groups", "int", 0), ("axis", "int", 1), *_NORM
        ),
        OpPattern.OPAQUE,
        ("data", "gamma", "beta"),
        "Group normalization: the channels are split into ``num_groups`` groups, each "
        "normalized over its channels and the spatial axes, then scaled and shifted per channel.",
    ),
    (
        "nn.instance_norm",
        3,
        _grouped_norm_rel("InstanceNorm"),
        schema("relay.attrs.InstanceNormAttrs", ("axis", "int", 1), *_NORM),
        OpPattern.OPAQUE,
        ("data", "gamma", "beta"),
        "Instance normalization: each (sample, channel) is normalized over the other axes.",
    ),
    (
        "nn.depth_to_space",
        1,
        _subpixel_rel("DepthToSpace", to_space=True),
        _SUBPIXEL,
        OpPattern.INJECTIVE,
        ("data",),
        "Move ``block_size^2`` channel blocks into ``block_size x block_size`` spatial tiles "
        "(``DCR``: depth-column-row order as in TensorFlow, ``CRD`` as in ONNX / PyTorch).",
    ),
    (
        "nn.space_to_depth",
        1,
        _subpixel_rel("SpaceToDepth", to_space=False),
        _SUBPIXEL,
        OpPattern.INJECTIVE,
        ("data",),
        "Move ``block_size x block_size`` spatial tiles into channels (the inverse of DCR "
        "depth_to_space).",
    ),
    (
        "nn.mirror_pad",
        1,
        _mirror_pad_rel,
        schema(
            "relay.attrs.MirrorPadAttrs",
            ("mode", "str", "SYMMETRIC"),
            ("pad_width", "ints_nested"),
        ),
        OpPattern.INJECTIVE,
        ("data",),
        "Pad by mirroring the tensor at its edges: ``SYMMETRIC`` repeats the edge element, "
        "``REFLECT`` does not.",
    ),
    (
        "nn.fast_softmax",
        1,
        _softmax_rel,
        _SOFTMAX,
        OpPattern.OPAQUE,
        ("data",),
        "Softmax along ``axis`` computed with TVM's fast exponential; here exactly the softmax.",
    ),
    (
        "nn.upsampling3d",
        1,
        _upsampling3d_rel,
        schema(
            "relay.attrs.UpSampling3DAttrs",
            ("scale_d", "float"),
            ("scale_h", "float"),
            ("scale_w", "float"),
            ("layout", "str", "NCDHW"),
            ("method", "str", "nearest_neighbor"),
            ("coordinate_transformation_mode", "str", "half_pixel"),
        ),
        OpPattern.INJECTIVE,
        ("data",),
        "Upsample D, H and W by their scales (nearest neighbor or trilinear).",
    ),
    *[
        (
            f"nn.adaptive_{kind}_pool{nd}d",
            1,
            _adaptive_rel(f"AdaptivePool{nd}D", spatial),
            _adaptive_attrs(f"relay.attrs.AdaptivePool{nd}DAttrs", spatial),
            OpPattern.OUT_ELEMWISE_FUSABLE,
            ("data",),
            f"{nd}-d {kind} pooling whose windows are chosen so the output is ``output_size``.",
        )
        for nd, spatial in ((1, "W"), (3, "DHW"))
        for kind in ("avg", "max")
    ],
    *[
        (
            f"nn.conv{nd}d_transpose",
            2,
            _conv_rel(f"Conv{nd}DTranspose", nd, transposed=True),
            _conv_attrs(f"relay.attrs.Conv{nd}DTransposeAttrs", nd, transposed=True),
            OpPattern.OUT_ELEMWISE_FUSABLE,
            ("data", "weight"),
            f"Transposed {nd}-d convolution (the gradient of conv{nd}d), weight in "
            f"{'IOW' if nd == 1 else 'IODHW'}.",
        )
        for nd in (1, 3)
    ],
    (
        "nn.dilate",
        1,
        _dilate_rel,
        schema(
            "relay.attrs.DilateAttrs",
            ("strides", "ints", (1, 1)),
            ("dilation_value", "float", 0.0),
        ),
        OpPattern.INJECTIVE,
        ("data",),
        "Insert ``strides[i] - 1`` copies of ``dilation_value`` between neighbours on axis i.",
    ),
    (
        "nn.batch_to_space_nd",
        1,
        _batch_to_space_rel,
        schema(
            "relay.attrs.BatchToSpaceNDAttrs",
            ("block_shape", "ints", (1, 1)),
            ("crops", "ints_nested"),
        ),
        OpPattern.INJECTIVE,
        ("data",),
        "Move blocks of the batch into the spatial dims, then crop them (TensorFlow's op).",
    ),
    (
        "nn.space_to_batch_nd",
        1,
        _space_to_batch_rel,
        schema(
            "relay.attrs.SpaceToBatchNDAttrs",
            ("block_shape", "ints", (1, 1)),
            ("paddings", "ints_nested"),
            ("pad_value", "float", 0.0),
        ),
        OpPattern.INJECTIVE,
        ("data",),
        "Pad the spatial dims, then move ``block_shape`` blocks of them into the batch.",
    ),
    (
        "nn.fifo_buffer",
        2,
        _fifo_buffer_rel,
        schema("relay.attrs.FIFOBufferAttrs", ("axis", "int", 0)),
        OpPattern.OPAQUE,
        ("data", "buffer"),
        "Push ``data`` into the end of ``buffer`` along ``axis``, dropping as much from its "
        "start: ``concatenate([buffer, data], axis)[len(data):]``.",
    ),
]

for _name, _n, _rel, _attrs, _pattern, _args, _doc in NN_EXTRA_OPS:
    register(_name, _n, _rel, attrs=_attrs, pattern=_pattern, doc=_doc, arg_names=_args)


# --- builders (TVM's python/tvm/relay/op/nn/nn.py signatures) --------------------------------


def lrn(data, size=5, axis=1, bias=2, alpha=0.00001, beta=0.75) -> Expr:
    """Local response normalization (TVM's builder default ``alpha`` is 1e-5).

    >>> y = relay.nn.lrn(relay.var("x", shape=(1, 8, 4, 4)), size=3)
    """
    return call("nn.lrn", data, size=size, axis=axis, bias=bias, alpha=alpha, beta=beta)


def l2_normalize(data, eps, axis=None) -> Expr:
    """``data / sqrt(max(sum(data^2, axis), eps))``; ``axis=None`` means every axis."""
    return call("nn.l2_normalize", data, eps=eps, axis=ints(axis))


def group_norm(data, gamma, beta, num_groups, axis=1, epsilon=1e-5, center=True, scale=True):
    """Group normalization over ``num_groups`` groups of channels.

    >>> y = relay.nn.group_norm(x, gamma, beta, num_groups=4)"""
    return call(
        "nn.group_norm",
        data,
        gamma,
        beta,
        num_groups=num_groups,
        axis=axis,
        epsilon=epsilon,
        center=center,
        scale=scale,
    )


def instance_norm(data, gamma, beta, axis=1, epsilon=1e-5, center=True, scale=True) -> Expr:
    """Instance normalization: each sample's channel over the remaining axes."""
    return call(
        "nn.instance_norm",
        data,
        gamma,
        beta,
        axis=axis,
        epsilon=epsilon,
        center=center,
        scale=scale,
    )


def depth_to_space(data, block_size, layout="NCHW", mode="DCR") -> Expr:
    """Rearrange channel blocks into spatial tiles: ``(1, 8, 2, 2) -> (1, 2, 4, 4)`` for 2."""
    return call("nn.depth_to_space", data, block_size=block_size, layout=layout, mode=mode)


def space_to_depth(data, block_size, layout="NCHW") -> Expr:
    """Move ``block_size x block_size`` tiles into channels: ``(1, 2, 4, 4) -> (1, 8, 2, 2)``."""
    return call("nn.space_to_depth", data, block_size=block_size, layout=layout)


def mirror_pad(data, pad_width, mode="SYMMETRIC") -> Expr:
    """Mirror padding with ``pad_width = ((before, after), ...)``, one pair per axis."""
    return call("nn.mirror_pad", data, mode=mode, pad_width=tuple(ints(w) for w in pad_width))


def fast_softmax(data, axis=-1) -> Expr:
    """Softmax along ``axis`` (TVM approximates exp here; relay_nb computes it exactly)."""
    return call("nn.fast_softmax", data, axis=axis)


def upsampling3d(
    data,
    scale_d,
    scale_h,
    scale_w,
    layout="NCDHW",
    method="nearest_neighbor",
    coordinate_transformation_mode="half_pixel",
) -> Expr:
    """Upsample D, H and W by their scales (``nearest_neighbor`` or ``trilinear``)."""
    return call(
        "nn.upsampling3d",
        data,
        scale_d=scale_d,
        scale_h=scale_h,
        scale_w=scale_w,
        layout=layout,
        method=method,
        coordinate_transformation_mode=coordinate_transformation_mode,
    )


def _adaptive(op, nd, data, output_size, layout, out_layout):
    return call(
        op, data, output_size=ints(output_size or (), nd), layout=layout, out_layout=out_layout
    )


def adaptive_avg_pool1d(data, output_size=None, layout="NCW", out_layout="") -> Expr:
    """Average pooling of ``(N, C, W)`` data to ``output_size`` columns."""
    return _adaptive("nn.adaptive_avg_pool1d", 1, data, output_size, layout, out_layout)


def adaptive_max_pool1d(data, output_size=None, layout="NCW", out_layout="") -> Expr:
    """Max pooling of ``(N, C, W)`` data to ``output_size`` columns."""
    return _adaptive("nn.adaptive_max_pool1d", 1, data, output_size, layout, out_layout)


def adaptive_avg_pool3d(data, output_size=None, layout="NCDHW", out_layout="") -> Expr:
    """Average pooling of ``(N, C, D, H, W)`` data to ``output_size`` (one or three values)."""
    return _adaptive("nn.adaptive_avg_pool3d", 3, data, output_size, layout, out_layout)


def adaptive_max_pool3d(data, output_size=None, layout="NCDHW", out_layout="") -> Expr:
    """Max pooling of ``(N, C, D, H, W)`` data to ``output_size`` (one or three values)."""
    return _adaptive("nn.adaptive_max_pool3d", 3, data, output_size, layout, out_layout)


def _conv_transpose(op, nd, data, weight, strides, padding, dilation, groups, channels,
                    kernel_size, data_layout, kernel_layout, out_layout, output_padding,
                    out_dtype):  # fmt: skip
    return _conv(
        op,
        nd,
        data,
        weight,
        strides,
        padding,
        dilation,
        groups,
        channels,
        kernel_size,
        data_layout,
        kernel_layout,
        out_layout,
        out_dtype,
        output_padding=ints(output_padding, nd),
    )


def conv1d_transpose(
    data,
    weight,
    strides=(1,),
    padding=(0,),
    dilation=(1,),
    groups=1,
    channels=None,
    kernel_size=None,
    data_layout="NCW",
    kernel_layout="IOW",
    out_layout="",
    output_padding=(0,),
    out_dtype="",
) -> Expr:
    """Transposed 1-d convolution; the weight is ``(in, out / groups, k)`` (IOW)."""
    return _conv_transpose("nn.conv1d_transpose", 1, data, weight, strides, padding, dilation,
                           groups, channels, kernel_size, data_layout, kernel_layout, out_layout,
                           output_padding, out_dtype)  # fmt: skip


def conv3d_transpose(
    data,
    weight,
    strides=(1, 1, 1),
    padding=(0, 0, 0),
    dilation=(1, 1, 1),
    groups=1,
    channels=None,
    kernel_size=None,
    data_layout="NCDHW",
    kernel_layout="IODHW",
    out_layout="",
    output_padding=(0, 0, 0),
    out_dtype="",
) -> Expr:
    """Transposed 3-d convolution; the weight is ``(in, out / groups, kd, kh, kw)`` (IODHW)."""
    return _conv_transpose("nn.conv3d_transpose", 3, data, weight, strides, padding, dilation,
                           groups, channels, kernel_size, data_layout, kernel_layout, out_layout,
                           output_padding, out_dtype)  # fmt: skip


def dilate(data, strides, dilation_value=0.0) -> Expr:
    """Insert ``strides[i] - 1`` values between the elements of axis i."""
    return call("nn.dilate", data, strides=ints(strides), dilation_value=dilation_value)


def batch_to_space_nd(data, block_shape, crops) -> Expr:
    """The inverse of space_to_batch_nd: ``crops = ((before, after), ...)`` per block dim."""
    return call(
        "nn.batch_to_space_nd",
        data,
        block_shape=ints(block_shape),
        crops=tuple(ints(c) for c in crops),
    )


def space_to_batch_nd(data, block_shape, paddings, pad_value=0) -> Expr:
    """Pad the spatial dims by ``paddings`` and move ``block_shape`` blocks into the batch.

    >>> y = relay.nn.space_to_batch_nd(x, [2, 2], [[0, 0], [0, 0]])"""
    return call(
        "nn.space_to_batch_nd",
        data,
        block_shape=ints(block_shape),
        paddings=tuple(ints(p) for p in paddings),
        pad_value=pad_value,
    )


def fifo_buffer(data, buffer, axis) -> Expr:
    """The buffer after pushing ``data`` at its end along ``axis`` (its oldest part drops)."""
    return call("nn.fifo_buffer", data, buffer, axis=axis)


__all__ = [
    "adaptive_avg_pool1d",
    "adaptive_avg_pool3d",
    "adaptive_max_pool1d",
    "adaptive_max_pool3d",
    "batch_to_space_nd",
    "conv1d_transpose",
    "conv3d_transpose",
    "depth_to_space",
    "dilate",
    "fast_softmax",
    "fifo_buffer",
    "group_norm",
    "instance_norm",
    "l2_normalize",
    "lrn",
    "mirror_pad",
    "space_to_batch_nd",
    "space_to_depth",
    "upsampling3d",
]
