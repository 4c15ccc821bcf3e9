"""Golden DOT source of the graph views: ``tests/golden/viz/<case>.dot``.

Each file holds the DAG view then the ANF view of one program, each after a
``// to_dot(mode=...)`` line (a DOT comment).  Programs: the printer's builder cases
(every node kind, seed 004's examples, sharing across scopes, ...), every code example of
the seeds (``tests/seeds/*.relay``), and a module holding every kind of expression.
``pytest --update-golden`` rewrites the files; ``git diff`` is the review.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_printer_cases import CASES
from test_viz_graph import kinds_module

import relay_nb as relay
from relay_nb.viz import to_dot

SEEDS = Path(__file__).parent / "seeds"
# Broken in the seed itself (see tests/seeds/test_seed_examples.py); the rest parse.
BROKEN = {"000_02_fn_minimal.relay", "000_11_type_args.relay"}
NEEDS_NAT = {"000_21_match_pred.relay", "000_22_match_nested.relay", "000_23_match_order.relay"}
SEED_FILES = sorted(p.name for p in SEEDS.glob("*.relay") if p.name not in BROKEN)


def both_modes(obj) -> str:
    return "".join(f"// to_dot(mode={mode!r})\n{to_dot(obj, mode=mode)}" for mode in ("dag", "anf"))


def load_seed(name: str):
    init = None
    if name in NEEDS_NAT:
        init = relay.parse((SEEDS / "000_20_data_nat.relay").read_text(encoding="utf-8"))
    return relay.parse((SEEDS / name).read_text(encoding="utf-8"), source_name=name, init_module=init)


@pytest.mark.parametrize("name", sorted(CASES))
def test_builder_case(name, golden):
    golden(f"viz/{name}.dot", both_modes(CASES[name]()))


@pytest.mark.parametrize("name", SEED_FILES)
def test_seed_example(name, golden):
    golden(f"viz/seed_{Path(name).stem}.dot", both_modes(load_seed(name)))


def test_every_kind_of_node(golden):
    golden("viz/every_kind.dot", both_modes(kinds_module()))


def test_golden_files_cover_every_case():
    names = {p.name for p in (Path(__file__).parent / "golden" / "viz").glob("*.dot")}
    expected = {f"{n}.dot" for n in CASES} | {f"seed_{Path(n).stem}.dot" for n in SEED_FILES}
    assert expected | {"every_kind.dot"} == names
