"""``nn.dense`` / ``nn.matmul`` / ``nn.batch_matmul`` as :class:`Gemm` problems.

Each op is one strided GEMM, its transposes only swapping strides (packing absorbs them):

* ``dense(x, W)``: x ``(..., K)`` with its leading axes flattened into M, ``B[k, n] = W[n, k]``.
* ``matmul(a, b, transpose_a, transpose_b)``: without ``transpose_a`` the leading axes of
  ``a`` flatten into M (a 1-d ``a`` is one row); with it, ``a`` is ``(..., K, M)`` and the
  leading axes are a batch sharing the 2-d ``b`` (the interpreter's ``swapaxes(a, -1, -2)``).
* ``batch_matmul(a, b)``: ``(B, M, K) x (B, N, K)`` by default (``transpose_b=True``, as
  TVM); either batch may be 1 and broadcast (batch stride 0).
"""

from __future__ import annotations

import math
from typing import Optional

from ..anchor import AnchorCall
from ..codegen.types import dtype
from .prepack import PanelsB
from .problem import Gemm, Matrix


def _b_matrix(ptr, dt, k: int, n: int, transposed: bool, bs: int = 0) -> Matrix:
    """B as ``(K, N)``: stored ``(N, K)`` when ``transposed``."""
    return Matrix(ptr, dt, 1, k, (bs, 0)) if transposed else Matrix(ptr, dt, n, 1, (bs, 0))


def matmul_gemm(call: AnchorCall) -> Optional[Gemm]:
    """The GEMM computing ``call`` (its shapes static), or None if it is not one of ours."""
    a_ty, b_ty = call.input_types
    try:
        a_shape, b_shape = a_ty.concrete_shape, b_ty.concrete_shape
        out_shape = call.output_type.concrete_shape
    except ValueError:
        return None
    a_dt, b_dt, c_dt = dtype(a_ty.dtype), dtype(b_ty.dtype), dtype(call.output_type.dtype)
    x, w = call.inputs
    attrs = call.attrs
    if call.op_name == "nn.batch_matmul":
        if len(a_shape) != 3 or len(b_shape) != 3:
            return None
        ta, tb = bool(attrs.get("transpose_a", False)), bool(attrs.get("transpose_b", True))
        batch, m, n = out_shape
        k = a_shape[1] if ta else a_shape[2]
        a_bs = 0 if a_shape[0] == 1 else m * k
        b_bs = 0 if b_shape[0] == 1 else k * n
        a = Matrix(x, a_dt, 1, m, (a_bs, 0)) if ta else Matrix(x, a_dt, k, 1, (a_bs, 0))
        b = _b_matrix(w, b_dt, k, n, tb, b_bs)
        g = Gemm(m, n, k, a, b, call.output, c_dt, (batch, 1), (m * n, 0), call.epilogue)
    elif call.op_name in ("nn.dense", "nn.matmul"):
        g = _matrix_product(call, a_shape, b_shape, a_dt, b_dt, c_dt)
    else:
        return None
    if g is not None:
        g.scratch, g.split = call.scratch, call.split
    return g


def _matrix_product(call: AnchorCall, a_shape, b_shape, a_dt, b_dt, c_dt) -> Optional[Gemm]:
    x, w = call.inputs
    if call.op_name == "nn.dense":
        ta, tb = False, True
    else:
        ta = bool(call.attrs.get("transpose_a", False))
        tb = bool(call.attrs.get("transpose_b", False))
    if len(b_shape) != 2:
        return None
    n = b_shape[0] if tb else b_shape[1]
    if ta:
        if len(a_shape) < 2:
            return None
        k, m = a_shape[-2:]
        batch = math.prod(a_shape[:-2])
        a = Matrix(x, a_dt, 1, m, (k * m, 0))
        return Gemm(m, n, k, a, _b_matrix(w, b_dt, k, n, tb), call.output, c_dt, (batch, 1), (m * n, 0), call.epilogue)
    k = a_shape[-1]
    m = math.prod(a_shape[:-1])
    a = Matrix(x, a_dt, k, 1)
    return Gemm(m, n, k, a, _b_matrix(w, b_dt, k, n, tb), call.output, c_dt, epilogue=call.epilogue)


def prepack_weights(call: AnchorCall, g: Gemm) -> None:
    """A constant B (a dense / matmul weight): packed into the macro-kernel's panels once,
    not by ``pack_b`` on every call.  Only for the tiled path with scratch memory (its
    unpacked fallback would read B as given) and a B shared by the whole batch."""
    from .driver import plan, small_path, tiled
    from .gemm import tile_for

    if call.prepack is None or g.scratch is None or not tiled(g) or small_path(g) is not None:
        return
    if g.b.bs != (0, 0) or (g.b.rs, g.b.cs) not in ((g.n, 1), (1, g.k)):
        return
    panels = PanelsB(g.k, g.n, plan(g).kc, tile_for(g.dt).nr, transposed=g.b.rs == 1 and g.k > 1)
    if call.prepack(1, panels):
        g.b_panels = panels
