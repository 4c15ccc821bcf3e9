"""TVM's ``nn.contrib_*`` operators: convolutions and dense on packed layouts, and the
Winograd / GEMM weight pre-transforms with the convolutions that consume them.

These ops are what TVM's AlterOpLayout pass produces for a target; relay_nb gives them
their *meaning*, so a printed, target-specialized program still reads, type-checks and runs:

* ``contrib_conv2d_NCHWc`` / ``contrib_depthwise_conv2d_NCHWc``: conv2d on data in a packed
  layout such as ``NCHW8c`` with a kernel such as ``OIHW8i8o``; relations and the
  interpreter unpack to NCHW / OIHW, run conv2d, and pack into ``out_layout``.
* ``contrib_dense_pack``: dense with a packed weight (``weight_layout`` such as ``NC16n``).
* ``contrib_conv2d_winograd_weight_transform``: ``U = G g G^T`` per (out, in) channel pair
  with the Cook-Toom matrix ``G`` of TVM's ``winograd_util`` (its interpolation points),
  shaped ``(alpha, alpha, O, I)``; ``..._without_weight_transform`` is conv2d given ``U``:
  the kernel is recovered exactly as ``G^+ U G^+T`` (``G`` has full column rank) and convolved.
  The 3-d and NNPACK (``(O, I, 8, 8)``, F(6x6, 3x3)) forms work the same way.
* ``contrib_conv2d_gemm_weight_transform`` flattens an HWIO kernel to ``(K, N)``, pads it
  and tiles it as TVM's Arm GEMM schedule does; ``..._without_weight_transform`` undoes that
  tiling and convolves.

Relations reuse conv2d's / conv3d's on the canonical layouts.
"""

from __future__ import annotations

from ..errors import RelayTypeError
from ..ir.expr import Expr
from ..ir.ty import Any, IncompleteType, TensorType
from ..typing.relations import forward_relation, is_known
from ._common import (
    call,
    ints,
    is_static,
    pad_tuple,
    register,
    relation,
    schema,
    tensor,
    type_text,
)
from .nn import _conv_attrs, _conv_rel
from .registry import AttrField, AttrSchema, OpPattern, make_attrs
from .transform import layout_shape

# --- running conv2d's relation on canonical types ---------------------------------------


class _Capture:
    """A reporter that keeps the output a relation assigns (and ignores weight inference),
    delegating dtype unification to the real reporter."""

    def __init__(self, reporter, out_slot):
        self.reporter = reporter
        self.out_slot = out_slot
        self.ty = None

    def assign(self, slot, ty):
        if slot is self.out_slot:
            self.ty = ty

    def unify_dtype(self, a, b):
        return self.reporter.unify_dtype(a, b)


_CONV_OP = {2: ("nn.conv2d", _conv_rel("Conv2D", 2)), 3: ("nn.conv3d", _conv_rel("Conv3D", 3))}


def canonical_conv_type(nd, data, weight, attrs, reporter):
    """The type conv{nd}d's relation gives canonical (NC..., OI...) ``data`` and ``weight``
    (``weight`` None: inferred from ``channels`` and ``kernel_size``)."""
    op, rel = _CONV_OP[nd]
    spatial = "HW" if nd == 2 else "DHW"
    fields = {k: attrs[k] for k in ("strides", "padding", "dilation", "groups", "channels",
                                    "kernel_size", "out_dtype")}  # fmt: skip
    fields.update(data_layout="NC" + spatial, kernel_layout="OI" + spatial, out_layout="")
    out_slot = IncompleteType()
    capture = _Capture(reporter, out_slot)
    w = weight if weight is not None else IncompleteType()
    if not rel.fn([data, w, out_slot], 2, make_attrs(op, fields), capture):
        raise RelayTypeError("kernel_size and channels must be given")
    return capture.ty


# --- packed convolutions and dense --------------------------------------------------------


@relation("Conv2DNCHWc")
def _conv2d_nchwc_rel(types, num_inputs, attrs, reporter):
    if not (is_known(types[0]) and is_known(types[1])):
        return False
    data, weight = tensor(types[0], "data"), tensor(types[1], "weight")
    nchw = TensorType(layout_shape(data.shape, attrs["data_layout"], "NCHW"), data.dtype)
    oihw = TensorType(layout_shape(weight.shape, attrs["kernel_layout"], "OIHW"), weight.dtype)
    out = canonical_conv_type(2, nchw, oihw, attrs, reporter)
    layout = attrs["out_layout"] or attrs["data_layout"]
    reporter.assign(types[2], TensorType(layout_shape(out.shape, "NCHW", layout), out.dtype))
    return True


@forward_relation("DensePack")
def _dense_pack_rel(inputs, attrs, reporter):
    data, weight = tensor(inputs[0], "data"), tensor(inputs[1], "weight")
    if len(data.shape) != 2:
        raise RelayTypeError(f"data must be a matrix, found {type_text(data)}")
    if len(weight.shape) not in (3, 4):
        raise RelayTypeError(f"the packed weight must have rank 3 or 4, found {type_text(weight)}")
    n, k = layout_shape(weight.shape, attrs["weight_layout"], "NC")
    if is_static(k) and is_static(data.shape[1]) and k != data.shape[1]:
        raise RelayTypeError(f"data has {data.shape[1]} features but the weight {k}")
    units = attrs["units"]
    if units is not None and is_static(n) and units != n:
        raise RelayTypeError(f"units={units} does not match the weight's {n}")
    dtype = attrs["out_dtype"] or data.dtype
    reporter.unify_dtype(data.dtype, weight.dtype)
    return TensorType((data.shape[0], n), dtype)


# --- winograd -----------------------------------------------------------------------------


@forward_relation("Conv2DWinogradWeightTransform")
def _winograd_weight_rel(inputs, attrs, reporter):
    w = tensor(inputs[0], "weight")
    if len(w.shape) != 4:
        raise RelayTypeError(f"weight must be OIHW (rank 4), found {type_text(w)}")
    t = attrs["tile_size"]
    _check_winograd(t, w.shape[2:])
    alpha = [t + k - 1 if is_static(k) else Any for k in w.shape[2:]]
    return TensorType((*alpha, w.shape[0], w.shape[1]), w.dtype)


def _check_winograd(tile, kernel):
    if not 1 < tile < 9:
        raise RelayTypeError(f"tile_size must be 2 to 8, got {tile}")
    for k in kernel:
        if is_static(k) and not 2 < k < 8:
            raise RelayTypeError(f"Winograd needs kernel sizes 3 to 7, found {k}")


def transforms_depth(depth) -> bool:
    """TVM transforms the depth axis of a 3-d kernel only when it is 3 to 7 deep."""
    return is_static(depth) and 2 < depth < 8


@forward_relation("Conv3DWinogradWeightTransform")
def _winograd3d_weight_rel(inputs, attrs, reporter):
    w = tensor(inputs[0], "weight")
    if len(w.shape) != 5:
        raise RelayTypeError(f"weight must be OIDHW (rank 5), found {type_text(w)}")
    t = attrs["tile_size"]
    d, h, wd = w.shape[2:]
    _check_winograd(t, (h, wd) + ((d,) if transforms_depth(d) else ()))
    hw = [t + k - 1 if is_static(k) else Any for k in (h, wd)]
    lead = [t + d - 1, *hw] if transforms_depth(d) else [*hw, d]
    return TensorType((*lead, w.shape[0], w.shape[1]), w.dtype)


@forward_relation("Conv2DWinogradNNPACKWeightTransform")
def _nnpack_weight_rel(inputs, attrs, reporter):
    w = tensor(inputs[0], "weight")
    if len(w.shape) != 4:
        raise RelayTypeError(f"weight must be OIHW (rank 4), found {type_text(w)}")
    if any(is_static(k) and k != 3 for k in w.shape[2:]):
        raise RelayTypeError(
            f"NNPACK's Winograd transform is for 3 x 3 kernels, found {w.shape[2:]}"
        )
    return TensorType((w.shape[0], w.shape[1], 8, 8), attrs["out_dtype"] or w.dtype)


def _without_transform_rel(name: str, nd: int):
    """conv{nd}d's output from ``kernel_size`` and ``channels`` (required); like TVM, the
    transformed weight's shape is not checked here (it depends on the transform)."""
    spatial = "HW" if nd == 2 else "DHW"

    @forward_relation(name)
    def rel(inputs, attrs, reporter):
        data, weight = tensor(inputs[0], "data"), tensor(inputs[1], "weight")
        if attrs["kernel_size"] is None or attrs["channels"] is None:
            raise RelayTypeError("kernel_size and channels must be given")
        canon = TensorType(layout_shape(data.shape, attrs["data_layout"], "NC" + spatial),
                           data.dtype)  # fmt: skip
        reporter.unify_dtype(data.dtype, weight.dtype)
        out = canonical_conv_type(nd, canon, None, attrs, reporter)
        layout = attrs["out_layout"] or attrs["data_layout"]
        return TensorType(layout_shape(out.shape, "NC" + spatial, layout), out.dtype)

    return rel


# --- gemm ---------------------------------------------------------------------------------


def gemm_padded(k: int, n: int, tile_n: int, tile_k: int) -> tuple[int, int]:
    """``(K_padded, N_padded)`` of TVM's GEMM weight transform: K to a multiple of
    ``4 * tile_K``, N to a multiple of ``tile_N``."""
    return k + (-k) % (4 * tile_k), n + (-n) % tile_n


@forward_relation("Conv2DGemmWeightTransform")
def _gemm_weight_rel(inputs, attrs, reporter):
    w = tensor(inputs[0], "weights")
    if len(w.shape) != 4:
        raise RelayTypeError(f"weights must be HWIO (rank 4), found {type_text(w)}")
    tn, tk = attrs["tile_N"], attrs["tile_K"]
    if tn < 1 or tk < 1:
        raise RelayTypeError(f"tile_N and tile_K must be positive, got {tn} and {tk}")
    if not all(is_static(d) for d in w.shape):
        return TensorType((Any,) * 4, w.dtype)
    kp, np_ = gemm_padded(w.shape[0] * w.shape[1] * w.shape[2], w.shape[3], tn, tk)
    eight_bit = isinstance(w.dtype, str) and w.dtype in ("int8", "uint8")
    tiles = (tn, tk) if eight_bit else (tk, tn)
    return TensorType((np_ // tn, kp // tk, *tiles), w.dtype)


# --- registration -------------------------------------------------------------------------

_WINOGRAD_TILE = schema("relay.attrs.ConvWinogradWeightTransformAttrs", ("tile_size", "int"))


def _winograd_attrs(key: str, nd: int):
    """Conv{nd}DWinogradAttrs: ``tile_size`` then the fields of a convolution."""
    return AttrSchema(key, (AttrField("tile_size", "int"),) + _conv_attrs(key, nd).fields)


NN_CONTRIB_OPS = [
    *[
        (
            name,
            2,
            _conv2d_nchwc_rel,
            _conv_attrs("relay.attrs.Conv2DAttrs", 2),
            OpPattern.OUT_ELEMWISE_FUSABLE,
            ("data", "weight"),
            doc,
        )
        for name, doc in (
            (
                "nn.contrib_conv2d_NCHWc",
                "A conv2d on channel-packed data (``NCHW8c``) and kernel (``OIHW8i8o``), as "
                "TVM's x86 layout pass emits it.",
            ),
            (
                "nn.contrib_depthwise_conv2d_NCHWc",
                "Depthwise conv2d (``groups`` = channels) on channel-packed data and kernel.",
            ),
        )
    ],
    (
        "nn.contrib_dense_pack",
        2,
        _dense_pack_rel,
        schema(
            "relay.attrs.DensePackAttrs",
            ("units", "optional_int", None),
            ("out_dtype", "dtype", ""),
            ("weight_layout", "str", "NC"),
        ),
        OpPattern.OUT_ELEMWISE_FUSABLE,
        ("data", "weight"),
        "A dense with a packed weight: ``weight_layout`` ``NC16n`` is ``(units / 16, K, 16)``.",
    ),
    (
        "nn.contrib_conv2d_winograd_weight_transform",
        1,
        _winograd_weight_rel,
        _WINOGRAD_TILE,
        OpPattern.OUT_ELEMWISE_FUSABLE,
        ("weight",),
        "Winograd pre-transform ``G g G^T`` of an OIHW kernel, shaped (alpha, alpha, O, I).",
    ),
    (
        "nn.contrib_conv2d_winograd_without_weight_transform",
        2,
        _without_transform_rel("Conv2DWinograd", 2),
        _winograd_attrs("relay.attrs.Conv2DWinogradAttrs", 2),
        OpPattern.OUT_ELEMWISE_FUSABLE,
        ("data", "weight"),
        "A conv2d whose weight is already Winograd-transformed (by the weight transform op).",
    ),
    (
        "nn.contrib_conv2d_winograd_nnpack_weight_transform",
        1,
        _nnpack_weight_rel,
        schema(
            "relay.attrs.Conv2DWinogradNNPACKWeightTransformAttrs",
            ("convolution_algorithm", "int"),
            ("out_dtype", "dtype", ""),
        ),
        OpPattern.OPAQUE,
        ("weight",),
        "NNPACK's F(6x6, 3x3) Winograd kernel transform, shaped (O, I, 8, 8).",
    ),
    (
        "nn.contrib_conv3d_winograd_weight_transform",
        1,
        _winograd3d_weight_rel,
        _WINOGRAD_TILE,
        OpPattern.OUT_ELEMWISE_FUSABLE,
        ("weight",),
        "Winograd pre-transform of an OIDHW kernel: all three axes when the depth is 3 to 7 "
        "(alpha, alpha, alpha, O, I), else H and W only (alpha, alpha, D, O, I).",
    ),
    (
        "nn.contrib_conv3d_winograd_without_weight_transform",
        2,
        _without_transform_rel("Conv3DWinograd", 3),
        _winograd_attrs("relay.attrs.Conv3DWinogradAttrs", 3),
        OpPattern.OUT_ELEMWISE_FUSABLE,
        ("data", "weight"),
        "A conv3d whose weight is already Winograd-transformed.",
    ),
    (
        "nn.contrib_conv2d_gemm_weight_transform",
        1,
        _gemm_weight_rel,
        schema(
            "relay.attrs.ConvGemmWeightTransformAttrs", ("tile_N", "int"), ("tile_K", "int")
        ),
        OpPattern.OUT_ELEMWISE_FUSABLE,
        ("weights",),
        "Arm's GEMM kernel pre-transform: HWIO flattened to (K, N), padded, and tiled.",
    ),
    (
        "nn.contrib_conv2d_gemm_without_weight_transform",
        2,
        _without_transform_rel("Conv2DGemm", 2),
        _conv_attrs("relay.attrs.Conv2DAttrs", 2),
        OpPattern.OUT_ELEMWISE_FUSABLE,
        ("data", "weight"),
        "A conv2d (NHWC) whose weight went through the GEMM weight transform.",
    ),
]

for _name, _n, _rel, _attrs, _pattern, _args, _doc in NN_CONTRIB_OPS:
    register(_name, _n, _rel, attrs=_attrs, pattern=_pattern, doc=_doc, arg_names=_args)


# --- builders (TVM's python/tvm/relay/op/nn/nn.py signatures) --------------------------------


def _conv_call(op, nd, data, weight, strides, padding, dilation, groups, channels, kernel_size,
               data_layout, kernel_layout, out_layout, out_dtype, **extra):  # fmt: skip
    return call(
        op,
        data,
        weight,
        **extra,
        strides=ints(strides, nd),
        padding=pad_tuple(padding, nd),
        dilation=ints(dilation, nd),
        groups=groups,
        channels=channels,
        kernel_size=ints(kernel_size, nd),
        data_layout=data_layout,
        kernel_layout=kernel_layout,
        out_layout=out_layout,
        out_dtype=out_dtype,
    )


def contrib_conv2d_nchwc(data, kernel, strides=(1, 1), padding=(0, 0), dilation=(1, 1),
                         groups=1, channels=None, kernel_size=None, data_layout="NCHW8c",
                         kernel_layout="OIHW", out_layout="", out_dtype="") -> Expr:  # fmt: skip
    """conv2d on packed layouts, e.g. ``data_layout="NCHW8c", kernel_layout="OIHW8i8o"``."""
    return _conv_call("nn.contrib_conv2d_NCHWc", 2, data, kernel, strides, padding, dilation,
                      groups, channels, kernel_size, data_layout, kernel_layout, out_layout,
                      out_dtype)  # fmt: skip


def contrib_depthwise_conv2d_nchwc(data, kernel, strides=(1, 1), padding=(0, 0),
                                   dilation=(1, 1), groups=1, channels=None, kernel_size=None,
                                   data_layout="NCHW8c", kernel_layout="OIHW", out_layout="",
                                   out_dtype="") -> Expr:  # fmt: skip
    """Depthwise conv2d (``groups`` = channels) on packed layouts."""
    return _conv_call("nn.contrib_depthwise_conv2d_NCHWc", 2, data, kernel, strides, padding,
                      dilation, groups, channels, kernel_size, data_layout, kernel_layout,
                      out_layout, out_dtype)  # fmt: skip


def contrib_dense_pack(data, weight, weight_layout="NC", units=None, out_dtype="") -> Expr:
    """dense with a packed weight, e.g. ``weight_layout="NC16n"`` for ``(units / 16, K, 16)``."""
    return call(
        "nn.contrib_dense_pack",
        data,
        weight,
        units=units,
        out_dtype=out_dtype,
        weight_layout=weight_layout,
    )


def contrib_conv2d_winograd_weight_transform(weight, tile_size) -> Expr:
    """The Winograd kernel transform ``G g G^T``, ``(alpha, alpha, O, I)``.

    >>> u = relay.nn.contrib_conv2d_winograd_weight_transform(w, tile_size=4)"""
    return call("nn.contrib_conv2d_winograd_weight_transform", weight, tile_size=tile_size)


def contrib_conv3d_winograd_weight_transform(weight, tile_size) -> Expr:
    """The Winograd transform of an OIDHW kernel (depth too when it is 3 to 7)."""
    return call("nn.contrib_conv3d_winograd_weight_transform", weight, tile_size=tile_size)


def contrib_conv2d_winograd_nnpack_weight_transform(weight, convolution_algorithm,
                                                    out_dtype="") -> Expr:  # fmt: skip
    """NNPACK's F(6x6, 3x3) kernel transform, ``(O, I, 8, 8)``."""
    return call(
        "nn.contrib_conv2d_winograd_nnpack_weight_transform",
        weight,
        convolution_algorithm=convolution_algorithm,
        out_dtype=out_dtype,
    )


def contrib_conv2d_winograd_without_weight_transform(
    data, weight, tile_size, strides=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1,
    channels=None, kernel_size=None, data_layout="NCHW", kernel_layout="OIHW", out_layout="",
    out_dtype="",
) -> Expr:  # fmt: skip
    """conv2d given a Winograd-transformed weight (``kernel_size`` and ``channels`` required)."""
    return _conv_call("nn.contrib_conv2d_winograd_without_weight_transform", 2, data, weight,
                      strides, padding, dilation, groups, channels, kernel_size, data_layout,
                      kernel_layout, out_layout, out_dtype, tile_size=tile_size)  # fmt: skip


def contrib_conv3d_winograd_without_weight_transform(
    data, weight, tile_size, strides=(1, 1, 1), padding=(0, 0, 0), dilation=(1, 1, 1),
    groups=1, channels=None, kernel_size=None, data_layout="NCDHW", kernel_layout="OIDHW",
    out_layout="", out_dtype="",
) -> Expr:  # fmt: skip
    """conv3d given a Winograd-transformed weight."""
    return _conv_call("nn.contrib_conv3d_winograd_without_weight_transform", 3, data, weight,
                      strides, padding, dilation, groups, channels, kernel_size, data_layout,
                      kernel_layout, out_layout, out_dtype, tile_size=tile_size)  # fmt: skip


def contrib_conv2d_gemm_weight_transform(weights, tile_N, tile_K) -> Expr:  # noqa: N803
    """Flatten an HWIO kernel to ``(K, N)``, pad and tile it for the GEMM convolution."""
    return call(
        "nn.contrib_conv2d_gemm_weight_transform", weights, tile_N=tile_N, tile_K=tile_K
    )


def contrib_conv2d_gemm_without_weight_transform(
    data, weight, strides=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1, channels=None,
    kernel_size=None, data_layout="NCHW", kernel_layout="OIHW", out_layout="", out_dtype="",
) -> Expr:  # fmt: skip
    """conv2d (data usually NHWC) with a GEMM-transformed weight."""
    return _conv_call("nn.contrib_conv2d_gemm_without_weight_transform", 2, data, weight,
                      strides, padding, dilation, groups, channels, kernel_size, data_layout,
                      kernel_layout, out_layout, out_dtype)  # fmt: skip


__all__ = [
    "contrib_conv2d_gemm_weight_transform",
    "contrib_conv2d_gemm_without_weight_transform",
    "contrib_conv2d_nchwc",
    "contrib_conv2d_winograd_nnpack_weight_transform",
    "contrib_conv2d_winograd_weight_transform",
    "contrib_conv2d_winograd_without_weight_transform",
    "contrib_conv3d_winograd_weight_transform",
    "contrib_conv3d_winograd_without_weight_transform",
    "contrib_dense_pack",
    "contrib_depthwise_conv2d_nchwc",
]
