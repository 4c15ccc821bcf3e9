"""A compiled kernel: one primitive function, callable on numpy values, inspectable.

A :class:`Kernel` is either *native* (its LLVM function is called through ctypes) or a
*fallback* (its ops had no lowering: the function body is run by the interpreter with
the numpy implementations, and ``reason`` says why).  Either way it is called the way the
interpreter's primitive hook calls it, ``kernel(args) -> value``, and it keeps what a
notebook wants to see: the Relay source, the LLVM IR before and after optimization, the
assembly, the compile time, the accumulated run time and the number of calls.

Safety: before the native call every argument is checked in Python — type, dtype, shape
(an :class:`~relay_nb.errors.EvalError` naming the parameter and its expected type),
contiguity and alignment (copied if needed; read-only arrays are fine, the kernel never
writes its inputs) — and the memory the call needs is checked against the machine's
memory, so a huge shape is an error message, not a dead kernel.
"""

from __future__ import annotations

import dataclasses
import ctypes
import functools
import html
import math
import threading
import time
from typing import Any, Optional

import numpy as np

from ...errors import EvalError
from ...ir.expr import Function
from ...ir.ty import TensorType, TupleType
from ...util import MEMORY_LIMIT, gib, memory_limit, too_big
from .address import address as _address
from .kernel_abi import ALIGN as ALIGN_BYTES
from .memory import empty as result_array
from .pool import SplitCall, chunk_count, current_threads, split


def _type_text(ty: Any) -> str:
    from ...syntax.printer import type_to_text

    return type_to_text(ty)


_LIMIT = MEMORY_LIMIT
_gib = gib


class Kernel:
    """One primitive function, compiled (``native``) or falling back to numpy.

    Examples
    --------
    >>> k = relay.build(mod).kernels[0]
    >>> k.native, k.ops, k.compile_seconds
    (True, ['exp', 'multiply'], 0.012)
    >>> print(k.source)          # the Relay primitive function
    >>> print(k.ir)              # LLVM IR as generated; k.optimized_ir, k.asm
    >>> k([x])                   # call it as the interpreter does
    """

    def __init__(self, name: str, func: Function, ops: list[str]):
        self.name = name
        self.func = func
        self.ops = ops
        self.native = False
        self.reason = ""
        self.fallback_op = ""
        self._asm: Optional[str] = None
        self.compile_seconds = 0.0
        self._seconds = 0.0  # run time and calls outside native plan runs (see run_seconds)
        self._calls = 0
        self._clocks: list = []  # (weak reference to a plan_runner.StepClock, step index)
        self._cfunc = None
        self._fn = 0  # the native function's address
        self._params: list[tuple[str, TensorType]] = []
        self._outputs: list[TensorType] = []
        self._constants: list[np.ndarray] = []
        self._sources: list[np.ndarray] = []
        self._workspace = 0
        self._parallel = 0  # units of the kernel's split loop (see codegen.lower)
        self._unit_ns = 0.0
        self._chunk_ns = 0.0
        self._status = False
        self._errors: dict[int, str] = {}
        self._ret = func.ret_type if func.ret_type is not None else func.body._checked_type
        self._source: Optional[str] = None
        self._interp = None
        self._bytes = 0
        self._ws_lock = threading.Lock()
        self._ws_buffer: Optional[np.ndarray] = None
        self._ws_slots: list[np.ndarray] = []  # the workspaces of worker slots 1, 2, ... (see _run_chunks)
        self._in_specs: list = []
        self._out_specs: list = []
        self._const_addresses: list[int] = []
        self._tuple_params = False
        self._tuple_result = isinstance(self._ret, TupleType)
        self._compiled = None  # the CompiledModule, and the lowering's calling convention:
        self._signature = None  # what the cache binds to another function's constants
        self._keep = None  # the cache's token that keeps the compiled module in the engine

    # -- construction ------------------------------------------------------------------------
    @classmethod
    def fallback(cls, name: str, func: Function, ops: list[str], reason: str, op: str = "") -> "Kernel":
        k = cls(name, func, ops)
        k.reason, k.fallback_op = reason, op
        return k

    def attach(self, lowered, compiled) -> None:
        """Make this kernel native: the lowered signature and the compiled function."""
        self.native = True
        self._compiled = compiled
        self._signature = dataclasses.replace(lowered, module=None, constants=[])
        self._asm = compiled.asm or None
        self.compile_seconds = compiled.compile_seconds
        self._params = list(lowered.inputs)
        self._outputs = list(lowered.outputs)
        # the constants as given (what the cache matches another function's against) and as
        # the kernel reads them: some packed once here, for every call (see AnchorCall.prepack)
        self._sources = [contiguous(c) for c in lowered.constants]
        packings = lowered.packings
        self._constants = [contiguous(packings[i](c)) if i in packings else c for i, c in enumerate(self._sources)]
        self._workspace = lowered.workspace_bytes
        self._status = lowered.uses_status
        self._errors = dict(lowered.errors)
        self._parallel, self._unit_ns, self._chunk_ns = lowered.parallel, lowered.unit_ns, lowered.chunk_ns
        n = len(self._params) + len(self._constants) + len(self._outputs) + 2
        proto = ctypes.CFUNCTYPE(None, *([ctypes.c_void_p] * n), ctypes.c_int64, ctypes.c_int64)
        if compiled.pending:  # in the build's compile process: linked when the build loads it
            compiled.when_loaded(functools.partial(self._link, proto, lowered.symbol, True))
        else:
            self._link(proto, lowered.symbol, False, compiled)
        self._in_specs = [(name, t, np.dtype(_np_name(t.dtype)), tuple(t.shape)) for name, t in self._params]
        self._const_addresses = [_address(c) for c in self._constants]
        self._out_specs = []
        for t, peeled in zip(self._outputs, lowered.peeled):
            dt = np.dtype(_np_name(t.dtype))
            nbytes = math.prod(t.shape) * dt.itemsize
            self._bytes += nbytes
            source = _phase_source(self._in_specs, nbytes) if peeled else -1
            self._out_specs.append((tuple(t.shape), dt, nbytes, source))
        self._bytes += self._workspace
        self._tuple_params = any(isinstance(p._checked_type, TupleType) for p in self.func.params)
        self._tuple_result = isinstance(self._ret, TupleType)

    def _link(self, proto, symbol: str, late: bool, compiled) -> None:
        """Point the kernel at its compiled function; a module that failed to compile (in the
        compile process and again here) leaves the kernel running numpy instead."""
        if compiled.error:
            self.native, self.reason, self._compiled, self._signature = False, compiled.error, None, None
            return
        self._fn = compiled.address(symbol)
        self._cfunc = proto(self._fn)
        if late:  # the build counted lowering only, not yet the compile process's LLVM time
            self.compile_seconds += compiled.compile_seconds

    def ensure_linked(self) -> None:
        """Load this kernel's code if it is still pending (a build interrupted while its
        compile process worked; the build itself loads every module before it returns)."""
        if self.native and self._cfunc is None and self._compiled is not None:
            self._compiled.finish()

    # -- inspection ----------------------------------------------------------------------------
    @property
    def ir(self) -> str:
        """LLVM IR as generated (made on first access for code loaded from the disk cache)."""
        return self._compiled.ir if self._compiled is not None else ""

    @property
    def optimized_ir(self) -> str:
        """LLVM IR after optimization (likewise made on demand for loaded code)."""
        return self._compiled.optimized_ir if self._compiled is not None else ""

    @property
    def in_compile_process(self) -> bool:
        """Whether the build's compile process made this kernel's code (see :mod:`.offload`)."""
        return self._compiled is not None and self._compiled.in_worker

    @property
    def from_disk(self) -> bool:
        """Whether this kernel's code was loaded from the disk cache, not compiled."""
        return self._compiled is not None and self._compiled.from_disk

    @property
    def source(self) -> str:
        """The primitive function in Relay text."""
        if self._source is None:
            self._source = self.func.astext()
        return self._source

    @property
    def asm(self) -> str:
        """Host assembly (produced on first access: emitting it costs a third of a compile)."""
        if self._asm is None:
            if not self.native:
                return ""
            from .jit import assembly

            self._asm = assembly(self.optimized_ir)
        return self._asm

    @property
    def run_seconds(self) -> float:
        """Time spent running this kernel: its calls from Python plus its steps in native
        plan runs (counted in time-stamp cycles by the runner, see plan_runner)."""
        return self._seconds + self._clock_totals()[0]

    @run_seconds.setter
    def run_seconds(self, value: float) -> None:
        self._seconds = value - self._clock_totals()[0]

    @property
    def calls(self) -> int:
        return self._calls + self._clock_totals()[1]

    @calls.setter
    def calls(self, value: int) -> None:
        self._calls = value - self._clock_totals()[1]

    def _clock_totals(self) -> tuple[float, int]:
        if not self._clocks:
            return 0.0, 0
        cycles = runs = 0
        for ref, i in self._clocks:
            clock = ref()
            if clock is not None:
                cycles += int(clock.cycles[i])
                runs += int(clock.runs[0])
        return (clock_seconds(cycles) if cycles else 0.0), runs

    @property
    def mean_run_seconds(self) -> float:
        return self.run_seconds / self.calls if self.calls else 0.0

    @property
    def ran_native(self) -> bool:
        """Whether this kernel's calls run compiled code (a specializing kernel's do when
        every shape it was called with compiled)."""
        return self.native

    def how(self) -> str:
        """One phrase for reports: ``native``, ``native (disk cache)``, ``native (compile
        process)`` (compiled beside the build, see :mod:`.offload`) or ``numpy: <why>``."""
        if self.native:
            return "native (disk cache)" if self.from_disk else "native (compile process)" if self.in_compile_process else "native"
        return "numpy: " + self.reason

    def summary(self) -> str:
        how = "native" if self.native else f"fallback to numpy ({self.reason})"
        return (
            f"{self.name}: {', '.join(self.ops) or '(no ops)'} -- {how}; compile "
            f"{self.compile_seconds * 1e3:.1f} ms, {self.calls} calls, run {self.run_seconds * 1e3:.3f} ms"
        )

    def __repr__(self) -> str:
        return f"<Kernel {self.summary()}>"

    def _repr_html_(self) -> str:
        def section(title: str, text: str) -> str:
            return f"<details><summary>{title}</summary><pre>{html.escape(text)}</pre></details>"

        parts = [f"<div><b>{html.escape(self.name)}</b> &mdash; {html.escape(self.summary())}"]
        parts.append(section("Relay", self.source))
        if self.native:
            parts.append(section("LLVM IR", self.ir))
            parts.append(section("optimized LLVM IR", self.optimized_ir))
            parts.append(section("assembly", self.asm))
        parts.append("</div>")
        return "".join(parts)

    # -- calling -------------------------------------------------------------------------------
    def chunks(self, threads: int) -> int:
        """Into how many chunks a call with ``threads`` threads splits (1: run whole)."""
        return chunk_count(self._parallel, self._unit_ns, threads, self._chunk_ns) if self.native else 1

    def __call__(self, args: list, threads: Optional[int] = None) -> Any:
        """Run on ``args``; a native kernel splits its parallel loop across ``threads``
        (default: what the JIT executor running it set, else 1)."""
        start = time.perf_counter()
        try:
            if self._cfunc is None:
                self.ensure_linked()
            if not self.native:
                return self._run_fallback(args)
            return self._run_native(args, current_threads() if threads is None else threads)
        except MemoryError:
            raise EvalError(f"kernel {self.name} ran out of memory") from None
        finally:
            self._seconds += time.perf_counter() - start
            self._calls += 1

    def _run_fallback(self, args: list) -> Any:
        if self._interp is None:
            from ...eval.interpreter import Interpreter
            from ...eval.values import Closure

            interp = Interpreter()
            self._interp = (interp, Closure(self.func, {}, self.name, interp.call))
        interp, closure = self._interp
        return interp.call(closure, tuple(args))

    @property
    def arity(self) -> int:
        """How many tensor addresses a call passes (inputs, constants, outputs)."""
        return len(self._in_specs) + len(self._constants) + len(self._outputs)

    def check_memory(self) -> None:
        """An EvalError if one call's results and workspace exceed the machine's memory."""
        if self._bytes > _LIMIT:
            raise EvalError(f"kernel {self.name} {too_big(self._bytes)}")

    def _run_native(self, args: list, threads: int = 1) -> Any:
        self.check_memory()
        inputs = self.check_arguments(args)
        addresses = [_address(a) for a in inputs]
        addresses += self._const_addresses
        outs = []
        for shape, dt, nbytes, source in self._out_specs:
            # a large result takes the phase of an input of its size (see memory.empty)
            o = result_array(shape, dt, nbytes, addresses[source] % ALIGN_BYTES if source >= 0 else 0)
            outs.append(o)
            addresses.append(_address(o))
        # The workspace is the kernel's own buffer, reused call after call (no page faults
        # on a big im2col pack); a concurrent call gets a temporary one.
        owned = self._workspace and self._ws_lock.acquire(blocking=False)
        try:
            if not self._workspace:
                addresses.append(0)
            else:
                if not owned or self._ws_buffer is None:
                    ws = np.empty(self._workspace + ALIGN_BYTES, np.uint8)
                    if owned:
                        self._ws_buffer = ws
                else:
                    ws = self._ws_buffer
                base = _address(ws)
                addresses.append(base + (-base % ALIGN_BYTES))
            count = self.chunks(threads)
            slots = min(threads, count)
            statuses = [np.zeros(2, np.int64) if self._status else _NO_STATUS for _ in range(slots)]
            if count == 1:
                self._cfunc(*addresses, _address(statuses[0]), 0, _WHOLE)
            else:
                self._run_chunks(addresses, statuses, count, bool(owned))
        finally:
            if owned:
                self._ws_lock.release()
        for status in statuses if self._status else ():
            if status[0]:
                raise EvalError(self._errors.get(int(status[0]), "kernel error {detail}").format(detail=int(status[1])))
        return tuple(outs) if self._tuple_result else outs[0]

    def _run_chunks(self, addresses: list, statuses: list, count: int, owned: bool) -> None:
        """One call split into ``count`` chunks run on ``len(statuses)`` threads at once
        (each thread its own status word and, past the first, its own workspace: threads
        must not share scratch; the kernel keeps them while this call owns its workspace)."""
        ranges = split(self._parallel, count)
        spaces = [addresses[-1]] + [0] * (len(statuses) - 1)
        keep = self._ws_slots if owned else []
        for k in range(1, len(statuses)):
            if self._workspace:
                if len(keep) < k:
                    keep.append(np.empty(self._workspace + ALIGN_BYTES, np.uint8))
                base = _address(keep[k - 1])
                spaces[k] = base + (-base % ALIGN_BYTES)
        fixed = [(spaces[k], _address(statuses[k])) for k in range(len(statuses))]
        SplitCall(self._cfunc, self._fn, len(addresses) - 1, ranges, fixed)(addresses[:-1])

    def check_arguments(self, args: list) -> list[np.ndarray]:
        """The argument tensors in kernel order, checked against the parameter types:
        an EvalError naming the parameter on a wrong type, dtype or shape; strided or
        misaligned arrays are copied (the kernel reads contiguous row-major memory)."""
        if len(args) != len(self.func.params):
            raise EvalError(f"kernel {self.name} expects {len(self.func.params)} arguments, got {len(args)}")
        flat: list[Any] = args
        if self._tuple_params:
            flat = []
            for p, a in zip(self.func.params, args):
                ty = p._checked_type
                if isinstance(ty, TupleType):
                    if not isinstance(a, tuple) or len(a) != len(ty.fields):
                        raise EvalError(f"kernel {self.name}: %{p.name_hint} expects {_type_text(ty)}, got {_brief(a)}")
                    flat.extend(a)
                else:
                    flat.append(a)
        out = []
        for (name, ty, want, shape), a in zip(self._in_specs, flat):
            if type(a) is not np.ndarray:
                if isinstance(a, (bool, int, float, np.generic)):
                    a = np.asarray(a)
                elif not isinstance(a, np.ndarray):
                    raise EvalError(f"kernel {self.name}: {name} expects {_type_text(ty)}, got {_brief(a)}")
            if a.dtype != want:
                raise EvalError(f"kernel {self.name}: {name} expects {_type_text(ty)}, got an array of {a.dtype}")
            if a.shape != shape:
                raise EvalError(
                    f"kernel {self.name}: {name} expects {_type_text(ty)}, got an array of shape {a.shape}"
                )
            out.append(contiguous(a))
        return out

_NO_STATUS = np.zeros(2, np.int64)
_WHOLE = 1 << 62  # an `end` past every parallel range: the whole kernel


def aligned_empty(shape: tuple, dtype: str) -> np.ndarray:
    """An uninitialized array whose data starts on a 64-byte boundary (a cache line: the
    plans' intermediate buffers)."""
    dt = np.dtype(dtype)
    nbytes = int(np.prod(shape)) * dt.itemsize
    raw = np.empty(nbytes + ALIGN_BYTES, np.uint8)
    start = -raw.ctypes.data % ALIGN_BYTES
    return raw[start : start + nbytes].view(dt).reshape(shape)


def clock_seconds(cycles: int) -> float:
    """Seconds of ``cycles`` time-stamp counter cycles (the native pool calibrates it)."""
    from .native_pool import get

    return cycles * get().seconds_per_cycle()


def _phase_source(in_specs: list, nbytes: int) -> int:
    """The index of the first input of ``nbytes`` bytes, or -1: a large result whose loop
    peels to alignment takes its phase (address mod 64), so that the peel aligns both."""
    for i, (_, _, dt, shape) in enumerate(in_specs):
        if math.prod(shape) * dt.itemsize == nbytes:
            return i
    return -1


def contiguous(a: np.ndarray) -> np.ndarray:
    """``a`` itself if it is C-contiguous and aligned, else a row-major copy (a strided or
    misaligned view: the kernels read contiguous memory).  Keeps 0-d arrays 0-d."""
    flags = a.flags
    if flags.c_contiguous and flags.aligned:
        return a
    return np.array(a, order="C", copy=True)


def _np_name(dtype: str) -> str:
    return "bool" if dtype == "uint1" else dtype


def _brief(value: Any) -> str:
    if isinstance(value, tuple):
        return f"a tuple of {len(value)}"
    if isinstance(value, np.ndarray):
        return f"an array of {value.dtype} {value.shape}"
    return type(value).__name__


__all__ = ["Kernel", "memory_limit"]
