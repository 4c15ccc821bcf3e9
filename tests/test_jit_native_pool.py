"""The native pool: split calls dispatched without the GIL give the Python pool's bits,
idle workers sleep, a forked child and concurrent callers work, a warm process loads the
pool's code from the disk cache."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

import relay_nb as relay
from relay_nb.backend.llvm import native_pool, pool

pytestmark = pytest.mark.skipif(not pool.NATIVE, reason="the native pool runs on Linux x86-64 (and is not turned off)")

RNG = np.random.default_rng(7)
N = (1 << 20) + 37
CHAIN = f"def @main(%x: Tensor[({N}), float32], %y: Tensor[({N}), float32]) {{ tanh(exp(multiply(%x, %y))) }}"
CONV = """
def @main(%x: Tensor[(1, 32, 28, 28), float32], %w: Tensor[(64, 32, 3, 3), float32]) {
  nn.relu(nn.conv2d(%x, %w, padding=[1, 1, 1, 1]))
}
"""


def _env() -> dict:
    return dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))


def _split_steps(lib) -> list:
    plan = lib["main"].plan
    return [s for s in plan.steps if s.split is not None]


def test_split_steps_run_on_the_native_pool_with_the_bits_of_one_thread():
    x, y = RNG.standard_normal(N).astype("float32"), RNG.standard_normal(N).astype("float32")
    mod = relay.parse(CHAIN)
    want = relay.build(mod, threads=1)(x, y)
    lib = relay.build(mod, threads=2)
    for _ in range(50):  # job numbers and chunk claims carry over from call to call
        assert lib(x, y).tobytes() == want.tobytes()
    steps = _split_steps(lib)
    assert steps and all(s.split.native for s in steps)
    assert len(native_pool.get().threads) >= 1


def test_a_conv_split_natively_matches_the_python_pool_bit_for_bit():
    code = textwrap.dedent(
        f"""
        import sys, numpy as np, relay_nb as relay
        rng = np.random.default_rng(3)
        x = rng.standard_normal((1, 32, 28, 28)).astype("float32")
        w = rng.standard_normal((64, 32, 3, 3)).astype("float32")
        lib = relay.build(relay.parse({CONV!r}), threads=2)
        assert any(k.chunks(2) > 1 for k in lib.kernels)
        sys.stdout.buffer.write(lib(x, w).tobytes())
        """
    )
    outs = {}
    for flag in ("1", "0"):
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, timeout=300, env=dict(_env(), RELAY_NB_NATIVE_POOL=flag)
        )
        assert done.returncode == 0, done.stderr.decode()
        outs[flag] = done.stdout
    assert outs["1"] == outs["0"] and len(outs["1"]) == 64 * 28 * 28 * 4


def _cpu_seconds(native_id: int) -> float:
    fields = open(f"/proc/self/task/{native_id}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def test_idle_workers_sleep_instead_of_spinning():
    x, y = RNG.standard_normal(N).astype("float32"), RNG.standard_normal(N).astype("float32")
    lib = relay.build(relay.parse(CHAIN), threads=2)
    lib(x, y)
    worker = native_pool.get().threads[0]
    time.sleep(0.05)  # past the spin time: asleep on the futex
    before = _cpu_seconds(worker.native_id)
    time.sleep(0.5)
    assert _cpu_seconds(worker.native_id) - before < 0.05
    assert lib(x, y).tobytes() == relay.build(relay.parse(CHAIN), threads=1)(x, y).tobytes()  # and it wakes


def test_two_threads_calling_split_kernels_at_once_get_right_results():
    x, y = RNG.standard_normal(N).astype("float32"), RNG.standard_normal(N).astype("float32")
    mod = relay.parse(CHAIN)
    want = relay.build(mod, threads=1)(x, y).tobytes()
    libs = [relay.build(mod, threads=2) for _ in range(2)]  # one plan each: they run at once
    bad: list = []

    def caller(lib) -> None:
        for _ in range(20):
            if lib(x, y).tobytes() != want:
                bad.append(1)

    ts = [threading.Thread(target=caller, args=(lib,)) for lib in libs]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not bad


def test_a_forked_child_runs_split_kernels_on_workers_of_its_own():
    code = textwrap.dedent(
        f"""
        import os, numpy as np, relay_nb as relay
        from relay_nb.backend.llvm import native_pool
        n = {N}
        x = np.linspace(-1, 1, n, dtype="float32")
        lib = relay.build(relay.parse("{CHAIN}"), threads=2)
        want = lib(x, x).tobytes()
        pid = os.fork()
        if pid == 0:
            ok = all(lib(x, x).tobytes() == want for _ in range(5)) and len(native_pool.get().threads) == 1
            os._exit(0 if ok else 3)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0, status
        assert lib(x, x).tobytes() == want
        print("ok")
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=_env())
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


def test_a_warm_process_loads_the_pool_and_its_trampolines_from_the_disk_cache(tmp_path):
    code = textwrap.dedent(
        f"""
        import relay_nb as relay
        from relay_nb.backend.llvm import native_pool
        relay.build(relay.parse({CONV!r}), threads=2)  # build prepares the pool
        print(all(m.from_disk for m in native_pool.get().modules), len(native_pool.get().modules))
        """
    )
    env = dict(_env(), RELAY_NB_CACHE_DIR=str(tmp_path))
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env) for _ in range(2)]
    for done in runs:
        assert done.returncode == 0, done.stderr
    assert runs[0].stdout.split() == ["False", "2"]  # the pool and one trampoline, compiled
    assert runs[1].stdout.split() == ["True", "2"]  # then loaded


def test_kernels_with_more_arguments_than_a_trampoline_take_the_python_pool():
    assert pool.native_split(native_pool.MAX_ARGS, 2)
    assert not pool.native_split(native_pool.MAX_ARGS + 1, 2)
    assert not pool.native_split(3, 1)


# -- plans run as one native call (plan_runner) ------------------------------------------------

STEPS = """
def @main(%a: Tensor[(10), float32], %i: Tensor[(64), int64], %y: Tensor[(64), float32]) {
  %0 = take(%a, %i, mode="fast");
  %1 = nn.softmax(%0);
  add(%1, %y)
}
"""


def test_a_plan_runs_its_steps_in_one_native_call_with_the_python_runs_bits():
    rng = np.random.default_rng(5)
    a, y = rng.standard_normal(10).astype("float32"), rng.standard_normal(64).astype("float32")
    i = rng.integers(0, 10, 64)
    lib = relay.build(relay.parse(STEPS), threads=1)
    python = relay.build(relay.parse(STEPS), threads=1)
    got = lib(a, i, y)
    python(a, i, y)  # (a plan prepares its runner on its first call)
    plan = python["main"].plan
    assert plan._runner is not None and len(plan.steps) >= 2
    plan._runner = None  # the same plan run step by step from Python
    assert got.tobytes() == python(a, i, y).tobytes()
    np.testing.assert_allclose(got, np.exp(a[i]) / np.exp(a[i]).sum() + y, rtol=1e-5)


def test_a_step_that_reports_an_error_stops_the_native_run_and_raises_it():
    rng = np.random.default_rng(6)
    a, y = rng.standard_normal(10).astype("float32"), rng.standard_normal(64).astype("float32")
    lib = relay.build(relay.parse(STEPS), threads=1)
    lib(a, rng.integers(0, 10, 64), y)
    assert lib["main"].plan._runner is not None
    bad = np.zeros(64, "int64")
    bad[7] = 1234
    with pytest.raises(relay.RelayError, match="1234"):
        lib(a, bad, y)
    good = rng.integers(0, 10, 64)
    np.testing.assert_allclose(lib(a, good, y), np.exp(a[good]) / np.exp(a[good]).sum() + y, rtol=1e-5)


def test_kernel_calls_and_times_count_native_runs():
    x = np.linspace(-1, 1, N, dtype="float32")
    lib = relay.build(relay.parse(CHAIN), threads=2)
    (kernel,) = lib.kernels
    before_calls, before_seconds = kernel.calls, kernel.run_seconds
    start = time.perf_counter()
    for _ in range(7):
        lib(x, x)
    wall = time.perf_counter() - start
    assert lib["main"].plan._runner is not None
    assert kernel.calls - before_calls == 7
    assert 0 < kernel.run_seconds - before_seconds <= wall
    row = [line for line in str(lib.report()).splitlines() if line.startswith(kernel.name)]
    assert row and f" {kernel.calls} " in row[0]


def test_the_cycle_period_is_measured_once_so_run_times_are_differences_of_one_scale():
    pool_ = native_pool.get()
    first = pool_.seconds_per_cycle()
    time.sleep(0.01)
    assert pool_.seconds_per_cycle() == first
    assert 1e-11 < first < 1e-8  # a 0.1-100 GHz counter
