"""Anchor epilogues with broadcast operands: run as rows with the operands' coordinates
derived once per row (no division per element, so LLVM vectorizes them), and right on
runs that start or end inside a row (a GEMM split by columns across threads)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import relay_nb as relay

RNG = np.random.default_rng(0)


def _rand(*shape):
    return RNG.standard_normal(shape).astype("float32")


def _check(text: str, *args):
    mod = relay.parse(text)
    want = relay.create_executor("debug", mod=mod).evaluate()(*args)
    libs = [relay.build(mod, threads=t) for t in (1, 2)]
    for lib in libs:
        np.testing.assert_allclose(lib(*args), want, rtol=1e-4, atol=1e-4)
    assert libs[0](*args).tobytes() == libs[1](*args).tobytes()
    return libs[0]


def _epilogue_body(kernel) -> str:
    """The unoptimized IR of the innermost epilogue loop's body."""
    match = re.search(r'^"?ep\.body[^\n]*\n(.*?)\n\s*br label %"ep\.head', kernel.ir, re.S | re.M)
    assert match, "no epilogue loop"
    return match.group(1)


CONV_SCALE_SHIFT = """
def @main(%x: Tensor[(1, 24, {h}, {w}), float32], %w: Tensor[({o}, {cg}, 3, 3), float32],
          %a: Tensor[({o}, 1, 1), float32], %b: Tensor[({o}, 1, 1), float32]) {{
  %0 = add(multiply(nn.conv2d(%x, %w, padding=[1, 1, 1, 1], groups={g}), %a), %b);
  multiply(%0, sigmoid(%0))
}}
"""


@pytest.mark.parametrize("h, w", [(29, 31), (14, 14), (7, 7)])
@pytest.mark.parametrize("o, cg, g", [(24, 1, 24), (40, 24, 1)], ids=["depthwise", "gemm"])
def test_a_conv_scale_shift_epilogue_reads_the_channel_once_per_row(o, cg, g, h, w):
    args = _rand(1, 24, h, w), _rand(o, cg, 3, 3), _rand(o, 1, 1), _rand(o, 1, 1)
    lib = _check(CONV_SCALE_SHIFT.format(o=o, cg=cg, g=g, h=h, w=w), *args)
    (kernel,) = [k for k in lib.kernels if k.native]
    body = _epilogue_body(kernel)
    assert "udiv" not in body and "urem" not in body


@pytest.mark.parametrize("o, cg, g, k", [(24, 1, 24, 3), (40, 24, 1, 3), (40, 24, 1, 1)], ids=["depthwise", "gemm", "pointwise"])
def test_a_conv_with_constant_weights_keeps_the_row_epilogue_on_narrow_images(o, cg, g, k):
    # A model's conv: the weight a constant inside the fused function (params bound), a
    # 14 x 14 image (MobileNet's).  The weight varies along all four axes of the anchor's
    # input, not the epilogue's: it once made the epilogue one flat loop, dividing per
    # element (10x the conv's own time on a 576-channel depthwise layer).
    text = CONV_SCALE_SHIFT.format(o=o, cg=cg, g=g, h=14, w=14).replace("3, 3), float32]", f"{k}, {k}), float32]")
    text = text.replace("padding=[1, 1, 1, 1]", f"padding=[{k // 2}, {k // 2}, {k // 2}, {k // 2}]")
    mod = relay.parse(text)
    x, weight, a, b = _rand(1, 24, 14, 14), _rand(o, cg, k, k), _rand(o, 1, 1), _rand(o, 1, 1)
    lib = relay.build(mod, params={"w": weight, "a": a, "b": b})
    want = relay.create_executor("debug", mod=mod).evaluate()(x, weight, a, b)
    np.testing.assert_allclose(lib(x), want, rtol=1e-4, atol=1e-4)
    (kernel,) = [kk for kk in lib.kernels if kk.native]
    assert "Constant" in kernel.source  # the weight is bound inside the kernel
    body = _epilogue_body(kernel)
    assert "udiv" not in body and "urem" not in body


def test_a_dense_bias_epilogue_on_runs_inside_rows():
    # rows of 1000 split into column chunks across two threads: runs start mid-row
    text = """
    def @main(%x: Tensor[(37, 300), float32], %w: Tensor[(1000, 300), float32], %b: Tensor[(1000), float32]) {
      nn.relu(add(nn.dense(%x, %w), %b))
    }"""
    lib = _check(text, _rand(37, 300), _rand(1000, 300), _rand(1000))
    assert "udiv" not in _epilogue_body([k for k in lib.kernels if k.native][0])


@pytest.mark.parametrize(
    "shape",
    [(24, 1, 31), (1, 29, 1), (24, 29, 1), (1, 24, 1, 1)],
    ids=["channel-and-width", "rows", "channel-and-row", "per-channel-4d"],
)
def test_epilogue_operands_broadcast_along_any_axes(shape):
    text = f"""
    def @main(%x: Tensor[(2, 24, 29, 31), float32], %w: Tensor[(24, 1, 3, 3), float32],
              %a: Tensor[{shape}, float32]) {{
      clip(subtract(nn.conv2d(%x, %w, strides=[1, 1], padding=[1, 1, 1, 1], groups=24), %a), a_min=-1f, a_max=2f)
    }}"""
    _check(text, _rand(2, 24, 29, 31), _rand(24, 1, 3, 3), _rand(*shape))


def test_a_squeeze_excite_sized_epilogue_stays_one_flat_loop():
    text = """
    def @main(%x: Tensor[(1, 96, 1, 1), float32], %w: Tensor[(24, 96, 1, 1), float32], %b: Tensor[(24, 1, 1), float32]) {
      sigmoid(add(nn.conv2d(%x, %w), %b))
    }"""
    _check(text, _rand(1, 96, 1, 1), _rand(24, 96, 1, 1), _rand(24, 1, 1))


@pytest.mark.parametrize("n, groups", [(1, 1), (2, 1), (1, 2)])
def test_a_pointwise_conv_of_a_one_pixel_image_is_a_matrix_vector_product(n, groups):
    # squeeze-excitation: 1152 channels squeezed to 48 (more rows than the dot kernel's
    # usual limit), bias and sigmoid fused
    text = f"""
    def @main(%x: Tensor[({n}, 1152, 1, 1), float32], %w: Tensor[(48, {1152 // groups}, 1, 1), float32],
              %b: Tensor[(48, 1, 1), float32]) {{
      sigmoid(add(nn.conv2d(%x, %w, groups={groups}), %b))
    }}"""
    lib = _check(text, _rand(n, 1152, 1, 1), _rand(48, 1152 // groups, 1, 1), _rand(48, 1, 1))
    (kernel,) = [k for k in lib.kernels if k.native]
    assert "im2col" not in kernel.ir and "dot" in kernel.ir
