"""numpy implementations of cumsum and cumprod (:mod:`relay_nb.op.scan`).

The running value is kept in the result dtype (``int32`` sums wrap, as in TVM, where
numpy would widen); an exclusive scan starts from the identity and leaves out the last
element.
"""

from __future__ import annotations

import numpy as np

from ._util import impl, norm_axis, out_dtype


def _scan(fn, identity):
    def run(args, attrs, out):
        x = args[0]
        dt = out_dtype(out, attrs["dtype"], x)
        if attrs["axis"] is None:
            x, axis = x.reshape(-1), 0
        else:
            axis = norm_axis(attrs["axis"], x.ndim)
        x = x.astype(dt, copy=False)
        if attrs["exclusive"] and x.shape[axis] > 0:
            # [id, x0, x1, ..., x_{n-2}]: each position sees only the elements before it.
            head = np.full_like(np.take(x, [0], axis=axis), identity)
            x = np.concatenate([head, np.take(x, np.arange(x.shape[axis] - 1), axis=axis)], axis=axis)
        return fn(x, axis=axis, dtype=dt)

    return run


impl("cumsum")(_scan(np.cumsum, 0))
impl("cumprod")(_scan(np.cumprod, 1))
