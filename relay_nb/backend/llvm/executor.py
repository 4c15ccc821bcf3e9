"""``relay.create_executor("jit", mod)``: the interpreter with compiled primitive functions.

The module is type-checked and fused (``InferType`` then ``FuseOps``, under the current
:class:`~relay_nb.transform.PassContext`, so ``opt_level`` and instruments apply); the
reference interpreter then runs it with a primitive hook: each ``Primitive=1`` function
is replaced by its :class:`~.kernel.Kernel` from the process-wide cache, compiled on first
use.  Control flow, closures, ADTs, references and recursion stay interpreted around the
kernels, so every program the interpreter runs, this executor runs, with the same
argument checking and the same results.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Optional

import numpy as np

from ...errors import EvalError
from ...eval.executor import Executor, convert_argument
from ...eval.interpreter import DEFAULT_MAX_DEPTH, Interpreter
from ...ir.expr import Call, Expr, Function, GlobalVar, Op, Var
from ...ir.functor import post_order
from ...ir.module import IRModule
from ...ir.ty import TensorType
from ...transform.typed import TypedMutator
from .cache import KernelCache, default_cache
from .kernel import Kernel
from .plan import Plan
from .pool import resolve_threads, using_threads


def fuse(mod: IRModule, typed: bool = False) -> IRModule:
    """InferType (unless ``typed``: ``mod`` is type-checked already) then FuseOps under the
    current PassContext: the form kernels come from."""
    from ...transform.fuse_ops import FuseOps

    if not typed:
        from ...transform.infer_type import InferType

        mod = InferType()(mod)
    return FuseOps()(mod)


class _Substitute(TypedMutator):
    def __init__(self, mapping: dict):
        super().__init__()
        self.mapping = mapping

    def visit_var(self, var: Var) -> Expr:
        return self.mapping.get(var, var)


class _InlineScalars(TypedMutator):
    """``fn (%p0: int32, Primitive=1) { subtract(%p0, 1) }(%i)`` -> ``subtract(%i, 1)``."""

    def visit_call(self, call: Call) -> Expr:
        op = call.op
        if type(op) is Function and op.is_primitive and is_scalar_function(op):
            args = tuple(self.visit(a) for a in call.args)
            return _Substitute(dict(zip(op.params, args))).visit(op.body)
        return super().visit_call(call)


def inline_scalar_primitives(mod: IRModule) -> IRModule:
    """The module with every scalar-only primitive function call replaced by its body
    (arguments are shared nodes, so each is still evaluated once)."""
    updates = {}
    for gv in mod.get_global_vars():
        func = mod[gv.name_hint]
        if isinstance(func, Function):
            new = _InlineScalars().visit(func)
            if new is not func:
                updates[gv] = new
    return mod.with_functions(updates) if updates else mod


def has_tensor_ops(mod: IRModule) -> bool:
    """True if some op call of the module takes or returns a tensor that is not a scalar."""
    for gv in mod.get_global_vars():
        func = mod[gv.name_hint]
        if not isinstance(func, Function):
            continue
        for node in post_order(func):
            if type(node) is Call and type(node.op) is Op:
                types = [node._checked_type] + [a._checked_type for a in node.args]
                if any(not (isinstance(t, TensorType) and t.shape == ()) for t in types):
                    return True
    return False


def _exact_spec(ty: Any) -> Optional[tuple]:
    """(shape, numpy dtype) of a static tensor type: an ndarray matching both exactly is
    what :func:`convert_argument` would accept unchanged, so the call skips it."""
    if not isinstance(ty, TensorType) or not isinstance(ty.dtype, str) or not isinstance(ty.shape, tuple):
        return None
    if not all(type(d) is int for d in ty.shape):
        return None
    try:
        return tuple(ty.shape), np.dtype(ty.dtype)
    except TypeError:
        return None


def is_scalar_function(func: Function) -> bool:
    """True if every parameter and result of ``func`` is a rank-0 tensor."""
    types = [p._checked_type for p in func.params] + [func.body._checked_type]
    return all(isinstance(t, TensorType) and t.shape == () for t in types)


class JITExecutor(Executor):
    """Evaluates a module's functions with primitive functions compiled by LLVM.

    Parameters
    ----------
    mod : IRModule, optional
        The program.
    max_depth : int
        Bound on nested calls in the interpreted parts (as the interpreter's).
    cache : KernelCache, optional
        Where kernels are looked up and stored (default: the process-wide cache).
    scalars : {"interpret", "native"}
        Whether primitive functions on scalars only are left to the interpreter.
    plans : bool
        Run pure-dataflow functions as flat :class:`~.plan.Plan` s (default True).
    threads : int, optional
        Threads a kernel splits its parallel loop across (default: the environment's
        ``RELAY_NB_NUM_THREADS``, else every core the process may run on; see
        :mod:`~.pool`).  Results do not depend on it.

    Examples
    --------
    >>> mod = relay.parse("def @main(%x: Tensor[(2, 2), float32]) { exp(%x) }")
    >>> f = relay.create_executor("jit", mod=mod).evaluate()
    >>> f(np.zeros((2, 2), "float32"))
    array([[1., 1.],
           [1., 1.]], dtype=float32)
    """

    def __init__(
        self,
        mod: Optional[IRModule] = None,
        max_depth: int = DEFAULT_MAX_DEPTH,
        cache: Optional[KernelCache] = None,
        scalars: str = "interpret",
        plans: bool = True,
        threads: Optional[int] = None,
    ):
        super().__init__(mod, max_depth)
        self.plans = plans
        self.threads = resolve_threads(threads)
        if scalars not in ("interpret", "native"):
            from ...errors import RelayError

            raise RelayError(f"scalars must be 'interpret' or 'native', got {scalars!r}")
        self.cache = cache if cache is not None else default_cache()
        self.scalars = scalars
        self.kernels: list[Kernel] = []  # every kernel this executor used, in first-use order
        self.interpreted: list[Function] = []  # scalar primitive functions left to the interpreter
        self._seen: set[int] = set()
        # each primitive function's kernel, for this executor's life: the cache may have
        # evicted it meanwhile (its bound weights count there), and a plan made at the first
        # call must not compile and pack again what the build already did
        self._kernel_of: dict[Function, Kernel] = {}

    def _typed(self, mod: IRModule, checked: bool = False) -> IRModule:
        """``mod`` type-checked (``checked``: it is already), fused, weights bound."""
        from ...transform.infer_type import InferType

        typed = mod if checked else InferType()(mod)
        if self.scalars == "interpret" and not has_tensor_ops(typed):
            return typed  # nothing to compile: scalar code runs best in the interpreter
        from .bind_weights import bind_weights  # (imports this module)

        # constant weights: packed once by their kernel
        fused = bind_weights(fuse(typed, typed=True))
        return inline_scalar_primitives(fused) if self.scalars == "interpret" else fused

    def primitive(self, func: Function) -> Optional[Kernel]:
        """The interpreter's hook: the kernel of one primitive function (None: interpret it)."""
        if self.scalars == "interpret" and is_scalar_function(func):
            self.interpreted.append(func)
            return None
        kernel = self._kernel_of.get(func)
        if kernel is None:
            kernel = self._kernel_of[func] = self.cache.get(func)
        if id(kernel) not in self._seen:
            self._seen.add(id(kernel))
            self.kernels.append(kernel)
        return kernel

    def _wrap(self, interp: Interpreter, func: Function, name: str, typed: IRModule) -> Callable[..., Any]:
        """A callable for ``func``: its flat :class:`~.plan.Plan` when the body is pure
        dataflow of kernels, else the interpreter (both check the arguments the same way)."""
        plan = Plan.build(func, self.primitive, self.threads) if self.plans else None
        if plan is None:
            interpreted = super()._wrap(interp, func, name, typed)
            threads = self.threads

            def run_interpreted(*args: Any) -> Any:
                with using_threads(threads):  # the kernels the interpreter calls split too
                    return interpreted(*args)

            functools.update_wrapper(run_interpreted, interpreted)
            return run_interpreted
        param_types = [p._checked_type for p in func.params]
        # (shape, dtype) per parameter, or a shape no array has: arguments that are ndarrays
        # of exactly these are what convert_argument would return unchanged
        exact = [_exact_spec(t) or ((-1,), None) for t in param_types]

        def convert(args: tuple) -> tuple:
            return tuple(
                convert_argument(a, t, f"{name} argument {i} (%{p.name_hint})")
                for i, (a, t, p) in enumerate(zip(args, param_types, func.params))
            )

        def run(*args: Any) -> Any:
            if len(args) != len(param_types):
                raise EvalError(f"{name} expects {len(param_types)} arguments, got {len(args)}")
            for a, (shape, dt) in zip(args, exact):
                if type(a) is not np.ndarray or a.shape != shape or a.dtype != dt:
                    args = convert(args)
                    break
            try:
                return plan(args)
            except MemoryError:
                raise EvalError(f"{name} ran out of memory") from None

        run.__name__ = name.lstrip("@") or "run"
        run.__doc__ = f"Evaluate {name} as a flat list of compiled kernels."
        run.plan = plan  # type: ignore[attr-defined]
        return run

    def interpreter(self, typed: IRModule) -> Interpreter:
        return Interpreter(typed, self.max_depth, primitive=self.primitive)

    def evaluate(self, expr: Optional[Expr] = None, binds: Optional[dict] = None) -> Any:
        """A callable for ``@main`` (``expr=None``), a global, or a function; or the value of
        a closed expression — as the interpreter's executor, with compiled kernels."""
        mod = self.mod
        if expr is None or isinstance(expr, GlobalVar):
            name = "main" if expr is None else expr.name_hint
            gv = mod.get_global_var(name)
            typed = self._typed(mod)
            return self._wrap(self.interpreter(typed), typed[gv.name_hint], "@" + gv.name_hint, typed)
        work = mod.copy()
        work.add("__expr__", expr if isinstance(expr, Function) else Function((), expr), update=True)
        typed = self._typed(work)
        interp = self.interpreter(typed)
        func = typed["__expr__"]
        if isinstance(expr, Function):
            return self._wrap(interp, func, "function", typed)
        with using_threads(self.threads):
            return interp.call(interp.evaluate(func), ())


__all__ = ["JITExecutor", "fuse", "has_tensor_ops", "inline_scalar_primitives", "is_scalar_function"]
