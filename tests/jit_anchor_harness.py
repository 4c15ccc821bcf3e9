"""Compile one anchor kernel standalone and call it on numpy arrays (tests of the kernels).

A kernel function ``void kernel(ptr in0, ptr in1, ptr out, ptr workspace)`` is built around
:func:`emit_anchor` with an optional epilogue; the op's attributes and result type come
from the Relay builders and type inference, the expected values from the interpreter's
numpy implementation (the project's oracle).
"""

from __future__ import annotations

import ctypes
import itertools

import numpy as np
from llvmlite import ir

import relay_nb as relay
from relay_nb.backend.llvm.anchor import AnchorCall
from relay_nb.backend.llvm.codegen.types import dtype
from relay_nb.backend.llvm.jit import compile_ir, target_data_layout
from relay_nb.backend.llvm.kernels import emit_anchor
from relay_nb.backend.llvm.kernels._loops import for_range, gep
from relay_nb.op.registry import get_column

_names = itertools.count()


def typed_call(op_builder, shapes, dtypes, **attrs):
    """The Relay call ``op_builder(vars, **attrs)`` and its inferred input/output types."""
    xs = [relay.var(f"v{i}", shape=s, dtype=d) for i, (s, d) in enumerate(zip(shapes, dtypes))]
    call = op_builder(*xs, **attrs)
    mod = relay.transform.InferType()(relay.IRModule.from_expr(relay.Function(xs, call)))
    fn_ty = mod["main"].checked_type
    return call, tuple(fn_ty.arg_types), fn_ty.ret_type


def add_one_epilogue(out_ptr, out_dtype):
    """An epilogue adding 1 to each element of its run in place: applied twice or never
    shows up as an off-by-one in the result."""
    dt = dtype(out_dtype)

    def epilogue(b: ir.IRBuilder, start, count):
        with for_range(b, 0, count, name="epi") as i:
            p = gep(b, dt.ir, out_ptr, b.add(start, i.index))
            v = b.load(p, typ=dt.ir)
            one = ir.Constant(dt.ir, 1.0 if dt.is_float else 1)
            b.store(b.fadd(v, one) if dt.is_float else b.add(v, one), p)

    return epilogue


class Kernel:
    """A compiled anchor kernel; calling it on arrays returns the output array."""

    def __init__(self, op_builder, shapes, dtypes, epilogue: bool = False, scratch: bool = False, **attrs):
        call, in_types, out_type = typed_call(op_builder, shapes, dtypes, **attrs)
        self.call, self.in_types, self.out_type = call, in_types, out_type
        name = f"anchor_{next(_names)}"
        module = ir.Module(name)
        module.triple, module.data_layout = target_data_layout()
        ptr = ir.PointerType()
        fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [ptr] * (len(shapes) + 2)), name)
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        *inputs, out, workspace = fn.args
        epi = add_one_epilogue(out, out_type.dtype) if epilogue else None
        self.workspace_bytes = 0

        def carve(nbytes: int) -> ir.Value:
            # like the code generator's workspace: 64-byte aligned slices of one buffer
            offset = self.workspace_bytes
            self.workspace_bytes += -(-max(nbytes, 1) // 64) * 64
            return b.gep(workspace, [ir.Constant(ir.IntType(64), offset)], source_etype=ir.IntType(8))

        anchor = AnchorCall(
            call.op.name, call.attrs, in_types, out_type, b, tuple(inputs), out, epi,
            carve if scratch else None,
        )
        self.handled = emit_anchor(anchor)
        b.ret_void()
        self.epilogue = epilogue
        if self.handled:
            self.compiled = compile_ir(str(module), [name], name)
            proto = ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * (len(shapes) + 2))
            self.fn = proto(self.compiled.address(name))

    def __call__(self, *arrays: np.ndarray) -> np.ndarray:
        arrays = [np.ascontiguousarray(a) for a in arrays]
        for a, t in zip(arrays, self.in_types):
            assert a.shape == t.concrete_shape and a.dtype == np.dtype(t.dtype)
        out = np.empty(self.out_type.concrete_shape, self.out_type.dtype)
        out.fill(np.nan if out.dtype.kind == "f" else 77)  # garbage the kernel must overwrite
        ws = np.full(self.workspace_bytes + 64, 0xFF, np.uint8)  # garbage, not zeros
        base = ws.ctypes.data + (-ws.ctypes.data % 64)
        self.fn(*[a.ctypes.data for a in arrays], out.ctypes.data, base)
        return out

    def expected(self, *arrays: np.ndarray) -> np.ndarray:
        """The interpreter's result (plus one where the add-one epilogue is fused)."""
        impl = get_column("impl")[self.call.op.name]
        want = np.asarray(impl(list(arrays), self.call.attrs, self.out_type))
        return want + want.dtype.type(1) if self.epilogue else want


def random_array(rng: np.random.Generator, shape, dt: str) -> np.ndarray:
    if np.dtype(dt).kind == "f":
        return rng.standard_normal(shape).astype(dt)
    info = np.iinfo(dt)
    return rng.integers(max(info.min, -100), min(info.max, 100), size=shape, endpoint=True).astype(dt)
