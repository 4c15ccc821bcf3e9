"""numpy implementations of the shape-changing operators (:mod:`relay_nb.op.transform`).

Shapes are computed from the actual argument with the relation's own helpers (reshape's
special values, layouts), so an untyped program runs too and agrees with InferType.

* ``strided_slice`` reads begin / end / strides as the relation does (TVM's
  ``StridedSliceRel``): missing trailing entries slice the whole axis, indices are
  canonicalised and clamped like Python slices (negative counts from the end,
  out-of-range clamps), ``slice_mode="size"`` reads ``end`` as a length (-1: to the end)
  and ignores strides.
* ``take`` with ``mode="clip"`` clamps indices into ``[0, n - 1]`` (a negative index
  becomes 0, as in TVM), ``"wrap"`` takes them modulo ``n`` (Python ``%``), and ``"fast"``
  (TVM: no bounds check) raises an :class:`EvalError` naming the first index outside
  ``[0, n)``: the interpreter never reads out of bounds.
"""

from __future__ import annotations

import math

import numpy as np

from ...errors import EvalError
from ..transform import _BIG, infer_newshape, parse_layout
from ._util import impl, norm_axis


@impl("reshape")
def _reshape(args, attrs, out):
    x = args[0]
    shape = infer_newshape(x.shape, tuple(attrs["newshape"]), attrs["allowzero"])
    return x.reshape(shape)


@impl("reshape_like")
def _reshape_like(args, attrs, out):
    x, like = args

    def span(begin, end, rank):
        end = rank if end is None else end
        return (begin + rank if begin < 0 else begin), (end + rank if end < 0 else end)

    lb, le = span(attrs["lhs_begin"], attrs["lhs_end"], x.ndim)
    rb, re_ = span(attrs["rhs_begin"], attrs["rhs_end"], like.ndim)
    return x.reshape(x.shape[:lb] + like.shape[rb:re_] + x.shape[le:])


@impl("transpose")
def _transpose(args, attrs, out):
    axes = attrs["axes"]
    return np.transpose(args[0], None if axes is None else tuple(axes))


@impl("squeeze")
def _squeeze(args, attrs, out):
    x = args[0]
    if attrs["axis"] is None:
        return x.reshape(tuple(d for d in x.shape if d != 1))
    drop = {norm_axis(a, x.ndim) for a in attrs["axis"]}
    for a in sorted(drop):
        if x.shape[a] != 1:
            raise EvalError(f"axis {a} has dimension {x.shape[a]}, not 1")
    return x.reshape(tuple(d for i, d in enumerate(x.shape) if i not in drop))


@impl("expand_dims")
def _expand_dims(args, attrs, out):
    x = args[0]
    at = norm_axis(attrs["axis"], x.ndim + 1)
    n = attrs["num_newaxis"]
    return x.reshape(x.shape[:at] + (1,) * n + x.shape[at:])


@impl("concatenate")
def _concatenate(args, attrs, out):
    fields = args[0]
    dt = np.result_type(*fields)
    return np.concatenate([f.astype(dt, copy=False) for f in fields], axis=attrs["axis"])


@impl("stack")
def _stack(args, attrs, out):
    fields = args[0]
    dt = np.result_type(*fields)
    return np.stack([f.astype(dt, copy=False) for f in fields], axis=attrs["axis"])


@impl("split")
def _split(args, attrs, out):
    x = args[0]
    axis = norm_axis(attrs["axis"], x.ndim)
    ios = attrs["indices_or_sections"]
    if isinstance(ios, int):
        if ios <= 0 or x.shape[axis] % ios:
            raise EvalError(f"dimension {x.shape[axis]} cannot be split into {ios} equal sections")
        return tuple(np.split(x, ios, axis=axis))
    return tuple(np.split(x, list(ios), axis=axis))


# --- indexing ---------------------------------------------------------------------------------


def _take_indices(idx: np.ndarray, n: int, mode: str) -> np.ndarray:
    idx = idx.astype(np.int64)
    if mode == "clip":
        if n == 0 and idx.size:
            raise EvalError("cannot take from an empty axis")
        return np.clip(idx, 0, max(n - 1, 0))
    if mode == "wrap":
        if n == 0 and idx.size:
            raise EvalError("cannot take from an empty axis")
        return np.mod(idx, n) if n else idx
    if mode == "fast":
        bad = (idx < 0) | (idx >= n)
        if bad.any():
            first = int(idx[bad].flat[0])
            raise EvalError(
                f'take: index {first} is out of range for an axis of size {n} (mode="fast" '
                'does not check bounds in TVM; use mode="clip" or "wrap")'
            )
        return idx
    raise EvalError(f"mode must be clip, wrap or fast, got {mode!r}")


@impl("take")
def _take(args, attrs, out):
    data, indices = args
    if indices.dtype.kind not in "iub":
        raise EvalError(f"indices must be integers, found {indices.dtype}")
    mode = attrs["mode"]
    if attrs["axis"] is None:
        flat = data.reshape(-1)
        return flat[_take_indices(indices, flat.size, mode)]
    axis = norm_axis(attrs["axis"], data.ndim)
    b = attrs["batch_dims"]
    if b < 0:
        b += indices.ndim
    if not 0 <= b <= min(axis, indices.ndim):
        raise EvalError(f"batch_dims {attrs['batch_dims']} is out of range")
    idx = _take_indices(indices, data.shape[axis], mode)
    if b == 0:
        return np.take(data, idx, axis=axis)
    if data.shape[:b] != indices.shape[:b]:
        raise EvalError(
            f"the first {b} (batch) dimensions of data {data.shape} and indices "
            f"{indices.shape} differ"
        )
    # out[b..., pre..., i..., post...] = data[b..., pre..., idx[b..., i...], post...]
    batch = data.shape[:b]
    pre = data.shape[b:axis]
    nb = math.prod(batch)
    d = data.reshape((nb,) + data.shape[b:])
    ix = idx.reshape((nb,) + idx.shape[b:])
    parts = [np.take(d[k], ix[k], axis=axis - b) for k in range(nb)]
    rest = idx.shape[b:] + data.shape[axis + 1 :]
    return (
        np.stack(parts).reshape(batch + pre + rest)
        if parts
        else np.zeros(batch + pre + rest, data.dtype)
    )


def _slices(x: np.ndarray, attrs) -> tuple:
    """The per-axis Python slices of a strided_slice (the relation's reading of the attrs)."""
    rank = x.ndim
    begin, end = list(attrs["begin"]), list(attrs["end"])
    strides = list(attrs["strides"] or (1,))
    mode = attrs["slice_mode"]
    if mode not in ("end", "size"):
        raise EvalError(f"slice_mode must be 'end' or 'size', got {mode!r}")
    if attrs["axes"] is not None:
        axes = [norm_axis(a, rank) for a in attrs["axes"]]
        if len(strides) == 1:
            strides *= len(axes)
        if not len(axes) == len(begin) == len(end) == len(strides):
            raise EvalError("axes, begin, end and strides must have the same length")
    else:
        if max(len(begin), len(end), len(strides)) > rank:
            raise EvalError(f"more begin/end/strides entries than the rank {rank}")
        axes = list(range(rank))
        strides += [1] * (rank - len(strides))
        begin += [0 if s > 0 else _BIG for s in strides[len(begin) :]]
        end += [_BIG if s > 0 else -_BIG for s in strides[len(end) :]]
    index = [slice(None)] * rank
    for a, b, e, s in zip(axes, begin, end, strides):
        if mode == "size":
            e, s = (_BIG if e < 0 else b + e), 1
        if s == 0:
            raise EvalError(f"the stride of axis {a} is 0")
        index[a] = slice(b, e, s)
    return tuple(index)


@impl("strided_slice")
def _strided_slice(args, attrs, out):
    x = args[0]
    return x[_slices(x, attrs)]


# --- broadcasting and repetition --------------------------------------------------------------


@impl("broadcast_to")
def _broadcast_to(args, attrs, out):
    return np.broadcast_to(args[0], tuple(attrs["shape"]))


@impl("broadcast_to_like")
def _broadcast_to_like(args, attrs, out):
    return np.broadcast_to(args[0], args[1].shape)


@impl("collapse_sum_like")
def _collapse_sum_like(args, attrs, out):
    """Sum ``data`` down to ``collapse_type``'s shape: the adjoint of broadcasting."""
    return collapse_sum(args[0], args[1].shape)


def collapse_sum(x: np.ndarray, target: tuple) -> np.ndarray:
    """``x`` summed down to ``target`` (which broadcasts to ``x.shape``), in x's dtype."""
    target = tuple(target)
    lead = x.ndim - len(target)
    if lead < 0:
        raise EvalError(f"cannot collapse {x.shape} to {target}")
    total = np.sum(x, axis=tuple(range(lead)), dtype=x.dtype) if lead else x
    axes = tuple(i for i, (d, t) in enumerate(zip(total.shape, target)) if t == 1 and d != 1)
    if axes:
        total = np.sum(total, axis=axes, keepdims=True, dtype=x.dtype)
    if total.shape != tuple(target):
        raise EvalError(f"cannot collapse {x.shape} to {target}")
    return total


@impl("tile")
def _tile(args, attrs, out):
    return np.tile(args[0], tuple(attrs["reps"]))


@impl("repeat")
def _repeat(args, attrs, out):
    x = args[0]
    if attrs["axis"] is None:
        raise EvalError("axis must be given")
    return np.repeat(x, attrs["repeats"], axis=norm_axis(attrs["axis"], x.ndim))


@impl("reverse")
def _reverse(args, attrs, out):
    x = args[0]
    if attrs["axis"] is None:
        raise EvalError("axis must be given")
    return np.flip(x, axis=norm_axis(attrs["axis"], x.ndim))


# --- layouts ----------------------------------------------------------------------------------


def layout_transform(x: np.ndarray, src: str, dst: str) -> np.ndarray:
    """Convert between layouts such as ``NCHW``, ``NHWC`` and packed ``NCHW4c``.

    A sub-axis ``4c`` is the inner index of its primal axis ``C``: the full channel index
    is ``C_outer * 4 + c``.  First every packed axis is merged back into its primal axis,
    then the primal axes are split for ``dst`` and permuted into its order.
    """
    src_axes, dst_axes = parse_layout(src), parse_layout(dst)
    src_primal = [a for a, _ in src_axes if a.isupper()]
    if sorted(src_primal) != sorted(a for a, _ in dst_axes if a.isupper()):
        raise EvalError(f"cannot convert from {src} to {dst}")
    if x.ndim != len(src_axes):
        raise EvalError(f"rank {x.ndim} does not match layout {src}")
    labels = [a for a, _ in src_axes]
    for (a, f), d in zip(src_axes, x.shape):
        if f and d != f:
            raise EvalError(f"axis {f}{a} of {src} has size {d}, not {f}")
    # Unpack: put each sub-axis right after its primal axis, then merge the pair.
    order = []
    for p in src_primal:
        order.append(labels.index(p))
        if p.lower() in labels:
            order.append(labels.index(p.lower()))
    x = np.transpose(x, order)
    merged = []
    i = 0
    for p in src_primal:
        if p.lower() in labels:
            merged.append(x.shape[i] * x.shape[i + 1])
            i += 2
        else:
            merged.append(x.shape[i])
            i += 1
    x = x.reshape(merged)
    # Pack for dst: split primal axes that have a sub-axis there, then permute.
    factors = {a.upper(): f for a, f in dst_axes if f}
    split_shape, split_labels = [], []
    for p, d in zip(src_primal, merged):
        f = factors.get(p)
        if f:
            if d % f:
                raise EvalError(f"dimension {p}={d} is not divisible by {f}")
            split_shape += [d // f, f]
            split_labels += [p, p.lower()]
        else:
            split_shape.append(d)
            split_labels.append(p)
    x = x.reshape(split_shape)
    return np.transpose(x, [split_labels.index(a) for a, _ in dst_axes])


@impl("layout_transform")
def _layout_transform(args, attrs, out):
    return layout_transform(args[0], attrs["src_layout"], attrs["dst_layout"])


@impl("shape_of")
def _shape_of(args, attrs, out):
    return np.array(args[0].shape, dtype=attrs["dtype"] or "int32")
