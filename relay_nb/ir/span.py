"""Source locations carried by IR nodes, so errors can point at the user's text."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True, eq=False)
class Source:
    """A named source text; spans keep a reference so errors can quote the line."""

    name: str
    text: str = field(repr=False)
    # Added to every line number reported for this source (a notebook cell's first line
    # may not be line 1 of what the user sees).
    line_offset: int = 0

    def line(self, lineno: int) -> str:
        """The text of 1-based line ``lineno`` (without its newline), or ''."""
        lines = self.text.splitlines()
        if 1 <= lineno <= len(lines):
            return lines[lineno - 1]
        return ""


@dataclass(frozen=True, slots=True)
class Span:
    """A 1-based ``line:column`` range in a :class:`Source`."""

    source: Source | None
    line: int
    column: int
    end_line: int = 0
    end_column: int = 0

    @property
    def source_name(self) -> str:
        return self.source.name if self.source is not None else "<unknown>"

    def __str__(self) -> str:
        return f"{self.source_name}:{self.line}:{self.column}"
