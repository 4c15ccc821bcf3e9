"""Full-size ONNX models with random weights, built with ``onnx.helper`` (nothing downloaded).

Each builder writes the graph an exporter would (torchvision / transformers layouts and
names), from the block builders of ``tests/onnx_models.py``; ``MODELS`` maps a name to
``(full, quick)`` builders, each returning ``(model, feeds)``.  The quick variants keep
every kind of block but at small sizes, for smoke runs and tests.
"""

from __future__ import annotations

import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests"))

import onnx_models as M  # noqa: E402  (the tests' block builders)


def _image(size):
    return {"input": np.random.default_rng(2).standard_normal((1, 3, size, size)).astype("float32")}


def resnet50(stages=(3, 4, 6, 3), size=224, classes=1000):
    """torchvision's ResNet-50: bottlenecks ``stages``, BatchNorm after every conv."""
    b = M.Builder(0)
    x = b.input("input", [1, 3, size, size])
    y = M._conv_bn(b, x, 3, 64, 7, 2, "conv1")
    y = b.op("MaxPool", [y], name="/maxpool/MaxPool", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    cin = 64
    for s, blocks in enumerate(stages):
        width = 64 * 2**s
        for i in range(blocks):
            p = f"layer{s + 1}.{i}"
            stride = 2 if i == 0 and s > 0 else 1
            z = M._conv_bn(b, y, cin, width, 1, 1, f"{p}.conv1")
            z = M._conv_bn(b, z, width, width, 3, stride, f"{p}.conv2")
            z = M._conv_bn(b, z, width, 4 * width, 1, 1, f"{p}.conv3", relu=False)
            short = M._conv_bn(b, y, cin, 4 * width, 1, stride, f"{p}.downsample", relu=False) if i == 0 else y
            y = b.op("Relu", [b.op("Add", [z, short], name=f"/{p}/Add")], name=f"/{p}/Relu")
            cin = 4 * width
    y = b.op("Flatten", [b.op("GlobalAveragePool", [y], name="/avgpool/GlobalAveragePool")], name="/Flatten", axis=1)
    y = b.op("Gemm", [y, b.weight("fc.weight", (classes, cin)), b.weight("fc.bias", (classes,))], name="/fc/Gemm", transB=1)
    M._float_inits(b)
    return b.model(y), _image(size)


def _classifier(b, y, cin, classes):
    y = b.op("Flatten", [b.op("GlobalAveragePool", [y], name="/GlobalAveragePool")], name="/Flatten", axis=1)
    return b.op("Gemm", [y, b.weight("classifier.weight", (classes, cin)), b.weight("classifier.bias", (classes,), 0.1)],
                name="/classifier/Gemm", transB=1)


# torchvision's MobileNetV2 settings: expansion t, channels c, repeats n, first stride s
MOBILENET_V2 = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]


def mobilenet_v2(settings=MOBILENET_V2, size=224, classes=1000, last=1280):
    """Inverted residuals (1x1 expand, 3x3 depthwise, 1x1 project) with ReLU6 as Clip(0, 6)."""
    b = M.Builder(3)
    x = b.input("input", [1, 3, size, size])
    lo, hi = b.init("clip.min", np.array(0.0, "float32")), b.init("clip.max", np.array(6.0, "float32"))

    def relu6(v, p):
        return b.op("Clip", [v, lo, hi], name=f"/{p}/Clip")

    y = relu6(M._conv_bn(b, x, 3, 32, 3, 2, "features.0", relu=False), "features.0")
    cin, idx = 32, 1
    for t, c, n, s in settings:
        for i in range(n):
            p, hid = f"features.{idx}", cin * t
            z = y
            if t != 1:
                z = relu6(M._conv_bn(b, z, cin, hid, 1, 1, f"{p}.conv.0", relu=False), f"{p}/conv.0")
            z = relu6(M._conv_bn(b, z, hid, hid, 3, s if i == 0 else 1, f"{p}.conv.1", groups=hid, relu=False), f"{p}/conv.1")
            z = M._conv_bn(b, z, hid, c, 1, 1, f"{p}.conv.2", relu=False)
            y = b.op("Add", [y, z], name=f"/{p}/Add") if i > 0 or (s == 1 and cin == c) else z
            cin, idx = c, idx + 1
    y = relu6(M._conv_bn(b, y, cin, last, 1, 1, f"features.{idx}", relu=False), f"features.{idx}")
    y = _classifier(b, y, last, classes)
    M._float_inits(b)
    return b.model(y), _image(size)


# EfficientNet-B0's MBConv stages: expansion, kernel, first stride, output channels, repeats
EFFICIENTNET_B0 = [(1, 3, 1, 16, 1), (6, 3, 2, 24, 2), (6, 5, 2, 40, 2), (6, 3, 2, 80, 3), (6, 5, 1, 112, 3),
                   (6, 5, 2, 192, 4), (6, 3, 1, 320, 1)]


def efficientnet_b0(stages=EFFICIENTNET_B0, size=224, classes=1000, last=1280):
    """MBConv blocks with SiLU (x * Sigmoid(x)) and squeeze-excitation, as torchvision exports."""
    b = M.Builder(13)
    x = b.input("input", [1, 3, size, size])

    def silu(v, p):
        return b.op("Mul", [v, b.op("Sigmoid", [v], name=f"/{p}/Sigmoid")], name=f"/{p}/Mul")

    y = silu(M._conv_bn(b, x, 3, 32, 3, 2, "features.0", relu=False), "features.0")
    cin = 32
    for s_i, (t, k, s, c, n) in enumerate(stages):
        for i in range(n):
            p, hid = f"features.{s_i + 1}.{i}", cin * t
            z = y
            if t != 1:
                z = silu(M._conv_bn(b, z, cin, hid, 1, 1, f"{p}.block.0", relu=False), f"{p}/block.0")
            z = silu(M._conv_bn(b, z, hid, hid, k, s if i == 0 else 1, f"{p}.block.1", groups=hid, relu=False), f"{p}/block.1")
            sq = max(1, cin // 4)
            g = b.op("GlobalAveragePool", [z], name=f"/{p}/se/GlobalAveragePool")
            g = b.op("Conv", [g, b.weight(f"{p}.se.fc1.weight", (sq, hid, 1, 1)), b.weight(f"{p}.se.fc1.bias", (sq,), 0.1)], name=f"/{p}/se/fc1/Conv")
            g = b.op("Conv", [silu(g, f"{p}/se"), b.weight(f"{p}.se.fc2.weight", (hid, sq, 1, 1)), b.weight(f"{p}.se.fc2.bias", (hid,), 0.1)], name=f"/{p}/se/fc2/Conv")
            z = b.op("Mul", [z, b.op("Sigmoid", [g], name=f"/{p}/se/Sigmoid_1")], name=f"/{p}/se/Mul_1")
            z = M._conv_bn(b, z, hid, c, 1, 1, f"{p}.block.3", relu=False)
            y = b.op("Add", [z, y], name=f"/{p}/Add") if i > 0 or (s == 1 and cin == c) else z
            cin = c
    y = silu(M._conv_bn(b, y, cin, last, 1, 1, f"features.{len(stages) + 1}", relu=False), "head")
    y = _classifier(b, y, last, classes)
    M._float_inits(b)
    return b.model(y), _image(size)


def bert_base(layers=12, seq=128, hidden=768, heads=12, vocab=30522):
    """BERT-base's encoder as exported: Shape/Gather/Concat head reshapes, decomposed LayerNorm."""
    model, feeds = M.bert_layer(batch=1, seq=seq, hidden=hidden, heads=heads, vocab=vocab, layers=layers)
    return model, feeds


def _new_gelu(b, x, p):
    """GPT-2's NewGELU written out: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))."""
    c = lambda v, n: b.init(f"{p}.{n}", np.array(v, "float32"))  # noqa: E731
    cube = b.op("Pow", [x, c(3.0, "three")], name=f"/{p}/Pow")
    inner = b.op("Mul", [b.op("Add", [x, b.op("Mul", [cube, c(0.044715, "k")], name=f"/{p}/Mul")], name=f"/{p}/Add"),
                         c(np.sqrt(2 / np.pi), "s2pi")], name=f"/{p}/Mul_1")
    t = b.op("Add", [b.op("Tanh", [inner], name=f"/{p}/Tanh"), c(1.0, "one")], name=f"/{p}/Add_1")
    return b.op("Mul", [b.op("Mul", [x, c(0.5, "half")], name=f"/{p}/Mul_2"), t], name=f"/{p}/Mul_3")


def gpt2_small(layers=12, seq=64, hidden=768, heads=12, vocab=50257):
    """A GPT-2-small-style decoder: token + position embeddings, pre-LN blocks with a causal
    (Trilu) mask and NewGELU MLP, final LayerNorm and the vocabulary projection."""
    b = M.Builder(23)
    ids = b.input("input_ids", [1, seq], M.I64)
    x = b.op("Gather", [b.weight("transformer.wte.weight", (vocab, hidden), 0.5), ids], name="/wte/Gather")
    pos = b.op("Gather", [b.weight("transformer.wpe.weight", (seq, hidden), 0.5), b.ints([list(range(seq))])], name="/wpe/Gather")
    x = b.op("Add", [x, pos], name="/Add")
    for i in range(layers):
        p = f"h.{i}"
        h = M.ln(b, x, hidden, f"{p}.ln_1", True)
        x = b.op("Add", [x, M._attention(b, h, hidden, heads, f"{p}.attn", causal_seq=seq)], name=f"/{p}/Add")
        m = M._linear(b, M.ln(b, x, hidden, f"{p}.ln_2", True), hidden, 4 * hidden, f"{p}.mlp.c_fc")
        x = b.op("Add", [x, M._linear(b, _new_gelu(b, m, f"{p}/mlp/gelu"), 4 * hidden, hidden, f"{p}.mlp.c_proj")], name=f"/{p}/Add_1")
    x = M.ln(b, x, hidden, "ln_f", True)
    logits = b.op("MatMul", [x, b.weight("lm_head.weight", (hidden, vocab))], name="/lm_head/MatMul")
    feeds = {"input_ids": np.random.default_rng(24).integers(0, vocab, (1, seq)).astype("int64")}
    return b.model(logits), feeds


def lstm(layers=2, seq=64, batch=1, inp=256, hidden=512, classes=10):
    """A stacked LSTM (one ONNX LSTM node per layer, as torch exports nn.LSTM) and a linear head
    on the last hidden state."""
    b = M.Builder(9)
    y = b.input("input", [seq, batch, inp])
    cin = inp
    for i in range(layers):
        w = b.weight(f"lstm.weight_ih_l{i}", (1, 4 * hidden, cin))
        r = b.weight(f"lstm.weight_hh_l{i}", (1, 4 * hidden, hidden))
        bias = b.weight(f"lstm.bias_l{i}", (1, 8 * hidden), 0.1)
        y, yh, _ = b.op("LSTM", [y, w, r, bias], n_out=3, name=f"/lstm/LSTM_{i}", hidden_size=hidden)
        y = b.op("Reshape", [y, b.ints([seq, batch, hidden])], name=f"/lstm/Reshape_{i}")  # drop num_directions
        cin = hidden
    last = b.op("Reshape", [yh, b.ints([batch, hidden])], name="/Reshape")
    out = b.op("Gemm", [last, b.weight("fc.weight", (classes, hidden)), b.weight("fc.bias", (classes,), 0.1)], name="/fc/Gemm", transB=1)
    feeds = {"input": np.random.default_rng(10).standard_normal((seq, batch, inp)).astype("float32")}
    return b.model(out), feeds


QUICK_MOBILENET = [(1, 16, 1, 1), (6, 24, 2, 2)]
QUICK_EFFICIENTNET = [(1, 3, 1, 16, 1), (6, 5, 2, 24, 2)]

# name -> (full size, quick smoke size)
MODELS = {
    "ResNet-50": (resnet50, lambda: resnet50(stages=(1, 1), size=32, classes=10)),
    "MobileNet v2": (mobilenet_v2, lambda: mobilenet_v2(QUICK_MOBILENET, size=32, classes=10, last=64)),
    "EfficientNet-B0": (efficientnet_b0, lambda: efficientnet_b0(QUICK_EFFICIENTNET, size=32, classes=10, last=64)),
    "BERT-base (seq 128)": (bert_base, lambda: bert_base(layers=1, seq=8, hidden=32, heads=4, vocab=50)),
    "GPT-2 small (seq 64)": (gpt2_small, lambda: gpt2_small(layers=1, seq=8, hidden=32, heads=4, vocab=40)),
    "LSTM (2x512, seq 64)": (lstm, lambda: lstm(seq=4, inp=8, hidden=16)),
}
