"""Buffer rule of ``nn.deformable_conv2d`` (``topi.nn.deformable_conv2d_nchw``), as the
interpreter computes it (``op/impl/nn_special.py``): first the sampled columns
``cols[n, c, i, j, y, x]`` — channel ``c`` bilinearly sampled at its tap's position moved by
the offsets of its deformable group, in float64 (an integer base plus a float offset is
float64 in numpy), zero outside the image — into the workspace in the working dtype; then
their grouped contraction with the weight.  Any permutation layouts of data / offset,
kernel and result.
"""

from __future__ import annotations

import math

from llvmlite import ir

from ....op.impl._util import ints_n, pad_pairs
from .context import attrs_of
from .index import Index
from .reduce import _alloca
from .rules import rule
from .scalar import convert
from .types import dtype, i64, zero

_F64 = dtype("float64")


def _check(call):
    attrs = attrs_of(call)
    for key, canon in (("data_layout", "NCHW"), ("kernel_layout", "OIHW"), ("out_layout", "NCHW")):
        layout = attrs[key] or attrs["data_layout"]
        if sorted(layout) != sorted(canon) or len(layout) != 4:
            return f"{key} {layout!r}"
    if call._checked_type.dtype == "bool":
        return "bool operands"
    data, _, weight = (a._checked_type.shape for a in call.args)
    c = data[attrs["data_layout"].index("C")]
    kl = attrs["kernel_layout"]
    o, cg = weight[kl.index("O")], weight[kl.index("I")]
    groups, dg = attrs["groups"], attrs["deformable_groups"]
    if groups < 1 or dg < 1 or c % dg or c != cg * groups or o % groups:
        return "channels and groups do not fit"
    return None


def _reader(kb, node, layout: str, canon: str):
    """``at(*dims in canon order) -> value`` of ``node`` stored in ``layout``."""
    buf = kb.materialize(node)
    pos = [layout.index(a) for a in canon]

    def at(*dims):
        ordered = [None] * len(dims)
        for p, d in zip(pos, dims):
            ordered[p] = d
        return buf.load(kb.builder, Index(kb.builder, buf.shape, dims=ordered)), buf.dt

    return at, [buf.shape[p] for p in pos]


def _f(v: float) -> ir.Constant:
    return ir.Constant(ir.DoubleType(), float(v))


@rule("nn.deformable_conv2d", kind="buffer", check=_check)
def _deformable_conv2d(kb, call, outs, epilogue):
    attrs = attrs_of(call)
    dl = attrs["data_layout"]
    out = outs[0]
    dt = out.dt
    work = dt if dt.is_float else _F64  # the interpreter's ``_work``
    b = kb.builder
    x_at, (n, c, h, w) = _reader(kb, call.args[0], dl, "NCHW")
    off_at, (_, _, oh, ow) = _reader(kb, call.args[1], dl, "NCHW")
    w_at, (o, cg, kh, kw) = _reader(kb, call.args[2], attrs["kernel_layout"], "OIHW")
    strides = ints_n(attrs["strides"], 2, "strides")
    dilation = ints_n(attrs["dilation"], 2, "dilation")
    (top, _), (left, _) = pad_pairs(attrs["padding"], 2)
    groups, dg = attrs["groups"], attrs["deformable_groups"]
    cpd = c // dg
    cols = kb.scratch((n, c, kh, kw, oh, ow), work)
    if not math.prod(cols.shape) and not math.prod(out.shape):
        return

    def x_value(bn, ch, yy, xx):
        v, vdt = x_at(bn, ch, yy, xx)
        return convert(kb, convert(kb, v, vdt, dt), dt, _F64)  # data converted to dt first

    floor = "llvm.floor.f64"
    with kb.loop(n, "dn") as bn, kb.loop(c, "dc") as ch:
        g = b.udiv(ch, i64(cpd))
        with kb.loop(kh, "di") as i, kb.loop(kw, "dj") as j:
            k = b.add(b.mul(g, i64(kh * kw * 2)), b.mul(b.add(b.mul(i, i64(kw)), j), i64(2)))
            with kb.loop(oh, "dy") as y, kb.loop(ow, "dx") as xx:
                dy, ddt = off_at(bn, k, y, xx)
                dx, _ = off_at(bn, b.add(k, i64(1)), y, xx)
                dy, dx = convert(kb, dy, ddt, _F64), convert(kb, dx, ddt, _F64)
                by = b.add(b.sub(b.mul(y, i64(strides[0])), i64(top)), b.mul(i, i64(dilation[0])))
                bx = b.add(b.sub(b.mul(xx, i64(strides[1])), i64(left)), b.mul(j, i64(dilation[1])))
                ys, xs = b.fadd(b.sitofp(by, ir.DoubleType()), dy), b.fadd(b.sitofp(bx, ir.DoubleType()), dx)
                outside = b.or_(
                    b.or_(b.fcmp_ordered("<", ys, _f(0)), b.fcmp_ordered("<", xs, _f(0))),
                    b.or_(b.fcmp_ordered(">=", ys, _f(h)), b.fcmp_ordered(">=", xs, _f(w))),
                )
                fly, flx = kb.call(floor, ir.DoubleType(), ys), kb.call(floor, ir.DoubleType(), xs)

                def clip(v, hi):  # np.clip(v, 0, hi) of a float, then int64 (NaN reads 0)
                    v = b.select(b.fcmp_ordered("<", v, _f(0)), _f(0), v)
                    v = b.select(b.fcmp_ordered(">", v, _f(hi)), _f(hi), v)
                    return convert(kb, v, _F64, dtype("int64"))

                y0, x0 = clip(fly, h - 1), clip(flx, w - 1)
                y1 = b.select(b.icmp_signed("<", b.add(y0, i64(1)), i64(h - 1)), b.add(y0, i64(1)), i64(h - 1))
                x1 = b.select(b.icmp_signed("<", b.add(x0, i64(1)), i64(w - 1)), b.add(x0, i64(1)), i64(w - 1))
                fy, fx = b.fsub(ys, fly), b.fsub(xs, flx)
                one = _f(1)

                def blend(lo, hi, f):  # lo * (1 - f) + hi * f
                    return b.fadd(b.fmul(lo, b.fsub(one, f)), b.fmul(hi, f))

                if h and w:
                    top_v = blend(x_value(bn, ch, y0, x0), x_value(bn, ch, y0, x1), fx)
                    bottom_v = blend(x_value(bn, ch, y1, x0), x_value(bn, ch, y1, x1), fx)
                    value = b.select(outside, _f(0), blend(top_v, bottom_v, fy))
                else:
                    value = _f(0)
                at = Index(b, cols.shape, dims=[bn, ch, i, j, y, xx])
                cols.store(b, at, convert(kb, value, _F64, work))
    og = o // groups
    slot = _alloca(kb, work.ir)
    ol = attrs["out_layout"] or dl
    opos = [ol.index(a) for a in "NCHW"]
    with kb.loop(n, "cn") as bn, kb.loop(o, "co") as oc:
        g = b.udiv(oc, i64(og))
        with kb.loop(oh, "cy") as y, kb.loop(ow, "cx") as xx:
            b.store(zero(work), slot)
            with kb.loop(cg, "cc") as cc, kb.loop(kh, "ci") as i, kb.loop(kw, "cj") as j:
                ch = b.add(b.mul(g, i64(cg)), cc)
                v = cols.load(b, Index(b, cols.shape, dims=[bn, ch, i, j, y, xx]))
                wv, wdt = w_at(oc, cc, i, j)
                wv = convert(kb, convert(kb, wv, wdt, dt), dt, work)
                acc = b.load(slot, typ=work.ir)
                b.store(b.fadd(acc, b.fmul(v, wv), flags=("reassoc",)), slot)
            dims = [None] * 4
            for p, d in zip(opos, (bn, oc, y, xx)):
                dims[p] = d
            out.store(b, Index(b, out.shape, dims=dims), convert(kb, b.load(slot, typ=work.ir), work, dt))


__all__: list[str] = []
