"""InferType: give every expression of a module its type.

Input: any module.  Output: a new IRModule (``mod.copy()``: the same nodes, so sharing is
kept) in which every expression has ``checked_type`` set: variables, constants, calls,
functions, global variables (their function's most general type), operators (their
polymorphic type), constructors.  Unannotated top-level functions are generalized
(``def @f(%x, %y) { add(%x, %y) }`` gets ``fn [A, B, C](A, B) -> C where Broadcast(A, B,
C)``).  Invariant kept: the program itself is unchanged.  Type errors are
:class:`relay_nb.errors.RelayTypeError` pointing at the offending node's source span.

See :mod:`relay_nb.typing.infer` for how inference works.
"""

from __future__ import annotations

from ..ir.module import IRModule
from ..typing.infer import infer_module
from .infra import Pass, PassContext, PassInfo, register_pass


class InferType(Pass):
    """The type inference pass, as ``relay.transform.InferType()`` (a module pass, opt level 0).

    >>> mod = relay.transform.InferType()(mod)
    >>> mod["main"].checked_type
    """

    def __init__(self) -> None:
        self.info = PassInfo("InferType", 0)
        # Call -> type arguments inferred for calls of polymorphic functions, last run.
        self.type_args: dict = {}
        self.global_types: dict = {}

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        new = mod.copy()
        env = infer_module(new)
        self.type_args = env.type_args
        self.global_types = env.global_types
        return new

    def __repr__(self) -> str:
        return "InferType()"


register_pass("InferType", InferType)


__all__ = ["InferType"]
