"""relay_nb.op.nn_sparse: CSR / BSR products, transpose, add and conv2d -- relations,
values against loops over the stored entries, text round trip."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import relay_nb as relay
from relay_nb.errors import RelayTypeError
from relay_nb.ir.ty import Any, TupleType

try:
    from ._reporter import T, infer
except ImportError:
    from _reporter import T, infer


try:
    from .ops_testing import no_warnings, run_impl as run  # noqa: F401  (no_warnings: autouse)
except ImportError:
    from ops_testing import no_warnings, run_impl as run  # noqa: F401


RNG = np.random.default_rng(23)
I32 = "int32"


def random_bsr(rows, cols, bs_r, bs_c, density=0.5):
    """A random BSR matrix and its dense form, built entry by entry."""
    dense = np.zeros((rows * bs_r, cols * bs_c))
    data, indices, indptr = [], [], [0]
    for r in range(rows):
        for c in range(cols):
            if RNG.random() < density:
                block = RNG.standard_normal((bs_r, bs_c))
                data.append(block)
                indices.append(c)
                dense[r * bs_r : (r + 1) * bs_r, c * bs_c : (c + 1) * bs_c] = block
        indptr.append(len(data))
    data = np.array(data).reshape(-1, bs_r, bs_c)
    return data, np.array(indices, I32), np.array(indptr, I32), dense


SHAPES = [
    ("nn.sparse_dense", [T((3, 8)), T((5,)), T((5,), I32), T((7,), I32)], {}, T((3, 6))),
    ("nn.sparse_dense", [T((3, 8)), T((5, 2, 4)), T((5,), I32), T((4,), I32)], {}, T((3, 6))),
    ("nn.sparse_dense", [T((3, 8)), T((5,)), T((5,), I32), T((7,), I32)], {"sparse_lhs": True}, T((6, 3))),
    ("nn.sparse_dense", [T((Any, 8)), T((Any,)), T((Any,), I32), T((Any,), I32)], {}, T((Any, Any))),
    ("nn.internal.sparse_dense_padded", [T((3, 8)), T((5,)), T((5,), I32), T((7,), I32)], {}, T((3, 6))),
    ("nn.sparse_transpose", [T((5,)), T((5,), I32), T((4,), I32)], {}, TupleType((T((5,)), T((5,), I32), T((4,), I32)))),
    ("nn.sparse_add", [T((3, 4)), T((5,)), T((5,), I32), T((4,), I32)], {}, T((3, 4))),
    ("nn.sparse_conv2d", [T((1, 5, 5, 8)), T((6, 2, 4)), T((6,), I32), T((4,), I32)], {}, T((1, 5, 5, 6))),
    ("nn.sparse_conv2d", [T((1, 8, 5, 5)), T((6, 2, 1)), T((6,), I32), T((4,), I32)], {"layout": "NCHW", "kernel_size": [3, 3]}, T((1, 6, 5, 5))),
]


@pytest.mark.parametrize("op, args, attrs, expected", SHAPES, ids=[c[0] for c in SHAPES])
def test_shapes(op, args, attrs, expected):
    assert infer(op, *args, **attrs) == expected


ERRORS = [
    ("nn.sparse_dense", [T((3, 8)), T((5, 2)), T((5,), I32), T((7,), I32)], {}, "rank 1 or 3"),
    ("nn.sparse_dense", [T((3, 8)), T((5,)), T((4,), I32), T((7,), I32)], {}, "data has 5 entries but indices 4"),
    ("nn.sparse_dense", [T((3, 8)), T((5,)), T((5,)), T((7,), I32)], {}, "indices must be integers"),
    ("nn.sparse_dense", [T((3, 8, 1)), T((5,)), T((5,), I32), T((7,), I32)], {}, "must be a matrix"),
    ("nn.sparse_add", [T((3, 4)), T((5,)), T((5,), I32), T((5,), I32)], {}, "indptr has 5 entries for a matrix of 3 rows"),
    ("nn.sparse_add", [T((3, 4)), T((5,), "float64"), T((5,), I32), T((4,), I32)], {}, "one dtype"),
    ("nn.sparse_conv2d", [T((1, 5, 5, 8)), T((6, 2, 4)), T((6,), I32), T((4,), I32)], {"kernel_size": [5, 5]}, "kernel_size must be"),
    ("nn.sparse_conv2d", [T((1, 5, 5, 8)), T((6, 2, 4)), T((6,), I32), T((4,), I32)], {"layout": "HWCN"}, "NHWC or NCHW"),
]


@pytest.mark.parametrize("op, args, attrs, message", ERRORS, ids=[c[0] for c in ERRORS])
def test_errors(op, args, attrs, message):
    with pytest.raises(RelayTypeError, match=message):
        infer(op, *args, **attrs)


@pytest.mark.parametrize("bs_r, bs_c", [(1, 1), (2, 4)])
@pytest.mark.parametrize("op", ["nn.sparse_dense", "nn.internal.sparse_dense_padded"])
def test_sparse_dense_against_loops(op, bs_r, bs_c):
    data, indices, indptr, w = random_bsr(3, 2, bs_r, bs_c)
    if bs_r == bs_c == 1:
        data = data.reshape(-1)  # CSR
    x = RNG.standard_normal((4, 2 * bs_c))
    got = run(op, x, data, indices, indptr)
    want = [[sum(x[m, k] * w[n, k] for k in range(2 * bs_c)) for n in range(3 * bs_r)] for m in range(4)]
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_sparse_dense_with_a_sparse_left_operand():
    data, indices, indptr, s = random_bsr(3, 5, 1, 1)
    d = RNG.standard_normal((2, 5))
    got = run("nn.sparse_dense", d, data.reshape(-1), indices, indptr, sparse_lhs=True)
    want = [[sum(s[i, k] * d[j, k] for k in range(5)) for j in range(2)] for i in range(3)]
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_sparse_transpose_by_hand():
    # [[1, 0, 2], [0, 0, 3], [4, 5, 0]]  ->  transpose [[1, 0, 4], [0, 0, 5], [2, 3, 0]]
    data = np.array([1.0, 2.0, 3.0, 4.0, 5.0], "float32")
    indices = np.array([0, 2, 2, 0, 1], I32)
    indptr = np.array([0, 2, 3, 5], I32)
    td, ti, tp = run("nn.sparse_transpose", data, indices, indptr)
    assert td.tolist() == [1, 4, 5, 2, 3] and ti.tolist() == [0, 2, 2, 0, 1]
    assert tp.tolist() == [0, 2, 3, 5]


def test_sparse_add_by_hand():
    dense = np.ones((2, 3))
    got = run("nn.sparse_add", dense, np.array([5.0, 7.0]), np.array([2, 0], I32), np.array([0, 1, 2], I32))
    assert got.tolist() == [[1, 1, 6], [8, 1, 1]]


@pytest.mark.parametrize("layout, kernel", [("NHWC", 1), ("NCHW", 1), ("NHWC", 3), ("NCHW", 3)])
def test_sparse_conv2d_against_loops(layout, kernel):
    n, h, w, c, co = 1, 4, 3, 2, 4
    k_cols = c * kernel * kernel
    data, indices, indptr, wdense = random_bsr(co // 2, k_cols, 2, 1)
    x = RNG.standard_normal((n, h, w, c))  # NHWC values; NCHW input is its transpose
    arg = x if layout == "NHWC" else x.transpose(0, 3, 1, 2)
    got = run("nn.sparse_conv2d", arg, data, indices, indptr, layout=layout,
              kernel_size=[kernel, kernel])  # fmt: skip
    want = np.zeros((n, h, w, co))
    r = kernel // 2
    for b, y, xx, o in itertools.product(range(n), range(h), range(w), range(co)):
        for i, j, ch in itertools.product(range(kernel), range(kernel), range(c)):
            yy, xj = y + i - r, xx + j - r
            if not (0 <= yy < h and 0 <= xj < w):
                continue
            col = (i * kernel + j) * c + ch if layout == "NHWC" else ch * kernel * kernel + i * kernel + j
            want[b, y, xx, o] += x[b, yy, xj, ch] * wdense[o, col]
    np.testing.assert_allclose(got, want if layout == "NHWC" else want.transpose(0, 3, 1, 2), rtol=1e-12)


def test_malformed_sparse_input_is_an_eval_error():
    with pytest.raises(relay.RelayError, match="column index 9 is outside"):
        run("nn.sparse_dense", np.ones((1, 4)), np.ones(1), np.array([9], I32), np.array([0, 1], I32))
    with pytest.raises(relay.RelayError, match="does not index"):
        run("nn.sparse_dense", np.ones((1, 4)), np.ones(1), np.array([0], I32), np.array([0, 3], I32))


def test_program_and_text():
    x = relay.var("x", shape=(3, 8))
    parts = (relay.var("d", shape=(5,)), relay.var("i", shape=(5,), dtype=I32), relay.var("p", shape=(7,), dtype=I32))
    cases = [
        relay.nn.sparse_dense(x, parts),
        relay.nn.sparse_transpose((parts[0], parts[1], relay.var("q", shape=(6,), dtype=I32))).astuple(),
        relay.nn.sparse_add(relay.var("a", shape=(6, 4)), parts),
        relay.nn.sparse_conv2d(relay.var("c", shape=(1, 4, 4, 8)), relay.var("b", shape=(5, 2, 4)),
                               parts[1], relay.var("r", shape=(4,), dtype=I32), kernel_size=1),  # fmt: skip
    ]
    for expr in cases:
        m1 = relay.transform.InferType()(
            relay.IRModule.from_expr(relay.Function(relay.analysis.free_vars(expr), expr))
        )
        text = m1.astext()
        m2 = relay.transform.InferType()(relay.parse(text))
        assert relay.structural_equal(m1["main"], m2["main"], map_free_vars=True)
        assert m2.astext() == text
    # a sparse_dense program in the interpreter
    data, indices, indptr, w = random_bsr(6, 8, 1, 1)
    f = relay.Function([x], relay.nn.sparse_dense(x, (relay.const(data.reshape(-1).astype("float32")),
                                                     relay.const(indices), relay.const(indptr))))  # fmt: skip
    mod = relay.transform.InferType()(relay.IRModule.from_expr(f))
    xs = RNG.standard_normal((3, 8)).astype("float32")
    got = relay.create_executor("interpreter", mod=mod).evaluate()(xs)
    np.testing.assert_allclose(got, xs @ w.T, rtol=1e-5, atol=1e-5)
