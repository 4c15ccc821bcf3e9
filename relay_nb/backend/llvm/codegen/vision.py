"""Index rules of ``vision.yolo_reorg``, ``vision.roi_align`` and ``vision.roi_pool``.

``vision.yolo_reorg``, the one injective vision op: darknet's reorg reads
the input as an ``(N, C / s^2, H*s, W*s)`` tensor at coordinates computed from the output
element's position in input order, so it lowers to index arithmetic like a transpose."""

from __future__ import annotations

from .context import attrs_of
from .index import Index, reshaped
from .rules import rule
from .types import i64


def _reorg_check(call):
    n, c, h, w = call.args[0]._checked_type.shape
    s = attrs_of(call)["stride"]
    if s < 1 or c % (s * s) or h % s or w % s:
        return f"shape {(n, c, h, w)} does not divide by stride {s}"
    return None


@rule("vision.yolo_reorg", check=_reorg_check)
def _yolo_reorg(kb, call, index, field):
    arg = call.args[0]
    n, c, h, w = kb.shape(arg)
    s = attrs_of(call)["stride"]
    oc = c // (s * s)
    b = kb.builder
    # output element f is element (bi, k, j, i) of the input-shaped (n, c, h, w) ordering
    bi, k, j, i = reshaped(index, (n, c, h, w)).dims()
    offset = b.udiv(k, i64(oc))
    h2 = b.add(b.mul(j, i64(s)), b.udiv(offset, i64(s)))
    w2 = b.add(b.mul(i, i64(s)), b.urem(offset, i64(s)))
    view = index.derived(
        ("reorg", call),
        lambda: Index(b, (n, oc, h * s, w * s), dims=[bi, b.urem(k, i64(oc)), h2, w2]),
    )
    return kb.value(arg, reshaped(view, (n, c, h, w)))


# --- ROI align and ROI pool -----------------------------------------------------------------------
# Index rules whose windows are run-time loops: a bin's sampling grid (roi_align with
# sample_ratio <= 0) and pooling window (roi_pool) depend on the ROI's values.  The float
# operations are the interpreter's (``op/impl/vision.py``, topi's float32), in its order.

from llvmlite import ir  # noqa: E402

from .reduce import Reducer, _alloca  # noqa: E402
from .scalar import convert  # noqa: E402
from .types import DType, dtype  # noqa: E402

_F32 = dtype("float32")


def _f(v: float) -> ir.Constant:
    return ir.Constant(ir.FloatType(), float(v))


def _roi_check(call):
    attrs = attrs_of(call)
    if attrs["layout"] not in ("NCHW", "NHWC"):
        return f"layout {attrs['layout']!r}"
    if call.op.name == "vision.roi_align" and attrs["mode"] not in ("avg", "max"):
        return f"mode {attrs['mode']!r}"
    if call._checked_type.dtype == "bool":
        return "bool data"
    return None


class _Roi:
    """One output element's ROI: its image (checked), and the reads of that image."""

    def __init__(self, kb, call, index):
        self.kb, self.b = kb, kb.builder
        self.data, rois = call.args
        layout = attrs_of(call)["layout"]
        self.pos = [layout.index(c) for c in "NCHW"]
        self.xshape = kb.shape(self.data)
        n = self.xshape[self.pos[0]]
        self.h, self.w = self.xshape[self.pos[2]], self.xshape[self.pos[3]]
        self.r, self.c = index.dim(self.pos[0]), index.dim(self.pos[1])
        self.ph, self.pw = index.dim(self.pos[2]), index.dim(self.pos[3])
        b = self.b
        rdt = kb.dt(rois)
        self.roi = [
            convert(kb, kb.value(rois, Index(b, kb.shape(rois), dims=[self.r, i64(k)])), rdt, _F32) for k in range(5)
        ]
        # int(roi[0]) indexes the batch as Python does: a negative index counts from the end
        image = convert(kb, self.roi[0], _F32, dtype("int64"))
        image = b.select(b.icmp_signed("<", image, i64(0)), b.add(image, i64(n)), image)
        bad = b.icmp_unsigned(">=", image, i64(n))
        kb.report_error(f"ROI batch index {{detail}} is out of range for {n} images", image, bad)
        self.image = b.select(bad, i64(0), image)

    def read(self, y: ir.Value, x: ir.Value, dt: DType) -> ir.Value:
        dims = [None] * 4
        dims[self.pos[0]], dims[self.pos[1]], dims[self.pos[2]], dims[self.pos[3]] = self.image, self.c, y, x
        v = self.kb.value(self.data, Index(self.b, self.xshape, dims=dims))
        return convert(self.kb, v, self.kb.dt(self.data), dt)


def _floor32(kb, v):
    return kb.call("llvm.floor.f32", ir.FloatType(), v)


def _select_max(b, a, v):
    """np.maximum of float32 values: NaN from either side wins."""
    better = b.or_(b.fcmp_ordered(">", v, a), b.fcmp_unordered("uno", v, v))
    return b.select(better, v, a)


def _bilinear(kb, roi: _Roi, y: ir.Value, x: ir.Value) -> ir.Value:
    """topi's bilinear_sample_nchw at (y, x) (already clamped into the image), the four taps
    in its order, taps outside the image counting 0."""
    b, h, w = kb.builder, roi.h, roi.w
    i64t = dtype("int64")
    yl, xl = (convert(kb, _floor32(kb, v), _F32, i64t) for v in (y, x))
    wyh = b.fsub(y, b.sitofp(yl, ir.FloatType()))
    wxh = b.fsub(x, b.sitofp(xl, ir.FloatType()))
    val = _f(0)
    for wx, xp in ((b.fsub(_f(1), wxh), xl), (wxh, b.add(xl, i64(1)))):
        for wy, yp in ((b.fsub(_f(1), wyh), yl), (wyh, b.add(yl, i64(1)))):
            oky, okx = b.icmp_unsigned("<", yp, i64(h)), b.icmp_unsigned("<", xp, i64(w))
            tap = roi.read(b.select(oky, yp, i64(0)), b.select(okx, xp, i64(0)), _F32)
            val = b.fadd(val, b.select(b.and_(oky, okx), b.fmul(b.fmul(wy, wx), tap), _f(0)))
    return val


@rule("vision.roi_align", check=_roi_check, materialize=lambda call: True)  # every ROI checked
def _roi_align(kb, call, index, field):
    attrs = attrs_of(call)
    roi = _Roi(kb, call, index)
    b = kb.builder
    ph_n, pw_n = attrs["pooled_size"]
    scale = _f(attrs["spatial_scale"])
    ratio, avg = attrs["sample_ratio"], attrs["mode"] == "avg"
    h, w = roi.h, roi.w
    sw, sh, ew, eh = (b.fmul(v, scale) for v in roi.roi[1:5])

    def at_least_one(v):  # Python's max(v, 1.0): NaN stays
        return b.select(b.fcmp_ordered("<", v, _f(1)), _f(1), v)

    rh, rw = at_least_one(b.fsub(eh, sh)), at_least_one(b.fsub(ew, sw))
    bh, bw = b.fdiv(rh, _f(ph_n)), b.fdiv(rw, _f(pw_n))
    i64t = dtype("int64")
    if ratio > 0:
        gh = gw = i64(ratio)
    else:
        gh, gw = (convert(kb, kb.call("llvm.ceil.f32", ir.FloatType(), v), _F32, i64t) for v in (bh, bw))
    count = b.sitofp(b.mul(gh, gw), ir.FloatType())
    y0 = b.fadd(sh, b.fmul(b.sitofp(roi.ph, ir.FloatType()), bh))
    x0 = b.fadd(sw, b.fmul(b.sitofp(roi.pw, ir.FloatType()), bw))
    fgh, fgw = b.sitofp(gh, ir.FloatType()), b.sitofp(gw, ir.FloatType())
    slot, first = _alloca(kb, ir.FloatType()), _alloca(kb, ir.IntType(1))
    b.store(_f(0), slot)
    b.store(ir.Constant(ir.IntType(1), 1), first)
    with kb.loop(gh, "ry") as iy:
        y = b.fadd(y0, b.fdiv(b.fmul(b.fadd(b.sitofp(iy, ir.FloatType()), _f(0.5)), bh), fgh))
        out_y = b.or_(b.fcmp_ordered("<", y, _f(-1)), b.fcmp_ordered(">", y, _f(h)))
        yc = _clamp32(b, y, h - 1)
        with kb.loop(gw, "rx") as ix:
            x = b.fadd(x0, b.fdiv(b.fmul(b.fadd(b.sitofp(ix, ir.FloatType()), _f(0.5)), bw), fgw))
            outside = b.or_(out_y, b.or_(b.fcmp_ordered("<", x, _f(-1)), b.fcmp_ordered(">", x, _f(w))))
            v = b.select(outside, _f(0), _bilinear(kb, roi, yc, _clamp32(b, x, w - 1)))
            acc = b.load(slot, typ=ir.FloatType())
            is_first = b.load(first, typ=ir.IntType(1))
            if avg:
                v = b.fdiv(v, count)
                new = b.select(is_first, v, b.fadd(acc, v))
            else:
                new = b.select(is_first, v, _select_max(b, acc, v))
            b.store(new, slot)
            b.store(ir.Constant(ir.IntType(1), 0), first)
    return convert(kb, b.load(slot, typ=ir.FloatType()), _F32, kb.dt(call))


def _clamp32(b, v, hi: int):
    """np.minimum(np.maximum(v, 0), hi) in float32 (NaN propagates)."""
    v = b.select(b.fcmp_unordered("uno", v, v), v, b.select(b.fcmp_ordered("<", v, _f(0)), _f(0), v))
    return b.select(b.fcmp_ordered(">", v, _f(hi)), _f(hi), v)


def _round_away(kb, v32: ir.Value) -> ir.Value:
    """``floor(|v| + 0.5) * sign(v)`` in float64 (the interpreter's Python float), as int64."""
    b = kb.builder
    d = b.fpext(v32, ir.DoubleType())
    mag = kb.call("llvm.floor.f64", ir.DoubleType(), b.fadd(kb.call("llvm.fabs.f64", ir.DoubleType(), d), ir.Constant(ir.DoubleType(), 0.5)))
    m = convert(kb, mag, dtype("float64"), dtype("int64"))
    return b.select(b.fcmp_ordered(">=", d, ir.Constant(ir.DoubleType(), 0.0)), m, b.neg(m))


def _smin(b, a, v):
    return b.select(b.icmp_signed("<", a, v), a, v)


def _smax(b, a, v):
    return b.select(b.icmp_signed(">", a, v), a, v)


@rule("vision.roi_pool", check=_roi_check, materialize=lambda call: True)
def _roi_pool(kb, call, index, field):
    attrs = attrs_of(call)
    roi = _Roi(kb, call, index)
    b = kb.builder
    ph_n, pw_n = attrs["pooled_size"]
    scale = _f(attrs["spatial_scale"])
    sw, sh, ew, eh = (_round_away(kb, b.fmul(v, scale)) for v in roi.roi[1:5])
    rh = _smax(b, b.add(b.sub(eh, sh), i64(1)), i64(1))
    rw = _smax(b, b.add(b.sub(ew, sw), i64(1)), i64(1))
    bh = b.fdiv(b.sitofp(rh, ir.FloatType()), _f(ph_n))
    bw = b.fdiv(b.sitofp(rw, ir.FloatType()), _f(pw_n))
    eps = _f(1e-5)
    i64t = dtype("int64")

    def edge(p, bin_, start, size, lo: bool):
        """``min(max(floor(p * bin + eps) + start, 0), size)`` (``ceil(... - eps)`` for the end)."""
        t = b.fmul(b.sitofp(p, ir.FloatType()), bin_)
        t = _floor32(kb, b.fadd(t, eps)) if lo else kb.call("llvm.ceil.f32", ir.FloatType(), b.fsub(t, eps))
        return _smin(b, _smax(b, b.add(convert(kb, t, _F32, i64t), start), i64(0)), i64(size))

    hs, he = edge(roi.ph, bh, sh, roi.h, True), edge(b.add(roi.ph, i64(1)), bh, sh, roi.h, False)
    ws, we = edge(roi.pw, bw, sw, roi.w, True), edge(b.add(roi.pw, i64(1)), bw, sw, roi.w, False)
    dt = kb.dt(call)
    red = Reducer(kb, "max", dt, 1)
    slot = _alloca(kb, dt.ir)
    b.store(red.identity(), slot)
    with kb.loop(he, "py", start=hs) as y:
        with kb.loop(we, "px", start=ws) as x:
            b.store(red.combine(b.load(slot, typ=dt.ir), roi.read(y, x, dt)), slot)
    empty = b.or_(b.icmp_signed(">=", hs, he), b.icmp_signed(">=", ws, we))
    return b.select(empty, ir.Constant(dt.ir, 0), b.load(slot, typ=dt.ir))
