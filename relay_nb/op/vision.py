"""Vision operators (``vision.*``) and their builders; this module is ``relay.vision``.

Object-detection building blocks as TVM 0.19 defines them (``src/relay/op/vision/*.cc``
for the relations, ``topi.vision`` for what they compute): box filtering and non-maximum
suppression (``get_valid_counts``, ``non_max_suppression``, ``all_class_non_max_suppression``,
``regular_non_max_suppression``), region pooling (``roi_align``, ``roi_pool``), SSD anchors
(``multibox_prior``, ``multibox_transform_loc``), Faster R-CNN's ``proposal`` and YOLO's
``yolo_reorg``.  Ops whose outputs are tuples return a ``TupleWrapper`` from their builders,
as in TVM.
"""

from __future__ import annotations

from ..errors import RelayTypeError
from ..ir.expr import Expr, TupleWrapper, const
from ..ir.ty import Any, TensorType, TupleType
from ..typing.relations import forward_relation
from ._common import call, dim_text, is_static, register, same_dim, schema, tensor, type_text
from .registry import OpPattern


def _rank(t: TensorType, n: int, message: str) -> TensorType:
    if len(t.shape) != n:
        raise RelayTypeError(f"{message}, found {type_text(t)}")
    return t


def _times(*dims):
    out = 1
    for d in dims:
        if not is_static(d):
            return Any
        out *= d
    return out


# --- relations ------------------------------------------------------------------------------


@forward_relation("GetValidCount")
def _get_valid_counts_rel(inputs, attrs, reporter):
    """(valid_count (B,) int32, boxes moved to the top (B, N, K), their indices (B, N) int32)."""
    data = _rank(tensor(inputs[0], "data"), 3, "Input data should be 3-D")
    b, n = data.shape[:2]
    return TupleType((TensorType((b,), "int32"), data, TensorType((b, n), "int32")))


@forward_relation("NMS")
def _nms_rel(inputs, attrs, reporter):
    data = _rank(tensor(inputs[0], "data"), 3, "Input data should be 3-D")
    _rank(tensor(inputs[1], "valid_count"), 1, "Input valid count should be 1-D")
    b, n = data.shape[:2]
    if attrs["return_indices"]:
        return TupleType((TensorType((b, n), "int32"), TensorType((b, 1), "int32")))
    return data


@forward_relation("AllClassNMS")
def _all_class_nms_rel(inputs, attrs, reporter):
    boxes = _rank(tensor(inputs[0], "boxes"), 3, "Input boxes should be 3-D")
    scores = _rank(tensor(inputs[1], "scores"), 3, "Input scores count should be 3-D")
    batch, num_boxes = boxes.shape[:2]
    classes = scores.shape[1]
    fmt = attrs["output_format"]
    if fmt == "onnx":
        return TupleType(
            (
                TensorType((_times(batch, classes, num_boxes), 3), "int64"),
                TensorType((1,), "int64"),
            )
        )
    if fmt == "tensorflow":
        per_batch = _times(classes, num_boxes)
        return TupleType(
            (
                TensorType((batch, per_batch, 2), "int64"),
                TensorType((batch, per_batch), "float32"),
                TensorType((batch,), "int64"),
            )
        )
    raise RelayTypeError(f"output_format must be onnx or tensorflow, got {fmt!r}")


@forward_relation("RegularNMS")
def _regular_nms_rel(inputs, attrs, reporter):
    boxes = _rank(tensor(inputs[0], "boxes"), 3, "Input boxes should be 3-D")
    _rank(tensor(inputs[1], "scores"), 3, "Input scores count should be 3-D")
    b, m = boxes.shape[0], attrs["max_detections"]
    return TupleType(
        (
            TensorType((b, m, 4), "float32"),
            TensorType((b, m), "float32"),
            TensorType((b, m), "float32"),
            TensorType((b,), "int32"),
        )
    )


def _roi_rel(name: str, layouts: tuple):
    @forward_relation(name)
    def rel(inputs, attrs, reporter):
        data = _rank(tensor(inputs[0], "data"), 4, "Input data should be 4-D")
        rois = _rank(tensor(inputs[1], "rois"), 2, "Input rois should be 2-D")
        if is_static(rois.shape[1]) and rois.shape[1] != 5:
            raise RelayTypeError(
                f"rois must have 5 columns [batch_index, w_start, h_start, w_end, h_end], "
                f"found {type_text(rois)}"
            )
        size = attrs["pooled_size"]
        if len(size) != 2:
            raise RelayTypeError(f"pooled_size must have 2 values, got {list(size)}")
        layout = attrs["layout"]
        if layout not in layouts:
            raise RelayTypeError(
                f"{name} supports the layouts {', '.join(layouts)}, not {layout!r}"
            )
        if name == "ROIAlign" and attrs["mode"] not in ("avg", "max"):
            raise RelayTypeError(f"mode must be avg or max, got {attrs['mode']!r}")
        if layout == "NCHW":
            return TensorType((rois.shape[0], data.shape[1], *size), data.dtype)
        return TensorType((rois.shape[0], *size, data.shape[3]), data.dtype)

    return rel


@forward_relation("MultiBoxPrior")
def _multibox_prior_rel(inputs, attrs, reporter):
    data = _rank(
        tensor(inputs[0], "data"), 4, "Input data should be 4D: [batch, channel, height, width]"
    )
    n = len(attrs["sizes"]) + len(attrs["ratios"]) - 1
    if not attrs["sizes"] or not attrs["ratios"]:
        raise RelayTypeError("sizes and ratios must not be empty")
    for what in ("steps", "offsets"):
        if len(attrs[what]) != 2:
            raise RelayTypeError(f"{what} must have 2 values, got {list(attrs[what])}")
    return TensorType((1, _times(data.shape[2], data.shape[3], n), 4), data.dtype)


@forward_relation("MultiBoxTransformLoc")
def _multibox_transform_loc_rel(inputs, attrs, reporter):
    cls = _rank(tensor(inputs[0], "cls_prob"), 3, "The dimension of class probability should be 3")
    loc = _rank(
        tensor(inputs[1], "loc_pred"), 2, "The dimension of location prediction should be 2"
    )
    anchor = _rank(tensor(inputs[2], "anchor"), 3, "The dimension of anchor should be 3")
    n = cls.shape[2]
    if not same_dim(n, anchor.shape[1]):
        raise RelayTypeError(
            f"Number of anchors mismatch found: {dim_text(n)} and {dim_text(anchor.shape[1])}"
        )
    if not same_dim(_times(n, 4), loc.shape[1]):
        raise RelayTypeError(
            f"# anchors mismatch with # loc: {dim_text(n)} anchors, {dim_text(loc.shape[1])} locations"
        )
    if not same_dim(anchor.shape[2], 4):
        raise RelayTypeError(f"anchors must have 4 coordinates, found {type_text(anchor)}")
    if len(attrs["variances"]) != 4:
        raise RelayTypeError(f"variances must have 4 values, got {list(attrs['variances'])}")
    return TupleType(
        (
            TensorType((cls.shape[0], anchor.shape[1], 6), cls.dtype),
            TensorType((cls.shape[0],), "int32"),
        )
    )


@forward_relation("YoloReorg")
def _yolo_reorg_rel(inputs, attrs, reporter):
    data = _rank(tensor(inputs[0], "data"), 4, "Yolo reorg supports only 4 dimension")
    s = attrs["stride"]
    if s < 1:
        raise RelayTypeError(f"stride must be positive, got {s}")
    n, c, h, w = data.shape
    return TensorType(
        (n, _times(c, s, s), h // s if is_static(h) else Any, w // s if is_static(w) else Any),
        data.dtype,
    )


@forward_relation("Proposal")
def _proposal_rel(inputs, attrs, reporter):
    cls = tensor(inputs[0], "cls_prob")
    bbox = tensor(inputs[1], "bbox_pred")
    im_info = tensor(inputs[2], "im_info")
    for t, n, what in (
        (cls, 4, "class probability"),
        (bbox, 4, "box prediction"),
        (im_info, 2, "image info"),
    ):
        if len(t.shape) != n:
            raise RelayTypeError(
                f"The dimension of {what} should be {n}, but received {len(t.shape)}"
            )
    if not same_dim(im_info.shape[1], 3):
        raise RelayTypeError(
            f"im_info must be (batch, 3) [height, width, scale], found {type_text(im_info)}"
        )
    anchors = len(attrs["scales"]) * len(attrs["ratios"])
    if not same_dim(cls.shape[1], 2 * anchors) or not same_dim(bbox.shape[1], 4 * anchors):
        raise RelayTypeError(
            f"{anchors} anchors per position need {2 * anchors} class channels and "
            f"{4 * anchors} box channels, found {type_text(cls)} and {type_text(bbox)}"
        )
    return TensorType((_times(cls.shape[0], attrs["rpn_post_nms_top_n"]), 5), cls.dtype)


# --- registration -------------------------------------------------------------------------

_NMS_ATTRS = schema(
    "relay.attrs.NonMaximumSuppressionAttrs",
    ("force_suppress", "bool", False),
    ("top_k", "int", -1),
    ("coord_start", "int", 2),
    ("score_index", "int", 1),
    ("id_index", "int", 0),
    ("return_indices", "bool", True),
    ("invalid_to_bottom", "bool", False),
)

VISION_OPS = [
    # name, inputs, relation, attrs, pattern, arg names, doc
    (
        "vision.get_valid_counts",
        2,
        _get_valid_counts_rel,
        schema(
            "relay.attrs.GetValidCountsAttrs",
            ("score_threshold", "optional_float", None),
            ("id_index", "int", 0),
            ("score_index", "int", 1),
        ),
        OpPattern.OPAQUE,
        ("data", "score_threshold"),
        (
            "Move the boxes whose score exceeds ``score_threshold`` (and whose class id is not "
            "negative) to the top, in order; returns (count, boxes, original indices), -1 below."
        ),
    ),
    (
        "vision.non_max_suppression",
        5,
        _nms_rel,
        _NMS_ATTRS,
        OpPattern.OPAQUE,
        ("data", "valid_count", "indices", "max_output_size", "iou_threshold"),
        (
            "Greedy non-maximum suppression of the first ``valid_count`` boxes, by descending score: "
            "a box is dropped when its IoU with a kept box of the same class reaches the threshold."
        ),
    ),
    (
        "vision.all_class_non_max_suppression",
        5,
        _all_class_nms_rel,
        schema("relay.attrs.AllClassNonMaximumSuppressionAttrs", ("output_format", "str", "onnx")),
        OpPattern.OPAQUE,
        ("boxes", "scores", "max_output_boxes_per_class", "iou_threshold", "score_threshold"),
        (
            "NMS for every (batch, class) pair separately, as ONNX NonMaxSuppression (or TensorFlow's "
            "combined NMS with output_format='tensorflow')."
        ),
    ),
    (
        "vision.regular_non_max_suppression",
        2,
        _regular_nms_rel,
        schema(
            "relay.attrs.RegularNonMaximumSuppressionAttrs",
            ("max_detections_per_class", "int"),
            ("max_detections", "int"),
            ("num_classes", "int"),
            ("iou_threshold", "float"),
            ("score_threshold", "float"),
        ),
        OpPattern.OPAQUE,
        ("boxes", "scores"),
        "TFLite's regular NMS: per-class NMS, then the best ``max_detections`` over all classes.",
    ),
    (
        "vision.roi_align",
        2,
        _roi_rel("ROIAlign", ("NCHW", "NHWC")),
        schema(
            "relay.attrs.ROIAlignAttrs",
            ("pooled_size", "ints"),
            ("spatial_scale", "float"),
            ("sample_ratio", "int", -1),
            ("layout", "str", "NCHW"),
            ("mode", "str", "avg"),
        ),
        OpPattern.OUT_ELEMWISE_FUSABLE,
        ("data", "rois"),
        "Mask R-CNN's ROI align: average (or max) of bilinear samples on a regular grid in each bin.",
    ),
    (
        "vision.roi_pool",
        2,
        _roi_rel("ROIPool", ("NCHW", "NHWC")),
        schema(
            "relay.attrs.ROIPoolAttrs",
            ("pooled_size", "ints"),
            ("spatial_scale", "float"),
            ("layout", "str", "NCHW"),
        ),
        OpPattern.OUT_ELEMWISE_FUSABLE,
        ("data", "rois"),
        "Fast R-CNN's ROI pooling: the maximum over the integer pixels of each bin (0 if empty).",
    ),
    (
        "vision.multibox_prior",
        1,
        _multibox_prior_rel,
        schema(
            "relay.attrs.MultiBoxPriorAttrs",
            ("sizes", "floats", (1.0,)),
            ("ratios", "floats", (1.0,)),
            ("steps", "floats", (-1.0, -1.0)),
            ("offsets", "floats", (0.5, 0.5)),
            ("clip", "bool", False),
        ),
        OpPattern.OPAQUE,
        ("data",),
        (
            "SSD anchor boxes (left, top, right, bottom) for every pixel of the feature map: one per "
            "size, plus one per extra ratio."
        ),
    ),
    (
        "vision.multibox_transform_loc",
        3,
        _multibox_transform_loc_rel,
        schema(
            "relay.attrs.MultiBoxTransformLocAttrs",
            ("clip", "bool", True),
            ("threshold", "float", 0.01),
            ("variances", "floats", (0.1, 0.1, 0.2, 0.2)),
            ("keep_background", "bool", False),
        ),
        OpPattern.OPAQUE,
        ("cls_prob", "loc_pred", "anchor"),
        "Decode SSD location predictions against the anchors into [class, score, box] rows.",
    ),
    (
        "vision.yolo_reorg",
        1,
        _yolo_reorg_rel,
        schema("relay.attrs.YoloReorgAttrs", ("stride", "int", 1)),
        OpPattern.INJECTIVE,
        ("data",),
        "YOLOv2's reorg (darknet's space-to-depth): ``(N, C, H, W) -> (N, C*s*s, H/s, W/s)``.",
    ),
    (
        "vision.proposal",
        3,
        _proposal_rel,
        schema(
            "relay.attrs.ProposalAttrs",
            ("scales", "floats", (4.0, 8.0, 16.0, 32.0)),
            ("ratios", "floats", (0.5, 1.0, 2.0)),
            ("feature_stride", "int", 16),
            ("threshold", "float", 0.7),
            ("rpn_pre_nms_top_n", "int", 6000),
            ("rpn_post_nms_top_n", "int", 300),
            ("rpn_min_size", "int", 16),
            ("iou_loss", "bool", False),
        ),
        OpPattern.OPAQUE,
        ("cls_prob", "bbox_pred", "im_info"),
        (
            "Faster R-CNN's region proposals: anchors regressed by the box deltas, sorted by score, "
            "NMS, the best ``rpn_post_nms_top_n`` per image as [batch, x1, y1, x2, y2]."
        ),
    ),
]

for _name, _n, _rel, _attrs, _pattern, _args, _doc in VISION_OPS:
    register(_name, _n, _rel, attrs=_attrs, pattern=_pattern, arg_names=_args, doc=_doc)


# --- builders (TVM's python/tvm/relay/op/vision/*.py signatures) ---------------------------


def _scalar(value, dtype: str) -> Expr:
    return value if isinstance(value, Expr) else const(value, dtype)


def get_valid_counts(data, score_threshold, id_index=0, score_index=1) -> TupleWrapper:
    """(valid_count, out_tensor, out_indices) for boxes scoring above ``score_threshold``.

    >>> count, boxes, idx = relay.vision.get_valid_counts(data, 0.5)
    """
    e = call(
        "vision.get_valid_counts",
        data,
        _scalar(score_threshold, "float32"),
        id_index=id_index,
        score_index=score_index,
    )
    return TupleWrapper(e, 3)


def non_max_suppression(
    data,
    valid_count,
    indices,
    max_output_size=-1,
    iou_threshold=0.5,
    force_suppress=False,
    top_k=-1,
    coord_start=2,
    score_index=1,
    id_index=0,
    return_indices=True,
    invalid_to_bottom=False,
):
    """Non-maximum suppression; a TupleWrapper (indices, count) when ``return_indices``."""
    e = call(
        "vision.non_max_suppression",
        data,
        valid_count,
        indices,
        _scalar(max_output_size, "int32"),
        _scalar(iou_threshold, "float32"),
        force_suppress=force_suppress,
        top_k=top_k,
        coord_start=coord_start,
        score_index=score_index,
        id_index=id_index,
        return_indices=return_indices,
        invalid_to_bottom=invalid_to_bottom,
    )
    return TupleWrapper(e, 2) if return_indices else e


def all_class_non_max_suppression(
    boxes,
    scores,
    max_output_boxes_per_class=-1,
    iou_threshold=-1.0,
    score_threshold=-1.0,
    output_format="onnx",
) -> TupleWrapper:
    """Per-class NMS: (indices, count) for onnx, (indices, scores, counts) for tensorflow."""
    e = call(
        "vision.all_class_non_max_suppression",
        boxes,
        scores,
        _scalar(max_output_boxes_per_class, "int32"),
        _scalar(iou_threshold, "float32"),
        _scalar(score_threshold, "float32"),
        output_format=output_format,
    )
    return TupleWrapper(e, 2 if output_format == "onnx" else 3)


def regular_non_max_suppression(
    boxes,
    scores,
    max_detections_per_class,
    max_detections,
    num_classes,
    iou_threshold,
    score_threshold,
) -> TupleWrapper:
    """TFLite's regular NMS: (boxes, classes, scores, num_detections)."""
    e = call(
        "vision.regular_non_max_suppression",
        boxes,
        scores,
        max_detections_per_class=max_detections_per_class,
        max_detections=max_detections,
        num_classes=num_classes,
        iou_threshold=iou_threshold,
        score_threshold=score_threshold,
    )
    return TupleWrapper(e, 4)


def _pair(v):
    return (int(v), int(v)) if isinstance(v, int) else tuple(int(x) for x in v)


def roi_align(
    data, rois, pooled_size, spatial_scale, sample_ratio=-1, layout="NCHW", mode="avg"
) -> Expr:
    """ROI align of ``rois`` rows [batch_index, x1, y1, x2, y2] to ``pooled_size`` bins."""
    return call(
        "vision.roi_align",
        data,
        rois,
        pooled_size=_pair(pooled_size),
        spatial_scale=spatial_scale,
        sample_ratio=sample_ratio,
        layout=layout,
        mode=mode,
    )


def roi_pool(data, rois, pooled_size, spatial_scale, layout="NCHW") -> Expr:
    """ROI max pooling of ``rois`` rows [batch_index, x1, y1, x2, y2] to ``pooled_size`` bins."""
    return call(
        "vision.roi_pool",
        data,
        rois,
        pooled_size=_pair(pooled_size),
        spatial_scale=spatial_scale,
        layout=layout,
    )


def multibox_prior(
    data, sizes=(1.0,), ratios=(1.0,), steps=(-1.0, -1.0), offsets=(0.5, 0.5), clip=False
) -> Expr:
    """SSD prior boxes for the feature map ``data``."""
    return call(
        "vision.multibox_prior",
        data,
        sizes=tuple(sizes),
        ratios=tuple(ratios),
        steps=tuple(steps),
        offsets=tuple(offsets),
        clip=clip,
    )


def multibox_transform_loc(
    cls_prob,
    loc_pred,
    anchor,
    clip=True,
    threshold=0.01,
    variances=(0.1, 0.1, 0.2, 0.2),
    keep_background=False,
) -> TupleWrapper:
    """(decoded [class, score, box] rows, valid count per image)."""
    e = call(
        "vision.multibox_transform_loc",
        cls_prob,
        loc_pred,
        anchor,
        clip=clip,
        threshold=threshold,
        variances=tuple(variances),
        keep_background=keep_background,
    )
    return TupleWrapper(e, 2)


def yolo_reorg(data, stride) -> Expr:
    """YOLO reorg with ``stride``."""
    return call("vision.yolo_reorg", data, stride=stride)


def proposal(
    cls_prob,
    bbox_pred,
    im_info,
    scales,
    ratios,
    feature_stride,
    threshold,
    rpn_pre_nms_top_n,
    rpn_post_nms_top_n,
    rpn_min_size,
    iou_loss,
) -> Expr:
    """Faster R-CNN region proposals."""
    return call(
        "vision.proposal",
        cls_prob,
        bbox_pred,
        im_info,
        scales=tuple(scales),
        ratios=tuple(ratios),
        feature_stride=feature_stride,
        threshold=threshold,
        rpn_pre_nms_top_n=rpn_pre_nms_top_n,
        rpn_post_nms_top_n=rpn_post_nms_top_n,
        rpn_min_size=rpn_min_size,
        iou_loss=iou_loss,
    )


__all__ = [
    "all_class_non_max_suppression",
    "get_valid_counts",
    "multibox_prior",
    "multibox_transform_loc",
    "non_max_suppression",
    "proposal",
    "regular_non_max_suppression",
    "roi_align",
    "roi_pool",
    "yolo_reorg",
]
