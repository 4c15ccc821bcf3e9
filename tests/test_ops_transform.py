"""Shape-changing ops: relations against NumPy (and TVM's documented reshape examples)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from relay_nb.errors import RelayTypeError
from relay_nb.ir.ty import Any, TupleType
from relay_nb.op.registry import OpPattern, get_op

try:
    from ._reporter import T, infer
except ImportError:
    from _reporter import T, infer

shapes = hnp.array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=5)


def np_shape(fn, shape, *args, **kwargs):
    return np.asarray(fn(np.zeros(shape), *args, **kwargs)).shape


# --- reshape ------------------------------------------------------------------------------

# The examples of TVM's reshape documentation.
TVM_RESHAPE_EXAMPLES = [
    ((2, 3, 4), (4, 0, 2), (4, 3, 2)),
    ((2, 3, 4), (2, 0, 0), (2, 3, 4)),
    ((2, 3, 4), (6, 1, -1), (6, 1, 4)),
    ((2, 3, 4), (3, -1, 8), (3, 1, 8)),
    ((2, 3, 4), (-1,), (24,)),
    ((2, 3, 4), (-2,), (2, 3, 4)),
    ((2, 3, 4), (2, -2), (2, 3, 4)),
    ((2, 3, 4), (-2, 1, 1), (2, 3, 4, 1, 1)),
    ((2, 3, 4), (-3, 4), (6, 4)),
    ((2, 3, 4, 5), (-3, -3), (6, 20)),
    ((2, 3, 4), (0, -3), (2, 12)),
    ((2, 3, 4), (-3, -2), (6, 4)),
    ((2, 3, 4), (-4, 1, 2, -2), (1, 2, 3, 4)),
    ((2, 3, 4), (2, -4, -1, 3, -2), (2, 1, 3, 4)),
]


@pytest.mark.parametrize("shape,newshape,expected", TVM_RESHAPE_EXAMPLES)
def test_reshape_special_values(shape, newshape, expected):
    assert infer("reshape", T(shape), newshape=newshape) == T(expected)


@given(shape=shapes, data=st.data())
def test_reshape_with_minus_one_matches_numpy(shape, data):
    size = int(np.prod(shape))
    divisors = [d for d in range(1, size + 1) if size % d == 0]
    first = data.draw(st.sampled_from(divisors))
    newshape = data.draw(st.sampled_from([(first, -1), (-1, first), (first, size // first)]))
    assert infer("reshape", T(shape), newshape=newshape) == T(
        np.zeros(shape).reshape(newshape).shape
    )


def test_reshape_errors():
    with pytest.raises(RelayTypeError, match=r"reshape: cannot reshape 6 elements into \(4, 2\)"):
        infer("reshape", T((2, 3)), newshape=[4, 2])
    with pytest.raises(RelayTypeError, match=r"reshape: cannot reshape 6 elements into \(4, -1\)"):
        infer("reshape", T((2, 3)), newshape=[4, -1])
    with pytest.raises(RelayTypeError, match="only one dimension of newshape can be -1"):
        infer("reshape", T((2, 3)), newshape=[-1, -1])
    with pytest.raises(RelayTypeError, match="unsupported value -5"):
        infer("reshape", T((2, 3)), newshape=[-5])
    with pytest.raises(RelayTypeError, match="-3 merges input dimensions 1 and 2"):
        infer("reshape", T((2, 3)), newshape=[0, -3])
    with pytest.raises(RelayTypeError, match="cannot split dimension 3 into 2 \\* 2"):
        infer("reshape", T((3,)), newshape=[-4, 2, 2])
    with pytest.raises(RelayTypeError, match="0 in newshape copies input dimension 2"):
        infer("reshape", T((2, 3)), newshape=[0, 0, 0])


def test_reshape_dynamic_and_allowzero():
    assert infer("reshape", T((Any, 3)), newshape=[-1]) == T((Any,))
    assert infer("reshape", T((Any, 3, 4)), newshape=[0, -1]) == T((Any, 12))
    assert infer("reshape", T((0, 3)), newshape=[3, 0], allowzero=True) == T((3, 0))


def test_reshape_like():
    assert infer("reshape_like", T((1, 2, 3, 4)), T((6, 2, 2, 3)), lhs_begin=1, rhs_end=3) == T(
        (1, 6, 2, 2)
    )
    assert infer("reshape_like", T((2, 3)), T((3, 2))) == T((3, 2))
    with pytest.raises(RelayTypeError, match="cannot reshape 6 elements"):
        infer("reshape_like", T((2, 3)), T((4,)))


# --- axes ---------------------------------------------------------------------------------


@given(shape=shapes, data=st.data())
def test_transpose_matches_numpy(shape, data):
    axes = data.draw(st.permutations(range(len(shape))))
    assert infer("transpose", T(shape), axes=axes) == T(np_shape(np.transpose, shape, axes))
    assert infer("transpose", T(shape)) == T(np_shape(np.transpose, shape))


def test_transpose_errors():
    with pytest.raises(RelayTypeError, match=r"axes \[0\] has 1 entries for a rank-2 tensor"):
        infer("transpose", T((2, 3)), axes=[0])
    with pytest.raises(RelayTypeError, match="repeats an axis"):
        infer("transpose", T((2, 3)), axes=[1, -1])
    with pytest.raises(RelayTypeError, match="axis 2 is out of range for a rank-2 tensor"):
        infer("transpose", T((2, 3)), axes=[0, 2])


def test_squeeze():
    assert infer("squeeze", T((1, 3, 1, 2))) == T(np_shape(np.squeeze, (1, 3, 1, 2)))
    assert infer("squeeze", T((1, 3, 1, 2)), axis=[-2]) == T((1, 3, 2))
    assert infer("squeeze", T((Any, 1)), axis=[1]) == T((Any,))
    with pytest.raises(RelayTypeError, match="squeeze: axis 1 has dimension 3, not 1"):
        infer("squeeze", T((1, 3)), axis=[1])
    with pytest.raises(RelayTypeError, match="axis must be given for a tensor with dynamic"):
        infer("squeeze", T((Any, 1)))


@given(shape=shapes, data=st.data())
def test_expand_dims_matches_numpy(shape, data):
    axis = data.draw(st.integers(-len(shape) - 1, len(shape)))
    assert infer("expand_dims", T(shape), axis=axis) == T(np_shape(np.expand_dims, shape, axis))


def test_expand_dims_many_and_errors():
    assert infer("expand_dims", T((2, 3)), axis=1, num_newaxis=2) == T((2, 1, 1, 3))
    assert infer("expand_dims", T((2, 3)), axis=0, num_newaxis=0) == T((2, 3))
    with pytest.raises(RelayTypeError, match="axis 3 is out of range for a rank-2 tensor"):
        infer("expand_dims", T((2, 3)), axis=3)
    with pytest.raises(RelayTypeError, match="num_newaxis must be >= 0"):
        infer("expand_dims", T((2, 3)), axis=0, num_newaxis=-1)


def test_reverse():
    assert infer("reverse", T((2, 3)), axis=-1) == T((2, 3))
    with pytest.raises(RelayTypeError, match="axis 2 is out of range"):
        infer("reverse", T((2, 3)), axis=2)


# --- joining and splitting ----------------------------------------------------------------


@given(base=shapes, data=st.data())
def test_concatenate_matches_numpy(base, data):
    axis = data.draw(st.integers(-len(base), len(base) - 1))
    sizes = data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=3))
    parts = [tuple(s if i == axis % len(base) else d for i, d in enumerate(base)) for s in sizes]
    expected = np.concatenate([np.zeros(p) for p in parts], axis=axis).shape
    assert infer("concatenate", TupleType(tuple(T(p) for p in parts)), axis=axis) == T(expected)


def test_concatenate_errors_and_dynamic():
    tup = TupleType((T((2, 3)), T((2, 4))))
    assert infer("concatenate", tup, axis=1) == T((2, 7))
    with pytest.raises(
        RelayTypeError,
        match=r"field 1 has shape \(2, 4\), which does not match field 0's \(2, 3\) outside axis 0",
    ):
        infer("concatenate", tup, axis=0)
    with pytest.raises(RelayTypeError, match="data must be a tuple of tensors"):
        infer("concatenate", T((2, 3)))
    with pytest.raises(RelayTypeError, match="non-empty"):
        infer("concatenate", TupleType(()))
    with pytest.raises(RelayTypeError, match="field 1 has rank 1 but field 0 has rank 2"):
        infer("concatenate", TupleType((T((2, 3)), T((3,)))))
    with pytest.raises(RelayTypeError, match="do not match"):
        infer("concatenate", TupleType((T((2,)), T((2,), "int32"))))
    assert infer("concatenate", TupleType((T((Any, 3)), T((2, 3)))), axis=0) == T((Any, 3))
    assert infer("concatenate", TupleType((T((Any, 3)), T((2, 3)))), axis=1) == T((2, 6))


@given(shape=shapes, n=st.integers(1, 3), data=st.data())
def test_stack_matches_numpy(shape, n, data):
    axis = data.draw(st.integers(-len(shape) - 1, len(shape)))
    expected = np.stack([np.zeros(shape)] * n, axis=axis).shape
    assert infer("stack", TupleType((T(shape),) * n), axis=axis) == T(expected)


def test_stack_needs_equal_shapes():
    with pytest.raises(RelayTypeError, match="stack: field 1 has shape"):
        infer("stack", TupleType((T((2, 3)), T((2, 4)))))


@given(shape=shapes, data=st.data())
def test_split_matches_numpy(shape, data):
    axis = data.draw(st.integers(0, len(shape) - 1))
    dim = shape[axis]
    if data.draw(st.booleans()):
        ios = data.draw(st.sampled_from([d for d in range(1, dim + 1) if dim % d == 0]))
    else:
        ios = sorted(data.draw(st.sets(st.integers(1, max(dim - 1, 1)), max_size=3)))
        assume(all(i < dim for i in ios))
    expected = TupleType(tuple(T(p.shape) for p in np.split(np.zeros(shape), ios, axis=axis)))
    assert infer("split", T(shape), indices_or_sections=ios, axis=axis) == expected


def test_split_errors_and_dynamic():
    with pytest.raises(
        RelayTypeError, match="dimension 7 of axis 0 cannot be split into 2 equal sections"
    ):
        infer("split", T((7,)), indices_or_sections=2)
    with pytest.raises(RelayTypeError, match="strictly increasing"):
        infer("split", T((7,)), indices_or_sections=[3, 2])
    with pytest.raises(RelayTypeError, match="index 7 is not inside dimension 7"):
        infer("split", T((7,)), indices_or_sections=[2, 7])
    with pytest.raises(RelayTypeError, match="axis 1 is out of range for a rank-1 tensor"):
        infer("split", T((7,)), indices_or_sections=7, axis=1)
    assert infer("split", T((Any, 2)), indices_or_sections=2) == TupleType((T((Any, 2)),) * 2)
    assert infer("split", T((Any,)), indices_or_sections=[3]) == TupleType((T((3,)), T((Any,))))


# --- indexing -----------------------------------------------------------------------------


@given(shape=shapes, ishape=hnp.array_shapes(min_dims=0, max_dims=2, max_side=3), data=st.data())
def test_take_matches_numpy(shape, ishape, data):
    axis = data.draw(st.none() | st.integers(-len(shape), len(shape) - 1))
    expected = np.take(np.zeros(shape), np.zeros(ishape, "int64"), axis=axis).shape
    assert infer("take", T(shape), T(ishape, "int32"), axis=axis) == T(expected)


def test_take_batch_dims_and_errors():
    assert infer("take", T((4, 5, 6)), T((4, 3), "int64"), axis=1, batch_dims=1) == T((4, 3, 6))
    with pytest.raises(RelayTypeError, match="indices must be integers, found float32"):
        infer("take", T((4,)), T((2,)))
    with pytest.raises(RelayTypeError, match="mode must be one of clip, wrap, fast"):
        infer("take", T((4,)), T((2,), "int32"), mode="nearest")
    with pytest.raises(RelayTypeError, match="batch_dims 2 must be in"):
        infer("take", T((4, 5)), T((4, 3), "int32"), axis=1, batch_dims=2)


slice_bound = st.none() | st.integers(-7, 7)


@given(shape=shapes, data=st.data())
def test_strided_slice_matches_numpy(shape, data):
    n = data.draw(st.integers(1, len(shape)))
    begin = [data.draw(st.integers(-6, 6)) for _ in range(n)]
    end = [data.draw(st.integers(-6, 6)) for _ in range(n)]
    strides = [data.draw(st.sampled_from([1, 2, 3, -1, -2])) for _ in range(n)]
    expected = np.zeros(shape)[tuple(slice(b, e, s) for b, e, s in zip(begin, end, strides))].shape
    assert infer("strided_slice", T(shape), begin=begin, end=end, strides=strides) == T(expected)


def test_strided_slice_modes_and_axes():
    x = T((4, 5, 6))
    assert infer("strided_slice", x, begin=[1], end=[3]) == T((2, 5, 6))
    assert infer("strided_slice", x, begin=[1, 0], end=[2, -1], slice_mode="size") == T((2, 5, 6))
    assert infer("strided_slice", x, begin=[0, 2], end=[3, 3], slice_mode="size") == T((3, 3, 6))
    assert infer("strided_slice", x, begin=[1], end=[4], strides=[2], axes=[2]) == T((4, 5, 2))
    assert infer("strided_slice", T((Any, 5)), begin=[0, 1], end=[2, 3]) == T((Any, 2))
    with pytest.raises(RelayTypeError, match="the stride of axis 0 is 0"):
        infer("strided_slice", x, begin=[0], end=[1], strides=[0])
    with pytest.raises(RelayTypeError, match="must have the same length"):
        infer("strided_slice", x, begin=[0, 0], end=[1], axes=[0, 1])
    with pytest.raises(RelayTypeError, match="more entries than the rank 3"):
        infer("strided_slice", x, begin=[0, 0, 0, 0], end=[1, 1, 1, 1])


# --- broadcasting and repetition ----------------------------------------------------------


@given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=4))
def test_broadcast_to_matches_numpy(shapes):
    src, _ = shapes.input_shapes
    target = shapes.result_shape
    assert infer("broadcast_to", T(src), shape=target) == T(np_shape(np.broadcast_to, src, target))
    assert infer("broadcast_to_like", T(src), T(target, "int8")) == T(target)
    assert infer("collapse_sum_like", T(target), T(src, "int8")) == T(src)


def test_broadcast_to_error():
    with pytest.raises(RelayTypeError, match=r"broadcast_to: cannot broadcast \(2, 3\) to \(3,\)"):
        infer("broadcast_to", T((2, 3)), shape=[3])
    with pytest.raises(RelayTypeError, match="collapse_sum_like: cannot broadcast"):
        infer("collapse_sum_like", T((3,)), T((2, 3)))


@given(shape=shapes, reps=st.lists(st.integers(1, 3), min_size=1, max_size=5))
def test_tile_matches_numpy(shape, reps):
    assert infer("tile", T(shape), reps=reps) == T(np_shape(np.tile, shape, reps))


@given(shape=shapes, repeats=st.integers(1, 3), data=st.data())
def test_repeat_matches_numpy(shape, repeats, data):
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    assert infer("repeat", T(shape), repeats=repeats, axis=axis) == T(
        np_shape(np.repeat, shape, repeats, axis)
    )


def test_tile_repeat_errors_and_dynamic():
    assert infer("tile", T((Any, 2)), reps=[2, 2]) == T((Any, 4))
    assert infer("repeat", T((Any, 2)), repeats=2, axis=1) == T((Any, 4))
    with pytest.raises(RelayTypeError, match="reps \\[0\\] must all be positive"):
        infer("tile", T((2,)), reps=[0])
    with pytest.raises(RelayTypeError, match="repeats must be >= 1"):
        infer("repeat", T((2,)), repeats=0, axis=0)
    with pytest.raises(RelayTypeError, match="repeat: axis must be given"):
        infer("repeat", T((2,)), repeats=2)


# --- layouts ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "shape,src,dst,expected",
    [
        ((1, 32, 7, 9), "NCHW", "NHWC", (1, 7, 9, 32)),
        ((1, 7, 9, 32), "NHWC", "NCHW", (1, 32, 7, 9)),
        ((1, 32, 7, 9), "NCHW", "NCHW16c", (1, 2, 7, 9, 16)),
        ((1, 2, 7, 9, 16), "NCHW16c", "NCHW", (1, 32, 7, 9)),
        ((1, 2, 7, 9, 16), "NCHW16c", "NCHW8c", (1, 4, 7, 9, 8)),
        ((64, 32, 3, 3), "OIHW", "HWIO", (3, 3, 32, 64)),
        ((Any, 32, 7, 9), "NCHW", "NCHW4c", (Any, 8, 7, 9, 4)),
    ],
)
def test_layout_transform(shape, src, dst, expected):
    assert infer("layout_transform", T(shape), src_layout=src, dst_layout=dst) == T(expected)


def test_layout_transform_errors():
    x = T((1, 3, 4, 4))
    with pytest.raises(RelayTypeError, match="dimension C=3 is not divisible by 16"):
        infer("layout_transform", x, src_layout="NCHW", dst_layout="NCHW16c")
    with pytest.raises(RelayTypeError, match="cannot convert from NCHW to NCDHW"):
        infer("layout_transform", x, src_layout="NCHW", dst_layout="NCDHW")
    with pytest.raises(RelayTypeError, match="the input has rank 4 but layout NCW has 3 axes"):
        infer("layout_transform", x, src_layout="NCW", dst_layout="NWC")
    with pytest.raises(RelayTypeError, match="is not an axis"):
        infer("layout_transform", x, src_layout="NCHW", dst_layout="NCHWc")
    with pytest.raises(RelayTypeError, match="repeats axis"):
        infer("layout_transform", x, src_layout="NCHW", dst_layout="NCHH")


def test_shape_of():
    assert infer("shape_of", T((Any, 3, 4))) == T((3,), "int32")
    assert infer("shape_of", T((2,)), dtype="int64") == T((1,), "int64")


@pytest.mark.parametrize(
    "op,pattern",
    [
        ("reshape", OpPattern.INJECTIVE),
        ("transpose", OpPattern.INJECTIVE),
        ("squeeze", OpPattern.INJECTIVE),
        ("expand_dims", OpPattern.BROADCAST),
        ("concatenate", OpPattern.INJECTIVE),
        ("split", OpPattern.INJECTIVE),
        ("stack", OpPattern.INJECTIVE),
        ("take", OpPattern.INJECTIVE),
        ("strided_slice", OpPattern.INJECTIVE),
        ("broadcast_to", OpPattern.BROADCAST),
        ("tile", OpPattern.BROADCAST),
        ("repeat", OpPattern.BROADCAST),
        ("reverse", OpPattern.INJECTIVE),
        ("layout_transform", OpPattern.INJECTIVE),
    ],
)
def test_patterns_as_tvm_numbers_them(op, pattern):
    assert get_op(op).get_attr("TOpPattern") == pattern


def test_tuple_ops_take_one_argument():
    assert get_op("concatenate").get_attr("num_inputs") == 1
    assert get_op("stack").get_attr("num_inputs") == 1
