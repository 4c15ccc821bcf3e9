"""The Deep Q-Network of Mnih et al. (Atari frames), as ``tvm.relay.testing.dqn``."""

from __future__ import annotations

from .. import op as _op
from ..analysis import free_vars
from ..ir.expr import Function, Var
from ..ir.ty import TensorType
from . import layers
from .init import create_workload

_nn = _op.nn

# name, channels, kernel, stride
_CONVS = [("conv1", 32, 8, 4), ("conv2", 64, 4, 2), ("conv3", 64, 3, 1)]


def get_net(batch_size, num_actions=18, image_shape=(4, 84, 84), dtype="float32", layout="NCHW"):
    """Three convolutions, a 512-unit dense layer, and one Q-value per action."""
    h = Var("data", TensorType((batch_size,) + tuple(image_shape), dtype))
    for name, channels, kernel, stride in _CONVS:
        h = layers.conv2d(
            h,
            kernel_size=(kernel, kernel),
            strides=(stride, stride),
            padding=(0, 0),
            channels=channels,
            data_layout=layout,
            kernel_layout=layers.conv_kernel_layout(layout),
            name=name,
        )
        h = _nn.relu(_nn.bias_add(h, Var(f"{name}_bias", None), layout.index("C")))
    h = _nn.relu(layers.dense_add_bias(_nn.batch_flatten(h), units=512, name="dense1"))
    out = layers.dense_add_bias(h, units=num_actions, name="dense2")
    return Function(free_vars(out), out)


def get_workload(batch_size, num_actions=18, image_shape=(4, 84, 84), dtype="float32", layout="NCHW"):
    """``(mod, params)`` of the DQN with deterministic weights."""
    return create_workload(get_net(batch_size, num_actions, tuple(image_shape), dtype, layout))
