"""Shape-changing operators: reshape, transpose, squeeze, expand_dims, concatenate, split,
stack, take, strided_slice, broadcast_to, tile, repeat, reverse, layout_transform, ...

Each relation follows the TVM relation of the same name (``src/relay/op/tensor/
transform.cc``), including reshape's special values and strided_slice's slice modes, and
turns TVM's internal checks into messages a user can act on.
"""

from __future__ import annotations

import re

from ..errors import RelayTypeError
from ..ir.ty import Any, TensorType, TupleType
from ..typing.relations import AttrValueError, check_dims, forward_relation, shape_text
from ._common import (
    broadcasts_to,
    is_int_dtype,
    is_static,
    norm_axis,
    pick_dim,
    product,
    register,
    same_dim,
    schema,
    tensor,
    tensors_of_tuple,
)
from .registry import OpPattern

# --- reshape ------------------------------------------------------------------------------


def _reshape_error(ishape, newshape) -> RelayTypeError:
    return RelayTypeError(f"cannot reshape {product(ishape)} elements into {shape_text(newshape)}")


def infer_newshape(ishape: tuple, newshape: tuple, allowzero: bool = False) -> tuple:
    """The output shape of ``reshape(data, newshape)`` (TVM's ``InferNewShape``).

    Special values: ``0`` copies the input dim at this position, ``-1`` is inferred from
    the remaining size, ``-2`` copies all remaining input dims, ``-3`` merges the next two
    input dims, ``-4, a, b`` splits the next input dim into ``a * b`` (one may be -1).
    """
    oshape: list = []
    used_in: set[int] = set()
    used_out: set[int] = set()
    src = 0
    infer_at = -1

    def copy_input_dim() -> None:
        nonlocal src
        if src >= len(ishape):
            raise RelayTypeError(
                f"0 in newshape copies input dimension {src}, but the input has rank {len(ishape)}"
            )
        used_in.add(src)
        used_out.add(len(oshape))
        oshape.append(ishape[src])
        src += 1

    i = 0
    while i < len(newshape):
        v = newshape[i]
        if v > 0 or (v == 0 and allowzero):
            oshape.append(v)
            src += 1
        elif v == 0:
            copy_input_dim()
        elif v == -1:
            if infer_at >= 0:
                raise RelayTypeError("only one dimension of newshape can be -1")
            infer_at = len(oshape)
            oshape.append(1)
            src += 1
        elif v == -2:
            while src < len(ishape):
                copy_input_dim()
        elif v == -3:
            if src + 1 >= len(ishape):
                raise RelayTypeError(
                    f"-3 merges input dimensions {src} and {src + 1}, but the input has rank {len(ishape)}"
                )
            used_in.update((src, src + 1))
            used_out.add(len(oshape))
            oshape.append(product(ishape[src : src + 2]))
            src += 2
        elif v == -4:
            if i + 2 >= len(newshape):
                raise RelayTypeError("-4 in newshape must be followed by two dimensions")
            if src >= len(ishape):
                raise RelayTypeError(
                    f"-4 splits input dimension {src}, but the input has rank {len(ishape)}"
                )
            d0 = ishape[src]
            used_in.add(src)
            src += 1
            d1, d2 = newshape[i + 1], newshape[i + 2]
            i += 2
            if d1 == -1 and d2 == -1:
                raise RelayTypeError("the two dimensions after -4 cannot both be -1")
            if d1 == -1 or d2 == -1:
                known = d2 if d1 == -1 else d1
                if is_static(d0) and (known <= 0 or d0 % known):
                    raise RelayTypeError(f"cannot split dimension {d0} by {known} (after -4)")
                inferred = d0 // known if is_static(d0) else Any
                d1, d2 = (inferred, d2) if d1 == -1 else (d1, inferred)
            elif is_static(d0) and d1 * d2 != d0:
                raise RelayTypeError(f"cannot split dimension {d0} into {d1} * {d2} (after -4)")
            used_out.update((len(oshape), len(oshape) + 1))
            oshape += [d1, d2]
        else:
            raise RelayTypeError(
                f"unsupported value {v} in newshape (special values are 0, -1, -2, -3, -4)"
            )
        i += 1

    if infer_at >= 0:
        rest_in = product(d for j, d in enumerate(ishape) if j not in used_in)
        rest_out = product(d for j, d in enumerate(oshape) if j not in used_out and j != infer_at)
        if not (is_static(rest_in) and is_static(rest_out)):
            oshape[infer_at] = Any
        elif rest_out == 0 or rest_in % rest_out:
            raise _reshape_error(ishape, newshape)
        else:
            oshape[infer_at] = rest_in // rest_out
    total_in, total_out = product(ishape), product(oshape)
    if is_static(total_in) and is_static(total_out) and total_in != total_out:
        raise _reshape_error(ishape, oshape)
    return tuple(oshape)


@forward_relation("Reshape")
def reshape_rel(inputs, attrs, reporter):
    data = tensor(inputs[0], "data")
    return TensorType(
        infer_newshape(data.shape, tuple(attrs["newshape"]), attrs["allowzero"]), data.dtype
    )


@forward_relation("ReshapeLike")
def reshape_like_rel(inputs, attrs, reporter):
    """Replace ``data``'s dims [lhs_begin, lhs_end) by ``shape_like``'s [rhs_begin, rhs_end)."""
    data = tensor(inputs[0], "data")
    like = tensor(inputs[1], "shape_like")

    def span(begin, end, rank):
        end = rank if end is None else end
        return (begin + rank if begin < 0 else begin), (end + rank if end < 0 else end)

    lb, le = span(attrs["lhs_begin"], attrs["lhs_end"], len(data.shape))
    rb, re_ = span(attrs["rhs_begin"], attrs["rhs_end"], len(like.shape))
    shape = data.shape[:lb] + like.shape[rb:re_] + data.shape[le:]
    a, b = product(data.shape), product(shape)
    if is_static(a) and is_static(b) and a != b:
        raise _reshape_error(data.shape, shape)
    return TensorType(shape, data.dtype)


# --- axes ---------------------------------------------------------------------------------


@forward_relation("Transpose")
def transpose_rel(inputs, attrs, reporter):
    data = tensor(inputs[0], "data")
    rank = len(data.shape)
    axes = attrs["axes"]
    if axes is None:
        order = list(reversed(range(rank)))
    else:
        if len(axes) != rank:
            raise RelayTypeError(
                f"axes {list(axes)} has {len(axes)} entries for a rank-{rank} tensor"
            )
        order = [norm_axis(a, rank) for a in axes]
        if len(set(order)) != rank:
            raise RelayTypeError(f"axes {list(axes)} repeats an axis")
    return TensorType(tuple(data.shape[a] for a in order), data.dtype)


@forward_relation("Squeeze")
def squeeze_rel(inputs, attrs, reporter):
    data = tensor(inputs[0], "data")
    if attrs["axis"] is None:
        if not all(is_static(d) for d in data.shape):
            raise RelayTypeError("axis must be given for a tensor with dynamic dimensions")
        return TensorType(tuple(d for d in data.shape if d != 1), data.dtype)
    drop = {norm_axis(a, len(data.shape)) for a in attrs["axis"]}
    for a in sorted(drop):
        if is_static(data.shape[a]) and data.shape[a] != 1:
            raise RelayTypeError(f"axis {a} has dimension {data.shape[a]}, not 1")
    return TensorType(tuple(d for i, d in enumerate(data.shape) if i not in drop), data.dtype)


@forward_relation("ExpandDims")
def expand_dims_rel(inputs, attrs, reporter):
    data = tensor(inputs[0], "data")
    n = attrs["num_newaxis"]
    if n < 0:
        raise AttrValueError("num_newaxis", f"num_newaxis must be >= 0, got {n}")
    at = norm_axis(attrs["axis"], len(data.shape), extra=1)
    return TensorType(data.shape[:at] + (1,) * n + data.shape[at:], data.dtype)


@forward_relation("Reverse")
def reverse_rel(inputs, attrs, reporter):
    data = tensor(inputs[0], "data")
    if attrs["axis"] is None:
        raise RelayTypeError("axis must be given")
    norm_axis(attrs["axis"], len(data.shape))
    return data


# --- joining and splitting ----------------------------------------------------------------


def _same_shapes_except(fields, axis, op):
    """Check that the tensors agree on rank, dtype and every dim but ``axis``."""
    first = fields[0]
    dtype = first.dtype
    out = list(first.shape)
    for i, t in enumerate(fields[1:], 1):
        if len(t.shape) != len(first.shape):
            raise RelayTypeError(
                f"field {i} has rank {len(t.shape)} but field 0 has rank {len(first.shape)}"
            )
        for j, (a, b) in enumerate(zip(out, t.shape)):
            if j == axis:
                continue
            if not same_dim(a, b):
                raise RelayTypeError(
                    f"field {i} has shape {shape_text(t.shape)}, which does not match "
                    f"field 0's {shape_text(first.shape)} outside axis {axis}"
                )
            out[j] = pick_dim(a, b)
    return out, dtype


@forward_relation("Concatenate")
def concatenate_rel(inputs, attrs, reporter):
    fields = tensors_of_tuple(inputs[0], "data")
    axis = norm_axis(attrs["axis"], len(fields[0].shape))
    shape, dtype = _same_shapes_except(fields, axis, "concatenate")
    for t in fields[1:]:
        dtype = reporter.unify_dtype(dtype, t.dtype)
    dims = [t.shape[axis] for t in fields]
    shape[axis] = sum(dims) if all(is_static(d) for d in dims) else Any
    return TensorType(tuple(shape), dtype)


@forward_relation("Stack")
def stack_rel(inputs, attrs, reporter):
    fields = tensors_of_tuple(inputs[0], "data")
    axis = norm_axis(attrs["axis"], len(fields[0].shape), extra=1)
    shape, dtype = _same_shapes_except(fields, -1, "stack")
    for t in fields[1:]:
        dtype = reporter.unify_dtype(dtype, t.dtype)
    shape.insert(axis, len(fields))
    return TensorType(tuple(shape), dtype)


@forward_relation("Split")
def split_rel(inputs, attrs, reporter):
    """An int splits into that many equal parts; a list gives the split points."""
    data = tensor(inputs[0], "data")
    if not data.shape:
        raise RelayTypeError("the input must have at least one dimension")
    axis = norm_axis(attrs["axis"], len(data.shape))
    dim = data.shape[axis]
    ios = attrs["indices_or_sections"]

    def part(d):
        return TensorType(data.shape[:axis] + (d,) + data.shape[axis + 1 :], data.dtype)

    if isinstance(ios, int):
        if ios <= 0:
            raise RelayTypeError(f"the number of sections must be positive, got {ios}")
        if is_static(dim) and dim % ios:
            raise RelayTypeError(
                f"dimension {dim} of axis {axis} cannot be split into {ios} equal sections"
            )
        return TupleType(tuple(part(dim // ios if is_static(dim) else Any) for _ in range(ios)))
    parts, begin = [], 0
    for index in ios:
        if index <= begin:
            raise AttrValueError(
                "indices_or_sections",
                f"indices {list(ios)} must be positive and strictly increasing",
            )
        parts.append(part(index - begin))
        begin = index
    if is_static(dim) and begin >= dim:
        raise RelayTypeError(f"index {begin} is not inside dimension {dim} of axis {axis}")
    parts.append(part(dim - begin if is_static(dim) else Any))
    return TupleType(tuple(parts))


# --- indexing -----------------------------------------------------------------------------

TAKE_MODES = ("clip", "wrap", "fast")


@forward_relation("Take")
def take_rel(inputs, attrs, reporter):
    data = tensor(inputs[0], "data")
    indices = tensor(inputs[1], "indices")
    if is_int_dtype(indices.dtype) is False:
        raise RelayTypeError(f"indices must be integers, found {indices.dtype}")
    if attrs["mode"] not in TAKE_MODES:
        raise RelayTypeError(f"mode must be one of {', '.join(TAKE_MODES)}, got {attrs['mode']!r}")
    if attrs["axis"] is None:
        return TensorType(indices.shape, data.dtype)
    axis = norm_axis(attrs["axis"], len(data.shape))
    batch_dims = attrs["batch_dims"]
    if batch_dims < 0:
        batch_dims += len(indices.shape)
    if not 0 <= batch_dims <= min(axis, len(indices.shape)):
        raise RelayTypeError(
            f"batch_dims {attrs['batch_dims']} must be in [0, {min(axis, len(indices.shape))}]"
        )
    shape = data.shape[:axis] + indices.shape[batch_dims:] + data.shape[axis + 1 :]
    return TensorType(shape, data.dtype)


_BIG = 2**63 - 1


@forward_relation("StridedSlice")
def strided_slice_rel(inputs, attrs, reporter):
    """NumPy slicing per axis; ``slice_mode="size"`` reads ``end`` as a length (-1: to the end)."""
    data = tensor(inputs[0], "data")
    rank = len(data.shape)
    begin, end = list(attrs["begin"]), list(attrs["end"])
    strides = list(attrs["strides"] or (1,))
    mode = attrs["slice_mode"]
    if mode not in ("end", "size"):
        raise RelayTypeError(f"slice_mode must be 'end' or 'size', got {mode!r}")
    if attrs["axes"] is not None:
        axes = [norm_axis(a, rank) for a in attrs["axes"]]
        if len(strides) == 1:
            strides *= len(axes)
        if not len(axes) == len(begin) == len(end) == len(strides):
            raise RelayTypeError("axes, begin, end and strides must have the same length")
    else:
        if max(len(begin), len(end), len(strides)) > rank:
            raise RelayTypeError(f"begin, end and strides have more entries than the rank {rank}")
        axes = list(range(rank))
        strides += [1] * (rank - len(strides))
        begin += [0 if s > 0 else _BIG for s in strides[len(begin) :]]
        end += [_BIG if s > 0 else -_BIG for s in strides[len(end) :]]
    shape = list(data.shape)
    for a, b, e, s in zip(axes, begin, end, strides):
        if mode == "size":
            e, s = (_BIG if e < 0 else b + e), 1
        if s == 0:
            raise RelayTypeError(f"the stride of axis {a} is 0")
        dim = data.shape[a]
        shape[a] = len(range(*slice(b, e, s).indices(dim))) if is_static(dim) else Any
    return TensorType(tuple(shape), data.dtype)


# --- broadcasting and repetition ----------------------------------------------------------


def _broadcast_to(data: TensorType, shape: tuple, op: str) -> TensorType:
    if not broadcasts_to(data.shape, shape):
        raise RelayTypeError(f"cannot broadcast {shape_text(data.shape)} to {shape_text(shape)}")
    return TensorType(tuple(shape), data.dtype)


@forward_relation("BroadCastTo")
def broadcast_to_rel(inputs, attrs, reporter):
    check_dims(attrs["shape"], "shape")
    return _broadcast_to(tensor(inputs[0], "data"), tuple(attrs["shape"]), "broadcast_to")


@forward_relation("BroadCastToLike")
def broadcast_to_like_rel(inputs, attrs, reporter):
    like = tensor(inputs[1], "broadcast_type")
    return _broadcast_to(tensor(inputs[0], "data"), like.shape, "broadcast_to_like")


@forward_relation("CollapseSumLike")
def collapse_sum_like_rel(inputs, attrs, reporter):
    """Sum ``data`` down to the shape of ``collapse_type`` (the inverse of broadcasting)."""
    data = tensor(inputs[0], "data")
    like = tensor(inputs[1], "collapse_type")
    _broadcast_to(TensorType(like.shape, data.dtype), data.shape, "collapse_sum_like")
    return TensorType(like.shape, data.dtype)


@forward_relation("Tile")
def tile_rel(inputs, attrs, reporter):
    data = tensor(inputs[0], "data")
    reps = tuple(attrs["reps"])
    if any(r <= 0 for r in reps):
        raise AttrValueError("reps", f"reps {list(reps)} must all be positive")
    n = max(len(reps), len(data.shape))
    shape = (1,) * (n - len(data.shape)) + data.shape
    reps = (1,) * (n - len(reps)) + reps
    return TensorType(
        tuple(d * r if is_static(d) else Any for d, r in zip(shape, reps)), data.dtype
    )


@forward_relation("Repeat")
def repeat_rel(inputs, attrs, reporter):
    data = tensor(inputs[0], "data")
    repeats, axis = attrs["repeats"], attrs["axis"]
    if repeats < 1:
        raise AttrValueError("repeats", f"repeats must be >= 1, got {repeats}")
    if axis is None:
        raise RelayTypeError("axis must be given")
    a = norm_axis(axis, len(data.shape))
    d = data.shape[a]
    return TensorType(
        data.shape[:a] + (d * repeats if is_static(d) else Any,) + data.shape[a + 1 :], data.dtype
    )


# --- layouts ------------------------------------------------------------------------------

_LAYOUT_AXIS = re.compile(r"(\d*)([A-Za-z])")


def parse_layout(layout: str) -> list[tuple[str, int]]:
    """``"NCHW16c"`` -> ``[("N", 0), ("C", 0), ("H", 0), ("W", 0), ("c", 16)]``.

    Upper-case letters are primal axes; ``16c`` is a sub-axis of ``C`` with factor 16.
    """
    axes = []
    pos = 0
    for m in _LAYOUT_AXIS.finditer(layout):
        if m.start() != pos:
            break
        factor, letter = m.group(1), m.group(2)
        if letter.isupper() == bool(factor):
            raise RelayTypeError(
                f"layout {layout!r}: {m.group(0)!r} is not an axis (primal axes are upper case, "
                "sub-axes are a factor and a lower-case letter, as in NCHW16c)"
            )
        if any(letter == a for a, _ in axes):
            raise RelayTypeError(f"layout {layout!r} repeats axis {letter}")
        axes.append((letter, int(factor) if factor else 0))
        pos = m.end()
    if pos != len(layout) or not axes:
        raise RelayTypeError(f"{layout!r} is not a layout such as NCHW or NCHW16c")
    primal = {a for a, _ in axes if a.isupper()}
    for a, _ in axes:
        if a.islower() and a.upper() not in primal:
            raise RelayTypeError(f"layout {layout!r} has sub-axis {a} without axis {a.upper()}")
    return axes


def layout_shape(shape: tuple, src: str, dst: str) -> tuple:
    """The shape of a ``src``-layout tensor after conversion to ``dst`` (TVM's ForwardShape)."""
    src_axes, dst_axes = parse_layout(src), parse_layout(dst)
    if {a for a, _ in src_axes if a.isupper()} != {a for a, _ in dst_axes if a.isupper()}:
        raise RelayTypeError(f"cannot convert from {src} to {dst}")
    if len(shape) != len(src_axes):
        raise RelayTypeError(
            f"the input has rank {len(shape)} but layout {src} has {len(src_axes)} axes"
        )
    dims = dict(zip((a for a, _ in src_axes), shape))
    sizes = {
        a: dims[a] if a.lower() not in dims else product((dims[a], dims[a.lower()]))
        for a in dims
        if a.isupper()
    }
    factors = {a: f for a, f in dst_axes if f}
    out = []
    for a, f in dst_axes:
        if f:
            out.append(f)
            continue
        size, sub = sizes[a], factors.get(a.lower(), 1)
        if is_static(size) and size % sub:
            raise RelayTypeError(f"dimension {a}={size} is not divisible by {sub}")
        out.append(size // sub if is_static(size) else Any)
    return tuple(out)


@forward_relation("LayoutTransform")
def layout_transform_rel(inputs, attrs, reporter):
    data = tensor(inputs[0], "data")
    return TensorType(
        layout_shape(data.shape, attrs["src_layout"], attrs["dst_layout"]), data.dtype
    )


@forward_relation("ShapeOf")
def shape_of_rel(inputs, attrs, reporter):
    return TensorType((len(tensor(inputs[0], "data").shape),), attrs["dtype"])


# --- registration -------------------------------------------------------------------------

_INIT_ATTRS = schema("relay.attrs.InitOpAttrs", ("shape", "ints"), ("dtype", "dtype", ""))

TRANSFORM_OPS = [
    # name, inputs, relation, attrs, pattern, arg names, doc
    (
        "reshape",
        1,
        reshape_rel,
        schema("relay.attrs.ReshapeAttrs", ("newshape", "ints"), ("allowzero", "bool", False)),
        OpPattern.INJECTIVE,
        ("data",),
        (
            "Give the tensor a new shape with the same number of elements.  ``newshape`` may use "
            "0 (copy this input dim), -1 (infer), -2 (copy the rest), -3 (merge two input dims) and "
            "-4 (split an input dim into the next two values)."
        ),
    ),
    (
        "reshape_like",
        2,
        reshape_like_rel,
        schema(
            "relay.attrs.ReshapeLikeAttrs",
            ("lhs_begin", "int", 0),
            ("lhs_end", "optional_int", None),
            ("rhs_begin", "int", 0),
            ("rhs_end", "optional_int", None),
        ),
        OpPattern.INJECTIVE,
        ("data", "shape_like"),
        "Reshape ``data`` to (a slice of) the shape of ``shape_like``.",
    ),
    (
        "transpose",
        1,
        transpose_rel,
        schema("relay.attrs.TransposeAttrs", ("axes", "optional_ints", None)),
        OpPattern.INJECTIVE,
        ("data",),
        "Permute the dimensions: output dim i is input dim ``axes[i]`` (reversed when axes is None).",
    ),
    (
        "squeeze",
        1,
        squeeze_rel,
        schema("relay.attrs.SqueezeAttrs", ("axis", "optional_ints", None)),
        OpPattern.INJECTIVE,
        ("data",),
        "Remove the given size-1 dimensions (every size-1 dimension when axis is None).",
    ),
    (
        "expand_dims",
        1,
        expand_dims_rel,
        schema("relay.attrs.ExpandDimsAttrs", ("axis", "int"), ("num_newaxis", "int", 1)),
        OpPattern.BROADCAST,
        ("data",),
        "Insert ``num_newaxis`` size-1 dimensions at position ``axis`` (in [-rank-1, rank]).",
    ),
    (
        "concatenate",
        1,
        concatenate_rel,
        schema("relay.attrs.ConcatenateAttrs", ("axis", "int", 0)),
        OpPattern.INJECTIVE,
        ("data",),
        "Join a tuple of tensors along ``axis``; the other dimensions must agree.",
    ),
    (
        "stack",
        1,
        stack_rel,
        schema("relay.attrs.StackAttrs", ("axis", "int", 0)),
        OpPattern.INJECTIVE,
        ("data",),
        "Stack a tuple of same-shaped tensors along a new dimension at ``axis``.",
    ),
    (
        "split",
        1,
        split_rel,
        schema(
            "relay.attrs.SplitAttrs", ("indices_or_sections", "int_or_ints"), ("axis", "int", 0)
        ),
        OpPattern.INJECTIVE,
        ("data",),
        (
            "Split along ``axis`` into a tuple: into N equal parts for an int, or at the given "
            "increasing indices for a list."
        ),
    ),
    (
        "take",
        2,
        take_rel,
        schema(
            "relay.attrs.TakeAttrs",
            ("batch_dims", "int", 0),
            ("axis", "optional_int", None),
            ("mode", "str", "clip"),
        ),
        OpPattern.INJECTIVE,
        ("data", "indices"),
        (
            "Gather elements of ``data`` at integer ``indices`` along ``axis`` (of the flattened "
            "data when axis is None); ``mode`` says what out-of-range indices do: clip, wrap or fast."
        ),
    ),
    (
        "strided_slice",
        1,
        strided_slice_rel,
        schema(
            "relay.attrs.StridedSliceAttrs",
            ("begin", "ints"),
            ("end", "ints"),
            ("strides", "optional_ints", None),
            ("slice_mode", "str", "end"),
            ("axes", "optional_ints", None),
        ),
        OpPattern.INJECTIVE,
        ("data",),
        (
            "NumPy-style slicing ``data[begin:end:strides]`` on the leading axes (or on ``axes``); "
            'with ``slice_mode="size"`` ``end`` holds lengths, -1 meaning to the end.'
        ),
    ),
    (
        "broadcast_to",
        1,
        broadcast_to_rel,
        _INIT_ATTRS,
        OpPattern.BROADCAST,
        ("data",),
        "Broadcast the tensor to ``shape`` with NumPy's rules.",
    ),
    (
        "broadcast_to_like",
        2,
        broadcast_to_like_rel,
        None,
        OpPattern.BROADCAST,
        ("data", "broadcast_type"),
        "Broadcast ``data`` to the shape of ``broadcast_type``.",
    ),
    (
        "collapse_sum_like",
        2,
        collapse_sum_like_rel,
        None,
        OpPattern.COMM_REDUCE,
        ("data", "collapse_type"),
        (
            "Sum ``data`` down to the shape of ``collapse_type``: the adjoint of broadcasting, as "
            "gradients of broadcasting ops need."
        ),
    ),
    (
        "tile",
        1,
        tile_rel,
        schema("relay.attrs.TileAttrs", ("reps", "ints")),
        OpPattern.BROADCAST,
        ("data",),
        "Repeat the whole tensor ``reps[i]`` times along each axis.",
    ),
    (
        "repeat",
        1,
        repeat_rel,
        schema("relay.attrs.RepeatAttrs", ("repeats", "int"), ("axis", "optional_int", None)),
        OpPattern.BROADCAST,
        ("data",),
        "Repeat each element ``repeats`` times along ``axis``.",
    ),
    (
        "reverse",
        1,
        reverse_rel,
        schema("relay.attrs.ReverseAttrs", ("axis", "optional_int", None)),
        OpPattern.INJECTIVE,
        ("data",),
        "Reverse the order of the elements along ``axis``.",
    ),
    (
        "layout_transform",
        1,
        layout_transform_rel,
        schema("relay.attrs.LayoutTransformAttrs", ("src_layout", "str"), ("dst_layout", "str")),
        OpPattern.INJECTIVE,
        ("data",),
        "Change the data layout, e.g. NCHW to NHWC or to the packed NCHW16c.",
    ),
    (
        "shape_of",
        1,
        shape_of_rel,
        schema("relay.attrs.ShapeOfAttrs", ("dtype", "dtype", "int32")),
        OpPattern.OPAQUE,
        ("data",),
        "The shape of the tensor as a 1-d tensor of ``dtype``.",
    ),
]

for _name, _n, _rel, _attrs, _pattern, _args, _doc in TRANSFORM_OPS:
    register(_name, _n, _rel, attrs=_attrs, pattern=_pattern, doc=_doc, arg_names=_args)
