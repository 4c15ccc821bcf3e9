"""Deep and large programs parse at Python's default recursion limit, in linear time."""

from __future__ import annotations

import sys
import time

from relay_nb.ir.expr import Call, Function, If, Let, Tuple
from relay_nb.syntax.parser import parse, parse_expr

N = 100_000


def test_recursion_limit_is_the_default():
    # the parser must never raise it; the tests below rely on that
    assert sys.getrecursionlimit() <= 1000


def test_100k_deep_let_chain():
    lines = ["def @main(%x0: Tensor[(4), float32]) {"]
    lines += [f"  let %x{k} = add(%x{k - 1}, 1f);" for k in range(1, N + 1)]
    lines += [f"  %x{N}", "}"]
    mod = parse("\n".join(lines))
    f = mod["main"]
    node = f.body
    prev = f.params[0]
    depth = 0
    while isinstance(node, Let):
        assert node.value.args[0] is prev  # scoping by identity, all the way down
        prev = node.var
        node = node.body
        depth += 1
    assert depth == N and node is prev


def test_100k_binding_graph():
    lines = ["def @main(%x: float32) {", "  %0 = add(%x, %x);"]
    lines += [f"  %{k} = add(%{k - 1}, %{k - 1});" for k in range(1, N)]
    lines += [f"  %{N - 1}", "}"]
    mod = parse("\n".join(lines))
    node = mod["main"].body
    count = 0
    while isinstance(node, Call):
        assert node.args[0] is node.args[1]  # sharing, never duplication
        node = node.args[0]
        count += 1
    assert count == N and node is mod["main"].params[0]


def test_long_infix_chain_and_deep_parentheses():
    e = parse_expr(" + ".join(["1"] * 50_000))
    depth = 0
    while isinstance(e, Call):
        e = e.args[0]
        depth += 1
    assert depth == 49_999
    e = parse_expr("(" * 50_000 + "1" + ")" * 50_000)
    assert e.data == 1


def test_deep_else_if_chain_and_nested_functions():
    text = (
        "fn (%x: int32) { "
        + " else ".join(f"if (%x == {k}) {{ {k} }}" for k in range(10_000))
        + " else { -1 } }"
    )
    f = parse_expr(text)
    node = f.body
    depth = 0
    while isinstance(node, If):
        node = node.false_branch
        depth += 1
    assert depth == 10_000
    e = parse_expr("fn () { " * 5_000 + "()" + " }" * 5_000)
    depth = 0
    while isinstance(e, Function):
        e = e.body
        depth += 1
    assert depth == 5_000 and isinstance(e, Tuple)


def test_deeply_nested_lets_in_values():
    e = parse_expr("let %a = (" * 5_000 + "1" + "; %a)" * 5_000 + "; %a")
    assert isinstance(e, Let)


def test_parse_time_grows_linearly():
    def program(n: int) -> str:
        lines = [
            "def @main(%x: Tensor[(1, 64), float32], %w: Tensor[(64), float32]) {",
            "  %0 = add(%x, %w);",
        ]
        lines += [f"  %{k} = nn.bias_add(%{k - 1}, %w, axis=1);" for k in range(1, n)]
        lines += [f"  %{n - 1}", "}"]
        return "\n".join(lines)

    def best_of(text: str, runs: int) -> float:
        # the fastest of a few runs: a loaded machine only ever adds time
        times = []
        for _ in range(runs):
            t0 = time.perf_counter()
            parse(text)
            times.append(time.perf_counter() - t0)
        return min(times)

    small, large = program(5_000), program(50_000)
    parse(small)
    t_small = best_of(small, 5)
    t_large = best_of(large, 2)
    # 10x the lines: ~10x the time (a quadratic parser would take ~100x), with slack
    assert t_large < 25 * max(t_small, 1e-3), (t_small, t_large)
