"""The numpy implementations of every built-in operator: the registry's ``impl`` column.

The interpreter calls ``impl(args, attrs, out_type)``: ``args`` are numpy arrays (0-d for
scalars; a tuple of arrays for ``concatenate`` / ``stack``), ``attrs`` the call's
attributes, ``out_type`` the type InferType gave the call (or None).  The result is a
fresh ``numpy.ndarray`` of the inferred dtype (a tuple of them for ``split``,
``nn.batch_norm`` and ``nn.dropout``).  One module per op family registers its rules.

Defined behaviours
------------------
Relay (through C and LLVM) leaves some cases undefined; a notebook must neither crash nor
spam warnings, and constant folding must be total, so the interpreter defines them:

* **Integer division by zero** (``divide``, ``floor_divide``, ``trunc_divide``, ``mod``,
  ``floor_mod``, ``trunc_mod``, integer ``mean`` of nothing): the result is **0**, with no
  exception and no warning (numpy's own convention).  ``INT_MIN / -1`` wraps to
  ``INT_MIN`` and ``INT_MIN % -1`` is 0.  Float division follows IEEE (``inf``, ``nan``).
* **Integer overflow** wraps (two's complement) in every op, as TVM's generated code does.
* **Float to integer casts** (``cast``, and integer results of float computations)
  truncate toward zero and saturate: NaN becomes 0, out-of-range values the nearest bound.
* **Integer power with a negative exponent**: the truncated real result (0 unless the
  base is 1 or -1; ``0 ** -n`` is 0).
* **Shifts** by a negative count or by at least the bit width give 0 (``left_shift``) or
  the sign fill (``right_shift``).
* **take** with ``mode="fast"`` (no bounds check in TVM) raises an :class:`EvalError`
  naming the first index outside ``[0, n)``; ``clip`` clamps into ``[0, n - 1]``
  (negative indices become 0, as in TVM); ``wrap`` takes indices modulo ``n``.
* **round** rounds halves away from zero (TVM lowers it to ``llvm.round``), not to even,
  and keeps the sign of a zero (``round(-0.3)`` is ``-0.0``).
* **Float remainders** start from the exact ``fmod``: ``trunc_mod`` is ``fmod``,
  ``floor_mod`` is Python's ``%`` (``np.remainder``), right for any quotient.
* **power** is C's ``pow``: ``power(-inf, 0.5)`` is ``inf`` and ``power(-0.0, 0.5)`` is
  ``+0.0`` (numpy computes a scalar exponent 0.5 as ``sqrt``).
* **NaN in elementwise max/min** follows TVM's generated code, ``a > b ? a : b``:
  ``maximum(nan, 1) == 1`` but ``maximum(1, nan)`` is NaN; ``relu(nan) == 0``,
  ``clip(nan) == a_max``, ``sign(nan) == 0``.  Reductions and pools propagate NaN
  (numpy's rule; TVM's answer there depends on the element order); of equal values the
  first in row-major order wins, which shows for zeros (``max(-0.0, 0.0)`` is ``-0.0``).
* **bool arithmetic** is numpy's: ``add`` (so ``nn.bias_add``, ``sum``, ``mean`` and the
  average pools) is OR, ``multiply`` AND, ``negative`` NOT; ``variance`` ORs the elements
  that differ from the mean; ``subtract`` is an EvalError.
* **argmax / argmin over no elements** give -1, the index TVM's reducers start from.
* **Empty results** are empty arrays, never errors (softmax over an empty axis, an
  upsampling of an empty image, edge padding of a tensor with an empty axis).
* **A result too big for memory** is an EvalError naming its size, as the JIT's check.
* **Unknown or unsupported dtypes** (``bfloat16``, vector types) raise an EvalError.
* A result whose shape disagrees with the inferred type raises an EvalError naming both
  (a relation/implementation mismatch), instead of computing on with a wrong shape.
"""

# The op families first: an implementation can only be registered for a known op.
from .. import image as _image_ops  # noqa: F401
from .. import image_extra as _image_extra_ops  # noqa: F401
from .. import nn as _nn_ops  # noqa: F401
from .. import nn_bitserial as _nn_bitserial_ops  # noqa: F401
from .. import nn_contrib as _nn_contrib_ops  # noqa: F401
from .. import nn_extra as _nn_extra_ops  # noqa: F401
from .. import nn_sparse as _nn_sparse_ops  # noqa: F401
from .. import nn_special as _nn_special_ops  # noqa: F401
from .. import nn_train as _nn_train_ops  # noqa: F401
from .. import reduce as _reduce_ops  # noqa: F401
from .. import tensor as _tensor_ops  # noqa: F401
from .. import transform as _transform_ops  # noqa: F401
from . import image, nn, reduce, tensor, transform
from .. import annotation as _annotation_ops, dyn as _dyn_ops, memory as _memory_ops, vm as _vm_ops  # noqa: E402,F401
from . import annotation, dyn, memory  # noqa: E402,F401
from .. import qnn as _qnn_ops  # noqa: F401,E402
from . import qnn  # noqa: E402
from .. import vision as _vision_ops  # noqa: F401,E402
from . import vision  # noqa: E402
from .. import random as _random_ops  # noqa: F401,E402
from . import random  # noqa: E402
from . import image_extra, nn_bitserial, nn_contrib, nn_extra  # nn, image
from . import nn_sparse, nn_special, nn_train  # nn

from .. import indexing as _indexing_ops, misc as _misc_ops, scan as _scan_ops  # noqa: F401,E402
from .. import signal as _signal_ops, sorting as _sorting_ops  # noqa: F401,E402
from . import indexing, misc, scan, signal, sorting  # noqa: E402  (tensor ops of issue 12)


__all__ = ["image", "nn", "reduce", "tensor", "transform"]
__all__ += ["image_extra", "nn_bitserial", "nn_contrib", "nn_extra"]
__all__ += ["nn_sparse", "nn_special", "nn_train"]
__all__ += ["indexing", "misc", "scan", "signal", "sorting"]
