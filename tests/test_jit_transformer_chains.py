"""The elementwise chains of transformer models at vector speed: a matmul's bias + GELU seen
through a reshape, LayerNorm's ``power(d, 2f)`` and GPT-2's ``power(x, 3f)``.  Each fast
path is checked in the optimized IR (vector code, no libm call per element) and against
the interpreter, including odd sizes and 1 vs 2 threads bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

import relay_nb as relay

RNG = np.random.default_rng(3)


def _rand(*shape):
    return (RNG.standard_normal(shape) * 2).astype("float32")


def _check(text: str, *args, rtol=2e-6, atol=1e-6):
    """Build ``text`` for 1 and 2 threads: both equal bitwise, and the interpreter's result
    within float tolerance.  Returns the one-thread module."""
    mod = relay.parse(text)
    want = relay.create_executor("interpreter", mod=mod).evaluate()(*args)
    one, two = (relay.build(mod, threads=t) for t in (1, 2))
    got = one(*args)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)
    assert two(*args).tobytes() == got.tobytes()
    return one


def _vectorized(lib) -> bool:
    return any(" x float>" in k.optimized_ir for k in lib.kernels)


ERF_GELU = """def @main(%x: Tensor[({m}, {n}), float32], %b: Tensor[({n}), float32]) {{
  %0 = reshape(%x, newshape=[1, {m}, {n}]);
  %1 = add(%0, %b);
  %2 = erf(divide(%1, 1.41421f));
  %3 = multiply(multiply(%1, add(%2, 1f)), 0.5f);
  reshape(%3, newshape=[-1, {n}])
}}"""


@pytest.mark.parametrize("m, n", [(128, 768), (7, 301), (3, 5)])
def test_a_bias_and_erf_gelu_behind_a_reshape_vectorizes(m, n):
    # the reshape's coordinates used to be re-derived from the flat offset with a division
    # and a remainder per element: no vector code, 14x slower
    lib = _check(ERF_GELU.format(m=m, n=n), _rand(m, n), _rand(n))
    if n >= 256:
        assert _vectorized(lib)
        body = lib.kernels[0].optimized_ir.split("vector.body:", 1)[1].split("\n\n", 1)[0]
        assert "urem" not in body and "udiv" not in body


@pytest.mark.parametrize(
    "src, mid, bias",
    [
        ((6, 300), (2, 3, 300), (300,)),  # split the leading axis
        ((2, 3, 300), (6, 300), (300,)),  # merge it
        ((4, 6, 10), (4, 60), (60,)),  # merge the trailing axes
        ((4, 60), (4, 6, 10), (6, 1)),  # split them, a broadcast on the middle axis
        ((1, 5, 1, 7), (5, 7, 1), (7, 1)),  # unit axes moved around
        ((2, 3, 4, 5), (6, 20), (20,)),  # no axis in common
        ((12, 35), (3, 4, 5, 7), (4, 1, 7)),  # every axis regrouped
    ],
)
def test_a_reshape_under_a_broadcast_reads_the_right_elements(src, mid, bias):
    text = f"""def @main(%x: Tensor[{src}, float32], %b: Tensor[{bias}, float32]) {{
      %0 = reshape(%x, newshape={list(mid)});
      %1 = add(%0, %b);
      reshape(tanh(%1), newshape={list(src)})
    }}"""
    _check(text, _rand(*src), _rand(*bias))


@pytest.mark.parametrize("exponent", [2, 3, 4])  # power(x, 1f) is simplified away before
def test_power_by_a_small_constant_integer_multiplies(exponent):
    text = f"def @main(%x: Tensor[(5, 301), float32]) {{ power(%x, {exponent}f) }}"
    x = _rand(5, 301)
    x[0, :6] = [np.nan, np.inf, -np.inf, 0.0, -0.0, 3e38]  # NaN, infinities, signed zeros, overflow
    lib = _check(text, x, rtol=1e-6)
    ir = lib.kernels[0].optimized_ir
    assert "llvm.pow" not in ir and "powf" not in ir
    assert _vectorized(lib)
    got = lib(x)
    assert np.signbit(got[0, 4]) == (exponent % 2 == 1)


@pytest.mark.parametrize("exponent", ["2.5f", "-2f", "0f"])
def test_power_by_other_constants_calls_pow(exponent):
    text = f"def @main(%x: Tensor[(4, 33), float32]) {{ power(abs(%x), {exponent}) }}"
    lib = _check(text, _rand(4, 33), rtol=1e-6)
    assert "pow" in lib.kernels[0].optimized_ir


def test_layer_norm_variance_and_gpt2_gelu_match_the_interpreter():
    text = """def @main(%x: Tensor[(1, 9, 768), float32], %b: Tensor[(768), float32]) {
      %0 = subtract(%x, mean(%x, axis=[-1], keepdims=True));
      %1 = mean(power(%0, 2f), axis=[-1], keepdims=True);
      %2 = divide(%0, sqrt(add(%1, 1e-5f)));
      %3 = add(%2, %b);
      %4 = multiply(add(%3, multiply(power(%3, 3f), 0.044715f)), 0.797885f);
      multiply(multiply(%3, 0.5f), add(tanh(%4), 1f))
    }"""
    lib = _check(text, _rand(1, 9, 768), _rand(768), rtol=1e-5, atol=1e-5)
    assert not any("llvm.pow" in k.optimized_ir for k in lib.kernels)


def test_kernels_differing_only_in_a_compiled_in_exponent_are_not_shared():
    # the exponent of power(x, 2f) is compiled in (multiplies), so it keys the kernel
    # cache: power(x, 3f) built next must not reuse x*x; other exponents stay arguments
    x = np.array([-np.inf, -2.0, 3.0, 1.5], "float32")
    for e in ["2f", "3f", "2.5f", "3.5f", "4f", "2f"]:
        lib = relay.build(relay.parse(f"def @main(%x: Tensor[(4), float32]) {{ power(%x, {e}) }}"))
        with np.errstate(invalid="ignore"):  # a negative base to 2.5 is NaN
            want = np.power(x, np.float32(e[:-1]))
        np.testing.assert_allclose(lib(x), want, rtol=1e-6)
