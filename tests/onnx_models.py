"""Small ONNX models built with onnx.helper (random weights), for the importer's tests.

Nothing is downloaded: each builder writes the graph an exporter would (names like
``/layer1/conv1/Conv`` and ``layer1.0.conv1.weight``), at sizes that keep CI fast.
``check(model, feeds)`` imports a model and compares the interpreter and the JIT with
onnxruntime.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT
I64 = TensorProto.INT64


class Builder:
    """Accumulates nodes and initializers; ``op`` returns the output name(s)."""

    def __init__(self, seed: int = 0):
        self.nodes, self.inits, self.inputs = [], [], []
        self.rng = np.random.default_rng(seed)
        self.count = 0

    def input(self, name, shape, elem=F):
        self.inputs.append(helper.make_tensor_value_info(name, elem, shape))
        return name

    def init(self, name, array):
        self.inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def weight(self, name, shape, scale=None):
        fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else shape[0]
        scale = scale if scale is not None else 1.0 / np.sqrt(max(fan_in, 1))
        return self.init(name, (self.rng.standard_normal(shape) * scale).astype("float32"))

    def ints(self, values, name=None):
        self.count += 1
        return self.init(name or f"onnx::c{self.count}", np.asarray(values, dtype="int64"))

    def op(self, op_type, inputs, n_out=1, name=None, **attrs):
        self.count += 1
        name = name or f"/{op_type}_{self.count}"
        outs = [f"{name}_output_{i}" for i in range(n_out)]
        self.nodes.append(helper.make_node(op_type, list(inputs), outs, name=name, **attrs))
        return outs[0] if n_out == 1 else outs

    def model(self, outputs, opset=17, name="g"):
        outs = [onnx.ValueInfoProto(name=o) for o in ([outputs] if isinstance(outputs, str) else outputs)]
        g = helper.make_graph(self.nodes, name, self.inputs, outs, self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
        m.ir_version = 8
        return onnx.shape_inference.infer_shapes(m)


def single(op_type, inputs, attrs=None, inits=None, opset=17, n_out=1, elem=None):
    """A one-node model; ``inputs`` maps input name -> array (its shape/dtype declared)."""
    b = Builder()
    names = []
    for name, array in inputs.items():
        if name.startswith("const:"):
            names.append(b.init(name[6:], array))
        elif array is None:
            names.append("")
        else:
            dt = helper.np_dtype_to_tensor_dtype(np.asarray(array).dtype)
            names.append(b.input(name, list(np.shape(array)), dt))
    out = b.op(op_type, names, n_out=n_out, name=f"/{op_type}", **(attrs or {}))
    model = b.model(out, opset=opset)
    for o in model.graph.output:
        if not o.type.tensor_type.HasField("shape") and b.inputs:
            # onnx's inference does not expand some function ops (MeanVarianceNormalization):
            # those keep their input's type, which is what the checker needs to see
            o.type.CopyFrom(b.inputs[0].type)
    return model


def run_onnxruntime(model, feeds):
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    sess = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


def rel_error(got, want) -> float:
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    if want.dtype == bool or np.issubdtype(want.dtype, np.integer):
        return 0.0 if np.array_equal(got, want) else float("inf")
    scale = max(float(np.max(np.abs(want))) if want.size else 0.0, 1e-6)
    return float(np.max(np.abs(got.astype("float64") - want))) / scale if want.size else 0.0


def check(model, feeds, tol=1e-4, jit=True, **kwargs):
    """Import ``model``; run interpreter (and JIT) and onnxruntime; return the max error."""
    import relay_nb as relay

    mod, params = relay.frontend.from_onnx(model, **kwargs)
    want = run_onnxruntime(model, feeds)
    # @main takes the graph inputs, then the parameters in the order of `params`
    args = [feeds[v.name_hint] for v in mod["main"].params if v.name_hint in feeds] + list(params.values())
    worst = 0.0
    kinds = ("debug", "jit") if jit else ("debug",)
    for kind in kinds:
        got = relay.create_executor(kind, mod).evaluate()(*args)
        got = list(got) if isinstance(got, (tuple, list)) else [got]
        assert len(got) == len(want), (kind, len(got), len(want))
        for g, w in zip(got, want):
            err = rel_error(g, w)
            assert err <= tol, f"{kind}: relative error {err:.3g} > {tol}"
            worst = max(worst, err)
    return worst


# --- whole models -----------------------------------------------------------------------


def _conv_bn(b, x, cin, cout, k, stride, prefix, groups=1, relu=True, act="Relu"):
    w = b.weight(f"{prefix}.conv.weight", (cout, cin // groups, k, k))
    y = b.op("Conv", [x, w], name=f"/{prefix}/conv/Conv", kernel_shape=[k, k], strides=[stride, stride],
             pads=[k // 2] * 4, group=groups)
    bn = [b.init(f"{prefix}.bn.{n}", v) for n, v in (
        ("weight", b.rng.uniform(0.5, 1.5, cout)), ("bias", b.rng.standard_normal(cout) * 0.1),
        ("running_mean", b.rng.standard_normal(cout) * 0.1), ("running_var", b.rng.uniform(0.5, 1.5, cout)))]
    y = b.op("BatchNormalization", [y] + bn, name=f"/{prefix}/bn/BatchNormalization")
    return b.op(act, [y], name=f"/{prefix}/{act}") if relu else y


def _float_inits(b):
    for t in b.inits:
        a = numpy_helper.to_array(t)
        if a.dtype == np.float64:
            t.CopyFrom(numpy_helper.from_array(a.astype("float32"), t.name))


def resnet_block(size=16, channels=8, classes=10):
    """Stem conv-bn-relu-maxpool, one basic block with a strided shortcut, GAP, Flatten, Gemm."""
    b = Builder(1)
    x = b.input("input", [1, 3, size, size])
    y = _conv_bn(b, x, 3, channels, 3, 1, "stem")
    y = b.op("MaxPool", [y], name="/maxpool/MaxPool", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    z = _conv_bn(b, y, channels, 2 * channels, 3, 2, "layer1.0.conv1")
    z = _conv_bn(b, z, 2 * channels, 2 * channels, 3, 1, "layer1.0.conv2", relu=False)
    s = _conv_bn(b, y, channels, 2 * channels, 1, 2, "layer1.0.downsample", relu=False)
    y = b.op("Relu", [b.op("Add", [z, s], name="/layer1/layer1.0/Add")], name="/layer1/layer1.0/Relu")
    y = b.op("GlobalAveragePool", [y], name="/avgpool/GlobalAveragePool")
    y = b.op("Flatten", [y], name="/Flatten", axis=1)
    w = b.weight("fc.weight", (classes, 2 * channels))
    bias = b.weight("fc.bias", (classes,), 0.1)
    y = b.op("Gemm", [y, w, bias], name="/fc/Gemm", transB=1)
    _float_inits(b)
    return b.model(y), {"input": np.random.default_rng(2).standard_normal((1, 3, size, size)).astype("float32")}


def inverted_residual(size=8, channels=8, expand=4):
    """MobileNet-v2 block: 1x1 expand, 3x3 depthwise (group=C), 1x1 project, residual; Clip(0,6)."""
    b = Builder(3)
    x = b.input("input", [1, channels, size, size])
    hid = channels * expand
    lo, hi = b.init("clip.min", np.array(0.0, "float32")), b.init("clip.max", np.array(6.0, "float32"))
    y = _conv_bn(b, x, channels, hid, 1, 1, "features.1.conv.0", relu=False)
    y = b.op("Clip", [y, lo, hi], name="/features.1/conv.0/Clip")
    y = _conv_bn(b, y, hid, hid, 3, 1, "features.1.conv.1", groups=hid, relu=False)
    y = b.op("Clip", [y, lo, hi], name="/features.1/conv.1/Clip")
    y = _conv_bn(b, y, hid, channels, 1, 1, "features.1.conv.2", relu=False)
    y = b.op("Add", [x, y], name="/features.1/Add")
    y = b.op("HardSwish", [y], name="/features.2/HardSwish")
    _float_inits(b)
    return b.model(y), {"input": np.random.default_rng(4).standard_normal((1, channels, size, size)).astype("float32")}


def _linear(b, x, din, dout, prefix):
    w = b.weight(f"{prefix}.weight", (din, dout))  # exported as MatMul with W^T stored
    y = b.op("MatMul", [x, w], name=f"/{prefix}/MatMul")
    return b.op("Add", [y, b.weight(f"{prefix}.bias", (dout,), 0.1)], name=f"/{prefix}/Add")


def _layer_norm_decomposed(b, x, hidden, prefix):

    mean = b.op("ReduceMean", [x], name=f"/{prefix}/ReduceMean", axes=[-1])
    d = b.op("Sub", [x, mean], name=f"/{prefix}/Sub")
    two = b.init(f"{prefix}.two", np.array(2.0, "float32"))
    var = b.op("ReduceMean", [b.op("Pow", [d, two], name=f"/{prefix}/Pow")], name=f"/{prefix}/ReduceMean_1", axes=[-1])
    eps = b.init(f"{prefix}.eps", np.array(1e-12, "float32"))
    y = b.op("Div", [d, b.op("Sqrt", [b.op("Add", [var, eps], name=f"/{prefix}/Add")], name=f"/{prefix}/Sqrt")], name=f"/{prefix}/Div")

    y = b.op("Mul", [y, b.init(f"{prefix}.weight", np.ones(hidden, "float32") + b.rng.standard_normal(hidden).astype("float32") * 0.1)], name=f"/{prefix}/Mul")
    return b.op("Add", [y, b.weight(f"{prefix}.bias", (hidden,), 0.1)], name=f"/{prefix}/Add_1")


def _heads(b, x, batch_seq, heads, hd, prefix):
    """(B, S, H) -> (B, heads, S, hd) through a Shape-computed Reshape, as exporters write."""
    shp = b.op("Shape", [x], name=f"/{prefix}/Shape")
    bs = b.op("Gather", [shp, b.ints([0, 1])], name=f"/{prefix}/Gather", axis=0)
    new = b.op("Concat", [bs, b.ints([heads, hd])], name=f"/{prefix}/Concat", axis=0)
    y = b.op("Reshape", [x, new], name=f"/{prefix}/Reshape")
    return b.op("Transpose", [y], name=f"/{prefix}/Transpose", perm=[0, 2, 1, 3])


def _attention(b, x, hidden, heads, prefix, causal_seq=None, mask_add=None):
    hd = hidden // heads
    q = _heads(b, _linear(b, x, hidden, hidden, f"{prefix}.query"), None, heads, hd, f"{prefix}/q")
    k = _heads(b, _linear(b, x, hidden, hidden, f"{prefix}.key"), None, heads, hd, f"{prefix}/k")
    v = _heads(b, _linear(b, x, hidden, hidden, f"{prefix}.value"), None, heads, hd, f"{prefix}/v")
    kt = b.op("Transpose", [k], name=f"/{prefix}/Transpose_k", perm=[0, 1, 3, 2])
    s = b.op("MatMul", [q, kt], name=f"/{prefix}/MatMul_qk")
    s = b.op("Div", [s, b.init(f"{prefix}.scale", np.array(np.sqrt(hd), "float32"))], name=f"/{prefix}/Div")
    if causal_seq is not None:
        ones = b.op("ConstantOfShape", [b.ints([causal_seq, causal_seq])], name=f"/{prefix}/ConstantOfShape",
                    value=helper.make_tensor("v", TensorProto.BOOL, [1], [True]))
        tri = b.op("Trilu", [ones], name=f"/{prefix}/Trilu", upper=0)
        neg = b.init(f"{prefix}.neg", np.array(-1e9, "float32"))
        s = b.op("Where", [tri, s, neg], name=f"/{prefix}/Where")
    if mask_add is not None:
        s = b.op("Add", [s, mask_add], name=f"/{prefix}/Add_mask")
    p = b.op("Softmax", [s], name=f"/{prefix}/Softmax", axis=-1)
    o = b.op("MatMul", [p, v], name=f"/{prefix}/MatMul_pv")
    o = b.op("Transpose", [o], name=f"/{prefix}/Transpose_o", perm=[0, 2, 1, 3])
    shp = b.op("Shape", [x], name=f"/{prefix}/Shape_o")
    o = b.op("Reshape", [o, shp], name=f"/{prefix}/Reshape_o")
    return _linear(b, o, hidden, hidden, f"{prefix}.output")


def _erf_gelu(b, x, prefix):
    r2 = b.init(f"{prefix}.sqrt2", np.array(np.sqrt(2.0), "float32"))
    e = b.op("Erf", [b.op("Div", [x, r2], name=f"/{prefix}/Div")], name=f"/{prefix}/Erf")
    one = b.init(f"{prefix}.one", np.array(1.0, "float32"))
    half = b.init(f"{prefix}.half", np.array(0.5, "float32"))
    y = b.op("Mul", [x, b.op("Add", [e, one], name=f"/{prefix}/Add")], name=f"/{prefix}/Mul")
    return b.op("Mul", [y, half], name=f"/{prefix}/Mul_1")


def bert_layer(batch=2, seq=8, hidden=32, heads=4, vocab=50, layers=1, fused_ln=False, opset=17):
    """Embeddings (Gather), a Where-built attention mask, `layers` encoder layers."""
    b = Builder(5)
    ids = b.input("input_ids", [batch, seq], I64)
    mask = b.input("attention_mask", [batch, seq], I64)
    emb = b.op("Gather", [b.weight("embeddings.word_embeddings.weight", (vocab, hidden), 0.5), ids], name="/embeddings/word/Gather")
    pos = b.op("Gather", [b.weight("embeddings.position_embeddings.weight", (seq, hidden), 0.5), b.ints(list(range(seq)))], name="/embeddings/position/Gather")
    x = b.op("Add", [emb, pos], name="/embeddings/Add")
    x = ln(b, x, hidden, "embeddings.LayerNorm", fused_ln)
    # mask (B, S) int -> (B, 1, 1, S) additive: 0 where attended, -1e4 elsewhere
    m = b.op("Unsqueeze", [mask, b.ints([1, 2])], name="/Unsqueeze")
    zero = b.init("mask.zero", np.array(0, "int64"))
    cond = b.op("Equal", [m, zero], name="/Equal")
    madd = b.op("Where", [cond, b.init("mask.neg", np.array(-1e4, "float32")), b.init("mask.pos", np.array(0.0, "float32"))], name="/Where")
    for i in range(layers):
        p = f"encoder.layer.{i}"
        a = _attention(b, x, hidden, heads, f"{p}.attention", mask_add=madd)
        x = ln(b, b.op("Add", [a, x], name=f"/{p}/attention/Add_res"), hidden, f"{p}.attention.LayerNorm", fused_ln)
        h = _erf_gelu(b, _linear(b, x, hidden, 4 * hidden, f"{p}.intermediate"), f"{p}/gelu")
        h = _linear(b, h, 4 * hidden, hidden, f"{p}.output")
        x = ln(b, b.op("Add", [h, x], name=f"/{p}/output/Add_res"), hidden, f"{p}.output.LayerNorm", fused_ln)
    rng = np.random.default_rng(6)
    feeds = {
        "input_ids": rng.integers(0, vocab, (batch, seq)).astype("int64"),
        "attention_mask": np.concatenate([np.ones((batch, seq - 2), "int64"), np.zeros((batch, 2), "int64")], 1),
    }
    return b.model(x, opset=opset), feeds


def ln(b, x, hidden, prefix, fused):
    if not fused:
        return _layer_norm_decomposed(b, x, hidden, prefix)
    w = b.init(f"{prefix}.weight", (1 + b.rng.standard_normal(hidden) * 0.1).astype("float32"))
    return b.op("LayerNormalization", [x, w, b.weight(f"{prefix}.bias", (hidden,), 0.1)], name=f"/{prefix}/LayerNormalization", axis=-1, epsilon=1e-5)


def gpt2_block(batch=1, seq=8, hidden=32, heads=4):
    """Pre-LN decoder block with a Trilu causal mask, tanh-Gelu MLP, KV concatenation."""
    b = Builder(7)
    x = b.input("hidden_states", [batch, seq, hidden])
    past = b.input("past_key", [batch, heads, 2, hidden // heads])
    h = ln(b, x, hidden, "h.0.ln_1", True)
    a = _attention(b, h, hidden, heads, "h.0.attn", causal_seq=seq)
    x2 = b.op("Add", [x, a], name="/h.0/Add")
    # KV cache: concatenate past keys with this step's keys (as GPT-2's present output)
    k = _heads(b, _linear(b, h, hidden, hidden, "h.0.attn.c_k"), None, heads, hidden // heads, "h.0/kv")
    present = b.op("Concat", [past, k], name="/h.0/attn/Concat", axis=2)
    m = _linear(b, ln(b, x2, hidden, "h.0.ln_2", True), hidden, 4 * hidden, "h.0.mlp.c_fc")
    m = b.op("Gelu", [m], name="/h.0/mlp/Gelu", approximate="tanh")
    y = b.op("Add", [x2, _linear(b, m, 4 * hidden, hidden, "h.0.mlp.c_proj")], name="/h.0/Add_1")
    rng = np.random.default_rng(8)
    feeds = {
        "hidden_states": rng.standard_normal((batch, seq, hidden)).astype("float32"),
        "past_key": rng.standard_normal((batch, heads, 2, hidden // heads)).astype("float32"),
    }
    return b.model([y, present], opset=20), feeds


def lstm_model(seq=5, batch=2, inp=6, hidden=8, direction="forward"):
    b = Builder(9)
    x = b.input("input", [seq, batch, inp])
    dirs = 2 if direction == "bidirectional" else 1
    w = b.weight("lstm.weight_ih", (dirs, 4 * hidden, inp))
    r = b.weight("lstm.weight_hh", (dirs, 4 * hidden, hidden))
    bias = b.weight("lstm.bias", (dirs, 8 * hidden), 0.1)
    y, yh, yc = b.op("LSTM", [x, w, r, bias], n_out=3, name="/lstm/LSTM", hidden_size=hidden, direction=direction)
    fc = b.weight("fc.weight", (dirs * hidden, 3))
    last = b.op("Reshape", [yh, b.ints([batch, dirs * hidden])], name="/Reshape") if dirs == 1 else \
        b.op("Reshape", [b.op("Transpose", [yh], perm=[1, 0, 2], name="/Transpose"), b.ints([batch, dirs * hidden])], name="/Reshape")
    out = b.op("MatMul", [last, fc], name="/fc/MatMul")
    feeds = {"input": np.random.default_rng(10).standard_normal((seq, batch, inp)).astype("float32")}
    return b.model([out, y, yc]), feeds


def recurrent_model(kind="GRU", seq=4, batch=2, inp=5, hidden=6, direction="forward", **attrs):
    """A GRU or RNN layer with initial state; outputs Y and Y_h."""
    b = Builder(11)
    x = b.input("input", [seq, batch, inp])
    dirs = 2 if direction == "bidirectional" else 1
    g = {"GRU": 3, "RNN": 1}[kind]
    w = b.weight(f"{kind.lower()}.weight_ih", (dirs, g * hidden, inp))
    r = b.weight(f"{kind.lower()}.weight_hh", (dirs, g * hidden, hidden))
    bias = b.weight(f"{kind.lower()}.bias", (dirs, 2 * g * hidden), 0.1)
    h0 = b.input("h0", [dirs, batch, hidden])
    y, yh = b.op(kind, [x, w, r, bias, "", h0], n_out=2, name=f"/{kind.lower()}/{kind}",
                 hidden_size=hidden, direction=direction, **attrs)
    rng = np.random.default_rng(12)
    feeds = {"input": rng.standard_normal((seq, batch, inp)).astype("float32"),
             "h0": rng.standard_normal((dirs, batch, hidden)).astype("float32")}
    return b.model([y, yh]), feeds


def _img(seed, *shape):
    return np.random.default_rng(seed).standard_normal(shape).astype("float32")


def efficientnet_block(size=8, channels=8):
    """MBConv with SiLU (x * Sigmoid) and squeeze-excitation (GAP, 1x1 convs, Mul)."""
    b = Builder(13)
    x = b.input("input", [1, channels, size, size])
    y = _conv_bn(b, x, channels, 2 * channels, 1, 1, "features.1.0.block.0", relu=False)
    y = b.op("Mul", [y, b.op("Sigmoid", [y], name="/block.0/Sigmoid")], name="/block.0/Mul")
    y = _conv_bn(b, y, 2 * channels, 2 * channels, 3, 1, "features.1.0.block.1", groups=2 * channels, relu=False)
    y = b.op("Mul", [y, b.op("Sigmoid", [y], name="/block.1/Sigmoid")], name="/block.1/Mul")
    s = b.op("GlobalAveragePool", [y], name="/se/avgpool/GlobalAveragePool")
    s = b.op("Conv", [s, b.weight("se.fc1.weight", (2, 2 * channels, 1, 1)), b.weight("se.fc1.bias", (2,), 0.1)], name="/se/fc1/Conv")
    s = b.op("Mul", [s, b.op("Sigmoid", [s], name="/se/Sigmoid_1")], name="/se/Mul_1")
    s = b.op("Conv", [s, b.weight("se.fc2.weight", (2 * channels, 2, 1, 1)), b.weight("se.fc2.bias", (2 * channels,), 0.1)], name="/se/fc2/Conv")
    y = b.op("Mul", [y, b.op("Sigmoid", [s], name="/se/Sigmoid")], name="/se/Mul")
    y = _conv_bn(b, y, 2 * channels, channels, 1, 1, "features.1.0.block.3", relu=False)
    y = b.op("Add", [y, x], name="/features.1.0/Add")
    _float_inits(b)
    return b.model(y), {"input": _img(14, 1, channels, size, size)}


def squeezenet_fire(size=15):
    """Conv/ReLU, MaxPool(ceil_mode), a Fire module (squeeze, two expands, Concat), Dropout, GAP."""
    b = Builder(15)
    x = b.input("input", [1, 3, size, size])
    y = b.op("Relu", [b.op("Conv", [x, b.weight("features.0.weight", (8, 3, 3, 3)), b.weight("features.0.bias", (8,), 0.1)], strides=[2, 2])])
    y = b.op("MaxPool", [y], kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1)
    sq = b.op("Relu", [b.op("Conv", [y, b.weight("fire.squeeze.weight", (4, 8, 1, 1)), b.weight("fire.squeeze.bias", (4,), 0.1)])])
    e1 = b.op("Relu", [b.op("Conv", [sq, b.weight("fire.expand1x1.weight", (6, 4, 1, 1))])])
    e3 = b.op("Relu", [b.op("Conv", [sq, b.weight("fire.expand3x3.weight", (6, 4, 3, 3))], pads=[1, 1, 1, 1])])
    y = b.op("Concat", [e1, e3], axis=1)
    y = b.op("Dropout", [y])
    y = b.op("Flatten", [b.op("GlobalAveragePool", [y])], axis=1)
    return b.model(y), {"input": _img(16, 1, 3, size, size)}


def densenet_block(size=8):
    """BN-ReLU-Conv layers whose outputs Concat onto the input, then a transition AveragePool."""
    b = Builder(17)
    x = b.input("input", [1, 4, size, size])
    feats = [x]
    for i in range(2):
        cin = 4 + 4 * i
        cat = b.op("Concat", feats, axis=1) if len(feats) > 1 else feats[0]
        bn = [b.init(f"denselayer{i}.norm.{n}", v.astype("float32")) for n, v in (
            ("weight", b.rng.uniform(0.5, 1.5, cin)), ("bias", b.rng.standard_normal(cin) * 0.1),
            ("mean", b.rng.standard_normal(cin) * 0.1), ("var", b.rng.uniform(0.5, 1.5, cin)))]
        y = b.op("Relu", [b.op("BatchNormalization", [cat] + bn)])
        feats.append(b.op("Conv", [y, b.weight(f"denselayer{i}.conv.weight", (4, cin, 3, 3))], pads=[1, 1, 1, 1]))
    y = b.op("Concat", feats, axis=1)
    y = b.op("AveragePool", [y], kernel_shape=[2, 2], strides=[2, 2])
    return b.model(y), {"input": _img(18, 1, 4, size, size)}


def convnext_block(size=8, dim=16):
    """Depthwise 7x7, permute to NHWC, LayerNormalization, MLP with Erf-Gelu, layer scale, residual."""
    b = Builder(19)
    x = b.input("input", [1, dim, size, size])
    y = b.op("Conv", [x, b.weight("block.dwconv.weight", (dim, 1, 7, 7)), b.weight("block.dwconv.bias", (dim,), 0.1)],
             pads=[3, 3, 3, 3], group=dim)
    y = b.op("Transpose", [y], perm=[0, 2, 3, 1])
    y = ln(b, y, dim, "block.norm", True)
    y = _linear(b, y, dim, 4 * dim, "block.pwconv1")
    y = _erf_gelu(b, y, "block/gelu")
    y = _linear(b, y, 4 * dim, dim, "block.pwconv2")
    y = b.op("Mul", [y, b.weight("block.gamma", (dim,), 0.5)])
    y = b.op("Transpose", [y], perm=[0, 3, 1, 2])
    y = b.op("Add", [x, y])
    return b.model(y), {"input": _img(20, 1, dim, size, size)}


def vit_tiny(size=8, patch=4, dim=16, heads=2, classes=5):
    """Patch-embedding Conv, Flatten/Transpose, class token Expand-ed by a Shape-computed batch,
    position embedding, one pre-LN encoder layer, Gather of token 0, head Gemm."""
    b = Builder(21)
    x = b.input("input", [2, 3, size, size])
    y = b.op("Conv", [x, b.weight("conv_proj.weight", (dim, 3, patch, patch)), b.weight("conv_proj.bias", (dim,), 0.1)],
             strides=[patch, patch])
    n = (size // patch) ** 2
    y = b.op("Reshape", [y, b.ints([2, dim, n])])
    y = b.op("Transpose", [y], perm=[0, 2, 1])
    batch = b.op("Gather", [b.op("Shape", [x]), b.ints(0)], axis=0)
    # torch writes expand(n, -1, -1) as Expand to [n, 1, 1] (a 1 keeps the dim)
    shape = b.op("Concat", [b.op("Unsqueeze", [batch, b.ints([0])]), b.ints([1, 1])], axis=0)
    cls = b.op("Expand", [b.weight("class_token", (1, 1, dim), 1.0), shape])
    y = b.op("Concat", [cls, y], axis=1)
    y = b.op("Add", [y, b.weight("encoder.pos_embedding", (1, n + 1, dim), 0.5)])
    h = ln(b, y, dim, "encoder.layers.0.ln_1", True)
    y = b.op("Add", [y, _attention(b, h, dim, heads, "encoder.layers.0.self_attention")])
    h = _erf_gelu(b, _linear(b, ln(b, y, dim, "encoder.layers.0.ln_2", True), dim, 2 * dim, "mlp.0"), "mlp/gelu")
    y = b.op("Add", [y, _linear(b, h, 2 * dim, dim, "mlp.3")])
    y = b.op("Gather", [ln(b, y, dim, "encoder.ln", True), b.init("zero", np.array(0, "int64"))], axis=1)
    y = b.op("Gemm", [y, b.weight("heads.head.weight", (classes, dim)), b.weight("heads.head.bias", (classes,), 0.1)], transB=1)
    return b.model(y), {"input": _img(22, 2, 3, size, size)}


def gpt2_range_mask(batch=2, seq=6, hidden=16, heads=2):
    """GPT-2 as transformers exports it: fused c_attn Split into q/k/v, position ids from
    Range(Shape), a causal mask from Range/Unsqueeze/LessOrEqual, Where with the dtype min."""
    b = Builder(23)
    ids = b.input("input_ids", [batch, seq], I64)
    wte = b.op("Gather", [b.weight("transformer.wte.weight", (40, hidden), 0.5), ids])
    length = b.op("Gather", [b.op("Shape", [ids]), b.ints(1)], axis=0)
    pos = b.op("Range", [b.init("start", np.array(0, "int64")), length, b.init("step", np.array(1, "int64"))])
    wpe = b.op("Gather", [b.weight("transformer.wpe.weight", (seq, hidden), 0.5), b.op("Unsqueeze", [pos, b.ints([0])])])
    x = b.op("Add", [wte, wpe])
    h = ln(b, x, hidden, "h.0.ln_1", True)
    qkv = _linear(b, h, hidden, 3 * hidden, "h.0.attn.c_attn")
    q, k, v = b.op("Split", [qkv, b.ints([hidden] * 3)], n_out=3, axis=2)
    hd = hidden // heads
    q, k, v = (_heads(b, t, None, heads, hd, f"h.0/{n}") for t, n in ((q, "q"), (k, "k"), (v, "v")))
    s = b.op("MatMul", [q, b.op("Transpose", [k], perm=[0, 1, 3, 2])])
    s = b.op("Div", [s, b.init("scale", np.array(np.sqrt(hd), "float32"))])
    rows = b.op("Unsqueeze", [pos, b.ints([1])])
    cols = b.op("Unsqueeze", [pos, b.ints([0])])
    causal = b.op("LessOrEqual", [cols, rows])
    s = b.op("Where", [causal, s, b.init("min", np.array(np.finfo(np.float32).min, "float32"))])
    o = b.op("MatMul", [b.op("Softmax", [s], axis=-1), v])
    o = b.op("Reshape", [b.op("Transpose", [o], perm=[0, 2, 1, 3]), b.op("Shape", [x])])
    x = b.op("Add", [x, _linear(b, o, hidden, hidden, "h.0.attn.c_proj")])
    m = _linear(b, ln(b, x, hidden, "h.0.ln_2", True), hidden, 4 * hidden, "h.0.mlp.c_fc")
    # GPT-2's NewGELU, written out: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
    c = lambda v, n: b.init(n, np.array(v, "float32"))  # noqa: E731
    cube = b.op("Pow", [m, c(3.0, "three")])
    inner = b.op("Mul", [b.op("Add", [m, b.op("Mul", [cube, c(0.044715, "k")])]), c(np.sqrt(2 / np.pi), "s2pi")])
    g = b.op("Mul", [b.op("Mul", [m, c(0.5, "half")]), b.op("Add", [b.op("Tanh", [inner]), c(1.0, "one")])])
    x = b.op("Add", [x, _linear(b, g, 4 * hidden, hidden, "h.0.mlp.c_proj")])
    logits = b.op("MatMul", [ln(b, x, hidden, "ln_f", True), b.weight("lm_head.weight", (hidden, 40))])
    feeds = {"input_ids": np.random.default_rng(24).integers(0, 40, (batch, seq)).astype("int64")}
    return b.model(logits), feeds


def vgg_tiny(size=8, classes=4):
    """Conv-ReLU x2, MaxPool, AdaptiveAvgPool exported as AveragePool, Flatten, Gemm-ReLU-Dropout-Gemm."""
    b = Builder(25)
    x = b.input("input", [1, 3, size, size])
    y = b.op("Relu", [b.op("Conv", [x, b.weight("features.0.weight", (8, 3, 3, 3)), b.weight("features.0.bias", (8,), 0.1)], pads=[1, 1, 1, 1])])
    y = b.op("Relu", [b.op("Conv", [y, b.weight("features.2.weight", (8, 8, 3, 3)), b.weight("features.2.bias", (8,), 0.1)], pads=[1, 1, 1, 1])])
    y = b.op("MaxPool", [y], kernel_shape=[2, 2], strides=[2, 2])
    y = b.op("AveragePool", [y], kernel_shape=[2, 2], strides=[2, 2])
    y = b.op("Flatten", [y], axis=1)
    n = 8 * (size // 4) ** 2
    y = b.op("Relu", [b.op("Gemm", [y, b.weight("classifier.0.weight", (16, n)), b.weight("classifier.0.bias", (16,), 0.1)], transB=1)])
    y = b.op("Dropout", [y])
    y = b.op("Gemm", [y, b.weight("classifier.3.weight", (classes, 16)), b.weight("classifier.3.bias", (classes,), 0.1)], transB=1)
    return b.model(y), {"input": _img(26, 1, 3, size, size)}


def mobilenet_v3_block(size=8, channels=8):
    """Inverted residual with HardSwish and a HardSigmoid squeeze-excitation (ReLU inside)."""
    b = Builder(27)
    x = b.input("input", [1, channels, size, size])
    hid = 3 * channels
    y = _conv_bn(b, x, channels, hid, 1, 1, "features.4.block.0", act="HardSwish")
    y = _conv_bn(b, y, hid, hid, 5, 1, "features.4.block.1", groups=hid, act="HardSwish")
    s = b.op("GlobalAveragePool", [y])
    s = b.op("Relu", [b.op("Conv", [s, b.weight("se.fc1.weight", (4, hid, 1, 1)), b.weight("se.fc1.bias", (4,), 0.1)])])
    s = b.op("Conv", [s, b.weight("se.fc2.weight", (hid, 4, 1, 1)), b.weight("se.fc2.bias", (hid,), 0.1)])
    y = b.op("Mul", [b.op("HardSigmoid", [s], alpha=1.0 / 6, beta=0.5), y])
    y = _conv_bn(b, y, hid, channels, 1, 1, "features.4.block.3", relu=False)
    y = b.op("Add", [y, x])
    _float_inits(b)
    return b.model(y), {"input": _img(28, 1, channels, size, size)}


MODELS = {
    "resnet_block": resnet_block,
    "inverted_residual": inverted_residual,
    "bert_layer": bert_layer,
    "bert_layer_fused_ln": lambda: bert_layer(fused_ln=True),
    "gpt2_block": gpt2_block,
    "lstm": lstm_model,
    "lstm_bidirectional": lambda: lstm_model(direction="bidirectional"),
    "gru": recurrent_model,
    "gru_linear_before_reset_reverse": lambda: recurrent_model(direction="reverse", linear_before_reset=1),
    "rnn_bidirectional": lambda: recurrent_model("RNN", direction="bidirectional"),
    "rnn_relu": lambda: recurrent_model("RNN", activations=["Relu"]),
    "vgg_tiny": vgg_tiny,
    "mobilenet_v3_block": mobilenet_v3_block,
    "efficientnet_block": efficientnet_block,
    "squeezenet_fire": squeezenet_fire,
    "densenet_block": densenet_block,
    "convnext_block": convnext_block,
    "vit_tiny": vit_tiny,
    "gpt2_range_mask": gpt2_range_mask,
}
