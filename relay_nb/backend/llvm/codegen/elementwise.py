"""Index rules of the elementwise and broadcasting ops (:mod:`relay_nb.op.tensor`, relu...).

Each rule reads its operands at the output index with numpy broadcasting
(``kb.operand``), converts them to the dtype the op computes in, and returns one scalar:
the consumer's loop calls it inline, so a chain of these ops is a single loop.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir

from ....op.impl._util import convert as np_convert
from . import math as m
from ..kernel_abi import small_exponent
from .context import attrs_of
from .rules import rule
from .scalar import (
    compare,
    convert,
    int_divide,
    int_mod,
    int_power,
    plus,
    shift,
    truthy,
    tvm_max,
    tvm_min,
)
from .types import F64, DType, Unsupported, const, dtype, one, zero

FLOAT64 = DType("float64", "f", 64)
BOOL = DType("bool", "b", 1)


def operands(kb, call, index, dt: DType) -> list[ir.Value]:
    """Every argument at ``index`` (broadcast), converted to ``dt``."""
    return [convert(kb, kb.operand(a, index), kb.dt(a), dt) for a in call.args]


# --- binary arithmetic --------------------------------------------------------------------


def _arith(name: str):
    def fn(kb, call, index, field):
        dt = kb.dt(call)
        a, c = operands(kb, call, index, dt)
        b = kb.builder
        f, k = dt.is_float, dt.kind
        if name == "add":
            return plus(kb, a, c, dt)
        if name == "subtract":
            return b.fsub(a, c) if f else b.sub(a, c)
        if name == "multiply":
            return b.fmul(a, c) if f else (b.and_(a, c) if k == "b" else b.mul(a, c))
        if name in ("divide", "floor_divide", "trunc_divide"):
            if not f:
                return int_divide(kb, a, c, dt, "floor" if name == "floor_divide" else "trunc")
            q = b.fdiv(a, c)
            if name == "divide":
                return q
            return kb.call(f"llvm.{'floor' if name == 'floor_divide' else 'trunc'}.{_fs(dt)}", dt.ir, q)
        if name in ("mod", "floor_mod", "trunc_mod"):
            if not f:
                return int_mod(kb, a, c, dt, "floor" if name == "floor_mod" else "trunc")
            r = b.frem(a, c)  # C fmod, exact: a - trunc(a / c) * c is not for big quotients
            return r if name != "floor_mod" else _floor_remainder(kb, r, c, dt)
        if name == "power":
            if not f:
                return int_power(kb, a, c, dt)
            n = small_exponent(call.args[1]) if dt.is_float else None
            return _times_self(kb, a, n) if n is not None else kb.call(f"llvm.pow.{_fs(dt)}", dt.ir, a, c)
        if name == "maximum":
            return tvm_max(kb, a, c, dt)
        if name == "minimum":
            return tvm_min(kb, a, c, dt)
        raise Unsupported(f"no LLVM lowering for {name}", name)

    return fn


def _times_self(kb, a: ir.Value, n: int) -> ir.Value:
    """``a ** n`` by squaring: a*a, (a*a)*a, (a*a)*(a*a)."""
    b = kb.builder
    if n == 1:
        return a
    sq = b.fmul(a, a)
    return {2: sq, 3: b.fmul(sq, a), 4: b.fmul(sq, sq)}[n]


def _floor_remainder(kb, r: ir.Value, c: ir.Value, dt: DType) -> ir.Value:
    """``np.remainder`` from ``r = fmod(a, c)``: ``r + c`` when the signs differ, and a zero
    with the sign of ``c``; a NaN stays NaN."""
    b = kb.builder
    z = ir.Constant(dt.ir, 0.0)
    differ = b.xor(b.fcmp_ordered("<", r, z), b.fcmp_ordered("<", c, z))
    fixed = b.select(b.and_(b.fcmp_ordered("!=", r, z), differ), b.fadd(r, c), r)
    signed_zero = kb.call(f"llvm.copysign.{_fs(dt)}", dt.ir, z, c)
    return b.select(b.fcmp_ordered("==", r, z), signed_zero, fixed)


def _arith_check(name: str):
    def check(call):
        dt = dtype(call._checked_type.dtype)
        if dt.kind == "b" and name not in ("add", "multiply", "maximum", "minimum"):
            return f"{name} of bool tensors"
        return None

    return check


def _fs(dt: DType) -> str:
    return "f32" if dt.bits == 32 else "f64"


for _name in (
    "add", "subtract", "multiply", "divide", "floor_divide", "trunc_divide", "mod", "floor_mod",
    "trunc_mod", "power", "maximum", "minimum",
):  # fmt: skip
    rule(_name, flat=True, check=_arith_check(_name))(_arith(_name))


def _bitwise(op: str):
    def fn(kb, call, index, field):
        dt = kb.dt(call)
        a, c = operands(kb, call, index, dt)
        b = kb.builder
        if op in ("left_shift", "right_shift"):
            return shift(kb, a, c, dt, left=op == "left_shift")
        return {"bitwise_and": b.and_, "bitwise_or": b.or_, "bitwise_xor": b.xor}[op](a, c)

    return fn


def _int_only(call):
    dt = dtype(call._checked_type.dtype)
    name = call.op.name
    if not dt.is_int and not (dt.kind == "b" and not name.endswith("shift")):
        return f"{name} needs integer tensors, got {dt.name}"
    return None


for _name in ("bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift"):
    rule(_name, flat=True, check=_int_only)(_bitwise(_name))


def _logical(op: str):
    def fn(kb, call, index, field):
        b = kb.builder
        a, c = (truthy(kb, kb.operand(x, index), kb.dt(x)) for x in call.args)
        return {"and": b.and_, "or": b.or_, "xor": b.xor}[op](a, c)

    return fn


for _op in ("and", "or", "xor"):
    rule(f"logical_{_op}", flat=True)(_logical(_op))

_CMP = {"equal": "==", "not_equal": "!=", "less": "<", "less_equal": "<=", "greater": ">", "greater_equal": ">="}


def _compare(op: str):
    def fn(kb, call, index, field):
        dts = [kb.dt(a) for a in call.args]
        dt = dtype(np.result_type(*(d.np for d in dts)).name)
        a, c = operands(kb, call, index, dt)
        return compare(kb, op, a, c, dt)

    return fn


for _name, _op in _CMP.items():
    rule(_name, flat=True)(_compare(_op))


# --- unary --------------------------------------------------------------------------------


def _float_math(name: str):
    fn_math = m.float_math(name)

    def fn(kb, call, index, field):
        x = kb.value(call.args[0], index)
        src, out = kb.dt(call.args[0]), kb.dt(call)
        if src.is_float:
            return convert(kb, fn_math(kb, x, src), src, out)
        # integer tensors: computed in float64, converted back (truncating, saturating)
        return convert(kb, fn_math(kb, convert(kb, x, src, FLOAT64), FLOAT64), FLOAT64, out)

    return fn


for _name in m.FLOAT_MATH:
    rule(_name, flat=True)(_float_math(_name))


def _unary(name: str):
    def fn(kb, call, index, field):
        x = kb.value(call.args[0], index)
        dt, out = kb.dt(call.args[0]), kb.dt(call)
        b = kb.builder
        if name == "negative":
            if dt.kind == "b":
                return b.not_(x)
            return b.fneg(x) if dt.is_float else b.neg(x)
        if name == "abs":
            if dt.is_float:
                return kb.call(f"llvm.fabs.{_fs(dt)}", dt.ir, x)
            return b.select(b.icmp_signed("<", x, zero(dt)), b.neg(x), x) if dt.signed else x
        if name == "sign":
            if dt.kind == "b":
                return x
            pos = b.select(compare(kb, ">", x, zero(dt), dt), one(dt), zero(dt))
            if dt.kind == "u":
                return pos
            return b.select(compare(kb, "<", x, zero(dt), dt), const(dt, -1), pos)
        if name == "logical_not":
            return convert(kb, b.not_(truthy(kb, x, dt)), BOOL, out)
        if name == "bitwise_not":
            return b.not_(x)
        if name == "copy":
            return x
        if name in ("floor", "ceil", "round", "trunc"):
            return kb.call(f"llvm.{name}.{_fs(dt)}", dt.ir, x) if dt.is_float else x
        if name == "isnan":
            return b.fcmp_unordered("uno", x, x) if dt.is_float else const(out, False)
        if name == "isinf":
            if not dt.is_float:
                return const(out, False)
            return b.fcmp_ordered("==", kb.call(f"llvm.fabs.{_fs(dt)}", dt.ir, x), ir.Constant(dt.ir, float("inf")))
        if name == "isfinite":
            if not dt.is_float:
                return const(out, True)
            return b.fcmp_ordered("<", kb.call(f"llvm.fabs.{_fs(dt)}", dt.ir, x), ir.Constant(dt.ir, float("inf")))
        if name == "nn.relu":
            return b.select(compare(kb, ">", x, zero(dt), dt), x, zero(dt))
        raise Unsupported(f"no LLVM lowering for {name}", name)

    return fn


def _int_or_bool(call):
    dt = dtype(call.args[0]._checked_type.dtype)
    return None if (dt.is_int or dt.kind == "b") else f"bitwise_not needs integers, got {dt.name}"


for _name in (
    "negative", "abs", "sign", "logical_not", "copy", "floor", "ceil", "round", "trunc", "isnan",
    "isinf", "isfinite", "nn.relu",
):  # fmt: skip
    rule(_name, flat=True)(_unary(_name))
rule("bitwise_not", flat=True, check=_int_or_bool)(_unary("bitwise_not"))


def scalar_attr(value: float, dt: DType) -> ir.Constant:
    """An attribute number converted to the tensor's dtype as the interpreter does it."""
    return const(dt, np_convert(np.float64(value), dt.name).item())


@rule("nn.leaky_relu", flat=True)
def _leaky_relu(kb, call, index, field):
    x = kb.value(call.args[0], index)
    dt = kb.dt(call)
    b = kb.builder
    alpha = scalar_attr(attrs_of(call)["alpha"], dt)
    neg = b.fmul(x, alpha) if dt.is_float else b.mul(x, alpha)
    return b.select(compare(kb, ">", x, zero(dt), dt), x, neg)


@rule("clip", flat=True)
def _clip(kb, call, index, field):
    x = kb.value(call.args[0], index)
    dt = kb.dt(call)
    attrs = attrs_of(call)
    lo, hi = scalar_attr(attrs["a_min"], dt), scalar_attr(attrs["a_max"], dt)
    return tvm_max(kb, tvm_min(kb, x, hi, dt), lo, dt)


@rule("cast", "cast_like", flat=True)
def _cast(kb, call, index, field):
    x = kb.operand(call.args[0], index)
    return convert(kb, x, kb.dt(call.args[0]), kb.dt(call))


@rule("zeros_like", "ones_like", "zeros", "ones", flat=True)
def _fill_constant(kb, call, index, field):
    return const(kb.dt(call), 1 if call.op.name.startswith("ones") else 0)


@rule("full", "full_like", flat=True)
def _full(kb, call, index, field):
    fill = call.args[-1]
    value = kb.operand(fill, index)  # a scalar: every index reads element 0
    return convert(kb, value, kb.dt(fill), kb.dt(call))


@rule("where", flat=True)
def _where(kb, call, index, field):
    cond, x, y = call.args
    dt = kb.dt(call)
    c = truthy(kb, kb.operand(cond, index), kb.dt(cond))
    a = convert(kb, kb.operand(x, index), kb.dt(x), dt)
    d = convert(kb, kb.operand(y, index), kb.dt(y), dt)
    return kb.builder.select(c, a, d)


def _along(kb, node, index, axis: int) -> ir.Value:
    """A per-channel vector ``node`` read at the output's coordinate on ``axis``."""
    from .index import Index

    sub = index.derived(("along", axis), lambda: Index(kb.builder, kb.shape(node), dims=[index.dim(axis)]))
    return kb.value(node, sub)


def _axis(call, rank: int) -> int:
    axis = attrs_of(call)["axis"]
    return axis + rank if axis < 0 else axis


def _along_check(call):
    x, vec = (a._checked_type.shape for a in call.args)
    if not x:
        return "a scalar input"
    axis = attrs_of(call)["axis"]
    axis = axis + len(x) if axis < 0 else axis
    if not 0 <= axis < len(x) or tuple(vec) != (x[axis],):
        return "the vector does not match the axis"
    return None


@rule("nn.bias_add", check=_along_check)
def _bias_add(kb, call, index, field):
    x, bias = call.args
    dt = kb.dt(call)
    a = convert(kb, kb.value(x, index), kb.dt(x), dt)
    c = convert(kb, _along(kb, bias, index, _axis(call, len(index.shape))), kb.dt(bias), dt)
    return plus(kb, a, c, dt)  # on bool an OR, as add


@rule("nn.prelu", check=_along_check)
def _prelu(kb, call, index, field):
    x, alpha = call.args
    dt = kb.dt(call)
    v = kb.value(x, index)
    a = convert(kb, _along(kb, alpha, index, _axis(call, len(index.shape))), kb.dt(alpha), dt)
    b = kb.builder
    neg = b.fmul(v, a) if dt.is_float else b.mul(v, a)
    return b.select(compare(kb, ">", v, zero(dt), dt), v, neg)


@rule("shape_of")
def _shape_of(kb, call, index, field):
    shape = kb.shape(call.args[0])
    dt = kb.dt(call)
    b = kb.builder
    if not shape:
        return zero(dt)
    # a small table lookup by selects: shape_of outputs have a handful of elements
    i = index.flat()
    out = const(dt, shape[-1])
    for k in range(len(shape) - 2, -1, -1):
        out = b.select(b.icmp_unsigned("==", i, ir.Constant(i.type, k)), const(dt, shape[k]), out)
    return out


__all__ = ["operands", "scalar_attr", "F64", "BOOL", "FLOAT64"]
