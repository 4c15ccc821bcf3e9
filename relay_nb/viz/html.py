"""Rich display of IR objects: syntax-highlighted Relay text with types on hover.

Every IRModule, expression and type displays through here in a notebook (their
``_repr_html_`` / ``_repr_mimebundle_`` import this module lazily).  The HTML is static —
no ``<script>`` (JupyterLab blocks it), inline styles only (they survive nbconvert
exports and sanitisers that drop ``<style>`` blocks) — and its colours are JupyterLab's
editor theme variables (``var(--jp-mirror-editor-keyword-color)`` ...), so the text stays
readable in dark themes; the fallbacks are the light theme's colours.

Types are shown on hover: each ``%var`` / ``%N`` and each operator name carries a
``title`` with its inferred type (and the call's attributes).  A program that is not
type-checked is checked on the side for this, without changing it; one that does not
type-check is shown without types.
"""

from __future__ import annotations

import html
from typing import Any, Optional

from ..ir.expr import Call, Expr
from ..ir.module import IRModule
from ..ir.ty import Type
from .highlight import tokens
from .labels import type_of

MAX_LINES = 2000
"""A display shows at most this many lines of text (highlighted) ..."""
MAX_CHARS = 400_000
"""... and at most this many characters (deeply nested programs have long lines)."""
SHOW_ALL_CHARS = 200_000
"""What a cut display does with the rest: at most this many characters go along, plain,
in a collapsed ``<details>`` ("show all"); more than that stays in the kernel and the
display says how to get it (``print(mod)``, ``mod.astext()``), so a huge program never
sends megabytes to the browser."""

_CSS = {
    "keyword": "color:var(--jp-mirror-editor-keyword-color,#008000);font-weight:bold",
    "local": "color:var(--jp-mirror-editor-variable-2-color,#05a)",
    "global": "color:var(--jp-mirror-editor-def-color,#00f)",
    "op": "color:var(--jp-mirror-editor-builtin-color,#008000)",
    "type": "color:var(--jp-mirror-editor-variable-3-color,#085)",
    "number": "color:var(--jp-mirror-editor-number-color,#080)",
    "string": "color:var(--jp-mirror-editor-string-color,#ba2121)",
    "comment": "color:var(--jp-mirror-editor-comment-color,#408080);font-style:italic",
    "meta": "color:var(--jp-mirror-editor-meta-color,#a2f)",
    "attr": "color:var(--jp-mirror-editor-attribute-color,#00c)",
    "ctor": "color:var(--jp-mirror-editor-def-color,#00f)",
}
_PRE = (
    "margin:0;padding:4px 0;background:transparent;white-space:pre;overflow-x:auto;"
    "font-family:var(--jp-code-font-family,monospace);"
    "font-size:var(--jp-code-font-size,13px);line-height:var(--jp-code-line-height,1.4);"
    "color:var(--jp-content-font-color1,inherit)"
)


def to_html(
    obj: Any,
    form: str = "graph",
    show_types: Any = "hover",
    max_lines: int = MAX_LINES,
    line_id_prefix: Optional[str] = None,
) -> str:
    """``obj`` (an IRModule, an expression or a type) as highlighted HTML.

    Parameters
    ----------
    obj
        What to show.
    form
        ``"graph"`` (the text ``print`` writes) or ``"anf"`` (A-normal form).
    show_types
        ``"hover"``: types in ``title`` attributes; ``True``: also written inline as
        ``/* ty=... */`` comments; ``False``: no types.
    max_lines
        Show at most this many lines, then say how many more there are.
    line_id_prefix
        When given, line ``n`` is wrapped in ``<span id="{prefix}{n}">`` (line 1 is the
        version header for a module), so a view can point at a node's line.

    Examples
    --------
    >>> mod = relay.parse('def @main(%x: Tensor[(2, 3), float32]) { log(%x) }')
    >>> html = relay.viz.html.to_html(mod)
    >>> 'title="Tensor[(2, 3), float32]"' in html
    True
    """
    if isinstance(obj, Type):
        from ..typing.text import type_text

        kept, rest = cut(type_text(obj), max_lines)
        return _wrap(_spans(kept, {}, {}, 0, line_id_prefix), rest)
    if not isinstance(obj, (Expr, IRModule)):
        return _wrap(html.escape(str(obj)))
    from ..util import paused_gc
    from .locate import locate
    from .types import borrowed_types

    want = show_types is not False
    with borrowed_types(obj, infer=want), paused_gc():
        program = obj
        if form == "anf":
            from .anf import anf_with_origins

            program, _ = anf_with_origins(obj)
        elif form != "graph":
            from ..errors import RelayError

            raise RelayError(f'unknown text form {form!r}: use "graph" or "anf"')
        located = locate(program, show_types=show_types is True)
        titles: dict = {}  # %name -> the node it names (its type is read when shown)
        at: dict = {}  # (line, column) -> the node whose text starts there
        if want:
            at = {pos: node for node, pos in located.positions.items()}
            titles = {name: node for node, name in located.names.items()}
        text = located.text
        skip = 0
        if not isinstance(obj, IRModule):
            # str(expr) has no version header: neither does its display.
            text = text.split("\n", 1)[1] if "\n" in text else ""
            skip = 1
        kept, rest = cut(text, max_lines)
        body = _spans(kept, titles, at, skip, line_id_prefix)
    return _wrap(body, rest)


def _node_title(node: Any) -> str:
    title = type_of(node)
    if isinstance(node, Call) and node.attrs:
        try:
            from ..syntax.printer import _TextPrinter

            pairs = _TextPrinter(False, False)._call_attrs(node.op, node.attrs)
            title += ("\n" if title else "") + ", ".join(pairs)
        except Exception:  # an attribute the printer cannot spell: leave it out
            pass
    return title


def cut(text: str, max_lines: int = MAX_LINES, max_chars: int = MAX_CHARS) -> tuple[str, str]:
    """``text`` split into what a display shows (at most ``max_lines`` lines and about
    ``max_chars`` characters, at least one line) and the rest ('' when nothing is cut)."""
    if len(text) <= max_chars and text.count("\n") < max_lines:
        return text, ""
    lines = text.split("\n")
    keep, size = 0, 0
    while keep < min(len(lines), max_lines) and size + len(lines[keep]) < max_chars:
        size += len(lines[keep]) + 1
        keep += 1
    keep = max(keep, 1)
    if keep >= len(lines):
        return text, ""
    return "\n".join(lines[:keep]), "\n".join(lines[keep:])


def _spans(text: str, titles: dict, at: dict, skip: int, line_prefix) -> str:
    """The tokens of ``text`` as HTML spans (``skip``: lines dropped before ``text``)."""
    prefix = html.escape(line_prefix, quote=True) if line_prefix is not None else None
    line = 1 + skip
    out: list[str] = [f'<span id="{prefix}{line}">'] if prefix is not None else []
    for tok in tokens(text):
        style = _CSS.get(tok.kind)
        title = ""
        if tok.kind == "local":
            node = titles.get(tok.text)
            if node is not None:
                title = type_of(node)
        elif tok.kind in ("op", "global", "ctor", "number") and at:
            node = at.get((tok.line + skip, tok.column))
            if node is not None:
                title = _node_title(node)
        attrs = f' style="{style}"' if style else ""
        if title:
            attrs += f' title="{html.escape(title, quote=True)}"'
        # A token spanning lines (a comment, white space) is emitted line by line, so
        # every line can sit in its own span.
        for i, piece in enumerate(tok.text.split("\n")):
            if i:
                line += 1
                out.append(f'</span>\n<span id="{prefix}{line}">' if prefix is not None else "\n")
            if piece:
                value = html.escape(piece, quote=False)
                out.append(f"<span{attrs}>{value}</span>" if attrs else value)
    if prefix is not None:
        out.append("</span>")
    return "".join(out)


def _wrap(body: str, rest: str = "") -> str:
    return f'<div class="relay-nb-text"><pre style="{_PRE}">{body}</pre>{_tail(rest)}</div>'


def _tail(rest: str) -> str:
    """What follows a display cut before ``rest``: a note, and the rest itself in a
    collapsed ``<details>`` when it is small enough (see :data:`SHOW_ALL_CHARS`)."""
    if not rest:
        return ""
    note = f"\u2026 {rest.count(chr(10)) + 1} more lines ({len(rest):,} characters) not shown"
    if len(rest) <= SHOW_ALL_CHARS:
        return (
            f'<details><summary style="{_CSS["comment"]}">{note}: show all</summary>'
            f'<pre style="{_PRE}">{html.escape(rest, quote=False)}</pre></details>'
        )
    return (
        f'<div style="{_CSS["comment"]}">{note}: print(mod) or mod.astext() gives the whole '
        "text, relay.viz.html.to_html(mod, max_lines=...) a longer view</div>"
    )


def text_html(text: str, css_class: str = "relay-text") -> str:
    """Plain ``text`` as a monospaced ``<pre>``, cut as the IR displays are."""
    kept, rest = cut(text)
    pre = f'<pre class="{css_class}">{html.escape(kept)}</pre>'
    return pre if not rest else f"<div>{pre}{_tail(rest)}</div>"


def plain_text(obj: Any, max_lines: int = MAX_LINES) -> str:
    """``str(obj)``, cut to ``max_lines`` lines (and ``MAX_CHARS`` characters) for display."""
    return cut_text(str(obj), max_lines)


def cut_text(text: str, max_lines: int = MAX_LINES) -> str:
    """``text`` cut for a ``text/plain`` display, with a last line saying what is left out."""
    kept, rest = cut(text, max_lines)
    if not rest:
        return text
    return kept + f"\n// \u2026 {rest.count(chr(10)) + 1} more lines"


def repr_html(obj: Any) -> str:
    """The ``_repr_html_`` of IR objects: never raises (a display must not fail)."""
    try:
        return to_html(obj)
    except Exception as exc:  # noqa: BLE001 - fall back to the plain text, escaped
        try:
            text = plain_text(obj)
        except Exception:
            text = repr(obj)
        note = html.escape(f"(highlighting failed: {exc})")
        return _wrap(html.escape(text) + f'\n<span style="{_CSS["comment"]}">{note}</span>')


def mimebundle(obj: Any, include: Any = None, exclude: Any = None) -> dict:
    """The ``_repr_mimebundle_`` of IR objects: ``text/plain`` and ``text/html``."""
    try:
        plain = plain_text(obj)
    except Exception:
        plain = repr(obj)
    bundle = {"text/plain": plain, "text/html": repr_html(obj)}
    if include:
        bundle = {k: v for k, v in bundle.items() if k in include}
    if exclude:
        bundle = {k: v for k, v in bundle.items() if k not in exclude}
    return bundle


__all__ = ["cut", "cut_text", "mimebundle", "plain_text", "repr_html", "text_html", "to_html"]
