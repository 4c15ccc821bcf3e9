"""The tokenizer of the Relay text format.

One compiled regular expression reads a token *and the whitespace and comments before it*
in a single match, so the Python loop runs once per token.  Tokens are plain tuples
``(type, value, start, end)`` with character offsets (line and column are computed only
for the nodes and errors that need them); ``type`` is the terminal name the grammar
(``relay.lark``) uses.

What the lexer decides on its own (see ``relay_text_format.md`` §2):

* ``//`` comments, nested ``/* */`` comments and ``#`` comments (the docs' ADT page)
  are skipped; ``#[version = ...]`` and ``#[metadata]`` are directives, any other
  ``#[`` is an error.
* Dots join identifiers (``nn.conv2d``, ``relay.reshape_only``) and variable names
  (``%layer1.weight``) into one token; ``.0`` right after anything is a projection, so
  ``%t.0.1`` is two projections.
* A ``-`` directly followed by a digit starts a negative number, as in TVM; the grammar
  reads ``%x -1`` as a subtraction anyway.
* The ``<`` of call-site type arguments ``%f<T>(...)`` (written right after the callee,
  with a matching ``>`` followed by ``(``) is a ``TARGS_LT`` token, so ``%a < %b`` stays
  a comparison.
* A ``meta[...][i]`` token carries the text of a directly following ``/* ty=... */``
  comment, which is where TVM's printer writes the type of a meta constant.
"""

from __future__ import annotations

import re
from typing import Iterator, Optional

from ..errors import ParseError

Token = tuple  # (type, value, start, end)

_NAME = r"[A-Za-z_](?:\w|/(?![/*]))*"

# Whitespace and comments; possessive so an unclosed comment cannot backtrack.
_SKIP = (
    r"(?:\s+|//[^\n]*|/\*(?:[^*/]|\*(?!/)|/(?!\*))*+\*/|#(?!\[)[^\n]*)*+"
)

# (group name, regex); the group order is the order of preference.
_TOKEN_SPECS = [
    ("GRAPHVAR", r"%\d+"),
    ("LOCAL", rf"%{_NAME}(?:\.{_NAME})*"),
    ("GLOBAL", rf"@{_NAME}(?:\.{_NAME})*"),
    ("META", r"meta\[([^\]\s]+)\]\[(\d+)\]"),
    ("VERSION", r'#\[\s*version\s*=\s*"([^"]*)"\s*\]'),
    ("METADATA", r"#\[\s*metadata\s*\]|METADATA:"),
    ("BAD_DIRECTIVE", r"#\[[^\]\n]*\]?"),
    ("OLD_VERSION", r"v(\d+\.\d+\.\d+)\b"),
    ("MATCH_PARTIAL", r"match\?"),
    ("NEGNUMBER", r"-+(?:\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?:[A-Za-z_]\w*)?|inff\b)"),
    ("IDENT", rf"{_NAME}(?:[ \t]*\.[ \t]*{_NAME})*"),
    ("NUMBER", r"\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?:[A-Za-z_]\w*)?"),
    ("PROJ", r"\.\d+"),
    ("STRING", r'"(?:[^"\\\n]|\\.)*+"'),
    ("COMMENT_OPEN", r"/\*"),
    ("PUNCT", r"=>|->|==|!=|<=|>=|&&|\|\||[()\[\]{},;:=<>+\-*/.?]"),
    ("EOF", r"\Z"),
    ("BAD", r"."),
]

_MASTER = re.compile(
    _SKIP + "(?:" + "|".join(f"(?P<{name}>{rx})" for name, rx in _TOKEN_SPECS) + ")",
    re.DOTALL,
)
# Group number -> kind name for the outer groups.
_KIND_OF_GROUP = {_MASTER.groupindex[name]: name for name, _ in _TOKEN_SPECS}
_G = {name: _MASTER.groupindex[name] for name, _ in _TOKEN_SPECS}

_TY_COMMENT = re.compile(r"[ \t]*/\*\s*ty=")
_SKIP_RX = re.compile(_SKIP)
_TIGHT_CALLEES = frozenset({"IDENT", "LOCAL", "GLOBAL", "GRAPHVAR"})

_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\", "0": "\0"}
_ESCAPE_RX = re.compile(r"\\(x[0-9a-fA-F]{2}|.)", re.DOTALL)


def unescape(body: str) -> str:
    """Process the printer's escapes (``\\"``, ``\\\\``, ``\\n``, ``\\t``, ``\\xNN``).

    TVM's parser does not unescape, so strings with those characters did not round-trip;
    an unknown escape is kept as written (``"C:\\dir"`` stays as it is).
    """
    if "\\" not in body:
        return body

    def sub(m: re.Match) -> str:
        esc = m.group(1)
        if esc[0] == "x" and len(esc) == 3:
            return chr(int(esc[1:], 16))
        return _ESCAPES.get(esc, m.group(0))

    return _ESCAPE_RX.sub(sub, body)


def skip_block_comment(text: str, start: int) -> int:
    """End offset of the (possibly nested) ``/* */`` comment starting at ``start``; -1 if
    it is never closed."""
    depth = 0
    i = start
    while True:
        close = text.find("*/", i)
        if close < 0:
            return -1
        opened = text.find("/*", i, close)
        if opened >= 0:
            depth += 1
            i = opened + 2
            continue
        depth -= 1
        i = close + 2
        if depth == 0:
            return i


def _type_args_end(text: str, lt: int) -> bool:
    """True if the '<' at ``lt`` opens type arguments: a matching '>' then '('."""
    depth = 0
    i = lt
    n = len(text)
    limit = min(n, lt + 2000)
    while i < limit:
        ch = text[i]
        if ch in "<[(":
            depth += 1
        elif ch in ">])":
            if ch == ">" and text[i - 1] == "-":  # '->' of a function type
                i += 1
                continue
            depth -= 1
            if depth == 0:
                if ch != ">":
                    return False
                j = i + 1
                while j < n and text[j] in " \t\r\n":
                    j += 1
                return j < n and text[j] == "("
        elif ch in ";{}=\n" and not (ch == "=" and i > 0 and text[i - 1] in "<>!="):
            return False
        i += 1
    return False


class Lexer:
    """Tokens of ``text[pos:]``, as an iterator of ``(type, value, start, end)``.

    ``names`` maps punctuation and keyword text to the grammar's terminal names.
    After the iteration, ``metadata`` is the text after ``#[metadata]`` (or None) and
    ``metadata_start`` its offset; ``eof`` is the offset of the end of the tokens.
    """

    def __init__(self, text: str, names: dict[str, str], source=None, pos: int = 0,
                 endpos: Optional[int] = None):
        self.text = text
        self.names = names
        self.source = source
        self.pos = pos
        self.endpos = len(text) if endpos is None else endpos
        self.metadata: Optional[str] = None
        self.metadata_start: Optional[int] = None
        self.eof = self.endpos
        self.make_span = None  # set by the parser: (start, end) -> Span

    def error(self, message: str, start: int, end: int, notes: tuple[str, ...] = ()) -> ParseError:
        span = self.make_span(start, end) if self.make_span is not None else None
        return ParseError(message, span, notes)

    def __iter__(self) -> Iterator[Token]:
        text = self.text
        names = self.names
        kinds = _KIND_OF_GROUP
        keywords = names  # keywords are in the same table ('let' -> 'LET')
        endpos = self.endpos
        pos = self.pos
        prev_type = None
        prev_end = -1
        g_ident = _G["IDENT"]
        g_local = _G["LOCAL"]
        g_graph = _G["GRAPHVAR"]
        g_number = _G["NUMBER"]
        g_punct = _G["PUNCT"]
        g_global = _G["GLOBAL"]
        g_proj = _G["PROJ"]
        g_neg = _G["NEGNUMBER"]
        finditer = _MASTER.finditer
        while True:
            restart = None
            for m in finditer(text, pos, endpos):
                k = m.lastindex
                if k == g_punct:
                    value = m.group(k)
                    start = m.start(k)
                    end = m.end()
                    if value == "<" and prev_end == start and prev_type in _TIGHT_CALLEES:
                        if _type_args_end(text, start):
                            prev_type = "TARGS_LT"
                            prev_end = end
                            yield ("TARGS_LT", value, start, end)
                            continue
                    prev_type = names[value]
                elif k == g_ident:
                    value = m.group(k)
                    start = m.start(k)
                    end = m.end()
                    if " " in value or "\t" in value:
                        value = re.sub(r"[ \t]+", "", value)
                    prev_type = keywords.get(value, "IDENT")  # 'inff' is a NUMBER
                elif k == g_local or k == g_graph or k == g_number or k == g_global or k == g_proj \
                        or k == g_neg:
                    value = m.group(k)
                    start = m.start(k)
                    end = m.end()
                    prev_type = kinds[k]
                else:
                    kind = kinds[k]
                    start = m.start(k)
                    end = m.end()
                    if kind == "EOF":
                        self.eof = start
                        return
                    if kind == "META":
                        value = (m.group(k + 1), int(m.group(k + 2)), *self._ty_comment(end))
                        prev_type = "META"
                    elif kind == "STRING":
                        value = unescape(m.group(k)[1:-1])
                        prev_type = "STRING"
                    elif kind == "MATCH_PARTIAL":
                        value = "match?"
                        prev_type = names["match?"]
                    elif kind == "VERSION" or kind == "OLD_VERSION":
                        value = m.group(k + 1)
                        prev_type = "VERSION"
                    elif kind == "METADATA":
                        self.eof = start
                        self.metadata_start = end
                        self.metadata = text[end:endpos]
                        return
                    elif kind == "COMMENT_OPEN":
                        close = skip_block_comment(text, start)
                        if close < 0:
                            raise self.error("unclosed /* comment", start, start + 2)
                        restart = close
                        break
                    elif kind == "BAD_DIRECTIVE":
                        raise self.error(
                            f"unknown directive {m.group(k)!r}: only #[version = \"0.0.5\"] and "
                            "#[metadata] exist",
                            start,
                            end,
                        )
                    else:  # BAD
                        ch = m.group(k)
                        raise self.error(_bad_char_message(ch), start, end)
                prev_end = end
                yield (prev_type, value, start, end)
            else:
                # finditer stopped without EOF: only possible when endpos cut a token.
                self.eof = endpos
                return
            pos = restart

    def _ty_comment(self, end: int) -> tuple[Optional[str], int]:
        """The ``ty=...`` text of a ``/* ty=... */`` comment right after ``end``."""
        text = self.text
        m = _TY_COMMENT.match(text, end)
        if m is None:
            return (None, 0)
        close = skip_block_comment(text, m.start() + text[m.start():].index("/*"))
        if close < 0:
            return (None, 0)
        body_start = m.end()
        body = text[body_start:close - 2]
        # Drop a trailing ' span=file:line:col' (TVM writes it after the type).
        cut = body.find(" span=")
        if cut >= 0:
            body = body[:cut]
        return (body, body_start)


def _bad_char_message(ch: str) -> str:
    if ch == '"':
        return "unterminated string: a string ends with '\"' on the same line"
    if ch == "&":
        return "unexpected character '&' (for a logical and write '&&' or logical_and(a, b))"
    if ch == "|":
        return "unexpected character '|' (for a logical or write '||' or logical_or(a, b))"
    if ch == "\r":
        return "a carriage return must be followed by a newline"
    if ch.isprintable():
        return f"unexpected character {ch!r}"
    return f"unexpected control character {ch!r}"


def bracket_report(text: str, names: dict[str, str], start: int = 0, end: Optional[int] = None):
    """The innermost unclosed bracket as ``(char, offset)`` or None (for error messages)."""
    stack: list[tuple[str, int]] = []
    pairs = {")": "(", "]": "[", "}": "{"}
    try:
        for tok in Lexer(text, names, pos=start, endpos=end):
            v = tok[1]
            if tok[0] == "VERSION" or not isinstance(v, str):
                continue
            if v in ("(", "[", "{"):
                stack.append((v, tok[2]))
            elif v in pairs:
                if stack and stack[-1][0] == pairs[v]:
                    stack.pop()
    except ParseError:
        pass
    return stack[-1] if stack else None


__all__ = ["Lexer", "Token", "unescape", "skip_block_comment", "bracket_report"]
