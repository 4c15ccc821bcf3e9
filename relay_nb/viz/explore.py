"""``relay.viz.explore(mod)``: a real model as a hierarchical, searchable graph.

This module turns a :class:`~relay_nb.viz.hierarchy.Hierarchy` into the compact data the
explorer's front end reads (:func:`explore_data`), and opens the notebook widget
(:class:`relay_nb.notebook.explorer.GraphExplorer`).  Without anywidget (or outside a
notebook) the result is the Hierarchy itself, which displays as the static SVG of its
first view.

Why the browser lays out: a toggle, a search jump or a zoom then needs no round trip
to the kernel (the 200 ms budget) and keeps working when the kernel is busy or gone; each
open group is laid out on its own with dagre (vendored in ``widgets/vendor``) and cached,
so a toggle lays out only the toggled group's ancestors.  ``benchmarks/bench_views.py``
measures it against Graphviz per group: Graphviz is faster per group (2-7x on a fully
open transformer), but in Chromium a toggle takes 4-50 ms and a first draw 150-370 ms on
GPT-2 / ResNet-50 / 24-layer sizes, well inside the budget, so the round trip would buy
nothing.  Groups shaped like a weight module (inputs into one op) or a chain (layers,
stages) skip dagre altogether, and groups with the same layout problem (a model's
repeated layers) share one layout.  A big view draws only what is on screen, without
labels when zoomed out too far to read them, and a big model lays out "expand all" in
the background after its first view (see ``widgets/graph_explorer.js``).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any, Optional

from .hierarchy import Hierarchy, Region, hierarchy, op_name


def explore_data(
    h: Hierarchy,
    expanded: Optional[Collection[str]] = None,
    highlighted: Optional[Collection[str]] = None,
) -> dict:
    """The front end's data: groups (parents first), nodes and edges as index lists,
    the open groups and the printed program.

    Node rows are ``[id, label, kind, group, type, attrs, line, end_line, fill, op,
    uses, highlighted]`` with label, kind, type, attrs and fill as indices into
    ``strings`` (a model has a few hundred distinct ones: the RNN-T's 24,000 rows
    shrink from 2.6 to 1.2 MB); group rows ``[path, label, kind, parent, size, ops]``;
    ``edges`` is a flat ``[tail, head, ...]`` list of node indices.  What the front end
    reads as "the same" is left out: ``end_line`` is 0 for a node on one line (it reads
    ``end || line``) and a row stops before a 0 ``highlighted`` (it tests ``=== 1``).
    ``highlighted`` (node ids) replaces the nodes' own ``highlighted`` flags.
    """
    from ..util import paused_gc

    with paused_gc():  # a few containers per node while the model stays alive
        data = _explore_data(h, expanded)
        if highlighted is None:
            highlighted = [i for i, info in h.nodes.items() if info.highlighted]
        return with_highlight(data, highlighted) if highlighted else data


def with_highlight(data: dict, highlighted: Collection[str]) -> dict:
    """``data`` (of a hierarchy built without a highlight) with the nodes ``highlighted``
    (ids) marked: a new dict sharing every unmarked row, so one program's data serves
    several highlights (the pass stepper's "after" of a step is the "before" of the next).
    """
    marked = set(highlighted)
    rows = data["nodes"]
    if marked:
        rows = [row + [1] if row[0] in marked else row for row in rows]
    return {**data, "nodes": rows}


def _explore_data(h: Hierarchy, expanded: Optional[Collection[str]]) -> dict:
    from ..notebook.lines import LineSpans

    groups = sorted(h.groups.values(), key=lambda g: (g.depth, g.id))
    gindex = {g.id: k for k, g in enumerate(groups)}
    group_rows = [
        [g.id, g.label, g.kind, gindex[g.parent] if g.parent else -1, g.size, g.ops] for g in groups
    ]
    text = h.graph.text
    spans = LineSpans(text)
    nindex: dict[str, int] = {}
    strings: dict[str, int] = {}
    # Interned by first use, row by row (``intern(t)`` inlined: five calls per node).
    intern, group_of = strings.setdefault, h.group_of
    infos = h.nodes.values()
    ends = spans.end_lines([i.text_line or 0 for i in infos], [i.text_column or 1 for i in infos])
    node_rows = []
    for k, (node_id, info) in enumerate(h.nodes.items()):
        nindex[node_id] = k
        line = info.text_line
        end = ends[k] if line else None
        group = group_of[node_id]
        row = [
            node_id, intern(info.label.partition("\n")[0], len(strings)),
            intern(info.kind, len(strings)), gindex[group] if group else -1,
            intern(info.type_text, len(strings)), intern(info.attrs_text, len(strings)),
            line, 0 if end == line else end, intern(info.fill, len(strings)),
            1 if op_name(info) is not None else 0, int(info.uses),
        ]  # fmt: skip
        node_rows.append(row)
    edges: list[int] = []
    for t, hd in h.edges:
        edges.extend((nindex[t], nindex[hd]))
    open_ = h.initial() if expanded is None else expanded
    return {
        "groups": group_rows,
        "nodes": node_rows,
        "strings": list(strings),
        "edges": edges,
        "expanded": sorted(open_),
        "text": text,
    }


def explore_hierarchy(
    obj: Any,
    mode: str = "dag",
    regions: Collection[Region] = (),
    highlight: Collection = (),
    show_types: bool = True,
    *,
    id_prefix: str = "",
    located: Any = None,
) -> Hierarchy:
    """The :class:`Hierarchy` :func:`explore` shows (every node drawn, no DOT text).

    ``located`` (:func:`relay_nb.viz.locate.locate` of ``obj``, DAG mode) saves printing
    a program its caller has printed already (the pass stepper, for its text diff).
    """
    from ..util import paused_gc
    from .graph import build_graph

    # One pause for the whole job: each re-enabled collector rescans the big model.
    with paused_gc():
        graph = build_graph(obj, mode=mode, highlight=highlight, show_types=show_types,
                            max_nodes=10**9, id_prefix=id_prefix, with_dot=False,
                            located=located)  # fmt: skip
        return hierarchy(obj, mode=mode, regions=regions, graph=graph)


def explore(
    obj: Any,
    mode: str = "dag",
    regions: Collection[Region] = (),
    highlight: Collection = (),
    title: str = "",
    show_types: bool = True,
    *,
    id_prefix: str = "",
) -> Any:
    """Explore ``obj`` (an IRModule or expression) as a graph of collapsible groups.

    Groups are global functions, fused functions, scopes and the model's module paths
    (see :mod:`relay_nb.viz.hierarchy`); the view opens at a readable top level (tens
    of items).  In a notebook: click a group to open it in place, wheel to zoom, drag to
    pan, search by op / name / type / attribute (Enter for the next match, Shift+Enter
    for the previous one, ``b`` to go back), click a node to select its line in the text.

    Parameters
    ----------
    obj
        The program.
    mode
        ``"dag"`` (dataflow, sharing visible) or ``"anf"`` (A-normal form scopes).
    regions
        :class:`~relay_nb.viz.Region` s naming parts of the program.
    highlight
        Expressions to mark (e.g. the nodes a pass changed); a closed group holding one
        is marked too.
    id_prefix
        Prefix of the node ids (views of two programs side by side keep them apart).

    Returns
    -------
    GraphExplorer
        The widget (with the static SVG of its first view for exported notebooks); a
        :class:`~relay_nb.viz.Hierarchy` when anywidget is not installed.

    Examples
    --------
    >>> mod, params = relay.testing.resnet.get_workload(num_layers=50)
    >>> relay.viz.explore(mod)            # doctest: +SKIP
    """
    from ..util import paused_gc

    with paused_gc():  # one pause for the graph, the groups and the data
        h = explore_hierarchy(obj, mode, regions, highlight, show_types, id_prefix=id_prefix)
        try:
            from ..notebook.explorer import GraphExplorer
        except ImportError:  # no anywidget: the static picture
            return h
        return GraphExplorer.from_hierarchy(h, title=title)


__all__ = ["explore", "explore_data", "explore_hierarchy", "with_highlight"]
