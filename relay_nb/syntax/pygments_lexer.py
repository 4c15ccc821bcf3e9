"""A Pygments lexer for the Relay text format (``pygmentize -l relay``).

Registered as the ``relay`` lexer through the ``pygments.lexers`` entry point, so
nbconvert's HTML export, Sphinx and the Relay kernel's ``language_info`` highlight Relay
as Relay: keywords, operator names with their namespaces (``nn.conv2d``), ``%locals``,
``%0`` graph labels, ``@globals``, types and shapes, ``key=`` attributes, numbers with
their dtype suffix, comments, ``meta[...][i]`` references and the ``#[...]`` directives.
Everything after ``#[metadata]`` is JSON.

Imported only where Pygments is installed (relay_nb itself does not need it).
"""

from __future__ import annotations

from pygments.lexer import RegexLexer, bygroups, include, using, words
from pygments.lexers.data import JsonLexer
from pygments.token import (
    Comment,
    Keyword,
    Name,
    Number,
    Operator,
    Punctuation,
    String,
    Text,
    Whitespace,
)

KEYWORDS = ("def", "fn", "let", "if", "else", "match", "type", "extern", "free_var", "ref", "ref_read", "ref_write")
CONSTANTS = ("True", "False", "None", "nullptr", "inff")
DTYPES = (
    "bool", "int8", "int16", "int32", "int64", "uint1", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "bfloat16", "int", "float",
)  # fmt: skip
_NAME = r"[A-Za-z_][\w/]*"


class RelayLexer(RegexLexer):
    """Relay IR text (TVM's v0.0.5 format and the documentation's pseudo-syntax)."""

    name = "Relay"
    aliases = ["relay"]
    filenames = ["*.relay", "*.rly"]
    mimetypes = ["text/x-relay"]

    tokens = {
        "root": [
            (r"(#\[\s*metadata\s*\])((?s:.*))", bygroups(Comment.Preproc, using(JsonLexer))),
            (r"#\[[^\]]*\]", Comment.Preproc),
            include("space"),
            (r"meta\[[^\]\s]+\]\[\d+\]", Name.Constant),
            (rf"@{_NAME}", Name.Function),
            (r"%\d+", Name.Label),
            (rf"%{_NAME}(?:(?:\.\d+)*\.{_NAME})*", Name.Variable),
            (r"\.\d+", Number.Integer),  # a tuple projection
            (r"match\?", Keyword),
            (words(KEYWORDS, suffix=r"\b"), Keyword),
            (r"Tensor\b", Keyword.Type),
            (words(DTYPES, suffix=r"\b"), Keyword.Type),
            (words(CONSTANTS, suffix=r"\b"), Keyword.Constant),
            (r'"(?:[^"\\\n]|\\.)*"', String),
            (r"-*\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?:f16|f32|f64|f|i8|i16|i32|i64|i|u8|u16|u32|u64)?\b", Number),
            (r"\?", Keyword.Type),  # a dynamic dimension
            (rf"({_NAME})(\s*)(=)(?![=>])", bygroups(Name.Attribute, Whitespace, Operator)),
            (r"[A-Z]\w*", Name.Class),  # ADTs and constructors: List, Cons, Nil
            (rf"{_NAME}(?:\.{_NAME})*(?=\s*\()", Name.Builtin),  # operator calls: nn.conv2d(
            (rf"{_NAME}(?:\.{_NAME})*", Name),
            (r"=>|->|==|!=|<=|>=|&&|\|\||[-+*/<>=!]", Operator),
            (r"[()\[\]{},;:.]", Punctuation),
            (r".", Text),
        ],
        "space": [
            (r"\s+", Whitespace),
            (r"//.*?$", Comment.Single),
            (r"/\*", Comment.Multiline, "comment"),
        ],
        "comment": [
            (r"[^*/]+", Comment.Multiline),
            (r"/\*", Comment.Multiline, "#push"),
            (r"\*/", Comment.Multiline, "#pop"),
            (r"[*/]", Comment.Multiline),
        ],
    }


__all__ = ["RelayLexer"]
