"""Gradient rules of the tensor family (issue 12), where TVM 0.19's ``_tensor_grad.py``
registers one: ``collapse_sum_to``, ``contrib_reverse_reshape``, ``gather_nd``, ``one_hot``.

Same conventions as :mod:`relay_nb.op.grad` (``None`` for integer arguments such as
indices and target shapes).  No other op of the family has a TVM gradient (sorting,
scans, scatters, ``gather``...): differentiating through them raises "no gradient
registered", as in TVM.
"""

from __future__ import annotations

from ..errors import RelayError
from . import api as _op
from .grad import _attrs, _zeros, grad_rule


@grad_rule("collapse_sum_to")
def _collapse_sum_to_grad(call, g):
    # sum to a smaller shape  <-  broadcast back to the input's
    return [_op.broadcast_to_like(g, call.args[0]), None]


@grad_rule("contrib_reverse_reshape")
def _reverse_reshape_grad(call, g):
    return [_op.reshape_like(g, call.args[0])]


@grad_rule("gather_nd")
def _gather_nd_grad(call, g):
    """Each gathered slice's gradient is added back where it came from (repeats add up)."""
    data, indices = call.args
    if _attrs(call)["batch_dims"] != 0:
        raise RelayError("no gradient registered for gather_nd with batch_dims != 0", call.span)
    return [_op.scatter_nd(_zeros(data), indices, g, mode="add"), None]


@grad_rule("one_hot")
def _one_hot_grad(call, g):
    """on_value gets the sum of the gradient where the result is on_value, off_value the rest
    (TVM's rule: positions are told apart by comparing the result with on_value)."""
    _, on, off = call.args
    on_mask = _op.equal(call, on)
    grad_on = _op.sum(_op.where(on_mask, g, _zeros(g)))
    grad_off = _op.sum(_op.where(on_mask, _zeros(g), g))
    return [None, _op.cast_like(grad_on, on), _op.cast_like(grad_off, off)]
