"""Groups of a program's graph, as a path on every node (Model Explorer's ``namespace``).

A real model is thousands of nodes; a readable view shows tens.  Every drawn node gets a
*path* — ``/@main/stage1/unit1/conv1`` — and groups, collapsing and search are prefix
operations on paths.  The front end (``widgets/graph_explorer.js``) only draws and
toggles; everything here is plain data, tested without a browser.

Where path segments come from, outermost first:

* scopes of the graph view (:mod:`relay_nb.viz.walk`): global functions (``@main``),
  functions and closures, fused primitive functions after FuseOps (``fused nn.conv2d+
  nn.relu``), ``if`` branches and ``match`` clauses (in ``mode="anf"`` the let scopes);
* within a scope, a *module path*:

  - a user-named :class:`Region` (``relay.viz.Region("enc/layer0", outputs, inputs)``);
  - an importer's span name (``Span.source.name`` of a line-0 span, e.g. ONNX's
    ``/layer1/layer1.0/conv1/Conv`` -> ``layer1 ▸ layer1.0 ▸ conv1``);
  - the names of the weights an op reads (``%layer1.0.conv1.weight`` -> ``layer1 ▸ 0 ▸
    conv1``; TVM's zoo ``%stage1_unit1_conv1_weight`` -> ``stage1 ▸ unit1 ▸ conv1``).

  An op without a name of its own (a ``relu`` after ``conv1``) joins the module that
  *encloses* its most specific input's module (``unit1``); a weight-less op after it
  stays there; an unnamed constant joins its users.

* a group with too many direct nodes is cut into runs in program order (``ops 1-32``),
  so even an unnamed printout opens at tens of nodes.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Optional

from ..errors import RelayError
from ..ir.expr import Call, Expr, Function, Let, Op
from .model import Graph, NodeInfo

# Suffixes naming a parameter inside its module (dropped from a weight's module path).
PARAM_SUFFIXES = ("moving_mean", "moving_var", "running_mean", "running_var", "num_batches_tracked")
# In a name split at "_" (TVM's zoo: stage1_unit1_conv1_weight) the last word must be
# one of these, so that input_ids or attn_mask name no module.
UNDERSCORE_PARAMS = ("weight", "bias", "gamma", "beta", "scale", "kernel", "mean", "var", "alpha")
WIDE = 40  # a group with more direct nodes than this is cut into runs
RUN = 32  # the length of a run
TOP_BUDGET = 40  # the first view expands groups while at most this many items show
_SIDE_ROLES = ("calls",)  # edges that are not data flow
_ATOMS = ("var", "constant", "meta")
SEP = "/"


@dataclass(frozen=True)
class Region:
    """A part of a program a user names: everything computed for ``outputs`` from
    ``inputs`` (the inputs themselves excluded).  ``name`` is a path: ``"enc/layer0"``.

    Examples
    --------
    >>> x = relay.var("x", shape=(2,)); y = relay.exp(x); z = relay.log(y)
    >>> post = relay.viz.Region("post", [z], [y])
    >>> h = relay.viz.hierarchy(relay.Function([x], z), regions=[post])
    """

    name: str
    outputs: Sequence[Expr]
    inputs: Sequence[Expr] = ()


@dataclass
class Group:
    """A collapsible group: its path (also its id), what it shows, what it holds."""

    id: str
    label: str
    kind: str  # global, function, fused, then, else, clause, module, region, span, range
    parent: Optional[str]
    depth: int  # 1 for a top-level group
    groups: list[str] = field(default_factory=list)  # direct subgroups
    nodes: list[str] = field(default_factory=list)  # direct node ids
    size: int = 0  # nodes inside, at any depth
    ops: int = 0  # operator calls inside, at any depth


@dataclass
class Match:
    """A search hit: the node (or group), what matched, and the groups it sits in."""

    id: str
    path: str
    field: str  # "op", "name", "type", "attrs", "group"
    text: str


@dataclass
class View:
    """What shows for a set of expanded groups: visible items (node ids and collapsed
    group ids) with the expanded group holding each, and the edges between items."""

    items: dict[str, Optional[str]]  # item id -> expanded group it is drawn in (None: top)
    clusters: dict[str, Optional[str]]  # expanded group id -> its parent
    edges: dict[tuple[str, str], int]  # (tail item, head item) -> how many edges
    expanded: frozenset

    def groups(self) -> list[str]:
        return [i for i in self.items if i.startswith(SEP)]


@dataclass
class Hierarchy:
    """A program's graph with a group path on every node (see the module docstring).

    ``group_of[node_id]`` is the innermost group holding the node ("" for the top);
    ``path(node_id)`` is the same string.  :meth:`view` gives the visible graph for a
    set of expanded groups; :meth:`initial` the readable first view.
    """

    graph: Graph
    nodes: dict[str, NodeInfo]
    group_of: dict[str, str]
    groups: dict[str, Group]
    edges: list[tuple[str, str]]
    top_groups: list[str] = field(default_factory=list)
    top_nodes: list[str] = field(default_factory=list)

    # -- paths -------------------------------------------------------------------------
    def path(self, node_id: str) -> str:
        """The group path of a node ("" at the top level)."""
        return self.group_of[node_id]

    def ancestors(self, group_id: str) -> list[str]:
        """``group_id`` and the groups holding it, outermost first."""
        out = []
        g: Optional[str] = group_id or None
        while g:
            out.append(g)
            g = self.groups[g].parent
        return out[::-1]

    def members(self, group_id: str) -> list[str]:
        """Every node inside ``group_id`` (at any depth), in program order."""
        prefix = group_id + SEP
        return [n for n, g in self.group_of.items() if g == group_id or g.startswith(prefix)]

    def find(self, expr: Expr) -> Optional[str]:
        """The id of the node drawing ``expr``."""
        node_id = self.graph.node_id(expr)
        return node_id if node_id in self.nodes else None

    # -- expansion states --------------------------------------------------------------
    def view(self, expanded: Iterable[str] = ()) -> View:
        """The visible graph when exactly the groups in ``expanded`` are open (a group
        shows only when all groups holding it are open)."""
        open_ = frozenset(g for g in expanded if g in self.groups)
        rep: dict[str, str] = {}
        items: dict[str, Optional[str]] = {}
        clusters: dict[str, Optional[str]] = {}
        cache: dict[str, tuple[str, Optional[str]]] = {}  # group -> (item, drawn in)
        for node_id, g in self.group_of.items():
            if not g:
                rep[node_id] = node_id
                items[node_id] = None
                continue
            hit = cache.get(g)
            if hit is None:
                hit = self._visible_item(g, open_, clusters)
                cache[g] = hit
            item, where = hit
            item = item or node_id
            rep[node_id] = item
            items.setdefault(item, where)
        edges: dict[tuple[str, str], int] = {}
        for t, h in self.edges:
            a, b = rep[t], rep[h]
            if a != b:
                edges[(a, b)] = edges.get((a, b), 0) + 1
        return View(items, clusters, edges, open_)

    def _visible_item(self, g: str, open_: frozenset, clusters: dict) -> tuple[str, Optional[str]]:
        """(the collapsed group showing a node of group ``g``, or "" when the node
        itself shows; the expanded group it is drawn in)."""
        where: Optional[str] = None
        for a in self.ancestors(g):
            if a not in open_:
                return a, where
            clusters.setdefault(a, where)
            where = a
        return "", where

    def initial(self, budget: int = TOP_BUDGET) -> frozenset:
        """The groups open in the first view: breadth first, a group opens while the
        view stays within ``budget`` items (a lone top-level group always opens)."""
        open_: set[str] = set()
        count = len(self.top_groups) + len(self.top_nodes)
        frontier = list(self.top_groups)
        while frontier:
            nxt = []
            for g in frontier:
                grp = self.groups[g]
                width = len(grp.groups) + len(grp.nodes)
                if count + width - 1 <= budget or count == 1:
                    open_.add(g)
                    count += width - 1
                    nxt.extend(grp.groups)
            frontier = nxt
        return frozenset(open_)

    def to_level(self, level: int) -> frozenset:
        """Open every group above depth ``level`` ("collapse to level N": level 0 shows
        only the top-level items)."""
        return frozenset(g for g, grp in self.groups.items() if grp.depth <= level)

    def expand_all(self) -> frozenset:
        return frozenset(self.groups)

    def reveal(self, expanded: Iterable[str], item: str) -> frozenset:
        """``expanded`` plus the groups that must open for ``item`` (a node or group) to
        show."""
        g = self.group_of.get(item, None)
        if g is None:
            g = self.groups[item].parent or "" if item in self.groups else ""
        return frozenset(expanded) | frozenset(self.ancestors(g))

    # -- search ------------------------------------------------------------------------
    def search(self, query: str, limit: int = 500) -> list[Match]:
        """Nodes (and groups) whose op name, variable or global name, type or attributes
        contain ``query`` (case-insensitive), in program order, with their paths."""
        q = query.strip().lower()
        if not q:
            return []
        out: list[Match] = []
        for g in sorted(self.groups.values(), key=lambda g: (g.depth, g.id)):
            if q in g.label.lower():
                out.append(Match(g.id, g.parent or "", "group", g.label))
        for node_id, info in self.nodes.items():
            for fld, text in _search_fields(info):
                if q in text.lower():
                    out.append(Match(node_id, self.group_of[node_id], fld, text))
                    break
            if len(out) >= limit:
                break
        return out

    # -- display -----------------------------------------------------------------------
    def to_dot(self, expanded: Optional[Iterable[str]] = None) -> str:
        """DOT of the view with ``expanded`` open (default: the first view)."""
        from .hierarchy_dot import view_dot

        return view_dot(self, self.view(self.initial() if expanded is None else expanded))

    def svg(self, expanded: Optional[Iterable[str]] = None) -> str:
        """The view as SVG, laid out by Graphviz (the static fallback)."""
        from .render import render_dot

        return render_dot(self.to_dot(expanded))

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict:
        from .render import svg_or_error_html

        svg, html = svg_or_error_html(self.to_dot())
        bundle = {"text/plain": repr(self)}
        if svg is not None:
            bundle["image/svg+xml"] = svg
        else:
            bundle["text/html"] = html
        return bundle

    def __repr__(self) -> str:
        return f"<relay_nb.viz.Hierarchy: {len(self.nodes)} nodes in {len(self.groups)} groups>"


def _search_fields(info: NodeInfo) -> list[tuple[str, str]]:
    head = info.label.split("\n")[0]
    fld = "op" if op_name(info) is not None else "name"
    return [(fld, head), ("type", info.type_text), ("attrs", info.attrs_text)]


# -- building -------------------------------------------------------------------------------


def hierarchy(
    obj: Any,
    mode: str = "dag",
    regions: Collection[Region] = (),
    show_types: bool = True,
    graph: Optional[Graph] = None,
) -> Hierarchy:
    """Group every node of ``obj``'s graph view (see the module docstring).

    Parameters
    ----------
    obj
        An IRModule or an expression.
    mode
        ``"dag"`` or ``"anf"``, as for :func:`relay_nb.viz.build_graph`.
    regions
        :class:`Region` s the user names; their paths come first within a scope.
    graph
        An already built graph of ``obj`` (all nodes drawn) to reuse.

    Examples
    --------
    >>> mod, _ = relay.testing.resnet.get_workload(num_layers=18)
    >>> h = relay.viz.hierarchy(mod)
    >>> h.path(h.find(mod["main"].params[-1]))     # fc1_bias
    '/@main/fc1'
    """
    for r in regions:
        if not isinstance(r, Region):
            raise RelayError(f"regions must be relay.viz.Region objects, not {type(r).__name__}")
    if graph is None:
        from .graph import build_graph

        graph = build_graph(obj, mode=mode, show_types=show_types, max_nodes=10**9, with_dot=False)
    from ..util import paused_gc

    with paused_gc():  # a few containers per node while the model stays alive
        return _Grouper(graph, regions).build()


class _Grouper:
    """One grouping: module paths per node, then groups assembled from the paths."""

    def __init__(self, graph: Graph, regions: Collection[Region]) -> None:
        self.graph = graph
        self.regions = regions
        # Canonical nodes only: big drawings repeat a shared weight next to each reader.
        self.nodes = {
            i: n for i, n in graph.nodes.items() if n.ref_of is None and n.expr is not None
        }
        canon = {i: n.ref_of for i, n in graph.nodes.items() if n.ref_of is not None}
        self.edges: list[tuple[str, str]] = []
        self.succs: dict[str, list[str]] = {i: [] for i in self.nodes}
        seen = set()
        for e in graph.edges:
            t, h = canon.get(e.tail, e.tail), canon.get(e.head, e.head)
            if e.role in _SIDE_ROLES or t not in self.nodes or h not in self.nodes or t == h:
                continue
            if (t, h) not in seen:
                seen.add((t, h))
                self.edges.append((t, h))
                self.succs[t].append(h)

    def build(self) -> Hierarchy:
        """Module paths (tuples of (segment, separator)) in program order, then groups."""
        nodes = self.nodes
        preds: dict[str, list[str]] = {i: [] for i in nodes}
        succs = self.succs
        for t, h in self.edges:
            preds[h].append(t)
        cluster = {i: n.cluster for i, n in nodes.items()}
        own = self._own_names()
        name: dict[str, tuple] = {}
        named: set[str] = set()  # nodes whose path is their own (successors go one up)
        order = sorted(nodes, key=_index)
        for i in order:
            info = nodes[i]
            if i in own:
                name[i] = own[i]
                named.add(i)
                continue
            if info.kind in _ATOMS:
                continue  # placed after its users
            if isinstance(info.expr, Function):
                name[i] = ()  # a function heads its own scope's group
                continue
            same = [p for p in preds[i] if cluster[p] == cluster[i]]
            # A weight read by one op names its module; one read by many (an attention
            # mask every layer reads, tied embeddings) names none of them.
            weights = [
                own[p] for p in same if p in own and nodes[p].kind in _ATOMS and len(succs[p]) == 1
            ]
            if weights:
                name[i] = _common(weights)
                named.add(i)
                continue
            # The most specific module among its inputs'; on a tie the latest computed
            # (a residual add joins the block that just ran, not the one before).
            best: Optional[tuple] = None
            for p in sorted(same, key=_index):
                if p not in name or nodes[p].kind in _ATOMS:
                    continue
                cand = name[p][:-1] if p in named else name[p]
                if best is None or len(cand) >= len(best):
                    best = cand
            if best is not None:
                name[i] = best
            # else: it reads only inputs (a mask compared with 0): placed by its users
        for i in reversed(order):
            if i not in name:
                # An unnamed input joins its users' module; an op reading only inputs
                # joins the module enclosing its users' (as a relu does after a conv).
                up = nodes[i].kind not in _ATOMS
                users = [name.get(u, ())[:-1] if up and u in named else name.get(u, ())
                         for u in succs[i] if cluster[u] == cluster[i]]  # fmt: skip
                name[i] = _common(users) if users else ()
        return self._assemble(order, name)

    def _own_names(self) -> dict[str, tuple]:
        """Paths a node has by itself: a region, an importer's span name, a weight's name."""
        own: dict[str, tuple] = {}
        for i, info in self.nodes.items():
            expr = info.origin if info.origin is not None else info.expr
            path = _span_path(expr) or _span_path(info.expr)
            if not path and info.kind == "var":
                path = var_module_path(getattr(info.expr, "name_hint", ""))
            if path:
                own[i] = path
        for region in sorted(self.regions, key=lambda r: r.name.count("/")):
            path = tuple((s, "region") for s in region.name.split("/") if s)
            for i in self._region_nodes(region):
                own[i] = path
        return own

    def _region_nodes(self, region: Region) -> set[str]:
        from .walk import children

        stop = {id(e) for e in region.inputs}
        out: set[str] = set()
        seen: set[int] = set()
        stack = list(region.outputs)
        while stack:
            e = stack.pop()
            if id(e) in seen or id(e) in stop:
                continue
            seen.add(id(e))
            node_id = self.graph.node_id(e)
            if node_id in self.nodes:
                out.add(node_id)
            stack.extend(
                c for c, role, _, _ in children(e) if role != "callee" or isinstance(c, Function)
            )
        return out

    def _assemble(self, order: list[str], name: dict[str, tuple]) -> Hierarchy:
        graph = self.graph
        groups: dict[str, Group] = {}
        cluster_path: dict[str, str] = {}

        def ensure(path: str, label: str, kind: str, parent: Optional[str]) -> str:
            if path not in groups:
                depth = groups[parent].depth + 1 if parent else 1
                groups[path] = Group(path, label, kind, parent, depth)
                if parent:
                    groups[parent].groups.append(path)
            return path

        def scope_of(cid: Optional[str]) -> str:
            if cid is None:
                return ""
            if cid in cluster_path:
                return cluster_path[cid]
            info = graph.clusters[cid]
            base = scope_of(info.parent)
            # A function's group sits in the module of the call that calls it.
            owner = graph.node_id(info.expr) if info.expr is not None else None
            for h in self.succs.get(owner, ()):
                if self.nodes[h].cluster == info.parent:
                    base = place(base, name.get(h, ()))
                    break
            kind, label = _scope_kind(info)
            seg = label if kind == "global" else f"{label}#{cid}"
            path = ensure(base + SEP + _seg(seg), label, kind, base or None)
            cluster_path[cid] = path
            return path

        placed: dict[tuple[str, tuple], str] = {}  # most nodes share their module

        def place(base: str, module: tuple) -> str:
            key = (base, module)
            if key in placed:  # its groups exist already (ensure() only adds)
                return placed[key]
            path, title = base, []
            for seg, sep in module:
                title.append(seg)
                if sep in ("region", "span"):
                    kind, label = sep, seg
                else:
                    kind, label = "module", sep.join(title)
                path = ensure(path + SEP + _seg(seg), label, kind, path or None)
            placed[key] = path
            return path

        group_of: dict[str, str] = {}
        for i in order:
            group_of[i] = place(scope_of(self.nodes[i].cluster), name.get(i, ()))
        for i, g in group_of.items():
            if g:
                groups[g].nodes.append(i)
        _flatten(groups, group_of)
        ops = {i: op_name(info) for i, info in self.nodes.items()}  # asked per node thrice
        _cut_wide(groups, group_of, order, self.nodes, ops)
        _count(groups, group_of, ops)
        _label_fused(groups, group_of, ops)
        top_groups = [g for g in groups.values() if g.parent is None]
        top_nodes = [i for i in order if not group_of[i]]
        ordered = {i: group_of[i] for i in order}
        return Hierarchy(graph, {i: self.nodes[i] for i in order}, ordered, groups,
                         self.edges, [g.id for g in top_groups], top_nodes)  # fmt: skip


def _index(node_id: str) -> int:
    return int(node_id.rsplit("n", 1)[-1])


def _seg(text: str) -> str:
    return text.replace(SEP, "\u2215")  # a path separator inside a name is not one


def _common(paths: list[tuple]) -> tuple:
    """The longest common prefix of module paths."""
    first = paths[0]
    n = len(first)
    for p in paths[1:]:
        n = min(n, len(p))
        for k in range(n):
            if p[k] != first[k]:
                n = k
                break
    return first[:n]


def var_module_path(name: str) -> tuple:
    """The module a weight belongs to, from its name: ``layer1.0.conv1.weight`` ->
    ``(("layer1", "."), ("0", "."), ("conv1", "."))``; ``stage1_unit1_bn1_moving_var`` ->
    ``stage1 / unit1 / bn1``; a one-word name (``data``) or an ``_`` name not ending in a
    parameter word (``input_ids``) -> ``()``."""
    for sep in ("/", ".", "_"):
        if sep in name.strip(sep):
            break
    else:
        return ()
    if sep == "_" and name.rsplit("_", 1)[-1] not in UNDERSCORE_PARAMS:
        return ()
    stem = name
    for suffix in PARAM_SUFFIXES:
        if sep == "_" and stem.endswith("_" + suffix):
            stem = stem[: -len(suffix)] + "x"  # drop the two-word suffix below as one
            break
    parts = [p for p in stem.split(sep) if p][:-1]
    sep_out = "." if sep == "/" else sep
    return tuple((p, sep_out) for p in parts)


def op_name(info: NodeInfo) -> Optional[str]:
    """The operator a node calls (an ANF binding: its value's), or None."""
    e = info.expr
    if isinstance(e, Let):
        e = e.value
    if isinstance(e, Call) and isinstance(e.op, Op):
        return e.op.name
    return None


def _span_path(expr: Any) -> tuple:
    """An importer's name for a node: a line-0 span's source name, as a module path
    (``/layer1/layer1.0/conv1/Conv`` -> layer1 / layer1.0 / conv1)."""
    span = getattr(expr, "span", None)
    if span is None or span.line != 0 or span.source is None:
        return ()
    text = span.source.name
    if not text or text.startswith("<"):
        return ()
    sep = "/" if "/" in text else "."
    parts = [p for p in text.split(sep) if p][:-1]
    return tuple((p, "span") for p in parts)


def _scope_kind(info: Any) -> tuple[str, str]:
    kind = info.kind
    owner = info.expr
    if kind == "global":
        return "global", info.label.split("(")[0].replace("def ", "").strip()
    if isinstance(owner, Function) and int(owner.attrs.get("Primitive", 0) or 0) == 1:
        return "fused", "fused"
    if kind == "function":
        return "function", "fn"
    return kind, info.label


def _flatten(groups: dict[str, Group], group_of: dict[str, str]) -> None:
    """Groups that say nothing go: a module group holding one node (the node moves up),
    and one holding just one group (``bn`` ▸ ``bn_data``: the inner one moves up; ids
    stay paths, each still starting with its parent's)."""
    for g in sorted(groups.values(), key=lambda g: -g.depth):
        if g.kind not in ("module", "region", "span") or not g.parent:
            continue
        parent = groups[g.parent]
        if not g.groups and len(g.nodes) == 1:
            (node,) = g.nodes
            group_of[node] = g.parent
            parent.nodes.append(node)
        elif not g.nodes and len(g.groups) == 1:
            (child,) = g.groups
            groups[child].parent = g.parent
            parent.groups.append(child)
        else:
            continue
        parent.groups.remove(g.id)
        del groups[g.id]
    for g in sorted(groups.values(), key=lambda g: g.id.count(SEP)):
        g.depth = groups[g.parent].depth + 1 if g.parent else 1


def _cut_wide(groups: dict[str, Group], group_of: dict[str, str], order: list[str], nodes,
              ops: dict[str, Optional[str]]) -> None:  # fmt: skip
    """Cut a group's long run of direct nodes (and the top level's) into runs of RUN; with
    more than WIDE runs, into runs of RUN runs, and so on: an unrolled LSTM's 13,000
    nodes open to 14 runs of runs, not 418 runs in one picture."""
    position = {i: k for k, i in enumerate(order)}
    owners: list[Optional[str]] = [None, *list(groups)]

    def cut(parent: Optional[str], direct: list[str], size: int) -> None:
        depth = groups[parent].depth + 1 if parent else 1
        for k in range(0, len(direct), size):
            run = direct[k : k + size]
            calls = [i for i in run if ops[i] is not None]
            first, last = (calls[0], calls[-1]) if calls else (run[0], run[-1])
            heads = [nodes[i].label.split("\n")[0] for i in (first, last)]
            label = f"{heads[0]} \u2026 {heads[1]}"
            path = (parent or "") + SEP + f"#{_index(run[0])}-{_index(run[-1])}"
            grp = Group(path, label, "range", parent, depth)
            groups[path] = grp
            if parent:
                groups[parent].groups.append(path)
            if size > RUN:
                cut(path, run, size // RUN)
                continue
            grp.nodes = list(run)
            for i in run:
                group_of[i] = path

    for g in owners:
        direct = [i for i in order if group_of[i] == (g or "")] if g is None else groups[g].nodes
        if len(direct) <= WIDE:
            continue
        direct = sorted(direct, key=position.__getitem__)
        size = RUN
        while -(-len(direct) // size) > WIDE:
            size *= RUN
        if g:
            groups[g].nodes = []
        cut(g, direct, size)


def _count(
    groups: dict[str, Group], group_of: dict[str, str], ops: dict[str, Optional[str]]
) -> None:
    """Each group's nodes and ops, its subgroups' included: each node counts in its own
    group, then the groups add up into their parents, deepest first (a path is longer
    than its parent's), so deep models pay per node once, not once per ancestor."""
    for i, g in group_of.items():
        if g:
            grp = groups[g]
            grp.size += 1
            grp.ops += ops[i] is not None
    for grp in sorted(groups.values(), key=lambda g: -len(g.id)):
        if grp.parent:
            parent = groups[grp.parent]
            parent.size += grp.size
            parent.ops += grp.ops


def _label_fused(
    groups: dict[str, Group], group_of: dict[str, str], ops: dict[str, Optional[str]]
) -> None:
    """A fused function is labelled with the ops it fuses (``fused nn.conv2d+nn.relu``)."""
    for g in groups.values():
        if g.kind != "fused":
            continue
        fused: list[str] = []
        for i in g.nodes:
            name = ops[i]
            if name is not None and name not in fused:
                fused.append(name)
        shown = "+".join(fused[:3]) + ("+\u2026" if len(fused) > 3 else "")
        g.label = f"fused {shown}" if shown else "fused"


__all__ = ["Group", "Hierarchy", "Match", "Region", "View", "hierarchy", "var_module_path"]
