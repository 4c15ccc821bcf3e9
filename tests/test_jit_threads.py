"""Kernels split across threads: same bits for every thread count, a pool that survives
errors and Ctrl-C, and no thread left at exit."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from interrupts import ctrl_c_soon

import relay_nb as relay
from relay_nb.backend.llvm import pool

RNG = np.random.default_rng(0)


def _rand(*shape, dtype="float32"):
    return RNG.standard_normal(shape).astype(dtype)


def _same_for_thread_counts(text: str, *args, params=None):
    """Build ``text`` for 1, 2 and 3 threads; every result is bitwise the first's.
    Returns the built modules (the threaded ones must really have split a kernel)."""
    mod = relay.parse(text)
    libs = {t: relay.build(mod, params=params, threads=t) for t in (1, 2, 3)}
    want = libs[1](*args)
    for t in (2, 3):
        got = libs[t](*args)
        np.testing.assert_array_equal(got, want, strict=True)
        assert got.tobytes() == want.tobytes()
    return libs


def _split_kernels(lib, threads: int) -> list:
    return [k for k in lib.kernels if k.native and k.chunks(threads) > 1]


# -- elementwise -----------------------------------------------------------------------------


def test_a_big_elementwise_chain_splits_and_gives_the_same_bits():
    # 1M + 37 floats: the peeled flat loop, chunk edges not at the end of the array
    n = (1 << 20) + 37
    libs = _same_for_thread_counts(
        f"def @main(%x: Tensor[({n}), float32], %y: Tensor[({n}), float32]) {{ tanh(exp(multiply(%x, %y))) }}",
        _rand(n),
        _rand(n),
    )
    assert _split_kernels(libs[2], 2) and not _split_kernels(libs[1], 1)


def test_a_broadcasting_nest_splits_by_rows():
    libs = _same_for_thread_counts(
        "def @main(%x: Tensor[(3, 700, 301), float32], %b: Tensor[(700, 1), float32]) { sigmoid(add(%x, %b)) }",
        _rand(3, 700, 301),
        _rand(700, 1),
    )
    assert _split_kernels(libs[3], 3)


def test_small_kernels_run_whole():
    lib = relay.build(relay.parse("def @main(%x: Tensor[(1000), float32]) { exp(%x) }"), threads=2)
    x = _rand(1000)
    np.testing.assert_allclose(lib(x), np.exp(x), rtol=1e-6)
    assert lib.kernels[0].chunks(2) == 1


# -- GEMM and conv ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, shapes",
    [
        # columns shared (wide images), the epilogue fused
        (
            "def @main(%x: Tensor[(1, 32, 40, 40), float32], %w: Tensor[(48, 32, 3, 3), float32],"
            " %b: Tensor[(48, 1, 1), float32]) { nn.relu(add(nn.conv2d(%x, %w, padding=[1, 1, 1, 1]), %b)) }",
            [(1, 32, 40, 40), (48, 32, 3, 3), (48, 1, 1)],
        ),
        # rows shared (many channels, a small image), strided
        (
            "def @main(%x: Tensor[(1, 256, 9, 9), float32], %w: Tensor[(512, 256, 3, 3), float32])"
            " { nn.conv2d(%x, %w, strides=[2, 2], padding=[1, 1, 1, 1]) }",
            [(1, 256, 9, 9), (512, 256, 3, 3)],
        ),
        # a 1 x 1 conv on a small image (a plain GEMM of the image's matrix), odd sizes
        (
            "def @main(%x: Tensor[(1, 300, 13, 13), float32], %w: Tensor[(260, 300, 1, 1), float32],"
            " %b: Tensor[(260, 1, 1), float32]) { nn.relu(add(nn.conv2d(%x, %w), %b)) }",
            [(1, 300, 13, 13), (260, 300, 1, 1), (260, 1, 1)],
        ),
        # whole groups shared: depthwise, two images (a chunk may start mid-image)
        (
            "def @main(%x: Tensor[(2, 45, 60, 60), float32], %w: Tensor[(45, 1, 3, 3), float32])"
            " { nn.conv2d(%x, %w, padding=[1, 1, 1, 1], groups=45) }",
            [(2, 45, 60, 60), (45, 1, 3, 3)],
        ),
        (
            "def @main(%x: Tensor[(100, 300), float32], %w: Tensor[(1000, 300), float32]) { nn.dense(%x, %w) }",
            [(100, 300), (1000, 300)],
        ),
        (
            "def @main(%x: Tensor[(12, 100, 64), float32], %w: Tensor[(12, 100, 64), float32])"
            " { nn.softmax(nn.batch_matmul(%x, %w)) }",
            [(12, 100, 64), (12, 100, 64)],
        ),
        # few rows: B streamed unpacked (dot, axpy), columns or batch entries shared
        (
            "def @main(%x: Tensor[(1, 2048), float32], %w: Tensor[(1001, 2048), float32], %b: Tensor[(1001), float32])"
            " { add(nn.dense(%x, %w), %b) }",
            [(1, 2048), (1001, 2048), (1001,)],
        ),
        (
            "def @main(%x: Tensor[(5, 1024), float32], %w: Tensor[(1024, 2001), float32]) { nn.matmul(%x, %w) }",
            [(5, 1024), (1024, 2001)],
        ),
        (
            "def @main(%x: Tensor[(8, 3, 256), float32], %w: Tensor[(8, 1024, 256), float32]) { nn.batch_matmul(%x, %w) }",
            [(8, 3, 256), (8, 1024, 256)],
        ),
    ],
    ids=["conv-columns", "conv-rows", "conv-1x1", "depthwise-batch", "dense", "batch-matmul-softmax", "dense-one-row", "matmul-few-rows", "batch-matmul-few-rows"],
)
def test_gemm_and_conv_give_the_same_bits_for_every_thread_count(text, shapes):
    libs = _same_for_thread_counts(text, *[_rand(*s) for s in shapes])
    assert _split_kernels(libs[2], 2)


@pytest.mark.parametrize(
    "text, shapes, reference",
    [
        # batch-1 dense (the unpacked "dot" kernel), odd sizes, a fused bias + sigmoid
        (
            "def @main(%x: Tensor[(1, 511), float32], %w: Tensor[(2013, 511), float32],"
            " %b: Tensor[(2013), float32]) { sigmoid(add(nn.dense(%x, %w), %b)) }",
            [(1, 511), (2013, 511), (2013,)],
            lambda x, w, b: 1 / (1 + np.exp(-(x @ w.T + b))),
        ),
        # five rows: a 4-row tile and a lone row, each chunk's epilogue row by row
        (
            "def @main(%x: Tensor[(5, 300), float32], %w: Tensor[(3001, 300), float32],"
            " %c: Tensor[(5, 3001), float32]) { add(nn.dense(%x, %w), %c) }",
            [(5, 300), (3001, 300), (5, 3001)],
            lambda x, w, c: x @ w.T + c,
        ),
        # B's rows contiguous (the "axpy" kernel): chunks end inside its 64-column tiles
        (
            "def @main(%x: Tensor[(3, 401), float32], %w: Tensor[(401, 2021), float32]) { nn.matmul(%x, %w) }",
            [(3, 401), (401, 2021)],
            lambda x, w: x @ w,
        ),
    ],
    ids=["dense-batch-1", "dense-5-rows", "matmul-3-rows"],
)
def test_few_row_gemms_split_their_columns_with_the_same_bits(text, shapes, reference):
    args = [_rand(*s) for s in shapes]
    libs = _same_for_thread_counts(text, *args)
    assert _split_kernels(libs[2], 2) and not _split_kernels(libs[1], 1)
    np.testing.assert_allclose(libs[2](*args), reference(*args), rtol=1e-4, atol=1e-4)


def test_a_conv_net_gives_the_same_bits_for_every_thread_count():
    mod, params = relay.testing.resnet.get_workload(num_layers=18, batch_size=1, image_shape=(3, 64, 64))
    x = _rand(1, 3, 64, 64)
    libs = {t: relay.build(mod, params=params, threads=t) for t in (1, 2)}
    assert libs[1](x).tobytes() == libs[2](x).tobytes()
    assert len(_split_kernels(libs[2], 2)) > 5


# -- reductions, softmax, norms, pooling -----------------------------------------------------


@pytest.mark.parametrize(
    "text, shapes",
    [
        ("def @main(%x: Tensor[(300, 2001), float32]) { sum(%x, axis=[1]) }", [(300, 2001)]),
        ("def @main(%x: Tensor[(40, 500, 33), float32]) { mean(%x, axis=[1]) }", [(40, 500, 33)]),
        ("def @main(%x: Tensor[(1, 512, 28, 28), float32]) { nn.global_avg_pool2d(%x) }", [(1, 512, 28, 28)]),
        ("def @main(%x: Tensor[(300, 1001), float32]) { nn.softmax(%x) }", [(300, 1001)]),
        ("def @main(%x: Tensor[(40, 301, 31), float32]) { nn.log_softmax(%x, axis=1) }", [(40, 301, 31)]),
        (
            "def @main(%x: Tensor[(1, 128, 768), float32], %g: Tensor[(768), float32], %b: Tensor[(768), float32])"
            " { nn.layer_norm(%x, %g, %b, axis=-1) }",
            [(1, 128, 768), (768,), (768,)],
        ),
        (
            "def @main(%x: Tensor[(1, 64, 112, 112), float32])"
            " { nn.max_pool2d(%x, pool_size=[3, 3], strides=[2, 2], padding=[1, 1, 1, 1]) }",
            [(1, 64, 112, 112)],
        ),
        (
            "def @main(%x: Tensor[(2, 64, 81, 81), float32]) { nn.avg_pool2d(%x, pool_size=[2, 2], strides=[2, 2]) }",
            [(2, 64, 81, 81)],
        ),
    ],
    ids=["sum-rows", "mean-middle", "global-avg-pool", "softmax", "log-softmax-middle", "layer-norm", "max-pool", "avg-pool"],
)
def test_reductions_and_pools_give_the_same_bits_for_every_thread_count(text, shapes):
    libs = _same_for_thread_counts(text, *[_rand(*s) for s in shapes])
    assert _split_kernels(libs[2], 2)


def test_a_pool_with_a_fused_epilogue_stays_whole_and_right():
    text = "def @main(%x: Tensor[(1, 512, 28, 28), float32]) { nn.relu(nn.global_avg_pool2d(%x)) }"
    x = _rand(1, 512, 28, 28)
    lib = relay.build(relay.parse(text), threads=2)
    np.testing.assert_allclose(lib(x), np.maximum(x.mean(axis=(2, 3), keepdims=True), 0), rtol=1e-5, atol=1e-6)


def test_a_rule_that_reduces_into_scratch_and_reads_it_back_stays_whole(monkeypatch):
    # a rule filling the workspace and reading it in a second pass (as an l2_normalize
    # does) must not be split: every chunk reads all of it
    from relay_nb.backend.llvm.cache import KernelCache
    from relay_nb.backend.llvm.codegen import reduce as R
    from relay_nb.backend.llvm.codegen.rules import COLUMN, LLVMRule, llvm_rules
    from relay_nb.op.registry import get_column

    def two_pass_mean(kb, call, outs, epilogue):
        x = call.args[0]
        shape, out, b = kb.shape(x), outs[0], kb.builder
        sums = kb.scratch(out.shape, out.dt)
        red = R.Reducer(kb, "sum", out.dt, shape[1])
        R.emit_reduce(kb, shape, [1], sums, R._keep_map(2, [1], False), red, lambda xi: kb.value(x, xi))
        with kb.nest(out.shape) as oi:
            out.store(b, oi, b.fdiv(sums.load(b, oi), R.ir.Constant(out.dt.ir, float(shape[1]))))

    llvm_rules()
    monkeypatch.setitem(get_column(COLUMN), "mean", LLVMRule("buffer", two_pass_mean))
    mod = relay.parse("def @main(%x: Tensor[(400, 2000), float32]) { mean(%x, axis=[1]) }")
    x = _rand(400, 2000)
    one = relay.build(mod, threads=1, cache=KernelCache())
    two = relay.build(mod, threads=2, cache=KernelCache())  # (a private cache: the rule is this test's)
    np.testing.assert_allclose(two(x), x.mean(axis=1), rtol=1e-5, atol=1e-6)
    assert two(x).tobytes() == one(x).tobytes()
    assert two.kernels[0].chunks(2) == 1


# -- the thread count ------------------------------------------------------------------------


def test_threads_default_to_the_cores_the_process_may_use(monkeypatch):
    monkeypatch.delenv("RELAY_NB_NUM_THREADS", raising=False)
    mod = relay.parse("def @main(%x: Tensor[(4), float32]) { exp(%x) }")
    assert relay.build(mod).threads == len(os.sched_getaffinity(0))
    monkeypatch.setenv("RELAY_NB_NUM_THREADS", "3")
    assert relay.build(mod).threads == 3
    assert relay.build(mod, threads=1).threads == 1
    assert relay.create_executor("jit", mod=mod, threads=2).threads == 2


@pytest.mark.parametrize("bad", [0, -1, 1.5, "2"])
def test_a_bad_thread_count_is_a_relay_error(bad):
    mod = relay.parse("def @main(%x: Tensor[(4), float32]) { exp(%x) }")
    with pytest.raises(relay.RelayError, match="threads"):
        relay.build(mod, threads=bad)


def test_a_bad_environment_thread_count_is_a_relay_error(monkeypatch):
    monkeypatch.setenv("RELAY_NB_NUM_THREADS", "many")
    with pytest.raises(relay.RelayError, match="RELAY_NB_NUM_THREADS"):
        relay.build(relay.parse("def @main(%x: Tensor[(4), float32]) { exp(%x) }"))


def test_the_interpreted_path_splits_kernels_too():
    # an `if` means no plan: the interpreter calls the kernels
    n = 1 << 20
    text = f"""
    def @main(%x: Tensor[({n}), float32], %c: bool) {{
      if (%c) {{ exp(%x) }} else {{ tanh(%x) }}
    }}"""
    x = _rand(n)
    lib1 = relay.build(relay.parse(text), threads=1)
    lib2 = relay.build(relay.parse(text), threads=2)
    got = lib2(x, np.array(True))
    assert got.tobytes() == lib1(x, np.array(True)).tobytes()
    assert any(k.chunks(2) > 1 for k in lib2.kernels)


def test_a_conv_called_by_the_interpreter_splits_with_a_workspace_per_thread():
    text = """
    def @main(%x: Tensor[(1, 32, 40, 40), float32], %w: Tensor[(64, 32, 3, 3), float32], %c: bool) {
      if (%c) { nn.conv2d(%x, %w, padding=[1, 1, 1, 1]) } else { nn.conv2d(%x, %w, padding=[1, 1, 1, 1], dilation=[1, 1], strides=[1, 1]) }
    }"""
    x, w = _rand(1, 32, 40, 40), _rand(64, 32, 3, 3)
    lib1 = relay.build(relay.parse(text), threads=1)
    lib2 = relay.build(relay.parse(text), threads=2)
    want = lib1(x, w, np.array(True))
    for _ in range(2):  # the second call reuses the threads' workspaces
        assert lib2(x, w, np.array(True)).tobytes() == want.tobytes()
    assert any(k.chunks(2) > 1 and k._workspace for k in lib2.kernels)


# -- errors, Ctrl-C, exit --------------------------------------------------------------------


def test_an_error_in_one_chunk_is_raised_and_the_pool_stays_usable():
    n = 1 << 21
    text = f"""def @main(%a: Tensor[(10), float32], %i: Tensor[({n}), int64]) {{
      take(%a, %i, mode="fast")
    }}"""
    lib = relay.build(relay.parse(text), threads=2)
    assert _split_kernels(lib, 2)
    a = _rand(10)
    bad = np.zeros(n, "int64")
    bad[-1] = 99  # only the last chunk sees it
    with pytest.raises(relay.RelayError, match="99"):
        lib(a, bad)
    good = RNG.integers(0, 10, n)
    np.testing.assert_array_equal(lib(a, good), a[good])


def test_an_exception_in_a_worker_chunk_reaches_the_caller_and_the_pool_recovers():
    def chunk(slot, k):
        if k == 1:
            raise ValueError("chunk 1 failed")

    with pytest.raises(ValueError, match="chunk 1"):
        pool.run_chunks(chunk, 2, 2)
    seen = []
    pool.run_chunks(lambda slot, k: seen.append(k), 12, 3)
    assert sorted(seen) == list(range(12))


def test_ctrl_c_during_threaded_runs_leaves_the_built_module_usable():
    n = 1 << 22
    lib = relay.build(relay.parse(f"def @main(%x: Tensor[({n}), float32]) {{ tanh(exp(%x)) }}"), threads=2)
    assert _split_kernels(lib, 2)
    x = _rand(n)
    want = lib(x)
    with pytest.raises(KeyboardInterrupt), ctrl_c_soon(first=0.05, every=0.05):
        for _ in range(100000):
            lib(x)
    assert lib(x).tobytes() == want.tobytes()


def test_a_process_that_ran_threaded_kernels_exits_cleanly():
    code = textwrap.dedent(
        """
        import numpy as np, threading, relay_nb as relay
        n = 1 << 21
        lib = relay.build(relay.parse(f"def @main(%x: Tensor[({n}), float32]) {{ exp(%x) }}"), threads=2)
        lib(np.ones(n, "float32"))
        assert lib.kernels[0].chunks(2) > 1
        assert any(t.name.startswith("relay_nb-worker") for t in threading.enumerate())
        print("ran")
        """
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ran"
    assert done.stderr == ""


def test_a_padded_conv_split_by_columns_is_cut_as_finely_as_an_unpadded_one():
    # a chunk of output columns pads only the band of input rows they read (every chunk
    # padded the whole image, so a 3x3 conv on 56x56 was cut into 2 chunks, not 8)
    def conv(pad):
        text = (
            "def @main(%x: Tensor[(1, 64, 56, 56), float32], %w: Tensor[(64, 64, 3, 3), float32])"
            f" {{ nn.relu(nn.conv2d(%x, %w, padding=[{pad}, {pad}, {pad}, {pad}])) }}"
        )
        w, x = _rand(64, 64, 3, 3), _rand(1, 64, 56, 56)
        libs = {t: relay.build(relay.parse(text), params={"w": w}, threads=t) for t in (1, 2)}
        assert libs[1](x).tobytes() == libs[2](x).tobytes()
        return max(k.chunks(2) for k in _split_kernels(libs[2], 2))

    padded, unpadded = conv(1), conv(0)
    assert padded == unpadded > 2


def test_chunks_of_a_padded_strided_dilated_conv_pad_their_own_rows():
    # asymmetric padding, stride 2, dilation 2 rows: each chunk's band of padded rows
    # (halo included) is what its im2col reads; 1, 2 and 3 threads give the same bits
    text = (
        "def @main(%x: Tensor[(1, 64, 37, 29), float32], %w: Tensor[(24, 64, 3, 3), float32])"
        " { nn.conv2d(%x, %w, strides=[2, 2], padding=[2, 1, 0, 3], dilation=[2, 1]) }"
    )
    x, w = _rand(1, 64, 37, 29), _rand(24, 64, 3, 3)
    libs = _same_for_thread_counts(text, x, params={"w": w})
    assert _split_kernels(libs[2], 2)[0].chunks(3) >= 3
    want = relay.create_executor("interpreter", mod=relay.parse(text)).evaluate()(x, w)
    np.testing.assert_allclose(libs[3](x), want, rtol=1e-4, atol=1e-4)
