"""conv2d's runtime routines: zero padding, the implicit-im2col B packer, a plain fallback.

conv2d (NCHW data, OIHW weight) is the GEMM ``C[o, p] = W[o, q] @ col[q, p]`` per image and
group, with ``q = (c, kh, kw)`` and ``p = (oh, ow)``; the im2col matrix ``col`` is never
built: :func:`build_im2col` packs its ``[kc][NR]`` panels straight from the (zero-padded)
input, which the GEMM's B packing would have to read anyway. Padding the input once per
image removes every bounds check from that packer; with stride 1 the NR positions of a
panel that lie in one output row are NR consecutive input elements of each row of
``col``, so most panel rows are one wide load (the rest gather element by element).
"""

from __future__ import annotations

from llvmlite import ir

from ._loops import I1, I32, I64, PTR, add, for_range, gather, gep, i64, smin, zero
from .gemm import Tile, _function, _plus


def _advance(b: ir.IRBuilder, kh, kw, koff, KH, KW, dh_wp, dw, plane):
    """Step ``q = (c, kh, kw)`` by one, keeping ``koff = c*plane + kh*dh*Wp + kw*dw``."""
    kw1 = b.add(kw, i64(1))
    wrap_w = b.icmp_signed("==", kw1, KW)
    kh1 = b.select(wrap_w, b.add(kh, i64(1)), kh)
    wrap_h = b.icmp_signed("==", kh1, KH)
    step = b.add(dw, b.select(wrap_w, b.sub(dh_wp, b.mul(KW, dw)), i64(0)))
    step = b.add(step, b.select(wrap_h, b.sub(plane, b.mul(KH, dh_wp)), i64(0)))
    return b.select(wrap_h, i64(0), kh1), b.select(wrap_w, i64(0), kw1), b.add(koff, step)


def _start(b: ir.IRBuilder, k0, KH, KW, dh_wp, dw, plane):
    """``(kh, kw, koff)`` of row ``k0`` of col."""
    kk = b.mul(KH, KW)
    c = b.sdiv(k0, kk)
    r = b.sub(k0, b.mul(c, kk))
    kh = b.sdiv(r, KW)
    kw = b.sub(r, b.mul(kh, KW))
    koff = b.add(b.add(b.mul(c, plane), b.mul(kh, dh_wp)), b.mul(kw, dw))
    return kh, kw, koff


def build_im2col(module: ir.Module, t: Tile, name: str) -> ir.Function:
    """``im2col(dst, xp, k0, kc, j0, nc, KH, KW, OW, plane, Wp, sh, sw, dh, dw)``: pack rows
    ``k0:k0+kc``, columns ``j0:j0+nc`` of the im2col matrix of the padded image ``xp``
    (``plane = Hp * Wp``) into panels of NR columns; columns past ``nc`` repeat the last."""
    names = ["dst", "xp", "k0", "kc", "j0", "nc", "KH", "KW", "OW", "plane", "Wp", "sh", "sw", "dh", "dw"]
    fn, b = _function(module, name, [(n, PTR if n in ("dst", "xp") else I64) for n in names])
    dst, xp, k0, kc, j0, nc, KH, KW, OW, plane, Wp, sh, sw, dh, dw = fn.args
    elem = t.dt.ir
    wide = ir.VectorType(elem, t.nr)
    dh_wp = b.mul(dh, Wp)
    kh0, kw0, koff0 = _start(b, k0, KH, KW, dh_wp, dw, plane)
    with for_range(b, 0, nc, t.nr, name="panel") as panel:
        out = gep(b, elem, dst, b.mul(panel.index, kc))
        last = b.sub(nc, i64(1))
        offs = []
        for jj in range(t.nr):
            j = b.add(j0, smin(b, b.add(panel.index, i64(jj)), last))
            oh = b.sdiv(j, OW)
            ow = b.sub(j, b.mul(oh, OW))
            offs.append(b.add(b.mul(b.mul(oh, sh), Wp), b.mul(ow, sw)))
        # the same offsets as vectors of i32, for the gathers
        lanes_i32 = ir.VectorType(I32, t.lanes)
        index_vecs = []
        for v in range(t.nv):
            vec = ir.Constant(lanes_i32, None)
            for lane in range(t.lanes):
                vec = b.insert_element(vec, b.trunc(offs[v * t.lanes + lane], I32), ir.Constant(I32, lane))
            index_vecs.append(vec)
        full = b.icmp_signed("<=", b.add(panel.index, i64(t.nr)), nc)
        run = b.icmp_signed("==", b.sub(offs[-1], offs[0]), i64(t.nr - 1))
        # offsets strictly increase with j, so a span of NR - 1 means NR consecutive elements
        contiguous = b.and_(full, run)

        def copy_rows(how: str) -> None:
            """The panel's ``kc`` rows: one wide load each (``"wide"``), two vector gathers
            (``"gather"``: an image narrower than a panel, 14 x 14 or 7 x 7, a stride, an
            edge; scalar loads and stores took ~1 ns an element, 15% of a 3x3 conv at
            14 x 14 on one thread), or element by element (``"scalar"``)."""
            with for_range(b, 0, kc, init=[kh0, kw0, koff0], name="k") as k:
                kh, kw, koff = k.carried
                src = gep(b, elem, xp, koff)
                row = gep(b, elem, out, b.mul(k.index, i64(t.nr)))
                if how == "wide":
                    v = b.load(gep(b, elem, src, offs[0]), typ=wide, align=t.dt.itemsize)
                    b.store(v, row, align=t.row_align)
                elif how == "gather":
                    for v, index in enumerate(index_vecs):
                        part = gather(b, elem, src, index, t.dt.itemsize)
                        b.store(part, gep(b, elem, row, v * t.lanes), align=t.vec_align)
                else:
                    for jj, off in enumerate(offs):
                        v = b.load(gep(b, elem, src, off), typ=elem)
                        b.store(v, gep(b, elem, row, jj))
                k.carry(_advance(b, kh, kw, koff, KH, KW, dh_wp, dw, plane))

        with b.if_else(contiguous) as (fast, slow):
            with fast:
                copy_rows("wide")
            with slow:
                # the gathers' i32 offsets hold any offset within a plane below 2^31 elements
                with b.if_else(b.icmp_signed("<", plane, i64(2**31))) as (fits, huge):
                    with fits:
                        copy_rows("gather")
                    with huge:
                        copy_rows("scalar")
    b.ret_void()
    return fn


def build_pad(module: ir.Module, t: Tile, name: str) -> ir.Function:
    """``pad(dst, src, C, H, W, Hp, Wp, pt, pl, r0, r1)``: rows ``r0:r1`` of every channel of
    the ``C x Hp x Wp`` image ``dst`` that holds the ``C x H x W`` image ``src`` at
    ``(pt, pl)`` with zeros around it.  A chunk of a conv split by output columns pads
    only the band of rows its output rows read (every chunk padded the whole image:
    8 chunks of a 3x3 conv on 28 x 28 padded it 8 times, so it was cut into 3)."""
    names = ["dst", "src", "C", "H", "W", "Hp", "Wp", "pt", "pl", "r0", "r1"]
    fn, b = _function(module, name, [(n, PTR if n in ("dst", "src") else I64) for n in names])
    dst, src, C, H, W, Hp, Wp, pt, pl, r0, r1 = fn.args
    elem = t.dt.ir
    rows = b.sub(r1, r0)
    with for_range(b, 0, b.mul(C, rows), name="row") as r:
        c = b.sdiv(r.index, rows)
        hp = b.add(r0, b.sub(r.index, b.mul(c, rows)))
        to = gep(b, elem, dst, b.mul(b.add(b.mul(c, Hp), hp), Wp))
        with for_range(b, 0, Wp, name="z") as z:
            b.store(zero(elem), gep(b, elem, to, z.index))
        h = b.sub(hp, pt)
        inside = b.and_(b.icmp_signed(">=", h, i64(0)), b.icmp_signed("<", h, H))
        with b.if_then(inside):
            frm = gep(b, elem, src, b.mul(b.add(b.mul(c, H), h), W))
            row = gep(b, elem, to, pl)
            with for_range(b, 0, W, name="w") as w:
                b.store(b.load(gep(b, elem, frm, w.index), typ=elem), gep(b, elem, row, w.index))
    b.ret_void()
    return fn


def build_conv_block_ref(module: ir.Module, t: Tile, name: str) -> ir.Function:
    """``conv_block_ref(x, w, w_rs, c, ldc, mc, j0, nc, k0, kc, first, H, W, KH, KW, OW, sh,
    sw, dh, dw, pt, pl)``: the block update of im2col + macro computed directly from the
    unpadded image with bounds checks — the fallback when no scratch memory is left."""
    names = ["x", "w", "w_rs", "c", "ldc", "mc", "j0", "nc", "k0", "kc", "first",
             "H", "W", "KH", "KW", "OW", "sh", "sw", "dh", "dw", "pt", "pl"]
    types = {"x": PTR, "w": PTR, "c": PTR, "first": I1}
    fn, b = _function(module, name, [(n, types.get(n, I64)) for n in names])
    x, w, w_rs, c, ldc, mc, j0, nc, k0, kc, first, H, W, KH, KW, OW, sh, sw, dh, dw, pt, pl = fn.args
    elem, dt = t.dt.ir, t.dt
    kk_size = b.mul(KH, KW)
    zero_v = zero(elem)
    with for_range(b, 0, mc, name="i") as i:
        row = gep(b, elem, c, b.mul(i.index, ldc))
        w_row = gep(b, elem, w, b.mul(i.index, w_rs))
        with for_range(b, 0, nc, name="j") as j:
            p = b.add(j0, j.index)
            oh = b.sdiv(p, OW)
            ow = b.sub(p, b.mul(oh, OW))
            dst = gep(b, elem, row, j.index)
            acc0 = b.select(first, zero_v, b.load(dst, typ=elem))
            with for_range(b, 0, kc, init=[acc0], name="k") as k:
                q = b.add(k0, k.index)
                ci = b.sdiv(q, kk_size)
                r = b.sub(q, b.mul(ci, kk_size))
                kh = b.sdiv(r, KW)
                kw = b.sub(r, b.mul(kh, KW))
                ih = b.add(b.sub(b.mul(oh, sh), pt), b.mul(kh, dh))
                iw = b.add(b.sub(b.mul(ow, sw), pl), b.mul(kw, dw))
                inside = b.and_(
                    b.and_(b.icmp_signed(">=", ih, i64(0)), b.icmp_signed("<", ih, H)),
                    b.and_(b.icmp_signed(">=", iw, i64(0)), b.icmp_signed("<", iw, W)),
                )
                # read a clamped (always valid) address, then keep the value only inside
                at = b.select(inside, add(b, b.mul(b.add(b.mul(ci, H), ih), W), iw), i64(0))
                v = b.select(inside, b.load(gep(b, elem, x, at), typ=elem), zero_v)
                wv = b.load(gep(b, elem, w_row, k.index), typ=elem)
                prod = b.fmul(wv, v) if dt.is_float else b.mul(wv, v)
                k.carry([_plus(b, k.carried[0], prod, dt)])
            b.store(k.carried[0], dst)
    b.ret_void()
    return fn
