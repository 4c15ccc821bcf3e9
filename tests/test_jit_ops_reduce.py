"""Property tests: reductions (sum, prod, mean, max, min, all, any, argmax, argmin,
variance, collapse_sum_like) over random shapes, axes, ``keepdims`` and ``exclude``
agree with the interpreter — integers exactly (sums wrap in the result dtype), floats to
a summation-order tolerance, NaN propagated, empty reductions giving the identities."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jit_testing import REDUCE_RTOL, check, random_array, tensor

PROPS = settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def reduction(draw, min_rank: int = 0):
    rank = draw(st.integers(min_rank, 4))
    shape = tuple(draw(st.lists(st.integers(0 if draw(st.integers(0, 6)) == 0 else 1, 5), min_size=rank, max_size=rank)))
    if draw(st.booleans()) or not rank:
        axis = "None" if draw(st.booleans()) else "[]"
    else:
        axes = draw(st.lists(st.integers(-rank, rank - 1), min_size=1, max_size=rank, unique_by=lambda a: a % rank))
        axis = "[" + ", ".join(map(str, axes)) + "]"
    keepdims = draw(st.booleans())
    exclude = draw(st.booleans())
    return shape, f"axis={axis}, keepdims={keepdims}, exclude={exclude}"


def _rng(data) -> np.random.Generator:
    return np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))


@pytest.mark.parametrize("op", ["sum", "prod", "mean", "max", "min"])
@PROPS
@given(data=st.data())
def test_numeric_reductions(op, data):
    shape, attrs = data.draw(reduction())
    dtype = data.draw(st.sampled_from(("float32", "float64", "int32", "int8", "uint16", "int64")))
    x = random_array(_rng(data), shape, dtype, special=op in ("max", "min"))
    if op == "prod" and dtype.startswith("float"):
        x = (np.sign(x) * (1 + np.abs(x) % 1)).astype(dtype)  # keep products finite
    check(f"def @main(%x: {tensor(shape, dtype)}) {{ {op}(%x, {attrs}) }}", x, rtol=REDUCE_RTOL.get(dtype), atol=1e-5)


@pytest.mark.parametrize("op", ["all", "any"])
@PROPS
@given(data=st.data())
def test_boolean_reductions(op, data):
    shape, attrs = data.draw(reduction())
    x = random_array(_rng(data), shape, "bool")
    check(f"def @main(%x: {tensor(shape, 'bool')}) {{ {op}(%x, {attrs}) }}", x)


@pytest.mark.parametrize("op", ["argmax", "argmin"])
@PROPS
@given(data=st.data())
def test_arg_reductions_pick_the_first_or_last_index_and_treat_nan_as_extreme(op, data):
    shape, attrs = data.draw(reduction(min_rank=1).filter(lambda r: 0 not in r[0]))
    dtype = data.draw(st.sampled_from(("float32", "int32", "uint8")))
    last = data.draw(st.booleans())
    rng = _rng(data)
    x = random_array(rng, shape, dtype, special=True)
    with np.errstate(invalid="ignore"):  # np.where evaluates % 3 on the infinities too
        x = (x % 3).astype(dtype) if dtype != "float32" else np.where(np.isfinite(x), np.round(x) % 3, x).astype(dtype)
    check(f"def @main(%x: {tensor(shape, dtype)}) {{ {op}(%x, {attrs}, select_last_index={last}) }}", x)


@PROPS
@given(data=st.data())
def test_variance_with_its_mean(data):
    shape, _ = data.draw(reduction(min_rank=1).filter(lambda r: 0 not in r[0]))
    rank = len(shape)
    axes = sorted(set(data.draw(st.lists(st.integers(0, rank - 1), min_size=1, max_size=rank))))
    unbiased = data.draw(st.booleans())
    keep = data.draw(st.booleans())
    rng = _rng(data)
    x = random_array(rng, shape, "float32")
    mean = x.mean(axis=tuple(axes), keepdims=True).astype("float32")
    axis = "[" + ", ".join(map(str, axes)) + "]"
    text = (
        f"def @main(%x: {tensor(shape, 'float32')}, %m: {tensor(mean.shape, 'float32')}) "
        f"{{ variance(%x, %m, axis={axis}, keepdims={keep}, unbiased={unbiased}) }}"
    )
    check(text, x, mean, rtol=1e-4, atol=1e-4)


def test_collapse_sum_like_is_the_adjoint_of_broadcasting():
    x = np.arange(24, dtype="float32").reshape(2, 3, 4)
    like = np.zeros((3, 1), "float32")
    check("def @main(%x: Tensor[(2, 3, 4), float32], %y: Tensor[(3, 1), float32]) { collapse_sum_like(%x, %y) }", x, like)


def test_integer_sums_wrap_in_the_result_dtype_and_mean_truncates():
    x = np.full((4, 100), 100, "int8")
    check("def @main(%x: Tensor[(4, 100), int8]) { (sum(%x, axis=[1]), mean(%x, axis=[0]), prod(%x, axis=[1])) }", x)
    y = np.array([[-7, 2], [4, -1]], "int32")
    check("def @main(%x: Tensor[(2, 2), int32]) { mean(%x, axis=[1]) }", y)


def test_empty_reductions_give_the_identities():
    x = np.zeros((3, 0), "float32")
    check("def @main(%x: Tensor[(3, 0), float32]) { (sum(%x, axis=[1]), max(%x, axis=[1]), min(%x, axis=[1]), prod(%x, axis=[1]), mean(%x, axis=[1])) }", x)
    i = np.zeros((0, 2), "int16")
    check("def @main(%x: Tensor[(0, 2), int16]) { (max(%x, axis=[0]), mean(%x, axis=[0])) }", i)


def test_max_of_negative_infinities_is_negative_infinity():
    x = np.full((2, 3), -np.inf, "float32")
    check("def @main(%x: Tensor[(2, 3), float32]) { (max(%x, axis=[1]), max(%x, axis=[0]), argmax(%x, axis=[1])) }", x)
