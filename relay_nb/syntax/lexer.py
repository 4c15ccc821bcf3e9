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
  (``%layer1.weight``, and ``%joint_net.2.weight``: numeric parts between names) into one
  token; a ``.0`` that no name follows is a projection, so ``%t.0.1`` is two projections.
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
from collections.abc import Iterator

from ..errors import ParseError

Token = tuple  # (type, value, start, end)

_NAME = r"[A-Za-z_]\w*+(?:/(?![/*])\w*+)*+"
# A variable name: dotted parts, numeric ones only between names (``%joint_net.2.weight``,
# a PyTorch parameter path); trailing ``.0`` parts are projections (``%x.0``, ``%0.1``).
_LOCAL_BODY = rf"{_NAME}(?:(?:\.\d+)*+\.{_NAME})*+"

# Whitespace and comments; possessive so an unclosed comment cannot backtrack.
_SKIP = r"(?:\s+|//[^\n]*|/\*(?:[^*/]++|\*(?!/)|/(?!\*))*+\*/|#(?!\[)[^\n]*)*+"
_NUM = r"-*(?:\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?:[A-Za-z_]\w*)?|inff\b)"
# A literal attribute value: number, string, name, or a list of those (nested once).
_ATOM = rf'(?:{_NUM}|"(?:[^"\\\n]|\\.)*+"|[A-Za-z_]\w*)'
_LIST1 = rf"\[\s*(?:{_ATOM}(?:\s*,\s*{_ATOM})*+\s*,?)?\s*\]"
_ITEM = rf"(?:{_ATOM}|{_LIST1})"
_VALUE = rf"(?:{_ATOM}|\[\s*(?:{_ITEM}(?:\s*,\s*{_ITEM})*+\s*,?)?\s*\])"

# (group name, regex).  The order is the order of preference, and puts the frequent
# tokens first: the regex engine tries the alternatives one by one.
_TOKEN_SPECS = [
    # a '-' before a digit starts a number, a '.' before a digit a projection, '/*' a comment
    (
        "PUNCT",
        r"=>|->|==|!=|<=|>=|&&|\|\||[()\[\]{},;:=<>+*?]|-(?!-*(?:\d|inff\b))|\.(?!\d)|/(?!\*)",
    ),
    # %N, or %N = (a graph binding's head, fused)
    ("GRAPHVAR", r"(%\d+)(?:[ \t]*(=)(?![=>]))?"),
    ("LOCAL", rf"%{_LOCAL_BODY}"),
    ("META", r"meta\[([^\]\s]+)\]\[(\d+)\]"),
    ("LET_HEAD", rf"let[ \t]+(%{_LOCAL_BODY})[ \t]*=(?![=>])"),
    ("MATCH_PARTIAL", r"match\?"),
    ("METADATA", r"#\[\s*metadata\s*\]|METADATA:"),
    ("OLD_VERSION", r"v(\d+\.\d+\.\d+)\b"),
    # a name (dots join: nn.conv2d), or name=literal (an attribute, fused)
    (
        "IDENT",
        (
            rf"({_NAME}(?:[ \t]*\.[ \t]*{_NAME})*+)"
            rf"(?:[ \t]*=(?![=>])[ \t]*({_VALUE})(?=\s*[,)}}]))?"
        ),
    ),
    ("NUMBER", r"\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?:[A-Za-z_]\w*)?"),
    ("NEGNUMBER", r"-+(?:\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?:[A-Za-z_]\w*)?|inff\b)"),
    ("PROJ", r"\.\d+"),
    ("GLOBAL", rf"@{_NAME}(?:\.{_NAME})*+"),
    ("STRING", r'"(?:[^"\\\n]|\\.)*+"'),
    ("VERSION", r'#\[\s*version\s*=\s*"([^"]*)"\s*\]'),
    ("BAD_DIRECTIVE", r"#\[[^\]\n]*\]?"),
    ("COMMENT_OPEN", r"/\*"),
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
_G_PUNCT = _G["PUNCT"]
_G_GRAPHVAR = _G["GRAPHVAR"]
_G_IDENT = _G["IDENT"]
_N_GROUPS = _MASTER.groups + 1
# Tokens whose value is their text (group -> terminal name).
_VALUED = {_G[k]: k for k in ("LOCAL", "NUMBER", "NEGNUMBER", "PROJ", "GLOBAL")}
# An attribute can only follow these tokens.
_ATTR_CONTEXT = frozenset({"COMMA", "LPAR", "LBRACE"})

_TY_COMMENT = re.compile(r"[ \t]*/\*\s*ty=")
_SKIP_RX = re.compile(_SKIP)
_TIGHT_CALLEES = frozenset({"IDENT", "LOCAL", "GLOBAL", "GRAPHVAR"})

_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\", "0": "\0"}
_ESCAPE_RX = re.compile(r"\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|.)", re.DOTALL)


def unescape(body: str) -> str:
    """Process the printer's escapes (``\\"``, ``\\\\``, ``\\n``, ``\\t``, ``\\xNN``,
    ``\\uNNNN``, ``\\UNNNNNNNN``).

    TVM's parser does not unescape, so strings with those characters did not round-trip;
    an unknown escape is kept as written (``"C:\\dir"`` stays as it is).
    """
    if "\\" not in body:
        return body

    def sub(m: re.Match) -> str:
        esc = m.group(1)
        if len(esc) > 2 and esc[0] in "xuU":
            code = int(esc[1:], 16)
            return chr(code) if code <= 0x10FFFF else m.group(0)
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
    """True if the '<' at ``lt`` opens type arguments: types, a matching '>', then '('.

    Only the angle brackets are counted (so a typo inside, such as ``Tensor[(), bool)]``,
    is reported by the parser where it is); no ``%``, ``@``, ``;``, braces or newline may
    come first, and the first thing after '<' must start a type.
    """
    n = len(text)
    i = lt + 1
    while i < n and text[i] in " \t":
        i += 1
    if i >= n or not (text[i].isalpha() or text[i] in "_(["):
        return False
    depth = 1
    limit = min(n, lt + 2000)
    while i < limit:
        ch = text[i]
        if ch == "<":
            depth += 1
        elif ch == ">" and text[i - 1] != "-":  # not the '->' of a function type
            depth -= 1
            if depth == 0:
                j = i + 1
                while j < n and text[j] in " \t":
                    j += 1
                return j < n and text[j] == "("
        elif ch in '%@;{}\n"=':
            return False
        i += 1
    return False



def brief(text: str) -> str:
    """``text`` for a message: a run of thousands of digits is shortened to its ends."""
    if len(text) <= 40:
        return text
    return f"{text[:16]}...{text[-8:]} ({len(text)} characters)"


def index_value(digits: str) -> int:
    """A decimal index (meta table entry, tuple field); ValueError, in our words, when it
    is longer than any index can be (Python's int() would refuse past 4,300 digits with
    advice about sys.set_int_max_str_digits, which is no help to a Relay user)."""
    if len(digits.lstrip("0")) > 18:
        raise ValueError(f"number too large: {brief(digits)} is not a valid index")
    return int(digits)

class Lexer:
    """Tokens of ``text[pos:]``, as an iterator of ``(type, value, start, end)``.

    ``names`` maps punctuation and keyword text to the grammar's terminal names.
    After the iteration, ``metadata`` is the text after ``#[metadata]`` (or None) and
    ``metadata_start`` its offset; ``eof`` is the offset of the end of the tokens.
    """

    def __init__(
        self, text: str, names: dict[str, str], source=None, pos: int = 0, endpos: int | None = None
    ):
        self.text = text
        self.names = names
        self.source = source
        self.pos = pos
        self.endpos = len(text) if endpos is None else endpos
        self.metadata: str | None = None
        self.metadata_start: int | None = None
        self.eof = self.endpos
        self.make_span = None  # set by the parser: (start, end) -> Span
        valued: list[str | None] = [None] * _N_GROUPS
        for g, k in _VALUED.items():
            valued[g] = k
        self.valued = valued
        self.lt = names.get("<", "LESSTHAN")

    def error(self, message: str, start: int, end: int, notes: tuple[str, ...] = ()) -> ParseError:
        span = self.make_span(start, end) if self.make_span is not None else None
        return ParseError(message, span, notes)

    def type_args_follow(self, start: int, prev_type: str | None, prev_end: int) -> bool:
        """Is the '<' at ``start`` the start of call-site type arguments?"""
        return (
            prev_end == start and prev_type in _TIGHT_CALLEES and _type_args_end(self.text, start)
        )

    def special(self, m: re.Match, k: int, prev_type: str | None):
        """The token of a match that is not punctuation nor a plain valued token.

        Returns ``(type, value, start, end, restart)``: ``type`` is None when the match
        is not a token (a nested comment), ``"$END"`` at the end of the input (or of the
        text before ``#[metadata]``); ``restart`` is the offset to resume lexing from
        when it is not right after this match.
        """
        text = self.text
        names = self.names
        start, end = m.span(k)
        if k == _G_IDENT:
            value = m.group(k + 1)
            if " " in value or "\t" in value:
                value = re.sub(r"[ \t]+", "", value)
            if m.group(k + 2) is None:
                return (names.get(value, "IDENT"), value, start, end, None)  # 'inff' is a NUMBER
            if prev_type in _ATTR_CONTEXT:
                return ("ATTR", (value, m.group(k + 2)), start, end, None)
            # `let %x: Nat = ...`: not an attribute; lex the name alone
            end = m.end(k + 1)
            return (names.get(value, "IDENT"), value, start, end, end)
        if k == _G_GRAPHVAR:
            if m.group(k + 2) is None:
                return ("GRAPHVAR", m.group(k + 1), start, end, None)
            return ("GRAPH_HEAD", m.group(k + 1), start, end, None)
        kind = _KIND_OF_GROUP[k]
        if kind == "EOF":
            self.eof = start
            return ("$END", None, start, start, None)
        if kind == "META":
            try:
                index = index_value(m.group(k + 2))
            except ValueError as err:
                raise self.error(str(err), m.start(k + 2), m.end(k + 2)) from None
            value = (m.group(k + 1), index, *self._ty_comment(end))
            return ("META", value, start, end, None)
        if kind == "LET_HEAD":
            return ("LET_HEAD", m.group(k + 1), start, end, None)
        if kind == "STRING":
            return ("STRING", unescape(m.group(k)[1:-1]), start, end, None)
        if kind == "MATCH_PARTIAL":
            return (names["match?"], "match?", start, end, None)
        if kind == "VERSION" or kind == "OLD_VERSION":
            return ("VERSION", m.group(k + 1), start, end, None)
        if kind == "METADATA":
            self.eof = start
            self.metadata_start = end
            self.metadata = text[end : self.endpos]
            return ("$END", None, start, start, None)
        if kind == "COMMENT_OPEN":
            close = skip_block_comment(text, start)
            if close < 0:
                raise self.error("unclosed /* comment", start, start + 2)
            return (None, None, start, close, close)
        if kind == "BAD_DIRECTIVE":
            raise self.error(
                f'unknown directive {m.group(k)!r}: only #[version = "0.0.5"] and #[metadata] exist',
                start,
                end,
            )
        raise self.error(_bad_char_message(m.group(k)), start, end)

    def __iter__(self) -> Iterator[Token]:
        """The tokens (the parser inlines this loop; this one serves the other uses)."""
        text = self.text
        names = self.names
        valued = self.valued
        pos = self.pos
        prev_type: str | None = None
        prev_end = -1
        while True:
            restart = None
            for m in _MASTER.finditer(text, pos, self.endpos):
                k = m.lastindex
                if k == _G_PUNCT:
                    value = m.group(k)
                    t = names[value]
                    start, end = m.span(k)
                    if t == self.lt and self.type_args_follow(start, prev_type, prev_end):
                        t = "TARGS_LT"
                else:
                    t = valued[k]
                    if t is not None:
                        start, end = m.span(k)
                        value = m.group(k)
                    else:
                        t, value, start, end, restart = self.special(m, k, prev_type)
                        if t == "$END":
                            return
                        if t is None:
                            break
                prev_type = t
                prev_end = end
                yield (t, value, start, end)
                if restart is not None:
                    break
            else:
                self.eof = self.endpos
                return
            pos = restart

    def _ty_comment(self, end: int) -> tuple[str | None, int]:
        """The ``ty=...`` text of a ``/* ty=... */`` comment right after ``end``."""
        text = self.text
        m = _TY_COMMENT.match(text, end)
        if m is None:
            return (None, 0)
        close = skip_block_comment(text, m.start() + text[m.start() :].index("/*"))
        if close < 0:
            return (None, 0)
        body_start = m.end()
        body = text[body_start : close - 2]
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


def bracket_report(text: str, names: dict[str, str], start: int = 0, end: int | None = None):
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
            elif v in pairs and stack and stack[-1][0] == pairs[v]:
                stack.pop()
    except ParseError:
        pass
    return stack[-1] if stack else None


__all__ = ["Lexer", "Token", "bracket_report", "skip_block_comment", "unescape"]
