"""ToGraphNormalForm: turn ``let`` bindings back into dataflow (TVM's pass of that name).

Input: any well-formed module, typically in A-normal form.
Output: the same program with each ``let %x = v; body`` replaced by ``body[v/%x]``: every
use of ``%x`` becomes the *same* node ``v``, so a value used n times is one shared node
of a DAG (seed 004: the graph form) and is still computed once.

``ToGraphNormalForm(ToANormalForm(dag))`` is structurally equal to ``dag`` and shares
exactly the nodes ``dag`` shared.

Kept as ``let``s, where TVM's pass (which assumes a pure program) would inline:

* a ``let`` whose (rewritten) value may touch a reference (``ref``, ``ref_read``,
  ``ref_write``, or a call that may run one, see :mod:`relay_nb.analysis.effects`):
  graph form does not say when a node is evaluated, so moving it could reorder, drop
  or repeat an effect.  The analysis is conservative about calls to closures and to
  globals as the module is *before* the pass, so a second run may inline a call that
  the first run's rewriting showed to be pure;
* a recursive ``let`` (its variable occurs in its own value): the value cannot be
  substituted into itself.  TVM rewrites it to ``let %f = v; %f`` at each use; keeping
  the binding in place is equivalent and keeps the program as written.

Invariants kept: the value of every expression (divergence and run-time errors aside:
an unused pure value disappears, as in TVM); the order of reference effects; untouched
subtrees come back as the same objects; a module with nothing to inline comes back
unchanged.  Iterative over ``let`` chains, dataflow and nesting (100,000-deep chains are fine).

Function pass, opt level 1, as TVM's.
"""

from __future__ import annotations

from typing import Any

from ..analysis.effects import Effects
from ..ir.expr import Expr, Function, Let, Var
from ..ir.functor import ExprMutator
from ..ir.module import IRModule
from ..util import paused_gc
from .infra import FunctionPass, PassContext, PassInfo, register_pass


class _ToGraph(ExprMutator):
    def __init__(self, effects: Effects):
        super().__init__()
        self.fx = effects
        self.subst: dict[Var, Expr] = {}
        self.seen_vars: set[Var] = set()

    def visit_var(self, var: Var) -> Expr:
        self.seen_vars.add(var)
        return self.subst.get(var, var)

    def visit_let(self, let: Let) -> Any:
        # The whole chain in a loop: ``let`` chains can be 100,000 deep; a generator
        # (``yield e`` visits e), so lets nested in values cost no Python stack either.
        chain: list[tuple[Let, Expr | None]] = []  # (let, new value if kept)
        node: Expr = let
        while True:
            value = yield node.value
            recursive = node.var in self.seen_vars  # seen while visiting its own value
            if recursive or self.fx.touches_refs(value):  # the rewritten value: more precise
                chain.append((node, value))
            else:
                self.subst[node.var] = value  # let %x = v; body  ->  body[v/%x]
                chain.append((node, None))
            node = node.body
            if type(node) is not Let or node in self.memo_map:
                break
        body = yield node
        for old, value in reversed(chain):
            if value is not None:
                if value is not old.value or body is not old.body:
                    body = Let(old.var, value, body, span=old.span)
                else:
                    body = old
            self.memo_map[old] = body  # an inner let may be shared: rebuild it once
        return body


class ToGraphNormalForm(FunctionPass):
    """``relay.transform.ToGraphNormalForm()``: ``let``s back to dataflow where safe."""

    def __init__(self) -> None:
        self._effects: tuple = (None, None)
        super().__init__(self._convert, PassInfo("ToGraphNormalForm", 1))

    def _convert(self, func: Function, mod: IRModule, ctx: PassContext) -> Function:
        return to_graph_normal_form(func, self._effects_of(mod))

    def _effects_of(self, mod: IRModule) -> Effects:
        if self._effects[0] is not mod:  # computed once per module, not per function
            self._effects = (mod, Effects(mod))
        return self._effects[1]

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        with paused_gc():  # allocation-heavy whole-program job: see util.paused_gc
            try:
                return super().transform_module(mod, ctx)
            finally:
                self._effects = (None, None)

    def __repr__(self) -> str:
        return "ToGraphNormalForm()"


def to_graph_normal_form(expr: Expr, effects: Effects | None = None) -> Expr:
    """``expr`` with its inlinable ``let``s substituted (see the module docstring).

    ``effects`` answers which values touch references; by default it is computed from
    ``expr`` alone (calls to globals then count as effectful if ``expr`` uses refs).
    """
    return _ToGraph(effects if effects is not None else Effects(None, expr)).visit(expr)


register_pass("ToGraphNormalForm", ToGraphNormalForm)

__all__ = ["ToGraphNormalForm", "to_graph_normal_form"]
