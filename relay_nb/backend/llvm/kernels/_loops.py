"""Small llvmlite helpers the tiled kernels share: counted loops, constants, vectors.

Loops are built with phi nodes (no allocas), so every loop-carried value — a register tile
of accumulators above all — is an SSA value LLVM keeps in registers.
"""

from __future__ import annotations

import itertools
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Iterator, Sequence, Union

from llvmlite import ir

I1 = ir.IntType(1)
I8 = ir.IntType(8)
I32 = ir.IntType(32)
I64 = ir.IntType(64)
PTR = ir.PointerType()

IntLike = Union[int, ir.Value]


def i64(value: IntLike) -> ir.Value:
    """An ``i64`` value: Python ints become constants, LLVM values pass through."""
    return ir.Constant(I64, value) if isinstance(value, int) else value


def add(b: ir.IRBuilder, x: IntLike, y: IntLike) -> IntLike:
    """``x + y`` folded in Python when both are ints (keeps the emitted IR small)."""
    if isinstance(x, int) and isinstance(y, int):
        return x + y
    if isinstance(y, int) and y == 0:
        return x
    if isinstance(x, int) and x == 0:
        return y
    return b.add(i64(x), i64(y))


def mul(b: ir.IRBuilder, x: IntLike, y: IntLike) -> IntLike:
    """``x * y`` folded in Python when both are ints or one is 0 / 1."""
    if isinstance(x, int) and isinstance(y, int):
        return x * y
    if isinstance(y, int):
        return 0 if y == 0 else x if y == 1 else b.mul(i64(x), i64(y))
    if isinstance(x, int):
        return 0 if x == 0 else y if x == 1 else b.mul(i64(x), i64(y))
    return b.mul(x, y)


def smin(b: ir.IRBuilder, x: IntLike, y: IntLike) -> IntLike:
    if isinstance(x, int) and isinstance(y, int):
        return min(x, y)
    x, y = i64(x), i64(y)
    return b.select(b.icmp_signed("<", x, y), x, y)


def gep(b: ir.IRBuilder, elem: ir.Type, ptr: ir.Value, offset: IntLike) -> ir.Value:
    """``&ptr[offset]`` for elements of type ``elem`` (opaque pointers)."""
    if isinstance(offset, int) and offset == 0:
        return ptr
    return b.gep(ptr, [i64(offset)], source_etype=elem)


@dataclass
class Loop:
    """A counted loop being built: ``index`` and the ``carried`` phis of the current trip."""

    index: ir.Value
    carried: list[ir.Value]
    header: ir.Block
    next_values: list[ir.Value] = field(default_factory=list)

    def carry(self, values: Sequence[ir.Value]) -> None:
        """The carried values for the next trip (one per initial value)."""
        self.next_values = list(values)


@contextmanager
def for_range(
    b: ir.IRBuilder,
    start: IntLike,
    stop: IntLike,
    step: int = 1,
    init: Sequence[ir.Value] = (),
    name: str = "i",
    unroll: bool = True,
) -> Iterator[Loop]:
    """``for index in range(start, stop, step)`` (``step > 0``), emitted at ``b``.

    Values in ``init`` are carried around the loop as phis; the body calls
    ``loop.carry(new)``. After the ``with`` block the builder sits after the loop and
    ``loop.carried`` holds the final values (the header's phis dominate the exit).
    ``unroll=False`` forbids LLVM to unroll it (outer blocking loops with a few static
    trips would otherwise be copied whole, fused epilogue and all).
    """
    pre = b.block
    header = b.append_basic_block(f"{name}.head")
    body = b.append_basic_block(f"{name}.body")
    exit_ = b.append_basic_block(f"{name}.exit")
    b.branch(header)
    b.position_at_end(header)
    index = b.phi(I64, name=name)
    index.add_incoming(i64(start), pre)
    phis = []
    for k, v in enumerate(init):
        phi = b.phi(v.type, name=f"{name}.c{k}")
        phi.add_incoming(v, pre)
        phis.append(phi)
    b.cbranch(b.icmp_signed("<", index, i64(stop)), body, exit_)
    b.position_at_end(body)
    loop = Loop(index, phis, header)
    yield loop
    latch = b.block
    nxt = b.add(index, i64(step), name=f"{name}.next")
    index.add_incoming(nxt, latch)
    if len(loop.next_values) != len(phis):
        raise AssertionError("a loop with carried values must call loop.carry(...)")
    for phi, v in zip(phis, loop.next_values):
        phi.add_incoming(v, latch)
    back = b.branch(header)
    if not unroll:
        back.set_metadata("llvm.loop", _no_unroll(b.module))
    b.position_at_end(exit_)


_loop_ids = itertools.count()


def _no_unroll(module: ir.Module) -> ir.MDValue:
    """A fresh loop ID ``!N = !{!N, !{"llvm.loop.unroll.disable"}}``."""
    hint = module.add_metadata([ir.MetaDataString(module, "llvm.loop.unroll.disable")])
    node = module.add_metadata([ir.MetaDataString(module, f"relay_nb.loop.{next(_loop_ids)}"), hint])
    node.operands = (node, hint)  # a loop ID refers to itself
    return node


def splat(b: ir.IRBuilder, scalar: ir.Value, lanes: int) -> ir.Value:
    """Broadcast a scalar into every lane (LLVM turns a load + splat into vbroadcast)."""
    vt = ir.VectorType(scalar.type, lanes)
    one = b.insert_element(ir.Constant(vt, ir.Undefined), scalar, ir.Constant(I32, 0))
    mask = ir.Constant(ir.VectorType(I32, lanes), [0] * lanes)
    return b.shuffle_vector(one, ir.Constant(vt, ir.Undefined), mask)


def zero(ty: ir.Type) -> ir.Constant:
    if isinstance(ty, ir.VectorType):
        return ir.Constant(ty, [ir.Constant(ty.element, 0)] * ty.count)
    return ir.Constant(ty, 0)


def declare(module: ir.Module, name: str, ret: ir.Type, args: Sequence[ir.Type]) -> ir.Function:
    """The function ``name`` in ``module``, declared once (intrinsics, malloc, free)."""
    fn = module.globals.get(name)
    if fn is None:
        fn = ir.Function(module, ir.FunctionType(ret, list(args)), name=name)
    return fn


def fma(b: ir.IRBuilder, x: ir.Value, y: ir.Value, acc: ir.Value) -> ir.Value:
    """``x * y + acc``: a fused multiply-add for floats, a multiply and add for integers."""
    ty = acc.type
    elem = ty.element if isinstance(ty, ir.VectorType) else ty
    if isinstance(elem, ir.IntType):
        return b.add(b.mul(x, y), acc)
    suffix = elem.intrinsic_name if not isinstance(ty, ir.VectorType) else (
        f"v{ty.count}{elem.intrinsic_name}"
    )
    fn = declare(b.module, f"llvm.fma.{suffix}", ty, [ty, ty, ty])
    return b.call(fn, [x, y, acc])


def gather(b: ir.IRBuilder, elem: ir.Type, base: ir.Value, offsets: ir.Value, align: int) -> ir.Value:
    """``base[offsets[i]]`` for every lane of the ``<n x i32>`` vector ``offsets`` (elements
    aligned to ``align`` bytes): one vector gather (``vgatherdps`` on AVX2 / AVX-512;
    LLVM splits it into scalar loads where the target has none)."""
    lanes = offsets.type.count
    ptrs = b.gep(base, [offsets], source_etype=elem)
    ptrs.type = ir.VectorType(PTR, lanes)  # llvmlite types a vector GEP as a scalar pointer
    vec, mask = ir.VectorType(elem, lanes), ir.VectorType(I1, lanes)
    fn = declare(b.module, f"llvm.masked.gather.v{lanes}{elem.intrinsic_name}.v{lanes}p0", vec, [ptrs.type, I32, mask, vec])
    return b.call(fn, [ptrs, ir.Constant(I32, align), ir.Constant(mask, [1] * lanes), ir.Constant(vec, None)])


@contextmanager
def blocks(
    b: ir.IRBuilder, total: IntLike, block: int, name: str, start: IntLike = 0
) -> Iterator[tuple[IntLike, IntLike]]:
    """Iterate ``range(start, total, block)`` yielding ``(begin, size)`` with
    ``size = min(block, total - begin)``; a single static block is emitted without a
    loop, as Python ints, so the arithmetic of the common small case folds away."""
    if isinstance(total, int) and isinstance(start, int) and total - start <= block:
        yield start, total - start
        return
    with for_range(b, start, total, block, name=name, unroll=False) as loop:
        yield loop.index, smin(b, block, b.sub(i64(total), loop.index))


@contextmanager
def span(b: ir.IRBuilder, lo: IntLike, hi: IntLike, name: str) -> Iterator[IntLike]:
    """``for u in range(lo, hi)``; a static single trip emits no loop and yields the int."""
    if isinstance(lo, int) and isinstance(hi, int) and hi - lo == 1:
        yield lo
        return
    with for_range(b, lo, hi, name=name, unroll=False) as loop:
        yield loop.index


@contextmanager
def indices(b: ir.IRBuilder, count: int, name: str) -> Iterator[IntLike]:
    """``for i in range(count)``; a count of 1 emits no loop and yields the int 0."""
    if count == 1:
        yield 0
        return
    with for_range(b, 0, count, name=name, unroll=False) as loop:
        yield loop.index
