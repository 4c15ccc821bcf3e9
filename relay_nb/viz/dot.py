"""DOT source of a program's graph view (the text the tests compare; no Graphviz needed)."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from .graph import build_graph


def to_dot(
    obj: Any,
    mode: str = "dag",
    highlight: Collection = (),
    show_types: bool = True,
    max_nodes: int = 2000,
) -> str:
    """The DOT source of ``obj``'s graph view (``build_graph(...).dot``).

    Parameters
    ----------
    obj
        An IRModule or a Relay expression.
    mode
        ``"dag"``: the dataflow graph, each node once, shared nodes marked;
        ``"anf"``: the A-normal form, one node per binding, scopes as nested clusters.
    highlight, show_types, max_nodes
        As for :func:`relay_nb.viz.build_graph`.

    Examples
    --------
    >>> mod = relay.parse('def @main(%x: Tensor[(2, 3), float32]) { %1 = log(%x); add(%1, %1) }')
    >>> dot = relay.viz.to_dot(mod, mode="dag")
    >>> 'label="log' in dot
    True
    """
    return build_graph(obj, mode, highlight, show_types, max_nodes).dot


__all__ = ["to_dot"]
