"""The contract between the fused-kernel code generator and the hand-tiled anchor kernels.

FuseOps makes ``nn.dense`` / ``nn.matmul`` / ``nn.batch_matmul`` / ``nn.conv2d`` the
*anchor* of a primitive function, with an elementwise epilogue (bias_add, relu, a residual
add...) fused after it. The generic code generator (``codegen``) owns the kernel function,
its arguments and the epilogue; the tiled kernels (``kernels``) own the loops that compute
the anchor. They meet here, so either side can change without the other.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional

from llvmlite import ir

from ...ir.ty import TensorType

Epilogue = Callable[[ir.IRBuilder, ir.Value, ir.Value], None]
"""``epilogue(builder, flat_start, count)``: rewrite ``output[flat_start : flat_start + count]``
(flat row-major offsets, ``i64`` values) in place with the fused elementwise ops. The anchor
kernel calls it on each finished, contiguous run of output elements while they are still in
cache, so the epilogue runs inside the producer's kernel."""


@dataclass
class AnchorCall:
    """One anchor op to emit at the builder's position, on contiguous row-major buffers."""

    op_name: str
    attrs: Any
    input_types: tuple[TensorType, ...]
    output_type: TensorType
    builder: ir.IRBuilder
    inputs: tuple[ir.Value, ...]
    output: ir.Value
    epilogue: Optional[Epilogue] = None
    scratch: Optional[Callable[[int], ir.Value]] = None
    """``scratch(nbytes)``: a 64-byte aligned pointer to ``nbytes`` of temporary memory for
    this call (carved from the kernel's workspace, which the caller allocates in Python);
    without it the tiled kernels ``malloc`` their packing buffers."""
    split: Optional[Callable[..., tuple[ir.Value, ir.Value]]] = None
    """``split(units, unit_ns, chunk_ns)``: ``(lo, hi)``, the units of the anchor's outer
    parallel loop this call computes when the kernel is split across threads
    (``unit_ns``: the estimated single-core time of one unit; ``chunk_ns``: of the work
    each chunk repeats).  None: the kernel computes everything."""
    prepack: Optional[Callable[[int, Callable[[Any], Any]], bool]] = None
    """``prepack(i, pack)``: ask that input ``i`` — a constant read by nothing else — be
    passed as ``pack(its array)`` (a numpy array), computed once when the kernel is bound
    to its constants rather than on every call; True if granted, and the emitted code must
    then read ``inputs[i]`` in that layout.  None: no input can be prepacked."""
