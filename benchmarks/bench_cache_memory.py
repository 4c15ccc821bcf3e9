"""Resident memory of a long notebook session: the JIT kernel cache must not grow without bound.

    python benchmarks/bench_cache_memory.py [--quick]

A student edits a constant in a cell and re-runs it, for an hour.  Each row builds and runs
a small program (dense + bias + relu, one fused kernel) many times through the public API
(``relay.build`` with the process-wide cache) and reports the growth of resident memory
(``/proc/self/statm``) from after the first build to after the last:

1. ``builds differing in one constant``: 2,000 builds (200 with ``--quick``); the target is
   growth <= 50 MB.  Constants are kernel arguments, so these compile once and then bind.
2. ``builds of distinct kernels``: the shape changes every build, so each one compiles
   (300 builds, 60 with ``--quick``), with the cache bounded to 4 MiB.  Evicted modules
   leave the JIT engine; what remains per compile (reported, no target) is memory no
   caller can give back: llvmlite's leak in its optimization pipeline and MCJIT's machine
   code (see ``relay_nb/backend/llvm/jit.py``).
3. ``KernelCache.clear()`` after row 2: the number of kernel modules (``fused_*``) in the
   JIT engine before and after (target: none remain, since no built module is alive).
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # run from a checkout without installing

import numpy as np  # noqa: E402

import relay_nb as relay  # noqa: E402
from relay_nb.backend.llvm.cache import default_cache  # noqa: E402
from relay_nb.backend.llvm.jit import module_names  # noqa: E402

PROGRAM = """
def @main(%x: Tensor[({n}, 16), float32], %w: Tensor[(16, 16), float32]) {{
  %0 = nn.dense(%x, %w);
  %1 = add(%0, {k}f);
  nn.relu(%1)
}}
"""


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def kernel_modules() -> int:
    return sum(name.startswith("fused_") for name in module_names())


def build_and_run(n: int, k: float) -> None:
    lib = relay.build(relay.parse(PROGRAM.format(n=n, k=k)))
    x = np.ones((n, 16), "float32")
    out = lib(x, np.eye(16, dtype="float32"))
    assert out[0, 0] == max(1.0 + k, 0.0)  # the constant really reached the kernel


def session(builds: int, vary_shape: bool) -> dict:
    """Builds one program ``builds`` times, changing the constant (or the shape)."""
    cache = default_cache()
    build_and_run(1, 0.5)  # the runtime and first kernel: not part of the growth
    gc.collect()
    before_stats, start_rss, start = cache.stats(), rss_mb(), time.perf_counter()
    for i in range(builds):
        build_and_run(2 + i if vary_shape else 1, 0.25 * i)
    gc.collect()
    after = cache.stats()
    return {
        "builds": builds,
        "compiles": after["compiles"] - before_stats["compiles"],
        "start": start_rss,
        "end": rss_mb(),
        "seconds": time.perf_counter() - start,
        "cache": cache.summary(),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    if not os.path.exists("/proc/self/statm"):
        sys.exit("needs /proc/self/statm (Linux) to read resident memory")
    cache = default_cache()
    cache.clear()

    rows = []
    r = session(200 if args.quick else 2000, vary_shape=False)
    growth = r["end"] - r["start"]
    rows.append(("builds differing in one constant", r, f"{growth:.1f} MB", "<= 50 MB", growth <= 50))

    cache.max_bytes = 4 * 2**20
    r = session(60 if args.quick else 300, vary_shape=True)
    per = (r["end"] - r["start"]) * 1024 / max(r["compiles"], 1)
    rows.append(("builds of distinct kernels (cache 4 MiB)", r, f"{per:.0f} KB/compile", "-", None))

    cached = rows[-1][1]["cache"]
    before = kernel_modules()
    cache.clear()
    after = kernel_modules()
    print(f"\n{'case':<42}{'builds':>7}{'compiles':>9}{'RSS start':>11}{'RSS end':>9}{'growth':>16}{'seconds':>9}  {'target':<9}met")
    for case, r, growth, target, met in rows:
        print(
            f"{case:<42}{r['builds']:>7}{r['compiles']:>9}{r['start']:>9.1f}MB{r['end']:>7.1f}MB{growth:>16}"
            f"{r['seconds']:>9.1f}  {target:<9}{'-' if met is None else 'yes' if met else 'NO'}"
        )
    print(f"{'KernelCache.clear(): kernel modules in JIT':<42}{before:>7} -> {after:<59}  {'0':<9}{'yes' if after == 0 else 'NO'}")
    print(f"({cached} before clear())")


if __name__ == "__main__":
    main()
