"""The kernel cache: re-running a program compiles nothing; changing one op recompiles
exactly the kernel it belongs to; names of parameters do not matter, types do."""

from __future__ import annotations

import numpy as np

import relay_nb as relay
from relay_nb.backend.llvm.cache import KernelCache
from relay_nb.backend.llvm.executor import JITExecutor

TWO_KERNELS = """
def @main(%x: Tensor[(8, 8), float32], %w: Tensor[(8, 8), float32]) {{
  %0 = exp(%x);
  %1 = multiply(%0, 2f);
  %2 = nn.dense(%1, %w);
  %3 = {op}(%2);
  sum(%3, axis=[1])
}}
"""


def run(text: str, cache: KernelCache):
    x = np.random.default_rng(0).standard_normal((8, 8)).astype("float32")
    ex = JITExecutor(relay.parse(text), cache=cache)
    return ex.evaluate()(x, x), ex


def test_second_run_compiles_nothing():
    cache = KernelCache()
    first, ex = run(TWO_KERNELS.format(op="tanh"), cache)
    assert cache.stats()["compiles"] == len(ex.kernels) == 3
    second, ex2 = run(TWO_KERNELS.format(op="tanh"), cache)  # a fresh parse of the same text
    stats = cache.stats()
    assert stats["compiles"] == 3 and stats["hits"] == 3
    assert [k is k2 for k, k2 in zip(ex.kernels, ex2.kernels)] == [True] * 3
    np.testing.assert_array_equal(first, second)


def test_one_changed_op_compiles_exactly_one_kernel():
    cache = KernelCache()
    run(TWO_KERNELS.format(op="tanh"), cache)
    before = cache.stats()["compiles"]
    _, ex = run(TWO_KERNELS.format(op="sigmoid"), cache)
    assert cache.stats()["compiles"] == before + 1
    assert cache.stats()["hits"] == 2
    assert "sigmoid" in ex.kernels[-1].ops or any("sigmoid" in k.ops for k in ex.kernels)


def test_parameter_names_do_not_matter_but_types_do():
    cache = KernelCache()
    a = relay.parse("def @main(%x: Tensor[(4,), float32]) { exp(%x) }")
    b = relay.parse("def @main(%renamed: Tensor[(4,), float32]) { exp(%renamed) }")
    c = relay.parse("def @main(%x: Tensor[(5,), float32]) { exp(%x) }")
    JITExecutor(a, cache=cache).evaluate()(np.ones(4, "float32"))
    JITExecutor(b, cache=cache).evaluate()(np.ones(4, "float32"))
    assert cache.stats()["compiles"] == 1
    JITExecutor(c, cache=cache).evaluate()(np.ones(5, "float32"))
    assert cache.stats()["compiles"] == 2


def test_constants_are_part_of_the_key():
    cache = KernelCache()
    for k in (2, 3, 2):
        out = JITExecutor(relay.parse(f"def @main(%x: Tensor[(3,), float32]) {{ multiply(%x, {k}f) }}"), cache=cache).evaluate()(
            np.ones(3, "float32")
        )
        assert out[0] == k
    assert cache.stats()["compiles"] == 2 and cache.stats()["hits"] == 1


def test_build_twice_with_the_default_cache_compiles_nothing_the_second_time():
    text = TWO_KERNELS.format(op="nn.relu")
    from relay_nb.backend.llvm.cache import default_cache

    relay.build(relay.parse(text))
    before = default_cache().stats()["compiles"]
    lib = relay.build(relay.parse(text))
    assert default_cache().stats()["compiles"] == before
    assert len(lib.kernels) == 3


def test_lookup_and_clear():
    cache = KernelCache()
    mod = relay.parse("def @main(%x: Tensor[(4,), float32]) { exp(%x) }")
    ex = JITExecutor(mod, cache=cache)
    ex.evaluate()(np.ones(4, "float32"))
    func = ex.kernels[0].func
    assert cache.lookup(func) is ex.kernels[0]
    cache.clear()
    assert cache.lookup(func) is None and cache.stats() == {"compiles": 0, "fallbacks": 0, "hits": 0, "kernels": 0}
