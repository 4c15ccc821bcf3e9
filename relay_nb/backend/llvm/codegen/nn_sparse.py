"""Buffer rules of the sparse products: ``nn.sparse_dense`` (and its GPU-padded twin
``nn.internal.sparse_dense_padded``), ``nn.sparse_conv2d``, and ``nn.sparse_transpose``.

The interpreter densifies the CSR / BSR operand and multiplies (:mod:`relay_nb.op.impl.nn_sparse`);
the kernel walks the stored entries instead, so it does work in proportion to them.  It
first checks the structure as the interpreter does (``indptr`` non-decreasing within the
entries, every column inside the matrix: the interpreter's EvalErrors, through the status
slot), and only then reads with those indices, so malformed input never reads out of
bounds.  Integer results are exact; float sums are accumulated entry by entry (another
order than numpy's matmul).
"""

from __future__ import annotations

from llvmlite import ir

from .context import Buffer, attrs_of
from .reduce import _alloca
from .rules import rule
from .scalar import convert
from .types import I64, dtype, i64, zero

_I64 = dtype("int64")


def _int_at(kb, buf: Buffer, flat) -> ir.Value:
    return convert(kb, buf.load_flat(kb.builder, flat if isinstance(flat, ir.Value) else i64(flat)), buf.dt, _I64)


def _status_ok(kb) -> ir.Value:
    b = kb.builder
    kb.uses_status = True
    return b.icmp_signed("==", b.load(kb.status, typ=I64), i64(0))


def _checked(kb, indices: Buffer, indptr: Buffer, nnz: int, n_cols: int, bs_c: int):
    """Check the sparse structure (errors through the status slot); return ``ok`` (i1): the
    walk may read with these indices."""
    b = kb.builder
    rows = indptr.size - 1
    with kb.loop(rows + 1, "sp") as k:
        p = _int_at(kb, indptr, k)
        prev = _int_at(kb, indptr, b.select(b.icmp_signed(">", k, i64(0)), b.sub(k, i64(1)), i64(0)))
        bad = b.or_(b.icmp_signed("<", p, prev), b.icmp_unsigned(">", p, i64(nnz)))  # also p < 0
        kb.report_error(f"indptr does not index {nnz} entries (at position {{detail}})", k, bad)
    ok = _status_ok(kb)
    with b.if_then(ok):
        with kb.loop(_int_at(kb, indptr, rows), "sc") as j:
            col = _int_at(kb, indices, j)
            bad = b.icmp_unsigned(">=", b.mul(col, i64(bs_c)), i64(n_cols))
            kb.report_error(f"column index {{detail}} is outside a matrix of {n_cols} columns", col, bad)
    return _status_ok(kb)


def _blocks(shape: tuple) -> tuple:
    if len(shape) == 1:
        return 1, 1
    if len(shape) == 2:
        return shape[1], 1
    return shape[1], shape[2]


def _mac(b, acc, x, w, dt):
    return b.fadd(acc, b.fmul(x, w)) if dt.is_float else b.add(acc, b.mul(x, w))


def _sparse_check(call):
    dense, data = call.args[0], call.args[1]
    if call._checked_type.dtype == "bool":
        return "bool operands"
    if call.op.name == "nn.sparse_conv2d":
        return None
    n_cols = dense._checked_type.shape[1]  # the sparse matrix's columns, with sparse_lhs too
    if n_cols % _blocks(data._checked_type.shape)[1]:
        return "columns that are not whole blocks"
    return None


@rule("nn.sparse_dense", "nn.internal.sparse_dense_padded", kind="buffer", check=_sparse_check)
def _sparse_dense(kb, call, outs, epilogue):
    """``out[m, row] = sum over the entries w of row: dense[m, col] * w`` (``sparse_lhs``:
    ``out[row, m]``), one register accumulator per block row; ``m`` is the outer loop
    (``row`` with ``sparse_lhs``), so the result is written row by row."""
    dense, data, indices, indptr = (kb.materialize(a) for a in call.args)
    out = outs[0]
    dt = out.dt
    lhs = attrs_of(call)["sparse_lhs"]
    m_rows, k = dense.shape
    bs_r, bs_c = _blocks(data.shape)
    b = kb.builder
    ok = _checked(kb, indices, indptr, data.shape[0], k, bs_c)  # (if not, the call raises)
    n = out.shape[1]
    slots = [_alloca(kb, dt.ir) for _ in range(bs_r)]

    def row_block(m, r):
        for slot in slots:
            b.store(zero(dt), slot)
        start, stop = _int_at(kb, indptr, r), _int_at(kb, indptr, b.add(r, i64(1)))
        with kb.loop(stop, "sj", start=start) as j:
            base = b.add(b.mul(m, i64(k)), b.mul(_int_at(kb, indices, j), i64(bs_c)))
            for c in range(bs_c):
                x = convert(kb, dense.load_flat(b, b.add(base, i64(c))), dense.dt, dt)
                for a, slot in enumerate(slots):
                    w = data.load_flat(b, b.add(b.mul(j, i64(bs_r * bs_c)), i64(a * bs_c + c)))
                    w = convert(kb, w, data.dt, dt)
                    acc = b.load(slot, typ=dt.ir)
                    b.store(_mac(b, acc, w, x, dt) if lhs else _mac(b, acc, x, w, dt), slot)
        for a, slot in enumerate(slots):
            row = b.add(b.mul(r, i64(bs_r)), i64(a))
            at = b.add(b.mul(row, i64(n)), m) if lhs else b.add(b.mul(m, i64(n)), row)
            out.store_flat(b, at, b.load(slot, typ=dt.ir))

    rows = indptr.size - 1
    with b.if_then(ok):
        if lhs:
            with kb.loop(rows, "sr") as r, kb.loop(m_rows, "sm") as m:
                row_block(m, r)
        else:
            with kb.loop(m_rows, "sm") as m, kb.loop(rows, "sr") as r:
                row_block(m, r)


@rule("nn.sparse_conv2d", kind="buffer", check=_sparse_check)
def _sparse_conv2d(kb, call, outs, epilogue):
    """The interpreter's im2col read in place: column ``q`` of pixel ``p`` is the input at
    tap ``(i, j)`` and channel ``ch`` (``q = (3 i + j) C + ch`` for NHWC, ``ch * 9 + 3 i + j``
    for NCHW; ``ch`` for 1 x 1), zero outside the image."""
    x, data, indices, indptr = (kb.materialize(a) for a in call.args)
    out = outs[0]
    dt = out.dt
    attrs = attrs_of(call)
    nhwc = attrs["layout"] == "NHWC"
    n, h, w, c = x.shape if nhwc else (x.shape[0], x.shape[2], x.shape[3], x.shape[1])
    three = tuple(attrs["kernel_size"]) == (3, 3)
    n_cols = 9 * c if three else c
    blocks = _blocks(data.shape)
    co = out.shape[3] if nhwc else out.shape[1]
    b = kb.builder
    if n_cols % blocks[1]:  # the interpreter's error, for any input values
        kb.report_error(f"{n_cols} columns are not a whole number of {blocks[1]}-wide blocks", i64(0), ir.Constant(ir.IntType(1), 1))
        return
    ok = _checked(kb, indices, indptr, data.shape[0], n_cols, blocks[1])  # (if not, the call raises)
    bs_r, bs_c = blocks
    slots = [_alloca(kb, dt.ir) for _ in range(bs_r)]

    def x_at(bn, y, xx, ch):
        if nhwc:
            flat = b.add(b.mul(b.add(b.mul(b.add(b.mul(bn, i64(h)), y), i64(w)), xx), i64(c)), ch)
        else:
            flat = b.add(b.mul(b.add(b.mul(b.add(b.mul(bn, i64(c)), ch), i64(h)), y), i64(w)), xx)
        return x.load_flat(b, flat)

    def column(bn, y, xx, col):
        """The im2col value of pixel (bn, y, xx) at column ``col`` (0 in the padding)."""
        if three:
            tap, ch = (b.udiv(col, i64(c)), b.urem(col, i64(c))) if nhwc else (b.urem(col, i64(9)), b.udiv(col, i64(9)))
            yy = b.add(y, b.sub(b.udiv(tap, i64(3)), i64(1)))
            xs = b.add(xx, b.sub(b.urem(tap, i64(3)), i64(1)))
            oky = b.icmp_unsigned("<", yy, i64(h))
            inside = b.and_(oky, b.icmp_unsigned("<", xs, i64(w)))
            v = x_at(bn, b.select(oky, yy, i64(0)), b.select(inside, xs, i64(0)), ch)
            return b.select(inside, convert(kb, v, x.dt, dt), zero(dt))
        return convert(kb, x_at(bn, y, xx, col), x.dt, dt)

    with b.if_then(ok):
        # out[pixel, row] = sum over the row's entries of column(pixel, col) * w, in registers
        with kb.loop(n, "cn") as bn, kb.loop(h, "cy") as y, kb.loop(w, "cx") as xx:
            with kb.loop(indptr.size - 1, "cr") as r:
                for slot in slots:
                    b.store(zero(dt), slot)
                start, stop = _int_at(kb, indptr, r), _int_at(kb, indptr, b.add(r, i64(1)))
                with kb.loop(stop, "cj", start=start) as j:
                    base = b.mul(_int_at(kb, indices, j), i64(bs_c))
                    for cc in range(bs_c):
                        v = column(bn, y, xx, b.add(base, i64(cc)))
                        for a, slot in enumerate(slots):
                            wv = data.load_flat(b, b.add(b.mul(j, i64(bs_r * bs_c)), i64(a * bs_c + cc)))
                            b.store(_mac(b, b.load(slot, typ=dt.ir), v, convert(kb, wv, data.dt, dt), dt), slot)
                for a, slot in enumerate(slots):
                    row = b.add(b.mul(r, i64(bs_r)), i64(a))
                    if nhwc:
                        at = b.add(b.mul(b.add(b.mul(b.add(b.mul(bn, i64(h)), y), i64(w)), xx), i64(co)), row)
                    else:
                        at = b.add(b.mul(b.add(b.mul(b.add(b.mul(bn, i64(co)), row), i64(h)), y), i64(w)), xx)
                    out.store_flat(b, at, b.load(slot, typ=dt.ir))


def _transpose_check(call):
    n = call.args[2]._checked_type.shape[0] - 1
    return None if n >= 0 else "an empty indptr"


@rule("nn.sparse_transpose", kind="buffer", check=_transpose_check)
def _sparse_transpose(kb, call, outs, epilogue):
    """A counting sort by column: ``t_indptr`` from the column counts, then each entry, in
    storage order (rows ascending), to the next free slot of its column, so entries come
    out sorted by (column, row) as the interpreter's lexsort; storage past ``indptr[-1]``
    is copied as it is."""
    data, indices, indptr = (kb.materialize(a) for a in call.args)
    t_data, t_indices, t_ptr = outs
    b = kb.builder
    n = indptr.size - 1
    nnz = data.shape[0]
    for src, dst in ((data, t_data), (indices, t_indices)):  # the unused tail stays
        with kb.loop(dst.size, "tc") as i:
            dst.store_flat(b, i, src.load_flat(b, i))
    with kb.loop(t_ptr.size, "tz") as i:
        t_ptr.store_flat(b, i, zero(t_ptr.dt))
    ok = _checked(kb, indices, indptr, nnz, n, 1)
    pdt = t_ptr.dt
    one = ir.Constant(pdt.ir, 1)
    with b.if_then(ok):
        end = _int_at(kb, indptr, n)
        with kb.loop(end, "tn") as j:  # counts, shifted by one: t_ptr[col + 1] += 1
            at = b.add(_int_at(kb, indices, j), i64(1))
            t_ptr.store_flat(b, at, b.add(t_ptr.load_flat(b, at), one))
        with kb.loop(n, "ts") as i:  # prefix sums
            at = b.add(i, i64(1))
            t_ptr.store_flat(b, at, b.add(t_ptr.load_flat(b, at), t_ptr.load_flat(b, i)))
        # the next free slot of each column, in the workspace
        nxt = kb.scratch((max(n, 1),), _I64)
        with kb.loop(n, "tf") as i:
            nxt.store_flat(b, i, convert(kb, t_ptr.load_flat(b, i), pdt, _I64))
        with kb.loop(n, "tr") as r:
            with kb.loop(_int_at(kb, indptr, b.add(r, i64(1))), "tj", start=_int_at(kb, indptr, r)) as j:
                col = _int_at(kb, indices, j)
                pos = nxt.load_flat(b, col)
                nxt.store_flat(b, col, b.add(pos, i64(1)))
                t_data.store_flat(b, pos, data.load_flat(b, j))
                t_indices.store_flat(b, pos, convert(kb, r, _I64, t_indices.dt))


__all__: list[str] = []
