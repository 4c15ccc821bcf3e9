"""Gradient rules of the training ops that TVM 0.19 registers them for
(``python/tvm/relay/op/_tensor_grad.py``): the two cross entropies.

``cross_entropy(x, y) = -sum(y * log(x)) / N``:  dx = -g * y / x / N,  dy = -g * log(x) / N.
``cross_entropy_with_logits(x, y) = -sum(y * x) / N``:  dx = -g * y / N,  dy = -g * x / N.
(``g`` is the scalar output gradient; it broadcasts over the ``(N, C)`` inputs.)
"""

from __future__ import annotations

from . import api as _op
from .grad import _c, _shape, grad_rule


def _scaled_grad(call, g):
    """``-g / N`` for the batch size ``N`` of the predictions."""
    x = call.args[0]
    return _op.negative(_op.divide(g, _c(_shape(x)[0], x)))


@grad_rule("nn.cross_entropy")
def _cross_entropy_grad(call, g):
    x, y = call.args
    s = _scaled_grad(call, g)
    return [_op.divide(_op.multiply(s, y), x), _op.multiply(s, _op.log(x))]


@grad_rule("nn.cross_entropy_with_logits")
def _cross_entropy_with_logits_grad(call, g):
    x, y = call.args
    s = _scaled_grad(call, g)
    return [_op.multiply(s, y), _op.multiply(s, x)]
