"""Elementwise, broadcast, cast, where and tensor-creating ops: relations against NumPy."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from relay_nb.errors import RelayTypeError
from relay_nb.ir.ty import Any, IncompleteType, TensorType, TupleType
from relay_nb.op.registry import OpPattern, get_op
from relay_nb.op.tensor import BINARY_OPS, COMPARISON_OPS, PREDICATE_OPS, UNARY_OPS

try:
    from ._reporter import T, infer, literal, solve
except ImportError:
    from _reporter import T, infer, literal, solve

BINARY = [n for n, _ in BINARY_OPS]
COMPARE = [n for n, _ in COMPARISON_OPS]
UNARY = [n for n, _ in UNARY_OPS]
PREDICATES = [n for n, _ in PREDICATE_OPS]

broadcastable = hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=4, max_side=5)


@given(shapes=broadcastable, op=st.sampled_from(BINARY))
def test_binary_ops_broadcast_like_numpy(shapes, op):
    a, b = shapes.input_shapes
    assert infer(op, T(a), T(b)) == T(np.broadcast_shapes(a, b))


@given(shapes=broadcastable, op=st.sampled_from(COMPARE))
def test_comparisons_give_bool(shapes, op):
    a, b = shapes.input_shapes
    assert infer(op, T(a, "int32"), T(b, "int32")) == T(np.broadcast_shapes(a, b), "bool")


@pytest.mark.parametrize("op", BINARY + COMPARE)
def test_binary_ops_are_registered_as_broadcast(op):
    o = get_op(op)
    assert o.get_attr("TOpPattern") == OpPattern.BROADCAST
    assert o.get_attr("num_inputs") == 2 and o.get_attr("arg_names") == ("lhs", "rhs")
    assert o.get_attr("doc")


def test_broadcast_error_message():
    with pytest.raises(RelayTypeError, match=r"shapes \(2, 3\) and \(4, 3\) do not broadcast"):
        infer("add", T((2, 3)), T((4, 3)))


def test_binary_dtype_mismatch():
    with pytest.raises(RelayTypeError, match="float32 and int32"):
        infer("multiply", T((2,)), T((2,), "int32"))


def test_literal_takes_the_tensor_dtype():
    lit = literal("int32")
    solved, types = solve("multiply", T((2, 3)), TensorType((), lit))
    assert solved
    assert types[1] == T((), "float32")  # the literal became float32
    assert types[-1] == T((2, 3))


def test_dynamic_dims_broadcast():
    assert infer("add", T((Any, 3)), T((1, 3))) == T((Any, 3))
    assert infer("add", T((Any, 3)), T((4, 3))) == T((4, 3))
    assert infer("add", T((Any,)), T((Any,))) == T((Any,))


def test_relation_waits_for_unknown_input():
    solved, _ = solve("add", IncompleteType(), T((2,)))
    assert not solved


def test_non_tensor_operand_message():
    with pytest.raises(RelayTypeError, match="left operand must be a tensor"):
        infer("add", TupleType((T((2,)),)), T((2,)))


@pytest.mark.parametrize("op", UNARY)
@pytest.mark.parametrize("shape", [(), (3,), (2, 1, 4)])
def test_unary_ops_keep_the_type(op, shape):
    assert infer(op, T(shape, "float16")) == T(shape, "float16")
    assert get_op(op).get_attr("TOpPattern") == OpPattern.ELEMWISE


@pytest.mark.parametrize("op", PREDICATES)
def test_predicates_give_bool(op):
    assert infer(op, T((2, 5))) == T((2, 5), "bool")


def test_unary_rejects_a_tuple():
    with pytest.raises(RelayTypeError, match=r"argument must be a tensor, found \("):
        infer("exp", TupleType((T((1,)), T((2,)))))


def test_clip_and_cast():
    assert infer("clip", T((4, 4)), a_min=-1.0, a_max=1.0) == T((4, 4))
    assert infer("cast", T((4, 4)), dtype="int8") == T((4, 4), "int8")
    assert infer("cast_like", T((4, 4)), T((1,), "float16")) == T((4, 4), "float16")


@given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=3, max_dims=3, max_side=4))
def test_where_broadcasts_three_shapes(shapes):
    c, x, y = shapes.input_shapes
    assert infer("where", T(c, "bool"), T(x), T(y)) == T(np.broadcast_shapes(c, x, y))


def test_where_needs_one_dtype_for_x_and_y():
    with pytest.raises(RelayTypeError, match="do not match"):
        infer("where", T((2,), "bool"), T((2,)), T((2,), "int32"))


def test_zeros_ones_full():
    assert infer("zeros", shape=[2, 3], dtype="int32") == T((2, 3), "int32")
    assert infer("ones", shape=[4]) == T((4,))  # dtype defaults to float32
    assert infer("full", T((), "int8"), shape=[2]) == T((2,), "int8")  # the fill value's dtype
    assert infer("full", T(()), shape=[2], dtype="float16") == T((2,), "float16")
    assert infer("full_like", T((3, 3)), T(())) == T((3, 3))
    assert infer("zeros_like", T((3, 3), "int64")) == T((3, 3), "int64")
    assert get_op("zeros").get_attr("num_inputs") == 0


def test_full_needs_a_scalar_fill_value():
    with pytest.raises(RelayTypeError, match="fill_value must be a scalar"):
        infer("full", T((2,)), shape=[2])
    with pytest.raises(RelayTypeError, match="fill_value must be a scalar"):
        infer("full_like", T((2,)), T((2,)))


@pytest.mark.parametrize(
    "start,stop,step",
    [(0, 5, 1), (0.0, 1.0, 0.25), (2, 11, 3), (10, 0, -2), (0, 0.5, 1), (5, 0, 1)],
)
def test_arange_length_matches_numpy(start, stop, step):
    scalar = T(())
    out = infer(
        "arange", scalar, scalar, scalar, start=start, stop=stop, step=step, dtype="float32"
    )
    assert out == T((len(np.arange(start, stop, step)),))


def test_arange_without_bounds_is_dynamic_and_types_its_arguments():
    solved, types = solve("arange", IncompleteType(), T((), literal()), T(()), dtype="float32")
    assert solved
    assert types[0] == T(()) and types[1] == T(())
    assert types[-1] == T((Any,))


def test_arange_errors():
    s = T(())
    with pytest.raises(RelayTypeError, match="step must not be 0"):
        infer("arange", s, s, s, start=0, stop=1, step=0)
    with pytest.raises(RelayTypeError, match="start must be a scalar"):
        infer("arange", T((2,)), s, s, start=0, stop=1, step=1)
