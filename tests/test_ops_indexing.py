"""Gather, scatter and indexing ops: relations (accept / reject / dynamic dims), values
against naive loops, text round trips with attributes."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import relay_nb as relay
from relay_nb.ir.ty import Any, TensorType, TupleType

try:
    from .ops_testing import check_roundtrip, check_type_error, evaluate, result_type
except ImportError:
    from ops_testing import check_roundtrip, check_type_error, evaluate, result_type

F, I = "float32", "int32"


def T(shape, dtype=F):
    return TensorType(tuple(shape), dtype)


def c(values, dtype="int32"):
    return relay.const(np.asarray(values, dtype))


# --- relations ------------------------------------------------------------------------------

TYPES = [
    ("gather", lambda d, i: relay.gather(d, 1, i), [((2, 3), F), ((2, 5), I)], T((2, 5))),
    ("gather_dyn", lambda d, i: relay.gather(d, 0, i), [((Any, 3), F), ((4, 3), I)], T((4, 3))),
    ("gather_nd", lambda d, i: relay.gather_nd(d, i), [((2, 3, 4), F), ((2, 5), I)], T((5, 4))),
    ("gather_nd_batch", lambda d, i: relay.gather_nd(d, i, batch_dims=1), [((2, 3, 4), F), ((1, 2), I)], T((2, 4))),
    ("scatter_elements", lambda d, i, u: relay.scatter_elements(d, i, u, 1, "add"),
     [((2, 3), F), ((2, 2), I), ((2, 2), F)], T((2, 3))),
    ("scatter_nd", lambda d, i, u: relay.scatter_nd(d, i, u), [((3, 4), F), ((1, 2), I), ((2, 4), F)], T((3, 4))),
    ("adv_index", lambda d, a, b: relay.adv_index([d, a, b]), [((3, 4, 5), F), ((2, 1), I), ((3,), I)], T((2, 3, 5))),
    ("one_hot", lambda i: relay.one_hot(i, c(1.0, F), c(0.0, F), 4, -1, F), [((2, 3), I)], T((2, 3, 4))),
    ("one_hot_dtype", lambda i: relay.one_hot(i, c(1.0, F), c(0.0, F), 3, -1, "int8"), [((2,), I)], T((2, 3), "int8")),
    ("sequence_mask_float", lambda d, v: relay.sequence_mask(d, v), [((4, 5), F), ((5,), F)], T((4, 5))),
    ("one_hot_axis0", lambda i: relay.one_hot(i, c(1, I), c(0, I), 4, 0, I), [((Any,), I)], T((4, Any), I)),
    ("meshgrid_xy", lambda a, b, s: relay.meshgrid([a, b, s], "xy"), [((2,), F), ((3,), F), ((), F)],
     TupleType((T((3, 2, 1)),) * 3)),
    ("sequence_mask", lambda d, v: relay.sequence_mask(d, v, axis=1), [((4, 5, 2), F), ((4,), I)], T((4, 5, 2))),
    ("reverse_sequence", lambda d, s: relay.reverse_sequence(d, s, 0, 1), [((5, 4), F), ((4,), I)], T((5, 4))),
    ("slice_like", lambda d, s: relay.slice_like(d, s), [((5, 4, 3), F), ((2, 3), F)], T((2, 3, 3))),
    ("slice_like_axes", lambda d, s: relay.slice_like(d, s, axes=[-1]), [((5, 4, 3), F), ((1, 1, 2), F)], T((5, 4, 2))),
    ("strided_set", lambda d, v: relay.strided_set(d, v, [0, 1], [2, 3]), [((3, 4), F), ((2, 2), F)], T((3, 4))),
    ("matrix_set_diag", lambda d, g: relay.matrix_set_diag(d, g, (-1, 1)), [((2, 3, 4), F), ((2, 3, 3), F)], T((2, 3, 4))),
    ("trilu", lambda d: relay.trilu(d, 1, upper=False), [((2, 3, 4), F)], T((2, 3, 4))),
    ("argwhere", lambda d: relay.argwhere(d), [((2, 3, 4), "bool")], T((Any, 3), I)),
    ("unravel_index", lambda i: relay.unravel_index(i, c([2, 3, 4])), [((5,), "int64")], T((3, 5), "int64")),
    ("unravel_index_scalar", lambda i: relay.unravel_index(i, c([2, 3])), [((), I)], T((2,), I)),
    ("invert_permutation", lambda p: relay.invert_permutation(p), [((5,), I)], T((5,), I)),
    ("sparse_to_dense", lambda i, v: relay.sparse_to_dense(i, (3, 4), v, c(0.0, F)), [((2, 2), I), ((2,), F)], T((3, 4))),
    ("sparse_fill_empty_rows", lambda i, v, s: relay.sparse_fill_empty_rows(i, v, s, c(0.0, F)),
     [((4, 2), "int64"), ((4,), F), ((2,), "int64")],
     TupleType((T((Any, 2), "int64"), T((Any,)), T((Any,), "int64")))),
    ("sparse_reshape", lambda i, p, n: relay.sparse_reshape(i, p, n), [((4, 2), "int64"), ((2,), "int64"), ((3,), "int64")],
     TupleType((T((4, 3), "int64"), T((3,), "int64")))),
    ("sliding_window", lambda d: relay.sliding_window(d, 1, [2, 3], [1, 2]), [((2, 4, 7), F)], T((2, 3, 3, 2, 3))),
    ("sliding_window_dyn", lambda d: relay.sliding_window(d, 1, [2], [1]), [((2, Any), F)], T((2, Any, 2))),
]  # fmt: skip


@pytest.mark.parametrize("name,build,types,expected", TYPES, ids=[t[0] for t in TYPES])
def test_relations(name, build, types, expected):
    assert result_type(build, *types) == expected


REJECT = [
    ("gather(%d, %i)", "(2, 3), float32", "(2, 3), int32", "axis must be given"),
    ("gather(%d, %i, axis=0)", "(2, 3), float32", "(2, 3, 1), int32", "must have the same rank"),
    ("gather(%d, %i, axis=0)", "(2, 3), float32", "(2, 4), int32", "differ in dimension 1"),
    ("gather(%d, %i, axis=0)", "(2, 3), float32", "(2, 3), float32", "indices must be integers"),
    ("gather_nd(%d, %i)", "(2, 3), float32", "(3, 1), int32", "3 indices after 0 batch dims do not fit"),
    ("gather_nd(%d, %i)", "(2, 3), float32", "(?, 1), int32", "needs a static first axis"),
    ('scatter_elements(%d, %i, %d, reduction="sub")', "(2, 3), float32", "(2, 3), int32", "reduction must be one of"),
    ("scatter_nd(%d, %i, %d)", "(2, 3), float32", "(1, 3), int32", "updates and indices[1:] + data[M:]"),
    ("one_hot(%i, 1f, 0f, depth=0)", "(2, 3), float32", "(2,), int32", "depth must be positive"),
    ("one_hot(%i, 1f, 0f, depth=3, axis=3)", "(2, 3), float32", "(2,), int32", "axis 3 is out of range"),
    ("sequence_mask(%d, %i, axis=2)", "(2, 3), float32", "(3,), int32", "axis must be 0 or 1"),
    ("sequence_mask(%d, %i)", "(2, 3), float32", "(2,), int32", "valid_length and the batch axis"),
    ("reverse_sequence(%d, %i)", "(2, 3), float32", "(3,), int32", "seq_lengths has 3 entries but the batch axis has 2"),
    ("slice_like(%d, %i)", "(2, 3), float32", "(3,), int32", "shape_like's 3 exceeds the data's 2"),
    ("slice_like(%d, %i, axes=[1])", "(2, 3), float32", "(3,), int32", "axis 1 exceeds the rank 1"),
    ("matrix_set_diag(%d, %i)", "(2, 3), int32", "(3,), int32", "diagonal and the input's diagonals"),
    ("matrix_set_diag(%d, %i, k1=1, k2=0)", "(2, 3), int32", "(2,), int32", "k2 (0) must not be smaller than k1 (1)"),
    ("trilu(%d, %i)", "(2, 3), float32", "(1,), int32", "k must be a 0-D tensor"),
    ("unravel_index(%d, %i)", "(2, 3), int32", "(2,), int32", "indices must be a scalar or 1-D"),
    ("invert_permutation(%d)", "(2, 3), int32", "(1,), int32", "data must be a 1-D permutation"),
    ("sparse_to_dense(%i, %d, 0f, output_shape=[2, 3])", "(2,), float32", "(2, 3), int32",
     "sparse_indices give 3 coordinates for a rank-2 output"),
    ("sliding_window(%d, axis=0, window_shape=[2], strides=[1])", "(2, 3), float32", "(1,), int32",
     "window_shape and strides must have 2 values"),
    ("sliding_window(%d, axis=1, window_shape=[4], strides=[1])", "(2, 3), float32", "(1,), int32",
     "window 4 is longer than the dimension 3"),
]  # fmt: skip


@pytest.mark.parametrize("call,dty,ity,match", REJECT)
def test_relation_errors_are_located(call, dty, ity, match):
    check_type_error(f"fn (%d: Tensor[{dty}], %i: Tensor[{ity}]) {{ {call} }}", match)


def test_adv_index_errors():
    check_type_error("fn (%d: Tensor[(2, 3), float32]) { adv_index((%d,)) }", "at least one index")
    check_type_error(
        "fn (%d: Tensor[(2,), float32], %i: Tensor[(1,), int32]) { adv_index((%d, %i, %i)) }",
        "too many indices (2) for data of rank 1",
    )
    check_type_error(
        "fn (%d: Tensor[(2, 3), float32], %i: Tensor[(2,), int32], %j: Tensor[(3,), int32]) "
        "{ adv_index((%d, %i, %j)) }",
        "do not broadcast",
    )


# --- values -------------------------------------------------------------------------------

RNG = np.random.default_rng(0)
X = RNG.integers(-9, 9, (3, 4, 5)).astype("float32")


def positions(shape):
    return itertools.product(*(range(n) for n in shape))


def test_gather_against_loops():
    idx = RNG.integers(0, 4, (3, 6, 5)).astype("int32")
    got = evaluate(lambda d, i: relay.gather(d, 1, i), X, idx)
    for p in positions(idx.shape):
        assert got[p] == X[p[0], idx[p], p[2]]
    neg = evaluate(lambda d, i: relay.gather(d, 1, i), X, idx - 4)  # from the end
    np.testing.assert_array_equal(neg, got)


def test_gather_nd_against_loops():
    idx = np.array([[0, 2, 1], [3, 0, 3]], "int32")  # (M=2, Y=3)
    got = evaluate(lambda d, i: relay.gather_nd(d, i), X, idx)
    assert got.shape == (3, 5)
    for y in range(3):
        np.testing.assert_array_equal(got[y], X[idx[0, y], idx[1, y]])
    bidx = np.array([[1, 0, 3]], "int32")  # batch_dims=1: row b picks X[b, bidx[0, b]]
    got = evaluate(lambda d, i: relay.gather_nd(d, i, batch_dims=1), X, bidx)
    for b in range(3):
        np.testing.assert_array_equal(got[b], X[b, bidx[0, b]])


@pytest.mark.parametrize("reduction", ["update", "add", "mul", "mean", "min", "max"])
def test_scatter_elements_applies_updates_in_order(reduction):
    data = RNG.integers(1, 5, (3, 4)).astype("float32")
    idx = np.array([[0, 0, 3], [2, 1, 2], [-1, 3, 3]], "int32")
    upd = RNG.integers(1, 5, (3, 3)).astype("float32")
    got = evaluate(lambda d, i, u: relay.scatter_elements(d, i, u, 1, reduction), data, idx, upd)
    want = data.copy()
    ops = {"update": lambda a, b: b, "add": lambda a, b: a + b, "mul": lambda a, b: a * b,
           "mean": lambda a, b: (a + b) / 2, "min": min, "max": max}  # fmt: skip
    for r in range(3):
        for k in range(3):
            j = idx[r, k] % 4
            want[r, j] = ops[reduction](want[r, j], upd[r, k])
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("mode", ["update", "add", "mul", "min", "max"])
def test_scatter_nd_against_loops(mode):
    data = RNG.integers(1, 5, (3, 4)).astype("float32")
    idx = np.array([[0, 2, 0]], "int32")  # three rows, row 0 twice
    upd = RNG.integers(1, 5, (3, 4)).astype("float32")
    got = evaluate(lambda d, i, u: relay.scatter_nd(d, i, u, mode), data, idx, upd)
    want = data.copy()
    ops = {"update": lambda a, b: b, "add": lambda a, b: a + b, "mul": lambda a, b: a * b, "min": min, "max": max}
    for y in range(3):
        for j in range(4):
            want[idx[0, y], j] = ops[mode](want[idx[0, y], j], upd[y, j])
    np.testing.assert_array_equal(got, want)


def test_out_of_range_indices_are_eval_errors():
    with pytest.raises(relay.EvalError, match="index 4 is out of range for a dimension of 4"):
        evaluate(lambda d, i: relay.gather(d, 1, i), X, np.full((3, 1, 5), 4, "int32"))
    with pytest.raises(relay.EvalError, match="out of range"):
        evaluate(lambda d, i: relay.adv_index([d, i]), X, np.array([3], "int32"))


def test_adv_index_is_numpy_advanced_indexing_of_leading_axes():
    a = np.array([[0], [2]], "int32")
    b = np.array([1, 3, 0], "int32")
    got = evaluate(lambda d, i, j: relay.adv_index([d, i, j]), X, a, b)
    for p, q in positions((2, 3)):
        np.testing.assert_array_equal(got[p, q], X[a[p, 0], b[q]])


@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_one_hot(axis):
    idx = np.array([[0, 3], [2, 5]], "int32")  # 5 is outside depth 4: all off
    got = evaluate(lambda i: relay.one_hot(i, c(7, I), c(-1, I), 4, axis, I), idx)
    want = np.full((2, 2, 4), -1)
    for p in positions((2, 2)):
        if idx[p] < 4:
            want[p + (idx[p],)] = 7
    np.testing.assert_array_equal(got, np.moveaxis(want, -1, axis if axis >= 0 else 2))


def test_meshgrid():
    a, b = np.array([1, 2], "float32"), np.array([5, 6, 7], "float32")
    ij = evaluate(lambda x, y: relay.meshgrid([x, y]), a, b)
    xy = evaluate(lambda x, y: relay.meshgrid([x, y], "xy"), a, b)
    for i, j in positions((2, 3)):
        assert (ij[0][i, j], ij[1][i, j]) == (a[i], b[j])
        assert (xy[0][j, i], xy[1][j, i]) == (a[i], b[j])


@pytest.mark.parametrize("axis", [0, 1])
def test_sequence_mask(axis):
    data = RNG.normal(size=(4, 3, 2)).astype("float32")
    lengths = np.array([1, 4, 0, 2] if axis == 1 else [2, 0, 3], "int32")
    got = evaluate(lambda d, v: relay.sequence_mask(d, v, -5.0, axis), data, lengths)
    for t, b in positions((4, 3) if axis == 0 else (3, 4)):
        p = (t, b) if axis == 0 else (b, t)
        want = data[p] if t < lengths[b] else -5.0
        np.testing.assert_array_equal(got[p], want)


def test_reverse_sequence():
    data = np.arange(20, dtype="float32").reshape(4, 5)
    lengths = np.array([1, 2, 3, 9, 4], "int32")  # 9 is clipped to the 4 steps
    got = evaluate(lambda d, s: relay.reverse_sequence(d, s, seq_axis=0, batch_axis=1), data, lengths)
    lens = [1, 2, 3, 4, 4]
    for b in range(5):
        col = list(data[:, b])
        want = col[: lens[b]][::-1] + col[lens[b] :]
        assert got[:, b].tolist() == want


def test_slice_like_and_strided_set():
    like = np.zeros((2, 3), "float32")
    np.testing.assert_array_equal(evaluate(lambda d, s: relay.slice_like(d, s), X, like), X[:2, :3])
    np.testing.assert_array_equal(evaluate(lambda d, s: relay.slice_like(d, s, axes=[1]), X, like), X[:, :3])
    data = np.zeros((4, 5), "float32")
    v = np.array([[1, 2], [3, 4]], "float32")
    got = evaluate(lambda d, w: relay.strided_set(d, w, [0, 1], [4, 5], [2, 3]), data, v)
    want = data.copy()
    for (r, q), val in zip([(0, 1), (0, 4), (2, 1), (2, 4)], [1, 2, 3, 4]):
        want[r, q] = val
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(
    "k, align",
    [(0, "RIGHT_LEFT"), (1, "RIGHT_LEFT"), (-1, "RIGHT_LEFT"), ((-1, 1), "RIGHT_LEFT"), ((-1, 1), "LEFT_RIGHT"),
     ((0, 2), "LEFT_LEFT")],
)  # fmt: skip
def test_matrix_set_diag_against_tensorflow_rule(k, align):
    rows, cols = 3, 4
    k1, k2 = (k, k) if isinstance(k, int) else k

    def length(d):
        return min(rows + min(0, d), cols - max(0, d))

    width = max(length(d) for d in range(k1, k2 + 1))
    dshape = (2,) + ((k2 - k1 + 1,) if k1 != k2 else ()) + (width,)
    data = np.zeros((2, rows, cols), "float32")
    diag = np.arange(1, 1 + np.prod(dshape), dtype="float32").reshape(dshape)
    got = evaluate(lambda a, g: relay.matrix_set_diag(a, g, k, align), data, diag)
    for b, i, j in positions((2, rows, cols)):
        d = j - i
        if k1 <= d <= k2:
            row = diag[b] if k1 == k2 else diag[b, k2 - d]
            right = align.split("_")[0 if d >= 0 else 1] == "RIGHT"
            offset = width - length(d) if right else 0
            assert got[b, i, j] == row[offset + min(i, j)], (b, i, j)
        else:
            assert got[b, i, j] == 0


@pytest.mark.parametrize("k", [-1, 0, 2])
@pytest.mark.parametrize("upper", [True, False])
def test_trilu(k, upper):
    got = evaluate(lambda d: relay.trilu(d, k, upper), X)
    for b, i, j in positions(X.shape):
        keep = (j - i >= k) if upper else (j - i <= k)
        assert got[b, i, j] == (X[b, i, j] if keep else 0)


def test_argwhere_unravel_invert():
    cond = X > 3
    got = evaluate(lambda d: relay.argwhere(d), cond)
    assert got.dtype == np.int32
    assert [tuple(r) for r in got.tolist()] == [p for p in positions(X.shape) if cond[p]]
    flat = np.array([0, 7, 23, 13], "int64")
    got = evaluate(lambda i: relay.unravel_index(i, c([2, 3, 4], "int64")), flat)
    assert [tuple(col) for col in got.T.tolist()] == [(f // 12, f // 4 % 3, f % 4) for f in flat.tolist()]
    perm = np.array([2, 0, 3, 1], "int32")
    inv = evaluate(lambda p: relay.invert_permutation(p), perm)
    assert [perm[i] for i in inv] == [0, 1, 2, 3]
    with pytest.raises(relay.EvalError, match="not a permutation"):
        evaluate(lambda p: relay.invert_permutation(p), np.array([0, 0], "int32"))


def test_sparse_ops():
    idx = np.array([[0, 1], [2, 3]], "int64")
    vals = np.array([5, 6], "float32")
    dense = evaluate(lambda i, v: relay.sparse_to_dense(i, (3, 4), v, c(-1.0, F)), idx, vals)
    want = np.full((3, 4), -1.0)
    want[0, 1], want[2, 3] = 5, 6
    np.testing.assert_array_equal(dense, want)
    one_d = evaluate(lambda i: relay.sparse_to_dense(i, (4,), c(1.0, F), c(0.0, F)), np.array([3, 0], "int32"))
    assert one_d.tolist() == [1, 0, 0, 1]

    # rows 1 and 3 of a 4-row tensor are empty
    sidx = np.array([[0, 1], [0, 3], [2, 0]], "int64")
    svals = np.array([1, 2, 3], "float32")
    new_idx, new_vals, empty = evaluate(
        lambda i, v, s: relay.sparse_fill_empty_rows(i, v, s, c(9.0, F)), sidx, svals, np.array([4, 5], "int64")
    )
    assert new_idx.tolist() == [[0, 1], [0, 3], [1, 0], [2, 0], [3, 0]]
    assert new_vals.tolist() == [1, 2, 9, 3, 9] and empty.tolist() == [0, 1, 0, 1]

    ridx, rshape = evaluate(
        lambda i, p, n: relay.sparse_reshape(i, p, n), sidx, np.array([4, 5], "int64"), np.array([2, -1, 5], "int64")
    )
    assert rshape.tolist() == [2, 2, 5]
    for (r, q), new in zip(sidx.tolist(), ridx.tolist()):
        flat = r * 5 + q
        assert new == [flat // 10, flat // 5 % 2, flat % 5]


def test_sliding_window_against_loops():
    got = evaluate(lambda d: relay.sliding_window(d, 1, [2, 3], [1, 2]), X)
    assert got.shape == (3, 3, 2, 2, 3)
    for b, wi, wj, i, j in positions(got.shape):
        assert got[b, wi, wj, i, j] == X[b, wi + i, 2 * wj + j]


# --- text ---------------------------------------------------------------------------------

ROUND_TRIPS = [
    ("gather(%d, %i, axis=1)", "(2, 3), float32", "(2, 3), int32"),
    ("gather_nd(%d, %i, batch_dims=1, index_rank=1)", "(2, 3), float32", "(1, 2), int32"),
    ('scatter_elements(%d, %i, %d, axis=1, reduction="add")', "(2, 3), float32", "(2, 3), int32"),
    ('scatter_nd(%d, %i, %d, mode="max")', "(2, 3), float32", "(2, 2, 3), int32"),
    ("adv_index((%d, %i))", "(2, 3), float32", "(2, 3), int32"),
    ('one_hot(%i, 1f, 0f, depth=5, axis=0, dtype="float32")', "(2, 3), float32", "(2, 3), int32"),
    ('meshgrid((%d, %d), indexing="xy")', "(3,), float32", "(2,), int32"),
    ("sequence_mask(%d, %i, mask_value=-1f, axis=1)", "(3, 2), float32", "(3,), int32"),
    ("reverse_sequence(%d, %i, seq_axis=0, batch_axis=1)", "(2, 3), float32", "(3,), int32"),
    ("slice_like(%d, %d, axes=[0])", "(2, 3), float32", "(2,), int32"),
    ("matrix_set_diag(%d, %d, k1=-1, k2=1, super_diag_right_align=False, sub_diag_right_align=True)",
     "(3, 3), float32", "(2,), int32"),
    ("trilu(%d, 1, upper=False)", "(3, 3), float32", "(2,), int32"),
    ("unravel_index(%i, %i)", "(2, 3), float32", "(2,), int32"),
    ("sparse_to_dense(%i, 1f, 0f, output_shape=[4])", "(2, 3), float32", "(2,), int32"),
    ("sliding_window(%d, axis=1, window_shape=[2], strides=[1])", "(2, 3), float32", "(2,), int32"),
    ("argwhere(%d)", "(2, 3), float32", "(2,), int32"),
    ("invert_permutation(%i)", "(2, 3), float32", "(2,), int32"),
    ("strided_set(%d, 1f, %i, %i, %i)", "(2, 3), float32", "(2,), int32"),
    ("sparse_fill_empty_rows(%i, %d, shape_of(%i, dtype=\"int64\"), 0f)", "(2,), float32", "(2, 2), int64"),
    ("sparse_reshape(%i, %d, %d)", "(2,), int64", "(2, 2), int64"),
]  # fmt: skip


@pytest.mark.parametrize("body,dty,ity", ROUND_TRIPS)
def test_text_round_trip(body, dty, ity):
    text = f'#[version = "0.0.5"]\ndef @main(%d: Tensor[{dty}], %i: Tensor[{ity}]) {{ {body} }}'
    printed = check_roundtrip(text)
    name = body.split("(")[0]
    assert f"{name}(" in printed
    for part in body.split(", "):
        if "=" in part and "(" not in part:
            assert part.rstrip(")") in printed, (part, printed)
