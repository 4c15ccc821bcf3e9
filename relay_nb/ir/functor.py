"""Traversals: ``ExprVisitor``, ``ExprMutator`` and a non-recursive ``post_order``.

Both functors memoize by identity (seed 004: "visit expressions with a Map<Expr, Result>
and only compute the transformed result once"), so a DAG is visited once and a mutator
keeps it a DAG; a mutator returns the *same object* when no child changed.

They are subclassable in TVM's style (override ``visit_call``, ``visit_let``, ...) and
never recurse per node, however deep the program (TVM's MixedModeVisitor design, taken
to every kind of node):

* a node whose method is the base class's, and every dataflow node (Call, Tuple,
  TupleGetItem, RefCreate/RefRead/RefWrite), has its children visited first, with an
  explicit stack, so its method's own ``self.visit(child)`` calls hit the memo;
* ``let`` chains are walked in a loop by the default ``visit_let``;
* a scope method a subclass overrides (``visit_let``, ``visit_if``, ``visit_function``,
  ``visit_match``) runs before its children, so it can keep context (a scope table, a
  depth).  Written as a *generator*, ``value = yield child`` visits ``child`` and resumes
  with its result, on the same explicit stack: no Python frame per nesting level, and an
  exception raised below reaches the generator where it waits, as it would with
  recursion.  ``_rebuild_function`` / ``_rebuild_if`` / ``_rebuild_let`` make the node
  again only when something changed::

      def visit_function(self, fn):
          self.depth += 1
          try:
              body = yield fn.body
          finally:
              self.depth -= 1
          return self._rebuild_function(fn, fn.params, body)

  A plain method that calls ``self.visit`` recursively still works, to a few hundred
  levels; deeper, the RecursionError becomes a :class:`RelayError` naming the construct
  that nests and its source line (:func:`nesting_error`).
"""

from __future__ import annotations

import weakref
from collections import Counter
from types import GeneratorType
from typing import Any, Callable, Collection, Iterator, Optional

from ..errors import RelayError
from .expr import (
    Call,
    Clause,
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
    Pattern,
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

_MISSING = object()

DATAFLOW_TYPES = (Call, Tuple, TupleGetItem, RefCreate, RefRead, RefWrite)
_DATAFLOW = frozenset(DATAFLOW_TYPES)


def pattern_vars(pattern: Pattern) -> list[Var]:
    """The variables a pattern binds, left to right (iterative)."""
    out: list[Var] = []
    stack = [pattern]
    while stack:
        p = stack.pop()
        if isinstance(p, PatternVar):
            out.append(p.var)
        elif isinstance(p, (PatternConstructor, PatternTuple)):
            stack.extend(reversed(p.patterns))
    return out


def expr_children(e: Expr) -> tuple[Expr, ...]:
    """The direct sub-expressions of ``e``, in evaluation order (binders included)."""
    t = type(e)
    if t is Call:
        return (e.op, *e.args)
    if t is Tuple:
        return e.fields
    if t is TupleGetItem:
        return (e.tuple_value,)
    if t is Let:
        return (e.var, e.value, e.body)
    if t is Function:
        return (*e.params, e.body)
    if t is If:
        return (e.cond, e.true_branch, e.false_branch)
    if t is Match:
        out: list[Expr] = [e.data]
        for clause in e.clauses:
            out.extend(pattern_vars(clause.lhs))
            out.append(clause.rhs)
        return tuple(out)
    if t is RefCreate:
        return (e.value,)
    if t is RefRead:
        return (e.ref,)
    if t is RefWrite:
        return (e.ref, e.value)
    return ()


def post_order(
    root: Expr,
    *,
    seen: Optional[set] = None,
    stop: Collection = (),
    stopped: Optional[list] = None,
) -> Iterator[Expr]:
    """Every node reachable from ``root`` exactly once, children before parents.

    Iterative: works on arbitrarily deep programs at the default recursion limit.
    ``seen`` (updated) holds nodes not to visit again, e.g. what walks of other roots
    reached; nodes in ``stop`` are neither entered nor yielded but appended to
    ``stopped`` (a pass diff stops where the new program reaches the old one).
    """
    seen = set() if seen is None else seen
    stack: list[tuple[Expr, bool]] = [(root, False)]
    pop, push = stack.pop, stack.append
    while stack:
        node, expanded = pop()
        if expanded:
            yield node
            continue
        if node in seen:
            continue
        seen.add(node)
        if stop and node in stop:
            if stopped is not None:
                stopped.append(node)
            continue
        push((node, True))
        for child in reversed(expr_children(node)):
            if child not in seen:
                push((child, False))


def post_order_visit(root: Expr, fn: Callable[[Expr], Any]) -> None:
    """Call ``fn`` on every node of ``root`` once, in post order (TVM's name)."""
    for node in post_order(root):
        fn(node)


def _dataflow_children(e: Expr) -> tuple[Expr, ...]:
    t = type(e)
    if t is Call:
        return (e.op, *e.args)
    if t is Tuple:
        return e.fields
    if t is TupleGetItem:
        return (e.tuple_value,)
    if t is RefCreate:
        return (e.value,)
    if t is RefRead:
        return (e.ref,)
    if t is RefWrite:
        return (e.ref, e.value)
    return ()


_METHOD = {
    Var: "visit_var",
    GlobalVar: "visit_global_var",
    Constant: "visit_constant",
    MetaRef: "visit_meta_ref",
    Tuple: "visit_tuple",
    TupleGetItem: "visit_tuple_getitem",
    Op: "visit_op",
    Call: "visit_call",
    Function: "visit_function",
    Let: "visit_let",
    If: "visit_if",
    Constructor: "visit_constructor",
    Match: "visit_match",
    RefCreate: "visit_ref_create",
    RefRead: "visit_ref_read",
    RefWrite: "visit_ref_write",
}


def _method_name(cls: type) -> str:
    for klass in cls.__mro__:
        name = _METHOD.get(klass)
        if name is not None:
            return name
    if issubclass(cls, TempExpr):
        return "visit_temp_expr"
    raise RelayError(f"cannot visit a {cls.__name__}: not a Relay expression")


# Per functor class: node type -> the children to visit before its method runs (a
# function of the node), or None to call the method straight away.
_PLANS: "weakref.WeakKeyDictionary[type, dict[type, Any]]" = weakref.WeakKeyDictionary()
_LEAVES = (Var, GlobalVar, Constant, MetaRef, Op, Constructor, TempExpr)


def _plan(cls: type) -> dict[type, Any]:
    plan = _PLANS.get(cls)
    if plan is None:
        plan = _PLANS[cls] = {}
    return plan


def _plan_for(cls: type, plan: dict[type, Any], t: type) -> Any:
    """Children first for a node whose method is the base class's (it reads them from the
    memo) and for dataflow nodes (the documented order); a scope method a subclass
    overrides runs first and visits what it wants, in its own context."""
    name = _method_name(t)
    if issubclass(t, _LEAVES):
        children = None
    elif t in _DATAFLOW:
        children = expr_children
    else:
        names = (name, "visit_clause", "visit_pattern") if name == "visit_match" else (name,)
        own = all(getattr(cls, n) in _DEFAULT_METHODS for n in names)
        children = expr_children if own else None
    plan[t] = children
    return children


# What a too-deep nesting is called in an error message, by node type.
_NESTING_WORDS = {
    If: "if/else expressions",
    Function: "functions (fn inside fn)",
    Let: "let bindings",
    Match: "match expressions",
    Call: "calls",
    Tuple: "tuples",
}


def nesting_error(who: str, nodes: list[Expr]) -> RelayError:
    """The error for a program nested deeper than a recursive traversal can follow:
    names the construct that nests (the kind met most often on the way down, ``nodes``
    outermost first) and where the outermost of them is."""
    kinds = Counter(type(n) for n in nodes if type(n) in _NESTING_WORDS)
    if not kinds:
        return RelayError(f"{who}: the program is nested too deeply to process")
    kind, count = kinds.most_common(1)[0]
    where = next((n.span for n in nodes if type(n) is kind and n.span is not None), None)
    line = f", the outermost on line {where.line}" if where is not None else ""
    return RelayError(
        f"{who}: {_NESTING_WORDS[kind]} nested too deeply (more than {count} levels{line})",
        where,
        notes=(
            "a visitor method that calls self.visit recursively can follow only a few "
            "hundred levels; written as a generator (`value = yield child`) it has no limit",
        ),
    )


def _too_deep(functor: Any, nodes: list[Expr]) -> RelayError:
    name = type(functor).__name__.lstrip("_")
    return nesting_error(name, nodes)


class _Functor:
    """Shared dispatch, memo and stack discipline of ExprVisitor and ExprMutator."""

    def __init__(self) -> None:
        self.memo_map: dict[Expr, Any] = {}
        self._outermost = True

    def visit(self, expr: Expr) -> Any:
        """Visit ``expr`` once (memoized by identity) and return the result."""
        hit = self.memo_map.get(expr, _MISSING)
        if hit is not _MISSING:
            return hit
        if not self._outermost:
            return self._visit_new(expr)
        self._outermost = False
        try:
            return self._visit_new(expr)
        except RecursionError as e:
            raise _too_deep(self, getattr(e, "relay_nodes", [expr])) from None
        finally:
            self._outermost = True

    def _visit_new(self, root: Expr) -> Any:
        """Visit ``root`` with an explicit stack (see the module docstring).

        A stack entry is ``(node, state, child)``: state None = not started, True = its
        children are done (dispatch it now), a generator = its visit method waiting for
        the result of ``child``.
        """
        memo = self.memo_map
        plan = _plan(type(self))
        stack: list[tuple[Expr, Any, Any]] = [(root, None, None)]
        pop, push = stack.pop, stack.append
        while stack:
            node, state, child = pop()
            try:
                if state is None:
                    if node in memo:
                        continue
                    children = plan.get(type(node), _MISSING)
                    if children is _MISSING:
                        children = _plan_for(type(self), plan, type(node))
                    if children is not None:
                        push((node, True, None))
                        for c in reversed(children(node)):
                            if c not in memo:
                                push((c, None, None))
                        continue
                    state, send = self._dispatch(node), None
                elif state is True:
                    if node in memo:
                        continue
                    state, send = self._dispatch(node), None
                else:
                    send = self.visit(child)  # a memo hit, through any override of visit
                if type(state) is not GeneratorType:
                    memo[node] = self._finish(node, state)
                    continue
                self._advance(node, state, send, None, stack)
            except BaseException as exc:  # noqa: BLE001 - handed to the waiting generators
                if isinstance(exc, RecursionError):
                    exc.relay_nodes = [node, *getattr(exc, "relay_nodes", ())]
                _unwind(self, stack, exc)
        return memo[root]

    def _advance(self, node: Expr, gen: Any, send: Any, exc: Any, stack: list) -> None:
        """Run generator method ``gen`` of ``node`` until it waits for an unvisited child
        (pushed on ``stack``) or returns (memoized)."""
        memo = self.memo_map
        while True:
            try:
                child = gen.send(send) if exc is None else gen.throw(exc)
            except StopIteration as stop:
                memo[node] = self._finish(node, stop.value)
                return
            exc = None
            if child in memo:
                send = self.visit(child)
                continue
            stack.append((node, gen, child))
            stack.append((child, None, None))
            return

    def _dispatch(self, expr: Expr) -> Any:
        return getattr(self, _method_name(type(expr)))(expr)

    def _finish(self, expr: Expr, result: Any) -> Any:
        """The result memoized for ``expr``: a hook for subclasses (typed rewriters)."""
        return result

    def _let_overridden(self, base: type) -> bool:
        return type(self).visit_let is not base.visit_let  # type: ignore[attr-defined]


def _unwind(functor: _Functor, stack: list, exc: BaseException) -> None:
    """Hand ``exc`` to the innermost waiting generator (as a recursive visit would have
    raised it there); re-raise it when no generator handles it."""
    while stack:
        node, state, _child = stack.pop()
        if type(state) is GeneratorType:
            try:
                functor._advance(node, state, None, exc, stack)
                return
            except BaseException as again:  # noqa: BLE001
                exc = again
    raise exc


class ExprVisitor(_Functor):
    """A memoizing visitor; override ``visit_<kind>`` methods (results are ignored).

    >>> class CountCalls(ExprVisitor):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.count = 0
    ...     def visit_call(self, call):
    ...         self.count += 1
    ...         super().visit_call(call)
    """

    def visit_var(self, var: Var) -> None:
        pass

    def visit_global_var(self, gv: GlobalVar) -> None:
        pass

    def visit_constant(self, const: Constant) -> None:
        pass

    def visit_op(self, op: Op) -> None:
        pass

    def visit_meta_ref(self, ref: MetaRef) -> None:
        pass

    def visit_constructor(self, con: Constructor) -> None:
        pass

    def visit_tuple(self, tup: Tuple) -> None:
        for f in tup.fields:
            self.visit(f)

    def visit_tuple_getitem(self, t: TupleGetItem) -> None:
        self.visit(t.tuple_value)

    def visit_call(self, call: Call) -> None:
        self.visit(call.op)
        for a in call.args:
            self.visit(a)

    def visit_function(self, fn: Function) -> None:
        for p in fn.params:
            self.visit(p)
        self.visit(fn.body)

    def visit_let(self, let: Let) -> None:
        if self._let_overridden(ExprVisitor):
            self.visit(let.var)
            self.visit(let.value)
            self.visit(let.body)
            return
        # Walk the whole chain in a loop; memoize the inner lets afterwards.
        memo = self.memo_map
        chain = []
        node: Expr = let
        while True:
            chain.append(node)
            self.visit(node.var)
            self.visit(node.value)
            node = node.body
            if type(node) is not Let or node in memo:
                break
        self.visit(node)
        for inner in chain[1:]:
            memo[inner] = None

    def visit_if(self, ite: If) -> None:
        self.visit(ite.cond)
        self.visit(ite.true_branch)
        self.visit(ite.false_branch)

    def visit_match(self, m: Match) -> None:
        self.visit(m.data)
        for clause in m.clauses:
            self.visit_clause(clause)

    def visit_clause(self, clause: Clause) -> None:
        self.visit_pattern(clause.lhs)
        self.visit(clause.rhs)

    def visit_pattern(self, pattern: Pattern) -> None:
        for v in pattern_vars(pattern):
            self.visit(v)

    def visit_ref_create(self, r: RefCreate) -> None:
        self.visit(r.value)

    def visit_ref_read(self, r: RefRead) -> None:
        self.visit(r.ref)

    def visit_ref_write(self, r: RefWrite) -> None:
        self.visit(r.ref)
        self.visit(r.value)

    def visit_temp_expr(self, t: TempExpr) -> None:
        pass


class ExprMutator(_Functor):
    """A memoizing rewriter: each ``visit_<kind>`` returns the new node.

    Defaults rebuild a node only when a child changed, so untouched subtrees come back as
    the same objects and shared nodes stay shared.

    >>> class MulToAdd(ExprMutator):
    ...     def visit_call(self, call):
    ...         new = super().visit_call(call)
    ...         if isinstance(new.op, Op) and new.op.name == "multiply":
    ...             return relay.add(*new.args)
    ...         return new
    """

    def visit_var(self, var: Var) -> Expr:
        return var

    def visit_global_var(self, gv: GlobalVar) -> Expr:
        return gv

    def visit_constant(self, const: Constant) -> Expr:
        return const

    def visit_op(self, op: Op) -> Expr:
        return op

    def visit_meta_ref(self, ref: MetaRef) -> Expr:
        return ref

    def visit_constructor(self, con: Constructor) -> Expr:
        return con

    def visit_tuple(self, tup: Tuple) -> Expr:
        fields = tuple(self.visit(f) for f in tup.fields)
        if all(a is b for a, b in zip(fields, tup.fields)):
            return tup
        return Tuple(fields, span=tup.span)

    def visit_tuple_getitem(self, t: TupleGetItem) -> Expr:
        value = self.visit(t.tuple_value)
        if value is t.tuple_value:
            return t
        return TupleGetItem(value, t.index, span=t.span)

    def visit_call(self, call: Call) -> Expr:
        op = self.visit(call.op)
        args = tuple(self.visit(a) for a in call.args)
        if op is call.op and all(a is b for a, b in zip(args, call.args)):
            return call
        return Call(op, args, call.attrs, call.type_args, span=call.span)

    def visit_function(self, fn: Function) -> Expr:
        params = tuple(self.visit(p) for p in fn.params)
        return self._rebuild_function(fn, params, self.visit(fn.body))

    @staticmethod
    def _rebuild_function(old: Function, params: tuple[Expr, ...], body: Expr) -> Expr:
        if body is old.body and all(a is b for a, b in zip(params, old.params)):
            return old
        return Function(params, body, old.ret_type, old.type_params, old.attrs, span=old.span)  # type: ignore[arg-type]

    def visit_let(self, let: Let) -> Expr:
        if self._let_overridden(ExprMutator):
            return self._rebuild_let(let, self.visit(let.var), self.visit(let.value), self.visit(let.body))
        memo = self.memo_map
        chain = []
        node: Expr = let
        while True:
            chain.append((node, self.visit(node.var), self.visit(node.value)))
            node = node.body
            if type(node) is not Let or node in memo:
                break
        body = self.visit(node)
        for old, var, value in reversed(chain):
            body = self._rebuild_let(old, var, value, body)
            memo[old] = body
        return body

    @staticmethod
    def _rebuild_let(old: Let, var: Expr, value: Expr, body: Expr) -> Expr:
        if var is old.var and value is old.value and body is old.body:
            return old
        return Let(var, value, body, span=old.span)

    def visit_if(self, ite: If) -> Expr:
        cond = self.visit(ite.cond)
        return self._rebuild_if(ite, cond, self.visit(ite.true_branch), self.visit(ite.false_branch))

    @staticmethod
    def _rebuild_if(old: If, cond: Expr, then: Expr, other: Expr) -> Expr:
        if cond is old.cond and then is old.true_branch and other is old.false_branch:
            return old
        return If(cond, then, other, span=old.span)

    def visit_match(self, m: Match) -> Expr:
        data = self.visit(m.data)
        clauses = tuple(self.visit_clause(c) for c in m.clauses)
        if data is m.data and all(a is b for a, b in zip(clauses, m.clauses)):
            return m
        return Match(data, clauses, m.complete, span=m.span)

    def visit_clause(self, clause: Clause) -> Clause:
        lhs = self.visit_pattern(clause.lhs)
        rhs = self.visit(clause.rhs)
        if lhs is clause.lhs and rhs is clause.rhs:
            return clause
        return Clause(lhs, rhs, span=clause.span)

    def visit_pattern(self, pattern: Pattern) -> Pattern:
        if isinstance(pattern, PatternVar):
            new_var = self.visit(pattern.var)
            return pattern if new_var is pattern.var else PatternVar(new_var, span=pattern.span)
        if isinstance(pattern, PatternConstructor):
            subs = tuple(self.visit_pattern(p) for p in pattern.patterns)
            if all(a is b for a, b in zip(subs, pattern.patterns)):
                return pattern
            return PatternConstructor(pattern.constructor, subs, span=pattern.span)
        if isinstance(pattern, PatternTuple):
            subs = tuple(self.visit_pattern(p) for p in pattern.patterns)
            if all(a is b for a, b in zip(subs, pattern.patterns)):
                return pattern
            return PatternTuple(subs, span=pattern.span)
        assert isinstance(pattern, PatternWildcard)
        return pattern

    def visit_ref_create(self, r: RefCreate) -> Expr:
        value = self.visit(r.value)
        return r if value is r.value else RefCreate(value, span=r.span)

    def visit_ref_read(self, r: RefRead) -> Expr:
        ref = self.visit(r.ref)
        return r if ref is r.ref else RefRead(ref, span=r.span)

    def visit_ref_write(self, r: RefWrite) -> Expr:
        ref = self.visit(r.ref)
        value = self.visit(r.value)
        if ref is r.ref and value is r.value:
            return r
        return RefWrite(ref, value, span=r.span)

    def visit_temp_expr(self, t: TempExpr) -> Expr:
        return t.realize()


_DEFAULT_METHODS = frozenset(
    getattr(base, name)
    for base in (ExprVisitor, ExprMutator)
    for name in (*_METHOD.values(), "visit_clause", "visit_pattern", "visit_temp_expr")
)


class _Substitute(ExprMutator):
    def __init__(self, mapping: dict):
        super().__init__()
        self.mapping = mapping

    def visit_var(self, var: Var) -> Expr:
        return self.mapping.get(var, var)


def substitute(expr: Expr, mapping: dict) -> Expr:
    """``expr`` with the variables in ``mapping`` replaced by their expressions.

    Nodes that depend on a replaced variable are rebuilt (without checked types); the
    rest come back as the same objects.  Binders are not renamed, so ``mapping``'s values
    must not be captured by a binder inside ``expr`` (true of constants and fresh vars).
    """
    return _Substitute(mapping).visit(expr)


__all__ = [
    "substitute",
    "nesting_error",
    "ExprVisitor",
    "ExprMutator",
    "post_order",
    "post_order_visit",
    "expr_children",
    "pattern_vars",
    "DATAFLOW_TYPES",
]
