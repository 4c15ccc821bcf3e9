"""Bind parameters by name: ``relay.build_module.bind_params_by_name(func, params)``.

Model workloads and importers return ``(mod, params)``: the weights as a dict from
parameter name to array.  Binding replaces each named parameter of the function by a
constant holding its array, so FoldConstant can fold what depends only on weights (a
batch norm into the convolution before it) and the JIT packs weights once, at build time.
"""

from __future__ import annotations

from collections import Counter
from typing import Mapping

import numpy as np

from ..errors import RelayError
from ..ir.expr import Constant, Function, Var
from ..ir.functor import substitute
from ..ir.ty import TensorType
from ..typing.text import type_text


def _constant(var: Var, value) -> Constant:
    arr = np.asarray(value)
    ty = var.type_annotation if var.type_annotation is not None else var._checked_type
    if isinstance(ty, TensorType) and isinstance(ty.shape, tuple):
        shape_ok = len(ty.shape) == arr.ndim and all(
            type(d) is not int or d == s for d, s in zip(ty.shape, arr.shape)
        )
        dtype_ok = not isinstance(ty.dtype, str) or np.dtype(ty.dtype) == arr.dtype
        if not (shape_ok and dtype_ok):
            raise RelayError(
                f"parameter %{var.name_hint} is {type_text(ty)}, but the bound array is "
                f"{arr.dtype} of shape {arr.shape}"
            )
    return Constant(arr)


def bind_params_by_name(func: Function, params: Mapping[str, object]) -> Function:
    """``func`` without the parameters named in ``params``, each replaced by a constant.

    Names in ``params`` that are not parameters of ``func`` are ignored (as in TVM: an
    importer's dict may hold more); two parameters sharing a bound name are an error.

    >>> main = relay.build_module.bind_params_by_name(mod["main"], params)
    """
    counts = Counter(p.name_hint for p in func.params)
    mapping = {}
    for p in func.params:
        if p.name_hint in params:
            if counts[p.name_hint] > 1:
                raise RelayError(f"several parameters are named %{p.name_hint}: cannot bind by name")
            mapping[p] = _constant(p, params[p.name_hint])
    if not mapping:
        return func
    body = substitute(func.body, mapping)
    kept = tuple(p for p in func.params if p not in mapping)
    return Function(kept, body, func.ret_type, func.type_params, func.attrs, span=func.span)


def bind_module_params(mod, params: Mapping[str, object]):
    """The module with ``@main``'s parameters bound by name (see :func:`bind_params_by_name`)."""
    if not params:
        return mod
    gv = mod.get_global_var("main")
    return mod.with_functions({gv: bind_params_by_name(mod["main"], params)})


__all__ = ["bind_module_params", "bind_params_by_name"]
