"""Interpreter benchmarks: Relay's reference interpreter against CPython and plain numpy.

    python benchmarks/bench_interp.py [--quick]

* scalar recursion (factorial, ackermann(2, n), building / mapping / summing a 10,000-element
  ADT list in Relay) against CPython running the same recursion in the same run
  (target: at most 5x CPython's time);
* a ResNet-style module with random weights against plain numpy calling the same op
  implementations in sequence (target: at most 1.2x).

Ratios are relay_nb / peer: below the target is good.  Times are wall-clock seconds per
call (``perf_counter``, on both sides: a thread-CPU clock would not count BLAS worker
threads), medians of alternating runs; the ratio is the median of the back-to-back pairs'
ratios, so a burst of load on a shared machine hits one pair, not the comparison.
OpenBLAS / OpenMP / MKL are pinned to one thread before numpy loads (``blas_threads.py``),
and the header shows the process's thread count after a BLAS product.
Both sides run with the garbage collector on, as a user's code does.  For the ADT list
(40,000 objects that stay alive while the list is built) the collector was a large part
of relay_nb's time; deep evaluations now raise its gen-0 threshold while they run
(relay_nb/eval/gcstate.py), and CPython's side keeps the default.
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(1, os.path.dirname(HERE))

import blas_threads  # noqa: E402,I001  (first: pins BLAS threads before numpy loads)

import argparse  # noqa: E402
import gc  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
from typing import Any, Callable  # noqa: E402

import numpy as np  # noqa: E402

import relay_nb as relay  # noqa: E402
from relay_nb.op.registry import get_column  # noqa: E402

RECURSION = """
type List[A] {
  Cons(A, List[A]),
  Nil,
}

def @fact(%n: int64) -> int64 {
  if (%n == 0i64) { 1i64 } else { %n * @fact(%n - 1i64) }
}

def @ackermann(%m: int32, %n: int32) -> int32 {
  if (%m == 0) { %n + 1 }
  else { if (%n == 0) { @ackermann(%m - 1, 1) }
  else { @ackermann(%m - 1, @ackermann(%m, %n - 1)) } }
}

def @range(%i: int32, %n: int32) -> List[int32] {
  if (%i == %n) { Nil } else { Cons(%i, @range(%i + 1, %n)) }
}

def @map_double(%l: List[int32]) -> List[int32] {
  match (%l) { Cons(%h, %t) => Cons(%h * 2, @map_double(%t)), Nil => Nil }
}

def @sum(%l: List[int32], %acc: int32) -> int32 {
  match (%l) { Cons(%h, %t) => @sum(%t, %acc + %h), Nil => %acc }
}

def @list_job(%n: int32) -> int32 { @sum(@map_double(@range(0, %n)), 0) }
"""


# The same programs in plain Python, as a CPython programmer would write them.
def py_fact(n: int) -> int:
    return 1 if n == 0 else n * py_fact(n - 1)


def py_ackermann(m: int, n: int) -> int:
    if m == 0:
        return n + 1
    if n == 0:
        return py_ackermann(m - 1, 1)
    return py_ackermann(m - 1, py_ackermann(m, n - 1))


def py_list_job(n: int) -> int:
    # Cons cells as tuples, built, mapped and summed with loops (CPython's recursion limit
    # would not allow a 10,000-deep recursive build).
    lst: Any = None
    for i in reversed(range(n)):
        lst = (i, lst)
    doubled: Any = None
    items = []
    while lst is not None:
        items.append(lst[0] * 2)
        lst = lst[1]
    for v in reversed(items):
        doubled = (v, doubled)
    total = 0
    while doubled is not None:
        total += doubled[0]
        doubled = doubled[1]
    return total


def median_time(fn: Callable[[], Any], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        gc.collect()
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def compare(ours: Callable[[], Any], peer: Callable[[], Any], repeat: int, min_seconds: float = 0.02) -> tuple[float, float, float]:
    """Median wall-clock seconds per call of ``ours`` and ``peer``, measured in alternation;
    each sample loops enough calls to last ``min_seconds``."""
    clock = time.perf_counter
    number = 1
    while True:
        t0 = clock()
        for _ in range(number):
            peer()
        if clock() - t0 >= min_seconds or number >= 1 << 20:
            break
        number *= 2
    ours(), peer()  # warm up: compile, allocate
    a, b = [], []
    for _ in range(repeat):
        for fn, out in ((ours, a), (peer, b)):
            gc.collect()
            t0 = clock()
            for _ in range(number):
                fn()
            out.append((clock() - t0) / number)
    # The ratio is the median of the back-to-back pairs' ratios: a burst of load on the
    # machine hits one pair, not the comparison.
    ratio = statistics.median(x / y for x, y in zip(a, b))
    return statistics.median(a), statistics.median(b), ratio


def resnet_block_module(channels: int = 64, size: int = 56, blocks: int = 3) -> tuple[str, list[str]]:
    """A ResNet stage: conv3x3-bn-relu-conv3x3-bn + residual + relu, ``blocks`` times."""
    params = [f"%data: Tensor[(1, {channels}, {size}, {size}), float32]"]
    body, names = [], ["data"]
    x, k = "%data", 0
    for b in range(blocks):
        skip = x
        for c in range(2):
            w = f"w{b}_{c}"
            params.append(f"%{w}: Tensor[({channels}, {channels}, 3, 3), float32]")
            names.append(w)
            body.append(f"  %{k} = nn.conv2d({x}, %{w}, padding=[1, 1, 1, 1], channels={channels}, kernel_size=[3, 3]);")
            bn = [f"g{b}_{c}", f"b{b}_{c}", f"m{b}_{c}", f"v{b}_{c}"]
            for p in bn:
                params.append(f"%{p}: Tensor[({channels}), float32]")
                names.append(p)
            body.append(f"  %{k + 1} = nn.batch_norm(%{k}, %{bn[0]}, %{bn[1]}, %{bn[2]}, %{bn[3]});")
            body.append(f"  %{k + 2} = %{k + 1}.0;")
            x, k = f"%{k + 2}", k + 3
            if c == 0:
                body.append(f"  %{k} = nn.relu({x});")
                x, k = f"%{k}", k + 1
        body.append(f"  %{k} = add({x}, {skip});")
        body.append(f"  %{k + 1} = nn.relu(%{k});")
        x, k = f"%{k + 1}", k + 2
    text = "def @main(" + ", ".join(params) + ") {\n" + "\n".join(body) + f"\n  {x}\n}}\n"
    return text, names


def numpy_resnet(mod: relay.IRModule, inputs: dict[str, np.ndarray]) -> Callable[[], Any]:
    """The same ops called in sequence through the impl column: no interpretation."""
    typed = relay.transform.InferType()(mod)
    impl = get_column("impl")
    steps = []
    from relay_nb.ir.expr import Call, TupleGetItem, Var

    for node in relay.ir.functor.post_order(typed["main"].body):
        if isinstance(node, (Call, TupleGetItem)):
            steps.append(node)

    def run() -> Any:
        env: dict = {}
        for p in typed["main"].params:
            env[p] = inputs[p.name_hint]
        for node in steps:
            if isinstance(node, TupleGetItem):
                env[node] = env[node.tuple_value][node.index]
            else:
                args = [env[a] for a in node.args]
                env[node] = impl[node.op.name](args, node.attrs, node._checked_type)
        return env[steps[-1]]

    assert isinstance(typed["main"].params[0], Var)
    return run


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    repeat = 5 if args.quick else 9
    print(f"relay_nb interpreter benchmark; python {sys.version.split()[0]}, {os.cpu_count()} cores")
    print(f"threads: {blas_threads.describe()}; times are wall-clock")
    mod = relay.parse(RECURSION)
    ex = relay.create_executor("interpreter", mod=mod)
    fact = ex.evaluate(mod.get_global_var("fact"))
    ack = ex.evaluate(mod.get_global_var("ackermann"))
    job = ex.evaluate(mod.get_global_var("list_job"))
    n_list = 2_000 if args.quick else 10_000
    ack_n = 4 if args.quick else 6
    assert int(fact(20)) == py_fact(20)
    assert int(ack(2, ack_n)) == py_ackermann(2, ack_n)
    assert int(job(n_list)) == py_list_job(n_list)
    rows = [
        ("factorial(20)", lambda: fact(20), lambda: py_fact(20)),
        (f"ackermann(2, {ack_n})", lambda: ack(2, ack_n), lambda: py_ackermann(2, ack_n)),
        (f"ADT list of {n_list:,}: build, map, sum", lambda: job(n_list), lambda: py_list_job(n_list)),
    ]
    print(f"\n{'case (wall-clock per call)':<40}{'relay_nb ms':>12}{'CPython ms':>12}{'ratio':>9}   target <= 5x")
    for name, ours, peer in rows:
        a, b, ratio = compare(ours, peer, repeat)
        print(f"{name:<40}{a * 1e3:>12.4f}{b * 1e3:>12.4f}{ratio:>8.1f}x")

    text, names = resnet_block_module(blocks=1 if args.quick else 3)
    rmod = relay.parse(text)
    rng = np.random.default_rng(0)
    typed = relay.transform.InferType()(rmod)
    inputs = {p.name_hint: rng.standard_normal(p.checked_type.concrete_shape).astype("float32") for p in typed["main"].params}
    for p in typed["main"].params:
        if p.name_hint.startswith("v"):
            inputs[p.name_hint] = np.abs(inputs[p.name_hint]) + 1
    f = relay.create_executor("interpreter", mod=rmod).evaluate()
    ordered = [inputs[n] for n in names]
    np_run = numpy_resnet(rmod, inputs)
    np.testing.assert_allclose(f(*ordered), np_run(), rtol=1e-4, atol=1e-4)
    a, b, ratio = compare(lambda: f(*ordered), np_run, repeat)
    print(f"\n{'case (wall-clock per call, 1 BLAS thread)':<44}{'relay_nb ms':>12}{'numpy ms':>12}{'ratio':>9}   target <= 1.2x")
    blocks = 1 if args.quick else 3
    print(f"{f'ResNet stage, {blocks} block' + ('s' if blocks > 1 else '') + ', 64ch 56x56':<44}{a * 1e3:>12.2f}{b * 1e3:>12.2f}{ratio:>8.2f}x")
    print(f"\nOS threads in this process at the end: {blas_threads.os_threads()}")


if __name__ == "__main__":
    main()
