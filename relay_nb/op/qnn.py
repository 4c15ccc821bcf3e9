"""Quantized operators (``qnn.*``) and their builders; this module is ``relay.qnn`` (and
``relay.qnn.op``, as TVM spells the builders: ``relay.qnn.op.requantize(...)``).

A quantized tensor is an integer tensor ``q`` with a ``scale`` and a ``zero_point``; its
real value is ``scale * (q - zero_point)``.  As in TVM, scales and zero points are tensor
*arguments* (float32 and int32), not attributes: scalars, or per-channel vectors along an
``axis`` where TVM allows them.  The relations check them as TVM's do (a scalar where TVM
requires one, ``(C,)`` along the axis where it allows a vector) and give the output dtype
TVM gives.  What each op computes is TVM's *canonicalization* of it (the integer program
``CanonicalizeOps`` rewrites it into); :mod:`relay_nb.op.impl.qnn` follows those programs.

The ops that reuse an ``nn`` op's attributes (conv2d, dense, batch_matmul, avg_pool2d,
softmax, leaky_relu, concatenate) share that op's attribute schema and, for the tensor
arguments, its type relation, as TVM's relations call ``Conv2DRel`` and friends.
"""

from __future__ import annotations

import sys

from ..errors import RelayTypeError
from ..ir.expr import Expr
from ..ir.ty import Any, TensorType, TupleType
from ..typing.relations import is_known
from ._common import (
    call,
    dim_text,
    norm_axis,
    pad_tuple,
    register,
    relation,
    same_dim,
    schema,
    tensor,
    type_text,
)
from .registry import OpPattern, get_column, get_op

ROUNDINGS = ("None", "UPWARD", "TONEAREST")
COMPUTE_DTYPES = ("None", "int64", "float32", "float64")
UNARY = ("abs", "erf", "exp", "hardswish", "log", "rsqrt", "sigmoid", "sqrt", "tanh")
# simulated_quantize's dtype codes (TVM's topi.nn.qnn.SQNN_DTYPE_TO_CODE)
SQNN_DTYPE_TO_CODE = {"disable": 0, "int8": 1, "uint8": 2, "int32": 3}


# --- checking quantization parameters ---------------------------------------------------


def _dtype(t: TensorType, allowed: tuple, message: str, reporter) -> str:
    """The dtype of ``t``, which must be one of ``allowed`` (a literal takes its default)."""
    dt = t.dtype
    if not isinstance(dt, str):
        default = getattr(dt, "default", None)
        dt = reporter.unify_dtype(dt, default if default in allowed else allowed[0])
    if dt not in allowed:
        raise RelayTypeError(f"{message} but was {dt}")
    return dt


def _param(t, dtype: str, what: str, reporter) -> TensorType:
    p = tensor(t, what)
    try:
        reporter.unify_dtype(p.dtype, dtype)
    except RelayTypeError:
        raise RelayTypeError(f"{what} must have dtype {dtype}, found {type_text(p)}") from None
    return p


def _scalar(t, dtype: str, what: str, reporter) -> None:
    """TVM's ``IsScalarType``: a rank-0 tensor of ``dtype``."""
    if _param(t, dtype, what, reporter).shape != ():
        raise RelayTypeError(f"{what} must be a scalar, found {type_text(t)}")


def _per_axis(t, dtype: str, dim, what: str, reporter) -> None:
    """TVM's ``AssignType``: a scalar, or a vector of ``dim`` values (the channel axis)."""
    p = _param(t, dtype, what, reporter)
    if p.shape != () and (len(p.shape) != 1 or not same_dim(p.shape[0], dim)):
        raise RelayTypeError(
            f"{what} must be a scalar or have shape ({dim_text(dim)},), found {type_text(p)}"
        )


def _is_scalar_like(t: TensorType) -> bool:
    """A scalar, or a tensor of one element (dequantize and conv2d_transpose allow both)."""
    n = 1
    for d in t.shape:
        if not isinstance(d, int):
            return False
        n *= d
    return n == 1


def _channel_axis(axis: int, rank: int, what: str = "axis") -> int:
    """TVM's axis rule for per-channel parameters: -1 is the last axis; a scalar tensor has
    one "axis" 0."""
    if rank == 0:
        if axis not in (0, -1):
            raise RelayTypeError(f"{what} {axis} is out of range")
        return 0
    try:
        return norm_axis(axis, rank, what)
    except RelayTypeError:
        raise RelayTypeError(f"{what} {axis} is out of range") from None


def _axis_dim(data: TensorType, axis: int):
    return data.shape[axis] if data.shape else 1


def _sub_relation(op_name: str, types, attrs, reporter) -> bool:
    """Run ``op_name``'s relation on ``types`` = (inputs..., output)."""
    rel = get_op(op_name).get_attr("type_rel")
    return rel(list(types), len(types) - 1, attrs, reporter)


# --- relations ----------------------------------------------------------------------------


@relation("Quantize")
def _quantize_rel(types, num_inputs, attrs, reporter):
    if not all(is_known(t) for t in types[:3]):
        return False
    data = tensor(types[0], "data")
    _dtype(data, ("float32",), "Input type should be one of float32", reporter)
    rank = len(data.shape)
    scale, zp = tensor(types[1], "output_scale"), tensor(types[2], "output_zero_point")
    axis = 0
    if scale.shape != () or zp.shape != ():
        axis = _channel_axis(attrs["axis"], rank)
    _per_axis(scale, "float32", _axis_dim(data, axis), "output_scale", reporter)
    _per_axis(zp, "int32", _axis_dim(data, axis), "output_zero_point", reporter)
    out = attrs["out_dtype"]
    if out not in ("int8", "uint8", "int16", "uint16", "int32"):
        raise RelayTypeError(
            f"Output type should be one of [int8, uint8, int16, uint16, int32] but was {out or 'unset'}"
        )
    reporter.assign(types[3], TensorType(data.shape, out))
    return True


@relation("Dequantize")
def _dequantize_rel(types, num_inputs, attrs, reporter):
    if not all(is_known(t) for t in types[:3]):
        return False
    data = tensor(types[0], "data")
    _dtype(
        data,
        ("int8", "uint8", "int16", "uint16", "int32"),
        "Input type should be one of the quantized types [int8, uint8, int16, uint16, int32]",
        reporter,
    )
    scale, zp = tensor(types[1], "input_scale"), tensor(types[2], "input_zero_point")
    dim = 1
    if not (_is_scalar_like(scale) and _is_scalar_like(zp)):
        dim = _axis_dim(data, _channel_axis(attrs["axis"], len(data.shape)))
    _per_axis(scale, "float32", dim, "input_scale", reporter)
    _per_axis(zp, "int32", dim, "input_zero_point", reporter)
    out = attrs["out_dtype"]
    if out not in ("float16", "float32"):
        raise RelayTypeError(
            f"Output type should be one of [float16, float32] but was {out or 'unset'}"
        )
    reporter.assign(types[3], TensorType(data.shape, out))
    return True


@relation("Requantize")
def _requantize_rel(types, num_inputs, attrs, reporter):
    if not all(is_known(t) for t in types[:5]):
        return False
    data = tensor(types[0], "data")
    _dtype(
        data,
        ("int8", "uint8", "int16", "int32", "int64"),
        "Input type should be one of [int8, uint8, int16, int32, int64]",
        reporter,
    )
    axis = _channel_axis(attrs["axis"], len(data.shape))
    dim = _axis_dim(data, axis)
    _per_axis(types[1], "float32", dim, "input_scale", reporter)
    _per_axis(types[2], "int32", dim, "input_zero_point", reporter)
    _scalar(types[3], "float32", "output_scale", reporter)
    _scalar(types[4], "int32", "output_zero_point", reporter)
    if attrs["rounding"] not in ROUNDINGS:
        raise RelayTypeError(
            f"rounding must be one of {', '.join(ROUNDINGS)}, got {attrs['rounding']!r}"
        )
    if attrs["compute_dtype"] not in COMPUTE_DTYPES:
        raise RelayTypeError(
            f"compute_dtype must be one of {', '.join(COMPUTE_DTYPES)}, got {attrs['compute_dtype']!r}"
        )
    out = attrs["out_dtype"]
    if out not in ("int8", "uint8", "int16", "int32"):
        raise RelayTypeError(
            f"Output type should be one of [int8, uint8, int16, int32] but was {out or 'unset'}"
        )
    reporter.assign(types[5], TensorType(data.shape, out))
    return True


@relation("SimulatedQuantize")
def _simulated_rel(types, num_inputs, attrs, reporter):
    """The output has the data's type; the dtype code is an int32 tensor (a scalar)."""
    if not all(is_known(t) for t in types[:4]):
        return False
    data = tensor(types[0], "data")
    _param(types[1], "int32", "the dtype code", reporter)
    for t, what in ((types[2], "the scale"), (types[3], "the zero point")):
        if len(tensor(t, what).shape) > 1:
            raise RelayTypeError(f"{what} must be a scalar or a vector, found {type_text(t)}")
    reporter.assign(types[4], data)
    return True


@relation("QnnBroadcast")
def _broadcast_rel(types, num_inputs, attrs, reporter):
    if not all(is_known(t) for t in types[:8]):
        return False
    lhs, rhs = tensor(types[0], "lhs"), tensor(types[1], "rhs")
    for data, side, s, z in ((lhs, "lhs", types[2], types[3]), (rhs, "rhs", types[4], types[5])):
        scale, zp = tensor(s, f"{side}_scale"), tensor(z, f"{side}_zero_point")
        rank = len(data.shape)
        axis = attrs[f"{side}_axis"]
        axis = 0 if rank <= 1 else (rank + axis if axis < 0 else axis)
        if (scale.shape != () or zp.shape != ()) and not 0 <= axis < max(rank, 1):
            raise RelayTypeError(f"{side}_axis {attrs[f'{side}_axis']} is out of range")
        dim = _axis_dim(data, axis) if rank else 1
        _per_axis(scale, "float32", dim, f"{side}_scale", reporter)
        _per_axis(zp, "int32", dim, f"{side}_zero_point", reporter)
    _scalar(types[6], "float32", "output_scale", reporter)
    _scalar(types[7], "int32", "output_zero_point", reporter)
    return _sub_relation("add", (lhs, rhs, types[8]), None, reporter)


def _unary_rel(name: str, allowed=("int8", "uint8"), kind="quantized"):
    """``op(x, scale, zero_point, output_scale, output_zero_point)``: scalars, x's type out."""

    @relation(name)
    def rel(types, num_inputs, attrs, reporter):
        if not all(is_known(t) for t in types[:5]):
            return False
        x = tensor(types[0], "data")
        _dtype(x, allowed, f"Expected {kind} type({', '.join(allowed)}) for input", reporter)
        for t, dt, what in zip(
            types[1:5],
            ("float32", "int32", "float32", "int32"),
            ("scale", "zero_point", "output_scale", "output_zero_point"),
        ):
            _scalar(t, dt, what, reporter)
        reporter.assign(types[5], x)
        return True

    return rel


@relation("QnnConcatenate")
def _concatenate_rel(types, num_inputs, attrs, reporter):
    if not all(is_known(t) for t in types[:5]):
        return False
    data = types[0]
    if not isinstance(data, TupleType):
        raise RelayTypeError(f"data must be a tuple of tensors, found {type_text(data)}")
    n = len(data.fields)
    for i, (what, dt) in enumerate((("scales", "float32"), ("zero_points", "int32")), start=1):
        t = types[i]
        if not isinstance(t, TupleType):
            raise RelayTypeError(
                f"qnn concatenate requires a tuple of {what} as the {('second', 'third')[i - 1]} "
                f"argument, found {type_text(t)}"
            )
        if len(t.fields) != n:
            raise RelayTypeError(f"{n} tensors but {len(t.fields)} input {what}")
        for j, f in enumerate(t.fields):
            _scalar(f, dt, f"input {what[:-1]} {j}", reporter)
    _scalar(types[3], "float32", "output_scale", reporter)
    _scalar(types[4], "int32", "output_zero_point", reporter)
    return _sub_relation("concatenate", (data, types[5]), attrs, reporter)


def _matmul_like_rel(name: str, nn_op: str, what: str, data_dtypes, weight_dtypes, out_dtypes):
    """dense / batch_matmul / conv2d / conv2d_transpose: the nn relation on the two tensors,
    TVM's dtype checks, and the quantization parameters (args 2..5: data zero point, weight
    zero point, data scale, weight scale)."""

    @relation(name)
    def rel(types, num_inputs, attrs, reporter):
        if not (is_known(types[0]) and is_known(types[1])):
            return False
        data, weight = tensor(types[0], "data"), tensor(types[1], "weight")
        _dtype(
            data,
            data_dtypes,
            f"Expected quantized {what} type({', '.join(data_dtypes)}) for input",
            reporter,
        )
        _dtype(
            weight,
            weight_dtypes,
            f"Expected quantized {what} type({', '.join(weight_dtypes)}) for weight",
            reporter,
        )
        out = attrs["out_dtype"]
        if out not in out_dtypes:
            raise RelayTypeError(
                f"Expected quantized {what} type({', '.join(out_dtypes)}) for output but was "
                f"{out or 'unset'}"
            )
        if not all(is_known(t) for t in types[2:6]):
            return False
        # the nn relation first: it rejects wrong ranks and layouts with its own messages
        solved = _sub_relation(nn_op, (data, weight, types[6]), attrs, reporter)
        _check_params(name, types, attrs, data, weight, reporter)
        return solved

    return rel


def _check_params(name, types, attrs, data, weight, reporter) -> None:
    izp, wzp, iscale, wscale = types[2:6]
    if name == "QnnBatchMatmul":
        for t, dt, what in (
            (izp, "int32", "x_zero_point"),
            (wzp, "int32", "y_zero_point"),
            (iscale, "float32", "x_scale"),
            (wscale, "float32", "y_scale"),
        ):
            _scalar(t, dt, what, reporter)
        return
    if name == "QnnConv2DTranspose":
        for t, dt, what in ((izp, "int32", "input_zero_point"), (iscale, "float32", "input_scale")):
            p = _param(t, dt, what, reporter)
            if not _is_scalar_like(p):
                raise RelayTypeError(
                    f"{what}: zero point or scale should be scalar or a vector with one element"
                )
    else:
        _scalar(izp, "int32", "input_zero_point", reporter)
        _scalar(iscale, "float32", "input_scale", reporter)
    if name in ("QnnDense", "QnnDensePack"):
        units = _out_units(attrs, weight, name)
    else:
        units = _conv_units(name, attrs, data, weight)
    _per_axis(wscale, "float32", units, "kernel_scale", reporter)
    _per_axis(wzp, "int32", units, "kernel_zero_point", reporter)


def _conv_units(name, attrs, data, weight):
    """How many kernel scales a conv takes (TVM's rule: output channels; for grouped
    convolutions ``I * O`` of the weight, or ``channels``)."""
    w = dict(zip(attrs["kernel_layout"], weight.shape))
    o, i = w.get("O"), w.get("I")
    if o is None or i is None:
        raise RelayTypeError(f"kernel_layout {attrs['kernel_layout']!r} must name O and I axes")
    if attrs["groups"] == 1:
        return o
    both = o * i if isinstance(o, int) and isinstance(i, int) else Any
    if name == "QnnConv2DTranspose":
        return both
    channels = attrs["channels"]
    c = dict(zip(attrs["data_layout"], data.shape)).get("C")
    if channels is None or (attrs["groups"] == c and channels == i):
        return both
    return channels


def _out_units(attrs, weight, name):
    """How many kernel scales a dense takes: ``units`` (the packed weight's ``N/n * n``)."""
    if name == "QnnDensePack":
        w = weight.shape
        return w[0] * w[2] if isinstance(w[0], int) and isinstance(w[2], int) else Any
    return attrs["units"] if attrs["units"] is not None else weight.shape[0]


@relation("QnnDensePack")
def _dense_pack_rel(types, num_inputs, attrs, reporter):
    """data ``(N, K)``, weight packed ``(units / n, K / k, n, k)``: out ``(N, units)``."""
    if not (is_known(types[0]) and is_known(types[1])):
        return False
    data, weight = tensor(types[0], "data"), tensor(types[1], "weight")
    if len(data.shape) != 2:
        raise RelayTypeError(f"Only 2D data is supported, found {type_text(data)}")
    if len(weight.shape) != 4:
        raise RelayTypeError(f"Expect weight to be 4D tensor, found {type_text(weight)}")
    _dtype(
        data, ("int8", "uint8"), "Expected quantized dense type(int8, uint8) for input", reporter
    )
    _dtype(
        weight, ("int8", "uint8"), "Expected quantized dense type(int8, uint8) for weight", reporter
    )
    out = attrs["out_dtype"]
    if out not in ("int32", "int64"):
        raise RelayTypeError(
            f"Expected quantized dense type(int32, int64) for output but was {out or 'unset'}"
        )
    w = weight.shape
    k = w[1] * w[3] if isinstance(w[1], int) and isinstance(w[3], int) else None
    if k is not None and not same_dim(data.shape[1], k):
        raise RelayTypeError(
            f"the input's last dimension {dim_text(data.shape[1])} does not match the packed weight's {k}"
        )
    if not all(is_known(t) for t in types[2:6]):
        return False
    _check_params("QnnDensePack", types, attrs, data, weight, reporter)
    units = w[0] * w[2] if isinstance(w[0], int) and isinstance(w[2], int) else Any
    reporter.assign(types[6], TensorType((data.shape[0], units), out))
    return True


@relation("QnnAvgPool2D")
def _avg_pool2d_rel(types, num_inputs, attrs, reporter):
    if not all(is_known(t) for t in types[:5]):
        return False
    data = tensor(types[0], "data")
    _dtype(
        data,
        ("int8", "uint8"),
        "Expected quantized avg_pool2d type(int8, uint8) for input",
        reporter,
    )
    for t, dt, what in zip(
        types[1:5],
        ("float32", "int32", "float32", "int32"),
        ("input_scale", "input_zero_point", "output_scale", "output_zero_point"),
    ):
        _scalar(t, dt, what, reporter)
    return _sub_relation("nn.avg_pool2d", (data, types[5]), attrs, reporter)


_UNARY_RELS = {name: _unary_rel(f"qnn.{name}") for name in UNARY}


# --- registration -------------------------------------------------------------------------


def _nn_schema(op_name: str):
    return get_column("attrs_schema")[op_name]


_BINARY_ARGS = (
    "lhs",
    "rhs",
    "lhs_scale",
    "lhs_zero_point",
    "rhs_scale",
    "rhs_zero_point",
    "output_scale",
    "output_zero_point",
)
_UNARY_ARGS = ("data", "scale", "zero_point", "output_scale", "output_zero_point")
_GEMM_ARGS = (
    "data",
    "weight",
    "input_zero_point",
    "kernel_zero_point",
    "input_scale",
    "kernel_scale",
)
_BROADCAST_ATTRS = schema(
    "relay.attrs.BroadcastAttrs", ("lhs_axis", "int", -1), ("rhs_axis", "int", -1)
)

QNN_OPS = [
    # name, inputs, relation, attrs, pattern, arg names, doc
    (
        "qnn.quantize",
        3,
        _quantize_rel,
        schema("relay.attrs.QuantizeAttrs", ("out_dtype", "dtype"), ("axis", "int", -1)),
        OpPattern.OPAQUE,
        ("data", "output_scale", "output_zero_point"),
        (
            "Quantize float32 data: ``clip(round(data / scale) + zero_point)`` into ``out_dtype``; "
            "halves round away from zero; per-channel scales along ``axis``."
        ),
    ),
    (
        "qnn.dequantize",
        3,
        _dequantize_rel,
        schema("relay.attrs.DequantizeAttrs", ("out_dtype", "dtype"), ("axis", "int", -1)),
        OpPattern.OPAQUE,
        ("data", "input_scale", "input_zero_point"),
        "Dequantize: ``(data - zero_point) * scale`` as float32 (or float16, clipped).",
    ),
    (
        "qnn.requantize",
        5,
        _requantize_rel,
        schema(
            "relay.attrs.RequantizeAttrs",
            ("axis", "int", -1),
            ("rounding", "str", "None"),
            ("compute_dtype", "str", "None"),
            ("out_dtype", "dtype", ""),
        ),
        OpPattern.OPAQUE,
        ("data", "input_scale", "input_zero_point", "output_scale", "output_zero_point"),
        (
            "Change a quantized tensor's scale and zero point: ``zp_out + s_in / s_out * (q - zp_in)`` "
            "in fixed point (rounding UPWARD: halves up; TONEAREST: halves away from zero), clipped "
            "to ``out_dtype``; per-channel input scales along ``axis``."
        ),
    ),
    (
        "qnn.simulated_quantize",
        4,
        _simulated_rel,
        schema("relay.attrs.SimulatedQuantizeAttrs", ("axis", "int", -1)),
        OpPattern.OPAQUE,
        ("data", "out_dtype", "output_scale", "output_zero_point"),
        (
            "Quantize without changing the dtype: the dtype to simulate is an int32 code tensor "
            "(0 disable, 1 int8, 2 uint8, 3 int32), so it can change at run time."
        ),
    ),
    (
        "qnn.simulated_dequantize",
        4,
        _simulated_rel,
        schema("relay.attrs.DequantizeAttrs", ("out_dtype", "dtype", ""), ("axis", "int", -1)),
        OpPattern.OPAQUE,
        ("data", "in_dtype", "input_scale", "input_zero_point"),
        (
            "Dequantize without changing the dtype: ``(data - zero_point) * scale`` unless the "
            "dtype code is 0 (disable)."
        ),
    ),
    *[
        (
            f"qnn.{name}",
            8,
            _broadcast_rel,
            _BROADCAST_ATTRS,
            OpPattern.BROADCAST,
            _BINARY_ARGS,
            doc,
        )
        for name, doc in (
            (
                "add",
                (
                    "Quantized addition with broadcasting: both sides requantized to the output "
                    "scale, added, clipped to the lhs dtype."
                ),
            ),
            (
                "subtract",
                (
                    "Quantized subtraction with broadcasting: both sides requantized to the "
                    "output scale, subtracted, clipped to the lhs dtype."
                ),
            ),
            (
                "mul",
                (
                    "Quantized multiplication with broadcasting: ``(l - zp_l) * (r - zp_r)`` "
                    "requantized from scale ``s_l * s_r`` to the output's."
                ),
            ),
        )
    ],
    (
        "qnn.concatenate",
        5,
        _concatenate_rel,
        None,  # filled below from concatenate's schema
        OpPattern.OPAQUE,
        ("data", "input_scales", "input_zero_points", "output_scale", "output_zero_point"),
        "Concatenate quantized tensors, requantizing each to the output scale and zero point.",
    ),
    (
        "qnn.dense",
        6,
        _matmul_like_rel(
            "QnnDense",
            "nn.dense",
            "dense",
            ("int8", "uint8", "int16", "uint16"),
            ("int8", "uint8"),
            ("int32", "int64"),
        ),
        "nn.dense",
        OpPattern.OUT_ELEMWISE_FUSABLE,
        _GEMM_ARGS,
        (
            "Quantized dense: ``sum_k (x - zp_x) * (w - zp_w)`` in ``out_dtype``; the weight zero "
            "point may be per output unit."
        ),
    ),
    (
        "qnn.contrib_dense_pack",
        6,
        _dense_pack_rel,
        schema(
            "relay.attrs.DensePackAttrs",
            ("units", "optional_int", None),
            ("out_dtype", "dtype", ""),
            ("weight_layout", "str", "NC"),
        ),
        OpPattern.OUT_ELEMWISE_FUSABLE,
        _GEMM_ARGS,
        "Quantized dense with the weight packed as ``(units / n, K / k, n, k)`` (layout ``NC<n>n<k>c``).",
    ),
    (
        "qnn.batch_matmul",
        6,
        _matmul_like_rel(
            "QnnBatchMatmul",
            "nn.batch_matmul",
            "batch_matmul",
            ("int8", "uint8"),
            ("int8", "uint8"),
            ("int32",),
        ),
        "nn.batch_matmul",
        OpPattern.OPAQUE,
        ("x", "y", "x_zero_point", "y_zero_point", "x_scale", "y_scale"),
        (
            "Quantized batch_matmul ``(B, M, K) x (B, N, K) -> (B, M, N)`` of the zero-point-shifted "
            "tensors, in int32."
        ),
    ),
    (
        "qnn.conv2d",
        6,
        _matmul_like_rel(
            "QnnConv2D",
            "nn.conv2d",
            "conv2d",
            ("int8", "uint8", "int16"),
            ("int8", "uint8", "int16"),
            ("int16", "int32", "int64"),
        ),
        "nn.conv2d",
        OpPattern.OUT_ELEMWISE_FUSABLE,
        _GEMM_ARGS,
        (
            "Quantized conv2d of ``data - zp_in`` (padded with zero points) and ``weight - zp_w`` "
            "(per output channel), in ``out_dtype``."
        ),
    ),
    (
        "qnn.conv2d_transpose",
        6,
        _matmul_like_rel(
            "QnnConv2DTranspose",
            "nn.conv2d_transpose",
            "conv2d_transpose",
            ("int8", "uint8", "int16", "uint16"),
            ("int8", "uint8"),
            ("int16", "int32", "int64"),
        ),
        "nn.conv2d_transpose",
        OpPattern.OPAQUE,
        _GEMM_ARGS,
        "Quantized conv2d_transpose of ``data - zp_in`` and ``weight - zp_w``, in ``out_dtype``.",
    ),
    (
        "qnn.avg_pool2d",
        5,
        _avg_pool2d_rel,
        "nn.avg_pool2d",
        OpPattern.OUT_ELEMWISE_FUSABLE,
        _UNARY_ARGS,
        "Quantized avg_pool2d: requantize to the output scale, average in int32, clip.",
    ),
    (
        "qnn.softmax",
        5,
        _unary_rel("QSoftmax", ("int8",)),
        "nn.softmax",
        OpPattern.OPAQUE,
        _UNARY_ARGS,
        (
            "Integer-only softmax of int8 data (arXiv 2207.01405, Algorithm 1), as TVM computes it; "
            "the input scale must be at most 1."
        ),
    ),
    (
        "qnn.leaky_relu",
        5,
        _unary_rel("QnnLeakyRelu", kind="quantized leaky_relu"),
        "nn.leaky_relu",
        OpPattern.OPAQUE,
        _UNARY_ARGS,
        (
            "Quantized leaky ReLU in fixed point: requantized input where ``x >= zp``, "
            "``alpha * q + (1 - alpha) * zp_out`` below."
        ),
    ),
    *[
        (
            f"qnn.{name}",
            5,
            _UNARY_RELS[name],
            None,
            OpPattern.OPAQUE,
            _UNARY_ARGS,
            (
                f"Quantized {name}: dequantize, float32 {name}, quantize to the output scale "
                "(TVM's default canonicalization)."
            ),
        )
        for name in UNARY
    ],
]

for _name, _n, _rel, _attrs, _pattern, _args, _doc in QNN_OPS:
    if _name == "qnn.concatenate":
        _attrs = _nn_schema("concatenate")
    elif isinstance(_attrs, str):
        _attrs = _nn_schema(_attrs)
    register(_name, _n, _rel, attrs=_attrs, pattern=_pattern, arg_names=_args, doc=_doc)


# --- builders (TVM's python/tvm/relay/qnn/op/qnn.py signatures) ---------------------------


def quantize(data, output_scale, output_zero_point, axis=-1, out_dtype="int8") -> Expr:
    """``clip(round(data / output_scale) + output_zero_point)`` as ``out_dtype``.

    >>> q = relay.qnn.op.quantize(x, relay.const(0.5), relay.const(0, "int32"))
    """
    return call(
        "qnn.quantize", data, output_scale, output_zero_point, out_dtype=out_dtype, axis=axis
    )


def dequantize(data, input_scale, input_zero_point, axis=-1, out_dtype="float32") -> Expr:
    """``(data - input_zero_point) * input_scale`` as ``out_dtype``."""
    return call(
        "qnn.dequantize", data, input_scale, input_zero_point, out_dtype=out_dtype, axis=axis
    )


def requantize(
    data,
    input_scale,
    input_zero_point,
    output_scale,
    output_zero_point,
    axis=-1,
    rounding="None",
    compute_dtype="None",
    out_dtype="int8",
) -> Expr:
    """Re-express a quantized tensor with another scale and zero point (TVM's defaults:
    ``rounding="None"`` means UPWARD, ``compute_dtype="None"`` the integer path)."""
    return call(
        "qnn.requantize",
        data,
        input_scale,
        input_zero_point,
        output_scale,
        output_zero_point,
        axis=axis,
        rounding=rounding,
        compute_dtype=compute_dtype,
        out_dtype=out_dtype,
    )


def _flat(x):
    from .api import reshape

    return reshape(x, [-1])


def _dtype_code(dtype):
    from ..ir.expr import const

    return const(SQNN_DTYPE_TO_CODE[dtype], "int32") if isinstance(dtype, str) else dtype


def simulated_quantize(data, output_scale, output_zero_point, axis=-1, out_dtype="int8") -> Expr:
    """quantize's values in the data's own dtype; ``out_dtype`` a name or an int32 code."""
    return call(
        "qnn.simulated_quantize",
        data,
        _dtype_code(out_dtype),
        _flat(output_scale),
        _flat(output_zero_point),
        axis=axis,
    )


def simulated_dequantize(data, input_scale, input_zero_point, axis=-1, in_dtype="int8") -> Expr:
    """dequantize's values in the data's own dtype; ``in_dtype`` a name or an int32 code."""
    return call(
        "qnn.simulated_dequantize",
        data,
        _dtype_code(in_dtype),
        _flat(input_scale),
        _flat(input_zero_point),
        axis=axis,
    )


def _binary(name):
    def build(
        lhs,
        rhs,
        lhs_scale,
        lhs_zero_point,
        rhs_scale,
        rhs_zero_point,
        output_scale,
        output_zero_point,
        lhs_axis=-1,
        rhs_axis=-1,
    ) -> Expr:
        return call(
            f"qnn.{name}",
            lhs,
            rhs,
            lhs_scale,
            lhs_zero_point,
            rhs_scale,
            rhs_zero_point,
            output_scale,
            output_zero_point,
            lhs_axis=lhs_axis,
            rhs_axis=rhs_axis,
        )

    build.__name__ = build.__qualname__ = name
    build.__doc__ = f"Quantized {name} with numpy-style broadcasting (``relay.qnn.op.{name}``)."
    return build


add = _binary("add")
subtract = _binary("subtract")
mul = _binary("mul")


def concatenate(
    data, input_scales, input_zero_points, output_scale, output_zero_point, axis
) -> Expr:
    """Concatenate quantized tensors along ``axis`` into the output's scale and zero point."""
    return call(
        "qnn.concatenate",
        list(data) if isinstance(data, (list, tuple)) else data,
        list(input_scales),
        list(input_zero_points),
        output_scale,
        output_zero_point,
        axis=axis,
    )


def dense(
    data,
    weight,
    input_zero_point,
    kernel_zero_point,
    input_scale,
    kernel_scale,
    units,
    out_dtype="int32",
) -> Expr:
    """Quantized ``data @ weight.T`` in ``out_dtype``."""
    return call(
        "qnn.dense",
        data,
        weight,
        input_zero_point,
        kernel_zero_point,
        input_scale,
        kernel_scale,
        units=units,
        out_dtype=out_dtype,
    )


def contrib_dense_pack(
    data,
    weight,
    input_zero_point,
    kernel_zero_point,
    input_scale,
    kernel_scale,
    kernel_layout="NC",
    units=None,
    out_dtype="int32",
) -> Expr:
    """qnn.dense with a packed 4-d weight (``kernel_layout`` such as ``NC16n4c``)."""
    return call(
        "qnn.contrib_dense_pack",
        data,
        weight,
        input_zero_point,
        kernel_zero_point,
        input_scale,
        kernel_scale,
        units=units,
        out_dtype=out_dtype,
        weight_layout=kernel_layout,
    )


def batch_matmul(x, y, x_zero_point, y_zero_point, x_scale, y_scale, out_dtype="int32") -> Expr:
    """Quantized ``(B, M, K) x (B, N, K) -> (B, M, N)``."""
    return call(
        "qnn.batch_matmul",
        x,
        y,
        x_zero_point,
        y_zero_point,
        x_scale,
        y_scale,
        out_dtype=out_dtype,
        transpose_a=False,
        transpose_b=True,
    )


def conv2d(
    data,
    kernel,
    input_zero_point,
    kernel_zero_point,
    input_scale,
    kernel_scale,
    kernel_size,
    channels,
    strides=(1, 1),
    padding=(0, 0),
    dilation=(1, 1),
    groups=1,
    data_layout="NCHW",
    kernel_layout="OIHW",
    out_layout="",
    out_dtype="int32",
) -> Expr:
    """Quantized 2-d convolution (padding widened to 4 values, as TVM's builder does)."""
    return call(
        "qnn.conv2d",
        data,
        kernel,
        input_zero_point,
        kernel_zero_point,
        input_scale,
        kernel_scale,
        strides=_pair(strides),
        padding=pad_tuple(padding, 2),
        dilation=_pair(dilation),
        groups=groups,
        channels=channels,
        kernel_size=_pair(kernel_size),
        data_layout=data_layout,
        kernel_layout=kernel_layout,
        out_layout=out_layout,
        out_dtype=out_dtype,
    )


def conv2d_transpose(
    data,
    weight,
    input_zero_point,
    kernel_zero_point,
    input_scale,
    kernel_scale,
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
    out_dtype="int32",
) -> Expr:
    """Quantized 2-d transposed convolution."""
    return call(
        "qnn.conv2d_transpose",
        data,
        weight,
        input_zero_point,
        kernel_zero_point,
        input_scale,
        kernel_scale,
        channels=channels,
        kernel_size=_pair(kernel_size) if kernel_size is not None else None,
        strides=_pair(strides),
        output_padding=_pair(output_padding),
        padding=pad_tuple(padding, 2),
        dilation=_pair(dilation),
        groups=groups,
        data_layout=data_layout,
        kernel_layout=kernel_layout,
        out_layout=out_layout,
        out_dtype=out_dtype,
    )


def _pair(v):
    return (int(v), int(v)) if isinstance(v, int) else tuple(int(x) for x in v)


def avg_pool2d(
    data,
    input_scale,
    input_zero_point,
    output_scale,
    output_zero_point,
    pool_size,
    strides,
    padding,
    dilation,
    ceil_mode=False,
    count_include_pad=True,
    layout="NHWC",
    out_layout="",
) -> Expr:
    """Quantized 2-d average pooling (TVM's builder defaults: NHWC, count_include_pad)."""
    return call(
        "qnn.avg_pool2d",
        data,
        input_scale,
        input_zero_point,
        output_scale,
        output_zero_point,
        pool_size=_pair(pool_size),
        strides=_pair(strides),
        dilation=_pair(dilation),
        padding=tuple(int(p) for p in padding) if not isinstance(padding, int) else (padding,),
        layout=layout,
        out_layout=out_layout,
        ceil_mode=ceil_mode,
        count_include_pad=count_include_pad,
    )


def softmax(x, scale, zero_point, output_scale, output_zero_point, axis=-1) -> Expr:
    """Integer-only softmax of int8 data along ``axis``."""
    return call("qnn.softmax", x, scale, zero_point, output_scale, output_zero_point, axis=axis)


def leaky_relu(x, alpha, input_scale, input_zero_point, output_scale, output_zero_point) -> Expr:
    """Quantized leaky ReLU with slope ``alpha``."""
    return call(
        "qnn.leaky_relu",
        x,
        input_scale,
        input_zero_point,
        output_scale,
        output_zero_point,
        alpha=alpha,
    )


def _unary(name):
    def build(x, scale, zero_point, output_scale, output_zero_point) -> Expr:
        return call(f"qnn.{name}", x, scale, zero_point, output_scale, output_zero_point)

    build.__name__ = build.__qualname__ = name
    build.__doc__ = f"Quantized {name}: dequantize, {name}, quantize (``relay.qnn.op.{name}``)."
    return build


abs = _unary("abs")
erf = _unary("erf")
exp = _unary("exp")
hardswish = _unary("hardswish")
log = _unary("log")
rsqrt = _unary("rsqrt")
sigmoid = _unary("sigmoid")
sqrt = _unary("sqrt")
tanh = _unary("tanh")

# ``relay.qnn.op.quantize``: TVM's builders live in the ``op`` submodule of ``relay.qnn``.
op = sys.modules[__name__]

__all__ = [
    "SQNN_DTYPE_TO_CODE",
    "abs",
    "add",
    "avg_pool2d",
    "batch_matmul",
    "concatenate",
    "contrib_dense_pack",
    "conv2d",
    "conv2d_transpose",
    "dense",
    "dequantize",
    "erf",
    "exp",
    "hardswish",
    "leaky_relu",
    "log",
    "mul",
    "quantize",
    "requantize",
    "rsqrt",
    "sigmoid",
    "simulated_dequantize",
    "simulated_quantize",
    "softmax",
    "sqrt",
    "subtract",
    "tanh",
]
