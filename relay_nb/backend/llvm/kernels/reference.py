"""Plain-loop GEMM for what the tiled kernel does not cover, and its fallback.

Covers every int/float dtype pair, with the interpreter's ``out_dtype`` semantics: both
operands are converted to the result dtype before multiplying (int8 inputs accumulate in
int32; integer arithmetic wraps), float to int truncates and saturates as ``convert`` does.
The loop order is ``i, k, j``: the inner loop walks a row of C and a row of B, which LLVM
vectorizes when B's rows are contiguous, and it is no reduction, so floats vectorize too.
Also the fallback of the tiled kernels when their packing buffers cannot be allocated.
"""

from __future__ import annotations

from llvmlite import ir

from ..codegen.types import DType
from ._loops import add, declare, for_range, gep, i64, indices, mul, zero
from .problem import Gemm


def convert(b: ir.IRBuilder, v: ir.Value, src: DType, dst: DType) -> ir.Value:
    """``v`` of dtype ``src`` as ``dst`` (TVM cast semantics, float -> int saturating)."""
    if src == dst:
        return v
    if src.is_float and dst.is_float:
        return b.fpext(v, dst.ir) if dst.bits > src.bits else b.fptrunc(v, dst.ir)
    if src.is_int and dst.is_int:
        if dst.bits == src.bits:
            return v
        if dst.bits < src.bits:
            return b.trunc(v, dst.ir)
        return b.sext(v, dst.ir) if src.signed else b.zext(v, dst.ir)
    if src.is_int:
        return b.sitofp(v, dst.ir) if src.signed else b.uitofp(v, dst.ir)
    # float -> int: llvm.fpto[su]i.sat truncates, saturates and maps NaN to 0
    kind = "fptosi" if dst.signed else "fptoui"
    fn = declare(b.module, f"llvm.{kind}.sat.i{dst.bits}.{src.ir.intrinsic_name}", dst.ir, [src.ir])
    return b.call(fn, [v])


def emit_reference(b: ir.IRBuilder, g: Gemm) -> None:
    """``C = A @ B`` with plain loops, then the epilogue on each finished row of C."""
    dt = g.dt
    elem = dt.ir

    def plus(x, y):
        return b.fadd(x, y) if dt.is_float else b.add(x, y)

    def times(x, y):
        return b.fmul(x, y) if dt.is_float else b.mul(x, y)

    with indices(b, g.batch[0], "ro") as o, indices(b, g.batch[1], "ri") as i:
        a_base = gep(b, g.a.dt.mem, g.a.ptr, g.offset(b, g.a.bs, o, i))
        b_base = gep(b, g.b.dt.mem, g.b.ptr, g.offset(b, g.b.bs, o, i))
        c_off = g.offset(b, g.c_bs, o, i)
        with for_range(b, 0, g.m, name="rm") as r:
            row_off = add(b, c_off, mul(b, r.index, g.n))
            row = gep(b, elem, g.c, row_off)
            with for_range(b, 0, g.n, name="rz") as j:
                b.store(zero(elem), gep(b, elem, row, j.index))
            a_row = gep(b, g.a.dt.mem, a_base, mul(b, r.index, g.a.rs))
            with for_range(b, 0, g.k, name="rk") as kk:
                av = b.load(gep(b, g.a.dt.mem, a_row, mul(b, kk.index, g.a.cs)), typ=g.a.dt.mem)
                av = convert(b, av, g.a.dt, dt)
                b_row = gep(b, g.b.dt.mem, b_base, mul(b, kk.index, g.b.rs))
                with for_range(b, 0, g.n, name="rj") as j:
                    bv = b.load(gep(b, g.b.dt.mem, b_row, mul(b, j.index, g.b.cs)), typ=g.b.dt.mem)
                    p = gep(b, elem, row, j.index)
                    b.store(plus(b.load(p, typ=elem), times(av, convert(b, bv, g.b.dt, dt))), p)
            if g.epilogue is not None:
                g.epilogue(b, i64(row_off), i64(g.n))
