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

import numpy as np

# Strings and comments: each one token whose brackets and separators do not count.  An
# unclosed string or comment runs to the end of the text.  The rule looks at them and at
# the single characters below.
_SKIPPED = re.compile(r'"(?:[^"\\]|\\.)*(?:"|\\?\Z)|//[^\n]*|/\*.*?(?:\*/|\Z)', re.S)
_OPEN, _CLOSE = "([{", ")]}"
_ENDS = "\n;,"
# Per ASCII code: +1 an opening bracket, -1 a closing one; and the single characters the
# rule reads.  Indexed by min(code, 127) (DEL is none of them): a table lookup per
# character is ~10x faster than np.isin over a 2 MB printout.
_STEP = np.zeros(128, dtype=np.int8)
_STEP[[ord(c) for c in _OPEN]] = 1
_STEP[[ord(c) for c in _CLOSE]] = -1
_SINGLE = np.zeros(128, dtype=bool)
_SINGLE[[ord(c) for c in _OPEN + _CLOSE + _ENDS]] = True


def _codes(text: str) -> np.ndarray:
    """Each character's code, clipped to 127 (an index into the tables above)."""
    return np.minimum(np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32), 127)


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

    Most nodes of a printout end on their own line (``%5 = add(%4, %3);``): when the rest
    of the line opens no more brackets than it closes and the line has no string or
    comment, the answer is that line (the walk below would stop on it), found with a few
    ``str.count`` calls.  Only the other questions (a ``def``, ``fn`` or ``if`` spanning
    lines) read the tokens, once, on the first such question.

    >>> LineSpans("def @f(%x) {\\n  add(%x, %x)\\n}\\n").end_line(1, 1)
    3
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.offsets = line_offsets(text)
        self._tokens: Optional[tuple] = None
        # Lines a string or comment spans into (where counting brackets would be wrong).
        self._inside: set[int] = set()
        if '"' in text or "/" in text:
            for m in _SKIPPED.finditer(text):
                if "\n" in m.group():
                    first = bisect_right(self.offsets, m.start())
                    self._inside.update(range(first, bisect_right(self.offsets, m.end() - 1) + 1))

    def _read(self) -> tuple:
        """The tokens that matter, each bracket paired with its closing one (in numpy:
        a 1.8 MB printout has 180,000 such tokens, 0.3 s in a Python loop)."""
        if self._tokens is not None:
            return self._tokens
        text = self.text
        skipped = list(_SKIPPED.finditer(text)) if '"' in text or "/" in text else []
        plain = text
        if skipped:  # strings and comments blanked out: their brackets do not count
            plain = _SKIPPED.sub(lambda m: " " * (m.end() - m.start()), text)
        codes = _codes(plain)
        single = np.flatnonzero(_SINGLE[codes])
        skip_starts = np.array([m.start() for m in skipped], dtype=np.int64)
        starts_a = np.concatenate([single, skip_starts])
        ends_a = np.concatenate([single + 1, np.array([m.end() for m in skipped], dtype=np.int64)])
        order = np.argsort(starts_a, kind="stable")
        starts_a, ends_a = starts_a[order], ends_a[order]
        # a string is '"' and a comment '/' (what the walk tests for)
        skip_kind = np.array([ord(text[m.start()]) for m in skipped], dtype=codes.dtype)
        kinds = np.concatenate([codes[single], skip_kind])[order]
        step = _STEP[kinds].astype(np.int64)
        pair = np.full(len(kinds), -1, dtype=np.int64)
        depth = np.cumsum(step)
        if len(depth) and depth.min() < 0:  # a stray closing bracket: pair them one by one
            stack: list[int] = []
            for k in np.flatnonzero(step).tolist():
                if step[k] > 0:
                    stack.append(k)
                elif stack:
                    pair[stack.pop()] = k
        else:
            # An opening bracket reaching depth d pairs with the next bracket closing
            # from depth d: sorted by that depth (then position) they alternate.
            brackets = np.flatnonzero(step)
            level = np.where(step[brackets] > 0, depth[brackets], depth[brackets] + 1)
            sort = np.lexsort((brackets, level))
            by_level, lv = brackets[sort], level[sort]
            same = lv[:-1] == lv[1:]
            opens = (step[by_level[:-1]] > 0) & (step[by_level[1:]] < 0) & same
            pair[by_level[:-1][opens]] = by_level[1:][opens]
        nl_strings: list[int] = []  # a string holding line breaks: its start, and
        nl_counts: list[int] = [0]  # the running count of such breaks (prefix sums)
        for m in skipped:
            if text[m.start()] == '"' and "\n" in m.group():
                # the rule does not count a string's line breaks (printers escape them)
                nl_strings.append(m.start())
                nl_counts.append(nl_counts[-1] + m.group().count("\n"))
        chars = list(kinds.astype(np.uint8).tobytes().decode("ascii"))  # all ASCII codes
        self._tokens = (starts_a.tolist(), ends_a.tolist(), chars, pair.tolist(),
                        nl_strings, nl_counts)  # fmt: skip
        return self._tokens

    def _same_line(self, line: int, pos: int) -> bool:
        """Whether the expression at ``pos`` surely ends on ``line``: no string or comment
        on the line or spanning into it, and the rest of the line closes at least as many
        brackets as it opens (the walk stops at a closing bracket, ``;`` or ``,`` at its
        level, or at the line break with every bracket it opened closed)."""
        text, offsets = self.text, self.offsets
        if line in self._inside:
            return False
        eol = offsets[line] - 1 if line < len(offsets) else len(text)
        if pos > eol:
            return False
        start = offsets[line - 1]
        if text.find('"', start, eol) >= 0 or text.find("/", start, eol) >= 0:
            return False
        opens = text.count("(", pos, eol) + text.count("[", pos, eol) + text.count("{", pos, eol)
        closes = text.count(")", pos, eol) + text.count("]", pos, eol) + text.count("}", pos, eol)
        return opens <= closes

    def end_lines(self, lines: list[int], columns: list[int]) -> list[int]:
        """:meth:`end_line` of each ``(lines[k], columns[k])``: the one-line test of every
        question at once (numpy prefix sums over the text, instead of six ``str.count``
        per node), :meth:`end_line` for the others."""
        text, offsets = self.text, self.offsets
        n, size = len(offsets), len(text)
        if not lines:
            return []
        line = np.asarray(lines, dtype=np.int64)
        valid = (line >= 1) & (line <= n)
        at = np.clip(line, 1, n)
        starts = np.asarray(offsets, dtype=np.int64)
        pos = starts[at - 1] + np.maximum(np.asarray(columns, dtype=np.int64) - 1, 0)
        eol = np.append(starts[1:] - 1, size)[at - 1]
        codes = _codes(text)
        # brackets opened minus closed before each position
        before = np.concatenate(([0], np.cumsum(_STEP[codes], dtype=np.int64)))
        # lines holding a string or comment character, or spanned by a string or comment
        dirty = np.zeros(n + 2, dtype=bool)
        marks = np.flatnonzero((codes == ord('"')) | (codes == ord("/")))
        dirty[np.searchsorted(starts, marks, side="right")] = True
        if self._inside:
            dirty[list(self._inside)] = True
        inside = valid & (pos < size)
        ok = inside & (pos <= eol) & ~dirty[at]
        ok[ok] = before[eol[ok]] - before[pos[ok]] <= 0
        out = list(lines)
        for k in np.flatnonzero(inside & ~ok).tolist():
            out[k] = self.end_line(lines[k], columns[k])
        return out

    def end_line(self, line: int, column: int) -> int:
        """The last line (1-based) of the expression written at ``line:column``."""
        offsets = self.offsets
        if not 1 <= line <= len(offsets):
            return line
        pos = offsets[line - 1] + max(column - 1, 0)
        text = self.text
        if pos >= len(text):
            return line
        if self._same_line(line, pos):
            return line
        starts, ends, chars, pair, nl_strings, nl_counts = self._read()
        k = bisect_left(starts, pos)
        if k > 0 and ends[k - 1] > pos:
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
        if nl_strings:
            a, b = bisect_left(nl_strings, pos), bisect_left(nl_strings, stop)
            breaks -= nl_counts[b] - nl_counts[a]
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
