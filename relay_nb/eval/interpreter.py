"""The reference interpreter: Relay's semantics, and the oracle every pass is tested against.

It is a small abstract machine with an explicit task stack and value stack, so neither
nested expressions nor Relay calls use Python recursion: a 100,000-deep let chain or a
recursion 100,000 calls deep runs at Python's default recursion limit.  Tail calls reuse
their activation, so a loop written as a tail-recursive function runs in constant space.

Semantics (seed 000): call by value; arguments left to right; a let value before its body;
a closure captures the values of its free variables when it is created; a let-bound
function sees itself (recursion); a node shared in a DAG is evaluated once per activation;
``match`` tries clauses in order; references are mutable cells.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from ..errors import EvalError, RelayError
from ..ir.expr import (
    Call,
    Constant,
    Constructor,
    Expr,
    Function,
    GlobalVar,
    If,
    Let,
    Match,
    MetaRef,
    Op,
    PatternConstructor,
    PatternTuple,
    PatternVar,
    PatternWildcard,
    RefCreate,
    RefRead,
    RefWrite,
    TempExpr,
    Tuple,
    TupleGetItem,
    Var,
)
from ..ir.functor import expr_children, post_order
from ..ir.module import IRModule
from ..ir.ty import TensorType
from .values import Closure, ConstructorValue, RefValue, format_value

# Task kinds of the machine.
_EVAL, _CALL, _TUPLE, _PROJ, _BIND, _IF, _MATCH, _RET, _MEMO, _REF_NEW, _REF_GET, _REF_SET = range(12)

DEFAULT_MAX_DEPTH = 1_000_000
"""Default bound on nested (non-tail) calls before evaluation stops with an EvalError."""


class _Frame:
    """One activation: variable values and memoized shared nodes, keyed by node identity."""

    __slots__ = ("env", "shared")

    def __init__(self, env: dict, shared: frozenset):
        self.env = env
        self.shared = shared


def _where(expr: Optional[Expr]) -> str:
    span = getattr(expr, "span", None)
    return f" at {span.source_name}:{span.line}:{span.column}" if span is not None else ""


class Interpreter:
    """Evaluates expressions of a module.

    >>> interp = Interpreter(mod)
    >>> interp.evaluate(mod.get_global_var("main"))(np.ones(3, "float32"))
    """

    def __init__(
        self,
        mod: Optional[IRModule] = None,
        max_depth: int = DEFAULT_MAX_DEPTH,
        primitive: Optional[Callable[[Function], Optional[Callable[[list], Any]]]] = None,
    ):
        self.mod = mod if mod is not None else IRModule()
        self.max_depth = max_depth
        # A backend's hook: given a ``Primitive=1`` function, a compiled callable taking the
        # argument values (or None to interpret it). The JIT executor plugs in here, so
        # control flow, closures and ADTs stay interpreted around compiled kernels.
        self._primitive = primitive
        self._kernels: dict[Function, Optional[Callable[[list], Any]]] = {}
        self._globals: dict[str, Closure] = {}
        self._shared: dict[Expr, frozenset] = {}
        self._free: dict[Function, tuple[Var, ...]] = {}
        self._consts: dict[Constant, np.ndarray] = {}
        from ..op.registry import get_column

        self._impl = get_column("impl")

    # -- public entry points -----------------------------------------------------------------
    def evaluate(self, expr: Expr, env: Optional[dict] = None) -> Any:
        """The value of ``expr`` (a closure for functions and globals)."""
        frame = _Frame(dict(env or {}), self._shared_nodes(expr))
        return self._run([(_EVAL, expr, frame)], [])

    def call(self, closure: Closure, args: tuple) -> Any:
        """Apply a closure to Python-side argument values."""
        return self._run([(_CALL, None, len(args), None)], [closure, *args])

    def global_closure(self, name: str) -> Closure:
        clo = self._globals.get(name)
        if clo is None:
            func = self.mod[name]
            clo = Closure(func, {}, "@" + name, self.call)
            self._globals[name] = clo
        return clo

    # -- analysis caches -----------------------------------------------------------------------
    def _shared_nodes(self, root: Expr) -> frozenset:
        """Nodes with more than one parent under ``root``: evaluated once, then memoized."""
        cached = self._shared.get(root)
        if cached is not None:
            return cached
        parents: dict[Expr, int] = {}
        for node in post_order(root):
            for child in expr_children(node):
                parents[child] = parents.get(child, 0) + 1
        shared = frozenset(
            n for n, count in parents.items() if count > 1 and not isinstance(n, (Var, Constant, Op, GlobalVar))
        )
        self._shared[root] = shared
        return shared

    def _free_vars(self, func: Function) -> tuple[Var, ...]:
        fv = self._free.get(func)
        if fv is None:
            from ..analysis.free_vars import free_vars

            fv = self._free[func] = tuple(free_vars(func))
        return fv

    def _constant(self, c: Constant) -> np.ndarray:
        data = self._consts.get(c)
        if data is None:
            data = c.data
            ty = c._checked_type
            # An unsuffixed literal takes the dtype inference gave it (seed: %f(10, 11)).
            if c.is_literal and isinstance(ty, TensorType) and isinstance(ty.dtype, str) and ty.dtype != str(data.dtype):
                data = data.astype(ty.dtype)
                data.flags.writeable = False
            self._consts[c] = data
        return data

    # -- the machine -------------------------------------------------------------------------------
    def _run(self, tasks: list, vals: list) -> Any:
        depth = 0
        pop, push = tasks.pop, tasks.append
        try:
            while tasks:
                task = pop()
                kind = task[0]
                if kind == _EVAL:
                    expr, frame = task[1], task[2]
                    env = frame.env
                    t = type(expr)
                    if t is Var:
                        try:
                            vals.append(env[expr])
                        except KeyError:
                            raise EvalError(f"variable %{expr.name_hint} has no value", expr.span) from None
                        continue
                    if t is Constant:
                        vals.append(self._constant(expr))
                        continue
                    hit = env.get(expr, env)
                    if hit is not env:
                        vals.append(hit)
                        continue
                    if expr in frame.shared:
                        push((_MEMO, expr, frame))
                    if t is Call:
                        args = expr.args
                        push((_CALL, expr, len(args), frame))
                        for a in reversed(args):
                            push((_EVAL, a, frame))
                        op = expr.op
                        if type(op) is Op or type(op) is Constructor:
                            vals.append(op)
                        else:
                            push((_EVAL, op, frame))
                    elif t is Let:
                        push((_BIND, expr, frame))
                        push((_EVAL, expr.value, frame))
                    elif t is Tuple:
                        push((_TUPLE, len(expr.fields)))
                        for f in reversed(expr.fields):
                            push((_EVAL, f, frame))
                    elif t is TupleGetItem:
                        push((_PROJ, expr))
                        push((_EVAL, expr.tuple_value, frame))
                    elif t is If:
                        push((_IF, expr, frame))
                        push((_EVAL, expr.cond, frame))
                    elif t is Match:
                        push((_MATCH, expr, frame))
                        push((_EVAL, expr.data, frame))
                    elif t is Function:
                        captured = {v: env[v] for v in self._free_vars(expr) if v in env}
                        vals.append(Closure(expr, captured, "", self.call))
                    elif t is GlobalVar:
                        vals.append(self.global_closure(expr.name_hint))
                    elif t is Op or t is Constructor:
                        vals.append(expr)
                    elif t is RefCreate:
                        push((_REF_NEW,))
                        push((_EVAL, expr.value, frame))
                    elif t is RefRead:
                        push((_REF_GET,))
                        push((_EVAL, expr.ref, frame))
                    elif t is RefWrite:
                        push((_REF_SET,))
                        push((_EVAL, expr.value, frame))
                        push((_EVAL, expr.ref, frame))
                    elif t is MetaRef:
                        raise EvalError(
                            f"meta[{expr.type_key}][{expr.index}] has no entry in the meta table: "
                            "pass the constants with parse(..., init_meta_table={...})",
                            expr.span,
                        )
                    elif isinstance(expr, TempExpr):
                        raise EvalError(f"a {t.__name__} (pass-internal node) cannot be evaluated", expr.span)
                    else:
                        raise EvalError(f"cannot evaluate a {t.__name__}", getattr(expr, "span", None))
                elif kind == _CALL:
                    call, n = task[1], task[2]
                    if n:
                        args = vals[-n:]
                        del vals[-n:]
                    else:
                        args = []
                    fn = vals.pop()
                    tf = type(fn)
                    if tf is Op:
                        vals.append(self._apply_op(fn, args, call))
                    elif tf is Closure:
                        func = fn.func
                        params = func.params
                        if len(params) != n:
                            raise EvalError(
                                f"{fn.name or 'function'} expects {len(params)} arguments, got {n}", _span(call)
                            )
                        if self._primitive is not None and func.attrs.get("Primitive", 0):
                            kernel = self._kernel(func)
                            if kernel is not None:
                                vals.append(kernel(args))
                                continue
                        env = dict(fn.env)
                        for p, a in zip(params, args):
                            env[p] = a
                        if tasks and tasks[-1][0] == _RET:
                            pass  # tail call: the caller's activation is finished, reuse its slot
                        else:
                            depth += 1
                            if depth > self.max_depth:
                                raise EvalError(
                                    f"recursion deeper than {self.max_depth} calls in {fn.name or 'a function'}"
                                    f"{_where(call)}; raise max_depth if this is intended",
                                    _span(call),
                                )
                            push((_RET,))
                        push((_EVAL, func.body, _Frame(env, self._shared_nodes(func))))
                    elif tf is Constructor:
                        if len(fn.inputs) != n:
                            raise EvalError(f"constructor {fn.name_hint} expects {len(fn.inputs)} fields, got {n}", _span(call))
                        vals.append(ConstructorValue(fn, tuple(args)))
                    else:
                        raise EvalError(f"cannot call a value {format_value(fn)}", _span(call))
                elif kind == _RET:
                    depth -= 1
                elif kind == _MEMO:
                    task[2].env[task[1]] = vals[-1]
                elif kind == _BIND:
                    let, frame = task[1], task[2]
                    value = vals.pop()
                    frame.env[let.var] = value
                    if type(value) is Closure and value.func is let.value:
                        value.env[let.var] = value  # let-bound recursion
                        if not value.name:
                            value.name = "%" + let.var.name_hint
                    push((_EVAL, let.body, frame))
                elif kind == _TUPLE:
                    n = task[1]
                    if n:
                        fields = tuple(vals[-n:])
                        del vals[-n:]
                    else:
                        fields = ()
                    vals.append(fields)
                elif kind == _PROJ:
                    proj = task[1]
                    value = vals.pop()
                    if not isinstance(value, tuple) or not 0 <= proj.index < len(value):
                        raise EvalError(f"cannot take field {proj.index} of {format_value(value)}", proj.span)
                    vals.append(value[proj.index])
                elif kind == _IF:
                    ite, frame = task[1], task[2]
                    cond = vals.pop()
                    try:
                        flag = bool(np.asarray(cond).item())
                    except (ValueError, TypeError):
                        raise EvalError(f"if condition must be a scalar bool, got {format_value(cond)}", ite.cond.span) from None
                    push((_EVAL, ite.true_branch if flag else ite.false_branch, frame))
                elif kind == _MATCH:
                    m, frame = task[1], task[2]
                    value = vals.pop()
                    for clause in m.clauses:
                        bindings = match_pattern(clause.lhs, value)
                        if bindings is not None:
                            frame.env.update(bindings)
                            push((_EVAL, clause.rhs, frame))
                            break
                    else:
                        raise EvalError(f"no clause of match{'' if m.complete else '?'} matches {format_value(value)}", m.span)
                elif kind == _REF_NEW:
                    vals.append(RefValue(vals.pop()))
                elif kind == _REF_GET:
                    ref = vals.pop()
                    if not isinstance(ref, RefValue):
                        raise EvalError(f"ref_read of a non-reference {format_value(ref)}")
                    vals.append(ref.value)
                elif kind == _REF_SET:
                    value = vals.pop()
                    ref = vals.pop()
                    if not isinstance(ref, RefValue):
                        raise EvalError(f"ref_write to a non-reference {format_value(ref)}")
                    ref.value = value
                    vals.append(())
        except RecursionError:
            raise EvalError("evaluation exceeded Python's recursion limit (please report this)") from None
        return vals.pop()

    def _kernel(self, func: Function) -> Optional[Callable[[list], Any]]:
        try:
            return self._kernels[func]
        except KeyError:
            kernel = self._kernels[func] = self._primitive(func)
            return kernel

    def _apply_op(self, op: Op, args: list, call: Optional[Call]) -> Any:
        impl = self._impl.get(op.name)
        if impl is None:
            raise EvalError(f"operator {op.name} has no implementation to run", _span(call))
        attrs = call.attrs if call is not None else None
        out_type = call._checked_type if call is not None else None
        try:
            return impl(args, attrs, out_type)
        except RelayError as exc:
            if exc.span is None and call is not None and call.span is not None:
                message = exc.message if exc.message.startswith(op.name + ":") else f"{op.name}: {exc.message}"
                raise type(exc)(message, call.span) from None
            raise
        except (ValueError, TypeError, IndexError, ArithmeticError) as exc:
            raise EvalError(f"{op.name} failed: {exc}", _span(call)) from None


def _span(expr: Optional[Expr]):
    return getattr(expr, "span", None)


def match_pattern(pattern: Any, value: Any) -> Optional[dict]:
    """Variable bindings if ``value`` matches ``pattern``, else None (iterative)."""
    bindings: dict = {}
    stack = [(pattern, value)]
    while stack:
        p, v = stack.pop()
        tp = type(p)
        if tp is PatternWildcard:
            continue
        if tp is PatternVar:
            bindings[p.var] = v
        elif tp is PatternConstructor:
            if not isinstance(v, ConstructorValue) or v.constructor.name_hint != p.constructor.name_hint:
                return None
            if len(p.patterns) != len(v.fields):
                if p.patterns:  # `Z()` in pattern position matches the 0-ary Z too
                    return None
                continue
            stack.extend(zip(p.patterns, v.fields))
        elif tp is PatternTuple:
            if not isinstance(v, tuple) or len(v) != len(p.patterns):
                return None
            stack.extend(zip(p.patterns, v))
        else:
            raise EvalError(f"unknown pattern {tp.__name__}")
    return bindings


__all__ = ["Interpreter", "match_pattern", "DEFAULT_MAX_DEPTH"]
