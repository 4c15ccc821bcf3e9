"""Rules of the fusable ``qnn.*`` operators: ``add``, ``subtract``, ``mul`` (index rules),
``dense``, ``contrib_dense_pack``, ``conv2d`` (anchors) and ``avg_pool2d`` (an index rule).

Direct codegen rules that emit what TVM's QNN canonicalization would produce, step for step
as :mod:`relay_nb.op.impl.qnn` computes it (int32 arithmetic wraps).  The one thing TVM
does at compile time -- turning ``s_in / s_out`` into a 31-bit fixed-point significand and
a shift -- happens here in the kernel, from the scales it loads: a kernel does not depend
on its constants' values (see :func:`.lower.kernel_constants`), and a scale may be a
parameter.  For a scalar scale LLVM hoists that work out of the loop.

The anchors shift their operands by the zero points into workspace buffers and then run
the float anchors' loops (:mod:`.anchors`) in ``out_dtype``: wrapping sums of the shifted
values equal the interpreter's int64 sums wrapped to ``out_dtype``.
"""

from __future__ import annotations

import math

import numpy as np
from llvmlite import ir

from ....op.impl._util import norm_axis
from .anchors import _conv_check, _conv_loops, _gemm_loops
from .context import Buffer, attrs_of
from .index import Index, broadcast
from .pool import _pool_check, _pool_value
from .rules import rule
from .scalar import convert
from .types import F64, I32, I64, dtype, i64

_INT32 = dtype("int32")


# --- scalars: fixed point, requantize ----------------------------------------------------------


def _fixed_point(kb, m: ir.Value) -> tuple[ir.Value, ir.Value]:
    """TVM's GetFixedPointMultiplierShift of the double ``m``: ``frexp``, then the fraction
    times 2**31 rounded half away from zero (``llvm.round``); a significand of 2**31 halves
    and the shift grows by one.  (significand, shift) as i64; (0, 0) for ``m == 0``."""
    b = kb.builder
    bits = b.bitcast(m, I64)
    exp = b.and_(b.lshr(bits, i64(52)), i64(0x7FF))
    # frexp of a normal double (a ratio of float32 scales never is subnormal): the exponent
    # field set to 1022 puts the fraction in [0.5, 1)
    frac_bits = b.or_(b.and_(bits, i64(~(0x7FF << 52))), i64(1022 << 52))
    frac = b.bitcast(frac_bits, F64)
    shift = b.sub(exp, i64(1022))
    scaled = kb.call("llvm.round.f64", F64, b.fmul(frac, ir.Constant(F64, 2.0**31)))
    sig = kb.call("llvm.fptosi.sat.i64.f64", I64, scaled)  # saturating: no poison for inf/NaN
    full = b.icmp_signed("==", sig, i64(1 << 31))
    sig = b.select(full, i64(1 << 30), sig)
    shift = b.select(full, b.add(shift, i64(1)), shift)
    is_zero = b.fcmp_ordered("==", m, ir.Constant(F64, 0.0))
    return b.select(is_zero, i64(0), sig), b.select(is_zero, i64(0), shift)


def _fixed_point_multiply(kb, x: ir.Value, sig: ir.Value, shift: ir.Value) -> ir.Value:
    """``round(x * sig * 2**(shift - 31))`` (halves up) of an i32 ``x`` in int64, wrapped to
    i32: the interpreter's ``fixed_point_multiply`` with ``nearest=False`` (a left shift of
    64 or more gives 0, as numpy's)."""
    b = kb.builder
    x = b.sext(x, I64)
    left = b.select(b.icmp_signed(">", shift, i64(0)), shift, i64(0))
    big = b.icmp_signed(">=", left, i64(64))
    x = b.select(big, i64(0), b.shl(x, b.select(big, i64(0), left)))
    x = b.mul(x, sig)
    right = b.select(b.icmp_signed("<", shift, i64(0)), b.sub(i64(0), shift), i64(0))
    total = b.add(right, i64(31))
    total = b.select(b.icmp_signed(">", total, i64(63)), i64(63), total)
    rounder = b.shl(i64(1), b.sub(total, i64(1)))
    return b.trunc(b.ashr(b.add(x, rounder), total), I32)


def _as(kb, node, value: ir.Value, dst) -> ir.Value:
    return convert(kb, value, kb.dt(node), dst)


def _param(kb, node, coord=None) -> ir.Value:
    """Element ``coord`` (an i64 channel coordinate; None or a one-element tensor: element 0)
    of a scale or zero-point tensor."""
    shape = kb.shape(node)
    flat = coord if coord is not None and math.prod(shape) > 1 else i64(0)
    return kb.value(node, Index(kb.builder, shape, flat=flat))


def _channel(kb, param, index: Index, axis: int):
    """The coordinate of ``index`` that selects a per-channel parameter, or None."""
    if math.prod(kb.shape(param)) <= 1:
        return None
    return index.dim(norm_axis(axis, len(index.shape)))


def requantize(kb, q: ir.Value, in_scale: ir.Value, in_zp: ir.Value, out_scale: ir.Value, out_zp: ir.Value) -> ir.Value:
    """The interpreter's integer ``requantize`` to int32 (rounding UPWARD): the i32 ``q``,
    f32 scales and i32 zero points give ``zp_out + fpm(q - zp_in, s_in / s_out)``."""
    b = kb.builder
    m = b.fdiv(b.fpext(in_scale, F64), b.fpext(out_scale, F64))
    sig, shift = _fixed_point(kb, m)
    return b.add(_fixed_point_multiply(kb, b.sub(q, in_zp), sig, shift), out_zp)


def saturate(kb, y: ir.Value, dt) -> ir.Value:
    """Clip the i32 ``y`` to ``dt``'s range and narrow it (TVM's ConvertDtype)."""
    if dt == _INT32:
        return y
    b = kb.builder
    info = np.iinfo(dt.np)
    lo, hi = ir.Constant(I32, int(info.min)), ir.Constant(I32, int(info.max))
    y = b.select(b.icmp_signed("<", y, hi), y, hi)
    y = b.select(b.icmp_signed(">", y, lo), y, lo)
    return b.trunc(y, dt.ir) if dt.bits < 32 else y


def _requantized(kb, x, x_index: Index, scale, zp, out_scale, out_zp, axis: int) -> ir.Value:
    """``x`` at ``x_index`` requantized to the output's scale and zero point, in int32."""
    c_s, c_z = _channel(kb, scale, x_index, axis), _channel(kb, zp, x_index, axis)
    q = _as(kb, x, kb.value(x, x_index), _INT32)
    return requantize(
        kb, q, _as(kb, scale, _param(kb, scale, c_s), dtype("float32")), _as(kb, zp, _param(kb, zp, c_z), _INT32),
        _as(kb, out_scale, _param(kb, out_scale), dtype("float32")), _as(kb, out_zp, _param(kb, out_zp), _INT32),
    )


# --- binary ops ----------------------------------------------------------------------------------


def _per_channel_ok(param, tensor, axis: int) -> bool:
    """A parameter is one value, or one per element along ``axis`` of ``tensor``."""
    n = math.prod(param._checked_type.shape)
    shape = tensor._checked_type.shape
    if n <= 1:
        return True
    if not shape or not -len(shape) <= axis < len(shape):
        return False
    return shape[axis] == n


def _binary_check(call):
    lhs, rhs, ls, lz, rs, rz, os, oz = call.args
    attrs = attrs_of(call)
    la, ra = attrs["lhs_axis"], attrs["rhs_axis"]
    for t in (lhs, rhs, call):
        dt = dtype(t._checked_type.dtype)
        if dt.kind not in "iu" or (dt.bits >= 32 and dt != _INT32):
            return f"{dt.name} operands"  # saturate() narrows an int32
    if math.prod(os._checked_type.shape) < 1 or math.prod(oz._checked_type.shape) < 1:
        return "an empty output scale or zero point"
    if call.op.name == "qnn.mul" and not (ls._checked_type.shape == () and rs._checked_type.shape == ()):
        out = call._checked_type.shape
        if la != ra or not (len(lhs._checked_type.shape) == len(rhs._checked_type.shape) == len(out)):
            return "per-channel scales with different axes or ranks"
        n = {math.prod(p._checked_type.shape) for p in (ls, rs)} - {1}
        if len(n) > 1 or (n and (not out or out[la] != n.pop())):
            return "per-channel scales that do not fit the result"
    if call.op.name == "qnn.mul" and ls._checked_type.shape == () and rs._checked_type.shape == ():
        if math.prod(lz._checked_type.shape) != 1 or math.prod(rz._checked_type.shape) != 1:
            return "zero points with more than one value for scalar scales"
        return None
    for p, t, ax in ((ls, lhs, la), (lz, lhs, la), (rs, rhs, ra), (rz, rhs, ra)):
        if not _per_channel_ok(p, t, ax):
            return "a per-channel parameter that does not fit its operand"
    return None


def _add_like(sign: int):
    def fn(kb, call, index, field):
        """Both sides requantized to the output's parameters (int32), then
        ``a + b - zp_out`` (add) or ``a - b + zp_out`` (subtract), clipped to the lhs dtype."""
        lhs, rhs, ls, lz, rs, rz, os, oz = call.args
        attrs = attrs_of(call)
        b = kb.builder
        sides = []
        for x, s, z, ax in ((lhs, ls, lz, attrs["lhs_axis"]), (rhs, rs, rz, attrs["rhs_axis"])):
            sides.append(_requantized(kb, x, broadcast(index, kb.shape(x)), s, z, os, oz, ax))
        zp = _as(kb, oz, _param(kb, oz), _INT32)
        if sign > 0:
            y = b.sub(b.add(sides[0], sides[1]), zp)
        else:
            y = b.add(b.sub(sides[0], sides[1]), zp)
        return saturate(kb, y, kb.dt(call))

    return fn


rule("qnn.add", check=_binary_check)(_add_like(1))
rule("qnn.subtract", check=_binary_check)(_add_like(-1))


@rule("qnn.mul", check=_binary_check)
def _mul(kb, call, index, field):
    """``(l - zp_l) * (r - zp_r)`` in int32, requantized from scale ``s_l * s_r`` (a float32
    product, per channel along ``lhs_axis`` when a scale is a vector) to the output's."""
    lhs, rhs, ls, lz, rs, rz, os, oz = call.args
    attrs = attrs_of(call)
    b = kb.builder
    f32 = dtype("float32")
    la = attrs["lhs_axis"]
    li, ri = broadcast(index, kb.shape(lhs)), broadcast(index, kb.shape(rhs))
    per_channel = not (kb.shape(ls) == () and kb.shape(rs) == ())
    cl = _channel(kb, lz, li, la) if per_channel else None
    cr = _channel(kb, rz, ri, attrs["rhs_axis"]) if per_channel else None
    a = b.sub(_as(kb, lhs, kb.value(lhs, li), _INT32), _as(kb, lz, _param(kb, lz, cl), _INT32))
    c = b.sub(_as(kb, rhs, kb.value(rhs, ri), _INT32), _as(kb, rz, _param(kb, rz, cr), _INT32))
    scales = []
    for s in (ls, rs):
        coord = _channel(kb, s, index, la) if per_channel else None
        scales.append(_as(kb, s, _param(kb, s, coord), f32))
    scale = b.fmul(scales[0], scales[1])
    out_scale, out_zp = _as(kb, os, _param(kb, os), f32), _as(kb, oz, _param(kb, oz), _INT32)
    y = requantize(kb, b.mul(a, c), scale, ir.Constant(I32, 0), out_scale, out_zp)
    return saturate(kb, y, kb.dt(call))


# --- dense, dense_pack, conv2d: shifted operands, then the anchors' loops ------------------------


def _shifted(kb, x, zp, dt, axis=None, shape=None, at=None) -> Buffer:
    """``x - zp`` in ``dt`` into the workspace (``zp`` one value, or one per coordinate along
    ``axis``); ``shape`` / ``at(dims) -> Index of x`` read ``x`` through a relayout."""
    shape = tuple(shape or kb.shape(x))
    buf = kb.scratch(shape, dt)
    b = kb.builder
    with kb.nest(shape) as oi:
        xi = at(oi.dims()) if at is not None else oi
        coord = oi.dim(axis) if axis is not None and math.prod(kb.shape(zp)) > 1 else None
        v = b.sub(_as(kb, x, kb.value(x, xi), dt), _as(kb, zp, _param(kb, zp, coord), dt))
        buf.store(b, oi, v)
    return buf


def _reader(buf: Buffer, b):
    return lambda flat: buf.load_flat(b, flat)


def _gemm_check(call):
    x, w, xz, wz = call.args[:4]
    out = call._checked_type.shape
    xs, ws = x._checked_type.shape, w._checked_type.shape
    if math.prod(xz._checked_type.shape) != 1:
        return "an input zero point with more than one value"
    if call.op.name == "qnn.contrib_dense_pack":
        if len(xs) != 2 or len(ws) != 4 or xs[1] != ws[1] * ws[3] or out != (xs[0], ws[0] * ws[2]):
            return "operand shapes do not agree"
        units = ws[0] * ws[2]
    else:
        if len(ws) != 2 or not xs or xs[-1] != ws[1] or out != tuple(xs[:-1]) + (ws[0],):
            return "operand shapes do not agree"
        units = ws[0]
    if math.prod(wz._checked_type.shape) not in (1, units):
        return "kernel zero points that do not fit the units"
    return None


@rule("qnn.dense", "qnn.contrib_dense_pack", kind="buffer", anchor=True, check=_gemm_check)
def _dense(kb, call, outs, epilogue):
    """``(x - zp_x) @ (w - zp_w).T`` in ``out_dtype``; the packed weight
    ``w[o, k, a, c]`` is unpacked to ``W[o * n + a, k * C + c]`` while it is shifted."""
    x, w, xz, wz = call.args[:4]
    out = outs[0]
    dt = out.dt
    b = kb.builder
    ash = kb.shape(x)
    kk = ash[-1]
    if call.op.name == "qnn.contrib_dense_pack":
        no, ko, n, c = kb.shape(w)
        units = no * n

        def at(dims):
            j, k = dims
            o, a = b.udiv(j, i64(n)), b.urem(j, i64(n))
            kq, cc = b.udiv(k, i64(c)), b.urem(k, i64(c))
            return Index(b, kb.shape(w), dims=[o, kq, a, cc])

        ws = _shifted(kb, w, wz, dt, axis=0, shape=(units, kk), at=at)
    else:
        units = kb.shape(w)[0]
        ws = _shifted(kb, w, wz, dt, axis=0)
    xs = _shifted(kb, x, xz, dt)
    ra, rw = _reader(xs, b), _reader(ws, b)
    rows = math.prod(ash[:-1])
    _gemm_loops(
        kb, 1, rows, units, kk,
        lambda t, i, k: ra(b.add(b.mul(i, i64(kk)), k)),
        lambda t, k, j: rw(b.add(b.mul(j, i64(kk)), k)),
        out, epilogue,
    )


def _qconv_check(call):
    reason = _conv_check(2)(call)
    if reason:
        return reason
    xz, wz = call.args[2:4]
    if math.prod(xz._checked_type.shape) != 1:
        return "an input zero point with more than one value"
    if math.prod(wz._checked_type.shape) not in (1, call.args[1]._checked_type.shape[0]):
        return "kernel zero points that do not fit the output channels"
    return None


@rule("qnn.conv2d", kind="buffer", anchor=True, check=_qconv_check)
def _conv2d(kb, call, outs, epilogue):
    """conv2d of ``x - zp_x`` padded with zeros (TVM pads with ``zp_x``: the same after the
    shift) and ``w - zp_w`` (one zero point per output channel), in ``out_dtype``."""
    x, w, xz, wz = call.args[:4]
    out = outs[0]
    b = kb.builder
    xs = _shifted(kb, x, xz, out.dt)
    ws = _shifted(kb, w, wz, out.dt, axis=0)
    _conv_loops(kb, out, kb.shape(x), kb.shape(w), attrs_of(call), _reader(xs, b), _reader(ws, b), epilogue, 2)


# --- avg_pool2d ----------------------------------------------------------------------------------


def _pool_params_check(call):
    for p in call.args[1:]:
        if math.prod(p._checked_type.shape) != 1:
            return "a per-channel scale or zero point"
    return _pool_check(2)(call)


@rule("qnn.avg_pool2d", check=_pool_params_check)
def _avg_pool2d(kb, call, index, field):
    """Each input requantized to the output's parameters (int32), averaged in int32 with
    avg_pool2d's window and count, clipped to the input dtype."""
    x, s, z, os, oz = call.args

    def read(xi):
        return _requantized(kb, x, xi, s, z, os, oz, -1)

    acc = _pool_value(kb, call, index, 2, "avg", _INT32, read)
    return saturate(kb, acc, kb.dt(call))


__all__ = ["requantize", "saturate"]
