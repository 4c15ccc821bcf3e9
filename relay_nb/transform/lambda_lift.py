"""LambdaLift: turn every nested function into a global function (TVM's pass).

Each ``fn`` nested inside a global function is moved to a new global, named
``@lifted_<outer>_<k>``, innermost functions first:

* a function with no free variables becomes the global itself, and its occurrence is
  replaced by the global variable: ``fn (%y) { %y }``  ->  ``@lifted_main_0``;
* a closure with captured (free) variables ``%c1 .. %cn`` becomes a global that takes
  them and *returns the closure*, marked ``Closure=1`` as TVM marks it, and its
  occurrence becomes the call that builds it:
  ``fn (%y) { add(%x, %y) }``  ->  ``@lifted_main_0(%x)`` with
  ``def @lifted_main_0(%x) { fn (%y, Closure=1) { add(%x, %y) } }``;
* a recursive ``let %f = fn (...) { ... %f ... }``: inside the lifted body ``%f`` is
  replaced by the expression that rebuilds the closure (``@lifted_main_0(%c1, ..)``, or
  the global itself when nothing is captured), so the lifted function recurses through
  the global and the ``let`` binds ``%f`` to the rebuilt closure.

The lifted global's parameters are fresh variables (annotated with the captured ones'
types when known: given or inferred), so no variable object is shared between two
globals — TVM reuses the captured variables themselves; here a type cache filled in
one module would then leak into the other.  Type variables free in a lifted function
become its type parameters.  ``Primitive`` and external functions are not
lifted, nor entered.

Input: any well-formed module.  Output: a module whose global functions contain no
nested ``fn`` (other than the returned closure of a lifted one).  Invariants kept: the
value of every global, closures' captured values (captured at the same point: building
the closure is the call); functions without nested functions (same objects).

Module pass, opt level 1, as TVM's.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from ..analysis.free_vars import free_vars
from ..analysis.structure import is_opaque
from ..analysis.type_vars import free_type_vars
from ..ir.expr import Call, Expr, Function, GlobalVar, Let, Var
from ..ir.functor import ExprMutator, post_order, substitute
from ..ir.module import IRModule
from ..util import paused_gc
from .infra import ModulePass, PassInfo, register_pass


def _param(v: Var) -> Var:
    """A fresh parameter for captured ``v``, annotated with its type when known."""
    ty = v.type_annotation if v.type_annotation is not None else v._checked_type
    return Var(v.name_hint, ty, span=v.span)


class _Lifter(ExprMutator):
    def __init__(self, outer: str, taken: set[str], lifted: dict[GlobalVar, Function]):
        super().__init__()
        self.outer, self.taken, self.lifted = outer, taken, lifted
        self.depth = self.k = 0
        self.rec_var: dict[Function, Var] = {}

    def run(self, fn: Function) -> Function:
        for node in post_order(fn):
            if type(node) is Let and type(node.value) is Function:
                self.rec_var[node.value] = node.var
        return self.visit(fn)

    def _name(self) -> str:
        while f"lifted_{self.outer}_{self.k}" in self.taken:
            self.k += 1
        name = f"lifted_{self.outer}_{self.k}"
        self.taken.add(name)
        return name

    def visit_function(self, fn: Function) -> Any:
        # A generator (``yield e`` visits e): nested functions cost no Python stack.
        if is_opaque(fn):
            return fn
        self.depth += 1
        try:
            body = yield fn.body  # inner functions are lifted first
        finally:
            self.depth -= 1
        new = self._rebuild_function(fn, fn.params, body)
        if self.depth == 0:
            return new  # the global function itself
        return self._lift(fn, new)

    def _lift(self, old: Function, new: Function) -> Expr:
        rec = self.rec_var.get(old)
        fvs = free_vars(new)
        captured = tuple(v for v in fvs if v is not rec)
        gv = GlobalVar(self._name())
        # Inside the global, captured variables are its own (fresh) parameters; a
        # recursive let's variable becomes the expression rebuilding the closure.
        params = tuple(_param(v) for v in captured)
        subst: dict[Var, Expr] = dict(zip(captured, params))
        if rec is not None and rec in fvs:
            subst[rec] = Call(gv, params) if params else gv
        if subst:
            new = substitute(new, subst)
        if params:
            inner = new.with_attr("Closure", 1)
            lifted = Function(params, inner, None, tuple(free_type_vars(inner)), span=old.span)
        else:
            lifted = new
            extra = tuple(t for t in free_type_vars(new) if t not in new.type_params)
            if extra:
                lifted = dataclasses.replace(new, type_params=new.type_params + extra)
        self.lifted[gv] = lifted
        return Call(gv, captured) if captured else gv  # what the fn literal becomes


def lambda_lift(mod: IRModule) -> IRModule:
    """A new module with every nested function lifted to a global (see the docstring)."""
    with paused_gc():  # allocation-heavy whole-program job: see util.paused_gc
        return _lambda_lift(mod)


def _lambda_lift(mod: IRModule) -> IRModule:
    taken = {gv.name_hint for gv in mod.functions}
    lifted: dict[GlobalVar, Function] = {}
    updates: dict[GlobalVar, Function] = {}
    for gv, fn in mod.functions.items():
        if is_opaque(fn):
            continue
        new = _Lifter(gv.name_hint, taken, lifted).run(fn)
        if new is not fn:
            updates[gv] = new
    if not updates:
        return mod.copy()
    out = mod.with_functions(updates)
    for gv, fn in lifted.items():
        out.add(gv, fn)
    return out


class LambdaLift(ModulePass):
    """``relay.transform.LambdaLift()``."""

    def __init__(self) -> None:
        super().__init__(lambda mod, ctx: lambda_lift(mod), PassInfo("LambdaLift", 1))

    def __repr__(self) -> str:
        return "LambdaLift()"


register_pass("LambdaLift", LambdaLift)

__all__ = ["LambdaLift", "lambda_lift"]
