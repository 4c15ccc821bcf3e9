"""Index rule of ``vision.yolo_reorg``, the one injective vision op: darknet's reorg reads
the input as an ``(N, C / s^2, H*s, W*s)`` tensor at coordinates computed from the output
element's position in input order, so it lowers to index arithmetic like a transpose."""

from __future__ import annotations

from .context import attrs_of
from .index import Index, reshaped
from .rules import rule
from .types import i64


def _reorg_check(call):
    n, c, h, w = call.args[0]._checked_type.shape
    s = attrs_of(call)["stride"]
    if s < 1 or c % (s * s) or h % s or w % s:
        return f"shape {(n, c, h, w)} does not divide by stride {s}"
    return None


@rule("vision.yolo_reorg", check=_reorg_check)
def _yolo_reorg(kb, call, index, field):
    arg = call.args[0]
    n, c, h, w = kb.shape(arg)
    s = attrs_of(call)["stride"]
    oc = c // (s * s)
    b = kb.builder
    # output element f is element (bi, k, j, i) of the input-shaped (n, c, h, w) ordering
    bi, k, j, i = reshaped(index, (n, c, h, w)).dims()
    offset = b.udiv(k, i64(oc))
    h2 = b.add(b.mul(j, i64(s)), b.udiv(offset, i64(s)))
    w2 = b.add(b.mul(i, i64(s)), b.urem(offset, i64(s)))
    view = index.derived(
        ("reorg", call),
        lambda: Index(b, (n, oc, h * s, w * s), dims=[bi, b.urem(k, i64(oc)), h2, w2]),
    )
    return kb.value(arg, reshaped(view, (n, c, h, w)))
