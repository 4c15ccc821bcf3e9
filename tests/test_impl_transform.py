"""numpy implementations of the shape-changing ops, against shapes and indices computed
independently (explicit index maps, Python list slicing)."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from relay_nb.errors import EvalError
from relay_nb.op.registry import get_column, make_attrs


@pytest.fixture(autouse=True)
def _no_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


def run(name, *args, out=None, **attrs):
    args = [a if isinstance(a, tuple) else np.asarray(a) for a in args]
    return get_column("impl")[name](args, make_attrs(name, attrs) if attrs else None, out)


X = np.arange(24, dtype="float32").reshape(2, 3, 4)


@pytest.mark.parametrize(
    "newshape, expected",
    [
        ((6, 4), (6, 4)),
        ((0, -1), (2, 12)),
        ((-1,), (24,)),
        ((-2,), (2, 3, 4)),
        ((2, -2), (2, 3, 4)),
        ((-3, 4), (6, 4)),
        ((0, -3), (2, 12)),
        ((-4, 1, 2, -2), (1, 2, 3, 4)),
        ((-4, -1, 1, 3, 4), (2, 1, 3, 4)),
        ((0, 0, 2, 2), (2, 3, 2, 2)),
    ],
)
def test_reshape_special_values(newshape, expected):
    got = run("reshape", X, newshape=list(newshape))
    assert got.shape == expected
    assert got.ravel().tolist() == list(range(24))  # row-major order kept


def test_reshape_allowzero_and_errors():
    assert run("reshape", np.zeros((0, 3)), newshape=[3, 0], allowzero=True).shape == (3, 0)
    with pytest.raises(EvalError, match="^.*reshape: cannot reshape"):
        run("reshape", X, newshape=[5, -1])


def test_results_never_alias_arguments():
    x = np.arange(6.0)
    for op, attrs in [("reshape", {"newshape": [2, 3]}), ("transpose", {}), ("squeeze", {})]:
        got = run(op, x, **attrs)
        assert not np.shares_memory(got, x) and got.flags.writeable, op
    got = run("strided_slice", x, begin=[1], end=[4])
    assert not np.shares_memory(got, x)


def test_reshape_like():
    like = np.zeros((6, 2, 2))
    assert run("reshape_like", X, like).shape == (6, 2, 2)
    got = run("reshape_like", X, np.zeros((7, 12)), lhs_begin=1, rhs_begin=1)
    assert got.shape == (2, 12)


def test_transpose():
    got = run("transpose", X)
    assert got.shape == (4, 3, 2)
    got2 = run("transpose", X, axes=[1, -1, 0])
    assert got2.shape == (3, 4, 2)
    for i, j, k in itertools.product(range(2), range(3), range(4)):
        assert got[k, j, i] == X[i, j, k]
        assert got2[j, k, i] == X[i, j, k]


def test_squeeze_expand_dims():
    x = np.zeros((1, 3, 1, 2))
    assert run("squeeze", x).shape == (3, 2)
    assert run("squeeze", x, axis=[-2]).shape == (1, 3, 2)
    with pytest.raises(EvalError):
        run("squeeze", x, axis=[1])
    assert run("expand_dims", X, axis=1, num_newaxis=2).shape == (2, 1, 1, 3, 4)
    assert run("expand_dims", X, axis=-1).shape == (2, 3, 4, 1)
    assert run("expand_dims", X, axis=0, num_newaxis=0).shape == (2, 3, 4)


def test_concatenate_stack_split():
    a, b = np.ones((2, 1), "int32"), np.zeros((2, 2), "int32")
    got = run("concatenate", (a, b), axis=1)
    assert got.tolist() == [[1, 0, 0], [1, 0, 0]]
    got = run("concatenate", (a, a), axis=-2)
    assert got.shape == (4, 1)
    got = run("stack", (a, 2 * a), axis=-1)
    assert got.shape == (2, 1, 2) and got[:, 0, 1].tolist() == [2, 2]
    parts = run("split", np.arange(12).reshape(2, 6), indices_or_sections=3, axis=1)
    assert isinstance(parts, tuple) and [p.tolist() for p in parts] == [
        [[0, 1], [6, 7]],
        [[2, 3], [8, 9]],
        [[4, 5], [10, 11]],
    ]
    parts = run("split", np.arange(10), indices_or_sections=[2, 3, 7])
    assert [p.tolist() for p in parts] == [[0, 1], [2], [3, 4, 5, 6], [7, 8, 9]]
    with pytest.raises(EvalError):
        run("split", np.arange(10), indices_or_sections=3)


def test_take_modes():
    data = np.array([10, 11, 12, 13, 14])
    idx = np.array([-6, -1, 0, 4, 5, 12])
    assert run("take", data, idx, mode="clip").tolist() == [10, 10, 10, 14, 14, 14]
    assert run("take", data, idx, mode="wrap").tolist() == [14, 14, 10, 14, 10, 12]
    assert run("take", data, np.array([1, 3]), mode="fast").tolist() == [11, 13]
    for bad in ([5], [-1]):
        with pytest.raises(EvalError, match="out of range"):
            run("take", data, np.array(bad), mode="fast")


def test_take_axis_and_flat():
    data = np.arange(12).reshape(3, 4)
    got = run("take", data, np.array([[2, 0]]), axis=1)
    assert got.shape == (3, 1, 2)
    for i in range(3):
        assert got[i, 0].tolist() == [data[i, 2], data[i, 0]]
    # axis=None indexes the flattened data
    assert run("take", data, np.array([11, 4])).tolist() == [11, 4]
    assert run("take", data, np.array(5)).tolist() == 5


def test_take_batch_dims():
    data = np.arange(2 * 3 * 4).reshape(2, 3, 4)
    idx = np.array([[0, 3], [1, 1]])
    got = run("take", data, idx, axis=2, batch_dims=1)
    assert got.shape == (2, 3, 2)
    for b in range(2):
        for j in range(3):
            for t in range(2):
                assert got[b, j, t] == data[b, j, idx[b, t]]


@st.composite
def slice_case(draw):
    rank = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(1, 5), min_size=rank, max_size=rank)))
    n = draw(st.integers(1, rank))
    begin = draw(st.lists(st.integers(-8, 8), min_size=n, max_size=n))
    end = draw(st.lists(st.integers(-8, 8), min_size=n, max_size=n))
    strides = draw(st.lists(st.integers(-3, 3).filter(bool), min_size=n, max_size=n))
    return shape, begin, end, strides


@settings(max_examples=150, deadline=None)
@given(slice_case())
def test_strided_slice_against_list_slicing(case):
    shape, begin, end, strides = case
    x = np.arange(int(np.prod(shape))).reshape(shape)
    got = run("strided_slice", x, begin=begin, end=end, strides=strides)
    # per axis: the indices Python's list slicing picks (it clamps out-of-range bounds)
    picks = []
    for a, d in enumerate(shape):
        if a < len(begin):
            picks.append(list(range(d))[begin[a] : end[a] : strides[a]])
        else:
            picks.append(list(range(d)))
    expected = np.zeros([len(p) for p in picks], dtype=x.dtype)
    for out_idx in itertools.product(*[range(len(p)) for p in picks]):
        expected[out_idx] = x[tuple(p[i] for p, i in zip(picks, out_idx))]
    assert got.shape == expected.shape and (got == expected).all()


def test_strided_slice_modes_and_axes():
    x = np.arange(20).reshape(4, 5)
    got = run("strided_slice", x, begin=[1, 2], end=[2, -1], slice_mode="size")
    assert got.tolist() == [[7, 8, 9], [12, 13, 14]]
    got = run("strided_slice", x, begin=[-1], end=[-100], strides=[-2], axes=[1])
    assert got.tolist() == [[4, 2, 0], [9, 7, 5], [14, 12, 10], [19, 17, 15]]
    got = run("strided_slice", x, begin=[3], end=[0], strides=[-1])  # second axis untouched
    assert got.tolist() == [x[3].tolist(), x[2].tolist(), x[1].tolist()]


def test_broadcast_and_collapse():
    a = np.array([[1], [2]], "int32")
    got = run("broadcast_to", a, shape=[3, 2, 2])
    assert got.shape == (3, 2, 2) and got[2, 1].tolist() == [2, 2]
    got[0, 0, 0] = 99  # a fresh, writable array
    assert a[0, 0] == 1
    assert run("broadcast_to_like", a, np.zeros((2, 3))).tolist() == [[1, 1, 1], [2, 2, 2]]
    data = np.arange(24, dtype="float32").reshape(2, 3, 4)
    got = run("collapse_sum_like", data, np.zeros((3, 1)))
    assert got.shape == (3, 1)
    for j in range(3):
        assert got[j, 0] == sum(data[i, j, k] for i in range(2) for k in range(4))


def test_tile_repeat_reverse():
    a = np.array([[1, 2]])
    assert run("tile", a, reps=[2, 2]).tolist() == [[1, 2, 1, 2], [1, 2, 1, 2]]
    assert run("tile", a, reps=[2, 1, 1]).shape == (2, 1, 2)
    assert run("tile", np.array([1, 2]), reps=[2, 2]).tolist() == [[1, 2, 1, 2], [1, 2, 1, 2]]
    assert run("repeat", a, repeats=2, axis=1).tolist() == [[1, 1, 2, 2]]
    assert run("repeat", a, repeats=3, axis=-2).shape == (3, 2)
    assert run("reverse", np.arange(6).reshape(2, 3), axis=1).tolist() == [[2, 1, 0], [5, 4, 3]]
    assert run("reverse", np.arange(6).reshape(2, 3), axis=-2).tolist() == [[3, 4, 5], [0, 1, 2]]


def test_layout_transform_nchw_nhwc():
    x = np.arange(2 * 3 * 4 * 5).reshape(2, 3, 4, 5)
    y = run("layout_transform", x, src_layout="NCHW", dst_layout="NHWC")
    assert y.shape == (2, 4, 5, 3)
    for n, c, h, w in itertools.product(range(2), range(3), range(4), range(5)):
        assert y[n, h, w, c] == x[n, c, h, w]
    back = run("layout_transform", y, src_layout="NHWC", dst_layout="NCHW")
    assert (back == x).all()


def test_layout_transform_packing():
    x = np.arange(2 * 8 * 3 * 2).reshape(2, 8, 3, 2)
    y = run("layout_transform", x, src_layout="NCHW", dst_layout="NCHW4c")
    assert y.shape == (2, 2, 3, 2, 4)
    for n, c, h, w in itertools.product(range(2), range(8), range(3), range(2)):
        assert y[n, c // 4, h, w, c % 4] == x[n, c, h, w]
    z = run("layout_transform", y, src_layout="NCHW4c", dst_layout="NCHW2c")
    for n, c, h, w in itertools.product(range(2), range(8), range(3), range(2)):
        assert z[n, c // 2, h, w, c % 2] == x[n, c, h, w]
    assert (run("layout_transform", y, src_layout="NCHW4c", dst_layout="NCHW") == x).all()
    nhwc = run("layout_transform", y, src_layout="NCHW4c", dst_layout="NHWC")
    assert (nhwc == x.transpose(0, 2, 3, 1)).all()
    with pytest.raises(EvalError):
        run("layout_transform", x, src_layout="NCHW", dst_layout="NCHW3c")


def test_shape_of():
    got = run("shape_of", np.zeros((2, 0, 5)))
    assert got.dtype == np.int32 and got.tolist() == [2, 0, 5]
    assert run("shape_of", np.zeros(()), dtype="int64").dtype == np.int64
