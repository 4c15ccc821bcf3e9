"""``relay-nb import model.onnx``: the program as text, params in a side .npz."""

from __future__ import annotations

import io

import numpy as np
import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

import onnx_models as M  # noqa: E402
import relay_nb as relay  # noqa: E402
from relay_nb.cli import main  # noqa: E402


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def model_file(tmp_path):
    model, feeds = M.inverted_residual()
    path = tmp_path / "block.onnx"
    path.write_bytes(model.SerializeToString())
    return path, model, feeds


def test_import_prints_a_complete_program_that_reads_back(model_file):
    path, model, feeds = model_file
    code, out, err = cli("import", str(path))
    assert code == 0 and err == ""
    assert "nn.conv2d" in out and "#[metadata]" in out
    mod = relay.parse(out)  # weights travel in the metadata section
    got = relay.create_executor("debug", mod).evaluate()(feeds["input"])
    assert M.rel_error(got, M.run_onnxruntime(model, feeds)[0]) <= 1e-4


def test_import_with_side_params_and_shape(model_file, tmp_path):
    path, model, feeds = model_file
    out_file, npz = tmp_path / "block.relay", tmp_path / "block.npz"
    code, out, err = cli("import", str(path), "-o", str(out_file), "--params", str(npz),
                         "--shape", "input=1,8,8,8")
    assert (code, out, err) == (0, "", "")
    mod = relay.parse(out_file.read_text())
    params = np.load(npz)
    assert "features.1.conv.0.conv.weight" in params.files
    got = relay.create_executor("debug", mod).evaluate()(feeds["input"], *(params[n] for n in params.files))
    assert M.rel_error(got, M.run_onnxruntime(model, feeds)[0]) <= 1e-4


def test_import_errors(model_file, tmp_path):
    path, _, _ = model_file
    code, _, err = cli("import", str(tmp_path / "none.onnx"))
    assert code == 2 and "cannot read" in err
    code, _, err = cli("import", str(path), "--shape", "input")
    assert code == 1 and "--shape expects NAME=D1,D2" in err
    junk = tmp_path / "junk.onnx"
    junk.write_bytes(b"\xff" * 64)
    code, _, err = cli("import", str(junk))
    assert code == 1 and "not a valid ONNX model" in err
