"""Relay expressions.

Every node is a frozen, slotted dataclass with ``eq=False``: equality and hashing are by
*identity*, as for TVM's nodes.  Using the same Python object twice is how a program
shares a node (a graph binding); structural comparison is a separate function
(:func:`relay_nb.structural_equal`).  Children are tuples; ``dataclasses.replace`` (or
:func:`with_fields`) is how a node is "edited".

Each node carries an optional ``span`` (where the parser found it) and a
``checked_type`` slot that type inference fills in place, like TVM's ``checked_type_``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Optional, Sequence

import numpy as np

from .attrs import EMPTY_ATTRS, Attrs
from .span import Span
from .ty import GlobalTypeVar, TensorType, Type, TypeVar, complex_dtype_message

if TYPE_CHECKING:  # pragma: no cover
    pass


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Expr:
    """Base of every Relay expression."""

    span: Optional[Span] = field(default=None, kw_only=True, repr=False)
    _checked_type: Optional[Type] = field(default=None, kw_only=True, repr=False, init=False)

    # -- types -----------------------------------------------------------------------
    @property
    def checked_type(self) -> Type:
        """The type InferType gave this node; a RelayError if it has not run."""
        if self._checked_type is None:
            from ..errors import RelayError

            raise RelayError(
                f"the type of this {type(self).__name__} is not known: "
                "run relay.transform.InferType() on the module first"
            )
        return self._checked_type

    def set_checked_type(self, ty: Type) -> None:
        """Record the inferred type (used by InferType; a cache, not structure)."""
        object.__setattr__(self, "_checked_type", ty)

    # -- text ------------------------------------------------------------------------
    def __repr__(self) -> str:
        """A one-level summary (children shown by kind): safe on arbitrarily deep programs."""
        parts = []
        for f in dataclasses.fields(self):
            if f.name in ("span", "_checked_type"):
                continue
            parts.append(f"{f.name}={_short(getattr(self, f.name))}")
        return f"{type(self).__name__}({', '.join(parts)})"

    def astext(self, show_meta_data: bool = True, form: str = "graph", show_types: bool | None = None) -> str:
        """The program as Relay text (see :func:`relay_nb.syntax.printer.astext`)."""
        from ..syntax.printer import astext

        return astext(self, show_meta_data=show_meta_data, form=form, show_types=show_types)

    def __str__(self) -> str:
        from ..syntax.printer import pretty_print

        return pretty_print(self)

    # -- notebook display (relay_nb.viz.html: highlighted text, types on hover) ---------
    def _repr_html_(self) -> str:
        from ..viz.html import repr_html

        return repr_html(self)

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        from ..viz.html import mimebundle

        return mimebundle(self, include, exclude)

    # -- operator sugar for the Python builder, as TVM's ExprWithOp -------------------
    def _binary(self, other: Any, op_name: str, reverse: bool = False) -> "Call":
        from ..op.registry import get_op

        other_expr = _as_expr(other)
        args = (other_expr, self) if reverse else (self, other_expr)
        return Call(get_op(op_name), args)

    def __add__(self, other: Any) -> "Call":
        return self._binary(other, "add")

    def __radd__(self, other: Any) -> "Call":
        return self._binary(other, "add", reverse=True)

    def __sub__(self, other: Any) -> "Call":
        return self._binary(other, "subtract")

    def __rsub__(self, other: Any) -> "Call":
        return self._binary(other, "subtract", reverse=True)

    def __mul__(self, other: Any) -> "Call":
        return self._binary(other, "multiply")

    def __rmul__(self, other: Any) -> "Call":
        return self._binary(other, "multiply", reverse=True)

    def __truediv__(self, other: Any) -> "Call":
        return self._binary(other, "divide")

    def __rtruediv__(self, other: Any) -> "Call":
        return self._binary(other, "divide", reverse=True)

    def __neg__(self) -> "Call":
        from ..op.registry import get_op

        return Call(get_op("negative"), (self,))

    def __call__(self, *args: Any) -> "Call":
        """``f(x, y)`` builds a Call node (it does not evaluate anything)."""
        return Call(self, tuple(_as_expr(a) for a in args))


@dataclass(frozen=True, slots=True, eq=False)
class Var(Expr):
    """A local variable ``%name`` (a function parameter, let or pattern binder)."""

    name_hint: str
    type_annotation: Optional[Type] = None

    def __repr__(self) -> str:
        return f"Var(%{self.name_hint})"


@dataclass(frozen=True, slots=True, eq=False)
class GlobalVar(Expr):
    """A global function name ``@name``; the module maps it to a Function."""

    name_hint: str

    def __repr__(self) -> str:
        return f"GlobalVar(@{self.name_hint})"


@dataclass(frozen=True, slots=True, eq=False)
class Constant(Expr):
    """A constant tensor (a 0-d array for scalars). The array is made read-only.

    ``is_literal`` marks an unsuffixed literal read from text (``3``, ``1.5``): its dtype
    (int32 / float32) is only a default, and type inference lets it take the dtype its
    context requires, as seed 000's ``%f(10, 11)`` with float32 parameters needs.
    """

    data: np.ndarray
    is_literal: bool = field(default=False, kw_only=True, repr=False)

    def __post_init__(self) -> None:
        data = self.data
        if not isinstance(data, np.ndarray):
            data = np.asarray(data)
        if data.dtype.kind == "c":  # every way of making a constant passes here
            from ..errors import RelayTypeError

            raise RelayTypeError(complex_dtype_message(data.dtype.name))
        if data.flags.writeable:
            data = data.copy()
            data.flags.writeable = False
        object.__setattr__(self, "data", data)

    @property
    def is_scalar(self) -> bool:
        return self.data.ndim == 0

    def __repr__(self) -> str:
        if self.data.ndim == 0:
            return f"Constant({self.data.item()!r}, {self.data.dtype})"
        return f"Constant(<{self.data.shape} {self.data.dtype}>)"


@dataclass(frozen=True, slots=True, eq=False)
class MetaRef(Expr):
    """A ``meta[relay.Constant][i]`` reference whose meta table entry is missing.

    The program can still be printed, viewed and type-checked (with the type taken from
    the printer's ``/* ty=... */`` comment when there was one); evaluating it is an error
    naming the missing entry.
    """

    type_key: str
    index: int
    type_annotation: Optional[Type] = None

    def __repr__(self) -> str:
        return f"MetaRef(meta[{self.type_key}][{self.index}])"


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Tuple(Expr):
    """``(a, b, ...)``."""

    fields: tuple[Expr, ...]

    def __post_init__(self) -> None:
        if not isinstance(self.fields, tuple):
            object.__setattr__(self, "fields", tuple(self.fields))

    def __len__(self) -> int:
        return len(self.fields)

    def __getitem__(self, index: int) -> Expr:
        return self.fields[index]

    def astuple(self) -> "Tuple":
        return self


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class TupleGetItem(Expr):
    """Projection ``t.index``."""

    tuple_value: Expr
    index: int


@dataclass(frozen=True, slots=True, eq=False)
class Op(Expr):
    """A primitive operator such as ``add`` or ``nn.conv2d``.

    There is one ``Op`` object per name (get it with ``relay.op.get(name)``); its
    metadata lives in the column-based registry of :mod:`relay_nb.op.registry`.
    """

    name: str

    def get_attr(self, column: str, default: Any = None) -> Any:
        """The value of registry column ``column`` for this op."""
        from ..op.registry import get_column

        return get_column(column).get(self.name, default)

    def __repr__(self) -> str:
        return f"Op({self.name})"

    def __reduce__(self):
        # One Op per name: copy, deepcopy and pickle give back the registered object.
        return (_registered_op, (self.name,))


def _registered_op(name: str) -> "Op":
    from ..op.registry import _OPS, get_op

    op = _OPS.get(name)
    if op is None:
        try:
            op = get_op(name)
        except Exception:  # an op registered only in another session: keep its name
            op = Op(name)
    return op


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Call(Expr):
    """``op(args..., attr=value, ...)`` — a call to an op, function, global or constructor."""

    op: Expr
    args: tuple[Expr, ...] = ()
    attrs: Optional[Attrs] = None
    type_args: tuple[Type, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.args, tuple):
            object.__setattr__(self, "args", tuple(self.args))
        if not isinstance(self.type_args, tuple):
            object.__setattr__(self, "type_args", tuple(self.type_args))


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Function(Expr):
    """``fn [T...](%p: T, ..., Attr=v) -> R { body }``; evaluates to a closure."""

    params: tuple[Var, ...]
    body: Expr
    ret_type: Optional[Type] = None
    type_params: tuple[TypeVar, ...] = ()
    attrs: Attrs = EMPTY_ATTRS

    def __post_init__(self) -> None:
        if not isinstance(self.params, tuple):
            object.__setattr__(self, "params", tuple(self.params))
        if not isinstance(self.type_params, tuple):
            object.__setattr__(self, "type_params", tuple(self.type_params))
        if not isinstance(self.attrs, Attrs):
            object.__setattr__(self, "attrs", Attrs(self.attrs or {}, "DictAttrs"))

    def with_attr(self, key: str, value: Any) -> "Function":
        """A copy of this function with one attribute set (``Primitive``, ``Inline``...)."""
        return dataclasses.replace(self, attrs=self.attrs.with_fields(**{key: value}))

    @property
    def is_primitive(self) -> bool:
        return bool(self.attrs.get("Primitive", 0))


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Let(Expr):
    """``let %var = value; body``. The var is in scope in its own value (recursion)."""

    var: Var
    value: Expr
    body: Expr


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class If(Expr):
    """``if (cond) { true_branch } else { false_branch }``; cond is a 0-d bool."""

    cond: Expr
    true_branch: Expr
    false_branch: Expr


# --- ADTs and pattern matching -----------------------------------------------------


@dataclass(frozen=True, slots=True, eq=False)
class Constructor(Expr):
    """An ADT constructor such as ``Cons``; it is called like a function."""

    name_hint: str
    inputs: tuple[Type, ...]
    belong_to: GlobalTypeVar
    tag: int = 0

    def __post_init__(self) -> None:
        if not isinstance(self.inputs, tuple):
            object.__setattr__(self, "inputs", tuple(self.inputs))

    @property
    def name(self) -> str:
        """The constructor's name (``name_hint``), as values' ``.constructor.name``."""
        return self.name_hint

    def __repr__(self) -> str:
        return f"Constructor({self.name_hint})"


class Pattern:
    """Base of match patterns."""

    __slots__ = ()


@dataclass(frozen=True, slots=True, eq=False)
class PatternWildcard(Pattern):
    """``_``: matches anything, binds nothing."""

    span: Optional[Span] = field(default=None, kw_only=True, repr=False)


@dataclass(frozen=True, slots=True, eq=False)
class PatternVar(Pattern):
    """``%x``: matches anything and binds it."""

    var: Var
    span: Optional[Span] = field(default=None, kw_only=True, repr=False)


@dataclass(frozen=True, slots=True, eq=False)
class PatternConstructor(Pattern):
    """``Cons(p1, p2)``: matches values built by ``constructor`` with matching fields."""

    constructor: Constructor
    patterns: tuple[Pattern, ...] = ()
    span: Optional[Span] = field(default=None, kw_only=True, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.patterns, tuple):
            object.__setattr__(self, "patterns", tuple(self.patterns))


@dataclass(frozen=True, slots=True, eq=False)
class PatternTuple(Pattern):
    """``(p1, p2)``: matches a tuple field by field."""

    patterns: tuple[Pattern, ...] = ()
    span: Optional[Span] = field(default=None, kw_only=True, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.patterns, tuple):
            object.__setattr__(self, "patterns", tuple(self.patterns))


@dataclass(frozen=True, slots=True, eq=False)
class Clause:
    """One arm ``pattern => rhs`` of a match."""

    lhs: Pattern
    rhs: Expr
    span: Optional[Span] = field(default=None, kw_only=True, repr=False)


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Match(Expr):
    """``match (data) { clauses }``; ``complete=False`` is ``match?`` (may fail at run time)."""

    data: Expr
    clauses: tuple[Clause, ...]
    complete: bool = True

    def __post_init__(self) -> None:
        if not isinstance(self.clauses, tuple):
            object.__setattr__(self, "clauses", tuple(self.clauses))


# --- references --------------------------------------------------------------------


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class RefCreate(Expr):
    """``ref(value)``: a new mutable cell."""

    value: Expr


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class RefRead(Expr):
    """``ref_read(ref)``."""

    ref: Expr


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class RefWrite(Expr):
    """``ref_write(ref, value)``; evaluates to ``()``."""

    ref: Expr
    value: Expr


@dataclass(frozen=True, slots=True, eq=False)
class TempExpr(Expr):
    """Base for pass-internal nodes; a pass must ``realize()`` them before it returns."""

    def realize(self) -> Expr:  # pragma: no cover - abstract
        raise NotImplementedError(f"{type(self).__name__} must implement realize()")


class TupleWrapper:
    """What multi-output ops return in the builder API (``relay.split(...)[0]``).

    Mirrors TVM: indexing projects a field, ``astuple()`` gives the tuple expression.
    """

    __slots__ = ("tuple_value", "size")

    def __init__(self, tuple_value: Expr, size: int):
        self.tuple_value = tuple_value
        self.size = size

    def astuple(self) -> Expr:
        return self.tuple_value

    def __getitem__(self, index: int) -> TupleGetItem:
        if not -self.size <= index < self.size:
            raise IndexError(f"tuple index {index} out of range for {self.size} fields")
        return TupleGetItem(self.tuple_value, index % self.size)

    def __len__(self) -> int:
        return self.size

    def __iter__(self):
        return (self[i] for i in range(self.size))


# --- builder helpers with TVM's names ---------------------------------------------


def var(
    name_hint: str,
    type_annotation: Type | str | None = None,
    shape: Sequence[int] | None = None,
    dtype: str = "float32",
) -> Var:
    """A new local variable, as ``tvm.relay.var``.

    >>> x = var("x", shape=(2, 3))          # Tensor[(2, 3), float32]
    >>> y = var("y", "int32")               # a scalar
    """
    if type_annotation is not None and shape is not None:
        raise ValueError("give either type_annotation or shape, not both")
    written = dtype if shape is not None else type_annotation
    if isinstance(written, str) and written.startswith("complex"):
        from ..errors import RelayTypeError

        raise RelayTypeError(complex_dtype_message(written))
    if shape is not None:
        type_annotation = TensorType(tuple(int(d) for d in shape), dtype)
    elif isinstance(type_annotation, str):
        type_annotation = TensorType((), type_annotation)
    return Var(name_hint, type_annotation)


def const(value: Any, dtype: str | None = None) -> Constant:
    """A constant, as ``tvm.relay.const``: Python ints become int32, floats float32."""
    if isinstance(value, Constant):
        return value
    if dtype is None:
        if isinstance(value, bool):
            dtype = "bool"
        elif isinstance(value, int):
            dtype = "int32"
        elif isinstance(value, float):
            dtype = "float32"
    array = np.asarray(value, dtype=dtype)
    if array.dtype == np.float64 and dtype is None:
        array = array.astype("float32")
    elif array.dtype == np.int64 and dtype is None and not isinstance(value, np.ndarray):
        array = array.astype("int32")
    return Constant(array)


def _as_expr(value: Any) -> Expr:
    """An operand of the operator sugar: Python numbers become *literal* constants, as
    in the op builders (``x * 2`` takes ``x``'s dtype, like ``relay.multiply(x, 2)``)."""
    if isinstance(value, Expr):
        return value
    if type(value) is int and -(2**31) <= value < 2**31:
        return Constant(np.asarray(value, "int32"), is_literal=True)
    if type(value) is float:
        return Constant(np.asarray(value, "float32"), is_literal=True)
    return const(value)


def _short(value: Any) -> str:
    """Summary of a child for ``Expr.__repr__``: leaves in full, compound nodes by kind."""
    if isinstance(value, (Var, GlobalVar, Constant, Op, Constructor, MetaRef)):
        return repr(value)
    if isinstance(value, Call) and isinstance(value.op, Op):
        return f"Call({value.op.name}, ...)"
    if isinstance(value, Expr):
        return f"{type(value).__name__}(...)"
    if isinstance(value, tuple):
        inner = ", ".join(_short(v) for v in value[:4])
        return f"({inner}{', ...' if len(value) > 4 else ''}{',' if len(value) == 1 else ''})"
    if isinstance(value, Clause):
        return "Clause(...)"
    return repr(value)


def with_fields(node: Any, **changes: Any) -> Any:
    """A copy of ``node`` with some fields replaced (the span is kept unless given)."""
    return dataclasses.replace(node, **changes)


__all__ = [
    "Expr",
    "Var",
    "GlobalVar",
    "Constant",
    "MetaRef",
    "Tuple",
    "TupleGetItem",
    "Op",
    "Call",
    "Function",
    "Let",
    "If",
    "Constructor",
    "Pattern",
    "PatternWildcard",
    "PatternVar",
    "PatternConstructor",
    "PatternTuple",
    "Clause",
    "Match",
    "RefCreate",
    "RefRead",
    "RefWrite",
    "TempExpr",
    "TupleWrapper",
    "var",
    "const",
    "with_fields",
]
