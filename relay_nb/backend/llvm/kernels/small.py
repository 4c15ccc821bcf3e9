"""GEMM with few rows (a batch-1 dense layer): unpacked kernels that stream B once.

With M of 1 to a dozen, packing B costs more than the multiply (each packed element is
used by one or two A rows), and the product is bound by reading B. Two routines read B in
place instead, each in the direction B is contiguous:

* ``dot`` — B's columns contiguous (dense's ``(N, K)`` weight): C[i, j] is a dot product
  of two contiguous rows; a tile of rows x columns keeps one vector accumulator per pair
  over k, reduced horizontally at the end (4 x 3 tiles, or 1 x 4 for a lone row: more
  rows of B at once, N floats apart, start to evict each other from one L1 set); lone
  rows sweep B forwards and backwards on alternate calls (see ``_sweep``).
* ``axpy`` — B's rows contiguous (plain matmul): a tile of C rows accumulates
  ``A[i, k] * B[k, j:j+NR]`` over a block of k (6 x 2 vectors, or 1 x 4 vectors for a
  lone row); the ragged last columns go through a lane mask, never past the row's end.

Up to 32 rows for ``dot`` and 12 for ``axpy`` (measured crossovers with the packed kernel
on 512 and 1024 squares) the driver picks these.

Rows past M are clamped to the last row (their results are not stored), so a group of
rows needs no remainder code beyond the single-row tile.
"""

from __future__ import annotations

from llvmlite import ir

from ._loops import I1, I32, I64, PTR, declare, fma, for_range, gep, i64, smin, splat, zero
from .gemm import Tile, _function


def _hsum(b: ir.IRBuilder, v: ir.Value, float_: bool) -> ir.Value:
    """The sum of a vector's lanes by halving (a shuffle tree, not a serial chain)."""
    lanes = v.type.count
    while lanes > 1:
        half = lanes // 2
        lo = b.shuffle_vector(v, v, ir.Constant(ir.VectorType(I32, half), list(range(half))))
        hi = b.shuffle_vector(v, v, ir.Constant(ir.VectorType(I32, half), list(range(half, lanes))))
        v = b.fadd(lo, hi) if float_ else b.add(lo, hi)
        lanes = half
    return b.extract_element(v, ir.Constant(I32, 0))


def _dot_tile(b, t: Tile, rows: int, cols: int, a, ars, bm, bcs, c, ldc, i0, j0, m, n, k) -> None:
    """C[i0:i0+rows, j0:j0+cols] as dot products (rows/cols clamped to m/n on load,
    guarded on store)."""
    elem, lanes, dt = t.dt.ir, t.lanes, t.dt
    a_rows = [gep(b, elem, a, b.mul(smin(b, b.add(i0, i64(r)), b.sub(m, i64(1))), ars)) for r in range(rows)]
    b_cols = [gep(b, elem, bm, b.mul(smin(b, b.add(j0, i64(s)), b.sub(n, i64(1))), bcs)) for s in range(cols)]
    blocked = b.mul(b.sdiv(k, i64(lanes)), i64(lanes))
    with for_range(b, 0, blocked, lanes, init=[zero(t.vec)] * (rows * cols), name="dk") as loop:
        acc = list(loop.carried)
        av = [b.load(gep(b, elem, p, loop.index), typ=t.vec, align=dt.itemsize) for p in a_rows]
        bv = [b.load(gep(b, elem, p, loop.index), typ=t.vec, align=dt.itemsize) for p in b_cols]
        for r in range(rows):
            for s in range(cols):
                acc[r * cols + s] = fma(b, av[r], bv[s], acc[r * cols + s])
        loop.carry(acc)
    sums = [_hsum(b, v, dt.is_float) for v in loop.carried]
    with for_range(b, blocked, k, init=sums, name="dt") as tail:
        acc = list(tail.carried)
        av = [b.load(gep(b, elem, p, tail.index), typ=elem) for p in a_rows]
        bv = [b.load(gep(b, elem, p, tail.index), typ=elem) for p in b_cols]
        for r in range(rows):
            for s in range(cols):
                acc[r * cols + s] = fma(b, av[r], bv[s], acc[r * cols + s])
        tail.carry(acc)
    for r in range(rows):
        for s in range(cols):
            i, j = b.add(i0, i64(r)), b.add(j0, i64(s))
            inside = b.and_(b.icmp_signed("<", i, m), b.icmp_signed("<", j, n))
            with b.if_then(inside):
                b.store(tail.carried[r * cols + s], gep(b, elem, c, b.add(b.mul(i, ldc), j)))


def build_dot(module: ir.Module, t: Tile, name: str) -> ir.Function:
    """``dot(a, ars, b, bcs, c, ldc, m, n, k)``: ``C[i, j] = sum_k a[i*ars + k] * b[j*bcs + k]``."""
    args = [("a", PTR), ("ars", I64), ("b", PTR), ("bcs", I64), ("c", PTR), ("ldc", I64),
            ("m", I64), ("n", I64), ("k", I64)]
    fn, b = _function(module, name, args)
    a, ars, bm, bcs, c, ldc, m, n, k = fn.args
    # 4-row tiles (the last one clamped) while at least 2 rows remain, then single rows
    groups = b.mul(b.sdiv(b.add(m, i64(2)), i64(4)), i64(4))
    with for_range(b, 0, groups, 4, name="di") as i:
        with for_range(b, 0, n, 3, name="dj") as j:
            _dot_tile(b, t, 4, 3, a, ars, bm, bcs, c, ldc, i.index, j.index, m, n, k)
    # single rows sweep B's rows forwards and backwards on alternate calls (see _sweep)
    backwards = _sweep(b, name)
    tiles = b.sdiv(b.add(n, i64(3)), i64(4))
    with for_range(b, groups, m, name="d1") as i:
        with for_range(b, 0, tiles, name="dj1") as j:
            tile = b.select(backwards, b.sub(b.sub(tiles, i64(1)), j.index), j.index)
            _dot_tile(b, t, 1, 4, a, ars, bm, bcs, c, ldc, i.index, b.mul(tile, i64(4)), m, n, k)
    b.ret_void()
    return fn


def _sweep(b: ir.IRBuilder, name: str) -> ir.Value:
    """True on every other call of the routine (a flag in the module, flipped per call).

    A weight bigger than L2 read front to back on every call (an LSTM's recurrent matrix,
    once per time step) evicts itself: each call misses on all of it.  Read in the other
    direction on the next call, the part read last is still in L2 and is read first.
    Every output element is the same dot product either way; the flag is only a hint
    (threads flipping it at once just pick either direction)."""
    flag = ir.GlobalVariable(b.module, I64, name=f"{name}.sweep")
    flag.linkage = "internal"
    flag.initializer = ir.Constant(I64, 0)
    old = b.load_atomic(flag, "monotonic", 8)
    b.store_atomic(b.xor(old, i64(1)), flag, "monotonic", 8)
    return b.icmp_signed("!=", old, i64(0))


def _masked_load(b: ir.IRBuilder, t: Tile, ptr, mask) -> ir.Value:
    vec = t.vec
    mask_ty = ir.VectorType(I1, t.lanes)
    fn = declare(b.module, f"llvm.masked.load.v{t.lanes}{t.dt.ir.intrinsic_name}.p0", vec, [PTR, I32, mask_ty, vec])
    return b.call(fn, [ptr, ir.Constant(I32, t.dt.itemsize), mask, zero(vec)])


def _masked_store(b: ir.IRBuilder, t: Tile, value, ptr, mask) -> None:
    mask_ty = ir.VectorType(I1, t.lanes)
    name = f"llvm.masked.store.v{t.lanes}{t.dt.ir.intrinsic_name}.p0"
    fn = declare(b.module, name, ir.VoidType(), [t.vec, PTR, I32, mask_ty])
    b.call(fn, [value, ptr, ir.Constant(I32, t.dt.itemsize), mask])


KB = 16  # k rows per block of the axpy kernel


def _axpy_tile(b, t: Tile, rows: int, nv: int, a, ars, acs, bm, brs, c, ldc, i0, j0, m, n, k0, kb, first) -> None:
    """C[i0:i0+rows, j0:j0+nv*L] (+)= A[i, k0:k0+kb] @ B[k0:k0+kb, j...], B's rows in place."""
    elem, lanes, dt = t.dt.ir, t.lanes, t.dt
    width = nv * lanes
    clamped = [smin(b, b.add(i0, i64(r)), b.sub(m, i64(1))) for r in range(rows)]
    a_rows = [gep(b, elem, a, b.add(b.mul(i, ars), b.mul(k0, acs))) for i in clamped]
    c_rows = [gep(b, elem, c, b.add(b.mul(i, ldc), j0)) for i in clamped]
    valid = smin(b, width, b.sub(n, j0))
    lane = ir.Constant(ir.VectorType(I64, lanes), list(range(lanes)))
    masks = [
        b.icmp_signed("<", b.add(lane, splat(b, i64(v * lanes), lanes)), splat(b, valid, lanes))
        for v in range(nv)
    ]
    b_start = gep(b, elem, bm, b.add(b.mul(k0, brs), j0))

    def load(p, v, masked):
        return _masked_load(b, t, p, masks[v]) if masked else b.load(p, typ=t.vec, align=dt.itemsize)

    def tile(masked: bool) -> None:
        init = []
        for r in range(rows):  # C so far (clamped rows read a valid row, never stored)
            for v in range(nv):
                init.append(b.select(first, zero(t.vec), load(gep(b, elem, c_rows[r], v * lanes), v, masked)))
        with for_range(b, 0, kb, init=init, name="ak") as loop:
            acc = list(loop.carried)
            row = gep(b, elem, b_start, b.mul(loop.index, brs))
            bv = [load(gep(b, elem, row, v * lanes), v, masked) for v in range(nv)]
            for r in range(rows):
                av = splat(b, b.load(gep(b, elem, a_rows[r], b.mul(loop.index, acs)), typ=elem), lanes)
                for v in range(nv):
                    acc[r * nv + v] = fma(b, av, bv[v], acc[r * nv + v])
            loop.carry(acc)
        for r in range(rows):
            with b.if_then(b.icmp_signed("<", b.add(i0, i64(r)), m)):
                for v in range(nv):
                    p = gep(b, elem, c_rows[r], v * lanes)
                    if masked:
                        _masked_store(b, t, loop.carried[r * nv + v], p, masks[v])
                    else:
                        b.store(loop.carried[r * nv + v], p, align=dt.itemsize)

    with b.if_else(b.icmp_signed("==", valid, i64(width))) as (whole, ragged):
        with whole:
            tile(False)
        with ragged:
            tile(True)


def build_axpy(module: ir.Module, t: Tile, name: str) -> ir.Function:
    """``axpy(a, ars, acs, b, brs, c, ldc, m, n, k)``: ``C = A @ B`` with B's rows contiguous
    (``B[k, j] = b[k*brs + j]``).

    K goes in blocks of KB rows; within a block the column tiles sweep along KB rows of B
    at once — KB sequential streams the prefetcher follows. (Running each tile over all of
    K instead walks B down a column, one cache line per row N floats apart: a miss per
    step once N*4 bytes is a page, five times slower at 1024 x 1024.)"""
    args = [("a", PTR), ("ars", I64), ("acs", I64), ("b", PTR), ("brs", I64), ("c", PTR),
            ("ldc", I64), ("m", I64), ("n", I64), ("k", I64)]
    fn, b = _function(module, name, args)
    a, ars, acs, bm, brs, c, ldc, m, n, k = fn.args
    mr = 6
    # a lone row gets the 1-row tile; otherwise 6-row tiles (the last clamped): B is read
    # once per tile, and streaming B is the cost here, not the wasted multiply-adds
    groups = b.select(b.icmp_signed("==", m, i64(1)), i64(0), m)
    for start, stop, rows, nv in [(0, groups, mr, 2), (groups, m, 1, 4)]:
        with for_range(b, start, stop, rows, name="ai") as i:
            with for_range(b, 0, k, KB, name="ak0") as k0:
                kb = smin(b, KB, b.sub(k, k0.index))
                first = b.icmp_signed("==", k0.index, i64(0))
                with for_range(b, 0, n, nv * t.lanes, name="aj") as j:
                    _axpy_tile(b, t, rows, nv, a, ars, acs, bm, brs, c, ldc, i.index, j.index, m, n, k0.index, kb, first)
    b.ret_void()
    return fn


__all__ = ["build_dot", "build_axpy"]
