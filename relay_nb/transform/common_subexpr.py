"""EliminateCommonSubexpr: compute each operator call once (TVM's CSE pass).

``EliminateCommonSubexpr(fskip=None)``: two calls of the same operator with the same
attributes, the same type arguments and the same arguments become one node — the first
one met — so the rewritten program is a DAG that computes the value once (seed 004:
sharing is how a graph says "compute once").  Arguments are compared by *identity after
rewriting*, so merging proceeds bottom-up through a whole expression tree; scalar
constants compare by value (``add(%x, 1f)`` twice is one node, as TVM's
``IsEqualScalar``).  Projections ``t.i`` of the same tuple node are merged too.

* Only operator calls and projections are merged: calls to functions, globals,
  constructors and the reference operations are never merged (a function may have
  effects; ``ref(0)`` twice is two cells).
* Scope: a call is replaced only by an equal one already visited in the same block or
  an enclosing one (function body, ``if`` branch, ``match`` arm): the enclosing block
  computes that value anyway.  So a value computed in one branch is never reused from
  the other branch, and a closure's value is never reused outside the closure.  Since
  arguments are identical objects, a merged node never uses a variable outside its
  scope.
* ``fskip(call) -> bool``: calls for which it returns True are left alone (TVM's hook,
  e.g. to keep casts apart).
* ``Primitive`` functions (fused kernels) are not entered.

Input: any well-formed function.  Output: the same function with duplicates merged.
Invariants kept: values of all expressions; untouched subtrees (same objects); existing
sharing.  Iterative over ``let`` chains, dataflow graphs and nesting (the scope methods
are generators).

Function pass, opt level 3, requires InferType (as TVM's).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..analysis.structure import is_opaque
from ..ir.expr import Call, Clause, Constant, Expr, Function, If, Match, Op, TupleGetItem
from ..ir.functor import ExprMutator
from ..ir.module import IRModule
from ..util import paused_gc
from .infra import FunctionPass, PassContext, PassInfo, register_pass


def _arg_key(arg: Expr) -> Any:
    if type(arg) is Constant and arg.data.ndim == 0:
        data = arg.data
        return ("const", data.dtype.str, data.tobytes(), arg.is_literal)
    return arg  # Expr hashing is by identity


class _CSE(ExprMutator):
    def __init__(self, fskip: Callable[[Expr], bool] | None):
        super().__init__()
        self.fskip = fskip
        self.table: dict[Any, Expr] = {}
        self.added: list[list[Any]] = [[]]  # keys added in each open block

    # -- blocks --------------------------------------------------------------------------
    def _block(self, expr: Expr) -> Any:
        """Visit ``expr`` in a block of its own (a generator: ``yield from`` it)."""
        self.added.append([])
        try:
            return (yield expr)
        finally:
            for key in self.added.pop():
                del self.table[key]

    def _reuse(self, key: Any, new: Expr) -> Expr:
        hit = self.table.get(key)
        if hit is not None:
            return hit  # the equal node met first
        self.table[key] = new
        self.added[-1].append(key)
        return new

    # -- merged nodes ----------------------------------------------------------------------
    def visit_call(self, call: Call) -> Expr:
        new = super().visit_call(call)
        if type(new.op) is not Op or not new.args or (self.fskip is not None and self.fskip(new)):
            return new
        key = (new.op, tuple(_arg_key(a) for a in new.args), new.attrs, new.type_args)
        return self._reuse(key, new)

    def visit_tuple_getitem(self, t: TupleGetItem) -> Expr:
        new = super().visit_tuple_getitem(t)
        if self.fskip is not None and self.fskip(new):
            return new
        return self._reuse(("proj", new.tuple_value, new.index), new)

    # -- scopes (generators: nesting depth costs no Python stack) ----------------------------
    def visit_function(self, fn: Function) -> Any:
        if is_opaque(fn):
            return fn
        body = yield from self._block(fn.body)
        return self._rebuild_function(fn, fn.params, body)

    def visit_if(self, ite: If) -> Any:
        cond = yield ite.cond
        then = yield from self._block(ite.true_branch)
        other = yield from self._block(ite.false_branch)
        return self._rebuild_if(ite, cond, then, other)

    def visit_match(self, m: Match) -> Any:
        data = yield m.data
        clauses = []
        for c in m.clauses:
            rhs = yield from self._block(c.rhs)
            clauses.append(c if rhs is c.rhs else Clause(c.lhs, rhs, span=c.span))
        if data is m.data and all(a is b for a, b in zip(clauses, m.clauses)):
            return m
        return Match(data, tuple(clauses), m.complete, span=m.span)


def eliminate_common_subexpr(expr: Expr, fskip: Callable[[Expr], bool] | None = None) -> Expr:
    """``expr`` with equal operator calls merged (see the module docstring)."""
    return _CSE(fskip).visit(expr)


class EliminateCommonSubexpr(FunctionPass):
    """``relay.transform.EliminateCommonSubexpr(fskip=None)``."""

    # an expression is replaced by an equal one (rebuilt nodes lose their types: then
    # InferType runs again)
    preserves_types = True

    def __init__(self, fskip: Callable[[Expr], bool] | None = None) -> None:
        self.fskip = fskip
        super().__init__(self._run, PassInfo("EliminateCommonSubexpr", 3, ("InferType",)))

    def _run(self, func: Function, mod: IRModule, ctx: PassContext) -> Function:
        return _CSE(self.fskip).visit(func)

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        with paused_gc():  # allocation-heavy whole-program job: see util.paused_gc
            return super().transform_module(mod, ctx)

    def __repr__(self) -> str:
        return "EliminateCommonSubexpr()"


register_pass("EliminateCommonSubexpr", EliminateCommonSubexpr)

__all__ = ["EliminateCommonSubexpr", "eliminate_common_subexpr"]
