"""numpy implementations of the reductions, against explicit loops and hand values."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from relay_nb.ir.ty import TensorType
from relay_nb.op.registry import get_column, make_attrs


@pytest.fixture(autouse=True)
def _no_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


def run(name, *args, out=None, **attrs):
    return get_column("impl")[name](
        [np.asarray(a) for a in args], make_attrs(name, attrs) if attrs else None, out
    )


def loop_reduce(x, axes, keepdims, combine, init):
    """Reduce by visiting every element: group by the kept coordinates."""
    groups = {}
    for idx in itertools.product(*[range(d) for d in x.shape]):
        key = (
            tuple(0 if a in axes else i for a, i in enumerate(idx))
            if keepdims
            else tuple(i for a, i in enumerate(idx) if a not in axes)
        )
        groups[key] = combine(groups.get(key, init), x[idx].item())
    shape = (
        tuple(1 if a in axes else d for a, d in enumerate(x.shape))
        if keepdims
        else tuple(d for a, d in enumerate(x.shape) if a not in axes)
    )
    out = np.zeros(shape)
    for key, v in groups.items():
        out[key] = v
    return out


@st.composite
def reduce_case(draw):
    rank = draw(st.integers(1, 4))
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=rank, max_size=rank)))
    axes = draw(
        st.one_of(st.none(), st.lists(st.integers(0, rank - 1), unique=True, max_size=rank))
    )
    neg = draw(st.booleans())
    if axes is not None and neg:
        axes = [a - rank for a in axes]
    return shape, axes, draw(st.booleans()), draw(st.booleans())


def _reduced(rank, axes, exclude):
    if axes is None:
        return set(range(rank))
    norm = {a % rank for a in axes}
    return set(range(rank)) - norm if exclude else norm


@settings(max_examples=60, deadline=None)
@given(reduce_case())
def test_sum_max_min_prod_against_loops(case):
    shape, axes, keepdims, exclude = case
    x = np.arange(int(np.prod(shape)), dtype="float64").reshape(shape) % 7 - 3
    red = _reduced(len(shape), axes, exclude)
    attrs = {"axis": axes, "keepdims": keepdims, "exclude": exclude}
    for op, combine, init in [
        ("sum", lambda a, b: a + b, 0.0),
        ("prod", lambda a, b: a * b, 1.0),
        ("max", max, -np.inf),
        ("min", min, np.inf),
    ]:
        got = run(op, x, **attrs)
        expected = loop_reduce(x, red, keepdims, combine, init)
        assert got.shape == expected.shape, op
        np.testing.assert_allclose(got, expected, err_msg=op)


def test_sum_keeps_int32_and_wraps():
    x = np.array([2**31 - 1, 1], dtype="int32")
    got = run("sum", x)
    assert got.dtype == np.int32 and got.shape == () and int(got) == -(2**31)


def test_mean():
    assert run("mean", np.array([[1.0, 2.0], [3.0, 5.0]], "float32"), axis=[1]).tolist() == [
        1.5,
        4.0,
    ]
    # integers: sum, then TVM's truncating divide
    got = run("mean", np.array([[1, 2], [-1, -2]], "int32"), axis=[1])
    assert got.dtype == np.int32 and got.tolist() == [1, -1]
    assert run(
        "mean", np.arange(6, dtype="float64").reshape(2, 3), axis=[0], keepdims=True
    ).tolist() == [[1.5, 2.5, 3.5]]
    assert run(
        "mean", np.arange(6, dtype="float64").reshape(2, 3), axis=[0], exclude=True
    ).tolist() == [1.0, 4.0]


def test_empty_reductions():
    empty = np.zeros((0, 2), "float32")
    assert run("sum", empty, axis=[0]).tolist() == [0, 0]
    assert run("max", empty, axis=[0]).tolist() == [np.finfo("float32").min] * 2
    assert run("min", np.zeros((0,), "int32")).item() == 2**31 - 1
    assert np.isnan(run("mean", empty, axis=[0])).all()
    assert run("mean", np.zeros((0,), "int32")).item() == 0  # integer 0 / 0 is 0


def test_all_any():
    x = np.array([[True, False], [True, True]])
    assert run("all", x, axis=[1]).tolist() == [False, True]
    assert run("any", x, axis=[0]).tolist() == [True, True]
    assert run("all", x).tolist() is False
    assert run("any", x, axis=[1], keepdims=True).tolist() == [[True], [True]]


def test_argmax_argmin_int32_and_ties():
    x = np.array([[1, 5, 5], [7, 0, 7]], "float32")
    got = run("argmax", x, axis=[1])
    assert got.dtype == np.int32 and got.tolist() == [1, 0]
    assert run("argmax", x, axis=[1], select_last_index=True).tolist() == [2, 2]
    assert run("argmin", x, axis=[0]).tolist() == [0, 1, 0]
    assert run("argmin", x, axis=[1], select_last_index=True, keepdims=True).tolist() == [[0], [1]]
    assert run("argmax", x).tolist() == 3  # flat index over all axes
    assert run("argmax", x, axis=[0], exclude=True).tolist() == [1, 0]


def test_argmax_over_several_axes_is_flat_index_of_those_axes():
    x = (np.arange(24).reshape(2, 3, 4) * 7) % 11
    got = run("argmax", x, axis=[0, 2])
    for j in range(3):
        best, best_idx = None, None
        for i in range(2):
            for k in range(4):
                if best is None or x[i, j, k] > best:
                    best, best_idx = x[i, j, k], i * 4 + k
        assert got[j] == best_idx


def test_argmax_of_nothing_is_minus_one_as_in_tvm():
    # TVM's argmax/argmin reducers start from index -1; the kept axes keep their shape
    assert run("argmax", np.zeros((0, 3)), axis=[0]).tolist() == [-1, -1, -1]
    assert run("argmin", np.zeros((0, 3)), axis=[0], keepdims=True).tolist() == [[-1, -1, -1]]
    # a non-empty reduction with an empty kept axis is an empty result, not an error
    assert run("argmin", np.zeros((2, 0)), axis=[1], exclude=True).shape == (0,)


def test_variance():
    x = np.array([[1.0, 2.0, 3.0, 4.0]], "float32")
    mean = np.array([[2.5]], "float32")
    assert run("variance", x, mean, axis=[1]).tolist() == [1.25]
    np.testing.assert_allclose(
        run("variance", x, mean, axis=[1], unbiased=True), [5 / 3], rtol=1e-6
    )
    got = run("variance", x, mean, axis=[1], keepdims=True, out=TensorType((1, 1), "float32"))
    assert got.shape == (1, 1) and got.dtype == np.float32
    # unbiased over a single element: 0 / 0
    assert np.isnan(
        run("variance", np.ones((1,), "float32"), np.ones((1,), "float32"), unbiased=True)
    )
