"""Property tests: every elementwise / broadcasting op with an LLVM lowering computes what
the interpreter computes, for random shapes, broadcasts, dtypes and values (special
values included: NaN, infinities, zero, -1, the integer extremes).

Integers and bools compare exactly; floats to ``jit_testing.RTOL`` (exact arithmetic,
transcendentals within a few ulp).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jit_testing import check, random_array, tensor

from relay_nb.backend.llvm.codegen.math import FLOAT_MATH

PROPS = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])

INTS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
FLOATS = ("float32", "float64")


@st.composite
def shapes(draw, max_rank: int = 3, zero: bool = True):
    rank = draw(st.integers(0, max_rank))
    lo = 0 if zero and draw(st.integers(0, 9)) == 0 else 1
    return tuple(draw(st.lists(st.integers(lo, 5), min_size=rank, max_size=rank)))


@st.composite
def broadcast_pair(draw, max_rank: int = 4):
    """Two shapes that broadcast together (numpy's rules: leading axes dropped, some 1s)."""
    base = draw(shapes(max_rank))
    out = []
    for _ in range(2):
        r = draw(st.integers(0, len(base)))
        out.append(tuple(d if draw(st.booleans()) else 1 for d in base[len(base) - r :]))
    return out


def _seed(draw) -> np.random.Generator:
    return np.random.default_rng(draw(st.integers(0, 2**32 - 1)))


# --- unary --------------------------------------------------------------------------------

UNARY_FLOAT = sorted(FLOAT_MATH) + ["negative", "abs", "sign", "floor", "ceil", "round", "trunc", "nn.relu", "copy"]


@pytest.mark.parametrize("op", UNARY_FLOAT)
@PROPS
@given(data=st.data())
def test_unary_float_ops_match_the_interpreter(op, data):
    dtype = data.draw(st.sampled_from(FLOATS))
    shape = data.draw(shapes())
    x = random_array(_seed(data.draw), shape, dtype, special=True)
    check(f"def @main(%x: {tensor(shape, dtype)}) {{ {op}(%x) }}", x)


@pytest.mark.parametrize("op", ["negative", "abs", "sign", "bitwise_not", "copy", "floor", "round", "exp", "sqrt", "tanh"])
@PROPS
@given(data=st.data())
def test_unary_ops_on_integers(op, data):
    # float math on an integer tensor is computed in float64 and truncated back, saturating
    dtype = data.draw(st.sampled_from(INTS))
    shape = data.draw(shapes())
    x = random_array(_seed(data.draw), shape, dtype, special=True)
    check(f"def @main(%x: {tensor(shape, dtype)}) {{ {op}(%x) }}", x)


@pytest.mark.parametrize("op", ["isnan", "isinf", "isfinite", "logical_not", "zeros_like", "ones_like"])
@PROPS
@given(data=st.data())
def test_predicates_and_constants(op, data):
    dtype = data.draw(st.sampled_from(FLOATS + ("int32", "bool")))
    shape = data.draw(shapes())
    x = random_array(_seed(data.draw), shape, dtype, special=True)
    check(f"def @main(%x: {tensor(shape, dtype)}) {{ {op}(%x) }}", x)


# --- binary with broadcasting ---------------------------------------------------------------

ARITH = ("add", "subtract", "multiply", "divide", "floor_divide", "trunc_divide", "mod", "floor_mod", "trunc_mod", "power", "maximum", "minimum")


@pytest.mark.parametrize("op", ARITH)
@PROPS
@given(data=st.data())
def test_binary_arithmetic_broadcasts_and_defines_division_by_zero(op, data):
    dtype = data.draw(st.sampled_from(INTS + FLOATS))
    a_shape, b_shape = data.draw(broadcast_pair())
    rng = _seed(data.draw)
    a = random_array(rng, a_shape, dtype, special=True)
    b = random_array(rng, b_shape, dtype, special=True)
    if op == "power" and dtype in INTS:
        b = (np.abs(b.astype(np.int64)) % 9 - 2).astype(dtype)  # small exponents, negatives too
    text = f"def @main(%a: {tensor(a_shape, dtype)}, %b: {tensor(b_shape, dtype)}) {{ {op}(%a, %b) }}"
    check(text, a, b)


@pytest.mark.parametrize("op", ["equal", "not_equal", "less", "less_equal", "greater", "greater_equal"])
@PROPS
@given(data=st.data())
def test_comparisons(op, data):
    dtype = data.draw(st.sampled_from(("int8", "uint32", "int64", "float32", "float64")))
    a_shape, b_shape = data.draw(broadcast_pair())
    rng = _seed(data.draw)
    a, b = random_array(rng, a_shape, dtype, True), random_array(rng, b_shape, dtype, True)
    check(f"def @main(%a: {tensor(a_shape, dtype)}, %b: {tensor(b_shape, dtype)}) {{ {op}(%a, %b) }}", a, b)


@pytest.mark.parametrize("op", ["bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift"])
@PROPS
@given(data=st.data())
def test_bitwise_and_shifts_out_of_range(op, data):
    dtype = data.draw(st.sampled_from(INTS))
    a_shape, b_shape = data.draw(broadcast_pair())
    rng = _seed(data.draw)
    a = random_array(rng, a_shape, dtype, True)
    bits = np.dtype(dtype).itemsize * 8
    b = rng.integers(-2 if dtype[0] == "i" else 0, bits + 3, size=int(np.prod(b_shape))).astype(dtype).reshape(b_shape)
    check(f"def @main(%a: {tensor(a_shape, dtype)}, %b: {tensor(b_shape, dtype)}) {{ {op}(%a, %b) }}", a, b)


@pytest.mark.parametrize("op", ["logical_and", "logical_or", "logical_xor"])
@PROPS
@given(data=st.data())
def test_logical_ops(op, data):
    a_shape, b_shape = data.draw(broadcast_pair())
    rng = _seed(data.draw)
    a, b = random_array(rng, a_shape, "bool"), random_array(rng, b_shape, "bool")
    check(f"def @main(%a: {tensor(a_shape, 'bool')}, %b: {tensor(b_shape, 'bool')}) {{ {op}(%a, %b) }}", a, b)


# --- casts, selection, clipping -------------------------------------------------------------


@PROPS
@given(data=st.data())
def test_cast_between_every_pair_of_dtypes_saturates_like_the_interpreter(data):
    src = data.draw(st.sampled_from(INTS + FLOATS + ("bool",)))
    dst = data.draw(st.sampled_from(INTS + FLOATS + ("bool",)))
    shape = data.draw(shapes())
    x = random_array(_seed(data.draw), shape, src, special=True)
    check(f'def @main(%x: {tensor(shape, src)}) {{ cast(%x, dtype="{dst}") }}', x)


@PROPS
@given(data=st.data())
def test_where_broadcasts_three_ways(data):
    base = data.draw(shapes(3))
    dtype = data.draw(st.sampled_from(("int32", "float32", "uint8")))
    rng = _seed(data.draw)
    sh = [tuple(d if data.draw(st.booleans()) else 1 for d in base) for _ in range(3)]
    c, x, y = random_array(rng, sh[0], "bool"), random_array(rng, sh[1], dtype, True), random_array(rng, sh[2], dtype, True)
    text = f"def @main(%c: {tensor(sh[0], 'bool')}, %x: {tensor(sh[1], dtype)}, %y: {tensor(sh[2], dtype)}) {{ where(%c, %x, %y) }}"
    check(text, c, x, y)


@PROPS
@given(data=st.data())
def test_clip_and_leaky_relu_convert_their_attributes_like_the_interpreter(data):
    dtype = data.draw(st.sampled_from(("int8", "int32", "uint8", "float32", "float64")))
    shape = data.draw(shapes())
    lo = data.draw(st.floats(-300, 300, allow_nan=False))
    hi = data.draw(st.floats(-300, 300, allow_nan=False))
    alpha = data.draw(st.floats(-3, 3, allow_nan=False))
    x = random_array(_seed(data.draw), shape, dtype, special=True)
    check(f"def @main(%x: {tensor(shape, dtype)}) {{ (clip(%x, a_min={lo!r}, a_max={hi!r}), nn.leaky_relu(%x, alpha={alpha!r})) }}", x)


@PROPS
@given(data=st.data())
def test_bias_add_and_prelu_along_an_axis(data):
    shape = data.draw(shapes(4, zero=False).filter(lambda s: len(s) >= 1))
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    rng = _seed(data.draw)
    x = random_array(rng, shape, "float32", True)
    c = random_array(rng, (shape[axis],), "float32")
    text = (
        f"def @main(%x: {tensor(shape, 'float32')}, %c: {tensor((shape[axis],), 'float32')}) "
        f"{{ (nn.bias_add(%x, %c, axis={axis}), nn.prelu(%x, %c, axis={axis})) }}"
    )
    check(text, x, c)


def test_creation_ops():
    check('def @main() { (zeros(shape=[2, 3], dtype="int8"), ones(shape=[4], dtype="float64")) }')
    check('def @main(%v: float32) { full(%v, shape=[3, 2], dtype="int32") }', np.float32(-7.9))
    check("def @main(%x: Tensor[(2, 3), float32], %v: int32) { full_like(%x, %v) }", np.ones((2, 3), "float32"), np.int32(5))
    check("def @main(%x: Tensor[(2, 3, 4), int8]) { shape_of(%x) }", np.ones((2, 3, 4), "int8"))


# --- fused chains ---------------------------------------------------------------------------

CHAIN_UNARY = ("exp", "tanh", "sigmoid", "negative", "nn.relu", "abs", "erf", "sqrt", "log")
CHAIN_BINARY = ("add", "subtract", "multiply", "maximum", "minimum", "divide")


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_random_fused_chains_run_as_one_kernel(data):
    """A random DAG of elementwise/broadcast ops fuses into one primitive function whose
    kernel (one loop, the chain inlined) matches the interpreter."""
    a_shape, b_shape = data.draw(broadcast_pair(3))
    dtype = data.draw(st.sampled_from(FLOATS))
    rng = _seed(data.draw)
    values = ["%a", "%b"]
    lines = []
    for k in range(data.draw(st.integers(1, 8))):
        if data.draw(st.booleans()):
            expr = f"{data.draw(st.sampled_from(CHAIN_UNARY))}({data.draw(st.sampled_from(values))})"
        else:
            x, y = data.draw(st.sampled_from(values)), data.draw(st.sampled_from(values))
            expr = f"{data.draw(st.sampled_from(CHAIN_BINARY))}({x}, {y})"
        lines.append(f"%{k} = {expr};")
        values.append(f"%{k}")
    body = "\n  ".join(lines) + f"\n  {values[-1]}"
    text = f"def @main(%a: {tensor(a_shape, dtype)}, %b: {tensor(b_shape, dtype)}) {{\n  {body}\n}}"
    a, b = random_array(rng, a_shape, dtype), random_array(rng, b_shape, dtype)
    ex = check(text, a, b, rtol=1e-5 if dtype == "float32" else 1e-12, atol=1e-5)
    assert len(ex.kernels) == 1
