"""FoldScaleAxis (forward with a TempExpr, and backward): the multiply disappears into the
conv2d weights, the results stay the same, and programs where nothing can fold come back
as the same objects."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pass_testing import check_pass, evaluate, random_inputs, results_agree
from strategies import FAST

import relay_nb as relay
from relay_nb.ir.expr import Call, Constant, TempExpr
from relay_nb.ir.functor import post_order
from relay_nb.transform import (
    BackwardFoldScaleAxis,
    FoldScaleAxis,
    ForwardFoldScaleAxis,
    InferType,
    PassContext,
)
from relay_nb.transform.fold_scale_axis import ScaledExpr

RNG = np.random.default_rng(7)


def const(shape, lo=-1.0, hi=1.0):
    return relay.const(RNG.uniform(lo, hi, shape).astype("float32"))


def module(body, *params) -> relay.IRModule:
    return InferType()(relay.IRModule.from_expr(relay.Function(list(params), body)))


def ops(mod) -> list[str]:
    return [
        n.op.name
        for n in post_order(mod["main"])
        if isinstance(n, Call) and isinstance(n.op, relay.Op)
    ]


def at_level_3(pass_):
    def run(mod):
        with PassContext(opt_level=3):
            return pass_(mod)

    run.info = pass_.info  # the golden header names the pass
    return run


def test_forward_multiply_disappears_into_the_weight(golden):
    x = relay.var("x", shape=(1, 3, 5, 5))
    s, b, w = const((3, 1, 1), 0.5, 2.0), const((3, 1, 1)), const((2, 3, 3, 3))
    body = relay.nn.conv2d(relay.nn.relu(relay.add(relay.multiply(x, s), b)), w, padding=(1, 1))
    mod = module(body, x)
    out = check_pass(
        at_level_3(FoldScaleAxis()), mod, golden=golden, case="fold_scale_axis_forward"
    )
    assert ops(out) == ["add", "nn.relu", "nn.conv2d"]  # no multiply left
    conv = out["main"].body
    expect = w.data * s.data.reshape(1, 3, 1, 1)
    assert isinstance(conv.args[1], Constant) and np.allclose(conv.args[1].data, expect)
    bias = conv.args[0].args[0].args[1]
    assert np.allclose(bias.data.reshape(3), (b.data / s.data).reshape(3))  # c / s


def test_backward_multiply_disappears_into_the_weight(golden):
    x = relay.var("x", shape=(1, 2, 4, 4))
    w, b, s = const((3, 2, 3, 3)), const((3,)), const((3, 1, 1), 0.5, 2.0)
    body = relay.multiply(
        relay.nn.relu(relay.nn.bias_add(relay.nn.conv2d(x, w, padding=(1, 1)), b)), s
    )
    mod = module(body, x)
    out = check_pass(
        at_level_3(FoldScaleAxis()), mod, golden=golden, case="fold_scale_axis_backward"
    )
    assert ops(out) == ["nn.conv2d", "nn.bias_add", "nn.relu"]
    conv = out["main"].body.args[0].args[0]
    assert np.allclose(conv.args[1].data, w.data * s.data.reshape(3, 1, 1, 1))


def test_forward_uses_a_temp_expr_and_leaves_none_behind():
    assert issubclass(ScaledExpr, TempExpr)
    x = relay.var("x", shape=(1, 2, 3, 3))
    m = relay.multiply(x, const((2, 1, 1), 0.5, 2))
    mod = module(
        relay.Tuple(
            [relay.nn.conv2d(m, const((2, 2, 1, 1))), relay.nn.conv2d(m, const((4, 2, 1, 1)))]
        ),
        x,
    )
    out = check_pass(ForwardFoldScaleAxis(), mod)
    assert not any(isinstance(n, TempExpr) for n in post_order(out["main"]))
    assert "multiply" not in ops(out)  # both consumers absorbed the shared scale


@pytest.mark.parametrize(
    "case",
    [
        "negative scale through relu",  # relu(x * -1) != relu(x) * -1
        "other consumer",  # the scaled value is also used by exp
        "grouped conv",
        "scale on the wrong axis",
        "not constant",
    ],
)
def test_nothing_to_fold_returns_the_same_objects(case):
    x = relay.var("x", shape=(1, 2, 4, 4))
    s = const((2, 1, 1), 0.5, 2.0)
    w = const((2, 2, 1, 1))
    if case == "negative scale through relu":
        body = relay.nn.conv2d(relay.nn.relu(relay.multiply(x, const((2, 1, 1), -2, -1))), w)
    elif case == "other consumer":
        m = relay.multiply(x, s)
        body = relay.Tuple([relay.nn.conv2d(m, w), relay.exp(m)])
    elif case == "grouped conv":
        body = relay.nn.conv2d(relay.multiply(x, s), const((2, 1, 1, 1)), groups=2)
    elif case == "scale on the wrong axis":
        body = relay.nn.conv2d(relay.multiply(x, const((4, 1), 0.5, 2)), w)
    else:
        y = relay.var("y", shape=(2, 1, 1))
        body = relay.nn.conv2d(relay.multiply(x, y), w)
    params = [x] if case != "not constant" else [x, body.args[0].args[1]]
    mod = module(body, *params)
    for p in (ForwardFoldScaleAxis(), BackwardFoldScaleAxis()):
        assert check_pass(p, mod)["main"] is mod["main"]


def test_weight_that_is_a_variable_gets_a_multiply():
    x, w = relay.var("x", shape=(1, 2, 4, 4)), relay.var("w", shape=(3, 2, 3, 3))
    mod = module(relay.nn.conv2d(relay.multiply(x, const((2, 1, 1), 0.5, 2)), w), x, w)
    out = check_pass(at_level_3(FoldScaleAxis()), mod)
    conv = out["main"].body
    assert conv.args[0] is out["main"].params[0] and conv.args[1].op.name == "multiply"


def test_nhwc_layout():
    x = relay.var("x", shape=(1, 4, 4, 2))
    s, w = const((2,), 0.5, 2.0), const((3, 3, 2, 5))
    body = relay.nn.conv2d(
        relay.multiply(x, s), w, data_layout="NHWC", kernel_layout="HWIO", padding=(1, 1)
    )
    out = check_pass(at_level_3(FoldScaleAxis()), module(body, x))
    assert ops(out) == ["nn.conv2d"]
    assert np.allclose(out["main"].body.args[1].data, w.data * s.data.reshape(1, 1, 2, 1))


def test_opt_level_3():
    x = relay.var("x", shape=(1, 2, 4, 4))
    mod = module(
        relay.nn.conv2d(relay.multiply(x, const((2, 1, 1), 0.5, 2)), const((2, 2, 1, 1))), x
    )
    assert FoldScaleAxis()(mod)["main"] is mod["main"]  # default context: opt_level 2
    assert FoldScaleAxis().info.opt_level == ForwardFoldScaleAxis().info.opt_level == 3
    with PassContext(opt_level=3):
        assert "multiply" not in ops(FoldScaleAxis()(mod))


# -- random conv chains ------------------------------------------------------------------------


@st.composite
def scaled_convs(draw):
    """conv chains with per-channel multiplies placed before and after, random signs,
    biases, relus and extra consumers."""
    c = 2
    x = relay.var("x", shape=(1, c, 4, 4))
    e = x
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))

    def cst(shape, lo=-1.0, hi=1.0):
        return relay.const(rng.uniform(lo, hi, shape).astype("float32"))

    extras = []
    for _ in range(draw(st.integers(1, 4))):
        sign = draw(st.sampled_from([1.0, 1.0, -1.0]))
        shape = draw(st.sampled_from([(c, 1, 1), (1, c, 1, 1), ()]))
        e = relay.multiply(e, relay.const(sign * rng.uniform(0.5, 2, shape).astype("float32")))
        for step in draw(st.lists(st.sampled_from(["relu", "add", "bias", "leaky"]), max_size=2)):
            e = {
                "relu": lambda v: relay.nn.relu(v),
                "leaky": lambda v: relay.nn.leaky_relu(v, alpha=0.1),
                "add": lambda v: relay.add(v, cst((c, 1, 1))),
                "bias": lambda v: relay.nn.bias_add(v, cst((c,))),
            }[step](e)
        if draw(st.integers(0, 4)) == 0:
            extras.append(relay.exp(e))
        e = relay.nn.conv2d(e, cst((c, c, 3, 3)), padding=(1, 1))
    e = relay.multiply(relay.nn.relu(relay.nn.bias_add(e, cst((c,)))), cst((c, 1, 1), 0.5, 2))
    return relay.Function([x], relay.Tuple([e, *extras]) if extras else e)


@FAST
@given(scaled_convs(), st.sampled_from(["forward", "backward", "both"]))
def test_random_conv_chains(fn, which):
    mod = InferType()(relay.IRModule.from_expr(fn))
    pass_ = {
        "forward": ForwardFoldScaleAxis(),
        "backward": BackwardFoldScaleAxis(),
        "both": FoldScaleAxis(),
    }[which]
    with PassContext(opt_level=3):
        out = check_pass(pass_, mod, evaluate_main=False)
    args = random_inputs(mod)
    assert results_agree(evaluate(mod, args), evaluate(out, args), rtol=1e-4, atol=1e-4)
    InferType()(relay.parse(out.astext()))


def test_folded_weight_is_computed_once_not_copied():
    """The scaled weight is a new array only its constant holds: made read-only in place
    rather than copied by Constant (ResNet-50's ~100 MB of conv weights: ~30 ms of a warm
    build, and a second copy of them at the peak)."""
    import tracemalloc

    x = relay.var("x", shape=(1, 64, 4, 4))
    w, s = const((256, 64, 3, 3)), const((256, 1, 1), 0.5, 2.0)  # 576 KiB of weights
    mod = module(relay.multiply(relay.nn.conv2d(x, w, padding=(1, 1)), s), x)
    tracemalloc.start()
    try:
        out = at_level_3(BackwardFoldScaleAxis())(mod)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    folded = out["main"].body.args[1].data
    assert np.array_equal(folded, w.data * s.data.reshape(256, 1, 1, 1))  # bitwise: as before
    assert not folded.flags.writeable
    assert peak < 1.5 * w.data.nbytes  # one new weight array, not two
