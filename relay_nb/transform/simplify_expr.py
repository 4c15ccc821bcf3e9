"""SimplifyExpr: local algebraic rewrites, written as a table of ``(pattern, fn)`` rules.

Input: any module (type-checked first if it is not).  Output: the same program with the
rules of :data:`RULES` applied bottom-up, each node rewritten until no rule applies.

A pattern is a capture name (``"x"``: any expression; the same name twice must be the
same node), a predicate ``pred(expr, m)`` (:data:`ONE`, :data:`ZERO`), a tuple
``("op:name", p1, ...)`` matching a call of ``op`` (``"reshape|squeeze"``: any of them;
``:name`` captures the call) whose arguments match ``p1, ...``, or ``("()", p1, ...)``
matching a tuple.  ``fn(m)`` gets the captures (``m["e"]`` is the whole matched call)
and returns the replacement, or None when the rule does not apply after all;
``m["fx"]`` is the module's effect analysis (:class:`~relay_nb.analysis.effects.Effects`).

Invariants: a rule never changes the type of what it rewrites — ``x * 1 -> x`` only
when ``x`` already has the product's shape and dtype (``1`` may broadcast ``x`` to a
bigger shape), shape rules only on static shapes — so every new node gets the replaced
node's ``checked_type``; a rule drops an operand only if evaluating it writes no
reference; floating-point results are bit-for-bit unchanged, signs of zeros included
(``1 / x`` shows them), which is why ``x * 0 -> 0`` is for integers only (``inf * 0`` is
NaN) and why on floats ``x + 0 -> x`` needs the zero to be ``-0.0`` (``-0.0 + 0.0`` is
``+0.0``) and ``x - 0 -> x`` needs ``+0.0``.  A rule that holds for one dtype only checks it: ``x && x -> x`` needs ``bool``
(on numbers the logical ops give 0/1), ``x + -y -> x - y`` excludes it.  Untouched
subtrees are the same objects, a DAG stays a DAG, no recursion per node.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..analysis.effects import Effects
from ..ir.expr import Call, Constant, Expr, Function, Op, Tuple
from ..ir.module import IRModule
from ..ir.ty import TensorType
from ..op.registry import get_op, make_attrs
from ..util import paused_gc
from .infra import FunctionPass, PassContext, PassInfo, register_pass
from .typed import TypedMutator, ensure_typed

Match = dict[str, Any]


def _static(e: Expr) -> TensorType | None:
    """The tensor type of ``e`` if its shape and dtype are fully known."""
    t = e._checked_type
    if (
        isinstance(t, TensorType)
        and isinstance(t.shape, tuple)
        and all(type(d) is int for d in t.shape)
    ):
        return t if isinstance(t.dtype, str) else None
    return None


def _filled(value: float, like: str) -> Callable[[Expr], bool]:
    """A predicate: a constant (or ``ones``/``zeros``/``*_like``) whose elements all equal ``value``."""

    def pred(e: Expr, m: Match) -> bool:
        if type(e) is Constant:
            data = e.data
            if data.ndim == 0:
                return data.item() == value
            return data.size > 0 and bool(np.all(data == value))
        if type(e) is Call and type(e.op) is Op:
            return e.op.name == like or (
                e.op.name == like + "_like" and not m["fx"].writes(e.args[0])
            )
        return False

    return pred


ONE, ZERO = _filled(1, "ones"), _filled(0, "zeros")


def _new(m: Match, op: str, *args: Expr, **attrs: Any) -> Expr:
    """A new call of ``op`` with the type of the matched call ``m["e"]``."""
    out = Call(get_op(op), args, make_attrs(op, attrs) if attrs else None, span=m["e"].span)
    out.set_checked_type(m["e"]._checked_type)
    return out


def keep_x(m: Match) -> Expr | None:
    """``x`` itself, if it has exactly the matched call's type (no broadcasting away)."""
    t = _static(m["x"])
    return m["x"] if t is not None and t == _static(m["e"]) else None


def reshape_x(m: Match) -> Expr | None:
    t = _static(m["e"])
    return _new(m, "reshape", m["x"], newshape=list(t.shape)) if t and _static(m["x"]) else None


def compose_transpose(m: Match) -> Expr | None:
    t = _static(m["x"])
    if t is None:
        return None
    n = len(t.shape)
    inner = _axes(m["inner"].attrs, n)
    outer = _axes(m["e"].attrs, n)
    axes = [inner[a] for a in outer]
    return m["x"] if axes == list(range(n)) else _new(m, "transpose", m["x"], axes=axes)


def _axes(attrs: Any, n: int) -> list[int]:
    axes = attrs.get("axes") if attrs is not None else None
    return list(range(n))[::-1] if not axes else [a % n for a in axes]


def identity_transpose(m: Match) -> Expr | None:
    t = _static(m["x"])
    return (
        m["x"]
        if t is not None and _axes(m["e"].attrs, len(t.shape)) == list(range(len(t.shape)))
        else None
    )


def _zero_sign(e: Expr) -> str | None:
    """``"-"`` if ``e`` (a zero, see :data:`ZERO`) is all ``-0.0``, ``"+"`` if all ``+0.0``
    (``zeros``/``zeros_like`` too), None when the signs are mixed."""
    if type(e) is not Constant:
        return "+"
    signs = np.signbit(e.data)
    return "-" if signs.all() else ("+" if not signs.any() else None)


def keep_x_with_zero(zero_at: int, sign: str) -> Callable[[Match], Expr | None]:
    """``keep_x`` for ``x + 0`` / ``x - 0``: on floats only with the zero that keeps ``x``'s
    zeros, ``sign`` (``x + -0.0`` and ``x - +0.0`` are ``x`` for every ``x``)."""

    def rule(m: Match) -> Expr | None:
        out = keep_x(m)
        if out is None or np.dtype(_static(m["e"]).dtype).kind != "f":  # type: ignore[union-attr]
            return out
        return out if _zero_sign(m["e"].args[zero_at]) == sign else None

    return rule


def keep_bool_x(m: Match) -> Expr | None:
    """``x``, for the logical ops only on ``bool``: on numbers they return 0/1, not ``x``."""
    t = _static(m["x"])
    return keep_x(m) if t is not None and t.dtype == "bool" else None


_MANTISSA = {"float16": 11, "float32": 24, "float64": 53}  # significand bits, hidden one included


def _exact(src: str, dst: str) -> bool:
    """Does every ``src`` value survive a cast to ``dst``?  ``np.can_cast(..., "safe")`` also
    says yes for int64 -> float64, which rounds above 2**53."""
    if not np.can_cast(src, dst, "safe"):
        return False
    s = np.dtype(src)
    if s.kind in "iu" and dst in _MANTISSA:
        return s.itemsize * 8 - (s.kind == "i") <= _MANTISSA[dst]
    return True


def lossless_cast(m: Match) -> Expr | None:
    x, inner, out = _static(m["x"]), _static(m["inner"]), _static(m["e"])
    if x is None or inner is None or out is None or not _exact(x.dtype, inner.dtype):
        return None
    # An integer that went through a float and comes back to a narrower integer saturates
    # (300 -> 300.0 -> int8 is 127) where the direct cast wraps (44): keep both casts then.
    if np.dtype(inner.dtype).kind == "f" and np.dtype(out.dtype).kind in "iu":
        if np.dtype(x.dtype).kind != "f" and not np.can_cast(x.dtype, out.dtype, "safe"):
            return None
    return _new(m, "cast", m["x"], dtype=out.dtype)


def int_zeros(m: Match) -> Expr | None:
    t = _static(m["e"])
    if t is None or not t.dtype.startswith(("int", "uint")) or m["fx"].writes(m["x"]):
        return None
    return _new(m, "zeros", shape=list(t.shape), dtype=t.dtype)


def concretize(fill: str) -> Callable[[Match], Expr | None]:
    def rule(m: Match) -> Expr | None:
        t = _static(m["e"])
        return (
            None
            if t is None or m["fx"].writes(m["x"])
            else _new(m, fill, shape=list(t.shape), dtype=t.dtype)
        )

    return rule


def as_op(op: str) -> Callable[[Match], Expr | None]:
    """The same operands, another (broadcasting) op: ``x + -y -> x - y``.  Not on ``bool``:
    there ``negative`` is NOT, ``add`` is OR and ``subtract`` is an error."""

    def rule(m: Match) -> Expr | None:
        t = _static(m["e"])
        return None if t is None or t.dtype == "bool" else _new(m, op, m["x"], m["y"])

    return rule


def same_reverse(m: Match) -> Expr | None:
    return (
        m["x"]
        if m["inner"].attrs["axis"] == m["e"].attrs["axis"] and keep_x(m) is not None
        else None
    )


RESHAPES = "reshape|squeeze|expand_dims|nn.batch_flatten"

RULES: list[tuple[Any, Callable[[Match], Expr | None]]] = [
    (("multiply:e", "x", ONE), keep_x),  # x * 1 -> x
    (("multiply:e", ONE, "x"), keep_x),  # 1 * x -> x
    (("add:e", "x", ZERO), keep_x_with_zero(1, "-")),  # x + 0 -> x   (floats: -0.0 only)
    (("add:e", ZERO, "x"), keep_x_with_zero(0, "-")),  # 0 + x -> x   (floats: -0.0 only)
    (("subtract:e", "x", ZERO), keep_x_with_zero(1, "+")),  # x - 0 -> x   (floats: +0.0 only)
    (("divide:e", "x", ONE), keep_x),  # x / 1 -> x
    (("power:e", "x", ONE), keep_x),  # x ** 1 -> x
    (("multiply:e", "x", ZERO), int_zeros),  # x * 0 -> zeros   (integers only)
    (("multiply:e", ZERO, "x"), int_zeros),  # 0 * x -> zeros   (integers only)
    (("add:e", "x", ("negative", "y")), as_op("subtract")),  # x + -y -> x - y
    (("subtract:e", "x", ("negative", "y")), as_op("add")),  # x - -y -> x + y
    (("negative:e", ("negative", "x")), keep_x),  # -(-x) -> x
    (("logical_not:e", ("logical_not", "x")), keep_bool_x),  # !!x -> x   (bool only)
    (("maximum|minimum:e", "x", "x"), keep_x),  # max(x, x) -> x
    (("logical_and|logical_or:e", "x", "x"), keep_bool_x),  # x && x -> x   (bool only)
    (("nn.relu:e", ("nn.relu:inner", "x")), lambda m: m["inner"]),  # relu(relu(x)) -> relu(x)
    (("copy:e", "x"), keep_x),  # copy(x) -> x
    (("cast:e", "x"), keep_x),  # cast(x, dtype of x) -> x
    (("cast:e", ("cast:inner", "x")), lossless_cast),  # cast(cast(x, wider), d) -> cast(x, d)
    ((RESHAPES + "|broadcast_to:e", "x"), keep_x),  # reshape(x) to x's own shape -> x
    ((RESHAPES + ":e", (RESHAPES, "x")), reshape_x),  # reshape(squeeze(x)) -> reshape(x)
    (("transpose:e", "x"), identity_transpose),  # transpose(x, [0, 1, ...]) -> x
    (("transpose:e", ("transpose:inner", "x")), compose_transpose),  # T(T(x)) -> T(x)
    (("reverse:e", ("reverse:inner", "x")), same_reverse),  # reverse(reverse(x, a), a) -> x
    (("concatenate:e", ("()", "x")), keep_x),  # concatenate((x,)) -> x
    (("zeros_like:e", "x"), concretize("zeros")),  # zeros_like(x) -> zeros(shape of x)
    (("ones_like:e", "x"), concretize("ones")),  # ones_like(x) -> ones(shape of x)
]


_BY_OP: dict[str, list] = {}  # op name -> the rules whose pattern starts with it, in table order
for _rule in RULES:
    for _name in _rule[0][0].partition(":")[0].split("|"):
        _BY_OP.setdefault(_name, []).append(_rule)


def match(pattern: Any, e: Expr, m: Match) -> bool:
    """Does ``e`` match ``pattern``? Captures go into ``m``."""
    if isinstance(pattern, str):
        if pattern in m:
            return m[pattern] is e
        m[pattern] = e
        return True
    if callable(pattern):
        return pattern(e, m)
    head, *subs = pattern
    names, _, cap = head.partition(":")
    if names == "()":
        if type(e) is not Tuple or len(e.fields) != len(subs):
            return False
        kids = e.fields
    else:
        if type(e) is not Call or type(e.op) is not Op or e.op.name not in names.split("|"):
            return False
        if len(e.args) != len(subs):
            return False
        kids = e.args
    if cap:
        m[cap] = e
    return all(match(p, k, m) for p, k in zip(subs, kids))


def simplify(e: Expr, fx: Effects | None = None, max_steps: int = 8) -> Expr:
    """Apply the first matching rule of :data:`RULES` until none applies."""
    fx = fx or Effects(None, e)
    for _ in range(max_steps):
        if type(e) is not Call or type(e.op) is not Op:
            return e
        for pattern, fn in _BY_OP.get(e.op.name, ()):
            m: Match = {"fx": fx}
            if match(pattern, e, m):
                out = fn(m)
                if out is not None:
                    e = out
                    break
        else:
            return e
    return e


class Simplifier(TypedMutator):
    """Bottom-up application of the rules; ``Simplifier(mod).visit(expr)``."""

    def __init__(self, mod: IRModule | None = None, *extra: Expr):
        super().__init__()
        self.fx = Effects(mod, *extra)

    def visit_call(self, call: Call) -> Expr:
        new = super().visit_call(call)
        if new is not call:
            new.set_checked_type(call._checked_type)
        return simplify(new, self.fx)


class SimplifyExpr(FunctionPass):
    """``relay.transform.SimplifyExpr()``: a function pass at opt level 0, as in TVM."""

    preserves_types = True  # a rewrite keeps the type of what it replaces (TypedMutator)

    def __init__(self) -> None:
        super().__init__(self._simplify, PassInfo("SimplifyExpr", 0, ("InferType",)))

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        with paused_gc():
            return super().transform_module(ensure_typed(mod), ctx)

    @staticmethod
    def _simplify(func: Function, mod: IRModule, ctx: PassContext) -> Function:
        return Simplifier(mod).visit(func)

    def __repr__(self) -> str:
        return "SimplifyExpr()"


register_pass("SimplifyExpr", SimplifyExpr)

__all__ = ["ONE", "RULES", "ZERO", "Simplifier", "SimplifyExpr", "match", "simplify"]
