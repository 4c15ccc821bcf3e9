"""The TVM-shaped builders: relay.add, relay.reshape, relay.nn.conv2d, TupleWrapper results."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import relay_nb as relay
from relay_nb.errors import AttrError
from relay_nb.ir.expr import Call, Constant, Tuple, TupleGetItem, TupleWrapper
from relay_nb.op import api
from relay_nb.op.registry import get_op
from relay_nb.op.tensor import BINARY_OPS, COMPARISON_OPS, PREDICATE_OPS, UNARY_OPS


@pytest.fixture
def x():
    return relay.var("x", shape=(1, 3, 8, 8))


@pytest.mark.parametrize("name", [n for n, _ in BINARY_OPS + COMPARISON_OPS])
def test_binary_builders(name):
    a, b = relay.var("a", shape=(2,)), relay.var("b", shape=(2,))
    call = getattr(relay, name)(a, b)
    assert (
        isinstance(call, Call)
        and call.op is get_op(name)
        and call.args == (a, b)
        and call.attrs is None
    )


@pytest.mark.parametrize("name", [n for n, _ in UNARY_OPS + PREDICATE_OPS])
def test_unary_builders(name):
    a = relay.var("a", shape=(2,))
    call = getattr(relay, name)(a)
    assert call.op is get_op(name) and call.args == (a,)
    assert getattr(relay.op, name) is getattr(relay, name)


def test_builder_arity_is_checked():
    with pytest.raises(TypeError, match=r"add\(lhs, rhs\): missing a required argument: 'rhs'"):
        relay.add(relay.var("a"))
    a, b = relay.var("a"), relay.var("b")
    assert relay.subtract(rhs=b, lhs=a).args == (a, b)  # keywords, as in TVM
    assert str(inspect.signature(relay.add)) == "(lhs, rhs)"


def test_python_numbers_become_literals():
    a = relay.var("a", shape=(2,))
    two = relay.multiply(a, 2).args[1]
    assert (
        isinstance(two, Constant)
        and two.is_literal
        and two.data.dtype == np.int32
        and two.data.item() == 2
    )
    half = relay.add(a, 0.5).args[1]
    assert half.is_literal and half.data.dtype == np.float32
    arr = relay.add(a, np.ones(2, "float16")).args[1]
    assert not arr.is_literal and arr.data.dtype == np.float16
    assert relay.logical_and(a, True).args[1].data.dtype == np.bool_


def test_bad_builder_argument():
    with pytest.raises(AttrError, match="cannot use 'x' of type str as a Relay expression"):
        relay.add(relay.var("a"), "x")


def test_conv2d_builder_widens_like_tvm(x):
    y = relay.nn.conv2d(x, relay.var("w"), strides=2, padding=(1, 2), channels=16, kernel_size=3)
    assert y.op is get_op("nn.conv2d")
    assert y.attrs.channels == 16
    assert y.attrs.kernel_size == (3, 3)
    assert y.attrs.strides == (2, 2)
    assert y.attrs.padding == (1, 2, 1, 2)
    assert y.attrs.data_layout == "NCHW"
    with pytest.raises(AttrError, match="attribute data_layout expects a string"):
        relay.nn.conv2d(x, relay.var("w"), data_layout=3)


def test_pool_and_other_nn_builders(x):
    p = relay.nn.max_pool2d(x, pool_size=3, strides=2, padding=1)
    assert p.attrs.pool_size == (3, 3) and p.attrs.padding == (1, 1, 1, 1)
    assert relay.nn.avg_pool2d(x, (2, 2), count_include_pad=True).attrs.count_include_pad is True
    assert relay.nn.adaptive_avg_pool2d(x, 1).attrs.output_size == (1, 1)
    assert relay.nn.dense(relay.var("d"), relay.var("w"), units=10).attrs.units == 10
    assert relay.nn.batch_matmul(x, x).attrs.transpose_b is True
    assert relay.nn.leaky_relu(x).attrs.alpha == 0.01  # TVM's builder default
    assert relay.nn.conv2d_transpose(x, relay.var("w")).attrs.kernel_layout == "IOHW"
    padded = relay.nn.pad(x, ((0, 0), (0, 0), (1, 1), (2, 2)))
    assert padded.attrs.pad_width == ((0, 0), (0, 0), (1, 1), (2, 2)) and padded.args[1].is_literal
    assert relay.nn.upsampling(x, 2, 2).attrs.scale_h == 2.0
    assert set(relay.nn.__all__) <= set(dir(relay.nn)) and all(
        callable(getattr(relay.nn, n)) for n in relay.nn.__all__
    )


def test_split_returns_a_tuple_wrapper(x):
    parts = relay.split(x, 3, axis=1)
    assert isinstance(parts, TupleWrapper) and len(parts) == 3
    first = parts[0]
    assert isinstance(first, TupleGetItem) and first.index == 0
    assert first.tuple_value is parts.astuple() and parts.astuple().op is get_op("split")
    assert parts.astuple().attrs.indices_or_sections == 3
    assert len(relay.split(x, [2, 5], axis=2)) == 3
    assert parts[-1].index == 2


def test_batch_norm_and_dropout_tuples(x):
    c = relay.var("c", shape=(3,))
    bn = relay.nn.batch_norm(x, c, c, c, c, epsilon=1e-3)
    assert isinstance(bn, TupleWrapper) and len(bn) == 3
    assert (
        bn[0].tuple_value.op is get_op("nn.batch_norm") and bn[0].tuple_value.attrs.epsilon == 1e-3
    )
    d = relay.nn.dropout(x, rate=0.1)
    assert isinstance(d, TupleGetItem) and d.index == 0 and d.tuple_value.op is get_op("nn.dropout")
    assert relay.nn.dropout_raw(x).op is get_op("nn.dropout")


def test_reduce_builders(x):
    assert relay.sum(x, axis=1).attrs.axis == (1,)
    assert relay.max(x, axis=[1, 2], keepdims=True).attrs.keepdims is True
    assert relay.mean(x).attrs.axis is None
    assert relay.argmax(x, axis=1).attrs.type_key == "relay.attrs.ArgReduceAttrs"
    v = relay.variance(x, axis=1, unbiased=True)
    assert (
        v.op is get_op("variance") and v.args[1].op is get_op("mean") and v.args[1].attrs.keepdims
    )
    s = relay.std(x, axis=1)
    assert s.op is get_op("sqrt") and s.args[0].op is get_op("variance")
    mv = relay.mean_variance(x, axis=1)
    assert len(mv) == 2 and isinstance(mv.astuple(), Tuple)


def test_transform_builders(x):
    assert relay.reshape(x, 192).attrs.newshape == (192,)
    assert relay.reshape(x, (0, -1)).attrs.newshape == (0, -1)
    assert relay.transpose(x).attrs.axes is None
    assert relay.transpose(x, (0, 2, 3, 1)).attrs.axes == (0, 2, 3, 1)
    assert relay.squeeze(x, axis=0).attrs.axis == (0,)
    assert relay.expand_dims(x, 0, 2).attrs.num_newaxis == 2
    cat = relay.concatenate([x, x], axis=1)
    assert isinstance(cat.args[0], Tuple) and len(cat.args) == 1
    assert isinstance(relay.stack((x, x), axis=0).args[0], Tuple)
    sl = relay.strided_slice(x, [0, 1], [1, 2])
    assert sl.attrs.strides == (1,) and sl.attrs.axes is None
    assert relay.take(x, relay.var("i", "int32"), axis=1).attrs.mode == "clip"
    assert relay.broadcast_to(x, (2, 3, 8, 8)).attrs.shape == (2, 3, 8, 8)
    assert relay.tile(x, 2).attrs.reps == (2,)
    assert relay.repeat(x, 2, 1).attrs.repeats == 2
    assert relay.reverse(x, 1).attrs.axis == 1
    assert relay.layout_transform(x, "NCHW", "NHWC").attrs.dst_layout == "NHWC"


def test_creation_builders():
    z = relay.zeros((2, 3), "float32")
    assert z.args == () and z.attrs.shape == (2, 3) and z.attrs.dtype == "float32"
    assert relay.ones(4, "int32").attrs.shape == (4,)
    f = relay.full(1.5, (2,), "float16")
    assert f.args[0].is_literal and f.attrs.dtype == "float16"
    r = relay.arange(5)
    assert [a.data.item() for a in r.args] == [0, 5, 1] and all(
        a.data.dtype == np.float32 for a in r.args
    )
    assert (r.attrs.start, r.attrs.stop, r.attrs.step, r.attrs.dtype) == (0, 5, 1, "float32")
    r2 = relay.arange(relay.const(1, "int32"), relay.const(7, "int32"), 2, dtype="int32")
    assert (r2.attrs.start, r2.attrs.stop, r2.attrs.step) == (1, 7, 2)
    assert relay.arange(relay.var("n", "float32")).attrs.stop is None
    assert relay.cast(relay.var("a"), "int8").attrs.dtype == "int8"
    assert relay.clip(relay.var("a"), 0, 6).attrs.a_max == 6.0
    w = relay.where(relay.var("c"), 1, 0)
    assert w.op is get_op("where") and w.args[1].is_literal


def test_builders_are_listed():
    for name in ("add", "sum", "reshape", "split", "zeros", "arange", "where", "clip"):
        assert name in api.__all__ and name in dir(relay)
