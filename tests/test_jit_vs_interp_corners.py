"""The JIT and the interpreter agree on the corners: NaN, +-inf, +-0.0 (the sign of a zero
is compared, it shows through ``1 / x``), quotients too big for ``a - trunc(a / b) * b``,
bool tensors, empty shapes and empty reduction axes.

Exact ops compare bit for bit (NaN positions, values and zero signs); transcendentals and
``power`` (numpy's float32 ``pow`` is 1 ulp off) to a tolerance, with NaN and infinities
at the same places.  Each property compiles one kernel per (op, dtype, shape) and then
runs many inputs through it, so the examples are cheap.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from jit_testing import assert_native, assert_same, tensor

import relay_nb as relay
from relay_nb.backend.llvm.executor import JITExecutor

PROPS = settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])

FLOATS = ("float32", "float64")
SHAPES = ((7,), (0,), (2, 0), (2, 3))
# Corner values, and numbers whose quotients (1e30 / 3) need more digits than the dtype has.
SPECIAL = (np.nan, np.inf, -np.inf, 0.0, -0.0, 1e30, -1e30, 1e9, -1e9, 16777217.0, 3.0, -3.0,
           0.5, -0.5, 2.0, -7.0, 1e-40, -1e-40)  # fmt: skip


@functools.lru_cache(maxsize=None)
def executors(text: str) -> tuple:
    """(interpreter function, JIT function, JIT executor) of one program, compiled once."""
    mod = relay.parse(text)
    ex = JITExecutor(mod)
    return relay.create_executor("interpreter", mod=mod).evaluate(), ex.evaluate(), ex


def both(text: str, *args, native: bool = True) -> tuple:
    """(interpreter result, JIT result); every JIT kernel compiled unless ``native=False``."""
    interp, jit, ex = executors(text)
    ref = interp(*args)
    out = jit(*args)
    if native:
        assert_native(ex)
    return ref, out


def fields(v) -> tuple:
    """A result as a tuple of arrays (a single array is one field)."""
    return v if isinstance(v, tuple) else (v,)


def assert_bits(ref, out) -> None:
    """Same shape, dtype, NaN places, values and signs (of everything but NaN)."""
    r, o = np.asarray(ref), np.asarray(out)
    assert (o.shape, o.dtype) == (r.shape, r.dtype)
    if r.dtype.kind == "f":
        np.testing.assert_array_equal(np.isnan(o), np.isnan(r))
        numbers = ~np.isnan(r)
        np.testing.assert_array_equal(np.signbit(o[numbers]), np.signbit(r[numbers]))
    np.testing.assert_array_equal(o, r)


def floats(dtype: str, shape) -> st.SearchStrategy:
    width = 32 if dtype == "float32" else 64
    value = st.one_of(st.sampled_from(SPECIAL), st.floats(width=width))
    return hnp.arrays(dtype, shape, elements=value)


# --- elementwise floats -------------------------------------------------------------------

EXACT_BINARY = ("add", "subtract", "multiply", "divide", "floor_divide", "trunc_divide", "mod",
                "floor_mod", "trunc_mod", "maximum", "minimum")  # fmt: skip


@pytest.mark.parametrize("op", EXACT_BINARY + ("power",))
@PROPS
@given(data=st.data())
def test_binary_float_corners_and_huge_quotients(op, data):
    dtype = data.draw(st.sampled_from(FLOATS))
    shape = data.draw(st.sampled_from(SHAPES))
    a, b = data.draw(floats(dtype, shape)), data.draw(floats(dtype, shape))
    t = tensor(shape, dtype)
    ref, out = both(f"def @main(%a: {t}, %b: {t}) {{ {op}(%a, %b) }}", a, b)
    if op == "power":
        assert_same(ref, out)
        np.testing.assert_array_equal(np.signbit(out[out == 0]), np.signbit(ref[out == 0]))
    else:
        assert_bits(ref, out)
    if op in ("mod", "floor_mod", "trunc_mod"):  # a remainder is smaller than the divisor
        finite = np.isfinite(ref) & np.isfinite(b)
        assert np.all(np.abs(ref[finite]) <= np.abs(b[finite]))


EXACT_UNARY = ("negative", "abs", "sign", "floor", "ceil", "round", "trunc", "sqrt", "nn.relu",
               "copy")  # fmt: skip
TOLERANT_UNARY = ("exp", "log", "tanh", "sigmoid", "erf", "rsqrt", "sin", "atan")


@pytest.mark.parametrize("op", EXACT_UNARY + TOLERANT_UNARY)
@PROPS
@given(data=st.data())
def test_unary_float_corners(op, data):
    dtype = data.draw(st.sampled_from(FLOATS))
    shape = data.draw(st.sampled_from(SHAPES))
    x = data.draw(floats(dtype, shape))
    ref, out = both(f"def @main(%x: {tensor(shape, dtype)}) {{ {op}(%x) }}", x)
    if op in EXACT_UNARY:
        assert_bits(ref, out)
    else:
        assert_same(ref, out)


@pytest.mark.parametrize("dtype", FLOATS)
def test_remainders_of_huge_quotients_are_exact(dtype):
    # 1e9 / 3 needs 30 bits: a - trunc(a / b) * b gave 64 (float32), not fmod's 1
    a = np.array([1e9, -1e9, 1e30, 7.0, -4.0], dtype)
    b = np.array([3.0, 3.0, -3.0, -2.0, 2.0], dtype)
    for op, want in (("trunc_mod", np.fmod(a, b)), ("floor_mod", np.remainder(a, b))):
        t = tensor((5,), dtype)
        ref, out = both(f"def @main(%a: {t}, %b: {t}) {{ {op}(%a, %b) }}", a, b)
        assert_bits(ref, want)
        assert_bits(out, want)


def test_round_keeps_the_sign_of_a_zero():
    x = np.array([-0.0, -0.3, 0.3, -0.5, 2.5], "float32")
    ref, out = both(f"def @main(%x: {tensor((5,), 'float32')}) {{ divide(1f, round(%x)) }}", x)
    want = np.array([-np.inf, -np.inf, np.inf, -1.0, 1 / 3], "float32")
    assert_bits(ref, want)
    assert_bits(out, want)


@pytest.mark.parametrize("exponent", ["0.5f", "%e"])
def test_power_one_half_is_c_pow_at_minus_inf_and_minus_zero(exponent):
    # numpy computes a scalar exponent 0.5 as sqrt (NaN at -inf, -0.0 at -0.0); C pow does not
    x = np.array([-np.inf, -0.0, 0.0, 4.0], "float32")
    e = np.full(4, 0.5, "float32")
    t = tensor((4,), "float32")
    text = f"def @main(%x: {t}, %e: {t}) {{ power(%x, {exponent}) }}"
    ref, out = both(text, x, e)
    want = np.array([np.inf, 0.0, 0.0, 2.0], "float32")
    assert_bits(ref, want)
    assert_bits(out, want)
    scalar_mod = relay.parse("def @main(%x: float32) { power(%x, 0.5f) }")
    scalar = relay.create_executor("interpreter", mod=scalar_mod)
    assert_bits(scalar.evaluate()(np.float32(-np.inf)), np.float32(np.inf))


# --- bool tensors -------------------------------------------------------------------------

NCHW = (1, 2, 4, 5)
BOOL_PROGRAMS = {
    # add on bool is OR (numpy's True + True): bias_add and the average pools follow it
    "bias_add": f"def @main(%x: {tensor(NCHW, 'bool')}, %b: {tensor((2,), 'bool')}) "
    "{ nn.bias_add(%x, %b) }",
    "avg_pool2d": f"def @main(%x: {tensor(NCHW, 'bool')}) {{ nn.avg_pool2d(%x, pool_size=[2, 2]) }}",
    "avg_pool2d_pad": f"def @main(%x: {tensor(NCHW, 'bool')}) "
    "{ nn.avg_pool2d(%x, pool_size=[3, 3], strides=[2, 1], padding=[1, 1], count_include_pad=True) }",
    "adaptive_avg_pool2d": f"def @main(%x: {tensor(NCHW, 'bool')}) "
    "{ nn.adaptive_avg_pool2d(%x, output_size=[3, 2]) }",
    "global_avg_pool2d": f"def @main(%x: {tensor(NCHW, 'bool')}) {{ nn.global_avg_pool2d(%x) }}",
    # the difference from the mean is XOR, as in the JIT's i1 arithmetic
    "variance": f"def @main(%x: {tensor(NCHW, 'bool')}) "
    "{ variance(%x, mean(%x, axis=[2, 3], keepdims=True), axis=[2, 3]) }",
    "variance_unbiased_of_one": f"def @main(%x: {tensor(NCHW, 'bool')}) "
    "{ variance(%x, any(%x, axis=[1], keepdims=True), axis=[0], unbiased=True) }",
    "add_sum_max": f"def @main(%x: {tensor(NCHW, 'bool')}) "
    "{ (add(%x, %x), sum(%x, axis=[3]), max(%x, axis=[1])) }",
}


@pytest.mark.parametrize("name", sorted(BOOL_PROGRAMS))
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_bool_tensors(name, data):
    text = BOOL_PROGRAMS[name]
    params = relay.transform.InferType()(relay.parse(text))["main"].params
    shapes = [tuple(p.checked_type.shape) for p in params]
    args = [data.draw(hnp.arrays(bool, s)) for s in shapes]
    ref, out = both(text, *args)
    for r, o in zip(fields(ref), fields(out)):
        assert r.dtype == bool
        assert_bits(r, o)


def test_bool_bias_add_and_average_are_or():
    x = np.ones((1, 2, 2, 2), bool)
    text = (
        f"def @main(%x: {tensor((1, 2, 2, 2), 'bool')}, %b: {tensor((2,), 'bool')}) "
        "{ (nn.bias_add(%x, %b), nn.avg_pool2d(%x, pool_size=[2, 2])) }"
    )
    ref, out = both(text, x, np.ones(2, bool))
    for r, o in zip(ref, out):
        assert r.all() and o.all()  # True + True is True, not a wrapped False


# --- pools read their own window only -------------------------------------------------------


@PROPS
@given(data=st.data())
def test_adaptive_average_keeps_a_nan_in_its_windows(data):
    dtype = data.draw(st.sampled_from(FLOATS))
    shape = (1, 2, 5, 7)
    x = data.draw(floats(dtype, shape))
    text = f"def @main(%x: {tensor(shape, dtype)}) {{ nn.adaptive_avg_pool2d(%x, output_size=[3, 4]) }}"
    ref, out = both(text, x)
    # NaN and the infinities must land in the same windows; finite sums may differ by the
    # summation order (numpy's pairwise sum vs the kernel's loop), up to a few ulps of the
    # window's largest magnitude: 1e30 - 1e30 + 1e9 is 1e9 or 0 depending on the order.
    finite = np.abs(np.where(np.isfinite(x), x, 0))
    scale = float(finite.max(initial=0.0)) * np.finfo(dtype).eps * 8
    assert_same(ref, out, rtol=1e-5, atol=scale or None)


def test_one_nan_poisons_only_its_own_windows():
    x = np.arange(35, dtype="float32").reshape(1, 1, 5, 7)
    x[0, 0, 0, 0] = np.nan
    text = f"def @main(%x: {tensor(x.shape, 'float32')}) {{ nn.adaptive_avg_pool2d(%x, output_size=[2, 2]) }}"
    ref, out = both(text, x)
    plane = x[0, 0]  # windows: rows [0, 3) and [2, 5), columns [0, 4) and [3, 7)
    want = np.array(
        [[np.nan, plane[:3, 3:].mean()], [plane[2:, :4].mean(), plane[2:, 3:].mean()]], "float32"
    )
    np.testing.assert_allclose(ref[0, 0], want)
    np.testing.assert_allclose(out[0, 0], want)


# --- empty shapes and empty reductions ------------------------------------------------------

EMPTY_PROGRAMS = [
    # TVM's argmax/argmin start from index -1: that is the answer over no elements
    ("argmax(%x, axis=[0], exclude=True)", (2, 0)),
    ("argmin(%x, axis=[1], exclude=True, keepdims=True)", (2, 0)),
    ("argmax(%x, axis=[0])", (0, 3)),
    ("argmin(%x)", (0, 3)),
    ("argmax(%x, axis=[1])", (0, 0)),
    ("nn.softmax(%x)", (2, 0)),
    ("nn.log_softmax(%x, axis=0)", (0, 3)),
    ("variance(%x, mean(%x, axis=[1], keepdims=True), axis=[1], unbiased=True)", (2, 0)),
    ("(max(%x, axis=[1]), min(%x), prod(%x, axis=[0]), mean(%x, axis=[1]))", (2, 0)),
    ("nn.adaptive_avg_pool2d(%x, output_size=[2, 2])", (1, 1, 0, 3)),
]


@pytest.mark.parametrize(("expr", "shape"), EMPTY_PROGRAMS)
def test_empty_shapes_and_empty_axes(expr, shape):
    ref, out = both(f"def @main(%x: {tensor(shape, 'float32')}) {{ {expr} }}", np.zeros(shape, "float32"))
    for r, o in zip(fields(ref), fields(out)):
        assert_bits(r, o)
    if expr.startswith("arg"):
        assert np.all(ref == -1)


@pytest.mark.parametrize("dtype", ["float32", "int8", "bool"])
def test_padding_a_scalar_with_no_widths_is_the_scalar(dtype):
    x = np.array(1, dtype)
    # nothing to compute: the JIT runs no kernel, only the interpreter's impl is at stake
    ref, out = both(f"def @main(%x: {dtype}) {{ nn.pad(%x, 0f, pad_width=[]) }}", x, native=False)
    assert_bits(ref, x)
    assert_bits(out, x)


# --- maxima over windows and axes: NaN wins, the first of equal zeros wins ------------------

ZEROS_AND_NAN = (np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0)
X4 = tensor((1, 2, 4, 6), "float32")
EXTREMES = {
    "max_pool2d": f"def @main(%x: {X4}) {{ nn.max_pool2d(%x, pool_size=[2, 2]) }}",
    "max_pool2d_pad": f"def @main(%x: {X4}) {{ nn.max_pool2d(%x, pool_size=[3, 3], padding=[1, 1]) }}",
    "adaptive_max_pool2d": f"def @main(%x: {X4}) {{ nn.adaptive_max_pool2d(%x, output_size=[3, 4]) }}",
    "global_max_pool2d": f"def @main(%x: {X4}) {{ nn.global_max_pool2d(%x) }}",
    "max_min": f"def @main(%x: {X4}) {{ (max(%x, axis=[2, 3]), min(%x, axis=[3]), max(%x, axis=[1], keepdims=True)) }}",
    "arg": f"def @main(%x: {X4}) {{ (argmax(%x, axis=[3]), argmin(%x, axis=[2, 3], select_last_index=True)) }}",
}


@pytest.mark.parametrize("name", sorted(EXTREMES))
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_maxima_take_nan_and_the_first_zero(name, data):
    x = data.draw(hnp.arrays("float32", (1, 2, 4, 6), elements=st.sampled_from(ZEROS_AND_NAN)))
    ref, out = both(EXTREMES[name], x)
    for r, o in zip(fields(ref), fields(out)):
        assert_bits(r, o)


def test_the_max_of_minus_zero_then_zero_is_minus_zero():
    x = np.array([[-0.0, 0.0], [0.0, -0.0]], "float32")
    ref, out = both(f"def @main(%x: {tensor((2, 2), 'float32')}) {{ max(%x, axis=[1]) }}", x)
    assert_bits(ref, np.array([-0.0, 0.0], "float32"))
    assert_bits(out, np.array([-0.0, 0.0], "float32"))


@pytest.mark.parametrize(
    ("expr", "shape"),
    [
        ("nn.upsampling(%x, scale_h=2f, scale_w=2f)", (1, 1, 0, 3)),
        ('nn.upsampling(%x, scale_h=2f, scale_w=2f, layout="NHWC")', (1, 0, 3, 2)),
        ('nn.upsampling(%x, scale_h=2f, scale_w=2f, method="bilinear")', (0, 2, 3, 3)),
        ("nn.upsampling(%x, scale_h=0.1f, scale_w=2f)", (1, 2, 3, 3)),
    ],
)
def test_upsampling_to_an_empty_result(expr, shape):
    # an empty input axis used to reach numpy's "integer modulo by zero" in the taps
    ref, out = both(f"def @main(%x: {tensor(shape, 'float32')}) {{ {expr} }}", np.ones(shape, "float32"), native=False)
    assert ref.size == 0
    assert_bits(ref, out)


@pytest.mark.parametrize("mode", ["edge", "reflect"])
def test_edge_padding_with_an_empty_result_is_empty(mode):
    # the padded axis has values; another axis is empty, so is the result
    text = f'def @main(%x: {tensor((0, 3), "float32")}) {{ nn.pad(%x, 0f, pad_width=[[0, 0], [1, 1]], pad_mode="{mode}") }}'
    ref, out = both(text, np.zeros((0, 3), "float32"), native=False)
    assert ref.shape == (0, 5)
    assert_bits(ref, out)
    with pytest.raises(relay.EvalError, match="empty axis"):  # no edge value to copy
        both(f'def @main(%x: {tensor((2, 0), "float32")}) {{ nn.pad(%x, 0f, pad_width=[[0, 0], [1, 1]], pad_mode="{mode}") }}', np.zeros((2, 0), "float32"))


BOOL_BINARY = ("add", "multiply", "maximum", "minimum", "logical_and", "logical_or", "logical_xor",
               "bitwise_and", "bitwise_or", "bitwise_xor", "equal", "less")  # fmt: skip
BOOL_UNARY = ("negative", "abs", "sign", "logical_not", "copy", "floor", "nn.relu", "isnan")


@pytest.mark.parametrize("op", BOOL_BINARY + BOOL_UNARY)
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_bool_elementwise(op, data):
    shape = data.draw(st.sampled_from(SHAPES))
    a, b = data.draw(hnp.arrays(bool, shape)), data.draw(hnp.arrays(bool, shape))
    t = tensor(shape, "bool")
    if op in BOOL_UNARY:
        ref, out = both(f"def @main(%a: {t}) {{ {op}(%a) }}", a)
    else:
        ref, out = both(f"def @main(%a: {t}, %b: {t}) {{ {op}(%a, %b) }}", a, b)
    assert_bits(ref, out)
