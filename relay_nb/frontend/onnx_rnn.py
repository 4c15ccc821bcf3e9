"""ONNX LSTM / GRU / RNN, unrolled into Relay ops for the model's sequence length.

Relay has no recurrent operator; TVM's importer unrolls too.  Each time step is a few
dense products and elementwise gates, so the sequence length must be static.  Only the
default ``layout=0`` (``[seq, batch, ...]``) and full-length sequences are supported.
"""

from __future__ import annotations

from typing import Callable, Optional

import numpy as np

from ..ir.expr import Expr, const
from ..op import api as R
from ..op import nn
from .common import FrontendError, dtype_of, fold, shape_of
from .onnx_ops import onnx_op

_ACT: dict[str, Callable[[Expr], Expr]] = {
    "sigmoid": R.sigmoid, "tanh": R.tanh, "relu": nn.relu,
}


def _acts(attrs, defaults: list[str], dirs: int) -> list[list[Callable]]:
    names = [a.lower() for a in attrs.get("activations", defaults * dirs)]
    try:
        fns = [_ACT[n] for n in names]
    except KeyError as e:
        raise FrontendError(f"activation {e.args[0]} is not supported") from None
    k = len(defaults)
    return [fns[d * k:(d + 1) * k] for d in range(dirs)]


def _dir(t: Optional[Expr], d: int) -> Optional[Expr]:
    """Direction ``d`` of a (dirs, ...) tensor."""
    return None if t is None else fold(R.squeeze(R.strided_slice(t, [d], [d + 1], axes=[0]), [0]))


def _chunks(t: Expr, n: int, axis: int = 0) -> list[Expr]:
    parts = R.split(t, n, axis)
    return [fold(parts[i]) for i in range(n)]


def _common(inputs, attrs, gates: int):
    if attrs.get("layout", 0):
        raise FrontendError("only layout=0 is supported")
    if "clip" in attrs or attrs.get("input_forget", 0):
        raise FrontendError("the clip and input_forget attributes are not supported")
    if inputs.has(4):
        raise FrontendError("sequence_lens is not supported (all sequences run full length)")
    x = inputs[0]
    seq = shape_of(x)[0]
    if not isinstance(seq, int):
        raise FrontendError("the sequence length must be static to unroll")
    direction = attrs.get("direction", "forward")
    dirs = 2 if direction == "bidirectional" else 1
    steps = [fold(R.squeeze(p, [0])) for p in _chunks(x, seq)] if seq > 1 else [R.squeeze(x, [0])]
    return x, seq, direction, dirs, steps


def _run(steps, direction, d, cell):
    """Apply ``cell`` over the steps (reversed for the reverse direction); outputs in time order."""
    forward = direction == "forward" or (direction == "bidirectional" and d == 0)
    order = range(len(steps)) if forward else range(len(steps) - 1, -1, -1)
    outs: list = [None] * len(steps)
    state = None
    for t in order:
        state = cell(steps[t], state)
        outs[t] = state[0]
    return outs, state


def _zeros(steps: list, hidden: int, like: Expr) -> Expr:
    """The default initial state: zeros of (batch, hidden), also for a dynamic batch."""
    batch = shape_of(steps[0])[0]
    if isinstance(batch, int):
        return const(np.zeros((batch, hidden), dtype_of(like)))
    # a (batch, hidden) tensor's zeros_like: exact zeros whatever the step holds
    probe = nn.dense(steps[0], const(np.zeros((hidden, shape_of(steps[0])[1]), dtype_of(like))))
    return R.zeros_like(probe)


def _stack_outputs(per_dir: list[list[Expr]], finals: list[list[Expr]]) -> list[Expr]:
    # Y: (seq, dirs, batch, hidden); Y_h (and Y_c): (dirs, batch, hidden)
    y = R.stack([R.stack(ys, 0) for ys in per_dir], 1)
    rest = [R.stack([f[i] for f in finals], 0) for i in range(len(finals[0]))]
    return [y] + rest


@onnx_op("LSTM")
def lstm(inputs, attrs, opset):
    x, seq, direction, dirs, steps = _common(inputs, attrs, 4)
    if inputs.has(7):
        raise FrontendError("LSTM peepholes (input P) are not supported")
    hidden = int(attrs.get("hidden_size", shape_of(inputs[2])[-1]))
    acts = _acts(attrs, ["Sigmoid", "Tanh", "Tanh"], dirs)
    per_dir, finals = [], []
    for d in range(dirs):
        w, r = _dir(inputs[1], d), _dir(inputs[2], d)
        b = _dir(inputs[3], d) if inputs.has(3) else None
        bias = fold(R.add(*_chunks(b, 2))) if b is not None else None
        h0 = _dir(inputs[5], d) if inputs.has(5) else _zeros(steps, hidden, x)
        c0 = _dir(inputs[6], d) if inputs.has(6) else _zeros(steps, hidden, x)
        f, g, h = acts[d]

        def cell(xt, state, w=w, r=r, bias=bias, f=f, g=g, h=h, h0=h0, c0=c0):
            hp, cp = state if state is not None else (h0, c0)
            z = R.add(nn.dense(xt, w), nn.dense(hp, r))
            if bias is not None:
                z = R.add(z, bias)
            i, o, fg, c = _gates(z, 4)  # ONNX's gate order: input, output, forget, cell
            ct = R.add(R.multiply(f(fg), cp), R.multiply(f(i), g(c)))
            return (R.multiply(f(o), h(ct)), ct)

        outs, (hn, cn) = _run(steps, direction, d, cell)
        per_dir.append(outs)
        finals.append([hn, cn])
    return _stack_outputs(per_dir, finals)


def _gates(z: Expr, n: int) -> list[Expr]:
    parts = R.split(z, n, axis=1)
    return [parts[k] for k in range(n)]


@onnx_op("GRU")
def gru(inputs, attrs, opset):
    x, seq, direction, dirs, steps = _common(inputs, attrs, 3)
    hidden = int(attrs.get("hidden_size", shape_of(inputs[2])[-1]))
    acts = _acts(attrs, ["Sigmoid", "Tanh"], dirs)
    before = bool(attrs.get("linear_before_reset", 0))
    per_dir, finals = [], []
    for d in range(dirs):
        w, r = _dir(inputs[1], d), _dir(inputs[2], d)
        wz, wr, wh = _chunks(w, 3)
        rz, rr, rh = _chunks(r, 3)
        if inputs.has(3):
            wbz, wbr, wbh, rbz, rbr, rbh = _chunks(_dir(inputs[3], d), 6)
        else:
            wbz = wbr = wbh = rbz = rbr = rbh = None
        h0 = _dir(inputs[5], d) if inputs.has(5) else _zeros(steps, hidden, x)
        f, g = acts[d]

        def lin(a, m, bias):
            out = nn.dense(a, m)
            return R.add(out, bias) if bias is not None else out

        def cell(xt, state, wz=wz, wr=wr, wh=wh, rz=rz, rr=rr, rh=rh, wbz=wbz, wbr=wbr,
                 wbh=wbh, rbz=rbz, rbr=rbr, rbh=rbh, f=f, g=g, h0=h0):
            hp = state[0] if state is not None else h0
            zt = f(R.add(lin(xt, wz, wbz), lin(hp, rz, rbz)))
            rt = f(R.add(lin(xt, wr, wbr), lin(hp, rr, rbr)))
            if before:
                ht = g(R.add(lin(xt, wh, wbh), R.multiply(rt, lin(hp, rh, rbh))))
            else:
                ht = g(R.add(lin(xt, wh, wbh), lin(R.multiply(rt, hp), rh, rbh)))
            one = R.ones_like(zt)
            return (R.add(R.multiply(R.subtract(one, zt), ht), R.multiply(zt, hp)),)

        outs, (hn,) = _run(steps, direction, d, cell)
        per_dir.append(outs)
        finals.append([hn])
    return _stack_outputs(per_dir, finals)


@onnx_op("RNN")
def rnn(inputs, attrs, opset):
    x, seq, direction, dirs, steps = _common(inputs, attrs, 1)
    hidden = int(attrs.get("hidden_size", shape_of(inputs[2])[-1]))
    acts = _acts(attrs, ["Tanh"], dirs)
    per_dir, finals = [], []
    for d in range(dirs):
        w, r = _dir(inputs[1], d), _dir(inputs[2], d)
        bias = fold(R.add(*_chunks(_dir(inputs[3], d), 2))) if inputs.has(3) else None
        h0 = _dir(inputs[5], d) if inputs.has(5) else _zeros(steps, hidden, x)
        (f,) = acts[d]

        def cell(xt, state, w=w, r=r, bias=bias, f=f, h0=h0):
            hp = state[0] if state is not None else h0
            z = R.add(nn.dense(xt, w), nn.dense(hp, r))
            return (f(R.add(z, bias) if bias is not None else z),)

        outs, (hn,) = _run(steps, direction, d, cell)
        per_dir.append(outs)
        finals.append([hn])
    return _stack_outputs(per_dir, finals)
