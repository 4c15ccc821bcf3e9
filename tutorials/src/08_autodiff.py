# %% [markdown]
# # 8. Automatic differentiation with `gradient`
#
# Relay was designed as a *differentiable* language.  `relay.transform.gradient(f)` turns a
# function into one that returns `f`'s value **and** the gradient of (the sum of) that value
# with respect to every parameter, as one Relay program (reverse mode).  We check it
# against finite differences, see how sharing accumulates gradients, and train a tiny
# model by gradient descent.

# %%
# %load_ext relay_nb
import numpy as np
from checks import check_finite_difference, check_loss_gradient

import relay_nb as relay

infer = relay.transform.InferType()


def compile_fn(func):
    """A Python callable running a Relay function with the interpreter."""
    return relay.create_executor("interpreter", mod=relay.IRModule.from_expr(func)).evaluate()


# %% [markdown]
# ## The gradient program
#
# For `f(x) = sum(tanh(x) * x)` the result is a function of the same parameters returning
# `(value, (df/dx,))`.  Printed, it is the forward computation as a `let` chain followed by
# the backward one, each operator's rule taken from the registry's `grad` column.

# %%
mod = infer(relay.parse("def @main(%x: Tensor[(3), float64]) { sum(multiply(tanh(%x), %x)) }"))
grad_f = relay.transform.gradient(mod["main"], mod=mod)
print(relay.IRModule.from_expr(grad_f))

x = np.array([0.1, 0.5, -1.0])
value, (dx,) = compile_fn(grad_f)(x)
print("value", value, "\ndx   ", dx, "\nby hand", np.tanh(x) + x * (1 - np.tanh(x) ** 2))

# %% [markdown]
# ## Exercise 1: finite differences
#
# A numerical check needs no calculus: perturb one element of `x` at a time by `±eps` and
# take `(sum f(x + eps e_i) - sum f(x - eps e_i)) / (2 eps)`.  Write it for numpy functions.

# %%
def finite_difference(f, x, eps=1e-5):
    """Gradient of sum(f(x)) with respect to x, by central differences."""
    grad = np.zeros_like(x, dtype="float64")
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += eps
        down[i] -= eps
        grad[i] = (np.sum(f(up)) - np.sum(f(down))) / (2 * eps)
    return grad


check_finite_difference(finite_difference)

# %% [markdown]
# Now use it as the oracle for `gradient`, on a function with several parameters and
# broadcasting.  Work in `float64` so the finite differences are accurate.

# %%
two = infer(relay.parse("""
def @main(%a: Tensor[(2, 3), float64], %b: Tensor[(3), float64]) {
  %0 = multiply(%a, %b);           // b broadcasts over the rows of a
  sum(exp(%0) / (1f64 + %a * %a))
}
"""))
run_two = compile_fn(two["main"])
_, (da, db) = compile_fn(relay.transform.gradient(two["main"], mod=two))(
    a := np.random.default_rng(0).standard_normal((2, 3)), b := np.array([0.3, -0.7, 1.1])
)
fd_a = finite_difference(lambda v: run_two(v, b), a)
fd_b = finite_difference(lambda v: run_two(a, v), b)
print("da matches:", np.allclose(da, fd_a, rtol=1e-6), " db matches:", np.allclose(db, fd_b, rtol=1e-6))

# %% [markdown]
# ## Sharing accumulates
#
# In the seed's `%1 = log(%x); add(%1, %1)` the node `%1` has two users, so its adjoint
# is the *sum* of two contributions: d/dx = 2/x.  The gradient program computes `log` once.

# %%
shared = infer(relay.parse("def @main(%x: Tensor[(3), float64]) { %1 = log(%x); add(%1, %1) }"))
_, (dx,) = compile_fn(relay.transform.gradient(shared["main"], mod=shared))(x := np.array([0.5, 1.0, 4.0]))
print(dx, "== 2 / x:", np.allclose(dx, 2 / x))

# %% [markdown]
# ## Training a tiny model
#
# Fit `y ≈ sigmoid(w * x + c)` by gradient descent, with scalar `w` and `c` broadcast over
# the data.  The gradient program returns the loss and `(dL/dw, dL/dc, dL/dx, dL/dy)`; we
# use the first two (a broadcast parameter's gradient is summed back to its shape).

# %%
model = infer(relay.parse("""
def @main(%w: float64, %c: float64, %x: Tensor[(16), float64], %y: Tensor[(16), float64]) {
  %0 = sigmoid(add(multiply(%w, %x), %c));
  %1 = subtract(%0, %y);
  sum(multiply(%1, %1))
}
"""))
step = compile_fn(relay.transform.gradient(model["main"], mod=model))
xs = np.random.default_rng(1).uniform(-3, 3, 16)
ys = 1 / (1 + np.exp(-(1.5 * xs - 0.5)))  # generated with w = 1.5, c = -0.5
w, c = np.float64(0), np.float64(0)
for it in range(121):
    loss, (dw, dc, _, _) = step(w, c, xs, ys)
    w, c = w - 1.0 * dw, c - 1.0 * dc
    if it % 30 == 0:
        print(f"step {it:3}: loss {loss:.3e}  w {w:.4f}  c {c:.4f}")

# %% [markdown]
# ## What is not differentiated
#
# The supported fragment is dataflow (operators, `let`, tuples) over statically shaped
# tensors.  Control flow raises a clear error — inline or rewrite it first:

# %%
try:
    branchy = infer(relay.parse("def @main(%x: float64) { if (%x > 0f64) { %x } else { negative(%x) } }"))
    relay.transform.gradient(branchy["main"], mod=branchy)
except relay.RelayError as err:
    print(err)

# %% [markdown]
# ## Exercise 2: a loss and its gradient
#
# Write the squared error `sum((w * x - y)^2)` as `@main(%w, %x, %y)` over
# `Tensor[(4), float64]`, differentiate it, and put dL/dw at the given point in `dw`.

# %%
w0 = np.array([0.5, -1.0, 2.0, 0.0])
x0 = np.array([1.0, 2.0, -1.0, 3.0])
y0 = np.array([0.0, 1.0, 1.0, -2.0])

my_loss = """
def @main(%w: Tensor[(4), float64], %x: Tensor[(4), float64], %y: Tensor[(4), float64]) {
  %0 = subtract(multiply(%w, %x), %y);
  sum(multiply(%0, %0))
}
"""
loss_mod = infer(relay.parse(my_loss))
_, (my_dw, _, _) = compile_fn(relay.transform.gradient(loss_mod["main"], mod=loss_mod))(w0, x0, y0)
check_loss_gradient(my_loss, my_dw, w0, x0, y0)
