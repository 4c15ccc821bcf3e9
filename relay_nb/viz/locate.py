"""Where each node appears in the printed program (line, column), and the names it got.

A view's node often has no source span (the program was built in Python, or a pass
made it), yet the notebook must select "its line" in the text view.  We print the program
with the project's printer and let it tell us: a subclass marks each node's text with an
invisible marker when the printer emits it, and the markers are stripped from the final
text, giving each node's 1-based (line, column) in exactly the text ``astext`` writes.

A node's position is where its own text starts: a hoisted node on its ``%N = ...;``
line, an inlined call where its operator name is written, a variable where it is bound
(its parameter list or ``let``), a ``let`` at its variable.  The version header is line 1.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ..ir.expr import (
    Call,
    Constant,
    Constructor,
    Expr,
    Function,
    GlobalVar,
    Let,
    MetaRef,
    TempExpr,
    Var,
)
from ..ir.module import IRModule
from ..syntax.printer import (
    _CANON,
    _METADATA_OMITTED,
    VERSION_HEADER,
    _has_entries,
    _TextPrinter,
    _write_metadata,
)
from ..util import paused_gc

_MARK = re.compile("\x00(\\d+)\x01")
_MARKED_LEAVES = (Constant, MetaRef, GlobalVar, Constructor)


class _LocatingPrinter(_TextPrinter):
    """The project's printer, with a marker in front of each node's text."""

    def __init__(self, show_types: bool) -> None:
        super().__init__(show_types=None if show_types else False, show_spans=False)
        self.marks: list[Any] = []

    def _mark(self, node: Any) -> str:
        self.marks.append(node)
        return f"\x00{len(self.marks) - 1}\x01"

    def _finish(self, node: Expr, inline: bool, doc: Any) -> Any:
        # A let's doc is its body's (the let itself is located at its variable).
        if _CANON[type(node)] not in (Let, TempExpr):
            mark = self._mark(node)
            doc = mark + doc if type(doc) is str else [mark, doc]
        return super()._finish(node, inline, doc)

    def _alloc_var(self, var: Var) -> str:
        return self._mark(var) + _TextPrinter._alloc_var(self, var)

    def _leaf(self, node: Expr) -> str | None:
        doc = super()._leaf(node)
        if doc is not None and isinstance(node, _MARKED_LEAVES):
            doc = self._mark(node) + doc
            self.memo[node] = doc
        return doc


@dataclass
class Located:
    """The printed program and where each node is in it."""

    text: str
    positions: dict[Expr, tuple[int, int]] = field(default_factory=dict)
    names: dict[Expr, str] = field(default_factory=dict)  # %N / %name as printed
    printer: Any = None

    def name(self, node: Expr) -> str | None:
        return self.names.get(node)

    def astext(self) -> str:
        """What ``astext(obj, show_types=False)`` writes: the text with the metadata
        section in place of the note that it was omitted (a caller that needs both the
        located text and the full printout prints the program once)."""
        meta = self.printer.meta
        if not _has_entries(meta):
            return self.text
        return self.text[: -len(_METADATA_OMITTED)] + "#[metadata]\n" + _write_metadata(meta)


def locate(obj: Any, show_types: bool = False) -> Located:
    """Print ``obj`` (graph form) and record every node's position and name.

    The text is what ``relay_nb.astext(obj, show_types=..., show_meta_data=False)``
    writes (``show_types`` adds ``/* ty=... */`` after typed nodes), so a view and a text
    pane showing that text agree on line numbers.
    """
    printer = _LocatingPrinter(show_types)
    with paused_gc():
        if isinstance(obj, IRModule):
            body = printer.print_module(obj)
        else:
            body = printer.print_expr(obj)
    marked = VERSION_HEADER + "\n" + body
    if _has_entries(printer.meta):
        marked += ("" if marked.endswith("\n") else "\n") + _METADATA_OMITTED
    positions: dict[Expr, tuple[int, int]] = {}
    marks = printer.marks
    # The text cut at the marks: [text, mark, text, mark, ..., text].  A mark stands
    # where the text before it ends: its line and column follow from that text's
    # newlines (the marks themselves have none).
    parts = _MARK.split(marked)
    text = parts[0]
    lineno = 1 + text.count("\n")
    column = len(text) - text.rfind("\n")  # 1-based column of the next character
    pieces = iter(parts)
    next(pieces)
    for index, text in zip(pieces, pieces):
        node = marks[int(index)]
        if node not in positions:
            positions[node] = (lineno, column)
        if "\n" in text:
            lineno += text.count("\n")
            column = len(text) - text.rindex("\n")
        else:
            column += len(text)
    names: dict[Expr, str] = {}
    for var, name in printer.var_names.items():
        names[var] = "%" + name
    for node, doc in printer.memo.items():
        if type(doc) is str and doc[:1] == "%" and node not in names and doc[1:].isdigit():
            names[node] = doc
    return Located("".join(parts[0::2]), positions, names, printer)


def attrs_text(located: Located, node: Any) -> str:
    """``k=v, ...`` of a call's non-default attributes (or a function's attributes)."""
    printer = located.printer
    try:
        if isinstance(node, Call) and node.attrs:
            parts = printer._call_attrs(node.op, node.attrs)
        elif isinstance(node, Function) and len(node.attrs):
            parts = [f"{k}={printer._attr_value(v)}" for k, v in node.attrs.items()]
        else:
            return ""
    except Exception:  # an attribute the printer cannot spell: show it raw
        return ", ".join(f"{k}={v!r}" for k, v in dict(node.attrs).items())
    text = ", ".join(parts)
    return _MARK.sub("", text) if "\x00" in text else text  # a marked meta reference


__all__ = ["Located", "attrs_text", "locate"]
