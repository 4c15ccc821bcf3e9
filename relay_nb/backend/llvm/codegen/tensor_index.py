"""Index rules of the tensor family (issue 12), computed inside their consumers' loops:
``gather``, ``gather_nd``, ``adv_index``, ``one_hot``, ``trilu``, ``sequence_mask``,
``reverse_sequence``, ``slice_like``, ``meshgrid``, ``contrib_reverse_reshape``,
``matrix_set_diag``, ``unravel_index``, ``fixed_point_multiply(_per_axis)``,
``reinterpret``, ``ndarray_size``, ``auto_scheduler_layout_transform``, ``strided_set`` and ``sparse_reshape``.  The family's
buffer rules are in :mod:`.tensor_loops`.

Semantics are the interpreter's: an index outside ``[-n, n)`` (gather, gather_nd,
adv_index) stops the kernel with the interpreter's error (those calls are materialized so
every index is checked) and reads element 0 meanwhile; so does a ``strided_set`` stride of
0 or a ``v`` that does not fit the slice.
"""

from __future__ import annotations

import math

from llvmlite import ir

from ....ir.ty import TensorType
from ....op.impl._util import convert as np_convert
from ....op.impl._util import norm_axis
from ....op.impl.indexing import (
    SPARSE_RESHAPE_MINUS_ONE,
    SPARSE_RESHAPE_SIZE,
    STRIDE_MESSAGE,
    broadcast_message,
)
from ....op.misc import parse_auto_scheduler_layout
from .context import attrs_of
from .index import broadcast
from .injective import _reshape, clamp, sub_index
from .rules import rule
from .scalar import convert, int_divide, int_mod, shift
from .types import I64, Unsupported, const, dtype, i64

# --- index rules ----------------------------------------------------------------------------------

def _to_i64(kb, v: ir.Value, dt) -> ir.Value:
    if v.type == I64:
        return v
    return kb.builder.sext(v, I64) if dt.signed else kb.builder.zext(v, I64)


def _checked(kb, raw: ir.Value, dt, n: int, op: str) -> ir.Value:
    """An index into an axis of ``n``, negative counted from the end; out of ``[-n, n)``
    reports the interpreter's error and reads 0."""
    b = kb.builder
    raw = _to_i64(kb, raw, dt)
    k = b.select(b.icmp_signed("<", raw, i64(0)), b.add(raw, i64(n)), raw)
    bad = b.icmp_unsigned(">=", k, i64(n))
    kb.report_error(f"{op}: index {{detail}} is out of range for a dimension of {n}", raw, bad)
    return b.select(bad, i64(0), k)


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
    dims = list(index.dims())  # a copy: the index owns its list
    dims[axis] = _checked(kb, kb.value(indices, index), kb.dt(indices), dshape[axis], "gather")
    return kb.value(data, sub_index(kb, index, ("gather", call), dshape, dims))


@rule("one_hot")
def _one_hot(kb, call, index, field):
    indices, on, off = call.args
    dims = list(index.dims())  # a copy: the index owns its list
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
    dims = list(index.dims())  # a copy: the index owns its list
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
    dims = list(index.dims())  # a copy: the index owns its list
    vshape = kb.shape(valid)
    length = kb.value(valid, sub_index(kb, index, ("sequence_mask", call), vshape, [dims[1 - axis]]))
    vdt = kb.dt(valid)
    if vdt.is_float:  # a float length: compare as the interpreter does, step < length
        keep = b.fcmp_ordered("<", b.sitofp(dims[axis], vdt.ir), length)
    else:
        keep = b.icmp_signed("<", dims[axis], _to_i64(kb, length, vdt))
    dt = kb.dt(call)
    fill = np_convert(attrs["mask_value"], dt.name).item()  # the interpreter's cast of the value
    return b.select(keep, kb.value(data, index), const(dt, fill))


# --- more index maps: reverse_reshape, slice_like, reverse_sequence, meshgrid, gathers ------------

# reverse_reshape moves no element: the same flat offset, as reshape.
rule("contrib_reverse_reshape", flat=True)(_reshape)


@rule("slice_like")
def _slice_like(kb, call, index, field):
    data = call.args[0]
    return kb.value(data, sub_index(kb, index, ("slice_like", call), kb.shape(data), index.dims()))


@rule("reverse_sequence")
def _reverse_sequence(kb, call, index, field):
    """``t -> L - 1 - t`` for the first ``L = seq_lengths[b]`` steps (L clipped to [0, n])."""
    data, lengths = call.args
    shape = kb.shape(data)
    attrs = attrs_of(call)
    batch = norm_axis(attrs["batch_axis"], len(shape))
    seq = norm_axis(attrs["seq_axis"], len(shape))
    b = kb.builder
    dims = list(index.dims())  # a copy: the index owns its list
    raw = kb.value(lengths, sub_index(kb, index, ("revseq-len", call), kb.shape(lengths), [dims[batch]]))
    n = clamp(b, _to_i64(kb, raw, kb.dt(lengths)), 0, shape[seq])
    t = dims[seq]
    dims[seq] = b.select(b.icmp_signed("<", t, n), b.sub(b.sub(n, i64(1)), t), t)
    return kb.value(data, sub_index(kb, index, ("revseq", call), shape, dims))


@rule("meshgrid")
def _meshgrid(kb, call, index, field):
    tup = call.args[0]
    dims = list(index.dims())  # a copy: the index owns its list
    axis = field
    if attrs_of(call)["indexing"] == "xy" and len(dims) >= 2 and field < 2:
        axis = 1 - field  # the first two grid axes are swapped
    shape = kb.ttype(tup, field).shape
    sub = sub_index(kb, index, ("meshgrid", call, field), shape, [dims[axis]] if shape else [])
    return kb.field_value(tup, field, sub)


def _no_empty_axis(call):
    shape = call.args[0]._checked_type
    if not isinstance(shape, TensorType):
        shape = shape.fields[0]
    if 0 in shape.shape and math.prod(call._checked_type.shape):
        return "indexing into an empty axis"
    return None


@rule("gather_nd", check=_no_empty_axis, materialize=lambda call: True)
def _gather_nd(kb, call, index, field):
    data, indices = call.args
    dshape, ishape = kb.shape(data), kb.shape(indices)
    m, nb = ishape[0], attrs_of(call)["batch_dims"]
    dims = list(index.dims())  # a copy: the index owns its list
    ydims, rest = dims[: len(ishape) - 1], dims[len(ishape) - 1 :]
    coords = []
    for j in range(m):
        raw = kb.value(indices, sub_index(kb, index, ("gather_nd", call, j), ishape, [i64(j)] + ydims))
        coords.append(_checked(kb, raw, kb.dt(indices), dshape[nb + j], "gather_nd"))
    return kb.value(data, sub_index(kb, index, ("gather_nd", call), dshape, ydims[:nb] + coords + rest))


@rule("adv_index", check=_no_empty_axis, materialize=lambda call: True)
def _adv_index(kb, call, index, field):
    tup = call.args[0]
    n_fields = len(tup._checked_type.fields)
    dshape = kb.ttype(tup, 0).shape
    out = kb.shape(call)
    k = n_fields - 1
    lead = len(out) - (len(dshape) - k)
    dims = list(index.dims())  # a copy: the index owns its list
    bshape = out[:lead]
    bindex = sub_index(kb, index, ("adv_index", call), bshape, dims[:lead])
    coords = []
    for j in range(k):
        ishape = kb.ttype(tup, j + 1).shape
        raw = kb.field_value(tup, j + 1, broadcast(bindex, ishape))
        coords.append(_checked(kb, raw, kb.dt(tup, j + 1), dshape[j], "adv_index"))
    sub = sub_index(kb, index, ("adv_index-data", call), dshape, coords + dims[lead:])
    return kb.field_value(tup, 0, sub)


@rule("matrix_set_diag")
def _matrix_set_diag(kb, call, index, field):
    """Inside the band ``k1 <= j - i <= k2``: the diagonal's element (TensorFlow's layout,
    as the interpreter); outside it: the input.  Diagonal reads are clamped in range."""
    data, diag = call.args
    attrs = attrs_of(call)
    k1, k2 = attrs["k1"], attrs["k2"]
    shape, gshape = kb.shape(data), kb.shape(diag)
    rows, cols, width = shape[-2], shape[-1], gshape[-1]
    b = kb.builder
    dims = index.dims()
    i, j = dims[-2], dims[-1]
    d = b.sub(j, i)

    def smin(x, y):
        return b.select(b.icmp_signed("<", x, y), x, y)

    zero = i64(0)
    length = smin(b.add(i64(rows), smin(d, zero)), b.sub(i64(cols), b.sub(zero, smin(b.sub(zero, d), zero))))
    super_d = b.icmp_signed(">=", d, zero)
    right = b.select(super_d, _flag(attrs["super_diag_right_align"]), _flag(attrs["sub_diag_right_align"]))
    offset = b.select(right, b.sub(i64(width), length), zero)
    pos = clamp(b, b.add(offset, smin(i, j)), 0, width - 1)
    gdims = list(dims[:-2])
    if k1 != k2:
        gdims.append(clamp(b, b.sub(i64(k2), d), 0, k2 - k1))
    gdims.append(pos)
    inband = b.and_(b.icmp_signed(">=", d, i64(k1)), b.icmp_signed("<=", d, i64(k2)))
    dv = convert(kb, kb.value(diag, sub_index(kb, index, ("matrix_set_diag", call), gshape, gdims)), kb.dt(diag), kb.dt(call))
    return b.select(inband, dv, kb.value(data, index))


def _flag(value: bool) -> ir.Constant:
    return ir.Constant(ir.IntType(1), int(bool(value)))


@rule("unravel_index")
def _unravel_index(kb, call, index, field):
    """Coordinate r of an index: divide by the dims after r (innermost first, floor, x / 0
    is 0), then take the remainder by dim r, in int64 as the interpreter does."""
    indices, shape = call.args
    n = kb.shape(shape)[0]
    b = kb.builder
    dims = index.dims()
    ishape = kb.shape(indices)
    raw = kb.value(indices, sub_index(kb, index, ("unravel", call), ishape, dims[1:]))
    i64t = dtype("int64")
    v = convert(kb, raw, kb.dt(indices), i64t)
    r = dims[0]
    for k in range(n - 1, -1, -1):
        dk = convert(kb, kb.value(shape, sub_index(kb, index, ("unravel-dim", call, k), (n,), [i64(k)])), kb.dt(shape), i64t)
        here = b.icmp_signed("==", r, i64(k))
        coord = int_mod(kb, v, dk, i64t, "floor")
        if k == n - 1:
            result = coord
        else:
            result = b.select(here, coord, result)
        v = int_divide(kb, v, dk, i64t, "floor")
    return convert(kb, result, i64t, kb.dt(call))


def _fixed_point_check(call):
    shift = attrs_of(call)["shift"]
    if shift > 31 or -shift + 31 >= 63:
        return f"shift {shift} outside the range the 64-bit product holds"
    return None


@rule("fixed_point_multiply", flat=True, check=_fixed_point_check)
def _fixed_point_multiply(kb, call, index, field):
    """``((x << left) * multiplier + 2**(right + 30)) >> (right + 31)`` in int64."""
    attrs = attrs_of(call)
    shift = attrs["shift"]
    left, right = max(shift, 0), max(-shift, 0)
    b = kb.builder
    x = convert(kb, kb.value(call.args[0], index), kb.dt(call.args[0]), dtype("int64"))
    if left:
        x = b.shl(x, i64(left))
    x = b.add(b.mul(x, i64(attrs["multiplier"])), i64(1 << (right + 30)))
    return convert(kb, b.ashr(x, i64(right + 31)), dtype("int64"), kb.dt(call))


@rule("fixed_point_multiply_per_axis")
def _fixed_point_multiply_per_axis(kb, call, index, field):
    """The same arithmetic with the channel's multiplier and shifts (numpy's shift rules for
    any count, as the interpreter: ``<<`` by 64 or more is 0, ``>>`` fills the sign)."""
    x, mult, left, right = call.args
    attrs = attrs_of(call)
    axis = norm_axis(attrs["axes"][0], len(kb.shape(x)))
    b = kb.builder
    i64t = dtype("int64")
    channel = index.dims()[axis]

    def per_channel(t):
        n = kb.shape(t)[0]
        sub = sub_index(kb, index, ("fpm-axis", call, t), (n,), [channel if n > 1 else i64(0)])
        return convert(kb, kb.value(t, sub), kb.dt(t), i64t)

    v = convert(kb, kb.value(x, index), kb.dt(x), i64t)
    if attrs["is_lshift_required"]:
        v = shift(kb, v, per_channel(left), i64t, left=True)
    total = i64(31)
    if attrs["is_rshift_required"]:
        total = b.add(per_channel(right), total)
    rounding = shift(kb, i64(1), b.sub(total, i64(1)), i64t, left=True)
    v = b.add(b.mul(v, per_channel(mult)), rounding)
    return convert(kb, shift(kb, v, total, i64t, left=False), i64t, kb.dt(call))


def _reinterpret_check(call):
    src, dst = call.args[0]._checked_type.dtype, call._checked_type.dtype
    if "bool" in (src, dst) or "uint1" in (src, dst):
        return "reinterpret of bool"
    return None


@rule("reinterpret", flat=True, check=_reinterpret_check)
def _reinterpret(kb, call, index, field):
    v = kb.value(call.args[0], index)
    target = kb.dt(call).ir
    return v if v.type == target else kb.builder.bitcast(v, target)


@rule("ndarray_size", flat=True)
def _ndarray_size(kb, call, index, field):
    return const(kb.dt(call), math.prod(kb.shape(call.args[0])))


@rule("auto_scheduler_layout_transform")
def _auto_scheduler_layout_transform(kb, call, index, field):
    """Source coordinate of an axis: its destination coordinates, outermost first."""
    data = call.args[0]
    attrs = attrs_of(call)
    _, src_axes = parse_auto_scheduler_layout(attrs["src_layout"])
    dst_shape, dst_axes = parse_auto_scheduler_layout(attrs["dst_layout"])
    b = kb.builder
    dims = index.dims()
    src = []
    for name in src_axes:
        acc = i64(0)
        for d, n, a in zip(dims, dst_shape, dst_axes):
            if a == name:
                acc = b.add(b.mul(acc, i64(n)), d)
        src.append(acc)
    return kb.value(data, sub_index(kb, index, ("as_layout", call), kb.shape(data), src))


# --- strided_set ----------------------------------------------------------------------------------


def _strided_set_check(call):
    data, v, begin, end, strides = (a._checked_type for a in call.args)
    n = min(begin.shape[0], end.shape[0])
    if n > len(data.shape) or len(v.shape) > len(data.shape):
        return "more slice bounds or v axes than data axes"
    if math.prod(data.shape) == 0:
        return "an empty tensor (its checks are the interpreter's)"
    return None


def _slice_axis(kb, x: ir.Value, bv: ir.Value, ev: ir.Value, sv: ir.Value, n: int):
    """Python's ``slice(b, e, s).indices(n)`` at coordinate ``x``: (inside, position in
    the slice, slice length), for either sign of ``s`` (0 is reported by the caller)."""
    b = kb.builder

    def smax(p, q):
        return b.select(b.icmp_signed(">", p, q), p, q)

    def smin(p, q):
        return b.select(b.icmp_signed("<", p, q), p, q)

    def bound(v, lo, hi):  # a negative bound counts from the end, then clamps
        neg = b.icmp_signed("<", v, i64(0))
        return b.select(neg, smax(b.add(v, i64(n)), i64(lo)), smin(v, i64(hi)))

    up = b.icmp_signed(">", sv, i64(0))
    start = b.select(up, bound(bv, 0, n), bound(bv, -1, n - 1))
    stop = b.select(up, bound(ev, 0, n), bound(ev, -1, n - 1))
    step = b.select(up, sv, b.neg(sv))  # |s|, 1 when s is 0 (then nothing is inside)
    step = b.select(b.icmp_signed("==", step, i64(0)), i64(1), step)
    dist = b.select(up, b.sub(x, start), b.sub(start, x))
    span = b.select(up, b.sub(stop, start), b.sub(start, stop))  # elements start..stop
    inside = b.and_(b.icmp_signed(">=", dist, i64(0)), b.icmp_signed("<", dist, span))
    inside = b.and_(inside, b.icmp_signed("==", b.srem(smax(dist, i64(0)), step), i64(0)))
    inside = b.and_(inside, b.icmp_signed("!=", sv, i64(0)))
    length = b.sdiv(b.add(smax(span, i64(0)), b.sub(step, i64(1))), step)
    return inside, b.sdiv(smax(dist, i64(0)), step), length


@rule("strided_set", check=_strided_set_check, materialize=lambda call: True)
def _strided_set(kb, call, index, field):
    data, v, begin, end, strides = call.args
    shape, vshape = kb.shape(data), kb.shape(v)
    n = min(kb.shape(begin)[0], kb.shape(end)[0])
    ns = kb.shape(strides)[0]
    b = kb.builder
    dims = index.dims()

    def bound(t, k):
        sub = sub_index(kb, index, ("strided_set", call, t, k), kb.shape(t), [i64(k)])
        return _to_i64(kb, kb.value(t, sub), kb.dt(t))

    steps = [bound(strides, k) if k < ns else i64(1) for k in range(n)]
    for s in steps:
        kb.report_error(STRIDE_MESSAGE, s, b.icmp_signed("==", s, i64(0)))
    inside, pos, lengths = ir.Constant(ir.IntType(1), 1), list(dims), list(map(i64, shape))
    for k in range(n):
        ok, pos[k], lengths[k] = _slice_axis(kb, dims[k], bound(begin, k), bound(end, k), steps[k], shape[k])
        inside = b.and_(inside, ok)
    lead = len(shape) - len(vshape)
    vdims = []
    for j, d in enumerate(vshape):
        k = lead + j
        if d == 1:
            vdims.append(i64(0))
            continue
        if k < n:  # a sliced axis: its length is known only at run time
            kb.report_error(broadcast_message(j, d, k), lengths[k], b.icmp_signed("!=", lengths[k], i64(d)))
        elif d != shape[k]:
            raise Unsupported(f"v's axis {j} does not fit the data")
        vdims.append(clamp(b, pos[k], 0, d - 1))
    vv = convert(kb, kb.value(v, sub_index(kb, index, ("strided_set-v", call), vshape, vdims)), kb.dt(v), kb.dt(call))
    return b.select(inside, vv, kb.value(data, index))


# --- sparse_reshape -------------------------------------------------------------------------------


def _sparse_reshape_check(call):
    indices, prev, new = (a._checked_type for a in call.args)
    if prev.shape[0] == 0 or new.shape[0] == 0:
        return "an empty shape (its checks are the interpreter's)"
    return None


@rule("sparse_reshape", check=_sparse_reshape_check, materialize=lambda call: True)
def _sparse_reshape(kb, call, index, field):
    """The new shape (its -1 inferred, with the interpreter's checks) and each entry's
    coordinates in it, from its row-major position in prev_shape."""
    indices, prev, new = call.args
    b = kb.builder
    i64t = dtype("int64")
    p_n, m = kb.shape(prev)[0], kb.shape(new)[0]

    def element(t, k):
        sub = sub_index(kb, index, ("sparse_reshape", call, t, k), (kb.shape(t)[0],), [i64(k)])
        return _to_i64(kb, kb.value(t, sub), kb.dt(t))

    def product(values):
        acc = i64(1)
        for v in values:
            acc = b.mul(acc, v)
        return acc

    prev_dims = [element(prev, k) for k in range(p_n)]
    new_dims = [element(new, k) for k in range(m)]
    total = product(prev_dims)
    unknown = [b.icmp_signed("==", d, i64(-1)) for d in new_dims]
    count = i64(0)
    for u in unknown:
        count = b.add(count, b.zext(u, I64))
    kb.report_error(SPARSE_RESHAPE_MINUS_ONE, count, b.icmp_signed(">", count, i64(1)))
    rest = product([b.select(u, i64(1), d) for u, d in zip(unknown, new_dims)])
    has_unknown = b.icmp_signed("==", count, i64(1))
    bad_rest = b.or_(b.icmp_signed("==", rest, i64(0)), b.icmp_signed("!=", int_mod(kb, total, rest, i64t, "floor"), i64(0)))
    kb.report_error(SPARSE_RESHAPE_SIZE, total, b.and_(has_unknown, bad_rest))
    inferred = int_divide(kb, total, rest, i64t, "floor")
    dims = [b.select(u, inferred, d) for u, d in zip(unknown, new_dims)]
    kb.report_error(SPARSE_RESHAPE_SIZE, total, b.icmp_signed("!=", product(dims), total))
    out = index.dims()
    if field == 1:
        value = dims[0]
        for k in range(1, m):
            value = b.select(b.icmp_signed("==", out[0], i64(k)), dims[k], value)
        return convert(kb, value, i64t, kb.dt(call, 1))
    row, col = out
    ishape = kb.shape(indices)
    flat = i64(0)
    for i, d in enumerate(prev_dims):
        v = kb.value(indices, sub_index(kb, index, ("sparse_reshape-idx", call, i), ishape, [row, i64(i)]))
        flat = b.add(b.mul(flat, d), _to_i64(kb, v, kb.dt(indices)))
    coord = i64(0)
    for i in range(m - 1, -1, -1):
        zero_dim = b.icmp_signed("==", dims[i], i64(0))
        here = b.select(zero_dim, i64(0), int_mod(kb, flat, dims[i], i64t, "floor"))
        coord = b.select(b.icmp_signed("==", col, i64(i)), here, coord)
        flat = b.select(zero_dim, flat, int_divide(kb, flat, dims[i], i64t, "floor"))
    return convert(kb, coord, i64t, kb.dt(call, 0))


__all__: list[str] = []
