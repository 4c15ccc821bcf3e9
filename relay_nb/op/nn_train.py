"""Training ops of TVM's ``nn`` family: the losses (``nll_loss``, ``cross_entropy``,
``cross_entropy_with_logits``) and the backward ops TVM's own gradients emit
(``max_pool2d_grad``, ``avg_pool2d_grad``, ``conv2d_backward_weight``).

Relations follow ``src/relay/op/nn/{nn,pooling,convolution}.cc``; builders the signatures of
``python/tvm/relay/op/nn/nn.py``, re-exported as ``relay.nn.*``.
"""

from __future__ import annotations

from ..errors import RelayTypeError
from ..ir.expr import Expr
from ..ir.ty import TensorType
from ..typing.relations import forward_relation, shape_text
from ._common import (
    as_tuple,
    call,
    ints,
    is_int_dtype,
    is_static,
    layout_axes,
    pad_tuple,
    padding_pairs,
    register,
    same_dim,
    schema,
    tensor,
    type_text,
)
from .nn import _conv_attrs, _pool_attrs, _pool_rel
from .registry import OpPattern

# --- losses -------------------------------------------------------------------------------


@forward_relation("NLLLoss")
def _nll_loss_rel(inputs, attrs, reporter):
    pred = tensor(inputs[0], "predictions")
    targets = tensor(inputs[1], "targets")
    weights = tensor(inputs[2], "weights")
    if len(pred.shape) != len(targets.shape) + 1 or len(pred.shape) < 2:
        raise RelayTypeError(
            f"predictions {shape_text(pred.shape)} must have one dimension more than targets "
            f"{shape_text(targets.shape)} (N, C, ...) against (N, ...)"
        )
    if len(weights.shape) != 1:
        raise RelayTypeError(
            f"weights must be a 1-d tensor of one weight per class, found {type_text(weights)}"
        )
    if not same_dim(pred.shape[1], weights.shape[0]):
        raise RelayTypeError(
            f"predictions have {pred.shape[1]} classes but weights has {weights.shape[0]}"
        )
    rest = (pred.shape[0],) + pred.shape[2:]
    if not all(same_dim(a, b) for a, b in zip(rest, targets.shape)):
        raise RelayTypeError(
            f"targets {shape_text(targets.shape)} do not match predictions {shape_text(pred.shape)}"
        )
    dtype = reporter.unify_dtype(pred.dtype, weights.dtype)
    if isinstance(dtype, str) and not dtype.startswith(("float", "bfloat")):
        raise RelayTypeError(f"predictions and weights must be floats, found {dtype}")
    if is_int_dtype(targets.dtype) is False:
        raise RelayTypeError(f"targets must be integers, found {targets.dtype}")
    if attrs["reduction"] not in ("mean", "sum", "none"):
        raise RelayTypeError(f"reduction must be mean, sum or none, got {attrs['reduction']!r}")
    shape = targets.shape if attrs["reduction"] == "none" else ()
    return TensorType(shape, dtype)


@forward_relation("CrossEntropy")
def _cross_entropy_rel(inputs, attrs, reporter):
    x = tensor(inputs[0], "predictions")
    y = tensor(inputs[1], "targets")
    if len(x.shape) != 2 or len(y.shape) != 2 or not all(map(same_dim, x.shape, y.shape)):
        raise RelayTypeError(
            f"predictions and targets must be matrices of the same shape, found "
            f"{shape_text(x.shape)} and {shape_text(y.shape)}"
        )
    return TensorType((), reporter.unify_dtype(x.dtype, y.dtype))


# --- backward ops -------------------------------------------------------------------------


def _pool_grad_rel(name: str, forward):
    """The result is the data's type; the output gradient must have the pool's output shape
    (TVM only assigns the data type; checking the gradient here catches a mismatch early)."""

    @forward_relation(name)
    def rel(inputs, attrs, reporter):
        grad = tensor(inputs[0], "out_grad")
        data = tensor(inputs[1], "data")
        expected = _forward_type(forward, data, attrs)
        if len(grad.shape) != len(data.shape) or not all(
            map(same_dim, grad.shape, expected.shape)
        ):
            raise RelayTypeError(
                f"out_grad {shape_text(grad.shape)} is not the pool's output shape "
                f"{shape_text(expected.shape)}"
            )
        reporter.unify_dtype(grad.dtype, data.dtype)
        return data

    return rel


class _Capture:
    """A reporter that keeps the one type a forward relation assigns."""

    ty = None

    def assign(self, _slot, ty):
        self.ty = ty

    def unify_dtype(self, a, b):
        return a


def _forward_type(rel, data, attrs):
    """The type the forward pool's relation gives ``data`` (its checks included)."""
    capture = _Capture()
    rel.fn([data, None], 1, attrs, capture)
    return capture.ty


@forward_relation("Conv2DBackwardWeight")
def _conv2d_backward_weight_rel(inputs, attrs, reporter):
    """TVM's attribute roles: ``data_layout`` is the gradient's layout, ``kernel_layout`` the
    data's and ``out_layout`` the weight's (its builder maps grad_layout, data_layout,
    kernel_layout onto them)."""
    grad = tensor(inputs[0], "grad")
    data = tensor(inputs[1], "data")
    gl = layout_axes(attrs["data_layout"], "NCHW", "grad layout")
    dl = layout_axes(attrs["kernel_layout"], "NCHW", "data layout")
    wl = attrs["out_layout"] or "OIHW"
    layout_axes(wl, "OIHW", "weight layout")
    if len(grad.shape) != 4 or len(data.shape) != 4:
        raise RelayTypeError(
            f"grad and data must have rank 4, found {type_text(grad)} and {type_text(data)}"
        )
    if attrs["kernel_size"] is None:
        raise RelayTypeError("kernel_size must be given")
    kh, kw = as_tuple(attrs["kernel_size"], 2, "kernel_size")
    strides = as_tuple(attrs["strides"], 2, "strides")
    dilation = as_tuple(attrs["dilation"], 2, "dilation")
    pads = padding_pairs(attrs["padding"], 2, "padding")
    groups = attrs["groups"]
    c_in, c_out = data.shape[dl["C"]], grad.shape[gl["C"]]
    if groups < 1 or (is_static(c_in) and c_in % groups) or (is_static(c_out) and c_out % groups):
        raise RelayTypeError(f"channels {c_in} -> {c_out} do not divide into groups={groups}")
    if not same_dim(grad.shape[gl["N"]], data.shape[dl["N"]]):
        raise RelayTypeError("grad and data have different batch sizes")
    for a, k, s, d, (lo, hi) in zip("HW", (kh, kw), strides, dilation, pads):
        size, out = data.shape[dl[a]], grad.shape[gl[a]]
        if not (is_static(size) and is_static(out)):
            continue
        expected = (size + lo + hi - (k - 1) * d - 1) // s + 1
        if expected != out:
            raise RelayTypeError(
                f"grad has {out} on axis {a}, but the convolution of data's {size} gives {expected}"
            )
    dims = {"O": c_out, "I": c_in // groups if is_static(c_in) else c_in, "H": kh, "W": kw}
    dtype = attrs["out_dtype"] or grad.dtype
    return TensorType(tuple(dims[a] for a in wl), dtype)


# --- registration -------------------------------------------------------------------------

NN_TRAIN_OPS = [
    (
        "nn.nll_loss",
        3,
        _nll_loss_rel,
        schema(
            "relay.attrs.NLLLossAttrs", ("reduction", "str", "mean"), ("ignore_index", "int")
        ),
        OpPattern.OUT_ELEMWISE_FUSABLE,
        ("predictions", "targets", "weights"),
        "Negative log likelihood: ``-weights[t] * predictions[n, t, ...]`` for each target "
        "``t`` (skipping ``ignore_index``), summed, averaged by the weights, or per element.",
    ),
    (
        "nn.cross_entropy",
        2,
        _cross_entropy_rel,
        None,
        OpPattern.OPAQUE,
        ("x", "y"),
        "Cross entropy of probabilities: ``-sum(y * log(x)) / batch``.",
    ),
    (
        "nn.cross_entropy_with_logits",
        2,
        _cross_entropy_rel,
        None,
        OpPattern.OPAQUE,
        ("x", "y"),
        "Cross entropy of log-probabilities: ``-sum(y * x) / batch``.",
    ),
    *[
        (
            f"nn.{kind}_pool2d_grad",
            2,
            _pool_grad_rel(
                f"{kind.capitalize()}Pool2DGrad", _pool_rel(f"{kind.capitalize()}Pool2D", 2)
            ),
            _pool_attrs(f"relay.attrs.{kind.capitalize()}Pool2DAttrs", 2, kind == "avg"),
            OpPattern.OUT_ELEMWISE_FUSABLE,
            ("out_grad", "data"),
            f"The gradient of ``nn.{kind}_pool2d`` with respect to its data, given the "
            "output gradient "
            + (
                "(each window's gradient goes to its first maximum)."
                if kind == "max"
                else "(each window's gradient is shared by the elements it averaged)."
            ),
        )
        for kind in ("max", "avg")
    ],
    (
        "nn.conv2d_backward_weight",
        2,
        _conv2d_backward_weight_rel,
        _conv_attrs("relay.attrs.Conv2DAttrs", 2),
        OpPattern.OUT_ELEMWISE_FUSABLE,
        ("grad", "data"),
        "The gradient of conv2d with respect to its weight: the correlation of the data with "
        "the output gradient.",
    ),
]

for _name, _n, _rel, _attrs, _pattern, _args, _doc in NN_TRAIN_OPS:
    register(_name, _n, _rel, attrs=_attrs, pattern=_pattern, doc=_doc, arg_names=_args)


# --- builders -----------------------------------------------------------------------------


def nll_loss(predictions, targets, weights, reduction="mean", ignore_index=-100) -> Expr:
    """Negative log likelihood of log-probabilities ``(N, C, ...)`` at class indices ``(N, ...)``.

    >>> loss = relay.nn.nll_loss(logp, labels, relay.ones((10,), "float32"))
    """
    return call(
        "nn.nll_loss", predictions, targets, weights, reduction=reduction, ignore_index=ignore_index
    )


def cross_entropy(predictions, targets) -> Expr:
    """``-sum(targets * log(predictions)) / batch`` (a scalar)."""
    return call("nn.cross_entropy", predictions, targets)


def cross_entropy_with_logits(predictions, targets) -> Expr:
    """``-sum(targets * predictions) / batch`` for log-probabilities."""
    return call("nn.cross_entropy_with_logits", predictions, targets)


def _pool_grad(op, out_grad, data, pool_size, strides, padding, layout, out_layout, ceil_mode,
               **extra):  # fmt: skip
    return call(
        op,
        out_grad,
        data,
        pool_size=ints(pool_size, 2),
        strides=ints(strides, 2),
        padding=pad_tuple(padding, 2),
        layout=layout,
        out_layout=out_layout,
        ceil_mode=ceil_mode,
        **extra,
    )


def max_pool2d_grad(out_grad, data, pool_size=(1, 1), strides=(1, 1), padding=(0, 0),
                    layout="NCHW", out_layout="", ceil_mode=False) -> Expr:  # fmt: skip
    """The data gradient of ``max_pool2d`` given its output gradient ``out_grad``."""
    return _pool_grad("nn.max_pool2d_grad", out_grad, data, pool_size, strides, padding, layout,
                      out_layout, ceil_mode)  # fmt: skip


def avg_pool2d_grad(out_grad, data, pool_size=(1, 1), strides=(1, 1), padding=(0, 0),
                    layout="NCHW", out_layout="", ceil_mode=False,
                    count_include_pad=False) -> Expr:  # fmt: skip
    """The data gradient of ``avg_pool2d`` given its output gradient ``out_grad``."""
    return _pool_grad("nn.avg_pool2d_grad", out_grad, data, pool_size, strides, padding, layout,
                      out_layout, ceil_mode, count_include_pad=count_include_pad)  # fmt: skip


def conv2d_backward_weight(
    grad,
    data,
    strides=(1, 1),
    padding=(0, 0),
    dilation=(1, 1),
    groups=1,
    channels=None,
    kernel_size=None,
    grad_layout="NCHW",
    data_layout="NCHW",
    kernel_layout="OIHW",
    out_dtype="",
) -> Expr:
    """The weight gradient of conv2d.  As in TVM, the layouts are stored in the attributes
    ``data_layout`` (the gradient's), ``kernel_layout`` (the data's) and ``out_layout``
    (the weight's)."""
    return call(
        "nn.conv2d_backward_weight",
        grad,
        data,
        strides=ints(strides, 2),
        padding=pad_tuple(padding, 2),
        dilation=ints(dilation, 2),
        groups=groups,
        channels=channels,
        kernel_size=ints(kernel_size, 2),
        data_layout=grad_layout,
        kernel_layout=data_layout,
        out_layout=kernel_layout,
        out_dtype=out_dtype,
    )


__all__ = [
    "avg_pool2d_grad",
    "conv2d_backward_weight",
    "cross_entropy",
    "cross_entropy_with_logits",
    "max_pool2d_grad",
    "nll_loss",
]
