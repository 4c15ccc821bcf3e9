"""Kernels for primitive functions with dynamic (``?``) dimensions, compiled per shape.

The lowering needs every loop bound: a primitive function over ``Tensor[(?, 3), float32]``
cannot be compiled once for all sizes.  A :class:`SpecializingKernel` stands for it: on
each call it reads its arguments' shapes, checks them against the declared types (rank,
static dims and dtype, with the same messages as a native kernel's argument check), makes
the function with those shapes written in and type-checks it again, and runs the kernel
of that *specialized* function from the kernel cache — whose key holds the parameter
types, so each distinct shape is compiled once and then reused.

Only functions whose result shapes follow from their argument shapes can be specialized:
a ``dyn.*`` op (whose result shape is held in a tensor's *values*) keeps the function on
numpy.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import numpy as np

from ...errors import EvalError, RelayError
from ...ir.expr import Function, Var
from ...ir.functor import substitute
from ...ir.ty import AnyDim, TensorType, TupleType
from .kernel import Kernel, _brief, _type_text

# Distinct shapes remembered per kernel; older ones are looked up in the cache again.
MAX_SHAPES = 32


def has_dynamic_shape(ty: Any) -> bool:
    """True if a tensor type (or a tuple of them) has a ``?`` dimension."""
    if isinstance(ty, TupleType):
        return any(has_dynamic_shape(f) for f in ty.fields)
    return isinstance(ty, TensorType) and isinstance(ty.shape, tuple) and any(
        isinstance(d, AnyDim) for d in ty.shape
    )


def can_specialize(func: Function, ops: list[str]) -> bool:
    """Whether ``func`` has ``?`` dims that its arguments' shapes determine."""
    params = [p._checked_type for p in func.params]
    if not any(has_dynamic_shape(t) for t in params):
        return False
    return not any(op.startswith("dyn.") for op in ops) and all(
        _static_rank(t) for t in params
    )


def _static_rank(ty: Any) -> bool:
    if isinstance(ty, TupleType):
        return all(_static_rank(f) for f in ty.fields)
    return isinstance(ty, TensorType) and isinstance(ty.shape, tuple) and isinstance(ty.dtype, str)


class SpecializingKernel(Kernel):
    """A primitive function with ``?`` dims, run by kernels compiled for each shape."""

    def __init__(self, name: str, func: Function, ops: list[str], cache: Any):
        super().__init__(name, func, ops)
        self.reason = "dynamic shapes: compiled for each argument shape"
        self._cache = cache
        self.specialized: "OrderedDict[tuple, Kernel]" = OrderedDict()

    @property
    def ran_native(self) -> bool:
        """True once at least one shape ran, and every shape so far ran natively."""
        return bool(self.specialized) and all(k.native for k in self.specialized.values())

    def how(self) -> str:
        n = len(self.specialized)
        native = sum(k.native for k in self.specialized.values())
        return f"per shape: {native} of {n} native"

    def summary(self) -> str:
        return (
            f"{self.name}: {', '.join(self.ops)} -- {self.how()} (dynamic shapes); "
            f"{self.calls} calls, run {self.run_seconds * 1e3:.3f} ms"
        )

    def _run_fallback(self, args: list) -> Any:
        key = tuple(_shape_key(a) for a in args)
        kernel = self.specialized.get(key)
        if kernel is None:
            kernel = self._specialize(args)
            self.specialized[key] = kernel
            if len(self.specialized) > MAX_SHAPES:
                self.specialized.popitem(last=False)
        else:
            self.specialized.move_to_end(key)
        return kernel(args)

    def _specialize(self, args: list) -> Kernel:
        if len(args) != len(self.func.params):
            raise EvalError(
                f"kernel {self.name} expects {len(self.func.params)} arguments, got {len(args)}"
            )
        mapping = {}
        for p, a in zip(self.func.params, args):
            ty = _concrete_type(self.name, "%" + p.name_hint, p._checked_type, a)
            mapping[p] = Var(p.name_hint, ty)
        body = substitute(self.func.body, mapping)  # nodes over the params: new, untyped
        func = Function(tuple(mapping.values()), body, None, (), self.func.attrs)
        try:
            from ...typing.infer import infer_type

            infer_type(func)
        except RelayError as exc:
            raise EvalError(f"kernel {self.name}: for these argument shapes, {exc.message}") from None
        if self._cache is not None:
            return self._cache.get(func)
        from .cache import compile_kernel

        return compile_kernel(func)


def _shape_key(value: Any) -> Any:
    if isinstance(value, tuple):
        return tuple(_shape_key(v) for v in value)
    return (np.shape(value), getattr(value, "dtype", None))


def _concrete_type(kernel: str, name: str, ty: Any, value: Any) -> Any:
    """``ty`` with its ``?`` dims taken from ``value``; an EvalError if ``value`` does not fit."""
    if isinstance(ty, TupleType):
        if not isinstance(value, tuple) or len(value) != len(ty.fields):
            raise EvalError(f"kernel {kernel}: {name} expects {_type_text(ty)}, got {_brief(value)}")
        return TupleType(
            tuple(_concrete_type(kernel, f"{name}.{i}", f, v) for i, (f, v) in enumerate(zip(ty.fields, value)))
        )
    arr = value if isinstance(value, np.ndarray) else np.asarray(value)
    if arr.dtype.name != ("bool" if ty.dtype == "uint1" else ty.dtype):
        raise EvalError(f"kernel {kernel}: {name} expects {_type_text(ty)}, got an array of {arr.dtype}")
    if arr.ndim != len(ty.shape) or any(
        type(d) is int and d != s for d, s in zip(ty.shape, arr.shape)
    ):
        raise EvalError(
            f"kernel {kernel}: {name} expects {_type_text(ty)}, got an array of shape {arr.shape}"
        )
    return TensorType(tuple(arr.shape), ty.dtype)


__all__ = ["MAX_SHAPES", "SpecializingKernel", "can_specialize", "has_dynamic_shape"]
