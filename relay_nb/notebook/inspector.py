"""The interactive graph view: an anywidget showing a program's SVG graph next to its text.

Hovering a node shows its type, attributes and lines; clicking selects it, which selects
its lines in the text view.  The front end is plain ESM and CSS from ``widgets/``
(``graph_inspector.js`` / ``.css``: no bundler, no CDN, works offline).  What the front end
needs is computed here, in plain functions tested without a browser: each drawn node's
info, and the lines of the printed program it spans
(:func:`~relay_nb.notebook.lines.line_range`, :func:`select_lines`).
"""

from __future__ import annotations

import itertools
from typing import Any, Collection, Mapping, Optional

import anywidget
import traitlets

from ._assets import read_asset
from .lines import LineSpans, line_offsets, line_range


def node_infos(graph: Any) -> dict[str, dict]:
    """``{node id: info}`` for the front end, from a :class:`relay_nb.viz.graph.Graph`.

    Each info has ``label``, ``kind``, ``type``, ``attrs``, ``line`` / ``column`` /
    ``end_line`` (in ``graph.text``, the text the view shows), ``source`` (the
    ``line:column`` of the code it was parsed from, when known), ``shared`` and ``uses``.
    """
    out: dict[str, dict] = {}
    spans = LineSpans(graph.text)
    for node_id, info in graph.nodes.items():
        line, column = info.text_line, info.text_column
        end = spans.end_line(line, column or 1) if line else None
        source = f"{info.line}:{info.column}" if info.line_origin == "span" and info.line else ""
        out[node_id] = {
            "label": info.label,
            "kind": info.kind,
            "type": info.type_text,
            "attrs": info.attrs_text,
            "line": line,
            "column": column,
            "end_line": end,
            "source": source,
            "shared": bool(info.shared),
            "uses": int(info.uses),
            "highlighted": bool(info.highlighted),
        }
    return out


def select_lines(nodes: Mapping[str, Mapping[str, Any]], node_id: str) -> Optional[tuple[int, int]]:
    """The (first, last) text lines to select when ``node_id`` is clicked, or None (an
    unknown id, or a node not in the text)."""
    info = nodes.get(node_id)
    if not info or not info.get("line"):
        return None
    start = int(info["line"])
    return (start, int(info.get("end_line") or start))


_IDS = itertools.count()


class GraphInspector(anywidget.AnyWidget):
    """An SVG graph of a program, with node details on hover and line selection on click.

    Build it with :meth:`from_ir`; ``selected`` is the clicked node's id (settable from
    Python too) and :attr:`selected_lines` the text lines it spans.

    Examples
    --------
    >>> view = GraphInspector.from_ir(mod)             # doctest: +SKIP
    >>> view.selected = next(iter(view.nodes))          # doctest: +SKIP
    >>> view.selected_lines                             # doctest: +SKIP
    (2, 2)
    """

    _esm = read_asset("graph_inspector.js")
    _css = read_asset("graph_inspector.css")

    svg = traitlets.Unicode("").tag(sync=True)
    nodes = traitlets.Dict({}).tag(sync=True)
    text = traitlets.Unicode("").tag(sync=True)
    selected = traitlets.Unicode("").tag(sync=True)
    title = traitlets.Unicode("").tag(sync=True)

    @classmethod
    def from_ir(
        cls,
        obj: Any,
        mode: str = "dag",
        highlight: Collection = (),
        title: str = "",
        show_types: bool = True,
    ) -> "GraphInspector":
        """Draw ``obj`` (IRModule or expression) with the viz layer; ``highlight`` lists
        expressions to mark (e.g. the nodes a pass changed)."""
        from ..viz.graph import build_graph
        from ..viz.render import strip_prolog

        graph = build_graph(
            obj, mode=mode, highlight=highlight, show_types=show_types, id_prefix=f"gi{next(_IDS)}_"
        )
        view = cls(
            svg=strip_prolog(graph.svg()), nodes=node_infos(graph), text=graph.text, title=title
        )
        view.graph = graph
        return view

    @property
    def selected_lines(self) -> Optional[tuple[int, int]]:
        """The lines of :attr:`text` the selected node spans (None when nothing is)."""
        return select_lines(self.nodes, self.selected) if self.selected else None

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        # The static SVG goes along, so exported notebooks (nbconvert, GitHub) show it.
        data = super()._repr_mimebundle_(**kwargs)
        if isinstance(data, tuple):
            data, metadata = data
        else:
            metadata = None
        data = dict(data or {})
        data.setdefault("text/html", self.svg)
        return (data, metadata) if metadata is not None else data


__all__ = ["GraphInspector", "line_offsets", "line_range", "node_infos", "select_lines"]
