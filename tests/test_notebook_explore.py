"""``%%relay --show explore``: the graph explorer from a cell (issue 15 §3)."""

from __future__ import annotations

import pytest
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output

from relay_nb.viz.render import available_engine

pytest.importorskip("anywidget")

PROGRAM = """%%relay --show explore
def @main(%x: Tensor[(2, 3), float32], %fc1_weight: Tensor[(4, 3), float32]) {
  %0 = nn.dense(%x, %fc1_weight);
  nn.relu(%0)
}
"""


@pytest.fixture
def shell():
    sh = InteractiveShell.instance()
    sh.reset(new_session=False)
    sh.run_line_magic("load_ext", "relay_nb")
    yield sh
    sh.reset(new_session=False)


@pytest.mark.skipif(available_engine() is None, reason="no Graphviz renderer")
def test_show_explore_is_the_graph_explorer_with_a_static_picture(shell):
    with capture_output() as cap:
        result = shell.run_cell(PROGRAM)
    assert result.success, cap.stdout + cap.stderr
    (data,) = [o.data for o in cap.outputs]
    assert "application/vnd.jupyter.widget-view+json" in data
    assert "<svg" in data["text/html"] and 'id="/@main/fc1"' in data["text/html"]
    assert "mod" in shell.user_ns


def test_explorer_rows_leave_out_what_the_front_end_reads_as_the_same():
    """A one-line node sends end_line 0 (the front end reads ``end || line``) and a row
    stops before a 0 highlighted flag; GraphExplorer.nodes reads them back in full."""
    import relay_nb as relay

    mod = relay.parse(
        """
        def @main(%c: bool, %x: Tensor[(2), float32]) {
          %0 = log(%x);
          %1 = if (%c) { exp(%0) } else { %0 };
          add(%1, %1)
        }"""
    )
    hot = mod["main"].body.args[0].cond  # highlight %c
    view = relay.viz.explore(mod, highlight=[hot])
    rows = {r[0]: r for r in view.data["nodes"]}
    nodes = view.nodes
    assert sum(n["highlighted"] for n in nodes.values()) == 1
    for node_id, n in nodes.items():
        row = rows[node_id]
        assert len(row) == (12 if n["highlighted"] else 11)
        if n["line"]:
            one_line = n["end_line"] == n["line"]
            assert n["end_line"] >= n["line"] and row[7] == (0 if one_line else n["end_line"])
    spans = {n["label"]: (n["line"], n["end_line"]) for n in nodes.values()}
    assert spans["if"] == (3, 8) and spans["log"] == (4, 4) and spans["%c"] == (2, 2)
    assert spans["def @main(%c, %x)"] == (2, 10)


def test_the_widget_sends_its_data_compressed_in_one_binary_buffer():
    """The comm message (and a notebook that saves widget state) carries ``payload``, the
    data as zlib-compressed JSON, not the data dict: a model of thousands of nodes sends a
    fraction of its JSON, and a change to ``data`` from Python is sent again."""
    import base64
    import json
    import zlib

    import relay_nb as relay
    from ipywidgets.widgets.widget import _remove_buffers

    x = y = relay.var("x", shape=(4, 8))
    for i in range(300):
        w = relay.var(f"h.{i}.fc.weight", shape=(8, 8))
        y = relay.add(y, relay.tanh(relay.nn.dense(y, w)))
    mod = relay.transform.InferType()(relay.IRModule.from_expr(relay.Function(relay.analysis.free_vars(y), y)))
    view = relay.viz.explore(mod)
    state, _paths, buffers = _remove_buffers(view.get_state())
    assert "data" not in state and [bytes(b) for b in buffers] == [view.payload]
    assert json.loads(zlib.decompress(view.payload)) == view.data
    assert len(view.data["nodes"]) > 1000
    raw = len(json.dumps(view.data, separators=(",", ":")))
    saved = len(base64.b64encode(view.payload))  # a notebook stores buffers as base64
    assert saved * 3 < raw, (saved, raw)

    view.data = {**view.data, "expanded": []}
    assert json.loads(zlib.decompress(view.payload))["expanded"] == []
