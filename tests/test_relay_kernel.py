"""The Relay kernel: cell headers (plain functions), then a real kernel driven by jupyter_client."""

from __future__ import annotations

import numpy as np
import pytest
from kernel_testing import execute, running_kernel

import relay_nb as relay
from relay_nb.errors import RelayError
from relay_nb.notebook.cells import (
    CellOptionError,
    parse_cell,
    previous_text,
    python_code,
    split_arguments,
)
from relay_nb.notebook.magic import parse_options

# --- the header, as plain functions ------------------------------------------------------------


def test_header_lines_become_magic_options():
    cfg = parse_cell(
        "// passes: FoldConstant, FuseOps\n// run: 3, np.ones((2, 2)), 'a, b'\n// show: graph\n"
        "// exec: jit\n// name: net\n// time\n// step\ndef @main() { 1 }"
    )
    opts = cfg.magic_options()
    assert opts.passes == "FoldConstant,FuseOps"
    assert opts.run == ["3", "np.ones((2, 2))", "'a, b'"]  # commas inside brackets/quotes stay
    assert (opts.show, opts.executor, opts.name, opts.time, opts.step) == ("graph", "jit", "net", True, True)
    # The option line is what a %%relay cell would say.
    assert parse_options(cfg.option_line(run=False)).passes == "FoldConstant,FuseOps"


def test_code_keeps_the_header_so_line_numbers_are_the_cells():
    code = "// run: 1\n\ndef @main(%x: int32) { %x }"
    assert parse_cell(code).code == code


def test_ordinary_comments_are_not_options_and_a_near_miss_warns():
    cfg = parse_cell("// This adds two numbers.\n// note: nothing\n// pases: FoldConstant\nadd(1, 2)")
    assert cfg.options == {}
    assert cfg.warnings == ["line 3: '// pases:' is read as a comment; did you mean '// passes:'?"]


def test_header_stops_at_the_first_code_line():
    cfg = parse_cell("add(1, 2)\n// run: 3")
    assert cfg.options == {}


def test_flags_accept_no_to_switch_off():
    assert parse_cell("// time: no\n1").options == {}
    assert parse_cell("// time: yes\n1").options == {"time": True}


@pytest.mark.parametrize(
    "code, message, column",
    [
        ("// show: grap\n1", "unknown view 'grap'", 10),
        ("// exec: gpu\n1", "unknown executor 'gpu'", 10),
        ("// name: 3x\n1", "must be a Python identifier", 10),
        ("// passes:\n1", "needs a value", 11),
        ("// passes: A,,B\n1", "empty pass name", 12),
        ("// run: 1,,2\n1", "empty argument", 9),
        ("// time: maybe\n1", "is a flag", 10),
    ],
)
def test_bad_header_values_are_located_errors(code, message, column):
    with pytest.raises(CellOptionError, match=message) as exc:
        parse_cell(code)
    assert exc.value.line == 1 and exc.value.column == column
    assert "^" in str(exc.value)


def test_split_arguments():
    assert split_arguments("") == []
    assert split_arguments("x") == ["x"]
    assert split_arguments('f(1, 2), [3, 4], {"k": 5}, "x,y"') == ["f(1, 2)", "[3, 4]", '{"k": 5}', '"x,y"']


def test_previous_program_marker():
    assert parse_cell("_").is_previous
    assert parse_cell("// passes: FoldConstant\n  _  // the last one\n").is_previous
    assert not parse_cell("_x").is_previous and not parse_cell("fn (%_) { 1 }").is_previous
    with pytest.raises(RelayError, match="no cell has produced one yet"):
        previous_text(None)


def test_python_cells_keep_line_numbers():
    cfg = parse_cell("// python\nx = 1\n// not a header any more")
    assert cfg.is_python
    assert python_code(cfg) == "# python\nx = 1\n// not a header any more"


# --- a real kernel -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def kernel(tmp_path_factory):
    from relay_nb.kernelspec import install

    prefix = tmp_path_factory.mktemp("relay-kernel")
    install(["relay"], prefix=str(prefix))
    with running_kernel("relay", prefix) as kc:
        yield kc


def test_kernel_info_names_the_relay_language(kernel):
    info = kernel.kernel_info(reply=True)["content"]
    assert info["language_info"]["name"] == "relay"
    assert info["implementation"] == "relay_nb"
    assert "// passes:" in info["banner"]


def test_run_header_evaluates_main(kernel):
    cell = execute(kernel, "// run: 3, 4\ndef @main(%x: int32, %y: int32) { %x * %y + 1 }")
    assert cell.status == "ok", cell.error
    text, value = cell.data()
    assert "def @main(%x: int32" in text and "multiply" in text
    assert value == str(3 * 4 + 1)


def test_run_arguments_are_python_expressions(kernel):
    cell = execute(kernel, "// run: np.arange(4, dtype='float32'), 2.5\nfn (%v: Tensor[(4), float32], %s: float32) { %v * %s }")
    assert cell.status == "ok", cell.error
    got = execute(kernel, "// python\nprint(mod_result.tolist())").stdout
    assert got.strip() == str((np.arange(4, dtype="float32") * 2.5).tolist())


def test_parse_error_shows_line_and_caret_without_traceback(kernel):
    cell = execute(kernel, "// a comment\ndef @main(%x: int32) {\n  add(%x, %y)\n}")
    assert cell.status == "error"
    report = cell.error
    assert report.splitlines()[0] == "parse error: undefined variable %y"
    assert "--> cell:3:11" in report
    assert " 3 |   add(%x, %y)" in report
    assert report.splitlines()[-1].endswith("^^")
    assert "Traceback" not in report and "File " not in report


def test_type_error_is_located(kernel):
    cell = execute(kernel, "def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(4, 3), float32]) {\n  add(%x, %y)\n}")
    assert cell.status == "error"
    assert "shapes (2, 3) and (4, 3) do not broadcast" in cell.error and "cell:2:3" in cell.error


def test_bad_header_is_located(kernel):
    cell = execute(kernel, "// show: grpah\n1")
    assert cell.status == "error"
    assert "unknown view 'grpah'" in cell.error and "cell:1:10" in cell.error


def test_near_miss_header_warns_on_stderr(kernel):
    cell = execute(kernel, "// rnu: 1\nadd(1, 2)")
    assert cell.status == "ok" and "did you mean '// run:'" in cell.stderr


def test_underscore_is_the_previous_program(kernel):
    first = execute(kernel, "def @main(%x: int32) { add(%x, multiply(2, 3)) }")
    assert first.status == "ok", first.error
    again = execute(kernel, "_")
    assert again.status == "ok" and again.data() == first.data()
    folded = execute(kernel, "// passes: FoldConstant\n_")
    assert folded.status == "ok", folded.error
    assert "multiply" not in folded.data()[0] and "add(%x, 6" in folded.data()[0]
    # `_` is now the folded program: running it needs no passes.
    run = execute(kernel, "// run: 10\n_")
    assert run.data()[-1] == "16"
    # A failed cell does not change `_`.
    assert execute(kernel, "add(").status == "error"
    assert execute(kernel, "// run: 1\n_").data()[-1] == "7"


def test_underscore_before_any_program_is_an_error(tmp_path):
    from relay_nb.kernelspec import install

    install(["relay"], prefix=str(tmp_path))
    with running_kernel("relay", tmp_path) as kc:
        cell = execute(kc, "_")
        assert cell.status == "error" and "no cell has produced one yet" in cell.error


def test_comment_only_cells(kernel):
    assert execute(kernel, "fn (%q: int32) { %q }").status == "ok"
    quiet = execute(kernel, "// just a note\n/* and another */")
    assert quiet.status == "ok" and quiet.data() == []
    options_only = execute(kernel, "// passes: FoldConstant\n// a note")
    assert options_only.status == "error" and "write `_`" in options_only.error
    assert "%q" in execute(kernel, "_").data()[0]  # `_` did not change


def test_name_stores_the_module_in_the_python_namespace(kernel):
    cell = execute(kernel, "// name: net\n// run: 5\nfn (%n: int32) { %n * %n }")
    assert cell.status == "ok", cell.error
    py = execute(kernel, "// python\nprint(type(net).__name__, int(net_result))\nprint(net['main'].checked_type)")
    assert py.status == "ok", py.error
    assert py.stdout.splitlines() == ["IRModule 25", "fn (int32) -> int32"]


def test_show_anf_and_types(kernel):
    anf = execute(kernel, "// show: anf\nfn (%x: float32) { %1 = log(%x); add(%1, %1) }")
    assert anf.status == "ok" and "let %" in anf.data()[0] and "log(%x)" in anf.data()[0]
    types = execute(kernel, "// show: types\ndef @f(%x: float32) { %x }")
    assert types.data()[0].startswith("@f : fn (float32) -> float32")


def test_show_graph_draws_the_dag(kernel):
    cell = execute(kernel, "// show: graph\nfn (%x: float32) { %1 = log(%x); add(%1, %1) }")
    assert cell.status == "ok", cell.error
    # An SVG (inside the graph widget's HTML fallback, or as an image).
    drawings = cell.data("image/svg+xml") + [h for h in cell.data("text/html") if "<svg" in h]
    assert drawings and "<svg" in drawings[0]
    assert ">log<" in drawings[0] or "log" in drawings[0]


def test_exec_jit_gives_the_interpreters_value(kernel):
    text = "def @main(%x: Tensor[(3), float32]) { exp(%x) * 2f }"
    assert execute(kernel, f"// name: by_interp\n// run: np.arange(3, dtype='float32')\n{text}").status == "ok"
    jit = execute(kernel, f"// name: by_jit\n// exec: jit\n// run: np.arange(3, dtype='float32')\n{text}")
    assert jit.status == "ok", jit.error
    got = execute(kernel, "// python\nprint(by_jit_result.tolist(), by_interp_result.tolist())").stdout.split("] [")
    jit_values = [float(v) for v in got[0].strip("[] \n").split(",")]
    interp_values = [float(v) for v in got[1].strip("[] \n").split(",")]
    want = (np.exp(np.arange(3, dtype="float32")) * 2).tolist()
    assert np.allclose(jit_values, want, rtol=1e-6) and np.allclose(interp_values, want, rtol=1e-6)


def test_python_cell_runs_python_and_widgets_display(kernel):
    cell = execute(kernel, "// python\nimport ipywidgets\nipywidgets.IntSlider(value=3)")
    assert cell.status == "ok", cell.error
    assert cell.data("application/vnd.jupyter.widget-view+json")


def test_completion_of_ops_attributes_globals_and_passes(kernel):
    def complete(code, pos=None):
        return kernel.complete(code, len(code) if pos is None else pos, reply=True)["content"]

    c = complete("nn.soft")
    assert c["matches"] == ["nn.softmax"] and (c["cursor_start"], c["cursor_end"]) == (0, 7)
    assert complete("nn.softmax(%x, ax")["matches"] == ["axis="]
    assert execute(kernel, "def @kernel_global(%x: int32) { %x }").status == "ok"
    assert "@kernel_global" in complete("@kernel_g")["matches"]
    assert complete("// passes: FoldC")["matches"] == ["FoldConstant"]
    assert "numpy" in complete("// python\nimport nump")["matches"]


def test_inspection_shows_op_docs_and_global_types(kernel):
    reply = kernel.inspect("nn.softmax(%x)", 3, reply=True)["content"]
    assert reply["found"]
    text = reply["data"]["text/plain"]
    assert text.startswith("nn.softmax(data, axis=-1)")
    assert relay.op.get_column("doc")["nn.softmax"] in text and "Type relation: Softmax" in text
    assert execute(kernel, "def @typed_global(%x: float32) -> float32 { %x }").status == "ok"
    glob = kernel.inspect("@typed_global(1f)", 3, reply=True)["content"]
    assert glob["data"]["text/plain"] == "@typed_global: fn (float32) -> float32\n"
    assert kernel.inspect("%nothing", 2, reply=True)["content"]["found"] is False
