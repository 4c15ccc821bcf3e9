# %% [markdown]
# # 1. Relay's expressions and its text format
#
# Relay is the functional intermediate representation of TVM's deep-learning compiler: a
# small, pure, expression-oriented language.  This notebook walks through the examples of
# the *Expressions in Relay* reference, runs every one of them, and ends with three short
# exercises.  `relay_nb` re-implements Relay in Python, with TVM's API:
# `import relay_nb as relay` reads like `from tvm import relay`.
#
# Run the cells from top to bottom (Shift-Enter).

# %%
# %load_ext relay_nb
import numpy as np
from checks import check_let_program, check_prediction, check_same_program

import relay_nb as relay


def run(mod, *args):
    """Evaluate @main of a module with the reference interpreter."""
    return relay.create_executor("interpreter", mod=mod).evaluate()(*args)


# %% [markdown]
# ## Text in, module out
#
# `relay.parse` reads the text format into an `IRModule`: a map from global names (`@main`,
# `@f`) to functions.  A bare expression becomes `@main`, a function of its free variables.
# Printing a module gives the canonical text again, which always parses back to the same
# program.

# %%
mod = relay.parse("fn (%x, %y) { add(%x, %y) }")
print(mod)
print(run(mod, np.float32(1.5), np.float32(2.0)))

# %% [markdown]
# With the extension loaded, a `%%relay` cell does the same in one step: it parses and
# type-checks the cell, shows it, stores the module in a Python variable (`-n`) and can run
# it (`--run` takes Python expressions).

# %%
# %%relay -n adder --run 1.5 2.0
# def @main(%x: float32, %y: float32) {
#   add(%x, %y)
# }

# %% [markdown]
# ## Variables: `@global` and `%local`
#
# Globals carry the sigil `@`, locals `%`.  A `let` may reuse a name: the new `%a` *shadows*
# the old one in the expressions after it, and the old one is untouched.  (Each definition
# is its own `Var` object; the printer renames shadowed variables so the text stays
# unambiguous.)  The reference says this program has value 4:

# %%
shadowing = relay.parse("""
let %a = 1;
let %b = 2 * %a;   // %b = 2
let %a = %a + %a;  // %a = 2. %a is shadowed
%a + %b            // has value 2 + 2 = 4
""")
print(shadowing)
print("value:", run(shadowing))

# %% [markdown]
# ## Functions and closures
#
# `fn (params) { body }` is an expression.  Annotations are optional: without them Relay
# infers the most general type.  A function value is a *closure*: it remembers the values
# of its free variables where it was defined.  Here `%f` captured `%x = 0`, so calling it
# with a tensor of ones still multiplies by zero:

# %%
closure = relay.parse("""
let %g = fn() {
  let %x = Constant(0, (10, 10), float32);
  // %x is a free variable in the below function
  fn(%y) { %y * %x }
};
// the %x in %g's body is not in scope anymore
// %f is a closure where %x maps to Constant(0, (10, 10), float32)
let %f = %g();
let %x = Constant(1, (10, 10), float32);
%f(%x)
""")
out = run(closure)
print(out.shape, "all zero:", not out.any())

# %% [markdown]
# ## Operators, calls, modules
#
# Operators (`add`, `nn.conv2d`, ...) live in a registry with one column per kind of
# metadata: type relation, fusion pattern, numpy implementation, documentation.  The infix
# `+ - * /` are sugar for `add`, `subtract`, `multiply`, `divide`.

# %%
print(relay.op.get_column("doc")["add"])
print("type relation:", relay.op.get_column("type_rel")["add"].name)
print("fusion pattern:", relay.op.get_column("TOpPattern")["add"].name)

# %% [markdown]
# A module holds several global functions that call each other by name — the
# indirection through `@name` is what makes (mutual) recursion possible.  The *Introduction
# to Relay IR* uses this module; graph bindings (`%1 = ...`) name each intermediate result:

# %%
muladd = relay.parse("""
def @muladd(%x, %y, %z) {
  %1 = mul(%x, %y);
  %2 = add(%1, %z);
  %2
}
def @myfunc(%x) {
  %1 = @muladd(%x, 1, 2);
  %2 = @muladd(%1, 2, 3);
  %2
}
""")
myfunc = relay.create_executor("interpreter", mod=muladd).evaluate(muladd.get_global_var("myfunc"))
print("myfunc(5) =", myfunc(np.int32(5)), " (x + 2) * 2 + 3 =", (5 + 2) * 2 + 3)

# %% [markdown]
# Recursion through a global: the reference's Ackermann function.

# %%
ackermann = relay.parse("""
def @ackermann(%m : Tensor[(), int32], %n : Tensor[(), int32]) -> Tensor[(), int32] {
  if (%m == 0) {
    %n + 1
  } else if (%m > 0 && %n == 0) {
    @ackermann(%m - 1, 1)
  } else {
    @ackermann(%m - 1, @ackermann(%m, %n - 1))
  }
}
""")
ack = relay.create_executor("interpreter", mod=ackermann).evaluate(ackermann.get_global_var("ackermann"))
print("ackermann(2, 3) =", ack(2, 3))

# %% [markdown]
# ## Tuples, projection, `let`, graph bindings, `if`
#
# `(a, b)` builds a tuple and `%t.0` projects a field.  `let` fixes *where* a value is
# computed; a graph binding `%1 = ...` only names a node of the dataflow graph (a node used
# twice is still computed once).  The printer can show either form:

# %%
graph = relay.parse("""
%1 = %a + %b;
%2 = %1 + %1;
%2 * %2
""")
print(graph.astext(form="graph"))
print(graph.astext(form="anf"))
print("a=1, b=2:", run(graph, np.float32(1), np.float32(2)), "= ((1 + 2) * 2) ** 2")

# %%
tuples = relay.parse("""
fn(%a : Tensor[(10, 10), float32], %b : float32, %c : Tensor[(100, 100), float32]) {
  let %tup = (%a, %b);
  ((%tup.0 + %tup.1), %c)
}
""")
left, right = run(tuples, np.ones((10, 10), "float32"), np.float32(2), np.zeros((100, 100), "float32"))
print(left[0, :3], right.shape)

# %%
choose = relay.parse("fn (%t: int32, %u: int32) { if (%t == %u) { %t } else { %u } }")
print(run(choose, 3, 3), run(choose, 3, 5))

# %% [markdown]
# ## The same program from Python
#
# Every node has a Python builder with TVM's name: `relay.var`, `relay.const`,
# `relay.add`, `relay.Function`, `relay.Let`, `relay.If`, `relay.Tuple` ...

# %%
x = relay.var("x", shape=(3,))
y = relay.var("y")
body = relay.Let(y, relay.add(x, relay.const(1.0)), relay.multiply(y, x))
func = relay.Function([x], body)
print(relay.IRModule.from_expr(func))

# %% [markdown]
# ## Exercises
#
# Each exercise comes with a worked answer already filled in and a check that says
# `✅ correct` or gives a hint.  Change the answer (or break it on purpose) and re-run the
# check.
#
# **1. Predict.**  What does this program evaluate to?  Put your number in `my_prediction`.

# %%
puzzle = """
let %a = 3;
let %b = %a * %a;
let %a = %b - %a;
%a + %b
"""
my_prediction = 15  # <- your answer
check_prediction(my_prediction, puzzle)

# %% [markdown]
# **2. Write.**  Write `@main(%x: Tensor[(3), float32])` computing `(x + 1) * x`, binding
# `x + 1` with a `let`.

# %%
my_program = """
def @main(%x: Tensor[(3), float32]) {
  let %y = add(%x, 1f);
  multiply(%y, %x)
}
"""
check_let_program(my_program)

# %% [markdown]
# **3. Build.**  With the Python builders, build the function that this text describes.

# %%
target = "def @main(%p: Tensor[(2, 2), float32], %q: Tensor[(2, 2), float32]) { %1 = subtract(%p, %q); (%1, exp(%1)) }"

p = relay.var("p", shape=(2, 2))
q = relay.var("q", shape=(2, 2))
d = relay.subtract(p, q)
my_function = relay.Function([p, q], relay.Tuple([d, relay.exp(d)]))
check_same_program(my_function, target)
