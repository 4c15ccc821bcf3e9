"""Helpers shared by the importers: incremental typing, constant folding, names.

An importer builds the Relay graph one framework node at a time and often needs the
*static* shape of what it just built (``Shape`` -> a constant, ``Reshape`` with ``0``
and ``-1``, ``Gemm``'s bias, ...).  Re-running InferType over the whole graph after each
node is quadratic, so :func:`type_of` types only the new fragment: already typed
sub-expressions stand in as variables of their types.  :func:`fold` evaluates a fragment
whose leaves are all constants (the exported ``Shape -> Gather -> Concat -> Reshape``
chains) so the program that comes out is static wherever the model is.
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from ..errors import RelayError
from ..ir.expr import Call, Constant, Expr, Op, Tuple, TupleGetItem, Var, const
from ..ir.functor import ExprMutator, _dataflow_children
from ..ir.span import Source, Span
from ..ir.ty import TensorType, TupleType, Type


class FrontendError(RelayError):
    """A model could not be imported (unsupported operators, malformed file, bad shape)."""

    kind = "import error"


# --- typing a fragment --------------------------------------------------------------------


class _Fragment(ExprMutator):
    """Copies the untyped part of a graph; typed nodes become variables of their type."""

    def visit(self, expr: Expr) -> Expr:
        if self._outermost:
            self._cut_at_typed(expr)
        return super().visit(expr)

    def _cut_at_typed(self, root: Expr) -> None:
        # The mutator walks children with its own stack, not through visit(), so the typed
        # frontier is marked in the memo first; otherwise every fragment would reach back to
        # the graph's inputs and importing would be quadratic in the model's size.
        stack, seen = [root], set()
        while stack:
            expr = stack.pop()
            if id(expr) in seen or expr in self.memo_map or isinstance(expr, Op):
                continue
            seen.add(id(expr))
            t = _known_type(expr)
            if t is not None:
                self.memo_map[expr] = Var("t", t)
            else:
                stack.extend(_dataflow_children(expr))


def _known_type(expr: Expr) -> Optional[Type]:
    if expr._checked_type is not None:
        return expr._checked_type
    if isinstance(expr, Constant):
        t = TensorType(tuple(int(d) for d in expr.data.shape), str(expr.data.dtype))
        expr.set_checked_type(t)
        return t
    if isinstance(expr, Var) and expr.type_annotation is not None:
        expr.set_checked_type(expr.type_annotation)
        return expr.type_annotation
    return None


def type_of(expr: Expr) -> Type:
    """The type of ``expr``, typing only the part of the graph not typed before.

    >>> type_of(relay.add(x, x))    # Tensor[(2, 3), float32] for x: Tensor[(2, 3), float32]
    """
    from ..typing.infer import infer_type

    t = _known_type(expr)
    if t is not None:
        return t
    t = infer_type(_Fragment().visit(expr))
    expr.set_checked_type(t)
    return t


def shape_of(expr: Expr) -> tuple:
    """The shape of a tensor expression (ints, or ``relay.Any()`` for dynamic dims)."""
    t = type_of(expr)
    if not isinstance(t, TensorType):
        raise FrontendError(f"expected a tensor, found {t}")
    return tuple(t.shape)


def dtype_of(expr: Expr) -> str:
    t = type_of(expr)
    return t.dtype if isinstance(t, TensorType) else "float32"


def is_static(shape: tuple) -> bool:
    return all(type(d) is int for d in shape)


# --- constant folding -------------------------------------------------------------------


def _all_leaves_constant(expr: Expr) -> bool:
    stack, seen = [expr], set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, Constant):
            continue
        if isinstance(node, Call) and hasattr(node.op, "name"):
            stack.extend(node.args)
        elif isinstance(node, Tuple):
            stack.extend(node.fields)
        elif isinstance(node, TupleGetItem):
            stack.append(node.tuple_value)
        else:
            return False
    return True


def fold(expr: Expr) -> Expr:
    """``expr`` evaluated to a :class:`Constant` when all its leaves are constants.

    Tuples come back as tuples of constants; anything else is returned unchanged.
    """
    if isinstance(expr, Constant) or not _all_leaves_constant(expr):
        return expr
    if isinstance(expr, Call) and not expr.args:
        return expr  # zeros(shape=...) : folding would only make the module bigger
    from ..eval.interpreter import Interpreter

    t = type_of(expr)
    return _to_const(Interpreter().evaluate(expr), t)


def _to_const(value: Any, t: Type) -> Expr:
    if isinstance(t, TupleType):
        return Tuple(tuple(_to_const(v, f) for v, f in zip(value, t.fields)))
    data = value.data if hasattr(value, "data") and not isinstance(value, np.ndarray) else value
    c = const(np.asarray(data, dtype=t.dtype), t.dtype)  # float64 stays float64
    c.set_checked_type(t)
    return c


def value_of(expr: Expr) -> Optional[np.ndarray]:
    """The numpy value of a constant expression (folding it if needed), or None."""
    expr = fold(expr)
    return expr.data if isinstance(expr, Constant) else None


# --- names ------------------------------------------------------------------------------


def node_source(name: str, node_names: list[str]) -> Source:
    """A :class:`Source` whose line *i* is the name of framework node *i* (1-based).

    Spans into it make the views and error excerpts show the framework's node name.
    """
    return Source(name, "\n".join(node_names))


def node_span(source: Source, index: int, name: str) -> Span:
    """The span of node ``index`` (0-based) named ``name`` in a :func:`node_source`."""
    return Span(source, index + 1, 1, index + 1, len(name) + 1)


def node_name(expr: Expr) -> Optional[str]:
    """The framework node an imported call came from (its span's line), or None.

    >>> mod, _ = relay.frontend.from_onnx(model)
    >>> relay.frontend.node_name(mod["main"].body)     # '/fc/Gemm'
    """
    span = getattr(expr, "span", None)
    if span is None or span.source is None or span.line <= 0:
        return None
    return span.source.line(span.line) or None


__all__ = [
    "FrontendError",
    "type_of",
    "shape_of",
    "dtype_of",
    "is_static",
    "fold",
    "value_of",
    "node_source",
    "node_span",
    "node_name",
]
