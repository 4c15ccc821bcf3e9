"""The constraint solver: unification plus a queue of type relations run to a fixpoint.

Seed 000: "type checking is treated as a constraint-solving problem".  Each operator call
(and each call of a function whose type carries ``where`` constraints) contributes a
relation ``Rel(arg types..., result type)``.  A relation is tried as soon as it is created
(the fast path: in a program with annotated parameters every argument type is already
known and the relation computes the result at once).  When it answers ``False`` (not
enough known yet) it is *parked*: it watches the unknowns still in its arguments, and is
re-queued when one of them gets bound.  :meth:`TypeSolver.drain` re-runs the queued ones
until nothing changes.  Relations still pending at the end either become constraints of a
generalized function type (see :mod:`relay_nb.typing.infer`) or, when their inputs are all
known and they still cannot be solved, are errors.

The solver is the ``reporter`` relations receive: ``assign`` (unify), ``resolve``,
``unify_dtype`` and ``fresh``.
"""

from __future__ import annotations

import bisect
from typing import Any, Optional

from ..errors import RelayError, RelayTypeError
from ..ir.ty import FuncType, IncompleteType, TensorType, Type, TypeVar
from .text import type_text
from .unify import Unifier, UnifyError, collect_vars, subst


class Pending:
    """One relation instance waiting to be solved."""

    __slots__ = (
        "rel",
        "args",
        "num_inputs",
        "attrs",
        "node",
        "label",
        "done",
        "queued",
        "watching",
    )

    def __init__(self, rel: Any, args: tuple, num_inputs: int, attrs: Any, node: Any, label: str):
        self.rel = rel
        self.args = args
        self.num_inputs = num_inputs
        self.attrs = attrs
        self.node = node  # the expression whose span errors point at
        self.label = label  # what errors are prefixed with: "add", "@f"
        self.done = False
        self.queued = False
        self.watching: set = set()

    @property
    def name(self) -> str:
        return relation_name(self.rel)


def relation_name(rel: Any) -> str:
    return getattr(rel, "name", None) or getattr(rel, "__name__", "relation")


class TypeSolver(Unifier):
    """Unifier + relation queue; also the ``reporter`` handed to relations."""

    def __init__(self) -> None:
        super().__init__()
        self.pending: list[Pending] = []
        self.watch: dict[IncompleteType, list[Pending]] = {}
        self.ready: list[Pending] = []
        # Where a relation created by unification (instantiating a polymorphic function
        # value) should point its errors.
        self.current_node: Any = None
        self.current_label: str = "call"

    # -- reporter interface (see relay_nb.typing.relations.TypeReporter) ----------------
    def assign(self, a: Type, b: Type) -> None:
        """Unify ``a`` and ``b``; a RelayTypeError (without location) if they clash."""
        if type(a) is IncompleteType and type(b) is TensorType and not a.default:
            # Fast path: a relation assigning its (fresh) result a tensor type.
            sub = self.sub
            if a not in sub:
                sub[a] = b
                if a in self.watch:
                    self._on_bind(a, b)
                return
        try:
            self.unify(a, b)
        except UnifyError as e:
            raise RelayTypeError(e.reason) from None

    def unify_dtype(self, a: Any, b: Any) -> Any:  # type: ignore[override]
        try:
            return super().unify_dtype(a, b)
        except UnifyError as e:
            raise RelayTypeError(e.reason) from None

    # -- watchers --------------------------------------------------------------------
    def _on_bind(self, u: IncompleteType, value: Any) -> None:
        ws = self.watch.pop(u, None)
        if not ws:
            return
        if type(value) is IncompleteType and value not in self.sub:
            # u now stands for another unknown: nothing new is known, move the watchers.
            lst = self.watch.setdefault(value, [])
            for p in ws:
                p.watching.discard(u)
                if not p.done and value not in p.watching:
                    p.watching.add(value)
                    lst.append(p)
            return
        ready = self.ready
        for p in ws:
            p.watching.discard(u)
            if not p.done and not p.queued:
                p.queued = True
                ready.append(p)

    def _park(self, p: Pending) -> None:
        found: dict = {}
        for a in p.args:
            collect_vars(self.resolve(a), found)
        watch = self.watch
        for u in found:
            if u not in p.watching:
                p.watching.add(u)
                lst = watch.get(u)
                if lst is None:
                    watch[u] = [p]
                else:
                    lst.append(p)

    # -- relations ---------------------------------------------------------------------
    def add_relation(
        self, rel: Any, args: tuple, num_inputs: int, attrs: Any, node: Any, label: str
    ) -> Pending:
        """Create relation ``rel(args)``, try it now, park it if it cannot be solved yet."""
        p = Pending(rel, tuple(args), num_inputs, attrs, node, label)
        if self.try_solve(p, [self.resolve(a) for a in p.args]):
            p.done = True
        else:
            self.pending.append(p)
            self._park(p)
        return p

    def try_solve(self, p: Pending, types: list) -> bool:
        """Run the relation once on resolved ``types``; errors get the label and span.

        An input that is a type *variable* (a rigid parameter of a polymorphic function)
        says nothing a relation can compute with: the relation waits (and, at the end,
        is either assumed by a ``where`` clause or reported).
        """
        for i in range(p.num_inputs):
            if type(types[i]) is TypeVar:
                return False
        return self.call_relation(p.rel, types, p.num_inputs, p.attrs, p.node, p.label)

    def call_relation(
        self, rel: Any, types: list, num_inputs: int, attrs: Any, node: Any, label: str
    ) -> bool:
        """``rel(types, num_inputs, attrs, self)``, with its errors located at ``node``."""
        try:
            return bool(rel(types, num_inputs, attrs, self))
        except Exception as e:
            raise relation_error(e, rel, label, node) from (
                None if isinstance(e, (RelayError, UnifyError)) else e
            )

    def drain(self) -> None:
        """Re-run queued relations until none is ready (the fixpoint)."""
        ready = self.ready
        while ready:
            p = ready.pop()
            p.queued = False
            if p.done:
                continue
            if self.try_solve(p, [self.resolve(a) for a in p.args]):
                p.done = True
            else:
                self._park(p)

    def unsolved(self) -> list[Pending]:
        self.pending = [p for p in self.pending if not p.done]
        return self.pending

    # -- polymorphism ------------------------------------------------------------------
    def instantiate(
        self,
        ft: FuncType,
        node: Any,
        label: str,
        type_args: Optional[tuple] = None,
    ) -> tuple[FuncType, tuple]:
        """A monomorphic copy of ``ft``: fresh unknowns (or ``type_args``) for its type
        parameters; its constraints are queued as relations at ``node``.

        Returns the instance and the types substituted for the parameters.
        """
        params = ft.type_params
        if params:
            # Substitute into what is known *now* (an unknown bound later to a type that
            # mentions the parameters would otherwise escape the instantiation).
            ft = self.resolve(ft)
        if type_args:
            inst = tuple(type_args)
        else:
            inst = tuple(self.fresh_for(p) for p in params)
        mapping = dict(zip(params, inst))
        if mapping:
            mono = FuncType(
                tuple(subst(a, mapping) for a in ft.arg_types), subst(ft.ret_type, mapping)
            )
        else:
            mono = FuncType(ft.arg_types, ft.ret_type)
        for c in ft.type_constraints:
            self.add_relation(
                c.func, tuple(subst(a, mapping) for a in c.args), c.num_inputs, c.attrs, node, label
            )
        return mono, inst

    def fresh_for(self, param: Any) -> IncompleteType:
        """The unknown standing for type parameter ``param`` in an instance."""
        return self.fresh(param.kind)

    def instantiate_for_unify(self, ft: FuncType) -> FuncType:
        return self.instantiate(ft, self.current_node, self.current_label)[0]


def relation_error(e: Exception, rel: Any, label: str, node: Any) -> RelayError:
    """The error to raise when relation ``rel`` raised ``e`` at ``node``."""
    if isinstance(e, RelayTypeError):
        if e.span is not None:
            return e
        span = _span(node)
        attr = getattr(e, "attr", None)  # an AttrValueError: point at that attribute
        if attr:
            span = attr_span(span, attr)
        return RelayTypeError(f"{label}: {e.message}", span, e.notes)
    if isinstance(e, UnifyError):
        return RelayTypeError(f"{label}: {e.reason}", _span(node))
    if isinstance(e, RelayError):
        return e
    if isinstance(e, RecursionError):
        return RelayTypeError(
            f"{label}: the types are too deeply nested for the {relation_name(rel)} relation",
            _span(node),
        )
    # A bug or an unsupported case in a (possibly user-registered) relation.
    return RelayTypeError(
        f"{label}: type relation {relation_name(rel)} failed: {type(e).__name__}: {e}", _span(node)
    )


def _span(node: Any) -> Any:
    return getattr(node, "span", None)


_CLOSE = {"(": ")", "[": "]", "{": "}"}


def _word_char(c: str) -> bool:
    return c.isalnum() or c in "_."


def attr_span(span: Any, name: str) -> Any:
    """The span of ``name=value`` among the call's own attributes, found in the call's
    source text (attribute objects are shared between calls, so they carry no span);
    ``span`` itself when the text does not show it (a call built from Python)."""
    if span is None or span.source is None or not span.end_line:
        return span
    lines = span.source.text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    if span.end_line > len(lines):
        return span
    text = span.source.text
    lo = starts[span.line - 1] + span.column - 1
    hi = starts[span.end_line - 1] + span.end_column - 1
    depth, i, found = 0, lo, None
    while i < hi:  # the last ``name=`` one bracket deep: the call's, not a nested call's
        c = text[i]
        if c in _CLOSE:
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif depth == 1 and text.startswith(name, i) and not _word_char(text[i - 1]):
            j = i + len(name)
            while j < hi and text[j] == " ":
                j += 1
            if j < hi and text[j] == "=":
                found = (i, j + 1)
        i += 1
    if found is None:
        return span
    start, j = found
    while j < hi and text[j] == " ":
        j += 1
    level = 0
    while j < hi:  # the value: up to the comma or parenthesis that ends it
        c = text[j]
        if c in _CLOSE:
            level += 1
        elif c in ")]}":
            if level == 0:
                break
            level -= 1
        elif c == "," and level == 0:
            break
        j += 1

    def line_col(pos: int) -> tuple[int, int]:
        line = bisect.bisect_right(starts, pos) - 1
        return line + 1, pos - starts[line] + 1

    (l1, c1), (l2, c2) = line_col(start), line_col(j)
    return type(span)(span.source, l1, c1, l2, c2)


def describe(t: Any, solver: Optional[TypeSolver] = None) -> str:
    """Text of ``t`` (resolved first when a solver is given)."""
    return type_text(solver.resolve(t) if solver is not None else t)


__all__ = ["TypeSolver", "Pending", "relation_name", "describe"]
