# %% [markdown]
# # 2. Dataflow graphs versus A-normal form
#
# The *Introduction to Relay IR* makes one point that surprises people from both sides:
# a Relay program is **a graph, not a tree**.  A node can be used twice, and it is then
# computed once.  And when a program has an `if` or a closure, the graph does not say
# *where* a value is computed; a `let` does.  This notebook shows both readings of the
# same programs side by side — the *dataflow graph* (DAG) and the *A-normal form* (ANF) —
# and ends with the pass stepper catching a pass that gets sharing wrong.

# %%
# %load_ext relay_nb
import re
import time

import numpy as np
from checks import check_count_shared, check_scope_prediction

import relay_nb as relay

# %% [markdown]
# ## `%1` is used twice, and computed once
#
# The seed builds its example in Python with an `add` whose two inputs are *the same*
# `log` node:

# %%
x = relay.var("x", shape=(2, 3))
v1 = relay.log(x)
v2 = relay.add(v1, v1)
mod = relay.IRModule.from_expr(relay.Function([x], v2))
print(mod)
print("both arguments are one node:", v2.args[0] is v2.args[1])

# %% [markdown]
# The printer gives each call a temporary id (`%0`, ...) so a shared node is written
# once and referred to twice.  A printer that walked the program as a tree would write
# `add(log(%x), log(%x))`, and an evaluator that walked it as a tree would compute the
# log twice.  Relay evaluates each node once.  Sharing compounds: with 40 levels of
# `e = add(e, e)` a tree has 2⁴⁰ leaves, yet the program is 40 calls and runs at once:

# %%
y = relay.var("y", shape=(2,))
e = y
for _ in range(40):
    e = relay.add(e, e)
deep = relay.IRModule.from_expr(relay.Function([y], e))
start = time.perf_counter()
value = relay.create_executor("interpreter", mod=deep).evaluate()(np.ones(2, "float32"))
seconds = time.perf_counter() - start
assert value[0] == 2.0**40
print(f"{len(deep.astext().splitlines()) - 3} lines of text, value {value[0]:.4g} = 2**40, in {seconds:.3f} s")

# %% [markdown]
# ## The two pictures
#
# `relay.viz.compare` draws the program twice.  Left, the **DAG**: every node once, the
# shared `log` with a double border and two out-edges.  Right, the **ANF** — the program
# after `ToANormalForm`: one `let` per value, in the order they are computed.

# %%
relay.viz.compare(mod)

# %% [markdown]
# Both pictures come from plain data: `relay.viz.to_dot` returns the DOT source (what
# Graphviz lays out), and the graph knows which nodes are shared.

# %%
dot = relay.viz.to_dot(mod, mode="dag")
edges = [line.strip() for line in dot.splitlines() if re.match(r"\s*\w+ -> \w+ ", line)]
print("\n".join(edges))
graph = relay.viz.build_graph(mod, mode="dag")
shared = [n for n in graph.nodes.values() if n.shared]
print("shared:", [n.label.split("\n")[0] for n in shared])
# The shared log is drawn once, with one edge per use (both arguments of add).
assert [n.label.split("\n")[0] for n in shared] == ["log"]
assert sum(e.startswith(f"{shared[0].id} -> ") for e in edges) == 2, edges

# %% [markdown]
# ## A-normal form
#
# `mod.astext(form="anf")` prints the ANF; the pass `ToANormalForm` builds it.  The two
# programs compute the same thing, but their trees differ: in the DAG the first argument
# of `add` *is* the `log` call; in ANF it is a variable, bound to the log by a `let`.  A
# pass looking for `add(log(a), b)` has to look the variable up (tutorial 5 does).

# %%
print(mod.astext(form="anf"))
anf = relay.transform.ToANormalForm()(mod)
body = anf["main"].body
print("the ANF body is a", type(body).__name__, "whose value is a call of", body.value.op.name)
print("the add's first argument is a", type(body.body.value.args[0]).__name__)

# %% [markdown]
# ## Where is a value computed?  `if`
#
# The seed's second point.  Here `%1 = log(%x)` is only used in the `then` branch.  Is it
# computed before the `if`, or only when `%c` is true?  The dataflow graph does not say:
# it has no notion of scope.  `ToANormalForm` must decide, and it puts each value in the
# innermost scope that contains all its uses — here, inside the branch:

# %%
scoped = relay.parse("""
def @main(%x: Tensor[(3), float32], %c: bool) {
  %1 = log(%x);
  if (%c) { add(%1, %1) } else { %x }
}
""")
print(scoped.astext(form="anf"))
relay.viz.compare(scoped)

# %% [markdown]
# A `let` fixes the place: "if we change `%1 = log(%x)` to `let %v1 = log(%x)`, we clearly
# specify the computation location to be outside of the if scope".  The ANF keeps it
# there:

# %%
with_let = relay.parse("""
def @main(%x: Tensor[(3), float32], %c: bool) {
  let %v1 = log(%x);
  if (%c) { add(%v1, %v1) } else { %x }
}
""")
print(with_let.astext(form="anf"))

# %% [markdown]
# ## Closures
#
# The same question for a function that returns a closure.  Is `%1` computed once, when
# the closure is made, or at every call of the closure?

# %%
closure = relay.parse("""
def @main(%x: Tensor[(3), float32]) {
  %1 = log(%x);
  %2 = fn (%y: Tensor[(3), float32]) { add(%y, %1) };
  %2
}
""")
print(closure.astext(form="anf"))
relay.viz.compare(closure)

# %% [markdown]
# `ToANormalForm` moved the log *into* the closure (its only use is there): it is now
# recomputed at every call.  The answer is the same either way — Relay's operators are
# pure — but the cost is not, which is why the seed says that when lowering to a runtime
# program "we need to be precise about the scope of computation".  Write the `let`
# yourself when the place matters:

# %%
closure_let = relay.parse("""
def @main(%x: Tensor[(3), float32]) {
  let %v1 = log(%x);
  fn (%y: Tensor[(3), float32]) { add(%y, %v1) }
}
""")
print(closure_let.astext(form="anf"))
xs = np.array([1.0, 2.0, 4.0], "float32")
f1 = relay.create_executor("interpreter", mod=closure).evaluate()(xs)
f2 = relay.create_executor("interpreter", mod=closure_let).evaluate()(xs)
print("same closure values:", np.allclose(f1(xs), f2(xs)))

# %% [markdown]
# ## Exercises
#
# **1. Count the shared nodes.**  Write `count_shared(func)`: the number of *call* nodes
# of a function used more than once — as two arguments of one call (`add(%1, %1)`) or by
# two different calls.  Use an `ExprVisitor`: its memo visits each node once, so in
# `visit_call` you see each *user* once and can count its arguments.  The check runs it on
# several programs (calls only) against an independent count.

# %%
class UseCounter(relay.ExprVisitor):
    def __init__(self):
        super().__init__()
        self.uses = {}

    def visit_call(self, call):
        for arg in call.args:
            if isinstance(arg, relay.Call):
                self.uses[arg] = self.uses.get(arg, 0) + 1
        super().visit_call(call)


def count_shared(func):
    counter = UseCounter()
    counter.visit(func)
    return sum(1 for n in counter.uses.values() if n > 1)


check_count_shared(count_shared)

# %% [markdown]
# **2. Inside or outside?**  For the program below, predict where `ToANormalForm` puts
# the call of each operator used once (`exp`, `log`, `sqrt`, `negative`): `"outside"`
# (computed before the `if` and the closure), `"if"` (inside a branch) or `"fn"` (inside
# the closure).  The check runs the real pass.

# %%
puzzle = """
def @main(%x: Tensor[(3), float32], %c: bool) {
  %0 = exp(%x);
  %1 = log(%x);
  %2 = sqrt(%x);
  %3 = negative(%x);
  %4 = if (%c) { add(%0, %1) } else { multiply(%0, %3) };
  %5 = fn (%y: Tensor[(3), float32]) { multiply(%y, %2) };
  add(%5(%4), %3)
}
"""
where = {"exp": "outside", "log": "if", "sqrt": "fn", "negative": "outside"}
check_scope_prediction(where, puzzle)

# %% [markdown]
# ## Sharing gone wrong: the pass stepper
#
# A common-subexpression eliminator merges nodes that compute the same thing, making new
# shared nodes.  Here is a *wrong* one: it merges calls by operator name only and forgets
# to compare their arguments, so `log(%y)` becomes `log(%x)`.  The stepper runs the
# pipeline one pass at a time, executes the program after every pass (with the LLVM JIT
# and the interpreter) and compares with the original's result: the first pass that
# changes the result is flagged in red.  Click **next ▶** until you reach it, and look at
# the text diff and the graph tab.

# %%
class NaiveCSE(relay.ExprMutator):
    """Merge one-argument calls of the same operator — forgetting to compare arguments."""

    def __init__(self):
        super().__init__()
        self.first = {}

    def visit_call(self, call):
        new = super().visit_call(call)
        if isinstance(new.op, relay.Op) and len(new.args) == 1:
            return self.first.setdefault(new.op.name, new)  # BUG: the key ignores the argument
        return new


@relay.transform.function_pass(opt_level=0, name="NaiveCSE")
def naive_cse(func, mod, ctx):
    return NaiveCSE().visit(func)


program = relay.parse("""
def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(2, 3), float32]) {
  %0 = log(%x);
  %1 = log(%x);
  %2 = log(%y);
  %3 = add(%0, %1);
  add(%3, multiply(%2, add(1f, 1f)))
}
""")
positive = np.random.default_rng(2).uniform(0.5, 2.0, (2, 2, 3)).astype("float32")  # log needs x > 0
stepper = relay.PassStepper(
    program,
    passes=["EliminateCommonSubexpr", "FoldConstant", naive_cse, "DeadCodeElimination", "FuseOps"],
    inputs=list(positive),
)
print("flagged:", stepper.trace.flagged.name)
stepper
