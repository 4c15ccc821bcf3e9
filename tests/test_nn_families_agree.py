"""Relation and implementation agree: every static shape case in the tables of the issue-12
nn / image families runs through its numpy implementation with the inferred type as
``out_type``, so a result of another shape or dtype is an error (``impl`` checks it).

Integer operands (indices, pointers, targets) are zeros: an empty sparse matrix, box and
class 0 -- valid for every op."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

from relay_nb.op.registry import get_column, make_attrs

try:
    from ._reporter import infer
except ImportError:
    from _reporter import infer

TABLES = [
    "test_ops_nn_extra",
    "test_nn_train",
    "test_nn_special",
    "test_nn_contrib",
    "test_nn_sparse",
    "test_nn_bitserial",
    "test_image_extra",
]


def _cases():
    out = []
    for name in TABLES:
        try:
            module = importlib.import_module(f"{__package__}.{name}" if __package__ else name)
        except ImportError:
            module = importlib.import_module(name)
        for op, args, attrs, _ in getattr(module, "SHAPES", []):
            if all(isinstance(d, int) for a in args for d in a.shape):
                out.append((op, args, attrs))
    return out


CASES = _cases()


def _value(t, rng):
    dt = np.dtype(t.dtype)
    if dt.kind in "iu":
        return np.zeros(t.shape, dt)
    return rng.uniform(0.1, 1.0, t.shape).astype(dt)


@pytest.mark.parametrize("op, args, attrs", CASES, ids=[c[0] for c in CASES])
def test_impl_gives_the_inferred_type(op, args, attrs):
    rng = np.random.default_rng(0)
    out_type = infer(op, *args, **attrs)
    result = get_column("impl")[op]([_value(a, rng) for a in args], make_attrs(op, attrs), out_type)
    leaves = result if isinstance(result, tuple) else (result,)
    types = out_type.fields if isinstance(result, tuple) else (out_type,)
    for value, ty in zip(leaves, types):
        assert value.shape == tuple(ty.shape) and value.dtype == np.dtype(ty.dtype)


def test_the_tables_are_found():
    assert len(CASES) >= 60
