"""End to end: programs built with the op builders, typed by InferType, and the errors a
user sees (op name prefixed by the solver)."""

from __future__ import annotations

import pytest

import relay_nb as relay
from relay_nb.errors import RelayTypeError
from relay_nb.ir.expr import Call
from relay_nb.ir.ty import Any, FuncType, TensorType, TupleType
from relay_nb.op.registry import get_op
from relay_nb.syntax import parser
from relay_nb.transform import infer_type


def T(shape, dtype="float32"):
    return TensorType(tuple(shape), dtype)


def typed(expr, params=None):
    """The checked type of ``expr``'s body after InferType, with ``params`` (default: free vars)."""
    f = relay.Function(params, expr) if params is not None else expr
    mod = infer_type.InferType()(relay.IRModule.from_expr(f))
    return mod["main"].checked_type


def ret(expr, params=None):
    return typed(expr, params).ret_type


def test_conv_block_types_and_infers_parameter_shapes():
    x = relay.var("x", shape=(1, 3, 32, 32))
    w, g, b, m, v = (relay.var(n) for n in ("w", "g", "b", "m", "v"))
    y = relay.nn.conv2d(x, w, strides=2, padding=1, channels=16, kernel_size=3)
    y = relay.nn.relu(relay.nn.batch_norm(y, g, b, m, v)[0])
    y = relay.nn.max_pool2d(y, pool_size=2, strides=2)
    y = relay.nn.batch_flatten(y)
    fc = relay.var("fc")
    y = relay.nn.softmax(relay.nn.dense(y, fc, units=10))
    ft = typed(y, [x, w, g, b, m, v, fc])
    assert ft.ret_type == T((1, 10))
    assert ft.arg_types[1] == T((16, 3, 3, 3))
    assert ft.arg_types[2:6] == (T((16,)),) * 4
    assert ft.arg_types[6] == T((10, 16 * 8 * 8))


def test_literal_takes_its_context_dtype():
    x = relay.var("x", shape=(2, 3), dtype="float16")
    assert ret(relay.multiply(x, 2), [x]) == T((2, 3), "float16")
    assert ret(relay.where(relay.greater(x, 0), x, 0), [x]) == T((2, 3), "float16")
    assert ret(relay.nn.pad(x, ((1, 1), (0, 0))), [x]) == T((4, 3), "float16")


def test_tuple_results():
    x = relay.var("x", shape=(6, 4))
    parts = relay.split(x, [1, 4])
    assert ret(parts.astuple(), [x]) == TupleType((T((1, 4)), T((3, 4)), T((2, 4))))
    assert ret(parts[2], [x]) == T((2, 4))
    assert ret(relay.concatenate([parts[0], parts[2]], axis=0), [x]) == T((3, 4))
    assert ret(relay.stack([x, x], axis=1), [x]) == T((6, 2, 4))
    mv = relay.mean_variance(x, axis=0)
    assert ret(mv.astuple(), [x]) == TupleType((T((4,)), T((4,))))
    assert ret(relay.std(x, axis=1, keepdims=True), [x]) == T((6, 1))
    assert ret(relay.nn.dropout(x), [x]) == T((6, 4))


def test_creation_ops():
    assert ret(relay.arange(5), []) == T((5,))
    assert ret(relay.arange(1, 10, 2, dtype="int32"), []) == T((5,), "int32")
    assert ret(relay.zeros((2, 3), "int8"), []) == T((2, 3), "int8")
    assert ret(relay.full(3, (2,), "int64"), []) == T((2,), "int64")


def test_transforms_chain():
    x = relay.var("x", shape=(2, 3, 4))
    y = relay.reshape(x, (0, -1))
    y = relay.transpose(y)
    y = relay.expand_dims(y, 0)
    y = relay.strided_slice(y, [0, 2], [1, 10])
    y = relay.take(y, relay.const([0, 1], "int32"), axis=2)
    assert ret(y, [x]) == T((1, 8, 2))  # (2, 12) -> (12, 2) -> (1, 12, 2) -> (1, 8, 2)


def test_dynamic_dims_flow_through():
    x = relay.var("x", relay.TensorType((Any, 16)))
    w = relay.var("w", shape=(8, 16))
    assert ret(relay.sum(relay.nn.dense(x, w), axis=0), [x, w]) == T((8,))
    assert ret(relay.reshape(x, (-1, 4)), [x]) == T((Any, 4))


def test_hand_built_call_without_attrs_uses_the_defaults():
    x = relay.var("x", shape=(2, 3))
    assert ret(Call(get_op("sum"), (x,)), [x]) == T(())
    assert ret(Call(get_op("nn.softmax"), (x,)), [x]) == T((2, 3))
    with pytest.raises(RelayTypeError, match="clip: missing required attribute a_min"):
        ret(Call(get_op("clip"), (x,)), [x])


def test_unannotated_parameter_is_generalized_not_an_error():
    x = relay.var("x")
    assert isinstance(typed(relay.nn.relu(x), [x]), FuncType)


@pytest.mark.parametrize(
    "build,message",
    [
        (
            lambda: relay.add(relay.var("x", shape=(2, 3)), relay.var("y", shape=(4, 3))),
            r"add: shapes \(2, 3\) and \(4, 3\) do not broadcast",
        ),
        (
            lambda: relay.nn.conv2d(
                relay.var("x", shape=(1, 3, 8, 8)), relay.var("w", shape=(8, 4, 3, 3))
            ),
            r"nn.conv2d: input channels 3 do not match weight's 4 \(groups=1\)",
        ),
        (
            lambda: relay.sum(relay.var("x", shape=(2, 3)), axis=3),
            "sum: axis 3 is out of range for a rank-2 tensor",
        ),
        (
            lambda: relay.reshape(relay.var("x", shape=(2, 3)), (4, 2)),
            r"reshape: cannot reshape 6 elements into \(4, 2\)",
        ),
        (
            lambda: relay.nn.dense(relay.var("x", shape=(1, 5)), relay.var("w", shape=(3, 4))),
            "nn.dense: the input's last dimension 5 does not match the weight's 4",
        ),
        (
            lambda: relay.multiply(
                relay.var("x", shape=(2,)), relay.var("y", shape=(2,), dtype="int32")
            ),
            "multiply: .*float32.*int32|multiply: .*int32.*float32",
        ),
    ],
)
def test_errors_name_the_op(build, message):
    expr = build()
    with pytest.raises(RelayTypeError, match=message):
        typed(relay.Function(list(_free_vars(expr)), expr))


def _free_vars(expr):
    from relay_nb.analysis.free_vars import free_vars

    return free_vars(expr)


# --- in text ---------------------------------------------------------

TVM_STYLE = """#[version = "0.0.5"]
def @main(%data: Tensor[(1, 3, 32, 32), float32], %w: Tensor[(8, 3, 3, 3), float32],
          %b: Tensor[(8), float32], %fc: Tensor[(10, 128), float32]) {
  %0 = nn.conv2d(%data, %w, strides=[2, 2], padding=[1, 1, 1, 1], channels=8, kernel_size=[3, 3]);
  %1 = nn.bias_add(%0, %b);
  %2 = nn.relu(%1);
  %3 = nn.max_pool2d(%2, pool_size=[2, 2], strides=[2, 2], padding=[0, 0, 0, 0]);
  %4 = nn.pad(%3, 0f, pad_width=[[0, 0], [0, 0], [1, 1], [1, 1]]);
  %5 = strided_slice(%4, begin=[0, 0, 1, 1], end=[1, 8, 5, 5], strides=[1], axes=None);
  %6 = reshape(%5, newshape=[1, -1]);
  %7 = nn.dense(%6, %fc, units=10);
  %8 = split(%7, indices_or_sections=[4], axis=1);
  %9 = %8.1;
  %10 = sum(%9, axis=[1], keepdims=True);
  %11 = clip(%10, a_min=0f, a_max=6f);
  %12 = cast(%11, dtype="float16");
  multiply(%12, 2)
}
"""


def test_tvm_style_text_types():
    mod = infer_type.InferType()(parser.parse(TVM_STYLE))
    assert mod["main"].checked_type.ret_type == T((1, 1), "float16")


def test_attribute_errors_in_text_point_at_the_attribute():
    with pytest.raises(
        relay.RelayError, match="unknown attribute stride; did you mean strides?"
    ) as info:
        parser.parse_expr(
            "fn (%x: Tensor[(1, 3, 8, 8), float32], %w) { nn.conv2d(%x, %w, stride=[1, 1]) }"
        )
    assert (info.value.line, info.value.column) == (1, 64)  # at `stride=`


def test_type_errors_in_text_name_op_and_line():
    text = '#[version = "0.0.5"]\ndef @main(%x: Tensor[(2, 3), float32]) {\n  reshape(%x, newshape=[4, 2])\n}\n'
    with pytest.raises(
        RelayTypeError, match=r"reshape: cannot reshape 6 elements into \(4, 2\)"
    ) as info:
        infer_type.InferType()(parser.parse(text))
    assert info.value.line == 3


def _roundtrip_cases():
    x = relay.var("x", shape=(1, 3, 8, 8))
    c = [relay.var(n, shape=(3,)) for n in "abcd"]
    return [
        relay.arange(5),
        relay.arange(relay.const(1.0), relay.const(4.0)),
        relay.image.resize2d(x, (4, 4)),
        relay.nn.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1))),
        relay.strided_slice(x, [0], [1]),
        relay.split(x, [1, 2], axis=1).astuple(),
        relay.split(x, 3, axis=1).astuple(),
        relay.sum(x, axis=[1, 2], keepdims=True),
        relay.clip(x, 0, 6),
        relay.cast(x, "int8"),
        relay.zeros((2,), "float32"),
        relay.nn.dropout(x),
        relay.nn.batch_norm(x, *c)[0],
        relay.nn.conv2d_transpose(x, relay.var("w", shape=(3, 2, 2, 2)), strides=2),
        relay.take(x, relay.const([0], "int32"), axis=1),
        relay.variance(x, axis=1),
        relay.nn.upsampling(x, 2, 2),
        relay.layout_transform(x, "NCHW", "NCHW1c"),
        relay.nn.adaptive_avg_pool2d(x, 1),
        relay.where(relay.greater(x, 0), x, 0),
        relay.full(1.5, (2,), "float32"),
        relay.nn.leaky_relu(x),
    ]


@pytest.mark.parametrize("index", range(len(_roundtrip_cases())))
def test_builder_programs_print_and_parse_back(index):
    expr = _roundtrip_cases()[index]
    m1 = infer_type.InferType()(
        relay.IRModule.from_expr(relay.Function(list(_free_vars(expr)), expr))
    )
    m2 = infer_type.InferType()(parser.parse(m1.astext()))
    assert relay.structural_equal(m1["main"], m2["main"], map_free_vars=True)
    assert m1["main"].checked_type == m2["main"].checked_type
