"""Front-end benchmarks: parse, InferType and print on generated programs.

    python benchmarks/run.py            # full sizes (about a minute)
    python benchmarks/run.py --quick    # smaller programs, fewer repeats

Prints one table per program with medians, lines/s, and ratios against peers measured in
the same run: (a) lark's plain LALR parser with tree building on a plain Relay grammar
(``PEER_GRAMMAR`` below: what a straightforward lark front end costs), (b) CPython's
``ast.parse`` of an equivalent Python program.  A ratio > 1 means relay_nb is faster.
Then a linear-growth check: the time for a 10x larger program over the smaller one.
"""

from __future__ import annotations

import argparse
import ast
import gc
import os
import statistics
import sys
import time
from typing import Callable

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(1, os.path.dirname(HERE))  # run from a checkout without installing

import programs  # noqa: E402
from lark import Lark  # noqa: E402

import relay_nb as relay  # noqa: E402

PEER_GRAMMAR = r"""
start: VERSION? defn+
defn: "def" GLOBAL "(" [param ("," param)*] ")" ("->" type)? "{" body "}"
param: LOCAL (":" type)?
type: "Tensor" "[" "(" [INT ("," INT)*] ")" "," NAME "]" | NAME
body: (binding | let)* expr
binding: LOCAL "=" expr ";"
let: "let" LOCAL (":" type)? "=" expr ";"
?expr: call | atom
call: opname "(" [arg ("," arg)*] ")"
arg: expr | NAME "=" value
value: INT | FLOAT | list | STRING
list: "[" [value ("," value)*] "]"
?atom: LOCAL | FLOAT | INT | atom "." INT -> proj
opname: NAME ("." NAME)*
VERSION: "#[version = \"0.0.5\"]"
GLOBAL: "@" NAME
LOCAL: "%" (NAME | INT)
FLOAT: /-?[0-9]+(\.[0-9]+)?(e[-+]?[0-9]+)?f/
INT: /-?[0-9]+/
STRING: /"[^"]*"/
%import common.CNAME -> NAME
%import common.WS
%ignore WS
%ignore /\/\/[^\n]*/
"""


def median_time(fn: Callable[[], object], repeat: int) -> float:
    """Median wall time of ``fn`` over ``repeat`` runs (GC collected before each)."""
    times = []
    for _ in range(repeat):
        gc.collect()
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def bench_program(prog: programs.Program, repeat: int, peer: Lark) -> dict[str, float]:
    text = prog.relay
    parse_s = median_time(lambda: relay.parse(text), repeat)
    mod = relay.parse(text)
    infer = relay.transform.InferType()
    infer_s = median_time(lambda: infer(relay.parse(text)), repeat) - parse_s
    typed = infer(mod)
    print_s = median_time(lambda: typed.astext(), repeat)
    peer_s = median_time(lambda: peer.parse(text), max(1, repeat // 2))
    ast_s = median_time(lambda: ast.parse(prog.python), repeat)
    return {"parse": parse_s, "infer": max(infer_s, 0.0), "print": print_s, "lark": peer_s, "ast": ast_s}


def report(prog: programs.Program, t: dict[str, float]) -> None:
    n = prog.lines
    both = t["parse"] + t["infer"]
    print(f"\n{prog.name}: {n:,} lines")
    print(f"  {'step':<26}{'median s':>10}{'lines/s':>12}{'vs lark LALR':>14}{'vs ast.parse':>14}")
    rows = [
        ("parse", t["parse"]),
        ("InferType", t["infer"]),
        ("parse + InferType", both),
        ("print (typed, graph form)", t["print"]),
        ("peer: lark LALR + tree", t["lark"]),
        ("peer: CPython ast.parse", t["ast"]),
    ]
    for label, secs in rows:
        rate = n / secs if secs > 0 else float("inf")
        vs_lark = t["lark"] / secs if secs > 0 else float("inf")
        vs_ast = t["ast"] / secs if secs > 0 else float("inf")
        print(f"  {label:<26}{secs:>10.4f}{rate:>12,.0f}{vs_lark:>13.2f}x{vs_ast:>13.2f}x")


def growth(make: Callable[[int], programs.Program], small: int, repeat: int) -> None:
    """Time parse + InferType + print at n and 10n; linear means a ratio near 10."""
    infer = relay.transform.InferType()

    def run(prog: programs.Program) -> None:
        infer(relay.parse(prog.relay)).astext()

    a, b = make(small), make(small * 10)
    ta = median_time(lambda: run(a), repeat)
    tb = median_time(lambda: run(b), max(1, repeat // 2))
    verdict = "ok" if tb / ta <= 12 else "SUPERLINEAR"
    print(f"  {a.name} -> {b.name}: {ta:.3f}s -> {tb:.3f}s, x{tb / ta:.1f} for 10x ({verdict}, target <= 12x)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="smaller programs, fewer repeats")
    args = ap.parse_args()
    repeat = 3 if args.quick else 5
    scale = 10 if args.quick else 1
    peer = Lark(PEER_GRAMMAR, parser="lalr")
    print(f"relay_nb front-end benchmark; python {sys.version.split()[0]}, {os.cpu_count()} cores")
    print("target: parse + InferType >= 25,000 lines/s on the 20k-binding module (aim 50,000)")
    for prog in (
        programs.dataflow_module(20_000 // scale),
        programs.resnet50_module(),
        programs.let_chain(100_000 // scale),
    ):
        report(prog, bench_program(prog, repeat, peer))
    print("\nlinear growth (parse + InferType + print):")
    growth(programs.dataflow_module, 2_000 // scale, repeat)
    growth(programs.let_chain, 10_000 // scale, repeat)


if __name__ == "__main__":
    main()
