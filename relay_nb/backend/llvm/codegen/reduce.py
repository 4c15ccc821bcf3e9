"""Buffer rules of the reductions: sum, prod, mean, max, min, all, any, argmax, argmin,
variance, collapse_sum_like.

Two loop orders, chosen by where the reduced axes are:

* reduced axes innermost (``sum(x, axis=-1)``): for each output element, an inner loop
  accumulates in a register (a float ``fadd`` carries ``reassoc`` so LLVM may vectorize
  it with several partial sums, as numpy's pairwise sum also reorders);
* a kept axis innermost (``sum(x, axis=0)``): the output is initialized, then the input
  is walked in row-major order and each element is folded into its output element, so
  the inner loop runs along contiguous memory of both.

Semantics are the interpreter's: sums and products accumulate in the result dtype (ints
wrap), ``mean`` divides with ``divide``'s rules, max/min propagate NaN, an empty max/min
is the dtype's lowest/highest value, ``argmax`` returns the first (or last) flat index
within the reduced axes, NaN counting as the maximum.
"""

from __future__ import annotations

import math
from typing import Callable, Optional

from llvmlite import ir

from ....op.reduce import reduce_axes
from .context import ELEMENT_NS, Buffer, attrs_of
from .index import Index, broadcast
from .rules import rule
from .scalar import compare, convert, int_divide, truthy
from .types import I1, DType, Unsupported, const, dtype, highest, i64, lowest


class Reducer:
    """One reduction: identity, combine step and final step, in the accumulator dtype."""

    def __init__(self, kb, op: str, dt: DType, count: int):
        self.kb, self.op, self.dt, self.count = kb, op, dt, count

    def identity(self) -> ir.Value:
        dt, op = self.dt, self.op
        if op in ("sum", "mean", "variance"):
            return const(dt, 0)
        if op == "prod":
            return const(dt, 1)
        if op == "all":
            return const(dt, True)
        if op == "any":
            return const(dt, False)
        if self.count == 0:  # an empty max/min is the reduction identity itself
            return lowest(dt) if op == "max" else highest(dt)
        if dt.is_float:  # +-inf: a slice of -inf has max -inf (finfo.min would be wrong)
            return ir.Constant(dt.ir, float("-inf") if op == "max" else float("inf"))
        return lowest(dt) if op == "max" else highest(dt)

    def combine(self, acc: ir.Value, x: ir.Value) -> ir.Value:
        b, dt, op = self.kb.builder, self.dt, self.op
        if op in ("sum", "mean", "variance"):
            if dt.is_float:
                return b.fadd(acc, x, flags=("reassoc",))
            return b.or_(acc, x) if dt.kind == "b" else b.add(acc, x)
        if op == "prod":
            if dt.is_float:
                return b.fmul(acc, x, flags=("reassoc",))
            return b.and_(acc, x) if dt.kind == "b" else b.mul(acc, x)
        if op == "all":
            return b.and_(acc, x)
        if op == "any":
            return b.or_(acc, x)
        better = compare(self.kb, ">" if op == "max" else "<", x, acc, dt)
        if dt.is_float:  # NaN wins and stays
            better = b.or_(better, b.fcmp_unordered("uno", x, x))
        return b.select(better, x, acc)

    def finish(self, acc: ir.Value, divisor: Optional[int] = None) -> ir.Value:
        if self.op not in ("mean", "variance") or self.dt.kind == "b":
            return acc  # a bool mean or variance is the OR, undivided (impl's divide_by_count)
        n = self.count if divisor is None else divisor
        b, dt = self.kb.builder, self.dt
        if dt.is_float:
            return b.fdiv(acc, ir.Constant(dt.ir, float(n)))
        return int_divide(self.kb, acc, const(dt, n), dt, "trunc")


def _alloca(kb, ty: ir.Type) -> ir.Value:
    """A stack slot in the entry block (promoted to a register by LLVM)."""
    b = kb.builder
    with b.goto_block(kb.func.entry_basic_block):
        return b.alloca(ty)


def _slot_load(kb, slot, dt: DType) -> ir.Value:
    v = kb.builder.load(slot, typ=dt.mem)
    return kb.builder.trunc(v, I1) if dt.kind == "b" else v


def _slot_store(kb, slot, dt: DType, v: ir.Value) -> None:
    kb.builder.store(kb.builder.zext(v, dt.mem) if dt.kind == "b" else v, slot)


def emit_reduce(
    kb,
    shape: tuple,
    axes: list[int],
    out: Buffer,
    out_dims: Callable[[list], list],
    red: Reducer,
    element: Callable[[Index], ir.Value],
    divisor: Optional[int] = None,
) -> None:
    """Reduce ``element(index)`` over ``axes`` of a ``shape`` tensor into ``out``;
    ``out_dims(input_dims)`` maps input coordinates to the output's (kept axes)."""
    b = kb.builder
    rank = len(shape)
    kept = [a for a in range(rank) if a not in axes]
    if rank and kept and kept[-1] == rank - 1 and red.op not in ("variance",):
        if kept[0] == 0 and shape[0] > 1 and kb.splittable and not kb.parallel and kb.writes_output(out):
            _fold_rows(kb, shape, out, out_dims, red, element, divisor)
            return
        # a kept axis is innermost: fold the input, in order, into the output
        with kb.nest(out.shape, flat=True) as oi:
            out.store(b, oi, red.identity())
        with kb.nest(shape) as xi:
            oi = Index(b, out.shape, dims=out_dims(xi.dims()))
            out.store(b, oi, red.combine(out.load(b, oi), element(xi)))
        if red.op == "mean":
            with kb.nest(out.shape, flat=True) as oi:
                out.store(b, oi, red.finish(out.load(b, oi), divisor))
        return
    slot = _alloca(kb, red.dt.mem)
    red_shape = [shape[a] for a in axes]
    trailing = axes == list(range(rank - len(axes), rank))
    # output elements are independent: threads share them (each sums its own in order)
    kept_shape = [shape[a] for a in kept]
    nest = kb.split_nest(kept_shape, element_ns=ELEMENT_NS * max(1, math.prod(red_shape)), unit=1)
    with nest if kb.writes_output(out) else kb.nest(kept_shape) as ki:
        _slot_store(kb, slot, red.dt, red.identity())
        kdims = ki.dims()
        if trailing:
            # the reduced axes are one contiguous run per output element: one flat loop
            count = math.prod(red_shape)
            base = b.mul(ki.flat(), i64(count)) if kept else i64(0)
            with kb.loop(count, "r") as r:
                xi = Index(b, shape, flat=b.add(base, r) if kept else r)
                acc = _slot_load(kb, slot, red.dt)
                _slot_store(kb, slot, red.dt, red.combine(acc, element(xi)))
        else:
            with kb.nest(red_shape) as ri:
                dims: list = [None] * rank
                for a, d in zip(kept, kdims):
                    dims[a] = d
                for a, d in zip(axes, ri.dims()):
                    dims[a] = d
                xi = Index(b, shape, dims=dims)
                acc = _slot_load(kb, slot, red.dt)
                _slot_store(kb, slot, red.dt, red.combine(acc, element(xi)))
        full = [None] * rank
        for a, d in zip(kept, kdims):
            full[a] = d
        for a in axes:
            full[a] = i64(0)
        oi = Index(b, out.shape, dims=out_dims(full))
        out.store(b, oi, red.finish(_slot_load(kb, slot, red.dt), divisor))


def _fold_rows(kb, shape: tuple, out: Buffer, out_dims, red: Reducer, element, divisor) -> None:
    """The fold of :func:`emit_reduce` one input row (axis 0, kept) at a time: a row
    writes only its own output row, so threads share the rows; every output element
    still takes its inputs in the same order."""
    b = kb.builder
    per = out.size // shape[0]
    lo, hi = kb.split(shape[0], ELEMENT_NS * math.prod(shape[1:]))
    with kb.loop(hi, "rr", start=lo) as u:
        first = b.mul(u, i64(per))
        with kb.loop(per, "ri") as j:
            out.store_flat(b, b.add(first, j), red.identity())
        with kb.nest(shape[1:]) as rest:
            xi = Index(b, shape, dims=[u] + rest.dims())
            oi = Index(b, out.shape, dims=out_dims(xi.dims()))
            out.store(b, oi, red.combine(out.load(b, oi), element(xi)))
        if red.op == "mean":
            with kb.loop(per, "ri") as j:
                at = b.add(first, j)
                out.store_flat(b, at, red.finish(out.load_flat(b, at), divisor))


def _axes(call, rank: int) -> list[int]:
    attrs = attrs_of(call)
    return sorted(reduce_axes(rank, attrs["axis"], attrs["exclude"]))


def _kept_shape(shape: tuple, axes: list[int], keepdims: bool) -> tuple:
    if keepdims:
        return tuple(1 if a in axes else d for a, d in enumerate(shape))
    return tuple(d for a, d in enumerate(shape) if a not in axes)


def _expect(out: Buffer, shape: tuple, axes: list[int], keepdims: bool) -> None:
    """The loops write where the axes say: the result type must agree (in-bounds stores)."""
    if tuple(out.shape) != _kept_shape(shape, axes, keepdims):
        raise Unsupported(f"the result shape {out.shape} does not match the reduction")


def _keep_map(rank: int, axes: list[int], keepdims: bool):
    if keepdims:
        return lambda dims: [i64(0) if a in axes else d for a, d in enumerate(dims)]
    return lambda dims: [d for a, d in enumerate(dims) if a not in axes]


@rule("sum", "prod", "mean", "max", "min", "all", "any", kind="buffer")
def _reduce(kb, call, outs, epilogue):
    x = call.args[0]
    shape = kb.shape(x)
    axes = _axes(call, len(shape))
    out = outs[0]
    op = call.op.name
    acc_dt = out.dt
    src = kb.dt(x)
    red = Reducer(kb, op, acc_dt, math.prod(shape[a] for a in axes))
    if op in ("all", "any"):

        def element(xi):
            return truthy(kb, kb.value(x, xi), src)

    else:

        def element(xi):
            return convert(kb, kb.value(x, xi), src, acc_dt)

    _expect(out, shape, axes, attrs_of(call)["keepdims"])
    emit_reduce(kb, shape, axes, out, _keep_map(len(shape), axes, attrs_of(call)["keepdims"]), red, element)


@rule("variance", kind="buffer")
def _variance(kb, call, outs, epilogue):
    x, mean = call.args
    shape = kb.shape(x)
    axes = _axes(call, len(shape))
    out = outs[0]
    dt = out.dt
    b = kb.builder
    count = math.prod(shape[a] for a in axes)
    red = Reducer(kb, "variance", dt, count)

    def element(xi):
        v = convert(kb, kb.value(x, xi), kb.dt(x), dt)
        mu = convert(kb, kb.value(mean, broadcast(xi, kb.shape(mean))), kb.dt(mean), dt)
        d = b.fsub(v, mu) if dt.is_float else b.sub(v, mu)
        return b.fmul(d, d) if dt.is_float else b.mul(d, d)

    divisor = count - (1 if attrs_of(call)["unbiased"] else 0)
    _expect(out, shape, axes, attrs_of(call)["keepdims"])
    keep = _keep_map(len(shape), axes, attrs_of(call)["keepdims"])
    emit_reduce(kb, shape, axes, out, keep, red, element, divisor)


@rule("collapse_sum_like", kind="buffer")
def _collapse_sum_like(kb, call, outs, epilogue):
    x = call.args[0]
    shape = kb.shape(x)
    out = outs[0]
    target = out.shape
    lead = len(shape) - len(target)
    if lead < 0:
        raise Unsupported("collapse_sum_like to a higher rank")
    axes = list(range(lead)) + [lead + i for i, (d, t) in enumerate(zip(shape[lead:], target)) if t == 1 and d != 1]
    if any(d != t for d, t in zip(shape[lead:], target) if t != 1):
        raise Unsupported("collapse_sum_like to a shape that is not a broadcast source")
    red = Reducer(kb, "sum", out.dt, math.prod(shape[a] for a in axes))

    def out_dims(dims):
        return [i64(0) if (lead + i) in axes else dims[lead + i] for i in range(len(target))]

    src = kb.dt(x)
    emit_reduce(kb, shape, axes, out, out_dims, red, lambda xi: convert(kb, kb.value(x, xi), src, out.dt))


@rule("argmax", "argmin", kind="buffer")
def _arg_reduce(kb, call, outs, epilogue):
    """Best value and its flat index within the reduced axes, both in registers."""
    x = call.args[0]
    shape = kb.shape(x)
    rank = len(shape)
    axes = _axes(call, rank)
    attrs = attrs_of(call)
    out = outs[0]
    dt = kb.dt(x)
    is_max = call.op.name == "argmax"
    last = attrs["select_last_index"]
    b = kb.builder
    kept = [a for a in range(rank) if a not in axes]
    _expect(out, shape, axes, attrs["keepdims"])
    vslot, islot = _alloca(kb, dt.mem), _alloca(kb, ir.IntType(64))
    keep = _keep_map(rank, axes, attrs["keepdims"])
    red_shape = [shape[a] for a in axes]
    if dt.is_float:
        start = ir.Constant(dt.ir, float("-inf") if is_max else float("inf"))
    else:
        start = lowest(dt) if is_max else highest(dt)
    strict, loose = (">", ">=") if is_max else ("<", "<=")
    with kb.nest([shape[a] for a in kept]) as ki:
        _slot_store(kb, vslot, dt, start)
        b.store(i64(0 if math.prod(red_shape) else -1), islot)  # TVM: -1 over no elements
        kdims = ki.dims()
        with kb.nest(red_shape) as ri:
            dims: list = [None] * rank
            for a, d in zip(kept, kdims):
                dims[a] = d
            for a, d in zip(axes, ri.dims()):
                dims[a] = d
            v = kb.value(x, Index(b, shape, dims=dims))
            best = _slot_load(kb, vslot, dt)
            if dt.is_float:
                v_nan = b.fcmp_unordered("uno", v, v)
                best_nan = b.fcmp_unordered("uno", best, best)
                if last:
                    take = b.select(best_nan, v_nan, b.or_(compare(kb, loose, v, best, dt), v_nan))
                else:
                    take = b.and_(b.not_(best_nan), b.or_(compare(kb, strict, v, best, dt), v_nan))
            else:
                take = compare(kb, loose if last else strict, v, best, dt)
            _slot_store(kb, vslot, dt, b.select(take, v, best))
            b.store(b.select(take, ri.flat(), b.load(islot, typ=ir.IntType(64))), islot)
        full = [None] * rank
        for a, d in zip(kept, kdims):
            full[a] = d
        for a in axes:
            full[a] = i64(0)
        oi = Index(b, out.shape, dims=keep(full))
        out.store(b, oi, convert(kb, b.load(islot, typ=ir.IntType(64)), dtype("int64"), out.dt))


__all__ = ["Reducer", "emit_reduce"]
