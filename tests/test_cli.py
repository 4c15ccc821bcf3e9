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
