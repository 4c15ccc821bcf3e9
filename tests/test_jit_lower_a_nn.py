"""Property tests: the JIT's rules for nn.l2_normalize, nn.nll_loss and the 1-d / 3-d
adaptive pools (issue 12) agree with the interpreter (exactly for integers, to the reduction
tolerance for floats) and compile natively."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jit_testing import REDUCE_RTOL, check, compares, random_array, run_both, tensor

import relay_nb as relay

PROPS = settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _rng(data) -> np.random.Generator:
    return np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))


@compares(10)
@PROPS
@given(data=st.data())
def test_l2_normalize(data):
    rank = data.draw(st.integers(1, 4))
    shape = tuple(data.draw(st.integers(1, 4)) for _ in range(rank))
    axes = sorted(data.draw(st.sets(st.integers(-rank, rank - 1), max_size=rank)), key=lambda a: a % rank)
    if len({a % rank for a in axes}) != len(axes):
        axes = sorted({a % rank for a in axes})
    dtype = data.draw(st.sampled_from(["float32", "float64"]))
    eps = data.draw(st.sampled_from(["1e-12", "0.5", "4"]))
    x = random_array(_rng(data), shape, dtype, special=data.draw(st.booleans()))
    suffix = "f" if dtype == "float32" else "f64"
    check(
        f"def @main(%x: {tensor(shape, dtype)}) {{ nn.l2_normalize(%x, eps={eps}{suffix}, axis={axes}) }}",
        x,
        rtol=REDUCE_RTOL[dtype],
        atol=1e-6,
    )


@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
@compares(10)
@PROPS
@given(data=st.data())
def test_nll_loss(reduction, data):
    n, c = data.draw(st.integers(1, 4)), data.draw(st.integers(1, 5))
    rest = tuple(data.draw(st.integers(1, 3)) for _ in range(data.draw(st.integers(0, 2))))
    ignore = data.draw(st.integers(-1, c))
    tdt = data.draw(st.sampled_from(["int32", "int64"]))
    rng = _rng(data)
    pred = random_array(rng, (n, c) + rest, "float32")
    targets = rng.integers(-1 if ignore == -1 else 0, c, (n,) + rest).astype(tdt)
    weights = rng.random(c).astype("float32")
    prog = (
        f"def @main(%p: {tensor(pred.shape, 'float32')}, %t: {tensor(targets.shape, tdt)},"
        f" %w: {tensor((c,), 'float32')}) {{"
        f' nn.nll_loss(%p, %t, %w, reduction="{reduction}", ignore_index={ignore}) }}'
    )
    check(prog, pred, targets, weights, rtol=REDUCE_RTOL["float32"], atol=1e-5)


def test_nll_loss_reports_a_target_out_of_range_as_the_interpreter_does():
    prog = (
        "def @main(%p: Tensor[(2, 3), float32], %t: Tensor[(2,), int32], %w: Tensor[(3,), float32]) {"
        ' nn.nll_loss(%p, %t, %w, reduction="sum", ignore_index=-1) }'
    )
    mod = relay.parse(prog)
    lib = relay.build(mod)
    args = (np.ones((2, 3), "float32"), np.array([1, 3], "int32"), np.ones(3, "float32"))
    with pytest.raises(relay.RelayError, match=r"target 3 is not a class index in \[0, 3\)"):
        lib(*args)
    assert all(k.native for k in lib.kernels)
    ok = (args[0], np.array([1, -1], "int32"), args[2])
    ref, out, _ = run_both(prog, *ok)
    assert out == ref == np.float32(-1)


@pytest.mark.parametrize("nd", [1, 3])
@compares(10)
@PROPS
@given(data=st.data())
def test_adaptive_pools(nd, data):
    spatial = {1: "W", 3: "DHW"}[nd]
    kind = data.draw(st.sampled_from(["avg", "max"]))
    layout = data.draw(st.sampled_from(["NC" + spatial, "N" + spatial + "C"]))
    dims = {"N": data.draw(st.integers(1, 2)), "C": data.draw(st.integers(1, 3))}
    dims.update({a: data.draw(st.integers(1, 6)) for a in spatial})
    size = [data.draw(st.integers(1, 4)) for _ in spatial]
    dtype = data.draw(st.sampled_from(["float32", "int8", "int32", "uint8"]))
    x = random_array(_rng(data), tuple(dims[a] for a in layout), dtype, special=True)
    check(
        f"def @main(%x: {tensor(x.shape, dtype)}) {{"
        f' nn.adaptive_{kind}_pool{nd}d(%x, output_size={size}, layout="{layout}") }}',
        x,
        rtol=1e-5,
    )


def test_adaptive_pool_fuses_an_elementwise_tail():
    x = np.arange(2 * 3 * 8, dtype="float32").reshape(2, 3, 8)
    ex = check("def @main(%x: Tensor[(2, 3, 8), float32]) { nn.relu(nn.adaptive_avg_pool1d(%x, output_size=[3])) }", x)
    assert len(ex.kernels) == 1 and ex.kernels[0].ops == ["nn.adaptive_avg_pool1d", "nn.relu"]
