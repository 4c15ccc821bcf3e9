"""The %%relay / %relay magics through IPython's InteractiveShell, and run_relay_cell."""

from __future__ import annotations

import numpy as np
import pytest
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output

import relay_nb as relay
from relay_nb.errors import ParseError, RelayError
from relay_nb.ir.expr import Op
from relay_nb.notebook.magic import expand_variables, parse_options, run_relay_cell
from relay_nb.transform import function_pass

class _AddToSubtract(relay.ExprMutator):
    def visit_call(self, call):
        new = super().visit_call(call)
        if isinstance(new.op, Op) and new.op.name == "add":
            return relay.subtract(*new.args)
        return new


@function_pass(opt_level=0, name="AddToSubtract")
def add_to_subtract(func, mod, ctx):
    return _AddToSubtract().visit(func)


@pytest.fixture
def shell():
    sh = InteractiveShell.instance()
    sh.reset(new_session=False)
    sh.run_line_magic("load_ext", "relay_nb")
    yield sh
    sh.reset(new_session=False)


def run(shell, cell):
    """Run a cell; (success, stdout, stderr, [output data dicts])."""
    with capture_output() as cap:
        result = shell.run_cell(cell)
    return result.success, cap.stdout, cap.stderr, [o.data for o in cap.outputs]


PROGRAM = """%%relay
def @main(%x: Tensor[(2, 3), float32]) {
  %0 = multiply(%x, 1f);
  add(%0, add(2f, 3f))
}
"""


# --- storing and displaying ------------------------------------------------------------------


def test_load_ext_and_cell_stores_a_typed_module(shell):
    ok, out, err, outputs = run(shell, PROGRAM)
    assert ok, out + err
    mod = shell.user_ns["mod"]
    assert isinstance(mod, relay.IRModule)
    assert relay.ir.ty.TensorType((2, 3), "float32") == mod["main"].checked_type.ret_type
    assert (
        len(outputs) == 1 and "def @main(%x: Tensor[(2, 3), float32])" in outputs[0]["text/plain"]
    )
    assert "/* ty=" not in outputs[0]["text/plain"]


def test_name_option_and_bare_expression(shell):
    ok, *_ = run(shell, "%%relay -n net\nfn (%a: int32, %b: int32) { add(%a, %b) }\n")
    assert ok
    net = shell.user_ns["net"]
    assert [p.name_hint for p in net["main"].params] == ["a", "b"] and "mod" not in shell.user_ns
    ok, *_ = run(shell, "%%relay --name e --show none\nlog(2f)\n")
    assert ok and shell.user_ns["e"]["main"].params == ()


def test_bad_name_is_rejected(shell):
    ok, out, *_ = run(shell, "%%relay -n 1abc\n1\n")
    assert not ok and "--name must be a Python identifier" in out


@pytest.mark.parametrize(
    "show, needle",
    [
        ("text", "add(%0, 5f)"),
        ("anf", "let %"),
        ("types", "@main : fn (Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32]"),
    ],
)
def test_show_text_forms(shell, show, needle):
    ok, out, err, outputs = run(
        shell, PROGRAM.replace("%%relay", f"%%relay --passes FoldConstant --show {show}")
    )
    assert ok, out + err
    assert needle in outputs[0]["text/plain"]
    assert "<pre" in outputs[0]["text/html"][:60]  # highlighted text, not a drawing


def test_show_none_displays_nothing(shell):
    ok, _, _, outputs = run(shell, PROGRAM.replace("%%relay", "%%relay --show none"))
    assert ok and outputs == []


def test_show_graph_is_the_interactive_inspector(shell):
    ok, out, err, outputs = run(shell, PROGRAM.replace("%%relay", "%%relay --show graph"))
    assert ok, out + err
    data = outputs[0]
    assert "application/vnd.jupyter.widget-view+json" in data and data["text/html"].startswith(
        "<svg"
    )
    assert ">multiply<" in data["text/html"]


def test_show_dag_vs_anf(shell):
    ok, out, err, outputs = run(shell, PROGRAM.replace("%%relay", "%%relay --show dag-vs-anf"))
    assert ok, out + err
    shown = "".join(v for v in outputs[0].values() if isinstance(v, str))
    assert shown.count("<svg") >= 2  # DAG and ANF side by side


def test_show_llvm_shows_kernels(shell):
    ok, out, err, outputs = run(shell, PROGRAM.replace("%%relay", "%%relay --show llvm"))
    assert ok, out + err
    assert "define" in outputs[0]["text/plain"]


# --- passes ---------------------------------------------------------------------------------------


def test_passes_list_runs_and_stores_the_result(shell):
    ok, out, err, _ = run(
        shell, PROGRAM.replace("%%relay", "%%relay --passes SimplifyExpr,FoldConstant")
    )
    assert ok, out + err
    expected = relay.parse("def @main(%x: Tensor[(2, 3), float32]) { add(%x, 5f) }")
    assert relay.structural_equal(shell.user_ns["mod"], expected)


def test_passes_opt_level(shell):
    ok, out, err, _ = run(shell, PROGRAM.replace("%%relay", "%%relay --passes O3 --show none"))
    assert ok, out + err
    source = relay.parse(PROGRAM.split("\n", 1)[1])
    expected = relay.optimize(relay.transform.InferType()(source), opt_level=3)
    assert relay.structural_equal(shell.user_ns["mod"], expected)
    assert "Primitive" in shell.user_ns["mod"].astext()


def test_user_pass_from_the_namespace(shell):
    shell.user_ns["bad"] = add_to_subtract
    ok, out, err, _ = run(
        shell, PROGRAM.replace("%%relay", "%%relay --passes FoldConstant,bad --show none")
    )
    assert ok, out + err
    assert "subtract(%0, 5f)" in shell.user_ns["mod"].astext(show_types=False)


def test_unknown_pass_is_a_clear_error(shell):
    ok, out, *_ = run(shell, PROGRAM.replace("%%relay", "%%relay --passes FoldConstnat"))
    assert not ok and "unknown pass FoldConstnat; did you mean FoldConstant?" in out
    assert "Traceback" not in out


# --- --run / --exec ---------------------------------------------------------------------------------


def test_run_with_namespace_and_literal_arguments(shell):
    x = np.arange(3, dtype="float32")
    shell.user_ns["x"] = x
    cell = "%%relay -n scale --run x 3\ndef @main(%x: Tensor[(3), float32], %k: float32) { multiply(%x, %k) }\n"
    ok, out, err, outputs = run(shell, cell)
    assert ok, out + err
    np.testing.assert_allclose(shell.user_ns["scale_result"], x * 3)
    assert outputs[-1]["text/plain"] == "[0., 3., 6.]"


def test_run_after_passes_computes_the_same(shell):
    x = np.ones((2, 3), "float32")
    shell.user_ns["x"] = x
    ok, out, err, _ = run(shell, PROGRAM.replace("%%relay", "%%relay --passes O3 --run x"))
    assert ok, out + err
    np.testing.assert_allclose(shell.user_ns["mod_result"], x * 1 + 5)


def test_run_errors_are_readable(shell):
    ok, out, *_ = run(shell, PROGRAM.replace("%%relay", "%%relay --run nope"))
    assert not ok and "--run argument 'nope': NameError" in out and "Traceback" not in out
    shell.user_ns["x"] = np.ones(4, "float32")
    ok, out, *_ = run(shell, PROGRAM.replace("%%relay", "%%relay --run x"))
    assert not ok and "expects shape (2, 3), got (4,)" in out


def test_exec_jit_agrees_with_the_interpreter(shell):
    x = np.random.default_rng(0).normal(size=(2, 3)).astype("float32")
    shell.user_ns["x"] = x
    ok, out, err, _ = run(shell, PROGRAM.replace("%%relay", "%%relay --run x --exec jit"))
    assert ok, out + err
    np.testing.assert_allclose(shell.user_ns["mod_result"], x + 5, rtol=1e-6)


def test_time_reports_each_phase(shell):
    shell.user_ns["x"] = np.ones((2, 3), "float32")
    ok, out, err, outputs = run(
        shell, PROGRAM.replace("%%relay", "%%relay --passes FoldConstant --run x --time")
    )
    assert ok, out + err
    report = outputs[-1]["text/plain"]
    assert "\nparse:" in "\n" + report and "\ntype check:" in report and "passes FoldConstant:" in report
    assert "parse + type check" not in report  # the parts, each on its own line
    assert "run (interpreter):" in report and "pass timing:" in report and "FoldConstant:" in report


def test_time_reports_the_first_use_cost_apart_from_the_cells_own_parse():
    """The first cell of a kernel also builds the parser's tables and loads the ops and
    passes: --time shows that on its own line, once, so "parse" is the cell's own."""
    import subprocess
    import sys

    code = (
        "from relay_nb.notebook.magic import run_relay_cell\n"
        "for _ in range(2):\n"
        "    out = run_relay_cell('def @main(%x: float32) { add(%x, %x) }', '--time --show none', {})\n"
        "    print(sorted(out.timings))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    first, second = done.stdout.splitlines()
    assert first == repr(sorted(["first use: parser tables, ops, passes (once per kernel)", "parse", "type check"]))
    assert second == repr(["parse", "type check"])


def test_time_reports_the_expansion_when_there_is_one(shell):
    shell.user_ns["n"] = 3
    ok, out, err, outputs = run(shell, "%%relay --time --show none\ndef @main(%x: Tensor[({n}), float32]) { %x }\n")
    assert ok, out + err
    assert "expand {...}:" in outputs[-1]["text/plain"]


# --- --step ----------------------------------------------------------------------------------------


def test_step_opens_the_stepper_with_the_pipeline(shell):
    shell.user_ns["bad"] = add_to_subtract
    cell = PROGRAM.replace(
        "%%relay", "%%relay --passes FoldConstant,bad --step --exec interpreter --show none"
    )
    ok, out, err, outputs = run(shell, cell)
    assert ok, out + err
    stepper = shell.user_ns["mod_stepper"]
    assert stepper.trace.flagged.name == "AddToSubtract"
    assert stepper.trace.mod is not shell.user_ns["mod"]  # the stepper starts from the source
    assert (
        outputs[-1]["application/vnd.jupyter.widget-view+json"]["model_id"]
        == stepper.widget.model_id
    )


def test_step_defaults_to_o3_and_uses_run_inputs(shell):
    x = np.full((2, 3), 2.0, "float32")
    shell.user_ns["x"] = x
    ok, out, err, _ = run(
        shell, PROGRAM.replace("%%relay", "%%relay --step --run x --exec interpreter --show none")
    )
    assert ok, out + err
    trace = shell.user_ns["mod_stepper"].trace
    assert trace.pipeline.label == "O3" and trace.flagged is None
    np.testing.assert_allclose(trace.reference["interpreter"], x + 5)


# --- errors ----------------------------------------------------------------------------------------


def test_unknown_option_is_rejected(shell):
    ok, out, err, _ = run(shell, "%%relay --bogus 1\nadd(1, 2)\n")
    assert not ok
    assert "unrecognized arguments: --bogus 1" in out and "%%relay?" in out
    assert "Traceback" not in out + err and "mod" not in shell.user_ns


def test_bad_choice_is_rejected(shell):
    ok, out, *_ = run(shell, "%%relay --show pretty\n1\n")
    assert not ok and "invalid choice: 'pretty'" in out


def test_help_lists_the_options(shell):
    ok, out, *_ = run(shell, "%%relay?")
    for option in (
        "--name",
        "--passes",
        "--show",
        "--run",
        "--exec",
        "--step",
        "--time",
        "--no-expand",
    ):
        assert option in out
    assert "{name}" in out


def _caret_column(out: str) -> int:
    caret_line = next(
        line for line in out.splitlines() if line.strip().startswith("|") and "^" in line
    )
    return caret_line.index("^") - caret_line.index("|") - 1


def test_parse_error_points_at_the_cell_line_and_column(shell):
    cell = "%%relay\ndef @main(%x: Tensor[(2), float32]) {\n  add(%x, %y)\n}\n"
    ok, out, err, outputs = run(shell, cell)
    assert not ok and outputs == []
    assert "Traceback" not in out + err and 'File "' not in out
    assert "parse error: undefined variable %y" in out
    assert "--> cell:3:11" in out  # line 1 is %%relay, %y is in column 11 of line 3
    assert " 3 |   add(%x, %y)" in out
    assert _caret_column(out) == len(" ") + 10  # under column 11
    assert "mod" not in shell.user_ns


def test_type_error_points_at_the_cell(shell):
    cell = (
        "%%relay --show none\n"
        "def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(4, 3), float32]) {\n"
        "  %0 = log(%x);\n"
        "  add(%0, %y)\n"
        "}\n"
    )
    ok, out, *_ = run(shell, cell)
    assert not ok
    assert "type error: add: shapes (2, 3) and (4, 3) do not broadcast" in out
    assert "--> cell:4:3" in out and " 4 |   add(%0, %y)" in out and "^^^^^^^^^^^" in out


def test_error_location_after_expansion_is_in_the_text_written(shell):
    shell.user_ns["shape"] = (2, 3)
    line = "def @main(%x: Tensor[{shape}, float32]) { add(%x, %y) }"
    ok, out, *_ = run(shell, f"%%relay\n{line}\n")
    assert not ok
    column = line.index("%y") + 1
    assert f"--> cell:2:{column}" in out
    assert f" 2 | {line}" in out  # the line as written, {shape} and all
    assert _caret_column(out) == 1 + column - 1


def test_error_line_magic(shell):
    ok, out, *_ = run(shell, "%relay add(1, \n")
    assert not ok and "parse error" in out and "--> cell:1:" in out and "Traceback" not in out


# --- {var} expansion -----------------------------------------------------------------------------


def test_expansion_of_variables_and_expressions(shell):
    shell.user_ns.update(shape=(2, 3), dtype="float16", n=4)
    cell = "%%relay\ndef @main(%x: Tensor[{shape}, {dtype}], %y: Tensor[({n * 2}), int32]) { %x }\n"
    ok, out, err, _ = run(shell, cell)
    assert ok, out + err
    x, y = shell.user_ns["mod"]["main"].params
    assert x.checked_type == relay.TensorType((2, 3), "float16")
    assert y.checked_type == relay.TensorType((8,), "int32")


def test_relay_braces_are_not_expanded(shell):
    shell.user_ns.update(c=True, x=1)
    cell = "%%relay\nfn (%c: bool, %x: int32) {\n  if (%c) {1} else {%x}\n}\n"
    ok, out, err, _ = run(shell, cell)
    assert ok, out + err
    assert "if (%c) {" in shell.user_ns["mod"].astext()
    # { x } with spaces is Relay, even though x is a notebook variable
    assert expand_variables("{ x }", {"x": 1})[0] == "{ x }"
    assert expand_variables("{True}", {})[0] == "{True}"


def test_no_expand_turns_it_off(shell):
    shell.user_ns["shape"] = (2, 3)
    cell = "%%relay --no-expand\ndef @main(%x: Tensor[{shape}, float32]) { %x }\n"
    ok, out, *_ = run(shell, cell)
    assert not ok and "parse error" in out and "--> cell:2:22" in out


def test_expansion_failure_is_located(shell):
    shell.user_ns["shape"] = (2, 3)
    ok, out, *_ = run(shell, "%%relay\n\ndef @main(%x: Tensor[{shape[5]}, float32]) { %x }\n")
    assert not ok
    assert "cannot expand {shape[5]}: IndexError" in out and "--> cell:3:22" in out


class _Unprintable:
    def __str__(self):
        raise ValueError("no text for this one")


def test_expansion_of_a_value_whose_str_raises_is_located(shell):
    shell.user_ns["shape"] = _Unprintable()
    ok, out, err, _ = run(shell, "%%relay\ndef @main(%x: Tensor[{shape}, float32]) { %x }\n")
    assert not ok and "Traceback" not in out + err
    assert "cannot expand {shape}: ValueError: no text for this one" in out and "--> cell:2:22" in out


def test_cell_errors_are_relay_errors_to_code_running_the_magic(shell):
    with pytest.raises(RelayError) as caught:
        shell.run_cell_magic("relay", "", "def @main(%x: Tensor[(2), float32]) {\n  add(%x, %y)\n}\n")
    assert isinstance(caught.value.error, ParseError)  # the original error is kept
    assert "undefined variable %y" in str(caught.value) and caught.value.line == caught.value.error.line


# --- line magic ------------------------------------------------------------------------------------


def test_line_magic_returns_the_module(shell):
    ok, out, err, _ = run(shell, "m = %relay add(1, 2)")
    assert ok, out + err
    m = shell.user_ns["m"]
    assert isinstance(m, relay.IRModule) and "mod" not in shell.user_ns
    assert m["main"].checked_type.ret_type == relay.TensorType((), "int32")


def test_line_magic_keeps_relay_braces(shell):
    # IPython would expand {1} in a line magic's line: ours does not let it
    ok, out, err, _ = run(shell, "v = %relay --run -- if (True) {1} else {2}")
    assert ok, out + err
    assert int(shell.user_ns["v"]) == 1
    shell.user_ns["k"] = 5
    ok, out, err, _ = run(shell, "v = %relay --run -- multiply({k}, 2)")
    assert ok, out + err
    assert int(shell.user_ns["v"]) == 10


def test_line_magic_run_shows_the_value_once(shell):
    with capture_output() as cap:
        result = shell.run_cell("%relay --run -- add(1, 2)")
    assert result.success and int(result.result) == 3  # IPython's Out[n]
    assert [o.data for o in cap.outputs] == []  # and no second copy displayed by the magic
    ok, out, err, outputs = run(shell, "%%relay --run --show none\nadd(1, 2)\n")
    assert ok and [o["text/plain"] for o in outputs] == ["3"]  # the cell magic still shows it


def test_line_magic_run_and_name(shell):
    ok, out, err, _ = run(shell, "v = %relay -n one --run -- multiply(3f, 2f)")
    assert ok, out + err
    assert float(shell.user_ns["v"]) == 6.0 and float(shell.user_ns["one_result"]) == 6.0
    assert isinstance(shell.user_ns["one"], relay.IRModule)
    ok, out, *_ = run(shell, "%relay --run add(1, 2)")
    assert not ok and "put -- between the options and the expression" in out


# --- the plain function (what a Relay kernel calls) ---------------------------------------------------


def test_run_relay_cell_without_ipython_display():
    ns = {"k": 3}
    outcome = run_relay_cell(
        "fn (%x: Tensor[({k}), float32]) { add(%x, %x) }",
        "--run np.ones(3,'float32')",
        {**ns, "np": np},
    )
    np.testing.assert_allclose(outcome.result, [2, 2, 2])
    assert outcome.mod is outcome.source_mod and outcome.name == "mod"
    with pytest.raises(ParseError) as info:
        run_relay_cell("fn (%x) {\n  %z\n}", "", {}, line_offset=0)
    assert info.value.line == 2 and "--> cell:2:3" in info.value.render()


def test_parse_options_errors_are_relay_errors():
    assert parse_options("--passes O2 --run a b").run == ["a", "b"]
    assert parse_options("").run is None and parse_options("--run").run == []
    with pytest.raises(RelayError, match="unrecognized arguments"):
        parse_options("--nope")


def test_import_relay_nb_loads_no_jupyter_package():
    import subprocess
    import sys

    code = "import relay_nb, sys; relay_nb.notebook.trace_passes; print(sorted(m for m in ('IPython', 'ipywidgets', 'anywidget') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_every_lazy_name_of_the_notebook_package_resolves():
    import relay_nb.notebook as nb

    for name in nb.__all__:
        assert getattr(nb, name) is not None, name
    assert relay.notebook.trace_passes is nb.trace_passes
