"""benchmarks/bench_models.py --quick runs end to end (toy sizes; no timing asserts): every
model's row, the peers agreeing with onnxruntime, and "—" where torch is not installed."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH = os.path.join(ROOT, "benchmarks", "bench_models.py")
MODELS = ["ResNet-50", "MobileNet v2", "EfficientNet-B0", "BERT-base", "GPT-2 small", "LSTM"]

pytest.importorskip("onnxruntime")


def run(*args, env=None):
    env = {**os.environ, **(env or {})}
    out = subprocess.run([sys.executable, BENCH, "--quick", *args], capture_output=True, text=True, env=env, timeout=800)
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout


def rows(text):
    return {m: line for line in text.splitlines() for m in MODELS if line.startswith(m)}


def test_quick_run_has_a_row_per_model_with_every_column():
    text = run()
    table = rows(text)
    assert set(table) == set(MODELS), text
    for model, line in table.items():
        err = float(line.split()[-1])
        assert err < 1e-4, line  # relay_nb (and torch) computed the same model as onnxruntime
        assert "nan" not in line, line
    assert "where the time goes" in text and ("every floor met" in text or "MISSED" in text)


def test_runs_without_torch_showing_a_dash(tmp_path):
    (tmp_path / "torch.py").write_text("raise ImportError('torch is hidden for this test')\n")
    # find_spec sees the shadowing module, and workers inherit PYTHONPATH
    text = run("--models", "lstm", env={"PYTHONPATH": os.pathsep.join([str(tmp_path), ROOT])})
    assert "peers: relay, ort;" in text
    line = rows(text)["LSTM"]
    assert line.count("—") >= 3, line  # torch's two latencies and its RSS
    assert re.search(r"\d+/\d+/—", line), line
