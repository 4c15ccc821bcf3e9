"""Helpers for passes that rewrite type-checked programs and keep them type-checked.

A type-preserving rewrite (folding, simplifying, fusing) can copy each replaced node's
``checked_type`` onto its replacement instead of re-running inference on the whole module.
"""

from __future__ import annotations

from typing import Any

from ..ir.expr import Expr, Function, Let, Op
from ..ir.functor import ExprMutator, post_order
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


def fully_typed(mod: IRModule) -> bool:
    """Whether every expression of ``mod`` has its ``checked_type`` (operators aside: an
    operator's type is its registered polymorphic one, whichever module it is in).  After
    InferType and type-preserving rewrites this says the types are known; a node a rewrite
    built without a type makes it False."""
    for func in mod.functions.values():
        for node in post_order(func):
            if node._checked_type is None and type(node) is not Op:
                return False
    return True


class TypedMutator(ExprMutator):
    """An ExprMutator whose rebuilt nodes keep the ``checked_type`` of the nodes they replace
    (for type-preserving rewrites) and which leaves primitive functions alone."""

    def _finish(self, expr: Expr, new: Expr) -> Expr:
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

    def visit_function(self, fn: Function) -> Any:
        if fn.is_primitive:
            return fn
        params = tuple(self.visit(p) for p in fn.params)  # variables: no recursion
        return self._rebuild_function(fn, params, (yield fn.body))


__all__ = ["TypedMutator", "ensure_typed", "fully_typed"]
