"""``image.resize2d`` and ``nn.upsampling`` as index rules over static tap tables.

Shapes are static, so the taps of every output row and column — the input indices and
the interpolation weights — are computed at compile time by the interpreter's own
helper (:func:`relay_nb.op.impl.image._taps`) and embedded as constant arrays: the kernel
then blends exactly the values the interpreter blends, in the same order (the W taps of
each H tap, then the H taps), in the same float type.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
from llvmlite import ir

from ....op.impl._util import ints_n
from ....op.impl.image import _taps
from ....util import MEMORY_LIMIT
from .context import attrs_of
from .index import Index
from .rules import rule
from .scalar import convert
from .types import I64, dtype, i64

_counter = itertools.count()


def _table(kb, values: np.ndarray, ty: ir.Type) -> ir.GlobalVariable:
    """A private constant array in the kernel's module."""
    arr_t = ir.ArrayType(ty, len(values))
    g = ir.GlobalVariable(kb.module, arr_t, name=f"taps{next(_counter)}")
    g.linkage = "private"
    g.global_constant = True
    if isinstance(ty, ir.IntType):
        g.initializer = ir.Constant(arr_t, [ir.Constant(ty, int(v)) for v in values])
    else:
        g.initializer = ir.Constant(arr_t, [ir.Constant(ty, float(v)) for v in values])
    return g


def _lookup(kb, table: ir.GlobalVariable, ty: ir.Type, i: ir.Value) -> ir.Value:
    b = kb.builder
    return b.load(b.gep(table, [i64(0), i], inbounds=True, source_etype=table.value_type), typ=ty)


def _axis_tables(kb, taps, ft: np.dtype, weighted: bool):
    ftype = ir.FloatType() if ft == np.float32 else ir.DoubleType()
    out = []
    for idx, w in taps:
        it = _table(kb, np.asarray(idx, np.int64).reshape(-1), I64)
        wt = _table(kb, np.asarray(w, ft).reshape(-1), ftype) if (weighted and w is not None) else None
        out.append((it, wt))
    return out, ftype


def _resize_check(call):
    attrs = attrs_of(call)
    layout = attrs.get("layout", "NCHW")
    if sorted(layout) != sorted("NCHW") or len(layout) != 4:
        return f"layout {layout!r}"
    ty = call._checked_type
    if math.prod(ty.shape) * np.dtype(ty.dtype).itemsize > MEMORY_LIMIT:
        # its tap tables alone (one entry per output row and column) take minutes to emit;
        # the interpreter's impl refuses such a result at once, with the same message
        return "a result bigger than memory"
    return None


def _emit_resize(kb, call, index, size, method, mode, rounding, alpha, exclude, extrapolation, roi, out_dt):
    x = call.args[0]
    layout = attrs_of(call).get("layout", "NCHW")
    xshape = kb.shape(x)
    pos = [layout.index(c) for c in "NCHW"]
    h, w = xshape[pos[2]], xshape[pos[3]]
    oh, ow = size
    ft = np.dtype(np.float64) if kb.dt(x).name == "float64" else np.dtype(np.float32)
    roi = tuple(roi) if roi else (0.0, 0.0, 0.0, 0.0)
    args = (method, rounding, alpha, exclude)
    with np.errstate(all="ignore"):  # as the impl runs it (an empty axis divides by 0)
        ycoord, ytaps = _taps(oh, h, mode, *args, roi[0], roi[2], ft)
        xcoord, xtaps = _taps(ow, w, mode, *args, roi[1], roi[3], ft)
    weighted = method != "nearest_neighbor"
    ytab, ftype = _axis_tables(kb, ytaps, ft, weighted)
    xtab, _ = _axis_tables(kb, xtaps, ft, weighted)
    b = kb.builder
    oy, ox = index.dim(pos[2]), index.dim(pos[3])
    src_dt = kb.dt(x)
    work = dtype(ft.name) if weighted else src_dt
    acc_y = None
    for iy_tab, wy_tab in ytab:
        iy = _lookup(kb, iy_tab, I64, oy)
        acc_x = None
        for ix_tab, wx_tab in xtab:
            ix = _lookup(kb, ix_tab, I64, ox)
            dims = [None] * 4
            dims[pos[0]], dims[pos[1]], dims[pos[2]], dims[pos[3]] = index.dim(pos[0]), index.dim(pos[1]), iy, ix
            v = convert(kb, kb.value(x, Index(b, xshape, dims=dims)), src_dt, work)
            if wx_tab is not None:
                v = b.fmul(v, _lookup(kb, wx_tab, ftype, ox))
            acc_x = v if acc_x is None else b.fadd(acc_x, v)
        if wy_tab is not None:
            acc_x = b.fmul(acc_x, _lookup(kb, wy_tab, ftype, oy))
        acc_y = acc_x if acc_y is None else b.fadd(acc_y, acc_x)
    result = acc_y
    if mode == "tf_crop_and_resize":
        outside_y = (ycoord < 0) | (ycoord > h - 1)
        outside_x = (xcoord < 0) | (xcoord > w - 1)
        oyt = _table(kb, outside_y.astype(np.int64), I64)
        oxt = _table(kb, outside_x.astype(np.int64), I64)
        outside = b.icmp_unsigned("!=", b.or_(_lookup(kb, oyt, I64, oy), _lookup(kb, oxt, I64, ox)), i64(0))
        fill = convert(kb, ir.Constant(ir.DoubleType(), float(extrapolation)), dtype("float64"), work)
        result = b.select(outside, fill, result)
    return convert(kb, result, work, out_dt)


def _resize2d_check(call):
    reason = _resize_check(call)
    if reason:
        return reason
    attrs = attrs_of(call)
    if attrs["size"] is None:
        return "no size"
    shape = call.args[0]._checked_type.shape
    layout = attrs["layout"]
    h, w = shape[layout.index("H")], shape[layout.index("W")]
    oh, ow = ints_n(attrs["size"], 2, "size")
    if (h == 0 or w == 0) and oh * ow:
        return "resize of an empty image"
    return None


@rule("image.resize2d", check=_resize2d_check)
def _resize2d(kb, call, index, field):
    attrs = attrs_of(call)
    return _emit_resize(
        kb, call, index, ints_n(attrs["size"], 2, "size"), attrs["method"], attrs["coordinate_transformation_mode"],
        attrs["rounding_method"], attrs["cubic_alpha"], attrs["cubic_exclude"], attrs["extrapolation_value"],
        attrs["roi"], kb.dt(call),
    )  # fmt: skip


@rule("nn.upsampling", check=_resize_check)
def _upsampling(kb, call, index, field):
    """TVM's upsampling: resize2d to ``round(size * scale)`` with asymmetric coordinates."""
    attrs = attrs_of(call)
    layout = attrs["layout"]
    shape = kb.shape(call.args[0])
    h, w = shape[layout.index("H")], shape[layout.index("W")]
    size = (int(h * attrs["scale_h"] + 0.5), int(w * attrs["scale_w"] + 0.5))
    method = {"bilinear": "linear", "bicubic": "cubic"}.get(attrs["method"], attrs["method"])
    mode = "align_corners" if attrs["align_corners"] else "asymmetric"
    return _emit_resize(kb, call, index, size, method, mode, "", -0.5, 0, 0.0, None, kb.dt(call))


__all__: list[str] = []
