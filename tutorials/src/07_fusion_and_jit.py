# %% [markdown]
# # 7. Fusion and the LLVM JIT
#
# The last passes of a compile decide what actually runs.  `FuseOps` groups operator
# calls into *primitive functions*, one per kernel; the backend compiles each into
# machine code.  relay_nb lowers every primitive function to LLVM IR and compiles it with
# llvmlite, in-process: `relay.build(mod)` gives you the compiled program, its kernels,
# their LLVM IR and assembly.  This notebook looks at all of that, times it against numpy,
# and shows the kernel cache at work.

# %%
# %load_ext relay_nb
import time

import numpy as np
from checks import check_fusion_prediction, check_one_kernel

import relay_nb as relay
from relay_nb.backend.llvm.cache import default_cache

rng = np.random.default_rng(0)


def median_ms(f, repeat=21):
    """Median wall time of f() in milliseconds (the median ignores the odd slow run)."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        f()
        times.append(time.perf_counter() - start)
    return 1e3 * float(np.median(times))


# %% [markdown]
# ## FuseOps and its `Primitive` functions
#
# A conv2d with its bias and relu, a reduction (`mean`), an `exp` and a softmax.  After `FuseOps`,
# every op call sits inside a `fn (..., Primitive=1)`, called where its result is used.
# The rules are TVM's, read from each op's *fusion pattern*: a conv2d (out-elementwise
# fusable) takes an elementwise epilogue (`bias_add`, `relu`); a reduction takes none;
# elementwise ops fuse into the injective ops and reductions after them.

# %%
net_text = """
def @main(%x: Tensor[(1, 8, 16, 16), float32], %w: Tensor[(8, 8, 3, 3), float32], %b: Tensor[(8), float32]) {
  %0 = nn.conv2d(%x, %w, padding=[1, 1], channels=8, kernel_size=[3, 3]);
  %1 = nn.bias_add(%0, %b);
  %2 = nn.relu(%1);
  %3 = mean(%2, axis=[2, 3]);
  %4 = exp(%3);
  nn.softmax(%4)
}
"""
net = relay.parse(net_text)
fused = relay.transform.FuseOps()(relay.transform.InferType()(net))
print(fused.astext(show_types=False))
patterns = relay.op.get_column("TOpPattern")
print({name: patterns[name].name for name in ["nn.conv2d", "nn.bias_add", "nn.relu", "mean", "exp", "nn.softmax"]})

# %% [markdown]
# The primitive functions are ordinary Relay: find them with a visitor.

# %%
def primitive_functions(mod):
    found = []
    relay.post_order_visit(
        mod["main"], lambda e: found.append(e) if isinstance(e, relay.Function) and e.attrs.get("Primitive") else None
    )
    return found


for f in primitive_functions(fused):
    ops = []
    relay.post_order_visit(f.body, lambda e: ops.append(e.op.name) if isinstance(e, relay.Call) else None)
    print(f"{len(f.params)} params: {' -> '.join(ops)}")

# %% [markdown]
# ## `relay.build`: compile every kernel
#
# `relay.build(mod)` type-checks, fuses and compiles each primitive function now; the
# result is called like `@main`.  `report()` says which ops ran natively and which fell
# back to numpy (none here), with compile and run times.

# %%
params = relay.transform.InferType()(net)["main"].params
args = [rng.standard_normal(p.checked_type.shape).astype("float32") for p in params]
start = time.perf_counter()
lib = relay.build(net)
print(f"built {len(lib.kernels)} kernels in {time.perf_counter() - start:.2f} s")
out = lib(*args)
reference = relay.create_executor("interpreter", mod=net).evaluate()(*args)  # numpy implementations
assert np.allclose(out, reference, rtol=1e-5, atol=1e-6), "the JIT and the interpreter disagree"
print("JIT == interpreter on random inputs:", out.round(4))
print(lib.report())

# %% [markdown]
# ## A fused kernel, down to the machine
#
# Each kernel keeps its Relay source, the LLVM IR relay_nb generated (a loop nest over
# the output), the IR after LLVM's optimizer, and the host assembly.  Take the simplest
# fused kernel, `exp(x) * 2 + tanh(x)`: one loop, no temporary arrays.

# %%
n = 1 << 20
chain = relay.parse(f"def @main(%x: Tensor[({n}), float32]) {{ add(multiply(exp(%x), 2f), tanh(%x)) }}")
chain_lib = relay.build(chain)
kernel = chain_lib.kernels[0]
print(kernel.summary())
print(kernel.source)
print("\n".join(kernel.ir.splitlines()[:30]))

# %% [markdown]
# After optimization the loop is vectorized: `<8 x float>` is eight lanes at a time (the
# width depends on your CPU), and `exp`/`tanh` are inlined polynomial approximations.

# %%
optimized = kernel.optimized_ir.splitlines()
print(f"{len(optimized)} lines; vector lines: {sum('x float>' in line for line in optimized)}")
print("\n".join([line for line in optimized if "define" in line or "fmul <" in line][:8]))
asm = kernel.asm.splitlines()
arithmetic = [line for line in asm if any(op in line for op in ("mulps", "addps", "fmadd"))]
print(f"assembly: {len(asm)} lines, {len(arithmetic)} packed float multiply/add instructions, e.g.")
print("\n".join(arithmetic[:8]))

# %% [markdown]
# ## The JIT against numpy
#
# numpy computes `np.exp(x) * 2 + np.tanh(x)` as four passes over memory with three
# temporary arrays; the fused kernel reads `x` once and writes the result once.  But a
# JIT call has a fixed cost (checking arguments, the interpreter around the kernel), so
# for tiny arrays numpy wins.  Medians of 21 runs:

# %%
for size in (1_000, 100_000, 1 << 20):
    prog = relay.parse(f"def @main(%x: Tensor[({size}), float32]) {{ add(multiply(exp(%x), 2f), tanh(%x)) }}")
    compiled = relay.build(prog)
    x = rng.standard_normal(size).astype("float32")
    want = np.exp(x) * 2 + np.tanh(x)
    assert np.allclose(compiled(x), want, rtol=1e-5, atol=1e-5)
    jit_ms = median_ms(lambda: compiled(x))
    np_ms = median_ms(lambda: np.exp(x) * 2 + np.tanh(x))
    print(f"{size:>8} floats: JIT {jit_ms:7.3f} ms   numpy {np_ms:7.3f} ms   speed-up {np_ms / jit_ms:4.1f}x")

# %% [markdown]
# ## The kernel cache: running again compiles nothing
#
# Kernels are cached by the *structure* of their primitive function (and its types) for
# the whole process.  Building the same network again — or any program with the same
# fused groups — finds every kernel in the cache.  Re-run this cell: still no compile.

# %%
cache = default_cache()
before = cache.stats()
start = time.perf_counter()
again = relay.build(net)
seconds = time.perf_counter() - start
after = cache.stats()
print(f"second build: {after['compiles'] - before['compiles']} compiles, "
      f"{after['hits'] - before['hits']} cache hits, {seconds * 1e3:.1f} ms")
print("same kernel objects:", all(a is b for a, b in zip(again.kernels, lib.kernels)))
changed = relay.parse(net_text.replace("exp(%3)", "tanh(%3)"))  # one op changed
before = cache.stats()
relay.build(changed)
print("after changing one op:", cache.stats()["compiles"] - before["compiles"], "kernel compiled")

# %% [markdown]
# ## Exploring a real model
#
# A zoo model is hundreds of nodes; `relay.viz.explore` shows it as groups you open and
# close: global functions, the fused functions `FuseOps` made, scopes, and the modules its
# weight names spell (`stage2_unit1_conv1_weight` -> `stage2` ▸ `unit1` ▸ `conv1`).  It opens
# at a readable top level: click a group to open it in place, wheel to zoom, drag to pan,
# search an op, a `%name`, a type or an attribute (Enter jumps to the next match, `b` goes
# back), click a node to select its line in the text.  Exported, it is a static picture of
# that top level.

# %%
resnet, _ = relay.testing.resnet.get_workload(num_layers=18)
fused_resnet = relay.transform.FuseOps(fuse_opt_level=2)(resnet)
view = relay.viz.explore(fused_resnet)
groups = view.hierarchy.groups
print(len(view.hierarchy.nodes), "nodes;", sum(g.kind == "fused" for g in groups.values()), "fused functions")
print("first view:", len(view.visible()), "items")
print("conv2d is in:", sorted({m.path for m in view.hierarchy.search("nn.conv2d")})[:3], "...")
view

# %% [markdown]
# ## Exercises
#
# **1. How many kernels?**  Predict how many primitive functions `FuseOps` makes for each
# program.  The check runs the real pass.

# %%
programs = [
    # an elementwise chain
    "def @main(%x: Tensor[(4, 4), float32]) { %0 = exp(%x); %1 = multiply(%0, 2f); nn.relu(%1) }",
    # a dense with its epilogue, then a reduction and something after it
    "def @main(%x: Tensor[(2, 8), float32], %w: Tensor[(4, 8), float32]) { %0 = nn.dense(%x, %w); %1 = nn.relu(%0); %2 = sum(%1, axis=[1]); exp(%2) }",
    # elementwise ops feeding a reduction
    "def @main(%x: Tensor[(4, 4), float32]) { %0 = exp(%x); %1 = add(%0, 1f); max(%1, axis=[0]) }",
]
kernels = [1, 3, 1]
check_fusion_prediction(kernels, programs)

# %% [markdown]
# **2. One kernel.**  Write `@main(%x: Tensor[(64, 64), float32], %b: Tensor[(64), float32])`
# computing the SiLU of `x + b` (`b` broadcast along the last axis): `v * sigmoid(v)`.  It
# must compile to exactly one native kernel.  The check compares with numpy.

# %%
silu = """
def @main(%x: Tensor[(64, 64), float32], %b: Tensor[(64), float32]) {
  %0 = add(%x, %b);
  multiply(%0, sigmoid(%0))
}
"""
check_one_kernel(silu)
