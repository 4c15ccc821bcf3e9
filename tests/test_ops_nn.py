"""nn.* ops: convolution and pooling shapes against the formulas worked by hand, dense /
matmul, per-channel parameters (inferred when unannotated), normalization, pad, ..."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from relay_nb.errors import RelayTypeError
from relay_nb.ir.ty import Any, IncompleteType, TensorType, TupleType
from relay_nb.op.registry import OpPattern, get_op

try:
    from ._reporter import T, infer, literal, solve
except ImportError:
    from _reporter import T, infer, literal, solve


def conv_out(size, k, stride, pad_before, pad_after, dilation):
    """Output length of a convolution (the textbook formula)."""
    return (size + pad_before + pad_after - dilation * (k - 1) - 1) // stride + 1


# --- conv2d -------------------------------------------------------------------------------


@given(
    n=st.integers(1, 2),
    cin_per_group=st.integers(1, 3),
    groups=st.integers(1, 3),
    cout_per_group=st.integers(1, 3),
    h=st.integers(1, 12),
    w=st.integers(1, 12),
    kh=st.integers(1, 4),
    kw=st.integers(1, 4),
    s=st.integers(1, 3),
    d=st.integers(1, 2),
    pad=st.lists(st.integers(0, 2), min_size=4, max_size=4),
    nhwc=st.booleans(),
)
def test_conv2d_shape_matches_formula(
    n, cin_per_group, groups, cout_per_group, h, w, kh, kw, s, d, pad, nhwc
):
    oh = conv_out(h, kh, s, pad[0], pad[2], d)
    ow = conv_out(w, kw, s, pad[1], pad[3], d)
    assume(oh > 0 and ow > 0)
    cin, cout = cin_per_group * groups, cout_per_group * groups
    if nhwc:
        data, weight = T((n, h, w, cin)), T((kh, kw, cin_per_group, cout))
        layouts = {"data_layout": "NHWC", "kernel_layout": "HWIO"}
        expected = T((n, oh, ow, cout))
    else:
        data, weight = T((n, cin, h, w)), T((cout, cin_per_group, kh, kw))
        layouts = {}
        expected = T((n, cout, oh, ow))
    out = infer(
        "nn.conv2d",
        data,
        weight,
        strides=[s, s],
        padding=pad,
        dilation=[d, d],
        groups=groups,
        **layouts,
    )
    assert out == expected


def test_conv2d_padding_forms_and_defaults():
    x, w = T((1, 3, 32, 32)), T((16, 3, 3, 3))
    assert infer("nn.conv2d", x, w) == T((1, 16, 30, 30))
    assert infer("nn.conv2d", x, w, padding=[1]) == T((1, 16, 32, 32))
    assert infer("nn.conv2d", x, w, padding=[1, 0]) == T((1, 16, 32, 30))
    assert infer("nn.conv2d", x, w, padding=[1, 0, 0, 0]) == T((1, 16, 31, 30))
    assert infer("nn.conv2d", x, w, strides=[2, 2], padding=[1, 1]) == T((1, 16, 16, 16))
    assert infer("nn.conv2d", x, w, out_layout="NHWC") == T((1, 30, 30, 16))
    assert infer("nn.conv2d", x, w, out_dtype="float64") == T((1, 16, 30, 30), "float64")


def test_conv2d_depthwise():
    assert infer("nn.conv2d", T((1, 8, 10, 10)), T((8, 1, 3, 3)), groups=8, padding=[1, 1]) == T(
        (1, 8, 10, 10)
    )


def test_conv2d_infers_the_weight_from_channels_and_kernel_size():
    weight = IncompleteType()
    solved, types = solve(
        "nn.conv2d", T((1, 3, 8, 8)), weight, channels=4, kernel_size=[3, 3], padding=[1, 1]
    )
    assert solved
    assert types[1] == T((4, 3, 3, 3))
    assert types[-1] == T((1, 4, 8, 8))
    solved, types = solve(
        "nn.conv2d",
        T((1, 8, 8, 6)),
        IncompleteType(),
        channels=4,
        kernel_size=[1, 1],
        data_layout="NHWC",
        kernel_layout="HWIO",
        groups=2,
    )
    assert types[1] == T((1, 1, 3, 4)) and types[-1] == T((1, 8, 8, 4))


def test_conv2d_waits_for_an_unknown_weight_without_attributes():
    solved, _ = solve("nn.conv2d", T((1, 3, 8, 8)), IncompleteType())
    assert not solved


def test_conv2d_dynamic_dims():
    assert infer("nn.conv2d", T((Any, 3, Any, 8)), T((4, 3, 3, 3))) == T((Any, 4, Any, 6))


def test_conv2d_errors():
    with pytest.raises(
        RelayTypeError, match=r"conv2d: input channels 3 do not match weight's 4 \(groups=1\)"
    ):
        infer("nn.conv2d", T((1, 3, 8, 8)), T((16, 4, 3, 3)))
    with pytest.raises(RelayTypeError, match=r"weight's 2 \(groups=2\), which needs 4"):
        infer("nn.conv2d", T((1, 6, 8, 8)), T((16, 2, 3, 3)), groups=2)
    with pytest.raises(RelayTypeError, match="output channels 5 are not divisible by groups=2"):
        infer("nn.conv2d", T((1, 6, 8, 8)), T((5, 3, 3, 3)), groups=2)
    with pytest.raises(
        RelayTypeError, match="channels=8 does not match the weight's 16 output channels"
    ):
        infer("nn.conv2d", T((1, 3, 8, 8)), T((16, 3, 3, 3)), channels=8)
    with pytest.raises(
        RelayTypeError, match=r"kernel_size \[5, 5\] does not match the weight's \(3, 3\)"
    ):
        infer("nn.conv2d", T((1, 3, 8, 8)), T((16, 3, 3, 3)), kernel_size=[5, 5])
    with pytest.raises(
        RelayTypeError,
        match="the kernel spans 3 \\(with dilation\\) but the padded input has 2 on axis H",
    ):
        infer("nn.conv2d", T((1, 3, 2, 2)), T((16, 3, 3, 3)))
    with pytest.raises(RelayTypeError, match=r"data must have rank 4 \(NCHW\)"):
        infer("nn.conv2d", T((3, 8, 8)), T((16, 3, 3, 3)))
    with pytest.raises(RelayTypeError, match="data_layout 'NCHW4c' is not supported"):
        infer("nn.conv2d", T((1, 3, 8, 8)), T((16, 3, 3, 3)), data_layout="NCHW4c")
    with pytest.raises(RelayTypeError, match="padding must have 1, 2 or 4 values"):
        infer("nn.conv2d", T((1, 3, 8, 8)), T((16, 3, 3, 3)), padding=[1, 1, 1])
    with pytest.raises(RelayTypeError, match="dtypes float32 and float16 do not match"):
        infer("nn.conv2d", T((1, 3, 8, 8)), T((16, 3, 3, 3), "float16"))


def test_conv2d_mixed_precision_via_out_dtype():
    out = infer("nn.conv2d", T((1, 3, 8, 8), "uint8"), T((4, 3, 1, 1), "int8"), out_dtype="int32")
    assert out == T((1, 4, 8, 8), "int32")


def test_conv1d_and_conv3d():
    assert infer("nn.conv1d", T((2, 3, 10)), T((5, 3, 3)), padding=[1]) == T((2, 5, 10))
    assert infer(
        "nn.conv1d", T((2, 10, 3)), T((3, 3, 5)), data_layout="NWC", kernel_layout="WIO"
    ) == T((2, 8, 5))
    out = infer(
        "nn.conv3d", T((1, 2, 8, 9, 10)), T((4, 2, 3, 3, 3)), strides=[2, 2, 2], padding=[1, 1, 1]
    )
    assert out == T(
        (1, 4, conv_out(8, 3, 2, 1, 1, 1), conv_out(9, 3, 2, 1, 1, 1), conv_out(10, 3, 2, 1, 1, 1))
    )
    assert infer(
        "nn.conv3d",
        T((1, 8, 8, 8, 2)),
        T((3, 3, 3, 2, 4)),
        data_layout="NDHWC",
        kernel_layout="DHWIO",
    ) == T((1, 6, 6, 6, 4))


@given(
    h=st.integers(1, 8),
    k=st.integers(1, 4),
    s=st.integers(1, 3),
    p=st.integers(0, 2),
    op=st.integers(0, 1),
    d=st.integers(1, 2),
    groups=st.integers(1, 2),
)
def test_conv2d_transpose_shape_matches_formula(h, k, s, p, op, d, groups):
    assume(op < s)
    expected = (h - 1) * s - 2 * p + d * (k - 1) + op + 1
    assume(expected > 0)
    out = infer(
        "nn.conv2d_transpose",
        T((1, 4, h, h)),
        T((4, 3, k, k)),
        strides=[s, s],
        padding=[p, p],
        output_padding=[op, op],
        dilation=[d, d],
        groups=groups,
    )
    assert out == T((1, 3 * groups, expected, expected))


def test_conv2d_transpose_infers_weight_and_checks_channels():
    solved, types = solve(
        "nn.conv2d_transpose",
        T((1, 4, 5, 5)),
        IncompleteType(),
        channels=6,
        kernel_size=[2, 2],
        strides=[2, 2],
    )
    assert solved and types[1] == T((4, 6, 2, 2)) and types[-1] == T((1, 6, 10, 10))
    with pytest.raises(
        RelayTypeError, match="conv2d_transpose: input channels 4 do not match weight's 3"
    ):
        infer("nn.conv2d_transpose", T((1, 4, 5, 5)), T((3, 6, 2, 2)))


# --- pooling ------------------------------------------------------------------------------


def pool_out(size, k, s, before, after, d, ceil):
    span = d * (k - 1) + 1
    total = size + before + after - span
    return (total + (s - 1 if ceil else 0)) // s + 1


@given(
    h=st.integers(1, 12),
    k=st.integers(1, 4),
    s=st.integers(1, 3),
    pads=st.lists(st.integers(0, 1), min_size=4, max_size=4),
    ceil=st.booleans(),
    kind=st.sampled_from(["max", "avg"]),
    nhwc=st.booleans(),
)
def test_pool2d_shape_matches_formula(h, k, s, pads, ceil, kind, nhwc):
    assume(h + pads[0] + pads[2] >= k and h + pads[1] + pads[3] >= k)
    oh = pool_out(h, k, s, pads[0], pads[2], 1, ceil)
    ow = pool_out(h, k, s, pads[1], pads[3], 1, ceil)
    data = T((2, h, h, 3)) if nhwc else T((2, 3, h, h))
    expected = T((2, oh, ow, 3)) if nhwc else T((2, 3, oh, ow))
    out = infer(
        f"nn.{kind}_pool2d",
        data,
        pool_size=[k, k],
        strides=[s, s],
        padding=pads,
        ceil_mode=ceil,
        layout="NHWC" if nhwc else "NCHW",
    )
    assert out == expected


def test_pool_examples():
    # ResNet's stem pool: 112 -> 56
    assert infer(
        "nn.max_pool2d",
        T((1, 64, 112, 112)),
        pool_size=[3, 3],
        strides=[2, 2],
        padding=[1, 1, 1, 1],
    ) == T((1, 64, 56, 56))
    assert infer(
        "nn.avg_pool2d", T((1, 1, 5, 5)), pool_size=[2, 2], strides=[2, 2], ceil_mode=True
    ) == T((1, 1, 3, 3))
    assert infer("nn.avg_pool2d", T((1, 1, 5, 5)), pool_size=[2, 2], strides=[2, 2]) == T(
        (1, 1, 2, 2)
    )
    assert infer("nn.max_pool2d", T((1, 1, 7, 7)), pool_size=[3, 3], dilation=[2, 2]) == T(
        (1, 1, 3, 3)
    )
    assert infer("nn.max_pool1d", T((1, 2, 9)), pool_size=[3], strides=[3]) == T((1, 2, 3))
    assert infer("nn.avg_pool3d", T((1, 2, 4, 4, 4)), pool_size=[2, 2, 2], strides=[2, 2, 2]) == T(
        (1, 2, 2, 2, 2)
    )
    assert infer("nn.max_pool2d", T((1, 3, Any, 8)), pool_size=[2, 2], strides=[2, 2]) == T(
        (1, 3, Any, 4)
    )


def test_pool_errors():
    with pytest.raises(
        RelayTypeError, match="the pool window spans 3 but the padded input has 2 on axis H"
    ):
        infer("nn.max_pool2d", T((1, 1, 2, 2)), pool_size=[3, 3])
    with pytest.raises(
        RelayTypeError,
        match="max_pool2d: layout 'NCW' is not supported: use a permutation of N, C, H, W",
    ):
        infer("nn.max_pool2d", T((1, 1, 4, 4)), pool_size=[2, 2], layout="NCW")


def test_global_and_adaptive_pools():
    x = T((2, 8, 7, 9))
    assert infer("nn.global_avg_pool2d", x) == T((2, 8, 1, 1))
    assert infer("nn.global_max_pool2d", T((2, 7, 9, 8)), layout="NHWC") == T((2, 1, 1, 8))
    assert infer("nn.adaptive_avg_pool2d", x, output_size=[3, 4]) == T((2, 8, 3, 4))
    assert infer("nn.adaptive_max_pool2d", x, output_size=[2]) == T((2, 8, 2, 2))
    assert infer("nn.adaptive_avg_pool2d", x) == x  # an empty output_size keeps H and W


# --- dense and matmul ---------------------------------------------------------------------


def test_dense():
    assert infer("nn.dense", T((4, 5)), T((3, 5))) == T((4, 3))
    assert infer("nn.dense", T((2, 4, 5)), T((3, 5)), units=3) == T((2, 4, 3))
    with pytest.raises(
        RelayTypeError, match="dense: the input's last dimension 5 does not match the weight's 4"
    ):
        infer("nn.dense", T((1, 5)), T((3, 4)))
    with pytest.raises(RelayTypeError, match="units=7 does not match the weight's 3 output units"):
        infer("nn.dense", T((1, 5)), T((3, 5)), units=7)
    with pytest.raises(RelayTypeError, match="the weight must have rank 2"):
        infer("nn.dense", T((1, 5)), T((5,)))


def test_dense_infers_the_weight_from_units():
    solved, types = solve("nn.dense", T((1, 5)), IncompleteType(), units=10)
    assert solved and types[1] == T((10, 5)) and types[-1] == T((1, 10))
    solved, _ = solve("nn.dense", T((1, 5)), IncompleteType())
    assert not solved


@given(
    m=st.integers(1, 4),
    k=st.integers(1, 4),
    n=st.integers(1, 4),
    ta=st.booleans(),
    tb=st.booleans(),
)
def test_matmul_matches_numpy(m, k, n, ta, tb):
    a, b = np.zeros((m, k)), np.zeros((k, n))
    ashape, bshape = (a.T if ta else a).shape, (b.T if tb else b).shape
    out = infer("nn.matmul", T(ashape), T(bshape), transpose_a=ta, transpose_b=tb)
    assert out == T((a @ b).shape)


def test_matmul_error():
    with pytest.raises(
        RelayTypeError, match="reduction dimensions do not match: 3 in tensor_a and 4 in tensor_b"
    ):
        infer("nn.matmul", T((2, 3)), T((4, 5)))


@given(
    b=st.integers(1, 3),
    m=st.integers(1, 4),
    k=st.integers(1, 4),
    n=st.integers(1, 4),
    ta=st.booleans(),
    tb=st.booleans(),
    one=st.sampled_from([None, "a", "b"]),
)
def test_batch_matmul_matches_numpy(b, m, k, n, ta, tb, one):
    x, y = np.zeros((1 if one == "a" else b, m, k)), np.zeros((1 if one == "b" else b, k, n))
    xs = x.transpose(0, 2, 1).shape if ta else x.shape
    ys = y.transpose(0, 2, 1).shape if tb else y.shape
    assert infer("nn.batch_matmul", T(xs), T(ys), transpose_a=ta, transpose_b=tb) == T(
        np.matmul(x, y).shape
    )


def test_batch_matmul_default_transposes_b_and_errors():
    assert infer("nn.batch_matmul", T((2, 3, 4)), T((2, 5, 4))) == T((2, 3, 5))
    with pytest.raises(RelayTypeError, match="4 in tensor_a and 5 in tensor_b"):
        infer("nn.batch_matmul", T((2, 3, 4)), T((2, 4, 5)))
    with pytest.raises(RelayTypeError, match="batch sizes 2 and 3 do not broadcast"):
        infer("nn.batch_matmul", T((2, 3, 4)), T((3, 5, 4)))
    with pytest.raises(RelayTypeError, match="both inputs must have rank 3"):
        infer("nn.batch_matmul", T((3, 4)), T((5, 4)))


# --- per-channel parameters ---------------------------------------------------------------


def test_bias_add():
    assert infer("nn.bias_add", T((1, 16, 4, 4)), T((16,))) == T((1, 16, 4, 4))
    assert infer("nn.bias_add", T((1, 4, 4, 16)), T((16,)), axis=-1) == T((1, 4, 4, 16))
    solved, types = solve("nn.bias_add", T((2, 7)), IncompleteType())
    assert solved and types[1] == T((7,))
    with pytest.raises(
        RelayTypeError, match=r"bias_add: bias has shape \(4,\) but axis 1 of the data has 3"
    ):
        infer("nn.bias_add", T((1, 3, 2, 2)), T((4,)))
    with pytest.raises(RelayTypeError, match="axis 4 is out of range for a rank-4 tensor"):
        infer("nn.bias_add", T((1, 3, 2, 2)), T((3,)), axis=4)


def test_prelu_and_relu_family():
    assert infer("nn.prelu", T((1, 3, 2, 2)), T((3,))) == T((1, 3, 2, 2))
    assert infer("nn.relu", T((5,), "int8")) == T((5,), "int8")
    assert infer("nn.leaky_relu", T((5,)), alpha=0.1) == T((5,))


def test_batch_norm_returns_a_3_tuple_and_types_its_parameters():
    params = [IncompleteType() for _ in range(4)]
    solved, types = solve("nn.batch_norm", T((2, 16, 8, 8)), *params)
    assert solved
    assert types[1:5] == [T((16,))] * 4
    assert types[-1] == TupleType((T((2, 16, 8, 8)), T((16,)), T((16,))))
    out = infer("nn.batch_norm", T((2, 8, 8, 16)), *[T((16,))] * 4, axis=3, epsilon=1e-3)
    assert out == TupleType((T((2, 8, 8, 16)), T((16,)), T((16,))))
    with pytest.raises(
        RelayTypeError,
        match=r"batch_norm: moving_var has shape \(8,\) but axis 1 of the data has 16",
    ):
        infer("nn.batch_norm", T((2, 16, 8, 8)), *[T((16,))] * 3, T((8,)))


def test_layer_norm_and_dropout():
    assert infer("nn.layer_norm", T((2, 5, 7)), T((7,)), T((7,))) == T((2, 5, 7))
    solved, types = solve("nn.layer_norm", T((2, 5, 7)), IncompleteType(), IncompleteType(), axis=1)
    assert solved and types[1] == types[2] == T((5,))
    assert infer("nn.dropout", T((3, 4)), rate=0.2) == TupleType((T((3, 4)), T((3, 4))))


def test_softmax_axis_is_checked():
    assert infer("nn.softmax", T((2, 10))) == T((2, 10))
    assert infer("nn.log_softmax", T((2, 10)), axis=0) == T((2, 10))
    with pytest.raises(RelayTypeError, match="axis 2 is out of range for a rank-2 tensor"):
        infer("nn.softmax", T((2, 10)), axis=2)


# --- shape ops ----------------------------------------------------------------------------


def test_pad_matches_numpy():
    widths = [[0, 0], [1, 2], [3, 0]]
    expected = np.pad(np.zeros((2, 3, 4)), widths).shape
    assert infer("nn.pad", T((2, 3, 4)), T(()), pad_width=widths) == T(expected)
    # an unsuffixed literal pad value is accepted whatever the data's dtype
    assert infer("nn.pad", T((2,), "float16"), TensorType((), literal()), pad_width=[[1, 1]]) == T(
        (4,), "float16"
    )
    assert infer("nn.pad", T((Any, 3)), T(()), pad_width=[[1, 1], [1, 1]], pad_mode="edge") == T(
        (Any, 5)
    )


def test_pad_errors():
    with pytest.raises(RelayTypeError, match="pad_width has 1 entries for a rank-2 tensor"):
        infer("nn.pad", T((2, 3)), T(()), pad_width=[[1, 1]])
    with pytest.raises(RelayTypeError, match="must be \\[before, after\\] >= 0"):
        infer("nn.pad", T((2,)), T(()), pad_width=[[-1, 1]])
    with pytest.raises(RelayTypeError, match="pad_value must be a scalar"):
        infer("nn.pad", T((2,)), T((1,)), pad_width=[[1, 1]])
    with pytest.raises(RelayTypeError, match="pad_mode must be constant, edge or reflect"):
        infer("nn.pad", T((2,)), T(()), pad_width=[[1, 1]], pad_mode="wrap")


def test_batch_flatten_and_upsampling():
    assert infer("nn.batch_flatten", T((2, 3, 4, 5))) == T((2, 60))
    assert infer("nn.batch_flatten", T((Any, 3, 4))) == T((Any, 12))
    assert infer("nn.batch_flatten", T((2, Any))) == T((2, Any))
    assert infer("nn.upsampling", T((1, 3, 4, 5)), scale_h=2.0, scale_w=1.5) == T((1, 3, 8, 8))
    assert infer("nn.upsampling", T((1, 4, 5, 3)), scale_h=2, scale_w=2, layout="NHWC") == T(
        (1, 8, 10, 3)
    )
    with pytest.raises(
        RelayTypeError, match="method must be nearest_neighbor, bilinear or bicubic"
    ):
        infer("nn.upsampling", T((1, 3, 4, 5)), scale_h=2, scale_w=2, method="linear")


@pytest.mark.parametrize(
    "op,pattern",
    [
        ("nn.relu", OpPattern.ELEMWISE),
        ("nn.leaky_relu", OpPattern.ELEMWISE),
        ("nn.prelu", OpPattern.BROADCAST),
        ("nn.bias_add", OpPattern.BROADCAST),
        ("nn.softmax", OpPattern.OPAQUE),
        ("nn.conv2d", OpPattern.OUT_ELEMWISE_FUSABLE),
        ("nn.dense", OpPattern.OUT_ELEMWISE_FUSABLE),
        ("nn.batch_matmul", OpPattern.OUT_ELEMWISE_FUSABLE),
        ("nn.max_pool2d", OpPattern.OUT_ELEMWISE_FUSABLE),
        ("nn.global_avg_pool2d", OpPattern.OUT_ELEMWISE_FUSABLE),
        ("nn.batch_norm", OpPattern.OPAQUE),
        ("nn.dropout", OpPattern.OPAQUE),
        ("nn.pad", OpPattern.INJECTIVE),
        ("nn.batch_flatten", OpPattern.INJECTIVE),
    ],
)
def test_nn_patterns(op, pattern):
    assert get_op(op).get_attr("TOpPattern") == pattern
