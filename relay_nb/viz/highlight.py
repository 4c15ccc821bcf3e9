"""Split printed Relay text into classified tokens, for syntax highlighting.

A single regular expression in the spirit of a lexer: comments, strings, the version and
metadata headers, ``%locals``, ``@globals``, numbers with dtype suffixes, keywords, type
names, operators (a name followed by ``(``), attribute keys (a name followed by ``=``),
constructors and ADT names (capitalised).  Everything else is plain text.  Tokens carry
their 1-based line and column so a view can attach a node's type to its token.
"""

from __future__ import annotations

import re
from typing import Iterator, NamedTuple

KEYWORDS = frozenset(
    "fn def let if else match type extern free_var ref ref_read ref_write where "
    "True False None".split()
)
TYPE_NAMES = frozenset(
    "Tensor bool float16 float32 float64 bfloat16 int8 int16 int32 int64 uint8 uint16 "
    "uint32 uint64 Type Shape BaseType".split()
)

_TOKEN = re.compile(
    r"""
    (?P<comment>//[^\n]*|/\*.*?\*/)
  | (?P<meta>\#\[[^\]\n]*\]|meta\[[^\]\n]*\]\[\d+\])
  | (?P<string>"(?:[^"\\\n]|\\.)*")
  | (?P<local>%[A-Za-z0-9_/]+)
  | (?P<global>@[A-Za-z0-9_.]+)
  | (?P<number>-?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?(?:f16|f32|f64|f|i8|i16|i32|i64|u8|u16|u32|u64)?\b|-?inff\b)
  | (?P<name>[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*\??)
  | (?P<space>\s+)
  | (?P<other>.)
    """,
    re.S | re.X,
)


class Token(NamedTuple):
    kind: str  # comment meta string local global number keyword type op attr ctor name space other
    text: str
    line: int
    column: int


def tokens(text: str) -> Iterator[Token]:
    """The tokens of ``text`` in order; their texts concatenate back to ``text``."""
    line, line_start = 1, 0
    for m in _TOKEN.finditer(text):
        kind = m.lastgroup or "other"
        value = m.group()
        start = m.start()
        if kind == "name":
            kind = _classify(value, text, m.end())
        yield Token(kind, value, line, start - line_start + 1)
        newlines = value.count("\n")
        if newlines:
            line += newlines
            line_start = start + value.rfind("\n") + 1


def _classify(name: str, text: str, end: int) -> str:
    bare = name.rstrip("?")
    if bare in KEYWORDS:
        return "keyword"
    if name in TYPE_NAMES:
        return "type"
    nxt = _next_char(text, end)
    if nxt == "(":
        return "ctor" if name[:1].isupper() else "op"
    if text[end : end + 1] == "=" and text[end + 1 : end + 2] not in ("=", ">"):
        return "attr"  # strides=[1, 1] (the printer writes no space before `=`)
    if name[:1].isupper():
        return "ctor"
    return "name"


def _next_char(text: str, end: int) -> str:
    while end < len(text) and text[end] == " ":
        end += 1
    return text[end] if end < len(text) else ""


__all__ = ["Token", "tokens"]
