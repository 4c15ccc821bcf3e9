"""SimplifyInference: batch_norm / layer_norm / dropout become arithmetic with the same
values; untouched programs come back unchanged; the pipeline then folds the weights."""

from __future__ import annotations

import numpy as np
import pytest
from pass_testing import check_pass

import relay_nb as relay
from relay_nb.ir.expr import Call, Op
from relay_nb.ir.functor import post_order
from relay_nb.transform import SimplifyInference

BN_LN_DROPOUT = """
def @main(%x: Tensor[(2, 3, 4, 4), float32], %g: Tensor[(3), float32], %b: Tensor[(3), float32],
          %m: Tensor[(3), float32], %v: Tensor[(3), float32], %lg: Tensor[(4), float32],
          %lb: Tensor[(4), float32]) {
  %0 = nn.batch_norm(%x, %g, %b, %m, %v, epsilon=1e-3f);
  %1 = nn.dropout(%0.0);
  %2 = nn.layer_norm(%1.0, %lg, %lb);
  (%2, %0.1, %0.2)
}
"""


def _ops(mod: relay.IRModule) -> set[str]:
    return {e.op.name for e in post_order(mod["main"]) if isinstance(e, Call) and isinstance(e.op, Op)}


def _inputs(seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    shapes = [(2, 3, 4, 4), (3,), (3,), (3,), (3,), (4,), (4,)]
    args = [rng.standard_normal(s).astype("float32") for s in shapes]
    args[4] = np.abs(args[4]) + 0.5  # a variance
    return args


def test_norms_become_arithmetic_with_the_same_values(golden):
    mod = relay.parse(BN_LN_DROPOUT)
    args = _inputs()
    after = check_pass(SimplifyInference(), mod, inputs=args, golden=golden, case="simplify_inference")
    assert not _ops(after) & {"nn.batch_norm", "nn.layer_norm", "nn.dropout"}
    x = args[0]
    scale = args[1] / np.sqrt(args[4] + 1e-3)
    bn = x * scale[:, None, None] + (args[2] - args[3] * scale)[:, None, None]
    mu = bn.mean(axis=-1, keepdims=True)
    ln = (bn - mu) / np.sqrt(bn.var(axis=-1, keepdims=True) + 1e-5) * args[5] + args[6]
    got = relay.create_executor(mod=after).evaluate()(*args)
    np.testing.assert_allclose(got[0], ln, rtol=1e-4, atol=1e-4)
    assert np.array_equal(got[1], args[3]) and np.array_equal(got[2], args[4])


@pytest.mark.parametrize("axis, center, scale", [(1, False, True), (1, True, False), (-1, True, True), (0, True, True)])
def test_batch_norm_attributes(axis, center, scale):
    shape = (3, 5, 2)
    c = shape[axis]
    text = f"""
    def @main(%x: Tensor[{shape}, float32], %g: Tensor[({c}), float32], %b: Tensor[({c}), float32],
              %m: Tensor[({c}), float32], %v: Tensor[({c}), float32]) {{
      nn.batch_norm(%x, %g, %b, %m, %v, axis={axis}, center={center}, scale={scale}).0
    }}"""
    rng = np.random.default_rng(1)
    args = [rng.standard_normal(s).astype("float32") for s in [shape, (c,), (c,), (c,), (c,)]]
    args[4] = np.abs(args[4]) + 0.1
    after = check_pass(SimplifyInference(), relay.parse(text), inputs=args)
    assert "nn.batch_norm" not in _ops(after)


def test_program_without_norms_is_unchanged():
    mod = relay.transform.InferType()(relay.parse("def @main(%x: Tensor[(3), float32]) { exp(%x) }"))
    after = SimplifyInference()(mod)
    assert after["main"] is mod["main"]


def test_pipeline_removes_batch_norm_and_keeps_the_value():
    text = """
    def @main(%x: Tensor[(1, 2, 3, 3), float32]) {
      let %w = ones(shape=[2], dtype="float32");
      nn.batch_norm(%x, %w, %w, %w, %w).0
    }"""
    mod = relay.parse(text)
    out = relay.optimize(mod, opt_level=2)
    assert "nn.batch_norm" not in _ops(out)  # the primitive functions' bodies included
    x = np.random.default_rng(2).standard_normal((1, 2, 3, 3)).astype("float32")
    want = (x - 1) / np.sqrt(1 + 1e-5) + 1
    np.testing.assert_allclose(relay.create_executor(mod=out).evaluate()(x), want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("axis, center, scale", [(1, True, True), (1, False, False), (-1, True, True)])
def test_batch_norm_arithmetic_typed_as_inference_would_without_inference(monkeypatch, axis, center, scale):
    """The pass types batch_norm's arithmetic as it builds it instead of re-inferring the
    whole program (ResNet-50: 27 -> 8 ms); the types must be exactly inference's.  Two
    batch_norms in a row: the second one's data argument is the first one's rewrite."""
    import relay_nb.transform.simplify_inference as si
    from relay_nb.typing.infer import infer_module

    shape = (2, 3, 4, 5)
    c = shape[axis]
    text = f"""
    def @main(%x: Tensor[{shape}, float32], %g: Tensor[({c}), float32], %b: Tensor[({c}), float32],
              %m: Tensor[({c}), float32], %v: Tensor[({c}), float32]) {{
      %0 = nn.batch_norm(%x, %g, %b, %m, %v, axis={axis}, center={center}, scale={scale});
      %1 = nn.batch_norm(nn.relu(%0.0), %g, %b, %m, %v, axis={axis}, center={center}, scale={scale});
      (%1.0, %1.1, %0.2)
    }}"""
    mod = relay.transform.InferType()(relay.parse(text))

    def no_inference(_mod):
        raise AssertionError("SimplifyInference re-inferred the program")

    monkeypatch.setattr(si, "infer_module", no_inference)
    after = SimplifyInference()(mod)
    monkeypatch.undo()
    nodes = [n for n in post_order(after["main"]) if not isinstance(n, Op)]
    given = [n.checked_type for n in nodes]
    for n in nodes:  # forget them, and let inference say what they are
        object.__setattr__(n, "_checked_type", None)
    infer_module(after)
    assert [n.checked_type for n in nodes] == given
    assert "nn.batch_norm" not in _ops(after)
    rng = np.random.default_rng(3)
    args = [rng.standard_normal(s).astype("float32") for s in [shape, (c,), (c,), (c,), (c,)]]
    args[4] = np.abs(args[4]) + 0.1
    want = relay.create_executor(mod=mod).evaluate()(*args)
    got = relay.create_executor(mod=after).evaluate()(*args)
    for w, g in zip(want, got):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


def test_layer_norm_and_dropout_still_inferred():
    """Rules that do not type what they build leave it to inference: the result is typed."""
    from relay_nb.transform.typed import fully_typed

    after = SimplifyInference()(relay.transform.InferType()(relay.parse(BN_LN_DROPOUT)))
    assert fully_typed(after)
