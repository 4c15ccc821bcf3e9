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
subtrees are the same objects; the result is type-checked (batch_norm's arithmetic typed
as it is built, other rules by inference); no recursion per node.
"""

from __future__ import annotations

from typing import Any

from ..ir.expr import Call, Expr, Function, Op, Tuple, TupleGetItem, const
from ..ir.module import IRModule
from ..ir.ty import TensorType
from ..op import api
from ..typing.infer import infer_module
from ..util import paused_gc
from .infra import FunctionPass, PassContext, PassInfo, register_pass
from .typed import TypedMutator, ensure_typed


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
    ty = _Typer(call, x_ty, axis)
    one, eps = ty.scalar(const(1.0, dtype)), ty.scalar(const(a["epsilon"], dtype))
    inv_std = ty.vec(api.divide(one, ty.vec(api.sqrt(ty.vec(api.add(var, eps))))))
    scale = ty.vec(api.multiply(gamma, inv_std)) if a["scale"] else inv_std
    shift = ty.vec(api.negative(ty.vec(api.multiply(mean, scale))))
    if a["center"]:
        shift = ty.vec(api.add(beta, shift))
    scaled = ty.data(api.multiply(x, ty.along(_along(scale, axis, rank))))
    out = ty.data(api.add(scaled, ty.along(_along(shift, axis, rank))))
    return ty.same(Tuple((out, mean, var)))


class _Typer:
    """Gives the nodes a batch_norm rewrite builds the types inference would give them, so
    the pass need not re-infer the whole program (10 ms of ResNet-50's build) — only when
    they are plain: static shapes, every per-channel argument exactly ``Tensor[(C,),
    dtype]`` and the call typed.  Otherwise it types nothing and the pass runs inference."""

    def __init__(self, call: Call, x_ty: TensorType, axis: int) -> None:
        c = x_ty.shape[axis]
        self.vec_ty = TensorType((c,), x_ty.dtype)
        self.on = (
            all(type(d) is int for d in x_ty.shape)
            and call._checked_type is not None
            and all(arg._checked_type == self.vec_ty for arg in call.args[1:])
        )
        self.call, self.x_ty = call, x_ty
        self.along_ty = TensorType((c,) + (1,) * (len(x_ty.shape) - axis - 1), x_ty.dtype)

    def _set(self, e: Expr, ty: Any) -> Expr:
        if self.on and e._checked_type is None:  # _along may return its argument, typed
            e.set_checked_type(ty)
        return e

    def scalar(self, e: Expr) -> Expr:
        return self._set(e, TensorType((), self.x_ty.dtype))

    def vec(self, e: Expr) -> Expr:  # per-channel arithmetic: Tensor[(C,)]
        return self._set(e, self.vec_ty)

    def along(self, e: Expr) -> Expr:  # (C,) expanded to broadcast on axis: (C, 1, ..., 1)
        return self._set(e, self.along_ty)

    def data(self, e: Expr) -> Expr:  # x * scale', + shift': broadcasts to x's shape
        return self._set(e, self.x_ty)

    def same(self, e: Expr) -> Expr:  # the tuple that replaces the call: the call's type
        return self._set(e, self.call._checked_type)


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


class _Simplifier(TypedMutator):
    """Rewrites by :data:`RULES`; rebuilt nodes keep their types, and ``untyped`` says
    whether a rule left nodes without one (then the pass runs inference)."""

    def __init__(self) -> None:
        super().__init__()
        self.built: set[Expr] = set()
        self.untyped = False

    def visit_call(self, call: Call) -> Expr:
        new = super().visit_call(call)
        op = new.op if isinstance(new, Call) else None
        rule = RULES.get(op.name) if type(op) is Op else None
        x_ty = call.args[0]._checked_type if call.args else None
        if rule is None or not isinstance(x_ty, TensorType) or not isinstance(x_ty.shape, tuple):
            return new
        if new._checked_type is None and call._checked_type is not None:
            new.set_checked_type(call._checked_type)  # rebuilt with new arguments, same type
        out = rule(new, x_ty)
        self.untyped = self.untyped or out._checked_type is None
        if isinstance(out, Tuple):
            self.built.add(out)
        return out

    def visit_tuple_getitem(self, item: TupleGetItem) -> Expr:
        new = super().visit_tuple_getitem(item)
        value = new.tuple_value if isinstance(new, TupleGetItem) else None
        if value in self.built:
            return value.fields[new.index]  # (a, b).0 -> a
        return new


class SimplifyInference(FunctionPass):
    """``relay.transform.SimplifyInference()``: opt level 0, as in TVM.

    >>> mod = relay.transform.SimplifyInference()(mod)   # no nn.batch_norm left
    """

    preserves_types = True  # it types the arithmetic it introduces, or re-infers

    def __init__(self) -> None:
        super().__init__(self._simplify, PassInfo("SimplifyInference", 0, ("InferType",)))

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        with paused_gc():
            typed = ensure_typed(mod)
            self._untyped = False
            out = super().transform_module(typed, ctx)
            if self._untyped:
                infer_module(out)  # a rule's arithmetic has no types yet
            return out

    def _simplify(self, func: Function, mod: IRModule, ctx: PassContext) -> Function:
        simplifier = _Simplifier()
        new = simplifier.visit(func)
        self._untyped = self._untyped or simplifier.untyped
        return new

    def __repr__(self) -> str:
        return "SimplifyInference()"


register_pass("SimplifyInference", SimplifyInference)

__all__ = ["RULES", "SimplifyInference"]
