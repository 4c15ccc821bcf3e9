"""Rules of the anchors: ``nn.dense``, ``nn.matmul``, ``nn.batch_matmul``, ``nn.conv*d``,
``nn.conv*d_transpose``.

They go to the hand-tiled kernels first (:func:`relay_nb.backend.llvm.kernels.emit_anchor`,
through the :class:`~relay_nb.backend.llvm.anchor.AnchorCall` contract, with packing
buffers from the kernel's workspace); what those decline runs as the straightforward
loops here.  Either way the fused epilogue is applied in place to each finished row or
plane.  Convolutions with layouts other than ``NC...`` / ``OI...`` fall back to numpy.
"""

from __future__ import annotations

import math

from llvmlite import ir

from ....op.impl._util import ints_n, pad_pairs
from ..anchor import AnchorCall
from .context import Buffer, attrs_of
from .reduce import _alloca
from .rules import rule
from .scalar import convert
from .types import DType, Unsupported, dtype, i64, zero

_SPATIAL = {1: "W", 2: "HW", 3: "DHW"}


def _emit_tiled(kb, call, outs, epilogue) -> bool:
    """Offer the anchor to the hand-tiled kernels; True if they emitted it."""
    try:
        from ..kernels import emit_anchor
    except ImportError:  # pragma: no cover - the kernels package is optional
        return False
    # an input that is not in memory yet is computed whole by every chunk of a split call
    repeated = sum(math.prod(kb.shape(a)) for a in call.args if kb.leaf_buffer(a) is None) * kb.element_ns
    inputs = tuple(kb.materialize(a).ptr for a in call.args)
    anchor = AnchorCall(
        call.op.name,
        attrs_of(call),
        tuple(kb.ttype(a) for a in call.args),
        kb.ttype(call),
        kb.builder,
        inputs,
        outs[0].ptr,
        epilogue,
    )
    if "scratch" in AnchorCall.__dataclass_fields__:  # packing buffers from the workspace
        anchor.scratch = kb.scratch_bytes
    if "prepack" in AnchorCall.__dataclass_fields__:  # constant operands packed once

        def prepack(i: int, pack) -> bool:
            return kb.prepack(call.args[i], pack)

        anchor.prepack = prepack
    if kb.splittable and not kb.parallel:  # the kernel's one stage: its chunks may split it

        def split(units: int, unit_ns: float, chunk_ns: float = 0.0):
            return kb.split(units, unit_ns, chunk_ns + repeated)

        anchor.split = split
    return bool(emit_anchor(anchor))


def _mac(kb, acc: ir.Value, a: ir.Value, w: ir.Value, dt: DType) -> ir.Value:
    b = kb.builder
    if dt.is_float:
        return b.fadd(acc, b.fmul(a, w), flags=("reassoc",))
    return b.add(acc, b.mul(a, w))


def _numeric(call):
    dts = [dtype(a._checked_type.dtype) for a in call.args] + [dtype(call._checked_type.dtype)]
    if any(d.kind == "b" for d in dts):
        return "bool operands"
    return None


def _matmul_check(call):
    """The loops index with the operands' shapes: they must agree (in-bounds reads)."""
    reason = _numeric(call)
    if reason:
        return reason
    a, w = (tuple(x._checked_type.shape) for x in call.args)
    out = tuple(call._checked_type.shape)
    attrs = attrs_of(call)
    name = call.op.name
    if name == "nn.batch_matmul":
        if len(a) != 3 or len(w) != 3 or len(out) != 3:
            return "batch_matmul of non-3-d operands"
        ta, tb = attrs["transpose_a"], attrs["transpose_b"]
        k_a, m = (a[1], a[2]) if ta else (a[2], a[1])
        k_b, n = (w[2], w[1]) if tb else (w[1], w[2])
        ok = k_a == k_b and out[1:] == (m, n) and a[0] in (1, out[0]) and w[0] in (1, out[0])
        return None if ok else "operand shapes do not agree"
    if len(w) != 2:
        return f"{name} with a {len(w)}-d weight"
    ta = attrs.get("transpose_a", False) if name == "nn.matmul" else False
    tb = attrs.get("transpose_b", False) if name == "nn.matmul" else True
    k_b, n = (w[1], w[0]) if tb else (w[0], w[1])
    if ta:
        if len(a) < 2:
            return "transpose_a of a 1-d operand"
        k_a, rows = a[-2], a[:-2] + (a[-1],)
    else:
        if len(a) < 1:
            return "a scalar operand"
        k_a, rows = a[-1], a[:-1]
    if k_a != k_b or out != rows + (n,):
        return "operand shapes do not agree"
    return None


def _gemm_loops(kb, batch: int, mm: int, nn: int, kk: int, a_at, b_at, out: Buffer, epilogue) -> None:
    """``out[t, i, j] = sum_k A(t, i, k) * B(t, k, j)`` with a register accumulator; the
    epilogue runs on each finished row."""
    b = kb.builder
    dt = out.dt
    slot = _alloca(kb, dt.ir)
    with kb.loop(batch, "gt") as t:
        with kb.loop(mm, "gi") as i:
            with kb.loop(nn, "gj") as j:
                b.store(zero(dt), slot)
                with kb.loop(kk, "gk") as k:
                    b.store(_mac(kb, b.load(slot, typ=dt.ir), a_at(t, i, k), b_at(t, k, j), dt), slot)
                row = b.add(b.mul(t, i64(mm)), i)
                out.store_flat(b, b.add(b.mul(row, i64(nn)), j), b.load(slot, typ=dt.ir))
            if epilogue is not None and nn:
                row = b.add(b.mul(t, i64(mm)), i)
                epilogue(b, b.mul(row, i64(nn)), i64(nn))


def _reader(kb, node, dt: DType):
    buf = kb.materialize(node)

    def at(flat):
        return convert(kb, buf.load_flat(kb.builder, flat), buf.dt, dt)

    return at


def _lin(b, *terms) -> ir.Value:
    """``sum(v * c)`` over (value, constant) pairs; constants of 0 drop out."""
    acc = None
    for v, c in terms:
        if c == 0:
            continue
        t = v if c == 1 else b.mul(v, i64(c))
        acc = t if acc is None else b.add(acc, t)
    return acc if acc is not None else i64(0)


@rule("nn.dense", "nn.matmul", "nn.batch_matmul", kind="buffer", anchor=True, check=_matmul_check)
def _matmul(kb, call, outs, epilogue):
    if _emit_tiled(kb, call, outs, epilogue):
        return
    a, w = call.args
    out = outs[0]
    dt = out.dt
    ash, wsh = kb.shape(a), kb.shape(w)
    attrs = attrs_of(call)
    b = kb.builder
    ra, rw = _reader(kb, a, dt), _reader(kb, w, dt)
    name = call.op.name
    if name == "nn.batch_matmul":
        ta, tb = attrs["transpose_a"], attrs["transpose_b"]
        batch, mm, nn = out.shape
        kk = ash[1] if ta else ash[2]
        sa = 0 if ash[0] == 1 else mm * kk
        sb = 0 if wsh[0] == 1 else kk * nn
    else:
        ta = attrs.get("transpose_a", False) if name == "nn.matmul" else False
        tb = attrs.get("transpose_b", False) if name == "nn.matmul" else True
        if len(wsh) != 2 or len(ash) < 1 or (ta and len(ash) < 2):
            raise Unsupported(f"{name} of shapes {ash} and {wsh}")
        nn = wsh[0] if tb else wsh[1]
        kk = wsh[1] if tb else wsh[0]
        if ta:
            batch, mm = math.prod(ash[:-2]), ash[-1]
            sa = mm * kk
        else:
            batch, mm, sa = 1, math.prod(ash[:-1]), 0
        sb = 0

    def a_at(t, i, k):
        flat = _lin(b, (t, sa), (k, mm), (i, 1)) if ta else _lin(b, (t, sa), (i, kk), (k, 1))
        return ra(flat)

    def b_at(t, k, j):
        flat = _lin(b, (t, sb), (j, kk), (k, 1)) if tb else _lin(b, (t, sb), (k, nn), (j, 1))
        return rw(flat)

    _gemm_loops(kb, batch, mm, nn, kk, a_at, b_at, out, epilogue)


def _conv_check(nd: int):
    def check(call):
        reason = _numeric(call)
        if reason:
            return reason
        attrs = attrs_of(call)
        canon = "NC" + _SPATIAL[nd]
        if attrs["data_layout"] != canon or attrs["kernel_layout"] != "OI" + _SPATIAL[nd]:
            return f"layouts {attrs['data_layout']}/{attrs['kernel_layout']}"
        if attrs["out_layout"] not in ("", canon):
            return f"out_layout {attrs['out_layout']!r}"
        x, w = (a._checked_type.shape for a in call.args[:2])  # qnn.conv2d has zero points after
        out = call._checked_type.shape
        groups = attrs["groups"]
        if groups < 1 or x[1] != w[1] * groups or w[0] % groups or out[:2] != (x[0], w[0]):
            return "channels and groups do not fit"
        if min(ints_n(attrs["strides"], nd, "s")) < 1 or min(ints_n(attrs["dilation"], nd, "d")) < 1:
            return "non-positive strides or dilation"
        return None

    return check


def _conv(nd: int):
    def fn(kb, call, outs, epilogue):
        if nd == 2 and _emit_tiled(kb, call, outs, epilogue):
            return
        x, w = call.args
        dt = outs[0].dt
        attrs = attrs_of(call)
        _conv_loops(kb, outs[0], kb.shape(x), kb.shape(w), attrs, _reader(kb, x, dt), _reader(kb, w, dt), epilogue, nd)

    return fn


def _conv_loops(kb, out: Buffer, xs: tuple, ws: tuple, attrs, rx, rw, epilogue, nd: int) -> None:
    """The direct convolution of ``NC...`` data and an ``OI...`` kernel read through
    ``rx`` / ``rw`` (flat offset -> value in ``out``'s dtype), zero padding; the epilogue
    runs on each finished output plane (qnn.conv2d shares these loops)."""
    dt = out.dt
    b = kb.builder
    strides = ints_n(attrs["strides"], nd, "strides")
    dilation = ints_n(attrs["dilation"], nd, "dilation")
    pads = pad_pairs(attrs["padding"], nd)
    groups = attrs["groups"]
    cg, og = ws[1], ws[0] // groups
    kernel = ws[2:]
    osp = out.shape[2:]
    plane = math.prod(osp)
    slot = _alloca(kb, dt.ir)
    sx = [math.prod(xs[2 + d + 1 :]) for d in range(nd)]
    with kb.loop(out.shape[0], "cn") as n:
        with kb.loop(out.shape[1], "co") as o:
            g = b.udiv(o, i64(og))
            with kb.nest(osp) as oi:
                b.store(zero(dt), slot)
                with kb.loop(cg, "cc") as c:
                    ch = b.add(b.mul(g, i64(cg)), c)
                    xbase = b.mul(b.add(b.mul(n, i64(xs[1])), ch), i64(math.prod(xs[2:])))
                    wbase = b.mul(b.add(b.mul(o, i64(cg)), c), i64(math.prod(kernel)))
                    with kb.nest(kernel) as ki:
                        ok, flat = None, xbase
                        for d in range(nd):
                            pos = b.add(b.mul(oi.dim(d), i64(strides[d])), b.mul(ki.dim(d), i64(dilation[d])))
                            pos = b.sub(pos, i64(pads[d][0]))
                            inside = b.icmp_unsigned("<", pos, i64(xs[2 + d]))
                            ok = inside if ok is None else b.and_(ok, inside)
                            flat = b.add(flat, b.mul(b.select(inside, pos, i64(0)), i64(sx[d])))
                        v = b.select(ok, rx(flat), zero(dt))
                        wv = rw(b.add(wbase, ki.flat()))
                        b.store(_mac(kb, b.load(slot, typ=dt.ir), v, wv, dt), slot)
                obase = b.mul(b.add(b.mul(n, i64(out.shape[1])), o), i64(plane))
                out.store_flat(b, b.add(obase, oi.flat()), b.load(slot, typ=dt.ir))
            if epilogue is not None and plane:
                obase = b.mul(b.add(b.mul(n, i64(out.shape[1])), o), i64(plane))
                epilogue(b, obase, i64(plane))


for _nd in (1, 2, 3):
    rule(f"nn.conv{_nd}d", kind="buffer", anchor=True, check=_conv_check(_nd))(_conv(_nd))


def _conv_transpose_check(nd: int):
    def check(call):
        reason = _numeric(call)
        if reason:
            return reason
        attrs = attrs_of(call)
        sp = _SPATIAL[nd]
        data, kernel = attrs["data_layout"], attrs["kernel_layout"]
        if data != "NC" + sp or kernel != "IO" + sp or attrs["out_layout"] not in ("", "NC" + sp):
            return f"layouts {attrs['data_layout']}/{attrs['kernel_layout']}"
        x, w = (a._checked_type.shape for a in call.args)
        groups = attrs["groups"]
        if groups < 1 or x[1] != w[0] or x[1] % groups:
            return "channels and groups do not fit"
        if min(ints_n(attrs["strides"], nd, "s")) < 1 or min(ints_n(attrs["dilation"], nd, "d")) < 1:
            return "non-positive strides or dilation"
        return None

    return check


def _conv_transpose(nd: int):
    def fn(kb, call, outs, epilogue):
        """``out[y] += x[iy] * w[ky]`` wherever ``y = iy * stride - pad + ky * dilation``: for
        each output pixel and tap, the input pixel is ``(y + pad - ky * d) / s`` when that
        divides exactly and lands inside the input (``output_padding`` only makes the
        output larger: those pixels gather like the others)."""
        x, w = call.args
        out = outs[0]
        dt = out.dt
        attrs = attrs_of(call)
        b = kb.builder
        xs, ws = kb.shape(x), kb.shape(w)
        strides = ints_n(attrs["strides"], nd, "strides")
        dilation = ints_n(attrs["dilation"], nd, "dilation")
        pads = pad_pairs(attrs["padding"], nd)
        groups = attrs["groups"]
        cg, og = xs[1] // groups, ws[1]
        kernel = ws[2:]
        rx, rw = _reader(kb, x, dt), _reader(kb, w, dt)
        osp = out.shape[2:]
        plane = math.prod(osp)
        sx = [math.prod(xs[2 + d + 1 :]) for d in range(nd)]
        slot = _alloca(kb, dt.ir)
        with kb.loop(out.shape[0], "tn") as n:
            with kb.loop(out.shape[1], "to") as o:
                g = b.udiv(o, i64(og))
                ol = b.urem(o, i64(og))
                with kb.nest(osp) as oi:
                    b.store(zero(dt), slot)
                    with kb.loop(cg, "tc") as c:
                        ch = b.add(b.mul(g, i64(cg)), c)
                        xbase = b.mul(b.add(b.mul(n, i64(xs[1])), ch), i64(math.prod(xs[2:])))
                        wbase = b.mul(b.add(b.mul(ch, i64(og)), ol), i64(math.prod(kernel)))
                        with kb.nest(kernel) as ki:
                            ok, flat = None, xbase
                            for d in range(nd):
                                t = b.sub(b.add(oi.dim(d), i64(pads[d][0])), b.mul(ki.dim(d), i64(dilation[d])))
                                q = b.sdiv(t, i64(strides[d]))
                                exact = b.icmp_signed("==", b.mul(q, i64(strides[d])), t)
                                inside = b.and_(exact, b.icmp_unsigned("<", q, i64(xs[2 + d])))
                                ok = inside if ok is None else b.and_(ok, inside)
                                flat = b.add(flat, b.mul(b.select(inside, q, i64(0)), i64(sx[d])))
                            v = b.select(ok, rx(flat), zero(dt))
                            b.store(_mac(kb, b.load(slot, typ=dt.ir), v, rw(b.add(wbase, ki.flat())), dt), slot)
                    obase = b.mul(b.add(b.mul(n, i64(out.shape[1])), o), i64(plane))
                    out.store_flat(b, b.add(obase, oi.flat()), b.load(slot, typ=dt.ir))
                if epilogue is not None and plane:
                    obase = b.mul(b.add(b.mul(n, i64(out.shape[1])), o), i64(plane))
                    epilogue(b, obase, i64(plane))

    return fn


for _nd in (1, 2, 3):
    rule(f"nn.conv{_nd}d_transpose", kind="buffer", anchor=True, check=_conv_transpose_check(_nd))(_conv_transpose(_nd))


__all__: list[str] = []
