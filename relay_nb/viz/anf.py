"""A-normal form for the ANF view, remembering which original node each binding came from.

The view converts with the project's ToANormalForm (:mod:`relay_nb.transform.
to_a_normal_form`), so it shows exactly where that pass computes each value.  To colour a
binding like the node it replaces (DAG and ANF side by side) and to highlight the nodes a
pass changed, the view also needs ``new node -> original node``; the converter knows it
at the moment it binds a value, so it fills that map when asked to.
"""

from __future__ import annotations

from typing import Any

from ..ir.expr import Expr
from ..ir.module import IRModule
from ..transform.to_a_normal_form import _convert
from ..util import paused_gc


def anf_with_origins(obj: Any) -> tuple[Any, dict[Expr, Expr]]:
    """``obj`` (a module or an expression) in A-normal form, and ``{new: original}``.

    Nodes the conversion kept are their own originals and are not in the map.
    """
    origin: dict[Expr, Expr] = {}
    with paused_gc():
        if isinstance(obj, IRModule):
            converted = {gv: _convert(fn, origin) for gv, fn in obj.functions.items()}
            return obj.with_functions(converted), origin
        return _convert(obj, origin), origin


__all__ = ["anf_with_origins"]
