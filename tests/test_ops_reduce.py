"""Reductions: output shapes against NumPy's, for every axis / keepdims / exclude form."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from relay_nb.errors import RelayTypeError
from relay_nb.ir.ty import Any
from relay_nb.op.registry import OpPattern, get_op

try:
    from ._reporter import T, infer
except ImportError:
    from _reporter import T, infer

REDUCE = ["sum", "mean", "max", "min", "prod"]


@st.composite
def shape_and_axes(draw):
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=4, max_side=4))
    rank = len(shape)
    axes = draw(
        st.none()
        | st.lists(st.integers(-rank, rank - 1), unique_by=lambda a: a % rank, max_size=rank)
    )
    return shape, axes


def numpy_reduced_shape(shape, axes, keepdims, exclude):
    rank = len(shape)
    if axes is None:
        reduced = tuple(range(rank))
    else:
        reduced = tuple(a % rank for a in axes)
        if exclude:
            reduced = tuple(i for i in range(rank) if i not in reduced)
    return np.sum(np.zeros(shape), axis=reduced, keepdims=keepdims).shape


@given(
    case=shape_and_axes(), keepdims=st.booleans(), exclude=st.booleans(), op=st.sampled_from(REDUCE)
)
def test_reduce_shapes_match_numpy(case, keepdims, exclude, op):
    shape, axes = case
    out = infer(op, T(shape, "int32"), axis=axes, keepdims=keepdims, exclude=exclude)
    assert out == T(numpy_reduced_shape(shape, axes, keepdims, exclude), "int32")


@given(case=shape_and_axes(), keepdims=st.booleans())
def test_argmax_argmin_give_int32(case, keepdims):
    shape, axes = case
    for op in ("argmax", "argmin"):
        out = infer(op, T(shape), axis=axes, keepdims=keepdims)
        assert out == T(numpy_reduced_shape(shape, axes, keepdims, False), "int32")


@pytest.mark.parametrize("op", REDUCE + ["all", "any", "argmax", "argmin", "variance"])
def test_reductions_are_comm_reduce(op):
    assert get_op(op).get_attr("TOpPattern") == OpPattern.COMM_REDUCE


def test_single_int_axis_and_defaults():
    assert infer("sum", T((2, 3, 4)), axis=1) == T((2, 4))
    assert infer("mean", T((2, 3, 4))) == T(())
    assert infer("max", T((2, 3, 4)), axis=[-1], keepdims=True) == T((2, 3, 1))
    assert infer("sum", T((2, 3)), axis=[]) == T((2, 3))  # an empty axis list reduces nothing


def test_all_any_need_bool():
    assert infer("all", T((2, 3), "bool"), axis=[0]) == T((3,), "bool")
    with pytest.raises(RelayTypeError, match="do not match"):
        infer("any", T((2, 3), "float32"))


def test_dynamic_dims_survive_reduction():
    assert infer("sum", T((Any, 3)), axis=[1]) == T((Any,))


def test_axis_out_of_range():
    with pytest.raises(RelayTypeError, match="axis 3 is out of range for a rank-2 tensor"):
        infer("sum", T((2, 3)), axis=[3])
    with pytest.raises(RelayTypeError, match="axis -3 is out of range for a rank-2 tensor"):
        infer("argmax", T((2, 3)), axis=[-3])


def test_repeated_axis():
    with pytest.raises(RelayTypeError, match="axis -1 is given twice"):
        infer("sum", T((2, 3)), axis=[1, -1])


def test_variance():
    data, mean = T((2, 3, 4)), T((2, 1, 4))
    assert infer("variance", data, mean, axis=[1]) == T((2, 4))
    assert infer("variance", data, mean, axis=[1], keepdims=True, unbiased=True) == T((2, 1, 4))
    with pytest.raises(
        RelayTypeError, match=r"mean's shape \(5,\) does not broadcast to the data's \(2, 3, 4\)"
    ):
        infer("variance", data, T((5,)), axis=[1])
