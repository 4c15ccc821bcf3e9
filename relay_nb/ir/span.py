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
        """The text of 1-based line ``lineno`` (without its newline), or ''.

        Lines end at ``\n`` only (a ``\r`` before it is dropped), exactly as spans count
        them: ``str.splitlines`` also breaks at a lone ``\r``, U+2028 and other
        separators, and would quote another line than the one a location names."""
        if lineno < 1:
            return ""
        text = self.text
        start = 0
        for _ in range(lineno - 1):
            start = text.find("\n", start) + 1
            if start == 0:
                return ""
        end = text.find("\n", start)
        line = text[start:] if end < 0 else text[start:end]
        return line[:-1] if line.endswith("\r") else line


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
