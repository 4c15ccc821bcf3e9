"""``lower(func, symbol)``: a typed ``Primitive`` function to an ``llvmlite.ir.Module``.

Pure: no engine, no cache, no numpy data (constants are passed in as inputs).  The module
exports one C-ABI function::

    void symbol(ptr in0, ..., ptr const0, ..., ptr out0, ..., ptr workspace, ptr status,
                i64 begin, i64 end)

``in*`` are the parameters' tensors (a tuple parameter contributes one pointer per field),
``const*`` the function's constants, scalars included (:func:`kernel_constants`: so the
code does not depend on their values, and functions differing only in a constant share
one compiled kernel) except the few whose value decides the code (:func:`inlined_constants`:
``power(x, 2f)`` multiplies), ``out*`` the result's tensors, all
contiguous row-major; ``workspace`` is ``workspace_bytes`` of scratch (64-byte aligned),
``status`` two int64s where a kernel reports a run-time error (``take`` out of bounds in
``mode="fast"``); ``[begin, end)`` is the part of the kernel's one parallel loop
(``parallel`` units; 0 if it has none) this call computes, so that threads can run
chunks of one kernel at once (:mod:`..pool`); ``(0, parallel)`` or wider computes all.
The kernel computes:

1. every node with a *buffer* rule (reductions, anchors...), in dependency order, into an
   output buffer when it is a result, into the workspace otherwise; an anchor whose result
   feeds the output through elementwise ops only writes into the output and runs those ops
   as its in-place epilogue;
2. every result tensor not written yet, by one loop nest over its shape in which each
   *index* rule is inlined (one flat loop when the whole chain is elementwise).
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np
from llvmlite import ir

from ....ir.expr import Call, Constant, Expr, Function, Tuple, TupleGetItem, Var
from ....ir.ty import TensorType, TupleType
from ....op.registry import OpPattern, get_column
from ..kernel_abi import ALIGN, Lowered, constant_data, inlined_constants, kernel_constants, legalize
from ..kernel_abi import post_order as _post_order
from . import math as vmath
from .context import FLAT_UNIT, Buffer, KernelBuilder, leaves, tensor_type
from .index import Index
from .rules import llvm_rules
from .types import I64, PTR, VOID, Unsupported, dtype, i64


def _result_leaves(body: Expr) -> list[tuple[Expr, Optional[int]]]:
    ty = body._checked_type
    if isinstance(ty, TensorType):
        return [(body, None)]
    if not isinstance(ty, TupleType):
        raise Unsupported(f"a primitive function returning {ty}")
    if type(body) is Tuple:
        out = []
        for f in body.fields:
            if not isinstance(f._checked_type, TensorType):
                raise Unsupported("a nested tuple result")
            out.append((f, None))
        return out
    if not all(isinstance(f, TensorType) for f in ty.fields):
        raise Unsupported("a nested tuple result")
    return [(body, i) for i in range(len(ty.fields))]


def lower(func: Function, symbol: str) -> Lowered:
    """Lower one typed primitive function (see the module docstring); raise
    :class:`Unsupported` naming the op or construct that has no lowering."""
    rules_col = llvm_rules()
    legal = legalize(func)
    legalized, func = legal is not func, legal
    body = func.body
    nodes = _post_order(body)
    params = set(func.params)
    rules: dict[Call, Any] = {}
    ops: list[str] = []
    constants: list[Constant] = []
    inlined = inlined_constants(func)
    for n in nodes:
        t = type(n)
        if t is Var and n not in params:
            raise Unsupported(f"free variable %{n.name_hint} in a primitive function")
        if t is Constant:
            tensor_type(n._checked_type, "a constant")
            if n not in inlined:
                constants.append(n)
        if t is Call:
            name = n.op.name
            ops.append(name)
            r = rules_col.get(name)
            if r is None:
                raise Unsupported(f"no LLVM lowering for {name}", name)
            if r.kind == "static":  # a dyn.* op left unbound (see .dyn): its shapes are unknown
                raise Unsupported(f"{name}: {r.check(n)}", name)
            leaves(n._checked_type)
            for a in n.args:
                leaves(a._checked_type)
            reason = r.check(n) if r.check is not None else None
            if reason:
                raise Unsupported(f"{name}: {reason}", name)
            rules[n] = r
    out_leaves = _result_leaves(body)
    in_types: list[tuple[str, TensorType]] = []
    for p in func.params:
        ls = leaves(p._checked_type)
        if isinstance(p._checked_type, TupleType):
            if any(isinstance(f, TupleType) for f in p._checked_type.fields):
                raise Unsupported("a nested tuple parameter")
            in_types += [(f"%{p.name_hint}.{i}", t) for i, t in enumerate(ls)]
        else:
            in_types.append((f"%{p.name_hint}", ls[0]))
    out_types = [KernelBuilder.ttype(n, f) for n, f in out_leaves]

    from ..jit import target_data_layout

    module = ir.Module(name=symbol)
    module.triple, module.data_layout = target_data_layout()
    n_args = len(in_types) + len(constants) + len(out_types) + 2
    fn = ir.Function(module, ir.FunctionType(VOID, [PTR] * n_args + [I64, I64]), symbol)
    fn.attributes.add("nounwind")
    for a in fn.args[:n_args]:
        a.add_attribute("noalias")
    materialized = {c for c, r in rules.items() if r.materialized(c)}
    kb = KernelBuilder(module, fn, rules, materialized)
    args = list(fn.args)
    k = 0
    for p in func.params:
        count = len(leaves(p._checked_type))
        kb.inputs[p] = args[k : k + count]
        k += count
    readers: dict[Expr, int] = {body: 1}  # the result counts as a reader
    for n in nodes:
        for a in n.args if type(n) is Call else n.fields if type(n) is Tuple else ():
            readers[a] = readers.get(a, 0) + 1
        if type(n) is TupleGetItem:
            readers[n.tuple_value] = readers.get(n.tuple_value, 0) + 1
    for j, c in enumerate(constants):
        kb.inputs[c] = [args[k]]
        if readers.get(c, 0) == 1:
            kb.sole_constants[c] = j
        k += 1
    out_bufs = [Buffer(args[k + i], t.shape, dtype(t.dtype)) for i, t in enumerate(out_types)]
    kb.workspace, kb.status, kb.begin, kb.end = args[-4:]
    kb.splittable = _one_stage(kb, body, out_leaves, rules)
    kb.output_ptrs = [buf.ptr for buf in out_bufs]

    _emit(kb, body, nodes, rules, out_leaves, out_bufs)
    kb.builder.ret_void()
    return Lowered(
        module, symbol, in_types, [constant_data(c) for c in constants], out_types, kb.workspace_bytes, kb.uses_status,
        ops, dict(kb.errors), [i in kb.peeled for i in range(len(out_types))], kb.parallel, kb.unit_ns,
        kb.chunk_ns, dict(kb.packings), legalized,
    )


def _one_stage(kb: KernelBuilder, body: Expr, out_leaves, rules) -> bool:
    """True if the kernel is one loop nest writing its one result: no node is computed
    into the workspace first, so chunks of that nest's outer loop are independent."""
    if len(out_leaves) != 1 or out_leaves[0][1] is not None:
        return False
    if not kb.materialized:
        return True
    if len(kb.materialized) != 1:
        return False
    (node,) = kb.materialized
    return node is body or (rules[node].anchor and _inplace_epilogue(kb, node, body, rules))


def _emit(kb: KernelBuilder, body, nodes, rules, out_leaves, out_bufs) -> None:
    slots: dict[tuple, list[int]] = {}
    for i, leaf in enumerate(out_leaves):
        slots.setdefault(leaf, []).append(i)
    done = [False] * len(out_leaves)
    for node in nodes:
        if node not in kb.materialized:
            continue
        r = rules[node]
        ty = node._checked_type
        fields = [None] if isinstance(ty, TensorType) else list(range(len(ty.fields)))
        outs, epilogue = [], None
        for f in fields:
            hit = [i for i in slots.get((node, f), []) if not done[i]]
            if hit:
                outs.append(out_bufs[hit[0]])
                done[hit[0]] = True
            else:
                outs.append(None)
        if r.anchor and outs == [None] and _inplace_epilogue(kb, node, body, rules):
            i = slots[(body, None)][0]
            outs, done[i] = [out_bufs[i]], True
            epilogue = _make_epilogue(kb, node, body, out_bufs[i])
        outs = [o if o is not None else kb.scratch(kb.shape(node, f), kb.dt(node, f)) for o, f in zip(outs, fields)]
        if r.kind == "index":  # an index rule computed whole: one loop per field
            for f, buf in zip(fields, outs):
                with kb.split_nest(buf.shape) as index:
                    buf.store(kb.builder, index, r.fn(kb, node, index, f))
        for f, buf in zip(fields, outs):
            kb.buffers[(node, f)] = buf  # before a buffer rule runs: its epilogue reads it
        if r.kind == "buffer":
            r.fn(kb, node, outs, epilogue)
    for i, (node, f) in enumerate(out_leaves):
        if done[i]:
            continue
        buf = out_bufs[i]
        flat = _flat_ok(kb, node, f, rules)
        if flat and buf.size * buf.dt.itemsize >= PEEL_BYTES:
            _peeled_loop(kb, node, f, buf)
            kb.peeled.add(i)
            continue
        with kb.split_nest(buf.shape, flat=flat, interleave=0 if flat else _nest_interleave(buf.shape)) as index:
            buf.store(kb.builder, index, _element(kb, node, f, index))


PEEL_BYTES = 1 << 20
"""Flat result loops from this size up first peel elements until the output pointer is on
a cache line.  Results this large come from :func:`..memory.empty`, which gives them the
phase of an input of their size (only these: other results stay 64-byte aligned), so
after the peel that input's vector loads are aligned too: a 64-byte load across two cache
lines costs two, and a 10M-float chain measured 9% faster with aligned streams."""


BIG_LOOP_INTERLEAVE = 4
"""Vectors per trip of a peeled loop with AVX-512 (LLVM picks 1 there): a GELU's chain of
~25 dependent vector ops (exp's Horner, a division) then has four independent chains to
overlap; measured 11% faster on 10M floats.  With 16 registers (AVX2) LLVM's own choice
stands: four copies of such a body would spill."""


def _nest_interleave(shape) -> int:
    """The innermost loop's interleave hint of a result nest (not flat: a broadcast or a
    layout change needs coordinates): as :data:`BIG_LOOP_INTERLEAVE` where its rows are long enough to fill four vectors many times over (a matmul's bias
    and GELU over (128, 3072): 3.0 -> 1.2 ns per element), else LLVM's own choice (a
    short row would run only the scalar remainder)."""
    return BIG_LOOP_INTERLEAVE if vmath.has_avx512() and shape and shape[-1] >= NEST_INTERLEAVE_ROW else 0


NEST_INTERLEAVE_ROW = 256
"""Shortest innermost axis whose loop gets :data:`BIG_LOOP_INTERLEAVE`."""


def _peeled_loop(kb: KernelBuilder, node: Expr, f: Optional[int], buf: Buffer) -> None:
    b = kb.builder
    # a chunk [lo, hi) of a split loop: lo is a multiple of FLAT_UNIT elements, so it has
    # the output's own alignment and peels the same count
    units = -(-buf.size // FLAT_UNIT)
    lo, hi = kb.split(units, FLAT_UNIT * kb.element_ns)
    lo = b.mul(lo, i64(FLAT_UNIT))
    hi = b.mul(hi, i64(FLAT_UNIT))
    hi = b.select(b.icmp_signed("<", hi, i64(buf.size)), hi, i64(buf.size))
    misalign = b.and_(b.sub(i64(0), b.ptrtoint(buf.ptr, I64)), i64(ALIGN - 1))
    peel = b.lshr(misalign, i64(buf.dt.itemsize.bit_length() - 1))  # bytes -> elements
    peel = b.add(lo, peel)
    peel = b.select(b.icmp_signed("<", peel, hi), peel, hi)
    interleave = BIG_LOOP_INTERLEAVE if vmath.has_avx512() else 0
    for start, stop, name, hint in ((lo, peel, "peel", 0), (peel, hi, "f", interleave)):
        with kb.loop(stop, name, start=start, interleave=hint) as i:
            buf.store_flat(b, i, _element(kb, node, f, Index(b, buf.shape, flat=i)))


def _element(kb: KernelBuilder, node: Expr, f: Optional[int], index: Index) -> ir.Value:
    return kb.value(node, index) if f is None else kb.field_value(node, f, index)


_ELEMENTWISE = (int(OpPattern.ELEMWISE), int(OpPattern.BROADCAST))


def _inplace_epilogue(kb: KernelBuilder, anchor: Call, body: Expr, rules) -> bool:
    """True if ``body`` depends on ``anchor`` only through elementwise ops of the output's
    shape and dtype, so that the anchor may compute into the output and those ops rewrite
    each element in place."""
    if type(body) is not Call or body is anchor or not isinstance(body._checked_type, TensorType):
        return False
    if kb.shape(body) != kb.shape(anchor) or kb.dt(body) != kb.dt(anchor):
        return False
    patterns = get_column("TOpPattern")
    depends: set = {anchor}
    for node in _post_order(body):
        if node is anchor or type(node) is not Call:
            if type(node) in (Tuple, TupleGetItem) and any(c in depends for c in _children(node)):
                return False
            continue
        if not any(a in depends for a in node.args):
            continue
        r = rules[node]
        if r.kind != "index" or int(patterns.get(node.op.name, 8)) not in _ELEMENTWISE:
            return False
        if not isinstance(node._checked_type, TensorType) or kb.shape(node) != kb.shape(body):
            return False
        depends.add(node)
    return body in depends


def _children(node: Expr) -> tuple:
    return node.fields if type(node) is Tuple else (node.tuple_value,)


def _make_epilogue(kb: KernelBuilder, anchor: Call, body: Expr, out: Buffer):
    """``epilogue(builder, flat_start, count)`` of the anchor contract: recompute
    ``out[flat_start : flat_start + count]`` as ``body`` (the anchor reads its own value)."""

    lead = _epilogue_lead(kb, anchor, body, out.shape)

    def epilogue(builder: ir.IRBuilder, flat_start: ir.Value, count: ir.Value) -> None:
        saved, kb.builder = kb.builder, builder
        try:
            if lead == 0:
                with kb.loop(count, "ep") as j:
                    flat = builder.add(flat_start, j, flags=("nsw",))
                    index = Index(builder, out.shape, flat=flat)
                    out.store(builder, index, kb.value(body, index))
            else:
                _split_epilogue(kb, body, out, lead, flat_start, count)
        finally:
            kb.builder = saved

    return epilogue


EPILOGUE_ROW = 16
"""Shortest inner run worth a two-level epilogue loop (below it, per-element division is
cheaper than a loop trip per run)."""


def _epilogue_lead(kb: KernelBuilder, anchor: Call, body: Expr, shape: tuple) -> int:
    """How many leading axes of the output the epilogue iterates outside its inner loop:
    enough that no broadcast operand varies along the inner axes (a conv's ``(C, 1, 1)``
    scale and shift: lead 2 of NCHW), at most all but the last axis; 0 (one flat loop)
    when nothing broadcasts or the inner runs would be short.  A flat loop derives each
    operand's coordinates by division per element, which keeps LLVM from vectorizing it
    (a conv + scale + shift + clip ran at 5.6 ns per element, the conv at 0.5).  Only the
    ops the epilogue computes count: not the anchor and what it reads (a conv's OIHW
    weight varies along every axis and made every conv's epilogue one flat loop)."""
    rank, lead = len(shape), 0
    before = set(_post_order(anchor))
    for node in _post_order(body):
        if type(node) is not Call or node in before:
            continue
        for a in node.args:
            t = a._checked_type
            if not isinstance(t, TensorType) or kb.shape(a) == shape or not 0 < len(t.shape) <= rank:
                continue
            aligned = (1,) * (rank - len(t.shape)) + tuple(kb.shape(a))
            varying = [k for k, d in enumerate(aligned) if d != 1]
            if varying:
                lead = max(lead, varying[-1] + 1)
    lead = min(lead, rank - 1)
    return lead if lead > 0 and int(np.prod(shape[lead:])) >= EPILOGUE_ROW else 0


def _split_epilogue(kb: KernelBuilder, body: Expr, out: Buffer, lead: int, flat_start, count) -> None:
    """The epilogue over ``[flat_start, flat_start + count)`` as rows of the output's
    trailing ``shape[lead:]``: the leading coordinates (what broadcast operands read)
    are derived once per row, the inner loop runs on the flat offset alone (the trailing
    coordinates are derived only if an operand reads them)."""
    b = kb.builder
    row = int(np.prod(out.shape[lead:]))
    end = b.add(flat_start, count)
    first = b.udiv(flat_start, i64(row))
    last = b.udiv(b.add(end, i64(row - 1)), i64(row))
    with kb.loop(last, "epq", start=first) as q:
        base = b.mul(q, i64(row))
        lo = b.select(b.icmp_signed(">", flat_start, base), flat_start, base)
        top = b.add(base, i64(row))
        hi = b.select(b.icmp_signed("<", end, top), end, top)
        outer = Index(b, out.shape[:lead], flat=q).dims()
        with kb.loop(hi, "ep", start=lo) as flat:
            index = Index(b, out.shape, flat=flat, row=(outer, b.sub(flat, base)))
            out.store(b, index, kb.value(body, index))


def _flat_ok(kb: KernelBuilder, node: Expr, field: Optional[int], rules) -> bool:
    """True if computing ``node`` needs only flat offsets (no coordinates), so its loop
    nest can be one flat loop."""
    stack, seen = [(node, field)], set()
    while stack:
        n, f = stack.pop()
        if (n, f) in seen:
            continue
        seen.add((n, f))
        t = type(n)
        if t in (Var, Constant) or (n, f) in kb.buffers:
            continue
        if t is TupleGetItem:
            stack.append((n.tuple_value, n.index))
        elif t is Tuple:
            stack.append((n.fields[f], None))
        elif t is Call:
            r = rules[n]
            if not r.flat or f is not None:
                return False
            own = int(np.prod(kb.shape(n)))
            for a in n.args:
                if not isinstance(a._checked_type, TensorType):
                    return False
                if int(np.prod(kb.shape(a))) not in (own, 1):
                    return False
                stack.append((a, None))
        else:
            return False
    return True


__all__ = ["Lowered", "inlined_constants", "kernel_constants", "legalize", "lower"]
