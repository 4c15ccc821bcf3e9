"""argsort, sort, topk, unique, searchsorted: relations (accept / reject, dynamic dims),
values against naive references, text round trips."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import relay_nb as relay
from relay_nb.ir.ty import Any, TensorType, TupleType

try:
    from .ops_testing import check_roundtrip, check_type_error, evaluate, result_type
except ImportError:
    from ops_testing import check_roundtrip, check_type_error, evaluate, result_type


def T(shape, dtype="float32"):
    return TensorType(tuple(shape), dtype)


TYPES = [
    # builder, parameter types, expected result type
    (lambda x: relay.argsort(x, axis=0), [((3, 4), "float32")], T((3, 4), "int32")),
    (lambda x: relay.argsort(x, dtype="int64"), [((3, 4), "float32")], T((3, 4), "int64")),
    (lambda x: relay.sort(x), [((Any, 4), "int8")], T((Any, 4), "int8")),
    (lambda x: relay.topk(x, k=2), [((3, 5), "float32")], TupleType((T((3, 2)), T((3, 2), "int32")))),
    (lambda x: relay.topk(x, k=0, axis=0, ret_type="values"), [((3, 5), "float32")], T((3, 5))),
    (lambda x: relay.topk(x, k=2, ret_type="indices", dtype="int64"), [((Any, 5), "float32")], T((Any, 2), "int64")),
    (lambda x: relay.unique(x), [((6,), "int32")], TupleType((T((6,), "int32"),) * 3 + (T((1,), "int32"),))),
    (lambda x: relay.unique(x, return_counts=True), [((Any,), "int64")],
     TupleType((T((Any,), "int64"),) + (T((Any,), "int32"),) * 2 + (T((1,), "int32"), T((Any,), "int32")))),
    (lambda s, v: relay.searchsorted(s, v), [((5,), "float32"), ((2, 3), "float32")], T((2, 3), "int32")),
    (lambda s, v: relay.searchsorted(s, v, dtype="int64"), [((2, 5), "float32"), ((2, 3), "float32")], T((2, 3), "int64")),
]  # fmt: skip


@pytest.mark.parametrize("build,types,expected", TYPES)
def test_relations(build, types, expected):
    assert result_type(build, *types) == expected


REJECT = [
    ("argsort(%x, axis=2)", "(3, 4), float32", "axis 2 is out of range"),
    ("topk(%x, k=9)", "(3, 4), float32", "k = 9 is larger than the axis length 4"),
    ('topk(%x, ret_type="all")', "(3, 4), float32", "ret_type must be one of both, values, indices"),
    ("unique(%x)", "(3, 4), int32", "data must be a 1-D tensor"),
    ("searchsorted(%x, %x)", "(), float32", "values must have rank at least 1"),
]


@pytest.mark.parametrize("call,ty,match", REJECT)
def test_relation_errors_are_located(call, ty, match):
    check_type_error(f"fn (%x: Tensor[{ty}]) {{ {call} }}", match)


def test_searchsorted_outer_axes_must_agree():
    check_type_error(
        "fn (%s: Tensor[(3, 5), float32], %v: Tensor[(2, 4), float32]) { searchsorted(%s, %v) }",
        "differ along the outer axes",
    )


# --- values -------------------------------------------------------------------------------


def naive_argsort(row, ascending):
    """Selection of the extreme remaining element, first occurrence first (a stable sort)."""
    left = list(range(len(row)))
    order = []
    while left:
        best = left[0]
        for i in left[1:]:
            if (row[i] < row[best]) if ascending else (row[i] > row[best]):
                best = i
        order.append(best)
        left.remove(best)
    return order


@settings(max_examples=30, deadline=None)
@given(
    x=hnp.arrays(np.int32, hnp.array_shapes(min_dims=1, max_dims=3, max_side=5), elements=st.integers(-3, 3)),
    ascending=st.booleans(),
    data=st.data(),
)
def test_argsort_sort_topk_are_stable(x, ascending, data):
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1))
    k = data.draw(st.integers(0, x.shape[axis]))
    idx = evaluate(lambda p: relay.argsort(p, axis=axis, is_ascend=ascending), x)
    srt = evaluate(lambda p: relay.sort(p, axis=axis, is_ascend=ascending), x)
    vals, tidx = evaluate(lambda p: relay.topk(p, k=k, axis=axis, is_ascend=ascending), x)
    moved = np.moveaxis(x, axis, -1)
    want = np.array([naive_argsort(r, ascending) for r in moved.reshape(-1, moved.shape[-1])]).reshape(moved.shape)
    assert idx.dtype == np.int32
    np.testing.assert_array_equal(np.moveaxis(idx, axis, -1), want)
    np.testing.assert_array_equal(np.moveaxis(srt, axis, -1), np.take_along_axis(moved, want, -1))
    kk = k if k >= 1 else x.shape[axis]
    np.testing.assert_array_equal(np.moveaxis(tidx, axis, -1), want[..., :kk])
    np.testing.assert_array_equal(np.moveaxis(vals, axis, -1), np.take_along_axis(moved, want[..., :kk], -1))


def test_unique_matches_tvm_documentation():
    data = np.array([4, 5, 1, 2, 3, 3, 4, 5], "int32")
    out, idx, inv, num = evaluate(lambda x: relay.unique(x, is_sorted=False), data)
    assert out[:5].tolist() == [4, 5, 1, 2, 3] and idx[:5].tolist() == [0, 1, 2, 3, 4]
    assert inv.tolist() == [0, 1, 2, 3, 4, 4, 0, 1] and num.tolist() == [5]
    out, idx, inv, num, counts = evaluate(lambda x: relay.unique(x, return_counts=True), data)
    assert out[:5].tolist() == [1, 2, 3, 4, 5] and idx[:5].tolist() == [2, 3, 4, 0, 1]
    assert inv.tolist() == [3, 4, 0, 1, 2, 2, 3, 4] and counts[:5].tolist() == [1, 1, 2, 2, 2]
    # the padding relay_nb defines: 0 for values and counts, the length for indices
    assert out[5:].tolist() == [0, 0, 0] and idx[5:].tolist() == [8, 8, 8] and counts[5:].tolist() == [0] * 3


@pytest.mark.parametrize("right", [False, True])
def test_searchsorted_against_a_linear_scan(right):
    seq = np.array([[1, 3, 3, 5, 7], [0, 0, 2, 2, 9]], "float32")
    values = np.array([[3, 0, 8], [2, 10, -1]], "float32")
    got = evaluate(lambda s, v: relay.searchsorted(s, v, right=right), seq, values)
    want = [[sum(1 for s in row if (s <= v if right else s < v)) for v in vals] for row, vals in zip(seq, values)]
    assert got.tolist() == want
    flat = evaluate(lambda s, v: relay.searchsorted(s, v, right=right), seq[0], values)
    assert flat.tolist() == [[sum(1 for s in seq[0] if (s <= v if right else s < v)) for v in vals] for vals in values]


ROUND_TRIPS = [
    "argsort(%x, axis=0, is_ascend=False, dtype=\"int64\")",
    "sort(%x, axis=1)",
    "topk(%x, k=2, axis=0, ret_type=\"indices\", is_ascend=True, dtype=\"int32\")",
    "%0 = topk(%x, k=1); %0.1",
    "searchsorted(%x, %x, right=True, dtype=\"int64\")",
]


@pytest.mark.parametrize("body", ROUND_TRIPS)
def test_text_round_trip(body):
    printed = check_roundtrip(f"#[version = \"0.0.5\"]\ndef @main(%x: Tensor[(3, 4), float32]) {{ {body} }}")
    assert body.split("(")[0].split("= ")[-1] in printed


def test_unique_round_trip():
    printed = check_roundtrip('#[version = "0.0.5"]\ndef @main(%x: Tensor[(6), int32]) { unique(%x, sorted=False, return_counts=True) }')
    assert "sorted=False, return_counts=True" in printed
