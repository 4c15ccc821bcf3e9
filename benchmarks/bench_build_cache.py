"""Cold and warm ``relay.build`` of ResNet-50, each in a fresh process (targets: cold <= 3 s,
warm <= 0.3 s; issue 14 §3).

    python benchmarks/bench_build_cache.py [--repeat 5] [--model resnet50|bert_base]

The model is ``bench_import.py``'s ONNX graph (random weights) through
``relay.frontend.from_onnx``; the time is ``relay.build(mod, params=params)`` alone (import
and ONNX conversion are not counted; ``relay.build``'s own lazy imports are), wall clock and
process CPU time.  *Cold* runs start with an empty ``RELAY_NB_CACHE_DIR``; *warm* runs
start with the directory the cold run filled, so every kernel comes from the disk cache.
Cold and warm runs alternate; medians are printed with the load average, since on a
shared machine the wall clock mostly measures the neighbours (CPU time much less so).
Python byte-code caching is switched on for the child processes (as in an installed
package) when the environment turned it off.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

CHILD = """
import json, sys, time
sys.path[:0] = [{here!r}, {root!r}]
import bench_import
import relay_nb as relay
mod, params = relay.frontend.from_onnx(getattr(bench_import, {model!r})())
wall, cpu = time.perf_counter(), time.process_time()
lib = relay.build(mod, params=params)
wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
print(json.dumps({{"wall": wall, "cpu": cpu, "kernels": len(lib.kernels),
                  "from_disk": sum(k.from_disk for k in lib.kernels)}}))
"""


def run(model: str, cache: str, pycache: str) -> dict:
    env = dict(os.environ, RELAY_NB_CACHE_DIR=cache, PYTHONPATH=ROOT)
    if env.pop("PYTHONDONTWRITEBYTECODE", None):
        env["PYTHONPYCACHEPREFIX"] = pycache
    code = CHILD.format(here=HERE, root=ROOT, model=model)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--model", default="resnet50")
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="relay_nb_bench_cache_")
    pycache = os.path.join(work, "pycache")
    try:
        run(args.model, os.path.join(work, "warmup"), pycache)  # byte code, page cache
        cold, warm = [], []
        for i in range(args.repeat):
            cache = os.path.join(work, f"c{i}")
            cold.append(run(args.model, cache, pycache))
            warm.append(run(args.model, cache, pycache))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    n = cold[0]["kernels"]
    print(f"{args.model}: relay.build in a fresh process, median of {args.repeat} ({os.cpu_count()} cores, load {load:.1f})")
    print(f"{'':6} {'wall s':>8} {'cpu s':>8} {'from disk':>10}  target")
    for name, rows, target in (("cold", cold, 3.0), ("warm", warm, 0.3)):
        wall = statistics.median(r["wall"] for r in rows)
        cpu = statistics.median(r["cpu"] for r in rows)
        disk = statistics.median(r["from_disk"] for r in rows)
        print(f"{name:6} {wall:8.3f} {cpu:8.3f} {disk:>5.0f}/{n:<4d}  <= {target} s")


if __name__ == "__main__":
    main()
