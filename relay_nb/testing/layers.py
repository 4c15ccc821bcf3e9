"""Layer helpers that make their own named weights (``relay.testing.layers``).

``conv2d(data, channels=64, kernel_size=(3, 3), name="conv0")`` creates the variable
``%conv0_weight`` with no type: InferType gives it the shape the attributes imply, and
:func:`~.init.create_workload` initializes it by its name.
"""

from __future__ import annotations

from .. import op as _op
from ..ir.expr import Expr, Var

_nn = _op.nn


def _var(name: str) -> Var:
    return Var(name, None)


def batch_norm_infer(data, gamma=None, beta=None, moving_mean=None, moving_var=None, *, name, **kwargs) -> Expr:
    """``nn.batch_norm(...)[0]`` with ``{name}_gamma``, ``_beta``, ``_moving_mean``, ``_moving_var``."""
    gamma = gamma if gamma is not None else _var(name + "_gamma")
    beta = beta if beta is not None else _var(name + "_beta")
    moving_mean = moving_mean if moving_mean is not None else _var(name + "_moving_mean")
    moving_var = moving_var if moving_var is not None else _var(name + "_moving_var")
    return _nn.batch_norm(data, gamma, beta, moving_mean, moving_var, **kwargs)[0]


def conv2d(data, weight=None, *, name, **kwargs) -> Expr:
    """``nn.conv2d`` with the weight ``{name}_weight`` unless one is given."""
    return _nn.conv2d(data, weight if weight is not None else _var(name + "_weight"), **kwargs)


def conv3d(data, weight=None, *, name, **kwargs) -> Expr:
    """``nn.conv3d`` with the weight ``{name}_weight`` unless one is given."""
    return _nn.conv3d(data, weight if weight is not None else _var(name + "_weight"), **kwargs)


def conv2d_transpose(data, weight=None, *, name, **kwargs) -> Expr:
    """``nn.conv2d_transpose`` with the weight ``{name}_weight`` unless one is given."""
    return _nn.conv2d_transpose(data, weight if weight is not None else _var(name + "_weight"), **kwargs)


def dense_add_bias(data, weight=None, bias=None, units=None, *, name, **kwargs) -> Expr:
    """``nn.dense`` then ``nn.bias_add`` with ``{name}_weight`` and ``{name}_bias``."""
    weight = weight if weight is not None else _var(name + "_weight")
    bias = bias if bias is not None else _var(name + "_bias")
    return _nn.bias_add(_nn.dense(data, weight, units, **kwargs), bias, axis=-1)


def conv_kernel_layout(data_layout: str, is_depthwise: bool = False) -> str:
    """The kernel layout TVM's workloads pair with a data layout."""
    table = {"NCHW": "OIHW", "NHWC": "HWOI" if is_depthwise else "HWIO"}
    if data_layout not in table:
        raise ValueError(f"unknown data layout {data_layout!r} (NCHW or NHWC)")
    return table[data_layout]


__all__ = ["batch_norm_infer", "conv2d", "conv2d_transpose", "conv3d", "conv_kernel_layout", "dense_add_bias"]
