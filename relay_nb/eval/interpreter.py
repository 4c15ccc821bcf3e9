"""The reference interpreter: Relay's semantics, and the oracle every pass is tested against.

Semantics (seed 000): call by value; the callee, then the arguments left to right; a let
value before its body; a closure captures the values of its free variables when it is
created; a let-bound function sees itself (recursion); a node shared in a DAG is evaluated
once per activation; ``match`` tries clauses in order; references are mutable cells.

Two tiers run the same semantics:

* each Relay function is compiled once, on its first call, into Python code
  (:mod:`relay_nb.eval.codegen`), with scalar ops on numpy scalars
  (:mod:`relay_nb.eval.scalar_ops`);
* a function too large or too deeply nested to compile, and a top-level expression, runs
  on a node-by-node machine with explicit task and value stacks.

Neither nested expressions nor Relay calls need Python recursion.  Compiled functions call
each other as Python functions for the first :data:`DIRECT_CALL_BUDGET` nested calls, then
the recursion *spills* onto a trampoline: every activation is a generator, a call
``yield``s the callee's generator and a tail call returns it (the trampoline replaces the
frame, so a loop written as tail recursion runs in constant space).  So a 100,000-deep let
chain or a recursion 100,000 calls deep runs at Python's default recursion limit, and
:data:`DEFAULT_MAX_DEPTH` bounds nested (non-tail) calls with an :class:`EvalError` that
names the function and the line of the call.

Values are those of :mod:`relay_nb.eval.values`; inside, a scalar may be a numpy scalar,
and :func:`~relay_nb.eval.values.to_api` makes it a 0-d array on the way out.  Numpy's
warnings are off while evaluating: the defined behaviours of :mod:`relay_nb.op.impl`
(wrap-around, ``x / 0 == 0``) are not accidents to warn about.
"""

from __future__ import annotations

import types
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
from .codegen import MAX_LINES, Codegen, Unsupported, analyze
from .errstate import enter_ignore, exit_ignore
from .gcstate import enter_relaxed_gc, exit_relaxed_gc
from .scalar_ops import scalar_op
from .values import Closure, ConstructorValue, RefValue, format_value, to_api

# Task kinds of the node-by-node machine.
_EVAL, _CALL, _TUPLE, _PROJ, _BIND, _IF, _MATCH, _MEMO, _REF_NEW, _REF_GET, _REF_SET = range(11)

DEFAULT_MAX_DEPTH = 1_000_000
"""Default bound on nested (non-tail) calls before evaluation stops with an EvalError."""

DIRECT_CALL_BUDGET = 40
"""Nested Relay calls made as Python calls before the rest runs on the trampoline (each
uses two or three Python frames, well inside Python's default limit of 1,000)."""

_GEN = types.GeneratorType
_UNSET = object()
_SCALAR_DTYPES = {
    name: np.dtype(name)
    for name in ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32", "float64")
}
_SCALAR_NP = {dt: name for name, dt in _SCALAR_DTYPES.items()}  # dtype.name is slow in numpy 2


class _Frame:
    """One activation of the node-by-node machine: variable values and memoized shared
    nodes, keyed by node identity."""

    __slots__ = ("env", "shared")

    def __init__(self, env: dict, shared: frozenset):
        self.env = env
        self.shared = shared


class _Unit:
    """One Relay function as the interpreter runs it: its compiled (or interpreted) forms."""

    __slots__ = ("index", "func", "name", "nparams", "leaf", "size", "prim", "self_var", "direct", "gen", "tier", "scalars")

    def __init__(self, index: int, func: Function, name: str):
        self.index = index
        self.func = func
        self.name = name
        self.nparams = len(func.params)
        self.leaf, self.size = analyze(func)
        self.prim = bool(func.attrs.get("Primitive", 0))
        self.self_var: Optional[Var] = None
        self.direct: Callable[..., Any] = _never
        self.gen: Callable[..., Any] = _never
        self.tier = "new"  # "compiled" or "interpreted" after the first call
        # (index, dtype, numpy scalar type) of each scalar parameter, for arguments from Python.
        self.scalars = []
        for i, p in enumerate(func.params):
            dt = _scalar_dtype(p._checked_type or p.type_annotation)
            if dt is not None:
                self.scalars.append((i, dt, dt.type))


def _never(*args: Any) -> Any:  # pragma: no cover - replaced before any call
    raise AssertionError("unit used before it was set up")


def _scalar_dtype(ty: Any) -> Optional[np.dtype]:
    if type(ty) is TensorType and ty.shape == ():
        return _SCALAR_DTYPES.get(ty.dtype)  # type: ignore[call-overload]
    return None


def _where(expr: Optional[Expr]) -> str:
    span = getattr(expr, "span", None)
    return f" at {span.source_name}:{span.line}:{span.column}" if span is not None else ""


def _span(expr: Optional[Expr]):
    return getattr(expr, "span", None)


def _as_array(value: Any) -> Any:
    return np.array(value) if isinstance(value, np.generic) else value


def trampoline(gen: Any) -> Any:
    """Run activation generators to completion: a yielded generator is a call (pushed), a
    returned generator a tail call (replaces the frame), a returned value a return.

    Only deep evaluations get here (short calls run as direct Python calls), and they are
    the ones that build big data: the collector is relaxed while they run (gcstate)."""
    enter_relaxed_gc()
    try:
        return _trampoline(gen)
    finally:
        exit_relaxed_gc()


def _trampoline(gen: Any) -> Any:
    stack: list = []
    push, pop = stack.append, stack.pop
    send = _GEN.send
    val = None
    while True:
        try:
            req = send(gen, val)
        except StopIteration as stop:
            val = stop.value
            if type(val) is _GEN:
                gen, val = val, None
            elif stack:
                gen = pop()
            else:
                return val
            continue
        push(gen)
        gen, val = req, None


class Interpreter:
    """Evaluates expressions of a module.

    Parameters
    ----------
    mod : IRModule, optional
        The module whose globals the evaluated code may call.
    max_depth : int
        Bound on nested (non-tail) calls; deeper recursion is an :class:`EvalError`.
    primitive : callable, optional
        A backend's hook: given a ``Primitive=1`` function, a compiled callable taking the
        list of argument values, or None to interpret it (asked once per function).
    compile : bool
        Compile functions to Python code (the default); False interprets every function
        node by node (the reference for the compiled tier's tests).

    Examples
    --------
    >>> mod = relay.transform.InferType()(relay.parse("def @main(%x: int32) { %x * 2 }"))
    >>> interp = Interpreter(mod)
    >>> interp.evaluate(mod.get_global_var("main"))(np.int32(21))
    array(42, dtype=int32)
    """

    def __init__(
        self,
        mod: Optional[IRModule] = None,
        max_depth: int = DEFAULT_MAX_DEPTH,
        primitive: Optional[Callable[[Function], Optional[Callable[[list], Any]]]] = None,
        compile: bool = True,
    ):
        self.mod = mod if mod is not None else IRModule()
        self._max_depth = max_depth
        # The JIT executor plugs in here, so control flow, closures and ADTs stay
        # interpreted around compiled kernels.
        self._primitive = primitive
        self._compile = compile
        self._kernels: dict[Function, Optional[Callable[[list], Any]]] = {}
        self._globals: dict[str, Closure] = {}
        self._global_units: dict[str, Optional[_Unit]] = {}
        self._shared: dict[Expr, frozenset] = {}
        self._free: dict[Function, tuple[Var, ...]] = {}
        self._consts: dict[Constant, Any] = {}
        self._units: dict[Function, _Unit] = {}
        self._sites: list[Optional[Expr]] = [None]
        self._site_ids: dict[Expr, int] = {}
        self._op_fns: dict[Call, Callable[..., Any]] = {}
        self._names: dict[int, str] = {}
        self._nullary: dict[Constructor, ConstructorValue] = {}
        self.letrec: dict[Function, Var] = {}
        from ..op.registry import get_column

        self._impl = get_column("impl")
        self._ns = self._namespace()

    @property
    def max_depth(self) -> int:
        """The bound on nested (non-tail) calls (the compiled code reads it as ``_M``)."""
        return self._max_depth

    @max_depth.setter
    def max_depth(self, value: int) -> None:
        self._max_depth = value
        self._ns["_M"], self._ns["_B"] = value, min(DIRECT_CALL_BUDGET, value)

    # -- public entry points -----------------------------------------------------------------
    def evaluate(self, expr: Expr, env: Optional[dict] = None) -> Any:
        """The value of ``expr`` (a closure for functions and globals)."""
        gen = self._interp_gen(expr, dict(env or {}), self._shared_nodes(expr), 0)
        token = enter_ignore()
        try:
            value = trampoline(gen)
        except RecursionError:
            raise EvalError("evaluation exceeded Python's recursion limit (please report this)") from None
        except (TypeError, ValueError, AttributeError, IndexError, KeyError, ArithmeticError) as exc:
            raise EvalError(f"evaluation failed: {type(exc).__name__}: {exc}") from None
        finally:
            exit_ignore(token)
        return to_api(value)

    def call(self, closure: Closure, args: tuple) -> Any:
        """Apply a closure to Python-side argument values."""
        unit = None
        if type(closure) is Closure:
            unit = self._units.get(closure.func)
            if unit is None:
                unit = self._unit(closure.func, closure.name)
            if len(args) != unit.nparams or (unit.prim and self._primitive is not None):
                unit = None  # the general path reports the error / asks the hook
            elif unit.scalars:
                args = list(args)
                for i, dt, scalar in unit.scalars:
                    a = args[i]
                    if type(a) is not scalar:
                        args[i] = _coerce(a, dt)
        token = enter_ignore()
        try:
            if unit is not None:
                value = unit.direct(1, 0, closure.env, *args)
            else:
                value = self._calld(1, 0, closure, tuple(args))
        except RecursionError:
            raise EvalError("evaluation exceeded Python's recursion limit (please report this)") from None
        except (TypeError, ValueError, AttributeError, IndexError, KeyError, ArithmeticError) as exc:
            # Only a value of the wrong type passed in from Python gets here.
            raise EvalError(f"evaluation failed: {type(exc).__name__}: {exc}") from None
        finally:
            exit_ignore(token)
        return to_api(value)

    def global_closure(self, name: str) -> Closure:
        clo = self._globals.get(name)
        if clo is None:
            func = self.mod[name]
            clo = Closure(func, {}, "@" + name, self.call)
            self._globals[name] = clo
        return clo

    # -- units: compiled or interpreted functions --------------------------------------------
    def _unit(self, func: Function, name: str = "") -> _Unit:
        unit = self._units.get(func)
        if unit is not None:
            return unit
        unit = _Unit(len(self._units), func, name or self._letrec_name(func))
        unit.self_var = self.letrec.get(func)
        self._units[func] = unit
        ns = self._ns

        def first_direct(*args: Any) -> Any:
            self._setup(unit)
            return unit.direct(*args)

        def first_gen(*args: Any) -> Any:
            self._setup(unit, gen=True)
            return unit.gen(*args)

        unit.direct = ns[f"D{unit.index}"] = first_direct
        unit.gen = ns[f"G{unit.index}"] = first_gen
        return unit

    def _letrec_name(self, func: Function) -> str:
        var = self.letrec.get(func)
        return "%" + var.name_hint if var is not None else ""

    def _setup(self, unit: _Unit, gen: bool = False) -> None:
        """Compile one form of ``unit`` (or fall back to the node-by-node machine)."""
        if unit.tier != "interpreted" and self._compile and unit.size <= MAX_LINES:
            try:
                source = Codegen(self, unit, gen).build()
                code = compile(source, f"<relay {unit.name or 'fn'} #{unit.index}>", "exec")
                exec(code, self._ns)  # noqa: S102 - generated from the IR, never from program text
                fn = self._ns[f"{'G' if gen else 'D'}{unit.index}"]
                if gen:
                    unit.gen = fn
                else:
                    unit.direct = fn
                unit.tier = "compiled"
                return
            except (Unsupported, RecursionError, MemoryError, SyntaxError):
                pass
        unit.tier = "interpreted"

        def interp_gen(d: int, s: int, c: Optional[dict], *args: Any) -> Any:
            return self._interp_unit(unit, d, s, c, args)

        def interp_direct(d: int, s: int, c: Optional[dict], *args: Any) -> Any:
            return trampoline(self._interp_unit(unit, d, s, c, args))

        unit.gen = self._ns[f"G{unit.index}"] = interp_gen
        unit.direct = self._ns[f"D{unit.index}"] = interp_direct

    def _interp_unit(self, unit: _Unit, d: int, s: int, c: Optional[dict], args: tuple) -> Any:
        if d > self.max_depth:
            raise self._toodeep(unit, s)
        func = unit.func
        env = dict(c) if c else {}
        for p, a in zip(func.params, args):
            env[p] = a
        return self._interp_gen(func.body, env, self._shared_nodes(func), d)

    # -- the runtime the generated code calls ---------------------------------------------------
    def _namespace(self) -> dict:
        budget = min(DIRECT_CALL_BUDGET, self.max_depth)
        return {
            "_B": budget,
            "_M": self.max_depth,
            "_T": np.True_,
            "_F": np.False_,
            "_UNSET": _UNSET,
            "_E": {},
            "_GEN": _GEN,
            "_Closure": Closure,
            "_CV": ConstructorValue,
            "_new": object.__new__,
            "_Ref": RefValue,
            "_CB": self.call,
            "_calld": self._calld,
            "_callg": self._callg,
            "_spill": self._spill,
            "_toodeep": self._toodeep,
            "_cond": self._cond,
            "_proj": self._proj_error,
            "_refread": self._refread_error,
            "_refwrite": self._refwrite_error,
            "_nomatch": self._nomatch,
            "_match": match_pattern,
            "_unbound": self._unbound,
            "_unbound_var": self._unbound_var,
            "_arity": self._arity_error,
            "_ctor_arity": self._ctor_arity_error,
            "_cannot": self._cannot_evaluate,
            "_badpattern": self._bad_pattern,
        }

    # The codegen's runtime interface (see Codegen's docstring).
    @property
    def hook(self) -> bool:
        return self._primitive is not None

    def const(self, obj: Any) -> str:
        name = self._names.get(id(obj))
        if name is None:
            name = self._names[id(obj)] = f"k{len(self._names)}"
            self._ns[name] = obj
        return name

    def site(self, call: Expr) -> int:
        sid = self._site_ids.get(call)
        if sid is None:
            sid = self._site_ids[call] = len(self._sites)
            self._sites.append(call)
        return sid

    def unit(self, func: Function) -> _Unit:
        return self._unit(func)

    def global_unit(self, name: str) -> Optional[_Unit]:
        if name in self._global_units:
            return self._global_units[name]
        try:
            func = self.mod[name]
        except (KeyError, RelayError):
            unit = None
        else:
            unit = self._unit(func, "@" + name) if isinstance(func, Function) else None
        self._global_units[name] = unit
        return unit

    def global_closure_const(self, gv: GlobalVar) -> Optional[str]:
        try:
            return self.const(self.global_closure(gv.name_hint))
        except (KeyError, RelayError):
            return None

    def free_vars(self, func: Function) -> tuple[Var, ...]:
        return self._free_vars(func)

    def nullary(self, ctor: Constructor) -> ConstructorValue:
        value = self._nullary.get(ctor)
        if value is None:
            value = self._nullary[ctor] = ConstructorValue(ctor, ())
        return value

    def constant(self, c: Constant) -> Any:
        return self._constant(c)

    def op_site(self, call: Call) -> str:
        return self.const(self._op_fn(call))

    def _calld(self, d: int, s: int, f: Any, args: tuple) -> Any:
        """Call a function value directly (Python recursion, bounded by the budget)."""
        if type(f) is Closure:
            unit = self._units.get(f.func) or self._unit(f.func, f.name)
            if len(args) != unit.nparams:
                raise self._arity_error(unit, len(args), s, f.name)
            if unit.prim and self._primitive is not None:
                kernel = self._kernel(f.func)
                if kernel is not None:
                    return kernel([_as_array(a) for a in args])
            return unit.direct(d, s, f.env, *args)
        return self._call_other(s, f, args)

    def _callg(self, d: int, s: int, f: Any, args: tuple) -> Any:
        """Call a function value from a generator: its generator, or the value of a leaf."""
        if type(f) is Closure:
            unit = self._units.get(f.func) or self._unit(f.func, f.name)
            if len(args) != unit.nparams:
                raise self._arity_error(unit, len(args), s, f.name)
            if unit.prim and self._primitive is not None:
                kernel = self._kernel(f.func)
                if kernel is not None:
                    return kernel([_as_array(a) for a in args])
            if unit.leaf:
                return unit.direct(d, s, f.env, *args)
            return unit.gen(d, s, f.env, *args)
        return self._call_other(s, f, args)

    def _call_other(self, s: int, f: Any, args: tuple) -> Any:
        call = self._sites[s]
        tf = type(f)
        if tf is Op:
            return self._apply_op(f, list(args), call if type(call) is Call else None)
        if tf is Constructor:
            if len(f.inputs) != len(args):
                raise EvalError(f"constructor {f.name_hint} expects {len(f.inputs)} fields, got {len(args)}", _span(call))
            return ConstructorValue(f, tuple(args))
        raise EvalError(f"cannot call a value {format_value(f)}", _span(call))

    def _spill(self, unit: _Unit, d: int, s: int, c: Any, args: tuple) -> Any:
        """The direct-call budget is used up: run this call on the trampoline."""
        return trampoline(unit.gen(d, s, c, *args))

    def _toodeep(self, unit: _Unit, s: int) -> EvalError:
        call = self._sites[s]
        return EvalError(
            f"recursion deeper than {self.max_depth} calls in {unit.name or 'a function'}"
            f"{_where(call)}; raise max_depth if this is intended",
            _span(call),
        )

    def _arity_error(self, unit: _Unit, n: int, s: int, name: str = "") -> EvalError:
        return EvalError(
            f"{name or unit.name or 'function'} expects {unit.nparams} arguments, got {n}", _span(self._sites[s])
        )

    def _ctor_arity_error(self, ctor: Constructor, n: int, s: int) -> EvalError:
        return EvalError(f"constructor {ctor.name_hint} expects {len(ctor.inputs)} fields, got {n}", _span(self._sites[s]))

    @staticmethod
    def _cond(cond: Any, ite: If) -> bool:
        try:
            return bool(np.asarray(cond).item())
        except (ValueError, TypeError):
            raise EvalError(f"if condition must be a scalar bool, got {format_value(cond)}", ite.cond.span) from None

    @staticmethod
    def _proj_error(value: Any, proj: TupleGetItem) -> Any:
        raise EvalError(f"cannot take field {proj.index} of {format_value(value)}", proj.span)

    @staticmethod
    def _refread_error(ref: Any, node: Expr) -> Any:
        raise EvalError(f"ref_read of a non-reference {format_value(ref)}", node.span)

    @staticmethod
    def _refwrite_error(ref: Any, node: Expr) -> Any:
        raise EvalError(f"ref_write to a non-reference {format_value(ref)}", node.span)

    @staticmethod
    def _nomatch(m: Match, value: Any) -> EvalError:
        return EvalError(f"no clause of match{'' if m.complete else '?'} matches {format_value(value)}", m.span)

    @staticmethod
    def _unbound(env: Any, variables: tuple) -> EvalError:
        for v in variables:
            if not isinstance(env, dict) or v not in env:
                return EvalError(f"variable %{v.name_hint} has no value", v.span)
        return EvalError("a captured variable has no value")  # pragma: no cover

    @staticmethod
    def _unbound_var(v: Var) -> EvalError:
        return EvalError(f"variable %{v.name_hint} has no value", v.span)

    @staticmethod
    def _cannot_evaluate(expr: Any) -> EvalError:
        if type(expr) is MetaRef:
            return EvalError(
                f"meta[{expr.type_key}][{expr.index}] has no entry in the meta table: "
                "pass the constants with parse(..., init_meta_table={...})",
                expr.span,
            )
        if type(expr) is GlobalVar:
            return EvalError(f"global @{expr.name_hint} is not defined in the module", expr.span)
        if isinstance(expr, TempExpr):
            return EvalError(f"a {type(expr).__name__} (pass-internal node) cannot be evaluated", expr.span)
        return EvalError(f"cannot evaluate a {type(expr).__name__}", getattr(expr, "span", None))

    @staticmethod
    def _bad_pattern(p: Any) -> bool:
        raise EvalError(f"unknown pattern {type(p).__name__}")

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

            fv = tuple(free_vars(func, self._free))  # fills in the nested functions too
        return fv

    def _constant(self, c: Constant) -> Any:
        """A constant's value: scalars as numpy scalars (they compute fastest)."""
        data = self._consts.get(c)
        if data is None:
            data = c.data
            ty = c._checked_type
            # An unsuffixed literal takes the dtype inference gave it (seed: %f(10, 11)).
            if (
                c.is_literal
                and isinstance(ty, TensorType)
                and isinstance(ty.dtype, str)
                and ty.dtype != (_SCALAR_NP.get(data.dtype) or str(data.dtype))
            ):
                data = data.astype(ty.dtype)
                data.flags.writeable = False
            if data.ndim == 0 and data.dtype in _SCALAR_NP:
                data = data[()]
            self._consts[c] = data
        return data

    def _op_fn(self, call: Call) -> Callable[..., Any]:
        """The function computing one op call site: a fast scalar op, else the impl."""
        fn = self._op_fns.get(call)
        if fn is not None:
            return fn
        op: Op = call.op  # type: ignore[assignment]
        out = call._checked_type
        fast = None
        if _scalar_dtype(out) is not None:
            dtypes = tuple(_scalar_dtype(a._checked_type) for a in call.args)
            if None not in dtypes:
                fast = scalar_op(op.name, tuple(_SCALAR_NP[d] for d in dtypes), out.dtype, call.attrs)  # type: ignore[union-attr]
        if fast is not None:
            fn = fast.fn
        else:
            apply = self._apply_op
            scalar_out = _scalar_dtype(out) is not None

            def fn(*args: Any) -> Any:
                value = apply(op, list(args), call)
                if scalar_out and type(value) is np.ndarray and value.ndim == 0:
                    return value[()]
                return value

        self._op_fns[call] = fn
        return fn

    # -- the node-by-node machine ----------------------------------------------------------------
    def _interp_gen(self, root: Expr, env: dict, shared: frozenset, d: int) -> Any:
        """Evaluate ``root`` in one activation, as a generator for the trampoline."""
        frame = _Frame(env, shared)
        tasks: list = [(_EVAL, root, frame)]
        vals: list = []
        pop, push = tasks.pop, tasks.append
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
                    try:
                        vals.append(self.global_closure(expr.name_hint))
                    except (KeyError, RelayError):
                        raise self._cannot_evaluate(expr) from None
                elif t is Op or t is Constructor:
                    vals.append(expr)
                elif t is RefCreate:
                    push((_REF_NEW,))
                    push((_EVAL, expr.value, frame))
                elif t is RefRead:
                    push((_REF_GET, expr))
                    push((_EVAL, expr.ref, frame))
                elif t is RefWrite:
                    push((_REF_SET, expr))
                    push((_EVAL, expr.value, frame))
                    push((_EVAL, expr.ref, frame))
                else:
                    raise self._cannot_evaluate(expr)
            elif kind == _CALL:
                call, n = task[1], task[2]
                if n:
                    args = vals[-n:]
                    del vals[-n:]
                else:
                    args = []
                fn = vals.pop()
                tf = type(fn)
                if tf is Op and call.op is fn:
                    vals.append(self._op_fn(call)(*args))
                elif tf is Closure:
                    if not tasks:  # a tail call: this activation is finished
                        return self._callg(d, self.site(call), fn, tuple(args))
                    value = self._callg(d + 1, self.site(call), fn, tuple(args))
                    if type(value) is _GEN:
                        value = yield value
                    vals.append(value)
                else:
                    vals.append(self._call_other(self.site(call), fn, tuple(args)))
            elif kind == _MEMO:
                task[2].env[task[1]] = vals[-1]
            elif kind == _BIND:
                let, frame = task[1], task[2]
                value = vals.pop()
                frame.env[let.var] = value
                if type(value) is Closure and value.func is let.value:
                    value.env[let.var] = value  # let-bound recursion
                    self.letrec[value.func] = let.var
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
                    self._proj_error(value, proj)
                vals.append(value[proj.index])
            elif kind == _IF:
                ite, frame = task[1], task[2]
                cond = vals.pop()
                flag = cond is np.True_ or (cond is not np.False_ and self._cond(cond, ite))
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
                    raise self._nomatch(m, value)
            elif kind == _REF_NEW:
                vals.append(RefValue(vals.pop()))
            elif kind == _REF_GET:
                ref = vals.pop()
                if not isinstance(ref, RefValue):
                    self._refread_error(ref, task[1])
                vals.append(ref.value)
            elif kind == _REF_SET:
                value = vals.pop()
                ref = vals.pop()
                if not isinstance(ref, RefValue):
                    self._refwrite_error(ref, task[1])
                ref.value = value
                vals.append(())
        return vals.pop()

    def _kernel(self, func: Function) -> Optional[Callable[[list], Any]]:
        try:
            return self._kernels[func]
        except KeyError:
            kernel = self._kernels[func] = self._primitive(func)  # type: ignore[misc]
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


def _coerce(value: Any, dt: np.dtype) -> Any:
    """A scalar argument from Python as a numpy scalar of its parameter's dtype."""
    if type(value) is np.ndarray:
        if value.ndim != 0:
            return value
        if value.dtype is dt or value.dtype == dt:
            return value[()]
    elif isinstance(value, np.ndarray):
        if value.ndim != 0:
            return value
    elif not isinstance(value, (bool, int, float, np.generic)):
        return value
    from ..op.impl._util import convert

    try:
        return convert(np.asarray(value), dt)[()]
    except (TypeError, ValueError, OverflowError):
        return value


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


__all__ = ["Interpreter", "match_pattern", "trampoline", "DEFAULT_MAX_DEPTH", "DIRECT_CALL_BUDGET"]
