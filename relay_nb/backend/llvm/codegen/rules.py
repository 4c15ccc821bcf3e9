"""The ``llvm`` column of the operator registry: how each op is lowered.

Two kinds of rule, as in TVM's compute / schedule split:

* ``index`` — ``fn(kb, call, index, field) -> value``: the element of the call's result at
  ``index`` (``field`` selects the tuple field of a tuple-valued op).  Elementwise,
  broadcasting and injective ops are index rules, so the consumer's loop computes them
  inline: a fused chain is one loop with no intermediate tensors.
* ``buffer`` — ``fn(kb, call, outs, epilogue)``: writes the whole result into ``outs``
  (one :class:`Buffer` per tensor of the result) with loops of its own.  Reductions,
  softmax, norms, pools and the anchors (dense, conv) are buffer rules; an anchor also
  takes the ``epilogue`` of elementwise ops fused after it and applies it in place.
* ``rewrite`` — ``fn(call) -> Expr``: an op lowered by decomposition into ops that have
  rules (TVM's Legalize: ``nn.contrib_conv2d_NCHWc`` is layout transforms around
  ``nn.conv2d``), applied by :func:`.lower.legalize` only to the primitive function being
  lowered, so the user's module and printouts keep the op.
* ``static`` — ``fn(call, value) -> Call``: a ``dyn.*`` op, rewritten into its static twin
  once ``value(i)``, the value of its operand ``i``, is known (see :mod:`.dyn`); the
  kernel specializes on those values at call time, so ``lower`` never sees the call.

``materialize(call)`` asks for an index rule's whole result to be computed into a buffer
(``take`` in ``mode="fast"`` must check every index even where a consumer reads only a
few).  ``flat=True`` marks index rules that read their operands at the *same flat offset* when
the operand has the result's element count (elementwise ops, reshapes): a group made only
of those runs as one flat loop, the form LLVM vectorizes best.  ``check(call)`` returns
why a particular call cannot be lowered (a layout, a mode), or None.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from ....op.registry import get_column, register_column

COLUMN = "llvm"


@dataclass(frozen=True)
class LLVMRule:
    """One op's lowering (see the module docstring)."""

    kind: str
    fn: Callable
    check: Optional[Callable] = None
    flat: bool = False
    anchor: bool = False
    materialize: Optional[Callable] = None
    cost: Optional[Callable] = None  # call -> work per output element, in elementwise ops (default 1)

    def materialized(self, call) -> bool:
        return self.kind == "buffer" or (self.materialize is not None and bool(self.materialize(call)))


def rule(
    *op_names: str, kind: str = "index", check=None, flat: bool = False, anchor: bool = False, materialize=None, cost=None
):
    """Decorator registering ``fn`` as the ``llvm`` lowering of ``op_names``; ``cost(call)``
    estimates an index rule's work per output element (a pool's window), which decides
    whether a kernel is worth splitting across threads."""

    def deco(fn: Callable) -> Callable:
        for name in op_names:
            rule_ = LLVMRule(kind, fn, check, flat, anchor, materialize, cost)
            register_column(COLUMN, name, rule_, override=True)
        return fn

    return deco


def llvm_rules() -> dict:
    """The ``llvm`` column (op name -> :class:`LLVMRule`), with every built-in rule loaded."""
    from . import load_rules

    load_rules()
    return get_column(COLUMN)


__all__ = ["COLUMN", "LLVMRule", "llvm_rules", "rule"]
