"""Rules of the training ops that TVM patterns as fusable: ``nn.nll_loss``, the pool
gradients and ``nn.conv2d_backward_weight``.  All are direct codegen rules (loop nests)
with the interpreter's semantics (:mod:`relay_nb.op.impl.nn_train`)."""

from __future__ import annotations

from llvmlite import ir

from .context import attrs_of
from .index import Index
from .reduce import _alloca
from .rules import rule
from .scalar import convert
from .types import I64, dtype, i64, zero


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


__all__: list[str] = []
