"""Lowerings of the annotation ops that compute (:mod:`relay_nb.op.annotation`).

``relay.op.annotation.simulated_quantize`` is the automatic quantizer's elementwise
simulation of integer rounding: ``round(clip(x / scale, lo, hi)) * scale`` in float32,
computed inline in the consumer's loop like any elementwise op.
"""

from __future__ import annotations

from .context import attrs_of
from .rules import rule
from .scalar import tvm_max, tvm_min


def _quantize_check(call) -> str | None:
    attrs = attrs_of(call)
    if attrs["kind"] != 0 and (attrs["rounding"] != "round" or not attrs["sign"]):
        return 'only sign=True with rounding="round" is defined'
    if call.checked_type.dtype != "float32":
        return "data must be float32"
    return None


@rule("relay.op.annotation.simulated_quantize", check=_quantize_check)
def _simulated_quantize(kb, call, index, field):
    x = kb.value(call.args[0], index)
    if attrs_of(call)["kind"] == 0:  # QAnnotateKind.IDENTITY
        return x
    dt = kb.dt(call)
    scale, lo, hi = (kb.operand(a, index) for a in call.args[1:])
    b = kb.builder
    q = tvm_max(kb, tvm_min(kb, b.fdiv(x, scale), hi, dt), lo, dt)
    q = kb.call("llvm.round.f32", dt.ir, q)  # halves away from zero, as TVM's round
    return b.fmul(q, scale)
