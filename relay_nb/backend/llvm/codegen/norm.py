"""Row-wise rules: ``softmax`` / ``log_softmax`` / ``layer_norm`` make passes over each row
(max, sum of exponentials, normalize; mean, variance, normalize); ``l2_normalize`` reduces
its squares over any axes first; ``batch_norm`` (inference) is an index rule per element
whose per-channel factors LLVM hoists."""

from __future__ import annotations

import math
from contextlib import contextmanager

from llvmlite import ir

from ....op.impl._util import norm_axis
from . import math as m
from .context import ELEMENT_NS, attrs_of
from .index import Index, broadcast
from .reduce import Reducer, _alloca, _keep_map, emit_reduce
from .rules import rule
from .scalar import convert
from .types import dtype, i64


def _float_only(call):
    dt = dtype(call.args[0]._checked_type.dtype)
    if not dt.is_float:
        return f"{call.op.name} of {dt.name} tensors"
    if len(call.args) > 1:  # layer_norm / batch_norm: per-channel vectors along the axis
        shape = call.args[0]._checked_type.shape
        n = shape[norm_axis(attrs_of(call)["axis"], len(shape))]
        if any(tuple(a._checked_type.shape) != (n,) for a in call.args[1:]):
            return "the per-channel vectors do not match the axis"
    return None


def _row_loops(kb, shape: tuple, axis: int):
    """``(outer, n, inner, Row)``: a row is every element along ``axis`` at one (outer,
    inner) position; ``Row(o, i).at(j)`` is the index of its element ``j``."""
    outer, n, inner = math.prod(shape[:axis]), shape[axis], math.prod(shape[axis + 1 :])
    b = kb.builder

    class Row:
        def __init__(self, o, i):
            self.base = b.add(b.mul(o, i64(n * inner)), i)

        def at(self, j) -> Index:
            flat = b.add(self.base, b.mul(j, i64(inner)) if inner != 1 else j)
            return Index(b, shape, flat=flat)

    return outer, n, inner, Row


@contextmanager
def _rows(kb, outer: int, inner: int, n: int, name: str, out):
    """Every row ``(o, i)``: rows are independent, so threads share them when ``out`` is
    the kernel's result (each row's sums run in the same order whoever computes it); a
    row costs about two elementwise passes (softmax: 2.1 ns per element measured, see
    ELEMENT_NS)."""
    b = kb.builder
    lo, hi = kb.split(outer * inner, 2 * n * ELEMENT_NS) if kb.writes_output(out) else (i64(0), i64(outer * inner))
    with kb.loop(hi, name + "r", start=lo) as u:
        if inner == 1:
            yield u, i64(0)
        else:
            yield b.udiv(u, i64(inner)), b.urem(u, i64(inner))


@rule("nn.softmax", "nn.log_softmax", kind="buffer", check=_float_only)
def _softmax(kb, call, outs, epilogue):
    x = call.args[0]
    shape = kb.shape(x)
    axis = norm_axis(attrs_of(call)["axis"], len(shape))
    out = outs[0]
    dt = out.dt
    b = kb.builder
    log = call.op.name == "nn.log_softmax"
    outer, n, inner, Row = _row_loops(kb, shape, axis)
    mx_slot, sum_slot = _alloca(kb, dt.ir), _alloca(kb, dt.ir)
    red_max = Reducer(kb, "max", dt, n)
    with _rows(kb, outer, inner, n, "s", out) as (o, i):
        row = Row(o, i)
        b.store(red_max.identity(), mx_slot)
        with kb.loop(n, "sj") as j:
            b.store(red_max.combine(b.load(mx_slot, typ=dt.ir), kb.value(x, row.at(j))), mx_slot)
        mx = b.load(mx_slot, typ=dt.ir)
        b.store(ir.Constant(dt.ir, 0.0), sum_slot)
        with kb.loop(n, "sj") as j:
            idx = row.at(j)
            shifted = b.fsub(kb.value(x, idx), mx)
            e = m.exp(kb, shifted, dt)
            if not log:
                out.store(b, idx, e)
            b.store(b.fadd(b.load(sum_slot, typ=dt.ir), e, flags=("reassoc",)), sum_slot)
        total = b.load(sum_slot, typ=dt.ir)
        if log:
            lt = m.log(kb, total, dt)
            with kb.loop(n, "sj") as j:
                idx = row.at(j)
                out.store(b, idx, b.fsub(b.fsub(kb.value(x, idx), mx), lt))
        else:
            with kb.loop(n, "sj") as j:
                idx = row.at(j)
                out.store(b, idx, b.fdiv(out.load(b, idx), total))


@rule("nn.layer_norm", kind="buffer", check=_float_only)
def _layer_norm(kb, call, outs, epilogue):
    """``(x - mean) / sqrt(var + eps) * gamma + beta`` over ``axis``, two passes per row."""
    x, gamma, beta = call.args
    shape = kb.shape(x)
    attrs = attrs_of(call)
    axis = norm_axis(attrs["axis"], len(shape))
    out = outs[0]
    dt = out.dt
    b = kb.builder
    outer, n, inner, Row = _row_loops(kb, shape, axis)
    slot = _alloca(kb, dt.ir)
    eps = convert(kb, ir.Constant(ir.DoubleType(), float(attrs["epsilon"])), dtype("float64"), dt)
    count = ir.Constant(dt.ir, float(n))
    with _rows(kb, outer, inner, n, "l", out) as (o, i):
        row = Row(o, i)
        b.store(ir.Constant(dt.ir, 0.0), slot)
        with kb.loop(n, "lj") as j:
            b.store(b.fadd(b.load(slot, typ=dt.ir), kb.value(x, row.at(j)), flags=("reassoc",)), slot)
        mean = b.fdiv(b.load(slot, typ=dt.ir), count)
        b.store(ir.Constant(dt.ir, 0.0), slot)
        with kb.loop(n, "lj") as j:
            d = b.fsub(kb.value(x, row.at(j)), mean)
            b.store(b.fadd(b.load(slot, typ=dt.ir), b.fmul(d, d), flags=("reassoc",)), slot)
        var = b.fdiv(b.load(slot, typ=dt.ir), count)
        denom = kb.call(f"llvm.sqrt.{'f32' if dt.bits == 32 else 'f64'}", dt.ir, b.fadd(var, eps))
        with kb.loop(n, "lj") as j:
            idx = row.at(j)
            y = b.fdiv(b.fsub(kb.value(x, idx), mean), denom)
            ch = Index(b, kb.shape(gamma), flat=j)
            if attrs["scale"]:
                y = b.fmul(y, convert(kb, kb.value(gamma, ch), kb.dt(gamma), dt))
            if attrs["center"]:
                y = b.fadd(y, convert(kb, kb.value(beta, Index(b, kb.shape(beta), flat=j)), kb.dt(beta), dt))
            out.store(b, idx, y)


@rule("nn.l2_normalize", kind="buffer", check=_float_only)
def _l2_normalize(kb, call, outs, epilogue):
    """``x / sqrt(max(sum(x * x, axes), eps))``: the sums of squares into the workspace
    (kept axes, with emit_reduce's loop orders), then one pass dividing (a direct rule)."""
    x = call.args[0]
    shape = kb.shape(x)
    attrs = attrs_of(call)
    axes = sorted({norm_axis(a, len(shape)) for a in attrs["axis"] or ()}) or list(range(len(shape)))
    out = outs[0]
    dt = out.dt
    b = kb.builder
    sums = kb.scratch(tuple(1 if a in axes else d for a, d in enumerate(shape)), dt)
    red = Reducer(kb, "sum", dt, math.prod(shape[a] for a in axes))

    def square(xi):
        v = kb.value(x, xi)
        return b.fmul(v, v)

    emit_reduce(kb, shape, axes, sums, _keep_map(len(shape), axes, True), red, square)
    eps = convert(kb, ir.Constant(ir.DoubleType(), float(attrs["eps"])), dtype("float64"), dt)
    with kb.nest(shape) as xi:
        total = sums.load(b, broadcast(xi, sums.shape))
        total = b.select(b.fcmp_unordered(">", total, eps), total, eps)  # numpy's maximum: NaN wins
        root = kb.call(f"llvm.sqrt.{'f32' if dt.bits == 32 else 'f64'}", dt.ir, total)
        out.store(b, xi, b.fdiv(kb.value(x, xi), root))


@rule("nn.batch_norm", check=_float_only)
def _batch_norm(kb, call, index, field):
    """Inference batch norm: ``x * scale + shift`` per channel (TVM's SimplifyInference);
    fields 1 and 2 are the moving mean and variance, unchanged."""
    x, gamma, beta, mean, var = call.args
    if field == 1:
        return kb.value(mean, index)
    if field == 2:
        return kb.value(var, index)
    attrs = attrs_of(call)
    dt = kb.dt(call, 0)
    b = kb.builder
    axis = norm_axis(attrs["axis"], len(index.shape))
    ch = index.derived(("bn", axis), lambda: Index(b, kb.shape(mean), dims=[index.dim(axis)]))

    def channel(node):
        return convert(kb, kb.value(node, ch), kb.dt(node), dt)

    eps = convert(kb, ir.Constant(ir.DoubleType(), float(attrs["epsilon"])), dtype("float64"), dt)
    sq = kb.call(f"llvm.sqrt.{'f32' if dt.bits == 32 else 'f64'}", dt.ir, b.fadd(channel(var), eps))
    scale = b.fdiv(ir.Constant(dt.ir, 1.0), sq)
    if attrs["scale"]:
        scale = b.fmul(channel(gamma), scale)
    shift = b.fmul(b.fneg(channel(mean)), scale)
    if attrs["center"]:
        shift = b.fadd(shift, channel(beta))
    v = kb.value(x, index)
    return b.fadd(b.fmul(v, scale), shift)


__all__: list[str] = []
