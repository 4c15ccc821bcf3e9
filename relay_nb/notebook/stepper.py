"""``PassStepper``: the ipywidgets view over :func:`~relay_nb.notebook.trace.trace_passes`.

A slider (with Play) and prev/next buttons move over the steps of a pipeline; the pass
list marks which passes changed the program, how long each took and whether the program
still computes the original result (the first pass that does not is red); the text tab
shows before/after with the differences highlighted, the graph tab the before/after
graphs with the nodes the pass removed / made highlighted (interactive
:class:`~relay_nb.notebook.explorer.GraphExplorer` views), the validation tab the values.

A step has one number everywhere it is shown (the list's first column, the header's
"step 5 of 8", the slider's readout), counted from 1; clicking a row of the list shows
that step.

All decisions (what changed, what matches) are made by ``trace_passes``; this file only
lays them out, with stock widgets, the CSS of ``widgets/stepper.css`` and, for the
clickable list (a stock HTML widget reports no clicks), ``widgets/step_table.js``.
"""

from __future__ import annotations

import difflib
import html
import re
from typing import Any, Callable, Mapping, Optional

import ipywidgets as widgets
import numpy as np
import traitlets

try:
    import anywidget
except ImportError:  # the list is then plain HTML: everything but clicking a row works
    anywidget = None

from ..ir.module import IRModule
from ._assets import read_asset
from .trace import PassSpec, Step, Trace, trace_passes

# --- text diff (a plain function, tested on its own) -------------------------------------------


_TOKEN = re.compile(r"[%@]?[\w.]+|\s+|[^\w\s]")


def _intraline(old: str, new: str, old_renamed: Optional[str] = None) -> tuple[str, str]:
    """Both lines as HTML with the tokens that differ wrapped in ``<mark>`` (whole lines
    when they have little in common: marking scattered letters helps nobody).
    ``old_renamed`` is ``old`` with its temporaries in the new numbering, so that only a
    reference that really changed is marked, not every renumbered one."""
    a_tokens, b_tokens = _TOKEN.findall(old), _TOKEN.findall(new)
    a_keys = _TOKEN.findall(old_renamed) if old_renamed is not None else a_tokens
    if len(a_keys) != len(a_tokens):
        a_keys = a_tokens
    sm = difflib.SequenceMatcher(None, a_keys, b_tokens, autojunk=False)
    if sm.ratio() < 0.4:
        return f"<mark>{html.escape(old)}</mark>", f"<mark>{html.escape(new)}</mark>"
    a: list[str] = []
    b: list[str] = []
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        x, y = html.escape("".join(a_tokens[i1:i2])), html.escape("".join(b_tokens[j1:j2]))
        if tag == "equal":
            a.append(x)
            b.append(y)
        else:
            if x:
                a.append(f"<mark>{x}</mark>")
            if y:
                b.append(f"<mark>{y}</mark>")
    return "".join(a), "".join(b)


def _unpaired(i1: int, i2: int, j1: int, j2: int) -> list[tuple[Optional[int], Optional[int]]]:
    return [(i, None) for i in range(i1, i2)] + [(None, j) for j in range(j1, j2)]


def _similarity(a: str, b: str) -> float:
    return difflib.SequenceMatcher(
        None, _TOKEN.findall(a), _TOKEN.findall(b), autojunk=False
    ).ratio()


def _align(
    old: list[str], new: list[str], i1: int, i2: int, j1: int, j2: int
) -> list[tuple[Optional[int], Optional[int]]]:
    """Pair the lines of a replaced block so that similar lines face each other (an
    order-keeping alignment maximising similarity; lines unlike any other stay unpaired).
    Big blocks are paired by position, as the alignment is quadratic."""
    n, m = i2 - i1, j2 - j1
    if n * m > 4000:
        k = min(n, m)
        return [(i1 + t, j1 + t) for t in range(k)] + _unpaired(i1 + k, i2, j1 + k, j2)
    sim = [[_similarity(old[i1 + a], new[j1 + b]) for b in range(m)] for a in range(n)]
    best = [[0.0] * (m + 1) for _ in range(n + 1)]
    for a in range(n - 1, -1, -1):
        for b in range(m - 1, -1, -1):
            pair = best[a + 1][b + 1] + sim[a][b] if sim[a][b] >= 0.3 else -1.0
            best[a][b] = max(pair, best[a + 1][b], best[a][b + 1])
    out: list[tuple[Optional[int], Optional[int]]] = []
    a = b = 0
    while a < n and b < m:
        if sim[a][b] >= 0.3 and best[a][b] == best[a + 1][b + 1] + sim[a][b]:
            out.append((i1 + a, j1 + b))
            a, b = a + 1, b + 1
        elif best[a][b] == best[a + 1][b]:
            out.append((i1 + a, None))
            a += 1
        else:
            out.append((None, j1 + b))
            b += 1
    out += [(i1 + t, None) for t in range(a, n)] + [(None, j1 + t) for t in range(b, m)]
    return out


_LOCAL = re.compile(r"%(\d+)")
_DEFINES = re.compile(r"\s*%(\d+) = ")


def _shape(line: str) -> str:
    """The line with its numbered temporaries (``%12``) blanked: a pass that removes one
    node renumbers every later line, and those lines must still pair up."""
    return _LOCAL.sub("%#", line)


class _Renaming:
    """Which old ``%N`` became which new one, learnt from the definitions paired so far
    (text order, so a number reused by a later function is remapped there)."""

    def __init__(self) -> None:
        self.new_of: dict[str, Optional[str]] = {}

    def define(self, old: str, new: Optional[str]) -> None:
        """``old`` (a line of the old text) faces ``new`` (None: it was deleted)."""
        m = _DEFINES.match(old)
        if m:
            n = _DEFINES.match(new) if new is not None else None
            self.new_of[m.group(1)] = n.group(1) if n else None

    def as_new(self, old: str) -> str:
        """``old`` with each temporary in the new numbering (one that has none, as its node
        went, becomes ``%_N``, which no new line has)."""
        def renamed(m: re.Match) -> str:
            n = m.group(1)
            return "%" + (self.new_of.get(n, n) or "_" + n)

        return _LOCAL.sub(renamed, old)

    def only_renumbered(self, old: str, new: str) -> bool:
        """Whether two lines of the same shape differ only by the renaming: each old
        reference must name the new line's counterpart of what it named before (a
        reference moved to another node is a real change)."""
        olds, news = _LOCAL.findall(old), _LOCAL.findall(new)
        first = 1 if _DEFINES.match(old) else 0
        return all(self.new_of.get(a, a) == b for a, b in zip(olds[first:], news[first:]))


_DiffRow = tuple[str, Optional[int], Optional[int], Optional[str]]


def _diff_pairs(old: list[str], new: list[str]) -> list[_DiffRow]:
    """The diff as rows ``(kind, old index, new index, old line renamed)``, kind one of
    ``same``, ``renum`` (only the numbering of temporaries differs), ``chg``, ``del``,
    ``ins``; a ``chg`` row carries its old line in the new numbering (for the marks)."""
    rows: list[_DiffRow] = []
    renaming = _Renaming()
    old_shapes, new_shapes = [_shape(s) for s in old], [_shape(s) for s in new]
    # autojunk: a model's shapes repeat (an unrolled LSTM has one line thousands of
    # times), which makes the exhaustive match take seconds; junk lines still pair up
    # as they extend the matches around the rare ones (8 s -> 0.05 s on the RNN-T).
    sm = difflib.SequenceMatcher(None, old_shapes, new_shapes, autojunk=True)
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag == "equal":
            pairs: list[tuple[Optional[int], Optional[int]]] = list(
                zip(range(i1, i2), range(j1, j2))
            )
        elif tag == "replace":
            pairs = _align(old, new, i1, i2, j1, j2)
        else:
            pairs = _unpaired(i1, i2, j1, j2)
        for i, j in pairs:
            a = old[i] if i is not None else None
            b = new[j] if j is not None else None
            if a is None:
                rows.append(("ins", i, j, None))
                continue
            if b is None:
                kind = "del"
            elif old_shapes[i] == new_shapes[j] and renaming.only_renumbered(a, b):
                kind = "same" if a == b else "renum"
            else:
                kind = "chg"
            renaming.define(a, b)
            rows.append((kind, i, j, renaming.as_new(a) if kind == "chg" else None))
    return rows


def _row(ln_a: Any, cls_a: str, a: str, ln_b: Any, cls_b: str, b: str) -> str:
    return (
        f'<tr><td class="relay-diff-lineno">{ln_a}</td><td class="{cls_a}">{a}</td>'
        f'<td class="relay-diff-lineno">{ln_b}</td><td class="{cls_b}">{b}</td></tr>'
    )


def _skip_row(hidden: int, renumbered: int) -> str:
    note = f" ({renumbered} only renumbered)" if renumbered else ""
    return (
        f'<tr class="relay-diff-skip"><td colspan="4">⋯ {hidden} unchanged lines{note} ⋯</td></tr>'
    )


def diff_html(before: str, after: str, context: Optional[int] = 3) -> str:
    """A side-by-side HTML diff of two program texts.

    Removed lines get class ``relay-diff-del``, added ones ``relay-diff-ins``, changed
    pairs ``relay-diff-chg-old`` / ``relay-diff-chg-new`` with the differing characters
    in ``<mark>``. Lines that differ only in the numbering of temporaries (``%12`` now
    ``%11`` because a node before them went) count as unchanged, shown with class
    ``relay-diff-renum``; a reference that now names another node is a change. Runs of
    more than ``2 * context`` unchanged lines are collapsed into a ``relay-diff-skip`` row
    (``context=None`` shows everything).

    >>> "relay-diff-ins" in diff_html("a\\n", "a\\nb\\n")
    True
    """
    old, new = before.splitlines(), after.splitlines()
    out = ['<table class="relay-diff"><tr><th></th><th>before</th><th></th><th>after</th></tr>']
    rows = _diff_pairs(old, new)
    k = 0
    while k < len(rows):
        kind, i, j, old_renamed = rows[k]
        if kind in ("same", "renum"):
            end = k
            while end < len(rows) and rows[end][0] in ("same", "renum"):
                end += 1
            run = rows[k:end]
            n = len(run)
            if context is not None and n > 2 * context + 1:
                hidden = run[context : n - context]
                renumbered = sum(r[0] == "renum" for r in hidden)
                shown = [*run[:context], None, *run[n - context :]]
            else:
                shown, hidden, renumbered = run, [], 0
            for r in shown:
                if r is None:
                    out.append(_skip_row(len(hidden), renumbered))
                    continue
                cls = "relay-diff-same" if r[0] == "same" else "relay-diff-renum"
                a, b = html.escape(old[r[1]]), html.escape(new[r[2]])
                out.append(_row(r[1] + 1, cls, a, r[2] + 1, cls, b))
            k = end
            continue
        if kind == "chg":
            a, b = _intraline(old[i], new[j], old_renamed)
            out.append(_row(i + 1, "relay-diff-chg-old", a, j + 1, "relay-diff-chg-new", b))
        elif kind == "del":
            out.append(
                _row(i + 1, "relay-diff-del", html.escape(old[i]), "", "relay-diff-empty", "")
            )
        else:
            out.append(
                _row("", "relay-diff-empty", "", j + 1, "relay-diff-ins", html.escape(new[j]))
            )
        k += 1
    out.append("</table>")
    return "".join(out)


# --- pieces of the view ---------------------------------------------------------------------------

# Located printouts kept for graphs not drawn yet (a big model's is ~10 MB): the shown
# step's two programs and its neighbours'.
_KEEP_LOCATED = 4

_STATUS_MARK = {"match": "✓", "mismatch": "✗", "error": "!", "unchecked": "–"}


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.2f} ms"


def _value_summary(value: Any) -> str:
    from ..eval.values import format_value

    if isinstance(value, np.ndarray) and value.size > 8:
        return f"array of shape {value.shape}, {value.dtype}: {np.array2string(value.ravel()[:6], separator=', ')[:-1]}, ...]"
    text = format_value(value)
    return text if len(text) < 400 else text[:400] + " ..."


def _max_diff(a: Any, b: Any) -> Optional[float]:
    if (
        isinstance(a, np.ndarray)
        and isinstance(b, np.ndarray)
        and a.shape == b.shape
        and a.dtype.kind in "fiu"
        and a.size
    ):
        diff = np.abs(a.astype("float64") - b.astype("float64"))
        finite = diff[np.isfinite(diff)]
        return float(finite.max()) if finite.size else None
    return None


class StepTable(anywidget.AnyWidget if anywidget is not None else widgets.HTML):
    """The stepper's list of passes: HTML made in Python (``value``), and a click on a row
    reported back — what a stock HTML widget cannot do.  ``on_step(callback)`` registers
    ``callback(step_index)`` for clicks (widgets/step_table.js sends ``{"step": i}``)."""

    if anywidget is not None:
        _esm = read_asset("step_table.js")
        value = traitlets.Unicode("").tag(sync=True)

    def __init__(self, **kwargs: Any):
        super().__init__(**kwargs)
        self._step_callbacks: list = []
        self.on_msg(self._on_message)

    def on_step(self, callback) -> None:
        self._step_callbacks.append(callback)

    def _on_message(self, _widget: Any, content: Any, _buffers: Any) -> None:
        step = content.get("step") if isinstance(content, dict) else None
        if isinstance(step, int) and not isinstance(step, bool):
            for callback in self._step_callbacks:
                callback(step)


class PassStepper:
    """Step through a pipeline: before/after text and graphs, time, and validation.

    Parameters
    ----------
    mod : IRModule
        The program.
    passes : str, int, Pass or list, optional
        As for :func:`~relay_nb.notebook.trace.trace_passes`: names, Pass objects (a
        ``@function_pass`` from a cell), ``"O3"``; default: the pipeline at ``opt_level``.
    opt_level : int
        Used when ``passes`` is not given (default 3).
    inputs : sequence or dict, optional
        Arguments for ``@main``; random ones of the parameter types by default.
    executor : {"jit", "interpreter"}
        ``"jit"`` checks every step with the JIT and the interpreter.

    Examples
    --------
    >>> stepper = relay.PassStepper(mod, opt_level=3)     # doctest: +SKIP
    >>> stepper                                           # the widget, in a notebook
    >>> stepper.next(); stepper.current.name              # doctest: +SKIP
    'InferType'
    """

    def __init__(
        self,
        mod: IRModule,
        passes: Optional[PassSpec] = None,
        opt_level: int = 3,
        inputs: Any = None,
        executor: str = "jit",
        *,
        namespace: Optional[Mapping[str, Any]] = None,
        seed: int = 0,
        context: Optional[int] = 3,
    ):
        spec = passes if passes is not None else opt_level
        self.trace: Trace = trace_passes(
            mod, spec, inputs, executor, seed=seed, namespace=namespace
        )
        self.context = context
        self._texts: dict[int, str] = {}
        # Per program (by identity; the trace keeps each alive): its located printout until
        # its DAG graph is built, and per mode its hierarchy and explorer data.  The
        # "before" of a step is the "after" of the step before, so each program is
        # printed once and grouped once per mode; a pane adds only its highlight.
        self._located: dict[int, Any] = {}
        self._programs: dict[tuple[int, str], tuple[Any, dict]] = {}
        self._removed: dict[int, list] = {}
        # Node ids are prefixed per program (p0_ the input, then each new program in
        # order): the two panes of a changed step have distinct ids, and a program keeps
        # its ids from one step to the next (a pass that returns its input object shows
        # one program, with the same ids, on both sides).
        self._prefixes: dict[int, str] = {}
        for s in self.trace:
            for mod in (s.before, s.after):
                self._prefixes.setdefault(id(mod), f"p{len(self._prefixes)}_")
        self._graphs: dict[tuple[int, str], Any] = {}
        self.visible: list[int] = list(range(len(self.trace)))
        self._build()
        self._refresh()

    # -- navigation ---------------------------------------------------------------------------
    @property
    def steps(self) -> list[Step]:
        return list(self.trace)

    @property
    def position(self) -> int:
        """Index of the current step among the visible ones."""
        return self.slider.index or 0

    @property
    def current(self) -> Optional[Step]:
        """The step shown, or None when the filter hides every step."""
        return self.trace[self.visible[self.position]] if self.visible else None

    def next(self) -> None:
        """Show the next (visible) step."""
        if self.visible and self.position < len(self.visible) - 1:
            self.slider.index += 1

    def prev(self) -> None:
        """Show the previous (visible) step."""
        if self.visible and self.position > 0:
            self.slider.index -= 1

    def go(self, index: int) -> None:
        """Show step ``index`` (turning the changed-only filter off if it hides it)."""
        if not 0 <= index < len(self.trace):
            return  # a stale click from a redrawn table
        if index not in self.visible:
            self.changed_only.value = False
        self.slider.index = self.visible.index(index)

    def set_changed_only(self, on: bool) -> None:
        self.changed_only.value = on

    # -- layout ---------------------------------------------------------------------------------
    def _build(self) -> None:
        n = max(len(self.trace) - 1, 0)
        self.style = widgets.HTML(f"<style>{read_asset('stepper.css')}</style>")
        self.summary = widgets.HTML()
        self.play = widgets.Play(
            min=0, max=n, step=1, interval=1200, description="play", tooltip="play the steps"
        )
        # The slider's readout is the step's number, as in the list and the header (with
        # "changed only" it skips the hidden steps' numbers).
        self.slider = widgets.SelectionSlider(
            options=self._slider_options(), description="step", continuous_update=True
        )
        widgets.jslink((self.play, "value"), (self.slider, "index"))
        self.prev_button = widgets.Button(
            description="◀ prev", tooltip="previous pass", layout=widgets.Layout(width="auto")
        )
        self.next_button = widgets.Button(
            description="next ▶", tooltip="next pass", layout=widgets.Layout(width="auto")
        )
        self.prev_button.add_class("relay-stepper-prev")
        self.next_button.add_class("relay-stepper-next")
        self.changed_only = widgets.Checkbox(value=False, description="changed only", indent=False)
        self.changed_only.add_class("relay-stepper-changed-only")
        self.pass_list = StepTable()
        self.pass_list.add_class("relay-stepper-list")
        self.pass_list.on_step(self.go)
        self.header = widgets.HTML()
        self.header.add_class("relay-stepper-header")
        self.diff = widgets.HTML()
        self.diff.add_class("relay-stepper-diff")
        self.graph_mode = widgets.ToggleButtons(
            options=[("DAG", "dag"), ("ANF", "anf")],
            value="dag",
            tooltips=["dataflow graph: sharing visible", "A-normal form: let scopes visible"],
        )
        self.graph_mode.add_class("relay-stepper-graph-mode")
        self.graph_panes = widgets.HBox([])
        self.graph_panes.add_class("relay-stepper-graph-panes")
        self.graph_box = widgets.VBox([self.graph_mode, self.graph_panes])
        self.validation = widgets.HTML()
        self.validation.add_class("relay-stepper-validation")
        self.tabs = widgets.Tab(
            children=[self.diff, self.graph_box, self.validation],
            titles=("text diff", "graph", "validation"),
        )

        self.prev_button.on_click(lambda _b: self.prev())
        self.next_button.on_click(lambda _b: self.next())
        self.slider.observe(lambda _c: self._refresh(), names="index")
        self.changed_only.observe(self._on_filter, names="value")
        self.tabs.observe(lambda _c: self._refresh_graphs(), names="selected_index")
        self.graph_mode.observe(lambda _c: self._refresh_graphs(), names="value")

        controls = widgets.HBox(
            [self.play, self.slider, self.prev_button, self.next_button, self.changed_only]
        )
        self.widget = widgets.VBox(
            [self.style, self.summary, controls, self.pass_list, self.header, self.tabs]
        )
        self.widget.add_class("relay-stepper")

    def _on_filter(self, change: dict) -> None:
        current = self.current
        if change["new"]:
            self.visible = [s.index for s in self.trace if s.changed or s.flagged or s.error]
        else:
            self.visible = list(range(len(self.trace)))
        n = max(len(self.visible) - 1, 0)
        target = 0
        if current is not None and self.visible:
            later = [p for p, i in enumerate(self.visible) if i >= current.index]
            target = later[0] if later else len(self.visible) - 1
        self.slider.options = self._slider_options()  # (this resets the index to 0)
        if self.visible:
            self.slider.index = target
        self.play.max = n
        self._refresh()

    def _slider_options(self) -> list[tuple[str, int]]:
        # An empty slider cannot hold a value: show "-" (disabled) when nothing is visible.
        return [(str(i + 1), i) for i in self.visible] or [("-", -1)]

    # -- rendering ------------------------------------------------------------------------------
    def _text(self, mod: IRModule) -> str:
        """``mod.astext(show_types=False)``, printed once; the located printout it comes
        from is kept for the program's DAG graph."""
        key = id(mod)
        if key not in self._texts:
            from ..viz.locate import locate

            located = locate(mod)
            self._texts[key] = located.astext()
            if (key, "dag") not in self._programs:
                self._located[key] = located
                if len(self._located) > _KEEP_LOCATED:  # the oldest: least likely drawn next
                    del self._located[next(iter(self._located))]
        return self._texts[key]

    def _refresh(self) -> None:
        trace, step = self.trace, self.current
        self.summary.value = self._summary_html()
        self.pass_list.value = self._pass_list_html()
        empty = not self.visible
        for w in (self.slider, self.play, self.prev_button, self.next_button):
            w.disabled = empty
        if step is None:
            self.header.value = (
                "<div>no pass changed the program</div>" if trace else "<div>no passes ran</div>"
            )
            self.diff.value = ""
            self.validation.value = ""
            self.graph_panes.children = ()
            return
        self.prev_button.disabled = self.position == 0
        self.next_button.disabled = self.position >= len(self.visible) - 1
        self.header.value = self._header_html(step)
        if step.changed:
            self.diff.value = diff_html(
                self._text(step.before), self._text(step.after), self.context
            )
        else:
            body = html.escape(self._text(step.after))
            self.diff.value = f'<div class="relay-unchanged">{html.escape(step.name)} did not change the program</div><pre>{body}</pre>'
        self.validation.value = self._validation_html(step)
        self._refresh_graphs()

    def _summary_html(self) -> str:
        trace = self.trace
        label = trace.pipeline.label if trace.pipeline else ""
        parts = [
            f'<div class="relay-summary"><b>{html.escape(label)}</b>: {html.escape(trace.summary())}, '
            f"{_ms(trace.total_seconds)} in passes</div>"
        ]
        bad = trace.flagged
        if bad is not None:
            parts.append(
                f'<div class="relay-bad">first pass that changes the result: step {bad.index + 1} {html.escape(bad.name)}</div>'
            )
        for note in trace.notes:
            parts.append(f'<div class="relay-note">{html.escape(note.splitlines()[0])}</div>')
        return "".join(parts)

    def _pass_list_html(self) -> str:
        current = self.current
        rows = [
            '<div class="relay-steps-scroll"><table class="relay-steps">'
            "<tr><th>#</th><th>pass</th><th>changed</th><th>time</th><th>result</th></tr>"
        ]
        for i in self.visible:
            s = self.trace[i]
            classes = ["relay-step-changed" if s.changed else "relay-step-unchanged"]
            if s.flagged:
                classes.append("relay-step-flagged")
            if current is not None and s.index == current.index:
                classes.append("relay-step-current")
            indent = "&nbsp;&nbsp;" * max(s.depth - 1, 0)
            rows.append(
                f'<tr class="{" ".join(classes)}" data-step="{s.index}"><td class="relay-num">{s.index + 1}</td>'
                f'<td class="relay-pass">{indent}{html.escape(s.name)}</td>'
                f"<td>{'● changed' if s.changed else '○'}</td>"
                f'<td class="relay-num">{_ms(s.seconds)}</td>'
                f'<td title="{s.status}">{_STATUS_MARK[s.status]} {s.status}</td></tr>'
            )
        rows.append("</table></div>")
        return "".join(rows)

    def _header_html(self, step: Step) -> str:
        verdict = {
            "match": '<span class="relay-good">result matches the original</span>',
            "mismatch": '<span class="relay-bad">result differs from the original</span>',
            "error": '<span class="relay-bad">failed</span>',
            "unchecked": "not executed",
        }[step.status]
        what = f"{len(step.changed_nodes)} new nodes" if step.changed else "unchanged"
        return (
            f'<div class="relay-step-title"><b>step {step.index + 1} of {len(self.trace)}: '
            f"{html.escape(step.name)}</b> &mdash; {what} &mdash; {_ms(step.seconds)} &mdash; {verdict}</div>"
        )

    def _validation_html(self, step: Step) -> str:
        trace = self.trace
        out = ['<div class="relay-validation">']
        if trace.inputs is None:
            out.append("<div>not executed: no inputs</div>")
        for kind in trace.executors:
            ref = trace.reference.get(kind)
            out.append(f"<div><b>{kind}</b></div>")
            out.append(f"<pre>original: {html.escape(_value_summary(ref))}</pre>")
            if kind in step.results:
                value = step.results[kind]
                diff = _max_diff(value, ref)
                extra = f"  (max |difference| {diff:.3g})" if diff is not None else ""
                out.append(f"<pre>this step: {html.escape(_value_summary(value))}{extra}</pre>")
        if step.error:
            out.append(f'<pre class="relay-bad">{html.escape(step.error)}</pre>')
        if not step.executed and not step.error and trace.inputs is not None:
            out.append("<div>(the program is the same as at the step before: not run again)</div>")
        for note in trace.notes:
            out.append(f'<pre class="relay-note">{html.escape(note)}</pre>')
        out.append("</div>")
        return "".join(out)

    # -- graphs -------------------------------------------------------------------------------
    def graph_views(
        self, step: Optional[Step] = None, mode: Optional[str] = None
    ) -> tuple[Any, Any]:
        """The (before, after) graph views of ``step`` (default: the current one) in
        ``mode`` (default: the toggle's, ``"dag"`` or ``"anf"``): the before graph
        highlights what the pass removed, the after graph what it made."""
        step = step or self.current
        if step is None:
            raise IndexError("no step is shown")
        key = (step.index, mode or self.graph_mode.value)
        if key not in self._graphs:
            self._graphs[key] = self._make_graphs(step, key[1])
        return self._graphs[key]

    def program_graph(self, mod: IRModule, mode: str) -> tuple[Any, dict]:
        """The :class:`~relay_nb.viz.Hierarchy` of one of the trace's programs in ``mode``
        and its explorer data without highlight, built once and shared by every pane
        showing that program (so the hierarchy's nodes carry no highlight: a pane's
        highlight is in its data rows, :attr:`GraphExplorer.nodes`)."""
        key = (id(mod), mode)
        if key not in self._programs:
            from ..util import paused_gc
            from ..viz.explore import explore_data, explore_hierarchy

            located = self._located.pop(id(mod), None) if mode == "dag" else None
            prefix = self._prefixes.get(id(mod), "")
            with paused_gc():
                h = explore_hierarchy(mod, mode, id_prefix=prefix, located=located)
                self._programs[key] = (h, explore_data(h, highlighted=()))
        return self._programs[key]

    def _make_graphs(
        self, step: Step, mode: str, on_pane: Optional[Callable[[Any, Any], None]] = None
    ) -> tuple[Any, Any]:
        """Both views of ``step``, "after" (what the step made) first: ``on_pane(before,
        after)`` is called as each is ready (``before`` is None until it is), so a big
        program's first pane shows while the second is still being drawn."""
        try:
            from ..util import paused_gc
            from ..viz.explore import with_highlight
            from ..viz.graph import highlighted_ids
            from .explorer import GraphExplorer

            # One pause for both panes: the diffs, highlights and payloads allocate a few
            # objects per node, and each full collection would rescan both big programs.
            with paused_gc():
                views: dict[str, Any] = {}
                for side in ("after", "before"):
                    if side == "after":
                        mod, marked = step.after, step.changed_nodes
                    else:
                        if step.index not in self._removed:
                            self._removed[step.index] = step.removed_nodes
                        mod, marked = step.before, self._removed[step.index]
                    h, data = self.program_graph(mod, mode)
                    # The graph explorer (pan/zoom, groups, search): nothing is clipped.
                    data = with_highlight(data, highlighted_ids(h.graph, marked))
                    views[side] = GraphExplorer.from_hierarchy(h, f"{side} {step.name}", data)
                    if on_pane is not None:
                        on_pane(views.get("before"), views["after"])
            return views["before"], views["after"]
        except Exception as exc:  # no renderer installed, or a huge graph: say so, keep going
            message = widgets.HTML(
                f'<div class="relay-note">graph view unavailable: {html.escape(str(exc))}</div>'
            )
            return message, widgets.HTML("")

    def _refresh_graphs(self) -> None:
        # Graphs are built only while their tab is open.
        step = self.current
        if self.tabs.selected_index != 1 or step is None:
            return
        key = (step.index, self.graph_mode.value)
        if key not in self._graphs:
            # A note in each pane at once, then each pane as soon as it is drawn (the
            # front end gets every change while the kernel goes on).
            waiting = [
                widgets.HTML(f'<div class="relay-note">drawing the program {side} '
                             f"{html.escape(step.name)}\u2026</div>")  # fmt: skip
                for side in ("before", "after")
            ]
            self.graph_panes.children = tuple(waiting)

            def show(before: Any, after: Any) -> None:
                self.graph_panes.children = (before if before is not None else waiting[0], after)

            self._graphs[key] = self._make_graphs(step, key[1], on_pane=show)
        self.graph_panes.children = self._graphs[key]

    # -- display ----------------------------------------------------------------------------------
    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict:
        data = self.widget._repr_mimebundle_(include=include, exclude=exclude) or {}
        data["text/plain"] = f"PassStepper({self.trace.summary()})"
        return data

    def __repr__(self) -> str:
        return f"<PassStepper {self.trace.summary()}>"


__all__ = ["PassStepper", "diff_html"]
