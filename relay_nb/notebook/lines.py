"""Which lines of a printed program a node's text takes (what a click selects).

The rule (:func:`line_range`): the expression written at ``line:column`` ends at a line
break, ``;`` or ``,`` outside brackets, or at the bracket that closes the one it sits in;
strings and comments are skipped, and a ``}`` closing a block ends it unless ``else``
follows.  A view asks this for every node, so :class:`LineSpans` reads the printout once
(the tokens that matter, each bracket paired with its closing one): a question then
steps over the top-level tokens of one expression, jumping over each bracketed part,
instead of re-reading characters (a 24,000-node RNN-T printout took 1-2 s per view so).
No anywidget here: the explorer's data builder uses it outside the widget too.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from typing import Optional

# The characters the rule looks at; a string or comment is one token (its brackets and
# separators do not count).  An unclosed string or comment runs to the end of the text.
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*(?:"|\\?\Z)|//[^\n]*|/\*.*?(?:\*/|\Z)|[()\[\]{}\n;,]', re.S)
_OPEN, _CLOSE = "([{", ")]}"
_ENDS = "\n;,"


def line_offsets(text: str) -> list[int]:
    """The position in ``text`` where each line starts."""
    out = [0]
    k = text.find("\n")
    while k >= 0:
        out.append(k + 1)
        k = text.find("\n", k + 1)
    return out


class LineSpans:
    """``text`` read once, to answer :meth:`end_line` for many nodes in linear time.

    >>> LineSpans("def @f(%x) {\\n  add(%x, %x)\\n}\\n").end_line(1, 1)
    3
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.offsets = line_offsets(text)
        starts: list[int] = []
        ends: list[int] = []
        chars: list[str] = []
        pair: list[int] = []  # an opening bracket: the index of its closing one (-1: none)
        stack: list[int] = []
        nl_strings: list[int] = []  # a string holding line breaks: its start, and
        nl_counts: list[int] = [0]  # the running count of such breaks (prefix sums)
        for m in _TOKEN.finditer(text):
            k = len(starts)
            start, end = m.span()
            ch = text[start]
            starts.append(start)
            ends.append(end)
            chars.append(ch)
            pair.append(-1)
            if ch in _OPEN:
                stack.append(k)
            elif ch in _CLOSE:
                if stack:
                    pair[stack.pop()] = k
            elif ch == '"' and "\n" in m.group():
                # the rule does not count a string's line breaks (printers escape them)
                nl_strings.append(start)
                nl_counts.append(nl_counts[-1] + m.group().count("\n"))
        self._starts, self._ends, self._chars, self._pair = starts, ends, chars, pair
        self._nl_strings, self._nl_counts = nl_strings, nl_counts

    def end_line(self, line: int, column: int) -> int:
        """The last line (1-based) of the expression written at ``line:column``."""
        offsets = self.offsets
        if not 1 <= line <= len(offsets):
            return line
        pos = offsets[line - 1] + max(column - 1, 0)
        text = self.text
        if pos >= len(text):
            return line
        starts, chars, pair = self._starts, self._chars, self._pair
        k = bisect_left(starts, pos)
        if k > 0 and self._ends[k - 1] > pos:
            # ``pos`` is inside a string or comment as read from the top: read from there
            return line + LineSpans(text[pos:]).end_line(1, 1) - 1
        n_tokens, stop = len(starts), len(text)
        while k < n_tokens:
            ch = chars[k]
            if ch in _OPEN:
                close = pair[k]
                if close < 0:
                    break  # never closed: the rest of the text
                c = starts[close]
                if text[c] == "}" and not text.startswith(" else", c + 1):
                    stop = c  # a block closed: the expression (fn, if, match, def) ends
                    break
                k = close + 1
                continue
            if ch in _CLOSE or ch in _ENDS:
                stop = starts[k]
                break
            k += 1  # a string or a comment
        # Line breaks before ``stop``, less those inside strings.
        breaks = bisect_right(offsets, stop) - bisect_right(offsets, pos)
        strings = self._nl_strings
        if strings:
            a, b = bisect_left(strings, pos), bisect_left(strings, stop)
            breaks -= self._nl_counts[b] - self._nl_counts[a]
        return line + breaks


def line_range(
    text: str, line: int, column: int, spans: Optional[LineSpans] = None
) -> tuple[int, int]:
    """The lines of ``text`` taken by the expression written at ``line:column`` (1-based).

    The expression ends at a line break, ``;`` or ``,`` outside brackets, or at the
    bracket that closes the one it sits in; strings and comments are skipped.  So a call
    is its own line, ``fn (...) { ... }`` or ``if (...) { ... } else { ... }`` runs to its
    closing brace.

    >>> line_range("def @f(%x) {\\n  add(%x, %x)\\n}\\n", 1, 1)
    (1, 3)

    ``spans`` (:class:`LineSpans` of ``text``) saves re-reading the text when asked for
    every node of a big program.
    """
    if spans is None or spans.text is not text:
        spans = LineSpans(text)
    return (line, spans.end_line(line, column))


__all__ = ["LineSpans", "line_offsets", "line_range"]
