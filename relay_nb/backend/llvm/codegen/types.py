"""Relay dtypes as LLVM types: how a tensor element is stored and how it is computed.

A value in a register has its dtype's natural LLVM type (``float``, ``double``, ``iN``);
``bool`` is ``i1`` in registers and one byte (0 or 1, numpy's layout) in memory.  Signedness
is not part of an LLVM integer type, so every rule asks the :class:`DType` which
instruction to use.  ``float16``/``bfloat16`` and vector dtypes are not lowered: a kernel
using them falls back to numpy (:class:`Unsupported`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from llvmlite import ir

I1 = ir.IntType(1)
I8 = ir.IntType(8)
I32 = ir.IntType(32)
I64 = ir.IntType(64)
F32 = ir.FloatType()
F64 = ir.DoubleType()
PTR = ir.PointerType()
VOID = ir.VoidType()


class Unsupported(Exception):
    """Raised during lowering when a construct has no native lowering; the kernel then
    falls back to the numpy implementations and the reason is reported."""

    def __init__(self, reason: str, op: str = ""):
        super().__init__(reason)
        self.reason = reason
        self.op = op


@dataclass(frozen=True)
class DType:
    """One element type: ``kind`` is numpy's (``f``, ``i``, ``u``, ``b``), ``bits`` its width."""

    name: str
    kind: str
    bits: int

    @property
    def ir(self) -> ir.Type:
        """The register type."""
        if self.kind == "f":
            return F32 if self.bits == 32 else F64
        if self.kind == "b":
            return I1
        return ir.IntType(self.bits)

    @property
    def mem(self) -> ir.Type:
        """The in-memory type (bool is a byte)."""
        return I8 if self.kind == "b" else self.ir

    @property
    def itemsize(self) -> int:
        return 1 if self.kind == "b" else self.bits // 8

    @property
    def is_float(self) -> bool:
        return self.kind == "f"

    @property
    def is_int(self) -> bool:
        return self.kind in "iu"

    @property
    def signed(self) -> bool:
        return self.kind == "i"

    @property
    def np(self) -> np.dtype:
        return np.dtype(self.name)


_DTYPES = {
    "bool": DType("bool", "b", 1),
    "int8": DType("int8", "i", 8),
    "int16": DType("int16", "i", 16),
    "int32": DType("int32", "i", 32),
    "int64": DType("int64", "i", 64),
    "uint8": DType("uint8", "u", 8),
    "uint16": DType("uint16", "u", 16),
    "uint32": DType("uint32", "u", 32),
    "uint64": DType("uint64", "u", 64),
    "float32": DType("float32", "f", 32),
    "float64": DType("float64", "f", 64),
}


def dtype(name: Any) -> DType:
    """The :class:`DType` of a Relay dtype string (``uint1`` is bool); Unsupported otherwise."""
    name = str(name)
    if name == "uint1":
        name = "bool"
    dt = _DTYPES.get(name)
    if dt is None:
        raise Unsupported(f"dtype {name} is not lowered to LLVM")
    return dt


def const(dt: DType, value: Any) -> ir.Constant:
    """An LLVM constant of ``dt`` holding ``value`` (already in ``dt``'s range)."""
    if dt.kind == "f":
        return ir.Constant(dt.ir, float(value))
    if dt.kind == "b":
        return ir.Constant(I1, 1 if bool(value) else 0)
    v = int(value)
    if v < 0:
        v &= (1 << dt.bits) - 1  # two's complement bit pattern
    return ir.Constant(dt.ir, v)


def i64(value: int) -> ir.Constant:
    return ir.Constant(I64, int(value))


def zero(dt: DType) -> ir.Constant:
    return const(dt, 0)


def one(dt: DType) -> ir.Constant:
    return const(dt, 1)


def lowest(dt: DType) -> ir.Constant:
    """The smallest finite value (the identity of ``max``, the max-pool padding)."""
    if dt.kind == "b":
        return const(dt, False)
    if dt.is_int:
        return const(dt, int(np.iinfo(dt.np).min))
    return const(dt, float(np.finfo(dt.np).min))


def highest(dt: DType) -> ir.Constant:
    if dt.kind == "b":
        return const(dt, True)
    if dt.is_int:
        return const(dt, int(np.iinfo(dt.np).max))
    return const(dt, float(np.finfo(dt.np).max))


def load(b: ir.IRBuilder, ptr: ir.Value, flat: ir.Value, dt: DType) -> ir.Value:
    """Element ``flat`` of the buffer at ``ptr``, as a register value."""
    addr = b.gep(ptr, [flat], inbounds=True, source_etype=dt.mem)
    v = b.load(addr, typ=dt.mem)
    return b.trunc(v, I1) if dt.kind == "b" else v


def store(b: ir.IRBuilder, value: ir.Value, ptr: ir.Value, flat: ir.Value, dt: DType) -> None:
    addr = b.gep(ptr, [flat], inbounds=True, source_etype=dt.mem)
    b.store(b.zext(value, I8) if dt.kind == "b" else value, addr)


__all__ = [
    "DType",
    "Unsupported",
    "dtype",
    "const",
    "i64",
    "zero",
    "one",
    "lowest",
    "highest",
    "load",
    "store",
    "I1",
    "I8",
    "I32",
    "I64",
    "F32",
    "F64",
    "PTR",
    "VOID",
]
