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
"""

from __future__ import annotations

import functools
import threading
import time
from dataclasses import dataclass, field

import llvmlite.binding as llvm

_lock = threading.Lock()
_state: dict = {}
_released: list[str] = []  # names of modules to take out of the engine at the next chance


@dataclass(frozen=True)
class CompiledModule:
    """One compiled LLVM module: its IR before and after optimization, assembly and symbols."""

    name: str
    ir: str
    optimized_ir: str
    asm: str
    compile_seconds: float
    addresses: dict[str, int] = field(default_factory=dict)

    def address(self, symbol: str) -> int:
        return self.addresses[symbol]


def _init() -> dict:
    if not _state:
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        target = llvm.Target.from_default_triple()
        machine = target.create_target_machine(
            cpu=llvm.get_host_cpu_name(),
            features=llvm.get_host_cpu_features().flatten(),
            opt=3,
            jit=True,
        )
        engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), machine)
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


def compile_ir(
    ir_text: str, symbols: list[str], name: str = "kernel", speed_level: int = 3, emit_asm: bool = True
) -> CompiledModule:
    """Parse, verify, optimize (O3 with loop and SLP vectorization for the host CPU) and add
    ``ir_text`` to the engine; return its text forms and the addresses of ``symbols``.

    ``emit_asm=False`` skips the assembly (a third of the compile time); get it later from
    :func:`assembly` of the optimized IR."""
    with _lock:
        state = _init()
        _drain(state)
        start = time.perf_counter()
        module = llvm.parse_assembly(ir_text)
        module.name = name
        module.verify()
        tuning = llvm.create_pipeline_tuning_options(speed_level=speed_level)
        tuning.loop_vectorization = True
        tuning.slp_vectorization = True
        builder = llvm.create_pass_builder(state["machine"], tuning)
        builder.getModulePassManager().run(module, builder)
        optimized = str(module)
        asm = state["machine"].emit_assembly(module) if emit_asm else ""
        engine = state["engine"]
        engine.add_module(module)
        engine.finalize_object()
        addresses = {s: engine.get_function_address(s) for s in symbols}
        seconds = time.perf_counter() - start
        state["modules"][name] = module  # the engine owns it now; keep it reachable
    missing = [s for s, a in addresses.items() if not a]
    if missing:
        raise RuntimeError(f"compiled module {name} has no symbol {missing}")
    return CompiledModule(name, ir_text, optimized, asm, seconds, addresses)


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
