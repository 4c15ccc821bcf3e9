# %% [markdown]
# # 3. Types: inference, relations, polymorphism, errors
#
# Every Relay expression has a type: tensors `Tensor[(2, 3), float32]` (a scalar is just
# `float32`), tuples `(A, B)`, functions `fn (A) -> B`, references and algebraic data
# types.  You rarely write them all: `InferType` solves for the most general types, using
# *type relations* for operators.  This notebook shows inference at work, how relations
# compute shapes, polymorphic functions, and what a type error looks like.

# %%
# %load_ext relay_nb
import numpy as np
from checks import check_factorial, check_twice, check_type_prediction

import relay_nb as relay
from relay_nb.typing.relations import forward_relation

infer = relay.transform.InferType()

# %% [markdown]
# ## Inference
#
# `InferType` is a pass: module in, module out, with every expression's `.checked_type`
# filled in.  Printing a typed module shows the type of each node in a comment.

# %%
mod = infer(relay.parse("""
def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(3), float32]) {
  %0 = multiply(%x, %y);
  (sum(%0, axis=[1]), %0)
}
"""))
print(mod)
print("@main :", mod["main"].checked_type)

# %% [markdown]
# In a `%%relay` cell, `--show types` prints the same typed text.

# %%
# %%relay --show types
# def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(3), float32]) {
#   %0 = multiply(%x, %y);
#   (sum(%0, axis=[1]), %0)
# }

# %% [markdown]
# ## Type relations
#
# An operator's type is a *relation* between its argument types and its result type.
# `add` uses `Broadcast`: both arguments are tensors of one dtype and the result's shape is
# their NumPy broadcast — aligned from the right, a 1 stretches to the other size.

# %%
bcast = infer(relay.parse("def @main(%a: Tensor[(3, 1), float32], %b: Tensor[(1, 4), float32]) { add(%a, %b) }"))
print(bcast["main"].checked_type)
print(relay.op.get_column("type_rel")["add"], "-", relay.op.get_column("type_rel")["nn.conv2d"])

# %% [markdown]
# A function with no annotations gets the most general type: its parameters become type
# variables constrained by the relation, exactly the reference's
# `fn(%x, %y) where Broadcast { add(%x, %y) }`:

# %%
print(infer(relay.parse("fn (%x, %y) { add(%x, %y) }"))["main"].checked_type)

# %% [markdown]
# Relations are Python functions, and you can register your own operator with one.  Here
# an outer product: two vectors `(n)` and `(m)` give an `(n, m)` matrix.  The `impl` column
# is the numpy code the interpreter runs.

# %%
@forward_relation("Outer")
def outer_rel(inputs, attrs, reporter):
    """Two vectors of one dtype, (n) and (m), give an (n, m) matrix."""
    a, b = inputs
    if len(a.shape) != 1 or len(b.shape) != 1:
        raise relay.RelayTypeError(f"outer takes two vectors, got shapes {a.shape} and {b.shape}")
    return relay.TensorType((a.shape[0], b.shape[0]), reporter.unify_dtype(a.dtype, b.dtype))


relay.op.register_op(
    "tutorial.outer", 2, type_rel=outer_rel, arg_names=("a", "b"), doc="Outer product of two vectors.",
    impl=lambda args, attrs, out_type: np.multiply.outer(*args), override=True,
)
outer = infer(relay.parse("def @main(%a: Tensor[(3), float32], %b: Tensor[(2), float32]) { tutorial.outer(%a, %b) }"))
print(outer["main"].checked_type)
print(relay.create_executor("interpreter", mod=outer).evaluate()(np.arange(3, dtype="float32"), np.ones(2, "float32")))

# %% [markdown]
# ## Polymorphism
#
# A function can take type parameters: `def @id[A](%x: A) -> A` works for every type `A`.
# Each call instantiates `A` afresh — here as a tensor, a tuple and a `bool`.  Type
# parameters have kinds: `Shape` and `BaseType` ones restrict to tensors.

# %%
poly = infer(relay.parse("""
def @id[A](%x: A) -> A { %x }
def @main(%t: Tensor[(2), float32]) {
  (@id(%t), @id((1, %t)), @id(True))
}
"""))
print(poly["main"].checked_type)
print(infer(relay.parse("fn<s : Shape, bt : BaseType>(%x : Tensor[s, bt]) { %x }"))["main"].checked_type)

# %% [markdown]
# ## Type errors
#
# An ill-typed program raises a `relay.RelayTypeError` (a `relay.RelayError`) whose message
# names the operator, the line and the column, and underlines the culprit.

# %%
def show_error(text):
    try:
        infer(relay.parse(text))
        print("no error")
    except relay.RelayError as err:
        print(err)


show_error("""def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(4, 3), float32]) {
  add(%x, %y)
}""")
show_error("""def @main(%x: Tensor[(2, 3), float32]) {
  nn.softmax(%x, axis=3)
}""")
show_error("""def @f(%n: int32) -> int32 { %n }
def @main() { @f(1.5f) }""")

# %% [markdown]
# The reference's factorial branches on a whole tensor comparison, but `if` needs a scalar
# `bool` — so, as written, it is ill-typed:

# %%
show_error("""
let %fact = fn(%x : Tensor[(10, 10), float32]) -> Tensor[(10, 10), float32] {
  if (%x == Constant(0, (10, 10), float32)) {
    Constant(1, (10, 10), float32)
  } else {
    %x * %fact(%x - Constant(1, (10, 10), float32))
  }
};
%fact(Constant(10, (10, 10), float32))
""")

# %% [markdown]
# ## Exercises
#
# **1. Predict a type.**  What is the type of `@main`'s result?  Write it as text.

# %%
program = """
def @main(%a: Tensor[(5, 1, 3), float32], %b: Tensor[(4, 1), float32]) {
  %0 = add(%a, %b);
  sum(%0, axis=[0])
}
"""
my_type = "Tensor[(4, 3), float32]"  # <- your answer
check_type_prediction(my_type, program)

# %% [markdown]
# **2. Fix the factorial.**  Write `@fact(%n: int32) -> int32` so that it type-checks and
# computes n! (scalars make `%n == 0` a `bool`).

# %%
my_fact = """
def @fact(%n: int32) -> int32 {
  if (%n == 0) {
    1
  } else {
    %n * @fact(%n - 1)
  }
}
"""
check_factorial(my_fact)

# %% [markdown]
# **3. Polymorphism.**  Write `@twice`, applying a function `%f` two times to `%x`, with a
# type parameter so it works at any type.  The check uses it on `Tensor[(2), float32]` and
# on `int32`.

# %%
my_twice = """
def @twice[A](%f: fn (A) -> A, %x: A) -> A {
  %f(%f(%x))
}
"""
check_twice(my_twice)
