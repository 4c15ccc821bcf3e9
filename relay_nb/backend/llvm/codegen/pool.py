"""Rules of the pools.

Pools with a static window (``max_pool2d``...) are index rules: the window is unrolled and
masked with selects, so a pool fuses with its epilogue into one loop.  Global and adaptive
pools are buffer rules with loops (their windows can be the whole image).  Layouts other
than ``NC...`` are read through a permutation.  Semantics are the interpreter's: max pools
pad with the dtype's lowest value and propagate NaN, average pools divide by the count of
window positions inside the input (or the padded input with ``count_include_pad``).
"""

from __future__ import annotations

import itertools
import math

from llvmlite import ir

from ....op.impl._util import ints_n, pad_pairs
from .context import Buffer, attrs_of
from .index import Index
from .reduce import Reducer, _alloca, _slot_load, _slot_store, emit_reduce
from .rules import rule
from .scalar import convert, int_divide, plus
from .types import I64, DType, Unsupported, i64, lowest, zero

_SPATIAL = {1: "W", 2: "HW", 3: "DHW"}


def _perm(layout: str, canonical: str) -> list[int]:
    """Positions in ``layout`` of each canonical axis (``NHWC`` vs ``NCHW`` -> [0, 3, 1, 2])."""
    if sorted(layout) != sorted(canonical) or len(layout) != len(canonical):
        raise Unsupported(f"layout {layout!r}")
    return [layout.index(c) for c in canonical]


def _layout_check(nd: int, key: str = "layout"):
    def check(call):
        attrs = attrs_of(call)
        canon = "NC" + _SPATIAL[nd]
        for k in (key, "out_layout"):
            v = attrs.get(k) or attrs[key]
            if sorted(v) != sorted(canon) or len(v) != len(canon):
                return f"{k} {v!r}"
        return None

    return check


# --- pools with a static window: index rules ------------------------------------------------------


def _pool_check(nd: int):
    layout_check = _layout_check(nd)

    def check(call):
        reason = layout_check(call)
        if reason:
            return reason
        attrs = attrs_of(call)
        pool = ints_n(attrs["pool_size"], nd, "pool_size")
        if math.prod(pool) > 256:
            return f"a pool window of {math.prod(pool)} elements"
        if min(pool) < 1 or min(ints_n(attrs["strides"], nd, "s")) < 1 or min(ints_n(attrs["dilation"], nd, "d")) < 1:
            return "non-positive pool_size, strides or dilation"
        return None

    return check


def _window(call) -> float:
    """A pool's work per output element in elementwise ops: a fifth of its window (a
    3x3 max_pool2d measured 0.18 ns per window element, beside ~1 ns for an ``add``)."""
    return 0.2 * math.prod(int(p) for p in attrs_of(call)["pool_size"])


def _pool(nd: int, kind: str):
    def fn(kb, call, index, field):
        x = call.args[0]
        return _pool_value(kb, call, index, nd, kind, kb.dt(call), lambda xi: kb.value(x, xi))

    return fn


def _pool_value(kb, call, index, nd: int, kind: str, dt: DType, read) -> ir.Value:
    """The pool's element at ``index``: the window over ``read(input index)`` (values in
    ``dt``), reduced by max or averaged (qnn.avg_pool2d reads requantized values)."""
    canon = "NC" + _SPATIAL[nd]
    x = call.args[0]
    attrs = attrs_of(call)
    layout = attrs["layout"]
    in_pos = _perm(layout, canon)
    out_pos = _perm(attrs["out_layout"] or layout, canon)
    xshape = kb.shape(x)
    sizes = [xshape[p] for p in in_pos][2:]
    pool = ints_n(attrs["pool_size"], nd, "pool_size")
    strides = ints_n(attrs["strides"], nd, "strides")
    dilation = ints_n(attrs["dilation"], nd, "dilation")
    pads = pad_pairs(attrs["padding"], nd)
    include_pad = attrs.get("count_include_pad", False)
    b = kb.builder
    oc = [index.dim(p) for p in out_pos]
    base = [b.sub(b.mul(oc[2 + d], i64(strides[d])), i64(pads[d][0])) for d in range(nd)]
    # per axis and window offset: the input coordinate and whether it is inside
    coords, inside, counted = [], [], []
    for d in range(nd):
        cs, ins, cnt = [], [], []
        for k in range(pool[d]):
            c = b.add(base[d], i64(k * dilation[d])) if k else base[d]
            ok = b.icmp_unsigned("<", c, i64(sizes[d]))
            cs.append(b.select(ok, c, i64(0)) if sizes[d] else i64(0))
            ins.append(ok)
            if include_pad:  # inside the input plus the user's padding
                lo_ok = b.icmp_signed(">=", c, i64(-pads[d][0]))
                hi_ok = b.icmp_signed("<", c, i64(sizes[d] + pads[d][1]))
                cnt.append(b.and_(lo_ok, hi_ok))
            else:
                cnt.append(ok)
        coords.append(cs)
        inside.append(ins)
        counted.append(cnt)
    if kind == "max":
        acc = ir.Constant(dt.ir, float("-inf")) if dt.is_float else lowest(dt)
    else:
        acc = zero(dt)
    red = Reducer(kb, "max" if kind == "max" else "sum", dt, 1)
    for ks in itertools.product(*(range(p) for p in pool)):
        dims = [None] * (2 + nd)
        dims[in_pos[0]], dims[in_pos[1]] = oc[0], oc[1]
        ok = None
        for d, k in enumerate(ks):
            dims[in_pos[2 + d]] = coords[d][k]
            ok = inside[d][k] if ok is None else b.and_(ok, inside[d][k])
        if any(s == 0 for s in sizes):
            v = lowest(dt) if kind == "max" else zero(dt)
        else:
            v = read(Index(b, xshape, dims=dims))
            v = b.select(ok, v, lowest(dt) if kind == "max" else zero(dt))
        acc = red.combine(acc, v) if kind == "max" else plus(kb, acc, v, dt)
    if kind == "max" or dt.kind == "b":  # a bool average is the OR of the window, as in sum
        return acc
    count = None
    for d in range(nd):
        n_d = None
        for ok in counted[d]:
            one = b.zext(ok, I64)
            n_d = one if n_d is None else b.add(n_d, one)
        count = n_d if count is None else b.mul(count, n_d)
    count = b.select(b.icmp_signed("<", count, i64(1)), i64(1), count)
    if dt.is_float:
        return b.fdiv(acc, b.sitofp(count, dt.ir))
    return int_divide(kb, acc, b.trunc(count, dt.ir) if dt.bits < 64 else count, dt, "trunc")


for _nd in (1, 2, 3):
    rule(f"nn.max_pool{_nd}d", check=_pool_check(_nd), cost=_window)(_pool(_nd, "max"))
    rule(f"nn.avg_pool{_nd}d", check=_pool_check(_nd), cost=_window)(_pool(_nd, "avg"))


# --- global and adaptive pools: buffer rules -------------------------------------------------------


def _apply_epilogue(kb, out: Buffer, epilogue, rows: int) -> None:
    """Run a fused epilogue over ``out`` in ``rows`` contiguous runs."""
    if epilogue is None or out.size == 0:
        return
    per = out.size // rows
    with kb.loop(rows, "ep.row") as r:
        epilogue(kb.builder, kb.builder.mul(r, i64(per)), i64(per))


def _same_out_layout(call):
    reason = _layout_check(2)(call)
    if reason:
        return reason
    attrs = attrs_of(call)
    if attrs["out_layout"] and attrs["out_layout"] != attrs["layout"]:
        return f"out_layout {attrs['out_layout']!r} differs from layout {attrs['layout']!r}"
    return None


@rule("nn.global_avg_pool2d", "nn.global_max_pool2d", kind="buffer", anchor=True, check=_same_out_layout)
def _global_pool(kb, call, outs, epilogue):
    x = call.args[0]
    layout = attrs_of(call)["layout"]
    shape = kb.shape(x)
    axes = sorted([layout.index("H"), layout.index("W")])
    out = outs[0]
    op = "mean" if call.op.name == "nn.global_avg_pool2d" else "max"
    red = Reducer(kb, op, out.dt, shape[axes[0]] * shape[axes[1]])
    src = kb.dt(x)

    def keep(dims):
        return [i64(0) if a in axes else d for a, d in enumerate(dims)]

    if tuple(out.shape) != tuple(1 if a in axes else d for a, d in enumerate(shape)):
        raise Unsupported("the result shape does not match the pool")
    if epilogue is not None:  # it runs over the whole result after the reduction
        kb.no_split()
    emit_reduce(kb, shape, axes, out, keep, red, lambda xi: convert(kb, kb.value(x, xi), src, out.dt))
    _apply_epilogue(kb, out, epilogue, 1)


def _adaptive_check(call):
    reason = _same_out_layout(call)
    if reason:
        return reason
    attrs = attrs_of(call)
    layout = attrs["layout"]
    shape = call.args[0]._checked_type.shape
    h, w = shape[layout.index("H")], shape[layout.index("W")]
    if call.op.name.endswith("max_pool2d") and (h == 0 or w == 0):
        return "the maximum of an empty window"
    return None


@rule("nn.adaptive_avg_pool2d", "nn.adaptive_max_pool2d", kind="buffer", anchor=True, check=_adaptive_check)
def _adaptive_pool(kb, call, outs, epilogue):
    """Windows ``[floor(i * in / out), ceil((i + 1) * in / out))`` per output coordinate."""
    x = call.args[0]
    layout = attrs_of(call)["layout"]
    xshape = kb.shape(x)
    out = outs[0]
    dt = out.dt
    hp, wp = layout.index("H"), layout.index("W")
    if any(out.shape[p] != xshape[p] for p in range(4) if p not in (hp, wp)):
        raise Unsupported("the result's batch or channels differ from the input's")
    ins = {hp: xshape[hp], wp: xshape[wp]}
    b = kb.builder
    kind = "mean" if call.op.name == "nn.adaptive_avg_pool2d" else "max"
    red = Reducer(kb, kind, dt, 1)
    slot = _alloca(kb, dt.mem)
    with kb.nest(out.shape) as oi:
        od = oi.dims()
        bounds = {}
        for p in (hp, wp):
            n_in, n_out = ins[p], out.shape[p]
            start = b.udiv(b.mul(od[p], i64(n_in)), i64(max(n_out, 1)))
            end = b.udiv(b.add(b.mul(b.add(od[p], i64(1)), i64(n_in)), i64(max(n_out, 1) - 1)), i64(max(n_out, 1)))
            bounds[p] = (start, end)
        _slot_store(kb, slot, dt, red.identity() if kind == "mean" else _max_start(dt))
        with kb.loop(bounds[hp][1], "ah", start=bounds[hp][0]) as i:
            with kb.loop(bounds[wp][1], "aw", start=bounds[wp][0]) as j:
                dims = list(od)
                dims[hp], dims[wp] = i, j
                v = kb.value(x, Index(b, xshape, dims=dims))
                _slot_store(kb, slot, dt, red.combine(_slot_load(kb, slot, dt), v))
        acc = _slot_load(kb, slot, dt)
        if kind == "mean" and dt.kind != "b":  # a bool average is the window's OR
            count = b.mul(b.sub(bounds[hp][1], bounds[hp][0]), b.sub(bounds[wp][1], bounds[wp][0]))
            if dt.is_float:
                acc = b.fdiv(acc, b.sitofp(count, dt.ir))
            else:
                acc = int_divide(kb, acc, b.trunc(count, dt.ir) if dt.bits < 64 else count, dt, "trunc")
        out.store(b, oi, acc)
    _apply_epilogue(kb, out, epilogue, 1)


def _max_start(dt: DType) -> ir.Value:
    return ir.Constant(dt.ir, float("-inf")) if dt.is_float else lowest(dt)


__all__: list[str] = []


def _adaptive_nd_check(nd: int):
    layout_check = _layout_check(nd)

    def check(call):
        reason = layout_check(call)
        if reason:
            return reason
        attrs = attrs_of(call)
        if attrs["out_layout"] and attrs["out_layout"] != attrs["layout"]:
            return f"out_layout {attrs['out_layout']!r} differs from layout {attrs['layout']!r}"
        layout, shape, out = attrs["layout"], call.args[0]._checked_type.shape, call._checked_type.shape
        if any(shape[layout.index(a)] == 0 and out[layout.index(a)] for a in _SPATIAL[nd]):
            return "an empty window"  # the interpreter's error
        return None

    return check


def _adaptive_nd(nd: int):
    def fn(kb, call, outs, epilogue):
        """One axis at a time, as the interpreter's separable ``adaptive_pool_nd``: the
        first spatial axis is reduced innermost, and an average divides by each axis's
        window length in turn (integer averages truncate at every step, as there)."""
        x = call.args[0]
        layout = attrs_of(call)["layout"]
        xshape = kb.shape(x)
        out = outs[0]
        dt = out.dt
        axes = [layout.index(a) for a in _SPATIAL[nd]]
        if any(out.shape[p] != xshape[p] for p in range(2 + nd) if p not in axes):
            raise Unsupported("the result's batch or channels differ from the input's")
        b = kb.builder
        kind = "mean" if "_avg_" in call.op.name else "max"
        red = Reducer(kb, kind, dt, 1)
        slots = [_alloca(kb, dt.mem) for _ in axes]
        with kb.nest(out.shape) as oi:
            od = oi.dims()
            bounds = []
            for p in axes:
                n_in, n_out = xshape[p], max(out.shape[p], 1)
                start = b.udiv(b.mul(od[p], i64(n_in)), i64(n_out))
                end = b.udiv(b.add(b.mul(b.add(od[p], i64(1)), i64(n_in)), i64(n_out - 1)), i64(n_out))
                bounds.append((start, end))
            dims = list(od)

            def level(k: int) -> ir.Value:
                """The pooled value over axes[:k + 1] at the coordinates fixed outside."""
                slot = slots[k] if kind == "mean" else slots[0]
                if kind == "mean" or k == len(axes) - 1:
                    _slot_store(kb, slot, dt, red.identity() if kind == "mean" else _max_start(dt))
                start, end = bounds[k]
                with kb.loop(end, f"ap{k}", start=start) as i:
                    dims[axes[k]] = i
                    v = kb.value(x, Index(b, xshape, dims=list(dims))) if k == 0 else level(k - 1)
                    if kind == "mean" or k == 0:
                        _slot_store(kb, slot, dt, red.combine(_slot_load(kb, slot, dt), v))
                acc = _slot_load(kb, slot, dt)
                if kind == "mean" and dt.kind != "b":
                    count = b.sub(end, start)
                    if dt.is_float:
                        acc = b.fdiv(acc, b.sitofp(count, dt.ir))
                    else:
                        acc = int_divide(kb, acc, b.trunc(count, dt.ir) if dt.bits < 64 else count, dt, "trunc")
                return acc

            out.store(b, oi, level(len(axes) - 1))
        _apply_epilogue(kb, out, epilogue, 1)

    return fn


for _nd in (1, 3):
    for _kind in ("avg", "max"):
        name = f"nn.adaptive_{_kind}_pool{_nd}d"
        rule(name, kind="buffer", anchor=True, check=_adaptive_nd_check(_nd))(_adaptive_nd(_nd))
