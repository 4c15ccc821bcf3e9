"""DeadCodeElimination: remove ``let`` bindings whose variable is never used.

``DeadCodeElimination(inline_once=False, ignore_impurity=False)``, as TVM's:

* ``let %x = v; body`` with ``%x`` unused in ``body`` becomes ``body``, unless evaluating
  ``v`` may write a reference (see :mod:`relay_nb.analysis.effects`; allocating or
  reading a cell that nobody looks at is not observable, so those go too);
* removal cascades: dropping ``v`` releases the variables it used, so a chain of
  bindings that only feed a dead one disappears in the same run (use counts are kept
  per DAG edge and decremented as values are dropped — one pass, no fixpoint loop);
* ``inline_once=True`` also substitutes a variable used exactly once by its value, when
  the value touches no reference and the use is not inside a nested function (moving
  a computation into a closure would repeat it at every call);
* ``ignore_impurity=True`` treats every value as pure (TVM's flag, for programs known
  to have no effects).

Input: any well-formed function.  Output: the same function without dead bindings.
Invariants kept: the program's value and its reference effects (divergence and run-time
errors of a dropped pure value aside, as in TVM); DAG sharing; untouched subtrees (same
objects).  A recursive ``let`` whose variable is used only in its own value is kept
(its count includes that use), and is never inlined.
Iterative over ``let`` chains, dataflow graphs and nesting.

Function pass, opt level 1, as TVM's.
"""

from __future__ import annotations

from typing import Any

from ..analysis.effects import Effects
from ..analysis.structure import use_children as _children
from ..ir.expr import Expr, Function, Let, Var
from ..ir.functor import ExprMutator
from ..ir.module import IRModule
from ..util import paused_gc
from .infra import FunctionPass, PassContext, PassInfo, register_pass


def _use_counts(root: Expr) -> tuple[dict, dict]:
    """Edges into each node (binder positions excluded) and each node's function depth
    (None when a shared node is reached at two depths; only a cost heuristic, since
    only pure values are moved)."""
    count: dict[Expr, int] = {}
    depth: dict[Expr, int | None] = {root: 0}
    stack = [root]
    get = count.get
    while stack:
        node = stack.pop()
        d = depth[node]
        inner = d + 1 if (d is not None and type(node) is Function) else d
        for c in _children(node):
            n = get(c, 0)
            count[c] = n + 1
            if n == 0:
                depth[c] = inner
                stack.append(c)
            elif depth[c] != inner:
                depth[c] = None
    return count, depth


class _DeadCode(ExprMutator):
    def __init__(self, root: Expr, fx: Effects, inline_once: bool, ignore_impurity: bool):
        super().__init__()
        self.count, self.depth = _use_counts(root)
        self.fx, self.inline_once, self.pure = fx, inline_once, ignore_impurity
        self.subst: dict[Var, Expr] = {}
        self.inlined: dict[Var, Expr] = {}

    def visit_var(self, var: Var) -> Expr:
        return self.subst.get(var, var)

    def _release(self, value: Expr) -> None:
        """``value`` is dropped: one edge less into it, cascading to its children."""
        count = self.count
        stack = [value]
        while stack:
            node = stack.pop()
            n = count.get(node, 0) - 1
            count[node] = n
            if n == 0:
                stack.extend(_children(node))
                if node in self.inlined:  # its value was moved to this (dropped) use
                    stack.append(self.inlined[node])

    def _inlinable(self, let: Let) -> bool:
        var, value = let.var, let.value
        return (
            self.count.get(var, 0) == 1
            and self.depth.get(var) is not None
            and self.depth.get(var) == self.depth.get(let)
            and (self.pure or not self.fx.touches_refs(value))
            and var not in _free_in(value)
        )

    def visit_let(self, let: Let) -> Any:
        # The chain in a loop (chains can be 100,000 deep); decisions inner to outer,
        # after the body, so a binding used only by dead ones is dead too.  A generator
        # (``yield e`` visits e), so lets nested in values cost no Python stack either.
        chain: list[tuple[Let, bool]] = []  # (let, inlined?)
        node: Expr = let
        while True:
            inline = self.inline_once and self._inlinable(node)
            if inline:
                self.subst[node.var] = yield node.value  # let %x = v; e[%x] -> e[v]
                self.inlined[node.var] = node.value
            chain.append((node, inline))
            node = node.body
            if type(node) is not Let or node in self.memo_map:
                break
        body = yield node
        memo = self.memo_map
        for old, inlined in reversed(chain):
            if inlined:
                pass
            elif self.count.get(old.var, 0) == 0 and (self.pure or not self.fx.writes(old.value)):
                self._release(old.value)  # let %x = v; e  ->  e   (%x unused)
            else:
                value = yield old.value
                if value is not old.value or body is not old.body:
                    body = Let(old.var, value, body, span=old.span)
                else:
                    body = old
            memo[old] = body  # an inner let may be shared: rebuild it once
        return body


def _free_in(value: Expr) -> set:
    """Variables of ``value`` (only functions can refer to their own let variable)."""
    if type(value) is not Function:
        return set()
    from ..analysis.free_vars import free_vars

    return set(free_vars(value))


def dead_code_elimination(
    func: Expr,
    mod: IRModule | None = None,
    inline_once: bool = False,
    ignore_impurity: bool = False,
) -> Expr:
    """``func`` without dead ``let``s (see the module docstring)."""
    fx = Effects(mod) if mod is not None else Effects(None, func)
    return _DeadCode(func, fx, inline_once, ignore_impurity).visit(func)


class DeadCodeElimination(FunctionPass):
    """``relay.transform.DeadCodeElimination(inline_once=False, ignore_impurity=False)``."""

    # a dropped binding changes no type (rebuilt nodes lose theirs: then InferType runs)
    preserves_types = True

    def __init__(self, inline_once: bool = False, ignore_impurity: bool = False) -> None:
        self.inline_once, self.ignore_impurity = inline_once, ignore_impurity
        self._fx: tuple = (None, None)
        super().__init__(self._run, PassInfo("DeadCodeElimination", 1))

    def _run(self, func: Function, mod: IRModule, ctx: PassContext) -> Function:
        if self._fx[0] is not mod:
            self._fx = (mod, Effects(mod))
        return _DeadCode(func, self._fx[1], self.inline_once, self.ignore_impurity).visit(func)

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        with paused_gc():  # allocation-heavy whole-program job: see util.paused_gc
            try:
                return super().transform_module(mod, ctx)
            finally:
                self._fx = (None, None)

    def __repr__(self) -> str:
        return f"DeadCodeElimination(inline_once={self.inline_once}, ignore_impurity={self.ignore_impurity})"


register_pass("DeadCodeElimination", DeadCodeElimination)

__all__ = ["DeadCodeElimination", "dead_code_elimination"]
