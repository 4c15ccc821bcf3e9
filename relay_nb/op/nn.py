"""Neural-network operators (``nn.*``) and their builders: ``relay.nn.conv2d(...)``.

This module *is* ``relay.nn``: the registrations come first (rules as tables, one generic
relation per family: convolution, pooling, per-channel parameters), then the builder
functions with TVM's signatures and defaults.

Like TVM's, relations for ops with parameters (conv2d, dense, bias_add, batch_norm...)
also *assign* the parameter types they imply, so an unannotated weight gets its shape from
``channels`` / ``kernel_size`` / ``units`` or from the data.
"""

from __future__ import annotations

import math

from ..errors import RelayTypeError
from ..ir.expr import Expr, TupleWrapper
from ..ir.ty import Any, TensorType, TupleType
from ..typing.relations import (
    AttrValueError,
    broadcast_shapes,
    check_dims,
    forward_relation,
    is_known,
    shape_text,
)
from ._common import (
    as_tuple,
    call,
    dim_text,
    ints,
    is_static,
    layout_axes,
    norm_axis,
    out_dtype,
    pad_tuple,
    padding_pairs,
    pick_dim,
    product,
    register,
    relation,
    same_dim,
    schema,
    tensor,
    type_text,
)
from .registry import OpPattern

_SPATIAL = {1: "W", 2: "HW", 3: "DHW"}

# --- simple activations -------------------------------------------------------------------


@forward_relation("Elemwise")
def _elemwise_rel(inputs, attrs, reporter):
    return tensor(inputs[0], "data")


@forward_relation("Softmax")
def _softmax_rel(inputs, attrs, reporter):
    data = tensor(inputs[0], "data")
    norm_axis(attrs["axis"], len(data.shape))
    return data


@forward_relation("Dropout")
def _dropout_rel(inputs, attrs, reporter):
    """``(output, mask)``, both of the input's type."""
    data = tensor(inputs[0], "data")
    return TupleType((data, data))


# --- per-channel parameters: bias_add, prelu, batch_norm, layer_norm ----------------------


def _channel_params(types, params, data: TensorType, axis: int, reporter) -> TensorType:
    """Give each unknown parameter type ``Tensor[(C,), dtype]``; check the known ones."""
    a = norm_axis(axis, len(data.shape))
    c = data.shape[a]
    expected = TensorType((c,), data.dtype)
    for t, name in zip(types, params):
        if not is_known(t):
            reporter.assign(t, expected)
            continue
        p = tensor(t, name)
        if len(p.shape) != 1 or not same_dim(p.shape[0], c):
            raise RelayTypeError(
                f"{name} has shape {shape_text(p.shape)} but axis {a} of the data has {dim_text(c)}"
            )
        reporter.unify_dtype(p.dtype, data.dtype)
    return expected


def _channel_rel(name: str, params: tuple[str, ...], result):
    """A relation for ``op(data, *params)`` whose params are per-channel vectors."""

    @relation(name)
    def rel(types, num_inputs, attrs, reporter):
        if not is_known(types[0]):
            return False
        data = tensor(types[0], "data")
        vec = _channel_params(types[1:num_inputs], params, data, attrs["axis"], reporter)
        reporter.assign(types[num_inputs], result(data, vec))
        return True

    return rel


# --- dense and matmul ---------------------------------------------------------------------


def _matmul_rel(name: str):
    """dense is ``matmul(a, b, transpose_b=True)``; an unknown weight gets its type from units."""
    dense = name == "Dense"

    @relation(name)
    def rel(types, num_inputs, attrs, reporter):
        if not is_known(types[0]):
            return False
        a = tensor(types[0], "the input" if dense else "tensor_a")
        ta = attrs.get("transpose_a", False)
        tb = attrs.get("transpose_b", True)
        if len(a.shape) < (2 if ta else 1):
            raise RelayTypeError(
                f"the input has rank {len(a.shape)}, too small for a matrix product"
            )
        k = a.shape[-2] if ta else a.shape[-1]
        prefix = a.shape[:-2] + (a.shape[-1],) if ta else a.shape[:-1]
        units = attrs["units"]
        if not is_known(types[1]):
            if units is None:
                return False
            w = TensorType((units, k) if tb else (k, units), a.dtype)
            reporter.assign(types[1], w)
        else:
            w = tensor(types[1], "the weight" if dense else "tensor_b")
        if len(w.shape) != 2:
            raise RelayTypeError(f"the weight must have rank 2, found {type_text(w)}")
        wk, n = (w.shape[1], w.shape[0]) if tb else w.shape
        if not same_dim(k, wk):
            if dense:
                raise RelayTypeError(
                    f"the input's last dimension {k} does not match the weight's {wk}"
                )
            raise RelayTypeError(
                f"the reduction dimensions do not match: {k} in tensor_a and {wk} in tensor_b"
            )
        if units is not None and not same_dim(units, n):
            raise RelayTypeError(f"units={units} does not match the weight's {n} output units")
        dtype = out_dtype(attrs, a.dtype, w.dtype, reporter=reporter)
        reporter.assign(types[2], TensorType(prefix + (pick_dim(n, units) if units else n,), dtype))
        return True

    return rel


@forward_relation("BatchMatmul")
def _batch_matmul_rel(inputs, attrs, reporter):
    x = tensor(inputs[0], "tensor_a")
    y = tensor(inputs[1], "tensor_b")
    if len(x.shape) != 3 or len(y.shape) != 3:
        raise RelayTypeError(
            f"both inputs must have rank 3, found {type_text(x)} and {type_text(y)}"
        )
    xb, xm, xk = (x.shape[0], x.shape[2], x.shape[1]) if attrs["transpose_a"] else x.shape
    yb, yn, yk = y.shape if attrs["transpose_b"] else (y.shape[0], y.shape[2], y.shape[1])
    if not same_dim(xk, yk):
        raise RelayTypeError(
            f"the reduction dimensions do not match: {xk} in tensor_a and {yk} in tensor_b"
        )
    try:
        (batch,) = broadcast_shapes((xb,), (yb,))
    except RelayTypeError:
        raise RelayTypeError(f"batch sizes {xb} and {yb} do not broadcast") from None
    return TensorType((batch, xm, yn), out_dtype(attrs, x.dtype, y.dtype, reporter=reporter))


# --- convolution --------------------------------------------------------------------------


def _conv_rel(name: str, nd: int, transposed: bool = False):
    """The relation of an ``nd``-d convolution (or transposed convolution).

    Canonical weight axes: conv ``(O, I/groups, k...)`` in OIHW terms, transposed conv
    ``(I, O/groups, k...)`` in IOHW terms; ``kernel_layout`` says where each axis is.
    """
    spatial = _SPATIAL[nd]

    @relation(name)
    def rel(types, num_inputs, attrs, reporter):
        if not is_known(types[0]):
            return False
        data = tensor(types[0], "data")
        dl = layout_axes(attrs["data_layout"], "NC" + spatial, "data_layout")
        kl = layout_axes(attrs["kernel_layout"], "OI" + spatial, "kernel_layout")
        out_layout = attrs["out_layout"] or attrs["data_layout"]
        layout_axes(out_layout, "NC" + spatial, "out_layout")
        if len(data.shape) != nd + 2:
            raise RelayTypeError(
                f"data must have rank {nd + 2} ({attrs['data_layout']}), found {type_text(data)}"
            )
        n, c = data.shape[dl["N"]], data.shape[dl["C"]]
        groups = attrs["groups"]
        if groups < 1:
            raise AttrValueError("groups", f"groups must be >= 1, got {groups}")
        strides = as_tuple(attrs["strides"], nd, "strides")
        dilation = as_tuple(attrs["dilation"], nd, "dilation")
        pads = padding_pairs(attrs["padding"], nd, "padding")
        channels = attrs["channels"]
        ksize = as_tuple(attrs["kernel_size"], nd, "kernel_size") if attrs["kernel_size"] else None

        if not is_known(types[1]):
            if channels is None or ksize is None:
                return False
            per_group = c // groups if is_static(c) else Any
            dims = (
                {"O": channels, "I": per_group}
                if not transposed
                else {"I": c, "O": channels // groups}
            )
            dims.update(zip(spatial, ksize))
            weight = TensorType(tuple(dims[a] for a in attrs["kernel_layout"]), data.dtype)
            reporter.assign(types[1], weight)
        else:
            weight = tensor(types[1], "weight")
            if len(weight.shape) != nd + 2:
                raise RelayTypeError(
                    f"weight must have rank {nd + 2} ({attrs['kernel_layout']}), found {type_text(weight)}"
                )
        w = {a: weight.shape[i] for a, i in kl.items()}
        kernel = tuple(w[a] for a in spatial)
        if ksize is not None and not all(same_dim(k, e) for k, e in zip(kernel, ksize)):
            raise RelayTypeError(
                f"kernel_size {list(ksize)} does not match the weight's {shape_text(kernel)}"
            )

        if transposed:
            if not same_dim(c, w["I"]):
                raise RelayTypeError(f"input channels {c} do not match weight's {w['I']}")
            out_c = w["O"] * groups if is_static(w["O"]) else Any
        else:
            if is_static(c) and is_static(w["I"]) and c != w["I"] * groups:
                needs = f", which needs {w['I'] * groups}" if groups != 1 else ""
                raise RelayTypeError(
                    f"input channels {c} do not match weight's {w['I']} (groups={groups}){needs}"
                )
            out_c = w["O"]
            if is_static(out_c) and out_c % groups:
                raise RelayTypeError(
                    f"output channels {out_c} are not divisible by groups={groups}"
                )
        if channels is not None and not same_dim(channels, out_c):
            raise RelayTypeError(
                f"channels={channels} does not match the weight's {out_c} output channels"
            )

        out = {"N": n, "C": pick_dim(out_c, channels) if channels is not None else out_c}
        extra = as_tuple(attrs["output_padding"], nd, "output_padding") if transposed else (0,) * nd
        for i, a in enumerate(spatial):
            size, k = data.shape[dl[a]], kernel[i]
            if not (is_static(size) and is_static(k)):
                out[a] = Any
                continue
            span = (k - 1) * dilation[i] + 1
            before, after = pads[i]
            if transposed:
                out[a] = (size - 1) * strides[i] - before - after + span + extra[i]
                key = "output_padding" if extra[i] < 0 else "padding"
                check_dims([out[a]], key, f"{key} {list(attrs[key])} on axis {a}")
            else:
                out[a] = (size + before + after - span) // strides[i] + 1
            if out[a] <= 0:
                raise RelayTypeError(
                    f"the kernel spans {span} (with dilation) but the padded input has {size + before + after} on axis {a}"
                )
        dtype = out_dtype(attrs, data.dtype, weight.dtype, reporter=reporter)
        reporter.assign(types[2], TensorType(tuple(out[a] for a in out_layout), dtype))
        return True

    return rel


# --- pooling ------------------------------------------------------------------------------


def _pool_rel(name: str, nd: int):
    spatial = _SPATIAL[nd]

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
        pool = as_tuple(attrs["pool_size"], nd, "pool_size")
        strides = as_tuple(attrs["strides"], nd, "strides")
        dilation = as_tuple(attrs["dilation"], nd, "dilation")
        pads = padding_pairs(attrs["padding"], nd, "padding")
        out = {"N": data.shape[ax["N"]], "C": data.shape[ax["C"]]}
        for i, a in enumerate(spatial):
            size = data.shape[ax[a]]
            if not is_static(size):
                out[a] = Any
                continue
            span = (pool[i] - 1) * dilation[i] + 1
            total = size + sum(pads[i]) - span
            out[a] = (total + (strides[i] - 1 if attrs["ceil_mode"] else 0)) // strides[i] + 1
            if total < 0 or out[a] <= 0:
                raise RelayTypeError(
                    f"the pool window spans {span} but the padded input has {size + sum(pads[i])} on axis {a}"
                )
        return TensorType(tuple(out[a] for a in out_layout), data.dtype)

    return rel


def _global_pool_rel(name: str, adaptive: bool = False):
    """Global pooling makes H and W 1; adaptive pooling makes them ``output_size``
    (an empty ``output_size`` keeps them)."""

    @forward_relation(name)
    def rel(inputs, attrs, reporter):
        data = tensor(inputs[0], "data")
        ax = layout_axes(attrs["layout"], "NCHW", "layout")
        out_layout = attrs["out_layout"] or attrs["layout"]
        layout_axes(out_layout, "NCHW", "out_layout")
        if len(data.shape) != 4:
            raise RelayTypeError(
                f"data must have rank 4 ({attrs['layout']}), found {type_text(data)}"
            )
        size = attrs["output_size"] if adaptive else None
        if not adaptive:
            hw = (1, 1)
        elif not size:
            hw = (data.shape[ax["H"]], data.shape[ax["W"]])
        else:
            hw = as_tuple(size, 2, "output_size")
            check_dims(hw, "output_size")
        out = {"N": data.shape[ax["N"]], "C": data.shape[ax["C"]], "H": hw[0], "W": hw[1]}
        return TensorType(tuple(out[a] for a in out_layout), data.dtype)

    return rel


# --- shape ops ----------------------------------------------------------------------------


@forward_relation("Pad")
def _pad_rel(inputs, attrs, reporter):
    data = tensor(inputs[0], "data")
    value = tensor(inputs[1], "pad_value")
    if value.shape != ():
        raise RelayTypeError(f"pad_value must be a scalar, found {type_text(value)}")
    widths = attrs["pad_width"]
    if len(widths) != len(data.shape):
        raise RelayTypeError(
            f"pad_width has {len(widths)} entries for a rank-{len(data.shape)} tensor"
        )
    if attrs["pad_mode"] not in ("constant", "edge", "reflect"):
        raise RelayTypeError(
            f"pad_mode must be constant, edge or reflect, got {attrs['pad_mode']!r}"
        )
    shape = []
    for d, w in zip(data.shape, widths):
        if len(w) != 2 or min(w) < 0:
            raise RelayTypeError(
                f"each pad_width entry must be [before, after] >= 0, got {list(w)}"
            )
        shape.append(d + w[0] + w[1] if is_static(d) else Any)
    return TensorType(tuple(shape), data.dtype)


@forward_relation("BatchFlatten")
def _batch_flatten_rel(inputs, attrs, reporter):
    data = tensor(inputs[0], "data")
    if not data.shape:
        raise RelayTypeError("the input must have at least one dimension")
    return TensorType((data.shape[0], product(data.shape[1:])), data.dtype)


def _scaled(size, scale: float):
    """``round(size * scale)``, halves away from zero, as TVM's shape function does."""
    return int(size * scale + 0.5) if is_static(size) else Any


@forward_relation("UpSampling")
def _upsampling_rel(inputs, attrs, reporter):
    data = tensor(inputs[0], "data")
    ax = layout_axes(attrs["layout"], "NCHW", "layout")
    if len(data.shape) != 4:
        raise RelayTypeError(f"data must have rank 4 ({attrs['layout']}), found {type_text(data)}")
    if attrs["method"] not in ("nearest_neighbor", "bilinear", "bicubic"):
        raise RelayTypeError(
            f"method must be nearest_neighbor, bilinear or bicubic, got {attrs['method']!r}"
        )
    shape = list(data.shape)
    for axis, key in (("H", "scale_h"), ("W", "scale_w")):
        scale = attrs[key]
        if not (math.isfinite(scale) and scale >= 0):  # a size times -1 or inf is no size
            raise AttrValueError(key, f"{key} must be a finite number >= 0, got {scale}")
        shape[ax[axis]] = _scaled(shape[ax[axis]], scale)
    return TensorType(tuple(shape), data.dtype)


# --- registration -------------------------------------------------------------------------


def _conv_attrs(key: str, nd: int, transposed: bool = False):
    s = _SPATIAL[nd]
    layouts = (
        ("data_layout", "str", "NC" + s),
        ("kernel_layout", "str", ("IO" if transposed else "OI") + s),
    )
    common = (("dilation", "ints", (1,) * nd), ("groups", "int", 1))
    if transposed:
        fields = (
            ("channels", "optional_int", None),
            ("kernel_size", "optional_ints", None),
            ("strides", "ints", (1,) * nd),
            ("output_padding", "ints", (0,) * nd),
            ("padding", "ints", (0,) * nd),
            *common,
            *layouts,
        )
    else:
        fields = (
            ("strides", "ints", (1,) * nd),
            ("padding", "ints", (0,) * nd),
            *common,
            ("channels", "optional_int", None),
            ("kernel_size", "optional_ints", None),
            *layouts,
        )
    return schema(key, *fields, ("out_layout", "str", ""), ("out_dtype", "dtype", ""))


def _pool_attrs(key: str, nd: int, avg: bool):
    fields = [
        ("pool_size", "ints"),
        ("strides", "ints", (1,) * nd),
        ("dilation", "ints", (1,) * nd),
        ("padding", "ints", (0,) * nd),
        ("layout", "str", "NC" + _SPATIAL[nd]),
        ("out_layout", "str", ""),
        ("ceil_mode", "bool", False),
    ]
    if avg:
        fields.append(("count_include_pad", "bool", False))
    return schema(key, *fields)


_GLOBAL_POOL = schema(
    "relay.attrs.GlobalPool2DAttrs", ("layout", "str", "NCHW"), ("out_layout", "str", "")
)
_ADAPTIVE_POOL = schema(
    "relay.attrs.AdaptivePool2DAttrs",
    ("output_size", "optional_ints", ()),
    ("layout", "str", "NCHW"),
    ("out_layout", "str", ""),
)
_NORM = (("epsilon", "float", 1e-5), ("center", "bool", True), ("scale", "bool", True))
_SOFTMAX = schema("relay.attrs.SoftmaxAttrs", ("axis", "int", -1))
_MATMUL_ATTRS = (("units", "optional_int", None), ("out_dtype", "dtype", ""))
_CONV_OPS = [
    (1, "conv1d", "Conv1DAttrs"),
    (2, "conv2d", "Conv2DAttrs"),
    (3, "conv3d", "Conv3DAttrs"),
]
_POOL_OPS = [(nd, kind) for nd in (1, 2, 3) for kind in ("max", "avg")]

NN_OPS = [
    # name, inputs, relation, attrs, pattern, arg names, doc
    (
        "nn.relu",
        1,
        _elemwise_rel,
        None,
        OpPattern.ELEMWISE,
        ("data",),
        "Rectified linear unit ``max(x, 0)``.",
    ),
    (
        "nn.leaky_relu",
        1,
        _elemwise_rel,
        schema("relay.attrs.LeakyReluAttrs", ("alpha", "float", 0.25)),
        OpPattern.ELEMWISE,
        ("data",),
        "Leaky ReLU: ``x`` where positive, ``alpha * x`` elsewhere.",
    ),
    (
        "nn.prelu",
        2,
        _channel_rel("PRelu", ("alpha",), lambda d, v: d),
        schema("relay.attrs.PReluAttrs", ("axis", "int", 1)),
        OpPattern.BROADCAST,
        ("data", "alpha"),
        "Parametric ReLU: like leaky ReLU with one learned slope per channel (``alpha`` along ``axis``).",
    ),
    (
        "nn.softmax",
        1,
        _softmax_rel,
        _SOFTMAX,
        OpPattern.OPAQUE,
        ("data",),
        "Softmax along ``axis``: ``exp(x) / sum(exp(x))``; the type is unchanged.",
    ),
    (
        "nn.log_softmax",
        1,
        _softmax_rel,
        _SOFTMAX,
        OpPattern.OPAQUE,
        ("data",),
        "Logarithm of the softmax along ``axis``, computed stably; the type is unchanged.",
    ),
    (
        "nn.dense",
        2,
        _matmul_rel("Dense"),
        schema("relay.attrs.DenseAttrs", *_MATMUL_ATTRS),
        OpPattern.OUT_ELEMWISE_FUSABLE,
        ("data", "weight"),
        "Fully connected layer ``Y = X W^T``: data ``(..., K)``, weight ``(units, K)``, result ``(..., units)``.",
    ),
    (
        "nn.matmul",
        2,
        _matmul_rel("Matmul"),
        schema(
            "relay.attrs.MatmulAttrs",
            *_MATMUL_ATTRS,
            ("transpose_a", "bool", False),
            ("transpose_b", "bool", False),
        ),
        OpPattern.OUT_ELEMWISE_FUSABLE,
        ("tensor_a", "tensor_b"),
        "Matrix product ``A B`` where either operand may be given transposed.",
    ),
    (
        "nn.batch_matmul",
        2,
        _batch_matmul_rel,
        schema(
            "relay.attrs.BatchMatmulAttrs",
            ("out_dtype", "dtype", ""),
            ("transpose_a", "bool", False),
            ("transpose_b", "bool", True),
        ),
        OpPattern.OUT_ELEMWISE_FUSABLE,
        ("tensor_a", "tensor_b"),
        (
            "Batched matrix product of rank-3 tensors; by default the second is transposed "
            "(``(B, M, K) x (B, N, K) -> (B, M, N)``), and a batch of 1 broadcasts."
        ),
    ),
    (
        "nn.bias_add",
        2,
        _channel_rel("BiasAdd", ("bias",), lambda d, v: d),
        schema("relay.attrs.BiasAddAttrs", ("axis", "int", 1)),
        OpPattern.BROADCAST,
        ("data", "bias"),
        "Add a 1-d ``bias`` along ``axis`` of ``data`` (the channel axis by default).",
    ),
    *[
        (
            f"nn.{name}",
            2,
            _conv_rel(key[:-5], nd),
            _conv_attrs(f"relay.attrs.{key}", nd),
            OpPattern.OUT_ELEMWISE_FUSABLE,
            ("data", "weight"),
            (
                f"{nd}-d convolution of ``data`` ({'NC' + _SPATIAL[nd]}) with ``weight`` ({'OI' + _SPATIAL[nd]}), "
                "with strides, padding, dilation and groups; other layouts are permutations of these letters."
            ),
        )
        for nd, name, key in _CONV_OPS
    ],
    (
        "nn.conv2d_transpose",
        2,
        _conv_rel("Conv2DTranspose", 2, transposed=True),
        _conv_attrs("relay.attrs.Conv2DTransposeAttrs", 2, transposed=True),
        OpPattern.OUT_ELEMWISE_FUSABLE,
        ("data", "weight"),
        (
            "Transposed 2-d convolution (the gradient of conv2d): weight in IOHW, output size "
            "``(in - 1) * stride - pad + dilation * (k - 1) + output_padding + 1``."
        ),
    ),
    *[
        (
            f"nn.{kind}_pool{nd}d",
            1,
            _pool_rel(f"{kind.capitalize()}Pool{nd}D", nd),
            _pool_attrs(f"relay.attrs.{kind.capitalize()}Pool{nd}DAttrs", nd, kind == "avg"),
            OpPattern.OUT_ELEMWISE_FUSABLE,
            ("data",),
            f"{nd}-d {'max' if kind == 'max' else 'average'} pooling over ``pool_size`` windows with "
            "strides, dilation and padding; ``ceil_mode`` rounds the output size up"
            + ("; ``count_include_pad`` counts padding in the average." if kind == "avg" else "."),
        )
        for nd, kind in _POOL_OPS
    ],
    (
        "nn.global_avg_pool2d",
        1,
        _global_pool_rel("GlobalPool2D"),
        _GLOBAL_POOL,
        OpPattern.OUT_ELEMWISE_FUSABLE,
        ("data",),
        "Average over the whole H x W plane: H and W become 1.",
    ),
    (
        "nn.global_max_pool2d",
        1,
        _global_pool_rel("GlobalPool2D"),
        _GLOBAL_POOL,
        OpPattern.OUT_ELEMWISE_FUSABLE,
        ("data",),
        "Maximum over the whole H x W plane: H and W become 1.",
    ),
    (
        "nn.adaptive_avg_pool2d",
        1,
        _global_pool_rel("AdaptivePool2D", adaptive=True),
        _ADAPTIVE_POOL,
        OpPattern.OUT_ELEMWISE_FUSABLE,
        ("data",),
        "Average pooling whose windows are chosen so the output H x W is ``output_size``.",
    ),
    (
        "nn.adaptive_max_pool2d",
        1,
        _global_pool_rel("AdaptivePool2D", adaptive=True),
        _ADAPTIVE_POOL,
        OpPattern.OUT_ELEMWISE_FUSABLE,
        ("data",),
        "Max pooling whose windows are chosen so the output H x W is ``output_size``.",
    ),
    (
        "nn.batch_norm",
        5,
        _channel_rel(
            "BatchNorm",
            ("gamma", "beta", "moving_mean", "moving_var"),
            lambda d, v: TupleType((d, v, v)),
        ),
        schema("relay.attrs.BatchNormAttrs", ("axis", "int", 1), *_NORM),
        OpPattern.OPAQUE,
        ("data", "gamma", "beta", "moving_mean", "moving_var"),
        (
            "Batch normalization along the channel ``axis``; the result is a 3-tuple (normalized "
            "data, new moving mean, new moving variance), of which inference uses field 0."
        ),
    ),
    (
        "nn.layer_norm",
        3,
        _channel_rel("LayerNorm", ("gamma", "beta"), lambda d, v: d),
        schema("relay.attrs.LayerNormAttrs", ("axis", "int", -1), *_NORM),
        OpPattern.OPAQUE,
        ("data", "gamma", "beta"),
        "Layer normalization: normalize over ``axis``, then scale by gamma and shift by beta.",
    ),
    (
        "nn.dropout",
        1,
        _dropout_rel,
        schema("relay.attrs.DropoutAttrs", ("rate", "float", 0.5)),
        OpPattern.OPAQUE,
        ("data",),
        "Dropout: a 2-tuple (output, mask); at inference the output is the input.",
    ),
    (
        "nn.pad",
        2,
        _pad_rel,
        schema(
            "relay.attrs.PadAttrs", ("pad_width", "ints_nested"), ("pad_mode", "str", "constant")
        ),
        OpPattern.INJECTIVE,
        ("data", "pad_value"),
        (
            "Pad each axis by ``pad_width[i] = [before, after]`` with the scalar ``pad_value`` (or by "
            "edge / reflect mode)."
        ),
    ),
    (
        "nn.batch_flatten",
        1,
        _batch_flatten_rel,
        None,
        OpPattern.INJECTIVE,
        ("data",),
        "Flatten all but the first axis: ``(N, d1, d2, ...)`` becomes ``(N, d1 * d2 * ...)``.",
    ),
    (
        "nn.upsampling",
        1,
        _upsampling_rel,
        schema(
            "relay.attrs.UpSamplingAttrs",
            ("scale_h", "float"),
            ("scale_w", "float"),
            ("layout", "str", "NCHW"),
            ("method", "str", "nearest_neighbor"),
            ("align_corners", "bool", False),
        ),
        OpPattern.INJECTIVE,
        ("data",),
        "Upsample H and W by ``scale_h`` and ``scale_w`` (nearest neighbor, bilinear or bicubic).",
    ),
]

for _name, _n, _rel, _attrs, _pattern, _args, _doc in NN_OPS:
    register(_name, _n, _rel, attrs=_attrs, pattern=_pattern, doc=_doc, arg_names=_args)


# --- builders (TVM's python/tvm/relay/op/nn/nn.py signatures) --------------------------------


def relu(data) -> Expr:
    """Rectified linear unit.

    >>> relay.nn.relu(relay.var("x", shape=(2, 3)))
    """
    return call("nn.relu", data)


def leaky_relu(data, alpha=0.01) -> Expr:
    """Leaky ReLU with slope ``alpha`` below zero (TVM's builder default is 0.01)."""
    return call("nn.leaky_relu", data, alpha=alpha)


def prelu(data, alpha, axis=1) -> Expr:
    """Parametric ReLU with per-channel slopes ``alpha`` along ``axis``."""
    return call("nn.prelu", data, alpha, axis=axis)


def softmax(data, axis=-1) -> Expr:
    return call("nn.softmax", data, axis=axis)


def log_softmax(data, axis=-1) -> Expr:
    return call("nn.log_softmax", data, axis=axis)


def dense(data, weight, units=None, out_dtype="") -> Expr:
    """``data @ weight.T``; ``units`` (optional) is the number of output features."""
    return call("nn.dense", data, weight, units=units, out_dtype=out_dtype)


def matmul(
    tensor_a, tensor_b, units=None, out_dtype="", transpose_a=False, transpose_b=False
) -> Expr:
    return call(
        "nn.matmul",
        tensor_a,
        tensor_b,
        units=units,
        out_dtype=out_dtype,
        transpose_a=transpose_a,
        transpose_b=transpose_b,
    )


def batch_matmul(tensor_a, tensor_b, out_dtype="", transpose_a=False, transpose_b=True) -> Expr:
    return call(
        "nn.batch_matmul",
        tensor_a,
        tensor_b,
        out_dtype=out_dtype,
        transpose_a=transpose_a,
        transpose_b=transpose_b,
    )


def bias_add(data, bias, axis=1) -> Expr:
    return call("nn.bias_add", data, bias, axis=axis)


def _conv(
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
    **extra,
):
    return call(
        op,
        data,
        weight,
        strides=ints(strides, nd),
        padding=pad_tuple(padding, nd),
        dilation=ints(dilation, nd),
        groups=groups,
        channels=channels,
        kernel_size=ints(kernel_size, nd),
        data_layout=data_layout,
        kernel_layout=kernel_layout,
        out_layout=out_layout,
        out_dtype=out_dtype,
        **extra,
    )


def conv1d(
    data,
    weight,
    strides=1,
    padding=0,
    dilation=1,
    groups=1,
    channels=None,
    kernel_size=None,
    data_layout="NCW",
    kernel_layout="OIW",
    out_layout="",
    out_dtype="",
) -> Expr:
    return _conv(
        "nn.conv1d",
        1,
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
    )


def conv2d(
    data,
    weight,
    strides=(1, 1),
    padding=(0, 0),
    dilation=(1, 1),
    groups=1,
    channels=None,
    kernel_size=None,
    data_layout="NCHW",
    kernel_layout="OIHW",
    out_layout="",
    out_dtype="",
) -> Expr:
    """2-d convolution, as ``tvm.relay.nn.conv2d``.

    Ints are widened to pairs and padding to TVM's 4-value form (top, left, bottom, right).

    >>> y = relay.nn.conv2d(x, w, padding=1, channels=16, kernel_size=3)
    >>> y.attrs.padding
    (1, 1, 1, 1)
    """
    return _conv(
        "nn.conv2d",
        2,
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
    )


def conv3d(
    data,
    weight,
    strides=(1, 1, 1),
    padding=(0, 0, 0),
    dilation=(1, 1, 1),
    groups=1,
    channels=None,
    kernel_size=None,
    data_layout="NCDHW",
    kernel_layout="OIDHW",
    out_layout="",
    out_dtype="",
) -> Expr:
    return _conv(
        "nn.conv3d",
        3,
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
    )


def conv2d_transpose(
    data,
    weight,
    strides=(1, 1),
    padding=(0, 0),
    dilation=(1, 1),
    groups=1,
    channels=None,
    kernel_size=None,
    data_layout="NCHW",
    kernel_layout="IOHW",
    out_layout="",
    output_padding=(0, 0),
    out_dtype="",
) -> Expr:
    return call(
        "nn.conv2d_transpose",
        data,
        weight,
        channels=channels,
        kernel_size=ints(kernel_size, 2),
        strides=ints(strides, 2),
        output_padding=ints(output_padding, 2),
        padding=ints(padding, 2),
        dilation=ints(dilation, 2),
        groups=groups,
        data_layout=data_layout,
        kernel_layout=kernel_layout,
        out_layout=out_layout,
        out_dtype=out_dtype,
    )


def _pool(
    op, nd, data, pool_size, strides, dilation, padding, layout, out_layout, ceil_mode, **extra
):
    return call(
        op,
        data,
        pool_size=ints(pool_size, nd),
        strides=ints(strides, nd),
        dilation=ints(dilation, nd),
        padding=pad_tuple(padding, nd),
        layout=layout,
        out_layout=out_layout,
        ceil_mode=ceil_mode,
        **extra,
    )


def max_pool1d(
    data,
    pool_size=(1,),
    strides=(1,),
    dilation=(1,),
    padding=(0,),
    layout="NCW",
    out_layout="",
    ceil_mode=False,
) -> Expr:
    return _pool(
        "nn.max_pool1d",
        1,
        data,
        pool_size,
        strides,
        dilation,
        padding,
        layout,
        out_layout,
        ceil_mode,
    )


def max_pool2d(
    data,
    pool_size=(1, 1),
    strides=(1, 1),
    dilation=(1, 1),
    padding=(0, 0),
    layout="NCHW",
    out_layout="",
    ceil_mode=False,
) -> Expr:
    """2-d max pooling, as ``tvm.relay.nn.max_pool2d`` (padding widened to 4 values)."""
    return _pool(
        "nn.max_pool2d",
        2,
        data,
        pool_size,
        strides,
        dilation,
        padding,
        layout,
        out_layout,
        ceil_mode,
    )


def max_pool3d(
    data,
    pool_size=(1, 1, 1),
    strides=(1, 1, 1),
    dilation=(1, 1, 1),
    padding=(0, 0, 0),
    layout="NCDHW",
    out_layout="",
    ceil_mode=False,
) -> Expr:
    return _pool(
        "nn.max_pool3d",
        3,
        data,
        pool_size,
        strides,
        dilation,
        padding,
        layout,
        out_layout,
        ceil_mode,
    )


def avg_pool1d(
    data,
    pool_size=(1,),
    strides=(1,),
    dilation=(1,),
    padding=(0,),
    layout="NCW",
    out_layout="",
    ceil_mode=False,
    count_include_pad=False,
) -> Expr:
    return _pool(
        "nn.avg_pool1d",
        1,
        data,
        pool_size,
        strides,
        dilation,
        padding,
        layout,
        out_layout,
        ceil_mode,
        count_include_pad=count_include_pad,
    )


def avg_pool2d(
    data,
    pool_size=(1, 1),
    strides=(1, 1),
    dilation=(1, 1),
    padding=(0, 0),
    layout="NCHW",
    out_layout="",
    ceil_mode=False,
    count_include_pad=False,
) -> Expr:
    return _pool(
        "nn.avg_pool2d",
        2,
        data,
        pool_size,
        strides,
        dilation,
        padding,
        layout,
        out_layout,
        ceil_mode,
        count_include_pad=count_include_pad,
    )


def avg_pool3d(
    data,
    pool_size=(1, 1, 1),
    strides=(1, 1, 1),
    dilation=(1, 1, 1),
    padding=(0, 0, 0),
    layout="NCDHW",
    out_layout="",
    ceil_mode=False,
    count_include_pad=False,
) -> Expr:
    return _pool(
        "nn.avg_pool3d",
        3,
        data,
        pool_size,
        strides,
        dilation,
        padding,
        layout,
        out_layout,
        ceil_mode,
        count_include_pad=count_include_pad,
    )


def global_avg_pool2d(data, layout="NCHW", out_layout="") -> Expr:
    return call("nn.global_avg_pool2d", data, layout=layout, out_layout=out_layout)


def global_max_pool2d(data, layout="NCHW", out_layout="") -> Expr:
    return call("nn.global_max_pool2d", data, layout=layout, out_layout=out_layout)


def adaptive_avg_pool2d(data, output_size=None, layout="NCHW", out_layout="") -> Expr:
    return call(
        "nn.adaptive_avg_pool2d",
        data,
        output_size=ints(output_size or (), 2),
        layout=layout,
        out_layout=out_layout,
    )


def adaptive_max_pool2d(data, output_size=None, layout="NCHW", out_layout="") -> Expr:
    return call(
        "nn.adaptive_max_pool2d",
        data,
        output_size=ints(output_size or (), 2),
        layout=layout,
        out_layout=out_layout,
    )


def batch_norm(
    data, gamma, beta, moving_mean, moving_var, axis=1, epsilon=1e-5, center=True, scale=True
) -> TupleWrapper:
    """Batch normalization; returns a TupleWrapper whose ``[0]`` is the normalized data.

    >>> bn = relay.nn.batch_norm(x, gamma, beta, mean, var)
    >>> y = relay.nn.relu(bn[0])
    """
    c = call(
        "nn.batch_norm",
        data,
        gamma,
        beta,
        moving_mean,
        moving_var,
        axis=axis,
        epsilon=epsilon,
        center=center,
        scale=scale,
    )
    return TupleWrapper(c, 3)


def layer_norm(data, gamma, beta, axis=-1, epsilon=1e-5, center=True, scale=True) -> Expr:
    return call(
        "nn.layer_norm", data, gamma, beta, axis=axis, epsilon=epsilon, center=center, scale=scale
    )


def dropout_raw(data, rate=0.5) -> Expr:
    """The ``nn.dropout`` call itself, whose value is the tuple (output, mask)."""
    return call("nn.dropout", data, rate=rate)


def dropout(data, rate=0.5) -> Expr:
    """Dropout; as in TVM this is field 0 (the output) of :func:`dropout_raw`."""
    return TupleWrapper(dropout_raw(data, rate), 2)[0]


def pad(data, pad_width, pad_value=0, pad_mode="constant") -> Expr:
    """Pad with ``pad_width = ((before, after), ...)``, one pair per axis."""
    return call(
        "nn.pad", data, pad_value, pad_width=tuple(ints(w) for w in pad_width), pad_mode=pad_mode
    )


def batch_flatten(data) -> Expr:
    return call("nn.batch_flatten", data)


def upsampling(
    data, scale_h=1, scale_w=1, layout="NCHW", method="nearest_neighbor", align_corners=False
) -> Expr:
    return call(
        "nn.upsampling",
        data,
        scale_h=scale_h,
        scale_w=scale_w,
        layout=layout,
        method=method,
        align_corners=align_corners,
    )


__all__ = [
    "adaptive_avg_pool2d",
    "adaptive_max_pool2d",
    "avg_pool1d",
    "avg_pool2d",
    "avg_pool3d",
    "batch_flatten",
    "batch_matmul",
    "batch_norm",
    "bias_add",
    "conv1d",
    "conv2d",
    "conv2d_transpose",
    "conv3d",
    "dense",
    "dropout",
    "dropout_raw",
    "global_avg_pool2d",
    "global_max_pool2d",
    "layer_norm",
    "leaky_relu",
    "log_softmax",
    "matmul",
    "max_pool1d",
    "max_pool2d",
    "max_pool3d",
    "pad",
    "prelu",
    "relu",
    "softmax",
    "upsampling",
]

# relay.nn is this module: the rest of TVM's nn family lives in sibling files and is
# re-exported here (imported last: they build on the relations above).
from . import nn_bitserial as _nn_bitserial  # noqa: E402
from . import nn_contrib as _nn_contrib  # noqa: E402
from . import nn_extra as _nn_extra  # noqa: E402
from . import nn_sparse as _nn_sparse  # noqa: E402
from . import nn_special as _nn_special  # noqa: E402
from . import nn_train as _nn_train  # noqa: E402
from .nn_bitserial import *  # noqa: E402,F401,F403
from .nn_contrib import *  # noqa: E402,F401,F403
from .nn_extra import *  # noqa: E402,F401,F403
from .nn_sparse import *  # noqa: E402,F401,F403
from .nn_special import *  # noqa: E402,F401,F403
from .nn_train import *  # noqa: E402,F401,F403

for _family in (_nn_bitserial, _nn_contrib, _nn_extra, _nn_sparse, _nn_special, _nn_train):
    __all__ += _family.__all__
