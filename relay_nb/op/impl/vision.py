"""numpy implementations of the ``vision.*`` operators, following ``topi.vision`` of TVM 0.19.

Sorting is stable (TVM's CPU argsort is ``std::stable_sort``): boxes of equal score keep
their input order.  Box overlap is TVM's: ``inter / (area_a + area_b - inter)`` with the
corners taken as min/max of the coordinate pairs, 0 when the union is not positive.

Defined behaviours where TVM leaves output memory unwritten (its hybrid scripts fill only
the valid rows): the unused rows of ``multibox_transform_loc`` are -1 (the convention of
the other NMS outputs); unused rows of ``all_class_non_max_suppression`` (onnx format) and
of ``proposal`` (an image with no box left) are 0.
"""

from __future__ import annotations

import math

import numpy as np

from ...errors import EvalError
from ._util import impl, layout_perm, to_layout


def _stable_desc(scores: np.ndarray) -> np.ndarray:
    """Indices sorting ``scores`` descending, ties in input order."""
    return (
        np.argsort(-scores, kind="stable")
        if scores.dtype.kind == "f"
        else np.argsort(-scores.astype(np.float64), kind="stable")
    )


def _corners(box: np.ndarray):
    """(left, top, right, bottom) of boxes given as two corner points in any order."""
    x1, y1, x2, y2 = box[..., 0], box[..., 1], box[..., 2], box[..., 3]
    return np.minimum(x1, x2), np.minimum(y1, y2), np.maximum(x1, x2), np.maximum(y1, y2)


def iou(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """TVM's calculate_overlap of box ``a`` (4,) against boxes ``b`` (..., 4)."""
    al, at, ar, ab = _corners(a)
    bl, bt, br, bb = _corners(b)
    zero = np.zeros((), b.dtype)
    w = np.maximum(zero, np.minimum(ar, br) - np.maximum(al, bl))
    h = np.maximum(zero, np.minimum(ab, bb) - np.maximum(at, bt))
    area = h * w
    u = (ar - al) * (ab - at) + (br - bl) * (bb - bt) - area
    safe = np.where(u <= 0, np.ones((), u.dtype), u)
    return np.where(u <= 0, zero, area / safe)


def _scalar(x) -> float:
    return np.asarray(x).reshape(-1)[0]


# --- get_valid_counts and non_max_suppression -------------------------------------------


@impl("vision.get_valid_counts")
def _get_valid_counts(args, attrs, out):
    data, threshold = args
    if attrs["score_threshold"] is not None:  # the attribute, when set, wins (as in TVM)
        threshold = attrs["score_threshold"]
    threshold = data.dtype.type(_scalar(threshold))
    b, n, _k = data.shape
    counts = np.zeros(b, np.int32)
    boxes = np.full_like(data, -1)
    indices = np.full((b, n), -1, np.int32)
    id_index, score_index = attrs["id_index"], attrs["score_index"]
    for i in range(b):
        keep = data[i, :, score_index] > threshold
        if id_index >= 0:
            keep &= data[i, :, id_index] >= 0
        rows = np.flatnonzero(keep)
        counts[i] = rows.size
        boxes[i, : rows.size] = data[i, rows]
        indices[i, : rows.size] = rows
    return counts, boxes, indices


def _nms_one(data, valid, max_out, thr, attrs):
    """TVM's hybrid_nms for one image: (output rows, box indices into ``data``)."""
    n, _width = data.shape
    out = np.full_like(data, -1)
    box_indices = np.full(n, -1, np.int64)
    score, cs, ids = attrs["score_index"], attrs["coord_start"], attrs["id_index"]
    if not thr > 0:
        out[:valid] = data[:valid]
        box_indices[:valid] = np.arange(valid)
        return out, box_indices
    if valid > 0:
        top_k = attrs["top_k"]
        keep = top_k if 0 < top_k < valid else valid
        order = _stable_desc(data[:valid, score])[:keep]
        out[:keep] = data[order]
        box_indices[:keep] = order
    kept = 0
    for j in range(valid):
        if kept == max_out:
            out[j] = -1
            box_indices[j] = -1
        elif out[j, score] > 0:
            earlier = out[:j]
            check = earlier[:, score] > 0
            if ids >= 0:
                check &= earlier[:, ids] >= 0
                if not attrs["force_suppress"]:
                    check &= earlier[:, ids] == out[j, ids]
            overlaps = iou(out[j, cs : cs + 4], earlier[check, cs : cs + 4])
            if np.any(overlaps >= thr):
                out[j] = -1
                box_indices[j] = -1
            else:
                kept += 1
    return out, box_indices


@impl("vision.non_max_suppression")
def _non_max_suppression(args, attrs, out_type):
    data, valid_count, indices, max_output_size, iou_threshold = args
    b, n, _ = data.shape
    max_out = int(_scalar(max_output_size))
    thr = data.dtype.type(_scalar(iou_threshold))
    if attrs["coord_start"] + 4 > data.shape[2]:
        raise EvalError(
            f"coord_start {attrs['coord_start']} leaves no 4 coordinates in rows of {data.shape[2]}"
        )
    outs, idx = [], []
    for i in range(b):
        valid = int(min(max(valid_count[i], 0), n))
        o, bi = _nms_one(data[i], valid, max_out, thr, attrs)
        if attrs["return_indices"]:
            bi = np.where(bi >= 0, indices[i][np.clip(bi, 0, n - 1)], bi)
        outs.append(o)
        idx.append(bi)
    if attrs["return_indices"]:
        return _compact_indices(np.stack(idx), n)
    out = np.stack(outs)
    if attrs["invalid_to_bottom"]:
        moved = np.full_like(out, -1)
        for i in range(b):
            rows = out[i][out[i, :, 0] >= 0]
            moved[i, : len(rows)] = rows
        out = moved
    return out


def _compact_indices(box_indices: np.ndarray, n: int):
    """TVM's hybrid_rearrange_indices_out: valid indices first, then -1; and their count."""
    b = box_indices.shape[0]
    out = np.full((b, n), -1, np.int32)
    counts = np.zeros((b, 1), np.int32)
    for i in range(b):
        valid = box_indices[i][box_indices[i] >= 0]
        out[i, : valid.size] = valid
        counts[i, 0] = valid.size
    return out, counts


# --- all-class and regular NMS -------------------------------------------------------------


def _greedy(boxes, order, scores, valid, max_out, thr):
    """TVM's _nms_loop for one (batch, class): the selected positions in ``order``."""
    scores = scores.copy()
    limit = max_out if max_out > 0 else valid
    selected = []
    j = 0
    while j < valid and len(selected) < limit:
        if scores[j] > -1:
            selected.append(j)
            rest = np.arange(j + 1, valid)
            live = rest[scores[rest] > 0]
            hit = live[iou(boxes[order[j]], boxes[order[live]]) >= thr]
            scores[hit] = -1
        j += 1
    return selected


@impl("vision.all_class_non_max_suppression")
def _all_class_nms(args, attrs, out_type):
    boxes, scores, max_out, iou_thr, score_thr = args
    batch, classes, n = scores.shape
    max_out = int(_scalar(max_out))
    iou_thr = np.float32(_scalar(iou_thr))
    score_thr = np.float32(_scalar(score_thr))
    picked = {}
    for b in range(batch):
        for c in range(classes):
            order = _stable_desc(scores[b, c])
            sorted_scores = scores[b, c][order]
            valid = int(np.count_nonzero(sorted_scores > score_thr))
            if iou_thr > 0 and valid > 0:
                sel = _greedy(boxes[b], order, sorted_scores, valid, max_out, iou_thr)
            else:
                sel = []
            picked[b, c] = (order[sel], sorted_scores[sel])
    if attrs["output_format"] == "onnx":
        rows = [(b, c, int(i)) for (b, c), (idx, _) in picked.items() for i in idx]
        out = np.zeros((batch * classes * n, 3), np.int64)
        if rows:
            out[: len(rows)] = rows
        return out, np.array([len(rows)], np.int64)
    indices = np.zeros((batch, classes * n, 2), np.int64)
    out_scores = np.zeros((batch, classes * n), np.float32)
    counts = np.zeros(batch, np.int64)
    for b in range(batch):
        at = 0
        for c in range(classes):
            idx, sc = picked[b, c]
            indices[b, at : at + len(idx), 0] = c
            indices[b, at : at + len(idx), 1] = idx
            out_scores[b, at : at + len(idx)] = sc
            at += len(idx)
        counts[b] = at
    return indices, out_scores, counts


def _overlap_yx(a, b) -> np.ndarray:
    """regular_nms's IoU of a (ymin, xmin, ymax, xmax) box with boxes ``b`` (m, 4): 0 where
    either area is not positive."""
    area_a = (a[2] - a[0]) * (a[3] - a[1])
    area_b = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    zero = np.zeros((), b.dtype)
    h = np.maximum(np.minimum(a[2], b[:, 2]) - np.maximum(a[0], b[:, 0]), zero)
    w = np.maximum(np.minimum(a[3], b[:, 3]) - np.maximum(a[1], b[:, 1]), zero)
    inter = h * w
    ok = (area_a > 0) & (area_b > 0)
    return np.where(ok, inter / np.where(ok, area_a + area_b - inter, 1), zero)


@impl("vision.regular_non_max_suppression")
def _regular_nms(args, attrs, out_type):
    boxes, scores = args
    batch, _, with_bg = scores.shape
    classes = attrs["num_classes"]
    per_class, max_det = attrs["max_detections_per_class"], attrs["max_detections"]
    if classes > with_bg:
        raise EvalError(f"num_classes={classes} but scores have only {with_bg} classes")
    offset = with_bg - classes
    thr, score_thr = np.float32(attrs["iou_threshold"]), np.float32(attrs["score_threshold"])
    out_boxes = np.zeros((batch, max_det, 4), np.float32)
    out_classes = np.zeros((batch, max_det), np.float32)
    out_scores = np.zeros((batch, max_det), np.float32)
    counts = np.zeros(batch, np.int32)
    for b in range(batch):
        best: list[tuple[float, int, int]] = []  # (score, box, class), kept sorted
        for c in range(classes):
            s = scores[b, :, c + offset]
            keep = np.flatnonzero(s >= score_thr)
            keep = keep[np.argsort(-s[keep], kind="stable")]  # stable, as TVM's bubble sort
            active = np.ones(len(keep), bool)
            chosen = []
            limit = min(len(keep), per_class)
            for p in range(len(keep)):
                if len(chosen) >= limit:
                    break
                if not active[p]:
                    continue
                chosen.append(int(keep[p]))
                active[p] = False
                rest = np.arange(p + 1, len(keep))
                rest = rest[active[rest]]
                hit = _overlap_yx(boxes[b, keep[p]], boxes[b, keep[rest]]) > thr
                active[rest[hit]] = False
            best = best + [(float(s[i]), i, c) for i in chosen]
            best = sorted(best, key=lambda t: -t[0])[:max_det]
        for k, (sc, i, c) in enumerate(best):
            out_boxes[b, k] = boxes[b, i]
            out_classes[b, k] = c
            out_scores[b, k] = sc
        counts[b] = len(best)
    return out_boxes, out_classes, out_scores, counts


# --- ROI align and ROI pool ------------------------------------------------------------------


def _bilinear(img: np.ndarray, y: np.ndarray, x: np.ndarray) -> np.ndarray:
    """topi's bilinear_sample_nchw of a (C, H, W) image at the grid ``y`` (P,) x ``x`` (Q,):
    (C, P, Q); taps outside the image count 0, summed in topi's order."""
    h, w = img.shape[1:]
    one = np.float32(1)
    yl, xl = np.floor(y).astype(np.int64), np.floor(x).astype(np.int64)
    wyh, wxh = y - yl.astype(np.float32), x - xl.astype(np.float32)
    val = np.zeros((img.shape[0], y.size, x.size), np.float32)
    for wx, xp in ((one - wxh, xl), (wxh, xl + 1)):
        for wy, yp in ((one - wyh, yl), (wyh, yl + 1)):
            ok = ((yp >= 0) & (yp <= h - 1))[:, None] & ((xp >= 0) & (xp <= w - 1))[None, :]
            taps = img[:, np.clip(yp, 0, h - 1)][:, :, np.clip(xp, 0, w - 1)]
            val = val + np.where(ok, (wy[:, None] * wx[None, :]) * taps, np.float32(0))
    return val


@impl("vision.roi_align")
def _roi_align(args, attrs, out_type):
    """Each bin averages (or maxes) a gh x gw grid of bilinear samples, the grid loop in
    topi's order, vectorized over channels and bins."""
    data, rois = args
    x = np.transpose(data, layout_perm(attrs["layout"], "NCHW")).astype(np.float32)
    ph_n, pw_n = attrs["pooled_size"]
    scale = np.float32(attrs["spatial_scale"])
    ratio, avg = attrs["sample_ratio"], attrs["mode"] == "avg"
    if attrs["mode"] not in ("avg", "max"):
        raise EvalError(f"mode must be avg or max, got {attrs['mode']!r}")
    _, c, h, w = x.shape
    out = np.zeros((rois.shape[0], c, ph_n, pw_n), np.float32)
    f = np.float32
    for r, roi in enumerate(rois.astype(np.float32)):
        img = x[int(roi[0])]
        sw, sh, ew, eh = roi[1] * scale, roi[2] * scale, roi[3] * scale, roi[4] * scale
        rh, rw = max(eh - sh, f(1)), max(ew - sw, f(1))
        bh, bw = rh / f(ph_n), rw / f(pw_n)
        gh = ratio if ratio > 0 else math.ceil(rh / f(ph_n))
        gw = ratio if ratio > 0 else math.ceil(rw / f(pw_n))
        count = f(gh * gw)
        y0 = sh + np.arange(ph_n, dtype=f) * bh
        x0 = sw + np.arange(pw_n, dtype=f) * bw
        acc = None
        for iy in range(gh):
            y = y0 + (f(iy) + f(0.5)) * bh / f(gh)
            for ix in range(gw):
                xx = x0 + (f(ix) + f(0.5)) * bw / f(gw)
                outside = ((y < -1) | (y > h))[:, None] | ((xx < -1) | (xx > w))[None, :]
                yc = np.minimum(np.maximum(y, f(0)), f(h - 1))
                xc = np.minimum(np.maximum(xx, f(0)), f(w - 1))
                v = np.where(outside, f(0), _bilinear(img, yc, xc))
                if avg:
                    acc = v / count if acc is None else acc + v / count
                else:
                    acc = v if acc is None else np.maximum(acc, v)
        if acc is not None:
            out[r] = acc
    return to_layout(out, "NCHW", attrs["layout"])


def _round_away(v):
    return math.floor(abs(v) + 0.5) * (1 if v >= 0 else -1)


@impl("vision.roi_pool")
def _roi_pool(args, attrs, out_type):
    data, rois = args
    x = np.transpose(data, layout_perm(attrs["layout"], "NCHW"))
    ph_n, pw_n = attrs["pooled_size"]
    scale = np.float32(attrs["spatial_scale"])
    _, c, h, w = x.shape
    out = np.zeros((rois.shape[0], c, ph_n, pw_n), x.dtype)
    f, eps = np.float32, np.float32(1e-5)
    for r, roi in enumerate(rois.astype(np.float32)):
        img = x[int(roi[0])]
        sw, sh, ew, eh = (_round_away(float(v * scale)) for v in roi[1:5])
        rh, rw = max(eh - sh + 1, 1), max(ew - sw + 1, 1)
        bh, bw = f(rh) / f(ph_n), f(rw) / f(pw_n)
        for ph in range(ph_n):
            hs = min(max(math.floor(f(ph) * bh + eps) + sh, 0), h)
            he = min(max(math.ceil(f(ph + 1) * bh - eps) + sh, 0), h)
            for pw in range(pw_n):
                ws = min(max(math.floor(f(pw) * bw + eps) + sw, 0), w)
                we = min(max(math.ceil(f(pw + 1) * bw - eps) + sw, 0), w)
                if hs < he and ws < we:
                    out[r, :, ph, pw] = img[:, hs:he, ws:we].max(axis=(1, 2))
    return to_layout(out, "NCHW", attrs["layout"])


# --- SSD: multibox_prior and multibox_transform_loc -----------------------------------------


@impl("vision.multibox_prior")
def _multibox_prior(args, attrs, out_type):
    """Anchors per pixel, in float32 as topi's hybrid script computes them."""
    data = args[0]
    h, w = data.shape[2], data.shape[3]
    f = np.float32
    sizes = [f(s) for s in attrs["sizes"]]
    ratios = [f(r) for r in attrs["ratios"]]
    steps, offsets = [f(s) for s in attrs["steps"]], [f(o) for o in attrs["offsets"]]
    step_h = steps[0] if steps[0] > 0 else f(1) / f(h)
    step_w = steps[1] if steps[1] > 0 else f(1) / f(w)
    half = []  # (half width, half height) of each anchor shape
    for k in range(len(sizes) + len(ratios) - 1):
        if k < len(sizes):
            half.append((f(sizes[k] * f(h)) / f(w) / f(2), sizes[k] / f(2)))
        else:
            r = np.sqrt(ratios[k - len(sizes) + 1])
            half.append((f(sizes[0] * f(h)) / f(w) * r / f(2), sizes[0] / r / f(2)))
    cy = (np.arange(h, dtype=f) + offsets[0]) * step_h
    cx = (np.arange(w, dtype=f) + offsets[1]) * step_w
    out = np.empty((h, w, len(half), 4), f)
    for k, (hw, hh) in enumerate(half):
        out[:, :, k, 0] = cx[None, :] - hw
        out[:, :, k, 1] = cy[:, None] - hh
        out[:, :, k, 2] = cx[None, :] + hw
        out[:, :, k, 3] = cy[:, None] + hh
    out = out.reshape(1, -1, 4)
    if attrs["clip"]:
        out = np.clip(out, f(0), f(1))
    return out


@impl("vision.multibox_transform_loc")
def _multibox_transform_loc(args, attrs, out_type):
    cls_prob, loc_pred, anchor = args
    batch, _classes, n = cls_prob.shape
    dt = loc_pred.dtype
    keep_bg = attrs["keep_background"]
    start = 0 if keep_bg else 1
    vx, vy, vw, vh = (dt.type(v) for v in attrs["variances"])
    out = np.full((batch, n, 6), -1, dt)
    counts = np.zeros(batch, np.int32)
    a = anchor[0].astype(dt)
    aw, ah = a[:, 2] - a[:, 0], a[:, 3] - a[:, 1]
    ax, ay = (a[:, 0] + a[:, 2]) / dt.type(2), (a[:, 1] + a[:, 3]) / dt.type(2)
    two = dt.type(2)
    for i in range(batch):
        probs = cls_prob[i, start:, :]
        if probs.shape[0]:
            best = probs.max(axis=0)
            score = np.maximum(best, dt.type(-1))
            cls = np.where(best > -1, probs.argmax(axis=0) + start, 0)
        else:
            score, cls = np.full(n, -1, dt), np.zeros(n, np.int64)
        cls = np.where((cls > 0) & (score < dt.type(attrs["threshold"])), 0, cls)
        rows = np.arange(n) if keep_bg else np.flatnonzero(cls > 0)
        p = loc_pred[i].reshape(n, 4)[rows].astype(dt)
        ox = p[:, 0] * vx * aw[rows] + ax[rows]
        oy = p[:, 1] * vy * ah[rows] + ay[rows]
        ow = np.exp(p[:, 2] * vw) * aw[rows] / two
        oh = np.exp(p[:, 3] * vh) * ah[rows] / two
        coords = np.stack([ox - ow, oy - oh, ox + ow, oy + oh], axis=1)
        if attrs["clip"]:
            coords = np.maximum(dt.type(0), np.minimum(dt.type(1), coords))
        m = rows.size
        out[i, :m, 0] = cls[rows] - (0 if keep_bg else 1)
        out[i, :m, 1] = score[rows]
        out[i, :m, 2:] = coords
        counts[i] = m
    return out, counts


# --- YOLO reorg and proposal ---------------------------------------------------------------


@impl("vision.yolo_reorg")
def _yolo_reorg(args, attrs, out_type):
    """darknet's reorg: view the input as ``(N, C / s^2, H*s, W*s)`` and read it in input order."""
    x = args[0]
    s = attrs["stride"]
    n, c, h, w = x.shape
    if c % (s * s) or h % s or w % s:
        raise EvalError(f"shape {x.shape} does not divide by stride {s}")
    out_c = c // (s * s)
    view = x.reshape(n, out_c, h * s, w * s)
    k = np.arange(c)[:, None, None]
    j = np.arange(h)[None, :, None]
    i = np.arange(w)[None, None, :]
    offset = k // out_c
    picked = view[:, k % out_c, j * s + offset // s, i * s + offset % s]
    return picked.reshape(n, c * s * s, h // s, w // s)


def _anchor(ratio: float, scale: float, base: int):
    """topi's generate_anchor (Python double arithmetic)."""
    size = float(base) * float(base)
    ctr = 0.5 * (base - 1.0)
    new_w = math.floor(math.sqrt(math.floor(size / ratio)) + 0.5) * scale
    new_h = math.floor(new_w / scale * ratio + 0.5) * scale
    return (
        ctr - 0.5 * (new_w - 1),
        ctr - 0.5 * (new_h - 1),
        ctr + 0.5 * (new_w - 1),
        ctr + 0.5 * (new_h - 1),
    )


def _proposal_iou(a, b) -> np.ndarray:
    """proposal's overlap of box ``a`` with boxes ``b`` (m, >= 4): pixel boxes, so widths
    are ``x2 - x1 + 1``."""
    one, zero = np.float32(1), np.float32(0)
    w = np.maximum(zero, np.minimum(a[2], b[:, 2]) - np.maximum(a[0], b[:, 0]) + one)
    h = np.maximum(zero, np.minimum(a[3], b[:, 3]) - np.maximum(a[1], b[:, 1]) + one)
    inter = w * h
    area_a = (a[2] - a[0] + one) * (a[3] - a[1] + one)
    union = area_a + (b[:, 2] - b[:, 0] + one) * (b[:, 3] - b[:, 1] + one) - inter
    return inter / union


@impl("vision.proposal")
def _proposal(args, attrs, out_type):
    cls_prob, bbox_pred, im_info = (a.astype(np.float32) for a in args)
    batch, _, height, width = cls_prob.shape
    scales, ratios = attrs["scales"], attrs["ratios"]
    stride = attrs["feature_stride"]
    a_n = len(scales) * len(ratios)
    f = np.float32
    anchors = np.array(
        [_anchor(ratios[k // len(scales)], scales[k % len(scales)], stride) for k in range(a_n)], f
    )
    hh, ww = np.meshgrid(np.arange(height), np.arange(width), indexing="ij")
    shift = np.stack([ww, hh, ww, hh], axis=-1).astype(f) * f(stride)  # (H, W, 4)
    boxes = anchors[None, None] + shift[:, :, None]  # (H, W, A, 4)
    post = attrs["rpn_post_nms_top_n"]
    num = height * width * a_n
    pre = min(attrs["rpn_pre_nms_top_n"], num) if attrs["rpn_pre_nms_top_n"] > 0 else num
    out = np.zeros((batch * post, 5), f)
    one, half = f(1), f(0.5)
    for b in range(batch):
        im_h, im_w, im_scale = im_info[b]
        d = bbox_pred[b].reshape(a_n, 4, height, width).transpose(2, 3, 0, 1)  # (H, W, A, 4)
        x1, y1, x2, y2 = (boxes[..., i] for i in range(4))
        if attrs["iou_loss"]:
            px1, py1, px2, py2 = x1 + d[..., 0], y1 + d[..., 1], x2 + d[..., 2], y2 + d[..., 3]
        else:
            bw, bh = x2 - x1 + one, y2 - y1 + one
            cx, cy = x1 + half * (bw - one), y1 + half * (bh - one)
            pcx, pcy = d[..., 0] * bw + cx, d[..., 1] * bh + cy
            pw, ph = np.exp(d[..., 2]) * bw, np.exp(d[..., 3]) * bh
            px1, py1 = pcx - half * (pw - one), pcy - half * (ph - one)
            px2, py2 = pcx + half * (pw - one), pcy + half * (ph - one)
        px1 = np.maximum(np.minimum(px1, im_w - one), f(0))
        py1 = np.maximum(np.minimum(py1, im_h - one), f(0))
        px2 = np.maximum(np.minimum(px2, im_w - one), f(0))
        py2 = np.maximum(np.minimum(py2, im_h - one), f(0))
        score = cls_prob[b, a_n:].transpose(1, 2, 0).copy()  # foreground scores (H, W, A)
        outside = (hh >= int(im_h / f(stride))) | (ww >= int(im_w / f(stride)))
        score[outside] = -1
        min_size = im_scale * f(attrs["rpn_min_size"])
        small = ((px2 - px1 + one) < min_size) | ((py2 - py1 + one) < min_size)
        grow = np.where(small, min_size / f(2), f(0))
        rows = np.stack(
            [px1 - grow, py1 - grow, px2 + grow, py2 + grow, np.where(small, f(-1), score)], -1
        )
        rows = rows.reshape(num, 5)
        ranked = rows[_stable_desc(rows[:, 4])[:pre]]
        removed = np.zeros(pre, bool)
        for l in range(pre - 1):
            if not removed[l]:
                rest = np.arange(l + 1, pre)
                removed[rest[_proposal_iou(ranked[l], ranked[rest]) > attrs["threshold"]]] = True
        kept = ranked[~removed]
        if len(kept):
            cycled = np.resize(kept[:, :4], (post, 4))  # topi refills by cycling the kept boxes
            out[b * post : (b + 1) * post, 0] = b
            out[b * post : (b + 1) * post, 1:] = cycled
    return out
