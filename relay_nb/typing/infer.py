r"""Type inference for Relay: constraint generation, solving, and generalization.

How it works
------------
* **One walk per unit, no recursion.**  A unit is one strongly connected component of the
  module's global call graph (or one standalone expression).  Its functions are walked with
  an explicit stack of ``(node, stage)`` entries; a node is typed once (a DAG stays a DAG)
  and the walk never recurses, whatever the depth of let chains, dataflow graphs or nesting.
* **Types flow forward when they can.**  Binders get their annotation or a fresh unknown
  *before* their scope is walked (a ``let`` variable is in scope in its own value, so a
  recursive closure sees its own function type), and an operator call runs its type
  relation immediately on its argument types.  In the common case (annotated parameters)
  every relation is solved on the spot and no unknown is ever created but the call's
  result.
* **Otherwise, constraints.**  Unknowns are :class:`IncompleteType`\ s in a union-find
  (:mod:`relay_nb.typing.unify`); relations that cannot be solved yet are parked on the
  unknowns they mention and re-run when one gets bound (:mod:`relay_nb.typing.solver`).
* **Generalization.**  When a component is done, unsuffixed literals that nothing
  constrained take their default dtype, and every unknown left in a top-level function's
  type becomes a type parameter of it; the relations still pending on those unknowns become
  its ``type_constraints``.  ``def @f(%x, %y) { add(%x, %y) }`` gets
  ``fn [A, B, C](A, B) -> C where Broadcast(A, B, C)``, and each call of ``@f`` instantiates
  fresh unknowns and re-checks ``Broadcast`` on the actual argument types.  (A literal tied
  by such a relation to a parameter stays polymorphic too: ``def @inc(%x) { %x + 1 }``
  works on float32 and int8.)  Globals are inferred callee first; mutually recursive
  globals share one component.  Let-bound functions are not generalized (as in TVM) unless
  they declare type parameters (``fn [t](%x: t) -> t``), which are rigid in the body.
* **Where clauses** (``fn (%x, %y) where Broadcast {...}``, kept by the parser in the
  function's ``type_constraints`` attribute) are relations over the function's own types;
  on a function with type parameters they are assumed in its body and checked at calls.
* **Errors** are :class:`RelayTypeError`\ s at the offending node's span; a relation's own
  message gets the operator's name in front (``add: shapes (2, 3) and (4, 3) do not
  broadcast``).

Entry points: :func:`infer_module` (what ``relay.transform.InferType`` runs),
:func:`infer_type` for one expression, :func:`check_type`.
"""

from __future__ import annotations

import re
from typing import Any

from ..errors import RelayError, RelayInternalError, RelayTypeError
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
from ..ir.functor import post_order
from ..ir.span import Span
from ..ir.ty import (
    BOOL,
    UNIT,
    FuncType,
    IncompleteType,
    Kind,
    RefType,
    TensorType,
    TupleType,
    Type,
    TypeCall,
    TypeRelation,
    TypeVar,
)
from ..util import paused_gc
from .exhaustive import unmatched_cases
from .kinds import check_kinds, check_type_data
from .relations import Relation
from .solver import Pending, TypeSolver, relation_error
from .text import type_text
from .unify import UnifyError, collect_vars, is_ground, subst

_DTYPE_NAMES: dict = {}  # numpy dtype -> its name (str(dtype) is slow)

_set_checked = Expr.__dict__["_checked_type"].__set__  # == node.set_checked_type(t), faster


# --- the TupleGetItem relation (used when the tuple's type is not known yet) ----------


def _tuple_get_item(types: list, num_inputs: int, index: int, reporter: Any) -> bool:
    t = types[0]
    if isinstance(t, IncompleteType):
        return False
    if not isinstance(t, TupleType):
        raise RelayTypeError(
            f"cannot take field {index} of a value of type {type_text(t)}: it is not a tuple"
        )
    if not 0 <= index < len(t.fields):
        raise RelayTypeError(f"tuple index {index} out of range for a {len(t.fields)}-tuple")
    reporter.assign(types[1], t.fields[index])
    return True


TUPLE_GET_ITEM = Relation("TupleGetItem", _tuple_get_item)


# --- module-wide state -----------------------------------------------------------------


class _Env:
    """What the per-component checkers share: the module, finished global types, caches."""

    def __init__(self, mod: Any):
        self.mod = mod
        self.global_types: dict[str, FuncType] = {}
        self.ctor_types: dict[Constructor, FuncType] = {}
        self.type_args: dict[Call, tuple] = {}
        self._ops: dict[str, tuple] = {}
        self._op_types: dict[tuple, FuncType] = {}
        self._const_types: dict[tuple, TensorType] = {}
        self.typed_ops: set = set()
        # Generalized dtype parameters that came from literals -> their default dtype.
        self.literal_params: dict[TypeVar, str] = {}
        from ..op.registry import get_column

        self._rel_col = get_column("type_rel")
        self._arity_col = get_column("num_inputs")

    def op_info(self, op: Op, node: Any) -> tuple:
        info = self._ops.get(op.name)
        if info is None:
            rel = self._rel_col.get(op.name)
            if rel is None:
                raise RelayTypeError(
                    f"operator {op.name} has no type relation registered (its type_rel column is empty)",
                    getattr(node, "span", None),
                )
            n = self._arity_col.get(op.name, -1)
            info = self._ops[op.name] = (rel, -1 if n is None else n)
        return info

    def op_type(self, op: Op, node: Any, arity: int = -1) -> FuncType:
        """The polymorphic type of an op: ``fn [T0.., R](T0..) -> R where Rel(T0.., R)``.

        A variadic op has a type per arity (``arity``: the number of arguments of a call).
        """
        rel, n = self.op_info(op, node)
        if n < 0:
            n = arity
        if n < 0:
            raise RelayTypeError(
                f"operator {op.name} takes a variable number of arguments; it can only be called",
                getattr(node, "span", None),
            )
        key = (op.name, n)
        ft = self._op_types.get(key)
        if ft is None:
            params = tuple(TypeVar(f"T{i}") for i in range(n)) + (TypeVar("R"),)
            ft = FuncType(
                params[:n],
                params[n],
                params,
                (TypeRelation(rel, params, n, None),),
            )
            self._op_types[key] = ft
        return ft

    def const_type(self, shape: tuple, dtype: str) -> TensorType:
        key = (shape, dtype)
        t = self._const_types.get(key)
        if t is None:
            t = self._const_types[key] = TensorType(shape, dtype)
        return t

    def ctor_type(self, ctor: Constructor) -> FuncType:
        """``fn [params](inputs) -> Name[params]`` for an ADT constructor."""
        ft = self.ctor_types.get(ctor)
        if ft is not None:
            return ft
        mod = self.mod
        tdata = mod.type_definitions.get(ctor.belong_to) if mod is not None else None
        if tdata is not None:
            params = tdata.type_vars
        elif mod is not None:
            raise RelayTypeError(
                f"constructor {ctor.name_hint} belongs to type {ctor.belong_to.name_hint}, "
                "which is not defined in the module",
                ctor.span,
            )
        else:
            found: dict = {}
            for t in ctor.inputs:
                collect_vars(t, found, (TypeVar,))
            params = tuple(found)
        by_name = {p.name_hint: p for p in params}
        inputs = []
        for i, t in enumerate(ctor.inputs):
            t = check_kinds(t, mod, ctor.span, f"field {i} of constructor {ctor.name_hint}")
            # Tolerate a front end that made new TypeVar objects with the parameters' names.
            found = {}
            collect_vars(t, found, (TypeVar,))
            rename = {
                v: by_name[v.name_hint] for v in found if v not in params and v.name_hint in by_name
            }
            inputs.append(subst(t, rename) if rename else t)
        ft = FuncType(tuple(inputs), TypeCall(ctor.belong_to, params), params)
        self.ctor_types[ctor] = ft
        return ft


# --- the checker for one unit ---------------------------------------------------------------


def _span(node: Any) -> Any:
    return getattr(node, "span", None)


_COND_RX = re.compile(r"if\s*(\(\s*[%@][\w.]+\s*\)|[%@][\w.]+)")


def _cond_where(node: If) -> tuple[Any, tuple[str, ...]]:
    """Where an if's condition is written, and notes.  A variable's span is its binding
    (the parameter list, say), not this use: then the condition is found in the source
    right after the ``if`` keyword, and the binding becomes a note."""
    cond = node.cond
    if type(cond) not in (Var, GlobalVar):
        return _span(cond) or node.span, ()
    name = ("%" if type(cond) is Var else "@") + cond.name_hint
    bound = cond.span
    notes = ()
    if bound is not None:
        line = bound.line + (bound.source.line_offset if bound.source is not None else 0)
        notes = (f"{name} is bound at line {line}, column {bound.column}",)
    span = node.span
    if span is None or span.source is None:
        return span or cond.span, notes
    m = _COND_RX.match(span.source.line(span.line), span.column - 1)
    if m is None:  # written over several lines: the if itself
        return span, notes
    start, end = m.span(1)
    return Span(span.source, span.line, start + 1, span.line, end + 1), notes


def _callee_label(op: Any) -> str:
    t = type(op)
    if t is GlobalVar:
        return "@" + op.name_hint
    if t is Var:
        return "%" + op.name_hint
    if t is Op:
        return op.name
    if t is Constructor:
        return "constructor " + op.name_hint
    if t is Function:
        return "the function"
    return "the callee"


def _rel_name(rel: Any) -> str:
    return getattr(rel, "name", None) or getattr(rel, "__name__", "relation")


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


class _Checker(TypeSolver):
    """Types one unit (an SCC of globals, or one expression)."""

    def __init__(self, env: _Env):
        super().__init__()
        self.env = env
        self.mod = env.mod
        self.types: dict[Any, Any] = {}
        self.fn_pre: dict[Function, FuncType] = {}
        self.deferred: list = []
        # Nodes whose type is known to contain no unknowns (never needs resolving).
        self.ground: set = set()
        self.members: dict[str, FuncType] = {}
        self.call_inst: list = []
        # `where` constraints of polymorphic functions: true inside their bodies.
        self.assumptions: list = []
        self._names = 0
        self._enter = {
            Var: self._enter_var,
            GlobalVar: self._enter_global_var,
            Constant: self._enter_constant,
            Op: self._enter_op,
            Constructor: self._enter_constructor,
            MetaRef: self._enter_meta_ref,
            Tuple: self._enter_tuple,
            TupleGetItem: self._enter_tuple_getitem,
            Function: self._enter_function,
            Let: self._enter_let,
            If: self._enter_if,
            Match: self._enter_match,
            RefCreate: self._enter_ref_create,
            RefRead: self._enter_ref_read,
            RefWrite: self._enter_ref_write,
        }
        self._exit = {
            Tuple: self._exit_tuple,
            TupleGetItem: self._exit_tuple_getitem,
            Function: self._exit_function,
            Let: self._exit_let,
            If: self._exit_if,
            Match: self._exit_match,
            RefCreate: self._exit_ref_create,
            RefRead: self._exit_ref_read,
            RefWrite: self._exit_ref_write,
        }

    # -- bookkeeping -------------------------------------------------------------------
    def record(self, node: Any, t: Any) -> None:
        """``node`` has type ``t``; its checked type is set now if ``t`` can no longer change."""
        self.types[node] = t
        if is_ground(t):
            _set_checked(node, t)
            self.ground.add(node)
        else:
            self.deferred.append(node)

    def annot(self, t: Any, node: Any, what: str) -> Any:
        return check_kinds(t, self.mod, _span(node), what)

    def bind_var(self, v: Var, t: Any) -> None:
        old = self.types.get(v)
        if old is not None and old is not t:
            self.unify_at(old, t, v, lambda: f"variable %{v.name_hint} is used with two types")
            return
        self.record(v, t)

    def unify_at(self, a: Any, b: Any, node: Any, message: Any) -> None:
        """Unify, turning a clash into a RelayTypeError at ``node`` (message: str or thunk)."""
        try:
            self.unify(a, b)
        except UnifyError as e:
            text = message() if callable(message) else message
            notes = () if e.reason in text else (e.reason,)
            raise RelayTypeError(text, _span(node), notes) from None

    def text(self, t: Any) -> str:
        return type_text(self.resolve(t))

    # -- the walk ----------------------------------------------------------------------
    def check(self, root: Expr) -> Any:
        """Type ``root`` and everything under it; returns its (unresolved) type."""
        types = self.types
        enter = self._enter
        exit_ = self._exit
        stack: list = [(root, 0)]
        pop = stack.pop
        push = stack.append
        ready = self.ready
        while stack:
            node, stage = pop()
            cls = type(node)
            if stage == 0:
                if node in types:
                    continue
                if cls is Call:
                    args = node.args
                    op = node.op
                    for a in args:
                        if a not in types:
                            break
                    else:
                        if type(op) is Op or op in types:
                            # Every child is typed already (A-normal form): no second visit.
                            self._exit_call(node)
                            if ready:
                                self.drain()
                            continue
                    push((node, 1))
                    for i in range(len(args) - 1, -1, -1):
                        a = args[i]
                        if a not in types:
                            push((a, 0))
                    if type(op) is not Op and op not in types:
                        push((op, 0))
                    continue
                handler = enter.get(cls)
                if handler is None:
                    handler = self._enter_other
                handler(node, push)
            elif cls is Call:
                self._exit_call(node)
            else:
                exit_[cls](node, stage, push)
            if ready:
                self.drain()
        return types[root]

    # -- leaves --------------------------------------------------------------------------
    def _enter_var(self, v: Var, push: Any) -> None:
        # A variable not bound by anything typed so far: a free variable.
        ann = v.type_annotation
        t = self.annot(ann, v, f"annotation of %{v.name_hint}") if ann is not None else self.fresh()
        self.record(v, t)

    def _enter_global_var(self, gv: GlobalVar, push: Any) -> None:
        name = gv.name_hint
        t = self.members.get(name)
        if t is None:
            t = self.env.global_types.get(name)
        if t is None:
            if self.mod is None:
                raise RelayTypeError(f"global @{name} cannot be typed without a module", gv.span)
            raise RelayTypeError(f"global @{name} is not defined in the module", gv.span)
        self.types[gv] = t

    def _enter_constant(self, c: Constant, push: Any) -> None:
        data = c.data
        dtype = _DTYPE_NAMES.get(data.dtype)
        if dtype is None:
            dtype = _DTYPE_NAMES[data.dtype] = str(data.dtype)
        if c.is_literal:
            t = TensorType(data.shape, self.literal_dtype(dtype))
            self.types[c] = t
            self.deferred.append(c)
        else:
            t = self.env.const_type(data.shape, dtype)
            self.types[c] = t
            self.ground.add(c)
            _set_checked(c, t)

    def _enter_op(self, op: Op, push: Any) -> None:
        t = self.env.op_type(op, op)
        self.types[op] = t
        _set_checked(op, t)

    def _enter_constructor(self, ctor: Constructor, push: Any) -> None:
        t = self.env.ctor_type(ctor)
        self.types[ctor] = t
        _set_checked(ctor, t)

    def _enter_meta_ref(self, m: MetaRef, push: Any) -> None:
        if m.type_annotation is None:
            raise RelayTypeError(
                f"meta[{m.type_key}][{m.index}] is missing from the meta table and its type is "
                "unknown (no /* ty=... */ annotation): the metadata section was not given",
                m.span,
            )
        self.record(m, self.annot(m.type_annotation, m, f"type of meta[{m.type_key}][{m.index}]"))

    def _enter_other(self, node: Any, push: Any) -> None:
        if isinstance(node, TempExpr):
            raise RelayTypeError(
                f"{type(node).__name__} is a pass-internal TempExpr: it must be realized "
                "(TempExpr.realize()) before type checking",
                _span(node),
            )
        for klass in type(node).__mro__:
            handler = self._enter.get(klass)
            if handler is not None:
                # A subclass of a node type: dispatch as its base (and remember that).
                self._enter[type(node)] = handler
                if klass in self._exit:
                    self._exit[type(node)] = self._exit[klass]
                handler(node, push)
                return
        raise RelayTypeError(
            f"cannot type a {type(node).__name__}: not a Relay expression", _span(node)
        )

    # -- calls ---------------------------------------------------------------------------
    def _exit_call(self, node: Call) -> None:
        op = node.op
        if type(op) is Op:
            t = self._op_call(node, op)
        else:
            t = self._fn_call(node, op)
        self.types[node] = t
        if is_ground(t):
            _set_checked(node, t)
            self.ground.add(node)
        else:
            self.deferred.append(node)

    def _op_call(self, node: Call, op: Op) -> Any:
        env = self.env
        rel, n = env.op_info(op, node)
        args = node.args
        if op not in env.typed_ops:
            env.typed_ops.add(op)
            _set_checked(op, env.op_type(op, node, len(args)))
        if n >= 0 and len(args) != n:
            raise RelayTypeError(
                f"{op.name} expects {_plural(n, 'argument')}, got {len(args)}", node.span
            )
        types = self.types
        ground = self.ground
        resolve = self.resolve
        tys = [types[a] if a in ground else resolve(types[a]) for a in args]
        out = IncompleteType()
        tys.append(out)
        if node.type_args:
            self._explicit_op_type_args(node, op, tys)
        args_t = tuple(tys)
        try:
            for t in tys:
                if type(t) is TypeVar:  # a rigid type parameter: see TypeSolver.try_solve
                    solved = False
                    break
            else:
                solved = rel(tys, len(args), node.attrs, self)
        except Exception as e:
            raise relation_error(e, rel, op.name, node) from (
                None if isinstance(e, RelayError) else e
            )
        if solved:
            return self.resolve(out)
        p = Pending(rel, args_t, len(args), node.attrs, node, op.name)
        self.pending.append(p)
        self._park(p)
        return out

    def _explicit_op_type_args(self, node: Call, op: Op, tys: list) -> None:
        targs = node.type_args
        if len(targs) != len(tys):
            raise RelayTypeError(
                f"{op.name} takes {_plural(len(tys), 'type argument')} "
                f"({len(tys) - 1} inputs and the result), got {len(targs)}",
                node.span,
            )
        for i, (t, ta) in enumerate(zip(tys, targs)):
            ta = self.annot(ta, node, f"type argument {i} of {op.name}")
            self.unify_at(
                t,
                ta,
                node,
                lambda: f"{op.name}: type argument {i} is {self.text(ta)}, found {self.text(t)}",
            )

    def _fn_call(self, node: Call, op: Any) -> Any:
        label = _callee_label(op)
        self.current_node = node
        self.current_label = label
        args = node.args
        types = self.types
        ct = types[op]
        if type(ct) is IncompleteType:
            ct = self.find(ct)
        declared = None
        if type(ct) is IncompleteType:
            ft = FuncType(tuple(self.fresh() for _ in args), self.fresh())
            self.unify_at(
                ct,
                ft,
                node,
                lambda: f"{label} cannot be called with {_plural(len(args), 'argument')}",
            )
        elif type(ct) is FuncType:
            ft = ct
            if ft.type_params or ft.type_constraints or node.type_args:
                targs = None
                if node.type_args:
                    if len(node.type_args) != len(ft.type_params):
                        raise RelayTypeError(
                            f"{label} expects {_plural(len(ft.type_params), 'type argument')}, "
                            f"got {len(node.type_args)}",
                            node.span,
                        )
                    targs = tuple(
                        self._type_arg(ta, p, node, label, i)
                        for i, (ta, p) in enumerate(zip(node.type_args, ft.type_params))
                    )
                if ft.type_params:
                    declared = ft
                ft, inst = self.instantiate(ft, node, label, targs)
                if inst:
                    self.call_inst.append((node, inst))
        else:
            raise RelayTypeError(f"cannot call a value of type {self.text(ct)}", node.span)
        params = ft.arg_types
        if len(params) != len(args):
            raise RelayTypeError(
                f"{label} expects {_plural(len(params), 'argument')}, got {len(args)}", node.span
            )
        for i in range(len(args)):
            a = args[i]
            pt = params[i]
            at = types[a]
            if pt is at:
                continue
            try:
                self.unify(pt, at)
            except UnifyError as e:
                shown = declared.arg_types[i] if declared is not None else pt
                if type(op) is Constructor:
                    msg = f"constructor {op.name_hint} expects field {i} of type {self.text(shown)}, found {self.text(at)}"
                else:
                    msg = f"{label} expects argument {i} of type {self.text(shown)}, found {self.text(at)}"
                notes = () if e.reason in msg else (e.reason,)
                raise RelayTypeError(msg, _span(a) or node.span, notes) from None
        return ft.ret_type

    def _type_arg(self, ta: Any, param: TypeVar, node: Any, label: str, i: int) -> Any:
        if param.kind is Kind.Type:
            return self.annot(ta, node, f"type argument {i} of {label}")
        return ta

    # -- functions and let ---------------------------------------------------------------
    def pre_function(self, fn: Function) -> FuncType:
        """Give a function's parameters (and result) their types before its body is walked."""
        ft = self.fn_pre.get(fn)
        if ft is not None:
            return ft
        types = self.types
        params = []
        for p in fn.params:
            t = types.get(p)
            if t is None:
                ann = p.type_annotation
                t = (
                    self.annot(ann, p, f"annotation of %{p.name_hint}")
                    if ann is not None
                    else self.fresh()
                )
                self.record(p, t)
            params.append(t)
        for tp in fn.type_params:
            if type(tp) is not TypeVar:
                raise RelayTypeError(f"type parameter {tp!r} is not a type variable", fn.span)
        if fn.ret_type is not None:
            ret = self.annot(fn.ret_type, fn, "return type annotation")
        else:
            ret = self.fresh()
        cons = self._where_clauses(fn, params, ret)
        if cons and fn.type_params:
            # Assumed inside the body, checked at every call (after instantiation).
            ft = FuncType(tuple(params), ret, fn.type_params, cons)
            self.assumptions.extend(cons)
        else:
            ft = FuncType(tuple(params), ret, fn.type_params)
            # A monomorphic function's constraints must simply hold for its own types.
            for c in cons:
                self.add_relation(
                    c.func, c.args, c.num_inputs, c.attrs, fn, f"where {_rel_name(c.func)}"
                )
        self.fn_pre[fn] = ft
        return ft

    def _where_clauses(self, fn: Function, params: list, ret: Any) -> tuple:
        """``fn (%x, %y) where Broadcast {...}``: the parser keeps the relations in the
        function's ``type_constraints`` attribute; a relation without arguments holds over
        (parameter types..., result type)."""
        attrs = fn.attrs
        if not attrs or "type_constraints" not in attrs:
            return ()
        out = []
        for c in attrs["type_constraints"]:
            if type(c) is not TypeRelation or not callable(c.func):
                raise RelayTypeError(f"bad type constraint {c!r} on a function", fn.span)
            if c.args:
                args = tuple(self.annot(a, fn, f"where clause {_rel_name(c.func)}") for a in c.args)
                out.append(TypeRelation(c.func, args, c.num_inputs, c.attrs))
            else:
                out.append(TypeRelation(c.func, tuple(params) + (ret,), len(params), c.attrs))
        return tuple(out)

    def _enter_function(self, fn: Function, push: Any) -> None:
        self.pre_function(fn)
        push((fn, 1))
        if fn.body not in self.types:
            push((fn.body, 0))

    def _exit_function(self, fn: Function, stage: int, push: Any) -> None:
        ft = self.fn_pre[fn]
        body_t = self.types[fn.body]
        if fn.ret_type is not None:
            tail = fn.body
            while type(tail) is Let:  # point at the expression that is returned
                tail = tail.body
            if type(tail) is Var:  # a variable's span is its binding site, not this use
                tail = fn.body
            self.unify_at(
                ft.ret_type,
                body_t,
                tail
                if _span(tail) is not None
                else (fn.body if _span(fn.body) is not None else fn),
                lambda: (
                    f"function declared to return {self.text(ft.ret_type)} but its body has type {self.text(body_t)}"
                ),
            )
        else:
            self.unify_at(
                ft.ret_type, body_t, fn, lambda: "the function's result type would be infinite"
            )
        self.record(fn, ft)

    def _enter_let(self, let: Let, push: Any) -> None:
        v = let.var
        value = let.value
        ann = v.type_annotation
        if type(value) is Function and value not in self.types:
            # Recursion through let: the variable has the function's type inside its body.
            ft = self.pre_function(value)
            if ann is not None:
                ann = self.annot(ann, v, f"annotation of %{v.name_hint}")
                self.unify_at(
                    ann,
                    ft,
                    let,
                    lambda: (
                        f"let %{v.name_hint} is annotated {self.text(ann)} but its value has type {self.text(ft)}"
                    ),
                )
            self.bind_var(v, ft)
        elif ann is not None:
            self.bind_var(v, self.annot(ann, v, f"annotation of %{v.name_hint}"))
        # else: only a function value may refer to its let variable; the variable simply
        # takes the value's type once it is known (no unknown needed).
        push((let, 1))
        if value not in self.types:
            push((value, 0))

    def _exit_let(self, let: Let, stage: int, push: Any) -> None:
        types = self.types
        if stage == 1:
            v = let.var
            vt = types.get(v)
            value_t = types[let.value]
            if vt is None:
                self.record(v, value_t)
            elif vt is not value_t:
                self.unify_at(
                    vt,
                    value_t,
                    let.value if _span(let.value) is not None else let,
                    lambda: (
                        f"let %{v.name_hint} is annotated {self.text(vt)} but its value has type {self.text(value_t)}"
                    ),
                )
            push((let, 2))
            if let.body not in types:
                push((let.body, 0))
        else:
            self.record(let, types[let.body])

    # -- tuples ----------------------------------------------------------------------------
    def _enter_tuple(self, tup: Tuple, push: Any) -> None:
        push((tup, 1))
        types = self.types
        for f in reversed(tup.fields):
            if f not in types:
                push((f, 0))

    def _exit_tuple(self, tup: Tuple, stage: int, push: Any) -> None:
        types = self.types
        self.record(tup, TupleType(tuple(types[f] for f in tup.fields)))

    def _enter_tuple_getitem(self, node: TupleGetItem, push: Any) -> None:
        push((node, 1))
        if node.tuple_value not in self.types:
            push((node.tuple_value, 0))

    def _exit_tuple_getitem(self, node: TupleGetItem, stage: int, push: Any) -> None:
        t = self.types[node.tuple_value]
        if type(t) is IncompleteType:
            t = self.find(t)
        i = node.index
        if type(t) is TupleType:
            if not 0 <= i < len(t.fields):
                raise RelayTypeError(
                    f"tuple index {i} out of range for a {len(t.fields)}-tuple", node.span
                )
            self.record(node, t.fields[i])
        elif type(t) is IncompleteType:
            out = self.fresh()
            self.add_relation(TUPLE_GET_ITEM, (t, out), 1, i, node, f"projection .{i}")
            self.record(node, out)
        else:
            raise RelayTypeError(
                f"cannot take field {i} of a value of type {self.text(t)}: it is not a tuple",
                node.span,
            )

    # -- if / match -------------------------------------------------------------------------
    def _enter_if(self, node: If, push: Any) -> None:
        push((node, 1))
        types = self.types
        for c in (node.false_branch, node.true_branch, node.cond):
            if c not in types:
                push((c, 0))

    def _exit_if(self, node: If, stage: int, push: Any) -> None:
        types = self.types
        ct = self.resolve(types[node.cond])
        if not (type(ct) is TensorType and ct.shape == () and ct.dtype == "bool"):
            try:
                self.unify(ct, BOOL)
            except UnifyError:
                span, notes = _cond_where(node)
                raise RelayTypeError(f"if condition must be bool, found {self.text(ct)}", span, notes) from None
        tt = types[node.true_branch]
        ft = types[node.false_branch]
        if tt is not ft:
            self.unify_at(
                tt,
                ft,
                node,
                lambda: (
                    f"if branches have different types: then-branch {self.text(tt)}, else-branch {self.text(ft)}"
                ),
            )
        self.record(node, tt)

    def _enter_match(self, node: Match, push: Any) -> None:
        push((node, 1))
        if node.data not in self.types:
            push((node.data, 0))

    def _exit_match(self, node: Match, stage: int, push: Any) -> None:
        types = self.types
        if stage == 1:
            dt = types[node.data]
            for clause in node.clauses:
                self.check_pattern(clause.lhs, dt, node)
            push((node, 2))
            for clause in reversed(node.clauses):
                if clause.rhs not in types:
                    push((clause.rhs, 0))
            return
        clauses = node.clauses
        if not clauses:
            t = self.fresh()
        else:
            t = types[clauses[0].rhs]
            for i in range(1, len(clauses)):
                c = clauses[i]
                ct = types[c.rhs]
                if ct is t:
                    continue
                self.unify_at(
                    t,
                    ct,
                    c.rhs if _span(c.rhs) is not None else (c if c.span is not None else node),
                    lambda: (
                        f"match arms have different types: arm 0 has type {self.text(t)}, arm {i} has type {self.text(ct)}"
                    ),
                )
        if node.complete:
            missing = unmatched_cases(node, self.mod)
            if missing:
                raise RelayTypeError(
                    "match expression does not handle the following cases: " + ", ".join(missing),
                    node.span,
                    ("use match? for a match that may fail at run time",),
                )
        self.record(node, t)

    def check_pattern(self, pattern: Any, expected: Any, match: Match) -> None:
        """Type a pattern against the type of the value it matches; binds its variables."""
        stack = [(pattern, expected)]
        while stack:
            p, t = stack.pop()
            cls = type(p)
            if cls is PatternWildcard:
                continue
            if cls is PatternVar:
                v = p.var
                if v.type_annotation is not None:
                    ann = self.annot(v.type_annotation, v, f"annotation of %{v.name_hint}")
                    self.unify_at(
                        ann,
                        t,
                        p if p.span is not None else match,
                        lambda: (
                            f"pattern variable %{v.name_hint} is annotated {self.text(ann)} but matches a value of type {self.text(t)}"
                        ),
                    )
                self.bind_var(v, t)
            elif cls is PatternConstructor:
                ctor = p.constructor
                cft = self.env.ctor_type(ctor)
                mono, _ = self.instantiate(cft, match, ctor.name_hint)
                adt = mono.ret_type
                self.unify_at(
                    t,
                    adt,
                    p if p.span is not None else match,
                    lambda: (
                        f"pattern {ctor.name_hint} matches values of type {type_text(cft.ret_type)}, "
                        f"but the value has type {self.text(t)}"
                    ),
                )
                if len(p.patterns) != len(mono.arg_types):
                    raise RelayTypeError(
                        f"constructor {ctor.name_hint} has {_plural(len(mono.arg_types), 'field')}, "
                        f"but the pattern gives {len(p.patterns)}",
                        p.span or match.span,
                    )
                for sub, ft in zip(reversed(p.patterns), reversed(mono.arg_types)):
                    stack.append((sub, ft))
            elif cls is PatternTuple:
                rt = self.resolve(t)
                n = len(p.patterns)
                if type(rt) is TupleType and len(rt.fields) == n:
                    fields = rt.fields
                else:
                    fields = tuple(self.fresh() for _ in range(n))
                    self.unify_at(
                        t,
                        TupleType(fields),
                        p if p.span is not None else match,
                        lambda: (
                            f"a tuple pattern with {_plural(n, 'field')} cannot match a value of type {self.text(t)}"
                        ),
                    )
                for sub, ft in zip(reversed(p.patterns), reversed(fields)):
                    stack.append((sub, ft))
            else:
                raise RelayTypeError(f"{type(p).__name__} is not a pattern", _span(p) or match.span)

    # -- references -------------------------------------------------------------------------
    def _enter_ref_create(self, node: RefCreate, push: Any) -> None:
        push((node, 1))
        if node.value not in self.types:
            push((node.value, 0))

    def _exit_ref_create(self, node: RefCreate, stage: int, push: Any) -> None:
        self.record(node, RefType(self.types[node.value]))

    def _enter_ref_read(self, node: RefRead, push: Any) -> None:
        push((node, 1))
        if node.ref not in self.types:
            push((node.ref, 0))

    def _exit_ref_read(self, node: RefRead, stage: int, push: Any) -> None:
        rt = self.resolve(self.types[node.ref])
        if type(rt) is RefType:
            self.record(node, rt.value)
            return
        out = self.fresh()
        self.unify_at(
            rt, RefType(out), node, lambda: f"ref_read expects a reference, found {self.text(rt)}"
        )
        self.record(node, out)

    def _enter_ref_write(self, node: RefWrite, push: Any) -> None:
        push((node, 1))
        types = self.types
        for c in (node.value, node.ref):
            if c not in types:
                push((c, 0))

    def _exit_ref_write(self, node: RefWrite, stage: int, push: Any) -> None:
        types = self.types
        rt = self.resolve(types[node.ref])
        vt = types[node.value]

        def message() -> str:
            r = self.resolve(rt)
            if type(r) is RefType:
                return f"ref_write: the reference holds {self.text(r.value)} but the value has type {self.text(vt)}"
            return f"ref_write expects a reference, found {self.text(r)}"

        self.unify_at(rt, RefType(vt), node, message)
        self.record(node, UNIT)

    # -- finishing a unit: defaults, leftover relations, generalization -----------------
    def _fresh_name(self, used: set) -> str:
        while True:
            k = self._names
            self._names += 1
            name = _LETTERS[k % 26] + (str(k // 26) if k >= 26 else "")
            if name not in used:
                used.add(name)
                return name

    def fresh_for(self, param: TypeVar) -> Any:
        default = self.env.literal_params.get(param)
        if default:
            return self.literal_dtype(default)
        return self.fresh(param.kind)

    def default_literals(self, members: list) -> None:
        """Unconstrained literals take their default dtype, except the ones tied by a
        pending relation to a member's parameters: ``def @inc(%x) { %x + 1 }`` keeps the
        literal's dtype polymorphic, so ``@inc`` also works on float32."""
        if not self.literals:
            return
        keep: set = set()
        if members and self.pending:
            resolve = self.resolve
            unsolved = self.unsolved()
            info = []
            by_var: dict = {}
            for idx, p in enumerate(unsolved):
                found: dict = {}
                for a in p.args:
                    collect_vars(resolve(a), found)
                info.append(found)
                for v in found:
                    by_var.setdefault(v, []).append(idx)
            seeds: dict = {}
            for _, fn in members:
                for a in self.fn_pre[fn].arg_types:
                    collect_vars(resolve(a), seeds)
            queue = list(seeds)
            seen = set(queue)
            done: set = set()
            while queue:
                v = queue.pop()
                for idx in by_var.get(v, ()):
                    if idx in done:
                        continue
                    done.add(idx)
                    for w in info[idx]:
                        if w not in seen:
                            seen.add(w)
                            queue.append(w)
            keep = seen
        i = 0
        while i < len(self.literals):  # the list grows when two literals merge
            r = self.find(self.literals[i])
            if type(r) is IncompleteType and r.default and r not in keep:
                self._bind(r, r.default)
            i += 1

    def finish(self, members: list) -> dict:
        """Solve what is left, generalize ``members`` ([(name, Function)]), set checked types.

        Returns {name: generalized FuncType}.
        """
        self.drain()
        self.default_literals(members)
        self.drain()
        unsolved = self.unsolved()
        resolve = self.resolve
        info = []
        by_var: dict = {}
        for idx, p in enumerate(unsolved):
            found: dict = {}
            for a in p.args:
                collect_vars(resolve(a), found, (IncompleteType, TypeVar))
            info.append(found)
            for v in found:
                by_var.setdefault(v, []).append(idx)
            # A relation that cannot be solved although its inputs are fully known.
            inputs: dict = {}
            for a in p.args[: p.num_inputs]:
                collect_vars(resolve(a), inputs, (IncompleteType, TypeVar))
            if not inputs:
                raise RelayTypeError(
                    f"{p.label}: the type relation {p.name} cannot be solved for "
                    + ", ".join(type_text(resolve(a)) for a in p.args[: p.num_inputs]),
                    _span(p.node),
                )
        # Relations that a polymorphic function's `where` clause assumes are discharged.
        discharged: set = set()
        if self.assumptions:
            assumed = {resolve(c) for c in self.assumptions}
            for idx, p in enumerate(unsolved):
                mine = TypeRelation(p.rel, tuple(resolve(a) for a in p.args), p.num_inputs, p.attrs)
                if mine in assumed:
                    discharged.add(idx)
        var_map: dict = {}
        results: dict = {}
        attached: set = set(discharged)
        for name, fn in members:
            ft = resolve(self.fn_pre[fn])
            seeds: dict = {}
            collect_vars(ft, seeds)
            for tp in fn.type_params:
                seeds.setdefault(tp, None)
            order = list(seeds)
            seen = set(order)
            queue = list(order)
            cons_idx: list = []
            cons_seen: set = set()
            while queue:
                v = queue.pop()
                for idx in by_var.get(v, ()):
                    if idx in cons_seen or idx in discharged:
                        continue
                    cons_seen.add(idx)
                    cons_idx.append(idx)
                    for w in info[idx]:
                        if w not in seen:
                            seen.add(w)
                            order.append(w)
                            queue.append(w)
            used = {tp.name_hint for tp in fn.type_params}
            new_params = []
            for v in order:
                if type(v) is IncompleteType:
                    tv = var_map.get(v)
                    if tv is None:
                        tv = var_map[v] = TypeVar(self._fresh_name(used), v.kind)
                        if v.default:
                            # a literal's dtype, polymorphic: instances are literals again
                            self.env.literal_params[tv] = v.default
                    new_params.append(tv)
            cons: list = []
            cons_set: set = set()
            for c in ft.type_constraints:  # the function's own `where` clauses
                c = subst(c, var_map)
                if c not in cons_set:
                    cons_set.add(c)
                    cons.append(c)
            for idx in sorted(cons_idx):
                p = unsolved[idx]
                c = TypeRelation(
                    p.rel, tuple(subst(resolve(a), var_map) for a in p.args), p.num_inputs, p.attrs
                )
                if c not in cons_set:
                    cons_set.add(c)
                    cons.append(c)
            attached.update(cons_idx)
            results[name] = FuncType(
                tuple(subst(a, var_map) for a in ft.arg_types),
                subst(ft.ret_type, var_map),
                tuple(fn.type_params) + tuple(new_params),
                tuple(cons),
                fn.ret_type.span if isinstance(fn.ret_type, (TensorType, FuncType)) else None,
            )
        for idx, p in enumerate(unsolved):
            if idx in attached:
                continue
            if not any(type(v) is IncompleteType for v in info[idx]):
                raise RelayTypeError(
                    f"{p.label}: the type relation {p.name} cannot be solved for the polymorphic types "
                    + ", ".join(type_text(resolve(a)) for a in p.args[: p.num_inputs]),
                    _span(p.node),
                )
        # Everything else: resolve, and name the unknowns nothing could determine.
        used_names: set = {tv.name_hint for tv in var_map.values()}
        for node in self.deferred:
            _set_checked(node, self.zonk(self.types[node], var_map, used_names))
        for node, inst in self.call_inst:
            self.env.type_args[node] = tuple(self.zonk(t, var_map, used_names) for t in inst)
        for name, fn in members:
            _set_checked(fn, results[name])
        return results

    def zonk(self, t: Any, var_map: dict, used: set) -> Any:
        """``t`` fully resolved, with leftover unknowns replaced by type variables."""
        r = self.resolve(t)
        if is_ground(r):
            return r
        found: dict = {}
        collect_vars(r, found)
        for u in found:
            if u not in var_map:
                var_map[u] = TypeVar(self._fresh_name(used), u.kind)
        return subst(r, var_map)


# --- the global call graph -----------------------------------------------------------------


def global_sccs(mod: Any) -> list[list[str]]:
    """Strongly connected components of the global call graph, callees first."""
    names = [gv.name_hint for gv in mod.functions]
    if len(names) <= 1:
        return [names] if names else []
    funcs = {gv.name_hint: fn for gv, fn in mod.functions.items()}
    deps: dict[str, list[str]] = {}
    for name, fn in funcs.items():
        refs: dict = {}
        for node in post_order(fn):
            if type(node) is GlobalVar and node.name_hint in funcs:
                refs.setdefault(node.name_hint, None)
        deps[name] = list(refs)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set = set()
    stack: list[str] = []
    out: list[list[str]] = []
    counter = 0
    order = {n: i for i, n in enumerate(names)}
    for start in names:
        if start in index:
            continue
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        work = [(start, iter(deps[start]))]
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(deps[w])))
                    advanced = True
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                comp.sort(key=order.__getitem__)
                out.append(comp)
    return out


# --- entry points ----------------------------------------------------------------------------


def _guarded(fn: Any) -> Any:
    """Run ``fn()``, turning a stack overflow or a stray Python error into a RelayError."""
    try:
        return fn()
    except RelayError:
        raise
    except RecursionError:
        raise RelayTypeError("type inference ran out of stack on a deeply nested type") from None
    except Exception as e:  # a bug: still no raw traceback for a notebook user
        raise RelayInternalError(
            f"InferType failed unexpectedly ({type(e).__name__}: {e}); please report it"
        ) from e


def infer_module(mod: Any) -> _Env:
    """Type-check every definition of ``mod`` in place (sets ``checked_type`` on its nodes).

    Returns the inference environment: ``.global_types`` (name -> generalized type) and
    ``.type_args`` (Call -> the type arguments inferred for a polymorphic callee).
    """
    env = _Env(mod)

    def run_all() -> None:
        for tdata in mod.type_definitions.values():
            check_type_data(tdata, mod)
            for ctor in tdata.constructors:
                _set_checked(ctor, env.ctor_type(ctor))
        gvars = {gv.name_hint: gv for gv in mod.functions}
        for scc in global_sccs(mod):
            run = _Checker(env)
            members = [(name, mod.functions[gvars[name]]) for name in scc]
            for name, fn in members:
                run.members[name] = run.pre_function(fn)
            for name, fn in members:
                run.check(fn)
            results = run.finish(members)
            for name, t in results.items():
                env.global_types[name] = t
                _set_checked(gvars[name], t)

    with paused_gc():
        _guarded(run_all)
    return env


def infer_type(expr: Expr, mod: Any = None) -> Type:
    """The type of ``expr`` (a function gets its most general type); sets checked types.

    ``mod`` supplies global functions and ADTs; it is type-checked first.

    >>> x = var("x", shape=(2, 3))
    >>> infer_type(Function([x], add(x, x)))      # fn (Tensor[(2, 3), float32]) -> ...
    """
    env = infer_module(mod) if mod is not None else _Env(None)
    run = _Checker(env)

    def run_expr() -> Type:
        if isinstance(expr, Function):
            run.pre_function(expr)
            run.check(expr)
            return run.finish([(None, expr)])[None]
        t = run.check(expr)
        run.finish([])
        if expr._checked_type is not None:
            return expr._checked_type
        return run.zonk(t, {}, set())

    return _guarded(run_expr)


def check_type(expr: Expr, expected: Type, mod: Any = None) -> Type:
    """Infer ``expr``'s type and check that it is ``expected`` (which may contain ``_``)."""
    t = infer_type(expr, mod)
    solver = TypeSolver()
    try:
        solver.unify(expected, t)
    except UnifyError as e:
        raise RelayTypeError(
            f"expected type {type_text(expected)}, found {type_text(t)}", _span(expr), (e.reason,)
        ) from None
    return t


def type_args_of(call: Call, env: _Env) -> tuple:
    """The type arguments inferred for a call of a polymorphic function (or ``()``)."""
    return env.type_args.get(call, call.type_args)


__all__ = [
    "infer_module",
    "infer_type",
    "check_type",
    "global_sccs",
    "TUPLE_GET_ITEM",
    "type_args_of",
]
