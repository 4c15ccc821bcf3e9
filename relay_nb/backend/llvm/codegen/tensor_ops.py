"""Lowering of the cheap ops of the tensor family (issue 12): the scans ``cumsum`` /
``cumprod`` (buffer rules), ``gather``, ``one_hot``, ``trilu`` and ``sequence_mask`` (index
rules, fused into their consumers' loops), and ``collapse_sum_to`` (collapse_sum_like's
reduction).

Semantics are the interpreter's: a scan keeps its running value in the result dtype and
adds in sequence (bit-equal to numpy's cumsum); a ``gather`` index outside ``[-n, n)``
stops the kernel with the interpreter's error (the call is materialized so every index
is checked) and reads element 0 meanwhile.
"""

from __future__ import annotations

import math

from llvmlite import ir

from ....op.impl._util import convert as np_convert
from ....op.impl._util import norm_axis
from .context import attrs_of
from .index import Index
from .injective import sub_index
from .reduce import _collapse_sum_like
from .rules import rule
from .scalar import convert
from .types import I64, const, i64

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


# --- index rules ----------------------------------------------------------------------------------

_GATHER_MESSAGE = "gather: index {detail} is out of range for a dimension of %d"


def _to_i64(kb, v: ir.Value, dt) -> ir.Value:
    if v.type == I64:
        return v
    return kb.builder.sext(v, I64) if dt.signed else kb.builder.zext(v, I64)


def _gather_check(call):
    data = call.args[0]._checked_type
    axis = norm_axis(attrs_of(call)["axis"], len(data.shape))
    if data.shape[axis] == 0 and math.prod(call._checked_type.shape):
        return "gather from an empty axis"
    return None


@rule("gather", check=_gather_check, materialize=lambda call: True)
def _gather(kb, call, index, field):
    data, indices = call.args
    dshape = kb.shape(data)
    axis = norm_axis(attrs_of(call)["axis"], len(dshape))
    n = dshape[axis]
    b = kb.builder
    raw = _to_i64(kb, kb.value(indices, index), kb.dt(indices))
    k = b.select(b.icmp_signed("<", raw, i64(0)), b.add(raw, i64(n)), raw)
    bad = b.icmp_unsigned(">=", k, i64(n))  # below -n stays negative: huge unsigned
    kb.report_error(_GATHER_MESSAGE % n, raw, bad)
    dims = index.dims()
    dims[axis] = b.select(bad, i64(0), k)
    return kb.value(data, sub_index(kb, index, ("gather", call), dshape, dims))


@rule("one_hot")
def _one_hot(kb, call, index, field):
    indices, on, off = call.args
    dims = index.dims()
    axis = attrs_of(call)["axis"]
    axis = len(dims) - 1 if axis == -1 else axis
    ishape = kb.shape(indices)
    idims = dims[:axis] + dims[axis + 1 :]
    raw = _to_i64(kb, kb.value(indices, sub_index(kb, index, ("one_hot", call), ishape, idims)), kb.dt(indices))
    dt = kb.dt(call)
    hot = kb.builder.icmp_signed("==", raw, dims[axis])
    on_v = convert(kb, kb.operand(on, index), kb.dt(on), dt)
    off_v = convert(kb, kb.operand(off, index), kb.dt(off), dt)
    return kb.builder.select(hot, on_v, off_v)


@rule("trilu")
def _trilu(kb, call, index, field):
    data, k = call.args
    b = kb.builder
    dims = index.dims()
    diag = b.sub(dims[-1], dims[-2])  # j - i
    kv = _to_i64(kb, kb.operand(k, index), kb.dt(k))
    keep = b.icmp_signed(">=" if attrs_of(call)["upper"] else "<=", diag, kv)
    return b.select(keep, kb.value(data, index), const(kb.dt(call), 0))


@rule("sequence_mask")
def _sequence_mask(kb, call, index, field):
    data, valid = call.args
    b = kb.builder
    attrs = attrs_of(call)
    axis = attrs["axis"]
    dims = index.dims()
    vshape = kb.shape(valid)
    length = kb.value(valid, sub_index(kb, index, ("sequence_mask", call), vshape, [dims[1 - axis]]))
    keep = b.icmp_signed("<", dims[axis], _to_i64(kb, length, kb.dt(valid)))
    dt = kb.dt(call)
    fill = np_convert(attrs["mask_value"], dt.name).item()  # the interpreter's cast of the value
    return b.select(keep, kb.value(data, index), const(dt, fill))


# ``collapse_sum_to`` sums to its result shape exactly as collapse_sum_like does.
rule("collapse_sum_to", kind="buffer")(_collapse_sum_like)

__all__: list[str] = []
