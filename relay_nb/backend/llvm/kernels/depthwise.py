"""Depthwise conv2d (every output channel reads one input channel) as vector loops over
the output width.

As a GEMM (:mod:`.conv2d`) a depthwise conv has one row and ``kh * kw`` (9 or 25) terms
per output: the packing then costs more than the arithmetic (MobileNet v2's depthwise
layers ran 20x slower than onnxruntime's). Here each output plane is computed straight
from the input plane: an output row is a few vectors of ``V`` lanes along the width, each
the sum over the taps of a weight (broadcast) times ``V`` input elements of one input row
(``V`` consecutive elements at stride 1; every ``s``-th of ``s * V`` at stride ``s``).

Shapes are static, so every vector's position is known when the code is emitted: which
taps of a vector reach into the zero padding (left / right edges, top / bottom rows) is
decided in Python, and those taps read with a constant mask (``llvm.masked.load``, the
masked lanes read as zero and are never touched), or are skipped when wholly outside.
Interior rows and vectors run as loops with plain loads and no bounds checks. Each plane
is then handed to the fused epilogue while it is in cache. Threads share whole planes.
"""

from __future__ import annotations

import math
from typing import Optional

from llvmlite import ir

from ..jit import vector_bits
from ._loops import I1, I32, PTR, IntLike, add, declare, fma, for_range, gep, i64, mul, span, splat, zero
from .problem import Gemm

DTYPES = ("float32", "float64", "int32", "int64")

MAC_NS = 0.035
"""Estimated single-core time of one multiply-add here, used only to decide whether
splitting a depthwise conv across threads pays (32 channels of 112 x 112, 3 x 3, stride 1:
3.6 M multiply-adds in 153 us through ``relay.build`` at load 5.3, call included)."""

PLANE_NS = 150.0
"""Estimated fixed cost of one plane (weight broadcasts, boundary rows, loop set-up)."""

MAX_EDGE = 24
"""At most this many boundary rows (or edge vectors) are emitted one by one; a kernel
that needs more (a filter much larger than its image) stays with the GEMM."""


def _lanes(width: int, bits: int) -> int:
    """The vector length covering one output row in the fewest vectors (ties: shorter
    vectors, fewer wasted lanes): 16 for widths 14 / 28 / 56 / 112, 8 for 7."""
    widest = max(vector_bits() // bits, 1)
    options = [v for v in (4, 8, 16, 32) if v <= widest] or [widest]
    return min(options, key=lambda v: (math.ceil(width / v), v))


def _interior(lo_pad: int, size: int, out: int, stride: int, reach: int, span_: int) -> tuple[int, int]:
    """``[a, b)``: the output positions ``p`` whose every read ``p * stride - lo_pad + t``,
    ``0 <= t < reach + span_``, lies inside ``[0, size)`` (``reach``: the filter's extent
    minus one, ``span_``: what one position reads beyond its first element, plus one)."""
    a = min(out, max(0, math.ceil(lo_pad / stride)))
    last = size - reach - span_ + lo_pad  # p * stride <= last
    b = min(out, last // stride + 1) if last >= 0 else 0
    return a, max(a, b)


def depthwise(g: Gemm) -> bool:
    """Whether :func:`emit_depthwise` computes ``g`` (one input channel per output channel,
    one dtype throughout, a boundary small enough to emit one row at a time)."""
    conv = g.conv
    if conv is None or conv.group_channels != 1 or conv.image == 0 or g.m * g.n * g.k == 0:
        return False
    if not (g.a.dt == g.b.dt == g.dt) or g.dt.name not in DTYPES:
        return False
    rows, vectors = _edges(g)
    return rows <= MAX_EDGE and vectors <= MAX_EDGE


def _edges(g: Gemm) -> tuple[int, int]:
    """How many output rows and row vectors lie outside the interior loops."""
    conv = g.conv
    (kh, kw), (sh, sw), (dh, dw) = conv.kernel, conv.strides, conv.dilation
    oh, ow = conv.out
    lanes = _lanes(ow, g.dt.bits)
    r0, r1 = _interior(conv.padding[0], conv.height, oh, sh, (kh - 1) * dh, 1)
    v0, v1 = _vector_run(g, lanes)
    return oh - (r1 - r0), math.ceil(ow / lanes) - (v1 - v0)


def _vector_run(g: Gemm, lanes: int) -> tuple[int, int]:
    """``[a, b)`` in vectors: the row vectors all of whose taps read inside the row, with
    all ``lanes`` lanes inside the output row."""
    conv = g.conv
    kw, sw, dw = conv.kernel[1], conv.strides[1], conv.dilation[1]
    ow = conv.out[1]
    count = math.ceil(ow / lanes)
    inside = [
        v
        for v in range(count)
        if (v + 1) * lanes <= ow
        and v * lanes * sw - conv.padding[1] >= 0
        and v * lanes * sw - conv.padding[1] + (kw - 1) * dw + sw * lanes - 1 <= conv.width - 1
    ]
    if not inside:
        return 0, 0
    return inside[0], inside[-1] + 1  # a run: the condition is monotone on both sides


def _masked_load(b: ir.IRBuilder, vec: ir.VectorType, ptr: ir.Value, mask: list[bool], align: int) -> ir.Value:
    mask_ty = ir.VectorType(I1, vec.count)
    name = f"llvm.masked.load.v{vec.count}{vec.element.intrinsic_name}.p0"
    fn = declare(b.module, name, vec, [PTR, I32, mask_ty, vec])
    return b.call(fn, [ptr, ir.Constant(I32, align), ir.Constant(mask_ty, [int(m) for m in mask]), zero(vec)])


def _masked_store(b: ir.IRBuilder, value: ir.Value, ptr: ir.Value, mask: list[bool], align: int) -> None:
    vec = value.type
    mask_ty = ir.VectorType(I1, vec.count)
    name = f"llvm.masked.store.v{vec.count}{vec.element.intrinsic_name}.p0"
    fn = declare(b.module, name, ir.VoidType(), [vec, PTR, I32, mask_ty])
    b.call(fn, [value, ptr, ir.Constant(I32, align), ir.Constant(mask_ty, [int(m) for m in mask])])


def emit_depthwise(b: ir.IRBuilder, g: Gemm) -> None:
    """Emit ``g`` (see :func:`depthwise`) at ``b``: planes ``u = (image, out channel)``, split
    across threads; in each, boundary rows and edge vectors with static masks, the rest in
    loops of plain vector loads."""
    conv = g.conv
    dt, elem = g.dt, g.dt.ir
    size = dt.itemsize
    (kh, kw), (sh, sw), (dh, dw) = conv.kernel, conv.strides, conv.dilation
    pt, pl = conv.padding[:2]
    h, w = conv.height, conv.width
    oh, ow = conv.out
    og, groups = g.m, g.batch[1]
    planes_out = og * groups  # output channels
    lanes = _lanes(ow, dt.bits)
    vec = ir.VectorType(elem, lanes)
    wide = ir.VectorType(elem, lanes * sw)
    pick = ir.Constant(ir.VectorType(I32, lanes), [l * sw for l in range(lanes)])
    plane = oh * ow
    units = g.batch[0] * planes_out
    unit_ns = plane * g.k * MAC_NS + PLANE_NS
    lo, hi = g.split(units, unit_ns, 0.0) if g.split is not None and units >= 2 else (0, units)
    r0, r1 = _interior(pt, h, oh, sh, (kh - 1) * dh, 1)
    v0, v1 = _vector_run(g, lanes)
    nvec = math.ceil(ow / lanes)

    def taps_in_row(oy: int) -> list[int]:
        return [ki for ki in range(kh) if 0 <= oy * sh - pt + ki * dh < h]

    with span(b, lo, hi, "dwu") as u:
        u = i64(u)
        image = b.udiv(u, i64(planes_out)) if g.batch[0] > 1 else i64(0)
        oc = b.urem(u, i64(planes_out)) if g.batch[0] > 1 else u
        ch = b.udiv(oc, i64(og)) if og > 1 else oc
        x_plane = gep(b, elem, g.b.ptr, b.add(b.mul(image, i64(conv.image)), b.mul(ch, i64(h * w))))
        w_row = gep(b, elem, g.a.ptr, b.mul(oc, i64(g.k)))
        weights = [splat(b, b.load(gep(b, elem, w_row, t), typ=elem), lanes) for t in range(kh * kw)]
        out_off = b.mul(u, i64(plane))
        out_plane = gep(b, elem, g.c, out_off)

        def vector(oy: IntLike, kis: list[int], v: IntLike, masked: bool) -> None:
            """Output row ``oy``, lanes ``v*V ..``: the sum over taps ``kis x range(kw)``."""
            ox0 = mul(b, v, lanes)
            acc = zero(vec)
            for ki in kis:
                row = gep(b, elem, x_plane, mul(b, add(b, mul(b, oy, sh), ki * dh - pt), w))
                for kj in range(kw):
                    col0 = add(b, mul(b, ox0, sw), kj * dw - pl)
                    ptr = gep(b, elem, row, col0)
                    if masked:  # static position: which elements exist is known now
                        mask = [
                            e % sw == 0 and ox0 + e // sw < ow and 0 <= col0 + e < w for e in range(lanes * sw)
                        ]
                        if not any(mask):
                            continue
                        x = _masked_load(b, wide, ptr, mask, size)
                    else:
                        x = b.load(ptr, typ=wide, align=size)
                    if sw > 1:
                        x = b.shuffle_vector(x, ir.Constant(wide, ir.Undefined), pick)
                    acc = fma(b, x, weights[ki * kw + kj], acc)
            dst = gep(b, elem, out_plane, add(b, mul(b, oy, ow), ox0))
            if masked and ox0 + lanes > ow:
                _masked_store(b, acc, dst, [ox0 + l < ow for l in range(lanes)], size)
            else:
                b.store(acc, dst, align=size)

        def row(oy: IntLike, kis: list[int]) -> None:
            for v in range(v0):
                vector(oy, kis, v, True)
            if v1 - v0 > 2:
                with for_range(b, v0, v1, name="dwv", unroll=False) as loop:
                    vector(oy, kis, loop.index, False)
            else:
                for v in range(v0, v1):
                    vector(oy, kis, v, False)
            for v in range(v1, nvec):
                vector(oy, kis, v, True)

        for oy in range(r0):
            row(oy, taps_in_row(oy))
        if r1 - r0 > 1:
            with for_range(b, r0, r1, name="dwr", unroll=False) as loop:
                row(loop.index, list(range(kh)))
        elif r1 - r0 == 1:
            row(r0, list(range(kh)))
        for oy in range(r1, oh):
            row(oy, taps_in_row(oy))
        if g.epilogue is not None:
            g.epilogue(b, out_off, i64(plane))
