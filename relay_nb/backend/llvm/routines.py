"""The runtime routines by name: which exist, and putting one into the engine once.

The routines themselves (packing, the register-tiled macro-kernel, im2col: their IR is
built in :mod:`.kernels.runtime`) are compiled once per process, each entry point in a
module of its own, or loaded from the disk cache.  A kernel from the disk cache calls
them by name (:func:`require`); loading them needs none of the kernel generators, so
this registry is apart from the code that builds them.
"""

from __future__ import annotations

import threading

from .disk_cache import compile_cached

_GEOMETRY = ["H", "W", "KH", "KW", "OW", "sh", "sw", "dh", "dw", "pt", "pl"]

# entry point -> argument names after ``ok`` (kernels/runtime.py types them)
ENTRY_POINTS: dict[str, list[str]] = {
    "pack_b": ["dst", "src", "kc", "nc", "rs", "cs"],
    "im2col": ["dst", "xp", "k0", "kc", "j0", "nc", "KH", "KW", "OW", "plane", "Wp", "sh", "sw", "dh", "dw"],
    "pad": ["dst", "src", "C", "H", "W", "Hp", "Wp", "pt", "pl", "r0", "r1"],
    "gemm_block": ["pa", "pb", "a", "ars", "acs", "bsrc", "brs", "bcs", "c", "ldc", "mc", "nc", "kc", "first"],
    "tiled_block": ["pa", "pb", "a", "ars", "acs", "c", "ldc", "mc", "nc", "kc", "first"],
    # the macro-kernel on an A packed beforehand (a constant: see .prepack); needs no fallback,
    # its caller has its scratch memory
    "macro": ["pa", "pb", "c", "mc", "nc", "kc", "ldc", "first"],
    "block_ref": ["a", "ars", "acs", "b", "brs", "bcs", "c", "ldc", "mc", "nc", "kc", "first"],
    "conv_block_ref": ["x", "w", "w_rs", "c", "ldc", "mc", "j0", "nc", "k0", "kc", "first"] + _GEOMETRY,
    "dot": ["a", "ars", "bsrc", "bcs", "c", "ldc", "m", "n", "k"],
    "axpy": ["a", "ars", "acs", "bsrc", "brs", "c", "ldc", "m", "n", "k"],
    "conv_block": ["pa", "pb", "w", "w_rs", "x", "c", "ldc", "mc", "j0", "nc", "k0", "kc", "first"] + _GEOMETRY,
}
# entry points an entry point calls (compiled before it)
_NEEDS = {"gemm_block": ["tiled_block", "block_ref"], "conv_block": ["tiled_block", "conv_block_ref"]}
# plain-loop fallbacks run only without scratch memory: cheap to compile beats fast
_SPEED = {"block_ref": 1, "conv_block_ref": 1}
# the dtypes the routines are built for (kernels/runtime.py: codegen.types' DTypes)
DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32", "float64")

_lock = threading.Lock()
_compiled: set[str] = set()


def symbol(entry: str, dtype: str) -> str:
    """The routine's C symbol, e.g. ``relay_nb_conv_block_float32``."""
    return f"relay_nb_{entry}_{dtype}"


def ensure(entry: str, dtype: str) -> None:
    """Put routine ``entry`` of ``dtype`` (and what it calls) into the engine if it is not
    there: from the disk cache, else built and compiled."""
    with _lock:
        _ensure(entry, dtype)


def _ensure(entry: str, dtype: str) -> None:
    if symbol(entry, dtype) in _compiled:
        return
    for need in _NEEDS.get(entry, []):
        _ensure(need, dtype)
    name = f"relay_nb_runtime_{entry}_{dtype}"
    level = _SPEED.get(entry, 3)

    def build() -> str:
        from .kernels.runtime import entry_ir

        return entry_ir(entry, dtype, name)

    # inside a build the compile process may take it: code calling it waits for it (jit._await)
    compile_cached(f"runtime {entry} {dtype} O{level}", build, [symbol(entry, dtype)], name, level, offload=True)
    _compiled.add(symbol(entry, dtype))


def require(name: str) -> None:
    """Put runtime routine ``name`` (a symbol such as ``relay_nb_conv_block_float32``) into
    the engine if it is not there: a kernel loaded from the disk cache calls it without
    having been lowered in this process.  A KeyError for a name that is no routine."""
    for entry in ENTRY_POINTS:
        prefix = f"relay_nb_{entry}_"
        if name.startswith(prefix) and name[len(prefix) :] in DTYPES:
            return ensure(entry, name[len(prefix) :])
    raise KeyError(f"no runtime routine {name}")


__all__ = ["DTYPES", "ENTRY_POINTS", "ensure", "require", "symbol"]
