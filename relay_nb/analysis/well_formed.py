"""Well-formedness: every variable is bound once and used only inside its scope.

A program is *well formed* (TVM's ``relay.analysis.well_formed``) when

1. each :class:`Var` is bound by exactly one binder in the whole expression (a function
   parameter, a ``let``, a pattern variable) — the same binder *node* shared by a DAG
   counts once, since it is one binding;
2. each use of a variable lies inside the scope of the binder that binds it: a ``let``'s
   variable is visible in its value (recursion) and body, a parameter in its function's
   body, a pattern variable in its clause's right-hand side.  Variables bound nowhere in
   the expression are its free variables and may be used anywhere.

A DAG is well formed when its tree reading is: a node shared between two scopes must
only use variables visible in both.

The check is iterative (an explicit stack of enter/exit events), so 100,000-deep ``let``
chains and 100,000-node dataflow graphs are fine at the default recursion limit.  Each
node is walked once; a shared node met again outside the scope where it was first
walked has its free variables (computed once per node) checked against the scope.
"""

from __future__ import annotations

from ..errors import RelayError
from ..ir.expr import Expr, Function, If, Let, Match, Var
from ..ir.functor import _dataflow_children, expr_children, pattern_vars
from ..ir.module import IRModule
from ..ir.span import Span


class _Problem(Exception):
    def __init__(self, message: str, span: Span | None):
        self.message, self.span = message, span


class _Open(tuple):
    """Stack marker: open a scope binding these variables."""


class _Close(tuple):
    """Stack marker: close the innermost scope, which bound these variables."""


def _check(expr: Expr) -> None:
    binder_of: dict[Var, Expr] = {}
    in_scope: set[Var] = set()
    # Uses not inside a binder of their variable: free variables of ``expr``, or (if the
    # variable is bound somewhere in ``expr``) escapes.  Decided at the end, when every
    # binder is known.
    outside: list[tuple[Var, Expr]] = []
    # A node first walked in scope s needs no new check when met again while s is still
    # open (the environment only grew since); otherwise its free variables are checked.
    open_scopes: set[int] = {0}
    scope_stack = [0]
    first_scope: dict[Expr, int] = {}
    fv_cache: dict[Expr, frozenset] = {}
    next_id = 1
    stack: list = [expr]
    pop, push = stack.pop, stack.append
    while stack:
        node = pop()
        t = type(node)
        if t is Var:
            if node not in in_scope:
                outside.append((node, node))
            continue
        if t is _Open:
            scope_stack.append(next_id)
            open_scopes.add(next_id)
            next_id += 1
            in_scope.update(node)
            continue
        if t is _Close:
            in_scope.difference_update(node)
            open_scopes.discard(scope_stack.pop())
            continue
        s = first_scope.get(node)
        if s is not None:
            if s not in open_scopes:
                outside.extend((v, node) for v in _free_vars(node, fv_cache) if v not in in_scope)
            continue
        first_scope[node] = scope_stack[-1]
        if t is Let:
            _scope(push, binder_of, node, (node.var,), (node.value, node.body))
        elif t is Function:
            _scope(push, binder_of, node, node.params, (node.body,))
        elif t is Match:
            for clause in reversed(node.clauses):
                _scope(push, binder_of, node, pattern_vars(clause.lhs), (clause.rhs,))
            push(node.data)
        elif t is If:
            push(node.false_branch)
            push(node.true_branch)
            push(node.cond)
        else:
            stack.extend(reversed(_dataflow_children(node)))
    for var, where in outside:
        if var in binder_of:
            shared = (
                f" (in a {type(where).__name__} shared with another scope)"
                if where is not var
                else ""
            )
            raise _Problem(
                f"variable %{var.name_hint} is used outside the scope that binds it{shared}",
                where.span or var.span,
            )


def _scope(push, binder_of: dict, node: Expr, binds, children: tuple) -> None:
    """Record ``node``'s binders; schedule: open a scope, visit ``children``, close it."""
    for v in binds:
        other = binder_of.setdefault(v, node)
        if other is not node:
            raise _Problem(
                f"variable %{v.name_hint} is bound twice (by a {type(other).__name__} "
                f"and by a {type(node).__name__})",
                node.span or v.span,
            )
    push(_Close(binds))
    for c in reversed(children):
        push(c)
    push(_Open(binds))


_EMPTY: frozenset = frozenset()


def _free_vars(root: Expr, cache: dict) -> frozenset:
    """Free variables of ``root``, memoized for every node of its subgraph (so checking
    many shared nodes costs one bottom-up pass, not one walk each)."""
    stack: list[tuple[Expr, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        if node in cache:
            continue
        kids = expr_children(node)
        if not done:
            stack.append((node, True))
            stack.extend((k, False) for k in kids if k not in cache)
            continue
        t = type(node)
        if t is Var:
            cache[node] = frozenset((node,))
            continue
        acc = _EMPTY
        for k in kids:
            fv = cache[k]
            if fv and fv is not acc and not fv <= acc:
                acc = fv if not acc else acc | fv
        if t is Let:
            binders: tuple = (node.var,)
        elif t is Function:
            binders = node.params
        elif t is Match:
            binders = tuple(v for c in node.clauses for v in pattern_vars(c.lhs))
        else:
            binders = ()
        if binders and not acc.isdisjoint(binders):
            acc = acc.difference(binders)
        cache[node] = acc
    return cache[root]


def check_well_formed(expr: Expr | IRModule) -> None:
    """Raise a :class:`RelayError` naming the variable and where, unless well formed.

    >>> check_well_formed(relay.parse_expr("fn (%x) { %x }"))   # fine: returns None
    """
    if isinstance(expr, IRModule):
        for gv, func in expr.functions.items():
            try:
                _check(func)
            except _Problem as p:
                raise RelayError(
                    f"@{gv.name_hint} is not well formed: {p.message}", p.span
                ) from None
        return
    try:
        _check(expr)
    except _Problem as p:
        raise RelayError(f"not well formed: {p.message}", p.span) from None


def well_formed(expr: Expr | IRModule) -> bool:
    """Whether ``expr`` (or every function of a module) is well formed, as TVM's
    ``relay.analysis.well_formed``: each variable bound once, used only in its scope.

    >>> well_formed(relay.parse_expr("fn (%x) { let %y = %x; %y }"))
    True
    """
    try:
        check_well_formed(expr)
    except RelayError:
        return False
    return True


__all__ = ["check_well_formed", "well_formed"]
