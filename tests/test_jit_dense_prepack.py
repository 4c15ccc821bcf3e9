"""Constant dense / matmul weights (``relay.build(..., params=...)``) are packed into the
GEMM's B panels once, at build time, instead of by ``pack_b`` on every call.

The packed path must give bitwise the results of the per-call packing (the weight an
argument), the interpreter's within tolerance, and the same bits for every thread count;
odd column counts (a ragged last panel), several K slabs, and both weight layouts (dense's
``(N, K)``, matmul's ``(K, N)``); and the same from the disk cache in a warm build.
"""

from __future__ import annotations

import numpy as np
import pytest

import relay_nb as relay
from relay_nb.backend.llvm.kernels.prepack import PanelsB

RNG = np.random.default_rng(11)

# (rows of x, K, N): N = 45 is a ragged panel, K = 600 three K slabs, 70 rows two row blocks
SHAPES = [(37, 24, 45), (70, 600, 130), (64, 768, 96)]


def _module(op: str, m: int, k: int, n: int):
    x = relay.var("x", shape=(m, k))
    b = relay.var("b", shape=(n,))
    if op == "dense":
        w = relay.var("w", shape=(n, k))
        y = relay.nn.dense(x, w)
    elif op == "matmul":
        w = relay.var("w", shape=(k, n))
        y = relay.nn.matmul(x, w)
    else:  # matmul of a transposed weight, as dense
        w = relay.var("w", shape=(n, k))
        y = relay.nn.matmul(x, w, transpose_b=True)
    y = relay.nn.relu(relay.add(y, b))
    return relay.IRModule.from_expr(relay.Function([x, w, b], y)), tuple(int(d) for d in w.type_annotation.shape)


def _gemm_kernel(lib):
    (k,) = [k for k in lib.kernels if {"nn.dense", "nn.matmul"} & set(k.ops)]
    return k


@pytest.mark.parametrize("op", ["dense", "matmul", "matmul_tb"])
@pytest.mark.parametrize("m,k,n", SHAPES)
def test_constant_weights_are_packed_once_with_the_same_bits(op, m, k, n):
    mod, w_shape = _module(op, m, k, n)
    x = RNG.standard_normal((m, k)).astype("float32")
    w = RNG.standard_normal(w_shape).astype("float32")
    b = RNG.standard_normal(n).astype("float32")
    per_call = relay.build(mod, threads=1)
    packed = relay.build(mod, params={"w": w}, threads=1)
    kern = _gemm_kernel(packed)
    assert "relay_nb_pack_b_float32" in _gemm_kernel(per_call).ir
    assert "relay_nb_pack_b_float32" not in kern.ir and "relay_nb_tiled_block_float32" in kern.ir
    (panels,) = [c for c in kern._constants if c.size != b.size]
    assert panels.size == -(-n // 32) * 32 * k or panels.size == -(-n // 16) * 16 * k  # N in whole panels
    assert panels.ctypes.data % 64 == 0  # the macro-kernel reads B panels with aligned loads
    got = packed(x, b)
    assert got.tobytes() == per_call(x, w, b).tobytes()
    want = relay.create_executor("interpreter", mod=mod).evaluate()(x, w, b)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    for t in (2, 3):
        assert relay.build(mod, params={"w": w}, threads=t)(x, b).tobytes() == got.tobytes()


@pytest.mark.parametrize("k,n,kc,nr,transposed", [(5, 7, 3, 4, False), (9, 12, 4, 4, True), (11, 5, 11, 8, True), (4, 1, 2, 4, False)])
def test_panels_follow_the_documented_layout(k, n, kc, nr, transposed):
    """packed[slab pc][panel p][k < kc][j < NR] = B[pc + k][p*NR + j], columns >= N
    repeating N - 1, element by element."""
    pack = PanelsB(k, n, kc, nr, transposed)
    bmat = RNG.standard_normal((k, n)).astype("float32")
    stored = np.ascontiguousarray(bmat.T) if transposed else bmat
    got = pack(stored)
    want = []
    for pc in range(0, k, kc):
        for p in range(pack.np // nr):
            for kk in range(min(kc, k - pc)):
                want += [bmat[pc + kk, min(p * nr + j, n - 1)] for j in range(nr)]
    assert got.tobytes() == np.array(want, "float32").tobytes()


WORKER = """
import json, numpy as np, relay_nb as relay
rng = np.random.default_rng(3)
x = relay.var("x", shape=(70, 600)); w = relay.var("w", shape=(130, 600)); b = relay.var("b", shape=(130,))
mod = relay.IRModule.from_expr(relay.Function([x, w, b], relay.nn.relu(relay.add(relay.nn.dense(x, w), b))))
xv, wv, bv = (rng.standard_normal(s).astype("float32") for s in ((70, 600), (130, 600), (130,)))
lib = relay.build(mod, params={"w": wv})
(k,) = [k for k in lib.kernels if "nn.dense" in k.ops]
(panels,) = [c for c in k._constants if c.size != 130]
print(json.dumps({"out": lib(xv, bv).tobytes().hex(), "from_disk": k.from_disk,
                  "panels": [int(panels.size), int(panels.ctypes.data % 64)]}))
"""


def test_a_warm_build_from_the_disk_cache_reads_the_same_panels(tmp_path):
    import json
    import os
    import subprocess
    import sys

    env = dict(os.environ, RELAY_NB_CACHE_DIR=str(tmp_path))
    runs = [subprocess.run([sys.executable, "-c", WORKER], env=env, capture_output=True, text=True, timeout=600) for _ in range(2)]
    cold, warm = (json.loads(r.stdout.strip().splitlines()[-1]) for r in runs)
    assert not cold["from_disk"] and warm["from_disk"]  # the second process loads the kernel
    assert warm["panels"] == cold["panels"] == [160 * 600, 0]  # packed again from the entry's layout, aligned
    assert warm["out"] == cold["out"]
