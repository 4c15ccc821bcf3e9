"""The meaning of the ``dyn.*`` ops: read the run-time shape arguments, then run the static
operator (:data:`..dyn.DYN_TO_STATIC`) with them as attributes.

:data:`STATIC_FORM` says, per op, which operands the static twin keeps and how the other
operands' *values* become its attributes.  The interpreter applies it to the argument
values; the JIT applies it to a primitive function when the values are known (TVM's
DynamicToStatic with the arguments bound: ``backend/llvm/codegen/dyn.py``), so both share
one meaning."""

from __future__ import annotations

from typing import Any, Callable

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


def _float(value: Any) -> float:
    return float(np.asarray(value))


def _strided_slice(v) -> dict:
    begin, end, strides = (_ints(v(i), w) for i, w in zip((1, 2, 3), ("begin", "end", "strides")))
    if not len(begin) == len(end) == len(strides):
        raise EvalError("begin, end and strides must have the same length")
    return {"begin": begin, "end": end, "strides": strides}


def _one_hot(v) -> dict:
    depth = _one(v(3), "depth")
    if depth <= 0:  # as the static twin's relation: the JIT type-checks the twin
        raise EvalError(f"depth must be positive, got {depth}")
    return {"depth": depth}


def _one(value: Any, what: str) -> int:
    (x,) = _ints(value, what)
    return x


def _axis(v) -> dict:
    return {"axis": _one(v(1), "axis")}


STATIC_FORM: dict[str, tuple[tuple[int, ...], Callable[[Callable[[int], Any]], dict]]] = {
    # op: (the operands its static twin keeps, value(i) -> the twin's attributes from the
    #      values of the other operands)
    "dyn.reshape": ((0,), lambda v: {"newshape": _ints(v(1), "newshape")}),
    "dyn.tile": ((0,), lambda v: {"reps": _ints(v(1), "reps")}),
    "dyn.broadcast_to": ((0,), lambda v: {"shape": _ints(v(1), "shape")}),
    "dyn.zeros": ((), lambda v: {"shape": _ints(v(0), "shape")}),
    "dyn.ones": ((), lambda v: {"shape": _ints(v(0), "shape")}),
    "dyn.full": ((0,), lambda v: {"shape": _ints(v(1), "shape")}),
    "dyn.expand_dims": ((0,), _axis),
    "dyn.squeeze": ((0,), lambda v: {"axis": _ints(v(1), "axes")}),
    "dyn.strided_slice": ((0,), _strided_slice),
    "dyn.nn.pad": ((0, 2), lambda v: {"pad_width": tuple(_ints(r, "pad_width") for r in np.asarray(v(1)))}),
    "dyn.nn.upsampling": ((0,), lambda v: {"scale_h": _float(v(1)), "scale_w": _float(v(2))}),
    "dyn.image.resize2d": (
        (0,),
        lambda v: {"size": _ints(v(1), "size"), "roi": tuple(float(x) for x in np.asarray(v(2)).reshape(-1))},
    ),
    "dyn.nn.upsampling3d": (
        (0,),
        lambda v: {"scale_d": _float(v(1)), "scale_h": _float(v(2)), "scale_w": _float(v(3))},
    ),
    "dyn.one_hot": ((0, 1, 2), _one_hot),
    "dyn.topk": ((0,), lambda v: {"k": _one(v(1), "k")}),
    "dyn.sparse_to_dense": ((0, 1, 2), lambda v: {"output_shape": _ints(v(3), "output_shape")}),
}


def value_operands(dyn_name: str, n_args: int) -> tuple[int, ...]:
    """The operands of ``dyn_name`` whose values (not just types) its meaning depends on."""
    kept = STATIC_FORM[dyn_name][0]
    return tuple(i for i in range(n_args) if i not in kept)


def static_form(dyn_name: str, value: Callable[[int], Any], attrs: Any) -> tuple[str, tuple[int, ...], Any]:
    """``(static op, operands it keeps, its attrs)`` for a call of ``dyn_name`` whose
    operand ``i`` has the value ``value(i)``."""
    static = DYN_TO_STATIC[dyn_name]
    kept_args, fields_of = STATIC_FORM[dyn_name]
    fields = fields_of(value)
    kept = {k: v for k, v in (attrs or {}).items() if v is not None and k not in fields}
    names = set(get_column("attrs_schema")[static].field_names())
    return static, kept_args, make_attrs(static, {k: v for k, v in {**kept, **fields}.items() if k in names})


def _run(dyn_name: str):
    def run(args, attrs, out_type):
        static, kept, static_attrs = static_form(dyn_name, lambda i: args[i], attrs)
        return get_column("impl")[static]([args[i] for i in kept], static_attrs, out_type)

    return run


for _name in STATIC_FORM:
    impl(_name)(_run(_name))
