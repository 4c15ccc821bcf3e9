"""The Relay text writer: programs as v0.0.5 text that TVM 0.19 and relay_nb both read.

Two layouts (``form=``):

* ``"graph"`` — TVM's own layout (``../shared/relay_text_format.md`` §11).  One call per
  line: variables, globals, constants, operators and constructors are written inline; any
  other node is inlined only when it is used once *and* sits where a whole expression may
  stand (the result of a scope, or the value of a ``let``); everything else is hoisted as
  ``%N = ...;`` into the scope being printed when the node is first reached.  A node used
  twice is bound once and named ``%N`` wherever it is used again, even from another scope
  (graph labels are global in the parser, §5.2): this is how a DAG stays a DAG in text
  (seed 004).  The printer never invents a ``let``.
* ``"anf"`` — the program after :func:`relay_nb.transform.to_a_normal_form`, printed in
  graph form; for an A-normal-form program that shows only ``let``s.

What we write differently from TVM's printer, so that TVM 0.19's parser *and* ours read it
back to the same program (``parse(astext(p))`` is structurally equal to ``p``):

* a hoisted ``match`` is written ``%N = (match (...) {...});`` and a ``let`` or ``match``
  used as a ``let`` value is parenthesised (TVM parses both values at infix level, where
  a parenthesised expression may be a full ``match`` or ``let`` sequence);
* floats are written with the shortest digits that read back to the same value at their
  dtype (``0.1f``, ``3.4028235e+38f``, ``0.1f16``), not with 6 significant digits; NaN,
  infinities other than float32's ``inff`` / ``-inff``, dtypes without a literal (int8,
  uint8, ...) and every non-scalar constant go to the meta table;
* local names are made readable by TVM: characters that are not identifier characters
  (dots, ``-``, spaces ...) become ``_``;
* an ``extern type`` (an ADT without constructors) comes after every other definition
  (TVM stops reading definitions after one), and a function's first attribute is never a
  dotted key (TVM finds attributes by ``identifier =`` lookahead);
* an unsuffixed float literal whose dtype type inference took from its context is
  written at that dtype (``2.5f16``), since TVM has no suffix-less float literal;
* a ``meta[...][i]`` reference whose entry is missing keeps its index; constants sent to
  the meta table are numbered after it, and the hole is ``null`` in ``#[metadata]``.

Nothing here recurses per node: expressions are printed by generators driven from an
explicit stack (:meth:`_TextPrinter._drive`), types and patterns by loops, and the
document is laid out by :func:`relay_nb.syntax.doc.render`.  A 100,000-deep ``let`` chain
or dataflow chain prints at Python's default recursion limit, in time linear in its size.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import numpy as np

from ..errors import RelayError
from ..ir.adt import TypeData
from ..ir.attrs import Attrs, UnresolvedAttrs
from ..ir.expr import (
    Call,
    Constant,
    Constructor,
    Expr,
    Function,
    GlobalVar,
    If,
    Let,
    Match,
    MetaRef,
    Op,
    Pattern,
    PatternConstructor,
    PatternTuple,
    PatternVar,
    PatternWildcard,
    RefCreate,
    RefRead,
    RefWrite,
    TempExpr,
    Tuple,
    TupleGetItem,
    Var,
)
from ..ir.module import IRModule
from ..ir.ty import (
    Kind,
    TensorType,
    Type,
    TypeRelation,
    TypeVar,
)
from ..typing.text import TypeWriter
from ..util import ByClass, paused_gc
from .doc import Block, render

VERSION_HEADER = '#[version = "0.0.5"]'

_METADATA_OMITTED = (
    "/* For debugging purposes the metadata section has been omitted.\n"
    " * If you would like to see the full metadata section you can set the \n"
    " * option to `True` when invoking `astext`. \n"
    " */"
)

# ----------------------------------------------------------------------------------------
# public API
# ----------------------------------------------------------------------------------------


def astext(
    obj: Any,
    show_meta_data: bool = True,
    form: str = "graph",
    show_types: bool | None = None,
    show_spans: bool = False,
) -> str:
    """``obj`` (an IRModule, an expression, a type or an ADT) as Relay text.

    Parameters
    ----------
    obj
        What to print.
    show_meta_data
        Append the ``#[metadata]`` section when the text refers to meta constants
        (``meta[relay.Constant][i]``); without it the text says the section was omitted.
    form
        ``"graph"`` (TVM's layout: shared nodes bound once as ``%N = ...;``) or ``"anf"``
        (the program converted to A-normal form, all ``let``).
    show_types
        ``None``: write ``/* ty=... */`` after the nodes that have been type-checked;
        ``True``: the same (every node whose type is known); ``False``: never.
    show_spans
        Also write ``span=source:line:column`` in those comments (TVM does).

    Examples
    --------
    >>> x = relay.var("x", shape=(2, 3))
    >>> y = relay.log(x)
    >>> print(astext(relay.Function([x], relay.add(y, y))))
    #[version = "0.0.5"]
    fn (%x: Tensor[(2, 3), float32]) {
      %0 = log(%x);
      add(%0, %0)
    }
    """
    body, table = _print(obj, form, show_types, show_spans)
    text = VERSION_HEADER + "\n" + body
    if _has_entries(table):
        if not text.endswith("\n"):
            text += "\n"
        if show_meta_data:
            text += "#[metadata]\n" + _write_metadata(table)
        else:
            text += _METADATA_OMITTED
    return text


def pretty_print(obj: Any, form: str = "graph", show_types: bool | None = None) -> str:
    """``obj`` as text the way TVM's ``str()`` shows it: no header, no metadata section.

    Meta references (``meta[relay.Constant][0]``) are still written where they occur.
    """
    body, _ = _print(obj, form, show_types, False)
    return body


def type_to_text(ty: Any) -> str:
    """A type as Relay text: ``Tensor[(2, 3), float32]``, ``float32``, ``(A, B)``,
    ``fn [A](A) -> A``, ``List[A]``, ``Nat[]``, ``ref(T)``; unknowns print as ``_`` and
    dynamic dimensions as ``?``."""
    return TypeWriter()(ty)


def scalar_to_text(data: np.ndarray) -> str | None:
    """The literal for a 0-d array (``3``, ``2i64``, ``0.5f``, ``1f16``, ``True``), or
    None when it has no literal spelling (NaN, non-float32 infinities, int8, uint8 ...
    and every array that is not 0-d): such constants go to the meta table."""
    if not isinstance(data, np.ndarray) or data.ndim != 0:
        return None
    name = data.dtype.name
    if name == "bool":
        return "True" if bool(data) else "False"
    suffix = _SCALAR_SUFFIX.get(name)
    if suffix is None:
        return None
    if name[0] == "i":
        return f"{int(data)}{suffix}"
    x = data[()]
    if np.isnan(x):
        return None
    if np.isinf(x):
        if name != "float32":
            return None
        return "inff" if x > 0 else "-inff"
    return float_to_text(x) + suffix


def float_to_text(x: Any) -> str:
    """The shortest decimal text that reads back to exactly ``x`` at ``x``'s precision.

    ``x`` is a numpy float16/32/64 scalar (a Python float counts as float64).  No suffix.
    """
    if not isinstance(x, np.floating):
        x = np.float64(x)
    a = abs(float(x))
    if a == 0.0 or 1e-4 <= a < 1e16:
        return np.format_float_positional(x, unique=True, trim="-")
    text = np.format_float_scientific(x, unique=True, trim="-", exp_digits=2)
    limit = float(np.finfo(x.dtype).max)
    if abs(float(text)) > limit:
        # TVM rejects a literal whose decimal value exceeds the dtype's maximum even when
        # it rounds to it (float32's shortest 3.4028235e+38): write more digits instead.
        for precision in range(1, 40):
            text = np.format_float_scientific(
                x, precision=precision, unique=False, trim="-", exp_digits=2
            )
            if abs(float(text)) <= limit and x.dtype.type(text) == x:
                break
    return text


# ----------------------------------------------------------------------------------------
# helpers shared by the printer
# ----------------------------------------------------------------------------------------

_SCALAR_SUFFIX = {
    "int16": "i16",
    "int32": "",
    "int64": "i64",
    "float16": "f16",
    "float32": "f",
    "float64": "f64",
}

_FLOAT32_MAX = float(np.finfo(np.float32).max)

_PLAIN_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")
# Dotted names the lexer reads back as one variable (``layer1.0.conv1.weight``): numeric
# parts only between names, so the name does not end in what reads as a projection.
_DOTTED_NAME = re.compile(r"[A-Za-z]\w*(?:(?:\.\d+)*\.[A-Za-z_]\w*)*\Z", re.ASCII)
_IDENT_CHAR = re.compile(r"[A-Za-z0-9_]")


def _sanitize(name: str, prefix: str = "v") -> str:
    """A name TVM's lexer reads as one identifier (without the ``%`` sigil).

    A name that is empty or does not start with a letter gets ``prefix`` (TVM writes
    ``%v`` for an empty name and ``%v_`` for ``_``); characters other than letters,
    digits and ``_`` become ``_``, except a ``/`` between identifier characters
    (``%gpu_0/conv_w`` is one name in TVM; ``//`` and ``/*`` would open comments).
    """
    if _PLAIN_NAME.match(name) or _DOTTED_NAME.match(name):
        return name
    if not name or not (name[0].isascii() and name[0].isalpha()):
        name = prefix + name
    out = []
    n = len(name)
    for i, ch in enumerate(name):
        if _IDENT_CHAR.match(ch) or (
            ch == "/" and out and out[-1] != "/" and i + 1 < n and _IDENT_CHAR.match(name[i + 1])
        ):
            out.append(ch)
        else:
            out.append("_")
    return "".join(out)


_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\t": "\\t", "\r": "\\r"}


def _quote(s: str) -> str:
    """A string literal (escaped as TVM's printer escapes: ``\\"``, ``\\\\``, ``\\n`` ...)."""
    if s.isprintable() and '"' not in s and "\\" not in s:
        return '"' + s + '"'
    out = []
    for ch in s:
        esc = _ESCAPES.get(ch)
        if esc is not None:
            out.append(esc)
        elif ch.isprintable():
            out.append(ch)
        else:
            # \uXXXX / \UXXXXXXXX as Python writes them: fixed widths, so the lexer
            # reads each back exactly (U+2028 used to come back as the text "\u2028")
            code = ord(ch)
            out.append(f"\\x{code:02x}" if code < 256 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}")
    return '"' + "".join(out) + '"'


def _py_float_text(x: float) -> str:
    """An attribute float: the shortest text that reads back to the same Python float."""
    if np.isnan(x):
        # No spelling exists for NaN (TVM writes the unreadable ``nanf`` too).
        return "nanf"
    if x in (float("inf"), float("-inf")):
        return "inff" if x > 0 else "-inff"
    s = repr(float(x))
    s = s.removesuffix(".0")
    # An `f` literal beyond float32's range is an error in TVM: those need `f64`.
    return s + ("f64" if abs(x) > _FLOAT32_MAX else "f")


def _has_entries(table: dict[str, list]) -> bool:
    return any(v is not None for entries in table.values() for v in entries)


def _write_metadata(table: dict[str, list]) -> str:
    try:
        from .metadata import write_metadata
    except ImportError as exc:  # pragma: no cover - until relay_nb.syntax.metadata lands
        raise RelayError(
            "cannot write the #[metadata] section: relay_nb.syntax.metadata is not available "
            "(print with show_meta_data=False to leave it out)"
        ) from exc
    return write_metadata(table)


# ----------------------------------------------------------------------------------------
# types
# ----------------------------------------------------------------------------------------

_KIND_NAMES = {Kind.ShapeVar: "Shape", Kind.BaseType: "BaseType", Kind.Constraint: "Constraint"}


def _type_param(tv: TypeVar) -> str:
    """A type parameter: ``A``, or with its kind when it is not Type (``s: Shape``, the
    docs' shape-polymorphic signatures; TVM's text has no kinds)."""
    name = _sanitize(tv.name_hint, "t")
    kind = _KIND_NAMES.get(tv.kind)
    return name if kind is None else name + ": " + kind


# ----------------------------------------------------------------------------------------
# expressions
# ----------------------------------------------------------------------------------------

# Print contexts: where the node stands.
NOINLINE = 0  # an operand (argument, field, condition, scrutinee, callee, ...)
TAIL = 1  # the result of a scope: may be inlined, and a let / match needs no parentheses
LETVAL = 2  # the value of a let: may be inlined, but a let / match gets parentheses

_ATOMIC = frozenset((Var, GlobalVar, Constant, Op, Constructor, MetaRef))
_COMMENTED = frozenset((Call, Function, Tuple, TupleGetItem))
_ONE_LINE = frozenset((Call, Tuple, TupleGetItem, RefCreate, RefRead, RefWrite))  # inline docs are str


def _operands(node: Expr, k: type) -> tuple:
    """The operands of a node of class ``k`` in :data:`_ONE_LINE`."""
    if k is Call:
        return (node.op, *node.args)
    if k is Tuple:
        return node.fields
    if k is TupleGetItem:
        return (node.tuple_value,)
    if k is RefCreate:
        return (node.value,)
    if k is RefRead:
        return (node.ref,)
    return (node.ref, node.value)
_KNOWN = (
    Var, GlobalVar, Constant, Op, Constructor, MetaRef, Call, Tuple, TupleGetItem,
    Function, Let, If, Match, RefCreate, RefRead, RefWrite,
)  # fmt: skip
# The node class a (possibly subclassed) expression type prints as.
_CANON = ByClass({k: k for k in _KNOWN}, lambda t: TempExpr if issubclass(t, TempExpr) else t)


def _children(node: Expr, k: type) -> tuple:
    """Sub-expressions that count as uses (binders excluded)."""
    if k is Call:
        return (node.op, *node.args)
    if k is Tuple:
        return node.fields
    if k is TupleGetItem:
        return (node.tuple_value,)
    if k is Let:
        return (node.value, node.body)
    if k is Function:
        return (node.body,)
    if k is If:
        return (node.cond, node.true_branch, node.false_branch)
    if k is Match:
        return (node.data, *(c.rhs for c in node.clauses))
    if k is RefCreate:
        return (node.value,)
    if k is RefRead:
        return (node.ref,)
    if k is RefWrite:
        return (node.ref, node.value)
    return ()


_PLAIN_ATTR = (str, int, bool, type(None))


def _attrs_key(op: Expr, attrs: Attrs) -> tuple | None:
    """A key under which two calls print the same attributes: the callee, the type key
    and every value with its exact type (``1`` and ``1.0`` and ``True`` are equal in
    Python but print apart; a float by its repr: ``-0.0``, ``nan``), in order; None when
    a value is not plain text (a constant, a type, an object: it may print as a meta
    reference, numbered by the printout)."""
    out: list = [op, attrs.type_key]
    fields = attrs._fields if type(attrs) is Attrs else attrs  # its dict: no Mapping views
    for name, value in fields.items():
        t = type(value)
        key = (t, value) if t in _PLAIN_ATTR else _value_key(value)
        if key is None:
            return None
        out.append((name, key))
    return tuple(out)


def _value_key(value: Any) -> Any:
    t = type(value)
    if t in _PLAIN_ATTR:
        return (t, value)
    if t is float:
        return (float, repr(value))
    if t is tuple:
        keys = []
        for v in value:
            tv = type(v)
            key = (tv, v) if tv in _PLAIN_ATTR else _value_key(v)
            if key is None:
                return None
            keys.append(key)
        return (tuple, tuple(keys))
    return None


class _TextPrinter:
    """One print job: one temporary counter, one name table, one meta table."""

    def __init__(self, show_types: bool | None, show_spans: bool) -> None:
        self.show_types = show_types
        self.show_spans = show_spans
        self.memo: dict[Any, Any] = {}  # node -> doc (inline text, or its %N / %name)
        self.uses: dict[Expr, int] = {}  # non-atomic node -> number of uses
        self.streams: list[list] = [[]]  # lines of the scopes being printed
        self.temp = 0
        self.var_names: dict[Var, str] = {}
        self.name_alloc: dict[str, int] = {}
        self.meta: dict[str, list] = {}
        self.meta_index: dict[Any, str] = {}
        self.meta_reserved: dict[str, int] = {}
        self.types = TypeWriter()
        # id(attrs) -> (attrs, op, its k=v texts): a view asks again for each node's
        # attributes after printing (relay_nb.viz.locate), and an importer's calls may
        # share one Attrs; by identity, since equal attrs may print differently (1 vs 1f)
        self.attrs_texts: dict[int, tuple[Attrs, Expr, list[str]]] = {}
        # (op, exact values) -> k=v texts, for attrs of plain values only (no meta
        # reference to number): an importer's unrolled layers repeat a few hundred
        # attribute sets over thousands of calls, each its own Attrs object.
        self.attrs_by_value: dict[tuple, list[str]] = {}

    # -- analysis --------------------------------------------------------------------------
    def count_uses(self, roots: list[Expr]) -> None:
        """Uses of every non-atomic node (TVM's dependency-graph parents), iteratively."""
        uses = self.uses
        stack = []
        for r in roots:
            if type(r) not in _ATOMIC and r not in uses:
                uses[r] = 0
                stack.append(r)
        reserve = self.meta_reserved
        atomic = _ATOMIC
        pop, push = stack.pop, stack.append
        while stack:
            node = pop()
            t = type(node)
            # The two shapes big programs grow in, inlined; the rest generically.
            if t is Call:
                kids = (node.op, *node.args)
                if type(node.attrs) is UnresolvedAttrs:  # its meta index is taken
                    a = node.attrs
                    reserve[a.type_key] = max(reserve.get(a.type_key, 0), a.index + 1)
            elif t is Let:
                kids = (node.value, node.body)
            else:
                kids = _children(node, _CANON[t])
            for c in kids:
                tc = type(c)
                if tc in atomic:
                    if tc is MetaRef and c.index >= reserve.get(c.type_key, 0):
                        reserve[c.type_key] = c.index + 1
                    continue
                n = uses.get(c)
                if n is None:
                    uses[c] = 1
                    push(c)
                else:
                    uses[c] = n + 1

    # -- small pieces ------------------------------------------------------------------
    def _type(self, ty: Any) -> str:
        return self.types(ty)

    def _info(self, node: Any) -> str:
        """The ``/* ty=... */`` comment for ``node`` ('' when there is nothing to say)."""
        ty = None if self.show_types is False else node._checked_type
        span = node.span if self.show_spans else None
        if ty is None and span is None:
            return ""
        text = " /*"
        if ty is not None:
            text += " ty=" + self._type(ty)
        if span is not None:
            text += f" span={span.source_name}:{span.line}:{span.column}"
        return text + " */"

    def _unique(self, name: str) -> str:
        alloc = self.name_alloc
        n = alloc.get(name)
        if n is not None:
            while True:
                n += 1
                cand = f"{name}{n}"
                if cand not in alloc:
                    break
            alloc[name] = n
            name = cand
        alloc[name] = 0
        return name

    def _alloc_var(self, var: Var) -> str:
        """The binding occurrence ``%name: Type /* ty=... */``; names the variable."""
        name = self.var_names.get(var)
        if name is None:
            hint = var.name_hint
            name = self._unique(hint if _PLAIN_NAME.match(hint) else _sanitize(hint))
            self.var_names[var] = name
            self.memo[var] = "%" + name
        doc = "%" + name
        if var.type_annotation is not None:
            doc += ": " + self._type(var.type_annotation)
        return doc + self._info(var)

    def _meta_ref(self, type_key: str, obj: Any) -> str:
        ref = self.meta_index.get(obj)
        if ref is None:
            entries = self.meta.get(type_key)
            if entries is None:
                # Indices taken by meta references already in the program stay holes.
                entries = self.meta[type_key] = [None] * self.meta_reserved.get(type_key, 0)
            ref = f"meta[{type_key}][{len(entries)}]"
            entries.append(obj)
            self.meta_index[obj] = ref
        return ref

    def _constant(self, c: Constant) -> str:
        data = c.data
        ty = c._checked_type
        # An unsuffixed float literal (`2.5`) whose dtype type inference set from its
        # context (float16 here): `2.5f` would read back as float32, an explicit dtype
        # the context rejects, and TVM has no suffix-less floats: write it at that dtype
        # (`2.5f16`).  An integer literal stays bare (`3`): it reads back as a literal.
        if (
            c.is_literal
            and data.dtype.kind == "f"
            and type(ty) is TensorType
            and ty.shape == ()
            and isinstance(ty.dtype, str)
            and ty.dtype != data.dtype.name
            and ty.dtype in _SCALAR_SUFFIX
        ):
            data = np.asarray(data, dtype=ty.dtype)
        text = scalar_to_text(data)
        if text is None:
            text = self._meta_ref("relay.Constant", c)
        return text + self._info(c)

    def _leaf(self, node: Expr) -> str | None:
        """The doc of an atomic node (memoized), or None for other nodes."""
        t = type(node)
        if t not in _ATOMIC:
            t = _CANON[t]
            if t not in _ATOMIC:
                return None
        if t is Var:
            # Reached before any binding: a free variable, declared where first reached.
            doc = self._alloc_var(node)
            self.streams[-1].append("free_var " + doc + ";")
            return self.memo[node]
        if t is Constant:
            doc = self._constant(node)
        elif t is GlobalVar:
            doc = "@" + node.name_hint
        elif t is Op:
            doc = node.name
        elif t is Constructor:
            doc = node.name_hint
        else:  # MetaRef
            doc = f"meta[{node.type_key}][{node.index}]"
            ty = node._checked_type if self.show_types is not False else None
            if ty is None:
                ty = node.type_annotation
            if ty is not None:
                doc += " /* ty=" + self._type(ty) + " */"
        self.memo[node] = doc
        return doc

    def _attr_value(self, v: Any) -> str:
        if v is None:
            return "None"
        if isinstance(v, (bool, np.bool_)):
            return "True" if v else "False"
        if isinstance(v, (int, np.integer)):
            return str(int(v))
        if isinstance(v, (float, np.floating)):
            return _py_float_text(float(v))
        if isinstance(v, str):
            return _quote(v)
        if isinstance(v, (tuple, list)):
            return "[" + ", ".join(self._attr_value(x) for x in v) + "]"
        if isinstance(v, Constant):
            return self._constant(v)
        if isinstance(v, GlobalVar):
            return "@" + v.name_hint
        if isinstance(v, MetaRef):
            return f"meta[{v.type_key}][{v.index}]"
        if isinstance(v, Expr):
            return self._meta_ref("relay." + type(v).__name__, v)
        if isinstance(v, Type):
            return self._type(v)
        if isinstance(v, Attrs):
            return self._meta_ref(v.type_key, v)
        if isinstance(v, np.ndarray):
            return self._constant(Constant(v))
        type_key = getattr(v, "type_key", None)
        if isinstance(type_key, str):  # a MetaObject read from a #[metadata] section
            return self._meta_ref(type_key, v)
        return _quote(str(v))

    def _call_attrs(self, op: Expr, attrs: Attrs) -> list[str]:
        if isinstance(attrs, UnresolvedAttrs):  # nn.batch_matmul(%a, %b, meta[...][0])
            return [attrs.ref]
        hit = self.attrs_texts.get(id(attrs))
        if hit is not None and hit[0] is attrs and hit[1] is op:
            return hit[2]
        key = _attrs_key(op, attrs)
        texts = self.attrs_by_value.get(key) if key is not None else None
        if texts is None:
            texts = self._attrs_texts(op, attrs)
            if key is not None:
                self.attrs_by_value[key] = texts
        self.attrs_texts[id(attrs)] = (attrs, op, texts)
        return texts

    def _attrs_texts(self, op: Expr, attrs: Attrs) -> list[str]:
        if isinstance(op, Op):
            from ..op.registry import non_default_attrs

            pairs = non_default_attrs(op, attrs)
        else:
            # A non-operator callee takes attributes only with their type key (TVM §9).
            pairs = list(attrs.items())
            if pairs:
                pairs.append(("attrs_type_key", attrs.type_key))
        return [k + "=" + self._attr_value(v) for k, v in pairs]

    def _pattern(self, pattern: Pattern) -> str:
        """A match pattern; binds its variables left to right (iterative)."""
        out: list[str] = []
        stack: list[Any] = [pattern]
        while stack:
            p = stack.pop()
            if type(p) is str:
                out.append(p)
            elif isinstance(p, PatternWildcard):
                out.append("_")
            elif isinstance(p, PatternVar):
                out.append(self._alloc_var(p.var))
            elif isinstance(p, PatternConstructor):
                if p.patterns:
                    stack.append(")")
                    self._push_seq(stack, p.patterns)
                    stack.append(p.constructor.name_hint + "(")
                else:
                    out.append(p.constructor.name_hint)
            elif isinstance(p, PatternTuple):
                # (p) is already a one-element tuple pattern in the text format (§6).
                stack.append(")")
                self._push_seq(stack, p.patterns)
                stack.append("(")
            else:
                raise RelayError(f"cannot print pattern {p!r}")
        return "".join(out)

    @staticmethod
    def _push_seq(stack: list, items: tuple) -> None:
        for i in range(len(items) - 1, -1, -1):
            stack.append(items[i])
            if i:
                stack.append(", ")

    def _func_head(self, fn: Function, prefix: str) -> str:
        head = prefix
        if fn.type_params:
            head += "[" + ", ".join(_type_param(tp) for tp in fn.type_params) + "]"
        params = [self._alloc_var(p) for p in fn.params]
        items = list(fn.attrs.items())
        constraints = ()
        for i, (k, v) in enumerate(items):
            # The docs' `where` clauses, kept by the parser as this attribute.
            if k == "type_constraints" and v and all(isinstance(r, TypeRelation) for r in v):
                constraints = v
                del items[i]
                break
        if items and "." in items[0][0]:
            # TVM finds attributes by `identifier =` lookahead, so the first key must not
            # be dotted (relay.reshape_only=1 only after another one, §9).
            plain = next((i for i, (k, _) in enumerate(items) if "." not in k), None)
            if plain is not None:
                items.insert(0, items.pop(plain))
        params.extend(k + "=" + self._attr_value(v) for k, v in items)
        head += "(" + ", ".join(params) + ") "
        if fn.ret_type is not None:
            head += "-> " + self._type(fn.ret_type) + " "
        if constraints:
            head += "where " + ", ".join(self._relation(r) for r in constraints) + " "
        return head + "{"

    def _relation(self, rel: TypeRelation) -> str:
        """A `where` constraint: bare (``Broadcast``: over the parameter and result
        types) or with its types (``Broadcast(A, B, C)``)."""
        if not rel.args:
            func = rel.func
            return getattr(func, "name", None) or getattr(func, "__name__", None) or str(func)
        return self._type(rel)

    def _typedef(self, td: TypeData) -> list:
        head = "type " + td.header.name_hint
        if td.type_vars:
            head += "[" + ", ".join(_type_param(tv) for tv in td.type_vars) + "]"
        ctors = []
        for c in td.constructors:
            text = c.name_hint
            if c.inputs:
                text += "(" + ", ".join(self._type(t) for t in c.inputs) + ")"
            ctors.append(text + ",")
        return [head + " {", Block(ctors), "}"]

    def _extern_typedef(self, td: TypeData) -> str:
        head = "extern type " + td.header.name_hint
        if td.type_vars:
            head += "[" + ", ".join(_type_param(tv) for tv in td.type_vars) + "]"
        return head

    # -- the driver --------------------------------------------------------------------
    def _drive(self, gen: Iterator) -> Any:
        """Run a printing generator to completion with an explicit stack.

        A generator yields ``(node, context)`` when it needs a sub-expression's doc and
        is resumed with it; memoized and atomic nodes are answered at once, any other
        node gets a generator of its own on the stack.  When a node's generator returns,
        :meth:`_finish` decides between inlining it and hoisting it as ``%N = ...;``.
        """
        memo = self.memo
        stack: list[tuple] = [(gen, None, False)]
        value: Any = None
        while stack:
            top = stack[-1]
            try:
                child, ctx = top[0].send(value)
            except StopIteration as stop:
                stack.pop()
                node = top[1]
                value = stop.value if node is None else self._finish(node, top[2], stop.value)
                continue
            value = memo.get(child)
            if value is None:
                if type(child) is Call:
                    # Fast path: a call whose operands are all printed needs no generator.
                    doc = self._call_text(child)
                    if doc is not None:
                        inline = ctx != NOINLINE and self.uses.get(child, 0) <= 1
                        value = self._finish(child, inline, doc)
                        continue
                    stack.append(self._start(child, ctx))
                elif type(child) in _ATOMIC:
                    value = self._leaf(child)
                else:
                    value = self._leaf(child) if _CANON[type(child)] in _ATOMIC else None
                    if value is None:
                        stack.append(self._start(child, ctx))
        return value

    def _call_text(self, node: Call) -> str | None:
        """The text of a call whose operands are all printed already, else None."""
        memo = self.memo
        args = []
        for a in node.args:
            d = memo.get(a)
            if d is None:
                return None
            args.append(d)
        op = node.op
        d = memo.get(op)
        if d is None:
            return None
        if node.attrs or type(node.attrs) is UnresolvedAttrs:
            args.extend(self._call_attrs(op, node.attrs))
        if type(op) is Constructor and not op.inputs and not node.args and not node.type_args:
            return d
        if node.type_args:
            d += self._type_args(node)
        return d + "(" + ", ".join(args) + ")"

    def _type_args(self, node: Call) -> str:
        """``<T1, T2>`` of an explicitly instantiated call (``@id<int32>(1)``); the callee
        is always a name or a graph variable, so the parser reads them back."""
        return "<" + ", ".join(self._type(t) for t in node.type_args) + ">"

    def _start(self, node: Expr, ctx: int) -> tuple:
        k = _CANON[type(node)]
        inline = ctx != NOINLINE and self.uses.get(node, 0) <= 1
        if k is Call:
            gen = self._g_call(node)
        elif k is Let:
            gen = self._g_let(node) if inline and ctx == TAIL else self._g_let_wrapped(node)
        elif k is Tuple:
            gen = self._g_tuple(node)
        elif k is TupleGetItem:
            gen = self._g_getitem(node)
        elif k is Function:
            gen = self._g_function(node, "fn ")
        elif k is If:
            gen = self._g_if(node)
        elif k is Match:
            gen = self._g_match(node, paren=not (inline and ctx == TAIL))
        elif k is RefCreate:
            gen = self._g_ref(node, "ref(", (node.value,))
        elif k is RefRead:
            gen = self._g_ref(node, "ref_read(", (node.ref,))
        elif k is RefWrite:
            gen = self._g_ref(node, "ref_write(", (node.ref, node.value))
        elif k is TempExpr:
            gen = self._g_temp(node, ctx)
            inline = True
        else:
            raise RelayError(f"cannot print a {type(node).__name__}: not a Relay expression")
        return (gen, node, inline)

    def _finish(self, node: Expr, inline: bool, doc: Any) -> Any:
        if (self.show_types is not False or self.show_spans) and _CANON[type(node)] in _COMMENTED:
            info = self._info(node)
            if info:
                doc = doc + info if type(doc) is str else [doc, info]
        if inline:
            self.memo[node] = doc
            return doc
        temp = "%" + str(self.temp)
        self.temp += 1
        self.memo[node] = temp
        if type(doc) is str:
            self.streams[-1].append(temp + " = " + doc + ";")
        else:
            self.streams[-1].append([temp + " = ", doc, ";"])
        return temp

    # -- one generator per kind of node ------------------------------------------------
    def _g_root(self, node: Expr):
        return (yield (node, TAIL))

    def _g_scope(self, expr: Expr):
        """A new scope: its hoisted lines, then its result; returns a Block."""
        lines: list = []
        self.streams.append(lines)
        doc = self.memo.get(expr)
        if doc is None:
            doc = yield (expr, TAIL)
        self.streams.pop()
        lines.append(doc)
        return Block(lines)

    def _g_call(self, node: Call):
        memo = self.memo
        # Arguments first, so they are hoisted before the callee (TVM's order).
        args = []
        for a in node.args:
            d = memo.get(a)
            if d is None:
                d = yield (a, NOINLINE)
            args.append(d)
        op = node.op
        if node.attrs or type(node.attrs) is UnresolvedAttrs:
            args.extend(self._call_attrs(op, node.attrs))
        d = memo.get(op)
        if d is None:
            d = yield (op, NOINLINE)
        if type(op) is Constructor and not op.inputs and not node.args and not node.type_args:
            return d  # a 0-ary constructor call is written bare: Nil
        if node.type_args:
            d += self._type_args(node)
        return d + "(" + ", ".join(args) + ")"

    def _g_tuple(self, node: Tuple):
        memo = self.memo
        fields = []
        for f in node.fields:
            d = memo.get(f)
            if d is None:
                d = yield (f, NOINLINE)
            fields.append(d)
        if len(fields) == 1:
            return "(" + fields[0] + ",)"
        return "(" + ", ".join(fields) + ")"

    def _g_getitem(self, node: TupleGetItem):
        d = self.memo.get(node.tuple_value)
        if d is None:
            d = yield (node.tuple_value, NOINLINE)
        return d + "." + str(node.index)

    def _g_ref(self, node: Expr, head: str, operands: tuple):
        memo = self.memo
        docs = []
        for o in operands:
            d = memo.get(o)
            if d is None:
                d = yield (o, NOINLINE)
            docs.append(d)
        return head + ", ".join(docs) + ")"

    def _g_function(self, fn: Function, prefix: str):
        head = self._func_head(fn, prefix)
        body = yield from self._g_scope(fn.body)
        return [head, body, "}"]

    def _g_if(self, node: If):
        """``if (c) {..} else if (c2) {..} else {..}``: an ``if`` that is the else branch
        continues the chain at the same indentation, as it was written, so a chain of n
        branches prints in O(n) bytes, not O(n^2)."""
        cond = self.memo.get(node.cond)
        if cond is None:
            cond = yield (node.cond, NOINLINE)
        parts: list = ["if (" + cond + ") {"]
        while True:
            parts.append((yield from self._g_scope(node.true_branch)))
            other = node.false_branch
            if not self._else_if(other):
                parts += ["} else {", (yield from self._g_scope(other)), "}"]
                return parts
            cond = yield (other.cond, LETVAL)  # inline: else if (equal(%x, 1))
            parts.append("} else if (" + cond + ") {")
            node = other

    def _else_if(self, e: Expr) -> bool:
        """Whether else branch ``e`` can be written ``else if (cond) {``: an ``if`` used only
        there whose condition prints inline with nothing hoisted before it (an ``else if``
        has no room for ``%0 = ...;`` lines), i.e. an operator-like node of printed
        operands."""
        memo, uses = self.memo, self.uses
        if _CANON[type(e)] is not If or e in memo or uses.get(e, 0) > 1:
            return False
        c = e.cond
        k = _CANON[type(c)]
        if k in _ATOMIC or c in memo:
            return True
        if k not in _ONE_LINE or uses.get(c, 0) > 1:
            return False
        return all(
            type(o) in _ATOMIC or _CANON[type(o)] in _ATOMIC or o in memo for o in _operands(c, k)
        )

    def _g_let(self, let: Let):
        """A let chain written into the current scope; returns the doc of its body."""
        memo, uses = self.memo, self.uses
        stream = self.streams[-1]
        node = let
        while True:
            var = self._alloc_var(node.var)  # before the value: it may recurse
            value = node.value
            d = memo.get(value)
            if d is None and type(value) is Call:
                # What the driver does for a call of printed operands, without the round
                # trip through it (an A-normal-form program is mostly such lets).
                d = self._call_text(value)
                if d is not None:
                    d = self._finish(value, uses.get(value, 0) <= 1, d)
            if d is None:
                d = yield (value, LETVAL)
            if type(d) is str:
                stream.append("let " + var + " = " + d + ";")
            else:
                stream.append(["let " + var + " = ", d, ";"])
            body = node.body
            if type(body) is Let and body not in memo and uses.get(body, 0) <= 1:
                node = body
                continue
            break
        d = memo.get(body)
        if d is None:
            d = yield (body, TAIL)
        return d

    def _g_let_wrapped(self, let: Let):
        """A let chain in parentheses, for a hoisted let or a let used as a let value."""
        lines: list = []
        self.streams.append(lines)
        d = yield from self._g_let(let)
        self.streams.pop()
        lines.append(d)
        return ["(", Block(lines), ")"]

    def _g_match(self, m: Match, paren: bool):
        data = self.memo.get(m.data)
        if data is None:
            data = yield (m.data, NOINLINE)
        arms = []
        for clause in m.clauses:
            pattern = self._pattern(clause.lhs)
            body = yield from self._g_scope(clause.rhs)
            arms.append([pattern + " => {", body, "},"])
        head = ("match (" if m.complete else "match? (") + data + ") {"
        if paren:
            # TVM reads a binding's value at infix level: a bare match is rejected there.
            return ["(" + head, Block(arms), "})"]
        return [head, Block(arms), "}"]

    def _g_temp(self, node: TempExpr, ctx: int):
        return (yield (node.realize(), ctx))

    # -- whole programs ----------------------------------------------------------------
    def print_expr(self, expr: Expr) -> str:
        self.count_uses([expr])
        self.streams = [[]]
        doc = self._drive(self._g_root(expr))
        lines = self.streams[0]
        lines.append(doc)
        return render(lines)

    def print_module(self, mod: IRModule) -> str:
        defs = sorted(mod.functions.items(), key=lambda kv: kv[0].name_hint)
        self.count_uses([fn for _, fn in defs])
        items: list[list] = []
        externs = []
        for td in sorted(mod.type_definitions.values(), key=lambda td: td.header.name_hint):
            if td.constructors:
                items.append([self._typedef(td)])
            else:
                externs.append(td)
        for gv, fn in defs:
            self.streams = [[]]
            doc = self._drive(self._g_function(fn, "def @" + gv.name_hint))
            lines = self.streams[0]
            lines.append(doc)
            items.append(lines)
        # TVM stops reading definitions after an `extern type`: those go last.
        for td in externs:
            items.append([self._extern_typedef(td)])
        lines = []
        for i, item in enumerate(items):
            if i:
                lines.append("")
            lines.extend(item)
        return render(lines) + "\n" if lines else ""


def _print(obj: Any, form: str, show_types: bool | None, show_spans: bool) -> tuple[str, dict]:
    """(body text, meta table) of one print job."""
    with paused_gc():
        return _print_job(obj, form, show_types, show_spans)


def _print_job(obj: Any, form: str, show_types: bool | None, show_spans: bool) -> tuple[str, dict]:
    if form not in ("graph", "anf"):
        raise RelayError(f'unknown print form {form!r}: use "graph" or "anf"')
    if form == "anf":
        from ..transform.to_a_normal_form import to_a_normal_form

        if isinstance(obj, IRModule):
            obj = obj.with_functions({gv: to_a_normal_form(fn) for gv, fn in obj.functions.items()})
        elif isinstance(obj, Expr):
            obj = to_a_normal_form(obj)
    printer = _TextPrinter(show_types, show_spans)
    if isinstance(obj, IRModule):
        text = printer.print_module(obj)
    elif isinstance(obj, Expr):
        text = printer.print_expr(obj)
    elif isinstance(obj, TypeData):
        lines = [printer._typedef(obj)] if obj.constructors else [printer._extern_typedef(obj)]
        text = render(lines)
    elif isinstance(obj, Type):
        text = printer._type(obj)
    else:
        raise RelayError(f"cannot print a {type(obj).__name__} as Relay text")
    return text, printer.meta


__all__ = [
    "VERSION_HEADER",
    "astext",
    "float_to_text",
    "paused_gc",
    "pretty_print",
    "scalar_to_text",
    "type_to_text",
]
