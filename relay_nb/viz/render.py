"""DOT to SVG with whatever Graphviz is available — ``pip install`` alone is enough.

Renderers, in order of preference (``engine=None``):

1. ``"dot"`` — a system Graphviz ``dot`` on PATH, run as a subprocess with a timeout;
2. ``"pygraphviz"`` — the pygraphviz wheel, which bundles Graphviz: small graphs are laid
   out in-process (no process start-up, what the pass stepper needs), big ones in a child
   Python process so the timeout holds there too (in-process C code cannot be stopped);
3. ``"graphviz-pure"`` — the graphviz-pure wheel's command (a self-contained port of
   ``dot``), run as a subprocess: what works where pygraphviz's bundled library does not.

Without either, a :class:`~relay_nb.errors.RelayError` says what to install.  Results are
cached by DOT text, so re-displaying a view costs nothing.
"""

from __future__ import annotations

import contextlib
import functools
import html
import io
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import warnings
from collections.abc import Collection
from typing import Any, Optional

from ..errors import RelayError

ENGINES = ("dot", "pygraphviz", "graphviz-pure")
DEFAULT_TIMEOUT = 60.0
# Above this many DOT lines (statements), pygraphviz runs in a child process (timeout-bounded).
INPROCESS_LIMIT = 1500
_INSTALL_HINT = (
    "install the pygraphviz wheel (pip install pygraphviz, or pip install 'relay_nb[notebook]'), "
    "which bundles Graphviz, or pip install graphviz-pure, or put Graphviz's `dot` on PATH"
)
_CHILD = (
    "import sys, pygraphviz\n"
    "g = pygraphviz.AGraph(string=sys.stdin.buffer.read().decode('utf-8'))\n"
    "sys.stdout.buffer.write(g.draw(format='svg', prog='dot'))\n"
)
_DOT_START = re.compile(r"\s*(?:/\*.*?\*/\s*|//[^\n]*\n\s*)*(strict\s+)?(di)?graph\b", re.S)


def render(
    obj: Any,
    mode: str = "dag",
    highlight: Collection = (),
    engine: Optional[str] = None,
    *,
    show_types: bool = True,
    max_nodes: int = 2000,
    timeout: float = DEFAULT_TIMEOUT,
) -> str:
    """Lay out and draw ``obj`` as SVG text.

    Parameters
    ----------
    obj
        An IRModule or expression (drawn with :func:`relay_nb.viz.build_graph`), a
        :class:`~relay_nb.viz.graph.Graph`, or DOT source text.
    mode, highlight, show_types, max_nodes
        As for :func:`relay_nb.viz.build_graph` (ignored for a Graph or DOT text).
    engine
        ``None`` (a system ``dot`` if there is one, else pygraphviz, else graphviz-pure),
        or one of ``"dot"``, ``"pygraphviz"``, ``"graphviz-pure"``.
    timeout
        Seconds the layout may take before a RelayError says so.

    Examples
    --------
    >>> svg = relay.viz.render(relay.parse_expr("fn (%x) { %1 = log(%x); add(%1, %1) }"))
    >>> svg.lstrip().startswith("<?xml")
    True
    """
    dot = _dot_of(obj, mode, highlight, show_types, max_nodes)
    return render_dot(dot, engine, timeout)


def render_dot(dot: str, engine: Optional[str] = None, timeout: float = DEFAULT_TIMEOUT) -> str:
    """SVG of DOT text ``dot`` (cached)."""
    if engine is not None and engine not in ENGINES:
        choices = ", ".join(repr(e) for e in ENGINES)
        raise RelayError(f"unknown render engine {engine!r}: use None or one of {choices}")
    return _render_cached(dot, engine or _default_engine(), float(timeout))


def available_engine() -> Optional[str]:
    """The renderer ``render`` would use, or None when there is none."""
    try:
        return _default_engine()
    except RelayError:
        return None


def svg_or_error_html(dot: str) -> tuple[Optional[str], Optional[str]]:
    """(SVG, None), or (None, an HTML note with the DOT source) when drawing fails —
    what display hooks use, so showing a view never raises in a notebook."""
    try:
        return render_dot(dot), None
    except RelayError as err:
        note = html.escape(str(err))
        source = html.escape(dot)
        return None, (
            f"<div><pre>{note}</pre><details><summary>DOT source</summary>"
            f"<pre>{source}</pre></details></div>"
        )


def strip_prolog(svg: str) -> str:
    """The ``<svg>`` element alone (no XML declaration, doctype or comments), for
    inlining in HTML."""
    start = svg.find("<svg")
    return svg[start:] if start >= 0 else svg


def _dot_of(obj: Any, mode: str, highlight: Collection, show_types: bool, max_nodes: int) -> str:
    from .graph import Graph, build_graph

    if isinstance(obj, Graph):
        return obj.dot
    if isinstance(obj, str):
        if _DOT_START.match(obj):
            return obj
        from ..syntax.parser import parse

        obj = parse(obj)  # Relay text: a ParseError points at the problem
    return build_graph(obj, mode, highlight, show_types, max_nodes).dot


def _default_engine() -> str:
    if shutil.which("dot"):
        return "dot"
    if _has_pygraphviz():
        return "pygraphviz"
    if _graphviz_pure():
        return "graphviz-pure"
    raise RelayError("cannot draw the graph: no Graphviz renderer found; " + _INSTALL_HINT)


def _graphviz_pure() -> Optional[str]:
    """The graphviz-pure program: on PATH, or beside this Python (a venv that a notebook
    server runs without activating it)."""
    beside = os.path.join(sysconfig.get_path("scripts"), "graphviz-pure")
    return shutil.which("graphviz-pure") or (beside if os.access(beside, os.X_OK) else None)


@functools.lru_cache(maxsize=1)
def _has_pygraphviz() -> bool:
    try:
        import pygraphviz  # noqa: F401
    except Exception:  # not installed, or its bundled library failed to load
        return False
    return True


@functools.lru_cache(maxsize=32)
def _render_cached(dot: str, engine: str, timeout: float) -> str:
    if engine == "dot":
        if not shutil.which("dot"):
            raise RelayError("engine='dot' needs Graphviz's `dot` on PATH; or " + _INSTALL_HINT)
        return _run([shutil.which("dot") or "dot", "-Tsvg"], dot, timeout, "dot")
    if engine == "graphviz-pure":
        program = _graphviz_pure()
        if not program:
            raise RelayError("engine='graphviz-pure' needs its wheel; " + _INSTALL_HINT)
        return _run([program, "-Tsvg"], dot, timeout, "graphviz-pure")
    if not _has_pygraphviz():
        raise RelayError("engine='pygraphviz' needs the pygraphviz package; " + _INSTALL_HINT)
    if dot.count("\n") > INPROCESS_LIMIT:
        return _run([sys.executable, "-c", _CHILD], dot, timeout, "pygraphviz")
    import pygraphviz

    try:
        # pygraphviz writes a "layout may take a long time" note to sys.stderr, which
        # a notebook would show as an error.
        with _without_font_noise(), contextlib.redirect_stderr(io.StringIO()), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            data = pygraphviz.AGraph(string=dot).draw(format="svg", prog="dot")
    except Exception as exc:  # DotError, or Graphviz refusing the input
        raise RelayError(f"Graphviz could not draw this graph: {exc}") from None
    return data.decode("utf-8") if isinstance(data, bytes) else str(data)


@contextlib.contextmanager
def _without_font_noise():
    """Drop Fontconfig's warnings from what the bundled Graphviz writes to file descriptor 2.

    The pygraphviz wheel carries an older libfontconfig than many systems; reading their
    configuration (even only /usr/share/fontconfig/conf.avail, whatever FONTCONFIG_FILE says)
    it prints 'Fontconfig warning: ... unknown element "reset-dirs"' from C, past
    ``sys.stderr`` — in a notebook, a pink stderr box above the drawing.  Anything else
    written there is passed on to ``sys.stderr``."""
    try:
        saved = os.dup(2)
    except OSError:  # no file descriptor 2 to capture
        yield
        return
    with tempfile.TemporaryFile() as sink:
        os.dup2(sink.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            sink.seek(0)
            text = sink.read().decode("utf-8", "replace")
    kept = [line for line in text.splitlines(keepends=True) if not line.startswith("Fontconfig ")]
    if kept:
        sys.stderr.write("".join(kept))


def _run(cmd: list[str], dot: str, timeout: float, name: str) -> str:
    try:
        proc = subprocess.run(
            cmd, input=dot.encode("utf-8"), capture_output=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired:
        raise RelayError(
            f"Graphviz ({name}) took longer than {timeout:g} s to lay out this graph; "
            "draw fewer nodes (max_nodes=...) or pass a larger timeout"
        ) from None
    except OSError as exc:
        raise RelayError(f"cannot run Graphviz ({name}): {exc}") from None
    if proc.returncode != 0 or not proc.stdout:
        message = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        noise = ("Fontconfig", "width of")  # font warnings, not the reason it failed
        detail = "; ".join(m for m in message if not any(n in m for n in noise))[:500]
        raise RelayError(f"Graphviz ({name}) could not draw this graph: {detail or 'no output'}")
    return proc.stdout.decode("utf-8")


__all__ = ["available_engine", "render", "render_dot", "strip_prolog", "svg_or_error_html"]
