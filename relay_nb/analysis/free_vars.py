"""Free and bound variables (iterative, so deep programs are fine).

``free_vars`` computes each nested function's free variables once, innermost first, and
reuses them for the enclosing function (a nested function counts as the list of its free
variables).  So asking for every closure of a program, as the interpreter does when it
compiles 10,000 nested closures, costs time linear in the program, not quadratic; pass
the same ``cache`` dict to every call for that.
"""

from __future__ import annotations

from typing import Optional

from ..ir.expr import Expr, Function, Let, Match, Var
from ..ir.functor import expr_children, pattern_vars, post_order


def bound_vars(expr: Expr) -> list[Var]:
    """Variables bound inside ``expr`` (parameters, lets, pattern variables), in order."""
    out: list[Var] = []
    for node in post_order(expr):
        if isinstance(node, Function):
            out.extend(node.params)
        elif isinstance(node, Let):
            out.append(node.var)
        elif isinstance(node, Match):
            for clause in node.clauses:
                out.extend(pattern_vars(clause.lhs))
    return out


def all_vars(expr: Expr) -> list[Var]:
    """Every variable that occurs in ``expr``, in post order of first occurrence."""
    return [node for node in post_order(expr) if isinstance(node, Var)]


def free_vars(expr: Expr, cache: Optional[dict[Function, tuple[Var, ...]]] = None) -> list[Var]:
    """Variables used in ``expr`` but not bound in it, in order of first occurrence.

    ``cache`` (Function -> its free variables) is read and filled, so several calls on
    parts of one program share the work.
    """
    cache = {} if cache is None else cache
    for fn in _new_functions(expr, cache):  # innermost first
        cache[fn] = tuple(_free_in(fn, cache))
    if type(expr) is Function:
        return list(cache[expr])
    return _free_in(expr, cache)


def _new_functions(root: Expr, cache: dict) -> list[Function]:
    """The functions in ``root`` (itself included) not in ``cache``, inner before outer;
    a cached function's body is not walked."""
    out: list[Function] = []
    seen: set[Expr] = set()
    stack: list[tuple[Expr, bool]] = [(root, False)]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            out.append(node)  # type: ignore[arg-type]
            continue
        if node in seen:
            continue
        seen.add(node)
        if type(node) is Function:
            if node in cache:
                continue
            stack.append((node, True))
        stack.extend((c, False) for c in reversed(expr_children(node)) if c not in seen)
    return out


def _free_in(root: Expr, cache: dict) -> list[Var]:
    """Free variables of ``root``, a nested (cached) function standing for its own."""
    found: dict[Var, None] = {}  # an ordered set: post order of first occurrence
    bound: set[Var] = set()
    seen: set[Expr] = set()
    stack: list[tuple[Expr, bool]] = [(root, False)]
    while stack:
        node, expanded = stack.pop()
        t = type(node)
        if expanded:
            if t is Var:
                found.setdefault(node)  # type: ignore[arg-type]
            elif t is Function and node is not root:
                for v in cache[node]:
                    found.setdefault(v)
            continue
        if node in seen:
            continue
        seen.add(node)
        stack.append((node, True))
        if t is Function:
            if node is not root:
                continue  # counts as its free variables
            bound.update(node.params)
        elif t is Let:
            bound.add(node.var)
        elif t is Match:
            for clause in node.clauses:
                bound.update(pattern_vars(clause.lhs))
        stack.extend((c, False) for c in reversed(expr_children(node)) if c not in seen)
    return [v for v in found if v not in bound]


__all__ = ["free_vars", "bound_vars", "all_vars"]
