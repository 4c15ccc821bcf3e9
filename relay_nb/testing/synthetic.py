"""A small synthetic network mixing dense, conv, softmax and batch norm, as
``tvm.relay.testing.synthetic`` (weights from the :class:`~.init.Constant` initializer)."""

from __future__ import annotations

from .. import op as _op
from ..analysis import free_vars
from ..ir.expr import Function, Var
from ..ir.ty import TensorType
from . import layers
from .init import Constant, create_workload

_nn = _op.nn


def _block(data, input_shape, dense_name, conv_name, wtype):
    """relu(dense) over the last axis, added to softmax(conv 3x3) of the same data."""
    width = input_shape[3]
    dense = _nn.relu(_nn.dense(_op.reshape(data, (-1, width)), Var(dense_name, TensorType((width, width), wtype))))
    dense = _op.reshape_like(dense, data)
    channels = input_shape[1]
    weight = Var(conv_name, TensorType((channels, channels, 3, 3), wtype))
    return _op.add(dense, _nn.softmax(_nn.conv2d(data, weight, padding=1, kernel_size=3)))


def get_net(input_shape=(1, 3, 24, 12), dtype="float32", wtype=None):
    """The synthetic function."""
    wtype = wtype or dtype
    data = Var("data", TensorType(tuple(input_shape), dtype))
    added = _block(data, input_shape, "dense_weight", "conv_weight", wtype)
    biased = layers.batch_norm_infer(_nn.bias_add(added, Var("bias", TensorType((input_shape[1],), wtype))), name="batch_norm")
    out = _block(biased, input_shape, "dense2_weight", "conv2_weight", wtype)
    return Function(free_vars(out), out)


def get_workload(input_shape=(1, 3, 24, 12), dtype="float32", wtype=None):
    """``(mod, params)`` of the synthetic network."""
    return create_workload(get_net(tuple(input_shape), dtype, wtype), initializer=Constant())
