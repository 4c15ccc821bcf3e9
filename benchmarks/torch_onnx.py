"""PyTorch eager as a peer: an ONNX graph run node by node with torch's functions.

The models of ``models.py`` are ONNX graphs built without torch (the benchmark must run
where torch is absent), so to give PyTorch *the same model* — same graph, same weights —
each node calls the torch function an ``nn.Module`` of that layer would
(``F.conv2d``, ``F.batch_norm``, ``torch.matmul``, ``F.layer_norm``, ``nn.LSTM`` ...), on
the ONNX initializers as torch tensors.  That is what eager mode costs: one dispatch per
op, no fusion.  Only the ops ``models.py`` writes are covered.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from onnx import helper, numpy_helper


def _attrs(node):
    out = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    return {k: v.decode() if isinstance(v, bytes) else v for k, v in out.items()}


def _pads(a, k):
    p = list(a.get("pads", [0] * (2 * k)))
    if p[:k] != p[k:]:
        raise NotImplementedError("asymmetric pads")
    return p[:k]


def _conv(x, w, b=None, **a):
    k = w.dim() - 2
    return F.conv2d(x, w, b, stride=a.get("strides", [1] * k), padding=_pads(a, k),
                    dilation=a.get("dilations", [1] * k), groups=a.get("group", 1))


def _gemm(a_, b_, c=None, **a):
    a_ = a_.t() if a.get("transA") else a_
    b_ = b_.t() if a.get("transB") else b_
    y = torch.matmul(a_, b_) * a.get("alpha", 1.0)
    return y if c is None else y + c * a.get("beta", 1.0)


def _reshape(x, shape, **a):
    dims = [int(d) for d in shape.tolist()]
    dims = [x.shape[i] if d == 0 else d for i, d in enumerate(dims)]
    return x.reshape(dims)


def _unsqueeze(x, axes, **a):
    for ax in sorted(int(v) for v in axes.tolist()):
        x = x.unsqueeze(ax)
    return x


class _LSTM:
    """An ONNX LSTM node as ``nn.LSTM``: ONNX gates are (i, o, f, c), torch's (i, f, g, o)."""

    def __init__(self, node, consts):
        a = _attrs(node)
        w, r, b = (consts[n] for n in node.input[1:4])
        self.dirs, hidden = w.shape[0], a["hidden_size"]
        self.mod = torch.nn.LSTM(w.shape[2], hidden, bidirectional=self.dirs == 2)
        order = lambda t: torch.cat([t[0:hidden], t[2 * hidden:3 * hidden], t[3 * hidden:], t[hidden:2 * hidden]])  # noqa: E731
        with torch.no_grad():
            for d in range(self.dirs):
                sfx = "_reverse" if d else ""
                getattr(self.mod, f"weight_ih_l0{sfx}").copy_(order(w[d]))
                getattr(self.mod, f"weight_hh_l0{sfx}").copy_(order(r[d]))
                getattr(self.mod, f"bias_ih_l0{sfx}").copy_(order(b[d][: 4 * hidden]))
                getattr(self.mod, f"bias_hh_l0{sfx}").copy_(order(b[d][4 * hidden:]))

    def __call__(self, x, *rest, **a):
        y, (h, c) = self.mod(x)
        seq, batch = y.shape[:2]
        y = y.reshape(seq, batch, self.dirs, -1).permute(0, 2, 1, 3)
        return y, h, c


OPS = {
    "Conv": _conv,
    "BatchNormalization": lambda x, s, b, m, v, **a: F.batch_norm(x, m, v, s, b, False, 0.0, a.get("epsilon", 1e-5)),
    "Relu": lambda x, **a: F.relu(x),
    "Clip": lambda x, lo, hi, **a: torch.clamp(x, float(lo), float(hi)),
    "Sigmoid": lambda x, **a: torch.sigmoid(x),
    "Tanh": lambda x, **a: torch.tanh(x),
    "Erf": lambda x, **a: torch.erf(x),
    "Sqrt": lambda x, **a: torch.sqrt(x),
    "HardSwish": lambda x, **a: F.hardswish(x),
    "Gelu": lambda x, **a: F.gelu(x, approximate=a.get("approximate", "none")),
    "MaxPool": lambda x, **a: F.max_pool2d(x, a["kernel_shape"], a.get("strides", 1), _pads(a, 2), ceil_mode=bool(a.get("ceil_mode", 0))),
    "GlobalAveragePool": lambda x, **a: x.mean(dim=(2, 3), keepdim=True),
    "Flatten": lambda x, **a: x.flatten(a.get("axis", 1)),
    "Gemm": _gemm,
    "MatMul": lambda x, y, **a: torch.matmul(x, y),
    "Add": lambda x, y, **a: x + y,
    "Sub": lambda x, y, **a: x - y,
    "Mul": lambda x, y, **a: x * y,
    "Div": lambda x, y, **a: x / y,
    "Pow": lambda x, y, **a: torch.pow(x, y),
    "Equal": lambda x, y, **a: x == y,
    "Where": lambda c, x, y, **a: torch.where(c, x, y),
    "ReduceMean": lambda x, **a: x.mean(dim=list(a["axes"]), keepdim=bool(a.get("keepdims", 1))),
    "Softmax": lambda x, **a: torch.softmax(x, a.get("axis", -1)),
    "LayerNormalization": lambda x, w, b, **a: F.layer_norm(x, x.shape[a.get("axis", -1):], w, b, a.get("epsilon", 1e-5)),
    "Shape": lambda x, **a: torch.tensor(x.shape, dtype=torch.int64),
    "Gather": lambda x, i, **a: torch.index_select(x, a.get("axis", 0), i.reshape(-1)).reshape(
        x.shape[: a.get("axis", 0)] + i.shape + x.shape[a.get("axis", 0) + 1:]),
    "Concat": lambda *xs, **a: torch.cat(xs, a["axis"]),
    "Reshape": _reshape,
    "Transpose": lambda x, **a: x.permute(*a["perm"]),
    "Unsqueeze": _unsqueeze,
    "ConstantOfShape": lambda s, **a: torch.full([int(d) for d in s.tolist()], numpy_helper.to_array(a["value"]).item()),
    "Trilu": lambda x, **a: torch.triu(x) if a.get("upper", 1) else torch.tril(x),
}


class TorchGraph:
    """``TorchGraph(model)(feeds)`` -> list of numpy outputs; torch does every node."""

    def __init__(self, model):
        g = model.graph
        self.consts = {t.name: torch.from_numpy(numpy_helper.to_array(t).copy()) for t in g.initializer}
        self.steps = []
        for node in g.node:
            fn = _LSTM(node, self.consts) if node.op_type == "LSTM" else OPS[node.op_type]
            self.steps.append((fn, list(node.input), list(node.output), _attrs(node)))
        self.outputs = [o.name for o in g.output]

    def __call__(self, feeds: dict) -> list:
        env = dict(self.consts)
        env.update({k: torch.from_numpy(np.asarray(v)) for k, v in feeds.items()})
        with torch.inference_mode():
            for fn, ins, outs, attrs in self.steps:
                res = fn(*(env[n] for n in ins if n), **attrs)
                if len(outs) == 1:
                    env[outs[0]] = res
                else:
                    env.update(zip(outs, res))
        return [env[o].numpy() for o in self.outputs]
