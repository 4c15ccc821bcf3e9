"""numpy implementations of the ``qnn.*`` operators: TVM's canonicalizations, step by step.

TVM never runs a qnn op directly: ``CanonicalizeOps`` rewrites each into integer Relay
(``src/relay/qnn/op/*.cc``).  These implementations compute what those programs compute,
with the same dtypes at each step (int32 arithmetic wraps, as in TVM):

* **quantize**: ``clip(round(x / scale) + zp)`` in float32; ``round`` sends halves away
  from zero (TVM's ``round`` is ``llvm.round``).  NaN clips to the upper bound, as TVM's
  ``clip`` (``min`` then ``max`` by comparison) does.
* **requantize**: with ``compute_dtype`` int64 (the default here, see below), the fixed
  point program: the multiplier ``s_in / s_out`` (in double) becomes a 31-bit significand
  and a shift (``frexp``), ``(q - zp_in) << left * significand`` is rounded at bit
  ``31 + right`` and shifted down.  ``UPWARD`` adds half (halves go up, toward +inf),
  ``TONEAREST`` adds half minus one below zero (halves go away from zero).  With
  ``compute_dtype`` float32 / float64 it is the float program: ``floor(v + 0.5)`` for
  UPWARD, ``round`` for TONEAREST.  Then ``+ zp_out`` and a clip to ``out_dtype``.
* The binary ops, concatenate, avg_pool2d and leaky_relu requantize through that same
  function with the default configuration, exactly where their canonicalizations do.

TVM's ``rounding="None"`` / ``compute_dtype="None"`` mean "the current
``qnn.requantize_config``", whose defaults are UPWARD and -- on x86 CPUs with SSE4.1 only --
float32.  The interpreter has no target, so "None" means the target-independent integer
program; pass ``compute_dtype="float32"`` for TVM's x86 result (the two can differ by one
where float32 rounds: near ties, and for values beyond 2**24 in magnitude).
"""

from __future__ import annotations

import math

import numpy as np

from ...errors import EvalError
from ...ir.attrs import Attrs
from ..registry import get_column
from ._util import convert, impl, int_divide, norm_axis, np_dtype, out_dtype
from .tensor import FLOAT_MATH, ROUNDING

_round = ROUNDING["round"]  # halves away from zero, as TVM's round


def _nn(op_name: str):
    """The registered implementation of another op (qnn ops end in nn ops, as in TVM)."""
    return get_column("impl")[op_name]


def qrange(dtype) -> tuple[int, int]:
    info = np.iinfo(np_dtype(dtype))
    return int(info.min), int(info.max)


def clip(x: np.ndarray, lo, hi) -> np.ndarray:
    """TVM's ``clip``: ``max(min(x, hi), lo)`` by comparisons, so NaN becomes ``hi``."""
    y = np.where(x < hi, x, np.asarray(hi, x.dtype))
    return np.where(y > lo, y, np.asarray(lo, x.dtype))


def saturate(x: np.ndarray, dtype) -> np.ndarray:
    """Clip to ``dtype``'s range and cast (TVM's ConvertDtype)."""
    lo, hi = qrange(dtype)
    return convert(clip(x, lo, hi), dtype)


def along(v, axis: int, ndim: int) -> np.ndarray:
    """A scalar as is; a vector reshaped to lie along ``axis`` of a rank-``ndim`` tensor."""
    v = np.asarray(v)
    if v.ndim == 0:
        return v
    if ndim == 0:
        return v.reshape(())
    shape = [1] * ndim
    shape[axis] = -1
    return v.reshape(shape)


def channel_axis(axis: int, ndim: int) -> int:
    return 0 if ndim == 0 else norm_axis(axis, ndim)


def wrap32(x) -> np.ndarray:
    """Two's-complement int32 of an integer array (TVM's int32 arithmetic wraps)."""
    return np.asarray(x).astype(np.int64).astype(np.int32)


# --- fixed point ------------------------------------------------------------------------


def fixed_point(multiplier: float) -> tuple[int, int]:
    """TVM's GetFixedPointMultiplierShift: ``multiplier = significand * 2**(shift - 31)``
    with a 31-bit significand (``frexp``, then ``std::round`` of ``frac * 2**31``)."""
    if multiplier == 0.0:
        return 0, 0
    frac, shift = math.frexp(multiplier)
    scaled = frac * 2.0**31
    significand = math.floor(abs(scaled) + 0.5) * (1 if scaled >= 0 else -1)
    if significand == 2**31:
        significand //= 2
        shift += 1
    return significand, shift


def fixed_point_multiply(x, significand, shift, nearest: bool) -> np.ndarray:
    """``round(x * significand * 2**(shift - 31))`` in int64, cast to int32.

    ``significand`` / ``shift`` may be arrays already laid along the channel axis.
    ``nearest=False`` is TVM's ``q_multiply_shift`` (halves up); ``nearest=True`` its
    to-nearest variant (halves away from zero).  A total right shift past 63 bits (a
    multiplier below 2**-32, undefined in C) is shifted by 63 here.
    """
    x = np.asarray(x).astype(np.int64)
    shift = np.asarray(shift, np.int64)
    left = np.maximum(shift, 0)
    total = np.minimum(np.maximum(-shift, 0) + 31, 63)
    x = np.left_shift(x, left) * np.asarray(significand, np.int64)
    rounder = np.left_shift(np.int64(1), total - 1)
    if nearest:
        rounder = np.where(x >= 0, rounder, rounder - 1)
    return wrap32(np.right_shift(x + rounder, total))


# --- quantize, dequantize, requantize -------------------------------------------------------


def quantize(x, scale, zero_point, axis: int, dtype) -> np.ndarray:
    """TVM's QuantizeLower: ``clip(round(x / scale) + float(zp))`` in float32."""
    x = np.asarray(x, np.float32)
    ax = channel_axis(axis, x.ndim)
    s = along(np.asarray(scale, np.float32), ax, x.ndim)
    z = along(np.asarray(zero_point, np.int32), ax, x.ndim)
    y = _round(x / s) + z.astype(np.float32)
    lo, hi = qrange(dtype)
    return convert(clip(y, np.float32(lo), np.float32(hi)), dtype)


def dequantize(q, scale, zero_point, axis: int, dtype="float32") -> np.ndarray:
    """TVM's DequantizeLower: ``float32(int32(q) - zp) * scale`` (float16: clipped, cast)."""
    q = np.asarray(q)
    ax = channel_axis(axis, q.ndim)
    s = along(np.asarray(scale, np.float32), ax, q.ndim)
    z = along(np.asarray(zero_point, np.int32), ax, q.ndim)
    y = wrap32(q.astype(np.int32).astype(np.int64) - z).astype(np.float32) * s
    if np_dtype(dtype) == np.float32:
        return y
    info = np.finfo(np_dtype(dtype))
    return convert(clip(y, np.float32(info.min), np.float32(info.max)), dtype)


def requantize(
    q,
    in_scale,
    in_zero_point,
    out_scale,
    out_zero_point,
    axis: int = -1,
    rounding: str = "None",
    compute_dtype: str = "None",
    dtype="int8",
) -> np.ndarray:
    """TVM's RequantizeLower (module docstring): ``zp_out + s_in / s_out * (q - zp_in)``."""
    rounding = "UPWARD" if rounding == "None" else rounding
    compute = "int64" if compute_dtype == "None" else compute_dtype
    if rounding not in ("UPWARD", "TONEAREST"):
        raise EvalError(f"rounding must be UPWARD or TONEAREST, got {rounding!r}")
    q = np.asarray(q)
    ndim = q.ndim
    ax = channel_axis(axis, ndim)
    zp_in = along(np.asarray(in_zero_point, np.int64), ax, ndim)
    scales = np.asarray(in_scale, np.float32)
    out_s = float(np.float32(np.asarray(out_scale).reshape(-1)[0]))
    out_zp = np.asarray(out_zero_point).reshape(-1)[0]
    multipliers = scales.astype(np.float64) / out_s
    if compute == "int64":
        x = wrap32(q.astype(np.int32).astype(np.int64) - zp_in)
        if scales.ndim == 0:
            sig, shift = fixed_point(float(multipliers))
        else:
            pairs = [fixed_point(float(m)) for m in multipliers.reshape(-1)]
            sig = along(np.array([p[0] for p in pairs], np.int64), ax, ndim)
            shift = along(np.array([p[1] for p in pairs], np.int64), ax, ndim)
        y = wrap32(
            fixed_point_multiply(x, sig, shift, rounding == "TONEAREST").astype(np.int64)
            + int(out_zp)
        )
    elif compute in ("float32", "float64"):
        ft = np.dtype(compute)
        x = q.astype(ft) - zp_in.astype(ft)
        x = x * along(multipliers.astype(ft), ax, ndim) + ft.type(out_zp)
        x = np.floor(x + ft.type(0.5)) if rounding == "UPWARD" else _round(x)
        y = convert(x, "int32")
    else:
        raise EvalError(f"compute_dtype must be int64, float32 or float64, got {compute!r}")
    if np_dtype(dtype) == np.int32:
        return y
    return saturate(y, dtype)


@impl("qnn.quantize")
def _quantize(args, attrs, out):
    return quantize(*args, attrs["axis"], attrs["out_dtype"])


@impl("qnn.dequantize")
def _dequantize(args, attrs, out):
    return dequantize(*args, attrs["axis"], attrs["out_dtype"])


@impl("qnn.requantize")
def _requantize(args, attrs, out):
    return requantize(
        *args,
        attrs["axis"],
        attrs["rounding"],
        attrs["compute_dtype"],
        out_dtype(out, attrs["out_dtype"]),
    )


# --- simulated quantize / dequantize --------------------------------------------------------

_SQNN_CODES = {1: "int8", 2: "uint8", 3: "int32"}


def _per_index(v, x: np.ndarray, axis: int) -> np.ndarray:
    """topi's ``v[index[axis] % len(v)]``: a scalar or cyclic vector along ``axis``."""
    v = np.asarray(v).reshape(-1)
    if v.size == 0:
        raise EvalError("scale and zero point must not be empty")
    if x.ndim == 0:
        return v[0]
    ax = norm_axis(axis, x.ndim)
    return along(v[np.arange(x.shape[ax]) % v.size], ax, x.ndim)


@impl("qnn.simulated_quantize")
def _simulated_quantize(args, attrs, out):
    """quantize's values in the data's dtype; code 0 (or unknown) passes the data through."""
    data, code, scale, zp = args
    dtype = _SQNN_CODES.get(int(np.asarray(code).reshape(-1)[0]))
    if dtype is None:
        return data.copy()
    s = _per_index(scale, data, attrs["axis"]).astype(data.dtype)
    z = _per_index(zp, data, attrs["axis"]).astype(data.dtype)
    lo, hi = qrange(dtype)
    y = _round(data / s) + z
    return clip(y, data.dtype.type(lo), data.dtype.type(hi))


@impl("qnn.simulated_dequantize")
def _simulated_dequantize(args, attrs, out):
    data, code, scale, zp = args
    if int(np.asarray(code).reshape(-1)[0]) not in _SQNN_CODES:
        return data.copy()
    s = _per_index(scale, data, attrs["axis"]).astype(data.dtype)
    z = _per_index(zp, data, attrs["axis"]).astype(data.dtype)
    return (data - z) * s


# --- binary ops -----------------------------------------------------------------------------


def _to_output(x, scale, zp, out_scale, out_zp, axis, dtype="int32"):
    """TVM's RequantizeOrUpcast (requantizing with equal parameters is the identity)."""
    return requantize(x, scale, zp, out_scale, out_zp, axis, dtype=dtype)


def _add_like(sign: int):
    def run(args, attrs, out):
        lhs, rhs, ls, lz, rs, rz, os, oz = args
        a = _to_output(lhs, ls, lz, os, oz, attrs["lhs_axis"]).astype(np.int64)
        b = _to_output(rhs, rs, rz, os, oz, attrs["rhs_axis"]).astype(np.int64)
        y = wrap32(a + sign * b - sign * np.int64(oz))  # add: - zp_out; subtract: + zp_out
        return saturate(y, lhs.dtype)

    return run


impl("qnn.add")(_add_like(1))
impl("qnn.subtract")(_add_like(-1))


@impl("qnn.mul")
def _mul(args, attrs, out):
    """``(l - zp_l) * (r - zp_r)`` requantized from scale ``s_l * s_r`` (TVM's QnnMulCanonicalize)."""
    lhs, rhs, ls, lz, rs, rz, os, oz = args
    la, ra = attrs["lhs_axis"], attrs["rhs_axis"]
    if ls.ndim == 0 and rs.ndim == 0:
        a = lhs.astype(np.int64) - lz.astype(np.int64)
        b = rhs.astype(np.int64) - rz.astype(np.int64)
        prod = wrap32(a * b)
        scale = np.float32(ls) * np.float32(rs)  # float32 product, as TVM computes it
        return requantize(prod, scale, 0, os, oz, -1, dtype=lhs.dtype)
    if la != ra:
        raise EvalError("Not supported: lhs_axis and rhs_axis are not the same")
    a = lhs.astype(np.int64) - along(lz, channel_axis(la, lhs.ndim), lhs.ndim)
    b = rhs.astype(np.int64) - along(rz, channel_axis(ra, rhs.ndim), rhs.ndim)
    prod = wrap32(a * b)
    scales = (ls.astype(np.float64).reshape(-1) * rs.astype(np.float64).reshape(-1)).astype(
        np.float32
    )
    return requantize(prod, scales, 0, os, oz, la, dtype=lhs.dtype)


@impl("qnn.concatenate")
def _concatenate(args, attrs, out):
    data, scales, zps, os, oz = args
    if not (len(data) == len(scales) == len(zps)):
        raise EvalError(f"{len(data)} tensors but {len(scales)} scales and {len(zps)} zero points")
    parts = tuple(
        x if (s == os and z == oz) else requantize(x, s, z, os, oz, dtype=x.dtype)
        for x, s, z in zip(data, scales, zps)
    )
    return _nn("concatenate")([parts], attrs, out)


# --- dense, batch_matmul, convolutions --------------------------------------------------------


def _shifted(x, zp) -> np.ndarray:
    return x.astype(np.int64) - np.asarray(zp, np.int64)


def _wide(attrs) -> Attrs:
    """The nn op's attrs computing in int64; the result is wrapped to ``out_dtype`` after,
    which gives TVM's wrapping ``out_dtype`` sums (addition commutes with wrapping)."""
    return Attrs({**dict(attrs.items()), "out_dtype": "int64"}, attrs.type_key)


@impl("qnn.dense")
def _dense(args, attrs, out):
    """``(x - zp_x) @ (w - zp_w).T``; ``zp_w`` scalar or one per output unit."""
    x, w, xz, wz, _, _ = args
    wz = np.asarray(wz, np.int64)
    w = w.astype(np.int64) - (wz[:, None] if wz.ndim == 1 else wz)
    return _nn("nn.dense")([_shifted(x, xz), w], _wide(attrs), None)


@impl("qnn.contrib_dense_pack")
def _dense_pack(args, attrs, out):
    """qnn.dense of the unpacked weight: ``W[o * n + a, k * c + b] = w[o, k, a, b]``."""
    x, w, xz, wz, _, _ = args
    if w.ndim != 4:
        raise EvalError(f"the packed weight must have rank 4, got shape {w.shape}")
    no, ko, n, c = w.shape
    flat = np.transpose(w, (0, 2, 1, 3)).reshape(no * n, ko * c)
    wz = np.asarray(wz, np.int64)
    flat = flat.astype(np.int64) - (wz[:, None] if wz.ndim == 1 else wz)
    return np.matmul(_shifted(x, xz), flat.T)


@impl("qnn.batch_matmul")
def _batch_matmul(args, attrs, out):
    x, y, xz, yz, _, _ = args
    return _nn("nn.batch_matmul")([_shifted(x, xz), _shifted(y, yz)], _wide(attrs), None)


@impl("qnn.conv2d")
def _conv2d(args, attrs, out):
    """conv2d of ``x - zp_x`` (zero padding after the shift: TVM pads with ``zp_x``) and
    ``w - zp_w`` with one kernel zero point per output channel (axis O of the layout)."""
    x, w, xz, wz, _, _ = args
    wz = np.asarray(wz, np.int64)
    if wz.ndim == 1:
        o = attrs["kernel_layout"].index("O")
        if wz.size not in (1, w.shape[o]):
            raise EvalError(f"{wz.size} kernel zero points for {w.shape[o]} output channels")
        wz = along(wz, o, w.ndim)
    return _nn("nn.conv2d")([_shifted(x, xz), w.astype(np.int64) - wz], _wide(attrs), None)


@impl("qnn.conv2d_transpose")
def _conv2d_transpose(args, attrs, out):
    """TVM's legalization: ``conv2d_transpose(x - zp_x, w - zp_w)``, a kernel zero-point
    vector subtracted along axis 1 of the kernel (``bias_add``'s default axis)."""
    x, w, xz, wz, _, _ = args
    wz = np.asarray(wz, np.int64)
    xz = np.asarray(xz, np.int64).reshape(-1)[0]  # a scalar or one value (the relation checks)
    w = w.astype(np.int64) - (along(wz, 1, w.ndim) if wz.ndim == 1 else wz)
    return _nn("nn.conv2d_transpose")([_shifted(x, xz), w], _wide(attrs), None)


# --- pooling, softmax, leaky_relu ---------------------------------------------------------------


@impl("qnn.avg_pool2d")
def _avg_pool2d(args, attrs, out):
    """Requantize to the output scale in int32, average (integer division), clip."""
    x, s, z, os, oz = args
    r = _to_output(x, s, z, os, oz, -1)
    return saturate(_nn("nn.avg_pool2d")([r], attrs, None), x.dtype)


@impl("qnn.softmax")
def _softmax(args, attrs, out):
    """TVM's integer-only softmax (arXiv 2207.01405, Algorithm 1), in int32 throughout:
    ``exp`` as ``2**-q * (r / 2 + x0)`` with ``x0 = round(1 / scale)``, normalised by
    ``2**30 // sum``, then requantized from scale 1/128."""
    x, s, z, os, oz = args
    scale = np.float32(s)
    if not scale <= 1:
        raise EvalError(f"the input scale must be at most 1, got {float(scale)}")
    axis = norm_axis(attrs["axis"], x.ndim)
    q = wrap32(x.astype(np.int64) - np.int64(z))
    x0 = np.int32(saturate(_round(np.float32(1) / scale), "int32"))
    d = q - q.max(axis=axis, keepdims=True)
    xp = d + (d >> 1) - (d >> 4)
    qq = clip(int_divide(xp, np.full_like(xp, -x0), "trunc"), 0, 20)
    r = xp - qq * -x0
    xb = (r >> 1) + x0
    exps = np.left_shift(xb, qq.max(axis=axis, keepdims=True) - qq)
    sums = wrap32(exps.astype(np.int64).sum(axis=axis, keepdims=True))
    share = int_divide(np.full_like(sums, 1 << 30), sums, "trunc")
    y = np.right_shift(wrap32(share.astype(np.int64) * exps), 30 - 7)
    return requantize(y, np.float32(1 / 128), 0, os, oz, 0, dtype="int8")


@impl("qnn.leaky_relu")
def _leaky_relu(args, attrs, out):
    """TVM's QnnLeakyReluCanonicalize: the requantized input ``q`` where ``x >= zp_in``,
    else ``alpha * q + (1 - alpha) * zp_out``, both products in fixed point (halves up)."""
    x, s, z, os, oz = args
    alpha = float(attrs["alpha"])
    q = _to_output(x, s, z, os, oz, -1)
    prod = fixed_point_multiply(q, *fixed_point(alpha), nearest=False)
    scaled_z = fixed_point_multiply(np.int32(oz), *fixed_point(1 - alpha), nearest=False)
    below = wrap32(prod.astype(np.int64) + scaled_z)
    y = np.where(x.astype(np.int32) < np.int32(z), below, q)
    return saturate(y, x.dtype)


# --- unary ops: dequantize, float op, quantize -----------------------------------------------


def _hardswish(x):
    """TVM's Hardswish: ``x * clip(x + 3, 0, 6) / 6`` in float32."""
    return x * clip(x + np.float32(3), np.float32(0), np.float32(6)) / np.float32(6)


UNARY_FLOAT = {
    **{
        name: FLOAT_MATH[name] for name in ("erf", "exp", "log", "rsqrt", "sigmoid", "sqrt", "tanh")
    },
    "abs": np.abs,
    "hardswish": _hardswish,
}


def _unary(fn):
    def run(args, attrs, out):
        x, s, z, os, oz = args
        y = np.asarray(fn(dequantize(x, s, z, -1)), np.float32)
        return quantize(y, os, oz, -1, x.dtype)

    return run


for _name, _fn in UNARY_FLOAT.items():
    impl(f"qnn.{_name}")(_unary(_fn))
