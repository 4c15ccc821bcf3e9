"""Scalar semantics shared by the rules: casts, comparisons and the defined corner cases.

Everything here matches :mod:`relay_nb.op.impl` exactly (see its "Defined behaviours"):
integer division by zero gives 0 and ``INT_MIN / -1`` wraps, float-to-integer casts
truncate and saturate with NaN going to 0 (``llvm.fptosi.sat``), max/min are TVM's
``a > b ? a : b`` selects, shifts out of range give 0 or the sign fill.  No instruction
emitted here can trap or produce poison, whatever the data.
"""

from __future__ import annotations

from llvmlite import ir

from .types import I1, DType, const, one, zero


def _int_name(t: ir.Type) -> str:
    return f"i{t.width}"


def _float_name(t: ir.Type) -> str:
    return "f32" if isinstance(t, ir.FloatType) else "f64"


def convert(kb, v: ir.Value, src: DType, dst: DType) -> ir.Value:
    """``v`` (of ``src``) as ``dst`` with the interpreter's ``convert`` semantics."""
    if src == dst:
        return v
    b = kb.builder
    if dst.kind == "b":
        if src.is_float:
            return b.fcmp_unordered("!=", v, zero(src))  # NaN != 0 is True, as numpy says
        return b.icmp_unsigned("!=", v, zero(src))
    if src.kind == "b":
        return b.uitofp(v, dst.ir) if dst.is_float else b.zext(v, dst.ir)
    if src.is_float and dst.is_float:
        return b.fpext(v, dst.ir) if dst.bits > src.bits else b.fptrunc(v, dst.ir)
    if src.is_float:  # truncate toward zero, saturate, NaN -> 0
        name = "llvm.fptosi.sat" if dst.signed else "llvm.fptoui.sat"
        return kb.call(f"{name}.{_int_name(dst.ir)}.{_float_name(v.type)}", dst.ir, v)
    if dst.is_float:
        return b.sitofp(v, dst.ir) if src.signed else b.uitofp(v, dst.ir)
    if dst.bits < src.bits:
        return b.trunc(v, dst.ir)
    if dst.bits > src.bits:
        return b.sext(v, dst.ir) if src.signed else b.zext(v, dst.ir)
    return v  # same width, other signedness: the same bits


def compare(kb, op: str, a: ir.Value, b_: ir.Value, dt: DType) -> ir.Value:
    """``a op b`` for op in ``== != < <= > >=``, as numpy compares (ordered for floats,
    except ``!=`` which is true for NaN)."""
    b = kb.builder
    if dt.is_float:
        return b.fcmp_unordered(op, a, b_) if op == "!=" else b.fcmp_ordered(op, a, b_)
    if dt.signed:
        return b.icmp_signed(op, a, b_)
    return b.icmp_unsigned(op, a, b_)


def tvm_max(kb, a: ir.Value, b_: ir.Value, dt: DType) -> ir.Value:
    """``a > b ? a : b`` (so ``max(nan, 1) == 1`` and ``max(1, nan)`` is NaN)."""
    return kb.builder.select(compare(kb, ">", a, b_, dt), a, b_)


def tvm_min(kb, a: ir.Value, b_: ir.Value, dt: DType) -> ir.Value:
    return kb.builder.select(compare(kb, "<", a, b_, dt), a, b_)


def plus(kb, a: ir.Value, c: ir.Value, dt: DType) -> ir.Value:
    """Relay's ``add``: IEEE for floats, wrap-around for integers and, as numpy, OR for
    ``bool`` (``True + True`` is ``True``; an ``i1`` add would wrap it to ``False``)."""
    b = kb.builder
    if dt.is_float:
        return b.fadd(a, c)
    return b.or_(a, c) if dt.kind == "b" else b.add(a, c)


def truthy(kb, v: ir.Value, dt: DType) -> ir.Value:
    """``v != 0`` as i1 (a bool is itself)."""
    if dt.kind == "b":
        return v
    return convert(kb, v, dt, DType("bool", "b", 1))


def int_divide(kb, a: ir.Value, d: ir.Value, dt: DType, rounding: str) -> ir.Value:
    """Integer ``a / d`` rounding ``trunc`` or ``floor``; ``x / 0 == 0``; ``MIN / -1 == MIN``."""
    b = kb.builder
    z = zero(dt)
    is_zero = b.icmp_unsigned("==", d, z)
    if not dt.signed:
        safe = b.select(is_zero, one(dt), d)
        return b.select(is_zero, z, b.udiv(a, safe))
    minus_one = const(dt, -1)
    is_m1 = b.icmp_signed("==", d, minus_one)
    safe = b.select(b.or_(is_zero, is_m1), one(dt), d)
    q = b.sdiv(a, safe)
    if rounding == "floor":
        r = b.srem(a, safe)
        adjust = b.and_(b.icmp_signed("!=", r, z), b.xor(b.icmp_signed("<", a, z), b.icmp_signed("<", safe, z)))
        q = b.sub(q, b.zext(adjust, dt.ir))
    q = b.select(is_m1, b.neg(a), q)  # -MIN wraps to MIN, as numpy's negative does
    return b.select(is_zero, z, q)


def int_mod(kb, a: ir.Value, d: ir.Value, dt: DType, rounding: str) -> ir.Value:
    """The remainder of :func:`int_divide`: ``a - q * d``, and ``x % 0 == 0``."""
    b = kb.builder
    q = int_divide(kb, a, d, dt, rounding)
    r = b.sub(a, b.mul(q, d))
    return b.select(b.icmp_unsigned("==", d, zero(dt)), zero(dt), r)


def int_power(kb, a: ir.Value, e: ir.Value, dt: DType) -> ir.Value:
    """``a ** e`` wrapping, by square-and-multiply over every exponent bit (no branches);
    a negative exponent gives the truncated real result: 0 unless ``|a| == 1``."""
    b = kb.builder
    one_ = one(dt)
    result, base = one_, a
    bit = const(dt, 1)
    for k in range(dt.bits):
        take = b.icmp_unsigned("!=", b.and_(e, bit), zero(dt))
        result = b.select(take, b.mul(result, base), result)
        base = b.mul(base, base)
        if k < dt.bits - 1:
            bit = b.shl(bit, const(dt, 1))
    if not dt.signed:
        return result
    neg = b.icmp_signed("<", e, zero(dt))
    odd = b.icmp_unsigned("!=", b.and_(e, one_), zero(dt))
    is_one = b.icmp_signed("==", a, one_)
    is_m1 = b.icmp_signed("==", a, const(dt, -1))
    recip = b.select(is_one, one_, b.select(is_m1, b.select(odd, const(dt, -1), one_), zero(dt)))
    return b.select(neg, recip, result)


def shift(kb, a: ir.Value, n: ir.Value, dt: DType, left: bool) -> ir.Value:
    """numpy's shifts: a count below 0 or at least the width gives 0 (``<<``, unsigned
    ``>>``) or the sign fill (signed ``>>``)."""
    b = kb.builder
    width = const(dt, dt.bits)
    out_of_range = b.icmp_unsigned(">=", n, width)  # negative counts are huge unsigned
    masked = b.and_(n, const(dt, dt.bits - 1))
    if left:
        return b.select(out_of_range, zero(dt), b.shl(a, masked))
    if dt.signed:
        fill = b.ashr(a, const(dt, dt.bits - 1))
        return b.select(out_of_range, fill, b.ashr(a, masked))
    return b.select(out_of_range, zero(dt), b.lshr(a, masked))


def logical(kb, op: str, a: ir.Value, b_: ir.Value) -> ir.Value:
    b = kb.builder
    return {"and": b.and_, "or": b.or_, "xor": b.xor}[op](a, b_)


__all__ = [
    "I1", "compare", "convert", "int_divide", "int_mod", "int_power", "logical", "plus", "shift",
    "truthy", "tvm_max", "tvm_min",
]  # fmt: skip
