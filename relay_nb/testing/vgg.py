"""VGG 11/13/16/19, optionally with batch norm, as ``tvm.relay.testing.vgg``."""

from __future__ import annotations

from .. import op as _op
from ..analysis import free_vars
from ..ir.expr import Function, Var
from ..ir.ty import TensorType
from . import layers
from .init import create_workload

_nn = _op.nn

# convs per block, and the blocks' widths
SPECS = {
    11: ([1, 1, 2, 2, 2], [64, 128, 256, 512, 512]),
    13: ([2, 2, 2, 2, 2], [64, 128, 256, 512, 512]),
    16: ([2, 2, 3, 3, 3], [64, 128, 256, 512, 512]),
    19: ([2, 2, 4, 4, 4], [64, 128, 256, 512, 512]),
}


def get_feature(net, convs, filters, batch_norm=False):
    """The convolution blocks, each ended by 2x2 max pooling."""
    for i, count in enumerate(convs):
        for j in range(count):
            name = f"{i + 1}_{j + 1}"
            net = layers.conv2d(net, kernel_size=(3, 3), padding=(1, 1), channels=filters[i], name=f"conv{name}")
            net = _nn.bias_add(net, Var(f"conv{name}_bias", None))
            if batch_norm:
                net = layers.batch_norm_infer(net, name=f"bn{name}")
            net = _nn.relu(net)
        net = _nn.max_pool2d(net, pool_size=(2, 2), strides=(2, 2))
    return net


def get_classifier(net, num_classes):
    """Three dense layers (4096, 4096, classes) with relu and dropout between."""
    net = _nn.batch_flatten(net)
    for name, units in (("fc6", 4096), ("fc7", 4096)):
        net = _nn.dropout(_nn.relu(layers.dense_add_bias(net, units=units, name=name)), rate=0.5)
    return layers.dense_add_bias(net, units=num_classes, name="fc8")


def get_net(batch_size, image_shape, num_classes, dtype, num_layers=11, batch_norm=False):
    """The VGG function."""
    if num_layers not in SPECS:
        raise ValueError(f"invalid num_layers {num_layers}: choose 11, 13, 16 or 19")
    convs, filters = SPECS[num_layers]
    data = Var("data", TensorType((batch_size,) + tuple(image_shape), dtype))
    out = _nn.softmax(get_classifier(get_feature(data, convs, filters, batch_norm), num_classes))
    return Function(free_vars(out), out)


def get_workload(batch_size, num_classes=1000, image_shape=(3, 224, 224), dtype="float32", num_layers=11, batch_norm=False):
    """``(mod, params)`` of VGG with deterministic weights."""
    return create_workload(get_net(batch_size, tuple(image_shape), num_classes, dtype, num_layers, batch_norm))
