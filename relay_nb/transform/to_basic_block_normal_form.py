"""ToBasicBlockNormalForm: ``let``-bind exactly the values used in more than one block.

A *block* is a scope: a function body, an ``if`` branch, a ``match`` arm, a ``let`` body
(as in TVM's dependency graph), the whole function.  In graph form a node shared by two
blocks has no evident place of evaluation (seed 004: "we don't know where we should
compute %1"); basic block normal form fixes one and changes nothing else:

* a node used in two or more blocks gets a new ``let`` at the head of the innermost block
  enclosing all its uses (ToANormalForm's placement): computed once, before the
  branches or closures that use it;
* every other node stays where it is: inside a block the program is a dataflow graph,
  and nodes shared within one block stay shared;
* new bindings appear in evaluation order, after the bindings they depend on;
* when the module uses references, every operand that may touch one is bound too, so
  hoisting a shared value never moves it across an effect of its block.

Input: any well-formed module.  Output: the same program in basic block normal form;
running the pass again changes nothing (a new binding starts a block, which may split
a node's uses, so the pass repeats until nothing more is bound).  A-normal form and
tree-shaped programs come back as the same objects.  Invariants kept: the meaning, the
order of reference effects, existing ``let``s, untouched subtrees (same objects),
opaque functions.  Iterative over ``let`` chains, dataflow graphs and nesting.

Opt level 1, as TVM's (a module pass there, converting each function; a FunctionPass here).
"""

from __future__ import annotations

from typing import Any

from ..analysis.blocks import Blocks
from ..analysis.effects import Effects
from ..analysis.structure import is_opaque
from ..ir.expr import (
    Call,
    Clause,
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
    Var,
)
from ..ir.functor import ExprMutator
from ..ir.module import IRModule
from ..util import paused_gc
from .infra import FunctionPass, PassContext, PassInfo, register_pass


class _Rebuild(ExprMutator):
    """Pass 2: rebuild, binding ``blocks.bind`` nodes at the head of their block."""

    def __init__(self, blocks: Blocks):
        super().__init__()
        self.b = blocks
        self.lists: dict[int, list[tuple[int, Var, Expr]]] = {}

    def run(self, expr: Expr) -> Expr:
        """``expr`` rebuilt as the root block (block 0)."""
        self.lists[0] = []
        new = self.visit(expr)
        return self._wrap(self.lists.pop(0), new)

    def in_block(self, block: int, expr: Expr) -> Any:
        """Visit ``expr`` as ``block`` (a generator, as the scope methods below are:
        ``yield e`` visits e, so nesting costs no Python stack)."""
        self.lists[block] = []
        new = yield expr
        return self._wrap(self.lists.pop(block), new)

    def _bound(self, old: Expr, new: Expr) -> Expr:
        if old not in self.b.cross:
            return new
        var = Var("x", span=old.span)
        self.lists[self.b.block[old]].append((self.b.index[old], var, new))
        return var

    @staticmethod
    def _wrap(bindings: list, body: Expr) -> Expr:
        # The functor visits dataflow operands before sibling ifs/lets/functions: sort
        # back into evaluation order (a post order, so dependencies come first).
        bindings.sort(key=lambda b: b[0])
        for _, var, value in reversed(bindings):
            body = Let(var, value, body)
        return body

    # dataflow nodes: as the base class does, then maybe bound
    def visit_call(self, n: Call) -> Expr:
        return self._bound(n, super().visit_call(n))

    def visit_tuple(self, n: Tuple) -> Expr:
        return self._bound(n, super().visit_tuple(n))

    def visit_tuple_getitem(self, n: TupleGetItem) -> Expr:
        return self._bound(n, super().visit_tuple_getitem(n))

    def visit_ref_create(self, n: RefCreate) -> Expr:
        return self._bound(n, super().visit_ref_create(n))

    def visit_ref_read(self, n: RefRead) -> Expr:
        return self._bound(n, super().visit_ref_read(n))

    def visit_ref_write(self, n: RefWrite) -> Expr:
        return self._bound(n, super().visit_ref_write(n))

    # scopes
    def visit_function(self, fn: Function) -> Any:
        if is_opaque(fn):
            return self._bound(fn, fn)
        body = yield from self.in_block(self.b.subs[fn][0], fn.body)
        if body is not fn.body:
            fn = Function(fn.params, body, fn.ret_type, fn.type_params, fn.attrs, span=fn.span)
        return self._bound(fn, fn)

    def visit_if(self, ite: If) -> Any:
        cond = yield ite.cond
        a, b = self.b.subs[ite]
        then = yield from self.in_block(a, ite.true_branch)
        other = yield from self.in_block(b, ite.false_branch)
        if cond is ite.cond and then is ite.true_branch and other is ite.false_branch:
            return self._bound(ite, ite)
        return self._bound(ite, If(cond, then, other, span=ite.span))

    def visit_match(self, m: Match) -> Any:
        data = yield m.data
        clauses = []
        for c, block in zip(m.clauses, self.b.subs[m]):
            rhs = yield from self.in_block(block, c.rhs)
            clauses.append(c if rhs is c.rhs else Clause(c.lhs, rhs, span=c.span))
        if data is m.data and all(a is b for a, b in zip(clauses, m.clauses)):
            return self._bound(m, m)
        return self._bound(m, Match(data, tuple(clauses), m.complete, span=m.span))

    def visit_let(self, let: Let) -> Any:
        # The chain in a loop (100,000-deep chains); each let's body is a block.
        chain: list[tuple[Let, Expr, int]] = []
        node: Expr = let
        while True:
            value = yield node.value
            block = self.b.subs[node][0]
            self.lists[block] = []
            chain.append((node, value, block))
            node = node.body
            if type(node) is not Let or node in self.memo_map or node in self.b.cross:
                break
        body = yield node
        for old, value, block in reversed(chain):
            body = self._wrap(self.lists.pop(block), body)
            if value is not old.value or body is not old.body:
                body = Let(old.var, value, body, span=old.span)
            else:
                body = old
            self.memo_map[old] = body  # an inner let may be shared: rebuild it once
        return self._bound(let, body)


def to_basic_block_normal_form(expr: Expr, effects: Effects | None = None) -> Expr:
    """``expr`` in basic block normal form (a Function keeps its parameters)."""
    fx = effects if effects is not None else Effects(None, expr)
    if isinstance(expr, Function):
        if is_opaque(expr):
            return expr
        body = to_basic_block_normal_form(expr.body, fx)
        if body is expr.body:
            return expr
        return Function(
            expr.params, body, expr.ret_type, expr.type_params, expr.attrs, span=expr.span
        )
    while True:  # until nothing more is bound (usually one round, or two)
        blocks = Blocks(expr, fx)
        if not blocks.cross:
            return expr
        expr = _Rebuild(blocks).run(expr)


class ToBasicBlockNormalForm(FunctionPass):
    """``relay.transform.ToBasicBlockNormalForm()``."""

    def __init__(self) -> None:
        super().__init__(self._convert, PassInfo("ToBasicBlockNormalForm", 1))
        self._fx: tuple = (None, None)

    def _convert(self, func: Function, mod: IRModule, ctx: PassContext) -> Function:
        if self._fx[0] is not mod:
            self._fx = (mod, Effects(mod))
        return to_basic_block_normal_form(func, self._fx[1])

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        with paused_gc():  # allocation-heavy whole-program job: see util.paused_gc
            try:
                return super().transform_module(mod, ctx)
            finally:
                self._fx = (None, None)

    def __repr__(self) -> str:
        return "ToBasicBlockNormalForm()"


register_pass("ToBasicBlockNormalForm", ToBasicBlockNormalForm)

__all__ = ["ToBasicBlockNormalForm", "to_basic_block_normal_form"]
