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


NC = 512
"""Most columns of a packed B block: ``256 x 512`` floats (512 KB) stay in a 2 MB L2 with
the A block.  4096 (a 4 MB block, streamed from L3 once per A block) measured 12-20%
slower on BERT's and GPT-2's 768 -> 3072 and vocabulary matmuls on this machine and
on 56x56 convs; the extra A packing (once per 512 columns) is ~1% of those GEMMs."""


def plan(g: Gemm) -> Blocks:
    """KC: a ``[kc][NR]`` B panel in L1 beside the A panels; MC: the packed A block
    (``mc x kc``, ~120 KB) in L2; NC: the packed B block (:data:`NC`) in L2 too."""
    t = tile_for(g.dt)
    return Blocks(_balanced(g.k, 256, 1), _balanced(g.m, 120, t.mr), _balanced(g.n, NC, t.nr))


def tiled(g: Gemm) -> bool:
    """Whether the packed, register-tiled kernel computes ``g``."""
    same = g.a.dt == g.b.dt == g.dt
    return same and g.dt.name in TILED_DTYPES and g.m * g.n * g.k > 0


SMALL_M = {"dot": 32, "axpy": 12}  # at most this many rows: stream B unpacked (see .small)


def small_path(g: Gemm) -> Optional[str]:
    """``"dot"`` / ``"axpy"`` when ``g`` has few rows and B is contiguous one way, else None."""
    if g.conv is not None:
        return None
    if g.a.cs == 1 and g.b.rs == 1 and (g.m <= SMALL_M["dot"] or g.n == 1):  # n = 1: nothing to reuse
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
    a_pack = 0 if g.a_panels is not None else g.m * g.k  # a prepacked A is not copied
    b_pack = 0 if g.b_panels is not None else g.k * g.n  # nor a prepacked B
    gemm_ns = (rows * t.mr * cols * t.nr * g.k) * MAC_NS + (b_pack + a_pack) * PACK_NS
    # a chunk of rows (or images) pads its (first) image whole: counted, so a padded conv
    # is not cut into 8 chunks that each pad all of it (a 64-channel 3x3 conv on 56x56
    # padded its 215K elements ~8 times: ~30% more work at 2 threads); a chunk of
    # columns pads only the rows its output rows read, repeating the kernel's halo
    pad = halo = 0.0
    if g.conv is not None and g.conv.padded:
        conv = g.conv
        pad = conv.channels * conv.hp * conv.wp * PACK_NS
        halo = conv.channels * ((conv.kernel[0] - 1) * conv.dilation[0] + conv.strides[0]) * conv.wp * PACK_NS
    if count >= BATCH_SPLIT:
        return "batch", count, gemm_ns, pad
    # the axis whose chunks repeat the smaller packing (A is m x k, B is k x n), if it has
    # tiles enough to share; a 1x1 conv with 64 output channels on 56x56 would otherwise
    # repack its 3136-wide B in every chunk (40 / M of the work: 60%)
    if (g.m <= g.n and cols >= SHARE_TILES) or rows < SHARE_TILES <= cols or (rows < SHARE_TILES and cols >= rows):
        return "n", cols, count * gemm_ns / cols, count * (a_pack * PACK_NS + halo)
    return "m", rows, count * gemm_ns / rows, count * (b_pack * PACK_NS + pad)


def _band(b: ir.IRBuilder, conv, cols: tuple[IntLike, IntLike]) -> tuple[IntLike, IntLike]:
    """The rows ``[r0, r1)`` of the padded image that output columns ``cols`` (flat output
    positions) read: all of them unless the call computes part of the columns."""
    j0, j1 = cols
    if isinstance(j0, int) and isinstance(j1, int) and (j0, j1) == (0, conv.out[0] * conv.out[1]):
        return 0, conv.hp
    (kh, _), (sh, _), (dh, _) = conv.kernel, conv.strides, conv.dilation
    ow = i64(conv.out[1])
    first = b.sdiv(i64(j0), ow)
    last = b.sdiv(b.sub(i64(j1), i64(1)), ow)
    r0 = b.mul(first, i64(sh))
    r1 = smin(b, b.add(b.mul(last, i64(sh)), i64((kh - 1) * dh + 1)), conv.hp)
    return r0, b.select(b.icmp_signed("<", r1, r0), r0, r1)  # an empty chunk: no rows


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
    panels = g.a_panels  # A packed beforehand: the macro-kernel reads it in place
    b_panels = g.b_panels  # B likewise
    sizes = [0 if panels is not None else mc_max * kc_max * size, 0 if b_panels is not None else kc_max * nc_max * size]
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
                shape = [conv.channels, conv.height, conv.width, conv.hp, conv.wp, pt, pl, *_band(b, conv, cols)]
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
            if b_panels is not None:  # block (pc, jc): see .prepack
                packed_b = gep(b, elem, bm.ptr, add(b, mul(b, pc, b_panels.np), mul(b, jc, kc)))
            elif conv is None:
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
                if panels is not None:  # block (i, pc, ic): see .prepack
                    at = add(b, add(b, mul(b, i, panels.mp * g.k), mul(b, pc, panels.mp)), mul(b, ic, kc))
                    args = [gep(b, elem, a.ptr, at), packed_b, c_block, mc, nc, kc, g.n, first]
                    call(b, "macro", dt, ok, args)
                elif b_panels is not None:  # no unpacked B for a fallback: scratch memory only
                    args = [packed_a, packed_b, a_block, a.rs, a.cs, c_block, g.n, mc, nc, kc, first]
                    call(b, "tiled_block", dt, ok, args)
                elif conv is None:
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


def _emit_small(b: ir.IRBuilder, g: Gemm, routine: str) -> None:
    """Each batch entry by one call of the runtime's ``dot`` / ``axpy``, then the epilogue
    over its whole (small) result.  Threads share the batch entries, or for one entry
    its columns (in units of whole column tiles of both routines: each element is the
    same dot product, in the same order, whoever computes it)."""
    elem, a, bm = g.dt.ir, g.a, g.b
    always = ir.Constant(I1, 1)
    count = g.batch[0] * g.batch[1]
    # B is streamed once: the call is bound by reading it, or by the multiply-adds
    entry_ns = g.k * g.n * max(g.m * MAC_NS, STREAM_NS)
    cols = (0, g.n)
    if count > 1:
        lo, hi = g.split(count, entry_ns) if g.split is not None else (0, count)
    else:
        unit = SMALL_COLUMNS * tile_for(g.dt).lanes
        units = math.ceil(g.n / unit)
        lo, hi = 0, 1
        if g.split is not None and units > 1:
            j0, j1 = g.split(units, entry_ns * unit / g.n)
            cols = (mul(b, j0, unit), smin(b, mul(b, j1, unit), g.n))
    with span(b, lo, hi, "su") as u:
        o, i = _pair(b, u, g.batch[1])
        j0, j1 = cols
        width = j1 - j0 if isinstance(j1, int) and isinstance(j0, int) else b.sub(i64(j1), i64(j0))
        a_base = gep(b, elem, a.ptr, g.offset(b, a.bs, o, i))
        b_base = gep(b, elem, bm.ptr, add(b, g.offset(b, bm.bs, o, i), mul(b, j0, bm.cs)))
        c_off = g.offset(b, g.c_bs, o, i)
        c = gep(b, elem, g.c, add(b, c_off, j0))
        if routine == "dot":
            call(b, "dot", g.dt, always, [a_base, a.rs, b_base, bm.cs, c, g.n, g.m, width, g.k])
        else:
            call(b, "axpy", g.dt, always, [a_base, a.rs, a.cs, b_base, bm.rs, c, g.n, g.m, width, g.k])
        if g.epilogue is not None:
            _block_epilogue(b, g, add(b, c_off, j0), g.m, width, c_off)


SMALL_COLUMNS = 12
"""Vectors of columns per unit when threads share a few-row GEMM's columns: a multiple
of every column tile of ``dot`` (3 or 4 columns) and ``axpy`` (2 or 4 vectors)."""

STREAM_NS = 0.17
"""Estimated single-core time of streaming one float32 element of B unpacked, a few-row
GEMM's bound (a batch-1 dense of 2048 x 512 read its 4 MB from L3 in ~175 us on the test
machine: 0.17 ns per element, as numpy's OpenBLAS)."""


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
