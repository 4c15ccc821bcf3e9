"""DenseNet 121/161/169/201, as ``tvm.relay.testing.densenet`` (a port of MXNet Gluon's)."""

from __future__ import annotations

from .. import op as _op
from ..analysis import free_vars
from ..ir.expr import Function, Var
from ..ir.ty import TensorType
from . import layers
from .init import create_workload

_nn = _op.nn

# initial features, growth rate, layers per dense block
SPECS = {
    121: (64, 32, [6, 12, 24, 16]),
    161: (96, 48, [6, 12, 36, 24]),
    169: (69, 32, [6, 12, 32, 32]),
    201: (64, 32, [6, 12, 48, 32]),
}


def _dense_layer(data, growth_rate, bn_size, index):
    """BN-ReLU-1x1 conv (bottleneck) then BN-ReLU-3x3 conv to ``growth_rate`` channels."""
    h = _nn.relu(layers.batch_norm_infer(data, name=f"batch_1_{index}"))
    h = layers.conv2d(h, channels=bn_size * growth_rate, kernel_size=(1, 1), name=f"conv2d_1_{index}")
    h = _nn.relu(layers.batch_norm_infer(h, name=f"batch_2_{index}"))
    return layers.conv2d(h, channels=growth_rate, kernel_size=(3, 3), padding=(1, 1), name=f"conv2d_2_{index}")


def _dense_block(data, num_layers, bn_size, growth_rate, index):
    # As TVM's workload (which differs from the paper's DenseNet): each layer reads only the
    # previous layer's output, and the block concatenates its layers' outputs without its
    # input, so a block has num_layers * growth_rate channels (DenseNet-121 ends with 512).
    outputs, h = [], data
    for i in range(num_layers):
        h = _dense_layer(h, growth_rate, bn_size, f"{index}_{i}")
        outputs.append(h)
    return _op.concatenate(outputs, 1)


def _transition(data, channels, index):
    h = _nn.relu(layers.batch_norm_infer(data, name=f"batch_t_{index}"))
    h = layers.conv2d(h, channels=channels, kernel_size=(1, 1), name=f"conv_t_{index}")
    return _nn.avg_pool2d(h, pool_size=(2, 2), strides=(2, 2))


def _dense_net(num_init_features, growth_rate, block_config, data_shape, dtype, bn_size=4, classes=1000):
    data = Var("data", TensorType(tuple(data_shape), dtype))
    h = layers.conv2d(data, channels=num_init_features, kernel_size=(7, 7), strides=(2, 2), padding=(3, 3), name="conv1")
    h = _nn.relu(layers.batch_norm_infer(h, name="batch1"))
    h = _nn.max_pool2d(h, pool_size=(3, 3), strides=(2, 2), padding=(1, 1))
    features = num_init_features
    for i, num_layers in enumerate(block_config):
        h = _dense_block(h, num_layers, bn_size, growth_rate, i)
        features += num_layers * growth_rate
        if i != len(block_config) - 1:
            features //= 2
            h = _transition(h, features, i)
    h = _nn.relu(layers.batch_norm_infer(h, name="batch2"))
    h = _nn.batch_flatten(_nn.avg_pool2d(h, pool_size=(7, 7)))
    out = layers.dense_add_bias(h, units=classes, name="dense")
    return Function(free_vars(out), out)


def get_workload(densenet_size=121, classes=1000, batch_size=4, image_shape=(3, 224, 224), dtype="float32"):
    """``(mod, params)`` of DenseNet with deterministic weights."""
    if densenet_size not in SPECS:
        raise ValueError(f"no DenseNet-{densenet_size}: choose one of {sorted(SPECS)}")
    init, growth, config = SPECS[densenet_size]
    data_shape = (batch_size,) + tuple(image_shape)
    return create_workload(_dense_net(init, growth, config, data_shape, dtype, 4, classes))
