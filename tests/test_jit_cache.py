"""The kernel cache: re-running a program compiles nothing; changing one op recompiles
exactly the kernel it belongs to; names of parameters do not matter, types do."""

from __future__ import annotations

import gc

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


def test_constants_are_arguments_of_the_code_not_part_of_it():
    # Editing a constant in a cell compiles nothing: the compiled code takes constants as
    # arguments, and each function gets a kernel bound to its own values.
    cache = KernelCache()
    for k in (2, 3, 2):
        out = JITExecutor(relay.parse(f"def @main(%x: Tensor[(3,), float32]) {{ multiply(%x, {k}f) }}"), cache=cache).evaluate()(
            np.ones(3, "float32")
        )
        assert out[0] == k
    stats = cache.stats()
    assert (stats["compiles"], stats["rebinds"], stats["hits"], stats["kernels"]) == (1, 1, 1, 1)


def test_constant_values_dtypes_and_literals_reach_the_shared_code():
    cache = KernelCache()
    x = np.arange(4, dtype="int32")
    # an unsuffixed literal takes the dtype of its context (int32 here, float32 below)
    for text, want in [
        ("def @main(%x: Tensor[(4,), int32]) { add(%x, 7) }", x + 7),
        ("def @main(%x: Tensor[(4,), int32]) { add(%x, -3) }", x - 3),
    ]:
        got = JITExecutor(relay.parse(text), cache=cache).evaluate()(x)
        np.testing.assert_array_equal(got, want)
    assert cache.stats()["compiles"] == 1
    f = relay.parse("def @main(%x: Tensor[(4,), float32]) { add(%x, 7) }")
    got = JITExecutor(f, cache=cache).evaluate()(x.astype("float32"))
    np.testing.assert_array_equal(got, x + 7.0)
    assert cache.stats()["compiles"] == 2  # another dtype is another skeleton
    # a tensor constant and a shared constant used twice
    c = relay.const(np.array([1, 2, 3, 4], "float32"))
    p = relay.var("x", shape=(4,))
    g = relay.IRModule.from_expr(relay.Function([p], relay.multiply(relay.add(p, c), c)))
    got = JITExecutor(g, cache=cache).evaluate()(np.ones(4, "float32"))
    np.testing.assert_array_equal(got, (1 + c.data) * c.data)


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
    stats = cache.stats()
    assert cache.lookup(func) is None
    assert {k: stats[k] for k in ("compiles", "fallbacks", "hits", "rebinds", "kernels", "bytes")} == dict.fromkeys(
        ("compiles", "fallbacks", "hits", "rebinds", "kernels", "bytes"), 0
    )


def _distinct(i: int) -> str:
    # one skeleton per i: the shape is part of the code
    return f"def @main(%x: Tensor[({i + 1},), float32]) {{ tanh(exp(%x)) }}"


def _run_and_forget(cache: KernelCache, text: str) -> None:
    x = np.ones(relay.parse(text)["main"].params[0].type_annotation.shape, "float32")
    ex = JITExecutor(relay.parse(text), cache=cache)
    ex.evaluate()(x)


def test_the_cache_is_bounded_least_recently_used_first():
    cache = KernelCache()
    _run_and_forget(cache, _distinct(0))
    one = cache.stats()["bytes"]
    cache = KernelCache(max_bytes=int(2.5 * one))
    for i in range(6):
        _run_and_forget(cache, _distinct(i))
        if i == 3:
            _run_and_forget(cache, _distinct(2))  # touched: no longer the oldest
    stats = cache.stats()
    assert stats["kernels"] <= 3 and stats["evictions"] >= 3 and stats["bytes"] <= cache.max_bytes
    assert stats["compiles"] == 6
    _run_and_forget(cache, _distinct(5))  # the newest stayed
    assert cache.stats()["compiles"] == 6
    _run_and_forget(cache, _distinct(0))  # the oldest went
    assert cache.stats()["compiles"] == 7


def test_eviction_and_clear_release_compiled_code_but_not_code_in_use():
    from relay_nb.backend.llvm.jit import module_count

    cache = KernelCache(max_bytes=1)  # keeps only the newest entry
    gc.collect()  # earlier tests' dropped caches release their modules first
    start = module_count()
    _run_and_forget(cache, _distinct(10))
    _run_and_forget(cache, _distinct(11))
    _run_and_forget(cache, _distinct(12))
    # the two evicted modules left the engine once their executors were collected (an
    # executor and its interpreter form a reference cycle); the cached one is still there
    gc.collect()
    assert module_count() == start + 1
    lib = relay.build(relay.parse(_distinct(13)), cache=cache)  # held by the user
    gc.collect()
    assert module_count() == start + 1  # 12 evicted, 13 cached
    cache.clear()
    assert module_count() == start + 1  # lib's kernel is alive and keeps its code
    x = np.zeros(14, "float32")
    np.testing.assert_allclose(lib(x), np.tanh(np.exp(x)), rtol=1e-6)
    del lib
    cache.clear()
    assert module_count() == start


def test_report_shows_the_cache_size():
    cache = KernelCache(max_bytes=8 * 2**20)
    lib = relay.build(relay.parse(_distinct(20)), cache=cache)
    text = str(lib.report())
    assert "kernel cache: 1 kernels" in text and "of 8.0 MiB" in text


def test_fallback_kernels_run_their_own_constants():
    # A kernel with an op that has no lowering runs numpy on its own function; one that
    # differs only in a constant must not be served the other's fallback.
    from relay_nb.op.registry import OpPattern, register_op
    from relay_nb.typing.relations import identity_rel

    register_op("test.cache_square", 1, type_rel=identity_rel, pattern=OpPattern.ELEMWISE, impl=lambda args, attrs, ty: np.square(args[0]), override=True)
    cache = KernelCache()
    x = np.arange(3, dtype="float32")
    for k in (2, 3, 2):
        text = f"def @main(%x: Tensor[(3,), float32]) {{ multiply(test.cache_square(%x), {k}f) }}"
        ex = JITExecutor(relay.parse(text), cache=cache)
        np.testing.assert_array_equal(ex.evaluate()(x), x * x * k)
        assert not ex.kernels[0].native
    assert cache.stats()["fallbacks"] == 2 and cache.stats()["hits"] == 1


def test_lowering_the_bound_evicts_at_once():
    cache = KernelCache()
    for i in range(3):
        _run_and_forget(cache, _distinct(30 + i))
    assert cache.stats()["kernels"] == 3
    cache.max_bytes = 1
    assert cache.stats()["kernels"] == 1 and cache.stats()["evictions"] == 2
