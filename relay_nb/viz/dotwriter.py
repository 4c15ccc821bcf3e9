"""Serialize a drawing (nodes, nested clusters, edges) as DOT text.

Kept apart from the graph logic so the text layout (attribute order, indentation, the
fast-layout settings) is one small, deterministic function: DOT output is compared
against golden files.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .style import attr_list, quote

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


def write_dot(d: Drawing) -> str:
    """The DOT text of ``d``: clusters nested as their parents say, in insertion order."""
    graph_attrs = {"id": d.graph_id, **BASE_GRAPH}
    if d.fast:
        graph_attrs.update(FAST_GRAPH)
    if d.label:
        graph_attrs.update(label=d.label, labelloc="t")
    out = ["digraph relay {"]
    out.extend(f"  {k}={quote(v)};" for k, v in graph_attrs.items())
    out.append("  node" + attr_list(NODE_DEFAULTS) + ";")
    out.append("  edge" + attr_list(EDGE_DEFAULTS) + ";")

    members: dict[str | None, list[tuple[str, dict]]] = {}
    for node_id, attrs, cluster in d.nodes:
        members.setdefault(cluster, []).append((node_id, attrs))
    subclusters: dict[str | None, list[str]] = {}
    for cid, (parent, _) in d.clusters.items():
        subclusters.setdefault(parent, []).append(cid)

    # Explicit stack: clusters may nest deeply (closures in branches in closures ...).
    stack: list[tuple[str | None, int, bool]] = [(None, 1, False)]
    while stack:
        cid, depth, closing = stack.pop()
        pad = "  " * depth
        if closing:
            out.append("  " * (depth - 1) + "}")
            continue
        if cid is not None:
            out.append("  " * (depth - 1) + f"subgraph {quote('cluster_' + cid)} {{")
            out.extend(f"{pad}{k}={quote(v)};" for k, v in d.clusters[cid][1].items())
            stack.append((cid, depth, True))
        for node_id, attrs in members.get(cid, ()):
            out.append(f"{pad}{quote(node_id)}{attr_list(attrs)};")
        for sub in reversed(subclusters.get(cid, ())):
            stack.append((sub, depth + 1, False))
    for tail, head, attrs in d.edges:
        out.append(f"  {quote(tail)} -> {quote(head)}{attr_list(attrs)};")
    out.append("}")
    return "\n".join(out) + "\n"


__all__ = ["Drawing", "write_dot"]
