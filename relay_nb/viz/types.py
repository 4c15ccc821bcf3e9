"""Inferred types for a view, without leaving them behind on the user's program.

Type inference stores each node's type *on the node* (``checked_type``, a cache).  A view
that infers types just to label its drawing must not change the user's program as a side
effect: the printer writes ``/* ty=... */`` for every typed node, so a ``print(mod)``
after displaying the module would suddenly look different.  :func:`borrowed_types`
infers what is missing, lets the view read the types, and then puts every node's cache
back the way it was.
"""

from __future__ import annotations

import contextlib
from typing import Any, Iterator

from ..ir.expr import Expr, Function, Op
from ..ir.functor import post_order
from ..ir.module import IRModule


def program_nodes(obj: Any) -> list[Expr]:
    """Every expression node of ``obj`` (a module or an expression), each once."""
    if isinstance(obj, IRModule):
        roots: list[Expr] = [fn for _, fn in sorted(obj.functions.items(), key=_by_name)]
        extra: list[Expr] = list(obj.functions)
        for tdata in obj.type_definitions.values():
            extra.extend(tdata.constructors)
    else:
        roots, extra = [obj], []
    seen: set[Expr] = set()
    out: list[Expr] = []
    for root in roots:
        out.extend(post_order(root, seen=seen))  # each node once across the roots
    for node in extra:
        if node not in seen:
            seen.add(node)
            out.append(node)
    return out


def _by_name(item: tuple) -> str:
    return item[0].name_hint


def _module_of(obj: Any) -> IRModule:
    if isinstance(obj, IRModule):
        return obj.copy()
    if isinstance(obj, Function):
        return IRModule({"main": obj})
    return IRModule.from_expr(obj)


# Views do not type-check bigger programs just to label them (a 100,000-node program
# takes seconds); such a program shows the types it already has.
MAX_INFER_NODES = 20_000


@contextlib.contextmanager
def borrowed_types(obj: Any, infer: bool = True) -> Iterator[bool]:
    """Within the ``with`` block, the nodes of ``obj`` carry their types when it
    type-checks; afterwards each node's ``checked_type`` cache is as it was before.

    Yields whether the program is fully typed.  Inference is best effort: a program that
    does not type-check (or an expression with free globals) is drawn without the
    missing types rather than refused, and one of more than ``MAX_INFER_NODES`` nodes is
    not type-checked here at all.
    """
    nodes = program_nodes(obj)
    before = [node._checked_type for node in nodes]
    # Ops are shared by every program: their cached types say nothing about this one.
    missing = any(t is None for node, t in zip(nodes, before) if type(node) is not Op)
    typed = not missing
    if missing and infer and len(nodes) <= MAX_INFER_NODES:
        from ..typing.infer import infer_module

        try:
            infer_module(_module_of(obj))
            typed = True
        except Exception:  # best effort: an ill-typed program is drawn untyped
            typed = False
    try:
        yield typed
    finally:
        for node, t in zip(nodes, before):
            if node._checked_type is not t:
                object.__setattr__(node, "_checked_type", t)


__all__ = ["MAX_INFER_NODES", "borrowed_types", "program_nodes"]
