"""Parse-speed probe for the Relay reader (lines/s), used to choose the lexer/loop design.

    python benchmarks/parse_probe.py [--n 20000]

Measures, on the same generated dataflow module (benchmarks/programs.py) plus a
TVM-printout-style module with /* ty=... */ comments:
  * relay_nb.parse (custom lexer + own LALR loop over lark's tables, nodes built inline)
  * the relay_nb lexer alone
  * lark's own LALR runtime on the benchmark's peer grammar (lexer="basic"), with tree
  * the same with lark_cython, if installed
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import programs

import relay_nb as relay


def best_of(fn, repeat=5):
    """Best CPU time of ``repeat`` runs (process time: other jobs on the machine matter less)."""
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        t0 = time.process_time()
        fn()
        best = min(best, time.process_time() - t0)
    return best


def printout_module(n: int) -> str:
    """TVM-printer style: conv2d lines with attributes and /* ty=... */ comments."""
    lines = [
        '#[version = "0.0.5"]',
        (
            "def @main(%data: Tensor[(1, 64, 56, 56), float32] /* ty=Tensor[(1, 64, 56, 56), float32] */,"
            " %w: Tensor[(64, 64, 3, 3), float32]) -> Tensor[(1, 64, 56, 56), float32] {"
        ),
    ]
    prev = "%data"
    for k in range(n):
        if k % 2 == 0:
            lines.append(
                f"  %{k} = nn.conv2d({prev}, %w, padding=[1, 1, 1, 1], channels=64, "
                f"kernel_size=[3, 3]) /* ty=Tensor[(1, 64, 56, 56), float32] */;"
            )
        else:
            lines.append(f"  %{k} = nn.relu({prev}) /* ty=Tensor[(1, 64, 56, 56), float32] */;")
        prev = f"%{k}"
    lines.append(f"  {prev}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=20000)
    args = ap.parse_args()
    from relay_nb.syntax.lexer import Lexer
    from relay_nb.syntax.parser import _tables

    names = _tables().names
    cases = [
        ("dataflow (benchmarks/programs.py)", programs.dataflow_module(args.n).relay),
        ("TVM printout, conv2d + ty comments", printout_module(args.n)),
    ]
    for label, text in cases:
        n = text.count("\n") + 1
        print(f"\n{label}: {n:,} lines")
        t = best_of(lambda text=text: relay.parse(text))
        print(f"  relay_nb.parse                      {t:7.3f}s {n / t:10,.0f} lines/s")
        t = best_of(lambda text=text: sum(1 for _ in Lexer(text, names)))
        print(f"  relay_nb lexer alone                {t:7.3f}s {n / t:10,.0f} lines/s")
    try:
        from lark import Lark
        from run import PEER_GRAMMAR

        text = programs.dataflow_module(args.n).relay
        n = text.count("\n") + 1
        peer = Lark(PEER_GRAMMAR, parser="lalr", lexer="basic")
        t = best_of(lambda: peer.parse(text), 1)
        print(f"\nlark LALR (basic lexer, tree), peer grammar, dataflow: {n / t:10,.0f} lines/s")
        try:
            import lark_cython

            peer_c = Lark(PEER_GRAMMAR, parser="lalr", lexer="basic", _plugins=lark_cython.plugins)
            t = best_of(lambda: peer_c.parse(text), 1)
            print(f"lark_cython LALR (tree), peer grammar, dataflow:        {n / t:10,.0f} lines/s")
        except ImportError:
            print("lark_cython not installed")
    except ImportError as exc:  # pragma: no cover
        print("peer comparison skipped:", exc)


if __name__ == "__main__":
    main()
