"""A view of a big model does each piece of work once: the attribute text of a call is
spelled once (the printer's, reused by the node details), and the explorer, which lays
out in the browser, computes no DOT attributes."""

from __future__ import annotations

import relay_nb as relay
import relay_nb.op.registry as registry
import relay_nb.viz.graph as graph_module


def _convs(n: int) -> relay.IRModule:
    x = relay.var("x", shape=(1, 4, 8, 8))
    w = relay.var("w", shape=(4, 4, 3, 3))
    y = x
    for _ in range(n):
        y = relay.nn.relu(relay.nn.conv2d(y, w, padding=(1, 1), channels=4, kernel_size=(3, 3)))
    return relay.transform.InferType()(relay.IRModule.from_expr(relay.Function([x, w], y)))


def test_call_attributes_are_spelled_once_per_view(monkeypatch):
    calls = []
    real = registry.non_default_attrs
    spy = lambda op, a: calls.append(op) or real(op, a)  # noqa: E731
    monkeypatch.setattr(registry, "non_default_attrs", spy)
    mod = _convs(20)
    h = relay.viz.hierarchy(mod)
    convs = [n for n in h.nodes.values() if n.label.startswith("nn.conv2d")]
    assert len(convs) == 20
    # the 20 convs' attributes are equal (each its own Attrs): the printer spells them once
    # for the whole view (was 40: each printed, then spelled again for the details)
    assert calls == [calls[0]] and calls[0].name == "nn.conv2d"
    text = relay.astext(mod, show_meta_data=False)
    for n in convs:
        assert n.attrs_text == "padding=[1, 1, 1, 1], channels=4, kernel_size=[3, 3]"
        assert n.attrs_text in text


def test_explorer_data_computes_no_dot_attributes(monkeypatch):
    drawn = []
    real = graph_module.node_attrs
    spy = lambda *a, **k: drawn.append(1) or real(*a, **k)  # noqa: E731
    monkeypatch.setattr(graph_module, "node_attrs", spy)
    mod = _convs(5)
    h = relay.viz.hierarchy(mod)
    assert drawn == []
    g = relay.viz.build_graph(mod)  # a drawing still has them
    assert len(drawn) == len(g.nodes) and "tooltip=" in g.dot
    assert sorted(n.label for n in h.nodes.values()) == sorted(n.label for n in g.nodes.values())


def test_explorer_build_runs_no_garbage_collection():
    """Grouping and the widget data allocate a few containers per node while the whole
    model stays alive: a collection then rescans the model (0.2 s at RNN-T size)."""
    import gc

    from relay_nb.viz.explore import explore_data

    mod = _convs(1000)
    graph = relay.viz.build_graph(mod, max_nodes=10**9, with_dot=False)
    runs = []

    def count(phase, info):
        if phase == "start":
            runs.append(info["generation"])

    gc.collect()
    gc.callbacks.append(count)
    try:
        data = explore_data(relay.viz.hierarchy(mod, graph=graph))
    finally:
        gc.callbacks.remove(count)
    assert len(data["nodes"]) > 2000
    assert len(runs) <= 2, runs  # the young objects, once as each pause ends (was 17)
