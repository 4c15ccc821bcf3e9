"""relay_nb.op.nn_train: losses and backward ops -- relations (accept / reject), values
against naive loops, the cross-entropy gradients against finite differences, text round trip."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import relay_nb as relay
from relay_nb.errors import RelayTypeError
from relay_nb.ir.ty import Any

try:
    from ._reporter import T, infer
    from .test_gradient import check_grad
except ImportError:
    from _reporter import T, infer
    from test_gradient import check_grad


try:
    from .ops_testing import no_warnings, run_impl as run  # noqa: F401  (no_warnings: autouse)
except ImportError:
    from ops_testing import no_warnings, run_impl as run  # noqa: F401


RNG = np.random.default_rng(3)

# --- relations --------------------------------------------------------------------------------

SHAPES = [
    ("nn.nll_loss", [T((4, 5)), T((4,), "int32"), T((5,))], {"ignore_index": -1}, T(())),
    (
        "nn.nll_loss",
        [T((4, 5, 2)), T((4, 2), "int64"), T((5,))],
        {"ignore_index": -1, "reduction": "none"},
        T((4, 2)),
    ),
    ("nn.nll_loss", [T((Any, 5)), T((Any,), "int32"), T((5,))], {"ignore_index": 0}, T(())),
    ("nn.cross_entropy", [T((3, 4)), T((3, 4))], {}, T(())),
    ("nn.cross_entropy_with_logits", [T((3, 4)), T((3, 4))], {}, T(())),
    ("nn.max_pool2d_grad", [T((1, 2, 2, 2)), T((1, 2, 4, 4))], {"pool_size": [2, 2], "strides": [2, 2]}, T((1, 2, 4, 4))),
    ("nn.avg_pool2d_grad", [T((1, 2, 3, 3)), T((1, 2, 4, 4))], {"pool_size": [2, 2]}, T((1, 2, 4, 4))),
    (
        "nn.conv2d_backward_weight",
        [T((2, 6, 4, 4)), T((2, 4, 6, 6))],
        {"kernel_size": [3, 3], "groups": 2, "kernel_layout": "NCHW"},
        T((6, 2, 3, 3)),
    ),
    (
        "nn.conv2d_backward_weight",
        [T((2, 3, 3, 6)), T((2, 5, 5, 4))],
        {"kernel_size": [3, 3], "strides": [2, 2], "padding": [1, 1], "data_layout": "NHWC",
         "kernel_layout": "NHWC", "out_layout": "HWIO"},
        T((3, 3, 4, 6)),
    ),
]


@pytest.mark.parametrize("op, args, attrs, expected", SHAPES, ids=[c[0] for c in SHAPES])
def test_shapes(op, args, attrs, expected):
    assert infer(op, *args, **attrs) == expected


ERRORS = [
    ("nn.nll_loss", [T((4, 5)), T((4, 1), "int32"), T((5,))], {"ignore_index": -1}, "one dimension more than targets"),
    ("nn.nll_loss", [T((4, 5)), T((4,), "int32"), T((6,))], {"ignore_index": -1}, "5 classes but weights has 6"),
    ("nn.nll_loss", [T((4, 5)), T((4,), "int32"), T((5, 1))], {"ignore_index": -1}, "weights must be a 1-d tensor"),
    ("nn.nll_loss", [T((4, 5)), T((4,), "float32"), T((5,))], {"ignore_index": -1}, "targets must be integers"),
    ("nn.nll_loss", [T((4, 5), "int32"), T((4,), "int32"), T((5,), "int32")], {"ignore_index": -1}, "must be floats"),
    ("nn.nll_loss", [T((4, 5)), T((3,), "int32"), T((5,))], {"ignore_index": -1}, "do not match predictions"),
    ("nn.nll_loss", [T((4, 5)), T((4,), "int32"), T((5,))], {"ignore_index": -1, "reduction": "max"}, "mean, sum or none"),
    ("nn.cross_entropy", [T((3, 4)), T((3, 5))], {}, "matrices of the same shape"),
    ("nn.cross_entropy_with_logits", [T((3,)), T((3,))], {}, "matrices of the same shape"),
    ("nn.max_pool2d_grad", [T((1, 2, 3, 3)), T((1, 2, 4, 4))], {"pool_size": [2, 2], "strides": [2, 2]}, "not the pool's output shape \\(1, 2, 2, 2\\)"),
    ("nn.conv2d_backward_weight", [T((2, 6, 4, 4)), T((2, 4, 6, 6))], {"kernel_layout": "NCHW"}, "kernel_size must be given"),
    ("nn.conv2d_backward_weight", [T((2, 6, 5, 4)), T((2, 4, 6, 6))], {"kernel_size": [3, 3], "kernel_layout": "NCHW"}, "grad has 5 on axis H"),
    ("nn.conv2d_backward_weight", [T((2, 6, 4, 4)), T((2, 4, 6, 6))], {"kernel_size": [3, 3], "groups": 3, "kernel_layout": "NCHW"}, "do not divide into groups=3"),
]


@pytest.mark.parametrize("op, args, attrs, message", ERRORS, ids=[c[0] for c in ERRORS])
def test_errors(op, args, attrs, message):
    with pytest.raises(RelayTypeError, match=message):
        infer(op, *args, **attrs)


# --- values -----------------------------------------------------------------------------------


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_nll_loss_against_loops(reduction):
    pred = RNG.standard_normal((4, 3, 2))
    targets = np.array([[0, 2], [1, -1], [2, 2], [-1, 0]])
    weights = np.array([0.5, 2.0, 1.5])
    got = run("nn.nll_loss", pred, targets, weights, reduction=reduction, ignore_index=-1)
    losses = np.zeros((4, 2))
    used = 0.0
    for n, d in itertools.product(range(4), range(2)):
        t = targets[n, d]
        if t != -1:
            losses[n, d] = -pred[n, t, d] * weights[t]
            used += weights[t]
    want = {"none": losses, "sum": losses.sum(), "mean": losses.sum() / used}[reduction]
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_nll_loss_rejects_a_target_outside_the_classes():
    with pytest.raises(relay.RelayError, match="target 3 is not a class index"):
        run("nn.nll_loss", np.zeros((1, 3)), np.array([3]), np.ones(3), ignore_index=-1)


def test_cross_entropies_by_hand():
    x = np.array([[0.25, 0.75], [0.5, 0.5]])
    y = np.array([[0.0, 1.0], [1.0, 0.0]])
    assert run("nn.cross_entropy", x, y) == pytest.approx(-(math.log(0.75) + math.log(0.5)) / 2)
    assert run("nn.cross_entropy_with_logits", x, y) == pytest.approx(-(0.75 + 0.5) / 2)


def _pool_windows(h, w, k, s, pad, ceil_mode):
    """(oy, ox, [(iy, ix) in the padded frame]) of every window, as the forward pool defines them."""
    def count(n, lo, hi):
        total = n + lo + hi - k
        return (total + (s - 1 if ceil_mode else 0)) // s + 1

    oh, ow = count(h, pad, pad), count(w, pad, pad)
    for oy, ox in itertools.product(range(oh), range(ow)):
        yield oy, ox, [(oy * s + i - pad, ox * s + j - pad) for i in range(k) for j in range(k)]


@pytest.mark.parametrize("k, s, pad, ceil_mode", [(2, 2, 0, False), (3, 1, 1, False), (2, 2, 1, True)])
def test_max_pool2d_grad_against_loops(k, s, pad, ceil_mode):
    x = RNG.integers(0, 3, (1, 2, 5, 5)).astype("float64")  # ties: the first maximum wins
    fwd = run("nn.max_pool2d", x, pool_size=[k, k], strides=[s, s], padding=[pad, pad],
              ceil_mode=ceil_mode)  # fmt: skip
    g = RNG.standard_normal(fwd.shape)
    got = run("nn.max_pool2d_grad", g, x, pool_size=[k, k], strides=[s, s], padding=[pad, pad],
              ceil_mode=ceil_mode)  # fmt: skip
    want = np.zeros_like(x)
    for n, c in itertools.product(range(1), range(2)):
        for oy, ox, taps in _pool_windows(5, 5, k, s, pad, ceil_mode):
            inside = [(y, xx) for y, xx in taps if 0 <= y < 5 and 0 <= xx < 5]
            if not inside:  # a ceil-mode window of padding only: its maximum is padding
                continue
            best = max(x[n, c, y, xx] for y, xx in inside)
            y, xx = next(t for t in inside if x[n, c, t[0], t[1]] == best)
            want[n, c, y, xx] += g[n, c, oy, ox]
    np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.parametrize("include_pad", [False, True])
def test_avg_pool2d_grad_against_loops(include_pad):
    x = RNG.standard_normal((1, 1, 4, 5))
    attrs = dict(pool_size=[3, 3], strides=[2, 2], padding=[1, 1], count_include_pad=include_pad)
    g = RNG.standard_normal(run("nn.avg_pool2d", x, **attrs).shape)
    got = run("nn.avg_pool2d_grad", g, x, **attrs)
    want = np.zeros_like(x)
    for oy, ox in itertools.product(range(g.shape[2]), range(g.shape[3])):
        taps = [(oy * 2 + i - 1, ox * 2 + j - 1) for i in range(3) for j in range(3)]
        inside = [(y, xx) for y, xx in taps if 0 <= y < 4 and 0 <= xx < 5]
        n = len(taps) if include_pad else len(inside)
        for y, xx in inside:
            want[0, 0, y, xx] += g[0, 0, oy, ox] / n
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_conv2d_backward_weight_against_loops():
    x = RNG.standard_normal((2, 4, 6, 5))
    g = RNG.standard_normal((2, 6, 3, 2))
    # groups 2, stride 2, dilation (1, 2), padding 1: out = (6+2-3)//2+1 = 3, (5+2-5)//2+1 = 2
    got = run("nn.conv2d_backward_weight", g, x, kernel_size=[3, 3], strides=[2, 2],
              padding=[1, 1], dilation=[1, 2], groups=2, kernel_layout="NCHW")  # fmt: skip
    xp = np.pad(x, [(0, 0), (0, 0), (1, 1), (1, 1)])
    want = np.zeros((6, 2, 3, 3))
    for o, c, i, j in itertools.product(range(6), range(2), range(3), range(3)):
        ch = (o // 3) * 2 + c
        for n, y, xx in itertools.product(range(2), range(3), range(2)):
            want[o, c, i, j] += g[n, o, y, xx] * xp[n, ch, y * 2 + i, xx * 2 + j * 2]
    np.testing.assert_allclose(got, want, rtol=1e-10)


# --- gradients (TVM registers them for the cross entropies) ------------------------------------


def test_cross_entropy_gradient():
    check_grad(lambda x, y: relay.nn.cross_entropy(x, y), [(3, 4), (3, 4)], low=0.1, high=1.0)


def test_cross_entropy_with_logits_gradient():
    check_grad(
        lambda x, y: relay.nn.cross_entropy_with_logits(relay.nn.log_softmax(x), y),
        [(2, 5), (2, 5)],
    )


# --- text -------------------------------------------------------------------------------------


def _roundtrip_cases():
    p = relay.var("p", shape=(4, 5))
    t = relay.var("t", shape=(4,), dtype="int32")
    w = relay.var("w", shape=(5,))
    x = relay.var("x", shape=(1, 2, 4, 4))
    g = relay.var("g", shape=(1, 2, 2, 2))
    return [
        relay.nn.nll_loss(p, t, w, reduction="sum", ignore_index=3),
        relay.nn.cross_entropy(p, p),
        relay.nn.cross_entropy_with_logits(p, p),
        relay.nn.max_pool2d_grad(g, x, pool_size=(2, 2), strides=(2, 2)),
        relay.nn.avg_pool2d_grad(g, x, pool_size=(3, 3), padding=(1, 1), strides=(2, 2),
                                 count_include_pad=True),  # fmt: skip
        relay.nn.conv2d_backward_weight(relay.var("dy", shape=(1, 3, 2, 2)), x, kernel_size=(3, 3),
                                        channels=3),  # fmt: skip
    ]


@pytest.mark.parametrize("index", range(len(_roundtrip_cases())))
def test_printed_calls_parse_back(index):
    expr = _roundtrip_cases()[index]
    m1 = relay.transform.InferType()(
        relay.IRModule.from_expr(relay.Function(relay.analysis.free_vars(expr), expr))
    )
    text = m1.astext()
    m2 = relay.transform.InferType()(relay.parse(text))
    assert relay.structural_equal(m1["main"], m2["main"], map_free_vars=True)
    assert m2.astext() == text
