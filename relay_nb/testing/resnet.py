"""ResNet v2 (pre-activation), as ``tvm.relay.testing.resnet``: 18 to 269 layers.

The same builder makes the 3-D variant of :mod:`.resnet_3d` (``ndim=3``).  Parameter
names follow TVM's (``stage1_unit1_conv1_weight``, ``bn_data_gamma`` ...), so code that
looks parameters up by name keeps working.
"""

from __future__ import annotations

from .. import op as _op
from ..analysis import free_vars
from ..ir.expr import Function, Var
from ..ir.ty import TensorType
from . import layers
from .init import create_workload

_nn = _op.nn

UNITS = {
    18: [2, 2, 2, 2],
    34: [3, 4, 6, 3],
    50: [3, 4, 6, 3],
    101: [3, 4, 23, 3],
    152: [3, 8, 36, 3],
    200: [3, 24, 36, 3],
    269: [3, 30, 48, 8],
}


def _conv(ndim, data, name, channels, kernel, stride, pad, data_layout, kernel_layout):
    conv = layers.conv2d if ndim == 2 else layers.conv3d
    return conv(
        data,
        channels=channels,
        kernel_size=(kernel,) * ndim if isinstance(kernel, int) else kernel,
        strides=(stride,) * ndim if isinstance(stride, int) else stride,
        padding=(pad,) * ndim if isinstance(pad, int) else pad,
        data_layout=data_layout,
        kernel_layout=kernel_layout,
        name=name,
    )


def residual_unit(
    data,
    num_filter,
    stride,
    dim_match,
    name,
    bottle_neck=True,
    data_layout="NCHW",
    kernel_layout="OIHW",
):
    """One pre-activation unit: BN-ReLU-conv twice (or three times, bottlenecked), plus the
    shortcut (the input itself, or a strided 1x1 conv when the shape changes)."""
    ndim = len(data_layout) - 2
    bn_axis = data_layout.index("C")

    def bn_relu(x, suffix):
        return _nn.relu(layers.batch_norm_infer(x, epsilon=2e-5, axis=bn_axis, name=f"{name}_{suffix}"))

    def conv(x, suffix, channels, kernel, s, pad):
        return _conv(ndim, x, f"{name}_{suffix}", channels, kernel, s, pad, data_layout, kernel_layout)

    act1 = bn_relu(data, "bn1")
    if bottle_neck:
        mid = int(num_filter * 0.25)
        body = conv(act1, "conv1", mid, 1, stride, 0)
        body = conv(bn_relu(body, "bn2"), "conv2", mid, 3, 1, 1)
        body = conv(bn_relu(body, "bn3"), "conv3", num_filter, 1, 1, 0)
    else:
        body = conv(act1, "conv1", num_filter, 3, stride, 1)
        body = conv(bn_relu(body, "bn2"), "conv2", num_filter, 3, 1, 1)
    shortcut = data if dim_match else conv(act1, "sc", num_filter, 1, stride, 0)
    return _op.add(body, shortcut)


def resnet(
    units,
    num_stages,
    filter_list,
    num_classes,
    data_shape,
    bottle_neck=True,
    layout="NCHW",
    dtype="float32",
):
    """The network: a stem, ``num_stages`` stages of residual units, pool, dense, softmax."""
    ndim = len(layout) - 2
    kernel_layout = {"NCHW": "OIHW", "NHWC": "HWIO", "NCDHW": "OIDHW", "NDHWC": "DHWIO"}[layout]
    bn_axis = layout.index("C")
    if len(units) != num_stages:
        raise ValueError(f"{len(units)} unit counts for {num_stages} stages")
    data = Var("data", TensorType(tuple(data_shape), dtype))
    body = layers.batch_norm_infer(data, epsilon=2e-5, axis=bn_axis, scale=False, name="bn_data")
    height = data_shape[layout.index("H")]
    if height <= 32:  # CIFAR-sized images: a 3x3 stem, no pooling
        body = _conv(ndim, body, "conv0", filter_list[0], 3, 1, 1, layout, kernel_layout)
    else:  # ImageNet-sized: 7x7/2 stem (3x7x7 in 3-D), then 3x3/2 max pooling in 2-D
        kernel, stride, pad = ((7, 7), (2, 2), (3, 3)) if ndim == 2 else ((3, 7, 7), (1, 2, 2), (1, 3, 3))
        body = _conv(ndim, body, "conv0", filter_list[0], kernel, stride, pad, layout, kernel_layout)
        body = _nn.relu(layers.batch_norm_infer(body, epsilon=2e-5, axis=bn_axis, name="bn0"))
        if ndim == 2:
            body = _nn.max_pool2d(body, pool_size=(3, 3), strides=(2, 2), padding=(1, 1), layout=layout)
    for i in range(num_stages):
        stride = 1 if i == 0 else 2
        body = residual_unit(
            body, filter_list[i + 1], (stride,) * ndim, False, f"stage{i + 1}_unit1", bottle_neck, layout, kernel_layout
        )
        for j in range(units[i] - 1):
            body = residual_unit(
                body, filter_list[i + 1], (1,) * ndim, True, f"stage{i + 1}_unit{j + 2}", bottle_neck, layout, kernel_layout
            )
    body = _nn.relu(layers.batch_norm_infer(body, epsilon=2e-5, axis=bn_axis, name="bn1"))
    if ndim == 2:
        pooled = _nn.global_avg_pool2d(body, layout=layout)
    else:  # global average pooling over D, H, W
        spatial = [layout.index(c) for c in "DHW"]
        pooled = _op.mean(body, axis=spatial, keepdims=True)
    flat = _nn.batch_flatten(pooled)
    out = _nn.softmax(layers.dense_add_bias(flat, units=num_classes, name="fc1"))
    return Function(free_vars(out), out)


def stages_for(num_layers: int, height: int):
    """``(units, num_stages, filter_list, bottle_neck)`` of a ResNet depth, as TVM picks them."""
    if height <= 28:
        if (num_layers - 2) % 9 == 0 and num_layers >= 164:
            return [(num_layers - 2) // 9] * 3, 3, [16, 64, 128, 256], True
        if (num_layers - 2) % 6 == 0 and num_layers < 164:
            return [(num_layers - 2) // 6] * 3, 3, [16, 16, 32, 64], False
        raise ValueError(f"no ResNet of {num_layers} layers for {height}-pixel images")
    if num_layers not in UNITS:
        raise ValueError(f"no ResNet of {num_layers} layers: choose one of {sorted(UNITS)}")
    if num_layers >= 50:
        return UNITS[num_layers], 4, [64, 256, 512, 1024, 2048], True
    return UNITS[num_layers], 4, [64, 64, 128, 256, 512], False


def get_net(batch_size, num_classes, num_layers=50, image_shape=(3, 224, 224), layout="NCHW", dtype="float32", **kwargs):
    """The ResNet function for ``image_shape`` (C, H, W in NCHW; H, W, C in NHWC)."""
    data_shape = (batch_size,) + tuple(image_shape)
    height = data_shape[layout.index("H")]
    units, num_stages, filter_list, bottle_neck = stages_for(num_layers, height)
    return resnet(units, num_stages, filter_list, num_classes, data_shape, bottle_neck, layout, dtype)


def get_workload(
    batch_size=1,
    num_classes=1000,
    num_layers=18,
    image_shape=(3, 224, 224),
    layout="NCHW",
    dtype="float32",
    **kwargs,
):
    """``(mod, params)`` of a ResNet with deterministic weights.

    >>> mod, params = relay.testing.resnet.get_workload(num_layers=18, batch_size=1)
    """
    net = get_net(batch_size, num_classes, num_layers, tuple(image_shape), layout, dtype, **kwargs)
    return create_workload(net)
