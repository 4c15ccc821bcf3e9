"""The kernel runtime: the tiled inner loops, compiled once per process, entry point and dtype.

Packing, the register-tiled macro-kernel and the im2col packer do not depend on a
kernel's shapes (those arrive as arguments), so they are compiled once into the engine
— each entry point in a module of its own, on first use — and every anchor kernel calls
them by name (MCJIT links symbols across the modules of its engine). An anchor kernel then only holds its outer loops and its fused epilogue: it
compiles in milliseconds instead of re-optimizing a microkernel each time.

Every entry point takes ``ok`` first: whether the kernel got its scratch memory. The
choice between the tiled path and the plain-loop fallback is made here rather than by a
branch in the kernel, because LLVM would "unswitch" a loop-invariant branch there —
copying the kernel's loop nest, fused epilogue included, once per side.
"""

from __future__ import annotations

import threading
from typing import Callable, Optional

from llvmlite import ir

from ..codegen.types import _DTYPES, DType
from ..disk_cache import compile_cached
from ..jit import target_data_layout
from ._loops import I1, I64, PTR
from .conv_pack import build_conv_block_ref, build_im2col, build_pad
from .gemm import build_block_ref, build_macro, build_pack_a, build_pack_b, tile_for
from .small import build_axpy, build_dot

_lock = threading.Lock()
_compiled: set[str] = set()

P, N, B = PTR, I64, I1
_GEOMETRY = ["H", "W", "KH", "KW", "OW", "sh", "sw", "dh", "dw", "pt", "pl"]

# entry point -> argument names after ``ok`` (pointers are named in _POINTERS, flags in _FLAGS)
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
_POINTERS = {"dst", "src", "xp", "pa", "pb", "a", "b", "bsrc", "c", "w", "x"}
_FLAGS = {"first"}


def _types(names: list[str]) -> list[ir.Type]:
    return [I1] + [PTR if n in _POINTERS else I1 if n in _FLAGS else I64 for n in names]


def symbol(entry: str, dt: DType) -> str:
    return f"relay_nb_{entry}_{dt.name}"


def _export(
    module: ir.Module,
    entry: str,
    dt: DType,
    on_ok: Callable[[ir.IRBuilder, dict], None],
    on_fail: Optional[Callable[[ir.IRBuilder, dict], None]] = None,
) -> None:
    """The entry point ``entry``: ``on_ok(builder, args)`` if its ``ok`` argument is set,
    else ``on_fail`` (or nothing)."""
    names = ENTRY_POINTS[entry]
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), _types(names)), symbol(entry, dt))
    fn.attributes.add("nounwind")
    args = dict(zip(names, fn.args[1:]))
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    with b.if_else(fn.args[0]) as (ok, fail):
        with ok:
            on_ok(b, args)
        with fail:
            if on_fail is not None:
                on_fail(b, args)
    b.ret_void()


def _inner(module: ir.Module, name: str, dt: DType) -> ir.Function:
    """The internal routine ``name`` of ``module``, built on first use."""
    symbol_name = f"relay_nb_{name}_{dt.name}.impl"
    fn = module.globals.get(symbol_name)
    if fn is None:
        fn = _BUILDERS[name](module, tile_for(dt), symbol_name)
        fn.linkage = "internal"
    return fn


def _forward(name: str, arg_names: list[str]):
    """An entry body calling internal routine ``name`` with the named arguments."""
    return lambda m, dt: (lambda b, a: b.call(_inner(m, name, dt), [a[n] for n in arg_names]))


def _calls(entry: str, rename: Optional[dict] = None, fixed: Optional[dict] = None):
    """An entry body calling entry point ``entry`` with this entry's arguments (by name,
    through ``rename``; ``fixed`` supplies constants)."""
    rename, fixed = rename or {}, fixed or {}

    def make(m, dt):
        def body(b, a):
            values = [ir.Constant(I1, 1)]
            for n, ty in zip(ENTRY_POINTS[entry], _types(ENTRY_POINTS[entry])[1:]):
                values.append(ir.Constant(ty, fixed[n]) if n in fixed else a[rename.get(n, n)])
            name = symbol(entry, dt)
            fn = m.globals.get(name)
            if fn is None:
                fn = ir.Function(m, ir.FunctionType(ir.VoidType(), _types(ENTRY_POINTS[entry])), name)
            b.call(fn, values)

        return body

    return make


def _tiled_block(m, dt):
    def body(b, a):
        b.call(_inner(m, "pack_a", dt), [a["pa"], a["a"], a["mc"], a["kc"], a["ars"], a["acs"]])
        b.call(_inner(m, "macro", dt), [a[n] for n in ["pa", "pb", "c", "mc", "nc", "kc", "ldc", "first"]])

    return body


_BUILDERS = {
    "pack_a": build_pack_a,
    "pack_b": build_pack_b,
    "macro": build_macro,
    "block_ref": build_block_ref,
    "im2col": build_im2col,
    "pad": build_pad,
    "conv_block_ref": build_conv_block_ref,
    "dot": build_dot,
    "axpy": build_axpy,
}
# entry point -> (body if ok, body if not ok): each a function (module, dtype) -> body
_BODIES = {
    name: (_forward(name, ENTRY_POINTS[name]), None)
    for name in ["pack_b", "im2col", "pad", "dot", "axpy", "block_ref", "conv_block_ref", "macro"]
}
_BODIES["tiled_block"] = (_tiled_block, None)
_BODIES["gemm_block"] = (_calls("tiled_block"), _calls("block_ref", {"b": "bsrc"}))
_BODIES["conv_block"] = (
    _calls("tiled_block", {"a": "w", "ars": "w_rs"}, {"acs": 1}),
    _calls("conv_block_ref"),
)
# entry points an entry point calls (compiled before it)
_NEEDS = {"gemm_block": ["tiled_block", "block_ref"], "conv_block": ["tiled_block", "conv_block_ref"]}
# plain-loop fallbacks run only without scratch memory: cheap to compile beats fast
_SPEED = {"block_ref": 1, "conv_block_ref": 1}


def _compile(entry: str, dt: DType) -> None:
    """Build and compile entry point ``entry`` of ``dt`` (and what it calls) in a module of
    its own, so a process pays only for the routines its kernels use; the caller holds
    the lock.  The machine code comes from the disk cache when it has it."""
    for need in _NEEDS.get(entry, []):
        if symbol(need, dt) not in _compiled:
            _compile(need, dt)
    name = f"relay_nb_runtime_{entry}_{dt.name}"
    level = _SPEED.get(entry, 3)

    def build() -> str:
        module = ir.Module(name)
        module.triple, module.data_layout = target_data_layout()
        on_ok, on_fail = _BODIES[entry]
        _export(module, entry, dt, on_ok(module, dt), on_fail(module, dt) if on_fail else None)
        return str(module)

    compile_cached(f"runtime {entry} {dt.name} O{level}", build, [symbol(entry, dt)], name, level)
    _compiled.add(symbol(entry, dt))


def require(name: str) -> None:
    """Put runtime routine ``name`` (a symbol such as ``relay_nb_conv_block_float32``) into
    the engine if it is not there: a kernel loaded from the disk cache calls it without
    having been lowered in this process.  A KeyError for a name that is no routine."""
    for entry in ENTRY_POINTS:
        prefix = f"relay_nb_{entry}_"
        if name.startswith(prefix) and name[len(prefix) :] in _DTYPES:
            dt = _DTYPES[name[len(prefix) :]]
            with _lock:
                if name not in _compiled:
                    _compile(entry, dt)
            return
    raise KeyError(f"no runtime routine {name}")


def call(b: ir.IRBuilder, entry: str, dt: DType, ok: ir.Value, args: list) -> None:
    """Call runtime ``entry`` of ``dt`` from the kernel at ``b`` (compiling the runtime the
    first time it is needed); ``args`` (after ``ok``) are LLVM values or Python ints."""
    with _lock:
        if symbol(entry, dt) not in _compiled:
            _compile(entry, dt)
    types = _types(ENTRY_POINTS[entry])
    name = symbol(entry, dt)
    fn = b.module.globals.get(name)
    if fn is None:
        fn = ir.Function(b.module, ir.FunctionType(ir.VoidType(), types), name)
    if len(args) + 1 != len(types):
        raise AssertionError(f"{name} takes {len(types)} arguments, got {len(args) + 1}")
    values = [ok] + [ir.Constant(ty, a) if isinstance(a, int) else a for a, ty in zip(args, types[1:])]
    b.call(fn, values)
