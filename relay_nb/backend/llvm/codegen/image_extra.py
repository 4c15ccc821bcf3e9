"""Index rules of ``image.crop_and_resize``, ``image.dilation2d`` and ``image.grid_sample``.

Each output element computes its source coordinates from its own position (and, for
crop_and_resize and grid_sample, from the boxes or the grid it reads at run time) with
the float operations of the interpreter (:mod:`relay_nb.op.impl.image_extra`) in the same
order and the same float type, so the results agree exactly.  Reads stay in bounds
whatever the data: coordinates are clamped (a float one converts with saturation, NaN to
0) and a select substitutes the value of a point outside the image.
"""

from __future__ import annotations

import itertools
import math

from llvmlite import ir

from ....op.impl._util import ints_n, pad_pairs
from .context import attrs_of
from .index import Index
from .injective import clamp
from .reduce import Reducer
from .rules import rule
from .scalar import convert
from .types import DType, dtype, i64

# --- shared scalar helpers ------------------------------------------------------------------------


def _float_type(kb, x) -> DType:
    """The interpreter computes in float64 for float64 data, else in float32."""
    return dtype("float64") if kb.dt(x).name == "float64" else dtype("float32")


def _fc(ft: DType, v: float) -> ir.Constant:
    return ir.Constant(ft.ir, float(v))


def _floor(kb, v: ir.Value, ft: DType) -> ir.Value:
    return kb.call(f"llvm.floor.{'f64' if ft.bits == 64 else 'f32'}", ft.ir, v)


def _fabs(kb, v: ir.Value, ft: DType) -> ir.Value:
    return kb.call(f"llvm.fabs.{'f64' if ft.bits == 64 else 'f32'}", ft.ir, v)


def _to_index(kb, v: ir.Value, ft: DType) -> ir.Value:
    """A float coordinate as an int64 (truncating, saturating, NaN -> 0, as numpy's cast
    of the values the interpreter casts)."""
    return convert(kb, v, ft, dtype("int64"))


def _layout_check(key: str, canon: str):
    def check(call):
        layout = attrs_of(call)[key]
        if sorted(layout) != sorted(canon) or len(layout) != len(canon):
            return f"{key} {layout!r}"
        return None

    return check


# --- crop_and_resize ------------------------------------------------------------------------------


def _box_coord(kb, start, end, n_in: int, n_out: int, step: ir.Value, ft: DType) -> ir.Value:
    """``_box_coords`` of the interpreter for one position ``step``, in the same order."""
    b = kb.builder
    span = _fc(ft, n_in - 1)
    if n_out == 1:
        return b.fmul(b.fmul(_fc(ft, 0.5), b.fadd(start, end)), span)
    s = b.sitofp(step, ft.ir)
    moved = b.fdiv(b.fmul(b.fmul(s, b.fsub(end, start)), span), _fc(ft, n_out - 1))
    return b.fadd(b.fmul(start, span), moved)


def _round_half_away(kb, v: ir.Value, ft: DType) -> ir.Value:
    b = kb.builder
    mag = _floor(kb, b.fadd(_fabs(kb, v, ft), _fc(ft, 0.5)), ft)
    return b.select(b.fcmp_ordered("<", v, _fc(ft, 0)), b.fneg(mag), mag)


@rule(
    "image.crop_and_resize",
    check=_layout_check("layout", "NCHW"),
    materialize=lambda call: True,  # every box index is checked, as the interpreter does
)
def _crop_and_resize(kb, call, index, field):
    data, boxes, indices = call.args
    attrs = attrs_of(call)
    layout = attrs["layout"]
    pos = [layout.index(c) for c in "NCHW"]
    xshape = kb.shape(data)
    n, h, w = xshape[pos[0]], xshape[pos[2]], xshape[pos[3]]
    ch, cw = ints_n(attrs["crop_size"], 2, "crop_size")
    ft = _float_type(kb, data)
    b = kb.builder
    box = index.dim(pos[0])
    bdt = kb.dt(boxes)

    def coord(k):
        return convert(kb, kb.value(boxes, Index(b, kb.shape(boxes), dims=[box, i64(k)])), bdt, ft)

    y1, x1, y2, x2 = (coord(k) for k in range(4))
    image = convert(kb, kb.value(indices, Index(b, kb.shape(indices), dims=[box])), kb.dt(indices), dtype("int64"))
    bad = b.icmp_unsigned(">=", image, i64(n))
    kb.report_error(f"box index {{detail}} is not an image index in [0, {n})", image, bad)
    image = b.select(bad, i64(0), image)
    ys = _box_coord(kb, y1, y2, h, ch, index.dim(pos[2]), ft)
    xs = _box_coord(kb, x1, x2, w, cw, index.dim(pos[3]), ft)
    src = kb.dt(data)

    def read(yy, xx):
        dims = [None] * 4
        dims[pos[0]], dims[pos[1]] = image, index.dim(pos[1])
        dims[pos[2]], dims[pos[3]] = clamp(b, yy, 0, h - 1), clamp(b, xx, 0, w - 1)
        return convert(kb, kb.value(data, Index(b, xshape, dims=dims)), src, ft)

    work = ft
    if h == 0 or w == 0:
        value = _fc(ft, 0)
    elif attrs["method"] == "nearest_neighbor":
        value = read(_to_index(kb, _round_half_away(kb, ys, ft), ft), _to_index(kb, _round_half_away(kb, xs, ft), ft))
    else:
        # the interpreter's fractions ``ys - y0`` (float minus int64) are float64, and so
        # is the blend: float32 data is blended in float64 too
        work = dtype("float64")
        fy0, fx0 = _floor(kb, ys, ft), _floor(kb, xs, ft)
        y0, x0 = _to_index(kb, fy0, ft), _to_index(kb, fx0, ft)
        fy, fx = (convert(kb, b.fsub(v, f0), ft, work) for v, f0 in ((ys, fy0), (xs, fx0)))
        one = _fc(work, 1)
        y1i, x1i = b.add(y0, i64(1)), b.add(x0, i64(1))

        def at(yy, xx):
            return convert(kb, read(yy, xx), ft, work)

        def blend(lo, hi, f):  # lo * (1 - f) + hi * f
            return b.fadd(b.fmul(lo, b.fsub(one, f)), b.fmul(hi, f))

        value = blend(blend(at(y0, x0), at(y0, x1i), fx), blend(at(y1i, x0), at(y1i, x1i), fx), fy)
    outside = b.or_(
        b.or_(b.fcmp_ordered("<", ys, _fc(ft, 0)), b.fcmp_ordered(">", ys, _fc(ft, h - 1))),
        b.or_(b.fcmp_ordered("<", xs, _fc(ft, 0)), b.fcmp_ordered(">", xs, _fc(ft, w - 1))),
    )
    fill = convert(kb, _fc(ft, attrs["extrapolation_value"]), ft, work)
    value = b.select(outside, fill, value)
    return convert(kb, value, work, kb.dt(call))


# --- dilation2d -----------------------------------------------------------------------------------


def _dilation_check(call):
    reason = _layout_check("data_layout", "NCHW")(call) or _layout_check("kernel_layout", "IHW")(call)
    if reason:
        return reason
    attrs = attrs_of(call)
    kl = attrs["kernel_layout"]
    wshape = call.args[1]._checked_type.shape
    taps = wshape[kl.index("H")] * wshape[kl.index("W")]
    if taps > 256:
        return f"a window of {taps} elements"
    if taps == 0:
        return "an empty window"
    if call._checked_type.dtype == "bool":
        return "bool operands"
    return None


@rule("image.dilation2d", check=_dilation_check)
def _dilation2d(kb, call, index, field):
    """``max over (i, j) of pad0(x)[n, c, y*s + i*d, x*s + j*d] + w[c, i, j]``: the window
    unrolled, as the static pools are."""
    data, weight = call.args
    attrs = attrs_of(call)
    dl, kl = attrs["data_layout"], attrs["kernel_layout"]
    dpos = [dl.index(c) for c in "NCHW"]
    kpos = [kl.index(c) for c in "IHW"]
    xshape, wshape = kb.shape(data), kb.shape(weight)
    sizes = [xshape[dpos[2]], xshape[dpos[3]]]
    kh, kw = wshape[kpos[1]], wshape[kpos[2]]
    strides = ints_n(attrs["strides"], 2, "strides")
    dilations = ints_n(attrs["dilations"], 2, "dilations")
    pads = pad_pairs(attrs["padding"], 2)
    dt = kb.dt(call)
    b = kb.builder
    n, c, oy, ox = (index.dim(p) for p in dpos)
    base = [b.sub(b.mul(o, i64(strides[d])), i64(pads[d][0])) for d, o in enumerate((oy, ox))]
    red = Reducer(kb, "max", dt, kh * kw)
    acc = None
    for i, j in itertools.product(range(kh), range(kw)):
        ok, dims = None, [None] * 4
        dims[dpos[0]], dims[dpos[1]] = n, c
        for d, k in ((0, i), (1, j)):
            at = b.add(base[d], i64(k * dilations[d])) if k else base[d]
            inside = b.icmp_unsigned("<", at, i64(sizes[d]))
            ok = inside if ok is None else b.and_(ok, inside)
            dims[dpos[2 + d]] = b.select(inside, at, i64(0)) if sizes[d] else i64(0)
        if math.prod(sizes):
            v = convert(kb, kb.value(data, Index(b, xshape, dims=dims)), kb.dt(data), dt)
            v = b.select(ok, v, ir.Constant(dt.ir, 0))  # pad0: the padding reads 0
        else:
            v = ir.Constant(dt.ir, 0)
        wdims = [None] * 3
        wdims[kpos[0]], wdims[kpos[1]], wdims[kpos[2]] = c, i64(i), i64(j)
        wv = convert(kb, kb.value(weight, Index(b, wshape, dims=wdims)), kb.dt(weight), dt)
        v = b.fadd(v, wv) if dt.is_float else b.add(v, wv)
        acc = v if acc is None else red.combine(acc, v)
    return acc


# --- grid_sample --------------------------------------------------------------------------------


def _grid_check(call):
    if call._checked_type.dtype == "bool":
        return "bool operands"
    return None


class _Sampler:
    """The interpreter's grid_sample arithmetic for one output element (``image_extra``:
    ``_unnormalize``, ``_reflect``, ``_pad_coord``, ``_read_zero``), in its float types:
    coordinates in ``ft``, fractions and blending in float64 (``c - int64`` is float64 in
    numpy)."""

    def __init__(self, kb, call, index):
        self.kb, self.b = kb, kb.builder
        self.data, grid = call.args
        attrs = attrs_of(call)
        self.align, self.mode = attrs["align_corners"], attrs["padding_mode"]
        self.xshape = kb.shape(self.data)
        self.nd = len(self.xshape) - 2
        self.sizes = self.xshape[2:]
        self.ft = _float_type(kb, self.data)
        self.f64 = dtype("float64")
        self.index = index
        b, ft = self.b, self.ft
        out = index.dims()
        self.raw = []
        for a in range(self.nd):
            g = kb.value(grid, Index(b, kb.shape(grid), dims=[out[0], i64(self.nd - 1 - a), *out[2:]]))
            v = b.fadd(convert(kb, g, kb.dt(grid), ft), _fc(ft, 1))
            n = self.sizes[a]
            if self.align:
                self.raw.append(b.fdiv(b.fmul(v, _fc(ft, n - 1)), _fc(ft, 2)))
            else:
                self.raw.append(b.fadd(_fc(ft, -0.5), b.fdiv(b.fmul(v, _fc(ft, n)), _fc(ft, 2))))

    def pad(self, v: ir.Value, size: int) -> ir.Value:
        """``_pad_coord``: reflect, then clamp, as the padding mode says."""
        b, ft = self.b, self.ft
        if self.mode == "reflection":
            v = self._reflect(v, size)
        if self.mode in ("reflection", "border"):
            v = b.select(b.fcmp_ordered("<", v, _fc(ft, 0)), _fc(ft, 0), v)
            v = b.select(b.fcmp_ordered(">", v, _fc(ft, size - 1)), _fc(ft, size - 1), v)
        return v

    def _reflect(self, v: ir.Value, size: int) -> ir.Value:
        b, ft, kb = self.b, self.ft, self.kb
        span, start = (size - 1, 0.0) if self.align else (size, -0.5)
        if span <= 0:
            return _fc(ft, 0)
        inside = b.and_(b.fcmp_ordered(">=", v, _fc(ft, start)), b.fcmp_ordered("<=", v, _fc(ft, span + start)))
        suffix = "f64" if ft.bits == 64 else "f32"
        dist = _fabs(kb, b.fsub(_fc(ft, start), v), ft)
        times = b.sdiv(_to_index(kb, kb.call(f"llvm.trunc.{suffix}", ft.ir, dist), ft), i64(span))
        f64 = self.f64
        extra = b.fsub(convert(kb, dist, ft, f64), b.sitofp(b.mul(times, i64(span)), f64.ir))
        even = b.icmp_signed("==", b.srem(times, i64(2)), i64(0))
        flipped = b.select(
            even, b.fadd(extra, _fc(f64, start)), b.fadd(b.fsub(_fc(f64, span), extra), _fc(f64, start))
        )
        return b.select(inside, v, convert(kb, flipped, f64, ft))

    def read(self, points: list) -> ir.Value:
        """``_read_zero``: the data at integer ``points`` (one per spatial axis), 0 outside."""
        b = self.b
        ok, dims = None, list(self.index.dims()[:2])
        for p, n in zip(points, self.sizes):
            inside = b.icmp_unsigned("<", p, i64(n))
            ok = inside if ok is None else b.and_(ok, inside)
            dims.append(b.select(inside, p, i64(0)))
        if not math.prod(self.sizes):
            return _fc(self.ft, 0)
        v = convert(self.kb, self.kb.value(self.data, Index(b, self.xshape, dims=dims)), self.kb.dt(self.data), self.ft)
        return b.select(ok, v, _fc(self.ft, 0))

    def floor(self, c: ir.Value) -> tuple[ir.Value, ir.Value]:
        """``(int64 floor, float64 fraction)`` of a coordinate."""
        b, kb = self.b, self.kb
        fl = _floor(kb, c, self.ft)
        return self._int(fl), b.fsub(convert(kb, c, self.ft, self.f64), convert(kb, fl, self.ft, self.f64))

    def _int(self, v: ir.Value) -> ir.Value:
        """numpy's int64 cast of a float coordinate, with NaN (and values out of the int64
        range, which numpy makes the minimum) far outside any axis."""
        b, ft = self.b, self.ft
        bad = b.or_(b.fcmp_unordered("uno", v, v), b.fcmp_ordered(">=", _fabs(self.kb, v, ft), _fc(ft, 2.0**62)))
        return b.select(bad, i64(-(2**62)), _to_index(self.kb, v, ft))


def _cubic_weights(b, t: ir.Value) -> list:
    """PyTorch's A = -0.75 cubic weights of the interpreter, in float64 and its order."""
    f64 = dtype("float64")
    a = -0.75

    def c(v):
        return _fc(f64, v)

    def near(f):  # ((a + 2) * f - (a + 3)) * f * f + 1
        return b.fadd(b.fmul(b.fmul(b.fsub(b.fmul(c(a + 2), f), c(a + 3)), f), f), c(1))

    def far(f):  # ((a * f - 5 a) * f + 8 a) * f - 4 a
        return b.fsub(b.fmul(b.fadd(b.fmul(b.fsub(b.fmul(c(a), f), c(5 * a)), f), c(8 * a)), f), c(4 * a))

    return [far(b.fadd(t, c(1))), near(t), near(b.fsub(c(1), t)), far(b.fsub(c(2), t))]


@rule("image.grid_sample", check=_grid_check)
def _grid_sample(kb, call, index, field):
    s = _Sampler(kb, call, index)
    b, ft, f64 = s.b, s.ft, s.f64
    method = attrs_of(call)["method"]

    def term(acc, value, weight):  # acc + value * weight, from numpy's ``result = 0``
        return b.fadd(acc, b.fmul(convert(kb, value, ft, f64), weight))

    if method == "nearest":
        coords = [s.pad(c, n) for c, n in zip(s.raw, s.sizes)]
        suffix = "f64" if ft.bits == 64 else "f32"
        value = s.read([s._int(kb.call(f"llvm.roundeven.{suffix}", ft.ir, c)) for c in coords])
        return convert(kb, value, ft, kb.dt(call))
    result = _fc(f64, 0)
    if method == "bicubic":
        (y, x), (h, w) = s.raw, s.sizes
        (y0, ty), (x0, tx) = s.floor(y), s.floor(x)
        wy, wx = _cubic_weights(b, ty), _cubic_weights(b, tx)
        for i in range(4):
            row = s._int(s.pad(b.sitofp(b.add(y0, i64(i - 1)), ft.ir), h))
            line = _fc(f64, 0)
            for j in range(4):
                col = s._int(s.pad(b.sitofp(b.add(x0, i64(j - 1)), ft.ir), w))
                line = term(line, s.read([row, col]), wx[j])
            result = b.fadd(result, b.fmul(line, wy[i]))
        return convert(kb, result, f64, kb.dt(call))
    coords = [s.pad(c, n) for c, n in zip(s.raw, s.sizes)]
    lows, fracs = zip(*(s.floor(c) for c in coords))
    one = _fc(f64, 1)
    for corner in itertools.product(range(2), repeat=s.nd):
        weight = None
        for f, bit in zip(fracs, corner):
            w = f if bit else b.fsub(one, f)
            weight = w if weight is None else b.fmul(weight, w)
        points = [b.add(lo, i64(bit)) if bit else lo for lo, bit in zip(lows, corner)]
        result = term(result, s.read(points), weight)
    return convert(kb, result, f64, kb.dt(call))


__all__: list[str] = []
