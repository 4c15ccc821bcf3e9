"""Gradients of the tensor family (relay_nb/op/grad_tensor.py) against finite differences,
with test_gradient's harness."""

from __future__ import annotations

import numpy as np
import pytest
from test_gradient import check_grad

import relay_nb as relay

CASES = [
    ("collapse_sum_to", lambda x: relay.collapse_sum_to(x, (3, 1)), [(2, 3, 4)]),
    ("reverse_reshape", lambda x: relay.reverse_reshape(x, (-1, 0)), [(2, 3, 4)]),
    ("gather_nd", lambda x: relay.gather_nd(x, relay.const(np.array([[0, 2, 0], [1, 1, 1]], "int32"))), [(3, 2, 4)]),
    (
        "one_hot",
        lambda on, off: relay.one_hot(
            relay.const(np.array([[0, 2], [3, 1]], "int32")), relay.reshape(on, ()), relay.reshape(off, ()), 3, -1, "float64"
        ),
        [(1,), (1,)],
    ),
]


@pytest.mark.parametrize("name,build,shapes", CASES, ids=[c[0] for c in CASES])
def test_gradients(name, build, shapes):
    check_grad(build, shapes)


def test_gather_nd_repeated_indices_add_up():
    x = relay.var("x", shape=(3,), dtype="float64")
    f = relay.Function([x], relay.sum(relay.gather_nd(x, relay.const(np.array([[2, 2, 0]], "int32")))))
    _, (gx,) = relay.create_executor("interpreter", mod=relay.IRModule.from_expr(relay.transform.gradient(f))).evaluate()(
        np.zeros(3)
    )
    assert gx.tolist() == [1.0, 0.0, 2.0]


def test_ops_without_a_tvm_gradient_say_so():
    x = relay.var("x", shape=(4,), dtype="float64")
    f = relay.Function([x], relay.sum(relay.cumsum(x)))
    with pytest.raises(relay.RelayError, match="no gradient registered for cumsum"):
        relay.transform.gradient(f)
