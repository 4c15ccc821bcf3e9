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

from types import SimpleNamespace
from typing import Any

from ..ir.module import IRModule
from ..typing.infer import infer_module


class InferType:
    """The type inference pass, as ``relay.transform.InferType()``.

    >>> mod = relay.transform.InferType()(mod)
    >>> mod["main"].checked_type
    """

    info = SimpleNamespace(name="InferType", opt_level=0, required=())

    def __init__(self) -> None:
        self.info = InferType.info
        # Call -> type arguments inferred for calls of polymorphic functions, last run.
        self.type_args: dict = {}
        self.global_types: dict = {}

    def __call__(self, mod: IRModule, ctx: Any = None) -> IRModule:
        new = mod.copy()
        env = infer_module(new)
        self.type_args = env.type_args
        self.global_types = env.global_types
        return new

    def __repr__(self) -> str:
        return "InferType()"


__all__ = ["InferType"]
