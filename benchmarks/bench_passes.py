"""Pass scaling benchmark: every pass and analysis on a 10,000- and a 100,000-node module.

    python benchmarks/bench_passes.py [--quick] [--reps N] [--only NAME,...]

Issue 3 asks for linear growth: the time on the 100,000-node module at most 12x the
time on the 10,000-node one.  Each pass runs on the program that exercises it
(``--quick``: 2,000 and 20,000 nodes):

* ``graph``: a dataflow graph of conv2d blocks with per-channel scales, a constant
  subexpression, an ``x * 1`` and a residual add (tests/test_pass_pipeline.py);
* ``let chain``: ``let %v0 = add(%x, 1f); let %v1 = add(%v0, 1f); ...``;
* ``dag``: a Fibonacci-like dataflow graph, every node used twice;
* ``mixed``: let-bound ``if``s sharing a value across branches, closures capturing let
  variables, their calls (tests/strategies.py);
* ``globals``: one global per 10 nodes, marked ``Inline=1``, called in a chain from @main;
* ``nested``: let-bound closures nested inside each other (one level per 6 nodes), for the
  analyses (the mutator-based passes refuse scopes nested this deep with a RelayError).

The two sizes take turns and each cell is the median of ``--reps`` runs of CPU time (GC
collected before each), so a busy machine slows both alike.  The last row is a plain
``ExprMutator`` that changes nothing: Python's own cost per node grows a little once a
program no longer fits in the CPU caches, and no pass can grow slower than that.

``--calls`` adds the machine-independent check: the largest growth, between the two
sizes, of the number of calls of any one function (profiled once per size).  A linear
pass makes ten times the calls on ten times the nodes, whatever the machine is doing.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import os
import statistics
import sys
import time
from typing import Any, Callable

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests"))  # the program builders of the test suite
sys.path.insert(1, ROOT)

import relay_nb as relay  # noqa: E402
from relay_nb.analysis import detect_feature, free_vars, well_formed  # noqa: E402
from relay_nb.ir.expr import Call, Function, GlobalVar  # noqa: E402
from relay_nb.ir.functor import ExprMutator  # noqa: E402
from relay_nb.ir.module import IRModule  # noqa: E402
from relay_nb.op.registry import get_op  # noqa: E402
from relay_nb.transform import PassContext, get_pass  # noqa: E402

TARGET = 12.0


def inline_module(n_nodes: int) -> IRModule:
    """@main calls ``n_nodes / 10`` small globals in a chain; each is marked Inline=1."""
    mod = IRModule()
    add, mul = get_op("add"), get_op("multiply")
    x = relay.var("x", "float32")
    prev: Any = x
    for i in range(max(1, n_nodes // 10)):
        p = relay.var("p", "float32")
        body = Call(add, (Call(mul, (p, relay.const(2.0))), relay.const(1.0)))
        body = Call(mul, (Call(add, (body, p)), relay.const(0.5)))
        gv = GlobalVar(f"h{i}")
        mod[gv] = Function((p,), body).with_attr("Inline", 1)
        prev = Call(gv, (prev,))
    mod["main"] = Function((x,), prev)
    return mod


def nested_functions(n_nodes: int) -> IRModule:
    """``let %f0 = fn (%y) { add(%y, <the level below>) }; %f0(%x)``, one level per 6 nodes."""
    from relay_nb.ir.expr import Let, Var

    add = get_op("add")
    x = relay.var("x", "float32")
    body: Any = x
    for i in range(max(1, n_nodes // 6)):
        f, y = Var(f"f{i}"), relay.var("y", "float32")
        body = Let(f, Function((y,), Call(add, (y, body))), Call(f, (x,)))
    return IRModule({"main": Function((x,), body)})


def builders() -> dict[str, Callable[[int], IRModule]]:
    from strategies import big_dag, big_let_chain, big_mixed
    from test_pass_pipeline import big_program

    return {
        "graph": big_program,
        "let chain": big_let_chain,
        "dag": big_dag,
        "mixed": big_mixed,
        "globals": inline_module,
        "nested": nested_functions,
    }


def pass_rows() -> list[tuple[str, str, Callable[[IRModule], Any]]]:
    """(row name, program, what to time) for every pass of the default pipeline, the
    standalone passes and the analyses."""

    def run(name: str, **kwargs: Any) -> Callable[[IRModule], Any]:
        def go(mod: IRModule) -> Any:
            with PassContext(opt_level=3):
                return get_pass(name)(mod) if not kwargs else _make(name, **kwargs)(mod)

        return go

    rows: list[tuple[str, str, Callable[[IRModule], Any]]] = [
        ("InferType", "graph", run("InferType")),
        ("InferType", "let chain", run("InferType")),
        ("SimplifyInference", "graph", run("SimplifyInference")),
        ("ToANormalForm", "graph", run("ToANormalForm")),
        ("ToANormalForm", "dag", run("ToANormalForm")),
        ("ToGraphNormalForm", "let chain", run("ToGraphNormalForm")),
        ("ToGraphNormalForm", "mixed", run("ToGraphNormalForm")),
        ("ToBasicBlockNormalForm", "mixed", run("ToBasicBlockNormalForm")),
        ("DeadCodeElimination", "let chain", run("DeadCodeElimination")),
        ("DeadCodeElimination", "mixed", run("DeadCodeElimination")),
        ("FoldConstant", "graph", run("FoldConstant")),
        ("EliminateCommonSubexpr", "graph", run("EliminateCommonSubexpr")),
        ("EliminateCommonSubexpr", "dag", run("EliminateCommonSubexpr")),
        ("SimplifyExpr", "graph", run("SimplifyExpr")),
        ("Inline", "globals", run("Inline")),
        ("Inline (all non-recursive)", "globals", run("Inline", all_non_recursive=True)),
        ("LambdaLift", "mixed", run("LambdaLift")),
        ("FuseOps", "graph", run("FuseOps")),
        ("ForwardFoldScaleAxis", "graph", run("ForwardFoldScaleAxis")),
        ("BackwardFoldScaleAxis", "graph", run("BackwardFoldScaleAxis")),
        ("FoldScaleAxis", "graph", run("FoldScaleAxis")),
        ("optimize(opt_level=3)", "graph", lambda mod: relay.optimize(mod, opt_level=3)),
        ("free_vars", "mixed", lambda mod: free_vars(mod["main"])),
        ("well_formed", "mixed", lambda mod: well_formed(mod)),
        ("detect_feature", "mixed", lambda mod: detect_feature(mod)),
        ("free_vars", "nested", lambda mod: free_vars(mod["main"])),
        ("well_formed", "nested", lambda mod: well_formed(mod)),
        ("detect_feature", "nested", lambda mod: detect_feature(mod)),
        ("InferType", "nested", run("InferType")),
        ("ToANormalForm", "nested", run("ToANormalForm")),
        ("(plain ExprMutator)", "graph", lambda mod: ExprMutator().visit(mod["main"])),
    ]
    return rows


def _make(name: str, **kwargs: Any) -> Any:
    from relay_nb.transform.inline import Inline

    assert name == "Inline"
    return Inline(**kwargs)


def measure(fn: Callable[[IRModule], Any], mods: list[IRModule], reps: int) -> list[float]:
    """Median CPU seconds of ``fn`` on each module; the modules take turns."""
    times: list[list[float]] = [[] for _ in mods]
    for _ in range(reps):
        for i, mod in enumerate(mods):
            gc.collect()
            start = time.thread_time()
            fn(mod)
            times[i].append(time.thread_time() - start)
    return [statistics.median(t) for t in times]


def call_growth(fn: Callable[[IRModule], Any], mods: list[IRModule]) -> tuple[float, str]:
    """The largest growth of any function's call count from the small to the large module
    (functions called at least 1,000 times on the large one), and that function."""
    counts = []
    for mod in mods:
        prof = cProfile.Profile()
        prof.enable()
        fn(mod)
        prof.disable()
        prof.create_stats()
        counts.append({key: stat[1] for key, stat in prof.stats.items()})  # type: ignore[attr-defined]
    small, large = counts
    worst, where = 0.0, ""
    for key, n in large.items():
        if n >= 1000:
            growth = n / small.get(key, 1)
            if growth > worst:
                worst, where = growth, f"{key[2]} ({os.path.basename(key[0])}:{key[1]})"
    return worst, where


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="2,000 and 20,000 nodes")
    ap.add_argument("--reps", type=int, default=3, help="runs per cell (median)")
    ap.add_argument("--only", default="", help="comma-separated row names to run")
    ap.add_argument("--calls", action="store_true", help="also profile call-count growth")
    args = ap.parse_args()
    small, large = (2_000, 20_000) if args.quick else (10_000, 100_000)
    only = {s.strip() for s in args.only.split(",") if s.strip()}
    print(f"relay_nb pass scaling benchmark; python {sys.version.split()[0]}, {os.cpu_count()} cores")
    print(f"median of {args.reps} runs; growth = time at {large:,} nodes / time at {small:,} nodes, target <= {TARGET:g}x\n")
    build = builders()
    infer = get_pass("InferType")
    programs: dict[str, list[IRModule]] = {}
    header = f"{'pass':<28}{'program':<11}{f'{small // 1000}k ms':>10}{f'{large // 1000}k ms':>11}{'growth':>9}   met?"
    if args.calls:
        header += "  calls growth (function)"
    print(header)
    print("-" * len(header))
    worst: list[str] = []
    for name, program, fn in pass_rows():
        if only and name not in only:
            continue
        if program not in programs:
            programs[program] = [infer(build[program](n)) for n in (small, large)]
        a, b = measure(fn, programs[program], args.reps)
        growth = b / a
        ok = growth <= TARGET
        if not ok:
            worst.append(name)
        line = f"{name:<28}{program:<11}{a * 1e3:>10.1f}{b * 1e3:>11.1f}{growth:>8.1f}x   {'yes' if ok else 'NO '}"
        if args.calls:
            calls, where = call_growth(fn, programs[program])
            line += f"  {calls:5.1f}x {where}"
        print(line, flush=True)
    print()
    print("all passes grow linearly" if not worst else f"superlinear: {', '.join(worst)}")


if __name__ == "__main__":
    main()
