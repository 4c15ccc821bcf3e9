"""The errors relay_nb raises on bad input.

Every error a user can cause is a :class:`RelayError`.  When it knows where in the source
the problem is, its message names ``source:line:column`` and quotes the line with a
caret under the column, so a notebook shows something like::

    error: add: shapes (2, 3) and (4, 3) do not broadcast
      --> from_string:3:5
       |
     3 |   add(%x, %y)
       |   ^^^^^^^^^^^
"""

from __future__ import annotations

from typing import Optional

from .ir.span import Span


# Characters that end a line on a terminal or for str.splitlines but not for locations
# (which count "\n" only): shown as one visible character each, so the quoted line stays
# one line and the caret below it stays under the right column.
_VISIBLE_BREAKS = str.maketrans({c: "\u21b5" for c in "\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"})


class RelayError(Exception):
    """Base class of every error relay_nb raises on user input."""

    kind = "error"

    def __init__(self, message: str, span: Optional[Span] = None, notes: tuple[str, ...] = ()):
        self.message = message
        self.span = span
        self.notes = tuple(notes)
        super().__init__(self.render())

    # Where the error is, as (line, column), or None.
    @property
    def line(self) -> Optional[int]:
        if self.span is None:
            return None
        offset = self.span.source.line_offset if self.span.source is not None else 0
        return self.span.line + offset

    @property
    def column(self) -> Optional[int]:
        return self.span.column if self.span is not None else None

    def render(self) -> str:
        """The full message: location, quoted source line with caret, notes."""
        out = [f"{self.kind}: {self.message}"]
        span = self.span
        if span is not None:
            out.append(f"  --> {span.source_name}:{self.line}:{span.column}")
            text = span.source.line(span.line) if span.source is not None else ""
            if text:
                lineno = str(self.line)
                pad = " " * len(lineno)
                width = 1
                if span.end_line == span.line and span.end_column > span.column:
                    width = span.end_column - span.column
                caret_col = max(span.column - 1, 0)
                # Tabs keep their width in the caret line so the caret lines up.
                lead = "".join("\t" if ch == "\t" else " " for ch in text[:caret_col])
                out.append(f" {pad} |")
                out.append(f" {lineno} | {text.translate(_VISIBLE_BREAKS)}")
                out.append(f" {pad} | {lead}{'^' * width}")
        for note in self.notes:
            out.append(f"  = note: {note}")
        return "\n".join(out)

    def __str__(self) -> str:
        return self.render()

    def _render_traceback_(self) -> list[str]:
        """IPython shows this instead of a Python traceback: the located message alone,
        since the frames inside relay_nb say nothing to a notebook user."""
        return self.render().splitlines()


class ParseError(RelayError):
    """The text is not valid Relay (syntax, undefined name, bad literal or attribute)."""

    kind = "parse error"


class RelayTypeError(RelayError):
    """The program is ill-typed (shape or dtype mismatch, wrong arity, ...)."""

    kind = "type error"


TypeError_ = RelayTypeError  # the name DESIGN.md and TVM-style code use


class AttrError(RelayError):
    """An operator attribute is unknown or has a bad value."""

    kind = "attribute error"


class EvalError(RelayError):
    """A program failed while running (non-exhaustive match?, recursion bound, ...)."""

    kind = "evaluation error"


class RelayInternalError(RelayError):
    """An invariant of relay_nb itself broke; the message says what to report."""

    kind = "internal error"


__all__ = [
    "RelayError",
    "ParseError",
    "RelayTypeError",
    "TypeError_",
    "AttrError",
    "EvalError",
    "RelayInternalError",
]
