"""The rest of nn (relay_nb.op.nn_extra): relations accept and reject as TVM's do, dynamic
dims stay dynamic, builders carry TVM's defaults, printed calls parse back unchanged."""

from __future__ import annotations

import pytest

import relay_nb as relay
from relay_nb.errors import RelayError, RelayTypeError
from relay_nb.ir.ty import Any, IncompleteType
from relay_nb.op.registry import OpPattern, get_op

try:
    from ._reporter import T, infer, solve
except ImportError:
    from _reporter import T, infer, solve


SHAPES = [
    # op, arg types, attrs, expected output
    ("nn.lrn", [T((1, 8, 4, 4))], {"size": 3}, T((1, 8, 4, 4))),
    ("nn.l2_normalize", [T((2, 5))], {"eps": 1e-6, "axis": [1]}, T((2, 5))),
    ("nn.group_norm", [T((2, 6, 3)), T((6,)), T((6,))], {"num_groups": 3}, T((2, 6, 3))),
    ("nn.instance_norm", [T((2, 3, 4, 4)), T((3,)), T((3,))], {}, T((2, 3, 4, 4))),
    ("nn.depth_to_space", [T((1, 8, 2, 3))], {"block_size": 2}, T((1, 2, 4, 6))),
    ("nn.depth_to_space", [T((1, 2, 3, 8))], {"block_size": 2, "layout": "NHWC"}, T((1, 4, 6, 2))),
    ("nn.depth_to_space", [T((Any, 8, Any, 3))], {"block_size": 2}, T((Any, 2, Any, 6))),
    ("nn.space_to_depth", [T((1, 2, 4, 6))], {"block_size": 2}, T((1, 8, 2, 3))),
    ("nn.space_to_depth", [T((1, Any, 4, 6))], {"block_size": 2}, T((1, Any, 2, 3))),
    ("nn.mirror_pad", [T((3, 4))], {"pad_width": [[1, 2], [0, 3]]}, T((6, 7))),
    ("nn.mirror_pad", [T((Any, 4))], {"pad_width": [[1, 2], [0, 1]]}, T((Any, 5))),
    ("nn.fast_softmax", [T((2, 5))], {"axis": 0}, T((2, 5))),
    (
        "nn.upsampling3d",
        [T((1, 2, 2, 3, 4))],
        {"scale_d": 2.0, "scale_h": 1.5, "scale_w": 0.5},
        T((1, 2, 4, 5, 2)),
    ),
    ("nn.adaptive_avg_pool1d", [T((1, 3, 10))], {"output_size": [4]}, T((1, 3, 4))),
    ("nn.adaptive_max_pool1d", [T((1, 10, 3))], {"output_size": [4], "layout": "NWC"}, T((1, 4, 3))),
    ("nn.adaptive_avg_pool1d", [T((1, 3, 10))], {}, T((1, 3, 10))),
    ("nn.adaptive_avg_pool3d", [T((1, 3, 4, 5, 6))], {"output_size": [1]}, T((1, 3, 1, 1, 1))),
    ("nn.adaptive_max_pool3d", [T((Any, 3, 4, 5, 6))], {"output_size": [2, 3, 1]}, T((Any, 3, 2, 3, 1))),
    ("nn.conv1d_transpose", [T((1, 4, 5)), T((4, 3, 3))], {"strides": [2]}, T((1, 3, 11))),
    (
        "nn.conv1d_transpose",
        [T((1, 4, 5)), T((4, 3, 3))],
        {"strides": [2], "padding": [1, 1], "output_padding": [1]},
        T((1, 3, 10)),
    ),
    (
        "nn.conv3d_transpose",
        [T((1, 4, 2, 3, 3)), T((4, 2, 2, 2, 2))],
        {"strides": [2, 2, 2], "groups": 2},
        T((1, 4, 4, 6, 6)),
    ),
    ("nn.dilate", [T((3, 4))], {"strides": [2, 3]}, T((5, 10))),
    ("nn.dilate", [T((Any, 4))], {"strides": [2, 1]}, T((Any, 4))),
    (
        "nn.space_to_batch_nd",
        [T((2, 3, 5, 7))],
        {"block_shape": [2, 3], "paddings": [[0, 1], [1, 0]]},
        T((12, 2, 2, 7)),
    ),
    (
        "nn.batch_to_space_nd",
        [T((12, 2, 2, 7))],
        {"block_shape": [2, 3], "crops": [[0, 1], [1, 0]]},
        T((2, 3, 5, 7)),
    ),
    ("nn.fifo_buffer", [T((1, 2)), T((5, 2))], {"axis": 0}, T((5, 2))),
    ("nn.fifo_buffer", [T((3, 2)), T((3, 6))], {"axis": -1}, T((3, 6))),
]


@pytest.mark.parametrize("op, args, attrs, expected", SHAPES, ids=[c[0] for c in SHAPES])
def test_shapes(op, args, attrs, expected):
    assert infer(op, *args, **attrs) == expected


ERRORS = [
    ("nn.lrn", [T((1, 8, 4, 4))], {"axis": 4}, "axis 4 is out of range"),
    ("nn.l2_normalize", [T((2, 5))], {"eps": 1e-6, "axis": [2]}, "axis 2 is out of range"),
    ("nn.group_norm", [T((2, 6, 3)), T((6,)), T((6,))], {"num_groups": 4}, "6 channels cannot be split into 4 groups"),
    ("nn.group_norm", [T((2, 6, 3)), T((5,)), T((6,))], {"num_groups": 2}, "gamma has shape"),
    ("nn.instance_norm", [T((2, 3)), T((3,)), T((3,))], {}, "data must have rank 3 or more"),
    ("nn.depth_to_space", [T((1, 6, 2, 2))], {"block_size": 2}, "6 channels are not divisible by block_size\\^2 = 4"),
    ("nn.depth_to_space", [T((1, 8, 2, 2))], {"block_size": 2, "mode": "XYZ"}, "mode must be DCR or CRD"),
    ("nn.depth_to_space", [T((8, 2, 2))], {"block_size": 2}, "data must have rank 4"),
    ("nn.space_to_depth", [T((1, 2, 5, 4))], {"block_size": 2}, "spatial size 5 is not divisible"),
    ("nn.space_to_depth", [T((1, 2, 4, 4))], {"block_size": 2, "layout": "NCHW4c"}, "layout 'NCHW4c' is not supported"),
    ("nn.mirror_pad", [T((3, 4))], {"pad_width": [[1, 2]]}, "pad_width has 1 entries for a rank-2"),
    ("nn.mirror_pad", [T((3, 4))], {"pad_width": [[3, 0], [0, 0]], "mode": "REFLECT"}, "needs at most 2"),
    ("nn.mirror_pad", [T((3, 4))], {"pad_width": [[4, 0], [0, 0]]}, "needs at most 3"),
    ("nn.mirror_pad", [T((3, 4))], {"pad_width": [[0, 0], [0, 0]], "mode": "EDGE"}, "SYMMETRIC or REFLECT"),
    ("nn.fast_softmax", [T((2, 5))], {"axis": 2}, "axis 2 is out of range"),
    ("nn.upsampling3d", [T((1, 2, 2, 3))], {"scale_d": 2.0, "scale_h": 2.0, "scale_w": 2.0}, "rank 5"),
    ("nn.upsampling3d", [T((1, 2, 2, 3, 3))], {"scale_d": 2.0, "scale_h": 2.0, "scale_w": 2.0, "method": "linear"}, "nearest_neighbor or trilinear"),
    ("nn.adaptive_avg_pool1d", [T((1, 3, 10, 1))], {"output_size": [4]}, "data must have rank 3"),
    ("nn.adaptive_avg_pool3d", [T((1, 3, 4, 4, 4))], {"output_size": [1, 2]}, "output_size must have 1 or 3 values"),
    ("nn.conv1d_transpose", [T((1, 4, 5)), T((3, 3, 3))], {}, "input channels 4 do not match weight's 3"),
    ("nn.conv3d_transpose", [T((1, 4, 5, 5)), T((4, 3, 3, 3, 3))], {}, "data must have rank 5"),
    ("nn.dilate", [T((3, 4))], {"strides": [2]}, "strides has 1 values for a rank-2 tensor"),
    ("nn.dilate", [T((3, 4))], {"strides": [0, 1]}, "strides must be positive"),
    ("nn.space_to_batch_nd", [T((2, 3, 5, 7))], {"block_shape": [2, 3], "paddings": [[0, 0], [0, 0]]}, "padded spatial dim 0 \\(3\\) is not divisible by its block 2"),
    ("nn.space_to_batch_nd", [T((2, 4, 6))], {"block_shape": [2, 3], "paddings": [[0, 0]]}, "paddings must be given for each of the 2 block dims"),
    ("nn.batch_to_space_nd", [T((7, 2, 2, 7))], {"block_shape": [2, 3], "crops": [[0, 0], [0, 0]]}, "batch 7 is not divisible by the block size 6"),
    ("nn.batch_to_space_nd", [T((6, 2, 2))], {"block_shape": [2, 3], "crops": [[0, 0], [4, 3]]}, "crops \\[4, 3\\] exceed"),
    ("nn.fifo_buffer", [T((1, 2)), T((5, 3))], {"axis": 0}, "differ on axis 1"),
    ("nn.fifo_buffer", [T((5, 2)), T((5, 2))], {"axis": 0}, "must be shorter than the buffer"),
    ("nn.fifo_buffer", [T((2,)), T((5, 2))], {"axis": 0}, "the same rank"),
]


@pytest.mark.parametrize("op, args, attrs, message", ERRORS, ids=[c[0] for c in ERRORS])
def test_errors(op, args, attrs, message):
    with pytest.raises(RelayTypeError, match=message):
        infer(op, *args, **attrs)


def test_norm_parameters_get_their_types_from_the_data():
    solved, types = solve(
        "nn.group_norm", T((2, 6, 3)), IncompleteType(), IncompleteType(), num_groups=2
    )
    assert solved and types[1] == T((6,)) and types[2] == T((6,))


def test_patterns():
    assert get_op("nn.depth_to_space").get_attr("TOpPattern") == OpPattern.INJECTIVE
    assert get_op("nn.mirror_pad").get_attr("TOpPattern") == OpPattern.INJECTIVE
    assert get_op("nn.lrn").get_attr("TOpPattern") == OpPattern.OPAQUE


def test_builders_have_tvm_defaults():
    x = relay.var("x", shape=(1, 8, 4, 4))
    y = relay.nn.lrn(x)
    assert (y.attrs.size, y.attrs.axis, y.attrs.bias, y.attrs.alpha, y.attrs.beta) == (
        5,
        1,
        2.0,
        0.00001,
        0.75,
    )
    assert y.attrs.type_key == "relay.attrs.LRNAttrs"
    assert relay.nn.l2_normalize(x, 1e-3).attrs.axis is None  # TVM's null array: every axis
    assert relay.nn.depth_to_space(x, 2).attrs.mode == "DCR"
    assert relay.nn.mirror_pad(x, [(0, 0)] * 4).attrs.mode == "SYMMETRIC"
    w = relay.var("w", shape=(8, 2, 3))
    t = relay.nn.conv1d_transpose(relay.var("d", shape=(1, 8, 5)), w)
    assert t.attrs.kernel_layout == "IOW" and t.attrs.type_key == "relay.attrs.Conv1DTransposeAttrs"
    assert relay.nn.space_to_batch_nd(x, [2, 2], [[0, 0], [0, 0]]).attrs.pad_value == 0.0


def _program(expr):
    params = relay.analysis.free_vars(expr)
    return relay.transform.InferType()(relay.IRModule.from_expr(relay.Function(params, expr)))


def _roundtrip_cases():
    x = relay.var("x", shape=(1, 8, 4, 4))
    v = relay.var("v", shape=(8,))
    x5 = relay.var("x5", shape=(1, 2, 2, 4, 4))
    return [
        relay.nn.lrn(x, size=3, alpha=0.001),
        relay.nn.l2_normalize(x, 1e-6, axis=[1, 2]),
        relay.nn.l2_normalize(x, 1e-6),
        relay.nn.group_norm(x, v, v, num_groups=4, epsilon=1e-3),
        relay.nn.instance_norm(x, v, v, center=False),
        relay.nn.depth_to_space(x, 2, mode="CRD"),
        relay.nn.space_to_depth(x, 2, layout="NHWC"),
        relay.nn.mirror_pad(x, [(0, 0), (0, 0), (1, 1), (2, 0)], mode="REFLECT"),
        relay.nn.fast_softmax(x, axis=1),
        relay.nn.upsampling3d(x5, 2, 2, 2, method="trilinear"),
        relay.nn.adaptive_max_pool1d(relay.var("y", shape=(1, 3, 9)), 4),
        relay.nn.adaptive_avg_pool3d(x5, (1, 2, 2)),
        relay.nn.conv1d_transpose(
            relay.var("d", shape=(1, 8, 5)), relay.var("w", shape=(8, 2, 3)), strides=2,
            output_padding=1,
        ),
        relay.nn.conv3d_transpose(x5, relay.var("w3", shape=(2, 3, 1, 2, 2)), strides=(1, 2, 2)),
        relay.nn.dilate(x, (1, 1, 2, 2), dilation_value=1.5),
        relay.nn.space_to_batch_nd(x, [2, 2], [[0, 0], [1, 1]], pad_value=-1.0),
        relay.nn.batch_to_space_nd(relay.var("b", shape=(4, 2, 2, 3)), [2, 2], [[0, 1], [1, 0]]),
        relay.nn.fifo_buffer(relay.var("f", shape=(1, 8, 4, 1)), x, axis=3),
    ]


@pytest.mark.parametrize("index", range(len(_roundtrip_cases())))
def test_printed_calls_parse_back(index):
    m1 = _program(_roundtrip_cases()[index])
    text = m1.astext()
    m2 = relay.transform.InferType()(relay.parse(text))
    assert relay.structural_equal(m1["main"], m2["main"], map_free_vars=True)
    assert m2.astext() == text


def test_text_with_attributes_and_a_located_error():
    text = """
    def @main(%x: Tensor[(1, 6, 4, 4), float32]) {
      nn.depth_to_space(%x, block_size=2)
    }
    """
    with pytest.raises(RelayError, match="6 channels are not divisible") as info:
        relay.transform.InferType()(relay.parse(text))
    assert info.value.line == 3


def test_unknown_attribute_is_rejected_at_parse_time():
    with pytest.raises(RelayError, match="unknown attribute blocksize"):
        relay.parse("fn (%x: Tensor[(1, 8, 2, 2), float32]) { nn.depth_to_space(%x, blocksize=2) }")
