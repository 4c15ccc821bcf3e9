"""Structural equality and hashing of Relay IR, as TVM's ``tvm.ir.structural_equal``.

Two programs are structurally equal when they are the same tree up to the renaming of
bound variables:

* variables (``Var``, ``TypeVar``, pattern variables) are matched at their *binding
  sites* (function parameters and type parameters, ``let`` variables, pattern variables,
  ADT type parameters) and must then be used at the same places;
* a free variable equals only itself, unless ``map_free_vars=True``: then free variables
  are paired on first occurrence, consistently (one-to-one);
* ``GlobalVar`` / ``GlobalTypeVar`` compare by name, ``Op`` by name, a ``Constructor`` by
  its name and its ADT's name, a ``Constant`` by dtype, shape and bytes (so NaN equals a
  bitwise identical NaN), ``Attrs`` by :meth:`Attrs.__eq__`;
* spans, checked types, name hints and ``Constant.is_literal`` are ignored; variable type
  annotations are compared.

Expressions are compared as trees (``Tuple(f, f)`` equals ``Tuple(g, h)`` when ``f``, ``g``
and ``h`` are equal functions), but every compared ``(lhs, rhs)`` pair is remembered, so
comparing a DAG with itself (or with a copy that has the same sharing) takes linear time.

Both :func:`structural_equal` and :func:`structural_hash` run on explicit stacks: programs
of any depth (100,000 nested lets, 100,000-node dataflow chains) work at Python's default
recursion limit.

``structural_hash`` is consistent with ``structural_equal``: equal programs have equal
hashes.  A use of a bound variable hashes by its binding position (parameter *i*, let
variable, pattern variable *i*), a free variable by identity (or, with
``map_free_vars=True``, by order of first occurrence).  The hash is linear on DAGs (each
node is hashed once) and depends on nothing but the program (and, for free variables
without ``map_free_vars``, their identity).

:func:`assert_structural_equal` and :func:`first_difference` say *where* two programs first
differ, as a path such as ``@main.body.args[1].op`` with a short text of both sides.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional

import numpy as np

from .adt import TypeData
from .attrs import Attrs
from .expr import (
    Call,
    Clause,
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
from .functor import pattern_vars
from .module import IRModule
from .ty import (
    FuncType,
    GlobalTypeVar,
    IncompleteType,
    RefType,
    TensorType,
    TupleType,
    Type,
    TypeCall,
    TypeRelation,
    TypeVar,
)

# Roles of a child in a node's field list.
_NODE = 0  # an ordinary sub-term
_DEFVAR = 1  # a Var bound at this node (parameter, let variable, pattern variable)
_DEFTV = 2  # a TypeVar bound at this node (type parameter)

# --- field tables -----------------------------------------------------------------------
#
# Each structural node kind is described by one function returning
# ``(tag, local, children)``: ``local`` is a tuple of ``(field name, plain value)`` pairs
# compared with ``==`` and hashed, ``children`` a list of ``(path label, child, role)`` in
# the order both the comparison and the hash walk them (binders before their uses).


def _attrs_key(attrs: Optional[Attrs]) -> Optional[Attrs]:
    # A call without attributes and one with an empty attribute map mean the same thing.
    if attrs is None or len(attrs) == 0:
        return None
    return attrs


def _seq(label: str, items: tuple, role: int = _NODE) -> list:
    # Path labels stay (field, index) pairs until a mismatch needs them as text.
    return [((label, i), item, role) for i, item in enumerate(items)]


def _f_global_var(e: GlobalVar):
    return "GlobalVar", (("name", e.name_hint),), ()


def _f_constant(e: Constant):
    data = e.data
    return (
        "Constant",
        (("dtype", data.dtype.str), ("shape", data.shape), ("data", data.tobytes())),
        (),
    )


def _f_meta_ref(e: MetaRef):
    return (
        "MetaRef",
        (("type_key", e.type_key), ("index", e.index)),
        ((".type_annotation", e.type_annotation, _NODE),),
    )


def _f_tuple(e: Tuple):
    return "Tuple", (("size", len(e.fields)),), _seq("fields", e.fields)


def _f_tuple_getitem(e: TupleGetItem):
    return "TupleGetItem", (("index", e.index),), ((".tuple_value", e.tuple_value, _NODE),)


def _f_op(e: Op):
    return "Op", (("name", e.name),), ()


def _f_call(e: Call):
    local = (
        ("number of arguments", len(e.args)),
        ("attrs", _attrs_key(e.attrs)),
        ("number of type arguments", len(e.type_args)),
    )
    kids = [(".op", e.op, _NODE)]
    kids += [(("args", i), a, _NODE) for i, a in enumerate(e.args)]
    if e.type_args:
        kids += _seq("type_args", e.type_args)
    return "Call", local, kids


def _f_function(e: Function):
    local = (
        ("number of type parameters", len(e.type_params)),
        ("number of parameters", len(e.params)),
        ("attrs", e.attrs),
    )
    kids = _seq("type_params", e.type_params, _DEFTV)
    kids += _seq("params", e.params, _DEFVAR)
    kids.append((".ret_type", e.ret_type, _NODE))
    kids.append((".body", e.body, _NODE))
    return "Function", local, kids


def _f_let(e: Let):
    # The variable is in scope in its own value (recursive let), so it is bound first.
    return "Let", (), ((".var", e.var, _DEFVAR), (".value", e.value, _NODE), (".body", e.body, _NODE))


def _f_if(e: If):
    return (
        "If",
        (),
        (
            (".cond", e.cond, _NODE),
            (".true_branch", e.true_branch, _NODE),
            (".false_branch", e.false_branch, _NODE),
        ),
    )


def _f_constructor(e: Constructor):
    return "Constructor", (("name", e.name_hint), ("ADT", _name_of(e.belong_to))), ()


def _f_match(e: Match):
    local = (("complete", bool(e.complete)), ("number of clauses", len(e.clauses)))
    return "Match", local, [(".data", e.data, _NODE)] + _seq("clauses", e.clauses)


def _f_clause(c: Clause):
    return "Clause", (), ((".lhs", c.lhs, _NODE), (".rhs", c.rhs, _NODE))


def _f_pwild(p: PatternWildcard):
    return "PatternWildcard", (), ()


def _f_pvar(p: PatternVar):
    return "PatternVar", (), ((".var", p.var, _DEFVAR),)


def _f_pctor(p: PatternConstructor):
    kids = [(".constructor", p.constructor, _NODE)] + _seq("patterns", p.patterns)
    return "PatternConstructor", (("number of sub-patterns", len(p.patterns)),), kids


def _f_ptuple(p: PatternTuple):
    return "PatternTuple", (("number of sub-patterns", len(p.patterns)),), _seq("patterns", p.patterns)


def _f_ref_create(e: RefCreate):
    return "RefCreate", (), ((".value", e.value, _NODE),)


def _f_ref_read(e: RefRead):
    return "RefRead", (), ((".ref", e.ref, _NODE),)


def _f_ref_write(e: RefWrite):
    return "RefWrite", (), ((".ref", e.ref, _NODE), (".value", e.value, _NODE))


def _f_temp(e: TempExpr):
    # Pass-internal nodes have no structure we know of: equal only to themselves.
    return type(e).__name__, (("node", e),), ()


def _f_global_type_var(t: GlobalTypeVar):
    return "GlobalTypeVar", (("name", t.name_hint),), ()


def _f_tensor_type(t: TensorType):
    shape = t.shape
    if isinstance(shape, tuple):
        kids = _seq("shape", shape)
        local = (("rank", len(shape)),)
    else:  # a shape variable (Tensor[s, bt])
        kids = [(".shape", shape, _NODE)]
        local = (("rank", None),)
    kids.append((".dtype", t.dtype, _NODE))
    return "TensorType", local, kids


def _f_tuple_type(t: TupleType):
    return "TupleType", (("size", len(t.fields)),), _seq("fields", t.fields)


def _f_func_type(t: FuncType):
    local = (
        ("number of type parameters", len(t.type_params)),
        ("number of arguments", len(t.arg_types)),
        ("number of type constraints", len(t.type_constraints)),
    )
    kids = _seq("type_params", t.type_params, _DEFTV)
    kids += _seq("arg_types", t.arg_types)
    kids.append((".ret_type", t.ret_type, _NODE))
    kids += _seq("type_constraints", t.type_constraints)
    return "FuncType", local, kids


def _f_ref_type(t: RefType):
    return "RefType", (), ((".value", t.value, _NODE),)


def _f_type_call(t: TypeCall):
    kids = [(".func", t.func, _NODE)] + _seq("args", t.args)
    return "TypeCall", (("number of arguments", len(t.args)),), kids


def _f_type_relation(t: TypeRelation):
    local = (
        ("relation", t.func),
        ("num_inputs", t.num_inputs),
        ("attrs", _attrs_key(t.attrs) if isinstance(t.attrs, Attrs) or t.attrs is None else t.attrs),
    )
    return "TypeRelation", local, _seq("args", t.args)


@dataclass(frozen=True, slots=True, eq=False)
class _CtorDef:
    """A constructor seen from its type definition (there its field types matter)."""

    ctor: Constructor


def _f_ctor_def(c: _CtorDef):
    ctor = c.ctor
    local = (("name", ctor.name_hint), ("tag", ctor.tag), ("number of fields", len(ctor.inputs)))
    return "ConstructorDef", local, _seq("inputs", ctor.inputs)


def _f_type_data(t: TypeData):
    local = (
        ("name", t.header.name_hint),
        ("number of type parameters", len(t.type_vars)),
        ("number of constructors", len(t.constructors)),
    )
    kids = _seq("type_vars", t.type_vars, _DEFTV)
    kids += [(("constructors", i), _CtorDef(c), _NODE) for i, c in enumerate(t.constructors)]
    return "TypeData", local, kids


def _f_module(m: IRModule):
    types = sorted(((gtv.name_hint, t) for gtv, t in m.type_definitions.items()), key=_first)
    funcs = sorted(((gv.name_hint, f) for gv, f in m.functions.items()), key=_first)
    local = (
        ("type definitions", tuple(n for n, _ in types)),
        ("global functions", tuple("@" + n for n, _ in funcs)),
    )
    kids = [(f"type {n}", tdef, _NODE) for n, tdef in types]
    kids += [(f"@{n}", f, _NODE) for n, f in funcs]
    return "IRModule", local, kids


def _first(pair: tuple) -> Any:
    return pair[0]


def _f_sequence(s):
    return "Sequence", (("length", len(s)),), [((None, i), x, _NODE) for i, x in enumerate(s)]


def _canonical_key(k: Any) -> Any:
    if isinstance(k, GlobalVar):
        return "@" + k.name_hint
    if isinstance(k, GlobalTypeVar):
        return k.name_hint
    return k


def _f_dict(d: dict):
    entries = [(_canonical_key(k), v) for k, v in d.items()]
    try:
        entries.sort(key=lambda kv: (type(kv[0]).__name__, str(kv[0])))
    except Exception:  # pragma: no cover - exotic keys: keep insertion order
        pass
    return (
        "Map",
        (("keys", tuple(k for k, _ in entries)),),
        [((None, k), v, _NODE) for k, v in entries],
    )


def _name_of(x: Any) -> Any:
    return getattr(x, "name_hint", x)


_FIELDS: dict[type, Callable] = {
    GlobalVar: _f_global_var,
    Constant: _f_constant,
    MetaRef: _f_meta_ref,
    Tuple: _f_tuple,
    TupleGetItem: _f_tuple_getitem,
    Op: _f_op,
    Call: _f_call,
    Function: _f_function,
    Let: _f_let,
    If: _f_if,
    Constructor: _f_constructor,
    Match: _f_match,
    Clause: _f_clause,
    PatternWildcard: _f_pwild,
    PatternVar: _f_pvar,
    PatternConstructor: _f_pctor,
    PatternTuple: _f_ptuple,
    RefCreate: _f_ref_create,
    RefRead: _f_ref_read,
    RefWrite: _f_ref_write,
    GlobalTypeVar: _f_global_type_var,
    TensorType: _f_tensor_type,
    TupleType: _f_tuple_type,
    FuncType: _f_func_type,
    RefType: _f_ref_type,
    TypeCall: _f_type_call,
    TypeRelation: _f_type_relation,
    TypeData: _f_type_data,
    _CtorDef: _f_ctor_def,
    IRModule: _f_module,
    list: _f_sequence,
    tuple: _f_sequence,
    dict: _f_dict,
}

# Special leaf kinds.
_VAR = "var"
_TYPEVAR = "typevar"
_INCOMPLETE = "incomplete"
_ARRAY = "array"
_LEAF = "leaf"  # compared with == (primitives, Attrs, AnyDim, unknown objects)

# Node kinds whose (lhs, rhs) pairs are memoized (and whose hashes are memoized).
_MEMO_TYPES = frozenset(
    t for t in _FIELDS if t not in (_CtorDef, list, tuple, dict, IRModule)
)

# Leaves that contain no variables: identical objects are equal, no need to look inside.
_CLOSED_LEAVES = frozenset({Op, GlobalVar, Constant, Constructor, GlobalTypeVar, str, int, type(None)})

_KIND_CACHE: dict[type, Any] = {Var: _VAR, TypeVar: _TYPEVAR, IncompleteType: _INCOMPLETE}


def _kind(x: Any) -> Any:
    """The field function of ``x``'s node kind, or one of the special leaf kinds."""
    t = type(x)
    k = _KIND_CACHE.get(t)
    if k is not None:
        return k
    k = _FIELDS.get(t)
    if k is None:
        # Subclasses: look up the nearest registered base class.
        for base in t.__mro__[1:]:
            if base in _KIND_CACHE:
                k = _KIND_CACHE[base]
                break
            if base in _FIELDS and base not in (list, tuple, dict):
                k = _FIELDS[base]
                break
        else:
            if issubclass(t, TempExpr):
                k = _f_temp
            elif issubclass(t, np.ndarray):
                k = _ARRAY
            elif issubclass(t, (list, tuple)) and not hasattr(t, "_fields"):
                k = _f_sequence
            elif issubclass(t, dict):
                k = _f_dict
            else:
                k = _LEAF
    _KIND_CACHE[t] = k
    return k


def _leaf_equal(a: Any, b: Any) -> bool:
    if a is b:
        return True
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, float) and isinstance(b, float) and a != a and b != b:
        return True
    try:
        return bool(a == b)
    except Exception:
        return False


def _leaf_hash(a: Any) -> int:
    if isinstance(a, float):
        if a != a:
            return hash("nan")
        return hash(a)
    if isinstance(a, bool):
        return hash(("bool", a))
    try:
        return hash(a)
    except TypeError:
        return hash((type(a).__name__, id(a)))


def _array_key(a: np.ndarray) -> tuple:
    return (str(a.dtype), tuple(a.shape), np.ascontiguousarray(a).tobytes())


# --- short descriptions for error messages ---------------------------------------------


def _brief(x: Any, depth: int = 1) -> str:
    """A one-line description of a node: its own head and its direct children, abridged.

    Never walks deeper than ``depth`` levels, so it is safe on huge programs.
    """
    text = _brief_rec(x, depth)
    return text if len(text) <= 100 else text[:97] + "..."


def _atom(x: Any) -> Optional[str]:
    if isinstance(x, Var):
        return "%" + (x.name_hint or "_")
    if isinstance(x, GlobalVar):
        return "@" + x.name_hint
    if isinstance(x, Op):
        return x.name
    if isinstance(x, Constructor):
        return x.name_hint
    if isinstance(x, Constant):
        d = x.data
        if d.ndim == 0:
            return f"{d.item()!r}:{d.dtype}"
        if d.size <= 8:
            return f"Constant({d.tolist()!r}, {d.dtype})"
        return f"Constant(<{d.shape} {d.dtype}>)"
    if isinstance(x, (TypeVar, GlobalTypeVar)):
        return x.name_hint
    if isinstance(x, IncompleteType):
        return "_"
    if x is None:
        return "None"
    return None


def _brief_rec(x: Any, depth: int) -> str:
    atom = _atom(x)
    if atom is not None:
        return atom
    if depth < 0:
        return "..."
    sub = lambda y: _brief_rec(y, depth - 1)  # noqa: E731
    if isinstance(x, Call):
        args = ", ".join(sub(a) for a in x.args[:6]) + (", ..." if len(x.args) > 6 else "")
        attrs = ""
        if x.attrs:
            attrs = ", " + ", ".join(f"{k}={v!r}" for k, v in list(x.attrs.items())[:4])
        return f"{sub(x.op)}({args}{attrs})"
    if isinstance(x, Tuple):
        return "(" + ", ".join(sub(f) for f in x.fields[:6]) + (", ...)" if len(x.fields) > 6 else ")")
    if isinstance(x, TupleGetItem):
        return f"{sub(x.tuple_value)}.{x.index}"
    if isinstance(x, Function):
        params = ", ".join(_param_text(p) for p in x.params[:6])
        return f"fn ({params}) {{ {sub(x.body)} }}"
    if isinstance(x, Let):
        return f"let {_param_text(x.var)} = {sub(x.value)}; {sub(x.body)}"
    if isinstance(x, If):
        return f"if ({sub(x.cond)}) {{ {sub(x.true_branch)} }} else {{ {sub(x.false_branch)} }}"
    if isinstance(x, Match):
        return f"match{'' if x.complete else '?'} ({sub(x.data)}) {{ {len(x.clauses)} clauses }}"
    if isinstance(x, Clause):
        return f"{sub(x.lhs)} => {sub(x.rhs)}"
    if isinstance(x, PatternWildcard):
        return "_"
    if isinstance(x, PatternVar):
        return _param_text(x.var)
    if isinstance(x, PatternConstructor):
        if not x.patterns:
            return x.constructor.name_hint
        return f"{x.constructor.name_hint}({', '.join(sub(p) for p in x.patterns)})"
    if isinstance(x, PatternTuple):
        return "(" + ", ".join(sub(p) for p in x.patterns) + ")"
    if isinstance(x, RefCreate):
        return f"ref({sub(x.value)})"
    if isinstance(x, RefRead):
        return f"ref_read({sub(x.ref)})"
    if isinstance(x, RefWrite):
        return f"ref_write({sub(x.ref)}, {sub(x.value)})"
    if isinstance(x, MetaRef):
        return f"meta[{x.type_key}][{x.index}]"
    if isinstance(x, Type):
        return _type_text(x, depth + 2)
    if isinstance(x, TypeData):
        return f"type {x.header.name_hint}[{', '.join(v.name_hint for v in x.type_vars)}] {{ {', '.join(c.name_hint for c in x.constructors)} }}"
    if isinstance(x, _CtorDef):
        return f"{x.ctor.name_hint}({', '.join(_type_text(t, depth + 1) for t in x.ctor.inputs)})"
    if isinstance(x, IRModule):
        return repr(x)
    if isinstance(x, (list, tuple)):
        return f"[{', '.join(sub(i) for i in x[:6])}{', ...' if len(x) > 6 else ''}]"
    if isinstance(x, np.ndarray):
        return f"array(<{x.shape} {x.dtype}>)"
    if isinstance(x, Expr):
        return type(x).__name__
    try:
        return repr(x)
    except Exception:  # pragma: no cover
        return f"<{type(x).__name__}>"


def _param_text(v: Var) -> str:
    text = "%" + (v.name_hint or "_")
    if v.type_annotation is not None:
        text += ": " + _type_text(v.type_annotation, 2)
    return text


def _dim_text(d: Any) -> str:
    if isinstance(d, (TypeVar, IncompleteType)):
        return _atom(d) or "?"
    return repr(d) if not isinstance(d, int) else str(d)


def _type_text(t: Any, depth: int) -> str:
    atom = _atom(t)
    if atom is not None:
        return atom
    if depth < 0:
        return "..."
    sub = lambda y: _type_text(y, depth - 1)  # noqa: E731
    if isinstance(t, TensorType):
        dtype = t.dtype if isinstance(t.dtype, str) else _atom(t.dtype) or "?"
        if isinstance(t.shape, tuple):
            if not t.shape:
                return dtype
            dims = ", ".join(_dim_text(d) for d in t.shape)
            return f"Tensor[({dims}), {dtype}]"
        return f"Tensor[{_dim_text(t.shape)}, {dtype}]"
    if isinstance(t, TupleType):
        inner = ", ".join(sub(f) for f in t.fields)
        return f"({inner},)" if len(t.fields) == 1 else f"({inner})"
    if isinstance(t, FuncType):
        tps = f"[{', '.join(v.name_hint for v in t.type_params)}]" if t.type_params else ""
        return f"fn {tps}({', '.join(sub(a) for a in t.arg_types)}) -> {sub(t.ret_type)}"
    if isinstance(t, RefType):
        return f"Ref[{sub(t.value)}]"
    if isinstance(t, TypeCall):
        return f"{sub(t.func)}[{', '.join(sub(a) for a in t.args)}]"
    if isinstance(t, TypeRelation):
        return f"{getattr(t.func, 'name', t.func)}({', '.join(sub(a) for a in t.args)})"
    return type(t).__name__


# --- equality ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Mismatch:
    """Where two programs first differ: a path such as ``@main.body.args[1].op``."""

    path: str
    lhs: Any
    rhs: Any
    reason: str

    def __str__(self) -> str:
        return (
            f"structural mismatch at {self.path}: {self.reason}\n"
            f"  lhs: {_brief(self.lhs)}\n"
            f"  rhs: {_brief(self.rhs)}"
        )


def _render_path(path: Any) -> str:
    labels = []
    while path is not None:
        path, label = path
        if isinstance(label, tuple):
            name, index = label
            label = f"[{index!r}]" if name is None else f".{name}[{index!r}]"
        labels.append(label)
    labels.reverse()
    # Long let chains give long runs of ".body": write them as ".body×N".
    parts: list[str] = []
    i = 0
    while i < len(labels):
        j = i
        while j < len(labels) and labels[j] == labels[i]:
            j += 1
        parts.append(labels[i] if j - i < 4 else f"{labels[i]}×{j - i}")
        if j - i < 4:
            parts.extend(labels[i + 1 : j])
        i = j
    text = "".join(parts)
    if text.startswith("."):
        text = text[1:]
    return text or "<root>"


class _Equal:
    """One comparison: variable maps, the memo of equal pairs and the first mismatch."""

    __slots__ = ("map_free_vars", "lmap", "rmap", "memo", "mismatch")

    def __init__(self, map_free_vars: bool):
        self.map_free_vars = map_free_vars
        self.lmap: dict[Any, Any] = {}  # lhs variable -> rhs variable
        self.rmap: dict[Any, Any] = {}  # rhs variable -> lhs variable
        self.memo: set[tuple[int, int]] = set()
        self.mismatch: Optional[tuple[Any, Any, Any, str]] = None

    def fail(self, path: Any, lhs: Any, rhs: Any, reason: str) -> bool:
        self.mismatch = (path, lhs, rhs, reason)
        return False

    # Variables ----------------------------------------------------------------------
    def _bind(self, a: Any, b: Any) -> None:
        # The most recent binding wins, so a binder reached twice through DAG sharing
        # (Tuple(f, f) against Tuple(g, h)) is matched against each counterpart in turn.
        old_b = self.lmap.get(a)
        if old_b is not None and old_b is not b and self.rmap.get(old_b) is a:
            del self.rmap[old_b]
        old_a = self.rmap.get(b)
        if old_a is not None and old_a is not a and self.lmap.get(old_a) is b:
            del self.lmap[old_a]
        self.lmap[a] = b
        self.rmap[b] = a

    def _use(self, a: Any, b: Any, path: Any, what: str) -> Optional[bool]:
        """Match a use of variable ``a`` with ``b``: True/False, or None when ``a`` and
        ``b`` were just paired as free variables (their annotations still to compare)."""
        mapped = self.lmap.get(a)
        if mapped is not None:
            if mapped is b:
                return True
            return self.fail(
                path, a, b, f"{what} {_atom(a)} corresponds to {_atom(mapped)} here, not {_atom(b)}"
            )
        other = self.rmap.get(b)
        if other is not None:
            return self.fail(
                path, a, b, f"{what} {_atom(b)} of rhs corresponds to {_atom(other)}, not {_atom(a)}"
            )
        if self.map_free_vars:
            self._bind(a, b)
            return None if a is not b else True
        if a is b:
            return True
        return self.fail(
            path,
            a,
            b,
            f"different free {what}s {_atom(a)} and {_atom(b)} "
            "(free variables are equal only to themselves unless map_free_vars=True)",
        )

    # Main loop -----------------------------------------------------------------------
    def run(self, lhs: Any, rhs: Any, root_path: Any = None) -> bool:
        stack: list[tuple[int, Any, Any, Any]] = [(_NODE, lhs, rhs, root_path)]
        pop, push = stack.pop, stack.append
        memo = self.memo
        while stack:
            role, l, r, path = pop()
            if role == _DEFVAR:
                if not isinstance(l, Var) or not isinstance(r, Var):
                    return self.fail(path, l, r, "binder is not a variable on both sides")
                self._bind(l, r)
                push((_NODE, l.type_annotation, r.type_annotation, (path, ".type_annotation")))
                continue
            if role == _DEFTV:
                if not isinstance(l, TypeVar) or not isinstance(r, TypeVar):
                    return self.fail(path, l, r, "type binder is not a type variable on both sides")
                if l.kind != r.kind:
                    return self.fail(path, l, r, f"type parameter kinds differ: {l.kind.name} vs {r.kind.name}")
                self._bind(l, r)
                continue

            if l is r and type(l) in _CLOSED_LEAVES:
                continue
            kl = _kind(l)
            kr = _kind(r)
            if kl is not kr:
                return self.fail(
                    path, l, r, f"different kinds of node: {_kind_name(l)} vs {_kind_name(r)}"
                )
            if kl is _VAR:
                res = self._use(l, r, path, "variable")
                if res is None:  # newly paired free variables: their annotations must agree
                    push((_NODE, l.type_annotation, r.type_annotation, (path, ".type_annotation")))
                elif not res:
                    return False
                continue
            if kl is _TYPEVAR or kl is _INCOMPLETE:
                if l.kind != r.kind:
                    return self.fail(path, l, r, f"type variable kinds differ: {l.kind.name} vs {r.kind.name}")
                res = self._use(l, r, path, "type variable")
                if res is False:
                    return False
                continue
            if kl is _LEAF:
                if not _leaf_equal(l, r):
                    return self.fail(path, l, r, f"values differ: {_brief(l)} vs {_brief(r)}")
                continue
            if kl is _ARRAY:
                if _array_key(l) != _array_key(r):
                    return self.fail(path, l, r, "arrays differ (dtype, shape or data)")
                continue

            if type(l) in _MEMO_TYPES:
                key = (id(l), id(r))
                if key in memo:
                    continue
                # Recorded on entry: every check is a conjunction and the first failure
                # ends the whole comparison, so "being compared" may stand for "equal".
                memo.add(key)
            tag, llocal, lkids = kl(l)
            _, rlocal, rkids = kl(r)
            if llocal != rlocal:
                for (name, lv), (_, rv) in zip(llocal, rlocal):
                    if not _local_equal(lv, rv):
                        if tag == "Constant" and name == "dtype":
                            lv, rv = np.dtype(lv).name, np.dtype(rv).name
                        return self.fail(
                            path, l, r, f"{tag} {name} differs: {_value_text(lv)} vs {_value_text(rv)}"
                        )
            if len(lkids) != len(rkids):  # pragma: no cover - counts are in the locals
                return self.fail(path, l, r, f"{tag}: different number of children")
            for i in range(len(lkids) - 1, -1, -1):
                label, lc, lrole = lkids[i]
                push((lrole, lc, rkids[i][1], (path, label)))
        return True


def _local_equal(a: Any, b: Any) -> bool:
    if isinstance(a, Attrs) or isinstance(b, Attrs):
        return a == b
    return _leaf_equal(a, b)


def _value_text(v: Any) -> str:
    if isinstance(v, bytes):
        return f"<{len(v)} bytes>"
    text = repr(v)
    return text if len(text) <= 60 else text[:57] + "..."


def _kind_name(x: Any) -> str:
    if isinstance(x, (list, tuple)) and not isinstance(x, Expr):
        return "sequence"
    return type(x).__name__


def first_difference(lhs: Any, rhs: Any, map_free_vars: bool = False) -> Optional[Mismatch]:
    """Where ``lhs`` and ``rhs`` first differ structurally, or None when they are equal.

    >>> x, y = relay.var("x"), relay.var("y")
    >>> first_difference(relay.Function([x], x), relay.Function([y], y)) is None
    True
    """
    eq = _Equal(map_free_vars)
    if eq.run(lhs, rhs):
        return None
    path, l, r, reason = eq.mismatch  # type: ignore[misc]
    return Mismatch(_render_path(path), l, r, reason)


def structural_equal(lhs: Any, rhs: Any, map_free_vars: bool = False) -> bool:
    """True when ``lhs`` and ``rhs`` are the same program up to renaming bound variables.

    Works on expressions, types, modules (functions matched by global name, type
    definitions by name), type definitions, attributes, patterns, clauses and Python
    lists / tuples / dicts of them.

    >>> x, y = relay.var("x", shape=(2,)), relay.var("y", shape=(2,))
    >>> structural_equal(relay.Function([x], x), relay.Function([y], y))
    True
    >>> structural_equal(x, y), structural_equal(x, y, map_free_vars=True)
    (False, True)
    """
    return _Equal(map_free_vars).run(lhs, rhs)


def assert_structural_equal(lhs: Any, rhs: Any, map_free_vars: bool = False) -> None:
    """Raise AssertionError naming the first place where ``lhs`` and ``rhs`` differ.

    The message gives a path such as ``@main.body.args[1].op`` and a short text of both
    sides at that place.
    """
    mismatch = first_difference(lhs, rhs, map_free_vars)
    if mismatch is not None:
        raise AssertionError(str(mismatch))


# --- hashing ----------------------------------------------------------------------------


def _binders(node: Any) -> list[tuple[Any, tuple]]:
    """The variables ``node`` binds, with a key saying where (context free)."""
    t = type(node)
    if t is Function:
        out = [(v, ("param", i)) for i, v in enumerate(node.params)]
        out += [(v, ("type_param", i)) for i, v in enumerate(node.type_params)]
        return out
    if t is Let:
        return [(node.var, ("let",))]
    if t is Clause:
        return [(v, ("pattern", i)) for i, v in enumerate(pattern_vars(node.lhs))]
    if t is FuncType:
        return [(v, ("fn_type_param", i)) for i, v in enumerate(node.type_params)]
    if t is TypeData:
        return [(v, ("adt_param", i)) for i, v in enumerate(node.type_vars)]
    return []


_HAS_BINDERS = frozenset({Function, Let, Clause, FuncType, TypeData})
_COMBINE = object()


class _Hash:
    __slots__ = ("map_free_vars", "bound", "free", "memo")

    def __init__(self, map_free_vars: bool):
        self.map_free_vars = map_free_vars
        self.bound: dict[Any, tuple] = {}
        self.free: dict[Any, int] = {}
        self.memo: dict[int, int] = {}

    def _var_hash(self, v: Any, tag: str) -> int:
        key = self.bound.get(v)
        if key is not None:
            return hash((tag, "bound") + key)
        if self.map_free_vars:
            index = self.free.setdefault(v, len(self.free))
            return hash((tag, "free", index))
        return hash((tag, "free", id(v)))

    def run(self, root: Any) -> int:
        values: list[int] = []
        stack: list[tuple] = [(root, _NODE)]
        pop, push = stack.pop, stack.append
        memo = self.memo
        while stack:
            item = pop()
            if item[0] is _COMBINE:
                _, node, head, n = item
                if n:
                    h = hash((head, *values[-n:]))
                    del values[-n:]
                else:
                    h = hash((head,))
                if type(node) in _MEMO_TYPES:
                    memo[id(node)] = h
                values.append(h)
                continue
            x, role = item
            if role == _DEFVAR:
                # A binding site: what matters is the annotation (the name is ignored).
                x = x.type_annotation if isinstance(x, Var) else x
            elif role == _DEFTV:
                values.append(hash(("type binder", int(getattr(x, "kind", 0)))))
                continue
            k = _kind(x)
            if k is _VAR:
                values.append(self._var_hash(x, "var"))
                continue
            if k is _TYPEVAR or k is _INCOMPLETE:
                values.append(hash((self._var_hash(x, "type var"), int(x.kind))))
                continue
            if k is _LEAF:
                values.append(_leaf_hash(x))
                continue
            if k is _ARRAY:
                values.append(hash(_array_key(x)))
                continue
            if type(x) in _MEMO_TYPES:
                h = memo.get(id(x))
                if h is not None:
                    values.append(h)
                    continue
            if type(x) in _HAS_BINDERS:
                for v, key in _binders(x):
                    self.bound.setdefault(v, key)
            tag, local, kids = k(x)
            try:
                head = hash((tag, local))
            except TypeError:
                head = hash((tag, *(_local_hash(v) for _, v in local)))
            push((_COMBINE, x, head, len(kids)))
            for i in range(len(kids) - 1, -1, -1):
                _, child, crole = kids[i]
                push((child, crole))
        assert len(values) == 1
        return values[0]


def _local_hash(v: Any) -> int:
    if isinstance(v, tuple):
        return hash(tuple(_local_hash(i) for i in v))
    return _leaf_hash(v)


def structural_hash(node: Any, map_free_vars: bool = False) -> int:
    """A hash consistent with :func:`structural_equal` (equal programs, equal hashes).

    Linear in the size of the DAG; bound variables hash by binding position, free ones by
    identity (by order of first occurrence with ``map_free_vars=True``).

    >>> x, y = relay.var("x"), relay.var("y")
    >>> structural_hash(relay.Function([x], x)) == structural_hash(relay.Function([y], y))
    True
    """
    return _Hash(map_free_vars).run(node)


__all__ = [
    "structural_equal",
    "structural_hash",
    "assert_structural_equal",
    "first_difference",
    "Mismatch",
]
