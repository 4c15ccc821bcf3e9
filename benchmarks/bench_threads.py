"""Whole models on one thread and on every core: ``relay.build(mod, params, threads=N)``.

    python benchmarks/bench_threads.py [--repeat 12] [--quick]

ResNet-50 (1x3x224x224) and one BERT-base encoder layer (sequence 128, hidden 768), both
imported from ONNX (``bench_import.py``'s builders, random weights) and built for 1 thread
and for N threads (default: every core the process may run on); the two are called in
turn (interleaved, so both see the same machine load), and the table shows medians and
the speedup (target for ResNet-50 on 2 cores: >= 1.7x).  Each row also checks that both
builds return the same bits.

The machine's own parallelism is measured the same way as a control: the same single-
threaded kernel called on N Python threads at once (ctypes releases the GIL) against N
times in a row.  On a shared machine whose cores are busy with other processes this
control stays near 1x, and no split of one call can do better than it; the load average
is printed beside it.  ``--quick`` runs ResNet-50's first two stages only.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests"))
sys.path.insert(0, HERE)

import numpy as np  # noqa: E402

import relay_nb as relay  # noqa: E402
from relay_nb.backend.llvm.pool import available_cores  # noqa: E402


def _interleaved(fns: dict, repeat: int) -> dict:
    times: dict = {k: [] for k in fns}
    for _ in range(repeat):
        for k, fn in fns.items():
            start = time.perf_counter()
            fn()
            times[k].append(time.perf_counter() - start)
    return {k: statistics.median(v) for k, v in times.items()}


def _same_bits(a, b) -> bool:
    a = a if isinstance(a, tuple) else (a,)
    b = b if isinstance(b, tuple) else (b,)
    return all(x.tobytes() == y.tobytes() for x, y in zip(a, b))


def model_row(name: str, model, inputs: dict, threads: int, repeat: int) -> tuple:
    mod, params = relay.frontend.from_onnx(model)
    libs = {t: relay.build(mod, params=params, threads=t) for t in (1, threads)}
    names = [p.name_hint for p in libs[1].mod["main"].params]
    args = [inputs[n] for n in names]
    same = _same_bits(libs[1](*args), libs[threads](*args))
    med = _interleaved({t: (lambda lib=lib: lib(*args)) for t, lib in libs.items()}, repeat)
    return name, med[1], med[threads], same


def control_row(threads: int, repeat: int) -> tuple:
    """N independent single-threaded calls of one GEMM kernel: in a row vs on N threads."""
    text = "def @main(%x: Tensor[(512, 512), float32], %w: Tensor[(512, 512), float32]) { nn.dense(%x, %w) }"
    from relay_nb.backend.llvm.cache import KernelCache

    # one kernel object per thread: each keeps its own packing workspace
    kernels = [relay.build(relay.parse(text), threads=1, cache=KernelCache()).kernels[0] for _ in range(threads)]
    data = [[np.ones((512, 512), "float32")] * 2 for _ in range(threads)]

    def work(i: int) -> None:
        for _ in range(4):
            kernels[i](data[i], threads=1)

    def in_a_row() -> None:
        for i in range(threads):
            work(i)

    def at_once() -> None:
        ts = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()

    med = _interleaved({1: in_a_row, threads: at_once}, repeat)
    return f"control: {threads} independent GEMM calls, in a row vs at once", med[1], med[threads], True


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=12)
    ap.add_argument("--threads", type=int, default=available_cores())
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    import bench_import
    import onnx_models as M

    n = args.threads
    rng = np.random.default_rng(0)
    image = rng.standard_normal((1, 3, 224, 224)).astype("float32")
    resnet = bench_import.resnet50(stages=(3, 4) if args.quick else (3, 4, 6, 3))
    bert, _ = M.bert_layer(batch=1, seq=128, hidden=768, heads=12, vocab=30522, layers=1)
    ids = rng.integers(0, 30522, (1, 128)).astype("int64")
    rows = [control_row(n, args.repeat)]
    rows.append(model_row("ResNet-50" + (" (stages 1-2)" if args.quick else ""), resnet, {"input": image}, n, args.repeat))
    bert_inputs = {"input_ids": ids, "attention_mask": np.ones((1, 128), "int64")}
    rows.append(model_row("BERT-base layer (seq 128)", bert, bert_inputs, n, args.repeat))
    rows.append(control_row(n, args.repeat))
    print(f"{available_cores()} cores available; load average {os.getloadavg()[0]:.1f} at the end; medians of {args.repeat}")
    print(f"{'case':58} {'1 thread ms':>12} {f'{n} threads ms':>13} {'speedup':>8}  same bits")
    for name, one, many, same in rows:
        print(f"{name:58} {one * 1e3:12.1f} {many * 1e3:13.1f} {one / many:7.2f}x  {'yes' if same else 'NO'}")


if __name__ == "__main__":
    main()
