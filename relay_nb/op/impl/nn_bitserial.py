"""numpy implementations of :mod:`relay_nb.op.nn_bitserial` (see its docstring for the
value semantics of TVM's popcount kernels).  The weight of the bit-serial ops is the plain
(unpacked) integer tensor, as TVM's generic compute takes it."""

from __future__ import annotations

import numpy as np

from ...errors import EvalError
from ..nn_bitserial import PACK_TYPES, bit_axis_position
from ._util import convert, impl, ints_n, layout_perm, out_dtype, pad_pairs, to_layout
from .nn import conv_nd


@impl("nn.bitpack")
def _bitpack(args, attrs, out):
    x = args[0]
    if x.dtype.kind not in "iub":
        raise EvalError(f"bitpack packs integers, found {x.dtype}")
    width = PACK_TYPES[attrs["pack_type"]]
    ptype = np.dtype(attrs["pack_type"])
    axis = attrs["pack_axis"]
    moved = np.moveaxis(x.astype(np.int64), axis, -1)
    if moved.shape[-1] % width:
        raise EvalError(f"axis {axis} ({moved.shape[-1]}) is not a multiple of {width}")
    runs = moved.reshape(moved.shape[:-1] + (moved.shape[-1] // width, width))
    shifts = np.arange(width - 1, -1, -1, dtype=np.uint64)  # element k -> bit width-1-k
    planes = []
    for b in range(attrs["bits"]):
        bit = ((runs >> b) & 1).astype(np.uint64)
        word = np.bitwise_or.reduce(bit << shifts, axis=-1)
        planes.append(np.moveaxis(word, -1, axis).astype(ptype))
    return np.stack(planes, axis=bit_axis_position(attrs["bit_axis"], x.ndim))


def _low_bits(x: np.ndarray, bits: int) -> np.ndarray:
    return x.astype(np.int64) & ((1 << bits) - 1)


def _weight_values(w: np.ndarray, bits: int, unipolar: bool) -> np.ndarray:
    low = _low_bits(w, bits)
    return 2 * low - ((1 << bits) - 1) if unipolar else low


@impl("nn.bitserial_dense")
def _bitserial_dense(args, attrs, out):
    data, weight = args
    d = _low_bits(data, attrs["data_bits"])
    w = _weight_values(weight, attrs["weight_bits"], attrs["unipolar"])
    if w.ndim != 2 or w.shape[1] != d.shape[-1]:
        raise EvalError(f"weight {weight.shape} does not fit data {data.shape}")
    dt = out_dtype(out, attrs["out_dtype"], data)
    return convert(d @ w.T, dt)


@impl("nn.bitserial_conv2d")
def _bitserial_conv2d(args, attrs, out):
    data, weight = args
    dl = attrs["data_layout"]
    x = _low_bits(np.transpose(data, layout_perm(dl, "NCHW")), attrs["activation_bits"])
    w = np.transpose(weight, layout_perm(attrs["kernel_layout"], "OIHW", "kernel_layout"))
    w = _weight_values(w, attrs["weight_bits"], attrs["unipolar"])
    strides = ints_n(attrs["strides"], 2, "strides")
    y = conv_nd(x, w, strides, (1, 1), pad_pairs(attrs["padding"], 2), 1)
    dt = out_dtype(out, attrs["out_dtype"], data)
    return to_layout(convert(y, dt), "NCHW", dl)
