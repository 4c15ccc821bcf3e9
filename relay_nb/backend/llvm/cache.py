"""The kernel cache: one compiled kernel per distinct primitive function *skeleton*.

A function's skeleton is the function with its constants taken out: constants are
arguments of the compiled code (``codegen/lower.py``), so two functions that differ only in
a constant's value share one compiled module, and each gets a cheap :class:`Kernel` bound
to its own constants.  The key is the structural hash of the skeleton (free variables
mapped, so parameter names do not matter) with the parameter and result types; a hit is
confirmed with ``structural_equal``, so a hash collision can never run the wrong kernel.
Running a program again therefore compiles nothing, re-running a notebook cell in which
one op changed compiles exactly the one kernel that op belongs to, and editing a constant
compiles nothing.

The cache is bounded: least recently used entries are dropped once the cached kernels
take more than ``max_bytes`` (default :data:`DEFAULT_MAX_BYTES`, 64 MiB, or
``RELAY_NB_KERNEL_CACHE_MB`` from the environment; ``cache.max_bytes = ...`` changes it).
A dropped or cleared kernel's LLVM module leaves the JIT engine as soon as no kernel that
could call it is alive (a built module keeps its kernels working however long it lives).

Below this cache is the disk (:mod:`.disk_cache`): a kernel not in memory is looked up
there by its printed skeleton and types before anything is lowered, and loaded as machine
code; one that is compiled is written there.  Its symbol is named after that key (so
code from another process links under a name no other kernel has); the first kernel of a
key in a process takes that name, and a later compile of the same key in the same
process (after eviction, or in another ``KernelCache``) uses a counter name and skips
the disk, since the engine cannot define one symbol twice.
"""

from __future__ import annotations

import dataclasses
import functools
import gc
import hashlib
import itertools
import os
import re
import threading
import time
import weakref
from collections import OrderedDict
from typing import Optional

import numpy as np

from ...ir.expr import Constant, Function, Var
from ...ir.functor import ExprMutator
from ...ir.structural import structural_equal, structural_hash
from ...ir.ty import TensorType
from .kernel import Kernel

_counter = itertools.count()
ANCHOR_OPS = frozenset(("nn.dense", "nn.matmul", "nn.batch_matmul", "nn.conv1d", "nn.conv2d", "nn.conv3d", "nn.conv2d_transpose"))

DEFAULT_MAX_BYTES = int(float(os.environ.get("RELAY_NB_KERNEL_CACHE_MB", "64")) * 2**20)
"""The default bound of a cache, in bytes (``RELAY_NB_KERNEL_CACHE_MB`` overrides it)."""

_BOUND_PER_CODE = 8  # kernels kept bound to one compiled module's recent constant values


def kernel_name(ops: list[str]) -> str:
    """TVM-style name from the ops: ``fused_nn_conv2d_add_nn_relu``."""
    seen: list[str] = []
    for op in ops:
        if op not in seen:
            seen.append(op)
    parts = [re.sub(r"\W", "_", op) for op in seen[:5]]
    return "fused_" + "_".join(parts) if parts else "fused_identity"


class _Keep:
    """Held by every kernel running one compiled module: when the last such kernel dies,
    this dies and the module leaves the engine.  (Kernels hold this, not the cache entry,
    so entry -> kernels -> token is no reference cycle and release needs no collection.)"""

    __slots__ = ("__weakref__",)


class _Code:
    """One compiled skeleton: the LLVM module (none for a kernel that is not compiled code), the lowering's
    calling convention, and the kernels recently bound to it."""

    __slots__ = ("skeleton", "name", "ops", "signature", "compiled", "keep", "kernels", "nbytes")

    def __init__(self, skeleton: Function, name: str, ops: list[str]):
        self.skeleton = skeleton
        self.name, self.ops = name, ops
        self.signature = None  # the Lowered, without its IR module and constants
        self.compiled = None
        self.keep = _Keep()
        # recently bound kernels; one whose weights were packed is held weakly (see _hold)
        self.kernels: list = []
        self.nbytes = 0

    def live(self) -> list[Kernel]:
        """The bound kernels still alive, oldest first."""
        out = []
        for k in self.kernels:
            k = k() if type(k) is weakref.ref else k
            if k is not None:
                out.append(k)
        return out

    def bind(self, func: Function) -> Kernel:
        """A kernel running this (native) code with ``func``'s constants."""
        from .kernel_abi import kernel_constants

        k = Kernel(self.name, func, self.ops)
        consts = kernel_constants(func, self.signature.legalized)
        k.attach(dataclasses.replace(self.signature, constants=consts), self.compiled)
        k.compile_seconds = 0.0  # nothing was compiled for it
        k._keep = self.keep
        return k


def _size(code: _Code) -> int:
    """Approximate bytes a cached entry holds: four times its IR text (the Python strings,
    and LLVM's module and code, which measured about as much again as the strings:
    evicting a kernel of 17 KB of IR text gave back 37 KB of resident memory), and the
    constants of the kernels bound to it."""
    compiled = code.compiled
    size = 4 * compiled.text_bytes() + compiled.object_bytes if compiled is not None else 0
    return size + sum(c.nbytes for k in code.kernels if type(k) is not weakref.ref for c in k._constants) + 1024


def _hold(kernel: Kernel):
    """How an entry keeps a bound kernel: strongly, unless its weights were packed for it
    (new memory as large as the weights): those belong to whoever runs the kernel (a built
    module, an executor), so that a model's packed weights neither count against the
    cache's bound — which would evict the compiled code of the very model being rebuilt —
    nor outlive the model.  A rebuild while the model lives finds them; after, it packs
    again (a copy), and compiles nothing."""
    return weakref.ref(kernel) if kernel._constants is not kernel._sources and any(
        a is not b for a, b in zip(kernel._constants, kernel._sources)
    ) else kernel


class KernelCache:
    """Compiled kernels keyed by skeleton and types, least recently used dropped first.

    Parameters
    ----------
    max_bytes : int, optional
        Bound on the cached kernels' size (default :data:`DEFAULT_MAX_BYTES`).

    Examples
    --------
    >>> cache = KernelCache(max_bytes=16 * 2**20)
    >>> JITExecutor(mod, cache=cache).evaluate()(x)
    >>> JITExecutor(mod, cache=cache).evaluate()(x)
    >>> cache.stats()["compiles"], cache.stats()["hits"]
    (1, 1)
    """

    def __init__(self, max_bytes: Optional[int] = None) -> None:
        self._codes: dict[tuple, list[_Code]] = {}
        self._lru: OrderedDict[_Code, tuple] = OrderedDict()  # code -> key, oldest first
        self._lock = threading.RLock()
        self._max_bytes = DEFAULT_MAX_BYTES if max_bytes is None else int(max_bytes)
        self.nbytes = 0
        self.compiles = 0
        self.disk_loads = 0
        self.fallbacks = 0
        self.hits = 0
        self.rebinds = 0
        self.evictions = 0

    @property
    def max_bytes(self) -> int:
        """The bound on the cached kernels' size; lowering it evicts at once."""
        return self._max_bytes

    @max_bytes.setter
    def max_bytes(self, value: int) -> None:
        with self._lock:
            self._max_bytes = int(value)
            self._evict()

    def stats(self) -> dict:
        """``{"compiles", "disk_loads", "fallbacks", "hits", "rebinds", "evictions", "kernels",
        "bytes", "max_bytes"}`` since creation or :meth:`clear`; ``disk_loads`` counts
        kernels whose code came from the disk cache (:mod:`.disk_cache`) instead of a
        compile, ``rebinds`` functions that differed from a cached one only in constants
        (served without compiling)."""
        with self._lock:
            return {
                "compiles": self.compiles,
                "disk_loads": self.disk_loads,
                "fallbacks": self.fallbacks,
                "hits": self.hits,
                "rebinds": self.rebinds,
                "evictions": self.evictions,
                "kernels": len(self._lru),
                "bytes": self.nbytes,
                "max_bytes": self.max_bytes,
            }

    def summary(self) -> str:
        """One line for reports: ``kernel cache: 12 kernels, 1.3 of 64.0 MiB; 9 compiled, 3
        loaded from disk``."""
        st = self.stats()
        return (
            f"kernel cache: {st['kernels']} kernels, {st['bytes'] / 2**20:.1f} of {st['max_bytes'] / 2**20:.1f} MiB; "
            f"{st['compiles']} compiled, {st['disk_loads']} loaded from disk"
        )

    def clear(self) -> None:
        """Forget every kernel and reset the counters.  The compiled code of kernels nobody
        holds any more leaves the JIT engine now; a live built module keeps its own."""
        from .jit import module_count

        with self._lock:
            self._codes.clear()
            self._lru.clear()
            self.nbytes = 0
            self.compiles = self.disk_loads = self.fallbacks = self.hits = self.rebinds = self.evictions = 0
        gc.collect()  # kernels in reference cycles die now, not at some later collection
        module_count()  # drains the modules their finalizers queued

    def get(self, func: Function) -> Kernel:
        """The kernel of primitive function ``func``: cached, bound to a cached skeleton,
        or lowered and compiled now."""
        skeleton = _skeleton(func)
        key = _key(func, skeleton)
        with self._lock:
            code = self._find(key, skeleton)
            if code is not None:
                return self._bound(code, func)
            code, kernel = self._new_code(func, skeleton)
            if code.compiled is not None and code.compiled.from_disk:
                self.disk_loads += 1
            elif code.compiled is not None:
                self.compiles += 1
            else:
                self.fallbacks += 1
            self._codes.setdefault(key, []).append(code)
            self._lru[code] = key
            code.nbytes = _size(code)
            self.nbytes += code.nbytes
            self._evict()
            return kernel

    def lookup(self, func: Function) -> Optional[Kernel]:
        """The cached kernel of ``func`` without compiling or binding (None if none)."""
        skeleton = _skeleton(func)
        with self._lock:
            code = self._find(_key(func, skeleton), skeleton, touch=False)
            return _exact(code, func) if code is not None else None

    # -- internals --------------------------------------------------------------------------
    def _new_kernel(self, func: Function) -> Kernel:
        return compile_kernel(func, self)

    def _new_code(self, func: Function, skeleton: Function) -> tuple[_Code, Kernel]:
        """A new entry for ``func``'s skeleton, and ``func``'s kernel (the entry holds it)."""
        from .jit import release

        kernel = self._new_kernel(func)
        code = _Code(skeleton, kernel.name, kernel.ops)
        if kernel.native and kernel._compiled is not None:
            code.signature, code.compiled = kernel._signature, kernel._compiled
            # the module leaves the engine once no kernel bound to this code is alive
            done = weakref.finalize(code.keep, release, code.compiled.name)
            done.atexit = False  # the process is ending: the engine goes with it
            kernel._keep = code.keep
        code.kernels.append(_hold(kernel))
        return code, kernel

    def _find(self, key: tuple, skeleton: Function, touch: bool = True) -> Optional[_Code]:
        for code in self._codes.get(key, ()):
            if structural_equal(code.skeleton, skeleton, map_free_vars=True):
                if touch:
                    self._lru.move_to_end(code)
                return code
        return None

    def _bound(self, code: _Code, func: Function) -> Kernel:
        kernel = _exact(code, func)
        if kernel is not None:
            self.hits += 1
            return kernel
        if code.compiled is None:
            # a kernel that is not compiled code runs its own function: make a new one
            kernel = self._new_kernel(func)
            self.fallbacks += 1
        else:
            kernel = code.bind(func)
            self.rebinds += 1
        code.kernels = [_hold(k) for k in code.live()[-(_BOUND_PER_CODE - 1):]] + [_hold(kernel)]
        self.nbytes -= code.nbytes
        code.nbytes = _size(code)
        self.nbytes += code.nbytes
        self._evict()
        return kernel

    def _evict(self) -> None:
        """Drop least recently used entries until the cache fits (the newest always stays)."""
        while self.nbytes > self.max_bytes and len(self._lru) > 1:
            code, key = self._lru.popitem(last=False)
            self._codes[key].remove(code)
            if not self._codes[key]:
                del self._codes[key]
            self.nbytes -= code.nbytes
            self.evictions += 1


def _exact(code: _Code, func: Function) -> Optional[Kernel]:
    """The kernel of ``code`` bound to exactly ``func``'s constants, if any."""
    from .kernel_abi import kernel_constants

    consts = None
    for k in reversed(code.live()):
        if k.func is func:
            return k
        if not k.native:  # (runs numpy on its own function: may not even be lowerable)
            if structural_equal(k.func, func, map_free_vars=True):
                return k
            continue
        if consts is None:
            consts = kernel_constants(func, k._signature.legalized)
        if all(_same(a, b) for a, b in zip(k._sources, consts)):
            return k
    return None


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    """Bitwise equality: 0.0 and -0.0, or two NaN payloads, are different constants."""
    if a is b:
        return True
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    x = np.ascontiguousarray(a).reshape(-1).view(np.uint8)
    y = np.ascontiguousarray(b).reshape(-1).view(np.uint8)
    # two different weights of one shape (ResNet-50's repeated blocks) differ early: a
    # prefix rejects them without comparing megabytes (30 ms of a warm build)
    return np.array_equal(x[:4096], y[:4096]) and np.array_equal(x, y)


class _Abstract(ExprMutator):
    """Replaces each constant by a variable of its type, but those in ``keep`` (compiled in
    by value): what is left is the skeleton."""

    def __init__(self, keep: set):
        super().__init__()
        self.keep = keep

    def visit_constant(self, const: Constant):
        return const if const in self.keep else Var("c", const._checked_type)


def _skeleton(func: Function) -> Function:
    from .kernel_abi import inlined_constants

    return _Abstract(inlined_constants(func)).visit(func)


def _key(func: Function, skeleton: Function) -> tuple:
    params = tuple(p._checked_type for p in func.params)
    ret = func.body._checked_type
    return (structural_hash(skeleton, map_free_vars=True), params, ret)


def _ops(func: Function) -> list[str]:
    from ...ir.expr import Call, Op
    from ...ir.functor import post_order

    return [n.op.name for n in post_order(func.body) if type(n) is Call and type(n.op) is Op]


def compile_kernel(func: Function, cache: Optional["KernelCache"] = None) -> Kernel:
    """Lower and compile ``func``, or load its code from the disk cache; a fallback kernel
    (with the reason) if it has no lowering.

    A function with ``?`` dims gets a :class:`~.specialize.SpecializingKernel`, which
    compiles (through ``cache``) one kernel per distinct argument shape when called.
    """
    from . import disk_cache
    from .jit import compile_ir
    from .specialize import SpecializingKernel, can_specialize

    start = time.perf_counter()
    ops = _ops(func)
    name = kernel_name(ops)
    if can_specialize(func, ops):
        return SpecializingKernel(name, func, ops, cache)
    # O2 runs the same loop and SLP vectorizers as O3 and measured as fast on these
    # kernels, at two thirds of the compile time; the tiled anchor kernels get O3.
    level = 3 if any(op in ANCHOR_OPS for op in ops) else 2
    key = _disk_key(func, level)
    symbol = f"{name}_{next(_counter)}"
    if key is not None:
        # the code on disk defines a symbol named after its key; the engine must not hold
        # that symbol twice, so a second compile of one key in a process uses the counter
        keyed = f"{name}_{hashlib.sha256(key.encode()).hexdigest()[:16]}"
        with _keyed_lock:
            taken = keyed in _keyed_symbols
            _keyed_symbols.add(keyed)  # reserved now: two threads never both take it
        if taken:
            key = None
        else:
            symbol = keyed
            kernel = _load_kernel(func, name, ops, key, symbol, level)
            if kernel is not None:
                kernel.compile_seconds = time.perf_counter() - start
                return kernel
    from .codegen.lower import lower  # the generator and the rules: only to compile
    from .codegen.types import Unsupported

    try:
        lowered = lower(func, symbol)
    except Unsupported as exc:
        return Kernel.fallback(name, func, ops, exc.reason, exc.op)
    except Exception as exc:  # a lowering bug must not take the program down: run numpy
        return Kernel.fallback(name, func, ops, f"internal lowering error: {type(exc).__name__}: {exc}")
    ir_text = lowered.ir
    save = None
    if key is not None and disk_cache.exports(ir_text) == [symbol]:
        try:
            save = functools.partial(disk_cache.store, key, _disk_meta(lowered, ir_text))
        except TypeError:  # a packed layout with no disk form: compiled, not stored
            save = None
    try:
        compiled = compile_ir(ir_text, [symbol], _module_name(symbol), level, False, save, offload=True)
    except Exception as exc:
        return Kernel.fallback(name, func, ops, f"LLVM rejected the kernel: {exc}")
    kernel = Kernel(name, func, ops)
    kernel.attach(lowered, compiled)
    kernel.compile_seconds = time.perf_counter() - start  # lowering + LLVM
    return kernel


# -- the disk cache (disk_cache.py) -------------------------------------------------------
_keyed_symbols: set[str] = set()  # key-named kernel symbols this process has used
_keyed_lock = threading.Lock()


def _module_name(symbol: str) -> str:
    return f"{symbol}.{next(_counter)}"  # unique in the engine even when a symbol repeats


def _disk_key(func: Function, level: int) -> Optional[str]:
    """What determines a kernel's code, as text: its skeleton (constants are free
    variables, printed with their types), parameter and result types, optimization level.
    Printed, not ``structural_hash``: that one uses Python's per-process string hashes.
    None when the disk cache is off (or the function cannot be printed: then it is only
    compiled)."""
    from ...syntax.printer import type_to_text
    from . import disk_cache

    if not disk_cache.enabled():
        return None
    try:
        text = _skeleton(func).astext()
        params = ", ".join(type_to_text(p._checked_type) for p in func.params)
        ret = type_to_text(func.body._checked_type)
    except Exception:
        return None
    # an attribute printed as a metadata reference does not show its value: no key
    return None if "meta[" in text else f"kernel O{level}\n{text}\nparams ({params}) -> {ret}"


def _disk_meta(lowered, ir_text: str) -> dict:
    """The lowering's calling convention, for running the code without lowering again,
    and the functions it calls outside itself."""
    from . import disk_cache

    return {
        "symbol": lowered.symbol,
        "inputs": [[n, [int(d) for d in t.shape], str(t.dtype)] for n, t in lowered.inputs],
        "outputs": [[[int(d) for d in t.shape], str(t.dtype)] for t in lowered.outputs],
        "constants": len(lowered.constants),
        "workspace": int(lowered.workspace_bytes),
        "status": bool(lowered.uses_status),
        "errors": [[int(c), str(m)] for c, m in lowered.errors.items()],
        "peeled": [bool(b) for b in lowered.peeled],
        # how calls split across threads (an entry without them runs whole: still correct)
        "parallel": int(lowered.parallel),
        "unit_ns": float(lowered.unit_ns),
        "chunk_ns": float(lowered.chunk_ns),
        # constants the code reads packed (kernels/prepack.py): without the layout a loaded
        # kernel would read the weights as given where it expects panels
        "packings": {str(i): _packing_meta(p) for i, p in lowered.packings.items()},
        "externals": disk_cache.externals(ir_text),
        "legalized": lowered.legalized,
    }


def _packing_meta(pack) -> dict:
    """A packed layout as JSON (a dataclass of :data:`_PACKINGS`)."""
    name = type(pack).__name__
    if _PACKINGS().get(name) is not type(pack):
        raise TypeError(f"no disk form for the packing {pack!r}")
    return {"layout": name, **dataclasses.asdict(pack)}


def _PACKINGS() -> dict:
    from .kernels.prepack import PanelsA, PanelsB

    return {"PanelsA": PanelsA, "PanelsB": PanelsB}


def _load_kernel(func: Function, name: str, ops: list[str], key: str, symbol: str, level: int) -> Optional[Kernel]:
    """The kernel of ``func`` from the disk cache, or None (no entry, or one that does not fit)."""
    from . import disk_cache
    from .jit import load_object
    from .kernel_abi import Lowered, kernel_constants
    from .routines import require

    entry = disk_cache.load(key)
    if entry is None:
        return None
    meta, obj = entry
    try:
        # an entry that says whether a rule decomposed the function spares loading the rules
        legalized = meta.get("legalized")
        legalized = None if legalized is None else bool(legalized)
        constants = kernel_constants(func, legalized)
        if meta["symbol"] != symbol or meta["constants"] != len(constants):
            return None
        lowered = Lowered(
            None, symbol,
            [(n, TensorType(tuple(s), d)) for n, s, d in meta["inputs"]],
            constants,
            [TensorType(tuple(s), d) for s, d in meta["outputs"]],
            int(meta["workspace"]), bool(meta["status"]), list(ops),
            {int(c): str(m) for c, m in meta["errors"]}, [bool(b) for b in meta["peeled"]],
            int(meta.get("parallel", 0)), float(meta.get("unit_ns", 0.0)), float(meta.get("chunk_ns", 0.0)),
            # required: an entry that does not say how its constants are laid out is refused
            {int(i): _PACKINGS()[p.pop("layout")](**p) for i, p in meta["packings"].items()},
            legalized,
        )
        externals = [str(e) for e in meta["externals"]]
        for e in externals:
            if e.startswith("relay_nb_"):
                require(e)  # a runtime routine (kernels/runtime.py) the code calls
        compiled = load_object(obj, [symbol], _module_name(symbol), externals, lambda: _lower(func, symbol).ir, level)
    except Exception:  # a malformed entry, or code calling a routine we cannot provide
        return None  # compile instead (lowering reports any real problem properly)
    kernel = Kernel(name, func, ops)
    kernel.attach(lowered, compiled)
    return kernel


def _lower(func: Function, symbol: str):
    from .codegen.lower import lower  # the generator and the rules: only when IR is asked for

    return lower(func, symbol)


_DEFAULT = KernelCache()


def default_cache() -> KernelCache:
    """The process-wide cache used by ``create_executor("jit")`` and ``relay.build``."""
    return _DEFAULT


__all__ = ["DEFAULT_MAX_BYTES", "KernelCache", "compile_kernel", "default_cache", "kernel_name"]
