"""The built-in op registrations (columns, schemas, TVM defaults), attribute checking, and
registering a new op from Python."""

from __future__ import annotations


import pytest

import relay_nb as relay
from relay_nb.errors import AttrError, RelayError, RelayTypeError
from relay_nb.ir.expr import Call
from relay_nb.ir.ty import TensorType
from relay_nb.op.registry import (
    AttrField,
    AttrSchema,
    OpPattern,
    get_column,
    get_op,
    list_ops,
    make_attrs,
    non_default_attrs,
    register_op,
)
from relay_nb.typing.relations import forward_relation, identity_rel

try:
    from ._reporter import T, infer
except ImportError:
    from _reporter import T, infer

REQUIRED = [
    "add",
    "subtract",
    "multiply",
    "divide",
    "floor_divide",
    "mod",
    "floor_mod",
    "power",
    "maximum",
    "minimum",
    "equal",
    "not_equal",
    "less",
    "less_equal",
    "greater",
    "greater_equal",
    "logical_and",
    "logical_or",
    "logical_not",
    "logical_xor",
    "negative",
    "abs",
    "exp",
    "log",
    "sqrt",
    "rsqrt",
    "sigmoid",
    "tanh",
    "erf",
    "floor",
    "ceil",
    "round",
    "trunc",
    "sign",
    "clip",
    "cast",
    "where",
    "zeros",
    "ones",
    "full",
    "zeros_like",
    "ones_like",
    "full_like",
    "arange",
    "sum",
    "mean",
    "max",
    "min",
    "prod",
    "argmax",
    "argmin",
    "variance",
    "reshape",
    "transpose",
    "squeeze",
    "expand_dims",
    "concatenate",
    "split",
    "stack",
    "take",
    "strided_slice",
    "broadcast_to",
    "tile",
    "repeat",
    "reverse",
    "layout_transform",
    "copy",
    "nn.relu",
    "nn.leaky_relu",
    "nn.prelu",
    "nn.softmax",
    "nn.log_softmax",
    "nn.dense",
    "nn.matmul",
    "nn.batch_matmul",
    "nn.bias_add",
    "nn.conv2d",
    "nn.conv2d_transpose",
    "nn.conv3d",
    "nn.max_pool2d",
    "nn.avg_pool2d",
    "nn.global_avg_pool2d",
    "nn.global_max_pool2d",
    "nn.adaptive_avg_pool2d",
    "nn.batch_norm",
    "nn.layer_norm",
    "nn.dropout",
    "nn.pad",
    "nn.batch_flatten",
    "nn.upsampling",
    "image.resize2d",
]


def test_every_required_op_is_registered():
    missing = [name for name in REQUIRED if name not in list_ops()]
    assert not missing


@pytest.mark.parametrize(
    "name", sorted(set(REQUIRED) | {n for n in list_ops() if not n.startswith("test.")})
)
def test_every_op_has_its_columns(name):
    op = get_op(name)
    n = op.get_attr("num_inputs")
    assert isinstance(n, int) and n >= -1
    assert len(op.get_attr("arg_names")) == max(n, 0)  # -1: variadic (torch_op), no names
    assert op.get_attr("type_rel") is not None
    assert isinstance(op.get_attr("TOpPattern"), OpPattern)
    doc = op.get_attr("doc")
    assert len(doc) > 10 and not doc[0].islower() and doc.rstrip().endswith(".")
    schema_ = op.get_attr("attrs_schema")
    if schema_ is not None:
        assert schema_.type_key.startswith("relay.attrs.") and schema_.type_key.endswith("Attrs")


def test_conv2d_attrs_defaults_are_tvms():
    attrs = make_attrs("nn.conv2d")
    assert attrs.type_key == "relay.attrs.Conv2DAttrs"
    assert dict(attrs) == {
        "strides": (1, 1),
        "padding": (0, 0),
        "dilation": (1, 1),
        "groups": 1,
        "channels": None,
        "kernel_size": None,
        "data_layout": "NCHW",
        "kernel_layout": "OIHW",
        "out_layout": "",
        "out_dtype": "",
    }


@pytest.mark.parametrize(
    "op,type_key,defaults",
    [
        ("sum", "relay.attrs.ReduceAttrs", {"axis": None, "keepdims": False, "exclude": False}),
        (
            "argmax",
            "relay.attrs.ArgReduceAttrs",
            {"axis": None, "keepdims": False, "select_last_index": False, "exclude": False},
        ),
        (
            "nn.batch_matmul",
            "relay.attrs.BatchMatmulAttrs",
            {"out_dtype": "", "transpose_a": False, "transpose_b": True},
        ),
        ("nn.dense", "relay.attrs.DenseAttrs", {"units": None, "out_dtype": ""}),
        ("nn.bias_add", "relay.attrs.BiasAddAttrs", {"axis": 1}),
        ("nn.softmax", "relay.attrs.SoftmaxAttrs", {"axis": -1}),
        (
            "nn.batch_norm",
            "relay.attrs.BatchNormAttrs",
            {"axis": 1, "epsilon": 1e-5, "center": True, "scale": True},
        ),
        (
            "nn.layer_norm",
            "relay.attrs.LayerNormAttrs",
            {"axis": -1, "epsilon": 1e-5, "center": True, "scale": True},
        ),
        ("nn.dropout", "relay.attrs.DropoutAttrs", {"rate": 0.5}),
        ("nn.leaky_relu", "relay.attrs.LeakyReluAttrs", {"alpha": 0.25}),
        ("concatenate", "relay.attrs.ConcatenateAttrs", {"axis": 0}),
        (
            "nn.global_avg_pool2d",
            "relay.attrs.GlobalPool2DAttrs",
            {"layout": "NCHW", "out_layout": ""},
        ),
    ],
)
def test_attr_defaults(op, type_key, defaults):
    attrs = make_attrs(op)
    assert attrs.type_key == type_key
    assert dict(attrs) == defaults


def test_conv2d_transpose_kernel_layout_is_iohw():
    assert make_attrs("nn.conv2d_transpose").kernel_layout == "IOHW"


def test_max_pool2d_field_order_is_tvms():
    attrs = make_attrs("nn.max_pool2d", {"pool_size": [3, 3]})
    assert list(attrs) == [
        "pool_size",
        "strides",
        "dilation",
        "padding",
        "layout",
        "out_layout",
        "ceil_mode",
    ]


def test_unknown_attribute_suggests_the_close_name():
    with pytest.raises(
        AttrError, match="nn.conv2d: unknown attribute stride; did you mean strides?"
    ):
        make_attrs("nn.conv2d", {"stride": [2, 2]})


def test_bad_attribute_values():
    with pytest.raises(AttrError, match="attribute groups expects an integer"):
        make_attrs("nn.conv2d", {"groups": "two"})
    with pytest.raises(AttrError, match="attribute padding expects a list of integers"):
        make_attrs("nn.conv2d", {"padding": [1.5, 1]})
    with pytest.raises(AttrError, match="unknown dtype 'float33'"):
        make_attrs("cast", {"dtype": "float33"})
    with pytest.raises(AttrError, match="clip: missing required attribute a_min"):
        make_attrs("clip", {"a_max": 1.0})
    with pytest.raises(AttrError, match="operator add takes no attributes"):
        make_attrs("add", {"axis": 1})
    with pytest.raises(AttrError, match="attribute pad_width expects a list of integer lists"):
        make_attrs("nn.pad", {"pad_width": [1, 2]})


def test_attr_values_are_normalised():
    attrs = make_attrs("reshape", {"newshape": 6})
    assert attrs.newshape == (6,)
    assert make_attrs("split", {"indices_or_sections": [2, 4]}).indices_or_sections == (2, 4)
    assert make_attrs("clip", {"a_min": 0, "a_max": 6}).a_min == 0.0


def test_printer_sees_only_non_default_attrs_in_schema_order():
    x, w = relay.var("x", shape=(1, 3, 8, 8)), relay.var("w")
    call = relay.nn.conv2d(x, w, padding=1, channels=4, kernel_size=3)
    assert non_default_attrs(call.op, call.attrs) == [
        ("padding", (1, 1, 1, 1)),
        ("channels", 4),
        ("kernel_size", (3, 3)),
    ]


# --- registering an op from Python --------------------------------------------------------


@forward_relation("Outer")
def outer_rel(inputs, attrs, reporter):
    a, b = inputs
    return TensorType(a.shape + b.shape, reporter.unify_dtype(a.dtype, b.dtype))


def register_user_ops():
    register_op(
        "test.square",
        1,
        type_rel=identity_rel,
        pattern=OpPattern.ELEMWISE,
        doc="Square each element.",
        arg_names=("data",),
        override=True,
    )
    register_op(
        "test.outer",
        2,
        type_rel=outer_rel,
        attrs=AttrSchema("relay.attrs.TestOuterAttrs", (AttrField("scale", "float", 1.0),)),
        pattern=OpPattern.INJECTIVE,
        doc="Outer product.",
        arg_names=("a", "b"),
        override=True,
    )


def test_user_registered_op_builds_and_types():
    register_user_ops()
    x = relay.var("x", shape=(2, 3))
    call = Call(relay.op.get("test.square"), (x,))
    assert call.op is get_op("test.square")
    assert infer("test.square", T((2, 3))) == T((2, 3))
    assert infer("test.outer", T((2,)), T((3, 4)), scale=2.0) == T((2, 3, 4))
    assert make_attrs("test.outer").scale == 1.0
    with pytest.raises(RelayTypeError, match="do not match"):
        infer("test.outer", T((2,)), T((3,), "int32"))


def test_registering_twice_needs_override():
    register_user_ops()
    with pytest.raises(RelayError, match="already registered"):
        register_op("test.square", 1, type_rel=identity_rel)
    op = get_op("test.square")
    again = register_op("test.square", 1, type_rel=identity_rel, doc="v2", override=True)
    assert again is op and op.get_attr("doc") == "v2"
    register_user_ops()


def test_a_new_column_for_every_op():
    column = get_column("test_column")
    for name in list_ops():
        column[name] = len(name)
    assert get_op("nn.conv2d").get_attr("test_column") == len("nn.conv2d")


def test_unknown_op_suggests_a_name():
    with pytest.raises(RelayError, match="unknown operator nn.conv2; did you mean nn.conv2d"):
        get_op("nn.conv2")


def test_user_op_in_text():
    from relay_nb.syntax.parser import parse_expr

    register_user_ops()
    f = parse_expr("fn (%x: Tensor[(2, 3), float32]) { test.outer(test.square(%x), %x, scale=2f) }")
    outer = f.body
    assert outer.op is get_op("test.outer") and outer.attrs.scale == 2.0
    assert outer.args[0].op is get_op("test.square")
    mod = relay.transform.InferType()(relay.IRModule.from_expr(f))
    assert mod["main"].checked_type.ret_type == T((2, 3, 2, 3))
