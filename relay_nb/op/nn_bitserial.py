"""Bit-serial (low-bit quantized) ``nn`` operators: bitpack, bitserial_conv2d, bitserial_dense.

``bitpack`` splits integers into bit planes and packs ``pack_type``-wide runs of one plane
into single words (the first element in the most significant bit).  The bit-serial ops
compute the same result as TVM's popcount kernels, stated on values: the low
``activation_bits`` / ``data_bits`` of the data times the low ``weight_bits`` of the weight;
``unipolar`` reads each weight bit as +1 / -1, i.e. the weight value ``w`` counts as
``2 w - (2^weight_bits - 1)``.  Relations follow ``src/relay/op/nn/bitserial.cc``.
"""

from __future__ import annotations

from ..errors import RelayTypeError
from ..ir.expr import Expr
from ..ir.ty import Any, TensorType
from ..typing.relations import forward_relation
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
    schema,
    tensor,
    type_text,
)
from .registry import OpPattern

PACK_TYPES = {"uint8": 8, "uint16": 16, "uint32": 32, "uint64": 64}


def bit_axis_position(bit_axis: int, ndim: int) -> int:
    """Where the bit-plane axis goes in the result: ``0..ndim``; negative counts from the end
    (``-1``: last).  TVM's relation leaves a negative axis out; its compute appends it."""
    pos = bit_axis + ndim + 1 if bit_axis < 0 else bit_axis
    if not 0 <= pos <= ndim:
        raise RelayTypeError(f"bit_axis {bit_axis} is out of range for a rank-{ndim} tensor")
    return pos


@forward_relation("BitPack")
def _bitpack_rel(inputs, attrs, reporter):
    data = tensor(inputs[0], "data")
    ptype = attrs["pack_type"]
    if ptype not in PACK_TYPES:
        raise RelayTypeError(f"pack_type must be one of {', '.join(PACK_TYPES)}, got {ptype!r}")
    if is_int_dtype(data.dtype) is False:
        raise RelayTypeError(f"bitpack packs integers, found {data.dtype}")
    ndim = len(data.shape)
    pack = attrs["pack_axis"]
    if not 0 <= pack < ndim:
        raise RelayTypeError(f"pack_axis {pack} is out of range for a rank-{ndim} tensor")
    if attrs["bits"] < 1:
        raise RelayTypeError(f"bits must be positive, got {attrs['bits']}")
    width = PACK_TYPES[ptype]
    shape = list(data.shape)
    if is_static(shape[pack]):
        if shape[pack] % width:
            raise RelayTypeError(
                f"axis {pack} ({shape[pack]}) is not a multiple of the {width}-bit pack type"
            )
        shape[pack] //= width
    else:
        shape[pack] = Any
    shape.insert(bit_axis_position(attrs["bit_axis"], ndim), attrs["bits"])
    return TensorType(tuple(shape), ptype)


def _bits_dtype(attrs, data):
    return attrs["out_dtype"] or data.dtype


@forward_relation("BinaryConv2D")
def _bitserial_conv2d_rel(inputs, attrs, reporter):
    data = tensor(inputs[0], "data")
    tensor(inputs[1], "weight")
    dl = layout_axes(attrs["data_layout"], "NCHW", "data_layout")
    if len(data.shape) != 4:
        raise RelayTypeError(f"data must have rank 4, found {type_text(data)}")
    if attrs["channels"] is None:
        raise RelayTypeError("channels must be given")
    kh, kw = as_tuple(attrs["kernel_size"], 2, "kernel_size")
    sh, sw = as_tuple(attrs["strides"], 2, "strides")
    (pt, pb), (pl, pr) = padding_pairs(attrs["padding"], 2, "padding")
    out = {"N": data.shape[dl["N"]], "C": attrs["channels"]}
    for a, k, s, pad in (("H", kh, sh, pt + pb), ("W", kw, sw, pl + pr)):
        size = data.shape[dl[a]]
        out[a] = (size + pad - k) // s + 1 if is_static(size) else Any
        if is_static(size) and out[a] <= 0:
            raise RelayTypeError(f"the kernel ({k}) is larger than the padded input ({size + pad})")
    return TensorType(tuple(out[a] for a in attrs["data_layout"]), _bits_dtype(attrs, data))


@forward_relation("BinaryDense")
def _bitserial_dense_rel(inputs, attrs, reporter):
    data = tensor(inputs[0], "data")
    tensor(inputs[1], "weight")
    if not data.shape:
        raise RelayTypeError("data must have at least one dimension")
    if attrs["units"] is None:
        raise RelayTypeError("units must be given")
    return TensorType(data.shape[:-1] + (attrs["units"],), _bits_dtype(attrs, data))


register(
    "nn.bitpack",
    1,
    _bitpack_rel,
    attrs=schema(
        "relay.attrs.BitPackAttrs",
        ("bits", "int", 1),
        ("pack_axis", "int", 1),
        ("bit_axis", "int", -1),
        ("pack_type", "dtype", ""),
        ("name", "str", "BitPack"),
    ),
    pattern=OpPattern.INJECTIVE,
    arg_names=("data",),
    doc="Split the low ``bits`` of integers into bit planes (a new axis at ``bit_axis``) and "
    "pack runs of ``pack_axis`` into ``pack_type`` words, first element in the top bit.",
)
register(
    "nn.bitserial_conv2d",
    2,
    _bitserial_conv2d_rel,
    attrs=schema(
        "relay.attrs.BinaryConv2DAttrs",
        ("strides", "ints", (1, 1)),
        ("padding", "ints", (0, 0)),
        ("kernel_size", "ints", (3, 3)),
        ("channels", "optional_int", None),
        ("activation_bits", "int", 1),
        ("weight_bits", "int", 1),
        ("data_layout", "str", "NCHW"),
        ("kernel_layout", "str", "OIHW"),
        ("pack_dtype", "dtype", ""),
        ("out_dtype", "dtype", ""),
        ("unipolar", "bool", True),
    ),
    pattern=OpPattern.OUT_ELEMWISE_FUSABLE,
    arg_names=("data", "weight"),
    doc="A conv2d of low-bit integers computed bit-serially (popcounts of packed bit planes).",
)
register(
    "nn.bitserial_dense",
    2,
    _bitserial_dense_rel,
    attrs=schema(
        "relay.attrs.BinaryDenseAttrs",
        ("units", "optional_int", None),
        ("data_bits", "int", 1),
        ("weight_bits", "int", 1),
        ("pack_dtype", "dtype", ""),
        ("out_dtype", "dtype", ""),
        ("unipolar", "bool", True),
    ),
    pattern=OpPattern.OUT_ELEMWISE_FUSABLE,
    arg_names=("data", "weight"),
    doc="A dense of low-bit integers computed bit-serially.",
)


def bitpack(data, bits=1, pack_axis=1, bit_axis=2, pack_type="uint32", name="BitPack") -> Expr:
    """Pack the low ``bits`` bits of ``data`` along ``pack_axis`` into ``pack_type`` words."""
    return call("nn.bitpack", data, bits=bits, pack_axis=pack_axis, bit_axis=bit_axis,
                pack_type=pack_type, name=name)  # fmt: skip


def bitserial_conv2d(data, weight, strides=(1, 1), padding=(0, 0), channels=None,
                     kernel_size=(3, 3), activation_bits=1, weight_bits=1, data_layout="NCHW",
                     kernel_layout="OIHW", pack_dtype="uint32", out_dtype="int16",
                     unipolar=True) -> Expr:  # fmt: skip
    """conv2d of the low ``activation_bits`` of data and ``weight_bits`` of the weight."""
    return call(
        "nn.bitserial_conv2d",
        data,
        weight,
        strides=ints(strides, 2),
        padding=pad_tuple(padding, 2),
        kernel_size=ints(kernel_size, 2),
        channels=channels,
        activation_bits=activation_bits,
        weight_bits=weight_bits,
        data_layout=data_layout,
        kernel_layout=kernel_layout,
        pack_dtype=pack_dtype,
        out_dtype=out_dtype,
        unipolar=unipolar,
    )


def bitserial_dense(data, weight, units=None, data_bits=1, weight_bits=1, pack_dtype="uint32",
                    out_dtype="int16", unipolar=True) -> Expr:  # fmt: skip
    """dense of the low ``data_bits`` of data and ``weight_bits`` of the weight."""
    return call("nn.bitserial_dense", data, weight, units=units, data_bits=data_bits,
                weight_bits=weight_bits, pack_dtype=pack_dtype, out_dtype=out_dtype,
                unipolar=unipolar)  # fmt: skip


__all__ = ["bitpack", "bitserial_conv2d", "bitserial_dense"]
