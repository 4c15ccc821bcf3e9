"""Views of Relay programs: graph drawings (DAG vs A-normal form), SVG, rich HTML.

>>> import relay_nb as relay
>>> mod = relay.parse('def @main(%x: Tensor[(2, 3), float32]) { %1 = log(%x); add(%1, %1) }')
>>> dot = relay.viz.to_dot(mod, mode="dag")     # DOT source, no Graphviz needed
>>> svg = relay.viz.render(mod, mode="anf")     # SVG (system dot, else pygraphviz)
>>> relay.viz.compare(mod)                      # DAG and ANF side by side in a notebook
>>> relay.viz.to_html(mod)                      # highlighted text (what displaying mod shows)
>>> relay.viz.explore(mod)                      # big models: collapsible groups, search, zoom

Importing this package imports no Graphviz binding and no Jupyter package.
"""

from __future__ import annotations

from . import html
from .compare import Comparison, compare
from .dot import to_dot
from .explore import explore
from .graph import Graph, NodeInfo, build_graph
from .hierarchy import Hierarchy, Region, hierarchy
from .html import to_html
from .render import render

__all__ = [
    "Comparison", "Graph", "Hierarchy", "NodeInfo", "Region", "build_graph", "compare",
    "explore", "hierarchy", "html", "render", "to_dot", "to_html",
]  # fmt: skip
