"""The state of one kernel being emitted: its function, loops, buffers and node values.

Rules never see the Relay function as a whole: they ask the :class:`KernelBuilder` for the
value of an argument at an index (``kb.value(arg, index)``), which either loads it from a
buffer (a parameter, a constant, a materialized node) or emits the argument's own rule
inline at that index.  That one method is what inlines an elementwise chain into its
consumer's loop.
"""

from __future__ import annotations

import math
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Optional, Sequence

import numpy as np
from llvmlite import ir

from ....ir.attrs import Attrs
from ....ir.expr import Call, Constant, Expr, Tuple, TupleGetItem, Var
from ....ir.ty import TensorType, TupleType
from .index import Index, broadcast
from .types import I64, PTR, DType, Unsupported, const, dtype, i64, load, store

from ..kernel_abi import ALIGN  # noqa: E402,F401  (workspace buffers start on cache lines)

FLAT_UNIT = 1024
"""Elements per unit of a split flat loop: a multiple of every vector width times the
vectorizer's interleave (at most 64 floats), so each chunk runs the same vector code on
the same elements as the whole loop would (results do not depend on the thread count)."""

SPLIT_ROWS = 64
"""A split nest merges leading axes until it has this many rows to share out."""

ELEMENT_NS = 1.0
"""Estimated single-core time of one op on one element of a fused loop: measured on the
2-core test machine (best of 30 calls, load ~6.7): ``add`` of two 4M-float arrays 0.99
ns per element (memory bound), ``tanh(exp(x))`` 2.7 ns (1.35 per op), softmax rows 2.1
ns per element."""


@dataclass
class Buffer:
    """A contiguous row-major tensor in memory: a pointer, a shape and an element type."""

    ptr: ir.Value
    shape: tuple
    dt: DType

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def load(self, b: ir.IRBuilder, index: Index) -> ir.Value:
        return load(b, self.ptr, index.flat(), self.dt)

    def store(self, b: ir.IRBuilder, index: Index, value: ir.Value) -> None:
        store(b, value, self.ptr, index.flat(), self.dt)

    def load_flat(self, b: ir.IRBuilder, flat: ir.Value) -> ir.Value:
        return load(b, self.ptr, flat, self.dt)

    def store_flat(self, b: ir.IRBuilder, flat: ir.Value, value: ir.Value) -> None:
        store(b, value, self.ptr, flat, self.dt)


def tensor_type(ty: Any, what: str = "value") -> TensorType:
    """``ty`` as a TensorType with a static shape and a lowered dtype (else Unsupported)."""
    if not isinstance(ty, TensorType):
        raise Unsupported(f"{what} has type {ty}, not a tensor")
    if not isinstance(ty.shape, tuple) or not all(type(d) is int for d in ty.shape):
        raise Unsupported(f"{what} has a dynamic shape")
    dtype(ty.dtype)
    return ty


def leaves(ty: Any) -> list[TensorType]:
    """The tensors of a (possibly nested) tuple type, in order."""
    out, stack = [], [ty]
    while stack:
        t = stack.pop()
        if isinstance(t, TupleType):
            stack.extend(reversed(t.fields))
        else:
            out.append(tensor_type(t))
    return out


class KernelBuilder:
    """Emits one kernel function; see the module docstring."""

    def __init__(self, module: ir.Module, func: ir.Function, rules: dict, materialized: set):
        self.module = module
        self.func = func
        self.builder = ir.IRBuilder(func.append_basic_block("entry"))
        self.rules = rules
        self.materialized = materialized
        self.inputs: dict[Expr, list[ir.Value]] = {}  # param / constant -> leaf pointers
        # constant -> its argument index, for those one call reads (they may be prepacked)
        self.sole_constants: dict[Expr, int] = {}
        self.packings: dict[int, Callable] = {}  # constant index -> its packing (see prepack)
        self.buffers: dict[tuple[Expr, Optional[int]], Buffer] = {}
        self.workspace: Optional[ir.Value] = None
        self.status: Optional[ir.Value] = None
        self.workspace_bytes = 0
        self.uses_status = False
        self.errors: dict[int, str] = {}  # status code -> message template ({detail})
        self.peeled: set[int] = set()  # results whose loop peels to the output's cache line
        self._blocks = 0
        # the chunk [begin, end) of the kernel's parallel range this call computes (see split)
        self.begin: Optional[ir.Value] = None
        self.end: Optional[ir.Value] = None
        self.splittable = False  # one stage only: chunks of its outer loop are independent
        self.output_ptrs: list[ir.Value] = []  # the result buffers' pointers
        self.parallel = 0  # units of the split loop (0: the kernel is not split)
        self.unit_ns = 0.0  # estimated single-core time of one unit
        self.chunk_ns = 0.0  # estimated work every chunk repeats (packing a shared operand)
        # one element of a fused loop: each op's reads per element (a pool's window)
        self.element_ns = ELEMENT_NS * max(1, sum(r.cost(c) if r.cost else 1 for c, r in rules.items()))
        self._blocks = 0

    # -- types ------------------------------------------------------------------------------
    @staticmethod
    def ttype(node: Expr, field: Optional[int] = None) -> TensorType:
        ty = node._checked_type
        if field is not None:
            if not isinstance(ty, TupleType):
                raise Unsupported("a projection of a non-tuple")
            ty = ty.fields[field]
        return tensor_type(ty)

    def shape(self, node: Expr, field: Optional[int] = None) -> tuple:
        return self.ttype(node, field).shape

    def dt(self, node: Expr, field: Optional[int] = None) -> DType:
        return dtype(self.ttype(node, field).dtype)

    # -- values --------------------------------------------------------------------------------
    def value(self, node: Expr, index: Index) -> ir.Value:
        """The element of tensor-valued ``node`` at ``index`` (an index of node's shape)."""
        hit = index.memo.get(node)
        if hit is not None:
            return hit
        t = type(node)
        if t is Call:
            buf = self.buffers.get((node, None))
            if buf is not None:
                v = buf.load(self.builder, index)
            else:
                v = self._rule(node).fn(self, node, index, None)
                _check_type(node, v, self.dt(node))
        elif t is Var or t is Constant:
            v = self._leaf(node, None, index)
        elif t is TupleGetItem:
            v = self.field_value(node.tuple_value, node.index, index)
        else:
            raise Unsupported(f"a {t.__name__} used as a tensor")
        index.memo[node] = v
        return v

    def field_value(self, node: Expr, field: int, index: Index) -> ir.Value:
        """Element ``index`` of field ``field`` of tuple-valued ``node``."""
        t = type(node)
        if t is Tuple:
            return self.value(node.fields[field], index)
        key = (node, field)
        hit = index.memo.get(key)
        if hit is not None:
            return hit
        if t is Call:
            buf = self.buffers.get(key)
            if buf is not None:
                v = buf.load(self.builder, index)
            else:
                v = self._rule(node).fn(self, node, index, field)
                _check_type(node, v, self.dt(node, field))
        elif t is Var:
            v = self._leaf(node, field, index)
        else:
            raise Unsupported(f"a projection of a {t.__name__}")
        index.memo[key] = v
        return v

    def operand(self, node: Expr, index: Index, field: Optional[int] = None) -> ir.Value:
        """``node`` read at the output ``index`` with numpy broadcasting."""
        shape = self.shape(node, field)
        sub = broadcast(index, shape)
        return self.value(node, sub) if field is None else self.field_value(node, field, sub)

    def _rule(self, call: Call):
        return self.rules[call]

    def _leaf(self, node: Expr, field: Optional[int], index: Index) -> ir.Value:
        ptrs = self.inputs.get(node)
        if ptrs is None and type(node) is Constant and node.data.ndim == 0:
            return self.scalar_constant(node)  # a constant the kernel was not given
        if ptrs is None:
            raise Unsupported(f"{node!r} is not an input of the kernel")
        ptr = ptrs[field or 0]
        return load(self.builder, ptr, index.flat(), self.dt(node, field))

    def scalar_constant(self, c: Constant) -> ir.Value:
        """A scalar constant in its inferred dtype (an unsuffixed literal takes its context's)."""
        from ....op.impl._util import convert

        dt = self.dt(c)
        value = convert(c.data, dt.name).item()
        return const(dt, value)

    def leaf_buffer(self, node: Expr, field: Optional[int] = None) -> Optional[Buffer]:
        """The buffer already holding ``node`` (an input or a materialized node), if any."""
        buf = self.buffers.get((node, field))
        if buf is not None:
            return buf
        if type(node) in (Var, Constant) and node in self.inputs:
            return Buffer(self.inputs[node][field or 0], self.shape(node, field), self.dt(node, field))
        if type(node) is TupleGetItem and field is None:
            return self.leaf_buffer(node.tuple_value, node.index)
        if type(node) is Tuple and field is not None:
            return self.leaf_buffer(node.fields[field])
        return None

    def materialize(self, node: Expr, field: Optional[int] = None) -> Buffer:
        """``node`` as a contiguous buffer (computed into the workspace if it is not one)."""
        buf = self.leaf_buffer(node, field)
        if buf is not None:
            return buf
        shape, dt = self.shape(node, field), self.dt(node, field)
        buf = self.scratch(shape, dt)
        with self.nest(shape, flat=True) as index:
            v = self.value(node, index) if field is None else self.field_value(node, field, index)
            buf.store(self.builder, index, v)
        self.buffers[(node, field)] = buf
        return buf

    # -- memory --------------------------------------------------------------------------------
    def scratch(self, shape: Sequence[int], dt: DType) -> Buffer:
        """A temporary buffer carved from the kernel's workspace (allocated by the caller,
        64-byte aligned); its pointer is computed in the entry block, so it is usable
        anywhere in the kernel."""
        return Buffer(self.scratch_bytes(math.prod(shape) * dt.itemsize), tuple(shape), dt)

    def prepack(self, node: Expr, pack: Callable) -> bool:
        """Pass the constant ``node`` as ``pack(its array)`` (the anchor contract's
        ``prepack``): only a constant no other node of the kernel reads, packed once."""
        index = self.sole_constants.get(node)
        if index is None or index in self.packings:
            return False
        self.packings[index] = pack
        return True

    def scratch_bytes(self, nbytes: int) -> ir.Value:
        """A pointer to ``nbytes`` of the workspace (the anchor contract's ``scratch``)."""
        offset = self.workspace_bytes
        self.workspace_bytes += -(-max(int(nbytes), 1) // ALIGN) * ALIGN
        b = self.builder
        with b.goto_block(self.func.entry_basic_block):
            return b.gep(self.workspace, [i64(offset)], inbounds=True, source_etype=ir.IntType(8))

    def report_error(self, message: str, detail: ir.Value, cond: ir.Value) -> None:
        """If ``cond``: record the error ``message`` (a template with ``{detail}``) and
        ``detail`` in the status slot, keeping the first error; the caller raises it."""
        self.uses_status = True
        code = next((c for c, m in self.errors.items() if m == message), len(self.errors) + 1)
        self.errors[code] = message
        b = self.builder
        with b.if_then(cond, likely=False):
            old = b.load(self.status, typ=I64)
            with b.if_then(b.icmp_signed("==", old, i64(0))):
                b.store(i64(code), self.status)
                slot = b.gep(self.status, [i64(1)], inbounds=True, source_etype=I64)
                b.store(b.sext(detail, I64) if detail.type != I64 else detail, slot)

    # -- control flow ------------------------------------------------------------------------
    def block(self, name: str) -> ir.Block:
        self._blocks += 1
        return self.func.append_basic_block(f"{name}{self._blocks}")

    @contextmanager
    def loop(self, count: Any, name: str = "i", start: Any = 0, interleave: int = 0) -> Iterator[ir.Value]:
        """``for i in range(start, count)`` (i64); the body is emitted inside the ``with``.
        ``interleave``: ask the loop vectorizer for that many vectors per trip (else its own
        choice)."""
        b = self.builder
        if isinstance(count, int) and isinstance(start, int):
            if count - start <= 0:
                # nothing runs: emit the body into an unreachable block (LLVM drops it)
                dead = self.block(name + ".dead")
                saved = b.block
                b.position_at_end(dead)
                yield i64(start)
                b.unreachable()
                b.position_at_end(saved)
                return
            if count - start == 1:
                yield i64(start)
                return
        count = i64(count) if isinstance(count, int) else count
        start = i64(start) if isinstance(start, int) else start
        pre = b.block
        head, body, after = self.block(name + ".head"), self.block(name + ".body"), self.block(name + ".end")
        b.branch(head)
        b.position_at_end(head)
        i = b.phi(I64, name=name)
        i.add_incoming(start, pre)
        b.cbranch(b.icmp_signed("<", i, count), body, after)
        b.position_at_end(body)
        yield i
        nxt = b.add(i, i64(1), flags=("nsw",))
        i.add_incoming(nxt, b.block)
        back = b.branch(head)
        if interleave:
            back.set_metadata("llvm.loop", self._loop_hint("llvm.loop.interleave.count", interleave))
        b.position_at_end(after)

    def _loop_hint(self, key: str, value: int) -> ir.MDValue:
        """A fresh loop ID ``!N = !{!N, !{key, i32 value}}`` (a loop ID refers to itself)."""
        m = self.module
        hint = m.add_metadata([ir.MetaDataString(m, key), ir.Constant(ir.IntType(32), value)])
        self._blocks += 1
        node = m.add_metadata([ir.MetaDataString(m, f"relay_nb.loop.{self._blocks}"), hint])
        node.operands = (node, hint)
        return node

    @contextmanager
    def nest(self, shape: Sequence[int], flat: bool = False, interleave: int = 0) -> Iterator[Index]:
        """Loops over every element of ``shape`` in row-major order: one flat loop
        (``flat=True``) or one loop per axis; ``interleave``: the innermost loop's hint
        (see :meth:`loop`)."""
        shape = tuple(shape)
        if flat or len(shape) <= 1:
            with self.loop(math.prod(shape), "f", interleave=interleave) as i:
                yield Index(self.builder, shape, flat=i)
            return
        with ExitStack() as stack:
            last = len(shape) - 1
            dims = [
                stack.enter_context(self.loop(n, f"d{k}", interleave=interleave if k == last else 0))
                for k, n in enumerate(shape)
            ]
            yield Index(self.builder, shape, dims=dims)

    # -- threads ---------------------------------------------------------------------------------
    def writes_output(self, buf: Buffer) -> bool:
        """Whether ``buf`` is one of the kernel's results: only a loop writing a result
        may be split (a rule that fills scratch and reads it in a second pass must see
        all of it)."""
        return any(buf.ptr is p for p in self.output_ptrs)

    def no_split(self) -> None:
        """Keep this kernel whole (a rule that runs a second pass over its whole result,
        such as an epilogue after a reduction)."""
        if not self.parallel:
            self.splittable = False

    def split(self, count: int, unit_ns: float, chunk_ns: float = 0.0) -> tuple[ir.Value, ir.Value]:
        """``(lo, hi)``: the part of ``range(count)`` this call computes, when the caller
        splits the kernel's one parallel loop across threads (the kernel's arguments
        ``begin`` / ``end``, clamped to ``count``); else the whole range.  ``unit_ns`` (the
        estimated single-core time of one iteration) decides whether splitting pays,
        ``chunk_ns`` (work every chunk repeats) how finely.
        Only the first loop asking gets the split, and only in a kernel of one stage: a
        later stage would read what other chunks compute."""
        if not self.splittable or self.parallel or count < 2:
            return i64(0), i64(count)
        self.parallel, self.unit_ns, self.chunk_ns = int(count), float(unit_ns), float(chunk_ns)
        b = self.builder
        with b.goto_block(self.func.entry_basic_block):
            n = i64(count)
            hi = b.select(b.icmp_signed("<", self.end, n), self.end, n)
            lo = b.select(b.icmp_signed("<", self.begin, hi), self.begin, hi)
        return lo, hi

    @contextmanager
    def split_nest(
        self, shape: Sequence[int], flat: bool = False, element_ns: Optional[float] = None, unit: int = FLAT_UNIT,
        interleave: int = 0,
    ) -> Iterator[Index]:
        """:meth:`nest` whose outer range is split across threads (see :meth:`split`):
        a flat loop in units of :data:`FLAT_UNIT` elements (chunk edges stay on vector
        and cache-line boundaries), a nest over its leading axes (merged until there are
        enough rows to share).  ``element_ns``: the estimated time of one element of the
        nest (default: one element of the kernel's fused elementwise ops); ``unit``: the
        elements per unit of a flat loop (1 when the body is a loop of its own, which
        the vectorizer then works on instead); ``interleave``: the innermost loop's hint."""
        shape = tuple(shape)
        size = math.prod(shape)
        ns = self.element_ns if element_ns is None else element_ns
        if not self.splittable or self.parallel or size < 2 * unit:
            with self.nest(shape, flat, interleave) as index:
                yield index
            return
        b = self.builder
        if flat or len(shape) <= 1:
            lo, hi = self.split(-(-size // unit), unit * ns)
            start = b.mul(lo, i64(unit))
            stop = b.mul(hi, i64(unit))
            stop = b.select(b.icmp_signed("<", stop, i64(size)), stop, i64(size))
            with self.loop(stop, "f", start=start, interleave=interleave) as i:
                yield Index(b, shape, flat=i)
            return
        lead = 1
        # merge leading axes into rows; the last axis stays a loop of its own (the one the
        # vectorizer works on) unless the body is a loop itself (unit 1)
        last = len(shape) if unit == 1 else len(shape) - 1
        while lead < last and math.prod(shape[:lead]) < SPLIT_ROWS:
            lead += 1
        rows = math.prod(shape[:lead])
        lo, hi = self.split(rows, math.prod(shape[lead:]) * ns)
        with ExitStack() as stack:
            u = stack.enter_context(self.loop(hi, "u", start=lo))
            outer = []
            for n in reversed(shape[:lead]):  # row u -> its leading coordinates
                outer.append(b.urem(u, i64(n)) if n > 1 else i64(0))
                u = b.udiv(u, i64(n)) if n > 1 else u
            inner = len(shape) - lead - 1
            dims = outer[::-1] + [
                stack.enter_context(self.loop(n, f"d{k + lead}", interleave=interleave if k == inner else 0))
                for k, n in enumerate(shape[lead:])
            ]
            yield Index(b, shape, dims=dims)

    # -- intrinsics ----------------------------------------------------------------------------
    def intrinsic(self, name: str, ret: ir.Type, args: Sequence[ir.Type]) -> ir.Function:
        """Declare (once) an LLVM intrinsic or a C library function."""
        fn = self.module.globals.get(name)
        if fn is None:
            fn = ir.Function(self.module, ir.FunctionType(ret, list(args)), name)
        return fn

    def call(self, name: str, ret: ir.Type, *args: ir.Value) -> ir.Value:
        return self.builder.call(self.intrinsic(name, ret, [a.type for a in args]), list(args))


def _check_type(call: Call, v: ir.Value, dt: DType) -> None:
    """A rule must return its result's register type (a bug otherwise: the kernel falls
    back to numpy instead of storing wrong bits)."""
    if v.type != dt.ir:
        raise RuntimeError(f"the {call.op.name} rule produced {v.type}, not {dt.ir} ({dt.name})")


def attrs_of(call: Call) -> Attrs:
    """The call's attributes, or its op's defaults for a hand-built call without any."""
    if call.attrs is not None:
        return call.attrs
    from ....op.registry import make_attrs

    try:
        return make_attrs(call.op.name)
    except Exception:
        raise Unsupported(f"{call.op.name} has no attributes") from None


Rule = Callable[..., Any]

__all__ = ["ALIGN", "Buffer", "KernelBuilder", "attrs_of", "leaves", "tensor_type", "np", "PTR"]
