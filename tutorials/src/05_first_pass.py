# %% [markdown]
# # 5. Writing your first pass
#
# A *pass* is a function from program to program.  Relay programs are graphs: a node can be
# used twice (a *DAG*), and the *Introduction to Relay IR* warns what that means for pass
# writers: "be mindful that expressions can be DAGs ... visit expressions with a
# `Map<Expr, Result>` and only compute the transformed result once, so the resulting
# expression keeps the common structure."  This notebook shows why, then writes a visitor
# and a rewriting pass the way relay_nb's own passes are written.

# %%
# %load_ext relay_nb
import time

import numpy as np
from checks import check_count_ops, check_double_pass

import relay_nb as relay

# %% [markdown]
# ## A DAG is not a tree
#
# In the seed's example `%1 = log(%x)` is used twice.  It is *one* node; evaluated, it is
# computed once.  A naive recursive walk treats the program as the tree
# `add(log(%x), log(%x))`:

# %%
prog = relay.parse("def @main(%x: Tensor[(2, 3), float32]) { %1 = log(%x); add(%1, %1) }")


def naive_count(expr):
    """Count Call nodes by plain recursion: a shared node is counted once per path to it."""
    if isinstance(expr, relay.Call):
        return 1 + sum(naive_count(a) for a in expr.args)
    return 0


print("naive:", naive_count(prog["main"].body), "calls; the program has 2 call nodes")

# %% [markdown]
# Worse, each level of sharing doubles the naive walk.  Build
# `%1 = %x + %x; %2 = %1 + %1; ...` with `n` nodes and time the tree walk:

# %%
def doubling(n):
    x = relay.var("x", shape=(2,))
    e = x
    for _ in range(n):
        e = relay.add(e, e)
    return relay.Function([x], e)


for n in (8, 12, 16):
    start = time.perf_counter()
    calls = naive_count(doubling(n).body)
    print(f"n={n:2}: naive walk visits {calls:6} calls in {time.perf_counter() - start:.3f} s")

# %% [markdown]
# ## The memo map: `Map<Expr, Result>`
#
# Remember each node's result the first time it is computed.  Nodes are compared *by
# identity* (two separately built `log(%x)` are different nodes; one shared `log(%x)` is one
# node), which is exactly what a Python `dict` keyed by the node does.

# %%
def memo_count(expr, memo=None):
    """Count Call nodes once each: the memo maps a node to its result."""
    memo = {} if memo is None else memo
    if expr in memo:
        return 0
    memo[expr] = True
    if isinstance(expr, relay.Call):
        return 1 + sum(memo_count(a, memo) for a in expr.args)
    return 0


print("memoized:", memo_count(prog["main"].body), "calls;",
      "doubling(16):", memo_count(doubling(16).body), "calls")

# %% [markdown]
# `relay.ExprVisitor` is that pattern, done once: `visit(e)` dispatches on the node's kind
# to `visit_call`, `visit_let`, `visit_function`... and keeps the memo for you (and it uses an
# explicit stack, so a 100,000-node program does not overflow Python's recursion limit).
# Override the methods you care about; call `super()` to visit the children.

# %%
class CountCalls(relay.ExprVisitor):
    def __init__(self):
        super().__init__()
        self.calls = 0

    def visit_call(self, call):
        self.calls += 1
        super().visit_call(call)


v = CountCalls()
v.visit(doubling(16))
print("ExprVisitor:", v.calls, "calls")

# %% [markdown]
# ## Let-bound values: keep a map from variable to value
#
# The same computation in A-normal form hides the structure behind variables: to see that
# the first argument of `add` is a `log`, look the variable up.  The seed's advice: "keep a
# map of var to the expressions so you can perform lookup when encountering a var".

# %%
class FindAddOfLog(relay.ExprVisitor):
    """Find add(log(a), b), through let-bound variables as well."""

    def __init__(self):
        super().__init__()
        self.bound = {}  # Var -> the value it is bound to
        self.found = 0

    def visit_let(self, let):
        self.bound[let.var] = let.value
        super().visit_let(let)

    def visit_call(self, call):
        if isinstance(call.op, relay.Op) and call.op.name == "add":
            first = self.bound.get(call.args[0], call.args[0])
            if isinstance(first, relay.Call) and first.op.name == "log":
                self.found += 1
        super().visit_call(call)


graph_form = relay.parse("def @main(%x: float32, %y: float32) { add(log(%x), %y) }")
anf_form = relay.transform.ToANormalForm()(graph_form)
print(anf_form)
for name, m in [("graph form", graph_form), ("A-normal form", anf_form)]:
    finder = FindAddOfLog()
    finder.visit(m["main"])
    print(f"{name}: found add(log(.), .) {finder.found} time(s)")

# %% [markdown]
# ## Rewriting: `ExprMutator`
#
# A mutator returns a new node for each node.  Its defaults rebuild a node only when a
# child changed, so untouched subtrees come back as *the same objects* and a shared node,
# rewritten once thanks to the memo, stays shared.  Here: `add(e, 0f) -> e`.

# %%
def is_zero(e):
    return isinstance(e, relay.Constant) and e.data.shape == () and float(e.data) == 0.0


class DropAddZero(relay.ExprMutator):
    def visit_call(self, call):
        new = super().visit_call(call)  # children first
        if isinstance(new.op, relay.Op) and new.op.name == "add" and is_zero(new.args[1]):
            return new.args[0]  # add(e, 0f) -> e
        return new


before = relay.parse("def @main(%x: Tensor[(3), float32]) { %1 = exp(add(%x, 0f)); (add(%1, 0f), %1) }")
after_main = DropAddZero().visit(before["main"])
print(relay.IRModule.from_expr(after_main))
untouched = relay.parse("def @main(%x: Tensor[(3), float32]) { exp(%x) }")["main"]
print("nothing to rewrite -> same object:", DropAddZero().visit(untouched) is untouched)

# %% [markdown]
# ## From a function to a pass
#
# `@relay.transform.function_pass` turns `f(func, mod, ctx) -> func` into a pass that runs
# on every function of a module, carries a name and an `opt_level`, and is observed by the
# `PassContext`'s instruments — it composes with the built-in passes in a `Sequential`.

# %%
@relay.transform.function_pass(opt_level=1, name="DropAddZero")
def drop_add_zero(func, mod, ctx):
    return DropAddZero().visit(func)


pipeline = relay.transform.Sequential([drop_add_zero, relay.transform.InferType()])
print(pipeline(before))
with relay.transform.PassContext(opt_level=0):  # opt_level 1 > 0: the pass is skipped
    print("at opt_level 0 the add is kept:", "add" in pipeline(before).astext())

# %% [markdown]
# A pass defined in the notebook can be named in a `%%relay` cell's `--passes`, next to
# the built-in ones; the cell shows the program after the passes.

# %%
# %%relay --passes drop_add_zero,InferType
# def @main(%x: Tensor[(3), float32]) {
#   %1 = exp(add(%x, 0f));
#   (add(%1, 0f), %1)
# }

# %% [markdown]
# The pass keeps the program's meaning — check it on random inputs with the interpreter:

# %%
x = np.random.default_rng(0).standard_normal(3).astype("float32")
run = lambda m: relay.create_executor("interpreter", mod=m).evaluate()(x)  # noqa: E731
print(all(np.allclose(a, b) for a, b in zip(run(before), run(pipeline(before)))))

# %% [markdown]
# ## Exercises
#
# **1. Count operators.**  Write a visitor with a `counts` dict mapping each operator's
# name to the number of *call nodes* using it (a shared node counts once).

# %%
class CountOps(relay.ExprVisitor):
    def __init__(self):
        super().__init__()
        self.counts = {}

    def visit_call(self, call):
        if isinstance(call.op, relay.Op):
            self.counts[call.op.name] = self.counts.get(call.op.name, 0) + 1
        super().visit_call(call)


check_count_ops(CountOps)

# %% [markdown]
# **2. Strength reduction.**  Write a function pass rewriting `multiply(e, 2f)` into
# `add(e, e)`.  The check runs it on programs with shared nodes, `let`s and closures, and
# compares results with the interpreter.

# %%
def is_two(e):
    return isinstance(e, relay.Constant) and e.data.shape == () and float(e.data) == 2.0


class TimesTwoToAdd(relay.ExprMutator):
    def visit_call(self, call):
        new = super().visit_call(call)
        if isinstance(new.op, relay.Op) and new.op.name == "multiply" and is_two(new.args[1]):
            return relay.add(new.args[0], new.args[0])  # e * 2 -> e + e
        return new


@relay.transform.function_pass(opt_level=1, name="TimesTwoToAdd")
def times_two_to_add(func, mod, ctx):
    return TimesTwoToAdd().visit(func)


check_double_pass(times_two_to_add)
