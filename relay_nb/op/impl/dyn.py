"""The interpreter's meaning of the ``dyn.*`` ops: read the run-time shape arguments, then
run the static operator (:data:`..dyn.DYN_TO_STATIC`) with them as attributes."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...errors import EvalError
from ..dyn import DYN_TO_STATIC
from ..registry import get_column, make_attrs
from ._util import impl


def _ints(value: Any, what: str) -> tuple[int, ...]:
    arr = np.asarray(value)
    if arr.dtype.kind not in "iu":
        raise EvalError(f"{what} must hold integers, got {arr.dtype}")
    return tuple(int(v) for v in arr.reshape(-1))


def _static(dyn_name: str, args: list, attrs: Any, out_type: Any, **fields: Any) -> Any:
    """Run the static twin of ``dyn_name`` on ``args`` with ``fields`` as attributes."""
    static = DYN_TO_STATIC[dyn_name]
    kept = {k: v for k, v in (attrs or {}).items() if v is not None and k not in fields}
    schema = get_column("attrs_schema")[static]
    names = set(schema.field_names())
    static_attrs = make_attrs(static, {k: v for k, v in {**kept, **fields}.items() if k in names})
    run = get_column("impl")[static]
    return run(args, static_attrs, out_type)


@impl("dyn.reshape")
def _reshape(args, attrs, out):
    return _static("dyn.reshape", args[:1], attrs, out, newshape=_ints(args[1], "newshape"))


@impl("dyn.tile")
def _tile(args, attrs, out):
    return _static("dyn.tile", args[:1], attrs, out, reps=_ints(args[1], "reps"))


@impl("dyn.broadcast_to")
def _broadcast_to(args, attrs, out):
    return _static("dyn.broadcast_to", args[:1], attrs, out, shape=_ints(args[1], "shape"))


@impl("dyn.zeros")
def _zeros(args, attrs, out):
    return _static("dyn.zeros", [], attrs, out, shape=_ints(args[0], "shape"))


@impl("dyn.ones")
def _ones(args, attrs, out):
    return _static("dyn.ones", [], attrs, out, shape=_ints(args[0], "shape"))


@impl("dyn.full")
def _full(args, attrs, out):
    return _static("dyn.full", args[:1], attrs, out, shape=_ints(args[1], "shape"))


@impl("dyn.expand_dims")
def _expand_dims(args, attrs, out):
    (axis,) = _ints(args[1], "axis")
    return _static("dyn.expand_dims", args[:1], attrs, out, axis=axis)


@impl("dyn.squeeze")
def _squeeze(args, attrs, out):
    return _static("dyn.squeeze", args[:1], attrs, out, axis=_ints(args[1], "axes"))


@impl("dyn.strided_slice")
def _strided_slice(args, attrs, out):
    begin, end, strides = (_ints(a, w) for a, w in zip(args[1:], ("begin", "end", "strides")))
    if not len(begin) == len(end) == len(strides):
        raise EvalError("begin, end and strides must have the same length")
    return _static(
        "dyn.strided_slice", args[:1], attrs, out, begin=begin, end=end, strides=strides
    )


@impl("dyn.nn.pad")
def _pad(args, attrs, out):
    width = np.asarray(args[1])
    pairs = tuple(tuple(row) for row in (_ints(r, "pad_width") for r in width))
    return _static("dyn.nn.pad", [args[0], args[2]], attrs, out, pad_width=pairs)


@impl("dyn.nn.upsampling")
def _upsampling(args, attrs, out):
    scale_h, scale_w = (float(np.asarray(a)) for a in args[1:3])
    return _static("dyn.nn.upsampling", args[:1], attrs, out, scale_h=scale_h, scale_w=scale_w)


@impl("dyn.image.resize2d")
def _resize2d(args, attrs, out):
    size = _ints(args[1], "size")
    roi = tuple(float(v) for v in np.asarray(args[2]).reshape(-1))
    return _static("dyn.image.resize2d", args[:1], attrs, out, size=size, roi=roi)


@impl("dyn.nn.upsampling3d")
def _upsampling3d(args, attrs, out):
    d, h, w = (float(np.asarray(a)) for a in args[1:4])
    return _static("dyn.nn.upsampling3d", args[:1], attrs, out, scale_d=d, scale_h=h, scale_w=w)


@impl("dyn.one_hot")
def _one_hot(args, attrs, out):
    (depth,) = _ints(args[3], "depth")
    if depth < 0:
        raise EvalError(f"depth must not be negative, got {depth}")
    return _static("dyn.one_hot", args[:3], attrs, out, depth=depth)


@impl("dyn.topk")
def _topk(args, attrs, out):
    (k,) = _ints(args[1], "k")
    return _static("dyn.topk", args[:1], attrs, out, k=k)


@impl("dyn.sparse_to_dense")
def _sparse_to_dense(args, attrs, out):
    shape = _ints(args[3], "output_shape")
    return _static("dyn.sparse_to_dense", args[:3], attrs, out, output_shape=shape)
