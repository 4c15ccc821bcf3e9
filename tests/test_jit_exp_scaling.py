"""The float32 exp's final ``y * 2^n``: one ``vscalefps`` (``llvm.ldexp``) with AVX-512,
two exact-then-rounding halves cut from the rounding constant's bits without it.  Both
round once, so they must agree bit for bit everywhere — denormal results, overflow,
infinities and NaN included — and the halves path (the one a CPU without AVX-512 runs)
must meet the same ulp bounds as the default one."""

from __future__ import annotations

import numpy as np
import pytest
from test_jit_math import X, assert_within_ulps

import relay_nb as relay
from relay_nb.backend.llvm.cache import KernelCache
from relay_nb.backend.llvm.codegen import math as jit_math


def build(op: str, n: int, avx512: bool, monkeypatch):
    monkeypatch.setattr(jit_math, "has_avx512", lambda: avx512)
    lib = relay.build(relay.parse(f"def @main(%x: Tensor[({n},), float32]) {{ {op}(%x) }}"), cache=KernelCache())
    monkeypatch.undo()
    return lib


@pytest.mark.parametrize("op", ["exp", "sigmoid", "tanh", "erf"])
def test_the_two_scalings_agree_bit_for_bit(op, monkeypatch):
    halves = build(op, len(X), False, monkeypatch)
    assert "llvm.ldexp" not in halves.kernels[0].optimized_ir
    out = halves(X)
    if not jit_math.has_avx512():
        pytest.skip("no AVX-512 on this host: the ldexp path is not built here")
    scalef = build(op, len(X), True, monkeypatch)
    assert "llvm.ldexp" in scalef.kernels[0].optimized_ir
    np.testing.assert_array_equal(scalef(X), out)


@pytest.mark.parametrize("op", ["exp", "sigmoid"])
def test_the_halves_path_meets_the_ulp_bounds(op, monkeypatch):
    assert_within_ulps(op, build(op, len(X), False, monkeypatch)(X))


def test_exp_edges_on_both_paths(monkeypatch):
    x = np.array([-np.inf, -1e30, -104.5, -103.9, -100.0, -87.4, 0.0, -0.0, 1.0, 88.72, 88.8, 1e30, np.inf, np.nan], "float32")
    with np.errstate(over="ignore"):
        expected = np.exp(x.astype(np.float64)).astype(np.float32)
    for avx512 in (False, True):
        if avx512 and not jit_math.has_avx512():
            continue
        out = build("exp", len(x), avx512, monkeypatch)(x)
        np.testing.assert_array_equal(out, expected)
