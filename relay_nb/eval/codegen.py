"""The function compiler: one Relay function -> Python source, compiled once by CPython.

Interpreting ``%n * @fact(%n - 1)`` node by node costs a dispatch per node; generating
the Python code ``t3 = v0 - k1; t4 = D2(d + 1, 5, None, t3); return v0 * t4`` once per
function and running it costs one Python operation per node.  The interpreter
(:mod:`relay_nb.eval.interpreter`) asks for two forms of each function:

* the **direct** form ``D<i>(d, s, c, *params)`` calls other functions as Python calls;
  ``d`` is the depth of nested calls, and past a small budget the callee *spills*: it
  runs the rest of the recursion on the trampoline, so Python's stack holds at most the
  budget's worth of Relay calls;
* the **generator** form ``G<i>(d, s, c, *params)`` never calls a non-leaf function
  itself: it ``yield``s the callee's generator to the trampoline and is resumed with the
  result (a tail call ``return``s the callee's generator: the trampoline replaces the frame).

``s`` is the call site (for error messages), ``c`` the closure's captured values.  A tail
call of a function to itself becomes a ``while True`` loop in both forms, and a function
that calls itself once otherwise (``Cons(%h, @range(%i + 1, %n))``) gets the next
:data:`UNROLL` activations inlined: one Python frame or generator runs several.

Semantics kept exactly (the interpreter's docstring lists them): evaluation order, a node
shared in a DAG evaluated once per activation (a node first computed inside one branch
and used again after it is recomputed only if that branch did not run: its temporary
starts as ``_UNSET``), closures capturing at creation, let-bound recursion, ``match`` in
clause order, errors naming the source line.  Scalar ops go through
:mod:`relay_nb.eval.scalar_ops`; every other op through the registry's impl column.

Generated code only ever contains names this module makes up (``t3``, ``v0``, ``k12``):
program text (names, strings) reaches it only as objects in the namespace, so compiling
never executes anything from the program's source.  Functions too large or too deeply
nested for CPython's compiler raise :class:`Unsupported`, and the interpreter runs them
on its node-by-node tier instead.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

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
    Op,
    PatternConstructor,
    PatternTuple,
    PatternVar,
    PatternWildcard,
    RefCreate,
    RefRead,
    RefWrite,
    Tuple,
    TupleGetItem,
    Var,
)
from ..ir.ty import TensorType
from .scalar_ops import scalar_op

MAX_NESTING = 24
"""Nested if/match/let-value levels compiled; deeper functions are interpreted."""

MAX_LINES = 6000
"""Lines of generated code per function; larger functions are interpreted (CPython's
compiler takes ~10 ms per 1,000 lines, more than a large function saves)."""

MAX_PATTERN_DEPTH = 8
"""Deeper patterns are matched by the interpreter's iterative matcher, not inline code."""

UNROLL = 3
"""A function whose body calls itself once (not as a tail call: that is a loop) gets its
body inlined at that call this many times: one Python frame, or one generator on the
trampoline, then runs four Relay activations (``@range``, ``@map``, ``@fact``)."""

MAX_UNROLL_NODES = 64
"""Only bodies this small are unrolled (the code grows by UNROLL copies)."""

_DATAFLOW = (Call, Tuple, TupleGetItem, RefCreate, RefRead, RefWrite)


def _children(e: Expr) -> tuple:
    from ..ir.functor import expr_children

    return expr_children(e)


class Unsupported(Exception):
    """The function is too large or too deeply nested to compile; interpret it."""


def analyze(func: Function) -> tuple[bool, int]:
    """(leaf, size) of ``func``'s body, nested functions aside.  A *leaf* calls nothing but
    ops and constructors: it never recurses, so any caller may call it directly.  The size
    (nodes) tells whether compiling can pay off (see MAX_LINES)."""
    leaf, size = True, 0
    stack: list[Expr] = [func.body]
    seen: set[int] = set()
    while stack:
        e = stack.pop()
        if id(e) in seen:
            continue
        seen.add(id(e))
        size += 1
        t = type(e)
        if t is Function:
            continue  # creating a closure calls nothing
        if t is Call and type(e.op) is not Op and type(e.op) is not Constructor:
            leaf = False
        if t is Call:
            stack.extend(e.args)
        elif t is Let:
            stack.append(e.value)
            stack.append(e.body)
        elif t is If:
            stack.extend((e.cond, e.true_branch, e.false_branch))
        elif t is Match:
            stack.append(e.data)
            stack.extend(c.rhs for c in e.clauses)
        elif t is Tuple:
            stack.extend(e.fields)
        elif t is TupleGetItem:
            stack.append(e.tuple_value)
        elif t is RefCreate:
            stack.append(e.value)
        elif t is RefRead:
            stack.append(e.ref)
        elif t is RefWrite:
            stack.extend((e.ref, e.value))
    return leaf, size


def _scalar_dtype(ty: Any) -> Optional[str]:
    if isinstance(ty, TensorType) and ty.shape == () and isinstance(ty.dtype, str):
        return ty.dtype
    return None


class Codegen:
    """Builds the source of one form of one unit; ``rt`` is the interpreter's runtime.

    ``rt`` provides: ``const(obj) -> name`` (an object in the shared namespace),
    ``site(call) -> int``, ``global_unit(name)``, ``unit(func)``, ``free_vars(func)``,
    ``constant(c)``, ``op_site(call)``, ``global_closure_const(name)``, ``letrec`` (Function
    -> let Var) and ``hook`` (a primitive hook is installed).
    """

    def __init__(self, rt: Any, unit: Any, gen: bool, parent: Optional["Codegen"] = None):
        self.rt, self.unit, self.gen = rt, unit, gen
        # Per activation: what is computed and bound.  An inlined activation (unrolled
        # recursion) has its own, and shares the output and the name counter.
        self.names: dict[Expr, str] = {}
        self.done: set[Expr] = set()
        self.maybe: set[Expr] = set()
        self.vars: dict[Var, str] = {}
        self.logs: list[list[tuple]] = []
        self.loops = False
        if parent is None:
            self.root = self
            self.lines: list[tuple[int, str]] = []
            self.unset: list[str] = []
            self.level = self.depth = self.count = 0
            self.offset = 0  # this activation's depth is d + offset
            self.unroll = 0
        else:
            self.root = parent.root
            self.lines, self.unset = parent.lines, parent.unset
            self.level, self.depth = parent.level, parent.depth
            self.offset = parent.offset + 1
            self.unroll = parent.unroll - 1

    def dx(self, n: int) -> str:
        """The depth of a call made ``n`` levels below this activation."""
        k = self.offset + n
        return f"d + {k}" if k else "d"

    def fresh(self, prefix: str) -> str:
        self.root.count += 1
        return f"{prefix}{self.root.count}"

    # -- output ---------------------------------------------------------------------------
    def emit(self, text: str) -> None:
        self.lines.append((self.level, text))
        if len(self.lines) > MAX_LINES:
            raise Unsupported("function too large to compile")

    def temp(self, node: Expr) -> str:
        name = self.names.get(node)
        if name is None:
            name = self.names[node] = self.fresh("t")
        return name

    def var(self, v: Var) -> str:
        name = self.fresh("v")
        self._log(("var", v, self.vars.get(v)))
        self.vars[v] = name
        return name

    def _log(self, entry: tuple) -> None:
        if self.logs:
            self.logs[-1].append(entry)

    def mark(self, node: Expr) -> None:
        if node not in self.done:
            self.done.add(node)
            self._log(("done", node))

    def branch(self, body: Callable[[], None]) -> None:
        """Emit ``body`` one level in, in a scope: what it computes is only *maybe* computed
        afterwards, and what it binds goes out of scope."""
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise Unsupported("function nested too deeply to compile")
        self.logs.append([])
        self.level += 1
        start = len(self.lines)
        body()
        if len(self.lines) == start:
            self.emit("pass")
        self.level -= 1
        for entry in reversed(self.logs.pop()):
            if entry[0] == "done":
                node = entry[1]
                self.done.discard(node)
                self.maybe.add(node)
            elif entry[2] is None:
                del self.vars[entry[1]]
            else:
                self.vars[entry[1]] = entry[2]
        self.depth -= 1

    # -- the function ---------------------------------------------------------------------
    def build(self) -> str:
        unit, rt = self.unit, self.rt
        func: Function = unit.func
        params = [self.var(p) for p in func.params]
        captured = [(v, self.var(v)) for v in rt.free_vars(func)]
        self.params = params
        if self._unrollable():
            self.unroll = UNROLL
        self.tail(func.body)
        head = "G" if self.gen else "D"
        sig = ", ".join(["d", "s", "c", *params])
        me = rt.const(unit)
        out = [f"def {head}{unit.index}({sig}):"]
        if unit.leaf or self.gen:
            out.append(f"    if d > _M: raise _toodeep({me}, s)")
        else:
            out.append(f"    if d > _B: return _spill({me}, d, s, c, ({''.join(p + ', ' for p in params)}))")
        base = 1
        if self.loops:
            out.append("    while True:")
            base = 2
        pad = "    " * base
        if captured:
            out.append(pad + "try:")
            for v, name in captured:
                out.append(f"{pad}    {name} = c[{rt.const(v)}]")
            out.append(pad + "except (KeyError, TypeError):")
            out.append(f"{pad}    raise _unbound(c, ({''.join(rt.const(v) + ', ' for v, _ in captured)})) from None")
        if self.unset:
            out.append(pad + " = ".join(self.unset) + " = _UNSET")
        out.extend("    " * (base + level) + text for level, text in self.lines)
        if self.gen:
            out.append("    yield  # unreachable: makes the form a generator even without calls")
        return "\n".join(out) + "\n"

    def _unrollable(self) -> bool:
        """Exactly one call of the function to itself in a small body."""
        unit, rt = self.unit, self.rt
        if unit.leaf:
            return False
        calls, nodes = 0, 0
        stack: list[Expr] = [unit.func.body]
        seen: set[int] = set()
        while stack:
            e = stack.pop()
            if id(e) in seen or type(e) is Function:
                continue
            seen.add(id(e))
            nodes += 1
            if nodes > MAX_UNROLL_NODES:
                return False
            if type(e) is Call and type(e.op) is GlobalVar and rt.global_unit(e.op.name_hint) is unit:
                calls += 1
            if type(e) is Match:
                stack.append(e.data)
                stack.extend(c.rhs for c in e.clauses)
            else:
                stack.extend(c for c in _children(e) if type(c) is not Var)
        return calls == 1

    def inline_self(self, call: Call, name: str) -> None:
        """``@f(args)`` inside ``@f``: the next activation's code, inline."""
        rt = self.rt
        func: Function = self.unit.func
        child = Codegen(rt, self.unit, self.gen, parent=self)
        for p, a in zip(func.params, call.args):
            child.vars[p] = self.ref(a)
        self.emit(f"if {self.dx(1)} > _M: raise _toodeep({rt.const(self.unit)}, {rt.site(call)})")
        result = child.value(func.body)
        self.emit(f"{name} = {result}")

    # -- values ---------------------------------------------------------------------------
    def trivial(self, e: Expr) -> Optional[str]:
        """The Python name of a value that needs no statement, or None."""
        t = type(e)
        if t is Var:
            name = self.vars.get(e)
            if name is None:
                self.emit(f"raise _unbound_var({self.rt.const(e)})")
                return "None"
            return name
        if t is Constant:
            return self.rt.const(self.rt.constant(e))
        if t is Op or t is Constructor:
            return self.rt.const(e)
        if t is GlobalVar:
            name = self.rt.global_closure_const(e)
            if name is None:
                self.emit(f"raise _cannot({self.rt.const(e)})")
                return "None"
            return name
        return None

    def value(self, root: Expr) -> str:
        """Emit the statements computing ``root``; the name holding its value."""
        name = self.trivial(root)
        if name is not None:
            return name
        if root in self.done:
            return self.names[root]
        stack: list[tuple[Expr, bool]] = [(root, False)]
        while stack:
            node, expanded = stack.pop()
            if expanded:
                self.dataflow(node)
                continue
            if node in self.done or self.trivial(node) is not None:
                continue
            if node in self.maybe:
                self.lazy(node)
            elif type(node) in _DATAFLOW:
                stack.append((node, True))
                stack.extend((child, False) for child in reversed(self.operands(node)))
            else:
                self.control(node)
        return self.names[root]

    def ref(self, e: Expr) -> str:
        name = self.trivial(e)
        return name if name is not None else self.names[e]

    def lazy(self, node: Expr) -> None:
        """A node maybe computed in an earlier branch: compute it unless that branch ran."""
        name = self.names[node]
        if name not in self.unset:
            self.unset.append(name)  # starts as _UNSET at the top of the function
        self.emit(f"if {name} is _UNSET:")
        self.maybe.discard(node)
        self.branch(lambda: self.value(node))
        self.maybe.add(node)
        self.mark(node)

    def operands(self, e: Expr) -> tuple[Expr, ...]:
        t = type(e)
        if t is Call:
            kind = self.callee(e)[0]
            return (e.op, *e.args) if kind == "dynamic" else e.args
        if t is Tuple:
            return e.fields
        if t is TupleGetItem:
            return (e.tuple_value,)
        if t is RefCreate:
            return (e.value,)
        if t is RefRead:
            return (e.ref,)
        return (e.ref, e.value)  # RefWrite: the reference first

    def callee(self, call: Call) -> tuple[str, Any]:
        """How a call is made: ("op"|"ctor"|"unit"|"dynamic"|"error", detail)."""
        op, rt = call.op, self.rt
        t = type(op)
        if t is Op:
            return "op", op
        if t is Constructor:
            return "ctor", op
        if t is GlobalVar:
            unit = rt.global_unit(op.name_hint)
            if unit is None or (unit.prim and rt.hook):
                return "dynamic", op  # a missing global fails when evaluated; kernels via the hook
            return "unit", unit
        if t is Function and not rt.free_vars(op) and not (op.is_primitive and rt.hook):
            return "unit", rt.unit(op)
        return "dynamic", op

    def args_text(self, call: Call) -> str:
        return "".join(self.ref(a) + ", " for a in call.args)

    def dataflow(self, e: Expr) -> None:
        rt, t = self.rt, type(e)
        name = self.temp(e)
        if t is Call:
            self.call(e, name)
        elif t is Tuple:
            self.emit(f"{name} = ({''.join(self.ref(f) + ', ' for f in e.fields)})")
        elif t is TupleGetItem:
            x, i = self.ref(e.tuple_value), e.index
            self.emit(f"{name} = {x}[{i}] if type({x}) is tuple and len({x}) > {i} else _proj({x}, {rt.const(e)})")
        elif t is RefCreate:
            self.emit(f"{name} = _Ref({self.ref(e.value)})")
        elif t is RefRead:
            x = self.ref(e.ref)
            self.emit(f"{name} = {x}.value if type({x}) is _Ref else _refread({x}, {rt.const(e)})")
        else:  # RefWrite
            r, v = self.ref(e.ref), self.ref(e.value)
            self.emit(f"if type({r}) is not _Ref: _refwrite({r}, {rt.const(e)})")
            self.emit(f"{r}.value = {v}")
            self.emit(f"{name} = ()")
        self.mark(e)

    def call(self, call: Call, name: str) -> None:
        rt = self.rt
        kind, what = self.callee(call)
        args = self.args_text(call)
        if kind == "op":
            fast = self.fast_op(call)
            names = [self.ref(a) for a in call.args]
            if fast is not None and fast.template is not None:
                self.emit(f"{name} = {fast.template.format(*names)}")
            elif fast is not None:
                self.emit(f"{name} = {rt.const(fast.fn)}({args})")
            else:
                self.emit(f"{name} = {rt.op_site(call)}({args})")
        elif kind == "ctor":
            if len(what.inputs) != len(call.args):
                self.emit(f"raise _ctor_arity({rt.const(what)}, {len(call.args)}, {rt.site(call)})")
            elif not call.args:
                # A nullary value (Nil) has nothing to tell instances apart: share one.
                self.emit(f"{name} = {rt.const(rt.nullary(what))}")
                return
            # ConstructorValue(...) without the __init__ call: the hottest allocation of ADT code.
            self.emit(f"{name} = _new(_CV)")
            self.emit(f"{name}.constructor = {rt.const(what)}")
            self.emit(f"{name}.fields = ({args})")
        elif kind == "unit":
            site = rt.site(call)
            if not self.arity_ok(what, call, site):
                return
            if what is self.unit and self.unroll > 0:
                self.inline_self(call, name)
                return
            c = "_E" if type(call.op) is Function else "None"
            if not self.gen or what.leaf:
                self.emit(f"{name} = D{what.index}({self.dx(1)}, {site}, {c}, {args})")
            else:
                self.emit(f"{name} = yield G{what.index}({self.dx(1)}, {site}, {c}, {args})")
        else:
            f = self.ref(call.op)
            site = rt.site(call)
            if not self.gen:
                self.emit(f"{name} = _calld({self.dx(1)}, {site}, {f}, ({args}))")
            else:
                self.emit(f"{name} = _callg({self.dx(1)}, {site}, {f}, ({args}))")
                self.emit(f"if type({name}) is _GEN: {name} = yield {name}")

    def arity_ok(self, unit: Any, call: Call, site: int) -> bool:
        if unit.nparams == len(call.args):
            return True
        self.emit(f"raise _arity({self.rt.const(unit)}, {len(call.args)}, {site})")
        return False

    def fast_op(self, call: Call) -> Any:
        out = _scalar_dtype(call._checked_type)
        if out is None:
            return None
        dtypes = tuple(_scalar_dtype(a._checked_type) for a in call.args)
        if None in dtypes:
            return None
        return scalar_op(call.op.name, dtypes, out, call.attrs)  # type: ignore[arg-type]

    # -- control --------------------------------------------------------------------------
    def control(self, e: Expr) -> None:
        """If, Match, Let, Function (and nodes that cannot run) in value position."""
        rt, t = self.rt, type(e)
        name = self.temp(e)
        if t is Function:
            self.emit(f"{name} = {self.closure(e, '')}")
        elif t is Let:
            body = self.lets(e)
            self.nested(lambda: self.emit(f"{name} = {self.value(body)}"))
        elif t is If:
            cond = self.cond(e)
            self.emit(f"if {cond}:")
            self.branch(lambda: self.emit(f"{name} = {self.value(e.true_branch)}"))
            self.emit("else:")
            self.branch(lambda: self.emit(f"{name} = {self.value(e.false_branch)}"))
        elif t is Match:
            self.match(e, name)
        else:
            self.emit(f"raise _cannot({rt.const(e)})")
            self.emit(f"{name} = None")
        self.mark(e)

    def nested(self, body: Callable[[], None]) -> None:
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise Unsupported("function nested too deeply to compile")
        body()
        self.depth -= 1

    def closure(self, func: Function, label: str) -> str:
        rt = self.rt
        env = ", ".join(f"{rt.const(v)}: {self.vars[v]}" for v in rt.free_vars(func) if v in self.vars)
        return f"_Closure({rt.const(func)}, {{{env}}}, {rt.const(label)}, _CB)"

    def lets(self, e: Expr) -> Expr:
        """Bind a chain of lets (a loop, not recursion); the first non-let body."""
        rt = self.rt
        while type(e) is Let:
            value = e.value
            if type(value) is Function and value not in self.done:
                # let %f = fn ...: the closure sees itself (let-bound recursion).
                rt.letrec[value] = e.var
                name = self.temp(value)
                self.emit(f"{name} = {self.closure(value, '%' + e.var.name_hint)}")
                self.mark(value)
                var = self.var(e.var)
                self.emit(f"{var} = {name}")
                self.emit(f"{name}.env[{rt.const(e.var)}] = {name}")
            else:
                result = [""]
                self.nested(lambda: result.__setitem__(0, self.value(value)))
                var = self.var(e.var)
                self.emit(f"{var} = {result[0]}")
            e = e.body
        return e

    def cond(self, ite: If) -> str:
        c = self.value(ite.cond)
        if _scalar_dtype(ite.cond._checked_type) == "bool":
            return c  # a numpy bool (or 0-d bool array): Python's truth test is the test
        return f"{c} is _T or ({c} is not _F and _cond({c}, {self.rt.const(ite)}))"

    def match(self, m: Match, target: Optional[str]) -> None:
        rt = self.rt
        data = self.value(m.data)
        keyword = "if"
        total = False
        for clause in m.clauses:
            test, binds = self.pattern(clause.lhs, data)
            if test is None:
                self.emit("else:" if keyword == "elif" else "if True:")
                total = True
            else:
                self.emit(f"{keyword} {test}:")
                keyword = "elif"

            def body(clause: Any = clause, binds: list = binds) -> None:
                for v, path in binds:
                    self.emit(f"{self.var(v)} = {path}")
                if target is None:
                    self.tail(clause.rhs)
                else:
                    self.emit(f"{target} = {self.value(clause.rhs)}")

            self.branch(body)
            if total:
                break
        if not total:
            self.emit("else:" if keyword == "elif" else "if True:")
            self.branch(lambda: self.emit(f"raise _nomatch({rt.const(m)}, {data})"))

    def pattern(self, pattern: Any, data: str) -> tuple[Optional[str], list[tuple[Var, str]]]:
        """An inline test (None: always matches) and the bindings of one clause."""
        rt = self.rt
        conds: list[str] = []
        binds: list[tuple[Var, str]] = []
        stack = [(pattern, data, 0)]
        while stack:
            p, x, depth = stack.pop()
            if depth > MAX_PATTERN_DEPTH:
                b = self.fresh("b")
                test = f"({b} := _match({rt.const(pattern)}, {data})) is not None"
                from ..ir.functor import pattern_vars

                return test, [(v, f"{b}[{rt.const(v)}]") for v in pattern_vars(pattern)]
            tp = type(p)
            if tp is PatternWildcard:
                continue
            if tp is PatternVar:
                binds.append((p.var, x))
            elif tp is PatternConstructor:
                ctor = p.constructor
                conds.append(f"type({x}) is _CV")
                conds.append(f"({x}.constructor is {rt.const(ctor)} or {x}.constructor.name_hint == {rt.const(ctor.name_hint)})")
                fields = f"{x}.fields"
                if p.patterns:
                    fields = self.fresh("f")  # read .fields once
                    conds.append(f"len({fields} := {x}.fields) == {len(p.patterns)}")
                stack.extend((sub, f"{fields}[{i}]", depth + 1) for i, sub in reversed(list(enumerate(p.patterns))))
            elif tp is PatternTuple:
                conds.append(f"type({x}) is tuple and len({x}) == {len(p.patterns)}")
                stack.extend((sub, f"{x}[{i}]", depth + 1) for i, sub in reversed(list(enumerate(p.patterns))))
            else:
                conds.append(f"_badpattern({rt.const(p)})")
        return (" and ".join(conds) if conds else None), binds

    # -- tail position ----------------------------------------------------------------------
    def tail(self, e: Expr) -> None:
        """Emit code that returns the value of ``e`` (calls here are tail calls)."""
        while True:
            t = type(e)
            if e in self.done or e in self.maybe or self.trivial(e) is not None:
                self.emit(f"return {self.value(e)}")
                return
            if t is Let:
                e = self.lets(e)
                continue
            if t is If:
                cond = self.cond(e)
                self.emit(f"if {cond}:")
                self.branch(lambda: self.tail(e.true_branch))
                self.emit("else:")
                self.branch(lambda: self.tail(e.false_branch))
                return
            if t is Match:
                self.match(e, None)
                return
            if t is Call and self.callee(e)[0] in ("unit", "dynamic"):
                self.tail_call(e)
                return
            if t is Call and type(e.op) is Op:
                fast = self.fast_op(e)
                if fast is not None and fast.template is not None:
                    names = [self.value(a) for a in e.args]  # left to right, as always
                    self.emit(f"return {fast.template.format(*names)}")
                    return
            self.emit(f"return {self.value(e)}")
            return

    def tail_call(self, call: Call) -> None:
        rt = self.rt
        kind, what = self.callee(call)
        f = self.value(call.op) if kind == "dynamic" else ""
        names = [self.value(a) for a in call.args]
        args = "".join(n + ", " for n in names)
        site = rt.site(call)
        if kind == "unit":
            if not self.arity_ok(what, call, site):
                return
            if what is self.unit:
                self.loop(names)
                return
            c = "_E" if type(call.op) is Function else "None"
            if not self.gen:
                self.emit(f"return D{what.index}(d + 1, {site}, {c}, {args})")
            elif what.leaf:
                self.emit(f"return D{what.index}(d, {site}, {c}, {args})")
            else:
                self.emit(f"return G{what.index}(d, {site}, {c}, {args})")
            return
        if type(call.op) is Var and call.op is self.unit.self_var and len(names) == self.unit.nparams:
            # %f(...) in tail position inside %f's own body: loop (with %f's environment).
            self.emit(f"if type({f}) is _Closure and {f}.func is {rt.const(self.unit.func)}:")
            self.level += 1
            self.emit(f"c = {f}.env")
            self.loop(names)
            self.level -= 1
        if not self.gen:
            self.emit(f"return _calld(d + 1, {site}, {f}, ({args}))")
        else:
            self.emit(f"return _callg(d, {site}, {f}, ({args}))")

    def loop(self, names: list[str]) -> None:
        """A self tail call: rebind the parameters and start over."""
        self.loops = True
        if self.params:
            self.emit(f"{', '.join(self.params)} = {', '.join(names)}")
        self.emit("continue")


__all__ = ["Codegen", "Unsupported", "analyze", "MAX_NESTING", "MAX_LINES"]
