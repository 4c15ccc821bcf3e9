"""Index rules of the injective ``nn`` ops of issue 12: depth_to_space, space_to_depth,
mirror_pad, dilate, space_to_batch_nd, batch_to_space_nd and bitpack.  Each maps an output coordinate to the input element it
copies (or, for dilate's holes, to a constant), so they fuse into their consumer's loop.

Reads stay in bounds by construction: the shuffles' maps are bijections onto the input,
mirror_pad's reflections land inside the axis (the relation bounds the widths), and dilate
reads ``d / stride`` which is at most the last element; space_to_batch_nd reads a clamped
element where a select substitutes ``pad_value``; a bitpack word reads its ``width`` packed
elements, all inside the packed axis.
"""

from __future__ import annotations

import numpy as np

from ....op.impl._util import convert as np_convert
from ....op.nn_bitserial import PACK_TYPES, bit_axis_position
from .context import attrs_of
from .injective import clamp, sub_index
from .rules import rule
from .scalar import convert
from .types import const, dtype, i64


def _layout_check(call):
    layout = attrs_of(call)["layout"]
    if sorted(layout) != sorted("NCHW"):
        return f"layout {layout!r}"
    return None


def _shuffle(kb, call, index, to_space: bool):
    """Rebuild the canonical (n, c, h, w) of the output, map it, permute back to the layout."""
    arg = call.args[0]
    shape = kb.shape(arg)
    attrs = attrs_of(call)
    layout = attrs["layout"]
    pos = {a: layout.index(a) for a in "NCHW"}
    bs = attrs["block_size"]
    b = kb.builder
    out = index.dims()
    n, c, h, w = (out[pos[a]] for a in "NCHW")
    if to_space:  # depth_to_space
        c_out = shape[pos["C"]] // (bs * bs)
        i, j = b.urem(h, i64(bs)), b.urem(w, i64(bs))
        block = b.add(b.mul(i, i64(bs)), j)
        if attrs["mode"] == "DCR":
            src_c = b.add(b.mul(block, i64(c_out)), c)
        else:
            src_c = b.add(b.mul(c, i64(bs * bs)), block)
        src = {"N": n, "C": src_c, "H": b.udiv(h, i64(bs)), "W": b.udiv(w, i64(bs))}
    else:  # space_to_depth: channel (i * bs + j) * C + c holds pixel (h * bs + i, w * bs + j)
        c_in = shape[pos["C"]]
        block, src_c = b.udiv(c, i64(c_in)), b.urem(c, i64(c_in))
        i, j = b.udiv(block, i64(bs)), b.urem(block, i64(bs))
        src = {
            "N": n,
            "C": src_c,
            "H": b.add(b.mul(h, i64(bs)), i),
            "W": b.add(b.mul(w, i64(bs)), j),
        }
    dims = [src[a] for a in layout]
    return kb.value(arg, sub_index(kb, index, ("shuffle", call), shape, dims))


@rule("nn.depth_to_space", check=_layout_check)
def _depth_to_space(kb, call, index, field):
    return _shuffle(kb, call, index, to_space=True)


@rule("nn.space_to_depth", check=_layout_check)
def _space_to_depth(kb, call, index, field):
    return _shuffle(kb, call, index, to_space=False)


def _mirror_check(call):
    attrs = attrs_of(call)
    shape = call.args[0]._checked_type.shape
    limit = 1 if attrs["mode"] == "REFLECT" else 0
    for n, (lo, hi) in zip(shape, attrs["pad_width"]):
        if max(lo, hi) > n - limit:
            return "a mirror wider than its axis"
    return None


@rule("nn.mirror_pad", check=_mirror_check)
def _mirror_pad(kb, call, index, field):
    """``v = d - before``; below 0 it mirrors to ``-v - 1`` (SYMMETRIC) or ``-v`` (REFLECT),
    past the end to ``2n - 1 - v`` or ``2n - 2 - v``."""
    arg = call.args[0]
    shape = kb.shape(arg)
    attrs = attrs_of(call)
    shift = 1 if attrs["mode"] == "SYMMETRIC" else 0
    b = kb.builder
    dims = []
    for d, n, (lo, _) in zip(index.dims(), shape, attrs["pad_width"]):
        v = b.sub(d, i64(lo)) if lo else d
        low = b.sub(i64(-shift), v)
        high = b.sub(i64(2 * n - 1 - (1 - shift)), v)
        v = b.select(b.icmp_signed("<", v, i64(0)), low, v)
        dims.append(b.select(b.icmp_signed(">=", v, i64(n)), high, v))
    return kb.value(arg, sub_index(kb, index, ("mirror", call), shape, dims))


@rule("nn.dilate")
def _dilate(kb, call, index, field):
    arg = call.args[0]
    shape = kb.shape(arg)
    strides = attrs_of(call)["strides"]
    b = kb.builder
    dims, on_grid = [], None
    for d, s in zip(index.dims(), strides):
        if s == 1:
            dims.append(d)
            continue
        dims.append(b.udiv(d, i64(s)))
        ok = b.icmp_unsigned("==", b.urem(d, i64(s)), i64(0))
        on_grid = ok if on_grid is None else b.and_(on_grid, ok)
    v = kb.value(arg, sub_index(kb, index, ("dilate", call), shape, dims))
    if on_grid is None:
        return v
    return b.select(on_grid, v, _hole_value(kb.dt(call), attrs_of(call)["dilation_value"]))



def _hole_value(dt, value: float):
    """``value`` as a constant of ``dt``, converted as a cast would (saturating, truncating)."""
    return const(dt, np_convert(np.float64(value), dt.name).item())


@rule("nn.space_to_batch_nd")
def _space_to_batch_nd(kb, call, index, field):
    """Output batch ``(i_1 ... i_m) * N + n`` reads padded pixel ``y_k * b_k + i_k``."""
    arg = call.args[0]
    shape = kb.shape(arg)
    attrs = attrs_of(call)
    block = list(attrs["block_shape"])
    b = kb.builder
    out = index.dims()
    n_in = shape[0]
    offset = b.udiv(out[0], i64(n_in))
    dims, inside = [b.urem(out[0], i64(n_in))], None
    strides = [int(np.prod(block[k + 1 :])) for k in range(len(block))]
    for k, (bk, (lo, _)) in enumerate(zip(block, attrs["paddings"])):
        i_k = b.urem(b.udiv(offset, i64(strides[k])), i64(bk))
        v = b.sub(b.add(b.mul(out[1 + k], i64(bk)), i_k), i64(lo))
        size = shape[1 + k]
        ok = b.icmp_unsigned("<", v, i64(size))  # negative is huge unsigned
        inside = ok if inside is None else b.and_(inside, ok)
        dims.append(clamp(b, v, 0, max(size - 1, 0)))
    dims += list(out[1 + len(block) :])
    v = kb.value(arg, sub_index(kb, index, ("s2b", call), shape, dims))
    return b.select(inside, v, _hole_value(kb.dt(call), attrs["pad_value"]))


@rule("nn.batch_to_space_nd")
def _batch_to_space_nd(kb, call, index, field):
    """Output pixel ``y_k + crop_k`` is ``(s_k, i_k) = divmod(., b_k)`` of input batch
    ``(i_1 ... i_m) * N' + n``."""
    arg = call.args[0]
    shape = kb.shape(arg)
    attrs = attrs_of(call)
    block = list(attrs["block_shape"])
    b = kb.builder
    out = index.dims()
    n_out = call._checked_type.shape[0]
    batch, dims = None, []
    for k, (bk, (lo, _)) in enumerate(zip(block, attrs["crops"])):
        full = b.add(out[1 + k], i64(lo)) if lo else out[1 + k]
        i_k = b.urem(full, i64(bk))
        batch = i_k if batch is None else b.add(b.mul(batch, i64(bk)), i_k)
        dims.append(b.udiv(full, i64(bk)))
    first = b.add(b.mul(batch, i64(n_out)), out[0])
    dims = [first] + dims + list(out[1 + len(block) :])
    return kb.value(arg, sub_index(kb, index, ("b2s", call), shape, dims))



@rule("nn.bitpack")
def _bitpack(kb, call, index, field):
    """Word ``p`` of plane ``b``: bit ``b`` of elements ``p * width + k`` at bit ``width-1-k``."""
    arg = call.args[0]
    shape = kb.shape(arg)
    attrs = attrs_of(call)
    width = PACK_TYPES[attrs["pack_type"]]
    axis = attrs["pack_axis"]
    b = kb.builder
    out = list(index.dims())
    plane = out.pop(bit_axis_position(attrs["bit_axis"], len(shape)))
    dt, i64t = kb.dt(call), dtype("int64")
    word = None
    for k in range(width):
        dims = list(out)
        dims[axis] = b.add(b.mul(out[axis], i64(width)), i64(k))
        v = kb.value(arg, sub_index(kb, index, ("bitpack", call, k), shape, dims))
        bit = b.and_(b.ashr(convert(kb, v, kb.dt(arg), i64t), plane), i64(1))
        placed = b.shl(convert(kb, bit, i64t, dt), const(dt, width - 1 - k))
        word = placed if word is None else b.or_(word, placed)
    return word


__all__: list[str] = []
