"""dyn.* ops: shapes as tensors -- relations with `?` dims, run-time values, text, errors."""

from __future__ import annotations

import numpy as np
import pytest

import relay_nb as relay

HEADER = '#[version = "0.0.5"]\n'
X = np.arange(6, dtype="float32").reshape(2, 3)


def _check(params: str, body: str, ty: str, args, expected, *, jit=True):
    """Parse ``def @main(params) { body }``, check its type and value in both executors, and
    that it prints back to the same program."""
    mod = relay.transform.InferType()(relay.parse(f"{HEADER}def @main({params}) {{\n  {body}\n}}"))
    assert str(mod["main"].body.checked_type) == ty
    again = relay.transform.InferType()(relay.parse(mod.astext()))
    assert relay.structural_equal(again, mod)
    executors = ("interpreter", "jit") if jit else ("interpreter",)
    for executor in executors:
        out = relay.create_executor(executor, mod=mod).evaluate()(*args)
        np.testing.assert_array_equal(out, expected)
        assert out.dtype == np.asarray(expected).dtype


I64 = lambda *v: np.array(v, "int64")  # noqa: E731

CASES = [
    (
        "dyn.reshape",
        "%x: Tensor[(2, 3), float32], %s: Tensor[(2), int64]",
        "dyn.reshape(%x, %s)",
        "Tensor[(?, ?), float32]",
        (X, I64(3, -1)),
        [[0, 1], [2, 3], [4, 5]],
    ),
    (
        "dyn.tile",
        "%x: Tensor[(2, 3), float32], %r: Tensor[(3), int64]",
        "dyn.tile(%x, %r)",
        "Tensor[(?, ?, ?), float32]",
        (X, I64(1, 1, 2)),
        [[[0, 1, 2, 0, 1, 2], [3, 4, 5, 3, 4, 5]]],
    ),
    (
        "dyn.broadcast_to",
        "%x: Tensor[(3), float32], %s: Tensor[(2), int64]",
        "dyn.broadcast_to(%x, %s)",
        "Tensor[(?, ?), float32]",
        (np.array([1, 2, 3], "float32"), I64(2, 3)),
        [[1, 2, 3], [1, 2, 3]],
    ),
    (
        "dyn.zeros",
        "%s: Tensor[(2), int64]",
        'dyn.zeros(%s, dtype="int32")',
        "Tensor[(?, ?), int32]",
        (I64(1, 2),),
        np.array([[0, 0]], "int32"),
    ),
    (
        "dyn.ones",
        "%s: Tensor[(1), int32]",
        'dyn.ones(%s, dtype="float32")',
        "Tensor[(?), float32]",
        (np.array([3], "int32"),),
        [1, 1, 1],
    ),
    (
        "dyn.full",
        "%v: float32, %s: Tensor[(2), int64]",
        "dyn.full(%v, %s)",
        "Tensor[(?, ?), float32]",
        (np.float32(2.5), I64(2, 2)),
        [[2.5, 2.5], [2.5, 2.5]],
    ),
    (
        "dyn.expand_dims",
        "%x: Tensor[(2, 3), float32], %a: int64",
        "dyn.expand_dims(%x, %a, num_newaxis=2)",
        "Tensor[(?, ?, ?, ?), float32]",
        (X, np.int64(1)),
        X.reshape(2, 1, 1, 3),
    ),
    (
        "dyn.squeeze",
        "%x: Tensor[(1, 3, 1), float32], %a: Tensor[(1), int64]",
        "dyn.squeeze(%x, %a)",
        "Tensor[(?, ?), float32]",
        (np.array([[[7], [8], [9]]], "float32"), I64(0)),
        [[7], [8], [9]],
    ),
    (
        "dyn.strided_slice",
        "%x: Tensor[(2, 3), float32], %b: Tensor[(1), int64], %e: Tensor[(1), int64], "
        "%s: Tensor[(1), int64]",
        "dyn.strided_slice(%x, %b, %e, %s)",
        "Tensor[(?, 3), float32]",
        (X, I64(1), I64(2), I64(1)),
        [[3, 4, 5]],
    ),
    (
        "dyn.nn.pad",
        "%x: Tensor[(2, 3), float32], %w: Tensor[(2, 2), int64], %v: float32",
        "dyn.nn.pad(%x, %w, %v)",
        "Tensor[(?, ?), float32]",
        (X, np.array([[0, 1], [1, 0]], "int64"), np.float32(-1)),
        [[-1, 0, 1, 2], [-1, 3, 4, 5], [-1, -1, -1, -1]],
    ),
    (
        "dyn.nn.upsampling",
        "%x: Tensor[(1, 1, 1, 2), float32], %h: float32, %w: float32",
        "dyn.nn.upsampling(%x, %h, %w)",
        "Tensor[(1, 1, ?, ?), float32]",
        (np.array([[[[1, 2]]]], "float32"), np.float32(2), np.float32(1)),
        [[[[1, 2], [1, 2]]]],
    ),
    (
        "dyn.image.resize2d",
        "%x: Tensor[(1, 1, 2, 2), float32], %s: Tensor[(2), int64], %r: Tensor[(4), float32]",
        'dyn.image.resize2d(%x, %s, %r, method="nearest_neighbor", '
        'coordinate_transformation_mode="asymmetric", rounding_method="floor")',
        "Tensor[(1, 1, ?, ?), float32]",
        (np.array([[[[1, 2], [3, 4]]]], "float32"), I64(4, 4), np.zeros(4, "float32")),
        # asymmetric + floor: output pixel i reads input pixel floor(i / 2)
        [[[[1, 1, 2, 2], [1, 1, 2, 2], [3, 3, 4, 4], [3, 3, 4, 4]]]],
    ),
    (
        "dyn.one_hot",
        "%i: Tensor[(3), int32], %d: int32",
        'dyn.one_hot(%i, 1f, 0f, %d, axis=0, dtype="float32")',
        "Tensor[(?, 3), float32]",
        (np.array([0, 2, 1], "int32"), np.int32(4)),
        [[1, 0, 0], [0, 0, 1], [0, 1, 0], [0, 0, 0]],
    ),
    (
        "dyn.topk",
        "%x: Tensor[(2, 4), float32], %k: int32",
        'dyn.topk(%x, %k, ret_type="values", is_ascend=True)',
        "Tensor[(2, ?), float32]",
        (np.array([[1, 5, 3, 2], [9, 8, 7, 6]], "float32"), np.int32(3)),
        [[1, 2, 3], [6, 7, 8]],
    ),
    (
        "dyn.sparse_to_dense",
        "%i: Tensor[(2, 2), int64], %v: Tensor[(2), float32], %s: Tensor[(2), int64]",
        "dyn.sparse_to_dense(%i, %v, -1f, %s)",
        "Tensor[(?, ?), float32]",
        (np.array([[0, 1], [2, 0]], "int64"), np.array([5, 7], "float32"), I64(3, 2)),
        [[-1, 5], [-1, -1], [7, -1]],
    ),
    (
        "dyn.nn.upsampling3d",
        "%x: Tensor[(1, 1, 1, 1, 2), float32], %s: float32",
        "dyn.nn.upsampling3d(%x, %s, %s, %s)",
        "Tensor[(1, 1, ?, ?, ?), float32]",
        (np.array([1, 2], "float32").reshape(1, 1, 1, 1, 2), np.float32(2)),
        # nearest, half_pixel: output x reads floor((x + 0.5) / 2 - 0.5) -> 0, 0, 0, 1
        np.tile(np.array([1, 1, 1, 2], "float32"), (1, 1, 2, 2, 1)),
    ),
]


@pytest.mark.parametrize("name, params, body, ty, args, expected", CASES, ids=[c[0] for c in CASES])
def test_dyn_op_types_values_and_text(name, params, body, ty, args, expected):
    if not isinstance(expected, np.ndarray):  # a nested list: float32 values
        expected = np.asarray(expected, "float32")
    _check(params, body, ty, args, expected)


@pytest.mark.parametrize(
    "params, body, message",
    [
        ("%x: float32, %s: Tensor[(?), int64]", "dyn.reshape(%x, %s)",
         "newshape must have a static length"),
        ("%x: float32, %s: Tensor[(2), float32]", "dyn.reshape(%x, %s)",
         "newshape must hold integers"),
        ("%x: Tensor[(2, 3), float32], %s: Tensor[(1), int64]", "dyn.broadcast_to(%x, %s)",
         "the target shape has 1 dims, fewer than the data's 2"),
        ("%v: Tensor[(2), float32], %s: Tensor[(2), int64]", "dyn.full(%v, %s)",
         "fill_value must be a scalar"),
        ("%x: Tensor[(2, 3), float32], %b: Tensor[(1), int64], %e: Tensor[(2), int64]",
         "dyn.strided_slice(%x, %b, %e, %e)", "begin, end and strides must have the same length"),
        ("%x: Tensor[(2, 3), float32], %w: Tensor[(3, 2), int64]", "dyn.nn.pad(%x, %w, 0f)",
         r"pad_width must have shape \(2, 2\)"),
        ("%x: Tensor[(2, 3), float32], %a: Tensor[(3), int64]", "dyn.squeeze(%x, %a)",
         "cannot squeeze 3 axes of a rank-2 tensor"),
    ],
)
def test_dyn_relation_errors_are_located(params, body, message):
    with pytest.raises(relay.RelayError, match=message) as info:
        relay.transform.InferType()(relay.parse(f"{HEADER}def @main({params}) {{\n  {body}\n}}"))
    assert info.value.span is not None and info.value.span.line == 3


def test_dyn_topk_both_returns_values_and_indices():
    mod = relay.transform.InferType()(
        relay.parse(HEADER + "def @main(%x: Tensor[(3), float32], %k: int64) {\n  dyn.topk(%x, %k)\n}")
    )
    assert str(mod["main"].body.checked_type) == "(Tensor[(?), float32], Tensor[(?), int32])"
    values, indices = relay.create_executor("interpreter", mod=mod).evaluate()(
        np.array([4, 9, 1], "float32"), np.int64(2)
    )
    np.testing.assert_array_equal(values, [9, 4])
    np.testing.assert_array_equal(indices, [1, 0])


def test_bad_run_time_shape_is_an_eval_error():
    mod = relay.transform.InferType()(
        relay.parse(
            HEADER + "def @main(%x: Tensor[(2, 3), float32], %s: Tensor[(2), int64]) {\n"
            "  dyn.reshape(%x, %s)\n}"
        )
    )
    run = relay.create_executor("interpreter", mod=mod).evaluate()
    with pytest.raises(relay.RelayError, match="reshape"):
        run(X, I64(4, 4))


def test_builders_follow_tvm():
    x = relay.var("x", shape=(2, 3))
    s = relay.var("s", shape=(2,), dtype="int64")
    assert relay.dyn.reshape(x, s).op.name == "dyn.reshape"
    assert relay.dyn.zeros(s, "int8").attrs.dtype == "int8"
    assert relay.dyn.strided_slice(x, s, s, s, slice_mode="size").attrs.slice_mode == "size"
    mod = relay.transform.InferType()(relay.IRModule.from_expr(relay.Function([x, s], relay.dyn.tile(x, s))))
    assert str(mod["main"].body.checked_type) == "Tensor[(?, ?), float32]"


def test_dyn_reshape_gradient_matches_finite_differences():
    try:
        from .test_gradient import check_grad
    except ImportError:
        from test_gradient import check_grad

    shape = relay.const(I64(3, 2))
    check_grad(lambda p: relay.reshape(relay.exp(relay.dyn.reshape(p, shape)), (3, 2)), [(2, 3)])
