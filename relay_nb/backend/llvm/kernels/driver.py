"""The anchor kernel's own code: the cache-blocking loops around the runtime routines.

For one :class:`Gemm` this emits BLIS's outer loops (see :mod:`.gemm`) with static block
sizes, calls of the runtime's packers and block routines (:mod:`.runtime`), and the fused
epilogue on each finished block of C while it is still in L2 — emitted once, so the
kernel module stays small and compiles fast. Operands the tiled path does not cover
(mixed dtypes, int8, zero-size shapes) go to the plain loops of :mod:`.reference`; if the
packing buffers cannot be allocated, the runtime computes each block with plain loops
instead of pack + macro (every call carries the ``ok`` flag).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

from llvmlite import ir

from ._loops import I1, IntLike, add, blocks, for_range, gep, i64, indices, mul, smin, span
from ._memory import allocate, release
from .gemm import tile_for
from .problem import Gemm
from .reference import emit_reference
from .runtime import call

TILED_DTYPES = ("float32", "float64", "int32", "int64")


@dataclass(frozen=True)
class Blocks:
    """Static cache-block sizes of one GEMM."""

    kc: int
    mc: int
    nc: int


def _balanced(total: int, limit: int, multiple: int) -> int:
    """The block size <= ``limit`` (a multiple of ``multiple``) that splits ``total`` into the
    fewest, most even blocks (K = 576 -> three slabs of 192, not 256 + 256 + 64)."""
    count = max(1, math.ceil(total / limit))
    size = math.ceil(total / count)
    return max(multiple, math.ceil(size / multiple) * multiple)


def plan(g: Gemm) -> Blocks:
    """KC: a ``[kc][NR]`` B panel (16 KB) in L1 beside the A panels; MC: the packed A block
    (``mc x kc``, ~120 KB) in L2; NC: the packed B block in L3."""
    t = tile_for(g.dt)
    return Blocks(_balanced(g.k, 256, 1), _balanced(g.m, 120, t.mr), _balanced(g.n, 4096, t.nr))


def tiled(g: Gemm) -> bool:
    """Whether the packed, register-tiled kernel computes ``g``."""
    same = g.a.dt == g.b.dt == g.dt
    return same and g.dt.name in TILED_DTYPES and g.m * g.n * g.k > 0


SMALL_M = {"dot": 32, "axpy": 12}  # at most this many rows: stream B unpacked (see .small)


def small_path(g: Gemm) -> Optional[str]:
    """``"dot"`` / ``"axpy"`` when ``g`` has few rows and B is contiguous one way, else None."""
    if g.conv is not None:
        return None
    if g.a.cs == 1 and g.b.rs == 1 and g.m <= SMALL_M["dot"]:
        return "dot"
    if g.b.cs == 1 and g.m <= SMALL_M["axpy"]:
        return "axpy"
    return None


MAC_NS = 0.025
"""Estimated single-core time of one multiply-add of the tiled kernel (ResNet-50's 4.1 G
multiply-adds ran in ~105 ms on one core of the test machine: 0.026 ns each; a 64-channel
3x3 conv on 56x56 measured 0.021 ns)."""

PACK_NS = 0.5
"""Estimated time of packing one operand element (a strided copy; im2col's gather): half
an ``add``'s element (:data:`..codegen.context.ELEMENT_NS`), not measured on its own."""

SHARE_TILES = 4
"""An axis with fewer register tiles than this is split only if the other has fewer."""

BATCH_SPLIT = 4
"""From this many GEMMs in the batch (images x groups, attention heads) threads take
whole ones; below, they share the columns (or rows) of each."""


def parallel_axis(g: Gemm) -> tuple[str, int, float, float]:
    """How threads share ``g``: ``(axis, units, unit_ns, chunk_ns)`` with axis ``"batch"`` (a unit
    is one GEMM of the batch), ``"n"`` (NR columns of every GEMM: each chunk packs A
    again, M*K) or ``"m"`` (MR rows: each chunk packs B again, K*N).  Units are whole
    register tiles, so every thread's tiles are the ones a single thread would compute,
    with the same sums in the same order."""
    t = tile_for(g.dt)
    count = g.batch[0] * g.batch[1]
    cols, rows = math.ceil(g.n / t.nr), math.ceil(g.m / t.mr)
    # a GEMM computes whole register tiles and packs (or im2col-copies) both operands
    gemm_ns = (rows * t.mr * cols * t.nr * g.k) * MAC_NS + (g.k * g.n + g.m * g.k) * PACK_NS
    if count >= BATCH_SPLIT:  # a chunk repeats the padding of its first image
        pad = g.conv.channels * g.conv.hp * g.conv.wp * PACK_NS if g.conv is not None and g.conv.padded else 0.0
        return "batch", count, gemm_ns, pad
    # the axis whose chunks repeat the smaller packing (A is m x k, B is k x n), if it has
    # tiles enough to share; a 1x1 conv with 64 output channels on 56x56 would otherwise
    # repack its 3136-wide B in every chunk (40 / M of the work: 60%)
    if (g.m <= g.n and cols >= SHARE_TILES) or rows < SHARE_TILES <= cols or (rows < SHARE_TILES and cols >= rows):
        return "n", cols, count * gemm_ns / cols, count * g.m * g.k * PACK_NS
    return "m", rows, count * gemm_ns / rows, count * g.k * g.n * PACK_NS


def _pair(b: ir.IRBuilder, u: IntLike, inner: int) -> tuple[IntLike, IntLike]:
    """The batch pair ``(o, i)`` of flat batch index ``u`` (``u = o * inner + i``)."""
    if inner == 1:
        return u, 0
    if isinstance(u, int):
        return divmod(u, inner)
    return b.udiv(u, i64(inner)), b.urem(u, i64(inner))


def emit_gemm(b: ir.IRBuilder, g: Gemm) -> None:
    """Emit ``g`` at ``b``: the tiled kernel where it applies, else plain loops."""
    if not tiled(g):
        emit_reference(b, g)
        return
    small = small_path(g)
    if small is not None:
        _emit_small(b, g, small)
        return
    t, blk, dt = tile_for(g.dt), plan(g), g.dt
    elem, size = dt.ir, dt.itemsize
    mc_max = min(blk.mc, math.ceil(g.m / t.mr) * t.mr)
    nc_max = min(blk.nc, math.ceil(g.n / t.nr) * t.nr)
    kc_max = min(blk.kc, g.k)
    sizes = [mc_max * kc_max * size, kc_max * nc_max * size]
    conv = g.conv
    if conv is not None and conv.padded:
        sizes.append(conv.channels * conv.hp * conv.wp * size)
    if g.scratch is not None:  # the caller's workspace: allocated (and checked) in Python
        ok, bufs, raws = ir.Constant(I1, 1), [g.scratch(size) for size in sizes], []
    else:
        ok, bufs, raws = allocate(b, sizes)
    packed_a, packed_b = bufs[0], bufs[1]
    a, bm = g.a, g.b
    if conv is not None:
        (kh, kw), (sh, sw), (dh, dw) = conv.kernel, conv.strides, conv.dilation
        pt, pl = conv.padding[:2]
        plane = conv.hp * conv.wp

    # the part of the work this call does (all of it unless the kernel is split)
    axis, units, unit_ns, chunk_ns = parallel_axis(g)
    lo, hi = g.split(units, unit_ns, chunk_ns) if g.split is not None and units >= 2 else (0, units)
    count = g.batch[0] * g.batch[1]
    pairs, cols, rows = (lo, hi), (0, g.n), (0, g.m)
    if axis == "batch":
        pairs = (lo, hi)
    else:
        pairs = (0, count)
        unit, total = (t.nr, g.n) if axis == "n" else (t.mr, g.m)
        part = (mul(b, lo, unit), smin(b, mul(b, hi, unit), total))
        cols, rows = (part, rows) if axis == "n" else (cols, part)

    with span(b, pairs[0], pairs[1], "bu") as u:
        o, i = _pair(b, u, g.batch[1])
        if conv is not None:
            image = gep(b, elem, bm.ptr, mul(b, o, conv.image))
            src = image
            if conv.padded:
                src = bufs[2]  # the padded copy of image o, made once for all its groups (in this chunk)
                shape = [conv.channels, conv.height, conv.width, conv.hp, conv.wp, pt, pl]
                if isinstance(i, int) and isinstance(u, int):
                    call(b, "pad", dt, ok, [src, image] + shape)
                else:
                    first_of_image = b.or_(b.icmp_signed("==", i64(i), i64(0)), b.icmp_signed("==", i64(u), i64(pairs[0])))
                    with b.if_then(first_of_image):
                        call(b, "pad", dt, ok, [src, image] + shape)
        a_base = gep(b, elem, a.ptr, g.offset(b, a.bs, o, i))
        c_off = g.offset(b, g.c_bs, o, i)
        if conv is not None:
            b_base = gep(b, elem, src, mul(b, i, conv.group_channels * plane))
            x_group = gep(b, elem, image, mul(b, i, conv.group_channels * conv.height * conv.width))
        else:
            b_base = gep(b, elem, bm.ptr, g.offset(b, bm.bs, o, i))
        with blocks(b, cols[1], blk.nc, "jc", cols[0]) as (jc, nc), blocks(b, g.k, blk.kc, "pc") as (pc, kc):
            first = ir.Constant(I1, 1) if isinstance(pc, int) else b.icmp_signed("==", pc, i64(0))
            if conv is None:
                src_b = gep(b, elem, b_base, add(b, mul(b, pc, bm.rs), mul(b, jc, bm.cs)))
                call(b, "pack_b", dt, ok, [packed_b, src_b, kc, nc, bm.rs, bm.cs])
            else:
                geometry = [kh, kw, conv.out[1], plane, conv.wp, sh, sw, dh, dw]
                call(b, "im2col", dt, ok, [packed_b, b_base, pc, kc, jc, nc] + geometry)
            with blocks(b, rows[1], blk.mc, "ic", rows[0]) as (ic, mc):
                a_block = gep(b, elem, a_base, add(b, mul(b, ic, a.rs), mul(b, pc, a.cs)))
                row_start = add(b, c_off, mul(b, ic, g.n))
                c_start = add(b, row_start, jc)
                c_block = gep(b, elem, g.c, c_start)
                if conv is None:
                    args = [packed_a, packed_b, a_block, a.rs, a.cs, src_b, bm.rs, bm.cs]
                    call(b, "gemm_block", dt, ok, args + [c_block, g.n, mc, nc, kc, first])
                else:
                    geometry = [conv.height, conv.width, kh, kw, conv.out[1], sh, sw, dh, dw, pt, pl]
                    args = [packed_a, packed_b, a_block, a.rs, x_group, c_block, g.n, mc, jc, nc, pc, kc]
                    call(b, "conv_block", dt, ok, args + [first] + geometry)
                if g.epilogue is not None:
                    last = add(b, pc, kc)
                    if isinstance(last, int):
                        _block_epilogue(b, g, c_start, mc, nc, row_start)
                    else:
                        with b.if_then(b.icmp_signed("==", last, i64(g.k))):
                            _block_epilogue(b, g, c_start, mc, nc, row_start)
    release(b, raws)


SMALL_UNIT = 16
"""Columns of C per unit when threads share a small GEMM (a cache line of float32)."""

STREAM_NS = 0.17
"""Estimated single-core time of streaming one float32 element of B unpacked (a batch-1
dense of 2048 x 512 read its 4 MB from L3 in ~175 us on the test machine: 0.17 ns per
element, as numpy's OpenBLAS)."""


def _small_columns(b: ir.IRBuilder, g: Gemm) -> tuple[IntLike, IntLike]:
    """The columns ``[j0, j1)`` of C this call computes: all of them, or a chunk of
    :data:`SMALL_UNIT` columns when threads share one GEMM.  Every element is still the
    same dot product (or axpy sum) over k in the same order, so results do not depend on
    the split."""
    units = math.ceil(g.n / SMALL_UNIT)
    if g.split is None or units < 2 or g.batch[0] * g.batch[1] != 1:
        return 0, g.n
    unit_ns = SMALL_UNIT * g.k * max(STREAM_NS, g.m * MAC_NS)
    lo, hi = g.split(units, unit_ns, 0.0)
    return mul(b, lo, SMALL_UNIT), smin(b, mul(b, hi, SMALL_UNIT), g.n)


def _emit_small(b: ir.IRBuilder, g: Gemm, routine: str) -> None:
    """Each batch entry by one call of the runtime's ``dot`` / ``axpy`` (on this call's
    columns), then the epilogue over what it computed."""
    elem, a, bm = g.dt.ir, g.a, g.b
    always = ir.Constant(I1, 1)
    j0, j1 = _small_columns(b, g)
    whole = isinstance(j0, int) and isinstance(j1, int)
    width = j1 - j0 if whole else b.sub(i64(j1), i64(j0))
    with indices(b, g.batch[0], "so") as o, indices(b, g.batch[1], "si") as i:
        a_base = gep(b, elem, a.ptr, g.offset(b, a.bs, o, i))
        b_base = gep(b, elem, bm.ptr, add(b, g.offset(b, bm.bs, o, i), mul(b, j0, bm.cs)))
        c_off = add(b, g.offset(b, g.c_bs, o, i), j0)
        c = gep(b, elem, g.c, c_off)
        if routine == "dot":
            call(b, "dot", g.dt, always, [a_base, a.rs, b_base, bm.cs, c, g.n, g.m, width, g.k])
        else:
            call(b, "axpy", g.dt, always, [a_base, a.rs, a.cs, b_base, bm.rs, c, g.n, g.m, width, g.k])
        if g.epilogue is not None and whole:  # every column: the rows are one contiguous run
            g.epilogue(b, i64(c_off), i64(g.m * g.n))
        elif g.epilogue is not None:
            with for_range(b, 0, g.m, name="sepr", unroll=False) as r:
                g.epilogue(b, i64(add(b, c_off, mul(b, r.index, g.n))), i64(width))


def _block_epilogue(b: ir.IRBuilder, g: Gemm, c_start: IntLike, mc: IntLike, nc: IntLike, row_start: IntLike) -> None:
    """Run the fused epilogue over a finished ``mc x nc`` block of C: one run when the
    block spans whole rows (its rows are then contiguous), else one run per row."""
    if isinstance(nc, int) and nc == g.n:
        g.epilogue(b, i64(c_start), i64(mul(b, mc, g.n)))
        return
    if isinstance(nc, int):
        with for_range(b, 0, mc, name="epr", unroll=False) as r:
            g.epilogue(b, i64(add(b, c_start, mul(b, r.index, g.n))), i64(nc))
        return
    # a chunk's columns (threads): whole rows when the chunk has them all (then the
    # block starts at column 0: ``row_start``, static in an unsplit call, lets LLVM
    # simplify the epilogue's index arithmetic; measured 5% on a conv + bias + relu)
    with b.if_else(b.icmp_signed("==", nc, i64(g.n))) as (whole, part):
        with whole:
            g.epilogue(b, i64(row_start), i64(mul(b, mc, g.n)))
        with part:
            with for_range(b, 0, mc, name="epr", unroll=False) as r:
                g.epilogue(b, i64(add(b, c_start, mul(b, r.index, g.n))), i64(nc))
