"""What an anchor op asks of the GEMM: shapes, strided operands, batching, conv geometry.

Every anchor op becomes one :class:`Gemm` (``C = A @ B`` over a two-level batch); only
how B is read differs — a strided matrix for the matmul family, the implicit im2col matrix
of a (zero-padded) image for conv2d (:class:`ConvGeometry`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from llvmlite import ir

from ..anchor import Epilogue
from ..codegen.types import DType
from ._loops import IntLike, add, mul
from .prepack import PanelsA, PanelsB


@dataclass
class Matrix:
    """A strided view of one operand: element ``(r, c)`` of batch ``(o, i)`` is at
    ``ptr[o * bs[0] + i * bs[1] + r * rs + c * cs]`` (A: rows m, cols k; B: rows k, cols n)."""

    ptr: ir.Value
    dt: DType
    rs: int
    cs: int
    bs: tuple[int, int] = (0, 0)


@dataclass(frozen=True)
class ConvGeometry:
    """conv2d of one image and group as a GEMM: B is the im2col matrix of the input.

    ``channels`` counts the whole input (all groups), ``group_channels`` one group's;
    padding is (top, left, bottom, right)."""

    channels: int
    height: int
    width: int
    group_channels: int
    kernel: tuple[int, int]
    out: tuple[int, int]
    strides: tuple[int, int]
    dilation: tuple[int, int]
    padding: tuple[int, int, int, int]

    @property
    def padded(self) -> bool:
        return any(self.padding)

    @property
    def hp(self) -> int:
        return self.height + self.padding[0] + self.padding[2]

    @property
    def wp(self) -> int:
        return self.width + self.padding[1] + self.padding[3]

    @property
    def image(self) -> int:
        """Elements of one unpadded input image."""
        return self.channels * self.height * self.width


@dataclass
class Gemm:
    """``C[o, i] = A[o, i] @ B[o, i]`` for a two-level batch ``(o, i)``; C is row-major and
    contiguous (``ldc = n``) at ``c + o * c_bs[0] + i * c_bs[1]``. With ``conv`` set, B is
    the im2col matrix of image ``o``, group ``i`` of the NCHW input at ``b.ptr``."""

    m: int
    n: int
    k: int
    a: Matrix
    b: Matrix
    c: ir.Value
    dt: DType
    batch: tuple[int, int] = (1, 1)
    c_bs: tuple[int, int] = (0, 0)
    epilogue: Optional[Epilogue] = None
    conv: Optional[ConvGeometry] = None
    scratch: Optional[Callable[[int], ir.Value]] = None  # see AnchorCall.scratch
    split: Optional[Callable[..., tuple]] = None  # see AnchorCall.split
    a_panels: Optional[PanelsA] = None  # A arrives packed in this layout (a constant, see .prepack)
    b_panels: Optional[PanelsB] = None  # B likewise (a weight of dense / matmul)

    def offset(self, b: ir.IRBuilder, strides: tuple[int, int], o: IntLike, i: IntLike) -> IntLike:
        return add(b, mul(b, o, strides[0]), mul(b, i, strides[1]))
