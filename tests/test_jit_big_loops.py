"""Flat result loops of 1 MB and more: peeled to the output's cache line and, with AVX-512,
interleaved four vectors a trip.  Both are code-shape choices, so the IR must show them
only where they apply, and the results must not depend on them."""

from __future__ import annotations

import numpy as np
import pytest

import relay_nb as relay
from relay_nb.backend.llvm.cache import KernelCache
from relay_nb.backend.llvm.codegen import math as jit_math
from relay_nb.backend.llvm.codegen.lower import PEEL_BYTES

GELU = "multiply(%x, sigmoid(multiply(%x, add(multiply(multiply(%x, %x), 0.0713548f), 1.59576912f))))"


def program(n: int) -> str:
    return f"def @main(%x: Tensor[({n}), float32]) {{ {GELU} }}"


def build(n: int, avx512: bool, monkeypatch):
    monkeypatch.setattr(jit_math, "has_avx512", lambda: avx512)
    lib = relay.build(relay.parse(program(n)), cache=KernelCache())
    monkeypatch.undo()
    return lib


@pytest.mark.parametrize("avx512", [False, True])
def test_a_big_loop_is_peeled_and_interleaved_only_with_avx512(avx512, monkeypatch):
    n = PEEL_BYTES // 4 + 7
    lib = build(n, avx512, monkeypatch)
    ir = lib.kernels[0].ir
    assert "peel" in ir
    assert ('!"llvm.loop.interleave.count", i32 4' in ir) == avx512
    x = (np.random.default_rng(1).standard_normal(n + 1).astype("float32") * 3)[1:]  # 4 bytes off
    expected = relay.create_executor("interpreter", mod=relay.parse(program(n))).evaluate()(x)
    np.testing.assert_allclose(lib(x), expected, rtol=1e-5, atol=1e-6)


def test_a_small_loop_is_left_to_llvm(monkeypatch):
    lib = build(1000, True, monkeypatch)
    ir = lib.kernels[0].ir
    assert "peel" not in ir and "llvm.loop.interleave.count" not in ir
