"""The notebook layer inside a real Jupyter kernel (nbclient): the magic's outputs, the
error report as the kernel sends it, and the widgets as display messages."""

from __future__ import annotations

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"

CELLS = [
    "%load_ext relay_nb\nimport numpy as np\nx = np.arange(6, dtype='float32').reshape(2, 3)\nshape = (2, 3)",
    "%%relay --run x\ndef @main(%x: Tensor[{shape}, float32]) {\n  %0 = log(add(%x, 1f));\n  add(%0, %0)\n}",
    "np.testing.assert_allclose(mod_result, 2 * np.log(x + 1), rtol=1e-6); print('ok')",
    "%%relay --show none\ndef @main(%x: Tensor[(2), float32]) {\n  add(%x, %y)\n}",
    "%%relay --passes FoldConstant --step --show graph\ndef @main(%x: Tensor[(2), float32]) {\n  add(%x, add(1f, 2f))\n}",
]


@pytest.fixture(scope="module")
def executed():
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src) for src in CELLS]
    nb.cells[3].metadata["tags"] = ["raises-exception"]
    client = nbclient.NotebookClient(nb, timeout=120, kernel_name="python3", allow_errors=False)
    client.execute()
    return nb


def test_cell_output_and_namespace(executed):
    shown = [o["data"]["text/plain"] for o in executed.cells[1].outputs if "data" in o]
    text, value = shown
    assert "def @main(%x: Tensor[(2, 3), float32])" in text
    assert value.startswith("[[")
    # The joined stream text: one print() may arrive as several stream messages.
    assert "".join(o["text"] for o in executed.cells[2].outputs if o["output_type"] == "stream") == "ok\n"


def test_error_output_has_cell_location_and_no_python_traceback(executed):
    (out,) = executed.cells[3].outputs
    assert out["output_type"] == "error" and out["ename"] == "RelayCellError"
    tb = "\n".join(out["traceback"])
    assert "undefined variable %y" in tb and "--> cell:3:11" in tb and " 3 |   add(%x, %y)" in tb
    assert "Traceback" not in tb and 'File "' not in tb and "site-packages" not in tb


def test_widgets_are_displayed_as_widget_views(executed):
    outputs = executed.cells[4].outputs
    views = [o for o in outputs if WIDGET_VIEW in o.get("data", {})]
    assert len(views) == 2  # the graph inspector, then the stepper
    inspector = views[0]["data"]
    assert inspector["text/html"].startswith("<svg")  # the static fallback travels with it
    assert "PassStepper" in views[1]["data"]["text/plain"]
    state = executed.metadata.get("widgets", {}).get(
        "application/vnd.jupyter.widget-state+json", {}
    )
    if state:  # nbclient stores widget state when it can: the stepper's buttons are there
        descriptions = [m["state"].get("description") for m in state["state"].values()]
        assert "next ▶" in descriptions
