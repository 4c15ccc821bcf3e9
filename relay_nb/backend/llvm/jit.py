"""The process's one LLVM JIT engine, and compiling LLVM IR text into it.

llvmlite 0.50 (LLVM 22) has no ``llvm.initialize()``; optimization uses the new pass
builder. An execution engine that is garbage-collected takes its target machine with it,
and reusing that machine crashes the process — so the engine and the target machine live in
module globals for the life of the process.  A module added to the engine stays until
:func:`release` takes it out again (the kernel cache does when no kernel can call into it
any more): removing it frees its IR, and the engine no longer tracks it.

Measured with llvmlite 0.50, every compile also keeps memory no caller can give back:
about 70 KB inside llvmlite's optimization pipeline (``LLVMPY_CreatePassBuilder``
allocates a ``PassInstrumentationCallbacks`` it never frees, and each run registers more
callbacks in it; measured on a one-instruction module), and about 13 KB of machine code
that MCJIT's memory manager frees only with the engine.  The kernel cache therefore avoids
compiling rather than relying on releasing: constants are kernel arguments
(``codegen/lower.py``), so editing a constant compiles nothing.

The engine has an MCJIT object cache: after compiling a module it hands us the machine
code (:func:`compile_ir`'s ``save_object``, which the disk cache writes), and before
compiling one it asks us for code: :func:`load_object` adds an empty module whose code
we supply, so a kernel compiled by an earlier process runs without IR or optimization.

llvmlite serializes every call into LLVM behind one process-wide lock, so threads cannot
compile in parallel; inside ``relay.build`` a second *process* can (:mod:`.offload`):
:func:`compile_ir` then hands it some modules and returns them *pending* — their machine
code (:func:`compile_object`, byte-identical to what this engine would make) is loaded
through the same object-cache path when :meth:`CompiledModule.finish` is called.
"""

from __future__ import annotations

import functools
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Optional

import llvmlite.binding as llvm

_lock = threading.Lock()
_state: dict = {}
_released: list[str] = []  # names of modules to take out of the engine at the next chance
_objects: dict[str, bytes] = {}  # module name -> object code MCJIT just compiled (notify)
_supplied: dict[str, bytes] = {}  # module name -> object code to give MCJIT instead of compiling
_pending_exports: dict[str, "CompiledModule"] = {}  # symbol -> the pending module defining it
_failed_exports: dict[str, str] = {}  # symbol -> why its offloaded module has no code
_finishing = threading.RLock()  # one thread loads pending modules (one may load those it calls)


@dataclass(eq=False)
class CompiledModule:
    """One compiled LLVM module: its symbols' addresses, its IR before and after
    optimization, and assembly if asked for.

    A module loaded from the disk cache (``from_disk``) has no IR at hand: ``ir`` calls
    ``regenerate`` on first access and ``optimized_ir`` optimizes a throwaway copy of it,
    so a warm start pays for IR only when someone looks at it."""

    name: str
    compile_seconds: float
    addresses: dict[str, int] = field(default_factory=dict)
    asm: str = ""
    from_disk: bool = False
    object_bytes: int = 0  # size of the machine code object (known when cached or loaded)
    _ir: Optional[str] = field(default=None, repr=False)
    _optimized: Optional[str] = field(default=None, repr=False)
    _regenerate: Optional[Callable[[], str]] = field(default=None, repr=False)
    _speed_level: int = 3
    in_worker: bool = False  # compiled by the build's compile process (see .offload)
    error: str = ""  # why a pending module has no code (LLVM rejected it here too)
    _job: Optional[object] = field(default=None, repr=False)  # the offload job while pending
    _ready: list = field(default_factory=list, repr=False)  # callbacks run once it is loaded
    _save: Optional[Callable[[bytes], None]] = field(default=None, repr=False)

    @property
    def pending(self) -> bool:
        """Whether the code is not in the engine yet (a module of a running build, compiled
        in the compile process or here: :meth:`finish` loads it)."""
        return self._job is not None

    def address(self, symbol: str) -> int:
        if self._job is not None:
            self.finish()
        return self.addresses[symbol]

    def when_loaded(self, callback: Callable[["CompiledModule"], None]) -> None:
        """Call ``callback(self)`` once the code is in the engine (now, if it is)."""
        if self._job is None:
            callback(self)
        else:
            self._ready.append(callback)

    def finish(self) -> None:
        """Wait for a pending module's code and add it to the engine; if the compile process
        failed (died, refused the IR, sent code that does not load) compile it here.  If
        LLVM rejects the IR here too, ``error`` says why and the module has no code."""
        with _finishing:
            if self._job is not None:
                self._finish()

    def _finish(self) -> None:
        job, symbols = self._job, list(self.addresses)
        try:
            obj, seconds = job.result()
            loaded = load_object(obj, symbols, self.name, _externals(self._ir), lambda: "", self._speed_level)
            self.compile_seconds, self.in_worker = seconds + loaded.compile_seconds, job.remote
        except Exception:  # (a KeyboardInterrupt while waiting leaves the module pending)
            obj = b""  # not an object to keep: it did not load, or never came
            try:
                loaded = compile_ir(self._ir, symbols, self.name, self._speed_level, False, self._save)
                self.compile_seconds, self._optimized = loaded.compile_seconds, loaded._optimized
            except Exception as exc:
                loaded, self.error = None, f"LLVM rejected the kernel: {exc}"
        if loaded is not None:
            self.addresses, self.object_bytes = loaded.addresses, loaded.object_bytes
            if obj and self._save is not None:
                self._save(obj)
        for s in symbols:
            if _pending_exports.get(s) is self:
                del _pending_exports[s]
                if self.error:  # code calling it must not reach MCJIT (see _await)
                    _failed_exports[s] = self.error
        self._save = self._job = None
        ready, self._ready = self._ready, []
        for callback in ready:
            callback(self)

    @property
    def ir(self) -> str:
        if self._ir is None:
            self._ir = self._regenerate() if self._regenerate is not None else ""
        return self._ir

    @property
    def optimized_ir(self) -> str:
        if self._optimized is None:
            self._optimized = optimize(self.ir, self._speed_level, self.name) if self.ir else ""
        return self._optimized

    def text_bytes(self) -> int:
        """Bytes of IR text held now (none for a loaded module nobody inspected)."""
        return len(self._ir or "") + len(self._optimized or "")


def _machine():
    """A target machine for the host CPU, as the engine compiles with (the JIT code model)."""
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    target = llvm.Target.from_default_triple()
    return target.create_target_machine(
        cpu=llvm.get_host_cpu_name(),
        features=llvm.get_host_cpu_features().flatten(),
        opt=3,
        jit=True,
    )


def _init() -> dict:
    if not _state:
        machine = _machine()
        engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), machine)
        # MCJIT's object cache: asked for a module's code before compiling it, told the
        # code after; the disk cache (disk_cache.py) reads and fills it through these.
        engine.set_object_cache(_notify, _getbuffer)
        _state.update(machine=machine, engine=engine, modules={})
    return _state


def host_cpu() -> dict:
    """The host CPU name and the vector features LLVM will use (for benchmark tables)."""
    _init()
    feats = llvm.get_host_cpu_features()
    wanted = ("avx", "avx2", "fma", "avx512f", "avx512bw", "avx512vl", "sse4.2", "neon")
    return {"cpu": llvm.get_host_cpu_name(), "features": [f for f in wanted if feats.get(f)], "triple": llvm.get_process_triple()}


@functools.lru_cache(maxsize=None)
def vector_bits() -> int:
    """The host's widest vector register (AVX-512: 512, AVX: 256, else 128 bits)."""
    feats = host_cpu()["features"]
    return 512 if "avx512f" in feats else 256 if "avx" in feats else 128


def target_data_layout() -> tuple[str, str]:
    """(triple, data layout) to stamp on llvmlite.ir modules before compiling."""
    state = _init()
    return llvm.get_process_triple(), str(state["machine"].target_data)


def _notify(module, buffer: bytes) -> None:
    _objects[module.name] = buffer


def _getbuffer(module) -> Optional[bytes]:
    return _supplied.pop(module.name, None)


def with_vector_width(ir_text: str, name: str = "") -> str:
    """``ir_text`` (module ``name``) with every function defined in it asking for the host's
    full vector width.

    LLVM's tuning for recent Xeons (Ice Lake server, Sapphire Rapids: this machine) prefers
    256-bit vectors, so without ``"prefer-vector-width"="512"`` the loop vectorizer stops
    at 8 float lanes and the 16-lane vectors the kernels build (depthwise rows, see
    ``vector_bits``) are split into two ``ymm`` halves.  A fused conv + SiLU epilogue
    is bound by vector-op throughput (the exp polynomial), so it gains most: 1x1 conv
    16 -> 96 channels at 112 x 112 with SiLU 0.82-0.89x the time; EfficientNet-B0 at one
    thread 0.88-0.93x (same process, interleaved, load 3.6-4.1 on 2 cores); convs without a
    transcendental epilogue are unchanged (0.98-1.0x) and bit-identical.  The runtime's
    shared GEMM routines (``relay_nb_runtime_*``) keep LLVM's default: their tiles were
    tuned at it, and 512 was not measured to help them."""
    if vector_bits() < 512 or name.startswith("relay_nb_runtime_"):
        return ir_text
    lines = ir_text.split("\n")
    for i, line in enumerate(lines):
        # llvmlite writes a definition's attributes on its own line, the body's "{" below
        if line.startswith("define ") and "{" not in line:
            lines[i] = line + ' "prefer-vector-width"="512"'
    return "\n".join(lines)


def _optimize(machine, module, speed_level: int) -> None:
    tuning = llvm.create_pipeline_tuning_options(speed_level=speed_level)
    tuning.loop_vectorization = True
    tuning.slp_vectorization = True
    builder = llvm.create_pass_builder(machine, tuning)
    builder.getModulePassManager().run(module, builder)


_object_machine: list = []  # the compile process's target machine (it has no engine)


def compile_object(ir_text: str, name: str, speed_level: int = 3) -> bytes:
    """The machine code of ``ir_text`` (already given the vector width), parsed, verified and
    optimized as :func:`compile_ir` does, for a build's modules (:mod:`.offload`: in the
    compile process, or here while that is busy).  The same target machine settings and
    pipeline make the same bytes the engine's MCJIT would hand its object cache."""
    with _lock:
        if not _object_machine:
            _object_machine.append(_machine())
        machine = _object_machine[0]
        module = llvm.parse_assembly(ir_text)
        try:
            module.name = name
            module.verify()
            _optimize(machine, module, speed_level)
            return machine.emit_object(module)
        finally:
            module.close()


def compile_ir(
    ir_text: str,
    symbols: list[str],
    name: str = "kernel",
    speed_level: int = 3,
    emit_asm: bool = True,
    save_object: Optional[Callable[[bytes], None]] = None,
    offload: bool = False,
) -> CompiledModule:
    """Parse, verify, optimize (O3 with loop and SLP vectorization for the host CPU) and add
    ``ir_text`` to the engine; return its text forms and the addresses of ``symbols``.

    ``emit_asm=False`` skips the assembly (a third of the compile time); get it later from
    :func:`assembly` of the optimized IR.  ``save_object`` is called with the machine
    code (after the lock is released), for the disk cache.

    With ``offload`` and inside :func:`.offload.parallel_compiles` (``relay.build``), the
    module goes to the compile process or is compiled here to machine code, and comes back
    :attr:`~CompiledModule.pending`: no addresses until :meth:`~CompiledModule.finish`, which
    the build calls for every module in order (so a kernel is never held up by a runtime
    routine it calls that is still compiling)."""
    if offload and not emit_asm:
        from .offload import submit

        job = submit(with_vector_width(ir_text, name), name, speed_level)
        if job is not None:
            job.module = CompiledModule(
                name, 0.0, {s: 0 for s in symbols}, "", False, 0, ir_text, None, None, speed_level,
                _job=job, _save=save_object,
            )
            for s in symbols:  # a runtime routine: what calls it waits for it (_await)
                _pending_exports[s] = job.module
            return job.module
    if _pending_exports or _failed_exports:
        _await(_externals(ir_text))
    with _lock:
        state = _init()
        _drain(state)
        start = time.perf_counter()
        module = llvm.parse_assembly(with_vector_width(ir_text, name))
        module.name = name
        module.verify()
        _optimize(state["machine"], module, speed_level)
        optimized = str(module)
        asm = state["machine"].emit_assembly(module) if emit_asm else ""
        engine = state["engine"]
        engine.add_module(module)
        engine.finalize_object()
        obj = _objects.pop(name, b"")
        addresses = {s: engine.get_function_address(s) for s in symbols}
        seconds = time.perf_counter() - start
        state["modules"][name] = module  # the engine owns it now; keep it reachable
    missing = [s for s, a in addresses.items() if not a]
    if missing:
        raise RuntimeError(f"compiled module {name} has no symbol {missing}")
    if save_object is not None and obj:
        save_object(obj)
    return CompiledModule(name, seconds, addresses, asm, False, len(obj), ir_text, optimized, None, speed_level)


def load_object(
    obj: bytes, symbols: list[str], name: str, externals: list[str], regenerate: Callable[[], str], speed_level: int = 3
) -> CompiledModule:
    """Add machine code compiled earlier (the disk cache's, already verified) to the engine
    as module ``name``; ``regenerate()`` gives its IR text if anyone asks for it.

    ``externals`` are the functions the code calls outside itself: each must already be
    in the engine or the process (the caller compiles runtime routines first), because
    MCJIT aborts the process on a symbol it cannot resolve.  A RuntimeError if one is
    missing or the code does not define ``symbols``."""
    if _pending_exports or _failed_exports:
        _await(externals)
    with _lock:
        state = _init()
        _drain(state)
        engine = state["engine"]
        unresolved = [e for e in externals if not (llvm.address_of_symbol(e) or engine.get_function_address(e))]
        if unresolved:
            raise RuntimeError(f"cached module {name} calls unknown {unresolved}")
        start = time.perf_counter()
        # An empty module stands for the code: MCJIT asks the object cache (_getbuffer)
        # for every module's object before compiling it, and takes the one it is given.
        module = llvm.parse_assembly("")
        module.name = name
        module.triple, module.data_layout = llvm.get_process_triple(), str(state["machine"].target_data)
        _supplied[name] = obj
        try:
            engine.add_module(module)
            engine.finalize_object()
        finally:
            unused = _supplied.pop(name, None) is not None
            _objects.pop(name, None)
        state["modules"][name] = module
        addresses = {s: engine.get_function_address(s) for s in symbols}
        seconds = time.perf_counter() - start
    missing = [s for s, a in addresses.items() if not a]
    if unused or missing:
        release(name)
        raise RuntimeError(f"cached module {name} was not loaded" if unused else f"cached module {name} has no symbol {missing}")
    return CompiledModule(name, seconds, addresses, "", True, len(obj), None, None, regenerate, speed_level)


def optimize(ir_text: str, speed_level: int = 3, name: str = "") -> str:
    """The optimized form of ``ir_text`` (module ``name``), from a throwaway module (not
    added to the engine)."""
    with _lock:
        state = _init()
        module = llvm.parse_assembly(with_vector_width(ir_text, name))
        _optimize(state["machine"], module, speed_level)
        return str(module)


def release(name: str) -> None:
    """Take module ``name`` out of the engine, now if the engine is free, else at the next
    compile.  Only for a module whose functions nobody can call any more.

    Safe from a garbage-collection finalizer: one that runs while this thread is inside
    :func:`compile_ir` only queues the name."""
    _released.append(name)
    if _lock.acquire(blocking=False):
        try:
            if _state:
                _drain(_state)
        finally:
            _lock.release()


def _drain(state: dict) -> None:
    """Remove the queued modules from the engine (the caller holds ``_lock``)."""
    modules, engine = state["modules"], state["engine"]
    while _released:
        module = modules.pop(_released.pop(), None)
        if module is not None:
            engine.remove_module(module)
            module.close()


def _await(externals: list[str]) -> None:
    """Load the pending modules (runtime routines in the compile process) that define any of
    ``externals``, before code calling them goes to MCJIT (which aborts on a missing symbol):
    a RuntimeError if one has no code."""
    for e in externals:
        module = _pending_exports.get(e)
        if module is not None:
            module.finish()
        if e in _failed_exports:
            raise RuntimeError(f"{e}: {_failed_exports[e]}")


def _externals(ir_text: str) -> list[str]:
    from .disk_cache import externals

    return externals(ir_text)


def module_names() -> list[str]:
    """The names of the compiled modules the engine holds (kernels are ``fused_*``)."""
    with _lock:
        if _state:
            _drain(_state)
        return list(_state.get("modules", ()))


def module_count() -> int:
    """How many compiled modules the engine holds (a measure for tests and reports)."""
    return len(module_names())


def assembly(optimized_ir: str) -> str:
    """The host assembly of already optimized IR, from a throwaway copy of the module (the
    engine's own module is never touched again once added)."""
    with _lock:
        state = _init()
        module = llvm.parse_assembly(optimized_ir)
        return state["machine"].emit_assembly(module)
