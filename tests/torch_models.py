"""Small torchvision-like models written with torch.nn, for the PyTorch importer's tests.

torchvision is not a dependency (it does not install beside every torch), so each model
here is a few layers of the real architecture with its characteristic operators: ResNet's
basic block, MobileNetV2's inverted residual (depthwise conv, ReLU6, Hardswish),
EfficientNet's squeeze-excitation, a ViT/BERT encoder layer, a GPT-2 block with a causal
mask, an LSTM, a bidirectional GRU and a ConvNeXt block.  Random weights (seeded), small
sizes, eval mode.
"""

from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn import functional as F


class BasicBlock(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int = 1):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        identity = x if self.downsample is None else self.downsample(x)
        return F.relu(out + identity)


class ResNet(nn.Module):
    def __init__(self, classes: int = 10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        self.layer1 = nn.Sequential(BasicBlock(8, 8), BasicBlock(8, 8))
        self.layer2 = nn.Sequential(BasicBlock(8, 16, 2), BasicBlock(16, 16))
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(16, classes)

    def forward(self, x):
        x = self.maxpool(F.relu(self.bn1(self.conv1(x))))
        x = self.layer2(self.layer1(x))
        return self.fc(torch.flatten(self.avgpool(x), 1))


class InvertedResidual(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int, expand: int, act=nn.ReLU6):
        super().__init__()
        hidden = cin * expand
        self.use_res = stride == 1 and cin == cout
        self.conv = nn.Sequential(
            nn.Conv2d(cin, hidden, 1, bias=False), nn.BatchNorm2d(hidden), act(),
            nn.Conv2d(hidden, hidden, 3, stride, 1, groups=hidden, bias=False), nn.BatchNorm2d(hidden), act(),
            nn.Conv2d(hidden, cout, 1, bias=False), nn.BatchNorm2d(cout),
        )

    def forward(self, x):
        return x + self.conv(x) if self.use_res else self.conv(x)


class MobileNetV2(nn.Module):
    def __init__(self, classes: int = 10):
        super().__init__()
        self.features = nn.Sequential(
            nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1, bias=False), nn.BatchNorm2d(8), nn.ReLU6()),
            InvertedResidual(8, 8, 1, 1),
            InvertedResidual(8, 12, 2, 4),
            InvertedResidual(12, 12, 1, 4, act=nn.Hardswish),
        )
        self.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(12, classes))

    def forward(self, x):
        x = F.adaptive_avg_pool2d(self.features(x), (1, 1))
        return self.classifier(torch.flatten(x, 1))


class SqueezeExcitation(nn.Module):
    def __init__(self, channels: int, squeeze: int):
        super().__init__()
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc1 = nn.Conv2d(channels, squeeze, 1)
        self.fc2 = nn.Conv2d(squeeze, channels, 1)

    def forward(self, x):
        scale = torch.sigmoid(self.fc2(F.silu(self.fc1(self.avgpool(x)))))
        return x * scale


class EfficientNet(nn.Module):
    def __init__(self, classes: int = 10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, 2, 1, bias=False), nn.BatchNorm2d(16), nn.SiLU())
        self.block = nn.Sequential(
            nn.Conv2d(16, 16, 3, 1, 1, groups=16, bias=False), nn.BatchNorm2d(16), nn.SiLU(),
            SqueezeExcitation(16, 4),
            nn.Conv2d(16, 24, 1, bias=False), nn.BatchNorm2d(24),
        )
        self.head = nn.Linear(24, classes)

    def forward(self, x):
        x = self.block(self.stem(x))
        return self.head(x.mean(dim=(2, 3)))


class SelfAttention(nn.Module):
    def __init__(self, dim: int, heads: int):
        super().__init__()
        self.heads, self.head_dim = heads, dim // heads
        self.query, self.key, self.value = nn.Linear(dim, dim), nn.Linear(dim, dim), nn.Linear(dim, dim)
        self.out = nn.Linear(dim, dim)

    def split(self, x):
        b, t, _ = x.shape
        return x.view(b, t, self.heads, self.head_dim).permute(0, 2, 1, 3)

    def forward(self, x, mask):
        q, k, v = self.split(self.query(x)), self.split(self.key(x)), self.split(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim) + mask
        ctx = torch.matmul(F.softmax(scores, dim=-1), v)
        b, h, t, d = ctx.shape
        return self.out(ctx.permute(0, 2, 1, 3).reshape(b, t, h * d))


class BertLayer(nn.Module):
    """Embeddings (word + position + token type) and one post-norm encoder layer."""

    def __init__(self, vocab: int = 50, dim: int = 32, heads: int = 4, max_len: int = 16):
        super().__init__()
        self.word = nn.Embedding(vocab, dim)
        self.position = nn.Embedding(max_len, dim)
        self.token_type = nn.Embedding(2, dim)
        self.emb_norm = nn.LayerNorm(dim, eps=1e-12)
        self.attention = SelfAttention(dim, heads)
        self.attn_norm = nn.LayerNorm(dim, eps=1e-12)
        self.intermediate = nn.Linear(dim, 4 * dim)
        self.output = nn.Linear(4 * dim, dim)
        self.out_norm = nn.LayerNorm(dim, eps=1e-12)

    def forward(self, ids, attention_mask):
        t = ids.shape[1]
        pos = torch.arange(t).unsqueeze(0)
        x = self.word(ids) + self.position(pos) + self.token_type(torch.zeros_like(ids))
        x = self.emb_norm(x)
        mask = (1.0 - attention_mask[:, None, None, :].to(torch.float32)) * -10000.0
        x = self.attn_norm(x + self.attention(x, mask))
        return self.out_norm(x + self.output(F.gelu(self.intermediate(x))))


class ViT(nn.Module):
    """Patch embedding conv, class token, position embedding, a pre-norm encoder, a head."""

    def __init__(self, image: int = 16, patch: int = 4, dim: int = 32, heads: int = 4, classes: int = 10):
        super().__init__()
        self.conv_proj = nn.Conv2d(3, dim, patch, patch)
        n = (image // patch) ** 2
        self.class_token = nn.Parameter(torch.randn(1, 1, dim))
        self.pos_embedding = nn.Parameter(torch.randn(1, n + 1, dim) * 0.02)
        self.ln_1 = nn.LayerNorm(dim, eps=1e-6)
        self.self_attention = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.ln_2 = nn.LayerNorm(dim, eps=1e-6)
        self.mlp = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))
        self.ln = nn.LayerNorm(dim, eps=1e-6)
        self.head = nn.Linear(dim, classes)

    def forward(self, x):
        x = self.conv_proj(x).flatten(2).transpose(1, 2)
        x = torch.cat([self.class_token.expand(x.shape[0], -1, -1), x], dim=1) + self.pos_embedding
        y = self.ln_1(x)
        x = x + self.self_attention(y, y, y, need_weights=False)[0]
        x = x + self.mlp(self.ln_2(x))
        return self.head(self.ln(x)[:, 0])


class GPT2Block(nn.Module):
    """Token + position embeddings, a causal pre-norm block (tril mask, masked_fill), LM head."""

    def __init__(self, vocab: int = 64, dim: int = 32, heads: int = 4, ctx: int = 16):
        super().__init__()
        self.heads = heads
        self.wte, self.wpe = nn.Embedding(vocab, dim), nn.Embedding(ctx, dim)
        self.ln_1 = nn.LayerNorm(dim)
        self.c_attn = nn.Linear(dim, 3 * dim)
        self.c_proj = nn.Linear(dim, dim)
        self.ln_2 = nn.LayerNorm(dim)
        self.c_fc, self.mlp_proj = nn.Linear(dim, 4 * dim), nn.Linear(4 * dim, dim)
        self.ln_f = nn.LayerNorm(dim)
        self.register_buffer("bias", torch.tril(torch.ones(ctx, ctx, dtype=torch.bool)).view(1, 1, ctx, ctx))

    def attn(self, x):
        b, t, c = x.shape
        q, k, v = self.c_attn(x).split(c, dim=2)
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))
        w = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        w = w.masked_fill(~self.bias[:, :, :t, :t], float("-inf"))
        causal = torch.tril(torch.ones(t, t)) > 0
        w = torch.where(causal, w, torch.full_like(w, -1e9))
        y = torch.softmax(w, dim=-1) @ v
        return self.c_proj(y.transpose(1, 2).contiguous().view(b, t, c))

    def forward(self, ids):
        t = ids.shape[1]
        x = self.wte(ids) + self.wpe(torch.arange(0, t, dtype=torch.long))
        x = x + self.attn(self.ln_1(x))
        x = x + self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))
        return self.ln_f(x) @ self.wte.weight.t()


class LSTMTagger(nn.Module):
    def __init__(self, features: int = 6, hidden: int = 8, classes: int = 5):
        super().__init__()
        self.lstm = nn.LSTM(features, hidden, num_layers=2, batch_first=True)
        self.fc = nn.Linear(hidden, classes)

    def forward(self, x):
        out, (h, c) = self.lstm(x)
        return self.fc(out), h, c


class GRUEncoder(nn.Module):
    """A bidirectional GRU over a sequence, its last step classified."""

    def __init__(self, features: int = 6, hidden: int = 8, classes: int = 5):
        super().__init__()
        self.gru = nn.GRU(features, hidden, batch_first=True, bidirectional=True)
        self.fc = nn.Linear(2 * hidden, classes)

    def forward(self, x):
        out, h = self.gru(x)
        return self.fc(out[:, -1]), h


class LayerNorm2d(nn.LayerNorm):
    """ConvNeXt's LayerNorm over channels: permute to channels-last and back."""

    def forward(self, x):
        return super().forward(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)


class CNBlock(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dwconv = nn.Conv2d(dim, dim, 7, padding=3, groups=dim)
        self.norm = nn.LayerNorm(dim, eps=1e-6)
        self.pwconv1, self.pwconv2 = nn.Linear(dim, 4 * dim), nn.Linear(4 * dim, dim)
        self.layer_scale = nn.Parameter(torch.full((dim, 1, 1), 0.5))

    def forward(self, x):
        y = self.norm(self.dwconv(x).permute(0, 2, 3, 1))
        y = self.pwconv2(F.gelu(self.pwconv1(y))).permute(0, 3, 1, 2)
        return x + self.layer_scale * y


class ConvNeXt(nn.Module):
    def __init__(self, classes: int = 10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 4, 4), LayerNorm2d(16, eps=1e-6))
        self.stage = nn.Sequential(CNBlock(16), CNBlock(16))
        self.head = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(1), nn.LayerNorm(16), nn.Linear(16, classes))

    def forward(self, x):
        return self.head(self.stage(self.stem(x)))


class Fire(nn.Module):
    """SqueezeNet's fire module: squeeze 1x1, then 1x1 and 3x3 expands concatenated."""

    def __init__(self, cin: int, squeeze: int, expand: int):
        super().__init__()
        self.squeeze = nn.Sequential(nn.Conv2d(cin, squeeze, 1), nn.ReLU(inplace=True))
        self.expand1x1 = nn.Sequential(nn.Conv2d(squeeze, expand, 1), nn.ReLU(inplace=True))
        self.expand3x3 = nn.Sequential(nn.Conv2d(squeeze, expand, 3, padding=1), nn.ReLU(inplace=True))

    def forward(self, x):
        x = self.squeeze(x)
        return torch.cat([self.expand1x1(x), self.expand3x3(x)], 1)


class SqueezeNet(nn.Module):
    def __init__(self, classes: int = 10):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 16, 3, stride=2), nn.ReLU(inplace=True),
            nn.MaxPool2d(3, 2, ceil_mode=True), Fire(16, 4, 8), Fire(16, 4, 8),
        )
        self.classifier = nn.Sequential(
            nn.Dropout(0.5), nn.Conv2d(16, classes, 1), nn.ReLU(inplace=True), nn.AdaptiveAvgPool2d(1)
        )

    def forward(self, x):
        return torch.flatten(self.classifier(self.features(x)), 1)


class DenseLayer(nn.Module):
    def __init__(self, cin: int, growth: int):
        super().__init__()
        self.norm1, self.conv1 = nn.BatchNorm2d(cin), nn.Conv2d(cin, 2 * growth, 1, bias=False)
        self.norm2, self.conv2 = nn.BatchNorm2d(2 * growth), nn.Conv2d(2 * growth, growth, 3, padding=1, bias=False)

    def forward(self, x):
        y = self.conv1(F.relu(self.norm1(x)))
        return torch.cat([x, self.conv2(F.relu(self.norm2(y)))], 1)


class DenseNet(nn.Module):
    """torchvision's DenseNet shape: each layer sees every earlier layer's output."""

    def __init__(self, classes: int = 10):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1, bias=False), DenseLayer(8, 4), DenseLayer(12, 4),
            nn.BatchNorm2d(16), nn.ReLU(), nn.Conv2d(16, 8, 1, bias=False), nn.AvgPool2d(2, 2),
            DenseLayer(8, 4), nn.BatchNorm2d(12),
        )
        self.classifier = nn.Linear(12, classes)

    def forward(self, x):
        x = F.adaptive_avg_pool2d(F.relu(self.features(x)), (1, 1))
        return self.classifier(torch.flatten(x, 1))


class VGG(nn.Module):
    def __init__(self, classes: int = 10):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(True), nn.MaxPool2d(2, 2),
            nn.Conv2d(8, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(True), nn.MaxPool2d(2, 2),
        )
        self.avgpool = nn.AdaptiveAvgPool2d((2, 2))
        self.classifier = nn.Sequential(
            nn.Linear(64, 32), nn.ReLU(True), nn.Dropout(), nn.Linear(32, classes)
        )

    def forward(self, x):
        return self.classifier(torch.flatten(self.avgpool(self.features(x)), 1))


class MobileNetV3(nn.Module):
    """Hardswish stem, an inverted residual with a hard-sigmoid squeeze-excitation."""

    def __init__(self, classes: int = 10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1, bias=False), nn.BatchNorm2d(8), nn.Hardswish())
        self.expand = nn.Sequential(nn.Conv2d(8, 16, 1, bias=False), nn.BatchNorm2d(16), nn.Hardswish())
        self.depthwise = nn.Sequential(nn.Conv2d(16, 16, 3, 1, 1, groups=16, bias=False), nn.BatchNorm2d(16), nn.Hardswish())
        self.se_reduce, self.se_expand = nn.Conv2d(16, 4, 1), nn.Conv2d(4, 16, 1)
        self.project = nn.Sequential(nn.Conv2d(16, 8, 1, bias=False), nn.BatchNorm2d(8))
        self.classifier = nn.Sequential(nn.Linear(8, 16), nn.Hardswish(), nn.Linear(16, classes))

    def forward(self, x):
        x = self.stem(x)
        y = self.depthwise(self.expand(x))
        scale = F.hardsigmoid(self.se_expand(F.relu(self.se_reduce(F.adaptive_avg_pool2d(y, 1)))))
        x = x + self.project(y * scale)
        return self.classifier(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


def _randomize(model: nn.Module) -> nn.Module:
    """Non-trivial batch-norm statistics, so folding them wrongly shows in the output."""
    g = torch.Generator().manual_seed(1)
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.copy_(torch.randn(m.num_features, generator=g) * 0.1)
            m.running_var.copy_(torch.rand(m.num_features, generator=g) + 0.5)
            m.weight.data.copy_(torch.rand(m.num_features, generator=g) + 0.5)
            m.bias.data.copy_(torch.randn(m.num_features, generator=g) * 0.1)
    return model.eval()


def _model(cls, *inputs):
    torch.manual_seed(0)
    return _randomize(cls()), inputs


def resnet():
    return _model(ResNet, torch.randn(2, 3, 32, 32, generator=torch.Generator().manual_seed(2)))


def mobilenet_v2():
    return _model(MobileNetV2, torch.randn(2, 3, 32, 32, generator=torch.Generator().manual_seed(2)))


def efficientnet():
    return _model(EfficientNet, torch.randn(2, 3, 16, 16, generator=torch.Generator().manual_seed(2)))


def bert():
    g = torch.Generator().manual_seed(2)
    ids = torch.randint(0, 50, (2, 8), generator=g)
    mask = torch.ones(2, 8, dtype=torch.long)
    mask[1, 6:] = 0
    return _model(BertLayer, ids, mask)


def vit():
    return _model(ViT, torch.randn(2, 3, 16, 16, generator=torch.Generator().manual_seed(2)))


def gpt2():
    return _model(GPT2Block, torch.randint(0, 64, (2, 8), generator=torch.Generator().manual_seed(2)))


def lstm():
    return _model(LSTMTagger, torch.randn(2, 5, 6, generator=torch.Generator().manual_seed(2)))


def gru():
    return _model(GRUEncoder, torch.randn(2, 5, 6, generator=torch.Generator().manual_seed(2)))


def convnext():
    return _model(ConvNeXt, torch.randn(2, 3, 32, 32, generator=torch.Generator().manual_seed(2)))


def _image_model(cls):
    return lambda: _model(cls, torch.randn(2, 3, 32, 32, generator=torch.Generator().manual_seed(2)))


MODELS = {
    "resnet": resnet, "mobilenet_v2": mobilenet_v2, "efficientnet": efficientnet, "bert": bert,
    "vit": vit, "gpt2": gpt2, "lstm": lstm, "gru": gru, "convnext": convnext,
    "squeezenet": _image_model(SqueezeNet), "densenet": _image_model(DenseNet),
    "vgg": _image_model(VGG), "mobilenet_v3": _image_model(MobileNetV3),
}
