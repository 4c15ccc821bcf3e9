"""numpy implementations of relay_nb.op.nn_extra against naive loops written here (one
element at a time, from the ops' definitions) and against values worked by hand."""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest

import relay_nb as relay
from relay_nb.errors import EvalError
from relay_nb.op.registry import get_column, make_attrs


@pytest.fixture(autouse=True)
def _no_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


def run(name, *args, **attrs):
    return get_column("impl")[name]([np.asarray(a) for a in args], make_attrs(name, attrs), None)


RNG = np.random.default_rng(7)


def randn(*shape):
    return RNG.standard_normal(shape)


# --- normalizations ---------------------------------------------------------------------------


def test_lrn_against_loops():
    x = randn(2, 7, 3, 2)
    size, bias, alpha, beta = 3, 1.5, 0.3, 0.6
    got = run("nn.lrn", x, size=size, bias=bias, alpha=alpha, beta=beta)
    want = np.empty_like(x)
    for n, c, h, w in itertools.product(*map(range, x.shape)):
        s = sum(x[n, k, h, w] ** 2 for k in range(c - size // 2, c + size // 2 + 1) if 0 <= k < 7)
        want[n, c, h, w] = x[n, c, h, w] / (bias + alpha * s / size) ** beta
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_lrn_even_size_and_other_axis():
    # size 4: the window is [c - 2, c + 1]
    x = randn(5, 2)
    got = run("nn.lrn", x, size=4, axis=0, bias=1.0, alpha=1.0, beta=1.0)
    for c in range(5):
        s = sum(x[k] ** 2 for k in range(c - 2, c + 2) if 0 <= k < 5)
        np.testing.assert_allclose(got[c], x[c] / (1.0 + s / 4), rtol=1e-12)


def test_l2_normalize():
    x = np.array([[3.0, 4.0], [0.0, 0.0]])
    np.testing.assert_allclose(
        run("nn.l2_normalize", x, eps=1e-4, axis=[1]), [[0.6, 0.8], [0.0, 0.0]]
    )
    # eps bounds the squared norm from below: 0.25 -> sqrt(1) = 1
    np.testing.assert_allclose(
        run("nn.l2_normalize", np.array([0.3, 0.4]), eps=1.0, axis=[0]), [0.3, 0.4]
    )
    # no axis (None, as TVM's builder passes it, or empty): the norm of the whole tensor (5)
    for axis in (None, []):
        np.testing.assert_allclose(
            run("nn.l2_normalize", np.array([[3.0], [4.0]]), eps=0.0, axis=axis), [[0.6], [0.8]]
        )


def _norm_ref(values, eps):
    mean = sum(values) / len(values)
    var = sum((v - mean) ** 2 for v in values) / len(values)
    return [(v - mean) / math.sqrt(var + eps) for v in values]


def test_group_norm_against_loops():
    x = randn(2, 6, 3)
    gamma, beta = randn(6), randn(6)
    got = run("nn.group_norm", x, gamma, beta, num_groups=3, epsilon=1e-3)
    for n in range(2):
        for g in range(3):
            chans = [2 * g, 2 * g + 1]
            cells = [(c, i) for c in chans for i in range(3)]
            normed = _norm_ref([x[n, c, i] for c, i in cells], 1e-3)
            for (c, i), v in zip(cells, normed):
                assert got[n, c, i] == pytest.approx(v * gamma[c] + beta[c], rel=1e-10)


def test_instance_norm_channel_last_without_scale():
    x = randn(2, 3, 4)  # (N, W, C) with axis=-1
    beta = randn(4)
    got = run("nn.instance_norm", x, np.ones(4), beta, axis=-1, scale=False, epsilon=1e-5)
    for n in range(2):
        for c in range(4):
            normed = _norm_ref([x[n, w, c] for w in range(3)], 1e-5)
            np.testing.assert_allclose(got[n, :, c], np.array(normed) + beta[c], rtol=1e-10)


def test_fast_softmax_is_the_softmax():
    x = randn(3, 4).astype("float32")
    got = run("nn.fast_softmax", x, axis=0)
    e = np.exp(x.astype(np.float64))
    np.testing.assert_allclose(got, e / e.sum(axis=0), rtol=1e-6)


# --- pixel shuffles ---------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["DCR", "CRD"])
def test_depth_to_space_against_loops(mode):
    b, c = 2, 3
    x = np.arange(1 * c * b * b * 2 * 3).reshape(1, c * b * b, 2, 3)
    got = run("nn.depth_to_space", x, block_size=b, mode=mode)
    assert got.shape == (1, c, 4, 6)
    for ch, h, w in itertools.product(range(c), range(4), range(6)):
        i, j = h % b, w % b
        src = (i * b + j) * c + ch if mode == "DCR" else ch * b * b + i * b + j
        assert got[0, ch, h, w] == x[0, src, h // b, w // b]


def test_space_to_depth_inverts_dcr_and_works_in_nhwc():
    x = randn(2, 3, 4, 6)
    s = run("nn.space_to_depth", x, block_size=2)
    np.testing.assert_array_equal(run("nn.depth_to_space", s, block_size=2), x)
    nhwc = np.transpose(x, (0, 2, 3, 1))
    got = run("nn.space_to_depth", nhwc, block_size=2, layout="NHWC")
    np.testing.assert_array_equal(got, np.transpose(s, (0, 2, 3, 1)))
    # by hand: channel (i*2 + j)*C + c holds pixel (2h + i, 2w + j)
    assert s[1, (1 * 2 + 0) * 3 + 2, 1, 2] == x[1, 2, 3, 4]


# --- padding and dilation ---------------------------------------------------------------------


def test_mirror_pad_by_hand():
    x = np.array([1, 2, 3])
    assert run("nn.mirror_pad", x, pad_width=[[2, 3]]).tolist() == [2, 1, 1, 2, 3, 3, 2, 1]
    got = run("nn.mirror_pad", x, pad_width=[[2, 2]], mode="REFLECT")
    assert got.tolist() == [3, 2, 1, 2, 3, 2, 1]
    x2 = np.array([[1, 2], [3, 4]])
    got = run("nn.mirror_pad", x2, pad_width=[[1, 0], [0, 1]])
    assert got.tolist() == [[1, 2, 2], [1, 2, 2], [3, 4, 4]]
    with pytest.raises(EvalError, match="too wide"):
        run("nn.mirror_pad", x, pad_width=[[3, 0]], mode="REFLECT")


def test_dilate_by_hand():
    x = np.array([[1, 2], [3, 4]], "int32")
    got = run("nn.dilate", x, strides=[2, 3], dilation_value=9.0)
    assert got.tolist() == [[1, 9, 9, 2], [9, 9, 9, 9], [3, 9, 9, 4]]
    assert got.dtype == np.int32


# --- 3-d upsampling and adaptive pools --------------------------------------------------------


def test_upsampling3d_nearest_copies_blocks():
    x = randn(1, 2, 2, 3, 2)
    got = run("nn.upsampling3d", x, scale_d=2.0, scale_h=2.0, scale_w=3.0,
              coordinate_transformation_mode="asymmetric")  # fmt: skip
    for d, h, w in itertools.product(range(4), range(6), range(6)):
        np.testing.assert_array_equal(got[:, :, d, h, w], x[:, :, d // 2, h // 2, w // 3])


def test_upsampling3d_trilinear_align_corners():
    # a tensor linear in each coordinate is reproduced exactly by trilinear interpolation
    d, h, w = np.meshgrid(np.arange(2), np.arange(3), np.arange(2), indexing="ij")
    x = (1.0 * d + 10.0 * h + 100.0 * w)[None, None]
    got = run("nn.upsampling3d", x, scale_d=1.5, scale_h=2.0, scale_w=2.0, method="trilinear",
              coordinate_transformation_mode="align_corners")  # fmt: skip
    assert got.shape == (1, 1, 3, 6, 4)
    for i, j, k in itertools.product(range(3), range(6), range(4)):
        want = i * 1 / 2 + 10 * j * 2 / 5 + 100 * k * 1 / 3
        assert got[0, 0, i, j, k] == pytest.approx(want, rel=1e-6)


def _adaptive_ref(x, size, fn):
    """Loop over output positions; each window is [floor(i*n/o), ceil((i+1)*n/o))."""
    out = np.empty(x.shape[:2] + tuple(size))
    for idx in itertools.product(*map(range, size)):
        sl = tuple(
            slice(math.floor(i * n / o), math.ceil((i + 1) * n / o))
            for i, n, o in zip(idx, x.shape[2:], size)
        )
        for n, c in itertools.product(range(x.shape[0]), range(x.shape[1])):
            out[(n, c) + idx] = fn(x[(n, c) + sl])
    return out


@pytest.mark.parametrize("kind, fn", [("avg", np.mean), ("max", np.max)])
def test_adaptive_pools_against_loops(kind, fn):
    x1 = randn(2, 3, 7)
    np.testing.assert_allclose(
        run(f"nn.adaptive_{kind}_pool1d", x1, output_size=[3]), _adaptive_ref(x1, (3,), fn)
    )
    x3 = randn(1, 2, 5, 4, 3)
    np.testing.assert_allclose(
        run(f"nn.adaptive_{kind}_pool3d", x3, output_size=[2, 3, 2]),
        _adaptive_ref(x3, (2, 3, 2), fn),
    )
    ndhwc = np.transpose(x3, (0, 2, 3, 4, 1))
    got = run(f"nn.adaptive_{kind}_pool3d", ndhwc, output_size=[2], layout="NDHWC")
    np.testing.assert_allclose(
        got, np.transpose(_adaptive_ref(x3, (2, 2, 2), fn), (0, 2, 3, 4, 1))
    )


# --- transposed convolutions ------------------------------------------------------------------


def conv_transpose_ref(x, w, stride, pad, out_pad, dilation, groups):
    """Scatter definition: x[n, c, p] adds x * w[c, o, k] at output p*s + k*d - pad."""
    nd = x.ndim - 2
    n_, c_ = x.shape[:2]
    og = w.shape[1]
    ks = w.shape[2:]
    cg = c_ // groups
    outs = [
        (x.shape[2 + i] - 1) * stride[i] - 2 * pad[i] + (ks[i] - 1) * dilation[i] + 1 + out_pad[i]
        for i in range(nd)
    ]
    out = np.zeros((n_, og * groups, *outs))
    for n, c in itertools.product(range(n_), range(c_)):
        g = c // cg
        for p in itertools.product(*map(range, x.shape[2:])):
            for k in itertools.product(*map(range, ks)):
                q = [p[i] * stride[i] + k[i] * dilation[i] - pad[i] for i in range(nd)]
                if all(0 <= q[i] < outs[i] for i in range(nd)):
                    for o in range(og):
                        out[(n, g * og + o, *q)] += x[(n, c, *p)] * w[(c, o, *k)]
    return out


def test_conv1d_transpose_against_loops():
    x, w = randn(2, 4, 5), randn(4, 3, 3)
    got = run("nn.conv1d_transpose", x, w, strides=[2], padding=[1, 1], output_padding=[1],
              dilation=[2], groups=2)  # fmt: skip
    want = conv_transpose_ref(x, w, [2], [1], [1], [2], 2)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def test_conv3d_transpose_against_loops():
    x, w = randn(1, 2, 2, 3, 2), randn(2, 3, 2, 2, 3)
    got = run("nn.conv3d_transpose", x, w, strides=[2, 1, 2], padding=[0, 1, 1])
    want = conv_transpose_ref(x, w, [2, 1, 2], [0, 1, 1], [0, 0, 0], [1, 1, 1], 1)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


# --- batch <-> space --------------------------------------------------------------------------


def test_space_to_batch_nd_against_tensorflow_definition():
    # TF: out[(i*B1 + j)*N + n, h, w, c] = padded[n, h*B0 + i, w*B1 + j, c]
    x = randn(2, 3, 5, 2)
    block, pads = [2, 3], [[0, 1], [1, 0]]
    got = run("nn.space_to_batch_nd", x, block_shape=block, paddings=pads, pad_value=-7.0)
    padded = np.full((2, 4, 6, 2), -7.0)
    padded[:, 0:3, 1:6, :] = x
    assert got.shape == (12, 2, 2, 2)
    for i, j, n, h, w in itertools.product(range(2), range(3), range(2), range(2), range(2)):
        np.testing.assert_array_equal(
            got[(i * 3 + j) * 2 + n, h, w], padded[n, h * 2 + i, w * 3 + j]
        )
    back = run("nn.batch_to_space_nd", got, block_shape=block, crops=pads)
    np.testing.assert_array_equal(back, x)


def test_interpreter_runs_a_program_of_new_ops():
    x = relay.var("x", shape=(1, 8, 2, 2))
    y = relay.nn.mirror_pad(relay.nn.depth_to_space(x, 2), [(0, 0), (0, 0), (1, 0), (0, 1)])
    mod = relay.transform.InferType()(relay.IRModule.from_expr(relay.Function([x], y)))
    data = np.arange(32, dtype="float32").reshape(1, 8, 2, 2)
    got = relay.create_executor("interpreter", mod=mod).evaluate()(data)
    want = np.pad(run("nn.depth_to_space", data, block_size=2), [(0, 0), (0, 0), (1, 0), (0, 1)],
                  mode="symmetric")  # fmt: skip
    np.testing.assert_array_equal(got, want)


def test_fifo_buffer_by_hand():
    buf = np.array([[1, 2, 3, 4], [5, 6, 7, 8]], "float32")
    got = run("nn.fifo_buffer", np.array([[9], [10]], "float32"), buf, axis=1)
    assert got.tolist() == [[2, 3, 4, 9], [6, 7, 8, 10]]
    got = run("nn.fifo_buffer", np.array([[0, 0, 0, 1]], "float32"), buf, axis=0)
    assert got.tolist() == [[5, 6, 7, 8], [0, 0, 0, 1]]
