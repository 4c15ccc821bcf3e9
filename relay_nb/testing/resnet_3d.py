"""3-D ResNet for video clips, as ``tvm.relay.testing.resnet_3d`` (``conv3d`` throughout;
the builder is :func:`.resnet.resnet` with 5-d layouts)."""

from __future__ import annotations

from .init import create_workload
from .resnet import resnet, stages_for


def get_net(batch_size, num_classes, num_layers=50, image_shape=(3, 16, 112, 112), layout="NCDHW", dtype="float32", **kwargs):
    """The 3-D ResNet function; ``image_shape`` is (C, D, H, W) in NCDHW."""
    data_shape = (batch_size,) + tuple(image_shape)
    height = data_shape[layout.index("H")]
    units, num_stages, filter_list, bottle_neck = stages_for(num_layers, height)
    return resnet(units, num_stages, filter_list, num_classes, data_shape, bottle_neck, layout, dtype)


def get_workload(
    batch_size=1,
    num_classes=1000,
    num_layers=18,
    image_shape=(3, 16, 112, 112),
    layout="NCDHW",
    dtype="float32",
    **kwargs,
):
    """``(mod, params)`` of a 3-D ResNet with deterministic weights."""
    return create_workload(get_net(batch_size, num_classes, num_layers, tuple(image_shape), layout, dtype, **kwargs))
