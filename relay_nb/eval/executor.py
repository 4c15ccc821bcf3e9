"""``relay.create_executor(kind, mod).evaluate(expr=None)``, as in TVM.

The executor type-checks the module first, so arguments can be checked against the
parameter types (a clear error instead of a numpy broadcast error deep inside an op) and
unsuffixed literals get their inferred dtypes.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Optional

import numpy as np

from ..errors import EvalError, RelayError
from ..ir.expr import Expr, Function, GlobalVar
from ..ir.module import IRModule
from ..ir.ty import Any as AnyDim
from ..ir.ty import TensorType, Type, complex_dtype_message
from .interpreter import DEFAULT_MAX_DEPTH, Interpreter
from .values import Closure


def _type_text(ty: Type) -> str:
    from ..syntax.printer import type_to_text

    return type_to_text(ty)


def convert_argument(value: Any, ty: Optional[Type], where: str) -> Any:
    """Check one Python/numpy argument against a parameter type and convert it.

    Python scalars become 0-d arrays of the parameter's dtype; arrays must already have
    the right dtype and shape (``?`` dims match anything).
    """
    if type(value) is complex or getattr(value, "dtype", None) is not None and value.dtype.kind == "c":
        # an unannotated parameter would take it as is, and the ops drop the imaginary part
        raise EvalError(f"{where}: {complex_dtype_message(value.dtype.name if hasattr(value, 'dtype') else 'complex128')}")
    if not isinstance(ty, TensorType) or not isinstance(ty.dtype, str):
        return value
    if isinstance(value, (bool, int, float, np.generic)) and not isinstance(value, np.ndarray):
        if ty.shape != ():
            raise EvalError(f"{where} expects {_type_text(ty)}, got the scalar {value!r}")
        try:
            array = np.asarray(value, dtype=ty.dtype)
        except (ValueError, OverflowError) as exc:
            raise EvalError(f"{where}: {value!r} is not a valid {ty.dtype}: {exc}") from None
        if array.item() != value and not (isinstance(value, float) and np.isnan(value)) and ty.dtype != "bool":
            if isinstance(value, float) and "float" in ty.dtype:
                return array
            raise EvalError(f"{where}: {value!r} does not fit in {ty.dtype}")
        return array
    if isinstance(value, (list, tuple)) and all(isinstance(v, (int, float, bool)) for v in value):
        value = np.asarray(value, dtype=ty.dtype)
    if not isinstance(value, np.ndarray):
        raise EvalError(f"{where} expects {_type_text(ty)}, got {type(value).__name__}")
    want = _numpy_dtype(ty.dtype)
    if (value.dtype != want) if want is not None else (str(value.dtype) != ty.dtype):
        raise EvalError(f"{where} expects dtype {ty.dtype}, got an array of {value.dtype}")
    shape = ty.shape if isinstance(ty.shape, tuple) else None
    if shape is not None and shape != value.shape:  # (equal: the common case, checked fast)
        if len(shape) != value.ndim or any(d is not AnyDim and isinstance(d, int) and d != s for d, s in zip(shape, value.shape)):
            raise EvalError(f"{where} expects shape {_shape_text(shape)}, got {_shape_text(value.shape)}")
    return value


@functools.cache
def _numpy_dtype(name: str) -> Optional[np.dtype]:
    """numpy's dtype for a Relay dtype name (None if numpy has none): comparing dtypes is
    much cheaper than ``str(array.dtype)``, which numpy 2 computes in Python."""
    try:
        return np.dtype(name)
    except TypeError:
        return None


def _shape_text(shape) -> str:
    from ..typing.relations import shape_text

    return shape_text(shape)


class Executor:
    """Evaluates a module's functions with the reference interpreter."""

    def __init__(self, mod: Optional[IRModule] = None, max_depth: int = DEFAULT_MAX_DEPTH):
        self.mod = mod if mod is not None else IRModule()
        self.max_depth = max_depth

    def _typed(self, mod: IRModule) -> IRModule:
        from ..transform.infer_type import InferType

        return InferType()(mod)

    def evaluate(self, expr: Optional[Expr] = None, binds: Optional[dict] = None) -> Any:
        """A callable for ``@main`` (``expr=None``), a global, or a function; or the value of
        a closed expression."""
        mod = self.mod
        if expr is None:
            main_gv = mod.get_global_var("main")
            typed = self._typed(mod)
            return self._wrap(Interpreter(typed, self.max_depth), typed[main_gv.name_hint], "@main", typed)
        if isinstance(expr, GlobalVar):
            typed = self._typed(mod)
            return self._wrap(Interpreter(typed, self.max_depth), typed[expr.name_hint], "@" + expr.name_hint, typed)
        work = mod.copy()
        work.add("__expr__", expr if isinstance(expr, Function) else Function((), expr), update=True)
        typed = self._typed(work)
        interp = Interpreter(typed, self.max_depth)
        func = typed["__expr__"]
        if isinstance(expr, Function):
            return self._wrap(interp, func, "function", typed)
        return interp.call(interp.evaluate(func), ())

    def _wrap(self, interp: Interpreter, func: Function, name: str, typed: IRModule) -> Callable[..., Any]:
        closure = interp.evaluate(func)
        if isinstance(closure, Closure) and not closure.name:
            closure.name = name
        param_types = [p._checked_type for p in func.params]
        # Made once: formatting them on every call costs as much as evaluating a small function.
        labels = [f"{name} argument {i} (%{p.name_hint})" for i, p in enumerate(func.params)]

        def run(*args: Any) -> Any:
            if len(args) != len(param_types):
                raise EvalError(f"{name} expects {len(param_types)} arguments, got {len(args)}")
            converted = tuple([convert_argument(a, t, w) for a, t, w in zip(args, param_types, labels)])
            return interp.call(closure, converted)

        run.__name__ = name.lstrip("@") or "run"
        run.__doc__ = f"Evaluate {name} with the reference interpreter."
        return run


def create_executor(kind: str = "debug", mod: Optional[IRModule] = None, device: Any = None, target: Any = "llvm", **options: Any):
    """An executor for ``mod``: ``"interpreter"``/``"debug"`` (reference interpreter) or
    ``"jit"`` (compiled through LLVM, when available; ``threads=`` sets how many threads
    its kernels split across, see :func:`relay_nb.build`)."""
    if kind in ("interpreter", "debug"):
        return Executor(mod, **options)
    if kind in ("jit", "graph", "vm", "aot"):
        try:
            from ..backend.llvm.executor import JITExecutor
        except ImportError:
            raise RelayError(f"executor kind {kind!r} is not available yet; use 'interpreter'") from None
        return JITExecutor(mod, **options)
    raise RelayError(f"unknown executor kind {kind!r}; use 'interpreter' (alias 'debug') or 'jit'")


__all__ = ["Executor", "create_executor", "convert_argument"]
