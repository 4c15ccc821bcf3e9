"""The DCGAN generator (a code vector to a 64x64 image), as ``tvm.relay.testing.dcgan``."""

from __future__ import annotations

from .. import op as _op
from ..analysis import free_vars
from ..ir.expr import Function, Var
from ..ir.ty import TensorType
from . import layers
from .init import create_workload

_nn = _op.nn


def deconv2d(data, ishape, oshape, kshape, layout, name, stride=(2, 2)):
    """A transposed convolution from ``ishape`` to ``oshape`` (C, H, W): padding and output
    padding chosen so the size doubles exactly."""
    target = (oshape[-2], oshape[-1])
    pad = ((kshape[0] - 1) // 2, (kshape[1] - 1) // 2)
    adj = tuple((target[i] + 2 * pad[i] - kshape[i]) % stride[i] for i in range(2))
    kernel_layout = {"NCHW": "IOHW", "NHWC": "HWOI"}.get(layout)
    if kernel_layout is None:
        raise ValueError(f"invalid layout {layout!r} (NCHW or NHWC)")
    return layers.conv2d_transpose(
        data,
        kernel_size=kshape,
        strides=stride,
        channels=oshape[0],
        padding=pad,
        output_padding=adj,
        data_layout=layout,
        kernel_layout=kernel_layout,
        name=name,
    )


def deconv2d_bn_relu(data, prefix, **kwargs):
    h = deconv2d(data, name=f"{prefix}_deconv", **kwargs)
    bn_axis = kwargs.get("layout", "NCHW").index("C")
    h = layers.batch_norm_infer(h, epsilon=1e-5 + 1e-12, scale=False, axis=bn_axis, name=f"{prefix}_batch_norm")
    return _nn.relu(h)


def get_net(batch_size, random_len=100, oshape=(3, 64, 64), ngf=128, code=None, layout="NCHW", dtype="float32"):
    """The generator: dense to 4x4xngf*8, then four doubling deconvolutions, then tanh."""
    if tuple(oshape[-2:]) != (64, 64):
        raise ValueError(f"the DCGAN generator makes 64x64 images, not {tuple(oshape[-2:])}")
    if code is None:
        code = Var("data", TensorType((batch_size, random_len), dtype))
    h = _nn.relu(_nn.dense(code, Var("dense_weight", None), units=4 * 4 * ngf * 8))
    if layout == "NCHW":
        h = _op.reshape(h, (-1, ngf * 8, 4, 4))
    elif layout == "NHWC":
        h = _op.reshape(h, (-1, 4, 4, ngf * 8))
    else:
        raise ValueError(f"invalid layout {layout!r} (NCHW or NHWC)")
    shapes = [(ngf * 8, 4, 4), (ngf * 4, 8, 8), (ngf * 2, 16, 16), (ngf, 32, 32)]
    for i in range(3):
        h = deconv2d_bn_relu(h, ishape=shapes[i], oshape=shapes[i + 1], kshape=(4, 4), layout=layout, prefix=f"g{i + 2}")
    h = deconv2d(h, ishape=shapes[3], oshape=tuple(oshape[-3:]), kshape=(4, 4), layout=layout, name="g5_deconv")
    out = _op.tanh(h)
    return Function(free_vars(out), out)


def get_workload(batch_size, oshape=(3, 64, 64), ngf=128, random_len=100, layout="NCHW", dtype="float32"):
    """``(mod, params)`` of the DCGAN generator with deterministic weights."""
    return create_workload(get_net(batch_size, random_len, tuple(oshape), ngf, layout=layout, dtype=dtype))
