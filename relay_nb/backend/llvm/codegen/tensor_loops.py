"""Buffer rules of the tensor family (issue 12): ``cumsum`` / ``cumprod``,
``invert_permutation``, ``einsum``, ``meta_schedule_layout_transform`` (loops of their
own), and ``collapse_sum_to`` (collapse_sum_like's reduction).  The index rules of the
family are in :mod:`.tensor_index`.

Semantics are the interpreter's: a scan keeps its running value in the result dtype and
adds in sequence (bit-equal to numpy's cumsum); a non-permutation stops the kernel with
the interpreter's error, naming the same first bad value.
"""

from __future__ import annotations

import math
from contextlib import ExitStack

from llvmlite import ir

from ....op.impl._util import norm_axis
from ....op.impl.indexing import permutation_message
from ....op.misc import eval_index, index_map_ranges, parse_einsum, parse_index_map
from .context import attrs_of
from .index import Index
from .reduce import _collapse_sum_like
from .rules import rule
from .scalar import convert, int_divide, int_mod
from .tensor_index import _to_i64
from .types import const, dtype, i64

# --- scans -------------------------------------------------------------------------------------


@rule("cumsum", "cumprod", kind="buffer")
def _scan(kb, call, outs, epilogue):
    """``out[o, k, i] = out[o, k-1, i] (+|*) x[o, k(-1), i]`` with ``i`` innermost, so the
    inner loop runs along contiguous memory of both tensors."""
    x = call.args[0]
    out = outs[0]
    attrs = attrs_of(call)
    xshape = kb.shape(x)
    src, dt = kb.dt(x), out.dt
    if attrs["axis"] is None:
        outer, n, inner = 1, math.prod(xshape), 1
    else:
        axis = norm_axis(attrs["axis"], len(xshape))
        outer, n, inner = math.prod(xshape[:axis]), xshape[axis], math.prod(xshape[axis + 1 :])
    if n == 0 or outer * inner == 0:
        return
    b = kb.builder
    product = call.op.name == "cumprod"
    exclusive = attrs["exclusive"]

    def combine(acc, v):
        if dt.is_float:
            return b.fmul(acc, v) if product else b.fadd(acc, v)
        if dt.kind == "b":
            return b.and_(acc, v) if product else b.or_(acc, v)
        return b.mul(acc, v) if product else b.add(acc, v)

    def element(flat):
        return convert(kb, kb.value(x, Index(b, xshape, flat=flat)), src, dt)

    with kb.loop(outer, "o") as o:
        base = b.mul(o, i64(n * inner))
        with kb.loop(inner, "i") as i:
            first = b.add(base, i)
            out.store_flat(b, first, const(dt, 1 if product else 0) if exclusive else element(first))
        with kb.loop(n, "k", start=1) as k:
            row = b.add(base, b.mul(k, i64(inner)))
            with kb.loop(inner, "i") as i:
                here = b.add(row, i)
                prev = b.sub(here, i64(inner))
                v = element(prev if exclusive else here)
                out.store_flat(b, here, combine(out.load_flat(b, prev), v))


@rule("invert_permutation", kind="buffer")
def _invert_permutation(kb, call, outs, epilogue):
    """``out[data[i]] = i``, marking each target in a scratch bitmap: the first value out
    of range or seen before stops the kernel with the interpreter's error."""
    data = call.args[0]
    out = outs[0]
    n = kb.shape(data)[0]
    if n == 0:
        return
    b = kb.builder
    flag = dtype("bool")
    seen = kb.scratch((n,), flag)
    with kb.loop(n, "z") as i:
        seen.store_flat(b, i, const(flag, False))
    with kb.loop(n, "p") as i:
        v = _to_i64(kb, kb.value(data, Index(b, (n,), flat=i)), kb.dt(data))
        outside = b.icmp_unsigned(">=", v, i64(n))  # negative values are huge unsigned
        target = b.select(outside, i64(0), v)
        kb.report_error(permutation_message(n), v, b.or_(outside, seen.load_flat(b, target)))
        seen.store_flat(b, target, const(flag, True))
        out.store_flat(b, target, convert(kb, i, dtype("int64"), out.dt))


def _einsum_check(call):
    if any(f.dtype == "bool" for f in call.args[0]._checked_type.fields):
        return "einsum of bool tensors"
    return None


@rule("einsum", kind="buffer", check=_einsum_check)
def _einsum(kb, call, outs, epilogue):
    """Each output element sums the product of its operands over the letters the output
    does not name (one loop per such letter); a size-1 operand dim broadcasts."""
    tup = call.args[0]
    out = outs[0]
    n_ops = len(tup._checked_type.fields)
    shapes = [kb.ttype(tup, k).shape for k in range(n_ops)]
    subs, rhs = parse_einsum(attrs_of(call)["equation"], [len(sh) for sh in shapes])
    size: dict[str, int] = {}
    for t, sh in zip(subs, shapes):
        for c, d in zip(t, sh):
            size[c] = max(size.get(c, 1), d) if d != 0 else 0
    summed = [c for c in dict.fromkeys("".join(subs)) if c not in rhs]
    b, dt = kb.builder, out.dt
    with b.goto_block(kb.func.entry_basic_block):
        acc = b.alloca(dt.ir)  # in the entry block: one slot, promoted to a register
    with kb.nest(out.shape) as oi:
        coord = dict(zip(rhs, oi.dims()))
        b.store(const(dt, 0), acc)
        with ExitStack() as stack:
            for c in summed:
                coord[c] = stack.enter_context(kb.loop(size[c], "e" + str(ord(c))))
            term = None
            for k, (t, sh) in enumerate(zip(subs, shapes)):
                dims = [coord[c] if d != 1 else i64(0) for c, d in zip(t, sh)]
                v = convert(kb, kb.field_value(tup, k, Index(b, sh, dims=dims)), kb.dt(tup, k), dt)
                term = v if term is None else (b.fmul(term, v) if dt.is_float else b.mul(term, v))
            old = b.load(acc)
            b.store(b.fadd(old, term) if dt.is_float else b.add(old, term), acc)
        out.store(b, oi, b.load(acc))


class _IndexValue:
    """An i64 LLVM value with the arithmetic of index maps (floor ``//`` and ``%``), so
    :func:`relay_nb.op.misc.eval_index` evaluates a map into instructions."""

    I64T = dtype("int64")

    def __init__(self, kb, v: ir.Value):
        self.kb, self.v = kb, v

    def _wrap(self, other) -> "_IndexValue":
        return other if isinstance(other, _IndexValue) else _IndexValue(self.kb, i64(other))

    def __add__(self, o):
        return _IndexValue(self.kb, self.kb.builder.add(self.v, self._wrap(o).v))

    def __sub__(self, o):
        return _IndexValue(self.kb, self.kb.builder.sub(self.v, self._wrap(o).v))

    def __mul__(self, o):
        return _IndexValue(self.kb, self.kb.builder.mul(self.v, self._wrap(o).v))

    def __floordiv__(self, o):
        return _IndexValue(self.kb, int_divide(self.kb, self.v, self._wrap(o).v, self.I64T, "floor"))

    def __mod__(self, o):
        return _IndexValue(self.kb, int_mod(self.kb, self.v, self._wrap(o).v, self.I64T, "floor"))


@rule("meta_schedule_layout_transform", kind="buffer")
def _meta_schedule_layout_transform(kb, call, outs, epilogue):
    """Zero the result, then move every input element to the index the map gives it
    (counted from each index's lowest value, as the interpreter and the relation)."""
    data = call.args[0]
    out = outs[0]
    shape = kb.shape(data)
    b = kb.builder
    with kb.loop(out.size, "z") as f:
        out.store_flat(b, f, const(out.dt, 0))
    if math.prod(shape) == 0:
        return
    params, exprs = parse_index_map(attrs_of(call)["index_map"])
    ranges = index_map_ranges(exprs, params, shape)
    with kb.nest(shape) as xi:
        env = {p: _IndexValue(kb, d) for p, d in zip(params, xi.dims())}
        env["const"] = lambda v: _IndexValue(kb, i64(v))
        dims = [b.sub(eval_index(e, env).v, i64(lo)) for e, (lo, _) in zip(exprs, ranges)]
        out.store(b, Index(b, out.shape, dims=dims), kb.value(data, xi))


# ``collapse_sum_to`` sums to its result shape exactly as collapse_sum_like does.
rule("collapse_sum_to", kind="buffer")(_collapse_sum_like)

__all__: list[str] = []
