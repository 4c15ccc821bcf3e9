# %% [markdown]
# # 9. Your own model in Relay
#
# Relay programs usually come from a framework.  This notebook imports a PyTorch model
# (through `torch.export`) — or, where PyTorch is not installed, takes the same kind of
# network from TVM's model zoo, `relay.testing` — and then does what the earlier notebooks
# did on small programs: looks at the graph, steps through the default pipeline, builds
# it with the JIT, and checks the result against the framework.  Weights are random: no
# file is downloaded.

# %%
# %load_ext relay_nb
import collections

import numpy as np
from checks import check_op_count, check_outputs_agree

import relay_nb as relay

rng = np.random.default_rng(0)

try:
    import torch

    HAVE_TORCH = hasattr(relay, "frontend") and hasattr(relay.frontend, "from_pytorch")
except ImportError:
    HAVE_TORCH = False
print("importing from PyTorch" if HAVE_TORCH else "PyTorch is not installed: using relay.testing's ResNet")

# %% [markdown]
# ## A model
#
# With PyTorch: a small convolutional network in the style of torchvision's classifiers —
# convolutions with batch norm and ReLU, a strided stage, global pooling, a classifier.
# `relay.frontend.from_pytorch(model, (x,))` exports it with `torch.export`, decomposes it
# to core ATen and converts each ATen op to Relay; parameters keep their module paths as
# names.  Without PyTorch: `relay.testing.resnet.get_workload` builds a ResNet-18 for
# 32x32 images, with seeded weights, exactly as TVM's course material did.

# %%
x = rng.standard_normal((1, 3, 32, 32)).astype("float32")

if HAVE_TORCH:
    torch.manual_seed(0)

    class SmallNet(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = torch.nn.Sequential(
                torch.nn.Conv2d(3, 16, 3, padding=1, bias=False), torch.nn.BatchNorm2d(16), torch.nn.ReLU()
            )
            self.stage = torch.nn.Sequential(
                torch.nn.Conv2d(16, 32, 3, stride=2, padding=1, bias=False), torch.nn.BatchNorm2d(32), torch.nn.ReLU()
            )
            self.head = torch.nn.Linear(32, 10)

        def forward(self, x):
            y = self.stage(self.stem(x))
            return self.head(torch.flatten(torch.nn.functional.adaptive_avg_pool2d(y, 1), 1))

    model = SmallNet().eval()
    mod, params = relay.frontend.from_pytorch(model, (torch.from_numpy(x),))
    with torch.no_grad():
        reference = model(torch.from_numpy(x)).numpy()
    reference_name = "PyTorch"
else:
    mod, params = relay.testing.resnet.get_workload(num_layers=18, image_shape=(3, 32, 32), num_classes=10)
    args = [x if p.name_hint == "data" else params[p.name_hint] for p in mod["main"].params]
    reference = relay.create_executor("interpreter", mod=mod).evaluate()(*args)
    reference_name = "the reference interpreter"

mod = relay.transform.InferType()(mod)
print(mod["main"].checked_type)
print(f"{len(params)} weight arrays, {sum(v.size for v in params.values()):,} numbers")

# %% [markdown]
# ## Looking at it
#
# A real model is too big to read whole; count its operators and read its first lines.
# Every weight is a parameter of `@main` (or a constant, when the importer froze it).

# %%
calls = []
relay.post_order_visit(mod["main"], lambda e: calls.append(e.op.name) if isinstance(e, relay.Call) and isinstance(e.op, relay.Op) else None)
print(collections.Counter(calls).most_common())
print("\n".join(mod.astext().splitlines()[:12]))

# %% [markdown]
# ## The default pipeline, step by step
#
# `relay.PassStepper` runs the pipeline of `relay.build` at opt level 3 and records every
# pass, checking each step's result against the original program on random inputs.
# `SimplifyInference` turns the batch norms into arithmetic, `FoldConstant` folds what
# depends only on the weights (once they are bound as constants), and `FuseOps` makes one
# primitive function per kernel.

# %%
bound = relay.transform.InferType()(relay.IRModule.from_expr(relay.build_module.bind_params_by_name(mod["main"], params)))
steps = relay.notebook.trace_passes(bound, "O3", executor="interpreter")
for step in steps:
    print(f"{step.name:28} changed={step.changed!s:5}  results match: {step.results_match}")
relay.PassStepper(bound, opt_level=3, executor="interpreter")

# %% [markdown]
# ## Built with the JIT, checked against the framework
#
# `relay.build(mod, params=params)` binds the weights, optimizes, fuses and compiles every
# kernel with LLVM.  Its output must match the framework's to float32 rounding.

# %%
lib = relay.build(mod, params=params)
ours = lib(x)
print(lib.report())
check_outputs_agree(ours, reference, reference_name)

# %% [markdown]
# ## Exercises
#
# **1. How many convolutions?**  Count the `nn.conv2d` calls of the imported model (the
# printout, or the counter above, will tell).

# %%
conv_count = collections.Counter(calls)["nn.conv2d"]
check_op_count(conv_count, mod, "nn.conv2d")
