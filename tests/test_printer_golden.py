"""Golden-text tests of the printer: ``tests/golden/printer/<case>.out``.

Two sources of programs:

* the builder cases of ``test_printer_cases.py`` (``<case>.out`` only);
* text inputs ``tests/golden/printer/<case>.relay``, parsed then printed; an optional first
  line ``// printer: <flags>`` says how (``expr``: parse_expr instead of parse; ``infer``:
  run InferType first).

Each ``.out`` holds the graph form then the A-normal form, each after a
``// astext(form=...)`` line.  ``pytest --update-golden`` rewrites them.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_printer_cases import CASES, WITH_METADATA

from relay_nb.syntax.printer import astext

GOLDEN = Path(__file__).parent / "golden" / "printer"
TEXT_INPUTS = sorted(GOLDEN.glob("*.relay"))


def both_forms(obj, show_meta_data: bool = False) -> str:
    parts = []
    for form in ("graph", "anf"):
        text = astext(obj, form=form, show_meta_data=show_meta_data)
        parts.append(f"// astext(form={form!r})\n{text.rstrip()}\n")
    return "".join(parts)


@pytest.mark.parametrize("name", sorted(CASES))
def test_builder_case(name, golden):
    obj = CASES[name]()
    golden(f"printer/{name}.out", both_forms(obj, show_meta_data=name in WITH_METADATA))


def read_input(path: Path):
    from relay_nb.syntax.parser import parse, parse_expr

    text = path.read_text(encoding="utf-8")
    first = text.split("\n", 1)[0]
    flags = first.split(":", 1)[1].split() if first.startswith("// printer:") else []
    obj = (
        parse_expr(text, source_name=path.name)
        if "expr" in flags
        else parse(text, source_name=path.name)
    )
    if "infer" in flags:
        from relay_nb.transform.infer_type import InferType

        obj = InferType()(obj)
    return obj


@pytest.mark.parametrize("path", TEXT_INPUTS, ids=[p.stem for p in TEXT_INPUTS])
def test_text_case(path, golden):
    obj = read_input(path)
    golden(f"printer/{path.stem}.out", both_forms(obj, show_meta_data=True))
