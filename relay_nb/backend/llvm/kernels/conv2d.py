"""``nn.conv2d`` (NCHW data, OIHW weight) as an implicit-im2col GEMM per image and group.

``out[n, g*Og + o, p] = sum_q W[g*Og + o, q] * col[n, g][q, p]`` with ``q = (c, kh, kw)``
and ``p = (oh, ow)``: the weight rows are A as stored, each image's output channels are C's
rows as stored (so the epilogue gets whole output planes), and B — the im2col matrix — is
packed straight from the input by the runtime's ``im2col`` (:mod:`.conv_pack`). Strides,
padding, dilation and groups are all geometry of that packer. Other layouts are declined
(the code generator's plain loop runs them); dtypes the tiled kernel does not take run the
direct loops below. Depthwise convs (one input channel per output channel) have their
own vector loops (:mod:`.depthwise`).
"""

from __future__ import annotations

from typing import Optional

from llvmlite import ir

from ..anchor import AnchorCall
from ..codegen.types import DType, dtype
from ._loops import add, for_range, gep, i64, indices, mul, zero
from .depthwise import depthwise, emit_depthwise
from .driver import emit_gemm, plan, small_path, tiled
from .gemm import tile_for
from .prepack import PanelsA
from .problem import ConvGeometry, Gemm, Matrix
from .reference import convert


def _pairs(value, name: str) -> tuple[int, int]:
    v = tuple(int(x) for x in value)
    if len(v) == 1:
        v = v * 2
    if len(v) != 2:
        raise ValueError(f"{name} {value}")
    return v  # type: ignore[return-value]


def conv2d_gemm(call: AnchorCall) -> Optional[Gemm]:
    """The GEMM computing ``call``, or None for what this kernel does not take."""
    attrs = call.attrs
    if attrs.get("data_layout", "NCHW") != "NCHW" or attrs.get("kernel_layout", "OIHW") != "OIHW":
        return None
    if attrs.get("out_layout", "") not in ("", "NCHW"):
        return None
    try:
        x_shape, w_shape = (t.concrete_shape for t in call.input_types)
        out_shape = call.output_type.concrete_shape
        strides = _pairs(attrs.get("strides", (1, 1)), "strides")
        dilation = _pairs(attrs.get("dilation", (1, 1)), "dilation")
    except ValueError:
        return None
    padding = tuple(int(p) for p in attrs.get("padding", (0, 0, 0, 0)))
    if len(padding) == 2:
        padding = padding * 2
    groups = int(attrs.get("groups", 1))
    if len(x_shape) != 4 or len(w_shape) != 4 or len(padding) != 4 or groups < 1:
        return None
    if min(padding) < 0 or min(strides) < 1 or min(dilation) < 1:
        return None
    n, c, h, w = x_shape
    o, cg, kh, kw = w_shape
    _, _, oh, ow = out_shape
    if c != cg * groups or o % groups:
        return None
    og = o // groups
    geometry = ConvGeometry(c, h, w, cg, (kh, kw), (oh, ow), strides, dilation, padding)  # type: ignore[arg-type]
    a_dt, b_dt = dtype(call.input_types[1].dtype), dtype(call.input_types[0].dtype)
    k = cg * kh * kw
    a = Matrix(call.inputs[1], a_dt, k, 1, (0, og * k))
    one_to_one = (kh, kw) == (1, 1) and not any(padding) and (oh, ow) == (h, w)  # stride 1 (or a 1-pixel axis)
    if one_to_one and (cg > 1 or og > 1 or h * w == 1):  # (depthwise ones: see .depthwise)
        # a 1 x 1 conv of stride 1 is a plain GEMM: B is the image's (C, H*W) matrix, each
        # of its rows contiguous, which pack_b copies a panel row at a time (0.27 ns an
        # element; im2col gathers images narrower than a panel, 14 x 14 or 7 x 7, at
        # ~0.5 ns, and needs the padding logic for nothing).  Of a 1 x 1 image (squeeze-excitation) B is a column and the matmul's
        # unpacked kernels take it (the im2col GEMM packed the whole weight each call:
        # 117 -> 80 us for 1152 -> 48)
        plane = h * w
        b = Matrix(call.inputs[0], b_dt, plane, 1, (c * plane, cg * plane))
        return Gemm(
            og, oh * ow, k, a, b, call.output, dtype(call.output_type.dtype), (n, groups),
            (o * oh * ow, og * oh * ow), call.epilogue, None, call.scratch, call.split,
        )
    b = Matrix(call.inputs[0], b_dt, 0, 0)
    return Gemm(
        og, oh * ow, k, a, b, call.output, dtype(call.output_type.dtype), (n, groups),
        (o * oh * ow, og * oh * ow), call.epilogue, geometry, call.scratch, call.split,
    )


def emit_conv2d(call: AnchorCall) -> bool:
    """Emit ``call`` at its builder; False (nothing emitted) if it is not one of ours."""
    g = conv2d_gemm(call)
    if g is None:
        return False
    if g.conv is None:  # a 1 x 1 conv: a plain GEMM
        if small_path(g) is None and tiled(g):
            _prepack_weights(call, g)
        emit_gemm(call.builder, g)
    elif depthwise(g):
        emit_depthwise(call.builder, g)
    elif tiled(g) and g.conv.image > 0:
        _prepack_weights(call, g)
        emit_gemm(call.builder, g)
    else:
        emit_direct(call.builder, g)
    return True


def _prepack_weights(call: AnchorCall, g: Gemm) -> None:
    """Constant weights: packed into the macro-kernel's panels once, not on every call.
    Only with scratch memory (the driver then never takes the unpacked fallback)."""
    if call.prepack is None or g.scratch is None:
        return
    panels = PanelsA(g.batch[1], g.m, g.k, plan(g).kc, tile_for(g.dt).mr)
    if call.prepack(1, panels):
        g.a_panels = panels


def emit_direct(b: ir.IRBuilder, g: Gemm) -> None:
    """Plain loops over ``(n, o, oh, ow)`` summing ``(c, kh, kw)`` with bounds checks, in the
    result dtype (inputs converted first); the epilogue runs on each output plane."""
    conv = g.conv
    assert conv is not None
    dt: DType = g.dt
    elem = dt.ir
    x_dt, w_dt = g.b.dt, g.a.dt
    (kh, kw), (sh, sw), (dh, dw) = conv.kernel, conv.strides, conv.dilation
    pt, pl = conv.padding[:2]
    oh, ow = conv.out
    og, cg = g.m, conv.group_channels
    plane = oh * ow

    def plus(x, y):
        return b.fadd(x, y) if dt.is_float else b.add(x, y)

    def times(x, y):
        return b.fmul(x, y) if dt.is_float else b.mul(x, y)

    with indices(b, g.batch[0], "cn") as n, indices(b, g.batch[1], "cg") as grp:
        c_off = g.offset(b, g.c_bs, n, grp)
        image = gep(b, x_dt.mem, g.b.ptr, add(b, mul(b, n, conv.image), mul(b, grp, cg * conv.height * conv.width)))
        weights = gep(b, w_dt.mem, g.a.ptr, mul(b, grp, og * g.k))
        with for_range(b, 0, og, name="co") as o:
            out_plane = add(b, c_off, mul(b, o.index, plane))
            with for_range(b, 0, plane, name="cp") as p:
                y = b.sdiv(p.index, i64(ow))
                x = b.sub(p.index, b.mul(y, i64(ow)))
                with for_range(b, 0, g.k, init=[zero(elem)], name="cq") as q:
                    ci = b.sdiv(q.index, i64(kh * kw))
                    r = b.sub(q.index, b.mul(ci, i64(kh * kw)))
                    ki = b.sdiv(r, i64(kw))
                    kj = b.sub(r, b.mul(ki, i64(kw)))
                    ih = b.add(b.sub(b.mul(y, i64(sh)), i64(pt)), b.mul(ki, i64(dh)))
                    iw = b.add(b.sub(b.mul(x, i64(sw)), i64(pl)), b.mul(kj, i64(dw)))
                    inside = b.and_(
                        b.and_(b.icmp_signed(">=", ih, i64(0)), b.icmp_signed("<", ih, i64(conv.height))),
                        b.and_(b.icmp_signed(">=", iw, i64(0)), b.icmp_signed("<", iw, i64(conv.width))),
                    )
                    at = b.select(inside, b.add(b.mul(b.add(b.mul(ci, i64(conv.height)), ih), i64(conv.width)), iw), i64(0))
                    if conv.image:
                        xv = convert(b, b.load(gep(b, x_dt.mem, image, at), typ=x_dt.mem), x_dt, dt)
                        xv = b.select(inside, xv, zero(elem))
                    else:  # an empty image padded to a non-empty one: all padding
                        xv = zero(elem)
                    wv = b.load(gep(b, w_dt.mem, weights, add(b, mul(b, o.index, g.k), q.index)), typ=w_dt.mem)
                    q.carry([plus(q.carried[0], times(convert(b, wv, w_dt, dt), xv))])
                b.store(q.carried[0], gep(b, elem, g.c, add(b, out_plane, p.index)))
            if g.epilogue is not None:
                g.epilogue(b, i64(out_plane), i64(plane))
