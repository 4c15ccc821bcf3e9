"""``relay.build`` compiling on two cores: a compile process runs LLVM beside the build
(relay_nb/backend/llvm/offload.py).  Its code must be the code this process would make,
and any failure of it must cost only time."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import relay_nb as relay
from relay_nb.backend.llvm import jit, offload
from relay_nb.backend.llvm.cache import KernelCache

LAYERS = offload.MIN_FUNCTIONS + 2
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

pytestmark = pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="the compile process needs two cores")


def _mlp_text(layers: int = LAYERS, first: int = 8) -> str:
    """A chain of dense + relu layers of distinct widths: one distinct kernel per layer."""
    widths = [first + i for i in range(layers + 1)]
    params = ", ".join(f"%w{i}: Tensor[({widths[i + 1]}, {widths[i]}), float32]" for i in range(layers))
    lines, prev = [], "%x"
    for i in range(layers):
        lines.append(f"  %{2 * i} = nn.dense({prev}, %w{i});")
        lines.append(f"  %{2 * i + 1} = nn.relu(%{2 * i});")
        prev = f"%{2 * i + 1}"
    body = "\n".join(lines) + f"\n  {prev}"
    return f"def @main(%x: Tensor[(2, {first}), float32], {params}) {{\n{body}\n}}"


def _args(layers: int = LAYERS, first: int = 8) -> list[np.ndarray]:
    rng = np.random.default_rng(7)
    widths = [first + i for i in range(layers + 1)]
    ws = [(rng.standard_normal((widths[i + 1], widths[i])) / 3).astype("float32") for i in range(layers)]
    return [rng.standard_normal((2, first)).astype("float32"), *ws]


@pytest.fixture
def fresh_cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("RELAY_NB_CACHE_DIR", str(tmp_path / "kernels"))
    return tmp_path / "kernels"


def _build():
    return relay.build(relay.parse(_mlp_text()), cache=KernelCache())


def _no_compile_threads() -> bool:
    return not any(t.name.startswith("relay_nb compile") for t in threading.enumerate())


def test_a_large_build_compiles_kernels_in_a_second_process_with_the_same_results(fresh_cache_dir, monkeypatch):
    lib = _build()
    aside = [k for k in lib.kernels if k.in_compile_process]
    assert len(lib.kernels) == LAYERS and all(k.native for k in lib.kernels)
    assert aside, "no kernel came from the compile process"
    assert all(k.how() == "native (compile process)" for k in aside)
    assert f"{len(aside)} compiled by a second process" in str(lib.report())
    assert _no_compile_threads()  # the build ended its process and threads

    monkeypatch.setenv("RELAY_NB_COMPILE_PROCESS", "0")
    serial = relay.build(relay.parse(_mlp_text()), cache=KernelCache())
    assert not any(k.in_compile_process for k in serial.kernels)
    args = _args()
    got, want = lib(*args), serial(*args)
    assert np.array_equal(got, want)  # the same machine code: the same bits
    ref = relay.create_executor("interpreter", mod=relay.parse(_mlp_text())).evaluate()(*args)
    np.testing.assert_allclose(got, np.asarray(ref), rtol=1e-5, atol=1e-6)
    # the kernel still shows its IR, optimized IR and assembly
    k = aside[0]
    assert "define" in k.ir and "define" in k.optimized_ir and k.compile_seconds > 0


def test_a_small_build_never_starts_the_process(fresh_cache_dir):
    lib = relay.build(relay.parse(_mlp_text(3)), cache=KernelCache())
    assert len(lib.kernels) == 3 and not any(k.in_compile_process for k in lib.kernels)


@pytest.mark.parametrize(
    "script",
    [
        "pass",  # dies at once
        # answers every request with code that is not an object file
        "import sys\n"
        "from relay_nb.backend.llvm.compile_worker import REQUEST, REPLY\n"
        "while len(h := sys.stdin.buffer.read(REQUEST.size)) == REQUEST.size:\n"
        "    job, level, n = REQUEST.unpack(h); sys.stdin.buffer.read(n)\n"
        "    sys.stdout.buffer.write(REPLY.pack(job, 1, 0.0, 7) + b'garbage'); sys.stdout.buffer.flush()\n",
        # refuses every module
        "import sys\n"
        "from relay_nb.backend.llvm.compile_worker import REQUEST, REPLY\n"
        "while len(h := sys.stdin.buffer.read(REQUEST.size)) == REQUEST.size:\n"
        "    job, level, n = REQUEST.unpack(h); sys.stdin.buffer.read(n)\n"
        "    sys.stdout.buffer.write(REPLY.pack(job, 0, 0.0, 4) + b'nope'); sys.stdout.buffer.flush()\n",
        # reads every request and never answers
        "import sys\nwhile sys.stdin.buffer.read(4096): pass\n",
    ],
    ids=["dies", "garbage", "refuses", "hangs"],
)
def test_a_failing_compile_process_costs_only_time(fresh_cache_dir, monkeypatch, script):
    monkeypatch.setattr(offload, "command", lambda: [sys.executable, "-c", script])
    monkeypatch.setattr(offload, "TIMEOUT_S", 2.0)  # a hung process is given up after this
    lib = _build()
    assert all(k.native and not k.in_compile_process for k in lib.kernels)
    args = _args()
    ref = relay.create_executor("interpreter", mod=relay.parse(_mlp_text())).evaluate()(*args)
    np.testing.assert_allclose(lib(*args), np.asarray(ref), rtol=1e-5, atol=1e-6)
    assert _no_compile_threads()


def test_a_module_llvm_rejects_in_both_processes_reports_why():
    with offload.parallel_compiles(offload.MIN_FUNCTIONS):
        bad = jit.compile_ir("define void @f( {", ["f"], "bad_module", 2, False, offload=True)
        assert bad.pending
    assert not bad.pending and bad.error.startswith("LLVM rejected the kernel")


def test_a_kernel_called_before_its_build_loaded_it_loads_on_first_call(fresh_cache_dir):
    # an outer batch stays open, as if a build was interrupted before loading: the kernels
    # of the (small) inner build are pending; calling one loads its code first
    with offload.parallel_compiles(offload.MIN_FUNCTIONS):
        lib = relay.build(relay.parse(_mlp_text(4)), cache=KernelCache())
        pending = [k for k in lib.kernels if k._compiled.pending]
        assert pending
        args = _args(4)
        ref = relay.create_executor("interpreter", mod=relay.parse(_mlp_text(4))).evaluate()(*args)
        np.testing.assert_allclose(lib(*args), np.asarray(ref), rtol=1e-5, atol=1e-6)
        assert not any(k._compiled.pending for k in pending)


WARM = """
import numpy as np, relay_nb as relay, sys
sys.path.insert(0, {tests!r})
from test_jit_compile_process import _mlp_text, _args
lib = relay.build(relay.parse(_mlp_text(first=40)))
print(sorted({{k.how() for k in lib.kernels}}), float(np.asarray(lib(*_args(first=40))).sum()))
"""


def test_code_from_the_compile_process_is_stored_and_loaded_by_a_warm_process(fresh_cache_dir):
    # widths no other test builds: this process has not compiled (and so stored) them yet
    lib = relay.build(relay.parse(_mlp_text(first=40)), cache=KernelCache())
    assert any(k.in_compile_process for k in lib.kernels)
    expected = float(np.asarray(lib(*_args(first=40))).sum())
    env = dict(os.environ, PYTHONPATH=ROOT)
    run = subprocess.run([sys.executable, "-c", WARM.format(tests=os.path.join(ROOT, "tests"))],
                         env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    hows, total = run.stdout.strip().rsplit(" ", 1)
    assert hows == "['native (disk cache)']"  # nothing compiled: no compile process either
    assert float(total) == expected


def test_code_calling_a_routine_that_failed_to_compile_is_refused_not_run():
    # MCJIT aborts the process on a symbol it cannot resolve: the compile must raise instead
    with offload.parallel_compiles(offload.MIN_FUNCTIONS):
        jit.compile_ir("define void @broken_routine_x( {", ["broken_routine_x"], "bad_routine", 2, False, offload=True)
    caller = "declare void @broken_routine_x()\ndefine void @calls_it() {\n  call void @broken_routine_x()\n  ret void\n}\n"
    with pytest.raises(RuntimeError, match="broken_routine_x"):
        jit.compile_ir(caller, ["calls_it"], "caller_module", 2, False)
