"""Inception v3 (299x299 input), as ``tvm.relay.testing.inception_v3``.

Each Inception module runs parallel *towers* — chains of conv-BN-ReLU units — and
concatenates them along channels; a tower is written here as a list of
``(suffix, filters, kernel, padding, stride)`` so each module reads as its shape.
"""

from __future__ import annotations

from .. import op as _op
from ..analysis import free_vars
from ..ir.expr import Function, Var
from ..ir.ty import TensorType
from . import layers
from .init import create_workload

_nn = _op.nn


def conv(data, filters, kernel=(1, 1), stride=(1, 1), pad=(0, 0), name="", suffix=""):
    """conv (no bias), batch norm without scale, relu."""
    h = layers.conv2d(data, channels=int(filters), kernel_size=kernel, strides=stride, padding=pad, name=f"{name}{suffix}_conv1")
    return _nn.relu(layers.batch_norm_infer(h, epsilon=2e-5, scale=False, name=f"{name}{suffix}_bn"))


def pooling(data, kernel, stride, pad, pool_type):
    if pool_type == "max":
        return _nn.max_pool2d(data, pool_size=kernel, strides=stride, padding=pad)
    if pool_type == "avg":
        return _nn.avg_pool2d(data, pool_size=kernel, strides=stride, padding=pad, count_include_pad=True)
    raise ValueError(f"invalid pooling type {pool_type!r}")


def _tower(data, name, units):
    for suffix, filters, kernel, pad, stride in units:
        data = conv(data, filters, kernel, stride, pad, name=name, suffix=suffix)
    return data


def _pool_proj(data, pool, proj, name):
    pooled = pooling(data, (3, 3), (1, 1), (1, 1), pool)
    return conv(pooled, proj, name=f"{name}_tower_2", suffix="_conv")


def inception_a(data, n1x1, n3x3_red, n3x3_1, n3x3_2, n5x5_red, n5x5, pool, proj, name):
    return _op.concatenate(
        (
            conv(data, n1x1, name=f"{name}_conv"),
            _tower(data, f"{name}_tower", [("_conv", n5x5_red, (1, 1), (0, 0), (1, 1)), ("_conv_1", n5x5, (5, 5), (2, 2), (1, 1))]),
            _tower(
                data,
                f"{name}_tower_1",
                [
                    ("_conv", n3x3_red, (1, 1), (0, 0), (1, 1)),
                    ("_conv_1", n3x3_1, (3, 3), (1, 1), (1, 1)),
                    ("_conv_2", n3x3_2, (3, 3), (1, 1), (1, 1)),
                ],
            ),
            _pool_proj(data, pool, proj, name),
        ),
        axis=1,
    )


def inception_b(data, n3x3, nd3x3_red, nd3x3_1, nd3x3_2, pool, name):
    """The first grid reduction (stride 2)."""
    return _op.concatenate(
        (
            conv(data, n3x3, (3, 3), (2, 2), name=f"{name}_conv"),
            _tower(
                data,
                f"{name}_tower",
                [
                    ("_conv", nd3x3_red, (1, 1), (0, 0), (1, 1)),
                    ("_conv_1", nd3x3_1, (3, 3), (1, 1), (1, 1)),
                    ("_conv_2", nd3x3_2, (3, 3), (0, 0), (2, 2)),
                ],
            ),
            pooling(data, (3, 3), (2, 2), (0, 0), "max"),
        ),
        axis=1,
    )


def inception_c(data, n1x1, nd7_red, nd7_1, nd7_2, nq7_red, nq7_1, nq7_2, nq7_3, nq7_4, pool, proj, name):
    """Factorized 7x7 convolutions (1x7 and 7x1)."""
    row, col = ((1, 7), (0, 3)), ((7, 1), (3, 0))
    return _op.concatenate(
        (
            conv(data, n1x1, name=f"{name}_conv"),
            _tower(
                data,
                f"{name}_tower",
                [("_conv", nd7_red, (1, 1), (0, 0), (1, 1)), ("_conv_1", nd7_1, *row, (1, 1)), ("_conv_2", nd7_2, *col, (1, 1))],
            ),
            _tower(
                data,
                f"{name}_tower_1",
                [
                    ("_conv", nq7_red, (1, 1), (0, 0), (1, 1)),
                    ("_conv_1", nq7_1, *col, (1, 1)),
                    ("_conv_2", nq7_2, *row, (1, 1)),
                    ("_conv_3", nq7_3, *col, (1, 1)),
                    ("_conv_4", nq7_4, *row, (1, 1)),
                ],
            ),
            _pool_proj(data, pool, proj, name),
        ),
        axis=1,
    )


def inception_d(data, n3x3_red, n3x3, nd7_3x3_red, nd7_1, nd7_2, nd7_3x3, pool, name):
    """The second grid reduction."""
    return _op.concatenate(
        (
            _tower(data, f"{name}_tower", [("_conv", n3x3_red, (1, 1), (0, 0), (1, 1)), ("_conv_1", n3x3, (3, 3), (0, 0), (2, 2))]),
            _tower(
                data,
                f"{name}_tower_1",
                [
                    ("_conv", nd7_3x3_red, (1, 1), (0, 0), (1, 1)),
                    ("_conv_1", nd7_1, (1, 7), (0, 3), (1, 1)),
                    ("_conv_2", nd7_2, (7, 1), (3, 0), (1, 1)),
                    ("_conv_3", nd7_3x3, (3, 3), (0, 0), (2, 2)),
                ],
            ),
            pooling(data, (3, 3), (2, 2), (0, 0), pool),
        ),
        axis=1,
    )


def inception_e(data, n1x1, nd3_red, nd3_1, nd3_2, n3x3_d3_red, n3x3, n3x3_d3_1, n3x3_d3_2, pool, proj, name):
    """Expanded filter banks: each 3x3 tower ends in parallel 1x3 and 3x1 convs."""
    tower = conv(data, nd3_red, name=f"{name}_tower", suffix="_conv")
    tower_1 = _tower(
        data, f"{name}_tower_1", [("_conv", n3x3_d3_red, (1, 1), (0, 0), (1, 1)), ("_conv_1", n3x3, (3, 3), (1, 1), (1, 1))]
    )
    return _op.concatenate(
        (
            conv(data, n1x1, name=f"{name}_conv"),
            conv(tower, nd3_1, (1, 3), pad=(0, 1), name=f"{name}_tower", suffix="_mixed_conv"),
            conv(tower, nd3_2, (3, 1), pad=(1, 0), name=f"{name}_tower", suffix="_mixed_conv_1"),
            conv(tower_1, n3x3_d3_1, (1, 3), pad=(0, 1), name=f"{name}_tower_1", suffix="_mixed_conv"),
            conv(tower_1, n3x3_d3_2, (3, 1), pad=(1, 0), name=f"{name}_tower_1", suffix="_mixed_conv_1"),
            _pool_proj(data, pool, proj, name),
        ),
        axis=1,
    )


def get_net(batch_size, num_classes, image_shape, dtype):
    """The Inception v3 function."""
    data = Var("data", TensorType((batch_size,) + tuple(image_shape), dtype))
    h = conv(data, 32, (3, 3), (2, 2), name="conv")
    h = conv(h, 32, (3, 3), name="conv_1")
    h = conv(h, 64, (3, 3), pad=(1, 1), name="conv_2")
    h = pooling(h, (3, 3), (2, 2), (0, 0), "max")
    h = conv(h, 80, name="conv_3")
    h = conv(h, 192, (3, 3), name="conv_4")
    h = pooling(h, (3, 3), (2, 2), (0, 0), "max")
    h = inception_a(h, 64, 64, 96, 96, 48, 64, "avg", 32, "mixed")
    h = inception_a(h, 64, 64, 96, 96, 48, 64, "avg", 64, "mixed_1")
    h = inception_a(h, 64, 64, 96, 96, 48, 64, "avg", 64, "mixed_2")
    h = inception_b(h, 384, 64, 96, 96, "max", "mixed_3")
    h = inception_c(h, 192, 128, 128, 192, 128, 128, 128, 128, 192, "avg", 192, "mixed_4")
    h = inception_c(h, 192, 160, 160, 192, 160, 160, 160, 160, 192, "avg", 192, "mixed_5")
    h = inception_c(h, 192, 160, 160, 192, 160, 160, 160, 160, 192, "avg", 192, "mixed_6")
    h = inception_c(h, 192, 192, 192, 192, 192, 192, 192, 192, 192, "avg", 192, "mixed_7")
    h = inception_d(h, 192, 320, 192, 192, 192, 192, "max", "mixed_8")
    h = inception_e(h, 320, 384, 384, 384, 448, 384, 384, 384, "avg", 192, "mixed_9")
    h = inception_e(h, 320, 384, 384, 384, 448, 384, 384, 384, "max", 192, "mixed_10")
    h = _nn.batch_flatten(pooling(h, (8, 8), (1, 1), (0, 0), "avg"))
    # The bias is named fc2_bias in TVM's workload; kept so params look up the same.
    fc = _nn.bias_add(_nn.dense(h, Var("fc1_weight", None), units=num_classes), Var("fc2_bias", None), axis=-1)
    out = _nn.softmax(fc)
    return Function(free_vars(out), out)


def get_workload(batch_size=1, num_classes=1000, image_shape=(3, 299, 299), dtype="float32"):
    """``(mod, params)`` of Inception v3 with deterministic weights."""
    return create_workload(get_net(batch_size, num_classes, tuple(image_shape), dtype))
