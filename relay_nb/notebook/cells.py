"""Cells of the Relay kernel: the ``// key: value`` header that configures a cell.

Every cell of the Relay kernel is Relay text.  Its leading comment lines may set options,
one per line, which become the options of a ``%%relay`` cell:

==========================  ===============================  =============================
header line                 ``%%relay`` option               meaning
==========================  ===============================  =============================
``// passes: A, B``         ``--passes A,B``                 run passes (or ``O0``..``O3``)
``// run: 3, x``            ``--run 3 x``                    evaluate ``@main``; arguments
                                                             are Python expressions
``// show: graph``          ``--show graph``                 text, anf, graph, dag-vs-anf,
                                                             types, llvm, none
``// exec: jit``            ``--exec jit``                   interpreter or jit
``// name: net``            ``-n net``                       Python variable for the module
``// time``                 ``--time``                       show timings
``// step``                 ``--step``                       open the pass stepper
``// no-expand``            ``--no-expand``                  no ``{name}`` expansion
``// python``               (none)                           the cell is Python instead
==========================  ===============================  =============================

Other comment lines are ordinary comments.  A cell whose code (comments aside) is just
``_`` stands for the program of the previous successful Relay cell.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from typing import Any, Optional

from ..errors import RelayError
from ..ir.span import Source, Span
from .magic import SHOW_CHOICES

#: Options taking a value, and flags.
VALUE_OPTIONS = ("passes", "run", "show", "exec", "name")
FLAG_OPTIONS = ("time", "step", "no-expand", "python")
OPTIONS = VALUE_OPTIONS + FLAG_OPTIONS

EXEC_CHOICES = ("interpreter", "jit")
_TRUE = ("", "yes", "true", "on", "1")
_FALSE = ("no", "false", "off", "0")

_HEADER_LINE = re.compile(r"^(\s*//\s*)([A-Za-z][A-Za-z_-]*)\s*(?::(.*))?$")
_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.DOTALL)
CELL_SOURCE = "cell"


class CellOptionError(RelayError):
    """A header line of a Relay cell has a bad value."""

    kind = "cell option error"


@dataclass
class CellConfig:
    """A Relay cell split into its options and its code."""

    options: dict[str, object] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    code: str = ""

    @property
    def is_python(self) -> bool:
        return bool(self.options.get("python"))

    @property
    def is_empty(self) -> bool:
        """Only comments and blank lines."""
        return not _COMMENT.sub("", self.code).strip()

    @property
    def is_previous(self) -> bool:
        """The code, comments aside, is ``_``: the previous cell's program."""
        return _COMMENT.sub("", self.code).strip() == "_"

    def magic_options(self) -> Any:
        """The options as :func:`~relay_nb.notebook.magic.parse_options` returns them.

        ``--run`` arguments are set directly (an argument may hold spaces or quotes).
        """
        from .magic import parse_options

        opts = parse_options(self.option_line(run=False))
        if "run" in self.options:
            opts.run = list(self.options["run"])  # type: ignore[call-overload]
        return opts

    def option_line(self, run: bool = True) -> str:
        """The equivalent ``%%relay`` option line.

        >>> parse_cell("// passes: FoldConstant, FuseOps\\n// run: 3, 4\\nfn (%x) { %x }").option_line()
        '--passes FoldConstant,FuseOps --run 3 4'
        """
        parts: list[str] = []
        o = self.options
        if "name" in o:
            parts += ["-n", str(o["name"])]
        if "passes" in o:
            parts += ["--passes", ",".join(o["passes"])]  # type: ignore[arg-type]
        if "show" in o:
            parts += ["--show", str(o["show"])]
        if "exec" in o:
            parts += ["--exec", str(o["exec"])]
        if run and "run" in o:
            parts += ["--run", *o["run"]]  # type: ignore[misc]
        for flag in ("time", "step", "no-expand"):
            if o.get(flag):
                parts.append("--" + flag)
        return " ".join(parts)


def split_arguments(text: str) -> list[str]:
    """Split ``3, np.ones((2, 2)), "a,b"`` at the commas outside brackets and strings.

    >>> split_arguments('3, np.ones((2, 2)), "a,b"')
    ['3', 'np.ones((2, 2))', '"a,b"']
    """
    out: list[str] = []
    depth, quote, start = 0, "", 0
    i = 0
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 1
            elif ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append(text[start:i].strip())
            start = i + 1
        i += 1
    last = text[start:].strip()
    if last or out:
        out.append(last)
    return out


def _error(message: str, code: str, line: int, column: int, width: int) -> CellOptionError:
    span = Span(Source(CELL_SOURCE, code), line, column, line, column + max(width, 1))
    return CellOptionError(message, span)


def parse_cell(code: str) -> CellConfig:
    """Read the header options of a Relay cell.

    The header is the run of blank and ``//`` comment lines at the top of the cell; the
    code (``.code``) is the whole cell, header included, so line numbers stay the cell's.

    Raises
    ------
    CellOptionError
        A known option with a bad value, with the line and column of the value.

    Examples
    --------
    >>> cfg = parse_cell("// show: graph\\n// run: 1, 2\\nfn (%a, %b) { %a + %b }")
    >>> cfg.options
    {'show': 'graph', 'run': ['1', '2']}
    """
    cfg = CellConfig(code=code)
    for lineno, line in enumerate(code.split("\n"), start=1):
        if not line.strip():
            continue
        m = _HEADER_LINE.match(line)
        if m is None:
            if line.lstrip().startswith("//"):
                continue  # a comment that is not an option
            break
        key, value = m.group(2).lower(), m.group(3)
        if key not in OPTIONS:
            close = difflib.get_close_matches(key, OPTIONS, n=1, cutoff=0.65)
            if close and value is not None:
                cfg.warnings.append(f"line {lineno}: '// {key}:' is read as a comment; did you mean '// {close[0]}:'?")
            continue
        if value is None:
            raw, column = "", m.end(2) + 1
        else:
            raw, column = value.strip(), m.start(3) + 1 + len(value) - len(value.lstrip())
        width = len(raw)
        if key in FLAG_OPTIONS:
            if raw.lower() in _TRUE:
                cfg.options[key] = True
            elif raw.lower() in _FALSE:
                cfg.options.pop(key, None)
            else:
                raise _error(f"'{key}' is a flag: write '// {key}' (or '// {key}: no')", code, lineno, column, width)
            continue
        if key == "run":
            cfg.options["run"] = split_arguments(raw)
            if any(not a for a in cfg.options["run"]):  # type: ignore[union-attr]
                raise _error("empty argument in '// run:' (arguments are separated by commas)", code, lineno, column, width)
            continue
        if not raw:
            raise _error(f"'// {key}:' needs a value", code, lineno, column, width)
        if key == "passes":
            names = [p.strip() for p in raw.split(",")]
            if any(not p for p in names):
                raise _error("empty pass name in '// passes:' (names are separated by commas)", code, lineno, column, width)
            cfg.options["passes"] = names
        elif key == "show" and raw not in SHOW_CHOICES:
            raise _error(f"unknown view {raw!r}; choose one of {', '.join(SHOW_CHOICES)}", code, lineno, column, width)
        elif key == "exec" and raw not in EXEC_CHOICES:
            raise _error(f"unknown executor {raw!r}; choose interpreter or jit", code, lineno, column, width)
        elif key == "name" and not raw.isidentifier():
            raise _error(f"'// name:' must be a Python identifier, got {raw!r}", code, lineno, column, width)
        else:
            cfg.options[key] = raw
    return cfg


def python_code(cfg: CellConfig) -> str:
    """The Python of a ``// python`` cell, header lines turned into Python comments
    (so tracebacks keep the cell's line numbers)."""
    lines = cfg.code.split("\n")
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        if not line.lstrip().startswith("//"):
            break
        lines[i] = "#" + line.lstrip()[2:]
    return "\n".join(lines)


def previous_text(mod: Optional[object]) -> str:
    """The text that stands for ``_``: the previous program, printed (it re-parses)."""
    if mod is None:
        raise RelayError("`_` is the program of the previous Relay cell, but no cell has produced one yet")
    return mod.astext()  # type: ignore[attr-defined]


__all__ = [
    "CellConfig",
    "CellOptionError",
    "EXEC_CHOICES",
    "FLAG_OPTIONS",
    "OPTIONS",
    "SHOW_CHOICES",
    "VALUE_OPTIONS",
    "parse_cell",
    "previous_text",
    "python_code",
    "split_arguments",
]
