"""DOT of one view of a :class:`~relay_nb.viz.hierarchy.Hierarchy`: the static picture
(exported HTML, GitHub's preview, VS Code without the widget) of what the explorer shows.

A collapsed group is one box (``layer1.0`` / ``52 ops``), an open group a cluster, an
edge between items stands for all the edges between their nodes (labelled ``×N`` when
more than one).  Ids are the item ids, so the SVG's ``<g id=...>`` name the same things
the explorer's data does.
"""

from __future__ import annotations

from typing import Any

from .dotwriter import Drawing, write_dot
from .style import CLUSTER_STYLE, clip

GROUP_FILL = {"fused": "#fff3e0", "global": "#e8eaf6", "function": "#e3f2fd", "range": "#f5f5f5"}


def group_text(group: Any) -> str:
    """The two lines a collapsed group shows: its name, then what it holds."""
    what = f"{group.ops} op{'' if group.ops == 1 else 's'}" if group.ops else f"{group.size} nodes"
    return f"{clip(group.label, 40)}\n{what}"


def view_dot(h: Any, view: Any) -> str:
    """DOT of ``view`` (a :class:`~relay_nb.viz.hierarchy.View` of hierarchy ``h``)."""
    d = Drawing(graph_id="explore", fast=len(view.items) > 150)
    for cid, parent in view.clusters.items():
        grp = h.groups[cid]
        style, color, _ = CLUSTER_STYLE.get(grp.kind, ("rounded", "#9e9e9e", "#ffffff"))
        d.clusters[(cid)] = (
            (parent) if parent else None,
            {"id": (cid), "label": clip(grp.label, 60), "style": style, "color": color,
             "fontsize": "9", "labeljust": "l"},
        )  # fmt: skip
    for item, where in view.items.items():
        cluster = (where) if where else None
        if item in h.groups:
            grp = h.groups[item]
            attrs = {"id": (item), "label": group_text(grp), "shape": "box3d",
                     "fillcolor": GROUP_FILL.get(grp.kind, "#eef3f8"),
                     "tooltip": f"{item}: {grp.size} nodes, {grp.ops} ops"}  # fmt: skip
        else:
            info = h.nodes[item]
            label = info.label.split("\n")[0]
            if info.type_text and info.kind == "call":
                label += "\n" + clip(info.type_text, 40)
            shape = "ellipse" if info.kind in ("var", "constant") else "box"
            attrs = {"id": item, "label": label, "fillcolor": info.fill or "#ffffff", "shape": shape}
        d.nodes.append(((item), attrs, cluster))
    for k, ((t, head), count) in enumerate(view.edges.items()):
        attrs = {"id": f"explore_e{k}"}
        if count > 1:
            attrs["label"] = f"\u00d7{count}"
        d.edges.append(((t), (head), attrs))
    return write_dot(d)


__all__ = ["group_text", "view_dot"]
