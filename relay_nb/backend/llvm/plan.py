"""A function whose body is pure dataflow, run as a flat list of kernel calls.

After FuseOps, a typical model's ``@main`` is nothing but calls of primitive functions
wired by tuples and projections.  For such a function the JIT needs no interpreter: the
body becomes a :class:`Plan` — one step per call, each tensor a numbered slot — and
running it is a loop over the steps calling the compiled functions directly:

* every intermediate tensor lives in a buffer allocated once, on the first call, and
  reused by later calls; buffers whose lifetimes do not overlap share memory (a greedy
  interval assignment by size), so a deep network runs in a few activations' worth of
  memory and never page-faults on fresh allocations;
* the function's results are fresh arrays each call (the caller keeps them);
* kernels that fell back to numpy run as Python steps in the same list;
* a kernel call big enough to gain from it runs in chunks of its parallel loop on the
  plan's ``threads`` (:mod:`.pool`), each thread with its own workspace and status word.

Types guarantee that every step's inputs match its kernel's parameters, so only the
function's own arguments are checked (by the executor, then made contiguous here).
Anything else in the body — ``let``-bound closures, ``if``, ``match``, references, calls
of globals — means no plan: the interpreter runs the function instead.
"""

from __future__ import annotations

import math
import operator
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Optional

import numpy as np

from ...errors import EvalError
from ...ir.expr import Call, Constant, Expr, Function, Let, Tuple, TupleGetItem, Var
from ...ir.ty import TensorType, TupleType
from .kernel_abi import ALIGN
from .kernel import _LIMIT, Kernel, _address, _gib, _np_name, aligned_empty, contiguous
from .memory import empty as result_array
from .plan_runner import NativeSteps
from .pool import SplitCall, split, using_threads


class _Step:
    __slots__ = (
        "kernel", "ins", "outs", "in_tree", "workspace", "status", "fresh", "args", "slots", "ranges", "base", "split", "own"
    )

    def __init__(self, kernel: Kernel, ins: list[int], outs: list[int], in_tree: list):
        self.kernel, self.ins, self.outs, self.in_tree = kernel, ins, outs, in_tree
        self.workspace: Optional[tuple] = None  # (buffer, aligned address)
        self.status: Optional[np.ndarray] = None
        self.fresh: list[tuple] = []  # (slot, shape, dtype, nbytes, phase source slot) of outputs made per call
        self.args: Callable[[list], tuple] = tuple  # slot addresses -> the kernel's arguments
        # a step split across threads: per thread slot (workspace, status), the chunks'
        # (begin, end), and the getter of the arguments but those four
        self.slots: list[tuple] = []
        self.ranges: list[tuple[int, int]] = []
        self.base: Callable[[list], tuple] = tuple
        self.split: Optional[SplitCall] = None
        self.own: list[int] = []  # the slots of the kernel's tensor arguments (a native step)

    def allocate_fresh(self, arrays: list, addr: list) -> None:
        """This call's arrays for the outputs made per call (results), into ``arrays`` and
        their addresses into ``addr``."""
        for s, shape, dt, nbytes, source in self.fresh:
            # a large result takes the phase of an input of its size (see memory.empty)
            a = result_array(shape, dt, nbytes, addr[source] % ALIGN if source >= 0 else 0)
            arrays[s], addr[s] = a, _address(a)


class Plan:
    """The steps of one function (see the module docstring); call it with its arguments."""

    def __init__(self, threads: int = 1) -> None:
        self.threads = threads  # kernels split their parallel loops across this many threads
        self.steps: list[_Step] = []
        self.slot_types: list[TensorType] = []
        self.params: list[list[int]] = []  # per parameter: its leaf slots
        self.tensor_params: list[bool] = []  # per parameter: a tensor (checked by the executor), not a tuple
        self.constants: dict[int, np.ndarray] = {}
        self.result: Any = None  # a slot, or a (nested) tuple of slots
        self.intermediate: list[int] = []
        self._buffers: Optional[list] = None
        self._addresses: list[int] = []
        self._results: frozenset = frozenset()
        self._lock = threading.Lock()
        self._runner: Optional[NativeSteps] = None  # the steps as one native call (see plan_runner)

    # -- construction ------------------------------------------------------------------------
    @classmethod
    def build(
        cls, func: Function, kernel_of: Callable[[Function], Optional[Kernel]], threads: int = 1
    ) -> Optional["Plan"]:
        """The plan of ``func``, or None if its body is not pure dataflow of primitive calls;
        its kernels split their parallel loops across ``threads`` threads."""
        plan = cls(threads)
        values: dict[Expr, Any] = {}
        for p in func.params:
            tree = plan._new_slots(p._checked_type)
            if tree is None:
                return None
            values[p] = tree
            plan.params.append(_leaves(tree))
            plan.tensor_params.append(isinstance(tree, int))
        try:
            plan.result = plan._compile(func.body, values, kernel_of)
        except _NoPlan:
            return None
        produced = {s for step in plan.steps for s in step.outs}
        results = set(_leaves(plan.result))
        plan.intermediate = [s for s in sorted(produced) if s not in results]
        return plan

    def _new_slots(self, ty: Any) -> Any:
        if isinstance(ty, TensorType):
            if not isinstance(ty.shape, tuple) or not all(type(d) is int for d in ty.shape):
                return None
            self.slot_types.append(ty)
            return len(self.slot_types) - 1
        if isinstance(ty, TupleType):
            fields = [self._new_slots(f) for f in ty.fields]
            return None if any(f is None for f in fields) else tuple(fields)
        return None

    def _compile(self, body: Expr, values: dict, kernel_of) -> Any:
        """Slots of ``body``'s value, appending a step per primitive call (iteratively:
        state 0 visits the children, 1 evaluates the node; a let binds in state 1 and
        takes its body's value in state 2)."""
        stack = [(body, 0)]
        while stack:
            node, state = stack.pop()
            if node in values:
                continue
            t = type(node)
            if t is Let:
                if state == 0:
                    stack += [(node, 1), (node.value, 0)]
                elif state == 1:
                    values[node.var] = _resolve(values, node.value)
                    stack += [(node, 2), (node.body, 0)]
                else:
                    values[node] = _resolve(values, node.body)
                continue
            if state == 0:
                stack.append((node, 1))
                stack += [(c, 0) for c in reversed(_children(node)) if c not in values]
                continue
            if t is Constant:
                tree = self._new_slots(node._checked_type)
                if not isinstance(tree, int):
                    raise _NoPlan
                self.constants[tree] = _constant_array(node)
                values[node] = tree
            elif t is Tuple:
                values[node] = tuple(_resolve(values, f) for f in node.fields)
            elif t is TupleGetItem:
                tree = _resolve(values, node.tuple_value)
                if not isinstance(tree, tuple):
                    raise _NoPlan
                values[node] = tree[node.index]
            elif t is Call and type(node.op) is Function and node.op.is_primitive:
                kernel = kernel_of(node.op)
                if kernel is None:
                    raise _NoPlan
                in_tree = [_resolve(values, a) for a in node.args]
                out_tree = self._new_slots(node._checked_type)
                if out_tree is None:
                    raise _NoPlan
                self.steps.append(_Step(kernel, [s for a in in_tree for s in _leaves(a)], _leaves(out_tree), in_tree))
                values[node] = out_tree
            else:
                raise _NoPlan
        return _resolve(values, body)

    # -- memory -------------------------------------------------------------------------------
    def _assign(self) -> tuple[dict[int, int], list[int]]:
        """Which shared buffer each intermediate slot lives in, and the buffers' sizes: in step
        order, a slot takes a free buffer (freed once its last reader has run; see
        :func:`_fit`) or a new one — TVM's graph memory planner, without splitting buffers."""
        last_use: dict[int, int] = {}
        for k, step in enumerate(self.steps):
            for s in step.ins:
                last_use[s] = k
        born = {s: k for k, step in enumerate(self.steps) for s in step.outs}
        dying: dict[int, list[int]] = {}
        for s in self.intermediate:
            dying.setdefault(last_use.get(s, born[s]), []).append(s)
        intermediate = set(self.intermediate)
        free: list[int] = []  # buffers, the most recently freed last
        where: dict[int, int] = {}
        sizes: list[int] = []
        for k, step in enumerate(self.steps):
            for s in step.outs:
                if s not in intermediate:
                    continue
                nbytes = self._nbytes(s)
                b = _fit(free, sizes, nbytes)
                if b is None:
                    b = len(sizes)
                    sizes.append(nbytes)
                else:
                    free.remove(b)
                    sizes[b] = max(sizes[b], nbytes)
                where[s] = b
            for s in dying.get(k, ()):
                free.append(where[s])
        return where, sizes

    def _nbytes(self, s: int) -> int:
        ty = self.slot_types[s]
        return int(np.prod(ty.shape, dtype=np.int64)) * np.dtype(_np_name(ty.dtype)).itemsize

    def _allocate(self) -> list:
        """Intermediate buffers (see :meth:`_assign`) and one workspace shared by every step."""
        where, sizes = self._assign()
        total = sum(sizes)
        if total > _LIMIT:
            raise EvalError(f"the intermediate results need {_gib(total)}, more than this machine's {_gib(_LIMIT)}")
        raws = [aligned_empty((n,), "uint8") for n in sizes]
        buffers: list = [None] * len(self.slot_types)
        for s, b in where.items():
            ty = self.slot_types[s]
            buffers[s] = raws[b][: self._nbytes(s)].view(np.dtype(_np_name(ty.dtype))).reshape(ty.shape)
        # the steps run one at a time (under self._lock), so one workspace serves them all;
        # a step split across threads gives each further thread slot its own, shared likewise
        size = self._workspace_bytes()
        shared = _workspace_buffer(size) if size else None
        extra: list = []
        for step in self.steps:
            k = step.kernel
            k.ensure_linked()
            if k.native:
                step.workspace = shared if k._workspace else None
                step.status = np.zeros(2, np.int64) if k._status else None
                count = k.chunks(self.threads)
                step.ranges = split(k._parallel, count) if count > 1 else []
                slots = min(count, self.threads) if count > 1 else 0
                while len(extra) < slots - 1:  # thread slots 1.. share a workspace each, as slot 0 does
                    extra.append(_workspace_buffer(size) if size else None)
                step.slots = [(step.workspace, step.status)] if count > 1 else []
                for t in range(1, slots):  # each thread its own scratch and status
                    step.slots.append((extra[t - 1] if k._workspace else None, np.zeros(2, np.int64) if k._status else None))
        return buffers

    def _workspace_bytes(self) -> int:
        return max((s.kernel._workspace for s in self.steps if s.kernel.native), default=0)

    def _thread_slots(self) -> int:
        """How many thread slots a step of this plan may use (each needs its own workspace)."""
        counts = [min(s.kernel.chunks(self.threads), self.threads) for s in self.steps if s.kernel.native and s.kernel._workspace]
        return max(counts, default=1)

    def memory(self) -> "PlanMemory":
        """The planned memory of one call (nothing is allocated to compute it)."""
        _, sizes = self._assign()
        weights: dict[int, int] = {}  # by address: a constant shared by kernels counts once
        for s, a in self.constants.items():
            weights[_address(a)] = a.nbytes
        for step in self.steps:
            # the weights as given (the module's IR holds them too) and, where a kernel
            # packed them into its own layout, the packed copy as well
            for a in (*step.kernel._sources, *step.kernel._constants):
                weights[_address(a)] = a.nbytes
        return PlanMemory(
            arena=sum(sizes),
            weights=sum(weights.values()),
            workspace=self._workspace_bytes() * self._thread_slots(),
            unshared=sum(self._nbytes(s) for s in self.intermediate),
            intermediates=len(self.intermediate),
            buffers=len(sizes),
        )

    # -- running --------------------------------------------------------------------------------
    def _prepare(self) -> None:
        """First call: the buffers, their addresses, and per step what is static about a call
        (which outputs get fresh arrays, with their size; the constants' and workspace's
        addresses), so that later calls do no more than they must."""
        buffers = self._allocate()
        for s, a in self.constants.items():
            buffers[s] = a
        addresses = [0 if a is None else _address(a) for a in buffers]
        self._results = frozenset(_leaves(self.result))
        for step in self.steps:
            step.fresh = []
            k = step.kernel
            for j, s in enumerate(step.outs):
                if s in self._results or buffers[s] is None:
                    ty = self.slot_types[s]
                    dt = np.dtype(_np_name(ty.dtype))
                    # the input whose phase a peeled result takes (see Kernel._out_specs)
                    source = k._out_specs[j][3] if k.native else -1
                    step.fresh.append((s, tuple(ty.shape), dt, math.prod(ty.shape) * dt.itemsize, step.ins[source] if source >= 0 else -1))
            if k.native:
                k.check_memory()
                # the call's arguments, picked from the slot addresses by one itemgetter: the
                # constants', workspace's and status's addresses get slots of their own
                n_const = len(k._const_addresses)
                const_slots = list(range(len(addresses), len(addresses) + n_const))
                addresses += k._const_addresses
                ws = step.workspace[1] if step.workspace else 0
                fixed = [ws, _address(step.status if step.status is not None else _NO_STATUS), 0, _WHOLE]
                start = len(addresses)
                addresses += fixed
                extra = list(range(start, start + len(fixed)))
                step.args = operator.itemgetter(*step.ins, *const_slots, *step.outs, *extra)
                # a split step's arguments but its workspace, status and range
                own = step.own = [*step.ins, *const_slots, *step.outs]
                step.base = lambda addr, own=own: [addr[i] for i in own]
                if step.ranges:
                    fixed = [(ws[1] if ws else 0, _address(st if st is not None else _NO_STATUS)) for ws, st in step.slots]
                    step.split = SplitCall(k._cfunc, k._fn, len(own), step.ranges, fixed)
        self._addresses = addresses
        self._buffers = buffers
        self._runner = NativeSteps.make(self, addresses)

    def __call__(self, args: tuple) -> Any:
        with self._lock:  # the intermediate buffers are shared by calls
            if self._buffers is None:
                self._prepare()
            arrays: list[Any] = list(self._buffers)
            addr: list[int] = list(self._addresses)
            for slots, value, tensor in zip(self.params, args, self.tensor_params):
                if tensor and type(value) is np.ndarray:  # the common case: checked by the executor
                    a = contiguous(value)
                    arrays[slots[0]], addr[slots[0]] = a, _address(a)
                    continue
                leaves = _flatten(value)
                if len(leaves) != len(slots):
                    raise EvalError("an argument does not match its parameter's tuple type")
                for s, a in zip(slots, leaves):
                    self._check_leaf(s, a)
                    a = contiguous(a)
                    arrays[s], addr[s] = a, _address(a)
            if self._runner is not None:
                self._runner.run(arrays, addr)
            else:
                for step in self.steps:
                    self._run_step(step, arrays, addr)
            result = self.result
            return arrays[result] if type(result) is int else _build(result, arrays)

    def _check_leaf(self, s: int, a: np.ndarray) -> None:
        """A tensor inside a tuple argument (the executor checks only whole tensors): the
        kernels read as many elements as the type says, so its shape and dtype must match."""
        ty = self.slot_types[s]
        if a.shape != tuple(ty.shape) or a.dtype != np.dtype(_np_name(ty.dtype)):
            from ...syntax.printer import type_to_text

            raise EvalError(f"a tuple argument's field expects {type_to_text(ty)}, got an array of {a.dtype} {a.shape}")

    def _run_step(self, step: _Step, arrays: list, addr: list) -> None:
        kernel = step.kernel
        start = time.perf_counter()
        try:
            if not kernel.native:
                with using_threads(self.threads):  # a specializing kernel's native calls split too
                    value = kernel._run_fallback([_build(t, arrays) for t in step.in_tree])
                for s, a in zip(step.outs, _flatten(value)):
                    a = contiguous(a)  # a later native step reads it row-major
                    arrays[s], addr[s] = a, _address(a)
                return
            step.allocate_fresh(arrays, addr)
            if step.ranges:
                self._run_chunks(step, addr)
                return
            status = step.status
            if status is not None:
                status[0] = 0
            kernel._cfunc(*step.args(addr))
            if status is not None and status[0]:
                raise EvalError(kernel._errors.get(int(status[0]), "kernel error {detail}").format(detail=int(status[1])))
        finally:
            kernel._seconds += time.perf_counter() - start
            kernel._calls += 1


    @staticmethod
    def _run_chunks(step: _Step, addr: list) -> None:
        """A step split across threads: its chunks on every thread slot at once, then the
        slots' status words (the first error is raised)."""
        kernel = step.kernel
        for _, status in step.slots:
            if status is not None:
                status[0] = 0
        step.split(step.base(addr))
        for _, status in step.slots:
            if status is not None and status[0]:
                raise EvalError(kernel._errors.get(int(status[0]), "kernel error {detail}").format(detail=int(status[1])))


def _fit(free: list[int], sizes: list[int], nbytes: int) -> Optional[int]:
    """The free buffer a slot of ``nbytes`` takes: the smallest that holds it, else the
    largest (which then grows), the most recently freed among equals (still in cache);
    None when none is free.  Exact sizes only left MobileNet v2 with 29 buffers, 17 MiB."""
    recent_first = free[::-1]  # min and max keep the first of equals
    holding = [b for b in recent_first if sizes[b] >= nbytes]
    if holding:
        return min(holding, key=sizes.__getitem__)
    return max(recent_first, key=sizes.__getitem__, default=None)


@dataclass(frozen=True)
class PlanMemory:
    """Bytes a planned function holds while it runs: the shared ``arena`` of intermediate
    buffers, the constant ``weights`` its kernels read, and the one ``workspace`` (packing
    buffers) the steps share; ``unshared`` is what the intermediates would take with a
    buffer each.  Results are fresh arrays per call and are not counted."""

    arena: int
    weights: int
    workspace: int
    unshared: int
    intermediates: int
    buffers: int

    @property
    def peak(self) -> int:
        return self.arena + self.weights + self.workspace

    def __str__(self) -> str:
        return (
            f"planned memory: {_mib(self.peak)} = arena {_mib(self.arena)} ({self.intermediates} intermediates in "
            f"{self.buffers} buffers; {_mib(self.unshared)} without sharing) + weights {_mib(self.weights)} + "
            f"workspace {_mib(self.workspace)}"
        )


def _mib(n: int) -> str:
    return f"{n / 2**20:.2f} MiB" if n >= 2**20 else f"{n / 1024:.1f} KiB" if n >= 1024 else f"{n} B"


def _workspace_buffer(size: int) -> tuple:
    """A workspace of ``size`` bytes: the array (kept alive) and its aligned address."""
    ws = np.empty(size + ALIGN, np.uint8)
    base = _address(ws)
    return ws, base + (-base % ALIGN)


class _NoPlan(Exception):
    pass


_NO_STATUS = np.zeros(2, np.int64)
_WHOLE = 1 << 62  # an `end` past every parallel range: the whole kernel


def _children(node: Expr) -> tuple:
    t = type(node)
    if t is Call:
        return node.args
    if t is Tuple:
        return node.fields
    if t is TupleGetItem:
        return (node.tuple_value,)
    if t in (Var, Constant):
        return ()
    raise _NoPlan


def _resolve(values: dict, node: Expr) -> Any:
    v = values.get(node)
    if v is None:
        raise _NoPlan
    return v


def _leaves(tree: Any) -> list[int]:
    out, stack = [], [tree]
    while stack:
        t = stack.pop()
        if isinstance(t, tuple):
            stack.extend(reversed(t))
        else:
            out.append(t)
    return out


def _flatten(value: Any) -> list:
    out, stack = [], [value]
    while stack:
        v = stack.pop()
        if isinstance(v, tuple):
            stack.extend(reversed(v))
        else:
            out.append(np.asarray(v))
    return out


def _build(tree: Any, arrays: list) -> Any:
    if isinstance(tree, tuple):
        return tuple(_build(t, arrays) for t in tree)
    return arrays[tree]


def _constant_array(c: Constant) -> np.ndarray:
    from ...op.impl._util import convert

    ty = c._checked_type
    data = c.data
    if isinstance(ty, TensorType) and isinstance(ty.dtype, str) and ty.dtype != str(data.dtype):
        data = convert(data, ty.dtype)
    return contiguous(np.asarray(data))


__all__ = ["Plan", "PlanMemory"]
