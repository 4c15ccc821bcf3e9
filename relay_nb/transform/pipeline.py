"""The default optimization pipeline: ``relay.optimize(mod, opt_level=2)``.

Input: any module.  Output: the module after the passes of :func:`default_passes` that
``opt_level`` enables, ending in fused ``Primitive`` functions ready for the JIT.  The
order is TVM's (``relay/backend/utils.cc``, ``GetPassPrefix``, then FuseOps in the
executor's codegen), without the passes this project does not have (layout, device and
quantization passes).  Passes are looked up by name in the registry;
``disabled_pass=[...]`` in the PassContext removes one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..ir.module import IRModule
from .infra import Pass, PassContext, Sequential, get_pass

PIPELINE: list[tuple[str, str]] = [
    ("InferType", "every later pass reads the checked types"),
    ("SimplifyInference", "batch_norm / dropout become plain arithmetic that later passes fold"),
    ("EliminateCommonSubexpr", "(opt 3) compute a repeated expression once"),
    (
        "SimplifyExpr",
        "x * 1 -> x, reshape of reshape -> one reshape, ... (cheap, exposes constants)",
    ),
    ("FoldConstant", "evaluate what only depends on constants, e.g. the weight arithmetic"),
    ("FoldScaleAxis", "(opt 3) push per-channel scales into conv2d weights, then fold them"),
    ("SimplifyExpr", "clean up what folding exposed (identity reshapes, x + 0 ...)"),
    ("FoldConstant", "fold again after the simplifications"),
    ("DeadCodeElimination", "(opt 1) drop let-bindings nothing uses any more"),
    ("FuseOps", "last: group ops into Primitive functions, the JIT's kernels"),
]
"""The pipeline as data: (pass name, why it is there), in order."""


def default_passes() -> list[Pass]:
    """A fresh instance of each registered pass of :data:`PIPELINE`, in order."""
    return [get_pass(name) for name, _why in PIPELINE]


def optimize(
    mod: IRModule, opt_level: int = 2, passes_config: Mapping[str, Any] | None = None
) -> IRModule:
    """Run the default pipeline at ``opt_level`` (TVM's ``relay.optimize`` / ``build`` prefix).

    The current PassContext's instruments, required and disabled passes are kept;
    ``passes_config`` adds config entries such as ``{"relay.FuseOps.max_depth": 8}``.

    >>> mod = relay.optimize(relay.parse(text), opt_level=3)
    """
    outer = PassContext.current()
    ctx = PassContext(
        opt_level=opt_level,
        required_pass=outer.required_pass,
        disabled_pass=outer.disabled_pass,
        instruments=outer.instruments,
        config={**outer.config, **dict(passes_config or {})},
    )
    with ctx:
        return Sequential(default_passes(), name="optimize")(mod)


__all__ = ["PIPELINE", "default_passes", "optimize"]
