"""The ``%%relay`` cell magic and the ``%relay`` line magic (``%load_ext relay_nb``).

Everything a cell does is in :func:`run_relay_cell`, a plain function that takes the cell
text, the option line and a namespace and returns a :class:`CellOutcome`; the
:class:`RelayMagics` class only displays what it returns.  A Relay kernel can call
:func:`parse_options` and :func:`run_relay_cell` directly.

``{name}`` expansion (off with ``--no-expand``): a ``{...}`` whose text starts with a
name defined in the notebook's namespace, with no space just inside the braces and no
``%``, ``@``, ``;``, braces or line break inside, is replaced by ``str()`` of that Python
expression -- ``Tensor[{shape}, float32]`` with ``shape = (1, 3)``.  Relay's own blocks
(``fn (%x) { %x }``, ``if (%c) {1} else {2}``) never match: they hold ``%``/spaces, or start
with a literal or a name the notebook does not define.
"""

from __future__ import annotations

import argparse
import re
import time
from dataclasses import dataclass, field, replace
from typing import Any, Mapping, MutableMapping, Optional

from IPython.core.magic import Magics, line_cell_magic, magics_class, no_var_expand
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring

from ..errors import RelayError
from ..ir.module import IRModule
from ..ir.span import Source

SHOW_CHOICES = ("text", "anf", "graph", "explore", "dag-vs-anf", "types", "llvm", "none")
CELL_SOURCE = "cell"


class MagicOptionError(RelayError):
    """A bad ``%%relay`` option line."""

    kind = "option error"


class ExpansionError(RelayError):
    """A ``{expr}`` in the cell names a notebook variable but cannot be evaluated."""

    kind = "expansion error"


# --- options -----------------------------------------------------------------------------------


@magic_arguments(name="relay")
@argument("-n", "--name", default=None, help="variable the module is stored in (default: mod)")
@argument(
    "--passes",
    default=None,
    metavar="LIST|O0..O3",
    help="run passes: a comma list of registered pass names (or @function_pass objects in the "
    "namespace), or an opt level O0..O3 (relay.optimize); the result is what is stored",
)
@argument("--show", default=None, choices=SHOW_CHOICES, help="what to display (default: text)")
@argument(
    "--run",
    nargs="*",
    default=None,
    metavar="ARG",
    help="evaluate @main; each ARG is a Python expression in the namespace (x, 3, np.ones(2)); "
    "the value is stored as <name>_result",
)
@argument(
    "--exec",
    dest="executor",
    default=None,
    choices=("interpreter", "jit"),
    help="executor for --run (default interpreter) and --step (default jit)",
)
@argument("--step", action="store_true", help="open the pass stepper on the program and pipeline")
@argument(
    "--time", action="store_true", help="show how long parsing, checking, passes and --run took"
)
@argument("--no-expand", action="store_true", help="do not expand {name} from the namespace")
def _relay_options(line: str, cell: Optional[str] = None) -> None:
    """Parse, type-check, store and display a Relay program (a module or an expression).

    ::

        %%relay -n net --passes O3 --run x w
        def @main(%x: Tensor[{shape}, float32], %w: Tensor[(16, 3, 3, 3), float32]) { ... }

    ``{name}`` is replaced by ``str()`` of a notebook variable (e.g. a shape) when the braces
    hold a Python expression that starts with a name the notebook defines, with no space
    just inside the braces; Relay blocks such as ``{ %x }`` are left alone.  ``--no-expand``
    turns expansion off.

    ``%relay EXPR`` (line magic) checks one expression and returns it (or, with ``--run``,
    its value); options go before ``--``: ``%relay --run -- add(1, 2)``.
    """


def parse_options(line: str) -> argparse.Namespace:
    """The ``%%relay`` option line as a namespace; a :class:`MagicOptionError` when wrong.

    >>> parse_options("-n net --passes O3 --run x 3").run
    ['x', '3']
    """
    from IPython.core.error import UsageError

    try:
        opts = parse_argstring(_relay_options, line)
    except UsageError as exc:
        raise MagicOptionError(f"%%relay: {exc} (see %%relay? for the options)") from None
    if opts.name is not None and not opts.name.isidentifier():
        raise MagicOptionError(f"%%relay: --name must be a Python identifier, got {opts.name!r}")
    return opts


# --- {expr} expansion ----------------------------------------------------------------------------

_EXPAND = re.compile(r"\{([A-Za-z_][^{}%@;\n]*?)\}")
_FIRST_NAME = re.compile(r"[A-Za-z_]\w*")


@dataclass
class _Expansion:
    start: int  # offsets of `{...}` in the original text
    end: int
    new_start: int  # offsets of its replacement in the expanded text
    new_end: int


def expand_variables(text: str, namespace: Mapping[str, Any]) -> tuple[str, list[_Expansion]]:
    """Replace each ``{expr}`` whose first name the namespace defines by ``str(value)``.

    Returns the expanded text and where each replacement went, so errors can be located
    in the text the user wrote.

    >>> expand_variables("Tensor[{s}, float32] fn () { 1 }", {"s": (2, 3)})[0]
    'Tensor[(2, 3), float32] fn () { 1 }'
    """
    out: list[str] = []
    pieces: list[_Expansion] = []
    pos = new_pos = 0
    for m in _EXPAND.finditer(text):
        code = m.group(1)
        first = _FIRST_NAME.match(code)
        if code != code.strip() or first is None or first.group(0) not in namespace:
            continue
        try:
            # The user's own expression, in their kernel; str() is their code too (a
            # __str__ that raises is their error, shown at the {...}, not a traceback).
            new = str(eval(code, dict(namespace)))
        except Exception as exc:
            line = text.count("\n", 0, m.start()) + 1
            column = m.start() - (text.rfind("\n", 0, m.start()) + 1) + 1
            from ..ir.span import Span

            span = Span(Source(CELL_SOURCE, text), line, column, line, column + len(m.group(0)))
            raise ExpansionError(
                f"cannot expand {m.group(0)}: {type(exc).__name__}: {_describe(exc)}", span
            ) from None
        out.append(text[pos : m.start()])
        new_pos += m.start() - pos
        pieces.append(_Expansion(m.start(), m.end(), new_pos, new_pos + len(new)))
        out.append(new)
        new_pos += len(new)
        pos = m.end()
    out.append(text[pos:])
    return "".join(out), pieces


def _describe(exc: Exception) -> str:
    """``str(exc)``, which is user code as well (an exception whose __str__ raises)."""
    try:
        return str(exc)
    except Exception:
        return "(the exception cannot be shown)"


def _offset(text: str, line: int, column: int) -> int:
    lines = text.split("\n")
    return sum(len(s) + 1 for s in lines[: line - 1]) + column - 1


def _position(text: str, offset: int) -> tuple[int, int]:
    offset = max(0, min(offset, len(text)))
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def _original_offset(offset: int, pieces: list[_Expansion]) -> int:
    """Map an offset in the expanded text back to the text the user wrote."""
    shift = 0
    for p in pieces:
        if offset < p.new_start:
            break
        if offset < p.new_end:
            return p.start  # inside a replacement: point at its `{`
        shift = p.end - p.new_end
    return offset + shift


def relocate(
    error: RelayError, original: str, expanded: str, pieces: list[_Expansion], line_offset: int
) -> RelayError:
    """Point ``error`` at the text the user wrote: undo ``{expr}`` expansion and count lines
    as the cell does (``line_offset`` lines, e.g. the ``%%relay`` line, come first)."""
    span = error.span
    if span is None or span.source is None or span.source.name != CELL_SOURCE:
        return error
    begin = _original_offset(_offset(expanded, span.line, span.column), pieces)
    line, column = _position(original, begin)
    end_line, end_column = line, column
    if span.end_line:
        stop = _original_offset(_offset(expanded, span.end_line, span.end_column), pieces)
        end_line, end_column = _position(original, max(stop, begin))
    source = Source(CELL_SOURCE, original, line_offset=line_offset)
    error.span = replace(
        span, source=source, line=line, column=column, end_line=end_line, end_column=end_column
    )
    error.args = (error.render(),)
    return error


# --- running a cell ----------------------------------------------------------------------------


class _Bundle:
    """A display object made of a ready mimebundle."""

    def __init__(self, data: dict[str, str]):
        self.data = data

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return self.data


def text_bundle(text: str, css_class: str = "relay-text") -> _Bundle:
    """Plain text that stays monospaced in JupyterLab and in exported HTML; a long text
    is cut for display (relay_nb.viz.html.MAX_LINES) with a "show all" for the rest."""
    from ..viz.html import cut_text, text_html

    return _Bundle({"text/plain": cut_text(text), "text/html": text_html(text, css_class)})


@dataclass
class CellOutcome:
    """What one ``%%relay`` cell produced: the module stored, the value of ``--run``,
    the stepper, the objects to display (in order) and the timings in seconds."""

    name: str
    mod: IRModule
    source_mod: IRModule
    result: Any = None
    result_view: Any = None  # the display of ``result`` among ``outputs``
    stepper: Any = None
    outputs: list[Any] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)


_LOADED = False


def _load_once(timings: dict[str, float]) -> None:
    """Build what the first cell of a kernel would otherwise build inside its parse: the
    parser's LALR tables (from the grammar, with lark), the op registry and the passes.
    It is timed on its own line, so ``--time`` shows the cell's parse and type check
    apart from this one-off cost (tens of ms on a fast machine; the first cell's
    "parse + type check" once read 74.87 ms against 0.62 ms for the same work later)."""
    global _LOADED
    if _LOADED:
        return
    start = time.perf_counter()
    from ..syntax.parser import parse
    from ..transform.infer_type import InferType

    InferType()(parse("def @main(%x: int32) { add(%x, 1) }", source_name="<warm-up>"))
    _LOADED = True
    timings["first use: parser tables, ops, passes (once per kernel)"] = time.perf_counter() - start


def _parse_cell(
    text: str,
    options: argparse.Namespace,
    namespace: Mapping[str, Any],
    line_offset: int,
    timings: Optional[dict[str, float]] = None,
) -> IRModule:
    from ..syntax.parser import parse
    from ..transform.infer_type import InferType

    timings = {} if timings is None else timings
    start = time.perf_counter()
    try:
        expanded, pieces = (text, []) if options.no_expand else expand_variables(text, namespace)
    except ExpansionError as exc:
        raise relocate(exc, text, text, [], line_offset) from None
    if pieces:
        timings["expand {...}"] = time.perf_counter() - start
    try:
        start = time.perf_counter()
        mod = parse(expanded, source_name=CELL_SOURCE)
        timings["parse"] = time.perf_counter() - start
        start = time.perf_counter()
        mod = InferType()(mod)
        timings["type check"] = time.perf_counter() - start
        return mod
    except RelayError as exc:
        raise relocate(exc, text, expanded, pieces, line_offset) from None


def _show(mod: IRModule, show: str) -> Any:
    if show == "text":
        return _module_view(mod)
    if show == "anf":
        return text_bundle(mod.astext(form="anf"))
    if show == "types":
        from ..typing.text import type_text

        sigs = [f"@{gv.name_hint} : {type_text(f.checked_type)}" for gv, f in mod.functions.items()]
        return text_bundle("\n".join(sigs) + "\n\n" + mod.astext(show_types=True))
    if show == "graph":
        _viz()
        try:
            from .inspector import GraphInspector
        except ImportError:  # no anywidget: the static drawing
            return _Bundle(
                {"image/svg+xml": _viz().render(mod, mode="dag"), "text/plain": repr(mod)}
            )
        return GraphInspector.from_ir(mod)
    if show == "explore":  # big models: collapsible groups, search, zoom
        return _viz().explore(mod)
    if show == "dag-vs-anf":
        return _viz().compare(mod)
    if show == "llvm":
        return text_bundle(llvm_text(mod))
    raise MagicOptionError(f"unknown --show {show!r}")  # pragma: no cover - argparse checks


def _module_view(mod: IRModule) -> Any:
    """The module's rich view (the viz layer's HTML) with the text as the plain fallback."""
    from ..viz.html import cut_text, text_html

    text = mod.astext(show_types=False)
    rich = getattr(mod, "_repr_html_", None)
    return _Bundle(
        {"text/plain": cut_text(text), "text/html": rich() if rich is not None else text_html(text)}
    )


def _viz() -> Any:
    try:
        import relay_nb.viz as viz
    except ImportError as exc:
        raise RelayError(
            f"the graph views need relay_nb.viz and the notebook extra ({exc})"
        ) from None
    return viz


def llvm_text(mod: IRModule) -> str:
    """The LLVM IR of every kernel the JIT compiles for ``mod`` (``relay.build(mod)``)."""
    from ..backend.llvm.build import build

    parts = []
    for kernel in build(mod).kernels:
        body = kernel.ir if kernel.native else f"; no LLVM IR: runs with numpy ({kernel.reason})"
        parts.append(f"; {kernel.summary()}\n{body}")
    return "\n\n".join(parts) if parts else "; the JIT compiled no kernels for this module"


def _run_args(args: list[str], namespace: Mapping[str, Any]) -> list[Any]:
    values = []
    for code in args:
        try:
            values.append(eval(code, dict(namespace)))  # the user's own expression
        except Exception as exc:
            raise RelayError(f"--run argument {code!r}: {type(exc).__name__}: {exc}") from None
    return values


def run_relay_cell(
    text: str,
    line: str | argparse.Namespace = "",
    namespace: Optional[MutableMapping[str, Any]] = None,
    *,
    line_offset: int = 1,
    default_show: str = "text",
) -> CellOutcome:
    """Do what a ``%%relay`` cell does, without displaying anything.

    Parameters
    ----------
    text : str
        The cell's Relay text (a module, or a bare expression that becomes ``@main``).
    line : str or argparse.Namespace
        The option line (see :func:`parse_options`).
    namespace : dict
        The notebook's variables: ``{expr}`` expansion and ``--run`` arguments read it;
        the module (``<name>``), the value (``<name>_result``) and the stepper
        (``<name>_stepper``) are stored in it.
    line_offset : int
        Lines of the cell before ``text`` (1: the ``%%relay`` line), so errors name the
        cell's own line numbers.

    Raises
    ------
    RelayError
        A parse or type error, located in the cell; a bad option; a failed ``--run``.

    Examples
    --------
    >>> ns = {"n": 3}
    >>> out = run_relay_cell("fn (%x: Tensor[({n}), float32]) { add(%x, %x) }", "--run np.ones(3, 'float32')", ns)
    >>> ns["mod_result"]   # doctest: +SKIP
    array([2., 2., 2.], dtype=float32)
    """
    options = parse_options(line) if isinstance(line, str) else line
    namespace = {} if namespace is None else namespace
    name = options.name or "mod"
    timings: dict[str, float] = {}

    _load_once(timings)
    source_mod = _parse_cell(text, options, namespace, line_offset, timings)

    mod = source_mod
    timing_report = None
    if options.passes:
        from ..transform.instrument import PassTimingInstrument
        from .trace import resolve_passes

        timing = PassTimingInstrument()
        start = time.perf_counter()
        mod = resolve_passes(options.passes, namespace).run(source_mod, instruments=[timing])
        timings[f"passes {options.passes}"] = time.perf_counter() - start
        timing_report = timing.render()
    namespace[name] = mod
    outcome = CellOutcome(name, mod, source_mod, timings=timings)

    show = options.show or default_show
    if show != "none":
        outcome.outputs.append(_show(mod, show))

    if options.run is not None:
        from ..eval.executor import create_executor

        args = _run_args(options.run, namespace)
        start = time.perf_counter()
        outcome.result = create_executor(options.executor or "interpreter", mod=mod).evaluate()(
            *args
        )
        timings[f"run ({options.executor or 'interpreter'})"] = time.perf_counter() - start
        namespace[f"{name}_result"] = outcome.result
        outcome.result_view = _result_view(outcome.result)
        outcome.outputs.append(outcome.result_view)

    if options.step:
        from .stepper import PassStepper

        inputs = _run_args(options.run, namespace) if options.run else None
        spec = options.passes or "O3"
        outcome.stepper = PassStepper(
            source_mod,
            passes=spec,
            inputs=inputs,
            executor=options.executor or "jit",
            namespace=namespace,
        )
        namespace[f"{name}_stepper"] = outcome.stepper
        outcome.outputs.append(outcome.stepper)

    if options.time:
        rows = [f"{what}: {secs * 1e3:.2f} ms" for what, secs in timings.items()]
        if timing_report:
            rows.append(timing_report)
        outcome.outputs.append(text_bundle("\n".join(rows), "relay-timing"))
    return outcome


def _result_view(value: Any) -> _Bundle:
    from ..eval.values import format_value

    return text_bundle(format_value(value), "relay-result")


# --- the IPython side ----------------------------------------------------------------------------


class RelayCellError(RelayError):
    """Carries a RelayError to IPython, which shows ``_render_traceback_``'s lines instead
    of a Python traceback (the cell still counts as failed, so "run all" stops).

    It is itself a RelayError with the same message, location and kind, so code that
    catches ``relay.RelayError`` around ``run_cell_magic`` catches it; ``.error`` is the
    original (a ParseError, a type error, ...)."""

    def __init__(self, error: RelayError):
        error = getattr(error, "error", error) if isinstance(error, RelayCellError) else error
        self.kind = error.kind
        self.error = error
        super().__init__(error.message, error.span, error.notes)

    def render(self) -> str:
        return self.error.render()

    def _render_traceback_(self) -> list[str]:
        lines = self.error.render().split("\n")
        return ["\x1b[1;31m" + lines[0] + "\x1b[0m", *lines[1:]]


def _split_line_magic(line: str) -> tuple[str, str]:
    """``%relay [options --] EXPR`` -> (options, expression)."""
    stripped = line.strip()
    if stripped.startswith("-") and not stripped[1:2].isdigit():
        options, sep, expr = stripped.partition(" -- ")
        if not sep:
            if stripped.endswith(" --"):
                return stripped[:-3], ""
            raise MagicOptionError(
                "%relay: put -- between the options and the expression: %relay --run -- add(1, 2)"
            )
        return options, expr
    return "", stripped


@magics_class
class RelayMagics(Magics):
    """``%%relay`` and ``%relay``; see :func:`run_relay_cell`."""

    @no_var_expand  # IPython would turn Relay's `{1}` into `1`; we expand `{name}` ourselves
    @line_cell_magic
    def relay(self, line: str, cell: Optional[str] = None) -> Any:
        from IPython.display import display

        ns = self.shell.user_ns
        try:
            if cell is None:
                options_text, expr = _split_line_magic(line)
                options = parse_options(options_text)
                if not expr:
                    raise MagicOptionError(
                        "%relay: no expression given (use %%relay for a whole cell)"
                    )
                if options.name is None:
                    ns = dict(ns)  # a one-liner stores nothing unless -n names it
                outcome = run_relay_cell(expr, options, ns, line_offset=0, default_show="none")
            else:
                outcome = run_relay_cell(cell, line, ns, line_offset=1)
        except RelayError as exc:
            raise RelayCellError(exc) from None
        for obj in outcome.outputs:
            if cell is None and obj is outcome.result_view:
                continue  # the line magic returns the value: IPython shows it as Out[n]
            display(obj)
        if cell is None:
            return (
                outcome.result
                if outcome.result is not None or options.run is not None
                else outcome.mod
            )
        return None


RelayMagics.relay.__doc__ = _relay_options.__doc__


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext relay_nb``: register ``%%relay`` / ``%relay``."""
    ipython.register_magics(RelayMagics)


__all__ = [
    "CellOutcome",
    "ExpansionError",
    "MagicOptionError",
    "RelayCellError",
    "RelayMagics",
    "expand_variables",
    "load_ipython_extension",
    "parse_options",
    "run_relay_cell",
]
