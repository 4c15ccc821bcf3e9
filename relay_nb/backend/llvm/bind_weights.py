"""Constant weights (conv, dense, matmul) bound into the primitive function that reads them.

FuseOps leaves a bound parameter (``relay.build(mod, params=...)``) outside the fused
function, as a constant argument of its call; the kernel then cannot tell a weight that
is the same on every call from an input, and repacks it each time.  Inside the function
it is one of the kernel's own constants, which the anchor kernel may ask to have packed
once (:class:`~.anchor.AnchorCall.prepack`, :mod:`.kernels.prepack`).  The kernel cache
still shares the compiled code between kernels that differ only in their weights
(its key is the function without its constants).
"""

from __future__ import annotations

from ...ir.expr import Call, Constant, Expr, Function, Op, Var
from ...ir.functor import post_order
from ...ir.module import IRModule
from ...ir.ty import FuncType
from ...transform.typed import TypedMutator
from .executor import _Substitute

WEIGHT_INPUTS = {"nn.conv2d": 1, "nn.dense": 1, "nn.matmul": 1}  # anchor op -> the input its kernel can prepack


def _weight_params(fn: Function) -> set[Var]:
    """Parameters of ``fn`` read by nothing but one anchor's weight input."""
    readers: dict[Var, list[tuple[Call, int]]] = {p: [] for p in fn.params}
    for node in post_order(fn.body):
        if type(node) is Call:
            for i, a in enumerate(node.args):
                if type(a) is Var and a in readers:
                    readers[a].append((node, i))
    if type(fn.body) is Var and fn.body in readers:
        readers[fn.body].append((fn.body, -1))
    out = set()
    for p, uses in readers.items():
        if len(uses) == 1:
            call, i = uses[0]
            if type(call) is Call and type(call.op) is Op and WEIGHT_INPUTS.get(call.op.name) == i:
                out.add(p)
    return out


class _BindWeights(TypedMutator):
    def visit_call(self, call: Call) -> Expr:
        fn = call.op
        if type(fn) is Function and fn.is_primitive:
            weights = _weight_params(fn)
            bound = {p: a for p, a in zip(fn.params, call.args) if p in weights and type(a) is Constant}
            if bound:
                keep = [(p, a) for p, a in zip(fn.params, call.args) if p not in bound]
                body = _Substitute(bound).visit(fn.body)
                new_fn = Function(tuple(p for p, _ in keep), body, fn.ret_type, fn.type_params, fn.attrs)
                new_fn.set_checked_type(FuncType(tuple(p._checked_type for p, _ in keep), body._checked_type))
                args = tuple(self.visit(a) for _, a in keep)
                new = Call(new_fn, args, call.attrs, call.type_args)
                new.set_checked_type(call._checked_type)
                return new
        return super().visit_call(call)


def bind_weights(mod: IRModule) -> IRModule:
    """``mod`` with each constant weight an anchor can prepack moved into its primitive function."""
    updates = {}
    for gv in mod.get_global_vars():
        func = mod[gv.name_hint]
        if isinstance(func, Function) and not func.is_primitive:
            new = _BindWeights().visit(func)
            if new is not func:
                updates[gv] = new
    return mod.with_functions(updates) if updates else mod


__all__ = ["bind_weights"]
