"""Element indices of a tensor, as the loops produce and the rules consume them.

An :class:`Index` names one element of a row-major tensor of a static shape, by its flat
offset, by its per-axis coordinates, or both; whichever form a rule asks for is derived
on first use (``flat = sum(d_i * stride_i)``, ``d_i = flat / stride_i % n_i``) and kept.
Elementwise chains then run on the flat loop counter alone, which is what lets LLVM
vectorize them, while broadcasting and transposes see coordinates.  ``memo`` caches the
values of nodes at this index (a shared subexpression is emitted once per element).
"""

from __future__ import annotations

import math
from typing import Optional, Sequence

from llvmlite import ir

from .types import i64


def strides(shape: Sequence[int]) -> list[int]:
    """Row-major element strides."""
    out, acc = [], 1
    for d in reversed(shape):
        out.append(acc)
        acc *= d
    return out[::-1]


class Index:
    """One element of a ``shape`` tensor; ``dims`` or ``flat`` (or both) given as i64 values.

    ``row``: ``(outer, offset)``, the leading coordinates known and the flat offset within
    the trailing axes, whose coordinates are then derived only if something reads them
    (an epilogue over rows: its broadcast operands read only the leading ones)."""

    __slots__ = ("builder", "shape", "_dims", "_flat", "_row", "memo")

    def __init__(
        self,
        builder: ir.IRBuilder,
        shape: Sequence[int],
        dims: Optional[Sequence[ir.Value]] = None,
        flat: Optional[ir.Value] = None,
        row: Optional[tuple[Sequence[ir.Value], ir.Value]] = None,
    ):
        self.builder = builder
        self.shape = tuple(shape)
        self._dims = list(dims) if dims is not None else None
        self._flat = flat
        self._row = row
        self.memo: dict = {}
        if dims is None and flat is None:
            raise ValueError("an Index needs dims or a flat offset")
        if self.size == 1:  # every coordinate of a one-element tensor is 0
            self._flat = i64(0)
            self._dims = [i64(0)] * len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def has_flat(self) -> bool:
        return self._flat is not None

    def flat(self) -> ir.Value:
        if self._flat is None:
            b, acc = self.builder, None
            for d, s, n in zip(self._dims, strides(self.shape), self.shape):
                if n == 1:
                    continue
                term = d if s == 1 else b.mul(d, i64(s), flags=("nuw", "nsw"))
                acc = term if acc is None else b.add(acc, term, flags=("nuw", "nsw"))
            self._flat = acc if acc is not None else i64(0)
        return self._flat

    def dims(self) -> list[ir.Value]:
        if self._dims is None and self._row is not None:
            outer, offset = self._row
            inner = Index(self.builder, self.shape[len(outer) :], flat=offset)
            self._dims = list(outer) + inner.dims()
        if self._dims is None:
            b, flat = self.builder, self._flat
            out = []
            st = strides(self.shape)
            for k, (s, n) in enumerate(zip(st, self.shape)):
                if n == 1:
                    out.append(i64(0))
                    continue
                q = flat if s == 1 else b.udiv(flat, i64(s))
                # the outermost coordinate needs no modulo: flat < size
                out.append(q if k == 0 or _outer_only(self.shape, k) else b.urem(q, i64(n)))
            self._dims = out
        return self._dims

    def dim(self, axis: int) -> ir.Value:
        if self._dims is None and self._row is not None and axis < len(self._row[0]):
            return self._row[0][axis]
        return self.dims()[axis]

    def derived(self, key: object, make) -> "Index":
        """A cached index derived from this one (the same broadcast is computed once)."""
        hit = self.memo.get(key)
        if hit is None:
            hit = self.memo[key] = make()
        return hit


def _outer_only(shape: tuple, k: int) -> bool:
    """True when every axis before ``k`` has extent 1 (so axis k is effectively outermost)."""
    return all(n == 1 for n in shape[:k])


def broadcast(index: Index, arg_shape: Sequence[int]) -> Index:
    """The index into an operand of shape ``arg_shape`` that numpy broadcasting reads for
    the output element ``index`` (size-1 axes read coordinate 0, missing axes are dropped)."""
    arg_shape = tuple(arg_shape)
    if arg_shape == index.shape:
        return index
    r, ra = len(index.shape), len(arg_shape)
    if ra > r or any(d not in (1, index.shape[r - ra + j]) for j, d in enumerate(arg_shape)):
        from .types import Unsupported

        raise Unsupported(f"shape {arg_shape} does not broadcast to {index.shape}")
    b = index.builder
    if math.prod(arg_shape) == 1:
        return index.derived(("bcast", arg_shape), lambda: Index(b, arg_shape, flat=i64(0)))
    if math.prod(arg_shape) == index.size and index.has_flat and _same_nonunit(arg_shape, index.shape):
        # (1, n) vs (n,): the same elements in the same order
        return index.derived(("bcast", arg_shape), lambda: Index(b, arg_shape, flat=index.flat()))

    def make() -> Index:
        dims = [i64(0) if arg_shape[j] == 1 else index.dim(r - ra + j) for j in range(ra)]
        return Index(b, arg_shape, dims=dims)

    return index.derived(("bcast", arg_shape), make)


def _same_nonunit(a: tuple, b: tuple) -> bool:
    return [d for d in a if d != 1] == [d for d in b if d != 1]


def reshaped(index: Index, shape: Sequence[int]) -> Index:
    """The same flat element seen as a ``shape`` tensor (reshape, squeeze, expand_dims)."""
    shape = tuple(shape)
    if shape == index.shape:
        return index
    if index._dims is None or index.size == 0:
        return index.derived(("reshape", shape), lambda: Index(index.builder, shape, flat=index.flat()))
    # with coordinates known, carry them across the axis groups the two shapes share:
    # (128, 3072) -> (1, 128, 3072) keeps (i, j); re-deriving them from the flat offset
    # costs a division and a remainder per element, which stops the vectorizer (a fused
    # matmul bias + GELU ran 14x slower for it)
    return index.derived(("reshape", shape), lambda: Index(index.builder, shape, dims=_regrouped(index, shape), flat=index._flat))


def _regrouped(index: Index, shape: tuple) -> list[ir.Value]:
    """``index``'s coordinates in the same-size ``shape``: both shapes are cut where their
    suffix products agree, and in each group the group's own flat offset is split again
    (nothing to split where the new group is one axis)."""
    b, old, dims = index.builder, index.shape, index._dims
    at_old, at_new = _cuts(old), _cuts(shape)
    common = sorted(set(at_old) & set(at_new))  # 1 and the size, at least
    out: list[ir.Value] = [i64(0)] * len(shape)
    for small, big in zip(common, common[1:]):
        o0, o1, n0, n1 = at_old[big], at_old[small], at_new[big], at_new[small]
        flat = Index(b, old[o0:o1], dims=dims[o0:o1]).flat() if o1 > o0 else i64(0)
        part = [flat] if n1 - n0 == 1 else Index(b, shape[n0:n1], flat=flat).dims()
        out[n0:n1] = part
    return out


def _cuts(shape: tuple) -> dict[int, int]:
    """Suffix product -> the axis where the suffix starts (the last such axis, except the
    whole size, which starts at 0 so that leading unit axes fall in a group)."""
    cuts, acc = {1: len(shape)}, 1
    for k in range(len(shape) - 1, -1, -1):
        acc *= shape[k]
        cuts.setdefault(acc, k)
    cuts[acc] = 0
    return cuts


__all__ = ["Index", "broadcast", "reshaped", "strides"]
