"""``relay-nb check / fmt / demo``: same code paths as the library; located errors."""

from __future__ import annotations

import io
import subprocess
import sys

import relay_nb as relay
from relay_nb.cli import main

GOOD = """#[version = "0.0.5"]
def @main(%x: Tensor[(2, 3), float32]) {
  %1 = log(%x);
  add(%1, %1)
}
"""

BAD_SHAPES = """#[version = "0.0.5"]
def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(4, 3), float32]) {
  add(%x, %y)
}
"""


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def test_check_prints_the_typed_program(tmp_path):
    path = tmp_path / "ok.relay"
    path.write_text(GOOD)
    code, out, err = cli("check", str(path))
    assert code == 0 and err == ""
    assert "%0 = log(%x) /* ty=Tensor[(2, 3), float32] */;" in out
    # The output is itself valid Relay that reads back to the same program.
    assert relay.structural_equal(relay.parse(out), relay.parse(GOOD))


def test_check_reports_a_located_type_error_with_exit_code_1(tmp_path):
    path = tmp_path / "bad.relay"
    path.write_text(BAD_SHAPES)
    code, out, err = cli("check", str(path))
    assert code == 1 and out == ""
    assert "add: shapes (2, 3) and (4, 3) do not broadcast" in err
    assert f"{path}:3:3" in err
    assert "  add(%x, %y)" in err and "^" in err


def test_check_reports_a_parse_error_with_line_and_caret(tmp_path):
    path = tmp_path / "syntax.relay"
    path.write_text('#[version = "0.0.5"]\ndef @main(%x: float32) {\n  add(%x, %x;\n}\n')
    code, _, err = cli("check", str(path))
    assert code == 1 and "parse error" in err and f"{path}:3:" in err and "^" in err


def test_fmt_graph_and_anf(tmp_path):
    path = tmp_path / "ok.relay"
    path.write_text(GOOD)
    code, out, _ = cli("fmt", str(path))
    assert code == 0 and "%0 = log(%x);" in out and "let" not in out
    code, anf, _ = cli("fmt", str(path), "--anf")
    assert code == 0 and "let %x1 = log(%x);" in anf
    from relay_nb.transform.to_a_normal_form import to_a_normal_form

    expected = relay.parse(GOOD)
    expected = expected.with_functions({gv: to_a_normal_form(f) for gv, f in expected.functions.items()})
    assert relay.structural_equal(relay.parse(anf), expected)


def test_missing_file_is_exit_code_2():
    code, _, err = cli("check", "/nonexistent/file.relay")
    assert code == 2 and "cannot read /nonexistent/file.relay" in err


def test_demo_checks_every_bundled_example():
    code, out, err = cli("demo")
    assert code == 0 and err == ""
    for name in ("conv_block.relay", "dataflow_vs_anf.relay", "nat.relay"):
        assert f"// ===== {name}: typed, graph form =====" in out
        assert f"// ===== {name}: A-normal form =====" in out


def test_console_script_entry_point_runs():
    proc = subprocess.run(
        [sys.executable, "-m", "relay_nb.cli", "check", "-"], input=GOOD, capture_output=True, text=True
    )
    assert proc.returncode == 0 and "fn" not in proc.stderr and "add(%0, %0)" in proc.stdout


RUNNABLE = "def @main(%x: Tensor[(3), float32], %n: int32) { (add(%x, %x), multiply(%n, 2)) }\n"


def test_run_takes_numbers_and_npy_files(tmp_path):
    import numpy as np

    path = tmp_path / "f.relay"
    path.write_text(RUNNABLE)
    np.save(tmp_path / "x.npy", np.arange(3, dtype="float32"))
    code, out, err = cli("run", str(path), str(tmp_path / "x.npy"), "21")
    assert (code, err) == (0, "")
    assert out == "([0., 2., 4.], 42)\n"


def test_run_with_the_jit_gives_the_interpreters_answer(tmp_path):
    import numpy as np

    path = tmp_path / "f.relay"
    path.write_text(RUNNABLE)
    np.save(tmp_path / "x.npy", np.arange(3, dtype="float32"))
    code, out, err = cli("run", str(path), str(tmp_path / "x.npy"), "21", "--exec", "jit")
    assert (code, err) == (0, "")
    assert out == "([0., 2., 4.], 42)\n"


def test_run_entry_and_argument_errors(tmp_path):
    path = tmp_path / "f.relay"
    path.write_text(RUNNABLE + "def @twice(%k: int32) { multiply(%k, 2) }\n")
    assert cli("run", str(path), "--entry", "twice", "5")[1] == "10\n"
    code, _, err = cli("run", str(path), "1", "2")
    assert code == 1 and "@main argument 0 (%x) expects Tensor[(3), float32], got the scalar 1" in err
    code, _, err = cli("run", str(path), "--entry", "twice", "five")
    assert code == 1 and "neither a number nor a .npy file" in err


def test_opt_runs_named_passes_with_timing_and_print_after_all(tmp_path):
    path = tmp_path / "f.relay"
    path.write_text(RUNNABLE)
    code, out, err = cli("opt", str(path), "--passes", "InferType", "--time", "--print-after-all")
    assert (code, err) == (0, "")
    assert out.startswith("// after InferType\n")
    assert "%0 = add(%x, %x) /* ty=Tensor[(3), float32] */;" in out
    assert "pass timing:" in out and "    InferType: " in out
    code, _, err = cli("opt", str(path), "--passes", "InferTipe")
    assert code == 1 and "unknown pass InferTipe; did you mean InferType?" in err


FOLDABLE = """def @main(%x: Tensor[(2), float32]) {
  add(%x, add(1f, 2f))
}
"""


def test_opt_takes_an_opt_level_like_the_magic(tmp_path):
    path = tmp_path / "f.relay"
    path.write_text(FOLDABLE)
    code, out, err = cli("opt", str(path), "--passes", "O3")
    assert (code, err) == (0, "")
    assert out == relay.optimize(relay.parse(FOLDABLE), opt_level=3).astext() + "\n"
    assert "Primitive=1" in out  # FuseOps ran


def test_opt_unknown_pass_lists_the_valid_names(tmp_path):
    path = tmp_path / "f.relay"
    path.write_text(FOLDABLE)
    code, _, err = cli("opt", str(path), "--passes", "FoldConstant,Nonsense")
    assert code == 1 and "unknown pass Nonsense" in err
    for name in relay.transform.PASSES:
        assert name in err
    assert "O0..O3" in err


def test_opt_print_after_all_prints_each_asked_pass_once_and_the_result_once(tmp_path):
    path = tmp_path / "f.relay"
    path.write_text(FOLDABLE)
    code, out, err = cli("opt", str(path), "--passes", "FoldConstant", "--print-after-all")
    assert (code, err) == (0, "")
    assert out.count("// after") == 1 and out.startswith("// after FoldConstant\n")  # no InferType, no pipeline
    assert out.count("def @main") == 1  # the result is the step printed, not printed again
    code, out, _ = cli("opt", str(path), "--passes", "O3", "--print-after-all")
    assert "// after InferType" not in out and "// after optimize" not in out
    assert "// after DeadCodeElimination: unchanged" in out
    assert out.count("def @main") == 2  # after FoldConstant and after FuseOps (the result)


def test_files_that_are_not_utf8_get_one_line_not_a_traceback(tmp_path):
    binary = tmp_path / "model.bin"
    binary.write_bytes(bytes(range(256)))
    for command in ("check", "fmt", "run"):
        code, out, err = cli(command, str(binary))
        assert code == 2 and out == ""
        assert err == f"relay-nb: cannot read {binary}: not UTF-8 text (byte 0x80 at offset 128); Relay files are UTF-8\n"
    code, _, err = cli("check", str(tmp_path / "missing.relay"))
    assert code == 2 and err.startswith("relay-nb: cannot read") and "No such file" in err


def test_utf16_and_bom_files_are_read(tmp_path):
    for encoding in ("utf-16", "utf-8-sig"):
        path = tmp_path / f"{encoding}.relay"
        path.write_text(GOOD, encoding=encoding)
        code, out, err = cli("fmt", str(path))
        assert (code, err) == (0, ""), encoding
        assert relay.structural_equal(relay.parse(out), relay.parse(GOOD))


def test_a_binary_file_on_standard_input(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "relay_nb.cli", "check", "-"], input=b"\xff\x00\xfe", capture_output=True, timeout=120
    )
    assert done.returncode == 2 and b"Traceback" not in done.stderr
    assert b"cannot read -: not UTF-8 text" in done.stderr
