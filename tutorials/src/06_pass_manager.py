# %% [markdown]
# # 6. The pass manager
#
# A compiler is a pipeline of passes.  Relay's *pass infrastructure* (seed 003) decides
# which passes run and observes them: a `PassContext` holds the optimization level, the
# passes that must or must not run, configuration and *instruments*; `Sequential` chains
# passes; `@module_pass` and `@function_pass` turn Python functions into passes.  This
# notebook drives relay_nb's default pipeline on a small CNN, then steps through it with
# the pass stepper, which runs the network after every pass through the LLVM JIT.

# %%
# %load_ext relay_nb
import time

import numpy as np
from checks import check_call_counter, check_pipeline_prediction

import relay_nb as relay
from relay_nb.transform import PassContext

# %% [markdown]
# ## A small CNN
#
# conv2d → batch_norm → relu → max_pool2d → dense → softmax, with the weights as constants
# (as after importing a trained model), so that the optimizer has something to fold.

# %%
def small_cnn(channels=8, size=16, classes=10, seed=0):
    rng = np.random.default_rng(seed)

    def weights(*shape, low=-0.5, high=0.5):
        return relay.const(rng.uniform(low, high, shape).astype("float32"))

    data = relay.var("data", shape=(1, 3, size, size))
    x = relay.nn.conv2d(data, weights(channels, 3, 3, 3), padding=(1, 1), channels=channels, kernel_size=(3, 3))
    x = relay.nn.batch_norm(
        x, weights(channels, low=0.5, high=1.5), weights(channels), weights(channels), weights(channels, low=0.5, high=1.5)
    )[0]
    x = relay.nn.relu(x)
    x = relay.nn.max_pool2d(x, pool_size=(2, 2), strides=(2, 2))
    x = relay.nn.batch_flatten(x)
    x = relay.nn.dense(x, weights(classes, channels * (size // 2) ** 2, low=-0.1, high=0.1))
    x = relay.nn.bias_add(x, weights(classes))
    return relay.IRModule.from_expr(relay.Function([data], relay.nn.softmax(x)))


cnn = small_cnn()
print(cnn.astext(show_meta_data=False))

# %% [markdown]
# ## Optimization levels
#
# `relay.optimize(mod, opt_level=k)` runs relay_nb's default pipeline (TVM's order).  Every
# pass has an `opt_level`; the `PassContext` runs the passes whose level is at most its
# own.  Passes also name the passes they *require* (most need `InferType` first):

# %%
for p in relay.transform.default_passes():
    print(f"{p.info.name:24} opt_level {p.info.opt_level}   requires {', '.join(p.info.required) or '-'}")

# %% [markdown]
# An *instrument* sees every pass run.  `PassRecorder` keeps each pass's name, the module
# before and after, and whether it changed the program; with `leaves_only=True` it skips
# the composite passes (the `Sequential` itself).  Which passes change the CNN at each
# level?

# %%
for level in range(4):
    recorder = relay.transform.PassRecorder(leaves_only=True)
    with PassContext(opt_level=level, instruments=[recorder]):
        relay.optimize(cnn, opt_level=level)
    changed = [r.name for r in recorder.records if r.changed]
    ran = [r.name for r in recorder.records if r.name != "InferType"]
    print(f"O{level}: {len(ran)} passes (+ InferType), changed: {', '.join(changed)}")

# %% [markdown]
# ## Required and disabled passes
#
# `disabled_pass` removes a pass whatever the level; `required_pass` runs one whatever
# the level.  Here common-subexpression elimination (level 3) is forced at level 1, and
# constant folding is turned off at level 3 — so batch norm's arithmetic stays in the
# program:

# %%
dup = relay.parse("""
def @main(%x: Tensor[(4), float32]) {
  %0 = exp(%x);
  %1 = exp(%x);
  add(%0, %1)
}
""")
with PassContext(opt_level=1, required_pass=["EliminateCommonSubexpr"]):
    print(relay.optimize(dup, opt_level=1).astext(show_types=False))


def count_calls(mod):
    calls = []
    relay.post_order_visit(mod["main"], lambda e: calls.append(e) if isinstance(e, relay.Call) else None)
    return len(calls)


with PassContext(opt_level=3, disabled_pass=["FoldConstant"]):
    no_fold = relay.optimize(cnn, opt_level=3)
print("calls at O3:", count_calls(relay.optimize(cnn, opt_level=3)), "- without FoldConstant:", count_calls(no_fold))

# %% [markdown]
# ## Sequential, and the print and timing instruments
#
# `Sequential` runs its passes in order under the current context (skipping the ones it
# disables).  `PrintAfterAll` prints the program after every pass — ideal on a small
# program:

# %%
seq = relay.transform.Sequential(
    [relay.transform.SimplifyExpr(), relay.transform.FoldConstant(), relay.transform.DeadCodeElimination()]
)
tiny = relay.parse("def @main(%x: Tensor[(3), float32]) { let %unused = exp(%x); multiply(%x, add(1f, 0f)) }")
with PassContext(opt_level=3, instruments=[relay.transform.PrintAfterAll()]):
    seq(tiny)

# %% [markdown]
# `PassTimingInstrument` measures every pass, nested ones indented under their parent
# (`FoldScaleAxis` is itself a sequence):

# %%
timing = relay.transform.PassTimingInstrument()
with PassContext(opt_level=3, instruments=[timing]):
    relay.optimize(cnn, opt_level=3)
print(timing.render())

# %% [markdown]
# ## Writing a module pass
#
# A function pass sees one function at a time; a *module pass* sees the whole module — it
# can add, remove or rename globals.  Here: drop the global functions that `@main` can
# never call.  `ctx` is the current `PassContext`.

# %%
@relay.transform.module_pass(opt_level=1, name="DropUnusedGlobals")
def drop_unused_globals(mod, ctx):
    reachable, todo = {"main"}, ["main"]
    while todo:
        found = []
        relay.post_order_visit(mod[todo.pop()], lambda e: found.append(e) if isinstance(e, relay.GlobalVar) else None)
        for gv in found:
            if gv.name_hint not in reachable:
                reachable.add(gv.name_hint)
                todo.append(gv.name_hint)
    out = mod.copy()
    for gv in mod.get_global_vars():
        if gv.name_hint not in reachable:
            out.remove(gv)
    return out


library = relay.parse("""
def @square(%v: float32) { %v * %v }
def @cube(%v: float32) { %v * @square(%v) }
def @unused(%v: float32) { %v - 1f }
def @main(%x: float32) { @cube(%x) + 1f }
""")
print("before:", [gv.name_hint for gv in library.get_global_vars()])
print("after: ", [gv.name_hint for gv in drop_unused_globals(library).get_global_vars()])
with PassContext(opt_level=0):  # its opt_level is 1: inside a Sequential at level 0 it is skipped
    kept = relay.transform.Sequential([drop_unused_globals])(library)
print("at O0: ", [gv.name_hint for gv in kept.get_global_vars()])

# %% [markdown]
# ## The pass stepper on the CNN
#
# `relay.PassStepper(mod, opt_level=3)` runs the pipeline once under a recording
# instrument, then **executes the program after every pass** — with the LLVM JIT and with
# the interpreter — on the same random inputs, and compares with the original's result.
# Step through it with the slider or **next ▶**; *changed only* hides the passes that did
# nothing.  `SimplifyInference` turns batch norm into arithmetic, `FoldConstant` folds it
# into constants, `BackwardFoldScaleAxis` pushes the scale into the conv weights, and
# `FuseOps` groups the ops into the kernels the JIT compiles.

# %%
start = time.perf_counter()
stepper = relay.PassStepper(cnn, opt_level=3)
print(f"{len(stepper.trace)} steps traced and checked in {time.perf_counter() - start:.2f} s")
print(stepper.trace.summary())
stepper

# %% [markdown]
# The same data without the widget: `relay.notebook.trace_passes` returns the steps.

# %%
steps = relay.notebook.trace_passes(cnn, "O3", executor="interpreter")
for step in steps:
    if step.changed:
        print(f"{step.name:24} {len(step.changed_nodes):3} new nodes  {step.seconds * 1e3:6.2f} ms  matches: {step.results_match}")

# %% [markdown]
# ## Exercises
#
# **1. Which passes run?**  List, in order, the passes `relay.optimize` runs at
# `opt_level=2` with `disabled_pass=["SimplifyExpr"]`, leaving out `InferType` (which the
# others require).  Use the table above; the check records a real run.

# %%
at_o2 = ["SimplifyInference", "FoldConstant", "FoldConstant", "DeadCodeElimination", "FuseOps"]
check_pipeline_prediction(at_o2, opt_level=2, disabled=["SimplifyExpr"])

# %% [markdown]
# **2. An instrument.**  Write a `PassInstrument` whose `records` list gets, after every
# pass run (composite passes too), a pair `(pass name, number of call nodes in @main)`.
# Track how the CNN shrinks as batch norm is folded away.  The check runs your instrument
# on the O3 pipeline and compares with an independent recording.

# %%
class CallCounter(relay.transform.PassInstrument):
    def __init__(self):
        self.records = []

    def run_after_pass(self, mod, info):
        self.records.append((info.name, count_calls(mod)))


counter = CallCounter()
with PassContext(opt_level=3, instruments=[counter]):
    relay.optimize(cnn, opt_level=3)
print([r for r in counter.records if r[0] != "InferType"])
check_call_counter(CallCounter, cnn)
