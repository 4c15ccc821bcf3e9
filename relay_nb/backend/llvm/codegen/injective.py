"""Index rules of the injective ops: each maps an output element to the input element it
copies, so reshape, transpose, slicing, concatenate... cost index arithmetic inside the
consumer's loop and never a copy (``take`` and ``nn.pad`` are in :mod:`.indexing`).

Reads stay in bounds by construction: the fields ``concatenate`` does not select are read
at a clamped coordinate, and each rule's ``check`` confirms at compile time that the
result shape the type relation gave is the one its index map covers.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

from llvmlite import ir

from ....op.impl._util import norm_axis
from ....op.impl.transform import _slices
from ....op.transform import parse_layout
from .context import attrs_of
from .index import Index, reshaped
from .rules import rule
from .scalar import convert
from .types import Unsupported, dtype, i64


def sub_index(kb, index: Index, key, shape, dims) -> Index:
    """A derived index into an operand of ``shape`` with coordinates ``dims``."""
    return index.derived(key, lambda: Index(kb.builder, shape, dims=dims))


def clamp(b: ir.IRBuilder, v: ir.Value, lo: int, hi: int) -> ir.Value:
    v = b.select(b.icmp_signed("<", v, i64(lo)), i64(lo), v)
    return b.select(b.icmp_signed(">", v, i64(hi)), i64(hi), v)


# --- reshapes: the same flat offset --------------------------------------------------------


@rule("reshape", "reshape_like", "squeeze", "expand_dims", "nn.batch_flatten", flat=True)
def _reshape(kb, call, index, field):
    arg = call.args[0]
    return kb.value(arg, reshaped(index, kb.shape(arg)))


@rule("broadcast_to", "broadcast_to_like", flat=True)
def _broadcast_to(kb, call, index, field):
    return kb.operand(call.args[0], index)


@rule("nn.dropout")
def _dropout(kb, call, index, field):
    """Inference dropout: ``(data, ones)``."""
    if field == 1:
        return convert(kb, ir.Constant(ir.IntType(1), 1), dtype("bool"), kb.dt(call, 1))
    return kb.value(call.args[0], index)


# --- permutations and reversals --------------------------------------------------------------


@rule("transpose")
def _transpose(kb, call, index, field):
    arg = call.args[0]
    shape = kb.shape(arg)
    axes = attrs_of(call)["axes"]
    rank = len(shape)
    axes = list(range(rank))[::-1] if axes is None else [norm_axis(a, rank) for a in axes]
    out = index.dims()
    dims = [None] * rank
    for k, a in enumerate(axes):
        dims[a] = out[k]
    return kb.value(arg, sub_index(kb, index, ("transpose", call), shape, dims))


@rule("reverse")
def _reverse(kb, call, index, field):
    arg = call.args[0]
    shape = kb.shape(arg)
    axis = attrs_of(call)["axis"]
    if axis is None:
        raise Unsupported("reverse without an axis")
    axis = norm_axis(axis, len(shape))
    b = kb.builder
    dims = list(index.dims())
    dims[axis] = b.sub(i64(shape[axis] - 1), dims[axis])
    return kb.value(arg, sub_index(kb, index, ("reverse", call), shape, dims))


def _layout_check(call):
    attrs = attrs_of(call)
    try:
        parse_layout(attrs["src_layout"])
        parse_layout(attrs["dst_layout"])
    except Exception as exc:
        return str(exc)
    if math.prod(call.args[0]._checked_type.shape) != math.prod(call._checked_type.shape):
        return "the result has another number of elements"
    return None


@rule("layout_transform", check=_layout_check)
def _layout_transform(kb, call, index, field):
    """Each primal axis' full coordinate is rebuilt from the output (``outer * f + inner``
    for a packed axis), then split again the way the source layout packs it."""
    arg = call.args[0]
    attrs = attrs_of(call)
    src, dst = parse_layout(attrs["src_layout"]), parse_layout(attrs["dst_layout"])
    b = kb.builder
    out = index.dims()
    dst_pos = {a: k for k, (a, _) in enumerate(dst)}
    primal = {}
    for k, (a, f) in enumerate(dst):
        if a.isupper():
            sub = dst_pos.get(a.lower())
            if sub is None:
                primal[a] = out[k]
            else:
                primal[a] = b.add(b.mul(out[k], i64(dst[sub][1])), out[sub])
    dims = []
    src_factor = {a.upper(): f for a, f in src if f}
    for a, f in src:
        if a.isupper():
            p = primal[a]
            dims.append(b.udiv(p, i64(src_factor[a])) if a in src_factor else p)
        else:
            dims.append(b.urem(primal[a.upper()], i64(f)))
    return kb.value(arg, sub_index(kb, index, ("layout", call), kb.shape(arg), dims))


# --- slicing -----------------------------------------------------------------------------------


def _slice_check(call):
    """Every coordinate read must be in bounds: the result's shape must be the slice's."""
    shape = call.args[0]._checked_type.shape
    try:
        slices = _slices(SimpleNamespace(ndim=len(shape)), attrs_of(call))
    except Exception as exc:
        return str(exc)
    want = tuple(len(range(*s.indices(n))) for s, n in zip(slices, shape))
    if want != tuple(call._checked_type.shape):
        return f"the result shape {call._checked_type.shape} is not the slice's {want}"
    return None


@rule("strided_slice", check=_slice_check)
def _strided_slice(kb, call, index, field):
    arg = call.args[0]
    shape = kb.shape(arg)
    slices = _slices(SimpleNamespace(ndim=len(shape)), attrs_of(call))
    b = kb.builder
    dims = []
    for d, n, s in zip(index.dims(), shape, slices):
        start, _, step = s.indices(n)
        v = d if step == 1 else b.mul(d, i64(step))
        dims.append(v if start == 0 else b.add(v, i64(start)))
    return kb.value(arg, sub_index(kb, index, ("slice", call), shape, dims))


def _split_offsets(call, shape) -> tuple[int, list[int]]:
    attrs = attrs_of(call)
    axis = norm_axis(attrs["axis"], len(shape))
    ios = attrs["indices_or_sections"]
    if isinstance(ios, int):
        size = shape[axis] // ios
        return axis, [k * size for k in range(ios)]
    return axis, [0, *ios]


def _split_check(call):
    shape = call.args[0]._checked_type.shape
    axis, offsets = _split_offsets(call, shape)
    fields = call._checked_type.fields
    ends = offsets[1:] + [shape[axis]]
    if [f.shape[axis] for f in fields] != [e - o for o, e in zip(offsets, ends)]:
        return "the fields' shapes do not match the split"
    return None


@rule("split", check=_split_check)
def _split(kb, call, index, field):
    arg = call.args[0]
    shape = kb.shape(arg)
    axis, offsets = _split_offsets(call, shape)
    dims = list(index.dims())
    if offsets[field]:
        dims[axis] = kb.builder.add(dims[axis], i64(offsets[field]))
    return kb.value(arg, sub_index(kb, index, ("split", call, field), shape, dims))


# --- joining ---------------------------------------------------------------------------------


def _fields(kb, tup) -> list[tuple]:
    ty = tup._checked_type
    return [kb.ttype(tup, i).shape for i in range(len(ty.fields))]


def _field(kb, tup, i: int, index: Index) -> ir.Value:
    return kb.field_value(tup, i, index)


@rule("concatenate")
def _concatenate(kb, call, index, field):
    """Every field is read at its (clamped) coordinate and a select keeps the one whose
    range holds the output coordinate: branch-free, so the loop still vectorizes."""
    tup = call.args[0]
    shapes = _fields(kb, tup)
    out_dt = kb.dt(call)
    axis = norm_axis(attrs_of(call)["axis"], len(index.shape))
    b = kb.builder
    c = index.dim(axis)
    result, offset = None, 0
    for i, shape in enumerate(shapes):
        n = shape[axis]
        if n == 0:
            continue
        dims = list(index.dims())
        local = b.sub(c, i64(offset)) if offset else c
        dims[axis] = clamp(b, local, 0, n - 1) if len(shapes) > 1 else local
        sub = sub_index(kb, index, ("concat", call, i), shape, dims)
        v = convert(kb, _field(kb, tup, i, sub), kb.dt(tup, i), out_dt)
        if result is None:
            result = v
        else:
            result = b.select(b.icmp_signed("<", c, i64(offset)), result, v)
        offset += n
    if result is None:
        raise Unsupported("concatenate of empty tensors only")
    return result


@rule("stack")
def _stack(kb, call, index, field):
    tup = call.args[0]
    shapes = _fields(kb, tup)
    out_dt = kb.dt(call)
    axis = norm_axis(attrs_of(call)["axis"], len(index.shape))
    b = kb.builder
    c = index.dim(axis)
    dims = [d for k, d in enumerate(index.dims()) if k != axis]
    result = None
    for i, shape in enumerate(shapes):
        sub = sub_index(kb, index, ("stack", call, i), shape, dims)
        v = convert(kb, _field(kb, tup, i, sub), kb.dt(tup, i), out_dt)
        result = v if result is None else b.select(b.icmp_unsigned("==", c, i64(i)), v, result)
    return result


# --- repetition --------------------------------------------------------------------------------


@rule("tile")
def _tile(kb, call, index, field):
    arg = call.args[0]
    shape = kb.shape(arg)
    b = kb.builder
    out = index.dims()
    lead = len(index.shape) - len(shape)
    dims = []
    for k, n in enumerate(shape):
        d = out[lead + k]
        dims.append(d if index.shape[lead + k] == n else b.urem(d, i64(n)))
    return kb.value(arg, sub_index(kb, index, ("tile", call), shape, dims))


def _repeat_check(call):
    attrs = attrs_of(call)
    shape = call.args[0]._checked_type.shape
    if attrs["axis"] is None:
        return "repeat without an axis"
    axis = norm_axis(attrs["axis"], len(shape))
    if call._checked_type.shape[axis] != shape[axis] * attrs["repeats"]:
        return "the result shape does not match the repeats"
    return None


@rule("repeat", check=_repeat_check)
def _repeat(kb, call, index, field):
    arg = call.args[0]
    shape = kb.shape(arg)
    attrs = attrs_of(call)
    if attrs["axis"] is None:
        raise Unsupported("repeat without an axis")
    axis = norm_axis(attrs["axis"], len(shape))
    dims = list(index.dims())
    dims[axis] = kb.builder.udiv(dims[axis], i64(attrs["repeats"]))
    return kb.value(arg, sub_index(kb, index, ("repeat", call), shape, dims))


__all__ = ["clamp", "sub_index"]
