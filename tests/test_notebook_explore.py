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
