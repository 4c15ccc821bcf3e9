"""Which expressions may have effects: the purity analysis passes share.

Relay's only effects are references (seed 000): ``ref(v)`` allocates a cell,
``ref_read`` observes one, ``ref_write`` changes one.  Evaluating an expression *touches
refs* when it may run any of them, and *writes* when it may run a ``ref_write``:

* a ``fn`` literal does neither (making a closure runs nothing); calling it runs its body;
* a call to an operator or constructor only runs its arguments, except a *stateful*
  operator (TVM's ``TOpIsStateful``: the explicit memory and VM ops, which allocate and
  write tensors in place), which counts as touching refs and writing;
* a call to a global runs that global's body (analysed once per module, callees first;
  mutually recursive globals share their effects; without a module, any global is
  assumed effectful);
* a call to anything else (a parameter, a closure variable, a computed function) may run
  any code, so it is assumed to touch refs and write, unless the module contains no
  reference operation at all, in which case nothing is effectful.

Passes use it as: a value that does not *write* may be dropped when unused
(DeadCodeElimination); a value that does not *touch refs* may be moved, duplicated or
merged (ToGraphNormalForm, inline_once, Inline).  Divergence and run-time errors are not
counted as effects, as in TVM.

Iterative and memoized: linear in the size of the module.
"""

from __future__ import annotations

from ..ir.expr import (
    Call,
    Constructor,
    Expr,
    Function,
    GlobalVar,
    If,
    Let,
    Match,
    Op,
    RefCreate,
    RefRead,
    RefWrite,
    Tuple,
    TupleGetItem,
)
from ..ir.functor import expr_children
from ..ir.module import IRModule

WRITE, TOUCH = 1, 2
_REF_MASK = {RefWrite: WRITE | TOUCH, RefRead: TOUCH, RefCreate: TOUCH}


def stateful_ops() -> frozenset[str]:
    """Names of the operators whose calls have effects (the ``TOpIsStateful`` column)."""
    from ..op.registry import get_column

    return frozenset(name for name, flag in get_column("TOpIsStateful").items() if flag)


def _contains(exprs, types, ops: frozenset[str] = frozenset()) -> bool:
    """Whether a node of one of ``types``, or a call of one of ``ops``, occurs in ``exprs``
    (a plain iterative scan)."""
    seen: set[Expr] = set()
    stack = list(exprs)
    while stack:
        node = stack.pop()
        if type(node) in types:
            return True
        if ops and type(node) is Call and type(node.op) is Op and node.op.name in ops:
            return True
        for c in expr_children(node):
            if c not in seen:
                seen.add(c)
                stack.append(c)
    return False


class Effects:
    """Effect masks of expressions of ``mod`` (and of ``extra`` expressions).

    >>> fx = Effects(mod)
    >>> fx.writes(expr), fx.touches_refs(expr)
    """

    def __init__(self, mod: IRModule | None = None, *extra: Expr):
        self.mod = mod
        self.stateful = stateful_ops()
        funcs = list(mod.functions.values()) if mod is not None else []
        self.any_refs = _contains(funcs + list(extra), _REF_MASK, self.stateful)
        if mod is None and not self.any_refs:
            # Without a module, a called global's body is unknown: assume the worst.
            self.any_refs = _contains(extra, (GlobalVar,))
        self.global_mask: dict[str, int] = {}
        self._memo: dict[Expr, int] = {}
        if self.any_refs and mod is not None:
            from ..typing.infer import global_sccs

            for scc in global_sccs(mod):
                for name in scc:
                    self.global_mask[name] = 0
                mask = 0
                for name in scc:
                    mask |= self._body_mask(mod[name].body)
                self._memo.clear()  # masks of members were provisional
                for name in scc:
                    self.global_mask[name] = mask

    # -- queries ------------------------------------------------------------------------
    def mask(self, expr: Expr) -> int:
        """WRITE | TOUCH bits of evaluating ``expr``."""
        if not self.any_refs:
            return 0
        return self._body_mask(expr)

    def writes(self, expr: Expr) -> bool:
        """Evaluating ``expr`` may write a reference (so it must not be dropped)."""
        return bool(self.mask(expr) & WRITE)

    def touches_refs(self, expr: Expr) -> bool:
        """Evaluating ``expr`` may allocate, read or write a reference (so it must not be
        moved, duplicated or merged)."""
        return bool(self.mask(expr) & TOUCH)

    def pure(self, expr: Expr) -> bool:
        return self.mask(expr) == 0

    # -- the analysis -------------------------------------------------------------------------
    def _body_mask(self, root: Expr) -> int:
        memo = self._memo
        hit = memo.get(root)
        if hit is not None:
            return hit
        stack: list[tuple[Expr, bool]] = [(root, False)]
        while stack:
            node, done = stack.pop()
            if node in memo:
                continue
            kids = _evaluated_children(node)
            if not done:
                stack.append((node, True))
                stack.extend((k, False) for k in kids if k not in memo)
                continue
            m = _REF_MASK.get(type(node), 0)
            for k in kids:
                m |= memo[k]
            if type(node) is Call:
                op = node.op
                if type(op) is GlobalVar:
                    m |= self.global_mask.get(op.name_hint, WRITE | TOUCH)
                elif type(op) is Function:
                    m |= memo[op.body]
                elif type(op) is Op and op.name in self.stateful:
                    m |= WRITE | TOUCH
                elif not isinstance(op, (Op, Constructor)):
                    m |= WRITE | TOUCH  # an unknown function may do anything
            memo[node] = m
        return memo[root]


def _evaluated_children(node: Expr) -> tuple:
    """Children evaluated when ``node`` is (a fn literal's body is not; a called one's is)."""
    t = type(node)
    if t is Call:
        kids = node.args
        if type(node.op) is Function:
            return (*kids, node.op.body)
        if not isinstance(node.op, (Op, Constructor, GlobalVar)) and type(node.op) is not Function:
            return (*kids, node.op)
        return kids
    if t is Tuple:
        return node.fields
    if t is TupleGetItem:
        return (node.tuple_value,)
    if t is Let:
        return (node.value, node.body)
    if t is If:
        return (node.cond, node.true_branch, node.false_branch)
    if t is Match:
        return (node.data, *(c.rhs for c in node.clauses))
    if t is RefCreate:
        return (node.value,)
    if t is RefRead:
        return (node.ref,)
    if t is RefWrite:
        return (node.ref, node.value)
    return ()


__all__ = ["TOUCH", "WRITE", "Effects", "stateful_ops"]
