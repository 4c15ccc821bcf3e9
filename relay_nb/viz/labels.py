"""What a drawn node says: its kind, its label text, an atom's short spelling.

Names come from the printed program (:mod:`relay_nb.viz.locate`), so a node labelled
``%0`` is the ``%0`` of the text view next to it.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from ..ir.expr import (
    Call,
    Constant,
    Constructor,
    Function,
    GlobalVar,
    If,
    Let,
    Match,
    MetaRef,
    Op,
    Pattern,
    PatternConstructor,
    PatternTuple,
    PatternVar,
    RefCreate,
    RefRead,
    RefWrite,
    TempExpr,
    Tuple,
    TupleGetItem,
    Var,
)
from ..syntax.printer import scalar_to_text
from ..typing.text import type_text
from ..util import ByClass

ATOM_KINDS = frozenset(("var", "constant", "meta", "global_var", "constructor", "op"))

_KIND = {
    Var: "var",
    Constant: "constant",
    MetaRef: "meta",
    GlobalVar: "global_var",
    Constructor: "constructor",
    Op: "op",
    Call: "call",
    Tuple: "tuple",
    TupleGetItem: "tuple_get",
    Let: "let",
    Function: "function",
    If: "if",
    Match: "match",
    RefCreate: "ref_create",
    RefRead: "ref_read",
    RefWrite: "ref_write",
}


def kind_of(expr: Any) -> str:
    """``"call"``, ``"var"``, ``"let"``, ... (``"temp"`` for pass-internal nodes)."""
    return _KIND_OF_TYPE[type(expr)]


# kind_of per concrete class, through its bases once (a view asks it a dozen times per node).
_KIND_OF_TYPE = ByClass(_KIND, lambda cls: "temp" if issubclass(cls, TempExpr) else cls.__name__.lower())


def callee_kind(call: Call) -> str:
    """What a call calls: ``"op"``, ``"global"``, ``"constructor"`` or ``"closure"``."""
    op = call.op
    if isinstance(op, Op):
        return "op"
    if isinstance(op, GlobalVar):
        return "global"
    if isinstance(op, Constructor):
        return "constructor"
    return "closure"


def const_text(c: Constant, width: int = 24) -> str:
    """A constant's short spelling: ``1f``, ``[1, 2, 3]``, or ``const`` for big arrays."""
    text = scalar_to_text(c.data)
    if text is not None:
        return text
    data = c.data
    if data.ndim == 0:
        return str(data.item())
    if data.size <= 6:
        flat = np.array2string(data, separator=", ", threshold=6, max_line_width=10_000)
        if len(flat) <= width:
            return flat
    return "const"


def atom_text(expr: Any, names: dict) -> str:
    """How an operand is spelled in a binding's label."""
    name = names.get(expr)
    if name is not None:
        return name
    if isinstance(expr, Var):
        return "%" + expr.name_hint
    if isinstance(expr, Constant):
        return const_text(expr)
    if isinstance(expr, GlobalVar):
        return "@" + expr.name_hint
    if isinstance(expr, Constructor):
        return expr.name_hint
    if isinstance(expr, Op):
        return expr.name
    if isinstance(expr, MetaRef):
        return f"meta[{expr.type_key}][{expr.index}]"
    if isinstance(expr, Function):
        return "fn"
    return "\u2026"


def head_text(expr: Any, names: dict, global_name: str | None = None) -> str:
    """The first line of a node's label in the DAG view (the op name for an op call)."""
    kind = kind_of(expr)
    if kind == "call":
        ck = callee_kind(expr)
        if ck == "closure":
            return "call"
        return atom_text(expr.op, {})
    if kind in ("var", "global_var", "constructor", "meta"):
        return atom_text(expr, names)
    if kind == "constant":
        return const_text(expr)
    if kind == "op":
        return "op " + expr.name
    if kind == "tuple":
        return f"tuple ({len(expr.fields)})"
    if kind == "tuple_get":
        return f"get .{expr.index}"
    if kind == "let":
        return "let " + atom_text(expr.var, names)
    if kind == "function":
        params = ", ".join(atom_text(p, names) for p in expr.params)
        prefix = f"def @{global_name}" if global_name else "fn "
        return f"{prefix}({params})"
    if kind == "if":
        return "if"
    if kind == "match":
        return "match" if expr.complete else "match?"
    if kind == "ref_create":
        return "ref"
    if kind in ("ref_read", "ref_write"):
        return kind
    return type(expr).__name__


def value_text(expr: Any, names: dict) -> str:
    """A let-bound value as one line of text: ``log(%x)``, ``if (%c)``, ``fn (%y)``."""
    kind = kind_of(expr)
    if kind == "call":
        ck = callee_kind(expr)
        callee = atom_text(expr.op, names) if ck == "closure" else atom_text(expr.op, {})
        if ck == "constructor" and not expr.args:
            return callee  # a 0-ary constructor is written bare, as the printer does: Nil
        return callee + "(" + ", ".join(atom_text(a, names) for a in expr.args) + ")"
    if kind == "tuple":
        inner = ", ".join(atom_text(f, names) for f in expr.fields)
        return "(" + inner + ("," if len(expr.fields) == 1 else "") + ")"
    if kind == "tuple_get":
        return f"{atom_text(expr.tuple_value, names)}.{expr.index}"
    if kind == "if":
        return f"if ({atom_text(expr.cond, names)})"
    if kind == "match":
        return f"{'match' if expr.complete else 'match?'} ({atom_text(expr.data, names)})"
    if kind == "function":
        return "fn (" + ", ".join(atom_text(p, names) for p in expr.params) + ")"
    if kind == "ref_create":
        return f"ref({atom_text(expr.value, names)})"
    if kind == "ref_read":
        return f"ref_read({atom_text(expr.ref, names)})"
    if kind == "ref_write":
        return f"ref_write({atom_text(expr.ref, names)}, {atom_text(expr.value, names)})"
    return atom_text(expr, names)


def pattern_text(pattern: Pattern, names: dict) -> str:
    """A match pattern as text (``Cons(%h, %t)``, ``_``), iteratively."""
    out: list[str] = []
    stack: list[Any] = [pattern]
    while stack:
        p = stack.pop()
        if isinstance(p, str):
            out.append(p)
        elif isinstance(p, PatternVar):
            out.append(atom_text(p.var, names))
        elif isinstance(p, (PatternConstructor, PatternTuple)):
            subs = p.patterns
            if isinstance(p, PatternConstructor) and not subs:
                out.append(p.constructor.name_hint)
                continue
            stack.append(")")
            for i in range(len(subs) - 1, -1, -1):
                stack.append(subs[i])
                if i:
                    stack.append(", ")
            stack.append(p.constructor.name_hint + "(" if isinstance(p, PatternConstructor) else "(")
        else:
            out.append("_")
    return "".join(out)


def type_of(*exprs: Any, writer: Optional[Callable[[Any], str]] = None) -> str:
    """The type text of the first of ``exprs`` that has a checked type ('' if none).

    ``writer`` (a :class:`~relay_nb.typing.text.TypeWriter`) keeps its texts across
    calls: a drawing of 20,000 nodes has a few hundred distinct types.
    """
    text = writer or type_text
    for e in exprs:
        t = getattr(e, "_checked_type", None)
        if t is not None:
            return text(t)
    for e in exprs:
        if isinstance(e, Var) and e.type_annotation is not None:
            return text(e.type_annotation)
        if isinstance(e, Constant):
            dims = ", ".join(str(d) for d in e.data.shape)
            if e.data.ndim == 0:
                return e.data.dtype.name
            return f"Tensor[({dims}), {e.data.dtype.name}]"
    return ""


__all__ = [
    "ATOM_KINDS",
    "atom_text",
    "callee_kind",
    "const_text",
    "head_text",
    "kind_of",
    "pattern_text",
    "type_of",
    "value_text",
]
