"""Generated benchmark programs, each as Relay text plus an equivalent Python program.

The Python twin has the same bindings and calls, so ``ast.parse`` of it is a fair peer
for "how fast can a production parser read a program of this size".
"""

from __future__ import annotations

import re
from dataclasses import dataclass


def _to_python(expr: str) -> str:
    """Relay call text -> the equivalent Python expression text."""
    expr = re.sub(r"%(\d+)\.(\d+)", r"v\1[\2]", expr)
    expr = re.sub(r"%(\d+)", r"v\1", expr)
    expr = re.sub(r"%(\w+)", r"p_\1", expr)
    return re.sub(r"(\d)f\b", r"\1", expr)


@dataclass
class Program:
    name: str
    relay: str
    python: str

    @property
    def lines(self) -> int:
        return self.relay.count("\n") + 1


HEADER = '#[version = "0.0.5"]\n'


def dataflow_module(n: int) -> Program:
    """``n`` graph bindings over a (1, 64) activation: a mix of ops, with sharing."""
    ops = [
        ("add({a}, %w)", "add({a}, w)"),
        ("multiply({a}, {b})", "multiply({a}, {b})"),
        ("nn.relu({a})", "nn.relu({a})"),
        ("tanh({a})", "tanh({a})"),
        ("nn.bias_add({a}, %w, axis=1)", "nn.bias_add({a}, w, axis=1)"),
        ("subtract({a}, {b})", "subtract({a}, {b})"),
        ("clip({a}, a_min=-1f, a_max=1f)", "clip({a}, a_min=-1.0, a_max=1.0)"),
    ]
    r = [HEADER, "def @main(%x: Tensor[(1, 64), float32], %w: Tensor[(64), float32]) {\n"]
    p = ["def main(x, w):\n"]
    for k in range(n):
        a = f"%{k - 1}" if k else "%x"
        b = f"%{k - 2}" if k > 1 else "%x"
        rel, py = ops[k % len(ops)]
        r.append(f"  %{k} = {rel.format(a=a, b=b)};\n")
        p.append(f"    v{k} = {py.format(a=a.replace('%', 'v'), b=b.replace('%', 'v'))}\n")
    r.append(f"  %{n - 1}\n}}\n")
    p.append(f"    return v{n - 1}\n")
    return Program(f"dataflow {n:,} bindings", "".join(r), "".join(p).replace("vx", "x"))


def let_chain(n: int) -> Program:
    """A ``let`` chain ``n`` deep (A-normal form)."""
    r = [HEADER, "def @main(%x0: Tensor[(4), float32]) {\n"]
    p = ["def main(x0):\n"]
    for k in range(1, n + 1):
        r.append(f"  let %x{k} = add(%x{k - 1}, 1f);\n")
        p.append(f"    x{k} = add(x{k - 1}, 1.0)\n")
    r.append(f"  %x{n}\n}}\n")
    p.append(f"    return x{n}\n")
    return Program(f"let chain {n:,} deep", "".join(r), "".join(p))


def resnet50_module(batch: int = 1) -> Program:
    """ResNet-50's topology with typed parameters, in TVM's printout style."""
    params: list[str] = []
    body: list[str] = []
    pybody: list[str] = []
    counter = [0]

    def fresh() -> str:
        counter[0] += 1
        return f"%{counter[0] - 1}"

    def param(name: str, shape: tuple[int, ...]) -> str:
        params.append(f"%{name}: Tensor[({', '.join(map(str, shape))}), float32]")
        return f"%{name}"

    def emit(expr: str) -> str:
        v = fresh()
        body.append(f"  {v} = {expr};\n")
        pybody.append(f"    {_to_python(v)} = {_to_python(expr)}\n")
        return v

    def conv_bn_relu(x: str, name: str, cin: int, cout: int, k: int, stride: int, relu: bool = True) -> str:
        w = param(f"{name}_w", (cout, cin, k, k))
        pad = k // 2
        c = emit(
            f"nn.conv2d({x}, {w}, strides=[{stride}, {stride}], padding=[{pad}, {pad}, {pad}, {pad}], "
            f"channels={cout}, kernel_size=[{k}, {k}])"
        )
        g, b, m, v = (param(f"{name}_bn_{s}", (cout,)) for s in ("gamma", "beta", "mean", "var"))
        bn = emit(f"nn.batch_norm({c}, {g}, {b}, {m}, {v}, epsilon=1e-05f)")
        y = emit(f"{bn}.0")
        return emit(f"nn.relu({y})") if relu else y

    data = param("data", (batch, 3, 224, 224))
    x = conv_bn_relu(data, "stem", 3, 64, 7, 2)
    x = emit(f"nn.max_pool2d({x}, pool_size=[3, 3], strides=[2, 2], padding=[1, 1, 1, 1])")
    cin = 64
    for stage, (blocks, width) in enumerate(zip((3, 4, 6, 3), (64, 128, 256, 512))):
        for block in range(blocks):
            stride = 2 if block == 0 and stage > 0 else 1
            name = f"s{stage}b{block}"
            y = conv_bn_relu(x, f"{name}_c1", cin, width, 1, 1)
            y = conv_bn_relu(y, f"{name}_c2", width, width, 3, stride)
            y = conv_bn_relu(y, f"{name}_c3", width, width * 4, 1, 1, relu=False)
            if block == 0:
                x = conv_bn_relu(x, f"{name}_down", cin, width * 4, 1, stride, relu=False)
            x = emit(f"nn.relu({emit(f'add({y}, {x})')})")
            cin = width * 4
    x = emit(f"nn.global_avg_pool2d({x})")
    x = emit(f"nn.batch_flatten({x})")
    fc_w = param("fc_w", (1000, 2048))
    fc_b = param("fc_b", (1000,))
    x = emit(f"nn.dense({x}, {fc_w}, units=1000)")
    x = emit(f"nn.bias_add({x}, {fc_b})")
    result = f"nn.softmax({x})"
    relay = HEADER + "def @main(" + ",\n    ".join(params) + ") {\n" + "".join(body) + f"  {result}\n}}\n"
    pyparams = ", ".join(p.split(":")[0].replace("%", "p_") for p in params)
    python = f"def main({pyparams}):\n" + "".join(pybody) + f"    return {_to_python(result)}\n"
    return Program("ResNet-50 (typed params)", relay, python)
