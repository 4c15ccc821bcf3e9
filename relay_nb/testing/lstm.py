"""An unrolled LSTM, as ``tvm.relay.testing.lstm``: one cell function per step, called
with that step's input and the previous step's ``(h, c)`` state."""

from __future__ import annotations

from .. import op as _op
from ..analysis import free_vars
from ..ir.expr import Call, Function, Let, Tuple, TupleGetItem, Var
from ..ir.ty import TensorType, TupleType
from . import layers
from .init import create_workload


def _lets(bindings, body):
    for var, value in reversed(bindings):
        body = Let(var, value, body)
    return body


def lstm_cell(num_hidden, batch_size=1, dtype="float32", name=""):
    """``fn (inputs, (h, c), i2h_weight, i2h_bias, h2h_weight, h2h_bias) -> (h', (h', c'))``,
    written in A-normal form as TVM's builder writes it."""
    hidden = TensorType((batch_size, num_hidden), dtype)
    gates_t = TensorType((batch_size, 4 * num_hidden), dtype)
    state_t = TupleType((hidden, hidden))
    ret_t = TupleType((hidden, state_t))
    inputs, states = Var("inputs", hidden), Var("states", state_t)
    weights = [
        Var("i2h_weight", TensorType((4 * num_hidden, num_hidden), dtype)),
        Var("i2h_bias", TensorType((4 * num_hidden,), dtype)),
        Var("h2h_weight", TensorType((4 * num_hidden, num_hidden), dtype)),
        Var("h2h_bias", TensorType((4 * num_hidden,), dtype)),
    ]
    i2h_w, i2h_b, h2h_w, h2h_b = weights
    v = {n: Var(n, t) for n, t in [("i2h", gates_t), ("h2h", gates_t), ("gates", gates_t),
                                   ("slice_gates", TupleType((hidden,) * 4)), ("in_gate", hidden),
                                   ("forget_gate", hidden), ("in_transform", hidden), ("out_gate", hidden),
                                   ("next_c", hidden), ("next_h", hidden), ("ret", ret_t)]}  # fmt: skip
    part = lambda i: TupleGetItem(v["slice_gates"], i)  # noqa: E731
    bindings = [
        (v["i2h"], layers.dense_add_bias(inputs, i2h_w, i2h_b, units=4 * num_hidden, name=f"{name}i2h")),
        (v["h2h"], layers.dense_add_bias(TupleGetItem(states, 0), h2h_w, h2h_b, units=4 * num_hidden, name=f"{name}h2h")),
        (v["gates"], _op.add(v["i2h"], v["h2h"])),
        (v["slice_gates"], _op.split(v["gates"], 4, axis=1).astuple()),
        (v["in_gate"], _op.sigmoid(part(0))),
        (v["forget_gate"], _op.sigmoid(part(1))),
        (v["in_transform"], _op.tanh(part(2))),
        (v["out_gate"], _op.sigmoid(part(3))),
        (v["next_c"], _op.add(_op.multiply(v["forget_gate"], TupleGetItem(states, 1)), _op.multiply(v["in_gate"], v["in_transform"]))),
        (v["next_h"], _op.multiply(v["out_gate"], _op.tanh(v["next_c"]))),
        (v["ret"], Tuple((v["next_h"], Tuple((v["next_h"], v["next_c"]))))),
    ]
    return Function((inputs, states, *weights), _lets(bindings, v["ret"]), ret_t)


def get_net(iterations, num_hidden, batch_size=1, dtype="float32"):
    """``iterations`` steps; as in TVM, every step has its own input parameter ``%data``."""
    hidden = TensorType((batch_size, num_hidden), dtype)
    state_t = TupleType((hidden, hidden))
    zeros, init = Var("zeros", hidden), Var("init_states", state_t)
    bindings = [(zeros, _op.zeros((batch_size, num_hidden), dtype)), (init, Tuple((zeros, zeros)))]
    states, out = init, None
    for i in range(iterations):
        args = [
            Var("data", hidden),
            states,
            Var(f"i2h_{i}_weight", TensorType((4 * num_hidden, num_hidden), dtype)),
            Var(f"i2h_{i}_bias", TensorType((4 * num_hidden,), dtype)),
            Var(f"h2h_{i}_weight", TensorType((4 * num_hidden, num_hidden), dtype)),
            Var(f"h2h_{i}_bias", TensorType((4 * num_hidden,), dtype)),
        ]
        call = Var(f"call_{i}", TupleType((hidden, state_t)))
        out, states = Var(f"out_{i}", hidden), Var(f"states_{i}", state_t)
        bindings += [
            (call, Call(lstm_cell(num_hidden, batch_size, dtype, f"lstm_{i}"), tuple(args))),
            (out, TupleGetItem(call, 0)),
            (states, TupleGetItem(call, 1)),
        ]
    body = _lets(bindings, out)
    return Function(free_vars(body), body, hidden)


def get_workload(iterations, num_hidden, batch_size=1, dtype="float32"):
    """``(mod, params)`` of the unrolled LSTM with deterministic weights."""
    return create_workload(get_net(iterations, num_hidden, batch_size, dtype))
