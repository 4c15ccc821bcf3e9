"""Rule of ``nn.correlation`` (``topi.nn.correlation_nchw``), a direct loop nest with the
interpreter's semantics (:mod:`relay_nb.op.impl.nn_special`)."""

from __future__ import annotations

from llvmlite import ir

from ....op.impl._util import pad_pairs
from .context import attrs_of
from .index import Index
from .pool import _apply_epilogue
from .reduce import _alloca
from .rules import rule
from .types import dtype, i64


def _correlation_check(call):
    dt = dtype(call._checked_type.dtype)
    if not dt.is_float or any(a._checked_type.dtype != dt.name for a in call.args):
        return "non-float or mixed dtypes"
    return None


@rule("nn.correlation", kind="buffer", anchor=True, check=_correlation_check)
def _correlation(kb, call, outs, epilogue):
    """Output ``(n, q, y, x)``: over the ``k x k`` patch taps (row major), the channel sum
    of ``a * b`` (or ``|a - b|``) of data1's patch at ``(y * s1 + md, x * s1 + md)`` and
    data2's displaced by displacement ``q``, both zero-padded; added tap after tap as the
    interpreter does, then divided by ``k * k * C``."""
    a, b_ = call.args
    attrs = attrs_of(call)
    k, md = attrs["kernel_size"], attrs["max_displacement"]
    s1, s2 = attrs["stride1"], attrs["stride2"]
    (top, _), (left, _) = pad_pairs(attrs["padding"], 2)
    shape = kb.shape(a)
    _, c, h, w = shape
    out = outs[0]
    dt = out.dt
    b = kb.builder
    r = md // s2
    side = 2 * r + 1
    multiply = attrs["is_multiply"]
    total, part = _alloca(kb, dt.ir), _alloca(kb, dt.ir)
    zero = ir.Constant(dt.ir, 0.0)

    def read(node, n, ch, y, x):
        """``node`` padded with zeros, at padded coordinates ``(y, x)``."""
        y, x = b.sub(y, i64(top)), b.sub(x, i64(left))
        ok = b.and_(b.icmp_unsigned("<", y, i64(h)), b.icmp_unsigned("<", x, i64(w)))
        at = Index(b, shape, dims=[n, ch, b.select(ok, y, i64(0)), b.select(ok, x, i64(0))])
        return b.select(ok, kb.value(node, at), zero)

    with kb.nest(out.shape) as oi:
        n, q, oy, ox = oi.dims()
        dy = b.mul(b.sub(b.udiv(q, i64(side)), i64(r)), i64(s2))
        dx = b.mul(b.sub(b.urem(q, i64(side)), i64(r)), i64(s2))
        row = b.add(b.mul(oy, i64(s1)), i64(md))
        col = b.add(b.mul(ox, i64(s1)), i64(md))
        b.store(zero, total)
        with kb.loop(k, "ci") as i:
            with kb.loop(k, "cj") as j:
                y, x = b.add(row, i), b.add(col, j)
                b.store(zero, part)
                with kb.loop(c, "cc") as ch:
                    p1 = read(a, n, ch, y, x)
                    p2 = read(b_, n, ch, b.add(y, dy), b.add(x, dx))
                    if multiply:
                        term = b.fmul(p1, p2)
                    else:
                        term = kb.call(f"llvm.fabs.{'f32' if dt.bits == 32 else 'f64'}", dt.ir, b.fsub(p1, p2))
                    b.store(b.fadd(b.load(part, typ=dt.ir), term, flags=("reassoc",)), part)
                b.store(b.fadd(b.load(total, typ=dt.ir), b.load(part, typ=dt.ir)), total)
        out.store(b, oi, b.fdiv(b.load(total, typ=dt.ir), ir.Constant(dt.ir, float(k * k * c))))
    _apply_epilogue(kb, out, epilogue, 1)


__all__: list[str] = []
