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
    mag = _floor(kb, b.fadd(kb.call(f"llvm.fabs.{'f64' if ft.bits == 64 else 'f32'}", ft.ir, v), _fc(ft, 0.5)), ft)
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


__all__: list[str] = []
