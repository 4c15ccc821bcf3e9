"""relay.optimize: the default pipeline keeps the meaning of the CNN and of the seed
programs; and every pass of this group runs on a 100,000-node program at Python's default
recursion limit.

``python tests/test_pass_pipeline.py`` prints the 10,000 / 100,000-node timing table
(``RELAY_NB_TIMING=1 pytest tests/test_pass_pipeline.py`` also asserts growth <= 12x).
"""

from __future__ import annotations

import gc
import os
import re
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from pass_testing import evaluate, random_inputs, results_agree

import relay_nb as relay
from relay_nb.errors import RelayError
from relay_nb.eval.values import ConstructorValue
from relay_nb.ir.expr import Call, Function, Op
from relay_nb.ir.functor import post_order
from relay_nb.transform import (
    BackwardFoldScaleAxis,
    FoldConstant,
    ForwardFoldScaleAxis,
    FuseOps,
    InferType,
    PassContext,
    PassRecorder,
    SimplifyExpr,
)
from relay_nb.transform.pipeline import PIPELINE, default_passes

HERE = Path(__file__).parent
RNG = np.random.default_rng(3)


def cnn() -> relay.IRModule:
    """A small CNN whose weights are constants: conv2d + scale/shift (a simplified
    batch_norm) + relu, a residual block, pooling, dense, softmax."""
    c = lambda *shape, lo=-1.0, hi=1.0: relay.const(RNG.uniform(lo, hi, shape).astype("float32"))
    x = relay.var("data", shape=(1, 3, 8, 8))
    y = relay.nn.conv2d(x, c(8, 3, 3, 3), padding=(1, 1), channels=8, kernel_size=(3, 3))
    y = relay.add(
        relay.multiply(y, c(8, 1, 1, lo=0.5, hi=1.5)), c(8, 1, 1)
    )  # batch_norm, simplified
    a = relay.nn.relu(y)
    y = relay.nn.conv2d(relay.multiply(a, relay.const(1.0)), c(8, 8, 3, 3), padding=(1, 1))
    y = relay.nn.bias_add(y, relay.add(c(8), relay.const(np.zeros(8, "float32"))))
    y = relay.nn.relu(relay.add(y, a))
    y = relay.nn.max_pool2d(y, pool_size=(2, 2), strides=(2, 2))
    y = relay.nn.batch_flatten(relay.nn.global_avg_pool2d(y))
    y = relay.nn.bias_add(relay.nn.dense(y, c(10, 8)), c(10))
    return InferType()(relay.IRModule.from_expr(relay.Function([x], relay.nn.softmax(y))))


def primitive_groups(mod: relay.IRModule) -> list[list[str]]:
    return [
        [
            n.op.name
            for n in post_order(call.op.body)
            if isinstance(n, Call) and isinstance(n.op, Op)
        ]
        for call in post_order(mod["main"])
        if isinstance(call, Call) and isinstance(call.op, Function) and call.op.is_primitive
    ]


@pytest.mark.parametrize("level", [0, 1, 2, 3])
def test_optimize_keeps_the_cnn_meaning(level):
    mod = cnn()
    out = relay.optimize(mod, opt_level=level)
    args = random_inputs(mod)
    assert results_agree(evaluate(mod, args), evaluate(out, args), rtol=1e-4, atol=1e-5)
    groups = primitive_groups(out)
    assert groups and all(groups)
    if level == 0:
        assert all(len(g) == 1 for g in groups)
    if level == 3:  # the scale folded into the first conv, and everything fused
        assert groups[0] == ["nn.conv2d", "add", "nn.relu"]
        assert ["nn.conv2d", "nn.bias_add", "add", "nn.relu"] in groups


def test_optimize_records_each_pass_and_respects_the_context():
    rec = PassRecorder(leaves_only=True)
    with PassContext(instruments=[rec], disabled_pass=["FuseOps"]):
        out = relay.optimize(cnn(), opt_level=3)
    names = [r.name for r in rec.records]
    assert "FoldScaleAxis" not in names and "ForwardFoldScaleAxis" in names
    assert "FuseOps" not in names and not primitive_groups(out)
    wanted = [n for n, _ in PIPELINE if n in relay.transform.PASSES]
    assert [p.info.name for p in default_passes()] == wanted
    with PassContext(opt_level=1):  # optimize sets its own level
        assert primitive_groups(relay.optimize(cnn(), opt_level=2))


def test_passes_config_reaches_fuse_ops():
    out = relay.optimize(cnn(), opt_level=2, passes_config={"relay.FuseOps.max_depth": 2})
    assert max(len(g) for g in primitive_groups(out)) <= 2


def test_exported_as_relay_optimize():
    assert relay.optimize is relay.transform.optimize


SEEDS = sorted(p.name for p in HERE.joinpath("seeds").glob("*.relay"))
ENTRIES = {  # seeds without @main: which global to run, on what
    "000_13_ackermann.relay": ("ackermann", [np.int32(2), np.int32(2)]),
    "004_01_module.relay": ("myfunc", [np.int32(3)]),
    "004_02_recursion.relay": ("myfunc", [np.int32(4)]),
}
# The seeds that cannot run, and the error each must still give (see
# tests/seeds/test_seed_examples.py); any other seed that fails to parse or type-check
# fails the test.
BROKEN = {
    "000_02_fn_minimal.relay": "unknown operator body",  # `body` is a placeholder
    "000_05_fact.relay": "if condition must be bool",  # branches on a (10, 10) tensor
    "000_11_type_args.relay": "expected ']' to close",  # a typo in the seed
}
NO_INPUT = {"000_20_data_nat.relay": "only a data definition, no function"}


def call_broadcast_inputs() -> list:
    """000_12's @main(%f, %a, %b) computes %f(%a, %b): %f is a Relay closure adding its
    arguments, which broadcast to the declared (100, 100, 100)."""
    text = "def @main() { fn (%a: Tensor[(100, 1, 100), float32], %b: Tensor[(100, 1), float32]) { add(%a, %b) } }"
    adder = relay.create_executor("interpreter", mod=relay.parse(text)).evaluate()()
    rng = np.random.default_rng(0)
    return [adder, rng.standard_normal((100, 1, 100), "float32"), rng.standard_normal((100, 1), "float32")]


def seed_run(name: str):
    """(module, entry global, inputs) for a seed; a skip only for the seeds named above."""
    text = HERE.joinpath("seeds", name).read_text(encoding="utf-8")
    nat = name[:6] in ("000_21", "000_22", "000_23")  # they use the Nat of 000_20
    init = relay.parse(HERE.joinpath("seeds", "000_20_data_nat.relay").read_text()) if nat else None
    if name in BROKEN:
        with pytest.raises(RelayError, match=re.escape(BROKEN[name])):
            InferType()(relay.parse(text, init_module=init))
        pytest.skip(f"broken in the seed itself: {BROKEN[name]}")
    mod = InferType()(relay.parse(text, init_module=init))
    if name in ENTRIES:
        return (mod, *ENTRIES[name])
    if name == "000_12_call_broadcast.relay":
        assert [p.name_hint for p in mod["main"].params] == ["f", "a", "b"]
        return mod, "main", call_broadcast_inputs()
    if name in NO_INPUT:
        pytest.skip(NO_INPUT[name])
    rng, args = np.random.default_rng(0), []
    for p in mod["main"].params:
        ty = p.checked_type
        if isinstance(ty, relay.TensorType) and isinstance(ty.shape, tuple):
            args.append(
                random_inputs(
                    relay.IRModule.from_expr(relay.Function([relay.var("v", ty)], relay.Tuple([])))
                )[0]
            )
        elif isinstance(ty, (relay.TypeVar, relay.TensorType)):  # polymorphic: any tensor will do
            args.append(rng.uniform(0.5, 2, ()).astype("float32"))
        elif "Nat" in str(ty):  # S(S(Z))
            z, succ = mod.get_constructor("Z"), mod.get_constructor("S")
            args.append(
                ConstructorValue(succ, (ConstructorValue(succ, (ConstructorValue(z, ()),)),))
            )
        else:
            raise AssertionError(f"{name}: no input of type {ty} (name the seed in NO_INPUT?)")
    return mod, "main", args


def run(mod: relay.IRModule, entry: str, args: list):
    exe = relay.create_executor("interpreter", mod=mod)
    return exe.evaluate(mod.get_global_var(entry))(*args)


@pytest.mark.parametrize("name", SEEDS)
@pytest.mark.parametrize("level", [2, 3])
def test_optimize_keeps_seed_programs_meaning(name, level):
    mod, entry, args = seed_run(name)
    want = run(mod, entry, args)
    out = relay.optimize(mod, opt_level=level)
    got = run(out, entry, args)
    if callable(want):  # a closure: compare what it computes
        x = np.float32(1.5)
        want, got = want(x), got(x)
    assert results_agree(want, got)
    assert relay.structural_equal(relay.parse(out.astext()), out, map_free_vars=True)


# -- 100,000-node programs ------------------------------------------------------------------------


def big_program(n_nodes: int) -> relay.IRModule:
    """A chain of blocks exercising every pass: per-channel scales before and after a
    conv2d, a constant subexpression, an ``x * 1``, a residual add (20 nodes per block)."""
    rng = np.random.default_rng(0)
    x = relay.var("x", shape=(1, 2, 4, 4))
    prev, count = x, 0
    while count < n_nodes:
        s = relay.const(rng.uniform(0.5, 2, (2, 1, 1)).astype("float32"))
        w = relay.const(rng.uniform(-1, 1, (2, 2, 1, 1)).astype("float32"))
        b = relay.const(rng.uniform(-1, 1, (2,)).astype("float32"))
        s2 = relay.const(rng.uniform(0.5, 2, (2, 1, 1)).astype("float32"))
        conv = relay.nn.conv2d(relay.nn.relu(relay.multiply(prev, s)), w)  # forward scale
        y = relay.multiply(relay.nn.relu(relay.nn.bias_add(conv, b)), s2)  # backward scale
        y = relay.add(y, relay.add(relay.const(1.0), relay.const(2.0)))  # a constant to fold
        prev = relay.add(relay.multiply(y, relay.const(1.0)), prev)  # x * 1, a residual add
        count += 20
    return InferType()(relay.IRModule.from_expr(relay.Function([x], prev)))


PASSES = {
    "FoldConstant": FoldConstant,
    "SimplifyExpr": SimplifyExpr,
    "FuseOps": FuseOps,
    "ForwardFoldScaleAxis": ForwardFoldScaleAxis,
    "BackwardFoldScaleAxis": BackwardFoldScaleAxis,
}


@pytest.fixture(scope="module")
def big():
    return big_program(100_000)


@pytest.mark.parametrize("name", sorted(PASSES))
def test_100k_nodes_at_the_default_recursion_limit(big, name):
    assert sys.getrecursionlimit() <= 1000
    with PassContext(opt_level=3):
        out = PASSES[name]()(big)
    assert out["main"] is not big["main"]
    if name == "FuseOps":
        assert len(primitive_groups(out)) <= 100_000 // 20 * 2  # two kernels per block


def measure(name: str, sizes=(10_000, 100_000), reps: int = 7) -> list[float]:
    """Best-of-``reps`` seconds of pass ``name`` on each size; the sizes take turns, so a
    busy machine slows both alike."""
    mods = [big_program(n) for n in sizes]
    best = [float("inf")] * len(sizes)
    for _ in range(reps):
        for i, mod in enumerate(mods):
            gc.collect()
            start = time.perf_counter()
            with PassContext(opt_level=3):
                PASSES[name]()(mod)
            best[i] = min(best[i], time.perf_counter() - start)
    return best


def baseline(sizes=(10_000, 100_000), reps: int = 7) -> list[float]:
    """The same measurement for a plain traversal (ExprMutator that changes nothing): the
    growth no pass can beat, since Python's per-node cost rises once the program no
    longer fits in the CPU caches."""
    from relay_nb.ir.functor import ExprMutator

    mods = [big_program(n) for n in sizes]
    best = [float("inf")] * len(sizes)
    for _ in range(reps):
        for i, mod in enumerate(mods):
            gc.collect()
            gc.disable()
            start = time.perf_counter()
            ExprMutator().visit(mod["main"])
            best[i] = min(best[i], time.perf_counter() - start)
            gc.enable()
    return best


@pytest.mark.skipif(
    not os.environ.get("RELAY_NB_TIMING"), reason="timing run: set RELAY_NB_TIMING=1"
)
@pytest.mark.parametrize("name", sorted(PASSES))
def test_linear_growth(name):
    small, large = measure(name)
    assert large / small <= 12, f"{name}: {small * 1e3:.0f} ms -> {large * 1e3:.0f} ms"


if __name__ == "__main__":
    print(f"{'pass':24s} {'10k nodes':>10s} {'100k nodes':>11s}  growth")
    for pass_name in [*PASSES, "(plain ExprMutator)"]:
        a, b = measure(pass_name) if pass_name in PASSES else baseline()
        print(f"{pass_name:24s} {a * 1e3:8.0f}ms {b * 1e3:9.0f}ms  x{b / a:.1f}")
