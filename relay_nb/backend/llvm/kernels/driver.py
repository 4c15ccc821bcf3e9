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

from ._loops import I1, IntLike, add, blocks, for_range, gep, i64, indices, mul
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

    with indices(b, g.batch[0], "bo") as o:
        if conv is not None:
            image = gep(b, elem, bm.ptr, mul(b, o, conv.image))
            src = image
            if conv.padded:
                src = bufs[2]  # the padded copy of image o, made once for all its groups
                shape = [conv.channels, conv.height, conv.width, conv.hp, conv.wp, pt, pl]
                call(b, "pad", dt, ok, [src, image] + shape)
        with indices(b, g.batch[1], "bi") as i:
            a_base = gep(b, elem, a.ptr, g.offset(b, a.bs, o, i))
            c_off = g.offset(b, g.c_bs, o, i)
            if conv is not None:
                b_base = gep(b, elem, src, mul(b, i, conv.group_channels * plane))
                x_group = gep(b, elem, image, mul(b, i, conv.group_channels * conv.height * conv.width))
            else:
                b_base = gep(b, elem, bm.ptr, g.offset(b, bm.bs, o, i))
            with blocks(b, g.n, blk.nc, "jc") as (jc, nc), blocks(b, g.k, blk.kc, "pc") as (pc, kc):
                first = ir.Constant(I1, 1) if isinstance(pc, int) else b.icmp_signed("==", pc, i64(0))
                if conv is None:
                    src_b = gep(b, elem, b_base, add(b, mul(b, pc, bm.rs), mul(b, jc, bm.cs)))
                    call(b, "pack_b", dt, ok, [packed_b, src_b, kc, nc, bm.rs, bm.cs])
                else:
                    geometry = [kh, kw, conv.out[1], plane, conv.wp, sh, sw, dh, dw]
                    call(b, "im2col", dt, ok, [packed_b, b_base, pc, kc, jc, nc] + geometry)
                with blocks(b, g.m, blk.mc, "ic") as (ic, mc):
                    a_block = gep(b, elem, a_base, add(b, mul(b, ic, a.rs), mul(b, pc, a.cs)))
                    c_start = add(b, c_off, add(b, mul(b, ic, g.n), jc))
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
                            _block_epilogue(b, g, c_start, mc, nc)
                        else:
                            with b.if_then(b.icmp_signed("==", last, i64(g.k))):
                                _block_epilogue(b, g, c_start, mc, nc)
    release(b, raws)


def _emit_small(b: ir.IRBuilder, g: Gemm, routine: str) -> None:
    """Each batch entry by one call of the runtime's ``dot`` / ``axpy``, then the epilogue
    over its whole (small) result."""
    elem, a, bm = g.dt.ir, g.a, g.b
    always = ir.Constant(I1, 1)
    with indices(b, g.batch[0], "so") as o, indices(b, g.batch[1], "si") as i:
        a_base = gep(b, elem, a.ptr, g.offset(b, a.bs, o, i))
        b_base = gep(b, elem, bm.ptr, g.offset(b, bm.bs, o, i))
        c_off = g.offset(b, g.c_bs, o, i)
        c = gep(b, elem, g.c, c_off)
        if routine == "dot":
            call(b, "dot", g.dt, always, [a_base, a.rs, b_base, bm.cs, c, g.n, g.m, g.n, g.k])
        else:
            call(b, "axpy", g.dt, always, [a_base, a.rs, a.cs, b_base, bm.rs, c, g.n, g.m, g.n, g.k])
        if g.epilogue is not None:
            g.epilogue(b, i64(c_off), i64(g.m * g.n))


def _block_epilogue(b: ir.IRBuilder, g: Gemm, c_start: IntLike, mc: IntLike, nc: IntLike) -> None:
    """Run the fused epilogue over a finished ``mc x nc`` block of C: one run when the
    block spans whole rows (its rows are then contiguous), else one run per row."""
    if isinstance(nc, int) and nc == g.n:
        g.epilogue(b, i64(c_start), i64(mul(b, mc, g.n)))
        return
    with for_range(b, 0, mc, name="epr", unroll=False) as r:
        g.epilogue(b, i64(add(b, c_start, mul(b, r.index, g.n))), i64(nc))
