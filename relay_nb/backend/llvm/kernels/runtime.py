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

from typing import Callable, Optional

from llvmlite import ir

from ..codegen.types import _DTYPES, DType
from ..jit import target_data_layout
from ..routines import ENTRY_POINTS, ensure
from ..routines import symbol as _symbol
from ._loops import I1, I64, PTR
from .conv_pack import build_conv_block_ref, build_im2col, build_pad
from .gemm import build_block_ref, build_macro, build_pack_a, build_pack_b, tile_for
from .small import build_axpy, build_dot

P, N, B = PTR, I64, I1
_POINTERS = {"dst", "src", "xp", "pa", "pb", "a", "b", "bsrc", "c", "w", "x"}
_FLAGS = {"first"}


def _types(names: list[str]) -> list[ir.Type]:
    return [I1] + [PTR if n in _POINTERS else I1 if n in _FLAGS else I64 for n in names]


def symbol(entry: str, dt: DType) -> str:
    return _symbol(entry, dt.name)


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


def entry_ir(entry: str, dtype: str, name: str) -> str:
    """The IR of module ``name``: entry point ``entry`` of ``dtype`` (built when
    :func:`..routines.ensure` finds no machine code for it in the disk cache)."""
    dt = _DTYPES[dtype]
    module = ir.Module(name)
    module.triple, module.data_layout = target_data_layout()
    on_ok, on_fail = _BODIES[entry]
    _export(module, entry, dt, on_ok(module, dt), on_fail(module, dt) if on_fail else None)
    return str(module)


def call(b: ir.IRBuilder, entry: str, dt: DType, ok: ir.Value, args: list) -> None:
    """Call runtime ``entry`` of ``dt`` from the kernel at ``b`` (compiling the runtime the
    first time it is needed); ``args`` (after ``ok``) are LLVM values or Python ints."""
    ensure(entry, dt.name)
    types = _types(ENTRY_POINTS[entry])
    name = symbol(entry, dt)
    fn = b.module.globals.get(name)
    if fn is None:
        fn = ir.Function(b.module, ir.FunctionType(ir.VoidType(), types), name)
    if len(args) + 1 != len(types):
        raise AssertionError(f"{name} takes {len(types)} arguments, got {len(args) + 1}")
    values = [ok] + [ir.Constant(ty, a) if isinstance(a, int) else a for a, ty in zip(args, types[1:])]
    b.call(fn, values)
