"""Blocks: which scope each node of a graph-form program belongs to.

A *block* is a scope of evaluation: the whole expression, a function body, an ``if``
branch, a ``match`` arm, a ``let`` body (as in TVM's dependency graph).  A dataflow graph
does not say where a shared node is computed (seed 004); this analysis assigns each
compound node to the innermost block enclosing all its uses (the lowest common ancestor
in the block tree, the placement ToANormalForm uses too) and reports the nodes used from
more than one block — those ToBasicBlockNormalForm binds with a ``let``.

Iterative: one post order and one pass in reverse over it.
"""

from __future__ import annotations

from ..ir.expr import Expr, Function, If, Let, Match
from ..ir.functor import _dataflow_children
from .effects import Effects
from .structure import ATOM_TYPES, compound_post_order, is_opaque


class Blocks:
    """The block tree of ``root``; for each node its block (the LCA of its uses'
    blocks); the nodes used across blocks (``cross``) and its evaluation order.

    ``block[n]``: the block id of compound node ``n``; ``subs[n]``: the blocks an
    ``if``/``match``/``let``/``fn`` opens (branches, arms, body); ``index[n]``: position
    in evaluation order; ``cross``: nodes used in two or more blocks, plus (when
    ``effects`` says the module uses references) operands that may touch one.
    """

    def __init__(self, root: Expr, effects: Effects):
        self.parent, self.depth = [-1], [0]
        self.block: dict[Expr, int] = {root: 0}
        self.subs: dict[Expr, tuple[int, ...]] = {}
        multi: set[Expr] = set()  # used in two different blocks
        operand: set[Expr] = set()  # used as an operand somewhere
        order = compound_post_order(root)
        self.index = {n: i for i, n in enumerate(order)}
        for node in reversed(order):  # users before what they use
            for child, where, is_operand in self._uses(node, self.block[node]):
                if type(child) in ATOM_TYPES:
                    continue
                old = self.block.get(child)
                if old is not None and old != where:
                    multi.add(child)
                    where = self._lca(old, where)
                self.block[child] = where
                if is_operand:
                    operand.add(child)
        touchy = {n for n in operand if effects.touches_refs(n)} if effects.any_refs else set()
        self.cross = multi | touchy

    def _new(self, parent: int) -> int:
        self.parent.append(parent)
        self.depth.append(self.depth[parent] + 1)
        return len(self.parent) - 1

    def _lca(self, a: int, b: int) -> int:
        parent, depth = self.parent, self.depth
        while depth[a] > depth[b]:
            a = parent[a]
        while depth[b] > depth[a]:
            b = parent[b]
        while a != b:
            a, b = parent[a], parent[b]
        return a

    def _uses(self, node: Expr, s: int):
        """(child, the block it is used in, as an operand?) for each child of ``node``."""
        t = type(node)
        if t is If:
            a, b = self.subs[node] = (self._new(s), self._new(s))
            return (
                (node.cond, s, True),
                (node.true_branch, a, False),
                (node.false_branch, b, False),
            )
        if t is Match:
            ids = self.subs[node] = tuple(self._new(s) for _ in node.clauses)
            return ((node.data, s, True), *((c.rhs, i, False) for c, i in zip(node.clauses, ids)))
        if t is Let or t is Function:
            if t is Function and is_opaque(node):
                return ()
            b = self._new(s)
            self.subs[node] = (b,)
            if t is Function:
                return ((node.body, b, False),)
            return ((node.value, s, False), (node.body, b, False))
        return tuple((c, s, True) for c in _dataflow_children(node))


__all__ = ["Blocks"]
