"""Every registered pass, the default pipeline and the JIT on programs as deep as the
parser takes, at Python's default recursion limit (issue #11 §4):

* a 10,000-branch ``else if`` chain (``If`` nested in ``If``);
* 10,000 nested let-bound closures (a function, a let and a call per level);
* a 100,000-deep let chain through the core passes (InferType, FoldConstant,
  DeadCodeElimination, ToGraphNormalForm); ``relay.build`` of 100,000 one-op kernels
  works but takes minutes, so the JIT gets a 10,000-deep chain here.

Each result is checked: evaluated (interpreter or JIT) against the known answer, or,
where evaluating 10,000 closures after every pass would take too long (seconds each), for
well-formedness and every closure kept.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest

import relay_nb as relay
from relay_nb.analysis.well_formed import well_formed
from relay_nb.ir.expr import Function, Let
from relay_nb.ir.functor import post_order
from relay_nb.transform import PASSES

N = 10_000
LETS = 100_000


def else_if_chain(n: int) -> str:
    return (
        "def @main(%x: int32) -> int32 {\n  "
        + " else ".join(f"if (%x == {k}) {{ {k} }}" for k in range(n))
        + " else { -1 }\n}"
    )


def nested_closures(n: int) -> str:
    """``let %f0 = fn (%y0) { let %f1 = fn (%y1) { ... }; %f1(%y0 + 1f) }; %f0(%x)``:
    the innermost adds 1 too, so the result is ``%x + n``."""
    opened = "".join(f"let %f{i} = fn (%y{i}: float32) {{\n" for i in range(n))
    closed = "".join(
        f"}};\n%f{i}(add(%y{i - 1}, 1f))" if i else "};\n%f0(%x)" for i in reversed(range(n))
    )
    return "def @main(%x: float32) -> float32 {\n" + opened + f"add(%y{n - 1}, 1f)\n" + closed + "\n}"


def let_chain(n: int) -> str:
    lines = ["def @main(%x0: Tensor[(4), float32]) {"]
    lines += [f"  let %x{k} = add(%x{k - 1}, 1f);" for k in range(1, n + 1)]
    return "\n".join([*lines, f"  %x{n}", "}"])


@pytest.fixture(scope="module")
def chain_mod():
    return relay.transform.InferType()(relay.parse(else_if_chain(N)))


@pytest.fixture(scope="module")
def closures_mod():
    return relay.transform.InferType()(relay.parse(nested_closures(N)))


def run(mod, *args, kind="interpreter"):
    return relay.create_executor(kind, mod=mod).evaluate()(*args)


def test_recursion_limit_is_the_default():
    assert sys.getrecursionlimit() <= 1000


@pytest.mark.parametrize("name", sorted(PASSES))
def test_pass_on_10k_else_if_chain(name, chain_mod):
    out = PASSES[name]()(chain_mod)
    assert well_formed(out)
    f = relay.create_executor("interpreter", mod=out).evaluate()
    assert int(f(np.int32(N - 3))) == N - 3 and int(f(np.int32(-5))) == -1


@pytest.mark.parametrize("name", sorted(PASSES))
def test_pass_on_10k_nested_closures(name, closures_mod):
    out = PASSES[name]()(closures_mod)
    assert well_formed(out)
    # every closure is still there (LambdaLift makes them globals, FuseOps adds kernels)
    fns = {n for g in out.functions.values() for n in post_order(g) if type(n) is Function}
    assert sum(1 for fn in fns if not fn.is_primitive) == N + 1


def test_jit_and_build_on_10k_else_if_chain(chain_mod):
    for x, want in ((N - 1, N - 1), (7, 7), (N, -1)):
        assert int(run(chain_mod, np.int32(x), kind="jit")) == want
    lib = relay.build(chain_mod)
    assert int(lib(np.int32(N // 2))) == N // 2


def test_jit_on_10k_nested_closures(closures_mod):
    # (the interpreter gives the same; relay.build is the pipeline plus this JIT)
    assert float(run(closures_mod, np.float32(0.5), kind="jit")) == N + 0.5


def test_100k_let_chain_through_core_passes():
    mod = relay.parse(let_chain(LETS))
    for name in ("InferType", "FoldConstant", "DeadCodeElimination", "ToGraphNormalForm"):
        mod = PASSES[name]()(mod)
    body = mod["main"].body  # all dataflow now: add(add(...(%x0, 1f)...), 1f)
    depth = 0
    while not isinstance(body, relay.Var):
        assert not isinstance(body, Let)
        body, depth = body.args[0], depth + 1
    assert depth == LETS


def test_jit_on_10k_let_chain():
    mod = relay.parse(let_chain(N))
    x = np.arange(4, dtype="float32")
    np.testing.assert_array_equal(run(mod, x, kind="jit"), x + N)
