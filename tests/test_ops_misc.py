"""einsum, collapse_sum_to, contrib_reverse_reshape, ndarray_size, reinterpret,
fixed_point_multiply(_per_axis) and the tuning layout transforms."""

from __future__ import annotations

import itertools
import struct

import numpy as np
import pytest

import relay_nb as relay
from relay_nb.ir.ty import Any, TensorType

try:
    from .ops_testing import check_roundtrip, check_type_error, evaluate, result_type
except ImportError:
    from ops_testing import check_roundtrip, check_type_error, evaluate, result_type

F = "float32"


def T(shape, dtype=F):
    return TensorType(tuple(shape), dtype)


TYPES = [
    ("einsum_matmul", lambda a, b: relay.einsum([a, b], "ij,jk->ik"), [((2, 3), F), ((3, 4), F)], T((2, 4))),
    ("einsum_implicit", lambda a, b: relay.einsum([a, b], "ij,jk"), [((2, 3), F), ((3, 4), F)], T((2, 4))),
    ("einsum_ellipsis", lambda a: relay.einsum([a], "...ii->...i"), [((5, 2, 3, 3), F)], T((5, 2, 3))),
    ("einsum_trace", lambda a: relay.einsum([a], "ii"), [((3, 3), F)], T(())),
    ("einsum_dyn", lambda a, b: relay.einsum([a, b], "bij,bjk->bik"), [((Any, 2, 3), F), ((4, 3, 5), F)], T((4, 2, 5))),
    ("collapse_sum_to", lambda x: relay.collapse_sum_to(x, (3, 1)), [((2, 3, 4), F)], T((3, 1))),
    ("reverse_reshape", lambda x: relay.reverse_reshape(x, (-1, 0)), [((10, 5, 4), F)], T((50, 4))),
    # 0 copies the input dim at the same position counted from the right (5), -1 infers 40
    ("reverse_reshape2", lambda x: relay.reverse_reshape(x, (0, -1)), [((10, 5, 4), F)], T((5, 40))),
    ("ndarray_size", lambda x: relay.ndarray_size(x, "int64"), [((Any, 3), F)], T((), "int64")),
    ("reinterpret", lambda x: relay.reinterpret(x, "int32"), [((2, 3), F)], T((2, 3), "int32")),
    ("fixed_point_multiply", lambda x: relay.fixed_point_multiply(x, 2**30, 1), [((2,), "int32")], T((2,), "int32")),
    ("auto_scheduler", lambda x: relay.auto_scheduler_layout_transform(x, "1N8C2H2W", "1N2C2H2W4C"),
     [((1, 8, 2, 2), F)], T((1, 2, 2, 2, 4))),
    ("meta_schedule", lambda x: relay.meta_schedule_layout_transform(x, "lambda i, j: (i // 4, j, i % 4)"),
     [((8, 3), F)], T((2, 3, 4))),
    ("meta_schedule_dyn", lambda x: relay.meta_schedule_layout_transform(x, "lambda i, j: (j, i)"),
     [((Any, 3), F)], T((Any, Any))),
]  # fmt: skip


@pytest.mark.parametrize("name,build,types,expected", TYPES, ids=[t[0] for t in TYPES])
def test_relations(name, build, types, expected):
    assert result_type(build, *types) == expected


REJECT = [
    ('einsum((%a, %b), equation="ij,jk->ik")', "(2, 3)", "(4, 5)", "subscript 'j' has sizes 3 and 4"),
    ('einsum((%a, %b), equation="ij->ik")', "(2, 3)", "(4, 5)", "has 1 operands, got 2 tensors"),
    ('einsum((%a,), equation="ijk")', "(2, 3)", "(4, 5)", "do not match an operand of rank 2"),
    ('einsum((%a,), equation="ij->iz")', "(2, 3)", "(4, 5)", "output subscript 'z' appears in no operand"),
    ("contrib_reverse_reshape(%a, newshape=[7, -1])", "(2, 3)", "(4, 5)", "cannot reshape"),
    ('reinterpret(%a, dtype="int64")', "(2, 3)", "(4, 5)", "the bit widths differ"),
    ("fixed_point_multiply(%a, multiplier=1, shift=0)", "(2, 3)", "(4, 5)", "data must be integers"),
    ('auto_scheduler_layout_transform(%a, src_layout="2N3C", dst_layout="2N2C")', "(2, 3)", "(4, 5)",
     "axis C has 3 elements in src_layout but 2 in dst_layout"),
    ('auto_scheduler_layout_transform(%a, src_layout="2N4C", dst_layout="2N4C")', "(2, 3)", "(4, 5)",
     "does not describe data of shape (2, 3)"),
    ('meta_schedule_layout_transform(%a, index_map="lambda i: (i,)")', "(2, 3)", "(4, 5)", "takes 1 indices"),
    ('meta_schedule_layout_transform(%a, index_map="lambda i, j: (__import__(1), j)")', "(2, 3)", "(4, 5)",
     "may only use its parameters"),
]  # fmt: skip


@pytest.mark.parametrize("call,aty,bty,match", REJECT)
def test_relation_errors_are_located(call, aty, bty, match):
    check_type_error(f"fn (%a: Tensor[{aty}, float32], %b: Tensor[{bty}, float32]) {{ {call} }}", match)


def test_collapse_sum_to_errors():
    check_type_error(
        "fn (%a: Tensor[(2, 3), float32], %s: Tensor[(3), int64]) { collapse_sum_to(%a, %s, shape=[4, 1, 1]) }",
        "cannot collapse (2, 3) to (4, 1, 1)",
    )
    check_type_error(
        "fn (%a: Tensor[(2, 3), float32], %s: Tensor[(3), int64]) { collapse_sum_to(%a, %s, shape=[3]) }",
        "disagrees with a shape of 3 values",
    )


# --- values -------------------------------------------------------------------------------

RNG = np.random.default_rng(3)


def test_einsum_against_loops():
    a, b = RNG.normal(size=(2, 3)), RNG.normal(size=(3, 4))
    got = evaluate(lambda x, y: relay.einsum([x, y], "ij,jk->ki"), a, b)
    for i, k in itertools.product(range(2), range(4)):
        assert abs(got[k, i] - sum(a[i, j] * b[j, k] for j in range(3))) < 1e-12
    sq = RNG.normal(size=(2, 3, 3))
    diag = evaluate(lambda x: relay.einsum([x], "...ii->...i"), sq)
    for n, i in itertools.product(range(2), range(3)):
        assert diag[n, i] == sq[n, i, i]


def test_collapse_sum_to_and_reverse_reshape():
    x = RNG.integers(0, 5, (2, 3, 4)).astype("int32")
    got = evaluate(lambda p: relay.collapse_sum_to(p, (3, 1)), x)
    assert got.tolist() == [[int(sum(x[n, i, k] for n in range(2) for k in range(4)))] for i in range(3)]
    r = evaluate(lambda p: relay.reverse_reshape(p, (-1, 0)), x)
    assert r.shape == (6, 4) and r.ravel().tolist() == x.ravel().tolist()


def test_ndarray_size_and_reinterpret():
    x = np.array([1.0, -2.5], "float32")
    assert evaluate(lambda p: relay.ndarray_size(p), np.zeros((3, 4))).tolist() == 12
    bits = evaluate(lambda p: relay.reinterpret(p, "uint32"), x)
    assert bits.tolist() == [struct.unpack("<I", struct.pack("<f", v))[0] for v in x.tolist()]


def q_multiply_shift(x, m, shift):
    """Exact rational rounding, halves up: round(x * m * 2**shift / 2**31)."""
    from fractions import Fraction
    import math

    value = Fraction(x * m) * Fraction(2) ** shift / 2**31
    return math.floor(value + Fraction(1, 2))


@pytest.mark.parametrize("multiplier,shift", [(2**30, 0), (1518500250, -3), (1963413621, 2), (2**31 - 1, -31)])
def test_fixed_point_multiply_against_exact_rounding(multiplier, shift):
    x = np.array([0, 1, -1, 7, -7, 1000, -1000, 123456, 2**20, -(2**20)], "int32")
    got = evaluate(lambda p: relay.fixed_point_multiply(p, multiplier, shift), x)
    assert got.tolist() == [q_multiply_shift(v, multiplier, shift) for v in x.tolist()]


def test_fixed_point_multiply_per_axis():
    x = RNG.integers(-1000, 1000, (2, 3)).astype("int32")
    mult = np.array([2**30, 1518500250, 2**31 - 1], "int32")
    ls = np.array([1, 0, 2], "int32")
    rs = np.array([0, 3, 1], "int32")
    got = evaluate(
        lambda p, m, l, r: relay.fixed_point_multiply_per_axis(p, m, l, r, True, True, [1]), x, mult, ls, rs
    )
    for i, j in itertools.product(range(2), range(3)):
        assert got[i, j] == q_multiply_shift(int(x[i, j]), int(mult[j]), int(ls[j]) - int(rs[j]))


def test_auto_scheduler_layout_transform_splits_and_reorders():
    x = RNG.normal(size=(1, 8, 2, 3)).astype("float32")
    got = evaluate(lambda p: relay.auto_scheduler_layout_transform(p, "1N8C2H3W", "1N2C3W2H4C"), x)
    assert got.shape == (1, 2, 3, 2, 4)
    for c_outer, w, h, c_inner in itertools.product(range(2), range(3), range(2), range(4)):
        assert got[0, c_outer, w, h, c_inner] == x[0, c_outer * 4 + c_inner, h, w]


def test_meta_schedule_layout_transform_moves_every_element():
    x = RNG.normal(size=(8, 3)).astype("float32")
    got = evaluate(lambda p: relay.meta_schedule_layout_transform(p, "lambda i, j: (i // 4, j, i % 4)"), x)
    for i, j in itertools.product(range(8), range(3)):
        assert got[i // 4, j, i % 4] == x[i, j]
    t = evaluate(lambda p: relay.meta_schedule_layout_transform(p, "lambda i, j: (j, i)"), x)
    np.testing.assert_array_equal(t, x.T)


ROUND_TRIPS = [
    'einsum((%a, %a), equation="ij,kj->ik")',
    "collapse_sum_to(%a, %s, shape=[3])",
    "contrib_reverse_reshape(%a, newshape=[-1, 0])",
    'ndarray_size(%a, dtype="int64")',
    'reinterpret(%a, dtype="int32")',
    'auto_scheduler_layout_transform(%a, src_layout="2N3C", dst_layout="2N3C")',
    'meta_schedule_layout_transform(%a, index_map="lambda i, j: (j, i)")',
]


@pytest.mark.parametrize("body", ROUND_TRIPS)
def test_text_round_trip(body):
    text = '#[version = "0.0.5"]\ndef @main(%a: Tensor[(2, 3), float32], %s: Tensor[(1), int64]) { ' + body + " }"
    printed = check_roundtrip(text)
    assert body.split("(")[0] + "(" in printed
    for attr in body.split(", ")[1:]:
        assert attr.rstrip(")") in printed


def test_fixed_point_round_trip():
    text = (
        '#[version = "0.0.5"]\ndef @main(%a: Tensor[(2, 3), int32], %m: Tensor[(3), int32]) { '
        "%0 = fixed_point_multiply(%a, multiplier=1073741824, shift=-1); "
        "fixed_point_multiply_per_axis(%0, %m, %m, %m, is_rshift_required=True, axes=[1]) }"
    )
    printed = check_roundtrip(text)
    assert "multiplier=1073741824, shift=-1" in printed and "is_rshift_required=True, axes=[1]" in printed
