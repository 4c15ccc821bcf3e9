"""Serialize a drawing (nodes, nested clusters, edges) as DOT text with the ``graphviz``
package.

Kept apart from the graph logic so the text layout (attribute order, the fast-layout
settings) is one small, deterministic function: DOT output is compared against golden
files.  ``graphviz`` does the quoting; we only turn our plain-text labels into DOT escape
strings first (a backslash stays a backslash, a newline becomes a line break) and mark
them as not-HTML, so a label such as ``<lambda>`` is drawn as written.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import graphviz

# Layout settings. dot spends its time in network simplex (ranking and positioning) and
# in crossing minimisation; on big graphs we bound both and draw straight edges.
BASE_GRAPH = {
    "rankdir": "TB",
    "fontname": "Helvetica",
    "fontsize": "10",
    "nodesep": "0.25",
    "ranksep": "0.35",
}
FAST_GRAPH = {
    "splines": "line",
    "nslimit": "0.1",
    "nslimit1": "0.1",
    "mclimit": "0.1",
    "remincross": "false",
    "searchsize": "2",
}
NODE_DEFAULTS = {"fontname": "Helvetica", "fontsize": "10", "style": "filled", "margin": "0.06,0.03"}
EDGE_DEFAULTS = {"fontname": "Helvetica", "fontsize": "8", "color": "#555555", "arrowsize": "0.6"}


@dataclass
class Drawing:
    """What :func:`write_dot` writes; node and cluster ids are DOT ids (also their SVG ids)."""

    graph_id: str = "graph"
    fast: bool = False
    label: str = ""
    nodes: list[tuple[str, dict, str | None]] = field(default_factory=list)  # id, attrs, cluster
    clusters: dict[str, tuple[str | None, dict]] = field(default_factory=dict)  # id: parent, attrs
    edges: list[tuple[str, str, dict]] = field(default_factory=list)


def escape(value: object) -> str:
    """``value`` as a DOT escString for ``graphviz`` to quote: literal backslashes,
    newlines as ``\\n`` line breaks, never an HTML label."""
    text = str(value).replace("\\", "\\\\")
    text = text.replace("\r\n", "\\n").replace("\n", "\\n").replace("\r", "\\n")
    return graphviz.nohtml(text)


def _escaped(attrs: dict) -> dict:
    return {k: escape(v) for k, v in attrs.items()}


def write_dot(d: Drawing) -> str:
    """The DOT text of ``d``: clusters nested as their parents say, in insertion order,
    each cluster's own nodes before its sub-clusters."""
    graph_attrs = {"id": d.graph_id, **BASE_GRAPH}
    if d.fast:
        graph_attrs.update(FAST_GRAPH)
    if d.label:
        graph_attrs.update(label=d.label, labelloc="t")
    root = graphviz.Digraph(
        "relay",
        graph_attr=_escaped(graph_attrs),
        node_attr=_escaped(NODE_DEFAULTS),
        edge_attr=_escaped(EDGE_DEFAULTS),
    )
    graphs: dict[str | None, graphviz.Digraph] = {None: root}
    children: dict[str | None, list[str]] = {}
    for cid, (parent, attrs) in d.clusters.items():
        graphs[cid] = graphviz.Digraph(escape("cluster_" + cid), graph_attr=_escaped(attrs))
        children.setdefault(parent, []).append(cid)
    for node_id, attrs, cluster in d.nodes:
        graphs[cluster].node(escape(node_id), **_escaped(attrs))

    # Clusters may nest deeply (closures in branches in closures ...): no recursion.
    # In reversed pre-order every cluster's children are complete before it takes them.
    preorder: list[str | None] = []
    stack: list[str | None] = [None]
    while stack:
        cid = stack.pop()
        preorder.append(cid)
        stack.extend(reversed(children.get(cid, ())))
    for cid in reversed(preorder):
        for child in children.get(cid, ()):
            graphs[cid].subgraph(graphs[child])

    for tail, head, attrs in d.edges:
        root.edge(escape(tail), escape(head), **_escaped(attrs))
    return root.source


__all__ = ["Drawing", "escape", "write_dot"]
