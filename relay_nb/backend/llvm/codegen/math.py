"""Transcendental functions as straight-line IR, so that loops calling them vectorize.

A call of ``llvm.exp.f32`` per element is a scalar libm call that the loop vectorizer
cannot widen (there is no vector math library in the JIT), and it measured 4x slower than
a polynomial here.  For ``float32`` the common activations — exp, log, tanh, sigmoid, erf
— are therefore range reduction plus a polynomial evaluated with FMA, in selects only (no
branches), accurate to about 1-2 ulp (Cephes' coefficients for log/tanh, a minimax fit
for exp, a Chebyshev fit for erf; the property tests compare against numpy).  ``float64``
and the rarer functions call the C library (``exp``, ``sinf``...), exactly what numpy
calls.
"""

from __future__ import annotations

from typing import Sequence

from llvmlite import ir

from .types import F32, I32, DType, Unsupported

_LOG2E = 1.44269504088896341
_LN2_HI, _LN2_LO = 0.693359375, -2.12194440e-4

# e^r = 1 + r + r^2 P(r) on |r| <= ln2/2, P of degree 4: a relative-error minimax fit (3e-9,
# 0.05 ulp) of one degree less than Cephes' P, one FMA fewer per element
_EXP_P = (1.3814535923e-3, 8.3687454462e-3, 4.1668392718e-2, 1.6666521132e-1, 4.9999994040e-1)
_LOG_P = (
    7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1, 1.4249322787e-1,
    -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1, 3.3333331174e-1,
)  # fmt: skip
_TANH_P = (-5.70498872745e-3, 2.06390887954e-2, -5.37397155531e-2, 1.33314422036e-1, -3.33332819422e-1)
# erf(x) / x as a polynomial in x*x on [0, 1]; erfcx(x) = exp(x*x) * erfc(x) in x on [1, 3.92]
_ERF_SMALL = (
    7.933493907330558e-05, -0.0008034846396185458, 0.005191218573600054, -0.02685539983212948,
    0.11283625662326813, -0.3761262893676758, 1.128379225730896,
)  # fmt: skip
_ERFCX = (
    1.8360434523856384e-06, -5.213224721956067e-05, 0.0006701590609736741, -0.00517025263980031,
    0.02677813358604908, -0.09879904985427856, 0.26935696601867676, -0.5563804507255554,
    0.8852494955062866, -1.0873866081237793, 0.9933153986930847,
)  # fmt: skip


def c32(v: float) -> ir.Constant:
    return ir.Constant(F32, float(v))


def fma(kb, a: ir.Value, b: ir.Value, c: ir.Value) -> ir.Value:
    """``a * b + c`` rounded once (``vfmadd`` on this machine)."""
    return kb.call(f"llvm.fma.{_suffix(a.type)}", a.type, a, b, c)


def horner(kb, coeffs: Sequence[float], x: ir.Value) -> ir.Value:
    """``coeffs[0] * x**(n-1) + ... + coeffs[-1]`` with FMAs."""
    y = ir.Constant(x.type, coeffs[0])
    for c in coeffs[1:]:
        y = fma(kb, y, x, ir.Constant(x.type, c))
    return y


def _suffix(t: ir.Type) -> str:
    return "f32" if t == F32 else "f64"


def _isnan(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    return b.fcmp_unordered("uno", x, x)


_ROUND = 12583166.0  # 1.5 * 2**23 + 254: adding it rounds to an integer n, bits = 0x4B400000 + 254 + n


def exp32(kb, x: ir.Value, upper: bool = True) -> ir.Value:
    """``expf`` after Cephes: x = n ln2 + r (ln2 in two parts), |r| <= ln2/2, e^r by a
    degree-6 minimax polynomial, times 2^n rounded once, so that denormal results are right
    and overflow gives inf (at most 0.9 ulp from the true value over the float range).

    n comes from the round-to-integer trick (``x log2e + 1.5 2^23`` in one FMA), not from
    ``rint`` and ``fptosi``: the sum's bits hold ``n + 254`` (see :func:`_times_pow2`),
    and a NaN flows through as a NaN (no poison to guard, so no select).  Elementwise
    chains on big arrays are bound by vector throughput here, not memory (the same
    ns/element at 1 MB as at 40 MB), so every op saved counts: this form takes 5-8 fewer
    per element than the rint one.  ``upper=False``: the caller knows x <= 0 (no clamp
    at the top)."""
    b = kb.builder
    # selects whose false arm is x: a NaN stays NaN
    xc = b.select(b.fcmp_ordered("<", x, c32(-104.0)), c32(-104.0), x)
    if upper:
        xc = b.select(b.fcmp_ordered(">", xc, c32(89.0)), c32(89.0), xc)
    t = fma(kb, xc, c32(_LOG2E), c32(_ROUND))
    n = b.fsub(t, c32(_ROUND))  # exact: an integer in [-150, 128]
    r = fma(kb, n, c32(-_LN2_HI), xc)
    r = fma(kb, n, c32(-_LN2_LO), r)
    y = horner(kb, _EXP_P + (1.0, 1.0), r)  # 1 + r + r^2 P(r): one FMA per term
    return _times_pow2(kb, y, b.bitcast(t, I32))


def _times_pow2(kb, y: ir.Value, bits: ir.Value) -> ir.Value:
    """``y * 2^n`` rounded once, where ``bits = 0x4B400000 + 254 + n`` (see :func:`exp32`).

    With AVX-512, ``llvm.ldexp`` is one ``vscalefps``.  Without it LLVM would call libm's
    ``ldexpf`` per element, so 2^n is applied in two exact-then-rounding halves whose
    exponent fields are cut from ``bits``: with m = n + 254 in [104, 382] and the high
    part's low 22 bits zero, ``(bits << 22) & mask`` = (m >> 1) << 23 = 2^floor(n/2),
    and ``(bits << 23)`` minus that = ceil(m/2) << 23 = 2^ceil(n/2) (modulo 2^32, exactly).
    """
    b = kb.builder
    if has_avx512():
        n = b.sub(bits, ir.Constant(I32, 0x4B400000 + 254))
        return kb.call("llvm.ldexp.f32.i32", F32, y, n)
    half1 = b.and_(b.shl(bits, ir.Constant(I32, 22)), ir.Constant(I32, 0x7F800000))
    half2 = b.sub(b.shl(bits, ir.Constant(I32, 23)), half1)
    return b.fmul(b.fmul(y, b.bitcast(half1, F32)), b.bitcast(half2, F32))


def has_avx512() -> bool:
    """Whether the host CPU has AVX-512F (vector ``ldexp`` is then one instruction)."""
    from ..jit import vector_bits

    return vector_bits() >= 512


def log32(kb, x: ir.Value) -> ir.Value:
    """Cephes ``logf``: x = m 2^e with m in [sqrt(1/2), sqrt(2)), log(m) by a polynomial."""
    b = kb.builder
    small = b.fcmp_ordered("<", x, c32(1.17549435e-38))
    xs = b.select(small, b.fmul(x, c32(8388608.0)), x)  # denormals: scale by 2^23 first
    bits = b.bitcast(xs, I32)
    e = b.sub(b.and_(b.lshr(bits, ir.Constant(I32, 23)), ir.Constant(I32, 0xFF)), ir.Constant(I32, 126))
    e = b.select(small, b.sub(e, ir.Constant(I32, 23)), e)
    m = b.bitcast(b.or_(b.and_(bits, ir.Constant(I32, 0x007FFFFF)), ir.Constant(I32, 0x3F000000)), F32)
    lt = b.fcmp_ordered("<", m, c32(0.707106781186547524))
    e = b.select(lt, b.sub(e, ir.Constant(I32, 1)), e)
    m = b.select(lt, b.fsub(b.fadd(m, m), c32(1.0)), b.fsub(m, c32(1.0)))
    z = b.fmul(m, m)
    y = b.fmul(b.fmul(horner(kb, _LOG_P, m), m), z)
    fe = b.sitofp(e, F32)
    y = fma(kb, fe, c32(_LN2_LO), y)
    y = fma(kb, z, c32(-0.5), y)
    r = fma(kb, fe, c32(_LN2_HI), b.fadd(m, y))
    inf = c32(float("inf"))
    r = b.select(b.fcmp_ordered("==", x, inf), inf, r)
    r = b.select(b.fcmp_ordered("==", x, c32(0.0)), c32(float("-inf")), r)
    r = b.select(b.fcmp_ordered("<", x, c32(0.0)), c32(float("nan")), r)
    return b.select(_isnan(b, x), x, r)


def tanh32(kb, x: ir.Value) -> ir.Value:
    """Cephes ``tanhf``: an odd polynomial below 0.625, else ``1 - 2 / (e^{2|x|} + 1)``."""
    b = kb.builder
    ax = kb.call("llvm.fabs.f32", F32, x)
    z = b.fmul(x, x)
    small = fma(kb, b.fmul(horner(kb, _TANH_P, z), z), x, x)
    e = exp32(kb, b.fmul(ax, c32(2.0)))
    big = b.fsub(c32(1.0), b.fdiv(c32(2.0), b.fadd(e, c32(1.0))))
    big = kb.call("llvm.copysign.f32", F32, big, x)
    return b.select(b.fcmp_ordered("<", ax, c32(0.625)), small, big)


def sigmoid(kb, x: ir.Value, dt: DType) -> ir.Value:
    """``1 / (1 + e^-x)`` in the interpreter's overflow-free form: with ``e = exp(-|x|)``,
    ``1 / (1 + e)`` for x >= 0 and ``e / (1 + e)`` otherwise (two divisions measured as
    fast as one division and a product here, and stay within 2.3 ulp)."""
    b = kb.builder
    ax = kb.call(f"llvm.fabs.{_suffix(x.type)}", x.type, x)
    e = exp32(kb, b.fneg(ax), upper=False) if x.type == F32 else libm(kb, "exp", b.fneg(ax))
    one = ir.Constant(x.type, 1.0)
    den = b.fadd(one, e)
    return b.select(b.fcmp_ordered(">=", x, ir.Constant(x.type, 0.0)), b.fdiv(one, den), b.fdiv(e, den))


def erf32(kb, x: ir.Value) -> ir.Value:
    """erf: ``x P(x^2)`` below 1, ``1 - e^{-x^2} erfcx(|x|)`` up to 3.92, then 1 (float32)."""
    b = kb.builder
    ax = kb.call("llvm.fabs.f32", F32, x)
    x2 = b.fmul(ax, ax)
    small = b.fmul(horner(kb, _ERF_SMALL, x2), ax)
    mid = b.fsub(c32(1.0), b.fmul(exp32(kb, b.fneg(x2)), horner(kb, _ERFCX, ax)))
    r = b.select(b.fcmp_ordered("<", ax, c32(3.92)), mid, c32(1.0))
    r = b.select(b.fcmp_ordered("<", ax, c32(1.0)), small, r)
    r = kb.call("llvm.copysign.f32", F32, r, x)
    return b.select(_isnan(b, x), x, r)


def libm(kb, name: str, x: ir.Value) -> ir.Value:
    """The C library's ``name`` (``sinf`` for float32, ``sin`` for float64): what numpy calls."""
    cname = name + "f" if x.type == F32 else name
    return kb.call(cname, x.type, x)


def exp(kb, x: ir.Value, dt: DType) -> ir.Value:
    return exp32(kb, x) if x.type == F32 else libm(kb, "exp", x)


def log(kb, x: ir.Value, dt: DType) -> ir.Value:
    return log32(kb, x) if x.type == F32 else libm(kb, "log", x)


def tanh(kb, x: ir.Value, dt: DType) -> ir.Value:
    return tanh32(kb, x) if x.type == F32 else libm(kb, "tanh", x)


def erf(kb, x: ir.Value, dt: DType) -> ir.Value:
    return erf32(kb, x) if x.type == F32 else libm(kb, "erf", x)


def _scaled_log(scale: float):
    def fn(kb, x, dt):
        if x.type != F32:
            return libm(kb, "log2" if scale == _LOG2E else "log10", x)
        return kb.builder.fmul(log32(kb, x), c32(scale))

    return fn


def _sqrt(kb, x, dt):
    return kb.call(f"llvm.sqrt.{_suffix(x.type)}", x.type, x)


def _rsqrt(kb, x, dt):
    return kb.builder.fdiv(ir.Constant(x.type, 1.0), _sqrt(kb, x, dt))


def _libm(name: str):
    return lambda kb, x, dt: libm(kb, name, x)


FLOAT_MATH = {
    "exp": exp,
    "fast_exp": exp,
    "log": log,
    "log2": _scaled_log(_LOG2E),
    "log10": _scaled_log(0.434294481903251827651),
    "sqrt": _sqrt,
    "rsqrt": _rsqrt,
    "sigmoid": sigmoid,
    "tanh": tanh,
    "fast_tanh": tanh,
    "erf": erf,
    "fast_erf": erf,
    **{name: _libm(name) for name in ("sin", "cos", "tan", "sinh", "cosh", "asin", "acos", "atan")},
    "asinh": _libm("asinh"),
    "acosh": _libm("acosh"),
    "atanh": _libm("atanh"),
}
"""Float math by op name: ``fn(kb, x, dt) -> value`` on float32 or float64 registers."""


def float_math(name: str):
    fn = FLOAT_MATH.get(name)
    if fn is None:
        raise Unsupported(f"no LLVM lowering for {name}", name)
    return fn


__all__ = ["FLOAT_MATH", "exp", "exp32", "fma", "horner", "libm", "log", "log32", "sigmoid", "tanh", "erf", "float_math"]
