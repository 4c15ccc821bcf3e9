"""Constant conv weights (``relay.build(..., params=...)``) are packed into the GEMM's
panels once, at build time, and the kernel reads those panels on every call.

The packed path must give bitwise the results of the per-call packing (weights passed as
an argument), which the interpreter checks in turn; odd channel counts, several K slabs
and row blocks, groups, strides and padding; and the same bits for every thread count.
"""

from __future__ import annotations

import numpy as np
import pytest

import relay_nb as relay
from relay_nb.backend.llvm.cache import KernelCache
from relay_nb.backend.llvm.kernels.prepack import PanelsA

RNG = np.random.default_rng(7)

CASES = [
    ((1, 5, 9, 11), (13, 5, 3, 3), dict(padding=(1, 1))),  # 13 rows: a ragged panel
    ((1, 64, 12, 12), (20, 64, 3, 3), dict(padding=(1, 1))),  # K = 576: three K slabs
    ((2, 40, 9, 9), (130, 20, 1, 1), dict(groups=2, strides=(2, 2))),  # 65 rows a group, 2 images
    ((1, 300, 7, 7), (130, 300, 1, 1), {}),  # 130 rows: two row blocks, two K slabs
    ((1, 8, 10, 10), (8, 1, 3, 3), dict(groups=8, padding=(1, 2, 0, 1))),  # depthwise
    ((2, 6, 8, 9), (7, 6, 2, 3), dict(strides=(2, 1), dilation=(2, 1), padding=(0, 1, 1, 0))),
]


def _conv_module(x_shape, w_shape, attrs):
    x = relay.var("x", shape=x_shape)
    w = relay.var("w", shape=w_shape)
    b = relay.var("b", shape=(w_shape[0],))
    y = relay.nn.relu(relay.nn.bias_add(relay.nn.conv2d(x, w, **attrs), b))
    return relay.IRModule.from_expr(relay.Function([x, w, b], y))


def _conv_kernel(lib):
    (k,) = [k for k in lib.kernels if "nn.conv2d" in k.ops]
    return k


@pytest.mark.parametrize("x_shape,w_shape,attrs", CASES)
def test_constant_weights_are_packed_once_with_the_same_bits(x_shape, w_shape, attrs):
    mod = _conv_module(x_shape, w_shape, attrs)
    x = RNG.standard_normal(x_shape).astype("float32")
    w = RNG.standard_normal(w_shape).astype("float32")
    b = RNG.standard_normal(w_shape[0]).astype("float32")
    per_call = relay.build(mod, threads=1)  # the weights an argument: packed on every call
    packed = relay.build(mod, params={"w": w}, threads=1)
    got = packed(x, b)
    assert got.tobytes() == per_call(x, w, b).tobytes()
    want = relay.create_executor("interpreter", mod=mod).evaluate()(x, w, b)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    assert packed(x, b).tobytes() == got.tobytes()  # the panels are not consumed by a call

    k = _conv_kernel(packed)
    if w_shape[1] == 1 and attrs.get("groups", 1) == x_shape[1]:
        # a depthwise conv has its own kernel, which reads the weights as given: nothing to pack
        assert "dwr.head" in k.ir and "relay_nb_macro_float32" not in k.ir
        return
    # a 1 x 1 conv of stride 1 is a plain GEMM (B the image as a matrix, no im2col)
    one_to_one = w_shape[2:] == (1, 1) and attrs.get("strides", (1, 1)) == (1, 1) and not attrs.get("padding")
    block = "relay_nb_gemm_block_float32" if one_to_one else "relay_nb_conv_block_float32"
    assert "relay_nb_macro_float32" in k.ir and block not in k.ir
    assert block in _conv_kernel(per_call).ir
    assert ("relay_nb_im2col_float32" in k.ir) != one_to_one
    groups = attrs.get("groups", 1)
    m, kk = w_shape[0] // groups, w_shape[1] * w_shape[2] * w_shape[3]
    (panels,) = [c for c in k._constants if c.size != b.size]
    assert panels.size == PanelsA(groups, m, kk, 1, 6).size  # M rounded up to whole panels


def test_panels_repeat_the_last_row_like_the_runtime_packer():
    a = np.arange(2 * 7 * 5, dtype="float32").reshape(2, 7, 5)
    p = PanelsA(2, 7, 5, 3, 6)(a).reshape(2, -1)
    # group 1, slab pc=3 (kc=2), panel 1 (rows 6..11 -> row 6 repeated), k=1, r=0..5
    start = 3 * p.shape[1] // 5 + 6 * 2  # pc * Mp + ic * kc
    np.testing.assert_array_equal(p[1, start + 6 : start + 12], np.full(6, a[1, 6, 4]))
    np.testing.assert_array_equal(p[0, 0:6], a[0, :6, 0])  # slab 0, panel 0, k = 0


@pytest.mark.parametrize("batch,m,k,kc,mr", [(1, 7, 5, 3, 6), (2, 12, 9, 4, 6), (3, 5, 11, 11, 8), (1, 1, 4, 2, 4), (2, 17, 10, 16, 8)])
def test_panels_follow_the_documented_layout(batch, m, k, kc, mr):
    """packed[g][slab pc][panel p][k < kc][r < MR] = A[g][p*MR + r][pc + k], rows >= M
    repeating M - 1, element by element (the packer writes each panel in one strided copy)."""
    pack = PanelsA(batch, m, k, kc, mr)
    a = RNG.standard_normal((batch * m, k)).astype("float32")
    got = pack(a).reshape(batch, -1)
    mats = a.reshape(batch, m, k)
    for g in range(batch):
        want = []
        for pc in range(0, k, kc):
            for p in range(pack.mp // mr):
                for kk in range(min(kc, k - pc)):
                    want += [mats[g, min(p * mr + r, m - 1), pc + kk] for r in range(mr)]
        assert got[g].tobytes() == np.array(want, "float32").tobytes()


@pytest.mark.parametrize(
    "x_shape,w_shape,padding",
    [((1, 256, 14, 14), (514, 256, 1, 1), 0), ((1, 32, 30, 30), (24, 32, 3, 3), 1), ((4, 16, 20, 20), (20, 16, 3, 3), 1)],
    ids=["rows", "columns", "batch"],
)
def test_packed_weights_give_the_same_bits_for_every_thread_count(x_shape, w_shape, padding):
    mod = _conv_module(x_shape, w_shape, dict(padding=(padding, padding)))
    w = RNG.standard_normal(w_shape).astype("float32")
    x = RNG.standard_normal(x_shape).astype("float32")
    b = RNG.standard_normal(w_shape[0]).astype("float32")
    libs = {t: relay.build(mod, params={"w": w}, threads=t) for t in (1, 2, 3)}
    assert "relay_nb_macro_float32" in _conv_kernel(libs[1]).ir
    assert _conv_kernel(libs[2]).chunks(2) > 1  # really split
    want = libs[1](x, b).tobytes()
    assert libs[2](x, b).tobytes() == want and libs[3](x, b).tobytes() == want


def test_convolutions_differing_only_in_weights_share_code_but_not_panels():
    x = relay.var("x", shape=(1, 16, 8, 8))
    w1, w2 = relay.var("w1", shape=(16, 16, 3, 3)), relay.var("w2", shape=(16, 16, 3, 3))
    y = relay.nn.relu(relay.nn.conv2d(relay.nn.relu(relay.nn.conv2d(x, w1, padding=(1, 1))), w2, padding=(1, 1)))
    mod = relay.IRModule.from_expr(relay.Function([x, w1, w2], y))
    args = [RNG.standard_normal(s).astype("float32") for s in [(1, 16, 8, 8), (16, 16, 3, 3), (16, 16, 3, 3)]]
    cache = KernelCache()
    lib = relay.build(mod, params={"w1": args[1], "w2": args[2]}, cache=cache)
    convs = [k for k in lib.kernels if "nn.conv2d" in k.ops]
    assert len(convs) == 2 and not np.array_equal(convs[0]._constants[0], convs[1]._constants[0])
    assert cache.stats()["rebinds"] == 1  # the second conv: the first's code, its own panels
    want = relay.create_executor("interpreter", mod=mod).evaluate()(*args)
    np.testing.assert_allclose(lib(args[0]), want, rtol=1e-4, atol=1e-4)
    assert lib(args[0]).tobytes() == relay.build(mod, cache=cache)(*args).tobytes()


def test_weights_equal_but_for_their_last_element_are_other_weights():
    # the cache compares a constant's first bytes before the whole (a quick reject of
    # different weights): a weight differing only past that prefix still gets its own panels
    mod = _conv_module((1, 16, 8, 8), (32, 16, 3, 3), dict(padding=(1, 1)))  # 18 KiB of weights
    w = RNG.standard_normal((32, 16, 3, 3)).astype("float32")
    w2 = w.copy()
    w2[-1, -1, -1, -1] += 1.0
    x = RNG.standard_normal((1, 16, 8, 8)).astype("float32")
    b = RNG.standard_normal(32).astype("float32")
    cache = KernelCache()
    lib = relay.build(mod, params={"w": w}, cache=cache)
    lib2 = relay.build(mod, params={"w": w2}, cache=cache)
    assert _conv_kernel(lib2) is not _conv_kernel(lib)
    assert lib2(x, b).tobytes() == relay.build(mod, cache=KernelCache())(x, w2, b).tobytes()
    assert lib2(x, b).tobytes() != lib(x, b).tobytes()
    assert _conv_kernel(relay.build(mod, params={"w": w.copy()}, cache=cache)) is _conv_kernel(lib)


def test_packed_weights_neither_count_against_the_cache_nor_outlive_the_model():
    """A model's packed weights belong to the built model: a cache bounded below their size
    keeps the compiled code (a rebuild compiles nothing), and once the model is gone its
    panels are freed, while a rebuild binds and packs again without compiling."""
    import gc
    import weakref

    mod = _conv_module((1, 64, 16, 16), (256, 64, 3, 3), dict(padding=(1, 1)))  # 576 KiB of weights
    w = RNG.standard_normal((256, 64, 3, 3)).astype("float32")
    b = RNG.standard_normal(256).astype("float32")
    x = RNG.standard_normal((1, 64, 16, 16)).astype("float32")
    cache = KernelCache(max_bytes=256 * 1024)
    lib = relay.build(mod, params={"w": w}, cache=cache, threads=1)
    want = lib(x, b)
    k = _conv_kernel(lib)
    assert sum(c.nbytes for c in k._constants) > cache.max_bytes  # the panels alone exceed it
    # the report counts the weights as given (the module holds them) and their packed copy
    packed_bytes = sum(c.nbytes for c in k._constants if c.size != b.size)
    assert lib.report().memory.weights == w.nbytes + packed_bytes  # (the bias is an argument)
    again = relay.build(mod, params={"w": w}, cache=cache, threads=1)
    assert _conv_kernel(again) is k  # the live model's kernel, panels and all
    st = cache.stats()
    assert st["compiles"] == 1 and st["evictions"] == 0 and st["bytes"] < cache.max_bytes, st
    panels = weakref.ref(k._constants[[c.size for c in k._constants].index(max(c.size for c in k._constants))])
    del lib, again, k
    gc.collect()
    assert panels() is None  # the model is gone, and its packed weights with it
    third = relay.build(mod, params={"w": w}, cache=cache, threads=1)
    assert third(x, b).tobytes() == want.tobytes()
    assert cache.stats()["compiles"] == 1  # bound and packed again, not compiled
