"""TVM's model zoo for teaching and benchmarks: ``relay.testing.<model>.get_workload()``.

Each builder returns ``(mod, params)`` as TVM's does — the network as an IRModule whose
``@main`` takes ``data`` and every weight, and the weights as a dict of numpy arrays made
by a seeded initializer (:mod:`.init`), so course material starting from
``relay.testing.resnet.get_workload()`` runs unchanged, with no framework installed and
nothing downloaded.

>>> mod, params = relay.testing.resnet.get_workload(num_layers=18)
>>> lib = relay.build(mod, params=params)
"""

from __future__ import annotations

from . import (  # noqa: F401
    dcgan,
    densenet,
    dqn,
    inception_v3,
    layers,
    lstm,
    mlp,
    mobilenet,
    resnet,
    resnet_3d,
    squeezenet,
    synthetic,
    vgg,
)
from .init import Constant, Initializer, Xavier, create_workload  # noqa: F401

__all__ = [
    "Constant",
    "Initializer",
    "Xavier",
    "create_workload",
    "dcgan",
    "densenet",
    "dqn",
    "inception_v3",
    "layers",
    "lstm",
    "mlp",
    "mobilenet",
    "resnet",
    "resnet_3d",
    "squeezenet",
    "synthetic",
    "vgg",
]
