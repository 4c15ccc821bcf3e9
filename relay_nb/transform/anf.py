"""ToANormalForm: bind every computed value with a ``let`` (TVM's pass of that name).

Input: any well-formed module (graph form, A-normal form, or a mix).
Output: every function in A-normal form, as :func:`relay_nb.transform.to_a_normal_form.
to_a_normal_form` defines it — every non-atomic sub-expression is bound by a ``let``
**once** (a DAG's shared node gets one variable used at each of its uses, seed 004's
``Map<Expr, Result>``), at the innermost scope enclosing all its uses, in evaluation
order; every scope ends in an atom.

Invariants kept: the program's meaning (values, and the order of reference effects);
existing ``let`` variables; parameters and attributes of functions; ``Primitive`` and
``Compiler`` functions (skipped, as TVM's FunctionPass does).  A function already in
A-normal form comes back as the same object, so running the pass twice changes nothing.

Opt level 1, as TVM's.  TVM registers it as a module pass converting each function;
here it is a FunctionPass, which does exactly that (and skips primitive functions).

>>> mod = relay.transform.ToANormalForm()(mod)
"""

from __future__ import annotations

from ..analysis.structure import ATOMS, is_opaque
from ..ir.expr import (
    Call,
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
)
from ..ir.module import IRModule
from ..util import paused_gc
from .infra import FunctionPass, PassContext, PassInfo, register_pass
from .to_a_normal_form import to_a_normal_form

_ATOMS = ATOMS


def _operands(node: Expr) -> tuple:
    t = type(node)
    if t is Call:
        return (node.op, *node.args)
    if t is Tuple:
        return node.fields
    if t is TupleGetItem:
        return (node.tuple_value,)
    if t is RefCreate:
        return (node.value,)
    if t is RefRead:
        return (node.ref,)
    if t is RefWrite:
        return (node.ref, node.value)
    if t is If:
        return (node.cond,)
    if t is Match:
        return (node.data,)
    return ()


def is_a_normal_form(expr: Expr) -> bool:
    """Whether ``expr`` is already in the A-normal form ToANormalForm produces: each
    scope a ``let`` chain of values with atomic operands ending in an atom, and no
    compound node used twice.  Iterative."""
    seen: set[int] = set()
    scopes = [expr.body if isinstance(expr, Function) else expr]
    while scopes:
        node = scopes.pop()
        while type(node) is Let:
            value = node.value
            if not isinstance(value, _ATOMS):
                if id(value) in seen or type(value) is Let:
                    return False
                seen.add(id(value))
                if not all(isinstance(o, _ATOMS) for o in _operands(value)):
                    return False
                if type(value) is If:
                    scopes += (value.true_branch, value.false_branch)
                elif type(value) is Match:
                    scopes += (c.rhs for c in value.clauses)
                elif type(value) is Function and not is_opaque(value):
                    scopes.append(value.body)
            node = node.body
        if not isinstance(node, _ATOMS):
            return False
    return True


class ToANormalForm(FunctionPass):
    """``relay.transform.ToANormalForm()``: every function to A-normal form."""

    def __init__(self) -> None:
        super().__init__(_to_anf, PassInfo("ToANormalForm", 1))

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        with paused_gc():  # allocation-heavy whole-program job: see util.paused_gc
            return super().transform_module(mod, ctx)

    def __repr__(self) -> str:
        return "ToANormalForm()"


def _to_anf(func: Function, mod: IRModule, ctx: PassContext) -> Function:
    if is_a_normal_form(func):
        return func  # nothing to do: keep the very same object
    return to_a_normal_form(func)


def ToANormalFormExpr(expr: Expr) -> Expr:
    """An expression (not a module) in A-normal form, as TVM's ``ToANormalFormExpr``."""
    return expr if is_a_normal_form(expr) else to_a_normal_form(expr)


register_pass("ToANormalForm", ToANormalForm)

__all__ = ["ToANormalForm", "ToANormalFormExpr", "is_a_normal_form"]
