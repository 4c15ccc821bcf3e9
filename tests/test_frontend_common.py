"""relay_nb.frontend.common: the incremental typing the importers rely on."""

from __future__ import annotations

import numpy as np

import relay_nb as relay
from relay_nb.frontend.common import _Fragment, type_of
from relay_nb.ir.expr import Call, Var, const
from relay_nb.ir.ty import TensorType
from relay_nb.op import nn


def test_typing_a_new_node_does_not_retype_the_graph_behind_it():
    x = Var("x", TensorType((1, 3, 8, 8), "float32"))
    y = nn.conv2d(x, const(np.ones((4, 3, 3, 3), "float32")), channels=4, kernel_size=(3, 3))
    y = nn.batch_norm(y, *(const(np.ones(4, "float32")) for _ in range(4)))[0]
    for _ in range(3):
        y = nn.relu(y)
        assert str(type_of(y)) == "Tensor[(1, 4, 6, 6), float32]"
    # the next node's fragment is that node over a variable standing for `y`
    node = nn.relu(y)
    fragment = _Fragment(node).visit(node)
    calls = []
    relay.post_order_visit(fragment, lambda e: calls.append(e) if isinstance(e, Call) else None)
    assert [c.op.name for c in calls] == ["nn.relu"]
    assert isinstance(calls[0].args[0], Var) and calls[0].args[0] is not y
