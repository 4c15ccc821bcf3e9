"""Constant GEMM operands packed once, when a kernel is bound to its constants.

The runtime's ``pack_a`` (:mod:`.gemm`) copies every ``mc x kc`` block of A into panels of
MR rows each time the kernel runs; for a conv whose weights are a constant, that is the
same copy on every call (measured 4.5-7.5 ms per call for a 9 MiB weight). Instead the
kernel asks for the constant in the layout ``pack_a`` would produce (see
:class:`~relay_nb.backend.llvm.anchor.AnchorCall.prepack`), computed here by numpy once,
and hands its panels straight to the macro-kernel.  Measured on ResNet-50 (one process,
interleaved calls, load 4-9 on 2 cores): 2 threads 18-22% faster (a kernel split by
columns had every chunk pack all of A), 1 thread 0-4% (the copy mostly hid behind the
macro-kernel's own reads of A).

Layout of :class:`PanelsA` (per batch entry ``g``, per K slab of KC, per panel of MR rows)::

    packed[g][slab pc][panel p][k < kc][r < MR] = A[g][p*MR + r][pc + k]   (rows >= M repeat M-1)

so the block ``(g, pc, ic)`` the driver would pack starts at ``g*Mp*K + pc*Mp + ic*kc``
(``Mp``: M rounded up to MR; each slab before ``pc`` holds ``Mp * its kc`` elements), and
its rows past the block's end repeat the last row exactly as ``pack_a``'s clamping does:
the macro-kernel computes bitwise the same sums.

A constant B (``dense`` / ``matmul`` with a weight: the activations are A, M their rows) is
packed likewise as :class:`PanelsB`, what ``pack_b`` makes of it::

    packed[slab pc][panel p][k < kc][j < NR] = B[pc + k][p*NR + j]   (columns >= N repeat N-1)

so the block ``(pc, jc)`` starts at ``pc*Np + jc*kc`` (``Np``: N rounded up to NR).  A
transformer's weights were copied by ``pack_b`` on every call (85 M elements in GPT-2).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class PanelsA:
    """A constant A operand (``batch`` row-major ``m x k`` matrices, one after another)
    packed into MR-row panels per K slab of ``kc``: what ``pack_a`` would make of it."""

    batch: int
    m: int
    k: int
    kc: int
    mr: int

    @property
    def mp(self) -> int:
        """M rounded up to whole panels."""
        return math.ceil(self.m / self.mr) * self.mr

    @property
    def size(self) -> int:
        """Elements of the packed operand."""
        return self.batch * self.mp * self.k

    def __call__(self, a: np.ndarray) -> np.ndarray:
        # Each element is copied once, straight from ``a`` into its panel (no padded or
        # transposed temporaries): a warm ResNet-50 build packs ~100 MB of weights here.
        mats = np.asarray(a).reshape(self.batch, self.m, self.k)
        out = np.empty(self.batch * self.mp * self.k, a.dtype)
        whole, rest = divmod(self.m, self.mr)  # full panels; rows of the last, partial one
        panels = self.mp // self.mr
        start = 0
        for pc in range(0, self.k, self.kc):
            kc = min(self.kc, self.k - pc)
            size = self.mp * kc
            # this slab of every batch entry, as [g][panel][r][k] (a view of ``out``)
            dst = out.reshape(self.batch, -1)[:, start : start + size]
            dst = dst.reshape(self.batch, panels, kc, self.mr).transpose(0, 1, 3, 2)
            src = mats[:, :, pc : pc + kc]
            if whole:
                dst[:, :whole] = src[:, : whole * self.mr].reshape(self.batch, whole, self.mr, kc)
            if rest:
                dst[:, whole, :rest] = src[:, whole * self.mr :]
                # rows past M repeat row M - 1 (as pack_a clamps its row index)
                dst[:, whole, rest:] = src[:, self.m - 1 : self.m]
            start += size
        return out

@dataclass(frozen=True)
class PanelsB:
    """A constant B operand (``k x n``; stored ``n x k`` when ``transposed``, as dense's
    weight) packed into NR-column panels per K slab of ``kc``: what ``pack_b`` would make
    of it."""

    k: int
    n: int
    kc: int
    nr: int
    transposed: bool

    @property
    def np(self) -> int:
        """N rounded up to whole panels."""
        return math.ceil(self.n / self.nr) * self.nr

    @property
    def size(self) -> int:
        """Elements of the packed operand."""
        return self.np * self.k

    def __call__(self, b: np.ndarray) -> np.ndarray:
        from ..kernel import aligned_empty

        # copied once, straight into the panels (the transpose is a strided view); 64-byte
        # aligned, as pack_b's buffer: the macro-kernel reads B panels with aligned loads
        mat = np.asarray(b).reshape(self.n, self.k).T if self.transposed else np.asarray(b).reshape(self.k, self.n)
        out = aligned_empty((self.size,), mat.dtype.name)
        whole, rest = divmod(self.n, self.nr)
        panels = self.np // self.nr
        for pc in range(0, self.k, self.kc):
            kc = min(self.kc, self.k - pc)
            dst = out[pc * self.np : (pc + kc) * self.np].reshape(panels, kc, self.nr)
            src = mat[pc : pc + kc]
            if whole:
                dst[:whole] = src[:, : whole * self.nr].reshape(kc, whole, self.nr).transpose(1, 0, 2)
            if rest:
                dst[whole, :, :rest] = src[:, whole * self.nr :]
                # columns past N repeat column N - 1 (as pack_b clamps its column index)
                dst[whole, :, rest:] = src[:, self.n - 1 : self.n]
        return out


__all__ = ["PanelsA", "PanelsB"]
