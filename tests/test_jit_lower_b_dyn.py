"""Property tests: the dyn.* ops run natively in the JIT -- each call rewritten into its
static twin with the shape operands' run-time values bound, compiled once per value, fused
with its neighbours -- and agree exactly with the interpreter."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jit_testing import check, compares, random_array, tensor

import relay_nb as relay
from relay_nb.backend.llvm.cache import KernelCache

PROPS = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
HEADER = '#[version = "0.0.5"]\n'


def _rng(data) -> np.random.Generator:
    return np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))


def _i64(values) -> np.ndarray:
    return np.array(values, "int64")


def check_dyn(params: str, body: str, *args, op: str, **options):
    """JIT == interpreter on ``def @main(params) { body }``, every kernel native, and the
    kernel holding ``op`` was specialized on its values (compiled natively)."""
    ex = check(f"{HEADER}def @main({params}) {{\n  {body}\n}}", *args, native=False, **options)
    bad = [(k.name, k.how()) for k in ex.kernels if not k.ran_native]
    assert not bad, bad
    assert any(op in k.ops and getattr(k, "specialized", None) for k in ex.kernels), [k.ops for k in ex.kernels]
    return ex


def _shape(data, rank_lo=1, rank_hi=3, lo=1, hi=4) -> tuple:
    rank = data.draw(st.integers(rank_lo, rank_hi))
    return tuple(data.draw(st.integers(lo, hi)) for _ in range(rank))


@compares(6)
@PROPS
@given(data=st.data())
def test_reshape(data):
    shape = _shape(data)
    target = list(data.draw(st.permutations(shape)))
    if data.draw(st.booleans()):
        target[data.draw(st.integers(0, len(target) - 1))] = -1
    x = random_array(_rng(data), shape, "float32")
    check_dyn(
        f"%x: {tensor(shape, 'float32')}, %s: {tensor((len(target),), 'int64')}",
        "%0 = dyn.reshape(exp(%x), %s); negative(%0)",
        x, _i64(target), op="dyn.reshape",
    )


@compares(6)
@PROPS
@given(data=st.data())
def test_tile(data):
    shape = _shape(data)
    reps = [data.draw(st.integers(1, 3)) for _ in range(data.draw(st.integers(1, 4)))]
    x = random_array(_rng(data), shape, "int32")
    check_dyn(
        f"%x: {tensor(shape, 'int32')}, %r: {tensor((len(reps),), 'int64')}",
        "add(dyn.tile(%x, %r), 1)", x, _i64(reps), op="dyn.tile",
    )


@compares(6)
@PROPS
@given(data=st.data())
def test_broadcast_to(data):
    shape = _shape(data, lo=1, hi=3)
    target = [d if d != 1 else data.draw(st.integers(1, 3)) for d in shape]
    target = [data.draw(st.integers(1, 3)) for _ in range(data.draw(st.integers(0, 2)))] + target
    x = random_array(_rng(data), shape, "float32")
    check_dyn(
        f"%x: {tensor(shape, 'float32')}, %s: {tensor((len(target),), 'int32')}",
        "dyn.broadcast_to(%x, %s)", x, np.array(target, "int32"), op="dyn.broadcast_to",
    )


@pytest.mark.parametrize("op", ["zeros", "ones"])
@compares(4)
@settings(max_examples=6, deadline=None)
@given(data=st.data())
def test_zeros_and_ones(op, data):
    shape = _shape(data, rank_lo=0)
    dtype = data.draw(st.sampled_from(["float32", "int8"]))
    check_dyn(
        f"%s: {tensor((len(shape),), 'int64')}, %y: {dtype}",
        f'add(dyn.{op}(%s, dtype="{dtype}"), %y)', _i64(shape), np.array(3, dtype), op=f"dyn.{op}",
    )


@compares(6)
@PROPS
@given(data=st.data())
def test_full(data):
    shape = _shape(data, rank_lo=0)
    v = np.float32(data.draw(st.floats(-100, 100, width=32)))
    check_dyn(
        f"%v: float32, %s: {tensor((len(shape),), 'int64')}",
        'multiply(dyn.full(%v, %s, dtype="float32"), 2f)', v, _i64(shape), op="dyn.full",
    )


@compares(6)
@PROPS
@given(data=st.data())
def test_expand_dims(data):
    shape = _shape(data)
    rank = len(shape)
    axis = data.draw(st.integers(-rank - 1, rank))
    n = data.draw(st.integers(0, 2))
    x = random_array(_rng(data), shape, "float32")
    check_dyn(
        f"%x: {tensor(shape, 'float32')}, %a: int64",
        f"dyn.expand_dims(exp(%x), %a, num_newaxis={n})", x, np.int64(axis), op="dyn.expand_dims",
    )


@compares(6)
@PROPS
@given(data=st.data())
def test_squeeze(data):
    shape = tuple(data.draw(st.sampled_from([1, 1, 2, 3])) for _ in range(data.draw(st.integers(1, 4))))
    ones = [i for i, d in enumerate(shape) if d == 1]
    axes = data.draw(st.lists(st.sampled_from(ones), unique=True)) if ones else []
    axes = [a - len(shape) if data.draw(st.booleans()) else a for a in axes]  # negative axes too
    x = random_array(_rng(data), shape, "int32")
    check_dyn(
        f"%x: {tensor(shape, 'int32')}, %a: {tensor((len(axes),), 'int64')}",
        "negative(dyn.squeeze(%x, %a))", x, _i64(axes), op="dyn.squeeze",
    )


@compares(6)
@PROPS
@given(data=st.data())
def test_strided_slice(data):
    shape = _shape(data, hi=6)
    k = data.draw(st.integers(1, len(shape)))
    begin = [data.draw(st.integers(-d - 1, d + 1)) for d in shape[:k]]
    end = [data.draw(st.integers(-d - 1, d + 1)) for d in shape[:k]]
    strides = [data.draw(st.sampled_from([1, 2, 3, -1, -2])) for _ in range(k)]
    x = random_array(_rng(data), shape, "float32")
    vec = tensor((k,), "int64")
    check_dyn(
        f"%x: {tensor(shape, 'float32')}, %b: {vec}, %e: {vec}, %s: {vec}",
        "%0 = dyn.strided_slice(%x, %b, %e, %s); add(%0, 1f)",
        x, _i64(begin), _i64(end), _i64(strides), op="dyn.strided_slice",
    )


@compares(6)
@PROPS
@given(data=st.data())
def test_pad(data):
    shape = _shape(data)
    widths = [[data.draw(st.integers(0, 2)) for _ in range(2)] for _ in shape]
    x = random_array(_rng(data), shape, "float32")
    check_dyn(
        f"%x: {tensor(shape, 'float32')}, %w: {tensor((len(shape), 2), 'int64')}, %v: float32",
        "dyn.nn.pad(exp(%x), %w, %v)", x, _i64(widths), np.float32(-2.5), op="dyn.nn.pad",
    )


@compares(6)
@PROPS
@given(data=st.data())
def test_one_hot(data):
    shape = _shape(data, rank_lo=0, rank_hi=2)
    depth = data.draw(st.integers(1, 5))
    axis = data.draw(st.integers(-len(shape) - 1, len(shape)))
    idx = _rng(data).integers(-1, depth + 2, shape).astype("int32")
    check_dyn(
        f"%i: {tensor(shape, 'int32')}, %on: float32, %d: int32",
        f'dyn.one_hot(%i, %on, -1f, %d, axis={axis}, dtype="float32")',
        idx, np.float32(7), np.int32(depth), op="dyn.one_hot",
    )


SCALES = [0.5, 1.0, 1.5, 2.0, 3.0]


@compares(6)
@PROPS
@given(data=st.data())
def test_upsampling(data):
    shape = (1, 2, data.draw(st.integers(1, 4)), data.draw(st.integers(1, 4)))
    method = data.draw(st.sampled_from(["nearest_neighbor", "bilinear"]))
    align = data.draw(st.booleans()) and method == "bilinear"
    h, w = (np.float32(data.draw(st.sampled_from(SCALES))) for _ in range(2))
    x = random_array(_rng(data), shape, "float32")
    check_dyn(
        f"%x: {tensor(shape, 'float32')}, %h: float32, %w: float32",
        f'dyn.nn.upsampling(%x, %h, %w, method="{method}", align_corners={align})',
        x, h, w, op="dyn.nn.upsampling", rtol=1e-5, atol=1e-5,
    )


@compares(6)
@PROPS
@given(data=st.data())
def test_upsampling3d(data):
    shape = (1, 1, *(data.draw(st.integers(1, 3)) for _ in range(3)))
    method = data.draw(st.sampled_from(["nearest_neighbor", "trilinear"]))
    mode = data.draw(st.sampled_from(["half_pixel", "align_corners", "asymmetric"]))
    d, h, w = (np.float32(data.draw(st.sampled_from(SCALES))) for _ in range(3))
    x = random_array(_rng(data), shape, "float32")
    check_dyn(
        f"%x: {tensor(shape, 'float32')}, %d: float32, %h: float32, %w: float32",
        f'dyn.nn.upsampling3d(%x, %d, %h, %w, method="{method}", coordinate_transformation_mode="{mode}")',
        x, d, h, w, op="dyn.nn.upsampling3d", rtol=1e-5, atol=1e-5,
    )


@compares(6)
@PROPS
@given(data=st.data())
def test_resize2d(data):
    shape = (1, 2, data.draw(st.integers(1, 4)), data.draw(st.integers(1, 4)))
    size = [data.draw(st.integers(1, 6)) for _ in range(2)]
    method = data.draw(st.sampled_from(["nearest_neighbor", "linear", "cubic"]))
    mode = data.draw(st.sampled_from(["half_pixel", "align_corners", "asymmetric"]))
    x = random_array(_rng(data), shape, "float32")
    check_dyn(
        f"%x: {tensor(shape, 'float32')}, %s: {tensor((2,), 'int64')}, %r: {tensor((4,), 'float32')}",
        f'dyn.image.resize2d(%x, %s, %r, method="{method}", coordinate_transformation_mode="{mode}")',
        x, _i64(size), np.zeros(4, "float32"), op="dyn.image.resize2d", rtol=1e-4, atol=1e-4,
    )


def test_shape_operand_computed_in_the_kernel_and_fused_neighbours():
    """The shape operand may be an expression of the parameters (FuseOps puts the shape
    arithmetic in the same kernel): it is evaluated once per distinct value, and the
    reshape still fuses with the elementwise ops around it into one native kernel."""
    params = "%x: Tensor[(2, 6), float32], %s: Tensor[(2), int64]"
    body = "%0 = add(%s, 1i64); %1 = dyn.reshape(exp(%x), %0); add(%1, 1f)"
    x = np.arange(12, dtype="float32").reshape(2, 6)
    ex = check_dyn(params, body, x, _i64([3, 2]), op="dyn.reshape")
    assert len(ex.kernels) == 1
    (k,) = ex.kernels[0].specialized.values()
    assert k.native and k.ops == ["exp", "reshape", "add"]


def test_each_value_compiles_once():
    mod = relay.parse(HEADER + "def @main(%x: Tensor[(4, 6), float32], %r: Tensor[(2), int64]) {\n"
                      "  dyn.tile(%x, %r)\n}")
    cache = KernelCache()
    lib = relay.build(mod, cache=cache)
    x = np.arange(24, dtype="float32").reshape(4, 6)
    for reps in ([1, 2], [2, 1], [1, 2], [2, 1], [1, 1]):
        np.testing.assert_array_equal(lib(x, _i64(reps)), np.tile(x, reps))
    assert cache.stats()["compiles"] == 3
    assert lib.report().native_ops == ["dyn.tile"]


def test_a_bad_value_is_a_located_error_not_a_crash():
    mod = relay.parse(HEADER + "def @main(%x: Tensor[(2, 3), float32], %s: Tensor[(2), int64]) {\n"
                      "  dyn.broadcast_to(%x, %s)\n}")
    lib = relay.build(mod, cache=KernelCache())
    with pytest.raises(relay.RelayError, match="for these argument values"):
        lib(np.zeros((2, 3), "float32"), _i64([4, 3]))


@pytest.mark.parametrize("executor", ["interpreter", "jit"])
def test_one_hot_depth_must_be_positive_in_both_executors(executor):
    mod = relay.parse(HEADER + "def @main(%i: Tensor[(3), int32], %d: int32) {\n"
                      '  dyn.one_hot(%i, 1f, 0f, %d, dtype="float32")\n}')
    run = relay.create_executor(executor, mod=mod).evaluate()
    with pytest.raises(relay.RelayError, match="depth must be positive, got 0"):
        run(np.zeros(3, "int32"), np.int32(0))
