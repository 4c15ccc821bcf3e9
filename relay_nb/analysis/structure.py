"""Small structural helpers the passes share: atoms, opaque functions, use edges, and an
iterative post order of the compound nodes.

* an *atom* is a leaf that names a value without computing anything: a variable, a
  global, a constant, an operator, a constructor;
* an *opaque* function is a fused kernel (``Primitive=1``) or an external one
  (``Compiler=...``): passes keep it as it is and do not look inside, as TVM does;
* the *use children* of a node are its sub-expressions in use position — binders
  (a ``let``'s variable, parameters, pattern variables) are not uses.
"""

from __future__ import annotations

from ..ir.expr import (
    Constant,
    Constructor,
    Expr,
    Function,
    GlobalVar,
    If,
    Let,
    Match,
    MetaRef,
    Op,
    Var,
)
from ..ir.functor import _dataflow_children

ATOMS = (Var, GlobalVar, Constant, MetaRef, Op, Constructor)
ATOM_TYPES = frozenset(ATOMS)


def is_atom(expr: Expr) -> bool:
    return isinstance(expr, ATOMS)


def is_opaque(fn: Function) -> bool:
    """A ``Primitive`` or external function: kept as it is by every pass."""
    attrs = fn.attrs
    return bool(attrs.get("Primitive", 0)) or "Compiler" in attrs


def use_children(node: Expr) -> tuple:
    """The sub-expressions of ``node`` in use position, in evaluation order."""
    t = type(node)
    if t is Let:
        return (node.value, node.body)
    if t is If:
        return (node.cond, node.true_branch, node.false_branch)
    if t is Match:
        return (node.data, *(c.rhs for c in node.clauses))
    if t is Function:
        return () if is_opaque(node) else (node.body,)
    return _dataflow_children(node)


def compound_post_order(root: Expr) -> list[Expr]:
    """The non-atomic nodes under ``root`` (not inside opaque functions), each once,
    children before parents, in evaluation order.  Iterative."""
    order: list[Expr] = []
    seen: set[Expr] = set()
    atoms = ATOM_TYPES
    stack: list = [root]
    pop, push = stack.pop, stack.append
    while stack:
        node = pop()
        if node is None:  # the next entry is a finished node
            order.append(pop())
            continue
        if node in seen or type(node) in atoms:
            continue
        seen.add(node)
        push(node)
        push(None)
        for c in reversed(use_children(node)):
            if c not in seen:
                push(c)
    return order


__all__ = ["ATOMS", "compound_post_order", "is_atom", "is_opaque", "use_children"]
