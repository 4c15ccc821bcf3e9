"""How nodes look: shapes and colours per kind, one colour per operator, DOT attributes.

Colours depend only on what a node computes (its kind, its operator's name), never on
where it is drawn, so the same node has the same colour in the DAG and the ANF view and
the two drawings can be compared at a glance.
"""

from __future__ import annotations

import functools
import zlib
from typing import Any, Optional

from ..ir.expr import Call, Function

# Pastel fills, readable with black text, distinct enough side by side.
OP_PALETTE = (
    "#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5", "#c49c94",
    "#f7b6d2", "#dbdb8d", "#9edae5", "#b5cf6b", "#e7ba52", "#d6616b",
)  # fmt: skip

KIND_FILL = {
    "var": "#f2f2f2",
    "constant": "#fff3c4",
    "meta": "#fff3c4",
    "global_var": "#dde8f7",
    "constructor": "#d9f2d9",
    "op": "#eeeeee",
    "tuple": "#e6f2ff",
    "tuple_get": "#e6f2ff",
    "let": "#f7f7f7",
    "function": "#ece4fa",
    "if": "#ffe3cc",
    "match": "#ffe3cc",
    "ref_create": "#fde2e4",
    "ref_read": "#fde2e4",
    "ref_write": "#fde2e4",
    "temp": "#ffffff",
    "more": "#ffffff",
}
CALL_FILL = {"global": "#c9dcf5", "constructor": "#bfe8bf", "closure": "#e3d7f7"}

KIND_SHAPE = {
    "call": "box",
    "var": "ellipse",
    "constant": "note",
    "meta": "note",
    "global_var": "ellipse",
    "constructor": "ellipse",
    "op": "ellipse",
    "tuple": "trapezium",
    "tuple_get": "invtrapezium",
    "let": "hexagon",
    "function": "octagon",
    "if": "diamond",
    "match": "Mdiamond",
    "ref_create": "cylinder",
    "ref_read": "cylinder",
    "ref_write": "cylinder",
    "temp": "box",
    "more": "note",
}

CLUSTER_STYLE = {
    "global": ("rounded,bold", "#5b7fb5", "#f7faff"),
    "function": ("rounded", "#8a6cc7", "#fbf9ff"),
    "then": ("rounded,dashed", "#d9822b", "#fffaf5"),
    "else": ("rounded,dashed", "#d9822b", "#fffaf5"),
    "clause": ("rounded,dashed", "#3c9a5f", "#f7fcf8"),
}

HIGHLIGHT_COLOR = "#d62728"
SHARED_COLOR = "#1f4e9c"
LABEL_WIDTH = 44


@functools.cache  # asked once per drawn call: a model has a few dozen operators
def op_color(name: str) -> str:
    """The fill of calls to operator ``name`` (stable across runs and processes)."""
    return OP_PALETTE[zlib.crc32(name.encode()) % len(OP_PALETTE)]


def clip(text: str, width: int = LABEL_WIDTH) -> str:
    """``text`` on one line, cut to ``width`` characters with an ellipsis."""
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "\u2026"


# -- DOT attributes of drawn nodes and edges -------------------------------------------------

_EDGE_LABEL = {"cond": "cond", "then": "then", "else": "else", "var": "var", "value": "value",
               "data": "data", "callee": "callee", "ref": "ref"}  # fmt: skip


def node_attrs(info: Any, *, anf: bool, show_types: bool, name: Optional[str]) -> dict:
    """The DOT attributes of a drawn node (a :class:`~relay_nb.viz.model.NodeInfo`):
    its label lines are the head, then ``%N: type``, then the shared note."""
    kind = info.kind
    shape = KIND_SHAPE.get(kind, "box")
    style = "filled"
    if kind == "call" or (kind == "let" and anf):
        shape, style = "box", "rounded,filled"
    lines = [info.label]
    second = [name] if name else []
    if show_types and info.type_text:
        second.append(info.type_text)
    if second:
        lines.append(clip(": ".join(second)))
    if info.shared:
        lines.append(f"shared: used {info.uses}\u00d7")
    attrs: dict[str, object] = {"id": info.id, "label": "\n".join(lines), "shape": shape}
    if style != "filled":
        attrs["style"] = style
    attrs["fillcolor"] = info.fill
    if kind in ("global_var", "constructor", "op"):
        attrs["style"] = "filled,dashed"
    if anf and kind == "let":
        attrs["fontname"] = "Courier"  # a binding reads as a line of code
    if info.shared:
        attrs.update(peripheries="2", color=SHARED_COLOR, penwidth="1.5")
    if info.highlighted:
        attrs.update(color=HIGHLIGHT_COLOR, penwidth="3")
    attrs["tooltip"] = tooltip(info)
    return attrs


def tooltip(info: Any) -> str:
    """Hover text: kind and label, type, attributes, line (``(source)``: from a span)."""
    parts = [f"{info.kind}: {info.label}"]
    if info.type_text:
        parts.append("type: " + info.type_text)
    if info.attrs_text:
        parts.append("attrs: " + info.attrs_text)
    if info.line is not None:
        where = f"line {info.line}:{info.column}"
        parts.append(where + (" (source)" if info.line_origin == "span" else ""))
    return "\n".join(parts)


def edge_attrs(eid: str, role: str, index: int, head: Any, *, anf: bool, fast: bool) -> dict:
    """The DOT attributes of an edge; ``role`` is what the tail is to ``head``.

    Argument indices are written only where order matters (a call of two or more
    arguments) and not in the ANF view, whose labels spell the operands out.
    """
    attrs: dict[str, object] = {"id": eid}
    label = ""
    if role == "arg":
        if isinstance(head, Call) and len(head.args) > 1 and not anf:
            label = str(index)
    elif role == "field":
        label = "" if anf else str(index)
    elif role == "body":
        label = "return" if isinstance(head, Function) else ("" if anf else "body")
    elif role == "clause":
        label = f"clause {index}"
    elif role in _EDGE_LABEL:
        label = _EDGE_LABEL[role]
        if anf and role in ("cond", "data", "ref", "value", "callee"):
            label = ""  # the binding's label already names it
    if label and not fast:
        attrs["label"] = label
    if role == "next":
        attrs.update(style="dotted", color="#aaaaaa", arrowhead="none")
    elif role == "calls":
        attrs.update(style="dashed", color="#5b7fb5", constraint="false")
    elif role == "binds":
        attrs.update(style="dashed", color="#3c9a5f")
    elif role == "callee":
        attrs["style"] = "dashed"
    return attrs


__all__ = [
    "KIND_FILL", "KIND_SHAPE", "clip", "edge_attrs", "node_attrs", "op_color", "tooltip",
]  # fmt: skip
