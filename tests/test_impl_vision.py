"""vision.* values on small hand-checked cases (three boxes with known IoUs, 4x4 images)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import relay_nb as relay

vision = relay.vision


@pytest.fixture(autouse=True)
def _no_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


def run(expr, *args):
    expr = expr.astuple() if isinstance(expr, relay.TupleWrapper) else expr
    params = relay.analysis.free_vars(expr)
    mod = relay.transform.InferType()(relay.IRModule.from_expr(relay.Function(params, expr)))
    return relay.create_executor("interpreter", mod=mod).evaluate()(*args)


def var(name, value):
    return relay.var(name, shape=np.shape(value), dtype=str(np.asarray(value).dtype))


# Three boxes: IoU(A, B) = 50 / 150 = 1/3, IoU(A, C) = 81 / 119 = 0.68, IoU(B, C) = 54 / 146 = 0.37
A, B, C = [0, 0, 10, 10], [5, 0, 15, 10], [1, 1, 11, 11]


def rows(*boxes):
    """[class, score, x1, y1, x2, y2] rows as a (1, n, 6) batch."""
    return np.array([[[cls, score, *box] for cls, score, box in boxes]], "float32")


# --- get_valid_counts --------------------------------------------------------------------


def test_get_valid_counts_moves_valid_boxes_up():
    data = rows((0, 0.9, A), (0, 0.2, B), (-1, 0.6, C), (1, 0.7, A))
    count, boxes, idx = run(vision.get_valid_counts(var("d", data), 0.5), data)
    # box 1 scores too low, box 2 has class -1
    assert count.tolist() == [2]
    assert idx.tolist() == [[0, 3, -1, -1]]
    assert boxes[0, :2].tolist() == data[0, [0, 3]].tolist()
    assert (boxes[0, 2:] == -1).all()
    count, _, idx = run(vision.get_valid_counts(var("d", data), 0.5, id_index=-1), data)
    assert count.tolist() == [3] and idx.tolist() == [[0, 2, 3, -1]]


def test_get_valid_counts_threshold_is_strict():
    data = rows((0, 0.5, A), (0, 0.51, B))
    count, _, idx = run(vision.get_valid_counts(var("d", data), 0.5), data)
    assert count.tolist() == [1] and idx.tolist() == [[1, -1]]


# --- non_max_suppression -----------------------------------------------------------------


def nms(data, **kw):
    count = np.array([data.shape[1]], "int32")
    indices = np.arange(data.shape[1], dtype="int32")[None]
    e = vision.non_max_suppression(var("d", data), var("c", count), var("i", indices), **kw)
    return run(e, data, count, indices)


def test_nms_keeps_boxes_below_the_iou_threshold():
    data = rows((0, 0.7, C), (0, 0.9, A), (0, 0.8, B))
    idx, count = nms(data, iou_threshold=0.5)
    # sorted A (0.9), B (0.8), C (0.7): B overlaps A by 1/3 (kept), C by 0.68 (dropped)
    assert idx.tolist() == [[1, 2, -1]] and count.tolist() == [[2]]
    idx, count = nms(data, iou_threshold=0.3)
    assert idx.tolist() == [[1, -1, -1]] and count.tolist() == [[1]]


def test_nms_suppresses_at_exactly_the_threshold():
    data = rows((0, 0.9, A), (0, 0.8, B))
    assert nms(data, iou_threshold=1 / 3)[0].tolist() == [[0, -1]]  # IoU 1/3 >= 1/3
    assert nms(data, iou_threshold=0.34)[0].tolist() == [[0, 1]]


def test_nms_classes_top_k_and_max_output_size():
    data = rows((0, 0.9, A), (1, 0.8, C))
    assert nms(data, iou_threshold=0.5)[0].tolist() == [[0, 1]]  # other class: kept
    assert nms(data, iou_threshold=0.5, force_suppress=True)[0].tolist() == [[0, -1]]
    data = rows((0, 0.9, A), (0, 0.8, B), (0, 0.7, [20, 20, 30, 30]))
    assert nms(data, iou_threshold=0.5, top_k=2)[0].tolist() == [[0, 1, -1]]
    assert nms(data, iou_threshold=0.5, max_output_size=1)[0].tolist() == [[0, -1, -1]]


def test_nms_box_output_and_invalid_to_bottom():
    data = rows((0, 0.9, A), (0, 0.8, C), (0, 0.7, B))
    out = nms(data, iou_threshold=0.5, return_indices=False)
    assert out[0, 0].tolist() == data[0, 0].tolist()
    assert (out[0, 1] == -1).all()  # C is suppressed where it was sorted
    assert out[0, 2].tolist() == data[0, 2].tolist()
    out = nms(data, iou_threshold=0.5, return_indices=False, invalid_to_bottom=True)
    assert out[0, 1].tolist() == data[0, 2].tolist() and (out[0, 2] == -1).all()


def test_get_valid_counts_then_nms_maps_back_to_input_indices():
    data = rows((0, 0.1, B), (0, 0.9, A), (0, 0.8, C), (0, 0.7, B))
    d = var("d", data)
    count, boxes, idx = vision.get_valid_counts(d, 0.5)
    got, n = run(vision.non_max_suppression(boxes, count, idx, iou_threshold=0.5), data)
    assert got.tolist() == [[1, 3, -1, -1]] and n.tolist() == [[2]]


# --- all-class and regular NMS --------------------------------------------------------------

BOXES = np.array([[A, B, C]], "float32")
SCORES = np.array([[[0.9, 0.8, 0.7], [0.1, 0.6, 0.95]]], "float32")  # (batch, class, box)


def test_all_class_nms_onnx_format():
    e = vision.all_class_non_max_suppression(var("b", BOXES), var("s", SCORES), -1, 0.5, 0.05)
    idx, total = run(e, BOXES, SCORES)
    # class 0: A, B (C overlaps A); class 1: C, B (A overlaps C)
    assert total.tolist() == [4]
    assert idx[:4].tolist() == [[0, 0, 0], [0, 0, 1], [0, 1, 2], [0, 1, 1]]
    assert idx.shape == (6, 3) and (idx[4:] == 0).all()
    e = vision.all_class_non_max_suppression(var("b", BOXES), var("s", SCORES), 1, 0.5, 0.65)
    idx, total = run(e, BOXES, SCORES)
    assert total.tolist() == [2] and idx[:2].tolist() == [[0, 0, 0], [0, 1, 2]]


def test_all_class_nms_tensorflow_format():
    e = vision.all_class_non_max_suppression(
        var("b", BOXES), var("s", SCORES), -1, 0.5, 0.05, output_format="tensorflow"
    )
    idx, scores, counts = run(e, BOXES, SCORES)
    assert counts.tolist() == [4]
    assert idx[0, :4].tolist() == [[0, 0], [0, 1], [1, 2], [1, 1]]
    np.testing.assert_allclose(scores[0], [0.9, 0.8, 0.95, 0.6, 0, 0])


def test_regular_nms():
    boxes = BOXES  # read as (ymin, xmin, ymax, xmax): the IoUs are the same
    scores = np.concatenate([np.zeros((1, 3, 1), "float32"), SCORES.transpose(0, 2, 1)], axis=2)
    e = vision.regular_non_max_suppression(var("b", boxes), var("s", scores), 2, 3, 2, 0.5, 0.3)
    out_boxes, classes, out_scores, n = run(e, boxes, scores)
    # class 0 keeps A, B; class 1 keeps C, B; the best three: C (0.95), A (0.9), B (0.8)
    assert n.tolist() == [3]
    assert out_boxes[0].tolist() == [C, A, B]
    assert classes.tolist() == [[1, 0, 0]]
    np.testing.assert_allclose(out_scores[0], [0.95, 0.9, 0.8])


# --- ROI align / ROI pool ----------------------------------------------------------------------

IMG = np.arange(16, dtype="float32").reshape(1, 1, 4, 4)  # value 4y + x: bilinear is exact


def roi_align(rois, pooled, **kw):
    rois = np.array(rois, "float32")
    return run(vision.roi_align(var("x", IMG), var("r", rois), pooled, 1.0, **kw), IMG, rois)


def test_roi_align_averages_bilinear_samples():
    # roi 3x3, one bin, 2x2 samples at 0.75 and 2.25: 3.75, 5.25, 9.75, 11.25
    assert roi_align([[0, 0, 0, 3, 3]], (1, 1), sample_ratio=2).tolist() == [[[[7.5]]]]
    assert roi_align([[0, 0, 0, 3, 3]], (1, 1), sample_ratio=2, mode="max").tolist() == [
        [[[11.25]]]
    ]
    got = roi_align([[0, 0, 0, 3, 3]], (2, 2), sample_ratio=1)
    assert got.tolist() == [[[[3.75, 5.25], [9.75, 11.25]]]]
    # adaptive grid: ceil(3 / 1) = 3 samples per side at 0.5, 1.5, 2.5
    assert roi_align([[0, 0, 0, 3, 3]], (1, 1)).tolist() == [[[[7.5]]]]
    # samples beyond the image (y > 4) are 0
    assert roi_align([[0, 10, 10, 12, 12]], (1, 1), sample_ratio=1).tolist() == [[[[0.0]]]]


def test_roi_align_nhwc_matches_nchw():
    rois = np.array([[0, 0.5, 0.25, 3, 2.5]], "float32")
    x = IMG.transpose(0, 2, 3, 1).copy()
    nhwc = run(vision.roi_align(var("x", x), var("r", rois), (2, 2), 1.0, layout="NHWC"), x, rois)
    nchw = run(vision.roi_align(var("x", IMG), var("r", rois), (2, 2), 1.0), IMG, rois)
    np.testing.assert_array_equal(nhwc.transpose(0, 3, 1, 2), nchw)


def roi_pool(rois, pooled, scale=1.0):
    rois = np.array(rois, "float32")
    return run(vision.roi_pool(var("x", IMG), var("r", rois), pooled, scale), IMG, rois)


def test_roi_pool_takes_the_maximum_of_each_bin():
    assert roi_pool([[0, 0, 0, 3, 3]], (2, 2)).tolist() == [[[[5, 7], [13, 15]]]]
    assert roi_pool([[0, 1, 1, 2, 2]], (1, 1)).tolist() == [[[[10]]]]
    assert roi_pool([[0, 0, 0, 6, 6]], (2, 2), scale=0.5).tolist() == [[[[5, 7], [13, 15]]]]
    assert roi_pool([[0, 10, 10, 12, 12]], (1, 1)).tolist() == [[[[0]]]]  # empty bin


# --- SSD -------------------------------------------------------------------------------------


def test_multibox_prior():
    x = np.zeros((1, 1, 2, 2), "float32")
    got = run(vision.multibox_prior(var("x", x), sizes=(0.5,)), x)
    assert got.tolist() == [
        [[0, 0, 0.5, 0.5], [0.5, 0, 1, 0.5], [0, 0.5, 0.5, 1], [0.5, 0.5, 1, 1]]
    ]
    got = run(vision.multibox_prior(var("x", x), sizes=(0.5, 0.25), ratios=(1, 4), clip=True), x)
    assert got.shape == (1, 12, 4)
    # pixel (0, 0): size 0.5, size 0.25, ratio 4 (half width 0.5, half height 0.125), clipped
    assert got[0, :3].tolist() == [
        [0, 0, 0.5, 0.5],
        [0.125, 0.125, 0.375, 0.375],
        [0, 0.125, 0.75, 0.375],
    ]


def test_multibox_transform_loc():
    cls = np.array([[[0.1, 0.9], [0.7, 0.05], [0.2, 0.05]]], "float32")  # (1, 3 classes, 2 anchors)
    anchors = np.array([[[0.1, 0.2, 0.5, 0.6], [0.5, 0.5, 0.9, 0.9]]], "float32")
    loc = np.zeros((1, 8), "float32")
    loc[0, 0] = 0.5  # x offset of anchor 0: 0.5 * 0.1 * 0.4 = 0.02
    e = vision.multibox_transform_loc(
        var("c", cls), var("l", loc), var("a", anchors), threshold=0.1
    )
    out, count = run(e, cls, loc, anchors)
    # anchor 0: class 1 (stored as 0) with 0.7; anchor 1: best foreground 0.05 < 0.1 -> dropped
    assert count.tolist() == [1]
    np.testing.assert_allclose(out[0, 0], [0, 0.7, 0.12, 0.2, 0.52, 0.6], rtol=1e-6)
    assert (out[0, 1] == -1).all()
    e = vision.multibox_transform_loc(
        var("c", cls), var("l", loc), var("a", anchors), keep_background=True
    )
    out, count = run(e, cls, loc, anchors)
    assert count.tolist() == [2]
    assert out[0, :, 0].tolist() == [1, 0] and out[0, 1, 1] == np.float32(0.9)


# --- YOLO, proposal ----------------------------------------------------------------------------


def _reorg_reference(a, s):
    """darknet's reorg, element by element (TVM's reorg_python)."""
    n, c, h, w = a.shape
    flat = a.reshape(-1)
    out_c = c // (s * s)
    out = []
    for b in range(n):
        for k in range(c):
            for j in range(h):
                for i in range(w):
                    c2, offset = k % out_c, k // out_c
                    w2, h2 = i * s + offset % s, j * s + offset // s
                    out.append(flat[w2 + w * s * (h2 + h * s * (c2 + out_c * b))])
    return np.array(out, a.dtype).reshape(n, c * s * s, h // s, w // s)


def test_yolo_reorg():
    x = np.arange(16, dtype="float32").reshape(1, 4, 2, 2)
    got = run(vision.yolo_reorg(var("x", x), 2), x)
    assert got.shape == (1, 16, 1, 1)
    assert got.reshape(-1).tolist() == [0, 2, 8, 10, 1, 3, 9, 11, 4, 6, 12, 14, 5, 7, 13, 15]
    x = np.random.default_rng(0).normal(size=(2, 8, 4, 6)).astype("float32")
    np.testing.assert_array_equal(run(vision.yolo_reorg(var("x", x), 2), x), _reorg_reference(x, 2))


def proposal(cls, deltas, im_info, **kw):
    args = {
        "scales": (1.0,),
        "ratios": (1.0,),
        "feature_stride": 4,
        "threshold": 0.7,
        "rpn_pre_nms_top_n": -1,
        "rpn_post_nms_top_n": 6,
        "rpn_min_size": 1,
        "iou_loss": False,
    }
    args.update(kw)
    e = vision.proposal(var("c", cls), var("d", deltas), var("i", im_info), **args)
    return run(e, cls, deltas, im_info)


FG = np.array([[0.9, 0.8], [0.7, 0.6]], "float32")
CLS = np.stack([1 - FG, FG])[None]  # (1, 2 anchors... background, foreground), 2x2 positions
INFO = np.array([[8, 8, 1]], "float32")
# the one anchor is (0, 0, 3, 3), shifted by 4 pixels per position


def test_proposal_sorts_and_cycles_the_kept_boxes():
    got = proposal(CLS, np.zeros((1, 4, 2, 2), "float32"), INFO)
    assert got[:, 0].tolist() == [0] * 6
    assert got[:, 1:].tolist() == [
        [0, 0, 3, 3],
        [4, 0, 7, 3],
        [0, 4, 3, 7],
        [4, 4, 7, 7],
        [0, 0, 3, 3],
        [4, 0, 7, 3],
    ]
    got = proposal(CLS, np.zeros((1, 4, 2, 2), "float32"), INFO, rpn_pre_nms_top_n=3)
    assert got[:, 1:].tolist()[3:] == [[0, 0, 3, 3], [4, 0, 7, 3], [0, 4, 3, 7]]


def test_proposal_regression_and_nms():
    deltas = np.zeros((1, 4, 2, 2), "float32")
    deltas[0, 0, 0, 1] = -0.75  # box at (0, 1) moves 3 pixels left: [1, 0, 4, 3], IoU 12/20 with A
    got = proposal(CLS, deltas, INFO)
    assert got[1, 1:].tolist() == [1, 0, 4, 3]
    got = proposal(CLS, deltas, INFO, threshold=0.5)
    assert got[:3, 1:].tolist() == [[0, 0, 3, 3], [0, 4, 3, 7], [4, 4, 7, 7]]


def test_proposal_scores_outside_the_image_and_small_boxes_last():
    # image height 4: only the first row of positions is inside (4 / 4 = 1)
    got = proposal(CLS, np.zeros((1, 4, 2, 2), "float32"), np.array([[4, 8, 1]], "float32"))
    assert got[:2, 1:].tolist() == [[0, 0, 3, 3], [4, 0, 7, 3]]
    # boxes narrower than rpn_min_size=5 are widened by 2.5 on each side and scored -1
    got = proposal(CLS, np.zeros((1, 4, 2, 2), "float32"), INFO, rpn_min_size=5)
    assert got[0, 1:].tolist() == [-2.5, -2.5, 5.5, 5.5]
