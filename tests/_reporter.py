"""A tiny type reporter for calling op relations directly in tests (no solver needed).

``assign`` unifies: an unknown (IncompleteType, also as a dim or dtype) is recorded, known
types must be equal.  ``unify_dtype`` accepts equal strings, or binds an unknown dtype to
the other side (as the solver does for unsuffixed literals).
"""

from __future__ import annotations

from relay_nb.errors import RelayTypeError
from relay_nb.ir.ty import IncompleteType, Kind, TensorType, TupleType
from relay_nb.op.registry import get_op, make_attrs


class Reporter:
    def __init__(self):
        self.solution: dict[IncompleteType, object] = {}

    def fresh(self, kind=Kind.Type):
        return IncompleteType(kind)

    def resolve(self, t):
        while isinstance(t, IncompleteType) and t in self.solution:
            t = self.solution[t]
        if isinstance(t, TensorType):
            shape = (
                tuple(self.resolve(d) for d in t.shape) if isinstance(t.shape, tuple) else t.shape
            )
            return TensorType(shape, self.resolve(t.dtype))
        if isinstance(t, TupleType):
            return TupleType(tuple(self.resolve(f) for f in t.fields))
        return t

    def _bind(self, unknown, value):
        self.solution[unknown] = value

    def unify_dtype(self, a, b):
        a, b = self.resolve(a), self.resolve(b)
        if isinstance(a, IncompleteType):
            if a is not b:
                self._bind(a, b)
            return b
        if isinstance(b, IncompleteType):
            self._bind(b, a)
            return a
        if a != b:
            raise RelayTypeError(f"dtypes {a} and {b} do not match")
        return a

    def assign(self, a, b):
        a, b = self.resolve(a), self.resolve(b)
        if a is b:
            return
        if isinstance(a, IncompleteType):
            self._bind(a, b)
        elif isinstance(b, IncompleteType):
            self._bind(b, a)
        elif isinstance(a, TensorType) and isinstance(b, TensorType):
            if len(a.shape) != len(b.shape):
                raise RelayTypeError(f"rank mismatch: {a} vs {b}")
            for x, y in zip(a.shape, b.shape):
                if isinstance(x, IncompleteType) or isinstance(y, IncompleteType):
                    self.assign(x, y)
                elif x != y:
                    raise RelayTypeError(f"shape mismatch: {a.shape} vs {b.shape}")
            self.unify_dtype(a.dtype, b.dtype)
        elif isinstance(a, TupleType) and isinstance(b, TupleType):
            if len(a.fields) != len(b.fields):
                raise RelayTypeError("tuple arity mismatch")
            for x, y in zip(a.fields, b.fields):
                self.assign(x, y)
        elif a != b:
            raise RelayTypeError(f"type mismatch: {a!r} vs {b!r}")


def T(shape, dtype="float32") -> TensorType:
    """``T((2, 3))`` is ``Tensor[(2, 3), float32]``."""
    return TensorType(tuple(shape), dtype)


def literal(default="int32") -> IncompleteType:
    """The dtype unknown of an unsuffixed literal."""
    return IncompleteType(Kind.BaseType, default=default)


def solve(op_name, *arg_types, **attrs):
    """Run ``op_name``'s relation once: ``(solved, resolved types (args + output))``.

    Errors are prefixed with the op name, as the solver does.
    """
    op = get_op(op_name)
    rel = op.get_attr("type_rel")
    out = IncompleteType()
    types = list(arg_types) + [out]
    reporter = Reporter()
    try:
        solved = rel(types, len(arg_types), make_attrs(op, attrs), reporter)
    except RelayTypeError as e:
        raise RelayTypeError(f"{op_name}: {e.message}") from None
    return solved, [reporter.resolve(t) for t in types]


def infer(op_name, *arg_types, **attrs):
    """The output type ``op_name(*args, **attrs)`` has; fails if the relation must wait."""
    solved, types = solve(op_name, *arg_types, **attrs)
    assert solved, f"{op_name}'s relation did not solve"
    return types[-1]
