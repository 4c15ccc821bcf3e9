"""Answer checks for the relay_nb course notebooks.

Each ``check_*`` function takes the student's answer (a variable of the notebook), tests it
against an *independent* oracle — numpy, the reference interpreter on inputs it picks, a
Python model of the same function — and prints either ``✅ correct`` or ``❌ not yet:``
with a hint.  It returns a :class:`Verdict`, true when correct, so a cell can also ``assert`` it.  It never
raises on a wrong answer: a student's Relay error becomes part of the hint.

The notebooks import it from their own folder (``from checks import ...``).
"""

from __future__ import annotations

import math
from typing import Any, Callable, Iterable, Optional

import numpy as np

import relay_nb as relay

OK = "✅ correct"
NO = "❌ not yet:"


class Verdict:
    """A check's answer: true when correct.  It was printed already, so a notebook shows
    nothing more when a check is the last line of a cell."""

    def __init__(self, ok: bool):
        self.ok = ok

    def __bool__(self) -> bool:
        return self.ok

    def __repr__(self) -> str:
        return "correct" if self.ok else "not yet"

    def _ipython_display_(self) -> None:
        pass


def _report(ok: bool, message: str) -> Verdict:
    print(f"{OK}: {message}" if ok else f"{NO} {message}")
    return Verdict(ok)


def _module(answer: Any, what: str, init_module: Optional[relay.IRModule] = None) -> relay.IRModule:
    """The answer as a type-checked module (text, Function or IRModule)."""
    if isinstance(answer, str):
        mod = relay.parse(answer, source_name=what, init_module=init_module)
    elif isinstance(answer, relay.IRModule):
        mod = answer
    elif isinstance(answer, relay.Function):
        mod = relay.IRModule.from_expr(answer)
    else:
        raise relay.RelayError(f"{what} should be Relay text, a Function or an IRModule, not {type(answer).__name__}")
    return relay.transform.InferType()(mod)


def _run(mod: relay.IRModule, name: str = "main") -> Callable:
    return relay.create_executor("interpreter", mod=mod).evaluate(mod.get_global_var(name))


def _guard(fn: Callable[[], Verdict]) -> Verdict:
    """Run a check; a RelayError (or a Python error) in the student's code becomes a hint."""
    try:
        return fn()
    except relay.RelayError as exc:
        return _report(False, f"Relay reports an error in your answer:\n{exc}")
    except Exception as exc:  # the student's Python code may fail in any way
        return _report(False, f"your code raised {type(exc).__name__}: {exc}")


def _has(expr: relay.Expr, kind: type) -> bool:
    found = []
    relay.post_order_visit(expr, lambda e: found.append(e) if isinstance(e, kind) else None)
    return bool(found)


def _type(text: str) -> relay.Type:
    """A type written as text, read by the parser (as a parameter annotation)."""
    return relay.parse(f"def @main(%x: {text}) {{ %x }}")["main"].params[0].type_annotation


def _nat(n: int) -> str:
    return "Z" if n == 0 else "S(" * n + "Z" + ")" * n


def _count_s(value: Any) -> int:
    n = 0
    while value.constructor.name == "S":
        value, n = value.fields[0], n + 1
    if value.constructor.name != "Z":
        raise relay.RelayError(f"expected a Nat, got a {value.constructor.name} value")
    return n


def _list(items: Iterable[int]) -> str:
    items = list(items)
    return "".join(f"Cons({v}, " for v in items) + "Nil" + ")" * len(items)


# --- tutorial 01: expressions and the text format ----------------------------------------


def check_let_program(text: str) -> Verdict:
    """``@main(%x: Tensor[(3), float32])`` computing ``(x + 1) * x`` with a ``let``."""

    def run() -> Verdict:
        mod = _module(text, "your program")
        main = mod["main"]
        want_type = relay.FuncType([relay.TensorType((3,), "float32")], relay.TensorType((3,), "float32"))
        if main.checked_type != want_type:
            return _report(False, f"@main should have type {want_type}, it has {main.checked_type}")
        if not _has(main.body, relay.Let):
            return _report(False, "bind x + 1 to a variable with `let %y = ...;` and use it")
        rng = np.random.default_rng(1)
        f = _run(mod)
        for _ in range(3):
            x = rng.standard_normal(3).astype("float32")
            if not np.allclose(f(x), (x + 1) * x, rtol=1e-6):
                return _report(False, f"for x = {x} the result should be {(x + 1) * x}, got {f(x)}")
        return _report(True, "a let-bound (x + 1) * x, checked on random inputs")

    return _guard(run)


def check_prediction(answer: Any, program: str) -> Verdict:
    """The value the student predicts for ``program`` versus what the interpreter computes."""

    def run() -> Verdict:
        value = _run(_module(program, "the puzzle"))()
        if answer is None or answer is ...:
            return _report(False, "replace the ... by the number you predict")
        if np.array_equal(np.asarray(answer), value):
            return _report(True, f"the program evaluates to {value}")
        return _report(
            False,
            "not that value. Follow each `let` in turn; a later `let %a` *shadows* the earlier "
            "one only in the expressions after it.",
        )

    return _guard(run)


def check_same_program(answer: relay.Expr, text: str) -> Verdict:
    """A Python-built function structurally equal to the function written in ``text``."""

    def run() -> Verdict:
        want = relay.parse(text)["main"]
        got = answer["main"] if isinstance(answer, relay.IRModule) else answer
        if not isinstance(got, relay.Function):
            return _report(False, f"build a relay.Function, not a {type(got).__name__}")
        if relay.structural_equal(got, want, map_free_vars=True):
            return _report(True, "structurally equal to the text program")
        return _report(
            False,
            "the structure differs; print both and compare:\n"
            f"yours:\n{relay.IRModule.from_expr(got)}\nwanted:\n{relay.IRModule.from_expr(want)}",
        )

    return _guard(run)


# --- tutorial 03: types --------------------------------------------------------------------


def check_type_prediction(answer: str, program: str) -> Verdict:
    """The student's type (as text) for the result of ``@main`` in ``program``."""

    def run() -> Verdict:
        want = _module(program, "the program")["main"].checked_type.ret_type
        if not isinstance(answer, str) or answer.strip() in ("", "..."):
            return _report(False, 'write the type as text, e.g. "Tensor[(2, 2), float32]"')
        got = _type(answer)
        if got == want:
            return _report(True, f"the result type is {want}")
        return _report(False, f"not {got}. Broadcasting aligns shapes from the right; a 1 stretches.")

    return _guard(run)


def check_factorial(text: str) -> Verdict:
    """A well-typed scalar factorial ``@fact(%n: int32) -> int32`` (the seed's, fixed)."""

    def run() -> Verdict:
        mod = _module(text, "your factorial")
        if "fact" not in [g.name_hint for g in mod.get_global_vars()]:
            return _report(False, "define a global function named @fact")
        want_type = relay.FuncType([relay.TensorType((), "int32")], relay.TensorType((), "int32"))
        if mod["fact"].checked_type != want_type:
            return _report(False, f"@fact should have type {want_type}, it has {mod['fact'].checked_type}")
        f = _run(mod, "fact")
        for n in range(8):
            if int(f(n)) != math.factorial(n):
                return _report(False, f"fact({n}) should be {math.factorial(n)}, got {int(f(n))}")
        return _report(True, "fact(n) == n! for n = 0..7")

    return _guard(run)


def check_twice(text: str) -> Verdict:
    """A polymorphic ``@twice`` that applies ``%f`` two times, usable at two types."""

    def run() -> Verdict:
        mod = _module(text, "your @twice")
        ty = mod["twice"].checked_type
        if not ty.type_params:
            return _report(False, "@twice should be polymorphic: declare a type parameter, def @twice[A](...)")
        uses = relay.parse(
            "def @main(%x: Tensor[(2), float32], %n: int32) {\n"
            "  (@twice(fn (%v: Tensor[(2), float32]) { %v * 3f }, %x),\n"
            "   @twice(fn (%k: int32) { %k + 5 }, %n))\n"
            "}",
            init_module=mod,
        )
        x = np.array([1.0, -2.0], "float32")
        out_x, out_n = _run(_module(uses, "the uses of @twice"))(x, 1)
        if not np.allclose(out_x, x * 9) or int(out_n) != 11:
            return _report(False, f"@twice(f, x) should be f(f(x)): got {out_x} and {int(out_n)}")
        return _report(True, f"@twice : {ty}, used on tensors and on int32")

    return _guard(run)


# --- tutorial 04: ADTs and pattern matching ----------------------------------------------------


def check_double(mod: relay.IRModule) -> Verdict:
    """``@double(%n: Nat[]) -> Nat[]`` returning 2n."""

    def run() -> Verdict:
        if "double" not in [g.name_hint for g in mod.get_global_vars()]:
            return _report(False, "define a global function named @double")
        for n in range(6):
            test = relay.parse(f"def @main() {{ @double({_nat(n)}) }}", init_module=mod)
            got = _count_s(_run(_module(test, "a test of @double"))())
            if got != 2 * n:
                return _report(False, f"@double({_nat(n)}) should have {2 * n} S's, it has {got}")
        return _report(True, "@double(n) == 2n for n = 0..5")

    return _guard(run)


def check_sum_list(mod: relay.IRModule) -> Verdict:
    """``@sum_list(%l: List[int32]) -> int32``."""

    def run() -> Verdict:
        if "sum_list" not in [g.name_hint for g in mod.get_global_vars()]:
            return _report(False, "define a global function named @sum_list")
        rng = np.random.default_rng(4)
        cases = [[], [7], [1, 2, 3]] + [list(rng.integers(-50, 50, size=k)) for k in (5, 9)]
        for items in cases:
            test = relay.parse(f"def @main() {{ @sum_list({_list(items)}) }}", init_module=mod)
            got = int(_run(_module(test, "a test of @sum_list"))())
            if got != sum(int(v) for v in items):
                return _report(False, f"@sum_list of {items} should be {sum(items)}, got {got}")
        return _report(True, "sums match Python's sum on 5 lists, including the empty one")

    return _guard(run)


def _tree(t: Any, suffix: str) -> str:
    """A Python tree (None for Leaf, ``(left, value, right)``) as Relay text."""
    if t is None:
        return "Leaf"
    left, value, right = t
    return f"Node({_tree(left, suffix)}, {value}{suffix}, {_tree(right, suffix)})"


def _py_depth(t: Any) -> int:
    return 0 if t is None else 1 + max(_py_depth(t[0]), _py_depth(t[2]))


def check_depth(mod: relay.IRModule) -> Verdict:
    """``@depth[A](%t: Tree[A]) -> int32``: Leaf has depth 0, Node(l, v, r) 1 + max."""
    leaf = None
    trees = [
        leaf,
        (leaf, 1, leaf),
        ((leaf, 1, leaf), 2, leaf),
        (leaf, 1, (leaf, 2, (leaf, 3, leaf))),
        (((leaf, 1, leaf), 2, leaf), 3, (leaf, 4, leaf)),
    ]

    def run() -> Verdict:
        if "depth" not in [g.name_hint for g in mod.get_global_vars()]:
            return _report(False, "define a global function named @depth")
        for t in trees:
            # int32 and float32 elements: @depth must be polymorphic.
            for suffix in ("", "f"):
                text = _tree(t, suffix)
                test = relay.parse(f"def @main() {{ @depth({text}) }}", init_module=mod)
                got = int(_run(_module(test, "a test of @depth"))())
                if got != _py_depth(t):
                    return _report(False, f"@depth({text}) should be {_py_depth(t)}, got {got}")
        return _report(True, "depths match on 5 trees of int32 and of float32")

    return _guard(run)


# --- tutorial 05: writing a pass -------------------------------------------------------------

_PASS_TESTS = [
    # Seed 004: %1 is shared; it is one node, visited once.
    "def @main(%x: Tensor[(2, 3), float32]) { %1 = log(%x); add(%1, %1) }",
    "def @main(%x: Tensor[(4), float32]) { let %y = multiply(%x, 2f); %0 = exp(%y); add(%0, multiply(%0, 2f)) }",
    "def @main(%x: Tensor[(3), float32], %y: Tensor[(3), float32]) {\n"
    "  %0 = multiply(%x, 2f); %1 = multiply(%y, %y); %2 = add(%0, %1);\n"
    "  (%2, subtract(%2, %0), multiply(%1, 2f))\n}",
    "def @main(%x: Tensor[(3), float32]) { let %f = fn (%v: Tensor[(3), float32]) { multiply(%v, 2f) }; %f(tanh(%x)) }",
]


def _reference_op_counts(expr: relay.Expr) -> dict[str, int]:
    counts: dict[str, int] = {}

    def visit(e: relay.Expr) -> None:
        if isinstance(e, relay.Call) and isinstance(e.op, relay.Op):
            counts[e.op.name] = counts.get(e.op.name, 0) + 1

    relay.post_order_visit(expr, visit)
    return counts


def check_count_ops(visitor_class: type) -> Verdict:
    """A visitor class whose ``.counts`` maps op names to the number of call *nodes*."""

    def run() -> Verdict:
        for text in _PASS_TESTS:
            func = relay.parse(text)["main"]
            v = visitor_class()
            v.visit(func)
            counts = dict(getattr(v, "counts", {}))
            want = _reference_op_counts(func)
            if counts != want:
                hint = ""
                if any(counts.get(k, 0) > n for k, n in want.items()):
                    hint = " A shared node counted twice? Count in visit_call, which runs once per node."
                return _report(False, f"on\n{text}\nthe counts should be {want}, got {counts}.{hint}")
        return _report(True, f"op counts right on {len(_PASS_TESTS)} programs, shared nodes counted once")

    return _guard(run)


def _is_times_two(e: relay.Expr) -> bool:
    if not (isinstance(e, relay.Call) and isinstance(e.op, relay.Op) and e.op.name == "multiply"):
        return False
    c = e.args[1]
    return isinstance(c, relay.Constant) and c.data.shape == () and float(c.data) == 2.0


def check_double_pass(pass_obj: Any) -> Verdict:
    """A FunctionPass rewriting ``multiply(x, 2f)`` into ``add(x, x)``, keeping sharing and meaning."""

    def run() -> Verdict:
        if not isinstance(pass_obj, relay.transform.FunctionPass):
            return _report(False, f"decorate your function with @relay.transform.function_pass(...); got {type(pass_obj).__name__}")
        rng = np.random.default_rng(5)
        for text in _PASS_TESTS:
            mod = relay.transform.InferType()(relay.parse(text))
            out = relay.transform.InferType()(pass_obj(mod))
            left = [e for e in _iter(out["main"]) if _is_times_two(e)]
            if left:
                return _report(False, f"multiply(..., 2f) is still there after your pass on\n{text}")
            before, after = _reference_op_counts(mod["main"]), _reference_op_counts(out["main"])
            want_adds = before.get("add", 0) + sum(1 for e in _iter(mod["main"]) if _is_times_two(e))
            if after.get("add", 0) > want_adds:
                return _report(False, "more add nodes than expected: memoize, so a shared node is rewritten once")
            args = [rng.uniform(0.5, 2.0, p.checked_type.shape).astype("float32") for p in mod["main"].params]
            want = _run(mod)(*args)
            got = _run(out)(*args)
            want_t = want if isinstance(want, tuple) else (want,)
            got_t = got if isinstance(got, tuple) else (got,)
            if len(want_t) != len(got_t) or not all(np.allclose(a, b, rtol=1e-5) for a, b in zip(want_t, got_t)):
                return _report(False, f"the rewritten program computes something else on\n{text}")
        return _report(True, f"no x*2 left, same results on {len(_PASS_TESTS)} programs, sharing kept")

    return _guard(run)


def _iter(expr: relay.Expr) -> list[relay.Expr]:
    out: list[relay.Expr] = []
    relay.post_order_visit(expr, out.append)
    return out


# --- tutorial 08: automatic differentiation --------------------------------------------------


def check_finite_difference(fd: Callable) -> Verdict:
    """``fd(f, x, eps)``: the gradient of ``sum(f(x))`` by central differences."""

    def run() -> Verdict:
        rng = np.random.default_rng(8)
        x = rng.uniform(0.5, 2.0, size=5)
        cases = [
            (lambda v: v * v, 2 * x, "x * x"),
            (np.sin, np.cos(x), "sin(x)"),
            (lambda v: np.log(v) * v, np.log(x) + 1, "log(x) * x"),
            (lambda v: np.full_like(v, v.sum() ** 2), 2 * x.size * x.sum() * np.ones_like(x), "sum(x)^2 broadcast"),
        ]
        for f, want, name in cases:
            # eps = 1e-3: central differences are within 1e-6 here; one-sided ones are not.
            got = np.asarray(fd(f, x.copy(), 1e-3), dtype="float64")
            if got.shape != x.shape:
                return _report(False, f"the gradient should have x's shape {x.shape}, got {got.shape}")
            if not np.allclose(got, want, rtol=1e-4, atol=1e-6):
                return _report(False, f"for f = {name} the gradient should be {want}, got {got}. "
                               "Perturb one element at a time, both ways: (sum f(x + eps e_i) - sum f(x - eps e_i)) / 2eps")
        return _report(True, "central differences match the analytic gradients of 4 functions")

    return _guard(run)


def check_loss_gradient(loss_text: str, dw: Any, w: np.ndarray, x: np.ndarray, y: np.ndarray) -> Verdict:
    """The squared-error loss ``sum((w * x - y)^2)`` as Relay, and its gradient ``dw`` at w."""

    def run() -> Verdict:
        mod = _module(loss_text, "your loss")
        got_loss = float(_run(mod)(w, x, y))
        want_loss = float(np.sum((w * x - y) ** 2))
        if not np.isclose(got_loss, want_loss, rtol=1e-6):
            return _report(False, f"the loss at w should be {want_loss}, your @main gives {got_loss}")
        want_dw = 2 * (w * x - y) * x
        if not np.allclose(np.asarray(dw), want_dw, rtol=1e-6):
            return _report(False, f"dw should be {want_dw}, got {dw}; it is the first gradient gradient() returns")
        return _report(True, "loss and dloss/dw match the formulas 2 (w x - y) x")

    return _guard(run)



# --- tutorial 02: dataflow graphs versus A-normal form ------------------------------------------

_SHARED_TESTS = [
    # Seed 004: %1 used twice by %2.
    "def @main(%x: Tensor[(2, 3), float32]) { %1 = log(%x); add(%1, %1) }",
    # Two separately written log(%x) are two nodes: nothing is shared.
    "def @main(%x: Tensor[(2), float32]) { %0 = log(%x); %1 = log(%x); add(%0, %1) }",
    # %0 is used by two different calls; %1 once, by a shared node (not shared itself).
    "def @main(%x: Tensor[(2), float32]) { %0 = exp(%x); %1 = log(%0); %2 = add(%1, %1); multiply(%2, %0) }",
    # One node used three times, and a chain in which every level is shared.
    "def @main(%x: Tensor[(2), float32]) { %0 = tanh(%x); %1 = add(%0, %0); %2 = add(%1, %1); %3 = add(%2, %2); subtract(%3, %0) }",
    "def @main(%x: Tensor[(2), float32], %y: Tensor[(2), float32]) { %0 = multiply(%x, %y); %1 = add(%0, %x); %2 = subtract(%0, %y); %3 = divide(%1, %2); %4 = exp(%3); add(%4, negative(%4)) }",
]


def _shared_calls(func: relay.Function) -> int:
    """Call nodes with two or more uses: over distinct nodes, each argument slot is a use."""
    uses: dict = {}

    def count(node: relay.Expr) -> None:
        if isinstance(node, relay.Call):
            for arg in node.args:
                if isinstance(arg, relay.Call):
                    uses[arg] = uses.get(arg, 0) + 1

    relay.post_order_visit(func, count)
    return sum(1 for n in uses.values() if n >= 2)


def check_count_shared(count_shared: Callable) -> Verdict:
    """``count_shared(func)``: the number of call nodes of ``func`` used more than once."""

    def run() -> Verdict:
        for text in _SHARED_TESTS:
            func = relay.parse(text)["main"]
            want, got = _shared_calls(func), count_shared(func)
            if got != want:
                hint = ""
                if isinstance(got, int) and got > want:
                    hint = (" Too many: a node used once by a shared node is visited once per path "
                            "if you recurse by hand — let ExprVisitor's memo visit each user once.")
                return _report(False, f"on\n{text}\nthere are {want} shared call nodes, you count {got}.{hint}")
        return _report(True, f"shared nodes counted right on {len(_SHARED_TESTS)} programs")

    return _guard(run)


_SCOPES = ("outside", "if", "fn")


def _anf_scopes(mod: relay.IRModule) -> dict[str, list[str]]:
    """op name -> where ToANormalForm binds each call of it: outside, "if" or "fn"."""
    where: dict[str, list[str]] = {}
    todo: list[tuple[relay.Expr, str]] = [(mod["main"].body, "outside")]
    while todo:
        e, scope = todo.pop()
        if isinstance(e, relay.Let):
            v = e.value
            if isinstance(v, relay.Call) and isinstance(v.op, relay.Op):
                where.setdefault(v.op.name, []).append(scope)
            todo += [(v, scope), (e.body, scope)]
        elif isinstance(e, relay.If):
            todo += [(e.cond, scope), (e.true_branch, "if"), (e.false_branch, "if")]
        elif isinstance(e, relay.Function):
            todo.append((e.body, "fn"))
        elif isinstance(e, relay.Call):
            todo += [(e.op, scope)] + [(a, scope) for a in e.args]
        elif isinstance(e, relay.Tuple):
            todo += [(f, scope) for f in e.fields]
        elif isinstance(e, relay.TupleGetItem):
            todo.append((e.tuple_value, scope))
    return where


def check_scope_prediction(answer: dict, program: str) -> Verdict:
    """Where ToANormalForm computes each operator called once in ``program``."""

    def run() -> Verdict:
        mod = relay.transform.ToANormalForm()(_module(program, "the puzzle"))
        places = {op: ws[0] for op, ws in _anf_scopes(mod).items() if len(ws) == 1}
        if not isinstance(answer, dict):
            return _report(False, 'answer with a dict, e.g. {"exp": "outside", ...}')
        missing = sorted(set(places) - set(answer))
        if missing:
            return _report(False, f"say where each of {', '.join(sorted(places))} goes; missing: {', '.join(missing)}")
        bad_words = [v for v in answer.values() if v not in _SCOPES]
        if bad_words:
            return _report(False, f"use one of {_SCOPES} for each operator, not {bad_words[0]!r}")
        wrong = sorted(op for op in places if answer[op] != places[op])
        if wrong:
            return _report(False, f"not right for {', '.join(wrong)}. ToANormalForm binds each value in the "
                           "innermost scope that holds all its uses: used in one branch only -> inside it; "
                           "used in both branches or after the if -> outside.")
        return _report(True, "that is where ToANormalForm puts them: " +
                       ", ".join(f"{op} {w}" for op, w in sorted(places.items())))

    return _guard(run)


# --- tutorial 06: the pass manager ---------------------------------------------------------------


def _recorded_passes(mod: relay.IRModule, opt_level: int, disabled: Iterable[str]) -> list[str]:
    recorder = relay.transform.PassRecorder(leaves_only=True)
    with relay.transform.PassContext(opt_level=opt_level, disabled_pass=list(disabled), instruments=[recorder]):
        relay.optimize(mod, opt_level=opt_level)
    return [r.name for r in recorder.records if r.name != "InferType"]


def check_pipeline_prediction(answer: list, opt_level: int, disabled: Iterable[str] = ()) -> Verdict:
    """The passes (without InferType) ``relay.optimize`` runs at ``opt_level`` with ``disabled``."""

    def run() -> Verdict:
        mod = relay.parse("def @main(%x: Tensor[(4), float32]) { exp(add(%x, 1f)) }")
        want = _recorded_passes(mod, opt_level, disabled)
        got = [str(name) for name in answer]
        if got == want:
            return _report(True, f"O{opt_level} without {', '.join(disabled) or 'nothing'} runs " + ", ".join(want))
        extra = sorted(set(got) - set(want))
        if extra:
            return _report(False, f"{', '.join(extra)} does not run: a pass runs when its opt_level is at "
                           "most the context's and it is not disabled")
        missing = sorted(set(want) - set(got))
        if missing:
            return _report(False, f"{', '.join(missing)} runs too")
        return _report(False, f"the right passes, but not the right count or order: {len(want)} passes run "
                       "(a pass listed twice in the pipeline runs twice)")

    return _guard(run)


_COUNTER_PROGRAM = """
def @main(%x: Tensor[(1, 2, 4, 4), float32], %w: Tensor[(2, 2, 3, 3), float32],
          %g: Tensor[(2), float32], %b: Tensor[(2), float32]) {
  %0 = nn.conv2d(%x, %w, padding=[1, 1], channels=2, kernel_size=[3, 3]);
  %1 = nn.batch_norm(%0, %g, %b, %g, %g);
  %2 = nn.relu(%1.0);
  %3 = multiply(%2, add(1f, 1f));
  %4 = exp(%x);
  add(%3, multiply(%4, 1f))
}
"""


def _calls_in_main(mod: relay.IRModule) -> int:
    n = 0
    for node in _iter(mod["main"]):
        if isinstance(node, relay.Call):
            n += 1
    return n


class _CountAfter(relay.transform.PassInstrument):
    def __init__(self) -> None:
        self.records: list = []

    def run_after_pass(self, mod: relay.IRModule, info: Any) -> None:
        self.records.append((info.name, _calls_in_main(mod)))


def check_call_counter(instrument_class: type, mod: Optional[relay.IRModule] = None) -> Verdict:
    """An instrument class recording ``(pass name, calls in @main)`` after every pass."""

    def run() -> Verdict:
        programs = ([mod] if mod is not None else []) + [relay.parse(_COUNTER_PROGRAM)]
        for program in programs:
            theirs, ours = instrument_class(), _CountAfter()
            with relay.transform.PassContext(opt_level=3, instruments=[theirs, ours]):
                relay.optimize(program, opt_level=3)
            got = [tuple(r) for r in getattr(theirs, "records", [])]
            if len(got) != len(ours.records):
                return _report(False, f"{len(ours.records)} passes ran (composite ones included), you recorded "
                               f"{len(got)}: record in run_after_pass, which every pass run calls once")
            for (name, n), (got_name, got_n) in zip(ours.records, got):
                if (name, n) != (got_name, got_n):
                    return _report(False, f"after {name} @main has {n} call nodes; you recorded "
                                   f"({got_name!r}, {got_n}). Count every Call reachable from @main.")
        return _report(True, f"{len(ours.records)} passes recorded with the right call counts")

    return _guard(run)


# --- tutorial 07: fusion and the LLVM JIT --------------------------------------------------------


def _primitive_count(mod: relay.IRModule) -> int:
    fused = relay.transform.FuseOps()(relay.transform.InferType()(mod))
    return sum(1 for e in _iter(fused["main"]) if isinstance(e, relay.Function) and e.attrs.get("Primitive"))


def check_fusion_prediction(answer: list, programs: list) -> Verdict:
    """The number of primitive functions FuseOps makes for each program."""

    def run() -> Verdict:
        if len(answer) != len(programs):
            return _report(False, f"give one number per program ({len(programs)})")
        for i, (text, got) in enumerate(zip(programs, answer), 1):
            want = _primitive_count(_module(text, f"program {i}"))
            if got != want:
                return _report(False, f"program {i} gives {want if got is ... else 'another number of'} kernels, "
                               f"not {got}. Elementwise ops fuse into what follows them (a reduction too); "
                               "conv2d and dense take an elementwise epilogue; a reduction takes none.")
        return _report(True, f"kernel counts right for {len(programs)} programs")

    return _guard(run)


def check_one_kernel(text: str) -> Verdict:
    """SiLU of ``x + b`` as one native kernel, equal to numpy's."""

    def run() -> Verdict:
        mod = _module(text, "your program")
        want_type = relay.FuncType(
            [relay.TensorType((64, 64), "float32"), relay.TensorType((64,), "float32")],
            relay.TensorType((64, 64), "float32"),
        )
        if mod["main"].checked_type != want_type:
            return _report(False, f"@main should have type {want_type}, it has {mod['main'].checked_type}")
        lib = relay.build(mod)
        if len(lib.kernels) != 1:
            return _report(False, f"it compiles to {len(lib.kernels)} kernels; use elementwise ops only, "
                           "and compute x + b once (a shared node), so everything fuses")
        if not lib.kernels[0].native:
            return _report(False, f"the kernel fell back to numpy: {lib.kernels[0].reason}")
        rng = np.random.default_rng(7)
        for _ in range(3):
            x = rng.uniform(-6, 6, (64, 64)).astype("float32")
            b = rng.uniform(-1, 1, 64).astype("float32")
            v = (x + b).astype("float64")
            want = v / (1.0 + np.exp(-v))
            got = lib(x, b)
            if not np.allclose(got, want, rtol=1e-4, atol=1e-5):
                return _report(False, f"the values differ from v * sigmoid(v), v = x + b (max error "
                               f"{np.max(np.abs(got - want)):.3g})")
        return _report(True, f"one native kernel, {lib.kernels[0].name}, equal to numpy's SiLU")

    return _guard(run)

__all__ = ["Verdict"] + [name for name in dir() if name.startswith("check_")]


def check_outputs_agree(ours: Any, reference: Any, what: str = "the framework", rtol: float = 1e-4) -> Verdict:
    """relay_nb's output equals the reference (a framework's, or the interpreter's) to a
    relative error of ``rtol`` of the output's scale."""

    def run() -> Verdict:
        a = np.asarray(ours, dtype=np.float64)
        b = np.asarray(reference, dtype=np.float64)
        if a.shape != b.shape:
            return _report(False, f"shapes differ: {a.shape} against {what}'s {b.shape}")
        scale = max(float(np.abs(b).max(initial=0)), 1e-30)
        err = float(np.abs(a - b).max(initial=0)) / scale
        if err > rtol:
            return _report(False, f"the outputs differ from {what}'s by {err:.2e} of their scale")
        return _report(True, f"the outputs agree with {what}'s (largest difference {err:.1e} of their scale)")

    return _guard(run)


def check_op_count(answer: Any, mod: relay.IRModule, op_name: str) -> Verdict:
    """``answer`` is the number of calls of ``op_name`` in ``mod``'s functions."""

    def run() -> Verdict:
        count = 0
        for gv in mod.get_global_vars():
            func = mod[gv.name_hint]
            if isinstance(func, relay.Function):
                calls = []
                relay.post_order_visit(
                    func, lambda e: calls.append(e) if isinstance(e, relay.Call) and isinstance(e.op, relay.Op) and e.op.name == op_name else None
                )
                count += len(calls)
        if answer != count:
            return _report(False, f"count the calls of {op_name} again (in the printout, or with relay.post_order_visit)")
        return _report(True, f"the model calls {op_name} {count} times")

    return _guard(run)
