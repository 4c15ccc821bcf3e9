# %% [markdown]
# # 4. Algebraic data types and pattern matching
#
# Besides tensors and tuples, Relay has *algebraic data types* (ADTs), as in ML or
# Haskell: a type is a list of constructors, each with fields.  `match` takes a value apart
# by its constructor, and recursion — through a global function — walks recursive types.
# This notebook builds natural numbers, lists, options and trees.

# %%
# %load_ext relay_nb
from checks import check_depth, check_double, check_sum_list

import relay_nb as relay

infer = relay.transform.InferType()


def run(mod, name="main", *args):
    """Evaluate a global function of a module with the reference interpreter."""
    return relay.create_executor("interpreter", mod=mod).evaluate(mod.get_global_var(name))(*args)


# %% [markdown]
# ## Nat: zero or a successor
#
# The reference defines `Nat` with the docs' `data` syntax (the text format's `type` works
# too).  A value is built by calling constructors: `S(S(Z))` is 2.  The interpreter returns
# ADT values with a `.constructor` and its `.fields`.

# %%
nat = relay.parse("""
data Nat {
  Z : () -> Nat # zero
  S : (Nat) -> Nat # successor (+1) to a nat
}

def @add(%a: Nat[], %b: Nat[]) -> Nat[] {
  match (%a) {
    case Z() { %b }
    case S(%n) { S(@add(%n, %b)) }   # %n is bound in this clause only
  }
}
""")


def to_int(value):
    """Count the S's of a Nat value."""
    n = 0
    while value.constructor.name == "S":
        value, n = value.fields[0], n + 1
    return n


two_plus_one = relay.parse("def @main() { @add(S(S(Z)), S(Z)) }", init_module=nat)
result = run(two_plus_one)
print(result.constructor.name, "->", to_int(result))

# %% [markdown]
# Patterns nest, and `_` matches anything.  Clauses are tried in order, so a wildcard
# first wins every time (the reference's last example).

# %%
nested = relay.parse("""
def @minus_two(%v: Nat[]) -> Nat[] {
  match (%v) {
    case S(S(%n)) { %n }
    case _ { %v }     # wildcard: everything not matched already
  }
}
def @main() { (@minus_two(S(S(S(Z)))), @minus_two(S(Z))) }
""", init_module=nat)
a, b = run(nested)
print(to_int(a), to_int(b))

# %% [markdown]
# ## Polymorphic types: List, Option, Tree
#
# Type parameters make one definition work for every element type: `List[int32]`,
# `List[Tensor[(3), float32]]`...  Inference finds the instance from the constructors'
# arguments.  This cell is a `%%relay` cell: `-n adts` stores the checked module in the
# Python variable `adts`, and `--show none` skips displaying it.

# %%
# %%relay -n adts --show none
# type List[A] {
#   Cons(A, List[A]),
#   Nil,
# }
#
# type Option[A] {
#   Some(A),
#   None,
# }
#
# type Tree[A] {
#   Leaf,
#   Node(Tree[A], A, Tree[A]),
# }
#
# def @length[A](%l: List[A]) -> int32 {
#   match (%l) {
#     Cons(_, %rest) => 1 + @length(%rest),
#     Nil => 0,
#   }
# }
#
# def @head[A](%l: List[A]) -> Option[A] {
#   match (%l) {
#     Cons(%x, _) => Some(%x),
#     Nil => None,
#   }
# }
#
# def @map[A, B](%f: fn (A) -> B, %l: List[A]) -> List[B] {
#   match (%l) {
#     Cons(%x, %rest) => Cons(%f(%x), @map(%f, %rest)),
#     Nil => Nil,
#   }
# }
#
# def @size[A](%t: Tree[A]) -> int32 {
#   match (%t) {
#     Leaf => 0,
#     Node(%l, _, %r) => @size(%l) + 1 + @size(%r),
#   }
# }

# %% [markdown]
# The cell stored the typed module in the Python variable `adts`; the next program is
# parsed on top of it (`init_module=adts`), so it can use its types and functions.

# %%
demo = infer(relay.parse("""
def @main() {
  let %l = Cons(1, Cons(2, Cons(3, Nil)));
  let %squares = @map(fn (%x: int32) { %x * %x }, %l);
  (@length(%l), @head(%squares), @head(Nil), @size(Node(Node(Leaf, 1f, Leaf), 2f, Leaf)))
}
""", init_module=adts))  # noqa: F821 (adts is set by the %%relay cell)
print(demo["main"].checked_type)
length, head, empty, size = run(demo)
print("length", length, "| head of squares:", head.constructor.name, head.fields[0],
      "| head of Nil:", empty.constructor.name, "| tree size", size)

# %% [markdown]
# Pattern matching is type-checked too.  A `match` must handle every case — `InferType`
# names the values it misses (write `match?` for a match allowed to fail at run time) —
# and a pattern must fit the type of the value it matches.

# %%
try:
    infer(relay.parse("""def @pred(%n: Nat[]) -> Nat[] {
  match (%n) {
    case S(%m) { %m }
  }
}""", init_module=nat))
except relay.RelayError as err:
    print(err)

try:
    infer(relay.parse("""def @bad(%o: Option[int32]) -> int32 {
  match (%o) {
    Cons(%x, _) => %x,
    _ => 0,
  }
}""", init_module=adts))  # noqa: F821
except relay.RelayError as err:
    print(err)

# %% [markdown]
# ## Exercises
#
# **1. Double a Nat.**  Define `@double(%n: Nat[]) -> Nat[]` returning `2n` (you may use
# `@add` — or not).

# %%
my_nat = relay.parse("""
def @double(%n: Nat[]) -> Nat[] {
  match (%n) {
    case Z() { Z() }
    case S(%m) { S(S(@double(%m))) }
  }
}
""", init_module=nat)
check_double(my_nat)

# %% [markdown]
# **2. Sum a list.**  Define `@sum_list(%l: List[int32]) -> int32`.

# %%
my_lists = relay.parse("""
def @sum_list(%l: List[int32]) -> int32 {
  match (%l) {
    Cons(%x, %rest) => %x + @sum_list(%rest),
    Nil => 0,
  }
}
""", init_module=adts)  # noqa: F821
check_sum_list(my_lists)

# %% [markdown]
# **3. Tree depth.**  Define a polymorphic `@depth[A](%t: Tree[A]) -> int32`: a `Leaf` has
# depth 0, a `Node` one more than its deeper subtree (`maximum(a, b)` is an operator).

# %%
my_trees = relay.parse("""
def @depth[A](%t: Tree[A]) -> int32 {
  match (%t) {
    Leaf => 0,
    Node(%l, _, %r) => 1 + maximum(@depth(%l), @depth(%r)),
  }
}
""", init_module=adts)  # noqa: F821
check_depth(my_trees)
