"""The notebook layer: the ``%%relay`` magic, ``trace_passes``, the pass stepper and the
graph inspector.

A thin shell over the library (DESIGN.md §4.11): the logic lives in plain functions
(:func:`trace_passes`, :func:`~relay_nb.notebook.magic.run_relay_cell`, the inspector's
node-to-line mapping) tested without a front end.  Names load on first use, so
``relay_nb.notebook.trace_passes`` works without IPython or ipywidgets installed.

>>> from relay_nb.notebook import trace_passes
>>> steps = trace_passes(mod, "O3")          # doctest: +SKIP
"""

from __future__ import annotations

import importlib as _importlib
import typing as _t

_LAZY: dict[str, str] = {
    "trace_passes": "trace:trace_passes",
    "Step": "trace:Step",
    "Trace": "trace:Trace",
    "make_inputs": "trace:make_inputs",
    "resolve_passes": "trace:resolve_passes",
    "values_close": "trace:values_close",
    "PassStepper": "stepper:PassStepper",
    "diff_html": "stepper:diff_html",
    "GraphInspector": "inspector:GraphInspector",
    "line_range": "inspector:line_range",
    "node_infos": "inspector:node_infos",
    "select_lines": "inspector:select_lines",
    "RelayMagics": "magic:RelayMagics",
    "CellOutcome": "magic:CellOutcome",
    "run_relay_cell": "magic:run_relay_cell",
    "parse_options": "magic:parse_options",
    "load_ipython_extension": "magic:load_ipython_extension",
}


def __getattr__(name: str) -> _t.Any:
    target = _LAZY.get(name)
    if target is None:
        raise AttributeError(f"module 'relay_nb.notebook' has no attribute {name!r}")
    module_name, _, attr = target.partition(":")
    value = getattr(_importlib.import_module(f"{__name__}.{module_name}"), attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = sorted(_LAZY)
