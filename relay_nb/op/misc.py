"""The remaining tensor ops: einsum, collapse_sum_to, contrib_reverse_reshape, ndarray_size,
reinterpret, fixed_point_multiply(_per_axis) and the two tuning layout transforms.

``auto_scheduler_layout_transform`` reads TVM's auto-scheduler layout strings: a size
then an axis name, repeated (``"1N32C7H7W"``; the destination ``"1N8C7H7W4C"`` splits C
into 8 x 4: destination axes with a source axis's name combine, outermost first).
``meta_schedule_layout_transform``'s ``index_map`` is a TIR IndexMap in TVM; here it is
its text, ``"lambda i, j: (i // 4, j, i % 4)"``, read (never executed) as affine index
arithmetic with ``+ - *`` and ``//``, ``%`` by constants; the result shape is the extent
of each output index over the input's index space, as TVM's ``IndexMap::MapShape``.
"""

from __future__ import annotations

import ast
import re
import string
from typing import Any as PyAny

import numpy as np

from ..errors import RelayTypeError
from ..ir.expr import Call
from ..ir.ty import Any, TensorType
from ..typing.relations import forward_relation, shape_text
from ._common import (
    call,
    ints,
    is_int_dtype,
    is_static,
    norm_axis,
    pick_dim,
    register,
    same_dim,
    schema,
    tensor,
    tensors_of_tuple,
    to_expr,
)
from .registry import OpPattern
from .transform import infer_newshape

__all__ = [
    "einsum",
    "collapse_sum_to",
    "reverse_reshape",
    "ndarray_size",
    "reinterpret",
    "fixed_point_multiply",
    "fixed_point_multiply_per_axis",
    "auto_scheduler_layout_transform",
    "meta_schedule_layout_transform",
]

# --- einsum ---------------------------------------------------------------------------------


def parse_einsum(equation: str, ranks: list[int]) -> tuple[list[str], str]:
    """The subscripts of each input and of the output, with ``...`` as ``"."`` letters
    expanded to the needed count (implicit output: ellipsis, then letters used once, sorted)."""
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(ranks):
        raise RelayTypeError(f"equation {equation!r} has {len(terms)} operands, got {len(ranks)} tensors")
    ell = 0
    for t, r in zip(terms, ranks):
        if "..." in t:
            ell = max(ell, r - len(t.replace("...", "")))
    ell_letters = "".join(chr(0x3B1 + i) for i in range(ell))  # Greek: never a user subscript
    subs = []
    for t, r in zip(terms, ranks):
        if t.count("...") > 1 or not all(c in string.ascii_letters for c in t.replace("...", "")):
            raise RelayTypeError(f"bad operand subscripts {t!r} in equation {equation!r}")
        if "..." in t:
            n = r - len(t.replace("...", ""))
            if n < 0:
                raise RelayTypeError(f"subscripts {t!r} have more letters than the operand's rank {r}")
            t = t.replace("...", ell_letters[ell - n :])
        if len(t) != r:
            raise RelayTypeError(f"subscripts {t!r} do not match an operand of rank {r}")
        subs.append(t)
    if arrow:
        if "..." in rhs:
            rhs = rhs.replace("...", ell_letters)
        if not all(c in string.ascii_letters or c in ell_letters for c in rhs) or len(set(rhs)) != len(rhs):
            raise RelayTypeError(f"bad output subscripts in equation {equation!r}")
        used = set("".join(subs))
        for c in rhs:
            if c not in used:
                raise RelayTypeError(f"output subscript {c!r} appears in no operand of {equation!r}")
    else:
        counts: dict[str, int] = {}
        for c in "".join(subs):
            counts[c] = counts.get(c, 0) + 1
        rhs = ell_letters + "".join(sorted(c for c, n in counts.items() if n == 1 and c not in ell_letters))
    return subs, rhs


@forward_relation("Einsum")
def einsum_rel(inputs, attrs, reporter):
    fields = tensors_of_tuple(inputs[0], "data")
    dtype = fields[0].dtype
    for f in fields[1:]:
        dtype = reporter.unify_dtype(dtype, f.dtype)
    subs, out = parse_einsum(attrs["equation"], [len(f.shape) for f in fields])
    size: dict[str, PyAny] = {}
    for t, f in zip(subs, fields):
        for c, d in zip(t, f.shape):
            if c not in size or size[c] == 1:
                size[c] = d
            elif d != 1 and not same_dim(size[c], d):
                raise RelayTypeError(f"subscript {c!r} has sizes {size[c]} and {d}")
            else:
                size[c] = pick_dim(size[c], d)
    return TensorType(tuple(size[c] for c in out), dtype)


# --- shapes ---------------------------------------------------------------------------------


@forward_relation("CollapseSumTo")
def collapse_sum_to_rel(inputs, attrs, reporter):
    """Sum ``data`` down to ``shape`` (its attrs copy when the shape is a constant)."""
    data = tensor(inputs[0], "data")
    target = tensor(inputs[1], "shape")
    if len(target.shape) != 1 or not is_static(target.shape[0]):
        raise RelayTypeError(f"shape must be a 1-D tensor of static length, found {shape_text(target.shape)}")
    if attrs["shape"] is not None:
        shape = tuple(attrs["shape"])
        if len(shape) != target.shape[0]:
            raise RelayTypeError(f"the shape attribute {list(shape)} disagrees with a shape of {target.shape[0]} values")
    else:
        shape = (Any,) * target.shape[0]
    if not _may_broadcast_to(shape, data.shape):
        raise RelayTypeError(f"cannot collapse {shape_text(data.shape)} to {shape_text(shape)}")
    return TensorType(shape, data.dtype)


def _may_broadcast_to(shape: tuple, target: tuple) -> bool:
    """Whether ``shape`` can broadcast to ``target`` (a ``?`` on either side may)."""
    if len(shape) > len(target):
        return False
    return all(s == 1 or same_dim(s, t) for s, t in zip(reversed(shape), reversed(target)))


def reverse_newshape(ishape: tuple, newshape: tuple) -> tuple:
    """``contrib_reverse_reshape``: reshape's special values read from the right."""
    return tuple(reversed(infer_newshape(tuple(reversed(ishape)), tuple(reversed(newshape)))))


@forward_relation("ReverseReshape")
def reverse_reshape_rel(inputs, attrs, reporter):
    data = tensor(inputs[0], "data")
    if -4 in attrs["newshape"]:
        raise RelayTypeError("contrib_reverse_reshape does not support -4 in newshape")
    return TensorType(reverse_newshape(data.shape, tuple(attrs["newshape"])), data.dtype)


@forward_relation("NdarraySize")
def ndarray_size_rel(inputs, attrs, reporter):
    tensor(inputs[0], "data")
    return TensorType((), attrs["dtype"] or "int32")


_BITS = {"bool": 8, "uint1": 1}


def dtype_bits(dtype: str) -> int:
    base, _, lanes = dtype.partition("x")
    bits = _BITS.get(base) or int(re.sub(r"\D", "", base))
    return bits * (int(lanes) if lanes else 1)


@forward_relation("Reinterpret")
def reinterpret_rel(inputs, attrs, reporter):
    data = tensor(inputs[0], "data")
    if isinstance(data.dtype, str) and dtype_bits(data.dtype) != dtype_bits(attrs["dtype"]):
        raise RelayTypeError(f"cannot reinterpret {data.dtype} as {attrs['dtype']}: the bit widths differ")
    return TensorType(data.shape, attrs["dtype"])


@forward_relation("FixedPointMultiply")
def fixed_point_multiply_rel(inputs, attrs, reporter):
    data = tensor(inputs[0], "data")
    if is_int_dtype(data.dtype) is False:
        raise RelayTypeError(f"data must be integers, found {data.dtype}")
    return data


@forward_relation("FixedPointMultiplyPerAxis")
def fixed_point_multiply_per_axis_rel(inputs, attrs, reporter):
    """Multipliers and shifts are 1-D, one per channel along ``axes`` (one axis)."""
    data = tensor(inputs[0], "data")
    if is_int_dtype(data.dtype) is False:
        raise RelayTypeError(f"data must be integers, found {data.dtype}")
    axes = [norm_axis(a, len(data.shape)) for a in attrs["axes"]]
    if len(axes) != 1:
        raise RelayTypeError(f"axes must name exactly one axis, got {list(attrs['axes'])}")
    for t, what in zip(inputs[1:4], ("fp_multiplier", "left_shift", "right_shift")):
        t = tensor(t, what)
        if len(t.shape) != 1 or not (same_dim(t.shape[0], data.shape[axes[0]]) or t.shape[0] == 1):
            raise RelayTypeError(
                f"{what} must have one value per channel ({data.shape[axes[0]]}), found {shape_text(t.shape)}"
            )
    return data


# --- tuning layouts ---------------------------------------------------------------------------


def parse_auto_scheduler_layout(layout: str) -> tuple[list[int], list[str]]:
    """``"1N32C7H7W"`` -> ([1, 32, 7, 7], ["N", "C", "H", "W"])."""
    parts = re.findall(r"(\d+)([A-Za-z_]+)", layout)
    if not layout or "".join(a + b for a, b in parts) != layout:
        raise RelayTypeError(f"bad auto-scheduler layout {layout!r}: expected size/name pairs such as '1N32C7H7W'")
    return [int(a) for a, _ in parts], [b for _, b in parts]


@forward_relation("AutoSchedulerLayoutTransform")
def auto_scheduler_layout_transform_rel(inputs, attrs, reporter):
    data = tensor(inputs[0], "data")
    src_shape, src_axes = parse_auto_scheduler_layout(attrs["src_layout"])
    dst_shape, dst_axes = parse_auto_scheduler_layout(attrs["dst_layout"])
    if len(src_shape) != len(data.shape) or not all(same_dim(a, b) for a, b in zip(src_shape, data.shape)):
        raise RelayTypeError(f"src_layout {attrs['src_layout']!r} does not describe data of shape {shape_text(data.shape)}")
    for name, n in zip(src_axes, src_shape):
        split = int(np.prod([d for d, a in zip(dst_shape, dst_axes) if a == name]))
        if split != n:
            raise RelayTypeError(f"axis {name} has {n} elements in src_layout but {split} in dst_layout")
    if set(dst_axes) - set(src_axes):
        raise RelayTypeError(f"dst_layout {attrs['dst_layout']!r} names axes not in src_layout")
    return TensorType(tuple(dst_shape), data.dtype)


_ALLOWED_OPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.FloorDiv: "//", ast.Mod: "%"}


def parse_index_map(text: str) -> tuple[list[str], list[ast.expr]]:
    """The parameters and output index expressions of ``"lambda i, j: (j, i)"``, checked to
    use only names, integer constants and ``+ - * // %`` (never evaluated by Python)."""
    try:
        tree = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        tree = None
    if not isinstance(tree, ast.Lambda) or tree.args.defaults or tree.args.vararg:
        raise RelayTypeError(f"index_map must be a lambda such as 'lambda i, j: (j, i)', got {text!r}")
    params = [a.arg for a in tree.args.args]
    outs = list(tree.body.elts) if isinstance(tree.body, (ast.Tuple, ast.List)) else [tree.body]
    for node in outs:
        for sub in ast.walk(node):
            ok = (
                isinstance(sub, (ast.BinOp, ast.UnaryOp, ast.Load, ast.USub, *_ALLOWED_OPS))
                or (isinstance(sub, ast.Name) and sub.id in params)
                or (isinstance(sub, ast.Constant) and type(sub.value) is int)
            )
            if not ok or (isinstance(sub, ast.BinOp) and type(sub.op) not in _ALLOWED_OPS):
                raise RelayTypeError(f"index_map {text!r} may only use its parameters, integers and + - * // %")
    return params, outs


def eval_index(node: ast.expr, env: dict) -> PyAny:
    """One index expression over ints, numpy arrays or (lo, hi) intervals (``Interval``)."""
    if isinstance(node, ast.Constant):
        return env["const"](node.value)
    if isinstance(node, ast.Name):
        return env[node.id]
    if isinstance(node, ast.UnaryOp):
        return env["const"](0) - eval_index(node.operand, env)
    a, b = eval_index(node.left, env), eval_index(node.right, env)
    op = type(node.op)
    if op is ast.Add:
        return a + b
    if op is ast.Sub:
        return a - b
    if op is ast.Mult:
        return a * b
    if op is ast.FloorDiv:
        return a // b
    return a % b


class Interval:
    """Integer ranges [lo, hi], for the extent of an index expression (MapShape)."""

    def __init__(self, lo: int, hi: int):
        self.lo, self.hi = lo, hi

    def _of(self, other):
        return other if isinstance(other, Interval) else Interval(other, other)

    def __add__(self, o):
        o = self._of(o)
        return Interval(self.lo + o.lo, self.hi + o.hi)

    def __sub__(self, o):
        o = self._of(o)
        return Interval(self.lo - o.hi, self.hi - o.lo)

    def __mul__(self, o):
        o = self._of(o)
        c = [self.lo * o.lo, self.lo * o.hi, self.hi * o.lo, self.hi * o.hi]
        return Interval(min(c), max(c))

    def _const(self, o) -> int:
        o = self._of(o)
        if o.lo != o.hi or o.lo <= 0:
            raise RelayTypeError("index_map may divide only by positive constants")
        return o.lo

    def __floordiv__(self, o):
        c = self._const(o)
        return Interval(self.lo // c, self.hi // c)

    def __mod__(self, o):
        c = self._const(o)
        if self.hi - self.lo + 1 >= c or self.lo // c != self.hi // c:
            return Interval(0, c - 1)
        return Interval(self.lo % c, self.hi % c)


def index_map_ranges(outs: list, params: list[str], shape: tuple) -> list[tuple[int, int]]:
    """The (lowest, highest) value of each output index over a static, non-empty ``shape``."""
    env: dict = {p: Interval(0, d - 1) for p, d in zip(params, shape)}
    env["const"] = lambda v: Interval(v, v)
    return [(iv.lo, iv.hi) for iv in (eval_index(node, env) for node in outs)]


@forward_relation("MetaScheduleLayoutTransform")
def meta_schedule_layout_transform_rel(inputs, attrs, reporter):
    data = tensor(inputs[0], "data")
    params, outs = parse_index_map(attrs["index_map"])
    if len(params) != len(data.shape):
        raise RelayTypeError(f"index_map takes {len(params)} indices but the data has rank {len(data.shape)}")
    if not all(is_static(d) for d in data.shape):
        return TensorType((Any,) * len(outs), data.dtype)
    if any(d == 0 for d in data.shape):
        return TensorType((0,) * len(outs), data.dtype)
    ranges = index_map_ranges(outs, params, data.shape)
    return TensorType(tuple(hi - lo + 1 for lo, hi in ranges), data.dtype)


# --- registration -----------------------------------------------------------------------------

_P = OpPattern
# Patterns are TVM's (the two tuning layout transforms register none: opaque).
MISC_OPS = [
    ("einsum", 1, einsum_rel, schema("relay.attrs.EinsumAttrs", ("equation", "str")), _P.INJECTIVE,
     ("data",), "Einstein summation over a tuple of tensors, as numpy.einsum."),
    ("collapse_sum_to", 2, collapse_sum_to_rel,
     schema("relay.attrs.InitOpAttrs", ("shape", "optional_ints", None), ("dtype", "dtype", "")),
     _P.COMM_REDUCE, ("data", "shape"),
     "Sum ``data`` down to ``shape`` (the inverse of broadcasting to data's shape)."),
    ("contrib_reverse_reshape", 1, reverse_reshape_rel,
     schema("relay.attrs.ReshapeAttrs", ("newshape", "ints"), ("allowzero", "bool", False)),
     _P.INJECTIVE, ("data",), "Reshape with the special values 0 and -1 read from the right."),
    ("ndarray_size", 1, ndarray_size_rel, schema("relay.attrs.NdarraySizeAttrs", ("dtype", "dtype", "")),
     _P.INJECTIVE, ("data",), "The number of elements, as a scalar of ``dtype``."),
    ("reinterpret", 1, reinterpret_rel, schema("relay.attrs.CastAttrs", ("dtype", "dtype")),
     _P.ELEMWISE, ("data",), "The same bits read as ``dtype`` (of the same width)."),
    ("fixed_point_multiply", 1, fixed_point_multiply_rel,
     schema("relay.attrs.FixedPointMultiplyAttrs", ("multiplier", "int"), ("shift", "int")),
     _P.ELEMWISE, ("data",),
     "``round(x * multiplier * 2**(shift - 31))`` in integers (rounding halves up)."),
    ("fixed_point_multiply_per_axis", 4, fixed_point_multiply_per_axis_rel,
     schema("relay.attrs.FixedPointMultiplyPerAxisAttrs", ("is_lshift_required", "bool", False),
            ("is_rshift_required", "bool", False), ("axes", "ints")),
     _P.BROADCAST, ("data", "fp_multiplier", "left_shift", "right_shift"),
     "As fixed_point_multiply, with a multiplier and shifts per channel along ``axes``."),
    ("auto_scheduler_layout_transform", 1, auto_scheduler_layout_transform_rel,
     schema("relay.attrs.AutoSchedulerLayoutTransformAttrs", ("src_layout", "str"), ("dst_layout", "str")),
     _P.OPAQUE, ("data",), "Re-tile a tensor between two auto-scheduler layouts ('1N32C7H7W')."),
    ("meta_schedule_layout_transform", 1, meta_schedule_layout_transform_rel,
     schema("relay.attrs.MetaScheduleLayoutTransformAttrs", ("index_map", "str")),
     _P.OPAQUE, ("data",), "Move each element to the index ``index_map`` gives it ('lambda i, j: (j, i)')."),
]  # fmt: skip

for _name, _n, _rel, _attrs, _pattern, _args, _doc in MISC_OPS:
    register(_name, _n, _rel, attrs=_attrs, pattern=_pattern, doc=_doc, arg_names=_args)


# --- builders -------------------------------------------------------------------------------


def einsum(data, equation) -> Call:
    """``relay.einsum([a, b], "ij,jk->ik")``."""
    return call("einsum", to_expr(list(data)), equation=equation)


def collapse_sum_to(data, shape) -> Call:
    """``shape`` as a list becomes an int64 constant and the ``shape`` attribute (as TVM)."""
    if isinstance(shape, (list, tuple)):
        return call("collapse_sum_to", data, to_expr(np.asarray(shape, "int64")), shape=ints(shape))
    return call("collapse_sum_to", data, shape)


def reverse_reshape(data, newshape) -> Call:
    """``relay.reverse_reshape(x, (-1, 0))``: builds ``contrib_reverse_reshape``."""
    return call("contrib_reverse_reshape", data, newshape=ints(newshape))


def ndarray_size(data, dtype="int32") -> Call:
    """The element count of ``data`` as a scalar of ``dtype``."""
    return call("ndarray_size", data, dtype=dtype)


def reinterpret(data, dtype) -> Call:
    """The bits of ``data`` read as ``dtype`` (same width): ``relay.reinterpret(x, "int32")``."""
    return call("reinterpret", data, dtype=dtype)


def fixed_point_multiply(data, multiplier, shift) -> Call:
    """``round(data * multiplier * 2**(shift - 31))`` in integers (a quantized rescale)."""
    return call("fixed_point_multiply", data, multiplier=multiplier, shift=shift)


def fixed_point_multiply_per_axis(x, y, lshift, rshift, is_lshift_required, is_rshift_required, axes) -> Call:
    """fixed_point_multiply with one multiplier ``y`` and shifts per channel along ``axes``."""
    return call(
        "fixed_point_multiply_per_axis", x, y, lshift, rshift,
        is_lshift_required=is_lshift_required, is_rshift_required=is_rshift_required, axes=ints(axes),
    )  # fmt: skip


def auto_scheduler_layout_transform(data, src_layout, dst_layout) -> Call:
    """Re-tile between auto-scheduler layouts: ``(x, "1N8C7H7W", "1N2C7H7W4C")``."""
    return call("auto_scheduler_layout_transform", data, src_layout=src_layout, dst_layout=dst_layout)


def meta_schedule_layout_transform(data, index_map) -> Call:
    """``index_map`` is the text of a lambda over the input's indices (see the module doc)."""
    return call("meta_schedule_layout_transform", data, index_map=str(index_map))
