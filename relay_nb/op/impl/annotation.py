"""The interpreter's meaning of the annotation and call-wrapper ops (:mod:`..annotation`).

They pass their argument through unchanged, whatever its type (a tensor, a tuple, a
closure, an ADT value): registered directly in the ``impl`` column, not through
:func:`._util.impl`, whose result conversion is for tensors only.
"""

from __future__ import annotations

import sys
from typing import Any, Callable

import numpy as np

from ...errors import EvalError
from ...eval.values import format_value
from ..annotation import _IDENTITIES
from ..registry import get_column, register_column

_PASS_THROUGH = (
    *_IDENTITIES,
    "annotation.cast_hint",
    "annotation.compiler_begin",
    "annotation.compiler_end",
    "annotation.with_funcid",
    "on_device",
    "device_copy",
)


def _identity(args: list, attrs: Any = None, out_type: Any = None) -> Any:
    return args[0]


for _name in _PASS_THROUGH:
    register_column("impl", _name, _identity)


def print_value(value: Any, attrs: Any) -> None:
    """The default debug hook: one line on stdout, ``debug: <value>``."""
    print(f"debug: {format_value(value)}", file=sys.stdout)


debug_hook: Callable[[Any, Any], None] = print_value
"""Called by the ``debug`` op with ``(value, attrs)``; replace it to log values elsewhere."""


def _debug(args: list, attrs: Any = None, out_type: Any = None) -> Any:
    debug_hook(args[0], attrs)
    return args[0]


def _call_lowered(args: list, attrs: Any = None, out_type: Any = None) -> Any:
    func, call_args = args
    if not callable(func):
        raise EvalError(f"call_lowered: the function to call is not a function: {func!r}")
    return func(*call_args)


def _simulated_quantize(args: list, attrs: Any = None, out_type: Any = None) -> Any:
    data, scale, lo, hi = args
    if attrs is None or attrs["kind"] == 0:  # QAnnotateKind.IDENTITY
        return data
    if attrs["rounding"] != "round" or not attrs["sign"]:
        raise EvalError(
            "relay.op.annotation.simulated_quantize: only sign=True with rounding=\"round\" "
            "is defined (as in TVM)"
        )
    data = np.asarray(data)
    with np.errstate(all="ignore"):
        scaled = np.minimum(np.maximum(data / scale, lo), hi).astype(data.dtype, copy=False)
        rounded = get_column("impl")["round"]([scaled], None, None)  # halves away from zero
        return (rounded * scale).astype(data.dtype, copy=False)


register_column("impl", "debug", _debug)
register_column("impl", "call_lowered", _call_lowered)
register_column("impl", "relay.op.annotation.simulated_quantize", _simulated_quantize)
