"""SqueezeNet 1.0 and 1.1 (fire modules), as ``tvm.relay.testing.squeezenet``."""

from __future__ import annotations

from .. import op as _op
from ..analysis import free_vars
from ..ir.expr import Function, Var
from ..ir.ty import TensorType
from . import layers
from .init import create_workload

_nn = _op.nn


def _fire_conv(net, channels, kernel_size, padding, prefix):
    net = layers.conv2d(
        net, channels=channels, kernel_size=(kernel_size,) * 2, padding=(padding,) * 2, name=f"{prefix}_conv"
    )
    return _nn.relu(_nn.bias_add(net, Var(f"{prefix}_conv_bias", None)))


def _fire(net, squeeze, expand1x1, expand3x3, prefix):
    """Squeeze with 1x1 convs, then expand with 1x1 and 3x3 convs side by side."""
    net = _fire_conv(net, squeeze, 1, 0, f"{prefix}_input")
    left = _fire_conv(net, expand1x1, 1, 0, f"{prefix}_left")
    right = _fire_conv(net, expand3x3, 3, 1, f"{prefix}_right")
    return _op.concatenate((left, right), axis=1)


# the stem (channels, kernel, stride, padding) and the fire modules, "pool" between them
_LAYOUTS = {
    "1.0": ((96, 7, 2, 3), [(16, 64), (16, 64), (32, 128), "pool", (32, 128), (48, 192), (48, 192), (64, 256), "pool", (64, 256)]),
    "1.1": ((64, 3, 2, 1), [(16, 64), (16, 64), "pool", (32, 128), (32, 128), "pool", (48, 192), (48, 192), (64, 256), (64, 256)]),
}


def get_net(batch_size, image_shape, num_classes, version, dtype):
    """The SqueezeNet function."""
    if version not in _LAYOUTS:
        raise ValueError(f"unsupported SqueezeNet version {version!r}: 1.0 or 1.1")
    (channels, kernel, stride, pad), fires = _LAYOUTS[version]
    net = Var("data", TensorType((batch_size,) + tuple(image_shape), dtype))
    net = layers.conv2d(net, channels=channels, kernel_size=(kernel,) * 2, strides=(stride,) * 2, padding=(pad,) * 2, name="conv1")
    net = _nn.relu(_nn.bias_add(net, Var("conv1_bias", None)))
    net = _nn.max_pool2d(net, pool_size=(3, 3), strides=(2, 2))
    index = 1
    for spec in fires:
        if spec == "pool":
            net = _nn.max_pool2d(net, pool_size=(3, 3), strides=(2, 2))
            continue
        squeeze, expand = spec
        net = _fire(net, squeeze, expand, expand, f"fire{index}")
        index += 1
    net = _nn.dropout(net, rate=0.5)
    net = layers.conv2d(net, channels=num_classes, kernel_size=(1, 1), name="conv_final")
    net = _nn.relu(_nn.bias_add(net, Var("conv_final_bias", None)))
    net = _nn.softmax(_nn.batch_flatten(_nn.global_avg_pool2d(net)))
    return Function(free_vars(net), net)


def get_workload(batch_size=1, num_classes=1000, version="1.0", image_shape=(3, 224, 224), dtype="float32"):
    """``(mod, params)`` of SqueezeNet with deterministic weights."""
    return create_workload(get_net(batch_size, tuple(image_shape), num_classes, version, dtype))
