"""vision.*: relations (accepts and TVM's rejections), builders as relay.vision.*, text
round trips with attributes, and vision ops inside JIT-built programs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import relay_nb as relay
from relay_nb.errors import RelayTypeError
from relay_nb.ir.ty import Any, TupleType
from relay_nb.op.registry import OpPattern, get_op, list_ops

try:
    from ._reporter import T, infer
except ImportError:
    from _reporter import T, infer
from jit_testing import assert_native, assert_same, run_both

F, I = T((), "float32"), T((), "int32")


def test_all_10_tvm_vision_ops_are_registered_with_numpy_implementations():
    names = Path(relay.op.__path__[0], "tvm_ops.txt").read_text().split()
    tvm = [n for n in names if n.startswith("vision.")]
    assert len(tvm) == 10 and set(tvm) <= set(list_ops())
    for name in tvm:
        assert get_op(name).get_attr("impl") is not None, name
    assert get_op("vision.yolo_reorg").get_attr("TOpPattern") == OpPattern.INJECTIVE
    assert get_op("vision.roi_align").get_attr("TOpPattern") == OpPattern.OUT_ELEMWISE_FUSABLE


ACCEPT = [
    (
        "vision.get_valid_counts",
        (T((2, 5, 6)), F),
        {},
        TupleType((T((2,), "int32"), T((2, 5, 6)), T((2, 5), "int32"))),
    ),
    (
        "vision.non_max_suppression",
        (T((2, 5, 6)), T((2,), "int32"), T((2, 5), "int32"), I, F),
        {},
        TupleType((T((2, 5), "int32"), T((2, 1), "int32"))),
    ),
    (
        "vision.non_max_suppression",
        (T((2, 5, 6)), T((2,), "int32"), T((2, 5), "int32"), I, F),
        {"return_indices": False},
        T((2, 5, 6)),
    ),
    (
        "vision.all_class_non_max_suppression",
        (T((2, 5, 4)), T((2, 3, 5)), I, F, F),
        {},
        TupleType((T((30, 3), "int64"), T((1,), "int64"))),
    ),
    (
        "vision.all_class_non_max_suppression",
        (T((Any, 5, 4)), T((Any, 3, 5)), I, F, F),
        {},
        TupleType((T((Any, 3), "int64"), T((1,), "int64"))),
    ),
    (
        "vision.all_class_non_max_suppression",
        (T((2, 5, 4)), T((2, 3, 5)), I, F, F),
        {"output_format": "tensorflow"},
        TupleType((T((2, 15, 2), "int64"), T((2, 15)), T((2,), "int64"))),
    ),
    (
        "vision.regular_non_max_suppression",
        (T((1, 5, 4)), T((1, 5, 3))),
        {
            "max_detections_per_class": 2,
            "max_detections": 4,
            "num_classes": 2,
            "iou_threshold": 0.5,
            "score_threshold": 0.1,
        },
        TupleType((T((1, 4, 4)), T((1, 4)), T((1, 4)), T((1,), "int32"))),
    ),
    (
        "vision.roi_align",
        (T((1, 3, 8, 8)), T((4, 5))),
        {"pooled_size": [2, 3], "spatial_scale": 0.5},
        T((4, 3, 2, 3)),
    ),
    (
        "vision.roi_align",
        (T((1, 8, 8, 3)), T((Any, 5))),
        {"pooled_size": [2, 2], "spatial_scale": 1.0, "layout": "NHWC"},
        T((Any, 2, 2, 3)),
    ),
    (
        "vision.roi_pool",
        (T((1, 3, 8, 8)), T((4, 5))),
        {"pooled_size": [2, 2], "spatial_scale": 1.0},
        T((4, 3, 2, 2)),
    ),
    (
        "vision.multibox_prior",
        (T((1, 3, 4, 5)),),
        {"sizes": [0.5, 0.25], "ratios": [1.0, 2.0, 0.5]},
        T((1, 80, 4)),
    ),
    (
        "vision.multibox_transform_loc",
        (T((1, 3, 10)), T((1, 40)), T((1, 10, 4))),
        {},
        TupleType((T((1, 10, 6)), T((1,), "int32"))),
    ),
    ("vision.yolo_reorg", (T((1, 4, 6, 6)),), {"stride": 2}, T((1, 16, 3, 3))),
    ("vision.yolo_reorg", (T((Any, 4, 6, Any)),), {"stride": 3}, T((Any, 36, 2, Any))),
    (
        "vision.proposal",
        (T((2, 6, 4, 4)), T((2, 12, 4, 4)), T((2, 3))),
        {"scales": [1.0, 2.0, 4.0], "ratios": [1.0], "rpn_post_nms_top_n": 10},
        T((20, 5)),
    ),
    # dynamic dimensions
    (
        "vision.proposal",
        (T((Any, 6, Any, 4)), T((Any, 12, Any, 4)), T((Any, 3))),
        {"scales": [1.0, 2.0, 4.0], "ratios": [1.0]},
        T((Any, 5)),
    ),
    ("vision.multibox_prior", (T((1, 3, Any, 5)),), {}, T((1, Any, 4))),
    (
        "vision.multibox_transform_loc",
        (T((Any, 3, Any)), T((Any, Any)), T((1, Any, 4))),
        {},
        TupleType((T((Any, Any, 6)), T((Any,), "int32"))),
    ),
    (
        "vision.roi_pool",
        (T((Any, 3, Any, 8)), T((Any, 5))),
        {"pooled_size": [2, 2], "spatial_scale": 1.0},
        T((Any, 3, 2, 2)),
    ),
]


@pytest.mark.parametrize("op, args, attrs, expected", ACCEPT, ids=[c[0] for c in ACCEPT])
def test_relation_accepts(op, args, attrs, expected):
    assert infer(op, *args, **attrs) == expected


REJECT = [
    ("vision.get_valid_counts", (T((5, 6)), F), {}, "Input data should be 3-D"),
    (
        "vision.non_max_suppression",
        (T((2, 5, 6)), T((2, 1), "int32"), T((2, 5), "int32"), I, F),
        {},
        "Input valid count should be 1-D",
    ),
    (
        "vision.all_class_non_max_suppression",
        (T((2, 5, 4)), T((2, 5)), I, F, F),
        {},
        "Input scores count should be 3-D",
    ),
    (
        "vision.all_class_non_max_suppression",
        (T((2, 5, 4)), T((2, 3, 5)), I, F, F),
        {"output_format": "mxnet"},
        "output_format must be onnx or tensorflow",
    ),
    (
        "vision.roi_align",
        (T((1, 3, 8)), T((4, 5))),
        {"pooled_size": [2, 2], "spatial_scale": 1.0},
        "Input data should be 4-D",
    ),
    (
        "vision.roi_align",
        (T((1, 3, 8, 8)), T((4, 4))),
        {"pooled_size": [2, 2], "spatial_scale": 1.0},
        "rois must have 5 columns",
    ),
    (
        "vision.roi_align",
        (T((1, 3, 8, 8)), T((4, 5))),
        {"pooled_size": [2, 2], "spatial_scale": 1.0, "mode": "sum"},
        "mode must be avg or max",
    ),
    (
        "vision.roi_pool",
        (T((1, 3, 8, 8)), T((4, 5))),
        {"pooled_size": [2, 2], "spatial_scale": 1.0, "layout": "CHWN"},
        "does not support|supports the layouts",
    ),
    (
        "vision.multibox_transform_loc",
        (T((1, 3, 10)), T((1, 36)), T((1, 10, 4))),
        {},
        "# anchors mismatch with # loc",
    ),
    (
        "vision.multibox_transform_loc",
        (T((1, 3, 10)), T((1, 40)), T((1, 9, 4))),
        {},
        "Number of anchors mismatch found",
    ),
    ("vision.yolo_reorg", (T((4, 6, 6)),), {"stride": 2}, "Yolo reorg supports only 4 dimension"),
    (
        "vision.proposal",
        (T((2, 6, 4)), T((2, 12, 4, 4)), T((2, 3))),
        {"scales": [1.0, 2.0, 4.0], "ratios": [1.0]},
        "The dimension of class probability should be 4, but received 3",
    ),
    (
        "vision.proposal",
        (T((2, 6, 4, 4)), T((2, 12, 4, 4)), T((2, 4))),
        {"scales": [1.0, 2.0, 4.0], "ratios": [1.0]},
        r"im_info must be \(batch, 3\)",
    ),
]


@pytest.mark.parametrize("op, args, attrs, message", REJECT, ids=[c[0] for c in REJECT])
def test_relation_rejects(op, args, attrs, message):
    with pytest.raises(RelayTypeError, match=message):
        infer(op, *args, **attrs)


def test_regular_nms_needs_its_attributes():
    with pytest.raises(
        relay.RelayError, match="missing required attribute max_detections_per_class"
    ):
        relay.op.make_attrs("vision.regular_non_max_suppression", {})


def _cases():
    v = relay.vision
    d = relay.var("d", shape=(1, 5, 6))
    img = relay.var("img", shape=(1, 3, 8, 8))
    rois = relay.var("rois", shape=(2, 5))
    boxes, scores = relay.var("b", shape=(1, 5, 4)), relay.var("s", shape=(1, 2, 5))
    c, out, idx = v.get_valid_counts(d, 0.25, id_index=-1, score_index=0)
    return [
        v.get_valid_counts(d, 0.25, id_index=-1, score_index=0).astuple(),
        v.non_max_suppression(
            out,
            c,
            idx,
            3,
            0.6,
            force_suppress=True,
            top_k=4,
            return_indices=False,
            invalid_to_bottom=True,
        ),
        v.all_class_non_max_suppression(
            boxes, scores, 2, 0.5, 0.1, output_format="tensorflow"
        ).astuple(),
        v.regular_non_max_suppression(
            boxes, relay.var("s3", shape=(1, 5, 3)), 2, 3, 2, 0.5, 0.25
        ).astuple(),
        v.roi_align(img, rois, (2, 2), 0.25, sample_ratio=2, mode="max"),
        v.roi_pool(img, rois, (3, 3), 0.5),
        v.multibox_prior(
            img,
            sizes=(0.5, 0.25),
            ratios=(1.0, 2.0),
            steps=(0.1, 0.1),
            offsets=(0.25, 0.75),
            clip=True,
        ),
        v.multibox_transform_loc(
            relay.var("cp", shape=(1, 3, 4)),
            relay.var("lp", shape=(1, 16)),
            relay.var("an", shape=(1, 4, 4)),
            clip=False,
            threshold=0.05,
            variances=(0.2, 0.2, 0.1, 0.1),
            keep_background=True,
        ).astuple(),
        v.yolo_reorg(relay.var("y", shape=(1, 8, 4, 4)), 2),
        v.proposal(
            relay.var("cls", shape=(1, 4, 3, 3)),
            relay.var("bb", shape=(1, 8, 3, 3)),
            relay.var("im", shape=(1, 3)),
            (8.0, 16.0),
            (1.0,),
            8,
            0.6,
            50,
            20,
            4,
            True,
        ),
    ]


@pytest.mark.parametrize("index", range(len(_cases())))
def test_builder_programs_print_and_parse_back(index):
    expr = _cases()[index]
    params = relay.analysis.free_vars(expr)
    m1 = relay.transform.InferType()(relay.IRModule.from_expr(relay.Function(params, expr)))
    m2 = relay.transform.InferType()(relay.parse(m1.astext()))
    assert relay.structural_equal(m1["main"], m2["main"], map_free_vars=True)
    assert m1["main"].checked_type == m2["main"].checked_type


def test_text_with_tvm_style_attributes():
    text = (
        "def @main(%x: Tensor[(1, 4, 2, 2), float32]) {\n"
        "  %0 = vision.yolo_reorg(%x, stride=2);\n"
        "  vision.multibox_prior(%x, sizes=[0.5f], ratios=[1f, 2f], clip=True)\n"
        "}\n"
    )
    mod = relay.transform.InferType()(relay.parse(text))
    assert str(mod["main"].checked_type.ret_type) == "Tensor[(1, 8, 4), float32]"
    assert "clip=True" in mod.astext()


def test_relay_build_runs_vision_ops_interpreted():
    text = (
        "def @main(%x: Tensor[(1, 3, 6), float32]) {\n"
        "  %0 = vision.get_valid_counts(%x, 0.5f);\n"
        "  %1 = vision.non_max_suppression(%0.1, %0.0, %0.2, -1, 0.5f, return_indices=False);\n"
        "  multiply(%1, 2f)\n"
        "}\n"
    )
    mod = relay.parse(text)
    data = np.array(
        [[[0, 0.9, 0, 0, 10, 10], [0, 0.8, 1, 1, 11, 11], [0, 0.7, 20, 20, 30, 30]]], "float32"
    )
    lib = relay.build(mod)
    want = relay.create_executor("interpreter", mod=mod).evaluate()(data)
    np.testing.assert_array_equal(lib(data), want)
    assert want[0, 1].tolist() == [-2] * 6  # the second box overlaps the first by 0.68
    report = lib.report()
    for op in ("vision.get_valid_counts", "vision.non_max_suppression"):
        assert op in report.fallback_ops or op in report.interpreted_ops, str(report)


@pytest.mark.parametrize(
    "shape, stride", [((1, 4, 2, 2), 2), ((2, 8, 4, 6), 2), ((1, 18, 3, 6), 3), ((2, 3, 2, 2), 1)]
)
def test_yolo_reorg_lowers_to_native_code_and_fuses(shape, stride):
    x = np.random.default_rng(1).normal(size=shape).astype("float32")
    text = f"def @main(%x: Tensor[{shape}, float32]) {{ exp(vision.yolo_reorg(nn.relu(%x), stride={stride})) }}"
    ref, out, ex = run_both(text, x)
    assert_same(ref, out)
    assert_native(ex)
