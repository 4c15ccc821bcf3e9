"""The graph explorer widget: a hierarchical, searchable, zoomable graph of a program.

Python computes the groups (:mod:`relay_nb.viz.hierarchy`) and sends them once as
compact data (:func:`relay_nb.viz.explore.explore_data`), zlib-compressed JSON in one
binary buffer (:func:`pack_data`: a big model's 2 MB of rows and text is ~0.4 MB on the
wire and in a notebook that saves widget state); the front end
(``widgets/explore_layout.js`` + ``graph_explorer.js``, with dagre vendored in
``widgets/vendor``: no CDN, works offline) draws what is open, toggles groups, searches
and zooms without a round trip.  ``expanded`` and ``selected`` sync both ways, so the
view can be driven from Python too.  The static SVG of the first view goes along in the
output for exported notebooks, GitHub and VS Code without the widget.
"""

from __future__ import annotations

import json
import zlib
from typing import Any, Iterable, Optional

import anywidget
import traitlets

from ..viz.hierarchy import Hierarchy, Match
from ._assets import read_asset


def explorer_esm() -> str:
    """The front end: dagre, the pure layout/search functions, then the view."""
    return "\n".join(
        read_asset(name)
        for name in ("vendor/dagre.min.js", "explore_layout.js", "explore_payload.js",
                     "graph_explorer.js")
    )


class GraphExplorer(anywidget.AnyWidget):
    """A program as collapsible groups (see :func:`relay_nb.viz.explore`).

    Examples
    --------
    >>> view = relay.viz.explore(mod)                  # doctest: +SKIP
    >>> view.expand("/@main/stage1"); view.search("conv2d")[0].path   # doctest: +SKIP
    '/@main/stage1/unit1/conv1'
    """

    _esm = explorer_esm()
    _css = read_asset("graph_explorer.css")

    #: The explore_data dict.  Not synced itself: :attr:`payload` carries it.
    data = traitlets.Dict({})
    payload = traitlets.Bytes(b"").tag(sync=True)
    expanded = traitlets.List(traitlets.Unicode()).tag(sync=True)
    selected = traitlets.Unicode("").tag(sync=True)
    query = traitlets.Unicode("").tag(sync=True)
    title = traitlets.Unicode("").tag(sync=True)

    @classmethod
    def from_hierarchy(
        cls, h: Hierarchy, title: str = "", data: Optional[dict] = None
    ) -> "GraphExplorer":
        """The view of ``h``; ``data`` is its :func:`~relay_nb.viz.explore.explore_data`
        when the caller has it already (the pass stepper shares one per program)."""
        from ..viz.explore import explore_data

        if data is None:
            data = explore_data(h)
        view = cls(data=data, expanded=list(data["expanded"]), title=title)
        view.hierarchy = h
        return view

    @traitlets.observe("data")
    def _pack(self, change: dict) -> None:
        self.payload = pack_data(change["new"])

    # -- driving it from Python ---------------------------------------------------------
    def expand(self, group: str) -> None:
        """Open ``group`` (and the groups holding it)."""
        self.expanded = sorted(self.hierarchy.reveal(self.expanded, group) | {group})

    def collapse(self, group: str) -> None:
        """Close ``group`` (its subgroups keep their state for when it reopens)."""
        self.expanded = [g for g in self.expanded if g != group]

    def to_level(self, level: int) -> None:
        """Open exactly the groups above depth ``level``."""
        self.expanded = sorted(self.hierarchy.to_level(level))

    def expand_all(self) -> None:
        self.expanded = sorted(self.hierarchy.expand_all())

    def search(self, query: str) -> list[Match]:
        """The matches of ``query`` (also shown in the widget's search box)."""
        self.query = query
        return self.hierarchy.search(query)

    def select(self, node_id: str) -> None:
        """Select a node: its groups open, the view zooms to it, its lines are selected."""
        self.expanded = sorted(self.hierarchy.reveal(self.expanded, node_id))
        self.selected = node_id

    @property
    def nodes(self) -> dict[str, dict]:
        """``{node id: info}`` as the front end has it (label, kind, type, attrs, lines,
        group path, highlighted), like :attr:`GraphInspector.nodes`."""
        groups = self.data.get("groups", [])
        strings = self.data.get("strings", [])  # label, kind, type and attrs are indices into it
        out = {}
        for row in self.data.get("nodes", ()):
            node_id, label, kind, group, typ, attrs, line, end, _fill, op, uses = row[:11]
            label, kind, typ, attrs = strings[label], strings[kind], strings[typ], strings[attrs]
            out[node_id] = {"label": label, "kind": kind, "type": typ, "attrs": attrs,
                            "line": line, "end_line": end or line, "op": bool(op), "uses": uses,
                            "highlighted": row[11:] == [1],
                            "path": groups[group][0] if group >= 0 else ""}  # fmt: skip
        return out

    @property
    def text(self) -> str:
        """The printed program the text view shows."""
        return self.data.get("text", "")

    @property
    def selected_lines(self) -> Optional[tuple[int, int]]:
        """The lines of the printed program the selected node spans."""
        for row in self.data.get("nodes", ()):
            if row[0] == self.selected and row[6]:
                return (row[6], row[7] or row[6])
        return None

    def visible(self) -> Iterable[str]:
        """The items the view shows now (node ids and collapsed group paths)."""
        return list(self.hierarchy.view(self.expanded).items)

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        # The static SVG of the first view goes along, so exported notebooks show it.
        data = super()._repr_mimebundle_(**kwargs)
        if isinstance(data, tuple):
            data, metadata = data
        else:
            metadata = None
        data = dict(data or {})
        data.setdefault("text/html", static_html(self.hierarchy, self.expanded))
        return (data, metadata) if metadata is not None else data


def pack_data(data: dict) -> bytes:
    """``data`` as the front end reads it (widgets/explore_payload.js): compact UTF-8
    JSON, zlib level 1 (the RNN-T's 1.9 MB in ~25 ms to 0.43 MB; level 6 saves another
    20% for three times the time, level 9 for fifteen)."""
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    return zlib.compress(text.encode(), 1)


def static_html(h: Hierarchy, expanded: Iterable[str]) -> str:
    """The view with ``expanded`` open as inline SVG (or a note when Graphviz is missing)."""
    from ..viz.render import strip_prolog, svg_or_error_html

    svg, note = svg_or_error_html(h.to_dot(expanded))
    if svg is None:
        return note or ""
    return f'<div class="relay-explore-static">{strip_prolog(svg)}</div>'


__all__ = ["GraphExplorer", "explorer_esm", "pack_data", "static_html"]
