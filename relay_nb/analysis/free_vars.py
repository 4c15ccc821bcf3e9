"""Free and bound variables (iterative, so deep programs are fine)."""

from __future__ import annotations

from ..ir.expr import Expr, Function, Let, Match, Var
from ..ir.functor import pattern_vars, post_order


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


def free_vars(expr: Expr) -> list[Var]:
    """Variables used in ``expr`` but not bound in it, in order of first occurrence."""
    bound = set(bound_vars(expr))
    return [v for v in all_vars(expr) if v not in bound]


__all__ = ["free_vars", "bound_vars", "all_vars"]
