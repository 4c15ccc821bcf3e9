"""qnn.*: relations (accepts and TVM's rejections), attribute schemas, builders in TVM's
``relay.qnn.op`` layout, text round trips, and qnn ops inside JIT-built programs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import relay_nb as relay
from relay_nb.errors import RelayTypeError
from relay_nb.ir.ty import Any, TupleType
from relay_nb.op.registry import OpPattern, get_op, list_ops

try:
    from ._reporter import T, infer, literal
except ImportError:
    from _reporter import T, infer, literal

S = T((), "float32")  # a scale
Z = T((), "int32")  # a zero point


def test_all_26_tvm_qnn_ops_are_registered_with_numpy_implementations():
    names = Path(relay.op.__path__[0], "tvm_ops.txt").read_text().split()
    tvm = [n for n in names if n.startswith("qnn.")]
    assert len(tvm) == 26 and set(tvm) <= set(list_ops())
    for name in tvm:
        assert get_op(name).get_attr("impl") is not None, name
        assert get_op(name).get_attr("type_rel") is not None, name


def test_patterns_as_tvm():
    assert get_op("qnn.add").get_attr("TOpPattern") == OpPattern.BROADCAST
    assert get_op("qnn.conv2d").get_attr("TOpPattern") == OpPattern.OUT_ELEMWISE_FUSABLE
    assert get_op("qnn.requantize").get_attr("TOpPattern") == OpPattern.OPAQUE


# --- relations: accepted -----------------------------------------------------------------

ACCEPT = [
    ("qnn.quantize", (T((2, 3)), S, Z), {"out_dtype": "uint8"}, T((2, 3), "uint8")),
    (
        "qnn.quantize",
        (T((2, 3)), T((3,)), T((3,), "int32")),
        {"out_dtype": "int8"},
        T((2, 3), "int8"),
    ),
    ("qnn.quantize", (T((2, 3)), T((2,)), Z), {"out_dtype": "int8", "axis": 0}, T((2, 3), "int8")),
    (
        "qnn.quantize",
        (T((Any, 3)), S, T((), literal())),
        {"out_dtype": "int8"},
        T((Any, 3), "int8"),
    ),
    ("qnn.dequantize", (T((4,), "int8"), S, Z), {"out_dtype": "float32"}, T((4,))),
    (
        "qnn.dequantize",
        (T((4, 2), "uint8"), T((1,)), Z),
        {"out_dtype": "float16"},
        T((4, 2), "float16"),
    ),
    ("qnn.requantize", (T((2, 3), "int32"), S, Z, S, Z), {"out_dtype": "int8"}, T((2, 3), "int8")),
    (
        "qnn.requantize",
        (T((2, 3), "int32"), T((2,)), T((2,), "int32"), S, Z),
        {"out_dtype": "uint8", "axis": 0},
        T((2, 3), "uint8"),
    ),
    (
        "qnn.simulated_quantize",
        (T((2, 3)), T((), "int32"), T((1,)), T((1,), "int32")),
        {},
        T((2, 3)),
    ),
    ("qnn.add", (T((2, 3), "int8"), T((3,), "int8"), S, Z, S, Z, S, Z), {}, T((2, 3), "int8")),
    (
        "qnn.mul",
        (T((2, 3), "uint8"), T((2, 3), "uint8"), T((3,)), T((3,), "int32"), S, Z, S, Z),
        {},
        T((2, 3), "uint8"),
    ),
    (
        "qnn.concatenate",
        (TupleType((T((2,), "int8"), T((3,), "int8"))), TupleType((S, S)), TupleType((Z, Z)), S, Z),
        {"axis": 0},
        T((5,), "int8"),
    ),
    (
        "qnn.dense",
        (T((4, 8), "int8"), T((16, 8), "int8"), Z, Z, S, S),
        {"units": 16, "out_dtype": "int32"},
        T((4, 16), "int32"),
    ),
    (
        "qnn.dense",
        (T((4, 8), "uint8"), T((16, 8), "int8"), Z, T((16,), "int32"), S, T((16,))),
        {"out_dtype": "int32"},
        T((4, 16), "int32"),
    ),
    (
        "qnn.contrib_dense_pack",
        (T((4, 8), "int8"), T((4, 2, 4, 4), "int8"), Z, Z, S, S),
        {"out_dtype": "int32", "weight_layout": "NC4n4c"},
        T((4, 16), "int32"),
    ),
    (
        "qnn.batch_matmul",
        (T((2, 4, 8), "int8"), T((2, 5, 8), "int8"), Z, Z, S, S),
        {"out_dtype": "int32"},
        T((2, 4, 5), "int32"),
    ),
    (
        "qnn.conv2d",
        (T((1, 3, 8, 8), "int8"), T((4, 3, 3, 3), "int8"), Z, Z, S, T((4,))),
        {"out_dtype": "int32", "padding": [1, 1, 1, 1]},
        T((1, 4, 8, 8), "int32"),
    ),
    (
        "qnn.conv2d_transpose",
        (T((1, 3, 4, 4), "uint8"), T((3, 2, 2, 2), "int8"), Z, Z, S, S),
        {"out_dtype": "int32", "strides": [2, 2]},
        T((1, 2, 8, 8), "int32"),
    ),
    (
        "qnn.avg_pool2d",
        (T((1, 8, 8, 3), "int8"), S, Z, S, Z),
        {"pool_size": [2, 2], "strides": [2, 2], "layout": "NHWC"},
        T((1, 4, 4, 3), "int8"),
    ),
    ("qnn.softmax", (T((2, 5), "int8"), S, Z, S, Z), {}, T((2, 5), "int8")),
    ("qnn.leaky_relu", (T((2, 5), "uint8"), S, Z, S, Z), {"alpha": 0.1}, T((2, 5), "uint8")),
    ("qnn.tanh", (T((Any, 5), "int8"), S, Z, S, Z), {}, T((Any, 5), "int8")),
    # dynamic dimensions flow through, also into per-channel parameters
    (
        "qnn.quantize",
        (T((Any, Any)), T((Any,)), T((Any,), "int32")),
        {"out_dtype": "int8"},
        T((Any, Any), "int8"),
    ),
    (
        "qnn.dense",
        (T((Any, 8), "int8"), T((Any, 8), "int8"), Z, T((Any,), "int32"), S, T((Any,))),
        {"out_dtype": "int32"},
        T((Any, Any), "int32"),
    ),
    (
        "qnn.conv2d",
        (T((Any, 3, Any, 8), "int8"), T((Any, 3, 3, 3), "int8"), Z, Z, S, T((Any,))),
        {"out_dtype": "int32"},
        T((Any, Any, Any, 6), "int32"),
    ),
    (
        "qnn.conv2d",
        (T((1, 4, 8, 8), "int8"), T((4, 1, 3, 3), "int8"), Z, Z, S, T((4,))),
        {"out_dtype": "int32", "groups": 4, "channels": 4},
        T((1, 4, 6, 6), "int32"),
    ),
    (
        "qnn.contrib_dense_pack",
        (T((Any, 8), "int8"), T((Any, 2, 4, 4), "int8"), Z, Z, S, S),
        {"out_dtype": "int32"},
        T((Any, Any), "int32"),
    ),
    (
        "qnn.concatenate",
        (
            TupleType((T((Any,), "int8"), T((3,), "int8"))),
            TupleType((S, S)),
            TupleType((Z, Z)),
            S,
            Z,
        ),
        {"axis": 0},
        T((Any,), "int8"),
    ),
]


@pytest.mark.parametrize("op, args, attrs, expected", ACCEPT, ids=[c[0] for c in ACCEPT])
def test_relation_accepts(op, args, attrs, expected):
    assert infer(op, *args, **attrs) == expected


# --- relations: TVM's rejections ------------------------------------------------------------

REJECT = [
    (
        "qnn.quantize",
        (T((2,), "int8"), S, Z),
        {"out_dtype": "int8"},
        "Input type should be one of float32 but was int8",
    ),
    (
        "qnn.quantize",
        (T((2,)), S, Z),
        {"out_dtype": "float32"},
        r"Output type should be one of \[int8, uint8, int16, uint16, int32\]",
    ),
    (
        "qnn.quantize",
        (T((2, 3)), T((2,)), Z),
        {"out_dtype": "int8"},
        r"output_scale must be a scalar or have shape \(3,\)",
    ),
    (
        "qnn.quantize",
        (T((2, 3)), T((3,)), Z),
        {"out_dtype": "int8", "axis": 2},
        "axis 2 is out of range",
    ),
    (
        "qnn.quantize",
        (T((2,)), T((), "int32"), Z),
        {"out_dtype": "int8"},
        "output_scale must have dtype float32",
    ),
    (
        "qnn.dequantize",
        (T((2,)), S, Z),
        {"out_dtype": "float32"},
        "Input type should be one of the quantized types",
    ),
    (
        "qnn.dequantize",
        (T((2,), "int8"), S, Z),
        {"out_dtype": "int8"},
        r"Output type should be one of \[float16, float32\]",
    ),
    (
        "qnn.requantize",
        (T((2,), "int32"), S, Z, T((2,)), Z),
        {"out_dtype": "int8"},
        "output_scale must be a scalar",
    ),
    (
        "qnn.requantize",
        (T((2,), "int32"), S, Z, S, Z),
        {"out_dtype": "int8", "rounding": "DOWN"},
        "rounding must be one of None, UPWARD, TONEAREST",
    ),
    (
        "qnn.requantize",
        (T((2,), "int32"), S, Z, S, Z),
        {},
        r"Output type should be one of \[int8, uint8, int16, int32\] but was unset",
    ),
    (
        "qnn.requantize",
        (T((2,), "float32"), S, Z, S, Z),
        {"out_dtype": "int8"},
        "Input type should be one of",
    ),
    ("qnn.add", (T((2, 3), "int8"), T((4,), "int8"), S, Z, S, Z, S, Z), {}, r"do not broadcast"),
    (
        "qnn.add",
        (T((2, 3), "int8"), T((3,), "int8"), S, Z, S, Z, T((3,)), Z),
        {},
        "output_scale must be a scalar",
    ),
    (
        "qnn.add",
        (T((2, 3), "int8"), T((3,), "int8"), T((3,)), Z, S, Z, S, Z),
        {"lhs_axis": 5},
        "lhs_axis 5 is out of range",
    ),
    (
        "qnn.concatenate",
        (TupleType((T((2,), "int8"),)), S, TupleType((Z,)), S, Z),
        {},
        "requires a tuple of scales as the second argument",
    ),
    (
        "qnn.concatenate",
        (TupleType((T((2,), "int8"), T((2,), "int8"))), TupleType((S,)), TupleType((Z,)), S, Z),
        {},
        "2 tensors but 1 input scales",
    ),
    (
        "qnn.dense",
        (T((4, 8)), T((16, 8), "int8"), Z, Z, S, S),
        {"out_dtype": "int32"},
        r"Expected quantized dense type\(int8, uint8, int16, uint16\) for input but was float32",
    ),
    (
        "qnn.dense",
        (T((4, 8), "int8"), T((16, 8), "int8"), Z, Z, S, S),
        {"out_dtype": "int8"},
        r"for output but was int8",
    ),
    (
        "qnn.dense",
        (T((4, 8), "int8"), T((16, 8), "int8"), Z, Z, S, T((4,))),
        {"out_dtype": "int32"},
        r"kernel_scale must be a scalar or have shape \(16,\)",
    ),
    (
        "qnn.dense",
        (T((4, 8), "int8"), T((16, 7), "int8"), Z, Z, S, S),
        {"out_dtype": "int32"},
        "does not match the weight",
    ),
    (
        "qnn.dense",
        (T((4, 8), "int8"), T((16, 8), "int8"), T((4,), "int32"), Z, S, S),
        {"out_dtype": "int32"},
        "input_zero_point must be a scalar",
    ),
    (
        "qnn.batch_matmul",
        (T((2, 4, 8), "int8"), T((2, 5, 8), "int8"), Z, Z, S, S),
        {},
        r"for output but was unset",
    ),
    (
        "qnn.conv2d",
        (T((1, 3, 8, 8), "int8"), T((4, 2, 3, 3), "int8"), Z, Z, S, S),
        {"out_dtype": "int32"},
        "input channels 3 do not match",
    ),
    (
        "qnn.conv2d",
        (T((8,), "int8"), T((8,), "int8"), Z, Z, S, S),
        {"out_dtype": "int32"},
        r"data must have rank 4 \(NCHW\)",
    ),
    (
        "qnn.conv2d_transpose",
        (T((1, 3, 4, 4), "int8"), T((3, 2, 2, 2), "int8"), T((2,), "int32"), Z, S, S),
        {"out_dtype": "int32"},
        "should be scalar or a vector with one element",
    ),
    (
        "qnn.avg_pool2d",
        (T((1, 8, 8, 3), "int32"), S, Z, S, Z),
        {"pool_size": [2, 2]},
        "avg_pool2d type",
    ),
    ("qnn.softmax", (T((2, 5), "uint8"), S, Z, S, Z), {}, r"type\(int8\) for input but was uint8"),
    (
        "qnn.exp",
        (T((2,), "int32"), S, Z, S, Z),
        {},
        r"Expected quantized type\(int8, uint8\) for input but was int32",
    ),
    ("qnn.sqrt", (T((2,), "int8"), T((2,)), Z, S, Z), {}, "scale must be a scalar"),
    (
        "qnn.contrib_dense_pack",
        (T((4, 8, 1), "int8"), T((4, 2, 4, 4), "int8"), Z, Z, S, S),
        {"out_dtype": "int32"},
        "Only 2D data is supported",
    ),
]


@pytest.mark.parametrize("op, args, attrs, message", REJECT, ids=[c[0] for c in REJECT])
def test_relation_rejects(op, args, attrs, message):
    with pytest.raises(RelayTypeError, match=message):
        infer(op, *args, **attrs)


def test_errors_in_text_are_located():
    text = (
        'def @main(%x: Tensor[(2, 3), int8]) {\n  qnn.quantize(%x, 0.5f, 0, out_dtype="int8")\n}\n'
    )
    with pytest.raises(
        RelayTypeError, match="qnn.quantize: Input type should be one of float32"
    ) as info:
        relay.transform.InferType()(relay.parse(text))
    assert info.value.line == 2


# --- builders and text ----------------------------------------------------------------------


def test_builders_live_in_relay_qnn_op_with_tvm_defaults():
    x = relay.var("x", shape=(2, 3), dtype="int32")
    y = relay.qnn.op.requantize(
        x, relay.const(1.0), relay.const(0), relay.const(2.0), relay.const(0)
    )
    assert y.op is get_op("qnn.requantize")
    assert y.attrs.type_key == "relay.attrs.RequantizeAttrs"
    assert (y.attrs.axis, y.attrs.rounding, y.attrs.compute_dtype, y.attrs.out_dtype) == (
        -1,
        "None",
        "None",
        "int8",
    )
    q = relay.qnn.op.quantize(relay.var("f", shape=(2,)), relay.const(0.5), relay.const(0))
    assert q.attrs.out_dtype == "int8" and q.attrs.type_key == "relay.attrs.QuantizeAttrs"
    p = relay.qnn.op.avg_pool2d(x, 1.0, 0, 1.0, 0, (2, 2), (1, 1), (0, 0), (1, 1))
    assert p.attrs.layout == "NHWC" and p.attrs.count_include_pad is True
    assert relay.qnn.op is relay.qnn


def _text_cases():
    x8 = relay.var("x", shape=(1, 3, 4, 4), dtype="int8")
    w8 = relay.var("w", shape=(4, 3, 3, 3), dtype="int8")
    f = relay.var("f", shape=(2, 3))
    q = relay.qnn.op
    s, z = relay.const(np.float32(0.5)), relay.const(np.int32(3))
    vec = relay.const(np.array([0.5, 0.25, 1.0], "float32"))
    return [
        q.quantize(f, vec, relay.const(np.zeros(3, "int32")), axis=1, out_dtype="uint8"),
        q.dequantize(x8, s, z, out_dtype="float16"),
        q.requantize(
            x8, s, z, s, z, axis=1, rounding="TONEAREST", compute_dtype="float32", out_dtype="uint8"
        ),
        q.simulated_quantize(f, s, z, out_dtype="uint8"),
        q.simulated_dequantize(f, s, z, axis=0),
        q.add(x8, x8, s, z, s, z, s, z, lhs_axis=1),
        q.subtract(x8, x8, s, z, s, z, s, z),
        q.mul(x8, x8, s, z, s, z, s, z, rhs_axis=2),
        q.concatenate([x8, x8], [s, s], [z, z], s, z, axis=1),
        q.conv2d(
            x8, w8, z, z, s, s, kernel_size=(3, 3), channels=4, padding=(1, 1), strides=(2, 2)
        ),
        q.conv2d_transpose(
            x8,
            relay.var("v", shape=(3, 2, 2, 2), dtype="int8"),
            z,
            z,
            s,
            s,
            strides=(2, 2),
            out_dtype="int64",
        ),
        q.dense(
            relay.var("d", shape=(2, 8), dtype="uint8"),
            relay.var("k", shape=(4, 8), dtype="int8"),
            z,
            z,
            s,
            s,
            units=4,
        ),
        q.contrib_dense_pack(
            relay.var("d", shape=(2, 8), dtype="uint8"),
            relay.var("k", shape=(1, 2, 4, 4), dtype="int8"),
            z,
            z,
            s,
            s,
            kernel_layout="NC4n4c",
        ),
        q.batch_matmul(
            relay.var("a", shape=(1, 2, 8), dtype="int8"),
            relay.var("b", shape=(1, 3, 8), dtype="int8"),
            z,
            z,
            s,
            s,
        ),
        q.avg_pool2d(x8, s, z, s, z, (2, 2), (2, 2), (0, 0), (1, 1), layout="NCHW", ceil_mode=True),
        q.softmax(x8, s, z, s, z, axis=1),
        q.leaky_relu(x8, 0.125, s, z, s, z),
        q.hardswish(x8, s, z, s, z),
    ]


@pytest.mark.parametrize("index", range(len(_text_cases())))
def test_builder_programs_print_and_parse_back(index):
    expr = _text_cases()[index]
    params = relay.analysis.free_vars(expr)
    m1 = relay.transform.InferType()(relay.IRModule.from_expr(relay.Function(params, expr)))
    m2 = relay.transform.InferType()(relay.parse(m1.astext()))
    assert relay.structural_equal(m1["main"], m2["main"], map_free_vars=True)
    assert m1["main"].checked_type == m2["main"].checked_type


def test_text_with_tvm_style_attributes():
    text = (
        "def @main(%x: Tensor[(1, 4), int8]) {\n"
        '  %0 = qnn.requantize(%x, 0.25f, 0, 0.5f, 1, axis=1, rounding="UPWARD", out_dtype="int8");\n'
        "  qnn.leaky_relu(%0, 0.5f, 1, 0.5f, 1, alpha=0.1f)\n"
        "}\n"
    )
    mod = relay.transform.InferType()(relay.parse(text))
    out = relay.create_executor("interpreter", mod=mod).evaluate()(
        np.array([[4, 5, -6, 100]], "int8")
    )
    # requantize: 4 * 0.5 = 2 -> 3, 2.5 -> 3 + 1 = 4, -3 -> -2, 50 -> 51; then leaky_relu
    # keeps x >= 1 and maps -2 to 0.1 * -2 + 0.9 * 1 = 0.7 -> fixed point: -0.2 -> 0, 0.9 -> 1
    assert out.tolist() == [[3, 4, 1, 51]]


# --- inside a JIT-built program -----------------------------------------------------------


def test_relay_build_runs_qnn_ops_interpreted():
    text = (
        "def @main(%x: Tensor[(2, 4), float32]) {\n"
        '  %0 = qnn.quantize(%x, 0.5f, 0, out_dtype="int8");\n'
        '  %1 = qnn.requantize(%0, 0.5f, 0, 0.25f, 0, out_dtype="int8");\n'
        '  %2 = qnn.dequantize(%1, 0.25f, 0, out_dtype="float32");\n'
        "  add(%2, 1f)\n"
        "}\n"
    )
    mod = relay.parse(text)
    lib = relay.build(mod)
    x = np.array([[0.5, 1.0, -1.0, 100.0], [0, 0.25, 0.75, -0.25]], "float32")
    want = relay.create_executor("interpreter", mod=mod).evaluate()(x)
    assert np.array_equal(lib(x), want)
    # 100 saturates at 127 * 0.5 = 63.5 -> requantized to 127 (at 0.25) = 31.75
    assert want[0].tolist() == [1.5, 2.0, 0.0, 32.75]
    report = lib.report()
    for op in ("qnn.quantize", "qnn.requantize", "qnn.dequantize"):
        assert op in report.fallback_ops or op in report.interpreted_ops, str(report)
    assert "qnn.quantize" in str(report)
