"""SimplifyInference: the training-only and normalization ops become plain arithmetic.

Input: a module (type-checked first if it is not).  Output: the same program where, as in
TVM's ``SimplifyInference``,

* ``nn.batch_norm(x, gamma, beta, mean, var)`` (inference form) becomes
  ``x * scale + shift`` with ``scale = gamma / sqrt(var + eps)`` and
  ``shift = beta - mean * scale``, both broadcast along ``axis``;
  the call itself becomes the tuple ``(x * scale + shift, mean, var)``, so ``%bn.0`` is
  the arithmetic and the other fields keep their meaning;
* ``nn.layer_norm(x, gamma, beta)`` becomes
  ``(x - mean(x)) / sqrt(variance(x) + eps) * gamma + beta`` over ``axis``;
* ``nn.dropout(x)`` becomes ``(x, ones_like(x))``: at inference dropout is the identity;
* ``(a, b, ...).i`` of a tuple this pass built becomes its field.

Once the weights are constants, FoldConstant turns ``scale`` and ``shift`` into constants
and FoldScaleAxis can push ``scale`` into a preceding convolution.  Invariants: untouched
subtrees are the same objects; the result is re-type-checked; no recursion per node.
"""

from __future__ import annotations

from typing import Any

from ..ir.expr import Call, Expr, Function, Op, Tuple, TupleGetItem, const
from ..ir.functor import ExprMutator
from ..ir.module import IRModule
from ..ir.ty import TensorType
from ..op import api
from ..typing.infer import infer_module
from ..util import paused_gc
from .infra import FunctionPass, PassContext, PassInfo, register_pass
from .typed import ensure_typed


def _along(v: Expr, axis: int, rank: int) -> Expr:
    """A per-channel vector ``v`` reshaped to broadcast against a rank-``rank`` tensor on ``axis``."""
    trailing = rank - axis - 1
    return api.expand_dims(v, axis=1, num_newaxis=trailing) if trailing > 0 else v


def _batch_norm(call: Call, x_ty: TensorType) -> Expr:
    x, gamma, beta, mean, var = call.args
    a = call.attrs
    rank = len(x_ty.shape)
    axis = a["axis"] % rank
    dtype = x_ty.dtype
    inv_std = api.divide(const(1.0, dtype), api.sqrt(api.add(var, const(a["epsilon"], dtype))))
    scale = api.multiply(gamma, inv_std) if a["scale"] else inv_std
    shift = api.negative(api.multiply(mean, scale))
    if a["center"]:
        shift = api.add(beta, shift)
    out = api.add(api.multiply(x, _along(scale, axis, rank)), _along(shift, axis, rank))
    return Tuple((out, mean, var))


def _layer_norm(call: Call, x_ty: TensorType) -> Expr:
    x, gamma, beta = call.args
    a = call.attrs
    rank = len(x_ty.shape)
    axis = a["axis"] % rank
    dtype = x_ty.dtype
    mu = api.mean(x, axis=[axis], keepdims=True)
    var = api.variance(x, axis=[axis], keepdims=True, with_mean=mu)
    out = api.divide(api.subtract(x, mu), api.sqrt(api.add(var, const(a["epsilon"], dtype))))
    if a["scale"]:
        out = api.multiply(out, _along(gamma, axis, rank))
    if a["center"]:
        out = api.add(out, _along(beta, axis, rank))
    return out


def _dropout(call: Call, x_ty: TensorType) -> Expr:
    x = call.args[0]
    return Tuple((x, api.ones_like(x)))


RULES = {
    "nn.batch_norm": _batch_norm,  # bn(x) -> x * scale + shift
    "nn.layer_norm": _layer_norm,  # ln(x) -> (x - mean) / sqrt(var + eps) * gamma + beta
    "nn.dropout": _dropout,  # dropout(x) -> (x, 1)
}
"""Op name -> rewrite of a call, given the (static-rank) type of its data argument."""


class _Simplifier(ExprMutator):
    def __init__(self) -> None:
        super().__init__()
        self.built: set[Expr] = set()

    def visit_call(self, call: Call) -> Expr:
        new = super().visit_call(call)
        op = new.op if isinstance(new, Call) else None
        rule = RULES.get(op.name) if type(op) is Op else None
        x_ty = call.args[0]._checked_type if call.args else None
        if rule is None or not isinstance(x_ty, TensorType) or not isinstance(x_ty.shape, tuple):
            return new
        out = rule(new, x_ty)
        if isinstance(out, Tuple):
            self.built.add(out)
        return out

    def visit_tuple_getitem(self, item: TupleGetItem) -> Expr:
        new = super().visit_tuple_getitem(item)
        value = new.tuple_value if isinstance(new, TupleGetItem) else None
        if value in self.built:
            return value.fields[new.index]  # (a, b).0 -> a
        return new

    def visit_function(self, fn: Function) -> Any:
        if fn.is_primitive:
            return fn
        # A generator (``yield e`` visits e): nested functions cost no Python stack.
        return self._rebuild_function(fn, fn.params, (yield fn.body))


class SimplifyInference(FunctionPass):
    """``relay.transform.SimplifyInference()``: opt level 0, as in TVM.

    >>> mod = relay.transform.SimplifyInference()(mod)   # no nn.batch_norm left
    """

    preserves_types = True  # it re-infers the arithmetic it introduces

    def __init__(self) -> None:
        super().__init__(self._simplify, PassInfo("SimplifyInference", 0, ("InferType",)))

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        with paused_gc():
            typed = ensure_typed(mod)
            out = super().transform_module(typed, ctx)
            if any(out.functions.get(gv) is not f for gv, f in typed.functions.items()):
                infer_module(out)  # the new arithmetic has no types yet
            return out

    @staticmethod
    def _simplify(func: Function, mod: IRModule, ctx: PassContext) -> Function:
        return _Simplifier().visit(func)

    def __repr__(self) -> str:
        return "SimplifyInference()"


register_pass("SimplifyInference", SimplifyInference)

__all__ = ["RULES", "SimplifyInference"]
