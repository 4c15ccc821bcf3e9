"""Graph views of a Relay program: the dataflow DAG and the A-normal-form scopes.

Seed 004's lesson, drawn.  The same program has two readings:

* ``mode="dag"`` — the dataflow graph.  Every node is drawn **once**; a node used twice
  (``%1 = log(%x); add(%1, %1)``) has two out-edges and a double border ("shared").
  Edges go from an operand to its user, so data flows downwards.  Every kind of node is
  drawn: variables, constants, calls (labelled with the operator, ``log``,
  ``nn.conv2d``), tuples and projections, ``let`` (edges from its variable, value and
  body), ``if`` (each branch a cluster), ``match`` (a cluster per clause, titled with
  its pattern; dashed edges bind the pattern's variables), functions and closures (a
  cluster per function, holding its parameters and body), constructors, references,
  calls of globals (a cluster per global function of a module; a dashed edge from the
  callee's definition).  A node sits in the innermost cluster enclosing all its uses.
* ``mode="anf"`` — the same program after the project's ToANormalForm: one node per
  binding (``%x1 = log(%x)``), edges from a binding to the bindings that read its
  variable, dotted edges for the order of a ``let`` chain, and the scopes as nested
  clusters.  Here the *position* of each value is fixed by the program: a value
  computed inside an ``if`` branch or inside a closure sits inside that cluster.

Node ids are ``n<k>``, ``k`` the node's index in a post order of the drawn program, so
they are the same for the same program in every run; they are also the DOT ``id``
attribute, which Graphviz writes on the node's SVG ``<g>`` element.

Positions (:class:`NodeInfo` ``line`` / ``column``) come from the node's source span
when it has one (``line_origin == "span"``: the line in the text it was parsed from);
otherwise from the printed program (``line_origin == "text"``), i.e. :attr:`Graph.text`
— the program as ``astext(show_types=False)`` prints it (in ANF mode, as
``astext(form="anf", show_types=False)`` does), with the version header on line 1.
``text_line`` / ``text_column`` are always the position in :attr:`Graph.text`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection
from typing import Any, Optional

from ..errors import RelayError
from ..ir.expr import (
    Call,
    Constant,
    Constructor,
    Expr,
    Function,
    GlobalVar,
    If,
    Let,
    Match,
    MetaRef,
    Op,
    TupleWrapper,
    Var,
)
from ..ir.module import IRModule
from ..ir.ty import Type
from ..typing.text import TypeWriter
from .dotwriter import Drawing, write_dot
from .labels import (
    ATOM_KINDS,
    callee_kind,
    head_text,
    kind_of,
    pattern_text,
    type_of,
    value_text,
)
from .locate import Located, attrs_text, locate
from .model import ClusterInfo, EdgeInfo, Graph, NodeInfo
from .style import CALL_FILL, CLUSTER_STYLE, KIND_FILL, clip, edge_attrs, node_attrs, op_color
from .walk import Walk, walk

MODES = ("dag", "anf")
# Above this many drawn nodes: no edge labels, no chain-order edges, fast layout flags.
FAST_NODES = 150
_FOLDABLE = (Op, GlobalVar, Constructor)
_ANF_ATOMS = (Constant, MetaRef, GlobalVar, Constructor, Op)
_STRUCTURAL = ("param", "bind")
_SIDE_ROLES = ("next", "calls", "binds")  # edges that are not uses of a value
GHOST_USES = 3
GHOST_REACH = 400


def build_graph(
    obj: Any,
    mode: str = "dag",
    highlight: Collection = (),
    show_types: bool = True,
    max_nodes: int = 2000,
    *,
    id_prefix: str = "",
    with_dot: bool = True,
    located: Optional[Located] = None,
) -> Graph:
    """Draw ``obj`` (an IRModule or an expression) as a :class:`Graph`.

    Parameters
    ----------
    obj
        An IRModule, a Function or any expression; type-checked or not.  With
        ``show_types`` the program is type-checked on the side when it is not yet
        (labels get types); a program that does not type-check is drawn without them.
        Either way ``obj`` is left as it was.
    mode
        ``"dag"`` (dataflow graph, sharing visible) or ``"anf"`` (A-normal form, let
        scopes as nested clusters).  See the module docstring.
    highlight
        Expressions (or node ids) to draw highlighted, e.g. the nodes a pass changed.
        In ANF mode a binding is highlighted when the original node it replaces is.
    show_types
        Write each node's type under its label.
    max_nodes
        Draw at most this many nodes: a bigger program is cut after the first
        ``max_nodes`` (in post order, inputs first) and a ``... N more`` node stands
        for the rest.  Drawings of more than 150 nodes use fast layout settings, and
        there a variable or constant read by more than 3 nodes is repeated next to each
        reader (``NodeInfo.ref_of`` names the node it repeats; not counted in
        ``max_nodes``) instead of sending long edges across the whole drawing.
    id_prefix
        Prefix of every DOT/SVG id (two drawings inlined in one page need distinct ids).
    with_dot
        False: leave :attr:`Graph.dot` empty (a caller that lays out the nodes itself,
        such as :func:`relay_nb.viz.explore`, saves writing the DOT text).
    located
        ``locate(obj)`` when the caller has it (``mode="dag"`` only: the ANF view prints
        the converted program), so the program is not printed twice.

    Examples
    --------
    >>> mod = relay.parse('def @main(%x: Tensor[(2, 3), float32]) { %1 = log(%x); add(%1, %1) }')
    >>> g = relay.viz.build_graph(mod, mode="dag")
    >>> [n.label.split("\\n")[0] for n in g.nodes.values()]
    ['%x', 'log', 'add', 'def @main(%x)']
    >>> [n.shared for n in g.nodes.values()]
    [False, True, False, False]
    """
    if mode not in MODES:
        raise RelayError(f'unknown graph mode {mode!r}: use "dag" or "anf"')
    if isinstance(max_nodes, bool) or not isinstance(max_nodes, int) or max_nodes < 1:
        raise RelayError(f"max_nodes must be a positive integer, not {max_nodes!r}")
    if isinstance(obj, TupleWrapper):
        obj = obj.astuple()
    if isinstance(obj, Type):
        raise RelayError("a type has no graph: draw an expression or an IRModule")
    if not isinstance(obj, (IRModule, Expr)):
        raise RelayError(
            f"cannot draw a {type(obj).__name__}: give an IRModule or a Relay expression"
        )
    from ..util import paused_gc
    from .types import borrowed_types

    with borrowed_types(obj, infer=show_types), paused_gc():
        program, origin = obj, {}
        if mode == "anf":
            from .anf import anf_with_origins

            program, origin = anf_with_origins(obj)
        if located is None or mode == "anf":
            located = locate(program)
        builder = _Builder(program, mode, located, origin, highlight, show_types, max_nodes,
                           id_prefix)  # fmt: skip
        builder.with_dot = with_dot
        return builder.build()


class _Builder:
    """One drawing: decides the drawn nodes, their edges, clusters and attributes."""

    def __init__(self, program, mode, located: Located, origin, highlight, show_types,
                 max_nodes, prefix) -> None:  # fmt: skip
        self.program = program
        self.mode = mode
        self.anf = mode == "anf"
        self.located = located
        self.names = located.names
        self.origin: dict[Expr, Expr] = origin
        self.show_types = show_types
        self.max_nodes = max_nodes
        self.prefix = prefix
        self.with_dot = True
        self.types = TypeWriter()  # one type-text cache for the drawing
        self.hl_exprs, self.hl_ids = _split_highlight(highlight)
        if isinstance(program, IRModule):
            defs = sorted(program.functions.items(), key=lambda kv: kv[0].name_hint)
            self.roots = [fn for _, fn in defs]
            self.global_of = {fn: gv.name_hint for gv, fn in defs}
            self.def_of = {gv: fn for gv, fn in defs}
        else:
            self.roots = [program]
            self.global_of, self.def_of = {}, {}

    # -- representatives -----------------------------------------------------------------
    def _bind_anf(self, w: Walk) -> None:
        """ANF: a let's variable and its value are one node (the binding)."""
        rep = self.rep
        for node in w.order:
            if isinstance(node, Let):
                var, value = node.var, node.value
                self.binding[var] = node
                if not isinstance(value, (Var, *_ANF_ATOMS, Let)):
                    rep[value] = var

    def resolve(self, expr: Expr) -> Expr:
        """The expression whose node draws ``expr`` (an ANF let draws as its tail)."""
        if self.anf:
            while isinstance(expr, Let):
                expr = expr.body
        return self.rep.get(expr, expr)

    def _drawn_edge(self, parent: Expr, child: Expr, role: str) -> bool:
        if role in _STRUCTURAL:
            return False
        if role == "callee" and isinstance(child, _FOLDABLE):
            return False
        if self.anf:
            if isinstance(parent, Let):
                return False
            if isinstance(child, _ANF_ATOMS) and self.rep.get(parent, parent) is not parent:
                return False  # an atom operand of a binding is written in its label
        return True

    # -- the drawing ---------------------------------------------------------------------
    def build(self) -> Graph:
        w = walk(self.roots)
        self.w = w
        self.index = {node: i for i, node in enumerate(w.order)}
        self.rep: dict[Expr, Expr] = {}
        self.binding: dict[Var, Let] = {}
        if self.anf:
            self._bind_anf(w)

        edges: list[tuple[Expr, Expr, str, int]] = []  # tail, head, role, index
        anchors: set[Expr] = set(self.resolve(r) for r in self.roots)
        # resolve() of every node once (each is asked for again per edge it is on); in
        # post order a let's body comes first, so a let chain is followed once, not per let.
        resolved: dict[Expr, Expr] = {}
        rep = self.rep
        for n in w.order:
            resolved[n] = resolved[n.body] if self.anf and isinstance(n, Let) else rep.get(n, n)
        self.resolved = resolved
        res, kids, drawn_edge = resolved.__getitem__, w.kids, self._drawn_edge
        for parent in w.order:
            h = res(parent)
            for child, role, index, _ in kids[parent]:
                if isinstance(child, Var):
                    anchors.add(res(child))  # binders are drawn, used or not
                if not drawn_edge(parent, child, role):
                    continue
                t = res(child)
                if t is h:
                    continue
                edges.append((t, h, role, index))
            if isinstance(parent, Match):
                # A pattern variable gets its value from the scrutinee.
                data = res(parent.data)
                for child, role, k, _ in kids[parent]:
                    if role == "bind":
                        edges.append((data, res(child), "binds", k))
            elif isinstance(parent, Call) and isinstance(parent.op, GlobalVar):
                fn = self.def_of.get(parent.op)
                if fn is not None:
                    edges.append((self.resolve(fn), h, "calls", 0))
        # Every compound node is drawn (in ANF: as the binding holding it; lets are not).
        anchors.update(
            res(n)
            for n in w.order
            if kind_of(n) not in ATOM_KINDS and not (self.anf and isinstance(n, Let))
        )
        for t, h, *_ in edges:
            anchors.add(t)
            anchors.add(h)

        order = sorted(anchors, key=self.index.__getitem__)
        kept = order[: self.max_nodes]
        omitted = len(order) - len(kept)
        fast = len(kept) > FAST_NODES
        if self.anf and not fast:
            edges.extend(self._order_edges(edges))
        return self._emit(kept, omitted, edges, fast)

    def _order_edges(self, edges: list) -> list:
        """Dotted edges along each let chain, where no data edge already orders them."""
        linked = {(t, h) for t, h, *_ in edges}
        out = []
        for node in self.w.order:
            if isinstance(node, Let) and isinstance(node.body, Let):
                a, b = self.resolve(node.var), self.resolve(node.body.var)
                if (a, b) not in linked:
                    out.append((a, b, "next", 0))
        return out

    # -- attributes ----------------------------------------------------------------------
    def _node_id(self, expr: Expr) -> str:
        return f"{self.prefix}n{self.index[expr]}"

    def _cluster_id(self, scope: int) -> str:
        return f"{self.prefix}c{scope}"

    def _info(self, anchor: Expr) -> NodeInfo:
        names = self.names
        let = self.binding.get(anchor) if self.anf else None
        if let is not None:
            value = let.value
            kind = "let"
            name = names.get(anchor, "%" + anchor.name_hint)
            label = clip(f"{name} = {value_text(value, names)}")
            typ = type_of(anchor, value, writer=self.types)
            expr, about = let, value
        else:
            kind = kind_of(anchor)
            label = clip(head_text(anchor, names, self.global_of.get(anchor)))
            typ = type_of(anchor, writer=self.types)
            expr, about = anchor, anchor
        info = NodeInfo(self._node_id(anchor), expr, kind, label, type_text=typ)
        info.attrs_text = attrs_text(self.located, about)
        if type(anchor) is Var and anchor.name_hint and anchor.name_hint not in label:
            # a name the printer had to respell (an importer's "3.2.conv2.weight" prints as
            # %v3_2_conv2_weight): kept in the node's details, so hover and search find it
            info.attrs_text = f'name_hint="{anchor.name_hint}"'
        origin = (self.origin.get(about) or self.origin.get(anchor)) if self.origin else None
        info.origin = origin if origin is not None else about
        self._position(info, anchor, about)
        return info

    def _position(self, info: NodeInfo, anchor: Expr, about: Expr) -> None:
        pos = self.located.positions.get(anchor)
        if pos is None and anchor in self.global_of:
            pos = self._def_line(self.global_of[anchor])
        if pos is not None:
            info.text_line, info.text_column = pos
        span = anchor.span or (about.span if about is not anchor else None)
        if span is not None and span.line > 0:
            offset = span.source.line_offset if span.source is not None else 0
            info.line, info.column, info.line_origin = span.line + offset, span.column, "span"
        elif pos is not None:
            info.line, info.column, info.line_origin = pos[0], pos[1], "text"

    def _def_line(self, name: str) -> Optional[tuple[int, int]]:
        head = f"def @{name}("
        for i, line in enumerate(self.located.text.split("\n"), start=1):
            if line.startswith(head):
                return (i, 1)
        return None

    def _fill(self, info: NodeInfo) -> str:
        about = info.origin
        if self.anf and isinstance(about, Let):
            about = about.value
        kind = kind_of(about)
        if kind == "call":
            ck = callee_kind(about)
            return op_color(about.op.name) if ck == "op" else CALL_FILL[ck]
        return KIND_FILL.get(kind, "#ffffff")

    def _cluster_label(self, scope: int) -> tuple[str, str]:
        sc = self.w.scopes[scope]
        owner, names = sc.owner, self.names
        if isinstance(owner, Function):
            gname = self.global_of.get(owner)
            head = head_text(owner, names, gname)
            attrs = attrs_text(self.located, owner)
            return ("global" if gname else "function"), clip(head + (f" [{attrs}]" if attrs else ""), 60)
        if isinstance(owner, If):
            which = "then" if sc.index == 0 else "else"
            name = names.get(self.rep.get(owner, owner))
            return which, which + (f" (if {name})" if name else "")
        clause = owner.clauses[sc.index]
        return "clause", clip(pattern_text(clause.lhs, names) + " =>", 60)

    def _emit(self, kept: list[Expr], omitted: int, edges: list, fast: bool) -> Graph:
        d = Drawing(graph_id=f"{self.prefix}graph", fast=fast)
        nodes: dict[str, NodeInfo] = {}
        ids: dict[Expr, str] = {}
        for anchor in kept:
            info = self._info(anchor)
            nodes[info.id] = info
            ids[anchor] = info.id
        # Every expression drawn by a kept node (ANF values, originals) finds its node.
        for expr, anchor in self.rep.items():
            if anchor in ids:
                ids.setdefault(expr, ids[anchor])
        resolved, resolve = self.resolved, self.resolve
        for new, old in self.origin.items():
            anchor = resolved.get(new) or resolve(new)
            if anchor in ids:
                ids.setdefault(old, ids[anchor])
        drawn_edges, uses, refs = self._emit_edges(d, edges, ids, set(kept), fast)
        clusters = self._emit_clusters(d, kept)

        scope_of = self.w.scope_of
        for anchor in kept:
            info = nodes[ids[anchor]]
            s = scope_of.get(anchor, 0)
            info.cluster = self._cluster_id(s) if s > 0 else None
            info.uses = uses.get(info.id, 0)
            info.shared = info.uses >= 2 and info.kind not in ATOM_KINDS
            info.highlighted = self._highlighted(info, anchor)
            info.fill = self._fill(info)
            if self.with_dot:  # the DOT attributes: only the DOT text reads them
                attrs = node_attrs(info, anf=self.anf, show_types=self.show_types,
                                   name=self._text_name(info))  # fmt: skip
                d.nodes.append((info.id, attrs, info.cluster))
        for ghost_id, atom, reader in refs:
            canon = nodes[ids[atom]]
            s = scope_of.get(reader, 0)
            ghost = dataclasses.replace(canon, id=ghost_id, ref_of=canon.id,
                                        cluster=self._cluster_id(s) if s > 0 else None)  # fmt: skip
            nodes[ghost_id] = ghost
            attrs = {"id": ghost_id, "label": canon.label, "shape": "ellipse",
                     "style": "filled,dashed", "fillcolor": canon.fill, "fontsize": "9",
                     "tooltip": f"{canon.label} (drawn once as {canon.id}; repeated here)"}  # fmt: skip
            d.nodes.append((ghost_id, attrs, ghost.cluster))
        if omitted:
            more_id = f"{self.prefix}more"
            label = f"\u2026 {omitted} more nodes\n(max_nodes={self.max_nodes})"
            nodes[more_id] = NodeInfo(more_id, None, "more", label.split("\n")[0])
            d.nodes.append((more_id, {"id": more_id, "label": label, "shape": "note",
                                      "fillcolor": "#ffffff"}, None))  # fmt: skip
        return Graph(
            dot=write_dot(d) if self.with_dot else "", nodes=nodes, clusters=clusters,
            edges=drawn_edges,
            mode=self.mode, text=self.located.text, program=self.program,
            summarized=bool(omitted), omitted=omitted, _ids=ids,
        )  # fmt: skip

    def _emit_edges(self, d: Drawing, edges: list, ids: dict, kept: set, fast: bool) -> tuple:
        """Edges between kept nodes; one edge into the "more" node from each node whose
        users were cut.  Returns (edges, uses per node id, repeated-atom copies)."""
        more_id = f"{self.prefix}more"
        uses: dict[str, int] = {}
        drawn: list[EdgeInfo] = []
        seen_more: set[str] = set()
        repeated = self._repeated_atoms(edges, kept, fast)
        refs: list[tuple[str, Expr, Expr]] = []  # copy id, atom, reader
        for t, h, role, index in edges:
            if t not in kept or (fast and role == "calls"):
                continue
            tid = ids[t]
            if h not in kept:
                if tid in seen_more:
                    continue
                seen_more.add(tid)
                hid = more_id
            else:
                hid = ids[h]
            if role not in _SIDE_ROLES:
                uses[tid] = uses.get(tid, 0) + 1
                if t in repeated and hid != more_id:
                    refs.append((f"{tid}_r{len(refs)}", t, h))
                    tid = refs[-1][0]
            eid = f"{self.prefix}e{len(drawn)}"
            drawn.append(EdgeInfo(eid, tid, hid, role))
            if self.with_dot:
                d.edges.append((tid, hid, edge_attrs(eid, role, index, h, anf=self.anf, fast=fast)))
        return drawn, uses, refs

    def _emit_clusters(self, d: Drawing, kept: list[Expr]) -> dict[str, ClusterInfo]:
        """The clusters holding a kept node, and their ancestors, in program order."""
        scopes = self.w.scopes
        clusters: dict[str, ClusterInfo] = {}
        needed: list[int] = []
        for anchor in kept:
            s = self.w.scope_of.get(anchor, 0)
            while s > 0 and self._cluster_id(s) not in clusters:
                kind, label = self._cluster_label(s)
                parent = scopes[s].parent
                clusters[self._cluster_id(s)] = ClusterInfo(
                    self._cluster_id(s), kind, label,
                    self._cluster_id(parent) if parent > 0 else None, scopes[s].owner,
                )  # fmt: skip
                needed.append(s)
                s = parent
        # Globals by name (as the text prints them), nested scopes where they occur.
        for s in sorted(needed, key=lambda s: self.index[scopes[s].owner]):
            c = clusters[self._cluster_id(s)]
            style, color, fill = CLUSTER_STYLE[c.kind]
            attrs = {"id": c.id, "label": c.label, "style": style, "color": color,
                     "bgcolor": fill, "fontsize": "9", "labeljust": "l"}  # fmt: skip
            d.clusters[c.id] = (c.parent, attrs)
        return clusters

    def _repeated_atoms(self, edges: list, kept: set, fast: bool) -> set:
        """Atoms (a weight, the input) drawn again next to each reader instead of once.

        An atom read by many nodes far apart sends long edges across the drawing, and dot
        pays one virtual node per rank an edge crosses: a 150-node chain reading one
        weight everywhere takes over 10 s instead of 0.1 s.  The copy says as much as
        the edge did (the name), so big drawings repeat such atoms; small ones (the
        teaching examples) keep every node once.  An ANF binding is not an atom though
        its node is its let's variable: it draws a computed value, drawn once as in DAG mode.
        """
        uses: dict[Expr, int] = {}
        reach: dict[Expr, int] = {}  # sum of post-order distances: a proxy for ranks crossed
        index, binding = self.index, self.binding
        for t, h, role, _ in edges:
            if role in _SIDE_ROLES or t not in kept or h not in kept:
                continue
            if kind_of(t) not in ATOM_KINDS or t in binding:
                continue  # an ANF binding's variable draws a computed value: never repeated
            uses[t] = uses.get(t, 0) + 1
            reach[t] = reach.get(t, 0) + abs(index[h] - index[t])
        return {
            t for t, n in uses.items() if n > GHOST_USES and (fast or reach[t] > GHOST_REACH)
        }

    def _text_name(self, info: NodeInfo) -> Optional[str]:
        """The ``%N`` a DAG node is bound to in the printed text, if any."""
        if self.anf or info.kind in ATOM_KINDS or info.kind == "let":
            return None
        return self.names.get(info.expr)

    def _highlighted(self, info: NodeInfo, anchor: Expr) -> bool:
        return _is_highlighted(info, anchor, self.hl_ids, self.hl_exprs)


def _split_highlight(highlight: Collection) -> tuple[set, set]:
    """``highlight`` as (expressions, node ids)."""
    return {h for h in highlight if isinstance(h, Expr)}, {h for h in highlight if isinstance(h, str)}


def _is_highlighted(info: NodeInfo, anchor: Expr, hl_ids: Collection, hl_exprs: Collection) -> bool:
    """A node is highlighted when its id, or what it draws (its anchor, expression, the
    original an ANF binding replaces, a let's value), is in the highlight."""
    if info.id in hl_ids:
        return True
    if not hl_exprs:
        return False
    candidates = [anchor, info.expr, info.origin]
    if isinstance(info.expr, Let):
        candidates.append(info.expr.value)
    return any(c is not None and c in hl_exprs for c in candidates)


def highlighted_ids(graph: Graph, highlight: Collection) -> set[str]:
    """The ids of the nodes ``build_graph(..., highlight=highlight)`` would highlight in
    ``graph`` (built without one): a view shared by several highlights (the pass
    stepper's before/after of consecutive steps) applies each as a last, cheap step."""
    hl_exprs, hl_ids = _split_highlight(highlight)
    out: set[str] = set()
    if not hl_exprs and not hl_ids:
        return out
    anf = graph.mode == "anf"
    for node_id, info in graph.nodes.items():
        if info.ref_of is not None:  # a repeated atom: as its canonical node
            if info.ref_of in out:
                out.add(node_id)
            continue
        expr = info.expr
        if expr is None:
            continue
        # The builder's anchor: an ANF binding is drawn for its let's variable.
        anchor = expr.var if anf and isinstance(expr, Let) else expr
        if _is_highlighted(info, anchor, hl_ids, hl_exprs):
            out.add(node_id)
    return out


__all__ = ["ClusterInfo", "EdgeInfo", "Graph", "NodeInfo", "build_graph", "highlighted_ids"]
