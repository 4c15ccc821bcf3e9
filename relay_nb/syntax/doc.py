"""A tiny document model for the Relay printer, laid out without recursion.

A *line* is a ``str`` or a ``list`` of parts; a part is a ``str``, a :class:`Block`, or
again a ``list`` of parts (so documents compose without copying).
A :class:`Block` is a list of lines printed one level deeper, each on its own line; the
text that follows the block starts on a fresh line at the outer level.  So the parts
``["if (%c) {", Block(["%x"]), "} else {", Block(["%y"]), "}"]`` render as::

    if (%c) {
      %x
    } else {
      %y
    }

That is all TVM's layout needs (§11 of the text-format note): scopes are braces around
an indented block, everything else is text on one line.  Rendering walks the document
with an explicit stack, so arbitrarily deep nesting never hits Python's recursion limit,
and it touches every part once (linear in the size of the output).

Indentation stops growing at :data:`MAX_INDENT` levels: deeper blocks are laid out at
that level.  Otherwise a program nested n deep (10,000 closures, an ``else`` holding a
``let`` and an ``if`` in each of n branches) would print in O(n^2) bytes; the braces
still say where each block ends, and the text parses the same.
"""

from __future__ import annotations

from collections.abc import Iterable


class Block:
    """Lines laid out one indentation level deeper than the enclosing line."""

    __slots__ = ("lines",)

    def __init__(self, lines: list) -> None:
        self.lines = lines

    def __repr__(self) -> str:
        return f"Block({self.lines!r})"


Part = str | Block
Line = str | list

_END = object()

MAX_INDENT = 40
"""Levels of indentation at most (80 spaces with the default indent)."""


def render(lines: Iterable[Line], indent: str = "  ") -> str:
    """Lay out top-level ``lines`` (joined by newlines, no trailing newline)."""
    out: list[str] = []
    ap = out.append
    # Cached "\n" + indentation for each level.
    breaks = ["\n"]

    def brk(level: int) -> str:
        level = min(level, MAX_INDENT)
        while len(breaks) <= level:
            breaks.append("\n" + indent * len(breaks))
        return breaks[level]

    # Frames: [iterator, level, is_lines]. A "lines" frame at level L emits a line break
    # plus L indentation units before every line (the top-level frame, L == 0, only
    # between lines) and, when it ends (L > 0), a break back to level L - 1 so the text
    # after the block continues on a fresh line.  A "parts" frame emits the parts of one
    # line; a Block part opens a "lines" frame one level deeper.
    stack: list[tuple] = [(iter(lines), 0, True)]
    first = True
    while stack:
        it, level, is_lines = stack[-1]
        item = next(it, _END)
        if item is _END:
            stack.pop()
            if is_lines and level > 0:
                ap(brk(level - 1))
            continue
        if is_lines:
            if level > 0:
                ap(brk(level))
            elif first:
                first = False
            else:
                ap("\n")
            if type(item) is str:
                ap(item)
            else:
                stack.append((iter(item), level, False))
        elif type(item) is str:
            ap(item)
        elif type(item) is list:  # nested parts: same line, same level
            stack.append((iter(item), level, False))
        else:  # a Block inside a line
            stack.append((iter(item.lines), level + 1, True))
    return "".join(out)


__all__ = ["Block", "MAX_INDENT", "render"]
