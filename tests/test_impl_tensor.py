"""numpy implementations of the elementwise / creation ops, against hand-written tables and
independent references (Python's ``math`` and integer arithmetic)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from relay_nb.errors import EvalError
from relay_nb.ir.ty import TensorType
from relay_nb.op.registry import get_column, make_attrs


@pytest.fixture(autouse=True)
def _no_warnings():
    """No op may make numpy warn (division by zero, overflow, invalid casts...)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


def run(name, *args, out=None, **attrs):
    impl = get_column("impl")[name]
    return impl(
        [np.asarray(a) if not isinstance(a, tuple) else a for a in args],
        make_attrs(name, attrs) if attrs else None,
        out,
    )


def i32(v):
    return np.array(v, dtype=np.int32)


def f32(v):
    return np.array(v, dtype=np.float32)


# --- integer division: hand-written C / floor tables ------------------------------------------

A = [7, -7, 7, -7, 6, 0, 1, -1]
B = [2, 2, -2, -2, 3, 5, 7, 7]

TABLES = {
    # C semantics: the quotient truncates toward zero, the remainder has the dividend's sign
    "divide": [3, -3, -3, 3, 2, 0, 0, 0],
    "trunc_divide": [3, -3, -3, 3, 2, 0, 0, 0],
    "mod": [1, -1, 1, -1, 0, 0, 1, -1],
    "trunc_mod": [1, -1, 1, -1, 0, 0, 1, -1],
    # floor semantics: the remainder has the divisor's sign
    "floor_divide": [3, -4, -4, 3, 2, 0, 0, -1],
    "floor_mod": [1, 1, -1, -1, 0, 0, 1, 6],
}


@pytest.mark.parametrize("op", sorted(TABLES))
@pytest.mark.parametrize("dtype", ["int8", "int32", "int64"])
def test_integer_division_tables(op, dtype):
    got = run(op, np.array(A, dtype), np.array(B, dtype))
    assert got.dtype == np.dtype(dtype)
    assert got.tolist() == TABLES[op]


@pytest.mark.parametrize("op", sorted(TABLES))
def test_integer_division_by_zero_is_zero(op):
    got = run(op, i32([5, -5, 0]), i32([0, 0, 0]))
    assert got.tolist() == [0, 0, 0]


@pytest.mark.parametrize("op", sorted(TABLES))
def test_int_min_divided_by_minus_one_wraps(op):
    got = run(op, i32([-(2**31)]), i32([-1]))
    expected = 0 if "mod" in op else -(2**31)
    assert got.tolist() == [expected]


def test_unsigned_division():
    got = run("divide", np.array([250, 7], "uint8"), np.array([3, 0], "uint8"))
    assert got.dtype == np.uint8 and got.tolist() == [83, 0]


def _c_div(a, b):
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _wrap32(v):
    return (v + 2**31) % 2**32 - 2**31


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(-(2**31), 2**31 - 1), st.integers(-(2**31), 2**31 - 1)),
        min_size=1,
        max_size=20,
    )
)
def test_integer_division_against_python(pairs):
    a = i32([p[0] for p in pairs])
    b = i32([p[1] for p in pairs])
    expected = {
        "divide": [_wrap32(_c_div(x, y)) if y else 0 for x, y in pairs],
        "floor_divide": [_wrap32(x // y) if y else 0 for x, y in pairs],
        "mod": [x - _c_div(x, y) * y if y else 0 for x, y in pairs],
        "floor_mod": [x % y if y else 0 for x, y in pairs],
    }
    for op, values in expected.items():
        assert run(op, a, b).tolist() == values, op


def test_float_division_family():
    a, b = f32([7.0, -7.0, 7.5]), f32([-2.0, 2.0, 2.0])
    assert run("divide", a, b).tolist() == [-3.5, -3.5, 3.75]
    assert run("floor_divide", a, b).tolist() == [-4.0, -4.0, 3.0]
    assert run("trunc_divide", a, b).tolist() == [-3.0, -3.0, 3.0]
    assert run("mod", a, b).tolist() == [1.0, -1.0, 1.5]  # fmod: sign of the dividend
    assert run("trunc_mod", a, b).tolist() == [1.0, -1.0, 1.5]
    assert run("floor_mod", a, b).tolist() == [-1.0, 1.0, 1.5]  # sign of the divisor
    inf_nan = run("divide", f32([1.0, -1.0, 0.0]), f32([0.0, 0.0, 0.0]))
    assert inf_nan[0] == np.inf and inf_nan[1] == -np.inf and np.isnan(inf_nan[2])


# --- arithmetic dtypes and broadcasting ---------------------------------------------------------


def test_scalars_keep_their_dtype():
    # numpy alone would turn 0-d arrays into numpy scalars; results are always arrays
    got = run("add", i32(2), i32(3))
    assert isinstance(got, np.ndarray) and got.shape == () and got.dtype == np.int32 and got == 5
    got = run("multiply", f32(1.5), f32(2.0), out=TensorType((), "float32"))
    assert got.dtype == np.float32 and got == 3.0


def test_integer_overflow_wraps():
    assert run("add", i32([2**31 - 1]), i32([1])).tolist() == [-(2**31)]
    assert run("add", np.array([250], "uint8"), np.array([10], "uint8")).tolist() == [4]
    assert run("multiply", np.array([100], "int8"), np.array([3], "int8")).tolist() == [44]
    assert run("subtract", np.array([0], "uint8"), np.array([1], "uint8")).tolist() == [255]


def test_out_type_dtype_wins():
    # an unsuffixed literal typed int64 by numpy but int32 by inference
    got = run("add", i32([1, 2]), np.array(3, "int64"), out=TensorType((2,), "int32"))
    assert got.dtype == np.int32 and got.tolist() == [4, 5]


def test_broadcasting_against_loops():
    a = np.arange(6, dtype="float32").reshape(2, 1, 3)
    b = np.arange(4, dtype="float32").reshape(4, 1) * 10
    got = run("subtract", a, b)
    assert got.shape == (2, 4, 3)
    for i in range(2):
        for j in range(4):
            for k in range(3):
                assert got[i, j, k] == a[i, 0, k] - b[j, 0]


def test_maximum_minimum_power():
    assert run("maximum", i32([1, 5]), i32(3)).tolist() == [3, 5]
    assert run("minimum", f32([1, 5]), f32([3, 3])).tolist() == [1, 3]
    assert run("power", f32([2, 9]), f32([3, 0.5])).tolist() == [8, 3]
    assert run(
        "power", i32([2, 3, 2, 1, -1, -1, 0, 5]), i32([10, 0, -1, -7, -3, -2, -1, 1])
    ).tolist() == [
        1024,
        1,
        0,
        1,
        -1,
        1,
        0,
        5,
    ]


def test_comparisons():
    a, b = i32([1, 2, 3]), i32([2, 2, 2])
    expected = {
        "equal": [False, True, False],
        "not_equal": [True, False, True],
        "less": [True, False, False],
        "less_equal": [True, True, False],
        "greater": [False, False, True],
        "greater_equal": [False, True, True],
    }
    for op, values in expected.items():
        got = run(op, a, b)
        assert got.dtype == np.bool_ and got.tolist() == values, op


def test_logical_and_bitwise():
    t, f = np.array([True, True, False, False]), np.array([True, False, True, False])
    assert run("logical_and", t, f).tolist() == [True, False, False, False]
    assert run("logical_or", t, f).tolist() == [True, True, True, False]
    assert run("logical_xor", t, f).tolist() == [False, True, True, False]
    assert run("logical_not", t).tolist() == [False, False, True, True]
    a, b = i32([0b1100, -1]), i32([0b1010, 0b0110])
    assert run("bitwise_and", a, b).tolist() == [0b1000, 0b0110]
    assert run("bitwise_or", a, b).tolist() == [0b1110, -1]
    assert run("bitwise_xor", a, b).tolist() == [0b0110, -7]
    assert run("bitwise_not", i32([0, 5])).tolist() == [-1, -6]
    with pytest.raises(EvalError):
        run("bitwise_and", f32([1.0]), f32([1.0]))


def test_shifts():
    assert run("left_shift", i32([1, 3, 1, 1]), i32([3, 2, 40, -1])).tolist() == [8, 12, 0, 0]
    assert run("right_shift", i32([-8, 8, -8, 8]), i32([1, 2, 40, 40])).tolist() == [-4, 2, -1, 0]


# --- unary --------------------------------------------------------------------------------------

MATH = {
    "exp": math.exp,
    "fast_exp": math.exp,
    "log": math.log,
    "log2": math.log2,
    "log10": math.log10,
    "sqrt": math.sqrt,
    "rsqrt": lambda v: 1 / math.sqrt(v),
    "sigmoid": lambda v: 1 / (1 + math.exp(-v)),
    "tanh": math.tanh,
    "fast_tanh": math.tanh,
    "erf": math.erf,
    "fast_erf": math.erf,
    "sin": math.sin,
    "cos": math.cos,
    "tan": math.tan,
    "sinh": math.sinh,
    "cosh": math.cosh,
    "asin": math.asin,
    "acos": math.acos,
    "atan": math.atan,
    "asinh": math.asinh,
    "acosh": lambda v: math.acosh(v + 1),  # shifted into the domain below
    "atanh": math.atanh,
}


@pytest.mark.parametrize("op", sorted(MATH))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_unary_math_against_math_module(op, dtype):
    values = [0.1, 0.25, 0.5, 0.75, 0.9]
    x = np.array([v + 1 for v in values] if op == "acosh" else values, dtype)
    got = run(op, x)
    assert got.dtype == np.dtype(dtype)
    expected = [MATH[op](v) for v in values]
    np.testing.assert_allclose(got, expected, rtol=1e-6 if dtype == "float32" else 1e-12)


def test_unary_math_edges_without_warnings():
    assert np.isnan(run("sqrt", f32([-1.0]))[0])
    assert run("log", f32([0.0]))[0] == -np.inf
    assert run("rsqrt", f32([0.0]))[0] == np.inf
    s = run("sigmoid", f32([-1000.0, 1000.0]))
    assert s.tolist() == [0.0, 1.0]


def test_unary_math_on_integers_keeps_dtype():
    got = run("sqrt", i32([4, 10]))
    assert got.dtype == np.int32 and got.tolist() == [2, 3]
    assert run("exp", i32([100])).tolist() == [2**31 - 1]  # saturates


def test_rounding():
    x = f32([0.5, 1.5, 2.5, -0.5, -1.5, 2.4, -2.6])
    assert run("round", x).tolist() == [1, 2, 3, -1, -2, 2, -3]  # halves away from zero
    assert run("floor", x).tolist() == [0, 1, 2, -1, -2, 2, -3]
    assert run("ceil", x).tolist() == [1, 2, 3, -0.0, -1, 3, -2]
    assert run("trunc", x).tolist() == [0, 1, 2, 0, -1, 2, -2]
    assert run("round", i32([7])).tolist() == [7]


def test_sign_abs_negative():
    assert run("sign", f32([-3, 0, 2])).tolist() == [-1, 0, 1]
    assert run("abs", i32([-3, 4, -(2**31)])).tolist() == [3, 4, -(2**31)]
    assert run("negative", i32([3, -(2**31)])).tolist() == [-3, -(2**31)]


def test_predicates():
    x = f32([np.nan, np.inf, -np.inf, 1.0])
    assert run("isnan", x).tolist() == [True, False, False, False]
    assert run("isinf", x).tolist() == [False, True, True, False]
    assert run("isfinite", x).tolist() == [False, False, False, True]
    assert run("isnan", i32([1])).tolist() == [False]
    assert run("isfinite", i32([1])).tolist() == [True]


def test_copy_and_likes():
    x = f32([[1, 2]])
    c = run("copy", x)
    assert c.tolist() == [[1, 2]] and not np.shares_memory(c, x)
    assert run("zeros_like", i32([1, 2])).tolist() == [0, 0]
    assert run("ones_like", x).dtype == np.float32


# --- clip, cast, where ----------------------------------------------------------------------------


def test_clip():
    assert run("clip", f32([-5, 0.5, 5]), a_min=-1.0, a_max=2.0).tolist() == [-1, 0.5, 2]
    # integer bounds are truncated first, as TVM's make_const does
    assert run("clip", i32([-5, 0, 5]), a_min=-2.5, a_max=2.9).tolist() == [-2, 0, 2]
    # a_min > a_max: the last bound applied (a_min) wins
    assert run("clip", f32([0, 10]), a_min=5.0, a_max=1.0).tolist() == [5, 5]


def test_cast():
    got = run("cast", f32([2.7, -2.7, np.nan, 1e20, -1e20]), dtype="int32")
    assert got.dtype == np.int32
    assert got.tolist() == [2, -2, 0, 2**31 - 1, -(2**31)]
    assert run("cast", i32([300, -1]), dtype="uint8").tolist() == [44, 255]
    assert run("cast", f32([0.0, 0.5, -2.0]), dtype="bool").tolist() == [False, True, True]
    assert run("cast", np.array([1e300]), dtype="float32")[0] == np.inf
    assert run("cast", np.array([2.0**63]), dtype="int64").tolist() == [2**63 - 1]
    assert run("cast_like", f32([1.9]), i32([0, 0])).tolist() == [1]
    with pytest.raises(EvalError):
        run("cast", f32([1.0]), dtype="bfloat16")


def test_where_broadcasts():
    cond = np.array([[True], [False]])
    got = run("where", cond, f32([[1, 2, 3]]), f32(0))
    assert got.tolist() == [[1, 2, 3], [0, 0, 0]]
    got = run("where", i32([0, 2]), i32([1, 1]), i32([9, 9]))
    assert got.tolist() == [9, 1]


# --- creation -------------------------------------------------------------------------------------


def test_init_ops():
    z = run("zeros", shape=[2, 3], dtype="int32")
    assert z.dtype == np.int32 and z.shape == (2, 3) and not z.any()
    o = run("ones", shape=[2], dtype="")
    assert o.dtype == np.float32 and o.tolist() == [1, 1]
    f = run("full", f32(2.5), shape=[2], dtype="int32")
    assert f.dtype == np.int32 and f.tolist() == [2, 2]
    f = run("full", np.array(7, "int8"), shape=[1, 2], dtype="")
    assert f.dtype == np.int8 and f.tolist() == [[7, 7]]
    fl = run("full_like", i32([[1, 2]]), f32(3.9))
    assert fl.dtype == np.int32 and fl.tolist() == [[3, 3]]


def test_arange():
    got = run("arange", i32(1), i32(10), i32(3), dtype="int32")
    assert got.dtype == np.int32 and got.tolist() == [1, 4, 7]
    got = run("arange", f32(0), f32(1), f32(0.25))
    assert got.dtype == np.float32 and got.tolist() == [0, 0.25, 0.5, 0.75]
    got = run("arange", i32(5), i32(0), i32(-2), dtype="int32")
    assert got.tolist() == [5, 3, 1]
    assert run("arange", i32(5), i32(0), i32(1), dtype="int32").shape == (0,)
    with pytest.raises(EvalError):
        run("arange", i32(0), i32(5), i32(0), dtype="int32")


def test_result_shape_checked_against_type():
    with pytest.raises(EvalError, match="internal error"):
        run("add", f32([1, 2]), f32([1, 2]), out=TensorType((3,), "float32"))


def test_nan_in_max_min_follows_tvm_select():
    nan = np.float32(np.nan)
    got = run("maximum", f32([nan, 1.0]), f32([1.0, nan]))
    assert got[0] == 1.0 and np.isnan(got[1])  # a > b ? a : b
    got = run("minimum", f32([nan, 1.0]), f32([1.0, nan]))
    assert got[0] == 1.0 and np.isnan(got[1])
    assert run("clip", f32([nan]), a_min=0.0, a_max=6.0).tolist() == [6.0]
    assert run("sign", f32([nan, -0.0])).tolist() == [0.0, 0.0]
    assert run("nn.relu", f32([nan, -1.0, 2.0])).tolist() == [0.0, 0.0, 2.0]
