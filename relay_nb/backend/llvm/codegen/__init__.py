"""Lowering of primitive functions to LLVM IR (pure: no engine, no cache).

``lower(func, symbol)`` (:mod:`.lower`) turns one typed ``Primitive=1`` function into an
``llvmlite.ir.Module``; the op rules it uses form the registry's ``llvm`` column (see
:mod:`.rules`), filled by one module per op family.  The package itself imports nothing
else: a warm build (every kernel from the disk cache) imports neither the generator nor
the rules.
"""

from __future__ import annotations

_LOADED = False


def load_rules() -> None:
    """Import the rule modules once (each registers its ops' ``llvm`` column)."""
    global _LOADED
    if _LOADED:
        return
    _LOADED = True
    import relay_nb.op.impl  # noqa: F401  (the ops must exist before rules are attached)

    from . import anchors, elementwise, image, indexing, injective, norm, pool, reduce  # noqa: F401
    from . import annotation  # noqa: F401
    from . import vision  # noqa: F401
    from . import image_nd, nn_shuffle  # noqa: F401  (issue 12: resize1d/3d, upsampling3d, shuffles)
    from . import tensor_index, tensor_loops  # noqa: F401  (the tensor ops of issue 12)
    from . import dyn  # noqa: F401  (dyn.*: rewritten to their static twins per value)
    from . import image_extra  # noqa: F401  (crop_and_resize, dilation2d, grid_sample)
    from . import nn_contrib  # noqa: F401  (the contrib convolutions, by decomposition)
    from . import nn_sparse  # noqa: F401  (sparse_dense, sparse_conv2d, sparse_transpose)
    from . import deformable  # noqa: F401  (nn.deformable_conv2d)
    from . import nn_special, nn_train, qnn  # noqa: F401  (fusable qnn, training and special nn ops of issue 12)


__all__ = ["load_rules"]
