"""A multi-layer perceptron, as ``tvm.relay.testing.mlp``: 784 -> 128 -> 64 -> classes."""

from __future__ import annotations

from .. import op as _op
from ..analysis import free_vars
from ..ir.expr import Function, Var
from ..ir.ty import TensorType
from .init import create_workload


def get_net(batch_size, num_classes=10, image_shape=(1, 28, 28), dtype="float32"):
    """The MLP as a function of ``data`` and its weights."""
    x = Var("data", TensorType((batch_size,) + tuple(image_shape), dtype))
    h = _op.nn.batch_flatten(x)
    for i, units in enumerate((128, 64, num_classes), start=1):
        h = _op.nn.dense(h, Var(f"fc{i}_weight", None), units=units)
        h = _op.nn.bias_add(h, Var(f"fc{i}_bias", None), axis=-1)
        if i < 3:
            h = _op.nn.relu(h)
    out = _op.nn.softmax(h)
    return Function(free_vars(out), out)


def get_workload(batch_size, num_classes=10, image_shape=(1, 28, 28), dtype="float32"):
    """``(mod, params)`` of the MLP with deterministic weights."""
    return create_workload(get_net(batch_size, num_classes, image_shape, dtype))

