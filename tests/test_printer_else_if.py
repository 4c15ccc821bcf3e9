"""Printed size stays linear in the program: else-if chains print flat, and indentation
stops growing at ``doc.MAX_INDENT`` levels (deep nesting of any other kind)."""

from __future__ import annotations

from pathlib import Path

import relay_nb as relay
from relay_nb.ir.expr import If
from relay_nb.syntax.doc import MAX_INDENT

GOLDEN = Path(__file__).parent / "golden" / "printer" / "else_if_chain.relay"


def chain(n: int) -> str:
    return (
        "def @main(%x: int32) { "
        + " else ".join(f"if (%x == {k}) {{ {k} }}" for k in range(n))
        + " else { -1 } }"
    )


def same(a, b) -> bool:
    return relay.structural_equal(a, b, map_free_vars=True)


def test_golden_chains_reparse_to_the_same_program():
    mod = relay.parse(GOLDEN.read_text(encoding="utf-8"))
    text = mod.astext()
    assert "} else if (greater_equal(%x, 80)) {" in text
    assert same(relay.parse(text), mod)
    typed = relay.transform.InferType()(mod)
    assert same(relay.parse(typed.astext()), mod)  # with /* ty=... */ inside the conditions


def test_4000_branches_print_flat_in_linear_size():
    text = chain(4_000)
    mod = relay.parse(text)
    out = mod.astext()
    # 64 MB before (each level indented the rest); now a few bytes over the input
    assert len(out) < 2 * len(text)
    assert out.count("} else if (") == 3_999
    assert max(len(line) - len(line.lstrip()) for line in out.splitlines()) <= 4
    back = relay.parse(out)
    assert same(back, mod)
    node, depth = back["main"].body, 0
    while isinstance(node, If):
        node, depth = node.false_branch, depth + 1
    assert depth == 4_000


def test_deep_nesting_of_other_kinds_prints_in_linear_size():
    # ANF puts a let before each inner if, so the chain nests; so do 4,000 closures
    text = chain(4_000)
    small, big = relay.parse(chain(2_000)).astext(form="anf"), relay.parse(text).astext(form="anf")
    assert len(big) < 2.2 * len(small) and len(big) < 30 * len(text)
    assert max(len(line) - len(line.lstrip()) for line in big.splitlines()) == 2 * MAX_INDENT
    fns = "fn (%x: float32) { " + "let %f = fn (%y: float32) { " * 4_000 + "%y" + " }; %f(%x)" * 4_000 + " }"
    f = relay.parse_expr(fns)
    out = relay.astext(f)
    assert len(out) < 100 * len(fns)
    assert same(relay.parse_expr(out), f)
