"""The expression graph a view draws: each node's children with their roles, a post
order, and the scope (cluster) each node is placed in.

Scopes are the places a value can be computed in: a function body, an ``if`` branch, a
``match`` clause (seed 004, "Let Binding and Scopes").  Scope 0 is the drawing itself.
A node is placed in the innermost scope enclosing all of its uses, the rule ToANormalForm
uses to bind it — so a value used only in one branch sits in that branch's cluster and a
value shared by both branches sits outside.  A function node is drawn inside its own
body's cluster (its parameters too), so a closure reads as one box.

Everything here is iterative: 100,000-node programs are fine.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..ir.expr import (
    Call,
    Expr,
    Function,
    If,
    Let,
    Match,
    RefCreate,
    RefRead,
    RefWrite,
    Tuple,
    TupleGetItem,
)
from ..ir.functor import pattern_vars
from ..util import ByClass

# (child, role, index, sub): ``sub`` is the parent's sub-scope the child is used in
# (-1: the parent's own scope).  Roles "param" and "bind" are binders: they place a
# variable but are not drawn as edges.
Child = tuple[Expr, str, int, int]

# Deeper scopes than this are drawn inside their ancestor (dot gets slow and the
# picture unreadable long before).
MAX_CLUSTER_DEPTH = 24
MAX_CLUSTERS = 400


def _call_children(node: Call) -> list[Child]:
    out: list[Child] = [(a, "arg", i, -1) for i, a in enumerate(node.args)]
    out.append((node.op, "callee", 0, -1))
    return out


def _function_children(node: Function) -> list[Child]:
    # The body first: a post order then reaches each parameter at its first use, so a
    # drawing cut after N nodes shows the first layers, not a list of parameters.
    out = [(node.body, "body", 0, 0)]
    out.extend((p, "param", i, 0) for i, p in enumerate(node.params))
    return out


def _match_children(node: Match) -> list[Child]:
    out = [(node.data, "data", 0, -1)]
    for k, clause in enumerate(node.clauses):
        out.extend((v, "bind", k, k) for v in pattern_vars(clause.lhs))
        out.append((clause.rhs, "clause", k, k))
    return out


def _no_children(node: Expr) -> list[Child]:
    return []


# What to ask each node class, found through its bases once per class (a walk asks
# twice per node).
_CHILDREN = ByClass({
    Call: _call_children,
    Let: lambda n: [(n.var, "var", 0, -1), (n.value, "value", 0, -1), (n.body, "body", 0, -1)],
    Tuple: lambda n: [(f, "field", i, -1) for i, f in enumerate(n.fields)],
    TupleGetItem: lambda n: [(n.tuple_value, "tuple", n.index, -1)],
    Function: _function_children,
    If: lambda n: [(n.cond, "cond", 0, -1), (n.true_branch, "then", 0, 0),
                   (n.false_branch, "else", 0, 1)],  # fmt: skip
    Match: _match_children,
    RefCreate: lambda n: [(n.value, "value", 0, -1)],
    RefRead: lambda n: [(n.ref, "ref", 0, -1)],
    RefWrite: lambda n: [(n.ref, "ref", 0, -1), (n.value, "value", 0, -1)],
}, lambda cls: _no_children)  # fmt: skip
_SUBSCOPES = ByClass({
    Function: lambda n: 1,
    If: lambda n: 2,
    Match: lambda n: len(n.clauses),
}, lambda cls: _none)  # fmt: skip


def children(node: Expr) -> list[Child]:
    """The sub-expressions of ``node`` with their roles, in evaluation order."""
    return _CHILDREN[type(node)](node)


def n_subscopes(node: Expr) -> int:
    """How many scopes ``node`` opens: a function's body, an if's branches, the clauses."""
    return _SUBSCOPES[type(node)](node)


def _none(node: Expr) -> int:
    return 0


@dataclass
class Scope:
    """A cluster: the sub-scope ``index`` of ``owner`` (None for the drawing itself)."""

    parent: int
    depth: int
    owner: Any = None
    index: int = 0


@dataclass
class Walk:
    """The result of :func:`walk`."""

    order: list[Expr]  # post order: children before parents
    kids: dict[Expr, list[Child]]
    scopes: list[Scope] = field(default_factory=list)
    scope_of: dict[Expr, int] = field(default_factory=dict)  # where the node is drawn
    subs: dict[Expr, tuple[int, ...]] = field(default_factory=dict)


def walk(roots: list[Expr]) -> Walk:
    """Post order of everything reachable from ``roots`` (each node once), with each
    node's children."""
    order: list[Expr] = []
    kids: dict[Expr, list[Child]] = {}
    emit = order.append
    for root in roots:
        if root in kids:
            continue
        stack: list[tuple[Expr, bool]] = [(root, False)]
        pop, push = stack.pop, stack.append
        while stack:
            node, expanded = pop()
            if expanded:
                emit(node)
                continue
            if node in kids:
                continue
            ks = kids[node] = children(node)
            push((node, True))
            for child, _, _, _ in reversed(ks):
                if child not in kids:
                    push((child, False))
    result = Walk(order, kids)
    _place(result, roots)
    return result


def _lca(scopes: list[Scope], a: int, b: int) -> int:
    while scopes[a].depth > scopes[b].depth:
        a = scopes[a].parent
    while scopes[b].depth > scopes[a].depth:
        b = scopes[b].parent
    while a != b:
        a, b = scopes[a].parent, scopes[b].parent
    return a


def _place(w: Walk, roots: list[Expr]) -> None:
    """Assign scopes in reverse post order (every node after all of its users)."""
    scopes = w.scopes
    scopes.append(Scope(parent=-1, depth=0))
    scope_of = w.scope_of  # first: where the node's uses are; then: where it is drawn
    for root in roots:
        scope_of.setdefault(root, 0)
    for node in reversed(w.order):
        s = scope_of.setdefault(node, 0)
        n = n_subscopes(node)
        if n:
            if scopes[s].depth >= MAX_CLUSTER_DEPTH or len(scopes) + n > MAX_CLUSTERS:
                subs = (s,) * n
            else:
                subs = []
                for k in range(n):
                    scopes.append(Scope(parent=s, depth=scopes[s].depth + 1, owner=node, index=k))
                    subs.append(len(scopes) - 1)
                subs = tuple(subs)
            w.subs[node] = subs
            if isinstance(node, Function):
                s = scope_of[node] = subs[0]
        else:
            subs = ()
        for child, _role, _index, sub in w.kids[node]:
            target = subs[sub] if sub >= 0 else s
            old = scope_of.get(child)
            scope_of[child] = target if old is None or old == target else _lca(scopes, old, target)


__all__ = ["Child", "Scope", "Walk", "children", "walk"]
