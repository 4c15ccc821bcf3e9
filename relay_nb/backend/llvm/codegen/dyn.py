"""``dyn.*``: lowered as their static twins, once their shape operands' values are known.

A ``dyn.reshape(%x, %s)`` cannot be compiled before ``%s`` has a value: the result's
shape, and so every loop bound, depends on it.  As TVM's DynamicToStatic does when the
arguments are bound, the JIT rewrites each such call, at call time, into its static twin
with the operand values as attributes (``reshape(%x, newshape=[3, 2])``, via
:data:`relay_nb.op.impl.dyn.STATIC_FORM`, the interpreter's meaning too), and lowers that
with the twin's own rule.  :class:`~..specialize.SpecializingKernel` does it: keyed by the
argument shapes *and* the values of the parameters the shape operands are computed from,
each distinct value is compiled once, through the kernel cache.

So these rules are rewrites (``kind="static"``, ``fn(call, value) -> Call``), not loops;
:func:`~.lower.lower` itself never sees a ``dyn.*`` call unless its operands could not be
bound, and then says so (``check``).
"""

from __future__ import annotations

from ....ir.expr import Call
from ....op.impl.dyn import STATIC_FORM, static_form
from ....op.registry import get_op
from .rules import rule

# dyn.topk and dyn.sparse_to_dense are opaque and their twins have no lowering either.
LOWERED = tuple(name for name in STATIC_FORM if name not in ("dyn.topk", "dyn.sparse_to_dense"))


def _unbound(call: Call) -> str:
    return "its shape operands' values are known only when the kernel is called"


@rule(*LOWERED, kind="static", check=_unbound)
def to_static(call: Call, value) -> Call:
    """The static twin of ``call``; ``value(i)`` is the numpy value of operand ``i``."""
    static, kept, attrs = static_form(call.op.name, value, call.attrs)
    return Call(get_op(static), tuple(call.args[i] for i in kept), attrs, span=call.span)


__all__ = ["LOWERED", "to_static"]
