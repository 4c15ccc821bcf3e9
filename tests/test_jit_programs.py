"""Whole programs through the JIT: every program the interpreter's own tests run (the
test functions of ``test_interpreter.py`` and the seeds' semantics tests, re-run with
``create_executor`` answering the JIT), the example programs, random modules, and a CNN
and a transformer block with random weights — all give the interpreter's results."""

from __future__ import annotations

import importlib.util
import inspect
from pathlib import Path

import numpy as np
import pytest
import test_interpreter
from hypothesis import HealthCheck, given, settings
from jit_testing import assert_native, assert_same, check
from pass_testing import random_inputs
from strategies import modules

import relay_nb as relay
from relay_nb.backend.llvm.executor import JITExecutor
from relay_nb.eval import executor as executor_module

HERE = Path(__file__).parent
EXAMPLES = sorted((HERE.parent / "relay_nb" / "examples").glob("*.relay"))


def _jit_factory(scalars: str):
    original = executor_module.create_executor

    def create_executor(kind="debug", mod=None, device=None, target="llvm", **options):
        if kind in ("interpreter", "debug"):
            return JITExecutor(mod, scalars=scalars, **options)
        return original(kind, mod, device, target, **options)

    return create_executor


def _use_jit(monkeypatch, scalars: str) -> None:
    monkeypatch.setattr(relay, "create_executor", _jit_factory(scalars))


def _load(path: Path):
    spec = importlib.util.spec_from_file_location(path.stem + "_for_jit", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _tests_of(module) -> list:
    """(id, function, kwargs) for every test function, parametrized ones expanded."""
    out = []
    for name, fn in inspect.getmembers(module, inspect.isfunction):
        if not name.startswith("test_") or fn.__module__ != module.__name__:
            continue
        cases = [{}]
        for mark in getattr(fn, "pytestmark", []):
            if mark.name != "parametrize":
                continue
            names = [n.strip() for n in mark.args[0].split(",")] if isinstance(mark.args[0], str) else list(mark.args[0])
            values = [v.values if hasattr(v, "values") else v for v in mark.args[1]]
            values = [v if len(names) > 1 else (v,) for v in values]
            cases = [{**c, **dict(zip(names, v))} for c in cases for v in values]
        for k, kwargs in enumerate(cases):
            out.append((name if len(cases) == 1 else f"{name}[{k}]", fn, kwargs))
    return out


# Deep scalar programs (100,000 kernel calls) run with scalar kernels interpreted, the
# executor's default; every other test forces native kernels even for scalars.
_DEEP = {"test_deep_let_chain_at_default_recursion_limit", "test_tail_recursion_100000_calls_deep", "test_non_tail_recursion_100000_deep_on_adts"}
INTERPRETER_TESTS = _tests_of(test_interpreter)


@pytest.mark.parametrize("name,fn,kwargs", INTERPRETER_TESTS, ids=[n for n, _, _ in INTERPRETER_TESTS])
def test_interpreter_test_programs_through_the_jit(name, fn, kwargs, monkeypatch):
    _use_jit(monkeypatch, "interpret" if name in _DEEP else "native")
    fn(**kwargs)


SEED_TESTS = _tests_of(_load(HERE / "seeds" / "test_seed_semantics.py"))


@pytest.mark.parametrize("name,fn,kwargs", SEED_TESTS, ids=[n for n, _, _ in SEED_TESTS])
def test_seed_programs_through_the_jit(name, fn, kwargs, monkeypatch):
    _use_jit(monkeypatch, "native")
    fn(**kwargs)


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_programs(path):
    mod = relay.parse(path.read_text(), source_name=path.name)
    typed = relay.transform.InferType()(mod)
    # random_inputs makes tensors only: an example taking anything else needs its inputs here
    assert all(isinstance(p.checked_type, relay.TensorType) for p in typed["main"].params), path.name
    args = random_inputs(typed, seed=3)
    check(mod, *args, rtol=1e-4, atol=1e-4, native=False)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(mod=modules(max_nodes=25))
def test_random_modules_with_closures_refs_and_recursion(mod):
    args = random_inputs(relay.transform.InferType()(mod), seed=1)
    ref = relay.create_executor("interpreter", mod=mod).evaluate()(*args)
    out = JITExecutor(mod, scalars="native").evaluate()(*args)
    assert_same(ref, out, rtol=1e-5, atol=1e-5)


CNN = """
def @main(%data: Tensor[(2, 3, 16, 16), float32],
          %w1: Tensor[(8, 3, 3, 3), float32], %b1: Tensor[(8), float32],
          %g: Tensor[(8), float32], %be: Tensor[(8), float32], %m: Tensor[(8), float32], %v: Tensor[(8), float32],
          %w2: Tensor[(8, 8, 3, 3), float32],
          %fc: Tensor[(10, 128), float32], %fb: Tensor[(10), float32]) {
  %0 = nn.conv2d(%data, %w1, padding=[1, 1]);
  %1 = nn.bias_add(%0, %b1);
  %2 = nn.batch_norm(%1, %g, %be, %m, %v);
  %3 = nn.relu(%2.0);
  %4 = nn.conv2d(%3, %w2, padding=[1, 1]);
  %5 = add(%4, %3);
  %6 = nn.relu(%5);
  %7 = nn.max_pool2d(%6, pool_size=[2, 2], strides=[2, 2]);
  %8 = nn.avg_pool2d(%7, pool_size=[2, 2], strides=[2, 2]);
  %9 = nn.batch_flatten(%8);
  %10 = nn.dense(%9, %fc);
  %11 = nn.bias_add(%10, %fb);
  nn.softmax(%11)
}
"""

TRANSFORMER = """
def @main(%x: Tensor[(2, 16, 32), float32],
          %wq: Tensor[(2, 32, 32), float32], %wk: Tensor[(2, 32, 32), float32], %wv: Tensor[(2, 32, 32), float32],
          %g1: Tensor[(32), float32], %b1: Tensor[(32), float32],
          %w1: Tensor[(64, 32), float32], %c1: Tensor[(64), float32],
          %w2: Tensor[(32, 64), float32], %c2: Tensor[(32), float32],
          %g2: Tensor[(32), float32], %b2: Tensor[(32), float32]) {
  let %q = nn.batch_matmul(%x, %wq);
  let %k = nn.batch_matmul(%x, %wk);
  let %v = nn.batch_matmul(%x, %wv);
  let %s = nn.batch_matmul(%q, %k);
  let %sc = multiply(%s, 0.17677669f);
  let %p = nn.softmax(%sc, axis=-1);
  let %vt = transpose(%v, axes=[0, 2, 1]);
  let %att = nn.batch_matmul(%p, %vt);
  let %r1 = add(%att, %x);
  let %n1 = nn.layer_norm(%r1, %g1, %b1);
  let %f = reshape(%n1, newshape=[32, 32]);
  let %h = nn.dense(%f, %w1);
  let %hb = nn.bias_add(%h, %c1);
  let %gelu = multiply(multiply(%hb, 0.5f), add(erf(multiply(%hb, 0.70710678f)), 1f));
  let %o = nn.dense(%gelu, %w2);
  let %ob = nn.bias_add(%o, %c2);
  let %o3 = reshape(%ob, newshape=[2, 16, 32]);
  let %r2 = add(%o3, %n1);
  nn.layer_norm(%r2, %g2, %b2)
}
"""


def _random_args(mod: relay.IRModule, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    typed = relay.transform.InferType()(mod)
    out = []
    for p in typed["main"].params:
        t = p.checked_type
        a = rng.standard_normal(t.concrete_shape).astype(t.dtype) * 0.5
        if p.name_hint == "v":  # a variance
            a = np.abs(a) + 0.5
        out.append(a)
    return out


@pytest.mark.parametrize("text", [CNN, TRANSFORMER], ids=["cnn", "transformer"])
def test_cnn_and_transformer_blocks_with_random_weights(text):
    mod = relay.parse(text)
    args = _random_args(mod, seed=7)
    ex = check(mod, *args, rtol=1e-4, atol=1e-5)
    assert_native(ex)
    ops = {op for k in ex.kernels for op in k.ops}
    want = {"nn.conv2d", "nn.batch_norm", "nn.max_pool2d", "nn.dense", "nn.softmax"} if text is CNN else {"nn.batch_matmul", "nn.softmax", "nn.layer_norm", "erf"}
    assert want <= ops


def test_the_jit_executor_evaluates_expressions_and_globals():
    mod = relay.parse("def @sq(%x: Tensor[(2,), float32]) { multiply(%x, %x) }\ndef @main() { 0 }")
    ex = relay.create_executor("jit", mod=mod)
    np.testing.assert_array_equal(ex.evaluate(mod.get_global_var("sq"))(np.array([2, 3], "float32")), [4, 9])
    value = ex.evaluate(relay.parse_expr("exp(zeros(shape=[3], dtype=\"float32\"))"))
    np.testing.assert_array_equal(value, np.ones(3, "float32"))
    fn = ex.evaluate(relay.parse_expr("fn (%y: Tensor[(2,), int32]) { add(%y, %y) }"))
    np.testing.assert_array_equal(fn(np.array([1, 2], "int32")), [2, 4])


def test_pass_context_opt_level_zero_puts_each_op_in_its_own_kernel():
    text = "def @main(%x: Tensor[(4,), float32]) { %0 = exp(%x); %1 = tanh(%0); add(%1, 1f) }"
    x = np.linspace(-1, 1, 4, dtype="float32")
    with relay.transform.PassContext(opt_level=0):
        ex = check(text, x, rtol=1e-5)
    assert [k.ops for k in ex.kernels] == [["exp"], ["tanh"], ["add"]]
    ex2 = check(text, x, rtol=1e-5)
    assert [k.ops for k in ex2.kernels] == [["exp", "tanh", "add"]]


def test_build_runs_the_optimization_pipeline_so_batch_norm_fuses_into_the_conv():
    path = HERE.parent / "relay_nb" / "examples" / "conv_block.relay"
    mod = relay.parse(path.read_text())
    args = _random_args(mod, seed=11)
    args[-1] = np.abs(args[-1]) + 0.5  # a variance
    ref = relay.create_executor("interpreter", mod=mod).evaluate()(*args)
    lib = relay.build(mod)
    assert_same(ref, lib(*args), rtol=1e-4, atol=1e-5)
    ops = [op for k in lib.kernels for op in k.ops]
    assert "nn.batch_norm" not in ops  # SimplifyInference made it arithmetic...
    conv = next(k for k in lib.kernels if "nn.conv2d" in k.ops)
    assert {"multiply", "add", "nn.relu"} <= set(conv.ops)  # ...fused into the conv's epilogue
