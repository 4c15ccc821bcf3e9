"""Index rules that index with data or beyond the edges: ``take`` (all modes, batch dims)
and ``nn.pad`` (constant, edge, reflect).

Every read stays in bounds whatever the data: a ``take`` index is clamped or wrapped into
the axis (``mode="fast"``, which TVM does not check, reports the first bad index through
the kernel's status slot — the interpreter's error — and reads element 0 meanwhile); a
padded border reads a clamped element and a select substitutes the pad value.
"""

from __future__ import annotations

import math

from llvmlite import ir

from ....op.impl._util import norm_axis
from .context import attrs_of
from .index import Index
from .injective import clamp, sub_index
from .rules import rule
from .scalar import convert
from .types import I64, i64

# --- padding -------------------------------------------------------------------------------------


def _pad_check(call):
    attrs = attrs_of(call)
    if attrs["pad_mode"] not in ("constant", "edge", "reflect"):
        return f"pad_mode {attrs['pad_mode']!r}"
    ty = call.args[0]._checked_type
    widths = attrs["pad_width"]
    if len(widths) != len(ty.shape) or any(len(w) != 2 or min(w) < 0 for w in widths):
        return "pad_width does not fit the input"
    if attrs["pad_mode"] != "constant" and math.prod(ty.shape) == 0:
        return "edge/reflect padding of an empty tensor"
    return None


def _reflect(b: ir.IRBuilder, v: ir.Value, n: int) -> ir.Value:
    """numpy's ``reflect`` (the edge is not repeated): period ``2 (n - 1)``."""
    if n == 1:
        return i64(0)
    period = 2 * (n - 1)
    m = b.srem(v, i64(period))
    m = b.select(b.icmp_signed("<", m, i64(0)), b.add(m, i64(period)), m)
    return b.select(b.icmp_signed("<", m, i64(n)), m, b.sub(i64(period), m))


@rule("nn.pad", check=_pad_check)
def _pad(kb, call, index, field):
    arg, pad_value = call.args
    shape = kb.shape(arg)
    attrs = attrs_of(call)
    mode = attrs["pad_mode"]
    widths = [tuple(int(v) for v in w) for w in attrs["pad_width"]]
    b = kb.builder
    dims, inside = [], None
    for d, n, (before, _) in zip(index.dims(), shape, widths):
        local = b.sub(d, i64(before)) if before else d
        if mode == "reflect":
            dims.append(_reflect(b, local, n))
            continue
        if n == 0:
            dims.append(i64(0))
            inside = ir.Constant(ir.IntType(1), 0)
            continue
        dims.append(clamp(b, local, 0, n - 1))  # edge mode, and a safe read for constant
        if mode == "constant":
            ok = b.icmp_unsigned("<", local, i64(n))
            inside = ok if inside is None else b.and_(inside, ok)
    dt = kb.dt(call)
    if inside is not None and inside == ir.Constant(ir.IntType(1), 0):
        return convert(kb, kb.operand(pad_value, index), kb.dt(pad_value), dt)
    v = kb.value(arg, sub_index(kb, index, ("pad", call), shape, dims))
    if mode != "constant" or inside is None:
        return v
    fill = convert(kb, kb.operand(pad_value, index), kb.dt(pad_value), dt)
    return b.select(inside, v, fill)


# --- gathering -----------------------------------------------------------------------------------

_TAKE_MESSAGE = (
    'take: index {detail} is out of range for an axis of size %d (mode="fast" does not check '
    'bounds in TVM; use mode="clip" or "wrap")'
)


def _take_check(call):
    attrs = attrs_of(call)
    data, indices = (a._checked_type for a in call.args)
    if attrs["mode"] not in ("clip", "wrap", "fast"):
        return f"mode {attrs['mode']!r}"
    if str(indices.dtype) not in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "bool"):
        return f"indices of dtype {indices.dtype}"
    axis = attrs["axis"]
    n = math.prod(data.shape) if axis is None else data.shape[norm_axis(axis, len(data.shape))]
    if n == 0 and math.prod(indices.shape):
        return "take from an empty axis"
    if attrs["mode"] == "fast" and math.prod(call._checked_type.shape) == 0 and math.prod(indices.shape):
        return 'mode="fast" with an empty result (its indices are still checked)'
    if axis is not None:
        bd = attrs["batch_dims"]
        bd = bd + len(indices.shape) if bd < 0 else bd
        if not 0 <= bd <= min(norm_axis(axis, len(data.shape)), len(indices.shape)):
            return "batch_dims out of range"
        if data.shape[:bd] != indices.shape[:bd]:
            return "batch dimensions of data and indices differ"
    return None


@rule("take", check=_take_check, materialize=lambda call: attrs_of(call)["mode"] == "fast")
def _take(kb, call, index, field):
    data, indices = call.args
    attrs = attrs_of(call)
    dshape, ishape = kb.shape(data), kb.shape(indices)
    b = kb.builder
    axis = attrs["axis"]
    if axis is None:
        raw = kb.value(indices, index)
        n = math.prod(dshape)
        k = _normalize(kb, raw, kb.dt(indices), n, attrs["mode"])
        return kb.value(data, Index(b, dshape, flat=k))
    axis = norm_axis(axis, len(dshape))
    bd = attrs["batch_dims"]
    bd = bd + len(ishape) if bd < 0 else bd
    out = index.dims()
    ri = len(ishape) - bd
    idx_dims = list(out[:bd]) + list(out[axis : axis + ri])
    raw = kb.value(indices, sub_index(kb, index, ("take-idx", call), ishape, idx_dims))
    k = _normalize(kb, raw, kb.dt(indices), dshape[axis], attrs["mode"])
    dims = list(out[:axis]) + [k] + list(out[axis + ri :])
    return kb.value(data, sub_index(kb, index, ("take", call), dshape, dims))


def _normalize(kb, raw: ir.Value, dt, n: int, mode: str) -> ir.Value:
    """An index into an axis of ``n`` as the mode defines it; always in ``[0, n)`` for the load."""
    b = kb.builder
    if raw.type != I64:
        raw = b.sext(raw, I64) if dt.signed else b.zext(raw, I64)
    if n == 0:
        return i64(0)
    if mode == "clip":
        return clamp(b, raw, 0, n - 1)
    if mode == "wrap":
        m = b.srem(raw, i64(n))
        return b.select(b.icmp_signed("<", m, i64(0)), b.add(m, i64(n)), m)
    bad = b.icmp_unsigned(">=", raw, i64(n))  # negative indices are huge unsigned
    kb.report_error(_TAKE_MESSAGE % n, raw, bad)
    return b.select(bad, i64(0), raw)


__all__: list[str] = []
