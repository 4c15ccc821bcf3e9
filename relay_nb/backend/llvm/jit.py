"""The process's one LLVM JIT engine, and compiling LLVM IR text into it.

llvmlite 0.50 (LLVM 22) has no ``llvm.initialize()``; optimization uses the new pass
builder. An execution engine that is garbage-collected takes its target machine with it,
and reusing that machine crashes the process — so the engine, the target machine and every
module added to it live in module globals for the life of the process.
"""

from __future__ import annotations

import functools
import threading
import time
from dataclasses import dataclass, field

import llvmlite.binding as llvm

_lock = threading.Lock()
_state: dict = {}


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
        _state.update(machine=machine, engine=engine, modules=[])
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
        state["modules"].append(module)  # the engine owns it now; keep it reachable
    missing = [s for s, a in addresses.items() if not a]
    if missing:
        raise RuntimeError(f"compiled module {name} has no symbol {missing}")
    return CompiledModule(name, ir_text, optimized, asm, seconds, addresses)


def assembly(optimized_ir: str) -> str:
    """The host assembly of already optimized IR, from a throwaway copy of the module (the
    engine's own module is never touched again once added)."""
    with _lock:
        state = _init()
        module = llvm.parse_assembly(optimized_ir)
        return state["machine"].emit_assembly(module)
