"""Unification: a union-find over :class:`IncompleteType` unknowns, with an occurs check.

Types are immutable values, so an unknown is never filled in place: the :class:`Unifier`
keeps a substitution ``sub`` from unknowns to what they stand for (another unknown, a type,
a shape tuple, a dim or a dtype string).  :meth:`Unifier.find` follows it to a
representative (with path compression), :meth:`Unifier.resolve` rebuilds a type with every
solved unknown replaced.

Three sorts of unknowns are told apart by the position they occur in, and their kind:

* ``Kind.Type`` - a whole type;
* ``Kind.ShapeVar`` - the shape of a tensor (a tuple of dims), or one dim of it;
* ``Kind.BaseType`` - a dtype.  An unknown dtype with a ``default`` comes from an unsuffixed
  literal: it unifies with any dtype the literal can take (an integer literal with any
  integer or float dtype, a float literal with any float dtype) and falls back to its
  default when nothing constrains it (seed 000's ``%f(10, 11)`` on float32 parameters).

Unification itself is iterative (a work list of pairs); :func:`subst` and :meth:`resolve`
recurse over the *structure of a type*, which is small compared with programs.
"""

from __future__ import annotations

from typing import Any

from ..ir.ty import (
    AnyDim,
    FuncType,
    GlobalTypeVar,
    IncompleteType,
    Kind,
    RefType,
    TensorType,
    TupleType,
    TypeCall,
    TypeRelation,
    TypeVar,
)
from .text import dtype_text, shape_text, type_text

_INT_DTYPES = frozenset(
    ["int8", "int16", "int32", "int64", "uint1", "uint8", "uint16", "uint32", "uint64"]
)
_FLOAT_DTYPES = frozenset(["float16", "float32", "float64", "bfloat16"])


class UnifyError(Exception):
    """Two types cannot be made equal; ``reason`` names the innermost clash."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def literal_fits(default: str, dtype: str) -> bool:
    """May an unsuffixed literal whose default dtype is ``default`` take ``dtype``?"""
    if default == dtype:
        return True
    base = dtype.partition("x")[0] if "x" in dtype and dtype[-1].isdigit() else dtype
    if default in _FLOAT_DTYPES:
        return base in _FLOAT_DTYPES
    if default in _INT_DTYPES:
        return base in _INT_DTYPES or base in _FLOAT_DTYPES
    return False


def literal_text(default: str) -> str:
    if default in _FLOAT_DTYPES:
        return f"{default} (a float literal)"
    if default in _INT_DTYPES:
        return f"{default} (an integer literal)"
    return default


def _merge_defaults(a: str, b: str) -> str:
    if a in _FLOAT_DTYPES:
        return a
    if b in _FLOAT_DTYPES:
        return b
    if "int64" in (a, b):
        return "int64"
    return a


def is_ground(t: Any) -> bool:
    """True when ``t`` contains no :class:`IncompleteType` (it can never change)."""
    cls = type(t)
    if cls is TensorType:
        if type(t.dtype) is IncompleteType:
            return False
        shape = t.shape
        if type(shape) is tuple:
            for d in shape:
                if type(d) is IncompleteType:
                    return False
            return True
        return type(shape) is not IncompleteType
    if cls is IncompleteType:
        return False
    if cls is TupleType:
        for f in t.fields:
            if not is_ground(f):
                return False
        return True
    if cls is FuncType:
        for a in t.arg_types:
            if not is_ground(a):
                return False
        if not is_ground(t.ret_type):
            return False
        for c in t.type_constraints:
            for a in c.args:
                if not is_ground(a):
                    return False
        return True
    if cls is RefType:
        return is_ground(t.value)
    if cls is TypeCall:
        for a in t.args:
            if not is_ground(a):
                return False
        return True
    if cls is TypeRelation:
        for a in t.args:
            if not is_ground(a):
                return False
        return True
    return True


def subst(t: Any, mapping: dict) -> Any:
    """``t`` with the type variables (or unknowns) in ``mapping`` replaced, in every position.

    Inner function types that bind a variable of ``mapping`` again shadow it.
    """
    if not mapping:
        return t
    cls = type(t)
    if cls is TypeVar or cls is IncompleteType:
        return mapping.get(t, t)
    if cls is TensorType:
        shape = t.shape
        if type(shape) is tuple:
            new_shape = tuple(mapping.get(d, d) if type(d) is not int else d for d in shape)
            if all(a is b for a, b in zip(new_shape, shape)):
                new_shape = shape
        else:
            new_shape = mapping.get(shape, shape)
        dtype = t.dtype
        new_dtype = dtype if type(dtype) is str else mapping.get(dtype, dtype)
        if new_shape is shape and new_dtype is dtype:
            return t
        return TensorType(new_shape, new_dtype, t.span)
    if cls is TupleType:
        fields = tuple(subst(f, mapping) for f in t.fields)
        if all(a is b for a, b in zip(fields, t.fields)):
            return t
        return TupleType(fields, t.span)
    if cls is FuncType:
        inner = mapping
        if t.type_params and any(p in mapping for p in t.type_params):
            inner = {k: v for k, v in mapping.items() if k not in t.type_params}
        args = tuple(subst(a, inner) for a in t.arg_types)
        ret = subst(t.ret_type, inner)
        cons = tuple(subst(c, inner) for c in t.type_constraints)
        if (
            ret is t.ret_type
            and all(a is b for a, b in zip(args, t.arg_types))
            and all(a is b for a, b in zip(cons, t.type_constraints))
        ):
            return t
        return FuncType(args, ret, t.type_params, cons, t.span)
    if cls is TypeRelation:
        args = tuple(subst(a, mapping) for a in t.args)
        if all(a is b for a, b in zip(args, t.args)):
            return t
        return TypeRelation(t.func, args, t.num_inputs, t.attrs)
    if cls is RefType:
        value = subst(t.value, mapping)
        return t if value is t.value else RefType(value, t.span)
    if cls is TypeCall:
        func = subst(t.func, mapping)
        args = tuple(subst(a, mapping) for a in t.args)
        if func is t.func and all(a is b for a, b in zip(args, t.args)):
            return t
        return TypeCall(func, args, t.span)
    return t


def collect_vars(t: Any, out: dict, classes: tuple = (IncompleteType,)) -> None:
    """Add to the ordered dict ``out`` every variable of the given classes in ``t``."""
    cls = type(t)
    if cls in classes:
        out.setdefault(t, None)
        return
    if cls is TensorType:
        shape = t.shape
        if type(shape) is tuple:
            for d in shape:
                if type(d) in classes:
                    out.setdefault(d, None)
        elif type(shape) in classes:
            out.setdefault(shape, None)
        if type(t.dtype) in classes:
            out.setdefault(t.dtype, None)
    elif cls is TupleType:
        for f in t.fields:
            collect_vars(f, out, classes)
    elif cls is FuncType:
        for a in t.arg_types:
            collect_vars(a, out, classes)
        collect_vars(t.ret_type, out, classes)
        for c in t.type_constraints:
            collect_vars(c, out, classes)
    elif cls is TypeRelation:
        for a in t.args:
            collect_vars(a, out, classes)
    elif cls is RefType:
        collect_vars(t.value, out, classes)
    elif cls is TypeCall:
        collect_vars(t.func, out, classes)
        for a in t.args:
            collect_vars(a, out, classes)


class Unifier:
    """Union-find over unknowns.  Subclasses react to bindings (:meth:`_on_bind`)."""

    def __init__(self) -> None:
        self.sub: dict[IncompleteType, Any] = {}
        # Dtype unknowns of unsuffixed literals, defaulted at the end of inference.
        self.literals: list[IncompleteType] = []

    # -- unknowns --------------------------------------------------------------------
    def fresh(self, kind: Kind = Kind.Type) -> IncompleteType:
        """A new unknown."""
        return IncompleteType(kind)

    def literal_dtype(self, default: str) -> IncompleteType:
        u = IncompleteType(Kind.BaseType, "literal", default)
        self.literals.append(u)
        return u

    def find(self, u: Any) -> Any:
        """The representative of unknown ``u``: an unbound unknown, or what it was bound to."""
        sub = self.sub
        v = sub.get(u)
        if v is None:
            return u
        if type(v) is not IncompleteType:
            return v
        w = sub.get(v)
        if w is None:
            return v
        path = [u, v]
        root = w
        while type(root) is IncompleteType:
            nxt = sub.get(root)
            if nxt is None:
                break
            path.append(root)
            root = nxt
        for p in path:
            sub[p] = root
        return root

    def _bind(self, u: IncompleteType, value: Any) -> None:
        self.sub[u] = value
        self._on_bind(u, value)

    def _on_bind(self, u: IncompleteType, value: Any) -> None:
        """Hook: ``u`` was just bound to ``value``."""

    def instantiate_for_unify(self, ft: FuncType) -> FuncType:
        """A monomorphic instance of polymorphic ``ft`` (subclasses queue its constraints)."""
        mapping = {p: self.fresh(p.kind) for p in ft.type_params}
        return FuncType(tuple(subst(a, mapping) for a in ft.arg_types), subst(ft.ret_type, mapping))

    # -- resolution --------------------------------------------------------------------
    def resolve(self, t: Any) -> Any:
        """``t`` with every solved unknown replaced by its solution (deeply)."""
        cls = type(t)
        if cls is TensorType:
            dtype = t.dtype
            new_dtype = dtype
            if type(dtype) is IncompleteType:
                new_dtype = self.find(dtype)
            shape = t.shape
            new_shape = shape
            if type(shape) is tuple:
                for d in shape:
                    if type(d) is IncompleteType:
                        new_shape = self._resolve_dims(shape)
                        break
            elif type(shape) is IncompleteType:
                new_shape = self.find(shape)
                if type(new_shape) is tuple:
                    new_shape = self._resolve_dims(new_shape)
            if new_dtype is dtype and new_shape is shape:
                return t
            return TensorType(new_shape, new_dtype, t.span)
        if cls is IncompleteType:
            r = self.find(t)
            if r is t or type(r) is IncompleteType:
                return r
            return self.resolve(r)
        if cls is TupleType:
            fields = t.fields
            new = [self.resolve(f) for f in fields]
            for a, b in zip(new, fields):
                if a is not b:
                    return TupleType(tuple(new), t.span)
            return t
        if cls is FuncType:
            args = tuple(self.resolve(a) for a in t.arg_types)
            ret = self.resolve(t.ret_type)
            cons = tuple(self.resolve(c) for c in t.type_constraints)
            if (
                ret is t.ret_type
                and all(a is b for a, b in zip(args, t.arg_types))
                and all(a is b for a, b in zip(cons, t.type_constraints))
            ):
                return t
            return FuncType(args, ret, t.type_params, cons, t.span)
        if cls is TypeRelation:
            args = tuple(self.resolve(a) for a in t.args)
            if all(a is b for a, b in zip(args, t.args)):
                return t
            return TypeRelation(t.func, args, t.num_inputs, t.attrs)
        if cls is RefType:
            v = self.resolve(t.value)
            return t if v is t.value else RefType(v, t.span)
        if cls is TypeCall:
            args = tuple(self.resolve(a) for a in t.args)
            if all(a is b for a, b in zip(args, t.args)):
                return t
            return TypeCall(t.func, args, t.span)
        return t

    def _resolve_dims(self, shape: tuple) -> tuple:
        out = []
        changed = False
        for d in shape:
            if type(d) is IncompleteType:
                r = self.find(d)
                if r is not d:
                    changed = True
                out.append(r)
            else:
                out.append(d)
        return tuple(out) if changed else shape

    def occurs(self, u: IncompleteType, t: Any) -> bool:
        """Does unknown ``u`` occur in ``t`` (after resolution)?"""
        found: dict = {}
        collect_vars(self.resolve(t), found)
        return u in found

    # -- unification -------------------------------------------------------------------
    def unify(self, a: Any, b: Any) -> None:
        """Make types ``a`` and ``b`` equal, or raise :class:`UnifyError`."""
        stack = [(a, b)]
        pop = stack.pop
        push = stack.append
        while stack:
            a, b = pop()
            if a is b:
                continue
            ta = type(a)
            if ta is IncompleteType:
                a = self.find(a)
                ta = type(a)
            tb = type(b)
            if tb is IncompleteType:
                b = self.find(b)
                tb = type(b)
            if a is b:
                continue
            if ta is IncompleteType:
                self._bind_unknown(a, b)
                continue
            if tb is IncompleteType:
                self._bind_unknown(b, a)
                continue
            if ta is TensorType:
                if tb is not TensorType:
                    raise self._mismatch(a, b)
                if a == b:
                    continue
                self._unify_dtype(a.dtype, b.dtype)
                self.unify_shape(a.shape, b.shape)
            elif ta is TupleType:
                if tb is not TupleType or len(a.fields) != len(b.fields):
                    raise self._mismatch(a, b)
                for x, y in zip(a.fields, b.fields):
                    push((x, y))
            elif ta is FuncType:
                if tb is not FuncType:
                    raise self._mismatch(a, b)
                if a.type_params or b.type_params:
                    if len(a.type_params) == len(b.type_params):
                        # alpha-rename b's binders to a's
                        b = subst(
                            FuncType(b.arg_types, b.ret_type, (), b.type_constraints),
                            dict(zip(b.type_params, a.type_params)),
                        )
                    elif not b.type_params:
                        a = self.instantiate_for_unify(a)
                    elif not a.type_params:
                        b = self.instantiate_for_unify(b)
                    else:
                        raise self._mismatch(a, b)
                if len(a.arg_types) != len(b.arg_types):
                    raise self._mismatch(a, b)
                for x, y in zip(a.arg_types, b.arg_types):
                    push((x, y))
                push((a.ret_type, b.ret_type))
            elif ta is RefType:
                if tb is not RefType:
                    raise self._mismatch(a, b)
                push((a.value, b.value))
            elif ta is TypeCall:
                if (
                    tb is not TypeCall
                    or len(a.args) != len(b.args)
                    or not self._same_head(a.func, b.func)
                ):
                    raise self._mismatch(a, b)
                for x, y in zip(a.args, b.args):
                    push((x, y))
            elif ta is GlobalTypeVar and tb is TypeCall and not b.args and b.func == a:
                continue
            elif tb is GlobalTypeVar and ta is TypeCall and not a.args and a.func == b:
                continue
            else:
                if a == b:
                    continue
                raise self._mismatch(a, b)

    @staticmethod
    def _same_head(f: Any, g: Any) -> bool:
        return f is g or (type(f) is GlobalTypeVar and f == g)

    def _mismatch(self, a: Any, b: Any) -> UnifyError:
        return UnifyError(
            f"type mismatch: {type_text(self.resolve(a))} vs {type_text(self.resolve(b))}"
        )

    def _bind_unknown(self, u: IncompleteType, t: Any) -> None:
        """Bind unbound unknown ``u`` to ``t`` (already a representative)."""
        if type(t) is IncompleteType:
            if u.default or t.default:
                self._bind_dtype_unknown(u, t)
                return
            self._bind(u, t)
            return
        if type(t) is str:
            self._bind_dtype_unknown(u, t)
            return
        if u.kind is Kind.Type and type(t) is not TensorType and not is_ground(t):
            if self.occurs(u, t):
                raise UnifyError(
                    f"cannot construct an infinite type: _ = {type_text(self.resolve(t))}"
                )
        self._bind(u, t)

    def unify_dtype(self, a: Any, b: Any) -> Any:
        """Unify two dtypes (strings, BaseType unknowns or dtype variables); the common one."""
        return self._unify_dtype(a, b)

    def _unify_dtype(self, a: Any, b: Any) -> Any:
        if a is b:
            return a
        if type(a) is IncompleteType:
            a = self.find(a)
        if type(b) is IncompleteType:
            b = self.find(b)
        if a is b or (type(a) is str and a == b):
            return a
        if type(a) is IncompleteType:
            self._bind_dtype_unknown(a, b)
            return self.find(a)
        if type(b) is IncompleteType:
            self._bind_dtype_unknown(b, a)
            return self.find(b)
        raise UnifyError(f"dtype mismatch: {dtype_text(a)} vs {dtype_text(b)}")

    def _bind_dtype_unknown(self, u: IncompleteType, v: Any) -> None:
        if type(v) is str:
            if u.default and not literal_fits(u.default, v):
                raise UnifyError(f"dtype mismatch: {v} vs {literal_text(u.default)}")
            self._bind(u, v)
        elif type(v) is IncompleteType:
            if u.default and v.default:
                merged = self.literal_dtype(_merge_defaults(u.default, v.default))
                self._bind(u, merged)
                self._bind(v, merged)
            elif u.default:
                self._bind(v, u)
            else:
                self._bind(u, v)
        else:
            # A dtype variable (a rigid BaseType parameter): the literal takes it.
            self._bind(u, v)

    def unify_shape(self, sa: Any, sb: Any) -> None:
        """Unify two shapes (tuples of dims, shape variables or shape unknowns)."""
        if sa is sb:
            return
        if type(sa) is IncompleteType:
            sa = self.find(sa)
        if type(sb) is IncompleteType:
            sb = self.find(sb)
        if sa is sb:
            return
        if type(sa) is IncompleteType:
            self._bind(sa, sb)
            return
        if type(sb) is IncompleteType:
            self._bind(sb, sa)
            return
        if type(sa) is tuple and type(sb) is tuple:
            if len(sa) != len(sb):
                raise UnifyError(f"shape mismatch: {shape_text(sa)} vs {shape_text(sb)}")
            for da, db in zip(sa, sb):
                if da is db or (type(da) is int and da == db):
                    continue
                if type(da) is IncompleteType:
                    da = self.find(da)
                if type(db) is IncompleteType:
                    db = self.find(db)
                if da is db or (type(da) is int and da == db):
                    continue
                if isinstance(da, AnyDim) or isinstance(db, AnyDim):
                    continue
                if type(da) is IncompleteType:
                    self._bind(da, db)
                elif type(db) is IncompleteType:
                    self._bind(db, da)
                else:
                    raise UnifyError(f"shape mismatch: {shape_text(sa)} vs {shape_text(sb)}")
            return
        raise UnifyError(f"shape mismatch: {shape_text(sa)} vs {shape_text(sb)}")


__all__ = [
    "Unifier",
    "UnifyError",
    "subst",
    "collect_vars",
    "is_ground",
    "literal_fits",
]
