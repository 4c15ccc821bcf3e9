"""Deterministic parameters for the workloads: TVM's ``create_workload`` and initializers.

A parameter's *name* says how it starts, as in TVM (and MXNet before it): ``*_weight``
random (Xavier), ``*_bias`` / ``*_beta`` / ``*_mean`` zero, ``*_gamma`` / ``*_var`` one.
Values come from a seeded generator, so the same call gives the same weights on every
machine and no file is ever downloaded.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from ..errors import RelayError


class Initializer:
    """Fills a parameter array by its name (see the module docstring)."""

    def __call__(self, name: str, arr: np.ndarray, rng: np.random.Generator) -> None:
        for suffix, value in (("bias", 0.0), ("gamma", 1.0), ("beta", 0.0), ("mean", 0.0), ("var", 1.0)):
            if name.endswith(suffix):
                arr[...] = value
                return
        if name.endswith("weight"):
            self.init_weight(name, arr, rng)
            return
        raise RelayError(
            f"no initialization pattern for parameter {name!r}: name it *_weight, *_bias, "
            "*_gamma, *_beta, *_mean or *_var"
        )

    def init_weight(self, name: str, arr: np.ndarray, rng: np.random.Generator) -> None:
        raise NotImplementedError


class Xavier(Initializer):
    """Uniform in ``[-s, s]`` with ``s = sqrt(magnitude / factor)``, the factor being the
    average (``"avg"``), input (``"in"``) or output (``"out"``) fan of the weight."""

    def __init__(self, rnd_type: str = "uniform", factor_type: str = "avg", magnitude: float = 3):
        if rnd_type != "uniform":
            raise RelayError(f"Xavier: unknown random type {rnd_type!r} (only 'uniform')")
        if factor_type not in ("avg", "in", "out"):
            raise RelayError(f"Xavier: factor_type must be avg, in or out, got {factor_type!r}")
        self.factor_type = factor_type
        self.magnitude = float(magnitude)

    def init_weight(self, name: str, arr: np.ndarray, rng: np.random.Generator) -> None:
        if arr.ndim < 2:
            raise RelayError(f"Xavier needs a weight of rank 2 or more; {name} has shape {arr.shape}")
        receptive = float(np.prod(arr.shape[2:])) if arr.ndim > 2 else 1.0
        fan_in, fan_out = arr.shape[1] * receptive, arr.shape[0] * receptive
        factor = {"avg": (fan_in + fan_out) / 2, "in": fan_in, "out": fan_out}[self.factor_type]
        if "depthwise" in name:
            factor = receptive
        scale = np.sqrt(self.magnitude / factor)
        arr[...] = rng.uniform(-scale, scale, size=arr.shape)


class Constant(Initializer):
    """Every weight equal, summing to 1 (the synthetic workload's choice)."""

    def init_weight(self, name: str, arr: np.ndarray, rng: np.random.Generator) -> None:
        arr[...] = 1.0 / arr.size


def create_workload(net, initializer: Optional[Initializer] = None, seed: int = 0):
    """``(mod, params)`` for the function ``net``: type-checked, with every parameter but
    ``data`` initialized by name.

    >>> mod, params = relay.testing.create_workload(relay.Function([x, w], relay.nn.dense(x, w)))
    """
    from ..ir.module import IRModule
    from ..transform.infer_type import InferType

    mod = InferType()(IRModule.from_expr(net))
    rng = np.random.default_rng(seed)
    initializer = initializer or Xavier()
    params = {}
    for p in mod["main"].params:
        if p.name_hint == "data":
            continue
        ty = p.checked_type
        arr = np.zeros(tuple(int(d) for d in ty.shape), dtype=ty.dtype)
        initializer(p.name_hint, arr, rng)
        params[p.name_hint] = arr
    return mod, params


__all__ = ["Constant", "Initializer", "Xavier", "create_workload"]
