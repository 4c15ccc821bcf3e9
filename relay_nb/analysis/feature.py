"""Which language constructs a program uses (TVM's ``relay.analysis.detect_feature``),
and whether it stays in seed 000's *dataflow fragment*.

``detect_feature(expr_or_mod)`` returns the set of :class:`Feature` flags of the
constructs that occur, with TVM's names and numbering, plus two structural ones:

* ``fGraph``: a non-atomic node is used twice (the program is a DAG, not a tree);
* ``fLetRec``: a ``let`` whose variable occurs in its own value (a local fixpoint).

Seed 000 splits Relay in two.  The *dataflow fragment* (tuples, projections, calls to
operators and ADT constructors, plus variables, constants and ``let`` as names for
values) is a pure computation graph; the *control fragment* (``if``, ``match``,
recursion) lets the graph's topology depend on values.  A call to a function is in the
dataflow fragment when the function's body is and it is not recursive (calling it
"inlines the subgraph").  :func:`is_dataflow` answers that question; references are
effects, not graph nodes, so a program using them is not dataflow either.
"""

from __future__ import annotations

import enum

from ..ir.expr import (
    Call,
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
    RefCreate,
    RefRead,
    RefWrite,
    Tuple,
    TupleGetItem,
    Var,
)
from ..ir.functor import expr_children, post_order
from ..ir.module import IRModule
from .call_graph import CallGraph
from .well_formed import _free_vars


class Feature(enum.IntEnum):
    """Constructs of Relay, as TVM's ``relay.feature.Feature``."""

    fVar = 0
    fGlobalVar = 1
    fConstant = 2
    fTuple = 3
    fTupleGetItem = 4
    fFunction = 5
    fOp = 6
    fCall = 7
    fLet = 8
    fIf = 9
    fRefCreate = 10
    fRefRead = 11
    fRefWrite = 12
    fConstructor = 13
    fMatch = 14
    fGraph = 15  # a non-atomic node is shared
    fLetRec = 16  # a let-bound variable occurs in its own value


FeatureSet = frozenset
"""What :func:`detect_feature` returns: a (frozen) set of :class:`Feature`."""

_OF_TYPE = {
    Var: Feature.fVar,
    GlobalVar: Feature.fGlobalVar,
    Constant: Feature.fConstant,
    MetaRef: Feature.fConstant,
    Tuple: Feature.fTuple,
    TupleGetItem: Feature.fTupleGetItem,
    Function: Feature.fFunction,
    Op: Feature.fOp,
    Call: Feature.fCall,
    Let: Feature.fLet,
    If: Feature.fIf,
    RefCreate: Feature.fRefCreate,
    RefRead: Feature.fRefRead,
    RefWrite: Feature.fRefWrite,
    Constructor: Feature.fConstructor,
    Match: Feature.fMatch,
}
_ATOMIC = (Var, GlobalVar, Constant, MetaRef, Op, Constructor)

# Constructs outside the dataflow fragment.
CONTROL_FEATURES = frozenset(
    {
        Feature.fIf,
        Feature.fMatch,
        Feature.fLetRec,
        Feature.fRefCreate,
        Feature.fRefRead,
        Feature.fRefWrite,
    }
)


def _detect(expr: Expr, found: set) -> None:
    uses: dict[Expr, int] = {}
    free: dict = {}  # free variables of every node below a let-bound function, computed once
    for node in post_order(expr):
        feature = _OF_TYPE.get(type(node))
        if feature is not None:
            found.add(feature)
        for child in expr_children(node):
            if not isinstance(child, _ATOMIC):
                n = uses.get(child, 0) + 1
                uses[child] = n
                if n == 2:
                    found.add(Feature.fGraph)
        # Only a function can meaningfully refer to itself.  The free variables are
        # memoized bottom-up, so nested let-bound functions cost one pass, not one walk
        # of each function's body per enclosing let.
        if type(node) is Let and type(node.value) is Function and node.var in _free_vars(node.value, free):
            found.add(Feature.fLetRec)


def detect_feature(a: Expr | IRModule, b: Expr | IRModule | None = None) -> frozenset:
    """The set of :class:`Feature` used by an expression, a module (all its functions),
    or both (TVM's two-argument form).

    >>> detect_feature(relay.parse_expr("fn (%x) { %1 = log(%x); add(%1, %1) }"))
    frozenset({fVar, fFunction, fOp, fCall, fGraph})   # in some order
    """
    found: set = set()
    for item in (a, b):
        if item is None:
            continue
        if isinstance(item, IRModule):
            for func in item.functions.values():
                _detect(func, found)
        else:
            _detect(item, found)
    return frozenset(found)


def is_dataflow(expr: Expr | IRModule, mod: IRModule | None = None) -> bool:
    """Whether ``expr`` stays in seed 000's dataflow fragment (see the module docstring).

    For a module, whether ``@main`` does.  Calls to globals are followed through
    ``mod``: a recursive global or one whose body uses control flow puts the caller in
    the control fragment; so does a call to a function the program does not define
    (a parameter), since nothing says its body is a graph.

    >>> is_dataflow(relay.parse_expr("fn (%x) { (log(%x), %x).0 }"))
    True
    >>> is_dataflow(relay.parse_expr("fn (%c: bool) { if (%c) { 1 } else { 2 } }"))
    False
    """
    if isinstance(expr, IRModule):
        mod, expr = expr, expr["main"]
    recursive = CallGraph(mod).recursive if mod is not None else set()
    checked: set[str] = set()
    todo = [expr]
    while todo:
        e = todo.pop()
        if CONTROL_FEATURES & detect_feature(e):
            return False
        known = {n.var for n in post_order(e) if type(n) is Let and type(n.value) is Function}
        for node in post_order(e):
            if type(node) is not Call:
                continue
            op = node.op
            if isinstance(op, (Op, Constructor, Function)):
                continue  # a literal function's body is part of ``e`` and checked with it
            if type(op) is GlobalVar:
                if mod is None or op.name_hint not in mod or op.name_hint in recursive:
                    return False
                if op.name_hint not in checked:
                    checked.add(op.name_hint)
                    todo.append(mod[op.name_hint])
            elif not (type(op) is Var and op in known):
                return False
    return True


__all__ = ["CONTROL_FEATURES", "Feature", "FeatureSet", "detect_feature", "is_dataflow"]
