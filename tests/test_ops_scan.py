"""cumsum and cumprod: relations, values against running loops, round trips."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import relay_nb as relay
from relay_nb.ir.ty import Any, TensorType

try:
    from .ops_testing import check_roundtrip, check_type_error, evaluate, result_type
except ImportError:
    from ops_testing import check_roundtrip, check_type_error, evaluate, result_type


@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
@pytest.mark.parametrize(
    "shape,axis,dtype,expected",
    [
        ((2, 3), 1, None, TensorType((2, 3), "int32")),
        ((2, 3), None, None, TensorType((6,), "int32")),
        ((2, 3), -2, "int64", TensorType((2, 3), "int64")),
        ((Any, 3), None, None, TensorType((Any,), "int32")),
    ],
)
def test_relations(op, shape, axis, dtype, expected):
    build = getattr(relay, op)
    assert result_type(lambda x: build(x, axis=axis, dtype=dtype), (shape, "int32")) == expected


def test_axis_out_of_range_is_located():
    check_type_error("fn (%x: Tensor[(2, 3), float32]) { cumsum(%x, axis=2) }", "axis 2 is out of range")


def running(values, op, exclusive, start):
    out, acc = [], start
    for v in values:
        if exclusive:
            out.append(acc)
            acc = op(acc, v)
        else:
            acc = op(acc, v)
            out.append(acc)
    return out


@settings(max_examples=30, deadline=None)
@given(
    x=hnp.arrays(np.int32, hnp.array_shapes(min_dims=1, max_dims=3, max_side=4), elements=st.integers(-3, 3)),
    exclusive=st.booleans(),
    data=st.data(),
)
def test_values_against_running_loops(x, exclusive, data):
    axis = data.draw(st.none() | st.integers(-x.ndim, x.ndim - 1))
    for op, fn, start in (("cumsum", lambda a, b: a + b, 0), ("cumprod", lambda a, b: a * b, 1)):
        got = evaluate(lambda p: getattr(relay, op)(p, axis=axis, exclusive=exclusive), x)
        if axis is None:
            want = np.array(running(x.reshape(-1).tolist(), fn, exclusive, start))
        else:
            moved = np.moveaxis(x, axis, -1)
            rows = [running(r, fn, exclusive, start) for r in moved.reshape(-1, moved.shape[-1]).tolist()]
            want = np.moveaxis(np.array(rows, dtype=np.int64).reshape(moved.shape), -1, axis)
        assert got.dtype == np.int32
        np.testing.assert_array_equal(got, want.astype(np.int32))


def test_int32_sums_wrap_and_dtype_widens():
    x = np.array([2**31 - 1, 1], "int32")
    assert evaluate(lambda p: relay.cumsum(p), x).tolist() == [2**31 - 1, -(2**31)]
    assert evaluate(lambda p: relay.cumsum(p, dtype="int64"), x).tolist() == [2**31 - 1, 2**31]


@pytest.mark.parametrize("body", ['cumsum(%x, axis=1, dtype="int64", exclusive=True)', "cumprod(%x)"])
def test_text_round_trip(body):
    assert body in check_roundtrip(f'#[version = "0.0.5"]\ndef @main(%x: Tensor[(2, 3), int32]) {{ {body} }}')
