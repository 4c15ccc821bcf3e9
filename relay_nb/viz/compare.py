"""The DAG and the A-normal form of one program, side by side (seed 004's two pictures).

Both drawings colour a node by what it computes (its operator), so ``log`` is the same
colour in both; a binding of the ANF view is coloured like the DAG node it replaces.
The HTML is static (two inline SVGs, captions, a colour legend; no ``<script>``), so it
shows in JupyterLab, in nbconvert's HTML export and on GitHub alike.
"""

from __future__ import annotations

import html
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any, Optional

from .graph import Graph, build_graph
from .render import strip_prolog, svg_or_error_html

DAG_CAPTION = (
    "<b>Dataflow graph (DAG)</b>: every node is drawn once. A node used twice "
    "(double border) is one computation with two out-edges. The graph does not say "
    "<i>where</i> a value is computed: a node is placed in the innermost box that uses it."
)
ANF_CAPTION = (
    "<b>A-normal form</b>: the same program after ToANormalForm. Every value is bound by a "
    "<code>let</code> (<code>%x1 = ...</code>) in a definite scope; nested boxes are scopes "
    "(function bodies, <code>if</code> branches, <code>match</code> clauses). Look for the "
    "same colours on both sides: is each value computed inside or outside the branch or "
    "closure that uses it?"
)


@dataclass
class Comparison:
    """DAG and ANF views of one program; displays as the two SVGs side by side.

    ``dag`` and ``anf`` are the two :class:`~relay_nb.viz.graph.Graph` objects (their
    node ids are prefixed ``dag_`` and ``anf_`` so both fit in one HTML page).
    """

    dag: Graph
    anf: Graph
    _svgs: Optional[tuple] = field(default=None, repr=False)

    def svgs(self) -> tuple[str, str]:
        """The two SVG documents (rendered once, then cached)."""
        from .render import render_dot

        return render_dot(self.dag.dot), render_dot(self.anf.dot)

    def _panels(self) -> tuple[str, str]:
        if self._svgs is None:
            self._svgs = (svg_or_error_html(self.dag.dot), svg_or_error_html(self.anf.dot))
        out = []
        for svg, error in self._svgs:
            if svg is None:
                out.append(error)
            else:
                svg = strip_prolog(svg).replace(
                    "<svg ", '<svg style="max-width:100%;height:auto" ', 1
                )
                out.append(svg)
        return out[0], out[1]

    def legend(self) -> list[tuple[str, str]]:
        """(operator, colour) of every operator drawn, in first-seen order."""
        seen: dict[str, str] = {}
        for info in self.dag.nodes.values():
            if info.kind == "call" and info.expr is not None:
                name = getattr(info.expr.op, "name", None)
                if name is not None and name not in seen:
                    seen[name] = info.fill
        return list(seen.items())

    def _repr_html_(self) -> str:
        dag, anf = self._panels()
        chips = "".join(
            f'<span style="display:inline-block;margin:2px 6px 2px 0;padding:0 6px;'
            f'border:1px solid #888;border-radius:3px;background:{color};color:#000">'
            f"{html.escape(name)}</span>"
            for name, color in self.legend()
        )
        figure = (
            '<figure style="margin:0;flex:1 1 340px;min-width:0;overflow:auto">'
            '<figcaption style="font-size:90%;margin-bottom:6px">{}</figcaption>{}</figure>'
        )
        return (
            '<div class="relay-nb-compare">'
            '<div style="display:flex;flex-wrap:wrap;gap:16px;align-items:flex-start">'
            + figure.format(DAG_CAPTION, dag)
            + figure.format(ANF_CAPTION, anf)
            + "</div>"
            + (f'<div style="font-size:85%;margin-top:6px">Operators: {chips}</div>' if chips else "")
            + "</div>"
        )

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict:
        return {"text/plain": self._plain(), "text/html": self._repr_html_()}

    def _plain(self) -> str:
        return (
            "Dataflow (graph form):\n" + _body(self.dag.text)
            + "\n\nA-normal form:\n" + _body(self.anf.text)
        )  # fmt: skip

    def __repr__(self) -> str:
        return f"<relay_nb.viz.Comparison: DAG {len(self.dag.nodes)} nodes, ANF {len(self.anf.nodes)} nodes>"


def _body(text: str) -> str:
    return text.split("\n", 1)[1] if text.startswith("#[version") else text


def compare(
    obj: Any,
    highlight: Collection = (),
    show_types: bool = True,
    max_nodes: int = 2000,
) -> Comparison:
    """DAG and ANF views of ``obj``, displayed side by side in a notebook.

    Parameters
    ----------
    obj
        An IRModule or a Relay expression.
    highlight, show_types, max_nodes
        As for :func:`relay_nb.viz.build_graph`, applied to both views.

    Examples
    --------
    >>> mod = relay.parse('def @main(%x: Tensor[(2, 3), float32]) { %1 = log(%x); add(%1, %1) }')
    >>> c = relay.viz.compare(mod)          # in a notebook, the value displays as two SVGs
    >>> "<svg" in c._repr_html_()
    True
    """
    dag = build_graph(obj, "dag", highlight, show_types, max_nodes, id_prefix="dag_")
    anf = build_graph(obj, "anf", highlight, show_types, max_nodes, id_prefix="anf_")
    return Comparison(dag, anf)


__all__ = ["Comparison", "compare"]
