"""FoldScaleAxis: fold a multiply by a per-channel scale into the weights of a conv2d.

Input: any module (type-checked first if it is not).  Output: the same program where

* **forward** — ``multiply(%x, s)`` by a constant ``s`` that varies only along the channel
  axis, followed (through ``nn.relu`` / ``nn.leaky_relu`` when ``s > 0``, and through
  ``add`` / ``subtract`` / ``nn.bias_add`` of constants, whose constant is divided by
  ``s``) by ``nn.conv2d`` on every path, disappears: the conv2d's weight is multiplied by
  ``s`` along its input-channel axis —
  ``conv2d(relu(%x * s), w)  ->  conv2d(relu(%x), w * s)``;
* **backward** — ``conv2d(%x, w)`` followed (through ``nn.bias_add`` / ``add`` of a
  constant, ``nn.relu`` when ``s > 0``, each used only there) by ``multiply(., s)``
  per output channel: the weight is multiplied along its output-channel axis and the
  bias by ``s`` — ``relu(conv2d(%x, w) + b) * s  ->  relu(conv2d(%x, w * s) + b * s)``.

Constant weights and biases are scaled numerically (so the multiply really disappears
into the weights); a weight that is a variable gets ``multiply(%w, s)``, left for
FoldConstant.  As in TVM, ``FoldScaleAxis()`` runs Backward, Forward, then FoldConstant,
at opt level 3; layouts NCHW-like / OIHW-like (any order of single letters), groups=1.

The forward direction is seed 000's TempExpr example: a :class:`ScaledExpr` stands for
"``value * scale`` along ``axis``, multiply not built yet" while the rewrite runs; a
consumer that can absorb the scale does, any other one ``realize()``s the multiply.  An
analysis first checks that *every* consumer on the way absorbs it, so a program where
nothing folds comes back unchanged (same objects).  Results agree up to float rounding
(``c / s * s`` is not always ``c``).  No recursion per node; a DAG stays a DAG.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..ir.expr import Call, Constant, Expr, Function, Op, TempExpr
from ..ir.functor import expr_children, post_order
from ..ir.module import IRModule
from ..ir.ty import TensorType
from ..op.registry import get_op
from ..util import paused_gc
from .fold_constant import FoldConstant
from .infra import FunctionPass, PassContext, PassInfo, Sequential, register_pass
from .typed import TypedMutator, ensure_typed

_POSITIVE = {"nn.relu", "nn.leaky_relu"}  # relu(x * s) == relu(x) * s needs s > 0
_SHIFT = {"add", "subtract", "nn.bias_add"}  # x * s + c == (x + c / s) * s needs s != 0
_PASS_THROUGH = _POSITIVE | _SHIFT


@dataclass(frozen=True, slots=True, eq=False)
class ScaledExpr(TempExpr):
    """``value * scale`` (``scale``: a 1-D array applied along ``axis``), not yet built."""

    value: Expr
    scale: np.ndarray
    axis: int
    original: Call | None  # the multiply it stands for, while its operand is unchanged

    def realize(self) -> Expr:
        if self.original is not None and any(self.value is a for a in self.original.args):
            return self.original
        return _mul(self.value, _along(self.scale, self.axis, len(self.value.checked_type.shape)))


def _along(vec: np.ndarray, axis: int, rank: int) -> np.ndarray:
    """``vec`` reshaped to broadcast along ``axis`` of a rank-``rank`` tensor."""
    return vec.reshape([-1 if i == axis else 1 for i in range(rank)])


def _typed(e: Expr, like: Expr) -> Expr:
    e.set_checked_type(like.checked_type)
    return e


def _const(data: np.ndarray, dtype: str) -> Constant:
    c = Constant(np.asarray(data, dtype=dtype))
    c.set_checked_type(TensorType(c.data.shape, dtype))
    return c


def _mul(e: Expr, factor: np.ndarray) -> Expr:
    """``e * factor``, computed now when ``e`` is a constant (the weight folding)."""
    dtype = e.checked_type.dtype
    if type(e) is Constant:
        data = np.asarray(e.data * factor).astype(dtype, copy=False)  # a new array only this constant holds:
        data.flags.writeable = False  # read-only now, Constant keeps it without copying ~100 MB
        return _typed(_const(data, dtype), e)
    return _typed(Call(get_op("multiply"), (e, _const(factor, dtype))), e)


def _call(old: Call, args: list) -> Call:
    return _typed(Call(old.op, tuple(args), old.attrs, old.type_args, span=old.span), old)


def _channel(c: Expr, ref: Expr, axis: int) -> np.ndarray | None:
    """The per-channel vector of constant ``c`` if it varies only along ``axis`` of ``ref``."""
    ty = ref.checked_type
    if type(c) is not Constant or not isinstance(ty, TensorType) or c.data.dtype != ty.dtype:
        return None
    rank = len(ty.shape)
    if c.data.ndim > rank or axis >= rank:
        return None
    full = c.data.reshape((1,) * (rank - c.data.ndim) + c.data.shape)
    other = [d for i, d in enumerate(full.shape) if i != axis]
    if any(d != 1 for d in other) or full.shape[axis] not in (1, ty.shape[axis]):
        return None
    return np.broadcast_to(full.reshape(-1), (ty.shape[axis],)).copy()


def _conv_axes(call: Call) -> tuple[int, int, int] | None:
    """(data channel axis, kernel input axis, kernel output axis) of a foldable conv2d."""
    a = call.attrs
    data, kernel = a["data_layout"], a["kernel_layout"]
    if a["groups"] != 1 or len(set(data)) != 4 or len(set(kernel)) != 4:
        return None
    if a["out_layout"] not in ("", data) or "C" not in data or not {"I", "O"} <= set(kernel):
        return None
    return data.index("C"), kernel.index("I"), kernel.index("O")


def _op(e: Expr) -> str:
    return e.op.name if type(e) is Call and type(e.op) is Op else ""


def _bias(call: Call, x: Expr, axis: int) -> tuple[int, np.ndarray] | None:
    """(position of the constant, its per-channel vector) of add/subtract/bias_add(x, c)."""
    args, rank = call.args, len(x.checked_type.shape)
    if _op(call) == "nn.bias_add":
        ok = args[0] is x and call.attrs["axis"] % rank == axis and type(args[1]) is Constant
        return (1, args[1].data) if ok and args[1].data.dtype == x.checked_type.dtype else None
    pos = 1 if args[0] is x else 0 if _op(call) == "add" and args[1] is x else None
    if pos is None or args[0] is args[1] or call.checked_type != x.checked_type:
        return None
    vec = _channel(args[pos], x, axis)
    return None if vec is None else (pos, vec)


def _new_bias(call: Call, pos: int, vec: np.ndarray, scale: np.ndarray, axis: int, op) -> Constant:
    """The constant ``c op s`` replacing ``c`` in ``call`` (``op``: np.divide or np.multiply)."""
    rank, axis = (1, 0) if _op(call) == "nn.bias_add" else (len(call.checked_type.shape), axis)
    return _const(op(_along(vec, axis, rank), _along(scale, axis, rank)), call.args[pos].data.dtype)


def _uses(func: Function, nodes: list[Expr]) -> dict[Expr, list[tuple[Expr, int]]]:
    """Every node's (consumer, argument position) pairs; position -1 for non-call parents."""
    uses: dict[Expr, list[tuple[Expr, int]]] = {func: []}
    for node in nodes:
        if type(node) is Call:
            uses.setdefault(node.op, []).append((node, -1))
            for pos, child in enumerate(node.args):
                uses.setdefault(child, []).append((node, pos))
        else:
            for child in expr_children(node):
                uses.setdefault(child, []).append((node, -1))
    return uses


# --- forward: multiply -> ... -> conv2d -------------------------------------------------------


def _forward_plan(func: Function) -> dict[Expr, tuple[int, bool]]:
    """Node -> (axis, needs a positive scale) if *every* use of the node, scaled along
    that axis, can pass the scale on until a conv2d absorbs it (consumers first)."""
    nodes = list(post_order(func))
    uses, plan = _uses(func, nodes), {}
    for node in reversed(nodes):
        want: tuple[int, bool] | None = None
        for c, pos in uses.get(node) or [(None, -1)]:
            name, got = _op(c), None
            if name == "nn.conv2d" and pos == 0 and _conv_axes(c):
                got = (_conv_axes(c)[0], False)
            elif name in _PASS_THROUGH and c in plan and (pos == 0 or (pos == 1 and name == "add")):
                axis, positive = plan[c]
                if name in _POSITIVE or _bias(c, node, axis) is not None:
                    got = (axis, positive or name in _POSITIVE)
            if got is None or (want is not None and want[0] != got[0]):
                break
            want = (got[0], got[1] or (want is not None and want[1]))
        else:
            if want is not None:
                plan[node] = want
    return plan


class _Forward(TypedMutator):
    def __init__(self, func: Function):
        super().__init__()
        self.plan = _forward_plan(func)
        self.realized: dict[ScaledExpr, Expr] = {}

    def visit(self, expr: Expr) -> Any:
        out = super().visit(expr)
        if isinstance(out, ScaledExpr):  # a consumer that cannot absorb the scale
            hit = self.realized.get(out)
            if hit is None:
                hit = self.realized[out] = out.realize()
            return hit
        return out

    def raw(self, expr: Expr) -> Any:
        super().visit(expr)
        return self.memo_map[expr]

    def visit_call(self, call: Call) -> Expr:
        name = _op(call)
        if name == "multiply" and call in self.plan:
            axis, positive = self.plan[call]
            for x, s in ((call.args[0], call.args[1]), (call.args[1], call.args[0])):
                vec = _channel(s, x, axis)
                if vec is None or call.checked_type != x.checked_type:
                    continue
                if np.all(vec > 0) if positive else np.all(vec != 0):
                    return ScaledExpr(self.visit(x), vec, axis, call)  # x * s, multiply pending
        raw = [self.raw(a) for a in call.args]
        i = next((k for k, a in enumerate(raw) if isinstance(a, ScaledExpr)), -1)
        if i < 0:
            return super().visit_call(call)
        se: ScaledExpr = raw[i]
        args = [se.value if k == i else self.visit(a) for k, a in enumerate(call.args)]
        if name == "nn.conv2d" and i == 0:
            # conv2d(x * s, w)  ->  conv2d(x, w * s along the kernel's input channels)
            w, k_in = args[1], _conv_axes(call)[1]  # type: ignore[index]
            args[1] = _mul(w, _along(se.scale, k_in, len(w.checked_type.shape)))
            return _call(call, args)
        bias = _bias(call, call.args[i], se.axis) if name in _SHIFT else None
        if bias is not None:  # (x * s) + c  ->  (x + c / s) * s
            pos, vec = bias
            args[pos] = _new_bias(call, pos, vec, se.scale, se.axis, np.divide)
        elif name not in _POSITIVE:  # relu(x * s) -> relu(x) * s, for s > 0
            return super().visit_call(call)
        return ScaledExpr(_call(call, args), se.scale, se.axis, None)


# --- backward: conv2d -> ... -> multiply -----------------------------------------------------


class _Backward(TypedMutator):
    def __init__(self, func: Function):
        super().__init__()
        self.uses = _uses(func, list(post_order(func)))

    def visit_call(self, call: Call) -> Expr:
        new = super().visit_call(call)
        if _op(call) == "multiply":
            for y, s in ((call.args[0], call.args[1]), (call.args[1], call.args[0])):
                folded = self._fold(y, s) if y.checked_type == call.checked_type else None
                if folded is not None:
                    return folded
        return new

    def _fold(self, y: Expr, s: Expr) -> Expr | None:
        """relu(conv2d(x, w) + b) * s  ->  relu(conv2d(x, w * s) + b * s)."""
        chain, node = [], y
        while _op(node) in _PASS_THROUGH and len(self.uses[node]) == 1:
            chain.append(node)
            node = node.args[0]
        axes = _conv_axes(node) if _op(node) == "nn.conv2d" and len(self.uses[node]) == 1 else None
        vec = (
            _channel(s, node, axes[0])
            if axes is not None and y.checked_type == node.checked_type
            else None
        )
        if vec is None or (any(_op(c) in _POSITIVE for c in chain) and not np.all(vec > 0)):
            return None
        biases = [_bias(c, c.args[0], axes[0]) if _op(c) in _SHIFT else (0, None) for c in chain]
        if any(b is None for b in biases):
            return None
        w = self.visit(node.args[1])
        out = _call(
            node,
            [self.visit(node.args[0]), _mul(w, _along(vec, axes[2], len(w.checked_type.shape)))],
        )
        for c, (pos, bvec) in zip(reversed(chain), reversed(biases)):  # the epilogue, rebuilt
            args = [out, *c.args[1:]]
            if bvec is not None:
                args[pos] = _new_bias(c, pos, bvec, vec, axes[0], np.multiply)
            out = _call(c, args)
        return out


# --- the passes --------------------------------------------------------------------------------


class _ScalePass(FunctionPass):
    preserves_types = True  # scaled weights keep their shapes (TypedMutator)

    def __init__(self, name: str, functor: type) -> None:
        super().__init__(self._run, PassInfo(name, 3, ("InferType",)))
        self.functor = functor

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        with paused_gc():
            return super().transform_module(ensure_typed(mod), ctx)

    def _run(self, func: Function, mod: IRModule, ctx: PassContext) -> Function:
        return self.functor(func).visit(func)

    def __repr__(self) -> str:
        return f"{self.info.name}()"


def ForwardFoldScaleAxis() -> FunctionPass:
    """Fold ``multiply(x, s) -> ... -> conv2d`` into the conv2d's weight (opt level 3)."""
    return _ScalePass("ForwardFoldScaleAxis", _Forward)


def BackwardFoldScaleAxis() -> FunctionPass:
    """Fold ``conv2d -> ... -> multiply(., s)`` into the conv2d's weight (opt level 3)."""
    return _ScalePass("BackwardFoldScaleAxis", _Backward)


def FoldScaleAxis() -> Sequential:
    """Backward, then forward folding, then FoldConstant, as TVM's ``FoldScaleAxis()``."""
    passes = [BackwardFoldScaleAxis(), ForwardFoldScaleAxis(), FoldConstant()]
    return Sequential(passes, 3, "FoldScaleAxis")


register_pass("ForwardFoldScaleAxis", ForwardFoldScaleAxis)
register_pass("BackwardFoldScaleAxis", BackwardFoldScaleAxis)
register_pass("FoldScaleAxis", FoldScaleAxis)

__all__ = ["BackwardFoldScaleAxis", "FoldScaleAxis", "ForwardFoldScaleAxis", "ScaledExpr"]
