"""A-normal form for the ANF view, remembering which original node each binding came from.

The view converts with the project's ToANormalForm (:mod:`relay_nb.transform.
to_a_normal_form`), so it shows exactly where that pass computes each value.  To colour a
binding like the node it replaces (DAG and ANF side by side) and to highlight the nodes a
pass changed, the view also needs ``new node -> original node``; the converter knows it
at the moment it binds a value, so we listen there.
"""

from __future__ import annotations

from typing import Any

from ..errors import RelayError
from ..ir.expr import Expr, Function, Var
from ..ir.module import IRModule
from ..transform.to_a_normal_form import _Converter, _kind
from ..util import paused_gc


class _TrackingConverter(_Converter):
    """ToANormalForm's converter, recording the original of every bound value."""

    def __init__(self, root: Expr, origin: dict[Expr, Expr]) -> None:
        self.origin = origin
        super().__init__(root)

    def _bind(self, node: Expr, value: Expr) -> Var:
        var = super()._bind(node, value)
        self.origin.setdefault(value, node)
        self.origin.setdefault(var, node)
        return var


def _convert(expr: Expr, origin: dict[Expr, Expr]) -> Expr:
    """``to_a_normal_form(expr)``, filling ``origin`` (mirrors that function's cases)."""
    if isinstance(expr, Function):
        if _kind(type(expr.body)) is None:
            return expr
        body = _TrackingConverter(expr.body, origin).run()
        new = Function(
            expr.params, body, expr.ret_type, expr.type_params, expr.attrs, span=expr.span
        )
        if expr._checked_type is not None:
            new.set_checked_type(expr._checked_type)
        origin[new] = expr
        return new
    if not isinstance(expr, Expr):
        raise RelayError(f"cannot convert a {type(expr).__name__} to A-normal form")
    if _kind(type(expr)) is None:
        return expr
    return _TrackingConverter(expr, origin).run()


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
