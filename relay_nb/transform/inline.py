"""Inline: replace calls to global functions by their bodies (TVM's ``InlineGlobals``).

``Inline()`` inlines the globals whose function carries the attribute ``Inline=1``, as
TVM's pass; ``Inline(all_non_recursive=True)`` inlines every global that is not
recursive (not in a cycle of the call graph), which is how a course shows a whole
program collapsing into ``@main``.

A call ``@f(a1, ..., an)`` whose callee is inlinable and whose arity matches becomes a
fresh copy of ``@f``'s body, in which

* a parameter whose argument is an atom (variable, constant, global, operator,
  constructor) is replaced by that atom;
* any other argument is bound by a ``let`` to a fresh variable named after the
  parameter, in argument order — so it is still evaluated exactly once, before the
  body, whatever the body does with it (run ToGraphNormalForm afterwards to get graph
  form back);
* every variable bound inside the body gets a fresh copy, so the result stays well
  formed however many times a function is inlined; nodes that touch references are
  copied too (a shared ``ref(0)`` would be one cell where the program had two);
* a big body (more than ``SMALL`` nodes) whose global is called from one place only is
  moved there rather than copied, all its parameters bound by ``let``s: the global
  goes away, and inlining a chain of globals stays linear.

Callees are processed before callers (strongly connected components of the call graph,
callees first), so inlining is transitive in one run.  Globals that were inlined and are
no longer referenced are removed from the module, except ``@main``.  Primitive and
external (``Compiler``) functions are never inlined.

Invariants kept: the value and the effects of ``@main`` and of every remaining global;
functions without inlinable calls (same objects).  Iterative over ``let`` chains and
dataflow graphs.

Module pass, opt level 1, named ``InlineGlobals`` as in TVM (also registered as
``Inline``).
"""

from __future__ import annotations

import dataclasses

from ..analysis.call_graph import CallGraph
from ..analysis.effects import Effects
from ..analysis.free_vars import bound_vars
from ..analysis.structure import ATOMS, is_opaque
from ..ir.expr import (
    Call,
    Expr,
    Function,
    GlobalVar,
    Let,
    RefCreate,
    RefRead,
    RefWrite,
    Var,
)
from ..ir.functor import ExprMutator
from ..ir.module import IRModule
from ..util import paused_gc
from .infra import ModulePass, PassInfo, register_pass


class _Copy(ExprMutator):
    """A copy of a body: parameters substituted, binders renamed, effects duplicated."""

    def __init__(self, subst: dict[Var, Expr], bound: set[Var], fx: Effects):
        super().__init__()
        self.subst, self.bound, self.fx = subst, bound, fx

    def visit_var(self, var: Var) -> Expr:
        if var in self.bound:
            return Var(var.name_hint, var.type_annotation, span=var.span)  # memoized: once per var
        return self.subst.get(var, var)

    def _fresh(self, old: Expr, new: Expr) -> Expr:
        if new is old and self.fx.touches_refs(old):
            return dataclasses.replace(old)
        return new

    def visit_call(self, call: Call) -> Expr:
        return self._fresh(call, super().visit_call(call))

    def visit_ref_create(self, r: RefCreate) -> Expr:
        return self._fresh(r, super().visit_ref_create(r))

    def visit_ref_read(self, r: RefRead) -> Expr:
        return self._fresh(r, super().visit_ref_read(r))

    def visit_ref_write(self, r: RefWrite) -> Expr:
        return self._fresh(r, super().visit_ref_write(r))


SMALL = 200
"""Bodies up to this many nodes are copied with atoms substituted; a bigger body called
from its only call site is moved there instead (parameters bound by lets), which keeps
inlining linear in the size of the module (a chain of globals each calling the last)."""


class _Inliner(ExprMutator):
    def __init__(self, bodies: dict[str, Function], graph: CallGraph, fx: Effects):
        super().__init__()
        self.bodies, self.graph, self.fx = bodies, graph, fx
        self.inlined: set[str] = set()
        self.added = 0  # nodes brought in, for the size of the result

    def visit_call(self, call: Call) -> Expr:
        new = super().visit_call(call)
        op = new.op
        if type(op) is not GlobalVar or op.name_hint not in self.bodies:
            return new
        name = op.name_hint
        callee = self.bodies[name]
        if len(callee.params) != len(new.args):
            return new
        self.inlined.add(name)
        size = self.graph.size[name]
        self.added += size
        if size > SMALL and name != "main" and self.graph.called_once(name):
            # @f(a..)  ->  let %p = a; ..; body   (the body itself: @f goes away)
            body = callee.body
            for param, arg in reversed(tuple(zip(callee.params, new.args))):
                body = Let(param, arg, body, span=new.span)
            return body
        subst: dict[Var, Expr] = {}
        lets: list[tuple[Var, Expr]] = []
        for param, arg in zip(callee.params, new.args):
            if isinstance(arg, ATOMS):
                subst[param] = arg  # @f(%x)  ->  body[%x/%p]
            else:
                fresh = Var(param.name_hint, param.type_annotation, span=param.span)
                lets.append((fresh, arg))  # @f(e)  ->  let %p = e; body[%p]
                subst[param] = fresh
        body = _Copy(subst, set(bound_vars(callee.body)), self.fx).visit(callee.body)
        for var, value in reversed(lets):
            body = Let(var, value, body, span=new.span)
        return body


def inline(mod: IRModule, all_non_recursive: bool = False) -> IRModule:
    """A new module with inlinable global calls inlined (see the module docstring)."""
    with paused_gc():  # allocation-heavy whole-program job: see util.paused_gc
        return _inline(mod, all_non_recursive)


def _inline(mod: IRModule, all_non_recursive: bool) -> IRModule:
    graph = CallGraph(mod)
    fx = Effects(mod)
    wanted = {
        gv.name_hint
        for gv, fn in mod.functions.items()
        if gv.name_hint not in graph.recursive
        and not is_opaque(fn)
        and (all_non_recursive or int(fn.attrs.get("Inline", 0)) == 1)
    }
    bodies: dict[str, Function] = {}  # inlinable callees, already inlined into
    updates: dict[GlobalVar, Function] = {}
    inlined: set[str] = set()
    for scc in graph.sccs:  # callees first
        for name in scc:
            gv = mod.get_global_var(name)
            fn = mod.functions[gv]
            if not is_opaque(fn):
                inliner = _Inliner(bodies, graph, fx)
                new = inliner.visit(fn)
                inlined |= inliner.inlined
                graph.size[name] += inliner.added
                if new is not fn:
                    updates[gv] = new
                    fn = new
            if name in wanted:
                bodies[name] = fn
    if not updates:
        return mod.copy()
    out = mod.with_functions(updates)
    # Inlined globals nobody refers to any more go (a moved body must: it lives on in its
    # caller now).
    for name in CallGraph(out).unreferenced(inlined):
        out.remove(name)
    return out


class Inline(ModulePass):
    """``relay.transform.Inline()``; ``Inline(all_non_recursive=True)`` inlines every
    non-recursive global."""

    def __init__(self, all_non_recursive: bool = False) -> None:
        self.all_non_recursive = all_non_recursive
        super().__init__(
            lambda mod, ctx: inline(mod, self.all_non_recursive), PassInfo("InlineGlobals", 1)
        )

    def __repr__(self) -> str:
        return f"Inline(all_non_recursive={self.all_non_recursive})"


register_pass("InlineGlobals", Inline)
register_pass("Inline", Inline)

__all__ = ["Inline", "inline"]
