"""Helpers for passes that rewrite type-checked programs and keep them type-checked.

A type-preserving rewrite (folding, simplifying, fusing) can copy each replaced node's
``checked_type`` onto its replacement instead of re-running inference on the whole module.
"""

from __future__ import annotations

from ..ir.expr import Expr, Function, Let
from ..ir.functor import ExprMutator
from ..ir.module import IRModule
from ..typing.infer import infer_module


def ensure_typed(mod: IRModule) -> IRModule:
    """``mod`` if every function is type-checked, else a type-checked copy (no instruments)."""
    if all(
        f._checked_type is not None and f.body._checked_type is not None
        for f in mod.functions.values()
    ):
        return mod
    new = mod.copy()
    infer_module(new)
    return new


class TypedMutator(ExprMutator):
    """An ExprMutator whose rebuilt nodes keep the ``checked_type`` of the nodes they replace
    (for type-preserving rewrites) and which leaves primitive functions alone."""

    def _dispatch(self, expr: Expr) -> Expr:
        new = super()._dispatch(expr)
        if (
            new is not expr
            and isinstance(new, Expr)
            and new._checked_type is None
            and expr._checked_type is not None
        ):
            new.set_checked_type(expr._checked_type)
        return new

    @staticmethod
    def _rebuild_let(old: Let, var: Expr, value: Expr, body: Expr) -> Expr:
        new = ExprMutator._rebuild_let(old, var, value, body)
        if new is not old and old._checked_type is not None:
            new.set_checked_type(old._checked_type)
        return new

    def visit_function(self, fn: Function) -> Expr:
        return fn if fn.is_primitive else super().visit_function(fn)


__all__ = ["TypedMutator", "ensure_typed"]
