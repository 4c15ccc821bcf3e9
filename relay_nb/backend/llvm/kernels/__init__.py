"""Hand-tiled anchor kernels: dense / matmul / batch_matmul / conv2d with fused epilogues.

The code generator hands each anchor op of a fused primitive function to
:func:`emit_anchor` (the contract is :class:`~relay_nb.backend.llvm.anchor.AnchorCall`);
what it declines (returns False for) runs as the generator's plain loop instead.

* :mod:`.matmul`, :mod:`.conv2d` — each op as one strided :class:`~.problem.Gemm`
  (conv2d: an implicit im2col per image and group; depthwise convs: their own vector
  loops over the output width, :mod:`.depthwise`);
* :mod:`.driver` — the kernel's own code: cache-blocking loops, calls of the runtime,
  the fused epilogue on each finished block; :mod:`.reference` — plain loops for mixed
  dtypes;
* :mod:`.runtime` — the inner loops compiled once per process: packing and the
  register-tiled macro-kernel (:mod:`.gemm`), the im2col packer (:mod:`.conv_pack`), and
  unpacked kernels for few rows (:mod:`.small`);
* :mod:`.prepack` — constant operands (conv, dense and matmul weights) packed once, when the kernel is bound
  to its constants, into the panels the macro-kernel reads.
"""

from __future__ import annotations

from typing import Any

# The generators are imported on first use, not with the package: a
# warm build reads kernels/prepack.py's layouts and compiles nothing.

MATMUL_OPS = ("nn.dense", "nn.matmul", "nn.batch_matmul")


def __getattr__(name: str) -> Any:
    if name == "AnchorCall":
        from ..anchor import AnchorCall

        return AnchorCall
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _lowerable(call: "AnchorCall") -> bool:
    """Every dtype involved is an int or float we lower (not bool, not float16)."""
    from ..codegen.types import Unsupported, dtype

    try:
        dts = [dtype(t.dtype) for t in call.input_types] + [dtype(call.output_type.dtype)]
    except Unsupported:
        return False
    return all(dt.is_int or dt.is_float for dt in dts)


def emit_anchor(call: "AnchorCall") -> bool:
    """Emit the anchor op ``call`` at ``call.builder``; False (nothing emitted) if declined.

    The emitted code reads ``call.inputs``, writes ``call.output`` (contiguous, row-major)
    and runs ``call.epilogue`` exactly once on every output element, on runs of the
    output that were just computed.

    Examples
    --------
    >>> from relay_nb.backend.llvm.kernels import emit_anchor
    >>> emit_anchor(AnchorCall("nn.dense", attrs, (x_ty, w_ty), out_ty, builder,
    ...                        (x_ptr, w_ptr), out_ptr))  # doctest: +SKIP
    True
    """
    from .conv2d import emit_conv2d
    from .driver import emit_gemm
    from .matmul import matmul_gemm, prepack_weights

    if not _lowerable(call):
        return False
    if call.op_name in MATMUL_OPS:
        g = matmul_gemm(call)
        if g is None:
            return False
        prepack_weights(call, g)
        emit_gemm(call.builder, g)
        return True
    if call.op_name == "nn.conv2d":
        return emit_conv2d(call)
    return False


__all__ = ["emit_anchor", "AnchorCall"]
