"""``image.resize1d``, ``image.resize3d``, ``nn.upsampling3d`` and ``image.affine_grid`` as
index rules.  The resizes are the n-d form of :mod:`.image`'s 2-d resize, with the same static tap tables (computed by the
interpreter's own helper) and the same blending order -- the innermost axis first, each
outer tap weighting the sum of the inner ones -- so results match the interpreter bit for bit.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir

from ....op.impl._util import ints_n
from ....op.impl.image import _taps
from .context import attrs_of
from .image import _axis_tables, _lookup, _table
from .index import Index
from .injective import sub_index
from .rules import rule
from .scalar import convert
from .types import I64, dtype, i64


def _emit(kb, call, index, spatial, size, method, mode, rounding, alpha, exclude, extrap, roi):
    x = call.args[0]
    layout = attrs_of(call)["layout"]
    xshape = kb.shape(x)
    nd = len(spatial)
    pos = [layout.index(c) for c in "NC" + spatial]
    ft = np.dtype(np.float64) if kb.dt(x).name == "float64" else np.dtype(np.float32)
    roi = tuple(roi) if roi else (0.0,) * (2 * nd)
    weighted = method != "nearest_neighbor"
    coords, tables = [], []
    for k in range(nd):
        coord, taps = _taps(size[k], xshape[pos[2 + k]], mode, method, rounding, alpha, exclude,
                            roi[k], roi[k + nd], ft)  # fmt: skip
        coords.append(coord)
        tables.append(_axis_tables(kb, taps, ft, weighted))
    ftype = tables[0][1]
    b = kb.builder
    src_dt = kb.dt(x)
    work = dtype(ft.name) if weighted else src_dt
    outs = [index.dim(p) for p in pos[2:]]

    def blend(level, picked):
        acc = None
        for idx_tab, w_tab in tables[level][0]:
            i = _lookup(kb, idx_tab, I64, outs[level])
            if level == nd - 1:
                dims = [None] * (nd + 2)
                dims[pos[0]], dims[pos[1]] = index.dim(pos[0]), index.dim(pos[1])
                for p, v in zip(pos[2:], picked + [i]):
                    dims[p] = v
                v = convert(kb, kb.value(x, Index(b, xshape, dims=dims)), src_dt, work)
            else:
                v = blend(level + 1, picked + [i])
            if w_tab is not None:
                v = b.fmul(v, _lookup(kb, w_tab, ftype, outs[level]))
            acc = v if acc is None else b.fadd(acc, v)
        return acc

    result = blend(0, [])
    if mode == "tf_crop_and_resize":
        outside = None
        for k in range(nd):
            flags = (coords[k] < 0) | (coords[k] > xshape[pos[2 + k]] - 1)
            flag = _lookup(kb, _table(kb, flags.astype(np.int64), I64), I64, outs[k])
            outside = flag if outside is None else b.or_(outside, flag)
        fill = convert(kb, ir.Constant(ir.DoubleType(), float(extrap)), dtype("float64"), work)
        result = b.select(b.icmp_unsigned("!=", outside, i64(0)), fill, result)
    return convert(kb, result, work, kb.dt(call))


def _check(spatial):
    def check(call):
        attrs = attrs_of(call)
        layout = attrs["layout"]
        if sorted(layout) != sorted("NC" + spatial):
            return f"layout {layout!r}"
        shape = call.args[0]._checked_type.shape
        if "size" in attrs and attrs["size"] is None:
            return "no size"
        if 0 in [shape[layout.index(a)] for a in spatial]:
            return "resize of an empty image"
        return None

    return check


def _resize_rule(spatial):
    def lower(kb, call, index, field):
        a = attrs_of(call)
        return _emit(kb, call, index, spatial, ints_n(a["size"], len(spatial), "size"),
                     a["method"], a["coordinate_transformation_mode"], a["rounding_method"],
                     a["cubic_alpha"], a["cubic_exclude"], a["extrapolation_value"],
                     a["roi"])  # fmt: skip

    return lower


rule("image.resize1d", check=_check("W"))(_resize_rule("W"))
rule("image.resize3d", check=_check("DHW"))(_resize_rule("DHW"))


@rule("nn.upsampling3d", check=_check("DHW"))
def _upsampling3d(kb, call, index, field):
    """Resize to ``round(size * scale)`` per axis, as the interpreter does."""
    a = attrs_of(call)
    layout = a["layout"]
    shape = kb.shape(call.args[0])
    size = [int(shape[layout.index(c)] * a["scale_" + c.lower()] + 0.5) for c in "DHW"]
    method = {"trilinear": "linear"}.get(a["method"], a["method"])
    return _emit(kb, call, index, "DHW", size, method, a["coordinate_transformation_mode"], "",
                 -0.5, 0, 0.0, None)  # fmt: skip



def _affine_check(call):
    dt = call._checked_type.dtype
    return None if dt in ("float32", "float64") else f"affine_grid of {dt}"


@rule("image.affine_grid", check=_affine_check)
def _affine_grid(kb, call, index, field):
    """``theta[n, d, 0] * x_j + theta[n, d, 1] * y_i + theta[n, d, 2]`` with ``x_j = -1 + j *
    step_w`` computed in the output's float type, in the interpreter's order."""
    theta = call.args[0]
    h, w = attrs_of(call)["target_shape"]
    dt = kb.dt(call)
    b = kb.builder
    n, d, i, j = index.dims()

    def point(k, size):
        step = ir.Constant(dt.ir, float(np.dtype(dt.name).type((2.0 - 1e-7) / (size - 1))))
        return b.fadd(ir.Constant(dt.ir, -1.0), b.fmul(b.sitofp(k, dt.ir), step))

    def coef(k):
        sub = sub_index(kb, index, ("affine", call, k), kb.shape(theta), [n, d, i64(k)])
        return convert(kb, kb.value(theta, sub), kb.dt(theta), dt)

    xy = b.fadd(b.fmul(coef(0), point(j, w)), b.fmul(coef(1), point(i, h)))
    return b.fadd(xy, coef(2))


__all__: list[str] = []
