"""The operator coverage table (``python -m relay_nb.op.coverage``) against the registry."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import relay_nb as relay
from relay_nb.op import coverage
from relay_nb.op.registry import get_column, register_column

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def rows():
    return {r.name: r for r in coverage.coverage()}


def test_one_row_per_tvm_operator(rows):
    assert len(rows) == 298
    assert len(coverage.tvm_ops()) == len(set(coverage.tvm_ops())) == 298


@pytest.mark.parametrize(
    "name, marks",
    [
        ("add", (True, True, True, True)),  # elementwise: every column
        ("argmax", (True, True, True, False)),  # integer result: no gradient in TVM
        ("nn.conv2d", (True, True, True, True)),
    ],
)
def test_known_ops(rows, name, marks):
    assert rows[name].marks() == marks


def test_columns_follow_the_registry(rows):
    """Every mark is exactly the presence of the registry cell, for every row."""
    from relay_nb.backend.llvm.codegen.rules import llvm_rules

    cols = [get_column("type_rel"), get_column("impl"), llvm_rules(), get_column("grad")]
    for name, row in rows.items():
        assert row.marks() == tuple(col.get(name) is not None for col in cols), name
        if row.relation:
            assert relay.op.has_op(name)


def test_a_new_cell_shows_up():
    """Filling a column is seen by the next table (it is computed, not frozen)."""
    before = {r.name: r for r in coverage.coverage()}
    name = next(n for n, r in before.items() if r.relation and not r.gradient)
    try:
        register_column("grad", name, lambda call, g: [None])
        after = {r.name: r for r in coverage.coverage()}
        assert after[name].gradient and not before[name].gradient
    finally:
        get_column("grad").pop(name)


def test_summary_counts(rows):
    line = coverage.summary(list(rows.values()))
    n_rel = sum(r.relation for r in rows.values())
    n_grad = sum(r.gradient for r in rows.values())
    assert line.startswith("298 TVM operators: ")
    assert f"relation {n_rel}," in line and line.endswith(f"gradient {n_grad}")


def _run(*args):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run(
        [sys.executable, "-m", "relay_nb.op.coverage", *args],
        capture_output=True, text=True, check=True, env=env, cwd=ROOT,
    ).stdout


def test_command_line_text_and_markdown(rows):
    text = _run()
    assert text.splitlines()[0].split() == ["operator", *coverage.COLUMNS]
    assert text.rstrip().splitlines()[-1] == coverage.summary(list(rows.values()))
    md = _run("--markdown")
    table = [line for line in md.splitlines() if line.startswith("| `")]
    assert len(table) == 298
    assert "| `add` | ✓ | ✓ | ✓ | ✓ |" in table


def test_docs_page_is_current(rows):
    """docs/operator_coverage.md is the generator's output (regenerate it when this fails:
    ``python -m relay_nb.op.coverage --markdown -o docs/operator_coverage.md``)."""
    page = ROOT / "docs" / "operator_coverage.md"
    if not page.exists():
        pytest.skip("no docs directory in this installation")
    assert page.read_text(encoding="utf-8") == coverage.as_markdown(list(rows.values()))
