"""The flat execution plan: a function whose fused body is only kernel calls runs as a
list of steps on preallocated, reused buffers — with the interpreter's results, fresh
result arrays on every call, and the interpreter taking over for anything else."""

from __future__ import annotations

import numpy as np
import pytest
from jit_testing import assert_same

import relay_nb as relay
from relay_nb.backend.llvm.executor import JITExecutor

CHAIN = """
def @main(%x: Tensor[(4, 8), float32], %w: Tensor[(8, 8), float32]) {
  %0 = nn.dense(%x, %w);
  %1 = nn.softmax(%0);
  %2 = nn.dense(%1, %w);
  %3 = nn.softmax(%2);
  %4 = nn.dense(%3, %w);
  %5 = nn.softmax(%4);
  %6 = nn.dense(%5, %w);
  nn.softmax(%6)
}
"""


def both(text: str, *args):
    mod = relay.parse(text)
    ref = relay.create_executor("interpreter", mod=mod).evaluate()(*args)
    fn = JITExecutor(mod).evaluate()
    return ref, fn, fn(*args)


def rand(*shape, dtype="float32", seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def test_a_dataflow_main_runs_as_a_plan_with_shared_buffers():
    x, w = rand(4, 8), rand(8, 8, seed=1)
    ref, fn, out = both(CHAIN, x, w)
    assert_same(ref, out, rtol=1e-5, atol=1e-6)
    plan = fn.plan
    assert len(plan.steps) == 8 and len(plan.intermediate) == 7
    plan(tuple(np.asarray(a) for a in (x, w)))
    distinct = {id(b.base if b.base is not None else b) for b in plan._buffers if b is not None}
    assert len(distinct) <= 2  # seven intermediates live in two buffers, alternating


def test_results_are_fresh_and_buffers_are_reused_correctly_across_calls():
    _, fn, first = both(CHAIN, rand(4, 8), rand(8, 8, seed=1))
    keep = first.copy()
    x2, w2 = rand(4, 8, seed=5), rand(8, 8, seed=6)
    second = fn(x2, w2)
    assert second is not first
    np.testing.assert_array_equal(first, keep)  # the first result was not overwritten
    ref2 = relay.create_executor("interpreter", mod=relay.parse(CHAIN)).evaluate()(x2, w2)
    assert_same(ref2, second, rtol=1e-5, atol=1e-6)


def test_tuples_projections_lets_and_multi_output_kernels():
    text = """
    def @main(%x: Tensor[(2, 6), float32], %g: Tensor[(2), float32]) {
      let %parts = split(%x, indices_or_sections=3, axis=1);
      let %a = exp(%parts.0);
      let %bn = nn.batch_norm(%x, %g, %g, %g, %g, axis=0);
      (%a, %parts.2, %bn.0, (%bn.1, %x))
    }
    """
    x, g = rand(2, 6), np.abs(rand(2, seed=2)) + 0.5
    ref, fn, out = both(text, x, g)
    assert hasattr(fn, "plan")
    assert_same(ref, out, rtol=1e-5)
    assert out[3][1] is not None and np.array_equal(out[3][1], x)


def test_fallback_kernels_are_python_steps_of_the_plan():
    text = """
    def @main(%x: Tensor[(3, 4), float32], %h: Tensor[(3, 4), float16]) {
      %0 = exp(%x);
      %1 = cast(%0, dtype="float16");
      %2 = add(%1, %h);
      %3 = cast(%2, dtype="float32");
      nn.relu(%3)
    }
    """
    x, h = rand(3, 4), rand(3, 4, seed=3).astype("float16")
    ref, fn, out = both(text, x, h)
    assert hasattr(fn, "plan") and any(not s.kernel.native for s in fn.plan.steps)
    assert_same(ref, out, rtol=1e-3, atol=1e-3)


def test_control_flow_means_no_plan_and_the_interpreter_runs_it():
    text = "def @main(%x: Tensor[(3,), float32], %c: bool) { if (%c) { exp(%x) } else { tanh(%x) } }"
    x = rand(3)
    ref, fn, out = both(text, x, True)
    assert not hasattr(fn, "plan")
    assert_same(ref, out)


def test_errors_inside_a_plan_are_the_kernels_errors():
    text = 'def @main(%x: Tensor[(5,), float32], %i: Tensor[(2,), int32]) { %0 = take(%x, %i, mode="fast"); exp(%0) }'
    fn = JITExecutor(relay.parse(text)).evaluate()
    assert hasattr(fn, "plan")
    with pytest.raises(relay.EvalError, match="index 5 is out of range for an axis of size 5"):
        fn(np.zeros(5, "float32"), np.array([0, 5], "int32"))
    np.testing.assert_array_equal(fn(np.zeros(5, "float32"), np.array([0, 4], "int32")), [1, 1])  # reusable after


def test_plan_and_interpreter_paths_agree():
    x, w = rand(4, 8), rand(8, 8, seed=1)
    mod = relay.parse(CHAIN)
    a = JITExecutor(mod, plans=True).evaluate()(x, w)
    b = JITExecutor(mod, plans=False).evaluate()(x, w)
    np.testing.assert_array_equal(a, b)


def test_report_gives_the_planned_memory_of_a_chain_by_hand():
    # the 7 intermediates of CHAIN are (4, 8) float32 = 128 B each; each dies when the next
    # step has read it, so two buffers alternate: arena 256 B, against 7 * 128 B unshared;
    # the weight w, bound as one constant, is read by all four dense kernels but counted once
    lib = relay.build(relay.parse(CHAIN), params={"w": rand(8, 8, seed=1)})
    mem = lib.report().memory
    assert (mem.arena, mem.unshared, mem.intermediates, mem.buffers) == (256, 7 * 128, 7, 2)
    assert mem.weights == 8 * 8 * 4
    assert mem.peak == mem.arena + mem.weights + mem.workspace
    assert "planned memory" in str(lib.report()) and "896 B without sharing" in str(lib.report())


SIZES = """
def @main(%x: Tensor[(4, 16), float32], %w: Tensor[(8, 16), float32], %v: Tensor[(16, 8), float32]) {
  %0 = nn.dense(%x, %w);
  %1 = nn.softmax(%0);
  %2 = nn.dense(%1, %v);
  %3 = nn.softmax(%2);
  %4 = cast(%3, dtype="float64");
  %5 = nn.softmax(%4);
  %6 = cast(%5, dtype="float32");
  nn.dense(%6, %w)
}
"""


def test_buffers_of_other_sizes_and_dtypes_are_shared_best_fit_and_grown():
    # intermediates: %0 (4, 8) f32 128 B, %1 128 B, %2 (4, 16) f32 256 B, %3 256 B,
    # %4 (4, 16) f64 512 B, %5 512 B, %6 256 B.  Each dies when the next step has read it:
    # %2 grows %0's free buffer to 256 B, %4 grows %1's to 512 B, %5 takes %2's (grown
    # again, the only one free) and %6 the 512 B one, the smallest free that holds it:
    # two buffers of 512 B, where exact sizes alone needed five (1,664 B).
    x, w, v = rand(4, 16), rand(8, 16, seed=1), rand(16, 8, seed=2)
    ref, fn, out = both(SIZES, x, w, v)
    assert_same(ref, out, rtol=1e-5, atol=1e-6)
    again = fn(rand(4, 16, seed=3), w, v)  # the shared buffers hold the right values again
    want = relay.create_executor("interpreter", mod=relay.parse(SIZES)).evaluate()(rand(4, 16, seed=3), w, v)
    assert_same(want, again, rtol=1e-5, atol=1e-6)
    mem = relay.build(relay.parse(SIZES)).report().memory
    assert (mem.intermediates, mem.buffers, mem.arena) == (7, 2, 1024)
    assert mem.unshared == 128 + 128 + 256 + 256 + 512 + 512 + 256


def test_steps_share_one_workspace_sized_for_the_largest():
    text = """
    def @main(%x: Tensor[(64, 96), float32], %w1: Tensor[(128, 96), float32], %w2: Tensor[(64, 128), float32]) {
      %0 = nn.dense(%x, %w1);
      %1 = nn.relu(%0);
      nn.dense(%1, %w2)
    }
    """
    x = rand(64, 96)
    params = {"w1": rand(128, 96, seed=1), "w2": rand(64, 128, seed=2)}
    lib = relay.build(relay.parse(text), params=params, threads=1)  # (split steps add a workspace per thread)
    mem = lib.report().memory
    sizes = [k._workspace for k in lib.kernels if k.native]
    assert mem.workspace == max(sizes) > 0
    # the weights as given and their copies packed into B panels (N = 128, 64: whole panels)
    assert mem.weights == 2 * (128 * 96 + 64 * 128) * 4
    ref = np.maximum(x @ params["w1"].T, 0) @ params["w2"].T
    np.testing.assert_allclose(lib(x), ref, rtol=1e-4, atol=1e-4)
    plan = lib["main"].plan
    used = {id(s.workspace[0]) for s in plan.steps if s.workspace is not None}
    assert len(used) == 1  # one buffer, not one per step


def test_report_has_no_memory_line_when_main_is_interpreted():
    text = """
    def @main(%x: Tensor[(3), float32], %c: bool) {
      if (%c) { exp(%x) } else { %x }
    }
    """
    lib = relay.build(relay.parse(text))
    assert lib.report().memory is None and "planned memory" not in str(lib.report())
