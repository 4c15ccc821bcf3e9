"""The kernel cache: one compiled kernel per distinct primitive function.

The key is the structural hash of the function (free variables mapped, so the parameter
names do not matter) together with its parameter and result types; a hit is confirmed
with ``structural_equal``, so a hash collision can never run the wrong kernel.  Running a
program again therefore compiles nothing, and re-running a notebook cell in which one op
changed compiles exactly the one kernel that op belongs to.  The cache lives for the
process, like the JIT engine the kernels are compiled into.
"""

from __future__ import annotations

import itertools
import re
import threading
import time
from typing import Optional

from ...ir.expr import Function
from ...ir.structural import structural_equal, structural_hash
from .kernel import Kernel

_counter = itertools.count()
ANCHOR_OPS = frozenset(("nn.dense", "nn.matmul", "nn.batch_matmul", "nn.conv1d", "nn.conv2d", "nn.conv3d", "nn.conv2d_transpose"))


def kernel_name(ops: list[str]) -> str:
    """TVM-style name from the ops: ``fused_nn_conv2d_add_nn_relu``."""
    seen: list[str] = []
    for op in ops:
        if op not in seen:
            seen.append(op)
    parts = [re.sub(r"\W", "_", op) for op in seen[:5]]
    return "fused_" + "_".join(parts) if parts else "fused_identity"


class KernelCache:
    """Compiled kernels keyed by structure and types; counts compiles and hits.

    Examples
    --------
    >>> cache = KernelCache()
    >>> JITExecutor(mod, cache=cache).evaluate()(x)
    >>> JITExecutor(mod, cache=cache).evaluate()(x)
    >>> cache.stats()["compiles"], cache.stats()["hits"]
    (1, 1)
    """

    def __init__(self) -> None:
        self._entries: dict[tuple, list[Kernel]] = {}
        self._lock = threading.RLock()
        self.compiles = 0
        self.fallbacks = 0
        self.hits = 0

    def stats(self) -> dict:
        """``{"compiles", "fallbacks", "hits", "kernels"}`` since creation or :meth:`clear`."""
        with self._lock:
            kernels = sum(len(v) for v in self._entries.values())
            return {"compiles": self.compiles, "fallbacks": self.fallbacks, "hits": self.hits, "kernels": kernels}

    def clear(self) -> None:
        """Forget every kernel and reset the counters (compiled code stays in the engine)."""
        with self._lock:
            self._entries.clear()
            self.compiles = self.fallbacks = self.hits = 0

    def get(self, func: Function) -> Kernel:
        """The kernel of primitive function ``func``: cached, or lowered and compiled now."""
        key = _key(func)
        with self._lock:
            for k in self._entries.get(key, ()):
                if structural_equal(k.func, func, map_free_vars=True):
                    self.hits += 1
                    return k
            kernel = compile_kernel(func, self)
            if kernel.native:
                self.compiles += 1
            else:
                self.fallbacks += 1
            self._entries.setdefault(key, []).append(kernel)
            return kernel

    def lookup(self, func: Function) -> Optional[Kernel]:
        """The cached kernel of ``func`` without compiling (None if there is none)."""
        with self._lock:
            for k in self._entries.get(_key(func), ()):
                if structural_equal(k.func, func, map_free_vars=True):
                    return k
        return None


def _key(func: Function) -> tuple:
    params = tuple(p._checked_type for p in func.params)
    ret = func.body._checked_type
    return (structural_hash(func, map_free_vars=True), params, ret)


def _ops(func: Function) -> list[str]:
    from ...ir.expr import Call, Op
    from ...ir.functor import post_order

    return [n.op.name for n in post_order(func.body) if type(n) is Call and type(n.op) is Op]


def compile_kernel(func: Function, cache: Optional["KernelCache"] = None) -> Kernel:
    """Lower and compile ``func``; a fallback kernel (with the reason) if it has no lowering.

    A function with ``?`` dims gets a :class:`~.specialize.SpecializingKernel`, which
    compiles (through ``cache``) one kernel per distinct argument shape when called.
    """
    from .codegen import Unsupported, lower
    from .jit import compile_ir
    from .specialize import SpecializingKernel, can_specialize

    start = time.perf_counter()
    ops = _ops(func)
    name = kernel_name(ops)
    if can_specialize(func, ops):
        return SpecializingKernel(name, func, ops, cache)
    symbol = f"{name}_{next(_counter)}"
    try:
        lowered = lower(func, symbol)
    except Unsupported as exc:
        return Kernel.fallback(name, func, ops, exc.reason, exc.op)
    except Exception as exc:  # a lowering bug must not take the program down: run numpy
        return Kernel.fallback(name, func, ops, f"internal lowering error: {type(exc).__name__}: {exc}")
    # O2 runs the same loop and SLP vectorizers as O3 and measured as fast on these
    # kernels, at two thirds of the compile time; the tiled anchor kernels get O3.
    level = 3 if any(op in ANCHOR_OPS for op in ops) else 2
    try:
        compiled = compile_ir(lowered.ir, [symbol], symbol, speed_level=level, emit_asm=False)
    except Exception as exc:
        return Kernel.fallback(name, func, ops, f"LLVM rejected the kernel: {exc}")
    kernel = Kernel(name, func, ops)
    kernel.attach(lowered, compiled)
    kernel.compile_seconds = time.perf_counter() - start  # lowering + LLVM
    return kernel


_DEFAULT = KernelCache()


def default_cache() -> KernelCache:
    """The process-wide cache used by ``create_executor("jit")`` and ``relay.build``."""
    return _DEFAULT


__all__ = ["KernelCache", "compile_kernel", "default_cache", "kernel_name"]
