"""Scratch memory for the tiled kernels: 64-byte aligned heap buffers, allowed to fail.

Packed panels are read with aligned vector loads, so they are 64-byte aligned (one cache
line). They come from ``malloc``, not the stack: a packed block of B is hundreds of KB and
a notebook's worker thread may have a small stack. :func:`allocate` returns an ``ok`` flag
instead of assuming success: where it is false the kernels run plain loops instead —
slower, never a crash.
"""

from __future__ import annotations

from typing import Sequence

from llvmlite import ir

from ._loops import I64, PTR, declare, i64

ALIGN = 64
FORCE_FAIL = False  # tests set this to drive the no-scratch-memory fallback


def entry_alloca(b: ir.IRBuilder, ty: ir.Type, count: int, align: int = ALIGN) -> ir.Value:
    """A fixed-size stack array allocated once in the function's entry block (an alloca
    inside a loop would grow the stack on every trip)."""
    entry = b.function.entry_basic_block
    eb = ir.IRBuilder(entry)
    eb.position_at_start(entry)
    slot = eb.alloca(ty, size=count)
    slot.align = align
    # llvmlite still types an alloca as ``float*``; make it an opaque ``ptr`` like every
    # other buffer here, so loads and stores of vectors through it type-check.
    slot.type = PTR
    if b.block is entry and entry.terminator is None:
        b.position_at_end(entry)  # b's insertion index is now one behind
    return slot


def allocate(b: ir.IRBuilder, sizes: Sequence[int]) -> tuple[ir.Value, list[ir.Value], list[ir.Value]]:
    """``malloc`` each of ``sizes`` bytes: ``(ok, aligned pointers, raw pointers)``; ``ok`` is
    an i1 that is false if any allocation failed (the pointers must then not be used)."""
    malloc = declare(b.module, "malloc", PTR, [I64])
    raws = [b.call(malloc, [i64(size + ALIGN)]) for size in sizes]
    null = ir.Constant(PTR, None)
    ok = ir.Constant(ir.IntType(1), 0 if FORCE_FAIL else 1)
    aligned = []
    for raw in raws:
        ok = b.and_(ok, b.icmp_unsigned("!=", raw, null))
        # round up to the next multiple of ALIGN: (p + ALIGN - 1) & -ALIGN
        addr = b.ptrtoint(raw, I64)
        up = b.and_(b.add(addr, i64(ALIGN - 1)), i64(-ALIGN))
        aligned.append(b.gep(raw, [b.sub(up, addr)], source_etype=ir.IntType(8)))
    return ok, aligned, raws


def release(b: ir.IRBuilder, raws: Sequence[ir.Value]) -> None:
    """``free`` what :func:`allocate` returned (``free(NULL)`` is a no-op)."""
    free = declare(b.module, "free", ir.VoidType(), [PTR])
    for raw in raws:
        b.call(free, [raw])
