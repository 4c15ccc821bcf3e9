"""numpy implementations of the elementwise, broadcasting, cast, selection and
tensor-creating operators (:mod:`relay_nb.op.tensor`).

Binary operators convert both operands to the result dtype first (``int32 + int32`` stays
``int32`` and wraps on overflow, as in TVM), then broadcast with numpy's rules.  Integer
division and remainder follow TVM's ``topi`` definitions, with the cases C leaves
undefined made total (see :mod:`relay_nb.op.impl`):

=================  ===========================  ==========================================
op                 integers                     floats
=================  ===========================  ==========================================
``divide``         truncates (``7 / -2 == -3``)  ``a / b``
``floor_divide``   floors (``7 // -2 == -4``)   ``floor(a / b)``
``trunc_divide``   truncates                    ``trunc(a / b)``
``mod``            sign of ``a`` (C ``%``)      ``fmod(a, b)``
``floor_mod``      sign of ``b`` (Python ``%``) ``fmod(a, b)``, plus ``b`` if the signs
                                                differ; a zero takes ``b``'s sign
``trunc_mod``      sign of ``a``                ``fmod(a, b)``
=================  ===========================  ==========================================

The float remainders start from the exact ``fmod``: ``a - floor(a / b) * b`` in the
tensor's dtype loses everything once the quotient passes 2**24 (float32), giving a
remainder bigger than ``b`` or of the wrong sign.  ``floor_mod`` is Python's float ``%``
(``np.remainder``); ``trunc_mod`` is TVM's ``truncmod``, which LLVM lowers to ``frem``.
"""

from __future__ import annotations

import math

import numpy as np

from ...errors import EvalError
from ._util import (
    convert,
    impl,
    int_divide,
    int_mod,
    is_float,
    is_int,
    known_dtype,
    np_dtype,
    out_dtype,
)


def _common(args, out):
    """The dtype a same-dtype op computes in: the inferred one, else numpy's promotion."""
    dt = known_dtype(out)
    return dt if dt is not None else np.result_type(*args)


# --- binary arithmetic ----------------------------------------------------------------------


def _need_int(name, dt):
    if not (is_int(dt) or dt.kind == "b"):
        raise EvalError(f"{name} needs integer or bool tensors, got {dt}")


def float_power(a, b):
    """C ``pow`` (TVM lowers ``power`` to ``llvm.pow``).  numpy's loop computes a scalar
    exponent 0.5 as ``sqrt``, which differs at ``-inf`` (NaN, not ``+inf``) and ``-0.0``
    (``-0.0``, not ``+0.0``): there ``pow(x, 0.5)`` is ``|x|``."""
    r = np.power(a, b)
    sqrt_edge = (b == 0.5) & ((a == 0) | (a == -np.inf))
    if not sqrt_edge.any():
        return r
    # a scalar (the interpreter's fast path) stays a numpy scalar
    return np.abs(a) if np.ndim(r) == 0 else np.where(sqrt_edge, np.abs(a), r)


def _power(a, b):
    if not is_int(a.dtype):
        return float_power(a, b)
    # Integers: a negative exponent gives the truncated real result (0 unless |a| == 1;
    # 0 ** -n is 0, like every integer division by zero here).
    neg = b < 0
    r = np.power(a, np.where(neg, 0, b).astype(b.dtype))
    if not neg.any():
        return r
    odd = (b % 2) != 0
    recip = np.where(a == 1, 1, np.where((a == -1) & odd, -1, np.where(a == -1, 1, 0)))
    return np.where(neg, recip, r).astype(a.dtype)


def tvm_max(a, b):
    """TVM's ``max(a, b)`` as its LLVM code computes it: ``a > b ? a : b``.

    With a NaN the answer is ``b`` (``max(nan, 0) == 0``, so ``relu(nan) == 0``), where
    ``np.maximum`` would propagate the NaN.
    """
    return np.where(a > b, a, b)


def tvm_min(a, b):
    """TVM's ``min(a, b)``: ``a < b ? a : b``."""
    return np.where(a < b, a, b)


def _float_or_int(float_fn, int_fn):
    def fn(a, b):
        return int_fn(a, b) if is_int(a.dtype) else float_fn(a, b)

    return fn


BINARY = {
    "add": np.add,
    "subtract": np.subtract,
    "multiply": np.multiply,
    "divide": _float_or_int(np.true_divide, lambda a, b: int_divide(a, b, "trunc")),
    "floor_divide": _float_or_int(
        lambda a, b: np.floor(a / b), lambda a, b: int_divide(a, b, "floor")
    ),
    "trunc_divide": _float_or_int(
        lambda a, b: np.trunc(a / b), lambda a, b: int_divide(a, b, "trunc")
    ),
    "mod": _float_or_int(np.fmod, lambda a, b: int_mod(a, b, "trunc")),
    "floor_mod": _float_or_int(np.remainder, lambda a, b: int_mod(a, b, "floor")),
    "trunc_mod": _float_or_int(np.fmod, lambda a, b: int_mod(a, b, "trunc")),
    "power": _power,
    "maximum": tvm_max,
    "minimum": tvm_min,
    "logical_and": lambda a, b: np.logical_and(a, b),
    "logical_or": lambda a, b: np.logical_or(a, b),
    "logical_xor": lambda a, b: np.logical_xor(a, b),
    "bitwise_and": np.bitwise_and,
    "bitwise_or": np.bitwise_or,
    "bitwise_xor": np.bitwise_xor,
    # numpy defines shifts by >= the bit width (or negative): 0, or the sign fill for >>.
    "left_shift": np.left_shift,
    "right_shift": np.right_shift,
}

_INT_ONLY = {"bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift"}


def _binary(name, fn):
    def run(args, attrs, out):
        dt = _common(args, out)
        if name in _INT_ONLY:
            _need_int(name, dt)
        a, b = convert(args[0], dt), convert(args[1], dt)
        return convert(fn(a, b), dt)

    return run


for _name, _fn in BINARY.items():
    impl(_name)(_binary(_name, _fn))


COMPARISONS = {
    "equal": np.equal,
    "not_equal": np.not_equal,
    "less": np.less,
    "less_equal": np.less_equal,
    "greater": np.greater,
    "greater_equal": np.greater_equal,
}


def _compare(fn):
    def run(args, attrs, out):
        dt = np.result_type(*args)
        return fn(convert(args[0], dt), convert(args[1], dt))

    return run


for _name, _fn in COMPARISONS.items():
    impl(_name)(_compare(_fn))


# --- unary ----------------------------------------------------------------------------------


def _round_half_away(x):
    """C ``round`` (TVM lowers ``round`` to ``llvm.round``): halves go away from zero.
    Only the rounded-up elements get ``+ sign(x)``: adding ``0`` would turn ``-0.0`` (and
    ``round(-0.3)``) into ``+0.0``."""
    t = np.trunc(x)
    return np.where(np.abs(x - t) >= 0.5, t + np.sign(x).astype(x.dtype), t)


def _sigmoid(x):
    e = np.exp(-np.abs(x))  # never overflows
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype)


def _erf(x):
    # scipy is optional (and slow to import): loaded on the first erf, else math.erf.
    try:
        from scipy.special import erf
    except ImportError:  # pragma: no cover - exercised only without scipy
        return np.vectorize(math.erf, otypes=[np.float64])(x)
    return erf(x)


# Math on floats, in the tensor's own dtype; an integer tensor is computed in float64 and
# converted back (truncating, saturating), since the relation keeps the input dtype.
FLOAT_MATH = {
    "exp": np.exp,
    "fast_exp": np.exp,
    "log": np.log,
    "log2": np.log2,
    "log10": np.log10,
    "sqrt": np.sqrt,
    "rsqrt": lambda x: 1 / np.sqrt(x),
    "sigmoid": _sigmoid,
    "tanh": np.tanh,
    "fast_tanh": np.tanh,
    "erf": _erf,
    "fast_erf": _erf,
    "sin": np.sin,
    "cos": np.cos,
    "tan": np.tan,
    "sinh": np.sinh,
    "cosh": np.cosh,
    "asin": np.arcsin,
    "acos": np.arccos,
    "atan": np.arctan,
    "asinh": np.arcsinh,
    "acosh": np.arccosh,
    "atanh": np.arctanh,
}

# Rounding is the identity on integers.
ROUNDING = {"floor": np.floor, "ceil": np.ceil, "round": _round_half_away, "trunc": np.trunc}


def _float_math(fn):
    def run(args, attrs, out):
        x = args[0]
        dt = out_dtype(out, x)
        if not is_float(x.dtype):
            return convert(fn(x.astype(np.float64)), dt)
        return convert(fn(x), dt)

    return run


def _rounding(fn):
    def run(args, attrs, out):
        x = args[0]
        return x.copy() if not is_float(x.dtype) else fn(x)

    return run


for _name, _fn in FLOAT_MATH.items():
    impl(_name)(_float_math(_fn))
for _name, _fn in ROUNDING.items():
    impl(_name)(_rounding(_fn))


@impl("negative")
def _negative(args, attrs, out):
    x = args[0]
    return np.logical_not(x) if x.dtype.kind == "b" else np.negative(x)


@impl("abs")
def _abs(args, attrs, out):
    return np.abs(args[0])


@impl("sign")
def _sign(args, attrs, out):
    """``x > 0 ? 1 : (x < 0 ? -1 : 0)`` as TVM's topi writes it (so ``sign(nan) == 0``)."""
    x = args[0]
    if x.dtype.kind == "b":
        return x.copy()
    one = x.dtype.type(1)
    return np.where(x > 0, one, np.where(x < 0, -one if x.dtype.kind != "u" else 0, 0)).astype(
        x.dtype
    )


@impl("logical_not")
def _logical_not(args, attrs, out):
    return np.logical_not(args[0])


@impl("bitwise_not")
def _bitwise_not(args, attrs, out):
    x = args[0]
    _need_int("bitwise_not", x.dtype)
    return np.invert(x)


@impl("copy")
def _copy(args, attrs, out):
    return args[0].copy()


@impl("zeros_like")
def _zeros_like(args, attrs, out):
    return np.zeros_like(args[0])


@impl("ones_like")
def _ones_like(args, attrs, out):
    return np.ones_like(args[0])


def _predicate(float_fn, int_value):
    def run(args, attrs, out):
        x = args[0]
        if x.dtype.kind in "fc":
            return float_fn(x)
        return np.full(x.shape, int_value, dtype=bool)

    return run


impl("isnan")(_predicate(np.isnan, False))
impl("isinf")(_predicate(np.isinf, False))
impl("isfinite")(_predicate(np.isfinite, True))


# --- clip, cast, where --------------------------------------------------------------------------


@impl("clip")
def _clip(args, attrs, out):
    """``max(min(x, a_max), a_min)`` as TVM computes it (so a_min wins if a_min > a_max);
    the bounds are first converted to the tensor's dtype (2.7 -> 2 for integers)."""
    x = args[0]
    lo = convert(np.float64(attrs["a_min"]), x.dtype)
    hi = convert(np.float64(attrs["a_max"]), x.dtype)
    return tvm_max(tvm_min(x, hi), lo)


@impl("cast")
def _cast(args, attrs, out):
    return convert(args[0], attrs["dtype"])


@impl("cast_like")
def _cast_like(args, attrs, out):
    return convert(args[0], args[1].dtype)


@impl("where")
def _where(args, attrs, out):
    cond, x, y = args
    dt = _common([x, y], out)
    return np.where(cond != 0 if cond.dtype.kind != "b" else cond, convert(x, dt), convert(y, dt))


# --- creation -----------------------------------------------------------------------------------


def _shape(attrs):
    shape = tuple(int(d) for d in attrs["shape"])
    if any(d < 0 for d in shape):
        raise EvalError(f"shape {list(shape)} has a negative dimension")
    return shape


@impl("zeros")
def _zeros(args, attrs, out):
    return np.zeros(_shape(attrs), out_dtype(out, attrs["dtype"], "float32"))


@impl("ones")
def _ones(args, attrs, out):
    return np.ones(_shape(attrs), out_dtype(out, attrs["dtype"], "float32"))


@impl("full")
def _full(args, attrs, out):
    fill = args[0]
    dt = out_dtype(out, attrs["dtype"], fill)
    return np.full(_shape(attrs), convert(fill.reshape(()), dt))


@impl("full_like")
def _full_like(args, attrs, out):
    data, fill = args
    return np.full(data.shape, convert(fill.reshape(()), data.dtype))


@impl("arange")
def _arange(args, attrs, out):
    """``start + step * i`` for ``i < ceil((stop - start) / step)``, in the result dtype."""
    dt = out_dtype(out, attrs["dtype"], "float32")
    start, stop, step = (np.asarray(a).reshape(()).item() for a in args)
    if step == 0:
        raise EvalError("step must not be 0")
    n = max(math.ceil((stop - start) / step), 0)
    if is_int(dt):
        return (np.arange(n, dtype=np.int64) * int(step) + int(start)).astype(dt)
    return np_dtype(dt).type(start) + np_dtype(dt).type(step) * np.arange(n, dtype=dt)
