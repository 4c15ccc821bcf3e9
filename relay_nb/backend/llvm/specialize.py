"""Kernels for primitive functions with dynamic (``?``) dimensions, compiled per shape.

The lowering needs every loop bound: a primitive function over ``Tensor[(?, 3), float32]``
cannot be compiled once for all sizes.  A :class:`SpecializingKernel` stands for it: on
each call it reads its arguments' shapes, checks them against the declared types (rank,
static dims and dtype, with the same messages as a native kernel's argument check), makes
the function with those shapes written in and type-checks it again, and runs the kernel
of that *specialized* function from the kernel cache — whose key holds the parameter
types, so each distinct shape is compiled once and then reused.

A ``dyn.*`` op's result shape is held in a tensor's *values*: a function with such ops
is specialized on the values of the parameters its shape operands are computed from too
(small integer tensors, part of the key), and each ``dyn.*`` call becomes its static twin
(``codegen/dyn.py``: TVM's DynamicToStatic with the arguments bound) before the type
check.  One whose shape operands come from large tensors, or that has a ``dyn.*`` op
without such a rule, stays on numpy.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from typing import Any, Optional

import numpy as np

from ...errors import EvalError, RelayError
from ...ir.expr import Call, Constant, Function, Op, Var
from ...ir.functor import ExprMutator, post_order
from ...ir.ty import AnyDim, TensorType, TupleType
from .kernel import Kernel, _brief, _type_text

# Distinct shapes remembered per kernel; older ones are looked up in the cache again.
MAX_SHAPES = 32

# Elements of the parameters a kernel specializes on by value: shape-like tensors are
# tiny; a big tensor feeding a shape operand would compile a kernel per data value.
MAX_VALUE_ELEMENTS = 1024


def has_dynamic_shape(ty: Any) -> bool:
    """True if a tensor type (or a tuple of them) has a ``?`` dimension."""
    if isinstance(ty, TupleType):
        return any(has_dynamic_shape(f) for f in ty.fields)
    return isinstance(ty, TensorType) and isinstance(ty.shape, tuple) and any(
        isinstance(d, AnyDim) for d in ty.shape
    )


def can_specialize(func: Function, ops: list[str]) -> bool:
    """Whether ``func`` has ``?`` dims that its arguments' shapes (and the values of its
    ``dyn.*`` ops' shape operands) determine."""
    params = [p._checked_type for p in func.params]
    if not all(_static_rank(t) for t in params):
        return False
    if any(op.startswith("dyn.") for op in ops):
        return value_params(func) is not None
    return any(has_dynamic_shape(t) for t in params)


def _static_rules() -> dict:
    from .codegen.rules import llvm_rules

    return {name: r for name, r in llvm_rules().items() if r.kind == "static"}


def value_params(func: Function) -> Optional[list[int]]:
    """Indices of the parameters whose values the ``dyn.*`` calls' shape operands are
    computed from; None if some ``dyn.*`` op has no static form or one such parameter is
    not a small tensor of static shape."""
    from ...analysis.free_vars import free_vars
    from ...op.impl.dyn import value_operands

    static = _static_rules()
    used: set = set()
    for node in post_order(func.body):
        if type(node) is Call and type(node.op) is Op and node.op.name.startswith("dyn."):
            if node.op.name not in static:
                return None
            for i in value_operands(node.op.name, len(node.args)):
                used.update(free_vars(node.args[i]))
    out = []
    for k, p in enumerate(func.params):
        if p in used:
            ty = p._checked_type
            if not isinstance(ty, TensorType) or has_dynamic_shape(ty) or math.prod(ty.shape) > MAX_VALUE_ELEMENTS:
                return None
            out.append(k)
    return out


def _static_rank(ty: Any) -> bool:
    if isinstance(ty, TupleType):
        return all(_static_rank(f) for f in ty.fields)
    return isinstance(ty, TensorType) and isinstance(ty.shape, tuple) and isinstance(ty.dtype, str)


class SpecializingKernel(Kernel):
    """A primitive function with ``?`` dims, run by kernels compiled for each shape."""

    def __init__(self, name: str, func: Function, ops: list[str], cache: Any):
        super().__init__(name, func, ops)
        self._dyn = any(op.startswith("dyn.") for op in ops)
        self._values = (value_params(func) or []) if self._dyn else []  # indices of params keyed by value
        what = "argument shape and shape-operand value" if self._dyn else "argument shape"
        self.reason = f"dynamic shapes: compiled for each {what}"
        self._cache = cache
        self.specialized: "OrderedDict[tuple, Kernel]" = OrderedDict()

    @property
    def ran_native(self) -> bool:
        """True once at least one shape ran, and every shape so far ran natively."""
        return bool(self.specialized) and all(k.native for k in self.specialized.values())

    def how(self) -> str:
        n = len(self.specialized)
        native = sum(k.native for k in self.specialized.values())
        return f"per {'value' if self._dyn else 'shape'}: {native} of {n} native"

    def summary(self) -> str:
        return (
            f"{self.name}: {', '.join(self.ops)} -- {self.how()} (dynamic shapes); "
            f"{self.calls} calls, run {self.run_seconds * 1e3:.3f} ms"
        )

    def _run_fallback(self, args: list) -> Any:
        key = tuple(_shape_key(a) for a in args)
        if self._values and len(args) == len(self.func.params):
            key += tuple(_value_key(args[k]) for k in self._values)
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
        # nodes over the params come back new and untyped; dyn.* calls become static
        params = tuple(mapping.values())
        try:
            body = _Bind(mapping, params, args).visit(self.func.body)
            func = Function(params, body, None, (), self.func.attrs)
            from ...typing.infer import infer_type

            infer_type(func)
        except RelayError as exc:
            what = "values" if self._dyn else "shapes"
            raise EvalError(f"kernel {self.name}: for these argument {what}, {exc.message}") from None
        if self._cache is not None:
            return self._cache.get(func)
        from .cache import compile_kernel

        return compile_kernel(func)


class _Bind(ExprMutator):
    """The body over the specialized parameters, each ``dyn.*`` call rewritten into its
    static twin with its shape operands' values (computed by the interpreter when they
    are expressions of the parameters)."""

    def __init__(self, mapping: dict, params: tuple, args: list):
        super().__init__()
        self.mapping, self.params, self.args = mapping, params, args
        self._rules = _static_rules()
        self._interp = None

    def visit_var(self, var: Var):
        return self.mapping.get(var, var)

    def visit_call(self, call: Call):
        new = super().visit_call(call)
        r = self._rules.get(call.op.name) if type(call.op) is Op else None
        if r is None:
            return new
        return r.fn(new, lambda i: self._value(new.args[i]))

    def _value(self, expr) -> np.ndarray:
        if type(expr) is Constant:
            return np.asarray(expr.data)
        if type(expr) is Var and expr in self.params:
            return np.asarray(self.args[self.params.index(expr)])
        from ...eval.interpreter import Interpreter
        from ...eval.values import Closure
        from ...typing.infer import infer_type

        func = Function(self.params, expr)
        infer_type(func)
        if self._interp is None:
            self._interp = Interpreter()
        return np.asarray(self._interp.call(Closure(func, {}, "shape", self._interp.call), tuple(self.args)))


def _value_key(value: Any) -> Any:
    arr = np.asarray(value)
    return (arr.dtype.str, arr.shape, arr.tobytes())


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


__all__ = ["MAX_SHAPES", "MAX_VALUE_ELEMENTS", "SpecializingKernel", "can_specialize", "has_dynamic_shape", "value_params"]
