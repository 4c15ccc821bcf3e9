"""FoldConstant: evaluate at compile time what only depends on constants.

Input: any module (type-checked first if it is not).  Output: the same program with

* every call of a primitive operator whose arguments are all constants (or tuples of
  constants) replaced by its value, computed by the interpreter with the registry's numpy
  ``impl`` column: a ``Constant`` (a ``Tuple`` of them for ``split``, ``nn.batch_norm``
  ...) of *exactly* the type inference gave the call — an unsuffixed literal ``1`` that
  inference made ``float16`` folds to float16 data;
* ``shape_of(%x)`` of a statically shaped ``%x`` replaced by the shape (``%x`` is not
  evaluated, so it must not write a reference);
* ``let %x = c; e``  ->  ``e[c/%x]`` when the value folded to a constant;
* ``(a, b).1``  ->  ``b`` when dropping ``a`` drops no ``ref_write``;
* ``if (True) { a } else { b }``  ->  ``a`` (and ``False`` -> ``b``).

Not folded, as in TVM: operator calls with no arguments (``zeros(shape=...)``: folding
would only make the program bigger), calls of functions, globals and constructors,
references, the bodies of ``Primitive`` functions, and a call whose evaluation fails (the
error stays where it was, for run time).  Invariants: every new node carries the
``checked_type`` of the node it replaces, so the result is typed without re-inference;
untouched subtrees are the same objects; a DAG stays a DAG; no recursion per node.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..analysis.effects import Effects
from ..errors import RelayError
from ..eval.interpreter import Interpreter
from ..ir.expr import Call, Constant, Expr, Function, If, Let, Op, Tuple, TupleGetItem
from ..ir.module import IRModule
from ..ir.ty import TensorType, TupleType
from ..util import paused_gc
from .infra import FunctionPass, PassContext, PassInfo, register_pass
from .typed import TypedMutator, ensure_typed


def _concrete(ty: object) -> bool:
    """A type whose value can be a constant: tensors of static shape and known dtype."""
    if isinstance(ty, TensorType):
        return (
            isinstance(ty.dtype, str)
            and isinstance(ty.shape, tuple)
            and all(type(d) is int for d in ty.shape)
        )
    return isinstance(ty, TupleType) and all(_concrete(f) for f in ty.fields)


def _is_constant(e: Expr) -> bool:
    return type(e) is Constant or (type(e) is Tuple and all(_is_constant(f) for f in e.fields))


def _as_expr(value: object, ty: object) -> Expr | None:
    """The interpreter's value as a constant expression of type ``ty`` (None: not a tensor)."""
    if isinstance(value, np.ndarray) and isinstance(ty, TensorType):
        if value.shape != ty.shape:
            return None
        out: Expr = Constant(value.astype(ty.dtype, copy=False))
    elif isinstance(value, tuple) and isinstance(ty, TupleType) and len(value) == len(ty.fields):
        fields = [_as_expr(v, t) for v, t in zip(value, ty.fields)]
        if any(f is None for f in fields):
            return None
        out = Tuple(tuple(fields))  # type: ignore[arg-type]
    else:
        return None
    out.set_checked_type(ty)  # type: ignore[arg-type]
    return out


class ConstantFolder(TypedMutator):
    """The rewriting functor; ``ConstantFolder(mod).visit(expr)`` folds one expression."""

    def __init__(self, mod: IRModule | None = None, *extra: Expr):
        super().__init__()
        self.interp = Interpreter(mod)
        self.effects = Effects(mod, *extra)

    # visit_let and visit_if are generators (``yield e`` visits e): nesting costs no stack.
    def visit_let(self, let: Let) -> Any:
        # let %x = c; e  ->  e[c/%x]: the var's memo entry *is* the substitution.
        memo, chain, node = self.memo_map, [], let
        while True:
            value = yield node.value
            memo[node.var] = value if type(value) is Constant else node.var
            chain.append((node, value))
            node = node.body
            if type(node) is not Let or node in memo:
                break
        body = yield node
        for old, value in reversed(chain):
            if type(value) is not Constant:
                if value is not old.value or body is not old.body:
                    body = Let(old.var, value, body, span=old.span)
                    body.set_checked_type(old._checked_type)
                else:
                    body = old
            memo[old] = body
        return body

    def visit_if(self, ite: If) -> Any:
        cond = yield ite.cond
        if type(cond) is Constant and cond.data.ndim == 0:
            # if (True) { a } else { b }  ->  a
            return (yield ite.true_branch if bool(cond.data) else ite.false_branch)
        then = yield ite.true_branch
        return self._rebuild_if(ite, cond, then, (yield ite.false_branch))

    def visit_tuple_getitem(self, t: TupleGetItem) -> Expr:
        new = super().visit_tuple_getitem(t)
        tup = new.tuple_value if type(new) is TupleGetItem else None
        # (a, b).1  ->  b, unless evaluating a could write a reference
        if (
            type(tup) is Tuple
            and 0 <= t.index < len(tup.fields)
            and not any(self.effects.writes(f) for i, f in enumerate(tup.fields) if i != t.index)
        ):
            return tup.fields[t.index]
        return new

    def visit_call(self, call: Call) -> Expr:
        new = super().visit_call(call)
        op, ty = new.op, call._checked_type
        if type(op) is not Op or not new.args or not _concrete(ty):
            return new
        if op.name == "shape_of":
            # shape_of(%x) -> the static shape of %x (no evaluation of %x needed)
            arg_ty = call.args[0]._checked_type
            if (
                _concrete(arg_ty)
                and isinstance(arg_ty, TensorType)
                and not self.effects.writes(new.args[0])
            ):
                return _as_expr(np.asarray(arg_ty.shape, dtype=ty.dtype), ty) or new  # type: ignore[union-attr]
            return new
        if not all(_is_constant(a) for a in new.args):
            return new
        if new is not call:
            new.set_checked_type(ty)  # the impl reads the result dtype from the call's type
        try:
            value = self.interp.evaluate(new)
        except RelayError:
            return new  # e.g. take(mode="fast") out of range: the error stays for run time
        return _as_expr(value, ty) or new


class FoldConstant(FunctionPass):
    """``relay.transform.FoldConstant()``: a function pass at opt level 2, as in TVM.

    >>> mod = relay.transform.FoldConstant()(mod)   # add(1f, 2f) becomes 3f
    """

    preserves_types = True  # a folded constant has the type of the expression it replaces

    def __init__(self) -> None:
        super().__init__(self._fold, PassInfo("FoldConstant", 2, ("InferType",)))

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        with paused_gc():
            return super().transform_module(ensure_typed(mod), ctx)

    @staticmethod
    def _fold(func: Function, mod: IRModule, ctx: PassContext) -> Function:
        return ConstantFolder(mod).visit(func)

    def __repr__(self) -> str:
        return "FoldConstant()"


def fold_constant(expr: Expr, mod: IRModule | None = None) -> Expr:
    """Fold one (type-checked) expression, as TVM's ``FoldConstantExpr``."""
    if expr._checked_type is None:
        from ..typing.infer import infer_type

        infer_type(expr, mod)
    return ConstantFolder(mod, expr).visit(expr)


register_pass("FoldConstant", FoldConstant)

__all__ = [
    "ConstantFolder",
    "FoldConstant",
    "fold_constant",
]
