"""Property tests: the JIT's index rules for depth_to_space, space_to_depth, mirror_pad,
dilate, space_to_batch_nd and batch_to_space_nd agree exactly with the interpreter and fuse
with their consumers; the other new nn ops run in the interpreter inside built programs and
report() says so."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jit_testing import check, random_array, tensor

import relay_nb as relay

PROPS = settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _rng(data) -> np.random.Generator:
    return np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@PROPS
@given(data=st.data())
def test_pixel_shuffles(layout, data):
    bs = data.draw(st.integers(1, 3))
    n, c, h, w = (data.draw(st.integers(1, 3)) for _ in range(4))
    dims = {"N": n, "C": c * bs * bs, "H": h, "W": w}
    shape = tuple(dims[a] for a in layout)
    mode = data.draw(st.sampled_from(["DCR", "CRD"]))
    x = random_array(_rng(data), shape, "float32")
    check(
        f'def @main(%x: {tensor(shape, "float32")}) {{ %0 = nn.depth_to_space(%x, block_size={bs}, '
        f'layout="{layout}", mode="{mode}"); (%0, nn.space_to_depth(%0, block_size={bs}, '
        f'layout="{layout}")) }}',
        x,
    )


@pytest.mark.parametrize("mode", ["SYMMETRIC", "REFLECT"])
@PROPS
@given(data=st.data())
def test_mirror_pad(mode, data):
    rank = data.draw(st.integers(1, 3))
    shape = tuple(data.draw(st.integers(2, 4)) for _ in range(rank))
    limit = 1 if mode == "REFLECT" else 0
    widths = [[data.draw(st.integers(0, d - limit)) for _ in range(2)] for d in shape]
    x = random_array(_rng(data), shape, "int32")
    pw = "[" + ", ".join(f"[{a}, {b}]" for a, b in widths) + "]"
    check(f'def @main(%x: {tensor(shape, "int32")}) {{ nn.mirror_pad(%x, mode="{mode}", pad_width={pw}) }}', x)


@PROPS
@given(data=st.data())
def test_dilate(data):
    rank = data.draw(st.integers(1, 3))
    shape = tuple(data.draw(st.integers(1, 4)) for _ in range(rank))
    strides = [data.draw(st.integers(1, 3)) for _ in range(rank)]
    dtype = data.draw(st.sampled_from(["float32", "int8"]))
    x = random_array(_rng(data), shape, dtype)
    check(
        f'def @main(%x: {tensor(shape, dtype)}) {{ nn.dilate(%x, strides={strides}, dilation_value=-3f) }}',
        x,
    )


def test_shuffle_fuses_with_an_elementwise_tail():
    x = np.arange(32, dtype="float32").reshape(1, 8, 2, 2)
    ex = check('def @main(%x: Tensor[(1, 8, 2, 2), float32]) { exp(nn.depth_to_space(%x, block_size=2)) }', x, rtol=1e-6)
    assert len(ex.kernels) == 1 and ex.kernels[0].ops == ["nn.depth_to_space", "exp"]


def test_other_new_ops_run_in_the_interpreter_inside_a_built_program():
    x = relay.var("x", shape=(1, 8, 4, 4))
    gamma = relay.var("g", shape=(8,))
    y = relay.nn.relu(relay.nn.group_norm(relay.nn.lrn(x, size=3), gamma, gamma, num_groups=2))
    mod = relay.transform.InferType()(relay.IRModule.from_expr(relay.Function([x, gamma], y)))
    lib = relay.build(mod)
    report = str(lib.report())
    assert "nn.lrn (no LLVM lowering for nn.lrn)" in report
    assert "nn.group_norm (no LLVM lowering for nn.group_norm)" in report
    rng = np.random.default_rng(0)
    args = (rng.standard_normal((1, 8, 4, 4)).astype("float32"), rng.standard_normal(8).astype("float32"))
    want = relay.create_executor("interpreter", mod=mod).evaluate()(*args)
    np.testing.assert_allclose(lib(*args), want, rtol=1e-6)


@PROPS
@given(data=st.data())
def test_space_to_batch_and_back(data):
    m = data.draw(st.integers(1, 2))
    block = [data.draw(st.integers(1, 3)) for _ in range(m)]
    pads, spatial = [], []
    for bk in block:
        lo, hi = data.draw(st.integers(0, 2)), data.draw(st.integers(0, 2))
        size = data.draw(st.integers(1, 3)) * bk - lo - hi
        if size < 1:
            size += bk * ((1 - size) // bk + 1)
        pads.append([lo, hi])
        spatial.append(size)
    shape = (data.draw(st.integers(1, 2)), *spatial, data.draw(st.integers(1, 2)))
    x = random_array(_rng(data), shape, "float32")
    pw = "[" + ", ".join(f"[{a}, {b}]" for a, b in pads) + "]"
    check(
        f'def @main(%x: {tensor(shape, "float32")}) {{ %0 = nn.space_to_batch_nd(%x, '
        f"block_shape={block}, paddings={pw}, pad_value=-2f); "
        f"(%0, nn.batch_to_space_nd(%0, block_shape={block}, crops={pw})) }}",
        x,
    )


def _family_cases():
    from test_nn_families_agree import CASES

    return CASES


@pytest.mark.parametrize("op, args, attrs", _family_cases(), ids=[c[0] for c in _family_cases()])
def test_every_new_op_runs_inside_a_built_program(op, args, attrs):
    """relay.build of a one-call program of each new op (lowered or interpreted) gives the
    interpreter's answer."""
    from test_nn_families_agree import _value

    from relay_nb.ir.expr import Call
    from relay_nb.op.registry import get_op, make_attrs

    params = [relay.var(f"a{i}", shape=a.shape, dtype=a.dtype) for i, a in enumerate(args)]
    body = Call(get_op(op), tuple(params), make_attrs(op, attrs))
    mod = relay.transform.InferType()(relay.IRModule.from_expr(relay.Function(params, body)))
    rng = np.random.default_rng(0)
    values = [_value(a, rng) for a in args]
    got = relay.build(mod)(*values)
    want = relay.create_executor("interpreter", mod=mod).evaluate()(*values)
    got, want = (v if isinstance(v, tuple) else (v,) for v in (got, want))
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("method", ["nearest_neighbor", "linear", "cubic"])
@pytest.mark.parametrize(
    "mode", ["half_pixel", "align_corners", "asymmetric", "tf_crop_and_resize"]
)
def test_resize1d_and_resize3d(method, mode):
    rng = np.random.default_rng(0)
    x1 = random_array(rng, (2, 3, 5), "float32")
    roi1 = "[0.1f, 0.8f]"
    check(
        f'def @main(%x: Tensor[(2, 3, 5), float32]) {{ image.resize1d(%x, size=[7], roi={roi1}, '
        f'method="{method}", coordinate_transformation_mode="{mode}", extrapolation_value=-1f) }}',
        x1,
        rtol=0,
        atol=0,
    )
    x3 = random_array(rng, (1, 2, 3, 4, 3), "float32")
    roi3 = "[0f, 0.1f, 0.2f, 0.9f, 1.2f, 0.7f]"
    check(
        f'def @main(%x: Tensor[(1, 2, 3, 4, 3), float32]) {{ image.resize3d(%x, size=[2, 5, 4], '
        f'roi={roi3}, method="{method}", coordinate_transformation_mode="{mode}") }}',
        x3,
        rtol=0,
        atol=0,
    )


@pytest.mark.parametrize("method", ["nearest_neighbor", "trilinear"])
def test_upsampling3d_ndhwc(method):
    x = random_array(np.random.default_rng(1), (1, 2, 3, 2, 2), "float32")
    check(
        f'def @main(%x: Tensor[(1, 2, 3, 2, 2), float32]) {{ nn.upsampling3d(%x, scale_d=2f, '
        f'scale_h=1.5f, scale_w=2f, layout="NDHWC", method="{method}") }}',
        x,
    )


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_affine_grid_matches_the_interpreter_exactly(dtype):
    rng = np.random.default_rng(2)
    theta = random_array(rng, (2, 2, 3), dtype)
    ex = check(
        f"def @main(%t: Tensor[(2, 2, 3), {dtype}]) {{ image.affine_grid(%t, target_shape=[4, 5]) }}",
        theta,
        rtol=0,
        atol=0,
    )
    assert ex.kernels[0].ops == ["image.affine_grid"]


@pytest.mark.parametrize("pack_type, bit_axis", [("uint8", 2), ("uint32", -1), ("uint16", 0)])
def test_bitpack(pack_type, bit_axis):
    width = int(pack_type[4:])
    x = np.random.default_rng(3).integers(-8, 8, (2, 2 * width, 3)).astype("int8")
    check(
        f"def @main(%x: Tensor[(2, {2 * width}, 3), int8]) {{ nn.bitpack(%x, bits=3, pack_axis=1, "
        f'bit_axis={bit_axis}, pack_type="{pack_type}") }}',
        x,
    )
