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
from ..ir.functor import ExprMutator
from ..ir.span import Source, Span
from ..ir.ty import TensorType, TupleType, Type


class FrontendError(RelayError):
    """A model could not be imported (unsupported operators, malformed file, bad shape)."""

    kind = "import error"


# --- typing a fragment --------------------------------------------------------------------


class _Fragment(ExprMutator):
    """Copies the untyped part of a graph; typed nodes become variables of their type."""

    def __init__(self, root: Expr):
        super().__init__()
        # Seed the memo with the typed frontier first: the functor's own loop then stops
        # there instead of walking the whole graph below (that would be quadratic).
        stack, seen = [root], set()
        while stack:
            e = stack.pop()
            if id(e) in seen or isinstance(e, Op):
                continue
            seen.add(id(e))
            t = _known_type(e) if e is not root else None
            if t is not None:
                self.memo_map[e] = Var("t", t)
            elif isinstance(e, Call):
                stack.extend(e.args)
            elif isinstance(e, Tuple):
                stack.extend(e.fields)
            elif isinstance(e, TupleGetItem):
                stack.append(e.tuple_value)


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
    t = infer_type(_Fragment(expr).visit(expr))
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
        if node is not expr and node._checked_type is not None:
            return False  # typed before: an earlier result that did not fold
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
    if _elements(t) > FOLD_LIMIT:
        return expr  # a model asking for a giant constant must not exhaust memory at import
    return _to_const(Interpreter().evaluate(expr), t)


# Results with more elements than this stay expressions (computed at run time, if ever).
FOLD_LIMIT = 1 << 24


def _elements(t: Type) -> int:
    if isinstance(t, TupleType):
        return sum(_elements(f) for f in t.fields)
    if isinstance(t, TensorType) and is_static(t.shape):
        n = 1
        for d in t.shape:
            n *= d
        return n
    return FOLD_LIMIT + 1


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


# --- shapes as partly known values -------------------------------------------------------


class Dim:
    """Dimension ``axis`` of ``src``, unknown until run time (an element of a shape value)."""

    __slots__ = ("src", "axis")

    def __init__(self, src: Expr, axis: int):
        self.src, self.axis = src, axis


def _op_name(e: Expr) -> str:
    return getattr(getattr(e, "op", None), "name", "") if isinstance(e, Call) else ""


def shape_elements(expr: Expr) -> Optional[list]:
    """The elements of a 1-d shape value as ints or :class:`Dim`, or None if unknown.

    Follows what exporters build around ``Shape``: ``shape_of``, ``take`` with constant
    indices, ``expand_dims``, ``concatenate``, ``cast`` and ``strided_slice``, so a
    ``Reshape`` to ``[batch, seq, heads, hd]`` with a dynamic batch can still become a
    static ``reshape(x, (0, 8, 4, 8))``.
    """
    if isinstance(expr, Constant):
        return [int(v) for v in expr.data.reshape(-1)] if expr.data.dtype.kind in "iu" else None
    name = _op_name(expr)
    if name == "shape_of":
        (x,) = expr.args
        return [d if type(d) is int else Dim(x, i) for i, d in enumerate(shape_of(x))]
    if name == "cast":
        return shape_elements(expr.args[0])
    if name == "take" and isinstance(expr.args[1], Constant) and expr.attrs["axis"] in (0, None):
        elems = shape_elements(expr.args[0])
        if elems is None:
            return None
        try:
            return [elems[int(i)] for i in expr.args[1].data.reshape(-1)]
        except IndexError:
            return None
    if name in ("expand_dims", "squeeze", "reshape"):
        return shape_elements(expr.args[0])
    if name == "concatenate" and isinstance(expr.args[0], Tuple):
        out: list = []
        for f in expr.args[0].fields:
            part = shape_elements(f)
            if part is None:
                return None
            out += part
        return out
    if name == "strided_slice":
        elems = shape_elements(expr.args[0])
        a = expr.attrs
        if elems is None or a["axes"] not in (None, (0,), [0]) or len(a["begin"]) != 1:
            return None
        step = a["strides"][0] if a["strides"] else 1
        return elems[slice(a["begin"][0], a["end"][0], step)]
    return None


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
    "Dim",
    "shape_elements",
]
