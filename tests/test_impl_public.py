"""The ``impl`` column as a whole: every op has one, and programs built with the public
builders run through ``relay.create_executor("interpreter", ...)`` (which type-checks
first, so every result is also checked against the relation's shape and dtype)."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

import relay_nb as relay
from relay_nb.errors import EvalError

# Ops deliberately left without a numpy implementation, with the reason.  Empty: every
# built-in op runs in the interpreter.
EXCLUDED: dict[str, str] = {
    "parser.MetaRef": "TVM's parser placeholder, expanded before type checking: never runs",
    "torch_op": "running it would execute TorchScript stored in the program",
}


@pytest.fixture(autouse=True)
def _no_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


def test_every_registered_op_has_an_impl():
    # In a fresh interpreter: other tests register user ops (without impls) in this one.
    import json
    import subprocess
    import sys

    script = (
        "import json; from relay_nb.op.registry import get_column, list_ops; "
        "impls = get_column('impl'); "
        "print(json.dumps([list_ops(), [n for n in list_ops() if not callable(impls.get(n))]]))"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    builtins, without_impl = json.loads(out)
    assert len(builtins) >= 131
    assert [name for name in without_impl if name not in EXCLUDED] == []
    assert not set(EXCLUDED) - set(builtins)  # the exclusions name real ops


def evaluate(params, body, *inputs):
    func = relay.Function(params, body)
    mod = relay.IRModule.from_expr(func)
    return relay.create_executor("interpreter", mod=mod).evaluate()(*inputs)


def conv2d_ref(x, w, pad):
    n_, c_, h_, w_ = x.shape
    o_, _, kh, kw = w.shape
    xp = np.zeros((n_, c_, h_ + 2 * pad, w_ + 2 * pad), x.dtype)
    xp[:, :, pad : pad + h_, pad : pad + w_] = x
    oh, ow = h_ + 2 * pad - kh + 1, w_ + 2 * pad - kw + 1
    out = np.zeros((n_, o_, oh, ow), np.float64)
    for n, o, i, j in itertools.product(range(n_), range(o_), range(oh), range(ow)):
        out[n, o, i, j] = sum(
            float(xp[n, c, i + a, j + b]) * float(w[o, c, a, b])
            for c in range(c_)
            for a in range(kh)
            for b in range(kw)
        )
    return out


def test_conv_bias_relu_program():
    x = relay.var("x", shape=(1, 3, 5, 5), dtype="float32")
    w = relay.var("w", shape=(4, 3, 3, 3), dtype="float32")
    b = relay.var("b", shape=(4,), dtype="float32")
    y = relay.nn.relu(
        relay.nn.bias_add(relay.nn.conv2d(x, w, padding=1, channels=4, kernel_size=3), b)
    )
    rng = np.random.default_rng(0)
    xv = rng.standard_normal((1, 3, 5, 5)).astype("float32")
    wv = rng.standard_normal((4, 3, 3, 3)).astype("float32")
    bv = rng.standard_normal(4).astype("float32")
    got = evaluate([x, w, b], y, xv, wv, bv)
    expected = np.maximum(conv2d_ref(xv, wv, 1) + bv.reshape(1, 4, 1, 1), 0)
    assert got.dtype == np.float32 and got.shape == (1, 4, 5, 5)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


def test_int32_arithmetic_program_stays_int32():
    x = relay.var("x", shape=(4,), dtype="int32")
    y = relay.var("y", shape=(4,), dtype="int32")
    body = relay.Tuple(
        [relay.divide(x, y), relay.mod(x, y), relay.add(x, 1), relay.floor_divide(x, y)]
    )
    xv = np.array([7, -7, 7, 5], "int32")
    yv = np.array([-2, 2, 0, 1], "int32")
    div, mod, inc, fdiv = evaluate([x, y], body, xv, yv)
    assert all(v.dtype == np.int32 for v in (div, mod, inc, fdiv))
    assert div.tolist() == [-3, -3, 0, 5]
    assert mod.tolist() == [1, -1, 0, 0]
    assert inc.tolist() == [8, -6, 8, 6]
    assert fdiv.tolist() == [-4, -4, 0, 5]


def test_scalar_program_returns_0d_array():
    x = relay.var("x", shape=(), dtype="int32")
    got = evaluate([x], relay.multiply(x, relay.const(3, "int32")), np.array(5, "int32"))
    assert isinstance(got, np.ndarray) and got.shape == () and got.dtype == np.int32 and got == 15


def test_tuple_results_through_the_executor():
    x = relay.var("x", shape=(6, 2), dtype="float32")
    parts = relay.split(x, [2, 5])
    xv = np.arange(12, dtype="float32").reshape(6, 2)
    got = evaluate([x], parts.astuple(), xv)
    assert [p.shape for p in got] == [(2, 2), (3, 2), (1, 2)]
    data = relay.var("d", shape=(2, 3), dtype="float32")
    p = [relay.var(n, shape=(3,), dtype="float32") for n in ("g", "b", "m", "v")]
    bn = relay.nn.batch_norm(data, *p)
    ones, zeros = np.ones(3, "float32"), np.zeros(3, "float32")
    got = evaluate([data, *p], bn[0], np.ones((2, 3), "float32"), ones, zeros, zeros, ones)
    np.testing.assert_allclose(got, np.full((2, 3), 1 / np.sqrt(1 + 1e-5)), rtol=1e-6)
    drop = relay.nn.dropout(data, 0.5)
    assert (evaluate([data], drop, np.ones((2, 3), "float32")) == 1).all()


def test_take_fast_out_of_range_is_an_eval_error():
    x = relay.var("x", shape=(3,), dtype="float32")
    i = relay.var("i", shape=(2,), dtype="int32")
    f_body = relay.take(x, i, axis=0, mode="fast")
    xv = np.arange(3, dtype="float32")
    assert evaluate([x, i], f_body, xv, np.array([2, 0], "int32")).tolist() == [2, 0]
    with pytest.raises(EvalError, match="take"):
        evaluate([x, i], f_body, xv, np.array([3, 0], "int32"))


def test_resize_program():
    x = relay.var("x", shape=(1, 1, 2, 2), dtype="float32")
    y = relay.image.resize2d(x, (3, 3), coordinate_transformation_mode="align_corners")
    got = evaluate([x], y, np.array([[[[1, 2], [3, 4]]]], "float32"))
    np.testing.assert_allclose(got[0, 0], [[1, 1.5, 2], [2, 2.5, 3], [3, 3.5, 4]], rtol=1e-6)


# --- a sweep: one call of (nearly) every op through InferType and the interpreter ------------

F = "float32"


def _v(name, shape, dtype=F):
    return relay.var(name, shape=shape, dtype=dtype)


def _sweep():
    x = _v("x", (2, 3, 4, 4))
    m = _v("m", (3, 4))
    i = _v("i", (3, 4), "int32")
    b = _v("b", (3, 4), "bool")
    cases = {
        "unary": [
            relay.exp(m),
            relay.sigmoid(m),
            relay.erf(m),
            relay.round(m),
            relay.isnan(m),
            relay.copy(m),
        ],
        "binary": [
            relay.add(m, m),
            relay.floor_mod(i, i),
            relay.power(m, m),
            relay.less(m, m),
            relay.logical_xor(b, b),
            relay.right_shift(i, i),
        ],
        "misc": [
            relay.clip(m, 0.0, 1.0),
            relay.cast(m, "int8"),
            relay.cast_like(m, i),
            relay.where(b, m, m),
        ],
        "init": [
            relay.zeros((2, 2), "int32"),
            relay.ones((1,), F),
            relay.full(relay.const(2.0), (2,), F),
            relay.full_like(m, relay.const(1.0)),
            relay.zeros_like(i),
            relay.arange(relay.const(1.0), relay.const(4.0)),
        ],
        "reduce": [
            relay.sum(m, 1),
            relay.mean(m, [0, 1], keepdims=True),
            relay.max(m),
            relay.argmax(m, 0),
            relay.all(b, 1),
            relay.any(b),
            relay.prod(m, -1, exclude=True),
            relay.variance(m, 1),
            relay.std(m, 0),
        ],
        "transform": [
            relay.reshape(x, (0, -1)),
            relay.reshape_like(m, relay.zeros((12,), F)),
            relay.transpose(x, (0, 2, 3, 1)),
            relay.squeeze(relay.expand_dims(m, 0)),
            relay.concatenate([m, m], 0),
            relay.stack([m, m], 1),
            relay.take(m, relay.const(np.array([0, 2], "int32")), 0),
            relay.strided_slice(x, [0, 1], [2, 3], [1, 2]),
            relay.broadcast_to(m, (2, 3, 4)),
            relay.broadcast_to_like(m, _v("y", (2, 3, 4))),
            relay.collapse_sum_like(_v("z", (2, 3, 4)), m),
            relay.tile(m, (2, 1)),
            relay.repeat(m, 2, 1),
            relay.reverse(m, 0),
            relay.layout_transform(x, "NCHW", "NHWC"),
            relay.shape_of(x),
        ],
        "nn": [
            relay.nn.max_pool2d(x, (2, 2), (2, 2), ceil_mode=True),
            relay.nn.avg_pool2d(x, (3, 3), padding=1, count_include_pad=True),
            relay.nn.global_avg_pool2d(x),
            relay.nn.global_max_pool2d(x),
            relay.nn.adaptive_avg_pool2d(x, (3, 2)),
            relay.nn.adaptive_max_pool2d(x, (1, 3)),
            relay.nn.softmax(m),
            relay.nn.log_softmax(m, 0),
            relay.nn.leaky_relu(m),
            relay.nn.pad(x, ((0, 0), (0, 0), (1, 2), (0, 1)), 1.0),
            relay.nn.batch_flatten(x),
            relay.nn.upsampling(x, 2, 1.5, method="bilinear"),
            relay.nn.dense(m, relay.zeros((5, 4), F)),
            relay.nn.matmul(m, relay.zeros((3, 5), F), transpose_a=True),
            relay.nn.batch_matmul(relay.zeros((2, 3, 4), F), relay.zeros((1, 5, 4), F)),
            relay.nn.conv2d(
                x, relay.zeros((6, 1, 3, 3), F), strides=2, padding=(1, 0, 2, 1), groups=3
            ),
            relay.nn.conv2d_transpose(
                x, relay.zeros((3, 2, 3, 3), F), strides=2, output_padding=1, padding=1
            ),
            relay.nn.conv1d(_v("c1", (1, 2, 7)), relay.zeros((4, 2, 3), F), dilation=2),
            relay.nn.conv3d(_v("c3", (1, 2, 3, 4, 5)), relay.zeros((2, 2, 2, 2, 2), F), padding=1),
            relay.nn.max_pool1d(_v("p1", (1, 2, 7)), 3, 2, padding=1),
            relay.nn.avg_pool3d(_v("p3", (1, 1, 4, 4, 4)), (2, 2, 2), (2, 2, 2)),
            relay.nn.layer_norm(m, relay.ones((4,), F), relay.zeros((4,), F)),
            relay.nn.prelu(x, relay.ones((3,), F)),
            relay.image.resize2d(x, (5, 7), method="cubic"),
        ],
    }
    return cases


@pytest.mark.parametrize("family", ["unary", "binary", "misc", "init", "reduce", "transform", "nn"])
def test_sweep_agrees_with_inferred_types(family):
    from relay_nb.analysis.free_vars import free_vars

    body = relay.Tuple(_sweep()[family])
    params = list(free_vars(body))
    rng = np.random.default_rng(7)
    inputs = []
    for p in params:
        ty = p.type_annotation
        arr = rng.standard_normal(ty.shape) if ty.dtype != "bool" else rng.integers(0, 2, ty.shape)
        inputs.append(
            np.asarray(arr if ty.dtype != "int32" else rng.integers(-5, 5, ty.shape)).astype(
                ty.dtype
            )
        )
    func = relay.Function(params, body)
    mod = relay.transform.InferType()(relay.IRModule.from_expr(func))
    out_types = mod["main"].checked_type.ret_type.fields
    results = relay.create_executor("interpreter", mod=mod).evaluate()(*inputs)
    assert len(results) == len(out_types)
    for value, ty in zip(results, out_types):
        assert isinstance(value, np.ndarray)
        assert value.dtype == np.dtype(ty.dtype) and value.shape == tuple(ty.shape)


def test_text_format_program():
    src = """
    def @main(%x: Tensor[(1, 2, 4, 4), float32], %i: Tensor[(3), int32]) {
      %0 = nn.max_pool2d(%x, pool_size=[2, 2], strides=[2, 2]);
      (strided_slice(%0, begin=[0, 1], end=[1, 3]), divide(%i, 0), floor_mod(%i, -2), mean(%i))
    }
    """
    f = relay.create_executor("interpreter", mod=relay.parse(src)).evaluate()
    xv = np.arange(32, dtype="float32").reshape(1, 2, 4, 4)
    pooled, div, fmod, mean = f(xv, np.array([5, -5, 3], "int32"))
    assert pooled.shape == (1, 1, 2, 2) and pooled[0, 0].tolist() == [[21, 23], [29, 31]]
    assert div.dtype == np.int32 and div.tolist() == [0, 0, 0]  # integer x / 0 is 0
    assert fmod.tolist() == [-1, -1, -1]
    assert mean.dtype == np.int32 and mean.tolist() == 1  # (5 - 5 + 3) / 3, truncated


def test_untyped_evaluation_uses_natural_dtypes_and_default_attrs():
    # The interpreter without InferType: out_type is None and hand-built calls have no attrs.
    from relay_nb.eval.interpreter import Interpreter
    from relay_nb.ir.expr import Call
    from relay_nb.op.registry import get_op

    a = relay.const(np.array([7, -7], "int32"))
    b = relay.const(np.array([2, 2], "int32"))
    got = Interpreter().evaluate(relay.divide(a, b))
    assert got.dtype == np.int32 and got.tolist() == [3, -3]
    soft = Call(get_op("nn.softmax"), (relay.const(np.zeros((2, 2), "float32")),), None)
    got = Interpreter().evaluate(soft)
    assert got.dtype == np.float32 and got.tolist() == [[0.5, 0.5], [0.5, 0.5]]
