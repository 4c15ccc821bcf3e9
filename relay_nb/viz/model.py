"""What a graph view returns: DOT text plus what every drawn node and cluster stands for.

The notebook layer (the inspector, the pass stepper) reads these: a ``NodeInfo`` is found
by its DOT id, which is also the ``id`` of the node's ``<g>`` element in the SVG.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from ..ir.expr import Expr


@dataclass
class NodeInfo:
    """One drawn node: what it is, how it is labelled, where it is in the text."""

    id: str
    expr: Optional[Expr]
    kind: str
    label: str
    type_text: str = ""
    attrs_text: str = ""
    line: Optional[int] = None
    column: Optional[int] = None
    line_origin: str = "none"  # "span", "text" or "none"
    text_line: Optional[int] = None
    text_column: Optional[int] = None
    shared: bool = False
    uses: int = 0
    highlighted: bool = False
    cluster: Optional[str] = None
    origin: Optional[Expr] = None  # the DAG node an ANF binding replaces
    fill: str = ""
    ref_of: Optional[str] = None  # a repeated drawing of node ``ref_of`` (big graphs)


@dataclass
class ClusterInfo:
    """A scope drawn as a cluster: a global, a function, a branch, a match clause."""

    id: str
    kind: str
    label: str
    parent: Optional[str]
    expr: Optional[Expr]


@dataclass
class EdgeInfo:
    """A drawn edge; ``role`` says what the tail is to the head ("arg", "cond", "then",
    "body", "binds", "calls", "next", ...)."""

    id: str
    tail: str
    head: str
    role: str


@dataclass
class Graph:
    """A drawn program: DOT source plus what each DOT node stands for.

    ``nodes`` maps each DOT node id (also the id of its SVG ``<g>``) to a
    :class:`NodeInfo`; ``node_id(expr)`` goes the other way.
    """

    dot: str
    nodes: dict[str, NodeInfo]
    clusters: dict[str, ClusterInfo]
    edges: list[EdgeInfo]
    mode: str
    text: str
    program: Any = None
    summarized: bool = False
    omitted: int = 0
    _ids: dict[Expr, str] = field(default_factory=dict, repr=False)

    def node_id(self, expr: Expr) -> Optional[str]:
        """The id of the node drawing ``expr`` (an ANF binding for its variable and
        value, or for the original node it replaces), or None when it is not drawn."""
        return self._ids.get(expr)

    def svg(self, engine: Optional[str] = None) -> str:
        """The drawing as SVG (see :func:`relay_nb.viz.render`)."""
        from .render import render

        return render(self.dot, engine=engine)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict:
        from .render import svg_or_error_html

        svg, html = svg_or_error_html(self.dot)
        bundle = {"text/plain": repr(self)}
        if svg is not None:
            bundle["image/svg+xml"] = svg
        else:
            bundle["text/html"] = html
        return bundle

    def __repr__(self) -> str:
        more = f", {self.omitted} more not drawn" if self.summarized else ""
        return f"<relay_nb.viz.Graph {self.mode}: {len(self.nodes)} nodes{more}>"


__all__ = ["ClusterInfo", "EdgeInfo", "Graph", "NodeInfo"]
