"""The ``nn.contrib_*`` convolutions and dense, lowered by decomposition (TVM's Legalize).

Each becomes, inside the primitive function being lowered only (:func:`.lower.legalize`),
the plain op the interpreter reduces it to (:mod:`relay_nb.op.impl.nn_contrib`): layout
transforms around ``nn.conv2d`` for the channel-packed ``NCHWc`` convolutions, a
``layout_transform`` of the packed weight before ``nn.dense``, the GEMM weight transform's
pad / reshape / transpose (and their inverse before the convolution), and the Winograd
kernel transform ``G g G^T`` (and the kernel recovered from a transformed weight with
``G``'s pseudo-inverse) as ``einsum`` in float64.  The result is one kernel in which the
anchor's rule computes the convolution, fused with what follows.
"""

from __future__ import annotations

import numpy as np

from ....ir.expr import Call, Constant, Expr, Tuple
from ....op._common import call as op_call
from ....op.impl._util import ints_n
from ....op.impl.nn_contrib import winograd_g
from ....op.nn_contrib import gemm_padded
from .context import attrs_of
from .rules import rule
from .types import Unsupported


def _ttype(e: Expr):
    return e._checked_type


def _cast(e: Expr, dt: str, have: str) -> Expr:
    return e if have == dt else op_call("cast", e, dtype=dt)


def _relayout(e: Expr, src: str, dst: str) -> Expr:
    return e if src == dst else op_call("layout_transform", e, src_layout=src, dst_layout=dst)


def _conv(nd: int, call: Call, data: Expr, kernel: Expr, kernel_dtype: str) -> Expr:
    """The interpreter's ``_conv_with``: ``data`` (in ``data_layout``) and a canonical OI...
    ``kernel``, both in the result dtype, through nn.conv{nd}d, back to ``out_layout``."""
    attrs = attrs_of(call)
    canon = "NC" + ("HW" if nd == 2 else "DHW")
    dt = call._checked_type.dtype
    dl = attrs["data_layout"]
    # the data's dtype is read off the call's own operand (typed): the rewritten one is not
    x = _cast(_relayout(data, dl, canon), dt, _ttype(call.args[0]).dtype)
    w = _cast(kernel, dt, kernel_dtype)
    y = op_call(
        f"nn.conv{nd}d", x, w,
        strides=attrs["strides"], padding=attrs["padding"], dilation=attrs["dilation"], groups=attrs["groups"],
        data_layout=canon, kernel_layout="OI" + canon[2:], out_dtype=dt,
    )  # fmt: skip
    return _relayout(y, canon, attrs["out_layout"] or dl)


@rule("nn.contrib_conv2d_NCHWc", "nn.contrib_depthwise_conv2d_NCHWc", kind="rewrite")
def _nchwc(call: Call) -> Expr:
    """``layout_transform``s to NCHW / OIHW around ``nn.conv2d`` (and back to the packed
    ``out_layout``)."""
    data, weight = call.args
    kernel = _relayout(weight, attrs_of(call)["kernel_layout"], "OIHW")
    return _conv(2, call, data, kernel, _ttype(call.args[1]).dtype)


@rule("nn.contrib_dense_pack", kind="rewrite")
def _dense_pack(call: Call) -> Expr:
    """The packed weight unpacked (``NC16n`` -> ``NC``), then ``nn.dense``."""
    data, weight = call.args
    attrs = attrs_of(call)
    dt = call._checked_type.dtype
    w = _cast(_relayout(weight, attrs["weight_layout"], "NC"), dt, _ttype(call.args[1]).dtype)
    x = _cast(data, dt, _ttype(call.args[0]).dtype)
    return op_call("nn.dense", x, w, out_dtype=dt)


# --- GEMM ------------------------------------------------------------------------------------------


def _eight_bit(dtype: str) -> bool:
    """8-bit kernels are tiled (tile_N, tile_K), others (tile_K, tile_N)."""
    return dtype in ("int8", "uint8")


@rule("nn.contrib_conv2d_gemm_weight_transform", kind="rewrite")
def _gemm_weight(call: Call) -> Expr:
    """HWIO flattened to (K, N), zero-padded to the tiles, split into tiles and reordered."""
    (w,) = call.args
    ty = _ttype(call.args[0])
    kh, kw, ci, co = ty.shape
    attrs = attrs_of(call)
    tn, tk = attrs["tile_N"], attrs["tile_K"]
    k, n = kh * kw * ci, co
    kp, np_ = gemm_padded(k, n, tn, tk)
    flat = op_call("reshape", w, newshape=(k, n))
    if (kp, np_) != (k, n):
        zero = Constant(np.zeros((), ty.dtype))
        flat = op_call("nn.pad", flat, zero, pad_width=((0, kp - k), (0, np_ - n)))
    tiles = op_call("reshape", flat, newshape=(kp // tk, tk, np_ // tn, tn))
    return op_call("transpose", tiles, axes=(2, 0, 3, 1) if _eight_bit(ty.dtype) else (2, 0, 1, 3))


@rule("nn.contrib_conv2d_gemm_without_weight_transform", kind="rewrite")
def _gemm_conv(call: Call) -> Expr:
    """The GEMM transform undone (tiles back to (K, N), the padding sliced off, HWIO to
    OIHW), then the convolution."""
    data, packed = call.args
    attrs = attrs_of(call)
    pty = _ttype(call.args[1])
    kh, kw = ints_n(attrs["kernel_size"], 2, "kernel_size")
    dshape = _ttype(call.args[0]).shape
    ci = dshape[attrs["data_layout"].index("C")]
    co = attrs["channels"]
    t0, t1, t2, t3 = pty.shape
    order = (1, 3, 0, 2) if _eight_bit(pty.dtype) else (1, 2, 0, 3)
    flat = op_call("transpose", packed, axes=order)
    rows, cols = (t1 * t3, t0 * t2) if _eight_bit(pty.dtype) else (t1 * t2, t0 * t3)
    flat = op_call("reshape", flat, newshape=(rows, cols))
    k = kh * kw * ci // attrs["groups"]
    if rows < k or cols < co:
        raise Unsupported(f"{call.op.name}: the weight does not hold the kernel", call.op.name)
    flat = op_call("strided_slice", flat, begin=(0, 0), end=(k, co), strides=(1, 1))
    hwio = op_call("reshape", flat, newshape=(kh, kw, ci // attrs["groups"], co))
    return _conv(2, call, data, op_call("transpose", hwio, axes=(3, 2, 0, 1)), pty.dtype)


# --- Winograd --------------------------------------------------------------------------------------

_AXES = "pqr"  # kernel taps
_ALPHA = "abc"  # transformed taps


def _g(tile: int, k: int, name: str) -> np.ndarray:
    try:
        return winograd_g(tile, k)
    except Exception as exc:
        raise Unsupported(f"{name}: {exc}", name) from None


def _apply(x: Expr, mats: list, nd: int, forward: bool) -> Expr:
    """Apply ``mats[a]`` along kernel axis ``a`` of ``x`` (float64, ``(O, I, taps...)``), one
    einsum per axis in the interpreter's axis order (``tensordot`` after ``tensordot``)."""
    cur = [(_AXES if forward else _ALPHA)[d] for d in range(nd)]
    for axis, m in enumerate(mats):
        if m is None:
            continue
        new = list(cur)
        new[axis] = (_ALPHA if forward else _AXES)[axis]
        # out[new] = sum_old m[new, old] x[old]: G is (alpha x k), its pseudo-inverse (k x alpha)
        eq = f"{new[axis]}{cur[axis]},oi{''.join(cur)}->oi{''.join(new)}"
        x = op_call("einsum", Tuple((Constant(m), x)), equation=eq)
        cur = new
    return x


def _winograd_mats(call: Call, kernel: tuple, inverse: bool) -> list:
    """Per kernel axis, ``G`` (or its pseudo-inverse), None for a 3-d depth kept as it is."""
    tile = attrs_of(call)["tile_size"]
    nd = len(kernel)
    mats = []
    for d, k in enumerate(kernel):
        if nd == 3 and d == 0 and not 2 < k < 8:
            mats.append(None)
            continue
        g = _g(tile, k, call.op.name)
        mats.append(np.linalg.pinv(g) if inverse else g)
    return mats


def _float64(e: Expr, dtype: str) -> Expr:
    return _cast(e, "float64", dtype)


def _winograd_weight(nd: int):
    def fn(call: Call) -> Expr:
        """``U = G g G^T``: ``(alpha..., O, I)`` (a 3-d depth outside 3..7 kept, after the
        alphas), computed in float64 and converted back as the interpreter does."""
        (w,) = call.args
        ty = _ttype(call.args[0])
        kernel = tuple(ty.shape[2:])
        mats = _winograd_mats(call, kernel, inverse=False)
        u = _apply(_float64(w, ty.dtype), mats, nd, forward=True)  # (O, I, alpha...)
        lead = [2 + d for d in range(nd) if mats[d] is not None]
        kept = [2 + d for d in range(nd) if mats[d] is None]
        u = op_call("transpose", u, axes=(*lead, *kept, 0, 1))
        return _cast(u, ty.dtype, "float64")

    return fn


def _winograd_conv(nd: int):
    def fn(call: Call) -> Expr:
        """The kernel recovered with ``G``'s pseudo-inverse in float64 (as the interpreter
        does), then the convolution."""
        data, u = call.args
        ty = _ttype(call.args[1])
        kernel = tuple(ints_n(attrs_of(call)["kernel_size"], nd, "kernel_size"))
        mats = _winograd_mats(call, kernel, inverse=True)
        if nd == 3 and mats[0] is None:
            axes = (3, 4, 2, 0, 1)  # (ah, aw, D, O, I) -> (O, I, D, ah, aw)
        else:
            axes = (nd, nd + 1, *range(nd))  # (alpha..., O, I) -> (O, I, alpha...)
        x = op_call("transpose", _float64(u, ty.dtype), axes=axes)
        return _conv(nd, call, data, _apply(x, mats, nd, forward=False), "float64")

    return fn


rule("nn.contrib_conv2d_winograd_weight_transform", kind="rewrite")(_winograd_weight(2))
rule("nn.contrib_conv3d_winograd_weight_transform", kind="rewrite")(_winograd_weight(3))
rule("nn.contrib_conv2d_winograd_without_weight_transform", kind="rewrite")(_winograd_conv(2))
rule("nn.contrib_conv3d_winograd_without_weight_transform", kind="rewrite")(_winograd_conv(3))


__all__: list[str] = []


# --- bit-serial ------------------------------------------------------------------------------------
# TVM's popcount kernels compute an integer product of the operands' low bits; the
# interpreter (``op/impl/nn_bitserial.py``) computes it in int64 and converts, and so does
# the decomposition: masks and the unipolar map as elementwise int64 ops, then the anchor.


def _low_bits(e: Expr, dtype: str, bits: int) -> Expr:
    """``x.astype(int64) & (2^bits - 1)``."""
    return op_call("bitwise_and", _cast(e, "int64", dtype), Constant(np.array((1 << bits) - 1, "int64")))


def _weight_values(e: Expr, dtype: str, bits: int, unipolar: bool) -> Expr:
    """The weight's low bits, as +-1 levels ``2 w - (2^bits - 1)`` when unipolar."""
    low = _low_bits(e, dtype, bits)
    if not unipolar:
        return low
    twice = op_call("multiply", low, Constant(np.array(2, "int64")))
    return op_call("subtract", twice, Constant(np.array((1 << bits) - 1, "int64")))


def _bits_check(bits: int, name: str) -> None:
    if not 0 <= bits < 63:
        raise Unsupported(f"{name}: {bits} bits", name)


@rule("nn.bitserial_dense", kind="rewrite")
def _bitserial_dense(call: Call) -> Expr:
    data, weight = call.args
    attrs = attrs_of(call)
    for k in ("data_bits", "weight_bits"):
        _bits_check(attrs[k], call.op.name)
    d = _low_bits(data, _ttype(call.args[0]).dtype, attrs["data_bits"])
    w = _weight_values(weight, _ttype(call.args[1]).dtype, attrs["weight_bits"], attrs["unipolar"])
    return _cast(op_call("nn.dense", d, w, out_dtype="int64"), call._checked_type.dtype, "int64")


@rule("nn.bitserial_conv2d", kind="rewrite")
def _bitserial_conv2d(call: Call) -> Expr:
    data, weight = call.args
    attrs = attrs_of(call)
    for k in ("activation_bits", "weight_bits"):
        _bits_check(attrs[k], call.op.name)
    dl = attrs["data_layout"]
    x = _low_bits(_relayout(data, dl, "NCHW"), _ttype(call.args[0]).dtype, attrs["activation_bits"])
    w = _relayout(weight, attrs["kernel_layout"], "OIHW")
    w = _weight_values(w, _ttype(call.args[1]).dtype, attrs["weight_bits"], attrs["unipolar"])
    y = op_call("nn.conv2d", x, w, strides=attrs["strides"], padding=attrs["padding"], out_dtype="int64")
    return _relayout(_cast(y, call._checked_type.dtype, "int64"), "NCHW", dl)
