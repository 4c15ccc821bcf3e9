"""MobileNet v1 (depthwise-separable convolutions), as ``tvm.relay.testing.mobilenet``."""

from __future__ import annotations

from .. import op as _op
from ..analysis import free_vars
from ..ir.expr import Function, Var
from ..ir.ty import TensorType
from . import layers
from .init import create_workload

_nn = _op.nn


def conv_block(data, name, channels, kernel_size=(3, 3), strides=(1, 1), padding=(1, 1), epsilon=1e-5, layout="NCHW"):
    """conv, batch norm, relu."""
    conv = layers.conv2d(
        data,
        channels=channels,
        kernel_size=kernel_size,
        strides=strides,
        padding=padding,
        data_layout=layout,
        kernel_layout=layers.conv_kernel_layout(layout),
        name=name + "_conv",
    )
    return _nn.relu(layers.batch_norm_infer(conv, epsilon=epsilon, axis=layout.index("C"), name=name + "_bn"))


def separable_conv_block(
    data,
    name,
    depthwise_channels,
    pointwise_channels,
    kernel_size=(3, 3),
    downsample=False,
    padding=(1, 1),
    epsilon=1e-5,
    layout="NCHW",
    dtype="float32",
):
    """A depthwise 3x3 conv (stride 2 when downsampling) then a pointwise 1x1 conv, each
    followed by batch norm and relu."""
    if layout == "NCHW":
        wshape = (depthwise_channels, 1) + tuple(kernel_size)
    elif layout == "NHWC":
        wshape = tuple(kernel_size) + (depthwise_channels, 1)
    else:
        raise ValueError(f"invalid layout {layout!r} (NCHW or NHWC)")
    bn_axis = layout.index("C")
    weight = Var(name + "_weight", TensorType(wshape, dtype))
    depthwise = layers.conv2d(
        data,
        weight,
        channels=depthwise_channels,
        groups=depthwise_channels,
        kernel_size=kernel_size,
        strides=(2, 2) if downsample else (1, 1),
        padding=padding,
        data_layout=layout,
        kernel_layout=layers.conv_kernel_layout(layout, True),
        name=name + "_depthwise_conv1",
    )
    act = _nn.relu(layers.batch_norm_infer(depthwise, epsilon=epsilon, axis=bn_axis, name=name + "_bn1"))
    pointwise = layers.conv2d(
        act,
        channels=pointwise_channels,
        kernel_size=(1, 1),
        data_layout=layout,
        kernel_layout=layers.conv_kernel_layout(layout),
        name=name + "_conv2",
    )
    return _nn.relu(layers.batch_norm_infer(pointwise, epsilon=epsilon, axis=bn_axis, name=name + "_bn2"))


# (depthwise channels, pointwise channels, downsample) of blocks 1-6, then the deep or shallow tail
_HEAD = [(32, 64, False), (64, 128, True), (128, 128, False), (128, 256, True), (256, 256, False), (256, 512, True)]
_DEEP_TAIL = [(512, 512, False)] * 5 + [(512, 1024, True), (1024, 1024, False)]
_SHALLOW_TAIL = [(512, 1024, True), (1024, 1024, True)]


def mobile_net(num_classes=1000, data_shape=(1, 3, 224, 224), dtype="float32", alpha=1.0, is_shallow=False, layout="NCHW"):
    """The network; ``alpha`` scales every layer's width."""
    data = Var("data", TensorType(tuple(data_shape), dtype))
    body = conv_block(data, "conv_block_1", int(32 * alpha), strides=(2, 2), layout=layout)
    blocks = _HEAD + (_SHALLOW_TAIL if is_shallow else _DEEP_TAIL)
    for i, (dw, pw, down) in enumerate(blocks, start=1):
        body = separable_conv_block(
            body, f"separable_conv_block_{i}", int(dw * alpha), int(pw * alpha), downsample=down, layout=layout, dtype=dtype
        )
    flat = _nn.batch_flatten(_nn.global_avg_pool2d(body, layout=layout))
    fc = _nn.bias_add(_nn.dense(flat, Var("fc_weight", None), units=num_classes), Var("fc_bias", None))
    out = _nn.softmax(fc)
    return Function(free_vars(out), out)


def get_workload(batch_size=1, num_classes=1000, image_shape=(3, 224, 224), dtype="float32", layout="NCHW"):
    """``(mod, params)`` of MobileNet with deterministic weights."""
    data_shape = (batch_size,) + tuple(image_shape)
    return create_workload(mobile_net(num_classes, data_shape, dtype, 1.0, False, layout))
