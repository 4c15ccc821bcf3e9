"""The JIT on `?` dimensions: one kernel compiled per argument shape, checked before each call."""

from __future__ import annotations

import numpy as np
import pytest

import relay_nb as relay
from relay_nb.backend.llvm.cache import KernelCache
from relay_nb.backend.llvm.specialize import SpecializingKernel

HEADER = '#[version = "0.0.5"]\n'

CHAIN = HEADER + """def @main(%x: Tensor[(?, 3), float32], %y: Tensor[(3), float32]) {
  %0 = exp(%x);
  %1 = add(%0, %y);
  nn.relu(%1)
}"""


def _chain(x, y):
    return np.maximum(np.exp(x.astype("float64")) + y, 0)


def test_each_shape_compiles_once_and_runs_natively():
    cache = KernelCache()
    lib = relay.build(relay.parse(CHAIN), cache=cache)
    (kernel,) = lib.kernels
    assert isinstance(kernel, SpecializingKernel)
    rng = np.random.default_rng(0)
    y = rng.standard_normal(3).astype("float32")
    for n in (2, 7, 2, 7, 0):
        x = rng.standard_normal((n, 3)).astype("float32")
        np.testing.assert_allclose(lib(x, y), _chain(x, y), rtol=2e-6, atol=1e-6)
    assert cache.stats()["compiles"] == 3  # n = 2, 7 and 0; the repeats hit
    assert [k.native for k in kernel.specialized.values()] == [True, True, True]
    report = lib.report()
    assert report.native_ops == ["add", "exp", "nn.relu"] and not report.fallback_ops
    assert "per shape: 3 of 3 native" in str(report)


def test_dynamic_dims_broadcast_by_their_run_time_sizes():
    mod = relay.parse(
        HEADER + "def @main(%a: Tensor[(?, 3), float32], %b: Tensor[(?, 3), float32]) {\n"
        "  multiply(%a, %b)\n}"
    )
    lib = relay.build(mod, cache=KernelCache())
    a = np.arange(6, dtype="float32").reshape(2, 3)
    np.testing.assert_array_equal(lib(a, np.full((1, 3), 2, "float32")), a * 2)
    np.testing.assert_array_equal(lib(a, a), a * a)
    with pytest.raises(relay.RelayError, match=r"for these argument shapes.*do not broadcast"):
        lib(a, np.ones((4, 3), "float32"))


def test_arguments_are_checked_before_a_native_call():
    lib = relay.build(relay.parse(CHAIN), cache=KernelCache())
    kernel = lib.kernels[0]
    y = np.zeros(3, "float32")
    with pytest.raises(relay.RelayError, match=r"expects Tensor\[\(\?, 3\), float32\], got an array of shape \(2, 4\)"):
        kernel([np.zeros((2, 4), "float32"), y])
    with pytest.raises(relay.RelayError, match="got an array of float64"):
        kernel([np.zeros((2, 3), "float64"), y])
    with pytest.raises(relay.RelayError, match="expects 2 arguments, got 1"):
        kernel([y])


def test_value_dependent_shapes_compile_for_each_value():
    """A dyn.* op becomes its static twin with the shape operand's values bound (TVM's
    DynamicToStatic): one native kernel per distinct value, the repeats hit the cache."""
    mod = relay.parse(
        HEADER + "def @main(%x: Tensor[(?, 3), float32], %s: Tensor[(2), int64]) {\n"
        "  dyn.reshape(exp(%x), %s)\n}"
    )
    cache = KernelCache()
    lib = relay.build(mod, cache=cache)
    x = np.arange(6, dtype="float32").reshape(2, 3)
    for shape in ((3, 2), (6, 1), (3, 2), (-1, 2)):
        out = lib(x, np.array(shape, "int64"))
        np.testing.assert_allclose(out, np.exp(x).reshape(shape), rtol=1e-6)
    (kernel,) = lib.kernels
    assert len(kernel.specialized) == 3 and all(k.native for k in kernel.specialized.values())
    assert cache.stats()["compiles"] == 3
    report = lib.report()
    assert report.native_ops == ["dyn.reshape", "exp"] and not report.fallback_ops
    assert "per value: 3 of 3 native" in str(report)
    with pytest.raises(relay.RelayError, match=r"for these argument values, reshape: cannot reshape 6 elements"):
        lib(x, np.array([4, 2], "int64"))


def test_shape_operands_computed_from_a_large_tensor_stay_on_numpy():
    """Specializing on the values of a big tensor would compile a kernel per data value."""
    mod = relay.parse(
        HEADER + "def @main(%x: Tensor[(2, 3), float32], %big: Tensor[(2000), int64]) {\n"
        "  %0 = strided_slice(%big, begin=[0], end=[2]);\n"
        "  dyn.reshape(exp(%x), %0)\n}"
    )
    lib = relay.build(mod, cache=KernelCache())
    x = np.arange(6, dtype="float32").reshape(2, 3)
    big = np.zeros(2000, "int64")
    big[:2] = (3, 2)
    np.testing.assert_allclose(lib(x, big), np.exp(x).reshape(3, 2), rtol=1e-6)
    assert "values are known only when the kernel is called" in lib.report().fallback_ops["dyn.reshape"]


def test_the_jit_executor_specializes_too():
    run = relay.create_executor("jit", mod=relay.parse(CHAIN)).evaluate()
    x = np.ones((4, 3), "float32")
    y = np.ones(3, "float32")
    np.testing.assert_allclose(run(x, y), _chain(x, y), rtol=2e-6)
