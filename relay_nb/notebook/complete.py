"""Completion and inspection for Relay text: what Tab and Shift-Tab show in the Relay kernel.

Plain functions over ``(code, cursor_pos)`` so they are tested without a kernel.  The
context is found by a light scan, not by parsing (the cell is half-typed):

* ``@fo|``            -> globals defined so far (``@foo``);
* ``%x|``             -> local names written in the cell;
* ``nn.conv2d(%x, %w, pad|`` -> the called op's attributes (``padding=``), then op names;
* ``nn.co|``          -> operator names (and ADT constructors);
* ``// passes: Fo|``  -> pass names; ``// sh|`` -> cell option names.

Inspection shows an operator's signature, documentation, attributes with defaults,
type relation and fusion pattern, all read from the op registry's columns.
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Mapping, NamedTuple, Optional

from .cells import EXEC_CHOICES, SHOW_CHOICES
from .cells import OPTIONS as CELL_OPTIONS

# Characters of a name: ops are dotted (nn.conv2d), globals/locals carry a sigil.
_NAME = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.")
_NAME_AFTER = re.compile(r"[A-Za-z0-9_.]*")
# Comments and strings are blanked out so their parentheses do not count.
_MASK = re.compile(r"//[^\n]*|/\*.*?\*/|\"(?:\\.|[^\"\\])*\"?", re.DOTALL)
_HEADER = re.compile(r"^\s*//\s*([A-Za-z_-]*)(\s*:\s*)?(.*)$")

#: Keywords of the text format, offered after the names above.
KEYWORDS = ("def", "else", "fn", "free_var", "if", "let", "match", "ref", "type")



class Completion(NamedTuple):
    """Candidates replacing ``code[start:end]``."""

    matches: list[str]
    start: int
    end: int


def _mask(code: str) -> str:
    """``code`` with comments and strings replaced by spaces (same length)."""
    return _MASK.sub(lambda m: " " * len(m.group()), code)


def _name_start(text: str, end: int) -> int:
    """Where the (possibly sigil-prefixed) name ending at ``end`` starts.

    A scan back from ``end``: linear in the name's length.  (A search for
    ``[@%]?[A-Za-z0-9_.]*$`` retries from every position of a long name that something
    else follows, so it was quadratic: seconds per keypress after a 40,000-char name.)"""
    i = end
    while i > 0 and text[i - 1] in _NAME:
        i -= 1
    if i > 0 and text[i - 1] in "@%":
        i -= 1
    return i


def _word_at(code: str, cursor_pos: int) -> tuple[int, int]:
    """The span of the (possibly sigil-prefixed, dotted) name around the cursor."""
    start = _name_start(code, cursor_pos)
    end = _NAME_AFTER.match(code, cursor_pos).end()
    return start, end


def enclosing_call(code: str, cursor_pos: int) -> Optional[str]:
    """The name before the innermost unclosed ``(`` before the cursor, if any.

    >>> enclosing_call("nn.conv2d(%x, nn.relu(%y), pad", 30)
    'nn.conv2d'
    """
    text = _mask(code[:cursor_pos])
    depth = 0
    for i in range(len(text) - 1, -1, -1):
        ch = text[i]
        if ch in ")]}":
            depth += 1
        elif ch in "([{":
            if depth == 0:
                if ch != "(":
                    return None
                name_end = len(text[:i].rstrip())
                return text[_name_start(text, name_end) : name_end] or None
            depth -= 1
    return None


def _ops() -> list[str]:
    from ..op.registry import list_ops

    return list_ops()


def _column(name: str) -> dict:
    from ..op.registry import get_column, list_ops

    list_ops()  # loads the built-in op families
    return get_column(name)


def _attr_names(op_name: str) -> list[str]:
    schema = _column("attrs_schema").get(op_name)
    return [] if schema is None else schema.field_names()


def _header_completion(code: str, cursor_pos: int, passes: Iterable[str]) -> Optional[Completion]:
    """Completion inside a leading ``// key: value`` header line, or None elsewhere."""
    line_start = code.rfind("\n", 0, cursor_pos) + 1
    line_end = code.find("\n", cursor_pos)
    line = code[line_start : len(code) if line_end < 0 else line_end]
    # Only the cell's leading comment lines are headers.
    if any(not ln.strip().startswith("//") for ln in code[:line_start].splitlines() if ln.strip()):
        return None
    m = _HEADER.match(line)
    if m is None:
        return None
    col = cursor_pos - line_start
    key_start, key_end = m.start(1), m.end(1)
    if m.group(2) is None or col <= key_end:
        if not key_start <= col <= key_end:
            return None
        prefix = line[key_start:col]
        return Completion(
            [k for k in CELL_OPTIONS if k.startswith(prefix)], line_start + key_start, line_start + key_end
        )
    key = m.group(1).lower()
    choices = {"show": SHOW_CHOICES, "exec": EXEC_CHOICES}.get(key)
    if choices is not None:
        value_start = line_start + m.start(3)
        while value_start < cursor_pos and code[value_start] == " ":
            value_start += 1
        prefix = code[value_start:cursor_pos]
        return Completion([c for c in choices if c.startswith(prefix)], value_start, line_start + len(line))
    if key != "passes":
        return Completion([], cursor_pos, cursor_pos)
    # One pass name of a comma-separated list.
    before = line[:col]
    item_start = max(before.rfind(","), before.rfind(":")) + 1
    while item_start < col and line[item_start] == " ":
        item_start += 1
    item_end = _NAME_AFTER.match(line, col).end()
    prefix = line[item_start:col]
    names = sorted(p for p in passes if p.startswith(prefix))
    return Completion(names, line_start + item_start, line_start + item_end)


def complete(
    code: str,
    cursor_pos: Optional[int] = None,
    globals_: Iterable[str] = (),
    constructors: Iterable[str] = (),
    passes: Optional[Iterable[str]] = None,
) -> Completion:
    """Completion candidates at ``cursor_pos`` in Relay text.

    Parameters
    ----------
    code : str
        The cell so far.
    cursor_pos : int, optional
        Offset of the cursor (default: the end).
    globals_ : iterable of str
        Names of global functions defined so far (without ``@``).
    constructors : iterable of str
        ADT constructor names defined so far.
    passes : iterable of str, optional
        Pass names for ``// passes:`` (default: the pass registry).

    Examples
    --------
    >>> complete("nn.softmax(%x, ax").matches
    ['axis=']
    >>> complete("@ma", globals_=["main", "mul3"]).matches
    ['@main']
    """
    if cursor_pos is None:
        cursor_pos = len(code)
    cursor_pos = max(0, min(cursor_pos, len(code)))
    if passes is None:
        from .. import transform  # importing the package registers every pass

        passes = list(transform.PASSES)
    header = _header_completion(code, cursor_pos, passes)
    if header is not None:
        return header
    start, end = _word_at(code, cursor_pos)
    prefix = code[start:cursor_pos]
    if prefix.startswith("@"):
        # Globals of earlier cells, and those this cell defines itself.
        defined = re.findall(r"\bdef\s+@([A-Za-z0-9_.]+)", _mask(code))
        names = sorted({"@" + g for g in (*globals_, *defined)})
        return Completion([n for n in names if n.startswith(prefix)], start, end)
    if prefix.startswith("%"):
        locals_ = sorted(set(re.findall(r"%[A-Za-z_][A-Za-z0-9_.]*", _mask(code))) - {prefix})
        return Completion([n for n in locals_ if n.startswith(prefix)], start, end)
    matches: list[str] = []
    callee = enclosing_call(code, start)
    if callee and not callee.startswith(("@", "%")):
        # `name=` of the called op, minus attributes already given.
        given = set(re.findall(r"\b([A-Za-z_]\w*)\s*=", _mask(code[:start])))
        matches += [a + "=" for a in _attr_names(callee) if a.startswith(prefix) and a not in given]
    matches += [n for n in _ops() if n.startswith(prefix)]
    matches += sorted(c for c in set(constructors) if c.startswith(prefix))
    matches += [k for k in KEYWORDS if k.startswith(prefix) and prefix]
    return Completion(matches, start, end)


def _op_under_cursor(code: str, cursor_pos: int) -> Optional[str]:
    """The op named at the cursor, or else the op whose call the cursor is in."""
    known = set(_ops())
    start, end = _word_at(code, cursor_pos)
    word = code[start:end]
    if word in known:
        return word
    callee = enclosing_call(code, cursor_pos)
    return callee if callee in known else None


def _value_text(value: Any) -> str:
    if isinstance(value, tuple):
        return "[" + ", ".join(_value_text(v) for v in value) + "]"
    if isinstance(value, str):
        return f'"{value}"'
    return repr(value)


def op_doc(name: str) -> str:
    """A plain-text page about operator ``name``: signature, doc, attributes, typing.

    >>> print(op_doc("add").splitlines()[0])
    add(lhs, rhs)
    """
    from ..op.registry import get_op

    get_op(name)  # a RelayError naming close matches for an unknown op
    arg_names = _column("arg_names").get(name) or ()
    num_inputs = _column("num_inputs").get(name, len(arg_names))
    args = list(arg_names) or [f"arg{i}" for i in range(max(num_inputs, 0))]
    if num_inputs == -1 and not arg_names:
        args = ["*args"]
    schema = _column("attrs_schema").get(name)
    fields = [] if schema is None else list(schema.fields)
    sig = args + [f.name + ("" if f.required else "=" + _value_text(f.default)) for f in fields]
    lines = [f"{name}({', '.join(sig)})", ""]
    doc = _column("doc").get(name) or ""
    if doc:
        lines += [doc, ""]
    if fields:
        lines.append(f"Attributes ({schema.type_key}):")
        for f in fields:
            default = "required" if f.required else f"default {_value_text(f.default)}"
            extra = f" — {f.doc}" if f.doc else ""
            lines.append(f"  {f.name}: {f.kind}, {default}{extra}")
        lines.append("")
    rel = _column("type_rel").get(name)
    if rel is not None:
        rel_name = getattr(rel, "name", getattr(rel, "__name__", str(rel)))
        rel_doc = (getattr(getattr(rel, "fn", None), "__doc__", None) or "").strip()
        lines.append(f"Type relation: {rel_name}" + (f" — {' '.join(rel_doc.split())}" if rel_doc else ""))
    pattern = _column("TOpPattern").get(name)
    if pattern is not None:
        lines.append(f"Fusion pattern: {getattr(pattern, 'name', pattern)}")
    return "\n".join(lines).rstrip() + "\n"


def inspect(
    code: str,
    cursor_pos: Optional[int] = None,
    functions: Optional[Mapping[str, str]] = None,
) -> Optional[str]:
    """What Shift-Tab shows at ``cursor_pos``: an op's page, a global's type, or None.

    ``functions`` maps global names (without ``@``) to a text to show for them, such as
    their type.

    Examples
    --------
    >>> "Type relation: Broadcast" in inspect("add(%x, %y)", 1)
    True
    """
    if cursor_pos is None:
        cursor_pos = len(code)
    cursor_pos = max(0, min(cursor_pos, len(code)))
    start, end = _word_at(code, cursor_pos)
    word = code[start:end]
    if word.startswith("@") and functions and word[1:] in functions:
        return f"{word}: {functions[word[1:]]}\n"
    name = _op_under_cursor(code, cursor_pos)
    return op_doc(name) if name else None


__all__ = ["CELL_OPTIONS", "KEYWORDS", "Completion", "complete", "enclosing_call", "inspect", "op_doc"]
