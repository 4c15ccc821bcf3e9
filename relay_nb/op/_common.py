"""Helpers shared by the op families: attribute schemas, shape arithmetic, layouts, builders.

Relations raise :class:`RelayTypeError` with short messages *without* location (the solver
adds the operator name and the call's source position).  Dimensions are ``int`` (static),
or anything else (``?``, a symbolic size) which is *dynamic*: a result dimension computed
from a dynamic one is ``Any``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any as PyAny

import numpy as np

from ..errors import AttrError, RelayTypeError
from ..ir.attrs import UnresolvedAttrs
from ..ir.expr import Call, Expr, Tuple, TupleWrapper, _as_expr, const
from ..ir.ty import Any, TensorType, TupleType, Type
from ..typing.relations import Relation, broadcast_shapes
from ..typing.text import dim_text, type_text
from .registry import AttrField, AttrSchema, OpPattern, get_op, make_attrs, register_op

# --- attribute schemas ------------------------------------------------------------------


def schema(type_key: str, *fields: tuple) -> AttrSchema:
    """``schema("relay.attrs.SoftmaxAttrs", ("axis", "int", -1))``: one tuple per field.

    A field is ``(name, kind)`` (required) or ``(name, kind, default)``, in TVM's
    declaration order (the printer writes non-default fields in that order).
    """
    return AttrSchema(type_key, tuple(AttrField(*f) for f in fields))


# --- reading types ----------------------------------------------------------------------


def tensor(t: Type, what: str = "argument") -> TensorType:
    """``t`` as a tensor type with a known rank, or a RelayTypeError naming ``what``."""
    if not isinstance(t, TensorType) or not isinstance(t.shape, tuple):
        raise RelayTypeError(f"{what} must be a tensor, found {type_text(t)}")
    return t


def tensors_of_tuple(t: Type, what: str = "argument") -> list[TensorType]:
    """The fields of a tuple of tensors (concatenate, stack)."""
    if not isinstance(t, TupleType):
        raise RelayTypeError(f"{what} must be a tuple of tensors, found {type_text(t)}")
    if not t.fields:
        raise RelayTypeError(f"{what} must be a non-empty tuple of tensors")
    return [tensor(f, f"field {i} of {what}") for i, f in enumerate(t.fields)]


def is_static(d: PyAny) -> bool:
    return type(d) is int


def product(dims: Iterable[PyAny]) -> PyAny:
    """Product of dims; ``Any`` when one of them is dynamic."""
    out = 1
    for d in dims:
        if not is_static(d):
            return Any
        out *= d
    return out


def same_dim(a: PyAny, b: PyAny) -> bool:
    """Two dims may be equal (a dynamic dim matches anything)."""
    return not (is_static(a) and is_static(b)) or a == b


def pick_dim(a: PyAny, b: PyAny) -> PyAny:
    """The better known of two dims that :func:`same_dim` accepted."""
    return a if is_static(a) else b


def broadcasts_to(shape: tuple, target: tuple) -> bool:
    """Whether ``shape`` broadcasts to exactly ``target`` (NumPy rules)."""
    try:
        return broadcast_shapes(shape, target) == tuple(target)
    except RelayTypeError:
        return False


def is_int_dtype(dtype: PyAny) -> bool | None:
    """True/False for a known dtype string, None when the dtype is still unknown."""
    if not isinstance(dtype, str):
        return None
    return dtype.startswith(("int", "uint"))


def norm_axis(axis: int, rank: int, what: str = "axis", extra: int = 0) -> int:
    """A possibly negative axis of a rank-``rank`` tensor, normalised.

    ``extra=1`` allows the position one past the end (expand_dims, stack).
    """
    n = rank + extra
    if not -n <= axis < n:
        raise RelayTypeError(f"{what} {axis} is out of range for a rank-{rank} tensor")
    return axis + n if axis < 0 else axis


def as_tuple(value: PyAny, n: int, what: str) -> tuple:
    """An int or a list of 1 or ``n`` ints, as ``n`` ints (strides, dilation, kernel_size)."""
    value = (value,) if isinstance(value, int) else tuple(value)
    if len(value) == 1:
        value = value * n
    if len(value) != n:
        raise RelayTypeError(f"{what} must have 1 or {n} values, got {list(value)}")
    if what in _POSITIVE and any(v < 1 for v in value):
        # A zero stride or dilation would divide by zero in the output-size formula.
        raise RelayTypeError(f"{what} must be positive, got {list(value)}")
    return value


_POSITIVE = ("strides", "dilation", "pool_size", "kernel_size")


def padding_pairs(padding: PyAny, n: int, what: str = "padding") -> list[tuple[int, int]]:
    """TVM's padding forms for ``n`` spatial dims, as ``[(before, after), ...]``.

    One value pads every side; ``n`` values pad both sides of each dim; ``2n`` values are
    all the befores then all the afters (``(top, left, bottom, right)`` in 2-d).
    """
    pads = pad_tuple(padding, n)
    if len(pads) != 2 * n:
        raise RelayTypeError(f"{what} must have 1, {n} or {2 * n} values, got {list(pads)}")
    return [(pads[i], pads[i + n]) for i in range(n)]


def layout_axes(layout: str, letters: str, what: str = "layout") -> dict[str, int]:
    """Positions of ``letters`` in ``layout``, which must be a permutation of them.

    ``layout_axes("NHWC", "NCHW") == {"N": 0, "H": 1, "W": 2, "C": 3}``.  Packed layouts
    such as ``NCHW16c`` are produced by TVM's layout passes, which relay_nb does not run.
    """
    if sorted(layout) != sorted(letters):
        raise RelayTypeError(
            f"{what} {layout!r} is not supported: use a permutation of {', '.join(letters)}"
        )
    return {c: i for i, c in enumerate(layout)}


# --- relations --------------------------------------------------------------------------


def register(
    name: str,
    num_inputs: int,
    rel: Relation,
    attrs: AttrSchema | None = None,
    pattern: OpPattern = OpPattern.OPAQUE,
    doc: str = "",
    arg_names: tuple = (),
) -> PyAny:
    """:func:`register_op` for the built-ins.

    The relation of an op with attributes sees the schema's defaults when a call has none
    (a ``Call`` built by hand), so relations can always read ``attrs[...]``.
    """
    if attrs is not None:
        rel = _with_default_attrs(name, rel)
    return register_op(
        name, num_inputs, rel, attrs=attrs, pattern=pattern, doc=doc, arg_names=arg_names
    )


def _with_default_attrs(op_name: str, rel: Relation) -> Relation:
    def fn(types, num_inputs, attrs, reporter):
        if isinstance(attrs, UnresolvedAttrs):
            raise RelayTypeError(
                f"the call's attributes are {attrs.ref}, an entry of a #[metadata] section "
                "this text does not have, so its type cannot be known (print the program with "
                "its metadata, or write the attributes as key=value)"
            )
        if attrs is None:
            try:
                attrs = make_attrs(op_name)
            except AttrError as e:  # a required attribute: say which, the solver says where
                raise RelayTypeError(e.message.removeprefix(f"{op_name}: ")) from None
        return rel(types, num_inputs, attrs, reporter)

    return Relation(rel.name, fn)


def relation(name: str) -> Callable[[Callable[..., bool]], Relation]:
    """Make a :class:`Relation` from ``fn(types, num_inputs, attrs, reporter) -> bool``.

    For relations that, like TVM's, also *assign* input types (``conv2d`` gives an
    unannotated weight the shape its attributes imply); most relations use
    :func:`relay_nb.typing.relations.forward_relation` instead.
    """

    def deco(fn: Callable[..., bool]) -> Relation:
        return Relation(name, fn)

    return deco


def out_dtype(attrs: PyAny, *dtypes: PyAny, reporter: PyAny) -> PyAny:
    """``attrs.out_dtype`` when set, else the common dtype of the inputs."""
    if attrs is not None and attrs.get("out_dtype"):
        return attrs["out_dtype"]
    common = dtypes[0]
    for d in dtypes[1:]:
        common = reporter.unify_dtype(common, d)
    return common


# --- builders ---------------------------------------------------------------------------


def to_expr(value: PyAny) -> Expr:
    """A builder argument as an expression.

    Python numbers become *literal* constants (as an unsuffixed number in text), so
    ``relay.multiply(x, 2)`` takes ``x``'s dtype; numpy arrays become constants.
    """
    if isinstance(value, Expr):
        return value
    if isinstance(value, TupleWrapper):
        return value.astuple()
    if isinstance(value, (list, tuple)):
        return Tuple(tuple(to_expr(v) for v in value))
    if isinstance(value, int) and not isinstance(value, bool) and not -(2**31) <= value < 2**31:
        return const(value, "int64")
    if isinstance(value, (bool, int, float, np.ndarray, np.generic)):
        return _as_expr(value)
    raise AttrError(f"cannot use {value!r} of type {type(value).__name__} as a Relay expression")


def call(op_name: str, *args: PyAny, **attrs: PyAny) -> Call:
    """``Call(op, args, attrs)`` with the attributes checked against the op's schema."""
    op = get_op(op_name)
    return Call(op, tuple(to_expr(a) for a in args), make_attrs(op, attrs))


def ints(value: PyAny, n: int | None = None) -> PyAny:
    """An int (repeated ``n`` times when given) or a sequence of ints, as a tuple."""
    if value is None:
        return None
    if isinstance(value, (int, np.integer)):
        return (int(value),) * (n or 1)
    return tuple(int(v) for v in value)


def pad_tuple(padding: PyAny, n: int) -> tuple[int, ...]:
    """TVM's ``get_pad_tuple2d/3d``: an int or ``n`` values become ``2n`` values."""
    pads = ints(padding, 1)
    if len(pads) == 1:
        return pads * (2 * n)
    if len(pads) == n:
        return pads + pads
    return pads


__all__ = [
    "as_tuple",
    "broadcasts_to",
    "call",
    "dim_text",
    "ints",
    "is_int_dtype",
    "is_static",
    "layout_axes",
    "norm_axis",
    "out_dtype",
    "pad_tuple",
    "padding_pairs",
    "pick_dim",
    "product",
    "register",
    "relation",
    "same_dim",
    "schema",
    "tensor",
    "tensors_of_tuple",
    "to_expr",
    "type_text",
]
