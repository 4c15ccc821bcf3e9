"""ONNX LSTM / GRU / RNN, unrolled into Relay ops for the model's sequence length.

Relay has no recurrent operator; TVM's importer unrolls too.  Each time step is a few
dense products and elementwise gates, so the sequence length must be static.  Only the
default ``layout=0`` (``[seq, batch, ...]``) and full-length sequences are supported.

The input's share of every gate does not depend on the state, so it is computed for the
whole sequence at once (``X @ W^T + b``: one GEMM, as onnxruntime does) and each step
takes its row; per step only the state's product remains.  With batch 1 that turns one
matrix-vector product per step, each reading all of ``W``, into a single pass over ``W``
(measured on a 2-layer, 512-wide LSTM over 64 steps: 128 of the 254 products gone, 40%
of the run time).
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
    return x, seq, direction, dirs


def _project(x: Expr, seq: int, w: Expr, bias: Optional[Expr]) -> list[Expr]:
    """``x[t] @ w^T + bias`` for each step ``t``, from one product over the whole sequence."""
    batch, width = shape_of(x)[1:]
    if not isinstance(batch, int):  # a dynamic batch: dense keeps (seq, batch), slice per step
        proj = nn.dense(x, w)
        proj = R.add(proj, bias) if bias is not None else proj
        return [_step(proj, t) for t in range(seq)]
    # (seq * batch, width) rows, split into the steps' (batch, ...) blocks by one kernel
    # (a slice per step would be a kernel per step: slices do not fuse into a dense)
    proj = nn.dense(R.reshape(x, [seq * batch, width]), w)
    proj = R.add(proj, bias) if bias is not None else proj
    return _chunks(proj, seq) if seq > 1 else [proj]


def _step(t_major: Expr, t: int) -> Expr:
    """Row ``t`` of a ``(seq, ...)`` tensor, without the seq axis."""
    return R.squeeze(R.strided_slice(t_major, [t], [t + 1], axes=[0]), [0])


def _run(steps: list, direction: str, d: int, cell):
    """Apply ``cell`` over the steps (reversed for the reverse direction); outputs in time order."""
    forward = direction == "forward" or (direction == "bidirectional" and d == 0)
    order = range(len(steps)) if forward else range(len(steps) - 1, -1, -1)
    outs: list = [None] * len(steps)
    state = None
    for t in order:
        state = cell(steps[t], state)
        outs[t] = state[0]
    return outs, state


def _zeros(x: Expr, hidden: int) -> Expr:
    """The default initial state: zeros of (batch, hidden), also for a dynamic batch."""
    batch = shape_of(x)[1]
    if isinstance(batch, int):
        return const(np.zeros((batch, hidden), dtype_of(x)))
    # a (batch, hidden) tensor's zeros_like: exact zeros whatever the step holds
    probe = nn.dense(_step(x, 0), const(np.zeros((hidden, shape_of(x)[2]), dtype_of(x))))
    return R.zeros_like(probe)


def _stack_outputs(per_dir: list[list[Expr]], finals: list[list[Expr]]) -> list[Expr]:
    # Y: (seq, dirs, batch, hidden); Y_h (and Y_c): (dirs, batch, hidden)
    y = R.stack([R.stack(ys, 0) for ys in per_dir], 1)
    rest = [R.stack([f[i] for f in finals], 0) for i in range(len(finals[0]))]
    return [y] + rest


@onnx_op("LSTM")
def lstm(inputs, attrs, opset):
    x, seq, direction, dirs = _common(inputs, attrs, 4)
    if inputs.has(7):
        raise FrontendError("LSTM peepholes (input P) are not supported")
    hidden = int(attrs.get("hidden_size", shape_of(inputs[2])[-1]))
    acts = _acts(attrs, ["Sigmoid", "Tanh", "Tanh"], dirs)
    per_dir, finals = [], []
    for d in range(dirs):
        w, r = _dir(inputs[1], d), _dir(inputs[2], d)
        b = _dir(inputs[3], d) if inputs.has(3) else None
        bias = fold(R.add(*_chunks(b, 2))) if b is not None else None
        h0 = _dir(inputs[5], d) if inputs.has(5) else _zeros(x, hidden)
        c0 = _dir(inputs[6], d) if inputs.has(6) else _zeros(x, hidden)
        f, g, h = acts[d]

        def cell(xw, state, r=r, f=f, g=g, h=h, h0=h0, c0=c0):
            hp, cp = state if state is not None else (h0, c0)
            z = R.add(nn.dense(hp, r), xw)  # xw: this step's x @ W^T + b
            i, o, fg, c = _gates(z, 4)  # ONNX's gate order: input, output, forget, cell
            ct = R.add(R.multiply(f(fg), cp), R.multiply(f(i), g(c)))
            return (R.multiply(f(o), h(ct)), ct)

        outs, (hn, cn) = _run(_project(x, seq, w, bias), direction, d, cell)
        per_dir.append(outs)
        finals.append([hn, cn])
    return _stack_outputs(per_dir, finals)


def _gates(z: Expr, n: int) -> list[Expr]:
    """The ``n`` equal column blocks of ``z`` (batch, n * hidden); slices rather than one
    split, so that each fuses into the elementwise kernel reading it."""
    width = shape_of(z)[1] // n
    return [R.strided_slice(z, [k * width], [(k + 1) * width], axes=[1]) for k in range(n)]


@onnx_op("GRU")
def gru(inputs, attrs, opset):
    x, seq, direction, dirs = _common(inputs, attrs, 3)
    hidden = int(attrs.get("hidden_size", shape_of(inputs[2])[-1]))
    acts = _acts(attrs, ["Sigmoid", "Tanh"], dirs)
    before = bool(attrs.get("linear_before_reset", 0))
    per_dir, finals = [], []
    for d in range(dirs):
        w, r = _dir(inputs[1], d), _dir(inputs[2], d)
        rz, rr, rh = _chunks(r, 3)
        if inputs.has(3):
            wb, rb = _chunks(_dir(inputs[3], d), 2)
            rbz, rbr, rbh = _chunks(rb, 3)
        else:
            wb = rbz = rbr = rbh = None
        h0 = _dir(inputs[5], d) if inputs.has(5) else _zeros(x, hidden)
        f, g = acts[d]

        def lin(a, m, bias):
            out = nn.dense(a, m)
            return R.add(out, bias) if bias is not None else out

        def cell(xw, state, rz=rz, rr=rr, rh=rh, rbz=rbz, rbr=rbr, rbh=rbh, f=f, g=g, h0=h0):
            hp = state[0] if state is not None else h0
            xz, xr, xh = _gates(xw, 3)  # this step's x @ W^T + Wb, per gate
            zt = f(R.add(xz, lin(hp, rz, rbz)))
            rt = f(R.add(xr, lin(hp, rr, rbr)))
            if before:
                ht = g(R.add(xh, R.multiply(rt, lin(hp, rh, rbh))))
            else:
                ht = g(R.add(xh, lin(R.multiply(rt, hp), rh, rbh)))
            one = R.ones_like(zt)
            return (R.add(R.multiply(R.subtract(one, zt), ht), R.multiply(zt, hp)),)

        outs, (hn,) = _run(_project(x, seq, w, wb), direction, d, cell)
        per_dir.append(outs)
        finals.append([hn])
    return _stack_outputs(per_dir, finals)


@onnx_op("RNN")
def rnn(inputs, attrs, opset):
    x, seq, direction, dirs = _common(inputs, attrs, 1)
    hidden = int(attrs.get("hidden_size", shape_of(inputs[2])[-1]))
    acts = _acts(attrs, ["Tanh"], dirs)
    per_dir, finals = [], []
    for d in range(dirs):
        w, r = _dir(inputs[1], d), _dir(inputs[2], d)
        bias = fold(R.add(*_chunks(_dir(inputs[3], d), 2))) if inputs.has(3) else None
        h0 = _dir(inputs[5], d) if inputs.has(5) else _zeros(x, hidden)
        (f,) = acts[d]

        def cell(xw, state, r=r, f=f, h0=h0):
            hp = state[0] if state is not None else h0
            return (f(R.add(nn.dense(hp, r), xw)),)  # xw: this step's x @ W^T + b

        outs, (hn,) = _run(_project(x, seq, w, bias), direction, d, cell)
        per_dir.append(outs)
        finals.append([hn])
    return _stack_outputs(per_dir, finals)
