"""ONNX converters that move data and compute shapes (Reshape, Slice, Gather, Resize...),
and those on Relay operators other branches add (TopK, CumSum, Scatter...)."""

from __future__ import annotations

import math

import numpy as np

from ..ir.expr import Expr, Tuple, const
from ..op import api as R
from ..op import nn
from ..op._common import call
from ..op.registry import has_op
from .common import FOLD_LIMIT, Dim, FrontendError, dtype_of, fold, is_static, shape_elements, shape_of
from .onnx_ops import _axes_arg, _axis, _ints, _static, onnx_op
from .onnx_nn import _broadcast


# --- shapes and data movement -----------------------------------------------------------


@onnx_op("Shape")
def shape(inputs, attrs, opset):
    s = shape_of(inputs[0])
    start, end = int(attrs.get("start", 0)), attrs.get("end")
    if is_static(s):
        return const(np.asarray(s, dtype="int64")[start:end])
    out = R.shape_of(inputs[0], "int64")
    if start or end is not None:
        out = R.strided_slice(out, [start], [len(s) if end is None else int(end)])
    return out


@onnx_op("Size")
def size(inputs, attrs, opset):
    s = shape_of(inputs[0])
    if is_static(s):
        return const(np.asarray(int(np.prod(s)), dtype="int64"))
    return R.prod(R.shape_of(inputs[0], "int64"))


@onnx_op("Constant")
def constant(inputs, attrs, opset):
    for key, dt in (("value", None), ("value_float", "float32"), ("value_floats", "float32"),
                    ("value_int", "int64"), ("value_ints", "int64")):
        if key in attrs:
            return const(np.asarray(attrs[key], dtype=dt))
    raise FrontendError(f"Constant with attributes {sorted(attrs)} is not supported")


@onnx_op("ConstantOfShape")
def constant_of_shape(inputs, attrs, opset):
    value = np.asarray(attrs.get("value", np.zeros(1, "float32"))).reshape(-1)
    fill = const(value[0])
    s = inputs.value(0)
    if s is None:
        return call("dyn.full", fill, inputs[0], dtype=str(value.dtype))
    return R.full(fill, tuple(_ints(s)), str(value.dtype))


@onnx_op("Reshape")
def reshape(inputs, attrs, opset):
    x = inputs[0]
    s = inputs.value(1)
    allowzero = bool(attrs.get("allowzero", 0))
    if s is None:
        static = _partly_known_shape(x, inputs[1]) if not allowzero else None
        if static is None:
            return call("dyn.reshape", x, inputs[1], allowzero=allowzero)
        return R.reshape(x, static)
    return R.reshape(x, tuple(_ints(s)), allowzero=allowzero)


def _partly_known_shape(x: Expr, shape: Expr):
    """A static ``newshape`` for a computed shape: x's own dims become 0, one unknown -1."""
    elems = shape_elements(shape)
    if elems is None:
        return None
    out = []
    for i, e in enumerate(elems):
        if isinstance(e, Dim):
            # 0 copies x's dim i: right when the element *is* that dim
            e = 0 if e.src is x and e.axis == i else None
        out.append(e)
    unknown = [i for i, e in enumerate(out) if e is None]
    if len(unknown) > 1 or (unknown and -1 in out):
        return None
    return tuple(-1 if e is None else e for e in out)


@onnx_op("Flatten")
def flatten(inputs, attrs, opset):
    x = inputs[0]
    s = shape_of(x)
    axis = _axis(int(attrs.get("axis", 1)), len(s))
    if is_static(s):
        return R.reshape(x, (int(np.prod(s[:axis])), int(np.prod(s[axis:]))))
    if is_static(s[axis:]):
        return R.reshape(x, (-1, int(np.prod(s[axis:]))))
    if axis == 1:
        return nn.batch_flatten(x)
    raise FrontendError("Flatten of this dynamic shape is not supported")


@onnx_op("Transpose")
def transpose(inputs, attrs, opset):
    perm = attrs.get("perm")
    return R.transpose(inputs[0], tuple(perm) if perm is not None else None)


@onnx_op("Concat")
def concat(inputs, attrs, opset):
    args = [inputs[i] for i in range(len(inputs)) if inputs.has(i)]
    return R.concatenate(args, int(attrs["axis"]))


@onnx_op("Split")
def split(inputs, attrs, opset):
    x = inputs[0]
    s = shape_of(x)
    axis = _axis(int(attrs.get("axis", 0)), len(s))
    sizes = _ints(inputs.value(1)) if opset >= 13 and inputs.has(1) else attrs.get("split")
    n = attrs.get("num_outputs", attrs["_outputs"])
    if sizes is None:
        if not isinstance(s[axis], int):
            return R.split(x, n, axis)
        chunk = -(-s[axis] // n)
        sizes = [min(chunk, s[axis] - i * chunk) for i in range(n)]
    points = list(np.cumsum(sizes)[:-1])
    out = R.split(x, [int(p) for p in points], axis) if points else None
    return [x] if out is None else [out[i] for i in range(len(sizes))]


@onnx_op("Slice")
def slice_(inputs, attrs, opset):
    x = inputs[0]
    s = shape_of(x)
    if opset < 10:
        starts, ends = list(attrs["starts"]), list(attrs["ends"])
        axes, steps = attrs.get("axes"), None
    else:
        starts, ends = _ints(_static(inputs, 1, "starts")), _ints(_static(inputs, 2, "ends"))
        axes = _ints(inputs.value(3)) if inputs.has(3) else None
        steps = _ints(inputs.value(4)) if inputs.has(4) else None
    axes = [_axis(a, len(s)) for a in (axes if axes is not None else range(len(starts)))]
    steps = steps or [1] * len(starts)
    out = x
    begin, end, stride, sl_axes = [], [], [], []
    for a, b, e, st in zip(axes, starts, ends, steps):
        dim = s[a]
        if not isinstance(dim, int):
            raise FrontendError("Slice of a dynamic dimension is not supported")
        b, e, st = slice(b, e, st).indices(dim)
        if st < 0:
            # walk a reversed axis forwards: index i there is dim-1-i here
            out = R.reverse(out, a)
            b, e, st = dim - 1 - b, dim - 1 - e, -st
        begin.append(b), end.append(max(e, b)), stride.append(st), sl_axes.append(a)
    return R.strided_slice(out, begin, end, stride, axes=sl_axes)


@onnx_op("Squeeze")
def squeeze(inputs, attrs, opset):
    axes = _axes_arg(inputs, attrs, 1, 13, opset)
    return R.squeeze(inputs[0], axes if axes else None)


@onnx_op("Unsqueeze")
def unsqueeze(inputs, attrs, opset):
    axes = _axes_arg(inputs, attrs, 1, 13, opset)
    x = inputs[0]
    rank = len(shape_of(x)) + len(axes)
    for a in sorted(_axis(a, rank) for a in axes):
        x = R.expand_dims(x, a)
    return x


@onnx_op("Gather")
def gather(inputs, attrs, opset):
    x, idx = inputs[0], inputs[1]
    s = shape_of(x)
    axis = _axis(int(attrs.get("axis", 0)), len(s))
    v = inputs.value(1)
    if v is not None and isinstance(s[axis], int):
        # negative indices count from the end
        idx = const(np.where(v < 0, v + s[axis], v).astype(v.dtype))
    else:
        dt = dtype_of(idx)
        dim = const(np.asarray(s[axis], dt)) if isinstance(s[axis], int) else R.take(R.shape_of(x, dt), const(axis))
        idx = R.where(R.less(idx, R.cast(const(0), dtype_of(idx))), R.add(idx, dim), idx)
    return R.take(x, idx, axis=axis)


@onnx_op("Expand")
def expand(inputs, attrs, opset):
    x = inputs[0]
    target = inputs.value(1)
    if target is None:
        return call("dyn.broadcast_to", x, _bidirectional_target(x, inputs[1]))
    # ONNX Expand broadcasts both ways: a 1 in the target keeps x's dim
    return R.broadcast_to(x, _broadcast(shape_of(x), tuple(_ints(target))))


def _bidirectional_target(x: Expr, shape: Expr) -> Expr:
    """The shape Expand really produces: where the target says 1, x's own dim (ranks aligned
    on the right), as numpy broadcasting; dyn.broadcast_to needs that final shape."""
    (n,) = shape_of(shape)
    r = len(shape_of(x))
    xs = R.shape_of(x, "int64")
    shape = R.cast(shape, "int64")
    if n > r:
        xs = R.concatenate([const(np.ones(n - r, "int64")), xs], 0)
    elif r > n:
        shape = R.concatenate([const(np.ones(r - n, "int64")), shape], 0)
    return R.where(R.equal(shape, const(np.asarray(1, "int64"))), xs, shape)


@onnx_op("Tile")
def tile(inputs, attrs, opset):
    return R.tile(inputs[0], tuple(_ints(_static(inputs, 1, "repeats"))))


@onnx_op("Range")
def range_(inputs, attrs, opset):
    vals = [inputs.value(i) for i in range(3)]
    dt = dtype_of(inputs[0])
    if all(v is not None for v in vals) and vals[2] != 0:
        n = max(math.ceil((float(vals[1]) - float(vals[0])) / float(vals[2])), 0)
        if n <= FOLD_LIMIT:
            return const(np.arange(vals[0], vals[1], vals[2]).astype(dt))
    return R.arange(inputs[0], inputs[1], inputs[2], dtype=dt)


@onnx_op("Pad")
def pad(inputs, attrs, opset):
    x = inputs[0]
    rank = len(shape_of(x))
    if opset < 11:
        pads, value = list(attrs["pads"]), float(attrs.get("value", 0.0))
    else:
        pads = _ints(_static(inputs, 1, "pads"))
        value = float(inputs.value(2)) if inputs.has(2) else 0.0
    axes = _ints(inputs.value(3)) if opset >= 18 and inputs.has(3) else list(range(rank))
    width = [(0, 0)] * rank
    n = len(axes)
    for j, a in enumerate(axes):
        width[_axis(a, rank)] = (pads[j], pads[j + n])
    mode = attrs.get("mode", "constant")
    if mode not in ("constant", "reflect", "edge"):
        raise FrontendError(f"Pad mode {mode!r} is not supported")
    # negative pads crop: pad the positive parts, then slice the negative ones off
    grow = [(max(b, 0), max(e, 0)) for b, e in width]
    out = nn.pad(x, grow, value, pad_mode=mode) if any(b or e for b, e in grow) else x
    if any(b < 0 or e < 0 for b, e in width):
        s = shape_of(out)
        if not is_static(s):
            raise FrontendError("Pad with negative pads needs static dimensions")
        begin = [max(-b, 0) for b, _ in width]
        end = [d - max(-e, 0) for d, (_, e) in zip(s, width)]
        out = R.strided_slice(out, begin, end)
    return out


@onnx_op("DepthToSpace")
def depth_to_space(inputs, attrs, opset):
    x = inputs[0]
    n, c, h, w = shape_of(x)
    b = int(attrs["blocksize"])
    if attrs.get("mode", "DCR") == "DCR":
        t = R.transpose(R.reshape(x, (n, b, b, c // (b * b), h, w)), (0, 3, 4, 1, 5, 2))
    else:
        t = R.transpose(R.reshape(x, (n, c // (b * b), b, b, h, w)), (0, 1, 4, 2, 5, 3))
    return R.reshape(t, (n, c // (b * b), h * b, w * b))


@onnx_op("SpaceToDepth")
def space_to_depth(inputs, attrs, opset):
    x = inputs[0]
    n, c, h, w = shape_of(x)
    b = int(attrs["blocksize"])
    t = R.transpose(R.reshape(x, (n, c, h // b, b, w // b, b)), (0, 3, 5, 1, 2, 4))
    return R.reshape(t, (n, c * b * b, h // b, w // b))


@onnx_op("Trilu")
def trilu(inputs, attrs, opset):
    x = inputs[0]
    s = shape_of(x)
    upper = bool(attrs.get("upper", 1))
    if not is_static(s[-2:]):
        if not has_op("trilu"):
            raise FrontendError("Trilu with dynamic last two dimensions needs the Relay operator trilu")
        k = inputs[1] if inputs.has(1) else const(np.asarray(0, "int64"))
        return call("trilu", x, k, upper=upper)
    k = int(inputs.value(1)) if inputs.has(1) else 0
    ones = np.ones(s[-2:], dtype=bool)
    # a constant mask: static shapes need no trilu operator, and it folds with the rest
    mask = np.triu(ones, k) if upper else np.tril(ones, k)
    return R.where(const(mask), x, R.zeros_like(x))


@onnx_op("Resize", "Upsample")
def resize(inputs, attrs, opset):
    x = inputs[0]
    s = shape_of(x)
    if len(s) != 4:
        raise FrontendError("only 4-d (NCHW) Resize is supported")
    for key, fine in (("antialias", (0,)), ("keep_aspect_ratio_policy", ("stretch",)),
                      ("coordinate_transformation_mode", ("half_pixel", "align_corners", "asymmetric",
                                                          "pytorch_half_pixel", "tf_half_pixel_for_nn"))):
        if key in attrs and attrs[key] not in fine:
            raise FrontendError(f"Resize with {key}={attrs[key]!r} is not supported")
    if "axes" in attrs and sorted(_axis(a, 4) for a in attrs["axes"]) != [0, 1, 2, 3]:
        raise FrontendError("Resize with axes is not supported")
    if attrs["_op"] == "Upsample" or opset < 11:
        scales = attrs.get("scales")
        scales = list(scales) if scales is not None else list(_static(inputs, 1, "scales"))
        sizes = None
    else:
        scales = inputs.value(2) if inputs.has(2) else None
        scales = list(scales) if scales is not None and np.size(scales) else None
        sizes = _ints(_static(inputs, 3, "sizes")) if inputs.has(3) else None
    if sizes is None:
        sizes = [int(math.floor(d * float(f))) for d, f in zip(s, scales)]
    mode = attrs.get("mode", "nearest")
    method = {"nearest": "nearest_neighbor", "linear": "linear", "bilinear": "linear", "cubic": "cubic"}[mode]
    ctm = attrs.get("coordinate_transformation_mode", "half_pixel" if opset >= 11 else "asymmetric")
    if mode == "nearest" and opset < 11:
        rounding = "floor"
    else:
        rounding = attrs.get("nearest_mode", "round_prefer_floor") if method == "nearest_neighbor" else ""
    from ..op.image import resize2d

    return resize2d(
        x, sizes[2:], method=method, coordinate_transformation_mode=ctm, rounding_method=rounding,
        cubic_alpha=float(attrs.get("cubic_coeff_a", -0.75)), cubic_exclude=int(attrs.get("exclude_outside", 0)),
        extrapolation_value=float(attrs.get("extrapolation_value", 0.0)),
    )


# --- ops on Relay operators other branches add -------------------------------------------


@onnx_op("TopK")
def topk(inputs, attrs, opset):
    k = int(_static(inputs, 1, "K").reshape(-1)[0]) if opset >= 10 else int(attrs["k"])
    out = call(
        "topk", inputs[0], k=k, axis=int(attrs.get("axis", -1)), ret_type="both",
        is_ascend=not bool(attrs.get("largest", 1)), dtype="int64",
    )
    return out


@onnx_op("CumSum")
def cumsum(inputs, attrs, opset):
    x = inputs[0]
    axis = int(_static(inputs, 1, "axis").reshape(-1)[0])
    if attrs.get("reverse", 0):
        x = R.reverse(x, axis)
    out = call("cumsum", x, axis=axis, exclusive=bool(attrs.get("exclusive", 0)))
    return R.reverse(out, axis) if attrs.get("reverse", 0) else out


@onnx_op("GatherElements")
def gather_elements(inputs, attrs, opset):
    return call("gather", inputs[0], inputs[1], axis=int(attrs.get("axis", 0)))


@onnx_op("GatherND")
def gather_nd(inputs, attrs, opset):
    idx = inputs[1]
    rank = len(shape_of(idx))
    # Relay's gather_nd takes the index tuple on the first axis
    idx = R.transpose(idx, (rank - 1,) + tuple(range(rank - 1)))
    return call("gather_nd", inputs[0], idx, batch_dims=int(attrs.get("batch_dims", 0)))


@onnx_op("OneHot")
def one_hot(inputs, attrs, opset):
    depth = int(_static(inputs, 1, "depth").reshape(-1)[0])
    values = inputs[2]
    idx = inputs[0]
    # negative indices count back from depth
    neg = R.less(idx, fold(R.cast(const(0), dtype_of(idx))))
    idx = R.where(neg, R.add(idx, fold(R.cast(const(depth), dtype_of(idx)))), idx)
    off = R.take(values, const(0))
    on = R.take(values, const(1))
    return call("one_hot", idx, on, off, depth=depth, axis=int(attrs.get("axis", -1)), dtype=dtype_of(values))


@onnx_op("ScatterElements", "Scatter")
def scatter_elements(inputs, attrs, opset):
    reduction = attrs.get("reduction", "none")
    return call("scatter_elements", inputs[0], inputs[1], inputs[2], axis=int(attrs.get("axis", 0)),
                reduction="update" if reduction == "none" else reduction)


@onnx_op("ScatterND")
def scatter_nd(inputs, attrs, opset):
    idx = inputs[1]
    rank = len(shape_of(idx))
    # Relay's scatter_nd, as its gather_nd, takes the index tuple on the first axis
    idx = R.transpose(idx, (rank - 1,) + tuple(range(rank - 1)))
    reduction = attrs.get("reduction", "none")
    return call("scatter_nd", inputs[0], idx, inputs[2], mode="update" if reduction == "none" else reduction)


@onnx_op("Hardmax")
def hardmax(inputs, attrs, opset):
    x = inputs[0]
    s = shape_of(x)
    axis = _axis(int(attrs.get("axis", -1 if opset >= 13 else 1)), len(s))
    if opset < 13:
        raise FrontendError("Hardmax before opset 13 (2-d coercion) is not supported")
    idx = R.argmax(x, axis=[axis], keepdims=False)
    one, zero = const(np.asarray(1, dtype_of(x))), const(np.asarray(0, dtype_of(x)))
    return call("one_hot", idx, one, zero, depth=int(s[axis]), axis=axis, dtype=dtype_of(x))


@onnx_op("Einsum")
def einsum(inputs, attrs, opset):
    args = [inputs[i] for i in range(len(inputs))]
    return call("einsum", Tuple(tuple(args)), equation=attrs["equation"])
