"""The node -> lines rule read in one pass (relay_nb.notebook.lines) against the rule
written as a character scan (the oracle: how line_range read a text before it was
made linear for a 24,000-node printout)."""

from __future__ import annotations

import time

from hypothesis import given, settings
from hypothesis import strategies as st

import relay_nb as relay
from relay_nb.notebook import line_range
from relay_nb.notebook.lines import LineSpans, line_offsets


def scan_end_line(text: str, line: int, column: int) -> int:
    """The rule, one character at a time from ``line:column``."""
    offsets = line_offsets(text)
    if not 1 <= line <= len(offsets):
        return line
    pos = offsets[line - 1] + max(column - 1, 0)
    depth, cur, n = 0, line, len(text)
    while pos < n:
        ch = text[pos]
        if ch == '"':
            pos += 1
            while pos < n and text[pos] != '"':
                pos += 2 if text[pos] == "\\" else 1
        elif text.startswith("//", pos):
            end = text.find("\n", pos)
            pos = (n if end < 0 else end) - 1
        elif text.startswith("/*", pos):
            end = text.find("*/", pos + 2)
            cur += text.count("\n", pos, n if end < 0 else end)
            pos = (n if end < 0 else end + 2) - 1
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth < 0:
                break
            if depth == 0 and ch == "}" and not text.startswith(" else", pos + 1):
                break
        elif ch == "\n":
            if depth == 0:
                break
            cur += 1
        elif ch in ";," and depth == 0:
            break
        pos += 1
    return cur


PIECES = ["a", " ", "\n", "(", ")", "[", "]", "{", "}", ";", ",", '"', "\\", "/", "*",
          "//", "/*", "*/", " else", "} else {", '"x\ny"', "%0 = add(%x, %y);"]  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=40), st.data())
def test_one_pass_spans_match_the_character_scan(pieces, data):
    text = "".join(pieces)
    spans = LineSpans(text)
    n_lines = len(line_offsets(text))
    for _ in range(6):  # positions anywhere, inside strings and comments too
        line = data.draw(st.integers(0, n_lines + 1))
        column = data.draw(st.integers(0, 12))
        assert spans.end_line(line, column) == scan_end_line(text, line, column), (line, column)


def test_model_printout_spans_match_the_character_scan():
    """Every node of a real printout (blocks, fused functions, if/else, strings)."""
    mod, _ = relay.testing.resnet.get_workload(num_layers=18)
    mod = relay.transform.FuseOps(2)(relay.transform.InferType()(mod))
    g = relay.viz.build_graph(mod, max_nodes=10**9, with_dot=False)
    spans = LineSpans(g.text)
    checked = 0
    for info in g.nodes.values():
        if info.text_line:
            column = info.text_column or 1
            want = scan_end_line(g.text, info.text_line, column)
            assert spans.end_line(info.text_line, column) == want
            checked += 1
    assert checked > 100
    fused = next(i for i in g.nodes.values() if i.label.startswith("fn") and i.text_line)
    assert spans.end_line(fused.text_line, fused.text_column) > fused.text_line  # a block


def test_spans_are_linear_in_the_printout():
    """A 6,000-line function: every line's span and the def's span, asked many times
    (a view asks per node: fused functions and closures are blocks), read the text once.
    The character scan re-read the def's whole body per question (~0.1 s each)."""
    body = "".join(f"  %{i} = add(%x, %x) /* ty=Tensor[(2), float32] */;\n" for i in range(6000))
    text = "def @main(%x) {\n" + body + "  %5999\n}\n"
    start = time.perf_counter()
    spans = LineSpans(text)
    ends = [spans.end_line(line, 3) for line in range(2, 6002)]
    defs = [spans.end_line(1, 1) for _ in range(1000)]
    took = time.perf_counter() - start
    assert ends == list(range(2, 6002))
    assert set(defs) == {6003} == {scan_end_line(text, 1, 1)}
    assert line_range(text, 1, 1, spans) == (1, 6003)
    assert took < 1.0, took  # about 40 ms; the character scan: minutes


def test_every_position_matches_the_character_scan():
    """Every line and column of texts where a line's brackets cannot be counted alone (a
    string or comment spanning lines, brackets in strings, an ``else`` after a block):
    the answer found by counting a line's brackets is the scan's."""
    import random

    rng = random.Random(15)
    texts = ['f(a,\n  "x\n)y" b)\nz;', "/* (\n */ g(\n)\n", "if (c) { a } else { b }\nx",
             "%1 = f(%0) // (\n;", 'def @m() {\n  %0 = g("((", 1);\n  h(%0)\n}\n']  # fmt: skip
    texts += ["".join(rng.choice(PIECES) for _ in range(rng.randint(0, 40))) for _ in range(300)]
    for text in texts:
        spans = LineSpans(text)
        for line in range(len(line_offsets(text)) + 2):
            for column in range(14):
                want = scan_end_line(text, line, column)
                assert spans.end_line(line, column) == want, (text, line, column)


def test_end_lines_in_bulk_match_the_character_scan():
    """``end_lines`` (the one-line test for every question at once, in numpy) answers
    as the scan does: every position of the texts above and of a real printout, in a
    fresh LineSpans each (its token table is then read by the other questions)."""
    import random

    rng = random.Random(16)
    texts = ['f(a,\n  "x\n)y" b)\nz;', "/* (\n */ g(\n)\n", "if (c) { a } else { b }\nx",
             "%1 = f(%0) // (\n;", 'def @m() {\n  %0 = g("((", 1);\n  h(%0)\n}\n', "",
             "é(\nü)\n%0 = f(%x);"]  # fmt: skip
    texts += ["".join(rng.choice(PIECES) for _ in range(rng.randint(0, 40))) for _ in range(300)]
    for text in texts:
        lines = [line for line in range(len(line_offsets(text)) + 2) for _ in range(14)]
        columns = [column for _ in range(len(line_offsets(text)) + 2) for column in range(14)]
        want = [scan_end_line(text, line, column) for line, column in zip(lines, columns)]
        assert LineSpans(text).end_lines(lines, columns) == want, text
    mod, _ = relay.testing.resnet.get_workload(num_layers=18)
    mod = relay.transform.FuseOps(2)(relay.transform.InferType()(mod))
    g = relay.viz.build_graph(mod, max_nodes=10**9, with_dot=False)
    infos = [i for i in g.nodes.values() if i.text_line]
    lines, columns = [i.text_line for i in infos], [i.text_column or 1 for i in infos]
    want = [scan_end_line(g.text, line, column) for line, column in zip(lines, columns)]
    assert LineSpans(g.text).end_lines(lines, columns) == want
    assert any(w > line for w, line in zip(want, lines))  # blocks, read from the tokens
