"""Reverse-mode automatic differentiation: ``relay.transform.gradient(func, mod=mod)``.

Seed 004: Relay is meant to be a *differentiable* language.  ``gradient(f)`` returns a new
function with ``f``'s parameters that computes ``f`` and its gradient in one run::

    fn (%x, %y) { e }   ->   fn (%x, %y) { ...; (e, (d sum(e) / d %x, d sum(e) / d %y)) }

The output's adjoint is seeded with ``ones_like`` (as TVM does), so each gradient is that of
the *sum* of the output; multiply the output by a cotangent first to get a
vector-Jacobian product.  A function returning a tuple is seeded with ones in every field.

Input form: a function (or a global's name with ``mod``) whose body is in the *dataflow
fragment* plus ``let`` bindings and tuples, with statically shaped tensor (or tuple)
parameters; calls must be to operators.  ``if``, ``match``, closures, references and calls
of functions are not differentiated: they raise a :class:`RelayError` (inline calls to
globals first).

Output form: A-normal form.  The forward program is replayed as a ``let`` chain (a node
shared in the input is computed once; ``let``-bound variables keep their names), followed
by the backward program: for each node in reverse order its adjoint (the sum of the
contributions of its users — a node used twice accumulates two) is passed to the
operator's rule in the registry's ``grad`` column (:mod:`relay_nb.op.grad`), and the
rule's input gradients are bound in turn.  Gradients flow only into values that depend on
a floating-point parameter, so integer and boolean values (indices, masks, shapes) need no
rule.  The result is type-checked before it is returned.

``mode`` is accepted for TVM compatibility: ``"higher_order"`` (TVM's default, which builds
closures and references) and ``"first_order"`` give the same first-order program here,
since the supported fragment has no closures to differentiate.

Nothing recurses per node: the forward walk uses an explicit stack, rule outputs are
flattened with a loop, and the output ``let`` chain is built from the end.
"""

from __future__ import annotations

from ..errors import RelayError
from ..ir.expr import (
    Call,
    Constant,
    Constructor,
    Expr,
    Function,
    GlobalVar,
    If,
    Let,
    Match,
    MetaRef,
    Op,
    RefCreate,
    RefRead,
    RefWrite,
    Tuple,
    TupleGetItem,
    Var,
)
from ..ir.module import IRModule
from ..ir.ty import TensorType, TupleType, Type
from ..op import grad as _grad  # noqa: F401  (fills the "grad" column)
from ..op.grad import get_grad_rule
from ..op.registry import get_op, make_attrs

_MODES = ("higher_order", "first_order")
_LEAVES = (Var, Constant, Op, GlobalVar, Constructor, MetaRef)
_Path = tuple  # a path of tuple field indices, () for the value itself


def _has_float(ty: Type | None) -> bool:
    """Whether a value of this type can carry a gradient (contains a float tensor)."""
    stack = [ty]
    while stack:
        t = stack.pop()
        if isinstance(t, TensorType):
            if isinstance(t.dtype, str) and t.dtype.startswith(("float", "bfloat")):
                return True
        elif isinstance(t, TupleType):
            stack.extend(t.fields)
    return False


def _type_at(ty: Type, path: _Path) -> Type:
    for i in path:
        ty = ty.fields[i]
    return ty


def _what(e: Expr) -> str:
    return {
        If: "`if`",
        Match: "`match`",
        Function: "a function literal (closure)",
        RefCreate: "a reference",
        RefRead: "a reference read",
        RefWrite: "a reference write",
    }.get(type(e), f"a {type(e).__name__}")


class _Gradient:
    """One run of the transformation over one typed function."""

    def __init__(self, func: Function):
        self.func = func
        self.bindings: list[tuple[Var, Expr]] = []
        # original node -> its atom in the new program (a Var, Constant, Op, ...)
        self.atom: dict[Expr, Expr] = {}
        # forward bindings to differentiate, in evaluation order: (var, new value)
        self.forward: list[tuple[Var, Expr]] = []
        # atoms whose gradient is wanted (they depend on a float parameter)
        self.needs: set[Expr] = set()
        # adjoint contributions: atom -> {path of tensor leaf: [atoms]}
        self.adj: dict[Expr, dict[_Path, list[Expr]]] = {}

    # -- building ----------------------------------------------------------------------------
    def bind(self, value: Expr, name: str, ty: Type | None = None, var: Var | None = None) -> Var:
        v = var if var is not None else Var(name)
        if ty is not None:
            v.set_checked_type(ty)
            if value._checked_type is None:
                value.set_checked_type(ty)
        self.bindings.append((v, value))
        return v

    def emit(self, expr: Expr, done: dict[Expr, Expr]) -> Expr:
        """Flatten a rule's output into ``let`` bindings; return its atom.

        ``done`` maps rule-output nodes already bound to their atoms, and is updated: it is
        shared by the gradients of one rule application, so a sub-expression two of them
        share is computed once.  It starts with the forward call the rule was given mapped
        to its variable, so a rule that mentions the call's result (``exp``: ``g * call``)
        reuses the value the forward program computed.
        """
        stack: list[tuple[Expr, bool]] = [(expr, False)]
        while stack:
            node, expanded = stack.pop()
            if node in done:
                continue
            if isinstance(node, _LEAVES):
                done[node] = node
                continue
            if isinstance(node, Call):
                children = node.args
            elif isinstance(node, Tuple):
                children = node.fields
            elif isinstance(node, TupleGetItem):
                children = (node.tuple_value,)
            else:
                raise RelayError(f"internal: a gradient rule produced {_what(node)}")
            if not expanded:
                stack.append((node, True))
                stack.extend((c, False) for c in reversed(children) if c not in done)
                continue
            if isinstance(node, Call):
                if not isinstance(node.op, Op):
                    raise RelayError("internal: a gradient rule produced a call of a non-operator")
                new = Call(node.op, tuple(done[a] for a in node.args), node.attrs, node.type_args)
            elif isinstance(node, Tuple):
                new = Tuple(tuple(done[f] for f in node.fields))
            else:
                new = TupleGetItem(done[node.tuple_value], node.index)
            done[node] = self.bind(new, "g")
        return done[expr]

    # -- forward -----------------------------------------------------------------------------
    def run_forward(self) -> Expr:
        """Replay the body as bindings (explicit stack); return the output's atom."""
        let_var: dict[Expr, Var] = {}  # a let's value -> the let's var (to keep its name)
        atom = self.atom
        for p in self.func.params:
            atom[p] = p
            if _has_float(p.checked_type):
                self.needs.add(p)
        stack: list[tuple[Expr, int]] = [(self.func.body, 0)]
        while stack:
            node, state = stack.pop()
            if state == 0 and node in atom:
                continue
            if isinstance(node, Let):
                if state == 0:
                    let_var.setdefault(node.value, node.var)
                    stack.append((node, 1))
                    stack.append((node.value, 0))
                elif state == 1:
                    if isinstance(node.value, Function):
                        raise RelayError(
                            "gradient: a let-bound function cannot be differentiated; "
                            "inline it first",
                            node.value.span,
                        )
                    atom[node.var] = atom[node.value]
                    stack.append((node, 2))
                    stack.append((node.body, 0))
                else:
                    atom[node] = atom[node.body]
                continue
            if isinstance(node, Var):
                # A free variable (captured from outside): a constant for differentiation.
                atom[node] = node
                continue
            if isinstance(node, _LEAVES):
                atom[node] = node
                continue
            if isinstance(node, Call):
                if not isinstance(node.op, Op):
                    raise RelayError(
                        "gradient: only calls of operators can be differentiated; this calls "
                        f"{_callee_text(node.op)} (inline it first)",
                        node.span,
                    )
                children = node.args
            elif isinstance(node, Tuple):
                children = node.fields
            elif isinstance(node, TupleGetItem):
                children = (node.tuple_value,)
            else:
                raise RelayError(
                    f"gradient: {_what(node)} cannot be differentiated: first-order reverse mode "
                    "covers the dataflow fragment, let bindings and tuples",
                    node.span,
                )
            if state == 0:
                stack.append((node, 1))
                stack.extend((c, 0) for c in reversed(children) if c not in atom)
                continue
            args = tuple(atom[c] for c in children)
            if isinstance(node, Call):
                new: Expr = Call(node.op, args, node.attrs, node.type_args, span=node.span)
            elif isinstance(node, Tuple):
                new = Tuple(args, span=node.span)
            else:
                new = TupleGetItem(args[0], node.index, span=node.span)
            ty = node.checked_type
            v = self.bind(new, "v", ty, var=let_var.get(node))
            atom[node] = v
            self.forward.append((v, new))
            if _has_float(ty) and any(a in self.needs for a in args):
                self.needs.add(v)
        return atom[self.func.body]

    # -- adjoints ----------------------------------------------------------------------------
    def add_contribution(self, target: Expr, path: _Path, expr: Expr, done: dict) -> None:
        """Add ``expr`` (a rule output, of the type of ``target`` at ``path``) to the adjoint."""
        ty = _type_at(target.checked_type, path)
        if isinstance(ty, TupleType):
            if isinstance(expr, Tuple):
                parts = list(expr.fields)
            else:
                whole = self.emit(expr, done)
                parts = [self.bind(TupleGetItem(whole, i), "g") for i in range(len(ty.fields))]
            for i, part in enumerate(parts):
                if part is not None:
                    self.add_contribution(target, path + (i,), part, done)
            return
        atom = self.emit(expr, done)
        self.adj.setdefault(target, {}).setdefault(path, []).append(atom)

    def leaf_adjoint(self, target: Expr, path: _Path, ty: Type) -> Expr | None:
        """The summed adjoint of a tensor leaf, or None if nothing flowed into it."""
        parts = self.adj.get(target, {}).get(path)
        if not parts:
            return None
        total = parts[0]
        for part in parts[1:]:
            total = self.bind(Call(get_op("add"), (total, part)), "g", ty)
        if total._checked_type is None:
            total.set_checked_type(ty)
        return total

    def adjoint(self, target: Expr, zeros: str) -> Expr:
        """The adjoint of ``target`` as one expression; missing leaves are zeros."""
        ty = target.checked_type

        def build(path: _Path, t: Type) -> Expr:
            if isinstance(t, TupleType):
                return Tuple(tuple(build(path + (i,), f) for i, f in enumerate(t.fields)))
            got = self.leaf_adjoint(target, path, t)
            if got is not None:
                return got
            if zeros == "like" and not path:
                return self.bind(Call(get_op("zeros_like"), (target,)), "g", t)
            return self.bind(
                Call(
                    get_op("zeros"), (), make_attrs("zeros", {"shape": t.shape, "dtype": t.dtype})
                ),
                "g",
                t,
            )

        return build((), ty)

    def seed(self, out: Expr) -> None:
        ty = out.checked_type

        def walk(path: _Path, t: Type) -> None:
            if isinstance(t, TupleType):
                for i, f in enumerate(t.fields):
                    walk(path + (i,), f)
                return
            if not _has_float(t):
                return
            if path:
                attrs = make_attrs("ones", {"shape": t.shape, "dtype": t.dtype})
                one = self.bind(Call(get_op("ones"), (), attrs), "g", t)
            else:
                one = self.bind(Call(get_op("ones_like"), (out,)), "g", t)
            self.adj.setdefault(out, {}).setdefault(path, []).append(one)

        if out in self.needs:
            walk((), ty)

    def run_backward(self) -> None:
        needs = self.needs
        for v, value in reversed(self.forward):
            if v not in self.adj:
                continue
            if isinstance(value, TupleGetItem):
                # t.i: what flowed into the projection flows into field i of t.
                for path, parts in self.adj.pop(v).items():
                    if value.tuple_value in needs:
                        field = self.adj.setdefault(value.tuple_value, {})
                        field.setdefault((value.index,) + path, []).extend(parts)
                continue
            if isinstance(value, Tuple):
                for path, parts in self.adj.pop(v).items():
                    target = value.fields[path[0]]
                    if target in needs:
                        self.adj.setdefault(target, {}).setdefault(path[1:], []).extend(parts)
                continue
            op = value.op
            rule = get_grad_rule(op.name)
            if rule is None:
                raise RelayError(f"no gradient registered for {op.name}", value.span)
            out_grad = self.adjoint(v, zeros="shape")
            del self.adj[v]
            grads = rule(value, out_grad)
            if len(grads) != len(value.args):
                raise RelayError(
                    f"internal: the gradient rule of {op.name} returned {len(grads)} gradients "
                    f"for {len(value.args)} inputs"
                )
            done: dict[Expr, Expr] = {value: v}
            for arg, g in zip(value.args, grads):
                if g is not None and arg in needs:
                    self.add_contribution(arg, (), g, done)


def _callee_text(callee: Expr) -> str:
    if isinstance(callee, GlobalVar):
        return f"@{callee.name_hint}"
    if isinstance(callee, Var):
        return f"%{callee.name_hint}"
    if isinstance(callee, Constructor):
        return f"the constructor {callee.name_hint}"
    return _what(callee)


def _typed(func: Function, mod: IRModule | None) -> tuple[Function, IRModule]:
    """``func`` type-checked in ``mod`` (a copy); its nodes get their checked types."""
    from .infer_type import InferType

    work = mod.copy() if mod is not None else IRModule()
    gv = work.add("__gradient__", func, update=True)
    typed = InferType()(work)
    return typed[gv.name_hint], typed


def gradient(
    expr: Function | GlobalVar | str,
    mod: IRModule | None = None,
    mode: str = "higher_order",
) -> Function:
    """Transform a function into one returning ``(value, (grad_p0, grad_p1, ...))``.

    Parameters
    ----------
    expr : Function, or a GlobalVar / name of a function of ``mod``
        The function to differentiate: dataflow operators, ``let`` and tuples over
        statically shaped tensor parameters.
    mod : IRModule, optional
        The module ``expr`` lives in (its global definitions and types).
    mode : str
        ``"higher_order"`` (default) or ``"first_order"``; both give the same program.

    Returns
    -------
    Function
        A type-checked function with ``expr``'s parameters returning its value and the
        gradient of the sum of that value with respect to each parameter.

    Examples
    --------
    >>> x = relay.var("x", shape=(3,), dtype="float64")
    >>> f = relay.Function([x], relay.multiply(x, x))
    >>> g = relay.transform.gradient(f)
    >>> run = relay.create_executor("interpreter", mod=relay.IRModule.from_expr(g)).evaluate()
    >>> value, (dx,) = run(np.array([1.0, 2.0, 3.0]))      # dx == 2 * x
    """
    if mode not in _MODES:
        raise RelayError(f"gradient: mode must be one of {', '.join(_MODES)}, got {mode!r}")
    if isinstance(expr, (str, GlobalVar)):
        if mod is None:
            raise RelayError("gradient: pass mod= to differentiate a global function by name")
        expr = mod[expr if isinstance(expr, str) else expr.name_hint]
    if not isinstance(expr, Function):
        raise RelayError(f"gradient: expects a Function, got {type(expr).__name__}")
    func, typed_mod = _typed(expr, mod)
    for p in func.params:
        ty = p.checked_type
        for t in _tensor_leaves(ty):
            if not isinstance(t.shape, tuple) or not all(type(d) is int for d in t.shape):
                raise RelayError(
                    f"gradient: parameter %{p.name_hint} must have a static shape, found {t}",
                    p.span,
                )
        if not _tensor_leaves(ty) and not isinstance(ty, TupleType):
            raise RelayError(
                f"gradient: parameter %{p.name_hint} must be a tensor or a tuple of tensors",
                p.span,
            )

    state = _Gradient(func)
    out = state.run_forward()
    state.seed(out)
    state.run_backward()
    grads = tuple(state.adjoint(p, zeros="like") for p in func.params)
    body: Expr = Tuple((out, Tuple(grads)))
    for v, value in reversed(state.bindings):
        body = Let(v, value, body)
    result = Function(func.params, body, None, func.type_params, span=func.span)

    # Type-check the result (this also gives every new node its checked type).
    checked, _ = _typed(result, typed_mod)
    return checked


def _tensor_leaves(ty: Type) -> list[TensorType]:
    out, stack = [], [ty]
    while stack:
        t = stack.pop()
        if isinstance(t, TensorType):
            out.append(t)
        elif isinstance(t, TupleType):
            stack.extend(t.fields)
    return out


__all__ = ["gradient"]
