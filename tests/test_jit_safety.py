"""A notebook kernel must never die: every argument is checked in Python before native
code runs, strided / read-only / misaligned / empty arrays give correct results, huge
results are a clean error, and the undefined corners of C (integer division by zero,
out-of-range ``take``) behave exactly as the interpreter defines them."""

from __future__ import annotations

import numpy as np
import pytest
from jit_testing import assert_same, check

import relay_nb as relay
from relay_nb.backend.llvm.executor import JITExecutor

EXP = "def @main(%x: Tensor[(4, 6), float32]) { %0 = exp(%x); multiply(%0, 2f) }"


def jit(text: str, **options):
    return JITExecutor(relay.parse(text), **options).evaluate()


# --- arguments ------------------------------------------------------------------------------


def test_wrong_shape_dtype_and_count_are_clean_errors_naming_the_parameter():
    f = jit(EXP)
    with pytest.raises(relay.EvalError, match=r"%x\).*expects shape \(4, 6\), got \(6, 4\)"):
        f(np.ones((6, 4), "float32"))
    with pytest.raises(relay.EvalError, match=r"%x\).*expects dtype float32, got an array of float64"):
        f(np.ones((4, 6)))
    with pytest.raises(relay.EvalError, match="expects 1 arguments, got 2"):
        f(np.ones((4, 6), "float32"), 1)
    with pytest.raises(relay.EvalError, match="expects Tensor"):
        f("not a tensor")


def test_a_kernel_called_directly_checks_its_arguments_too():
    lib = relay.build(relay.parse(EXP))
    kernel = lib.kernels[0]
    with pytest.raises(relay.EvalError, match=r"%p0 expects Tensor\[\(4, 6\), float32\], got an array of shape \(3,\)"):
        kernel([np.ones(3, "float32")])
    with pytest.raises(relay.EvalError, match=r"%p0 expects Tensor\[\(4, 6\), float32\], got an array of int32"):
        kernel([np.ones((4, 6), "int32")])
    with pytest.raises(relay.EvalError, match=r"%p0 expects .*, got str"):
        kernel(["x"])
    with pytest.raises(relay.EvalError, match="expects 1 arguments, got 0"):
        kernel([])


@pytest.mark.parametrize(
    "make",
    [
        lambda a: a[:, ::-1],  # negative strides
        lambda a: np.asfortranarray(a),  # column-major
        lambda a: np.repeat(a, 2, axis=1)[:, ::2],  # a strided view of a bigger array
        lambda a: np.broadcast_to(a[:1], a.shape),  # zero strides, read-only
    ],
)
def test_strided_arrays_are_read_correctly(make):
    base = np.random.default_rng(0).standard_normal((4, 6)).astype("float32")
    x = make(base)
    ref = relay.create_executor("interpreter", mod=relay.parse(EXP)).evaluate()(x)
    assert_same(ref, jit(EXP)(x))


def test_read_only_and_misaligned_arrays():
    x = np.random.default_rng(1).standard_normal((4, 6)).astype("float32")
    x.flags.writeable = False
    check(EXP, x)
    raw = np.zeros(4 * 6 * 4 + 1, np.uint8)
    odd = np.frombuffer(raw.data, dtype="float32", count=24, offset=1).reshape(4, 6)
    assert not odd.flags.aligned
    check(EXP, odd)


def test_numpy_scalars_and_python_numbers_for_scalar_parameters():
    text = "def @main(%x: Tensor[(3,), float32], %s: float32) { multiply(%x, %s) }"
    x = np.arange(3, dtype="float32")
    check(text, x, np.float32(2.5))
    check(text, x, 2.5)


# --- sizes ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text,shapes",
    [
        ("def @main(%x: Tensor[(0, 3), float32]) { exp(%x) }", [(0, 3)]),
        ("def @main(%x: Tensor[(2, 0), float32]) { sum(%x, axis=[1]) }", [(2, 0)]),
        ("def @main(%x: Tensor[(0, 4), float32], %w: Tensor[(5, 4), float32]) { nn.dense(%x, %w) }", [(0, 4), (5, 4)]),
        ("def @main(%x: Tensor[(0, 3, 4, 4), float32], %w: Tensor[(2, 3, 3, 3), float32]) { nn.conv2d(%x, %w) }", [(0, 3, 4, 4), (2, 3, 3, 3)]),
        ("def @main(%x: Tensor[(3, 0), float32]) { concatenate((%x, %x), axis=0) }", [(3, 0)]),
        ("def @main(%x: Tensor[(0, 3), float32]) { nn.softmax(%x) }", [(0, 3)]),
    ],
)
def test_zero_size_tensors(text, shapes):
    args = [np.zeros(s, "float32") for s in shapes]
    check(text, *args)


def test_softmax_over_an_empty_axis_is_an_empty_result():
    # no element to normalize: an empty (3, 0) answer in both executors, compiled
    check("def @main(%x: Tensor[(3, 0), float32]) { nn.softmax(%x) }", np.zeros((3, 0), "float32"))


def test_huge_results_are_a_clean_error_not_a_crash():
    text = "def @main(%x: Tensor[(1,), float32]) { broadcast_to(%x, shape=[100000, 100000, 1000]) }"
    f = jit(text)
    with pytest.raises(relay.EvalError, match=r"needs \d+\.\d GiB for its results, more than this machine's"):
        f(np.ones(1, "float32"))
    # and the process is fine afterwards
    check(EXP, np.ones((4, 6), "float32"))


def test_big_but_possible_results_work():
    text = "def @main(%x: Tensor[(1,), float32]) { %0 = broadcast_to(%x, shape=[3000, 3000]); add(%0, 1f) }"
    out = jit(text)(np.full(1, 2, "float32"))
    assert out.shape == (3000, 3000) and out[0, 0] == 3 and out[-1, -1] == 3


# --- defined behaviours ---------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["int8", "int32", "int64", "uint8", "uint32"])
@pytest.mark.parametrize("op", ["divide", "floor_divide", "trunc_divide", "mod", "floor_mod", "trunc_mod"])
def test_integer_division_by_zero_is_zero_and_min_over_minus_one_wraps(op, dtype):
    info = np.iinfo(dtype)
    a = np.array([7, -7 if info.min < 0 else 7, info.min, info.max, 0, info.min], dtype)
    b = np.array([0, 0, -1 if info.min < 0 else 1, 0, 0, 3], dtype)
    ex = check(f"def @main(%a: Tensor[(6,), {dtype}], %b: Tensor[(6,), {dtype}]) {{ {op}(%a, %b) }}", a, b)
    out = ex.evaluate()(a, b)
    assert out[0] == 0 and out[3] == 0 and out[4] == 0  # x / 0 == 0 and x % 0 == 0
    if info.min < 0 and op in ("divide", "floor_divide", "trunc_divide"):
        assert out[2] == info.min  # INT_MIN / -1 wraps


def test_take_fast_mode_out_of_range_raises_the_interpreters_error():
    text = 'def @main(%x: Tensor[(5,), float32], %i: Tensor[(3,), int32]) { take(%x, %i, mode="fast") }'
    x = np.arange(5, dtype="float32")
    idx = np.array([1, 9, -2], "int32")
    mod = relay.parse(text)
    with pytest.raises(relay.EvalError) as ref:
        relay.create_executor("interpreter", mod=mod).evaluate()(x, idx)
    with pytest.raises(relay.EvalError) as got:
        JITExecutor(mod).evaluate()(x, idx)
    assert "index 9 is out of range for an axis of size 5" in str(got.value)
    assert ref.value.message.split(": ", 1)[-1] in got.value.message
    np.testing.assert_array_equal(JITExecutor(mod).evaluate()(x, np.array([4, 0, 2], "int32")), [4, 0, 2])


def test_take_fast_mode_checks_every_index_even_when_a_consumer_reads_a_few():
    text = """def @main(%x: Tensor[(5,), float32], %i: Tensor[(4,), int32]) {
      %0 = take(%x, %i, mode="fast");
      strided_slice(%0, begin=[0], end=[1])
    }"""
    with pytest.raises(relay.EvalError, match="index 7 is out of range"):
        jit(text)(np.arange(5, dtype="float32"), np.array([0, 1, 2, 7], "int32"))


@pytest.mark.parametrize("mode", ["clip", "wrap"])
def test_take_clip_and_wrap_never_read_out_of_bounds(mode):
    x = np.arange(5, dtype="float32")
    idx = np.array([-(2**31), -6, -1, 0, 4, 5, 11, 2**31 - 1], "int32")
    check(f'def @main(%x: Tensor[(5,), float32], %i: Tensor[(8,), int32]) {{ take(%x, %i, mode="{mode}") }}', x, idx)


def test_float_to_int_casts_saturate_and_nan_is_zero():
    x = np.array([np.nan, np.inf, -np.inf, 3e9, -3e9, 2.7, -2.7], "float32")
    ex = check('def @main(%x: Tensor[(7,), float32]) { cast(%x, dtype="int32") }', x)
    np.testing.assert_array_equal(ex.evaluate()(x), [0, 2**31 - 1, -(2**31), 2**31 - 1, -(2**31), 2, -2])


def test_unsupported_dtypes_fall_back_to_numpy_with_the_same_result():
    x = np.arange(6, dtype="float16").reshape(2, 3)
    ex = check("def @main(%x: Tensor[(2, 3), float16]) { add(%x, %x) }", x, native=False)
    assert not ex.kernels[0].native and "float16" in ex.kernels[0].reason


# --- result buffers ---------------------------------------------------------------------------


def test_large_results_reuse_memory_only_when_nothing_refers_to_it():
    from relay_nb.backend.llvm import memory

    n = memory.MIN_BYTES // 4 * 2  # above the pooling threshold
    f = jit(f"def @main(%x: Tensor[({n},), float32]) {{ add(%x, 1f) }}")
    x1, x2, x3 = (np.full(n, v, "float32") for v in (1, 2, 3))
    a = f(x1)
    view = f(x2)[::2]  # only a view of the second result survives
    c = f(x3)
    assert not np.shares_memory(a, c) and not np.shares_memory(view, c)
    assert a[0] == 2 and a[-1] == 2 and view[0] == 3 and view[-1] == 3 and c[0] == 4
    address = a.__array_interface__["data"][0]
    del a
    d = f(x1)  # the first result's memory is free again and may be reused
    assert d[0] == 2 and d.__array_interface__["data"][0] == address
    assert view[0] == 3 and c[-1] == 4
