"""Dataflow (graph) form to A-normal form: every computed value gets a ``let``.

Input: any well-formed expression (graph form, A-normal form, or a mix; a DAG may share
nodes across scopes).  Output: the same program in A-normal form —

* every non-atomic sub-expression is bound by a ``let`` **once**; the operands of calls,
  tuples, projections, references, ``if`` conditions and ``match`` scrutinees are atoms;
* the atoms are variables, global variables, constants (``meta`` ones too), operators and
  constructors (unlike TVM, which also let-binds constants);
* every scope (function body, ``if`` branch, ``match`` arm, the whole expression) ends in
  an atom: ``let %x1 = add(%a, %b); %x1``;
* a DAG stays a DAG: a node used *n* times is computed once and its variable used *n*
  times (seed 004's ``Map<Expr, Result>``);
* existing ``let``s keep their variable: ``let %a = log(%x); ...`` stays
  ``let %a = log(%x); ...``; new variables are named ``x`` (the printer writes them
  ``%x``, ``%x1``, ``%x2`` ..., as TVM's printouts show them);
* nested functions marked ``Primitive`` (fused kernels) or ``Compiler`` are kept as they
  are (bound to a variable, bodies untouched), as TVM does; pass-internal TempExprs are
  left in place as atoms;
* new nodes carry the ``checked_type`` of the node they replace, and new variables that
  of their value (a cache, not an annotation), so a typed program prints typed.

Where a shared value is bound: the placement rule
--------------------------------------------------
A dataflow graph does not say *where* a shared value is computed (seed 004, "Why We Might
Need Let Binding"); A-normal form must.  Scopes form a tree: the expression being
converted is the root scope, and every function body, ``if`` branch and ``match`` arm is
a child of the scope its node is bound in (a ``let``'s body is a scope too, see below).

1. **A value is bound in the innermost scope that encloses all of its uses** — the lowest
   common ancestor, in that tree, of the scopes of its uses.  So a value used in both
   branches of an ``if`` (or in two ``match`` arms) is bound before the ``if``; a value
   used in only one branch is bound inside that branch; a value used only inside a
   closure is bound inside the closure, i.e. where it is *computed* — each time the
   closure runs, as the tree reading of the program computes it.  We never hoist a
   computation out of a function body or a branch: that could evaluate something the
   program does not (``def @f(%n) { fn () { @f(%n) } }`` returns a thunk; hoisting
   ``@f(%n)`` out of it would loop forever), and it would move side effects of
   ``ref_write``.  The price of rule 1 is the usual one of common sub-expressions: a
   value shared between a branch and a closure inside the other branch is computed before
   the ``if`` even on the path that never calls the closure (TVM's ToANormalForm places
   values the same way).
2. **Within its scope, a value is bound where it is first needed in evaluation order**
   (operands left to right, then the callee, then the node), so ``let``s appear in the
   order the program computes them, and effects keep their order.
3. **Never outside the scope of its free variables.**  A ``let``'s variable is visible in
   the ``let``'s body (and in its own value, for recursive functions); every use of a
   value that reads the variable lies in that scope, so their LCA does too and rule 1
   already keeps the value inside.  A ``let`` is
   flattened: its value and then its body's bindings are spliced into the scope the
   ``let`` itself is bound in, after which rule 2 places every value that uses the
   variable after the variable's binding.  The one program rule 1 cannot place is a node
   that uses a recursive function's variable and is shared between that function's body
   and the ``let``'s body (no single binding site sees both); it raises a RelayError
   instead of producing a program that reads a variable before its binding.

The conversion is two linear passes, neither recursive: scopes are assigned in reverse
post order (every node after all of its users, so the LCA over its uses is final when
the node is reached), then the program is rebuilt by generators driven from an explicit
stack, appending each binding to its scope's list.  A 100,000-deep ``let`` chain or
dataflow chain converts at Python's default recursion limit.
"""

from __future__ import annotations

from collections.abc import Iterator
from operator import is_not as _is_not
from typing import Any, Optional

from ..errors import RelayError
from ..ir.expr import (
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
    RefCreate,
    RefRead,
    RefWrite,
    Tuple,
    TupleGetItem,
    Var,
)

_COMPOUND = (Call, Tuple, TupleGetItem, Function, Let, If, Match, RefCreate, RefRead, RefWrite)
_KIND: dict[type, Any] = {k: k for k in _COMPOUND}
for _atom in (Var, GlobalVar, Constant, Op, Constructor, MetaRef):
    _KIND[_atom] = None


_UNKNOWN = object()


def _kind(t: type) -> Any:
    """The compound node class ``t`` converts as, or None for atoms (and TempExprs)."""
    try:
        return _KIND[t]
    except KeyError:
        k = next((base for base in t.__mro__ if base in _COMPOUND), None)
        _KIND[t] = k
        return k


# Let values that may hold a closure referring to the let's own variable (recursion).
_MAY_RECURSE = frozenset((Function, Let, If, Match))
# Nodes that open scopes or splice them (a let): a program without them is one scope.
_SCOPING = frozenset((Function, Let, If, Match))


def _opaque(fn: Function) -> bool:
    """Fused kernels and external functions keep their bodies (TVM skips them too)."""
    attrs = fn.attrs
    return bool(attrs.get("Primitive", 0)) or "Compiler" in attrs


def _kids(node: Expr, k: type) -> tuple:
    if k is Call:
        return (*node.args, node.op)
    if k is Tuple:
        return node.fields
    if k is TupleGetItem:
        return (node.tuple_value,)
    if k is Let:
        return (node.value, node.body)
    if k is Function:
        return () if _opaque(node) else (node.body,)
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


def to_a_normal_form(expr: Expr) -> Expr:
    """``expr`` in A-normal form (see the module docstring for where values are bound).

    A Function keeps its parameters and attributes and gets an A-normal-form body; any
    other expression is converted as a whole.  Pure: ``expr`` is not modified, and nodes
    that need no change are reused.

    >>> x = relay.var("x", shape=(2, 3))
    >>> y = relay.log(x)
    >>> print(to_a_normal_form(relay.Function([x], relay.add(y, y))).astext())
    #[version = "0.0.5"]
    fn (%x: Tensor[(2, 3), float32]) {
      let %x1 = log(%x);
      let %x2 = add(%x1, %x1);
      %x2
    }
    """
    from ..util import paused_gc

    with paused_gc():
        return _convert(expr)


def _convert(expr: Expr, origin: dict[Expr, Expr] | None = None) -> Expr:
    """The conversion; ``origin`` (the ANF view's) also gets ``{new node: original}``."""
    if isinstance(expr, Function):
        body = expr.body
        if _kind(type(body)) is None:
            return expr
        new_body = _Converter(body, origin).run()
        new = Function(
            expr.params, new_body, expr.ret_type, expr.type_params, expr.attrs, span=expr.span
        )
        if expr._checked_type is not None:
            new.set_checked_type(expr._checked_type)
        if origin is not None:
            origin[new] = expr
        return new
    if not isinstance(expr, Expr):
        raise RelayError(f"to_a_normal_form expects a Relay expression, got {type(expr).__name__}")
    if _kind(type(expr)) is None:
        return expr
    return _Converter(expr, origin).run()


def _typed_binding(node: Expr, value: Expr, var: Optional[Var] = None) -> Var:
    """``var`` (a new ``%x`` when None) to bind ``node``'s converted ``value`` to: a new
    variable and a rebuilt value carry ``node``'s checked type (a cache, so the printer
    shows it).  Types are set as ``Expr.set_checked_type`` does, without its call."""
    ty = node._checked_type
    if var is None:
        var = Var("x", span=node.span)
        if ty is not None:
            object.__setattr__(var, "_checked_type", ty)
    if ty is not None and value is not node and value._checked_type is None:
        object.__setattr__(value, "_checked_type", ty)
    return var


class _Converter:
    """One conversion: the scope tree, the placement of every node, the rebuilt program."""

    def __init__(self, root: Expr, origin: dict[Expr, Expr] | None = None) -> None:
        self.root = root
        self.origin = origin  # bound value / its variable -> the node it replaces
        self.parent = [-1]  # scope id -> parent scope id (0 is the root scope)
        self.depth = [0]
        self.scope_of: dict[Expr, int] = {root: 0}
        self.subs: dict[Expr, tuple[int, ...]] = {}  # If / Function / Match -> child scopes
        self.memo: dict[Expr, Expr] = {}  # converted node -> its atom
        self.name_for: dict[Expr, Var] = {}  # value -> the let variable that binds it
        self.lists: dict[int, list] = {}  # open scope -> its bindings so far
        self.pending: dict[Var, int] = {}  # let var whose value converts -> its scope depth
        self.order, self.flat = self._post_order()
        if not self.flat:
            self._assign_scopes()

    # -- pass 1: scopes ----------------------------------------------------------------
    def _new_scope(self, parent: int) -> int:
        self.parent.append(parent)
        self.depth.append(self.depth[parent] + 1)
        return len(self.parent) - 1

    def _lca(self, a: int, b: int) -> int:
        parent, depth = self.parent, self.depth
        while depth[a] > depth[b]:
            a = parent[a]
        while depth[b] > depth[a]:
            b = parent[b]
        while a != b:
            a, b = parent[a], parent[b]
        return a

    def _post_order(self) -> tuple[list[Expr], bool]:
        """The compound nodes in post order (children before parents, operands left to
        right: the order the rebuild binds them in), and whether there is no let, ``if``,
        ``match`` or (non-opaque) function among them: then there is one scope and the
        rebuild is a loop over this order (:meth:`_run_flat`)."""
        kinds = _KIND
        # Iteratively: a node is pushed once to be expanded and, above its children,
        # once more (in ``finish``) to be emitted after them.
        order: list[Expr] = []
        seen: set[Expr] = set()
        stack: list[Expr] = [self.root]
        finish: list[bool] = [False]
        flat = True
        while stack:
            node = stack.pop()
            if finish.pop():
                order.append(node)
                continue
            if node in seen:
                continue
            seen.add(node)
            stack.append(node)
            finish.append(True)
            k = kinds.get(type(node), _UNKNOWN)
            if k is _UNKNOWN:
                k = _kind(type(node))
            if k is Call:
                kids = (*node.args, node.op)
            else:
                kids = _kids(node, k)
                if flat and k in _SCOPING and (k is not Function or kids):
                    flat = False
            for c in reversed(kids):
                kc = kinds.get(type(c), _UNKNOWN)
                if kc is None or c in seen:
                    continue
                if kc is _UNKNOWN and _kind(type(c)) is None:
                    continue
                stack.append(c)
                finish.append(False)
        return order, flat

    def _assign_scopes(self) -> None:
        kinds = _KIND
        # Reverse post order: a node comes after every node that uses it, so the LCA of
        # its uses' scopes is complete when we reach it.
        scope_of, subs, lca = self.scope_of, self.subs, self._lca

        def use(child: Expr, scope: int) -> None:
            if kinds.get(type(child), _UNKNOWN) is None or _kind(type(child)) is None:
                return
            old = scope_of.get(child)
            scope_of[child] = scope if old is None or old == scope else lca(old, scope)

        for node in reversed(self.order):
            s = scope_of[node]
            k = _kind(type(node))
            if k is If:
                a, b = self._new_scope(s), self._new_scope(s)
                subs[node] = (a, b)
                use(node.cond, s)
                use(node.true_branch, a)
                use(node.false_branch, b)
            elif k is Function:
                if not _opaque(node):
                    a = self._new_scope(s)
                    subs[node] = (a,)
                    use(node.body, a)
            elif k is Match:
                use(node.data, s)
                ids = tuple(self._new_scope(s) for _ in node.clauses)
                subs[node] = ids
                for clause, sid in zip(node.clauses, ids):
                    use(clause.rhs, sid)
            else:
                # A let's value and body are evaluated in the let's own scope (its body
                # is flattened into it); dataflow operands in the node's scope.
                for c in _kids(node, k):
                    if kinds.get(type(c), _UNKNOWN) is None:
                        continue
                    old = scope_of.get(c)
                    if old is None or old == s:
                        scope_of[c] = s
                    elif _kind(type(c)) is not None:
                        scope_of[c] = lca(old, s)

    # -- pass 2: rebuild -----------------------------------------------------------------
    def run(self) -> Expr:
        self.lists[0] = bindings = []
        atom = self._run_flat(bindings) if self.flat else self._drive(self.root)
        return self._wrap(bindings, atom)

    def _run_flat(self, bindings: list) -> Expr:
        """The rebuild of a program that is one scope (dataflow nodes and opaque
        functions only): each node in post order, which is the order :meth:`_drive`
        binds them in, with its operands' atoms; what :meth:`_bind` does, without its
        let variables to reuse and pending checks (a flat program has none).  Returns the
        root's atom."""
        memo, origin = self.memo, self.origin
        kinds = _KIND
        memo_get = memo.get
        typed_binding = _typed_binding
        var = None
        for node in self.order:
            k = kinds.get(type(node), _UNKNOWN)
            if k is _UNKNOWN:
                k = _kind(type(node))
            value = node
            if k is Call:
                op, args = node.op, node.args
                new_op = memo_get(op, op)
                new_args = [memo_get(a, a) for a in args]
                if new_op is not op or any(map(_is_not, new_args, args)):
                    value = Call(new_op, tuple(new_args), node.attrs, node.type_args, span=node.span)
            elif k is Tuple:
                fields = node.fields
                new_fields = [memo_get(f, f) for f in fields]
                if any(map(_is_not, new_fields, fields)):
                    value = Tuple(tuple(new_fields), span=node.span)
            elif k is TupleGetItem:
                t = node.tuple_value
                new_t = memo_get(t, t)
                if new_t is not t:
                    value = TupleGetItem(new_t, node.index, span=node.span)
            elif k is not Function:  # references; an opaque function is kept as it is
                olds = _kids(node, k)
                news = [memo_get(o, o) for o in olds]
                if any(map(_is_not, news, olds)):
                    if k is RefCreate:
                        value = RefCreate(news[0], span=node.span)
                    elif k is RefRead:
                        value = RefRead(news[0], span=node.span)
                    else:
                        value = RefWrite(news[0], news[1], span=node.span)
            var = typed_binding(node, value)
            bindings.append((var, value))
            memo[node] = var
            if origin is not None:
                origin.setdefault(value, node)
                origin[var] = node
        return var

    def _drive(self, root: Expr) -> Expr:
        """Convert ``root`` with generators on an explicit stack; returns its atom.

        A generator yields a sub-expression and is resumed with that sub-expression's
        atom; atoms and converted nodes are answered at once.
        """
        memo = self.memo
        stack: list[tuple[Iterator, Expr]] = [(self._start(root), root)]
        value: Any = None
        while stack:
            gen, node = stack[-1]
            try:
                child = gen.send(value)
            except StopIteration as stop:
                stack.pop()
                value = memo[node] = stop.value
                continue
            value = memo.get(child)
            if value is None:
                k = _kind(type(child))
                if k is None:
                    value = child
                elif k is Call:
                    # Fast path: a call whose operands are atoms or converted already.
                    value = self._quick_call(child)
                    if value is None:
                        stack.append((self._start(child), child))
                    else:
                        memo[child] = value
                else:
                    stack.append((self._start(child), child))
        return value

    def _quick_call(self, node: Call):
        memo, kinds = self.memo, _KIND
        news = []
        changed = False
        for o in (*node.args, node.op):
            if kinds.get(type(o), _UNKNOWN) is None:
                news.append(o)
                continue
            a = memo.get(o)
            if a is None:
                return None
            news.append(a)
            changed = True
        if not changed:
            return self._bind(node, node)
        new = Call(news[-1], tuple(news[:-1]), node.attrs, node.type_args, span=node.span)
        return self._bind(node, new)

    def _start(self, node: Expr) -> Iterator:
        k = _kind(type(node))
        if k is Let:
            return self._g_let(node)
        if k is If:
            return self._g_if(node)
        if k is Function:
            return self._g_function(node)
        if k is Match:
            return self._g_match(node)
        return self._g_dataflow(node, k)

    def _bind(self, node: Expr, value: Expr) -> Var:
        """Bind the converted ``value`` of ``node`` in ``node``'s scope; its variable."""
        var = self.name_for.pop(node, None)
        if var is not None:
            self.pending.pop(var, None)  # bound from here on: no longer being defined
        var = _typed_binding(node, value, var)
        sid = self.scope_of[node]
        if self.pending:
            self._check_pending(node, value, sid)
        self.lists[sid].append((var, value))
        origin = self.origin
        if origin is not None:
            origin.setdefault(value, node)
            origin.setdefault(var, node)
        return var

    def _check_pending(self, node: Expr, value: Expr, sid: int) -> None:
        depth = self.depth[sid]
        k = _kind(type(value))
        operands = _kids(value, k) if k not in (If, Match, Function, Let) else ()
        if k is If:
            operands = (value.cond,)
        elif k is Match:
            operands = (value.data,)
        for o in operands:
            d = self.pending.get(o) if type(o) is Var else None
            if d is not None and d >= depth:
                raise RelayError(
                    f"to_a_normal_form: a node using %{o.name_hint} is shared between the body "
                    f"of the recursive function bound to %{o.name_hint} and the let that binds "
                    "it; no single binding site can see both uses",
                    node.span,
                )

    def _wrap(self, bindings: list, atom: Expr) -> Expr:
        body = atom
        ty = atom._checked_type
        if ty is None:
            for var, value in reversed(bindings):
                body = Let(var, value, body)
            return body
        set_type = object.__setattr__  # Expr.set_checked_type without its call
        for var, value in reversed(bindings):
            body = Let(var, value, body)
            set_type(body, "_checked_type", ty)
        return body

    def _block(self, expr: Expr, sid: int):
        """Convert ``expr`` as the whole of scope ``sid``; returns the let-wrapped result."""
        bindings = self.lists[sid] = []
        atom = yield expr
        del self.lists[sid]
        return self._wrap(bindings, atom)

    def _g_dataflow(self, node: Expr, k: type):
        memo, kinds = self.memo, _KIND
        olds = _kids(node, k)  # a Call's are (*args, op): evaluation order
        news = []
        changed = False
        for o in olds:
            if kinds.get(type(o), _UNKNOWN) is None:
                news.append(o)  # an atom: no round trip through the driver
                continue
            a = memo.get(o)
            if a is None:
                a = yield o
            news.append(a)
            changed = changed or a is not o
        if not changed:
            return self._bind(node, node)
        span = node.span
        if k is Call:
            new = Call(news[-1], tuple(news[:-1]), node.attrs, node.type_args, span=span)
        elif k is Tuple:
            new = Tuple(tuple(news), span=span)
        elif k is TupleGetItem:
            new = TupleGetItem(news[0], node.index, span=span)
        elif k is RefCreate:
            new = RefCreate(news[0], span=span)
        elif k is RefRead:
            new = RefRead(news[0], span=span)
        elif k is RefWrite:
            new = RefWrite(news[0], news[1], span=span)
        else:  # pragma: no cover - every compound kind is handled
            raise RelayError(f"to_a_normal_form: cannot convert a {type(node).__name__}")
        return self._bind(node, new)

    def _g_if(self, node: If):
        cond = yield node.cond
        a, b = self.subs[node]
        then = yield from self._block(node.true_branch, a)
        other = yield from self._block(node.false_branch, b)
        return self._bind(node, If(cond, then, other, span=node.span))

    def _g_function(self, node: Function):
        if node not in self.subs:  # opaque (Primitive / Compiler): kept as it is
            return self._bind(node, node)
        body = yield from self._block(node.body, self.subs[node][0])
        new = Function(
            node.params, body, node.ret_type, node.type_params, node.attrs, span=node.span
        )
        return self._bind(node, new)

    def _g_match(self, node: Match):
        data = yield node.data
        clauses = []
        for clause, sid in zip(node.clauses, self.subs[node]):
            rhs = yield from self._block(clause.rhs, sid)
            clauses.append(Clause(clause.lhs, rhs, span=clause.span))
        return self._bind(node, Match(data, tuple(clauses), node.complete, span=node.span))

    def _g_let(self, node: Let):
        """A let chain, flattened into the scopes its lets are bound in; returns the
        atom of its final body."""
        memo, scope_of, pending, name_for = self.memo, self.scope_of, self.pending, self.name_for
        chain = []
        while True:
            chain.append(node)
            s = scope_of[node]
            var, value = node.var, node.value
            if _kind(type(value)) is None:
                self._push(s, var, value)
            else:
                atom = memo.get(value)
                if atom is None:
                    # Bind the value (for a let-valued let: the result of its chain)
                    # directly to the let's variable when it is first computed here.
                    target = value
                    while type(target) is Let and target not in memo:
                        target = target.body
                    if (
                        target not in memo
                        and _kind(type(target)) is not None
                        and type(target) is not Let
                        and scope_of[target] == s
                        and target not in name_for
                    ):
                        name_for[target] = var
                    if type(value) in _MAY_RECURSE:
                        pending[var] = self.depth[s]
                        atom = yield value
                        pending.pop(var, None)
                    else:
                        atom = yield value
                if atom is not var:
                    self._push(s, var, atom)
            body = node.body
            if type(body) is Let and body not in memo:
                node = body
                continue
            break
        result = yield body
        for inner in chain[1:]:
            memo[inner] = result
        return result

    def _push(self, sid: int, var: Var, value: Expr) -> None:
        self.lists[sid].append((var, value))


__all__ = ["to_a_normal_form"]
