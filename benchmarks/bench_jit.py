"""JIT benchmarks: relay_nb's llvmlite kernels against numpy, the interpreter (and torch).

    python benchmarks/bench_jit.py [--quick]

One table of ratios, every peer measured in the same run, single-threaded throughout
(OpenBLAS / OpenMP / MKL pinned to one thread by ``blas_threads.py`` before numpy is imported;
the header prints the process's thread count after a BLAS product, to show it took):

1. fused elementwise chains on 10M float32 (``exp(x)*x + x*0.5 - 1`` and tanh-GELU as six
   ops ``x * sigmoid(x * (x*x*0.0713548 + 1.5957691))``), each with the result kept by the
   caller (a fresh output: first-touch page faults included) against numpy allocating as
   it does and ``np.copy``, and with the result dropped (our pooled output reused, warm)
   against numpy writing with ``out=`` and ``np.copyto`` (the same bytes moved: the
   memory-bandwidth bound).  numpy does the chain's 5 ops as 5 passes; for GELU, which
   has no numpy sigmoid, numpy gets its best formulation, 7 in-place passes;
2. dense 512x512x512 and batch-1 MLP layers (dense + bias + relu) against numpy ``@``;
3. conv2d ResNet layers (3x3 64->64 at 56x56, 1x1 256->64 at 56x56) against torch CPU if
   importable, else numpy im2col (``sliding_window_view`` + copy + ``@``);
4. a ResNet stage (3 blocks of conv-bn-relu-conv-bn + residual + relu, 64ch at 56x56) with
   random weights against the interpreter (and torch if importable);
5. compile latency per fused kernel (median over every kernel built above) and the number
   of compiles when the same modules are built again (the kernel cache).

Everything of ours runs through the public API (``relay.build(mod, threads=1)`` and calling it:
these rows measure one thread).
Times are wall-clock (``perf_counter``) medians of interleaved repeats (ours and the peer
alternate, so both see the same machine load). A ratio is the peer's time over ours:
above 1 we are faster.  ``--quick`` runs fewer repeats and a 1-block ResNet stage; the
elementwise rows stay at 10M elements, where every fresh array is a new mapping.
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(1, os.path.dirname(HERE))  # run from a checkout without installing

import blas_threads  # noqa: E402,I001  (first: pins BLAS threads before numpy and torch load)

import argparse  # noqa: E402
import gc  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from typing import Any, Callable, Optional  # noqa: E402

import numpy as np  # noqa: E402
from bench_interp import resnet_block_module  # noqa: E402
from numpy.lib.stride_tricks import sliding_window_view  # noqa: E402

import relay_nb as relay  # noqa: E402
from relay_nb.backend.llvm.cache import default_cache  # noqa: E402
from relay_nb.backend.llvm.jit import host_cpu  # noqa: E402
from relay_nb.backend.llvm.memory import release as release_result_pool  # noqa: E402

try:  # optional peer
    import torch  # noqa: E402

    torch.set_num_threads(1)
except ImportError:
    torch = None


@dataclass
class Row:
    case: str
    ours: float  # seconds
    peer_name: str
    peer: Optional[float]  # seconds
    target: str
    ratio: float
    met: bool


def interleaved(
    ours: Callable[[], Any],
    peer: Optional[Callable[[], Any]],
    repeat: int,
    between: Optional[Callable[[], Any]] = None,
) -> tuple[float, Optional[float]]:
    """Median wall-clock times (``perf_counter``) of ``ours`` and ``peer``, run alternately
    (who goes first alternates too, so neither always finds the other's data in cache) with
    the GC paused.  ``between``, if given, runs untimed before every timed call."""
    ours()
    if peer is not None:
        peer()
    times: dict = {ours: [], peer: []}
    gc.collect()
    gc.disable()
    try:
        for r in range(repeat):
            for fn in ((ours, peer) if r % 2 == 0 else (peer, ours)):
                if fn is None:
                    continue
                if between is not None:
                    between()
                t = time.perf_counter()
                fn()
                times[fn].append(time.perf_counter() - t)
    finally:
        gc.enable()
    return statistics.median(times[ours]), (statistics.median(times[peer]) if peer is not None else None)


def speed_row(case, ours, peer_name, peer, repeat, want: float, between=None) -> Row:
    """A row whose ratio is peer time / our time, met when >= ``want``."""
    a, b = interleaved(ours, peer, repeat, between)
    return Row(case, a, peer_name, b, f">= {want:g}x", b / a, b / a >= want)


def build(text: str, libs: list):
    """``relay.build`` of the program ``text``; remembers (module, lib) in ``libs``."""
    mod = relay.parse(text)
    lib = relay.build(mod, threads=1)
    libs.append((mod, lib))
    return lib


# --- 1. fused elementwise chains --------------------------------------------------------------

CHAIN = "subtract(add(multiply(exp(%x), %x), multiply(%x, 0.5f)), 1f)"
GELU = "multiply(%x, sigmoid(multiply(%x, add(multiply(multiply(%x, %x), 0.0713548f), 1.59576912f))))"


def elementwise_rows(n: int, repeat: int, libs: list) -> list[Row]:
    """Each chain twice, every peer on the same footing as our side:

    * result kept: the caller holds every result, so each call writes a fresh output and
      pays its first-touch page faults (our result pool has no free buffer; numpy
      allocates its result and temporaries, and ``np.copy`` its copy);
    * result dropped: the caller lets each result go, so our next call reuses the pooled
      buffer, warm; numpy writes into preallocated buffers with ``out=`` and
      ``np.copyto`` into a preallocated destination.

    Between timed calls (untimed) the kept results are dropped and the pool emptied, so
    memory stays bounded while every "kept" call still starts without a reusable buffer.
    At 10M float32 (40 MB) every fresh array is a new ``mmap`` on glibc (above its 32 MB
    largest ``malloc`` threshold), for numpy as for us.
    """
    x = np.random.default_rng(0).standard_normal(n).astype("float32") * 0.5
    t, o = np.empty_like(x), np.empty_like(x)
    half, one = np.float32(0.5), np.float32(1)
    c1, c2 = np.float32(0.0713548), np.float32(1.59576912)

    def chain_fresh():  # as written: 5 passes, a fresh result and 3 fresh temporaries
        return np.exp(x) * x + x * half - one

    def chain_out():  # the same 5 passes into two preallocated buffers
        np.exp(x, out=t)
        np.multiply(t, x, out=t)
        np.multiply(x, half, out=o)
        np.add(t, o, out=o)
        return np.subtract(o, one, out=o)

    def gelu(out):
        """numpy's best: 7 in-place passes.  numpy has no sigmoid, so x * sigmoid(z) is
        x / (1 + exp(-z)) with -z = x * (-c1 x^2 - c2) (written naively it is 9 passes)."""
        r = np.multiply(x, x, out=out)
        r *= -c1
        r -= c2
        r *= x
        np.exp(r, out=r)
        r += one
        return np.divide(x, r, out=r)

    kept: list = []

    def drop_kept():
        kept.clear()
        release_result_pool()

    def keep(fn):
        return lambda: kept.append(fn())

    rows = []
    cases = [  # (case, body, peer with a fresh result, peer writing with out=)
        ("exp(x)*x + x*0.5 - 1", CHAIN, ("numpy, 5 passes", chain_fresh), ("numpy out=, 5 passes", chain_out)),
        ("GELU, 6 ops", GELU, ("numpy best, 7 passes", lambda: gelu(None)), ("numpy out= best, 7 passes", lambda: gelu(t))),
    ]
    for name, body, (fresh_name, fresh), (out_name, preallocated) in cases:
        lib = build(f"def @main(%x: Tensor[({n}), float32]) {{ {body} }}", libs)
        np.testing.assert_allclose(lib(x), fresh(), rtol=2e-5, atol=2e-5)
        np.testing.assert_allclose(lib(x), preallocated(), rtol=2e-5, atol=2e-5)
        ours = lambda lib=lib: lib(x)  # noqa: E731
        head = f"{name}, {n / 1e6:g}M f32"
        rows.append(speed_row(f"{head}, result kept", keep(ours), fresh_name, keep(fresh), repeat, 4, drop_kept))
        rows.append(speed_row("  same, result dropped (pool reuse)", ours, out_name, preallocated, repeat, 4))
        rows.append(speed_row("  result kept, vs memory bandwidth", keep(ours), "np.copy", keep(lambda: np.copy(x)), repeat, 0.8, drop_kept))
        rows.append(speed_row("  result dropped, vs memory bandwidth", ours, "np.copyto", lambda: np.copyto(o, x), repeat, 0.8))
    drop_kept()
    return rows


# --- 2. dense and MLP layers ------------------------------------------------------------------


def dense_rows(repeat: int, libs: list) -> list[Row]:
    rng = np.random.default_rng(1)
    rows = []
    x = rng.standard_normal((512, 512)).astype("float32")
    w = rng.standard_normal((512, 512)).astype("float32")
    lib = build("def @main(%x: Tensor[(512, 512), float32], %w: Tensor[(512, 512), float32]) { nn.dense(%x, %w) }", libs)
    np.testing.assert_allclose(lib(x, w), x @ w.T, rtol=1e-4, atol=1e-3)
    row = speed_row("dense 512x512x512", lambda: lib(x, w), "numpy @", lambda: x @ w.T, repeat, 0.6)
    row.case += f" ({2 * 512**3 / row.ours / 1e9:.0f} vs {2 * 512**3 / row.peer / 1e9:.0f} GFLOP/s)"
    rows.append(row)
    for k, units in [(1024, 1024), (4096, 1024), (784, 512)]:
        x = rng.standard_normal((1, k)).astype("float32")
        w = (rng.standard_normal((units, k)) / np.sqrt(k)).astype("float32")
        bias = rng.standard_normal(units).astype("float32")
        lib = build(
            f"def @main(%x: Tensor[(1, {k}), float32], %w: Tensor[({units}, {k}), float32], "
            f"%b: Tensor[({units}), float32]) {{ nn.relu(nn.bias_add(nn.dense(%x, %w), %b)) }}",
            libs,
        )
        peer = lambda x=x, w=w, bias=bias: np.maximum(x @ w.T + bias, 0)  # noqa: E731
        np.testing.assert_allclose(lib(x, w, bias), peer(), rtol=1e-4, atol=1e-4)
        row = speed_row(f"MLP layer batch 1: {k}->{units} +bias+relu", lambda lib=lib, x=x, w=w, b=bias: lib(x, w, b), "numpy @", peer, repeat * 4, 0.6)
        (kernel,) = lib.report().kernels  # the fused kernel alone, without the executor's call path
        alone, _ = interleaved(lambda: kernel([x, w, bias]), None, repeat * 4)
        row.case += f" (kernel {alone * 1e3:.3f})"
        rows.append(row)
    return rows


# --- 3. conv2d layers -------------------------------------------------------------------------


def im2col_conv(x: np.ndarray, w: np.ndarray, pad: int) -> np.ndarray:
    """conv2d the numpy way: windows copied into an im2col matrix, one BLAS product."""
    o, c, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad))) if pad else x
    win = sliding_window_view(xp, (kh, kw), axis=(2, 3))  # n, c, oh, ow, kh, kw
    oh, ow = win.shape[2:4]
    col = np.ascontiguousarray(win[0].transpose(0, 3, 4, 1, 2)).reshape(c * kh * kw, oh * ow)
    return (w.reshape(o, -1) @ col).reshape(1, o, oh, ow)


def conv_rows(repeat: int, libs: list) -> list[Row]:
    rng = np.random.default_rng(2)
    rows = []
    for cin, cout, k, size in [(64, 64, 3, 56), (256, 64, 1, 56)]:
        pad = k // 2
        x = rng.standard_normal((1, cin, size, size)).astype("float32")
        w = (rng.standard_normal((cout, cin, k, k)) / np.sqrt(cin * k * k)).astype("float32")
        lib = build(
            f"def @main(%x: Tensor[(1, {cin}, {size}, {size}), float32], %w: Tensor[({cout}, {cin}, {k}, {k}), float32]) "
            f"{{ nn.conv2d(%x, %w, padding=[{pad}, {pad}, {pad}, {pad}], channels={cout}, kernel_size=[{k}, {k}]) }}",
            libs,
        )
        if torch is not None:
            tx, tw = torch.from_numpy(x), torch.from_numpy(w)
            peer_name = "torch CPU"

            def peer(tx=tx, tw=tw, pad=pad):
                with torch.no_grad():
                    return torch.nn.functional.conv2d(tx, tw, padding=pad)
        else:
            peer_name = "numpy im2col"
            peer = lambda x=x, w=w, pad=pad: im2col_conv(x, w, pad)  # noqa: E731
        np.testing.assert_allclose(lib(x, w), im2col_conv(x, w, pad), rtol=1e-3, atol=1e-3)
        row = speed_row(f"conv2d {k}x{k} {cin}->{cout} at {size}x{size}", lambda lib=lib, x=x, w=w: lib(x, w), peer_name, peer, repeat, 0.5)
        flops = 2 * cout * cin * k * k * size * size
        row.case += f" ({flops / row.ours / 1e9:.0f} vs {flops / row.peer / 1e9:.0f} GFLOP/s)"
        rows.append(row)
    return rows


# --- 4. a whole ResNet stage ------------------------------------------------------------------


def resnet_rows(blocks: int, repeat: int, libs: list) -> list[Row]:
    text, names = resnet_block_module(blocks=blocks)
    mod = relay.parse(text)
    typed = relay.transform.InferType()(mod)
    rng = np.random.default_rng(3)
    args = []
    for p in typed["main"].params:
        v = (rng.standard_normal(p.checked_type.concrete_shape) * 0.1).astype("float32")
        args.append(np.abs(v) + 1 if p.name_hint.startswith("v") else v)
    lib = relay.build(mod, threads=1)
    libs.append((mod, lib))
    interp = relay.create_executor("interpreter", mod=mod).evaluate()
    np.testing.assert_allclose(lib(*args), interp(*args), rtol=1e-4, atol=1e-4)
    case = f"ResNet stage: {blocks} block{'s' if blocks > 1 else ''}, 64ch 56x56"
    rows = [speed_row(case, lambda: lib(*args), "interpreter", lambda: interp(*args), repeat, 20)]
    if torch is not None:
        rows.append(speed_row("  same", lambda: lib(*args), "torch CPU", _torch_stage(names, args, blocks), repeat, 0.5))
    return rows


def _torch_stage(names: list[str], args: list[np.ndarray], blocks: int) -> Callable[[], Any]:
    t = {n: torch.from_numpy(a) for n, a in zip(names, args)}
    F = torch.nn.functional

    def run():
        with torch.no_grad():
            x = t["data"]
            for b in range(blocks):
                skip = x
                for c in range(2):
                    x = F.conv2d(x, t[f"w{b}_{c}"], padding=1)
                    x = F.batch_norm(x, t[f"m{b}_{c}"], t[f"v{b}_{c}"], t[f"g{b}_{c}"], t[f"b{b}_{c}"], eps=1e-5)
                    if c == 0:
                        x = F.relu(x)
                x = F.relu(x + skip)
            return x

    return run


# --- 5. compile latency and the cache -----------------------------------------------------------


def compile_rows(libs: list) -> list[Row]:
    # (a kernel bound to cached code with other constants compiled nothing: 0 s, left out)
    times = [k.compile_seconds for _, lib in libs for k in lib.report().kernels if k.native and k.compile_seconds > 0]
    median = statistics.median(times)
    rows = [Row(f"compile per fused kernel (median of {len(times)}, max {max(times) * 1e3:.0f} ms)", median, "-", None, "<= 30 ms", 0.0, median <= 0.030)]
    before = default_cache().stats()["compiles"]
    start = time.perf_counter()
    for mod, _ in libs:
        relay.build(mod, threads=1)
    seconds = time.perf_counter() - start
    compiles = default_cache().stats()["compiles"] - before
    rows.append(Row(f"build the same {len(libs)} modules again: {compiles} compiles", seconds, "-", None, "0 compiles", 0.0, compiles == 0))
    return rows


def print_table(rows: list[Row]) -> None:
    print(f"\n{'case (one thread, wall-clock)':<62}{'ours ms':>10}  {'peer':<26}{'peer ms':>10}{'ratio':>9}  {'target':<11}met")
    for r in rows:
        peer = f"{r.peer * 1e3:>10.3f}" if r.peer is not None else f"{'':>10}"
        ratio = f"{r.ratio:>8.2f}x" if r.peer is not None else f"{'':>9}"
        print(f"{r.case:<62}{r.ours * 1e3:>10.3f}  {r.peer_name:<26}{peer}{ratio}  {r.target:<11}{'yes' if r.met else 'NO'}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer repeats, a 1-block ResNet stage")
    args = ap.parse_args()
    repeat = 5 if args.quick else 11
    cpu = host_cpu()
    print(f"relay_nb JIT benchmark; {cpu['cpu']} ({cpu['triple']}), features: {', '.join(cpu['features'])}")
    print(f"threads: {blas_threads.describe()}; our kernels run on the calling thread")
    print(f"{os.cpu_count()} cores; torch: {'yes, set_num_threads(1)' if torch else 'not installed'}")
    libs: list = []
    rows = elementwise_rows(10_000_000, repeat, libs)
    rows += dense_rows(repeat, libs)
    rows += conv_rows(repeat, libs)
    rows += resnet_rows(1 if args.quick else 3, max(3, repeat // 3), libs)
    rows += compile_rows(libs)
    print_table(rows)
    print(f"\nOS threads in this process at the end: {blas_threads.os_threads()}")


if __name__ == "__main__":
    main()
