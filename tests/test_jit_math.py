"""The vectorized float32 transcendentals: accuracy in ulps against float64 references over
the whole float range (denormals, overflow, zero, infinities, NaN), and proof that they
compile to vector code rather than libm calls."""

from __future__ import annotations

import math

import numpy as np
import pytest

import relay_nb as relay
from relay_nb.backend.llvm.jit import vector_bits

# float64 references without scipy (not a dependency): libm's erf, and the logistic
# function in float64, where 1 + exp(-x) is exact enough for float32 ulps.
erf = np.frompyfunc(math.erf, 1, 1)


def expit(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))

X = np.concatenate(
    [
        np.linspace(-110, 100, 200001),
        np.linspace(-5, 5, 100001),
        np.geomspace(1e-44, 3e38, 50001),
        -np.geomspace(1e-44, 3e38, 50001),
        [0.0, -0.0, np.inf, -np.inf, np.nan, 88.72283, 88.7229, -87.33655, -103.97208],
    ]
).astype("float32")

# op -> (float64 reference, max error in float32 ulps)
REFERENCE = {
    "exp": (np.exp, 1.0),
    "log": (np.log, 1.0),
    "log2": (np.log2, 2.0),
    "log10": (np.log10, 2.0),
    "tanh": (np.tanh, 1.5),
    "sigmoid": (expit, 2.5),
    "erf": (erf, 2.5),
}


@pytest.mark.parametrize("op", sorted(REFERENCE))
def test_float32_transcendentals_are_accurate_to_a_few_ulps_everywhere(op):
    lib = relay.build(relay.parse(f"def @main(%x: Tensor[({len(X)},), float32]) {{ {op}(%x) }}"))
    assert_within_ulps(op, lib(X))


def assert_within_ulps(op: str, out: np.ndarray) -> None:
    """``out`` (``op`` on X) has NaNs and infinities where the float64 reference has them
    and is within the op's ulp bound of it everywhere else."""
    fn, bound = REFERENCE[op]
    with np.errstate(all="ignore"):
        ref64 = np.asarray(fn(X.astype(np.float64)), dtype=np.float64)
        ref32 = ref64.astype(np.float32)
    np.testing.assert_array_equal(np.isnan(out), np.isnan(ref32))
    inf = np.isinf(ref32)
    np.testing.assert_array_equal(out[inf], ref32[inf])
    finite = np.isfinite(ref32)
    assert np.isfinite(out[finite]).all()
    ulp = np.spacing(np.abs(ref32[finite])).astype(np.float64)
    err = np.abs(out[finite].astype(np.float64) - ref64[finite]) / ulp
    assert err.max() <= bound, (op, err.max(), X[finite][err.argmax()])


@pytest.mark.parametrize("op", sorted(REFERENCE))
def test_float32_transcendentals_vectorize_without_libm_calls(op):
    lib = relay.build(relay.parse(f"def @main(%x: Tensor[(256,), float32]) {{ {op}(%x) }}"))
    ir = lib.kernels[0].optimized_ir
    assert "x float>" in ir
    for libm in ("@expf", "@logf", "@tanhf", "@erff", "@llvm.exp.", "@llvm.log."):
        assert libm not in ir


def test_exp_keeps_denormal_results_and_overflows_to_infinity():
    x = np.array([-100.0, -103.9, -104.5, 88.72, 88.8, 1000.0], "float32")
    out = relay.build(relay.parse("def @main(%x: Tensor[(6,), float32]) { exp(%x) }"))(x)
    with np.errstate(over="ignore"):  # the reference overflows to inf, as it should
        expected = np.exp(x.astype(np.float64)).astype(np.float32)
    np.testing.assert_array_equal(out, expected)


@pytest.mark.skipif(vector_bits() < 512, reason="needs an AVX-512 host")
def test_loops_and_kernels_use_the_full_512_bit_vectors():
    """LLVM's tuning for recent Xeons prefers 256-bit vectors: without asking for 512, the
    vectorizer stops at 8 lanes and 16-lane vectors are split into two ymm halves."""
    lib = relay.build(relay.parse("def @main(%x: Tensor[(4096,), float32]) { multiply(%x, sigmoid(%x)) }"))
    k = lib.kernels[0]
    assert "<16 x float>" in k.optimized_ir and "zmm" in k.asm
    dw = relay.build(
        relay.parse(
            "def @main(%x: Tensor[(1, 8, 32, 32), float32], %w: Tensor[(8, 1, 3, 3), float32]) {"
            " nn.conv2d(%x, %w, padding=[1, 1, 1, 1], groups=8, channels=8, kernel_size=[3, 3]) }"
        )
    )
    assert "zmm" in dw.kernels[0].asm
