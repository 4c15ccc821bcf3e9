"""Rules of the training ops that TVM patterns as fusable: ``nn.nll_loss``, the pool
gradients and ``nn.conv2d_backward_weight``.  All are direct codegen rules (loop nests)
with the interpreter's semantics (:mod:`relay_nb.op.impl.nn_train`)."""

from __future__ import annotations

from llvmlite import ir

from ....op.impl._util import ints_n, pad_pairs
from .anchors import _mac
from .context import attrs_of
from .index import Index
from .pool import _perm
from .reduce import _alloca
from .rules import rule
from .scalar import compare, convert
from .types import F64, I64, Unsupported, dtype, i64, lowest, zero

_F64 = dtype("float64")


def _float_result(call):
    dt = dtype(call._checked_type.dtype)
    return None if dt.is_float else f"{call.op.name} of {dt.name}"


@rule("nn.nll_loss", kind="buffer", check=_float_result)
def _nll_loss(kb, call, outs, epilogue):
    """``-pred[n, t, ...] * weights[t]`` per target ``t`` (0 where ``t == ignore_index``),
    kept (``none``), summed, or summed and divided by the weights used (``mean``).  A
    target outside ``[0, C)`` that is not ignored is reported as the interpreter's error
    (and read as class 0 meanwhile: no read out of bounds)."""
    pred, targets, weights = call.args
    attrs = attrs_of(call)
    pshape, tshape = kb.shape(pred), kb.shape(targets)
    classes = pshape[1]
    out = outs[0]
    dt = out.dt
    b = kb.builder
    reduction = attrs["reduction"]
    loss_slot, w_slot = _alloca(kb, dt.ir), _alloca(kb, dt.ir)
    b.store(zero(dt), loss_slot)
    b.store(zero(dt), w_slot)
    tdt = kb.dt(targets)
    with kb.nest(tshape) as ti:
        t = convert(kb, kb.value(targets, ti), tdt, dtype("int64"))
        valid = b.icmp_signed("!=", t, i64(int(attrs["ignore_index"])))
        bad = b.and_(valid, b.icmp_unsigned(">=", t, i64(classes)))
        kb.report_error(f"target {{detail}} is not a class index in [0, {classes})", t, bad)
        t = b.select(b.and_(valid, b.not_(bad)), t, i64(0))
        dims = ti.dims()
        picked = kb.value(pred, Index(b, pshape, dims=[dims[0], t, *dims[1:]]))
        w = convert(kb, kb.value(weights, Index(b, kb.shape(weights), flat=t)), kb.dt(weights), dt)
        w = b.select(valid, w, zero(dt))
        loss = b.fmul(b.fneg(convert(kb, picked, kb.dt(pred), dt)), w)
        if reduction == "none":
            out.store(b, ti, loss)
        else:
            b.store(b.fadd(b.load(loss_slot, typ=dt.ir), loss, flags=("reassoc",)), loss_slot)
            b.store(b.fadd(b.load(w_slot, typ=dt.ir), w, flags=("reassoc",)), w_slot)
    if reduction != "none":
        total = b.load(loss_slot, typ=dt.ir)
        if reduction == "mean":
            total = b.fdiv(total, b.load(w_slot, typ=dt.ir))
        out.store_flat(b, i64(0), total)


# --- pool gradients -----------------------------------------------------------------------------


def _pool_geometry(attrs, xshape):
    """(pool, strides, dilation, pads, (OH, OW)) of the forward pool on canonical NCHW data
    (``ceil_mode`` pads the bottom / right by ``stride - 1`` more, as the interpreter)."""
    pool = ints_n(attrs["pool_size"], 2, "pool_size")
    strides = ints_n(attrs["strides"], 2, "strides")
    dilation = ints_n(attrs["dilation"], 2, "dilation")
    pads = pad_pairs(attrs["padding"], 2)
    extra = [st - 1 if attrs["ceil_mode"] else 0 for st in strides]
    outs = []
    for d in range(2):
        padded = xshape[2 + d] + pads[d][0] + pads[d][1] + extra[d]
        span = (pool[d] - 1) * dilation[d] + 1
        outs.append((padded - span) // strides[d] + 1 if padded >= span else None)
    return pool, strides, dilation, pads, tuple(outs)


def _canonical(shape, layout: str) -> tuple:
    return tuple(shape[p] for p in _perm(layout, "NCHW"))


def _pool_grad_check(call):
    attrs = attrs_of(call)
    layout = attrs["layout"]
    try:
        xs = _canonical(call.args[1]._checked_type.shape, layout)
        gs = _canonical(call.args[0]._checked_type.shape, attrs["out_layout"] or layout)
    except Unsupported as e:
        return e.reason
    dt = dtype(call._checked_type.dtype)
    if dt.kind == "b":
        return "bool data"
    pool, strides, dilation, _, out_hw = _pool_geometry(attrs, xs)
    if min(pool + strides + dilation) < 1:
        return "non-positive pool_size, strides or dilation"
    if gs != xs[:2] + out_hw:
        return "the gradient is not the pool's output shape"  # the interpreter's error
    return None


def _at(kb, node, layout: str, n, c, y, x, canonical: str = "NCHW") -> Index:
    """The index of canonical ``(n, c, y, x)`` in ``node`` laid out as ``layout``."""
    dims = [None] * 4
    for pos, v in zip(_perm(layout, canonical), (n, c, y, x)):
        dims[pos] = v
    return Index(kb.builder, kb.shape(node), dims=dims)


@rule("nn.max_pool2d_grad", "nn.avg_pool2d_grad", kind="buffer", check=_pool_grad_check)
def _pool_grad(kb, call, outs, epilogue):
    """The interpreter's scatter, in its order: per window, the share each tap receives
    (max: the window's whole gradient to its first maximum, padding read as the dtype's
    lowest value; avg: the gradient over the count of window taps inside the input, or the
    padded input with ``count_include_pad``), then per tap, all windows' shares added in
    float64 where the tap lands inside the input; then the sums cast to the data's dtype.
    Same order of float64 additions, so the same bits."""
    grad, data = call.args
    attrs = attrs_of(call)
    layout = attrs["layout"]
    glayout = attrs["out_layout"] or layout
    n_, c_, h, w = _canonical(kb.shape(data), layout)
    pool, strides, dilation, pads, (oh, ow) = _pool_geometry(attrs, (n_, c_, h, w))
    (top, bottom), (left, right) = pads
    out = outs[0]
    dt, xdt = out.dt, kb.dt(data)
    b = kb.builder
    is_max = call.op.name == "nn.max_pool2d_grad"
    windows = kb.scratch((n_, c_, oh, ow), dtype("int64") if is_max else _F64)
    acc = kb.scratch((n_, c_, h, w), _F64)
    with kb.nest(acc.shape, flat=True) as ai:
        acc.store(b, ai, ir.Constant(F64, 0.0))

    def tap_coord(o, k, d):
        """The input coordinate of tap ``k`` (an int or an i64) of window ``o`` on axis ``d``."""
        offset = i64(k * dilation[d]) if isinstance(k, int) else b.mul(k, i64(dilation[d]))
        return b.sub(b.add(b.mul(o, i64(strides[d])), offset), i64(pads[d][0]))

    def inside(v, n_in):
        return b.icmp_unsigned("<", v, i64(n_in))

    with kb.nest((n_, c_, oh, ow)) as wi:
        nn, cc, oy, ox = wi.dims()
        if is_max:  # the first maximum's tap number, row major, as np.argmax
            best, where = _alloca(kb, xdt.ir), _alloca(kb, I64)
            b.store(lowest(xdt), best)
            b.store(i64(0), where)
            with kb.loop(pool[0], "pi") as i:
                with kb.loop(pool[1], "pj") as j:
                    y, x = tap_coord(oy, i, 0), tap_coord(ox, j, 1)
                    ok = b.and_(inside(y, h), inside(x, w))
                    safe = _at(kb, data, layout, nn, cc, b.select(ok, y, i64(0)), b.select(ok, x, i64(0)))
                    v = b.select(ok, kb.value(data, safe), lowest(xdt)) if h and w else lowest(xdt)
                    t = b.add(b.mul(i, i64(pool[1])), j)
                    cur = b.load(best, typ=xdt.ir)
                    better = compare(kb, ">", v, cur, xdt)
                    if xdt.is_float:  # the first NaN is the maximum
                        nan_v = b.fcmp_unordered("uno", v, v)
                        nan_cur = b.fcmp_unordered("uno", cur, cur)
                        better = b.or_(better, b.and_(nan_v, b.not_(nan_cur)))
                    first = b.icmp_signed("==", t, i64(0))
                    take = b.or_(first, better)
                    b.store(b.select(take, v, cur), best)
                    b.store(b.select(take, t, b.load(where, typ=I64)), where)
            windows.store(b, wi, b.load(where, typ=I64))
        else:  # the window's count of taps inside the (padded, with count_include_pad) input
            counts = []
            for d, (o, n_in) in enumerate(((oy, h), (ox, w))):
                lo, hi = (-pads[d][0], n_in + pads[d][1]) if attrs["count_include_pad"] else (0, n_in)
                total = i64(0)
                for k in range(pool[d]):
                    v = tap_coord(o, k, d)
                    ok = b.and_(b.icmp_signed(">=", v, i64(lo)), b.icmp_signed("<", v, i64(hi)))
                    total = b.add(total, b.zext(ok, I64))
                counts.append(total)
            count = b.mul(counts[0], counts[1])
            count = b.select(b.icmp_signed("<", count, i64(1)), i64(1), count)
            g = convert(kb, kb.value(grad, _at(kb, grad, glayout, nn, cc, oy, ox)), kb.dt(grad), _F64)
            windows.store(b, wi, b.fdiv(g, b.sitofp(count, F64)))
    with kb.loop(n_, "gn") as nn:
        with kb.loop(c_, "gc") as cc:
            with kb.loop(pool[0], "gi") as i:
                with kb.loop(pool[1], "gj") as j:
                    t = b.add(b.mul(i, i64(pool[1])), j)
                    with kb.nest((oh, ow)) as oi:
                        oy, ox = oi.dims()
                        y, x = tap_coord(oy, i, 0), tap_coord(ox, j, 1)
                        hit = b.and_(inside(y, h), inside(x, w))
                        win = Index(b, windows.shape, dims=[nn, cc, oy, ox])
                        if is_max:
                            hit = b.and_(hit, b.icmp_signed("==", windows.load(b, win), t))
                            share = lambda: convert(  # noqa: E731
                                kb, kb.value(grad, _at(kb, grad, glayout, nn, cc, oy, ox)), kb.dt(grad), _F64
                            )
                        else:
                            share = lambda: windows.load(b, win)  # noqa: E731
                        with b.if_then(hit):
                            ai = Index(b, acc.shape, dims=[nn, cc, y, x])
                            acc.store(b, ai, b.fadd(acc.load(b, ai), share()))
    with kb.nest((n_, c_, h, w)) as ci:
        v = convert(kb, acc.load(b, ci), _F64, dt)
        out.store(b, _at(kb, call, layout, *ci.dims()), v)


# --- conv2d weight gradient --------------------------------------------------------------------


def _backward_weight_check(call):
    dt = dtype(call._checked_type.dtype)
    if dt.kind == "b" or any(dtype(a._checked_type.dtype).kind == "b" for a in call.args):
        return "bool tensors"
    attrs = attrs_of(call)
    if min(ints_n(attrs["strides"], 2, "s") + ints_n(attrs["dilation"], 2, "d")) < 1:
        return "non-positive strides or dilation"
    return None


@rule("nn.conv2d_backward_weight", kind="buffer", check=_backward_weight_check)
def _conv2d_backward_weight(kb, call, outs, epilogue):
    """``dW[o, c, i, j] = sum_{n, y, x} grad[n, o, y, x] * data[n, g * Cg + c, y * s + i * d
    - pad, ...]`` (zero outside the data) in ``out_dtype``, one register sum per weight.
    The attrs' roles are TVM's: ``data_layout`` is the gradient's layout, ``kernel_layout``
    the data's, ``out_layout`` the weight's."""
    grad, data = call.args
    attrs = attrs_of(call)
    gl, dl, wl = attrs["data_layout"], attrs["kernel_layout"], attrs["out_layout"] or "OIHW"
    n_, c_, h, w = _canonical(kb.shape(data), dl)
    _, o_, oh, ow = _canonical(kb.shape(grad), gl)
    kernel = ints_n(attrs["kernel_size"], 2, "kernel_size")
    strides = ints_n(attrs["strides"], 2, "strides")
    dilation = ints_n(attrs["dilation"], 2, "dilation")
    pads = pad_pairs(attrs["padding"], 2)
    groups = attrs["groups"]
    cg, og = c_ // groups, o_ // groups
    out = outs[0]
    dt = out.dt
    b = kb.builder
    slot = _alloca(kb, dt.ir)
    with kb.nest((o_, cg) + tuple(kernel)) as wi:
        o, c, i, j = wi.dims()
        ch = b.add(b.mul(b.udiv(o, i64(og)), i64(cg)), c)
        b.store(zero(dt), slot)
        with kb.loop(n_, "bn") as nn:
            with kb.nest((oh, ow)) as gi:
                y, x = gi.dims()
                py = b.sub(b.add(b.mul(y, i64(strides[0])), b.mul(i, i64(dilation[0]))), i64(pads[0][0]))
                px = b.sub(b.add(b.mul(x, i64(strides[1])), b.mul(j, i64(dilation[1]))), i64(pads[1][0]))
                ok = b.and_(b.icmp_unsigned("<", py, i64(h)), b.icmp_unsigned("<", px, i64(w)))
                at = _at(kb, data, dl, nn, ch, b.select(ok, py, i64(0)), b.select(ok, px, i64(0)))
                xv = b.select(ok, convert(kb, kb.value(data, at), kb.dt(data), dt), zero(dt))
                gv = convert(kb, kb.value(grad, _at(kb, grad, gl, nn, o, y, x)), kb.dt(grad), dt)
                b.store(_mac(kb, b.load(slot, typ=dt.ir), gv, xv, dt), slot)
        out.store(b, _at(kb, call, wl, o, c, i, j, canonical="OIHW"), b.load(slot, typ=dt.ir))


__all__: list[str] = []
