"""The tensor-family ops lowered to LLVM (codegen/tensor_index.py, codegen/tensor_loops.py)
agree with the interpreter (exactly, but einsum's summation order; hypothesis where the
attributes vary), fuse with their neighbours, report the interpreter's errors, and the
family's unlowered ops run in the interpreter inside a built module."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jit_testing import check, random_array, tensor

import relay_nb as relay

PROPS = settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _rng(data) -> np.random.Generator:
    return np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))


def shape_of(data, min_rank=1, max_rank=4, lo=1):
    rank = data.draw(st.integers(min_rank, max_rank))
    return tuple(data.draw(st.lists(st.integers(lo, 4), min_size=rank, max_size=rank)))


@PROPS
@given(data=st.data(), dtype=st.sampled_from(["float32", "int32", "float64", "int8"]))
def test_scans(data, dtype):
    shape = shape_of(data, lo=0)
    axis = data.draw(st.none() | st.integers(-len(shape), len(shape) - 1))
    ax = "" if axis is None else f", axis={axis}"
    x = random_array(_rng(data), shape, dtype)
    text = (
        f"def @main(%x: {tensor(shape, dtype)}) {{ (cumsum(%x{ax}), cumprod(%x{ax}, exclusive=True), "
        f'cumsum(%x{ax}, dtype="float64", exclusive=True)) }}'
    )
    check(text, x)


@PROPS
@given(data=st.data())
def test_gather_fused_with_elementwise(data):
    shape = shape_of(data)
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    n = shape[axis]
    ishape = list(shape)
    ishape[axis] = data.draw(st.integers(1, 5))
    rng = _rng(data)
    x = random_array(rng, shape, "float32")
    idx = rng.integers(-n, n, ishape).astype("int64")
    text = f"def @main(%x: {tensor(shape, 'float32')}, %i: {tensor(ishape, 'int64')}) {{ exp(gather(%x, %i, axis={axis})) }}"
    check(text, x, idx)


def test_gather_out_of_range_is_the_interpreters_error():
    text = "def @main(%x: Tensor[(2, 3), float32], %i: Tensor[(2, 1), int32]) { gather(%x, %i, axis=1) }"
    x = np.zeros((2, 3), "float32")
    for ex in ("interpreter", "jit"):
        f = relay.create_executor(ex, mod=relay.parse(text)).evaluate()
        with pytest.raises(relay.EvalError, match="index 3 is out of range for a dimension of 3"):
            f(x, np.array([[0], [3]], "int32"))


@PROPS
@given(data=st.data(), dtype=st.sampled_from(["float32", "int32"]))
def test_one_hot_trilu_sequence_mask(data, dtype):
    rng = _rng(data)
    shape = shape_of(data, min_rank=2, max_rank=3)
    depth = data.draw(st.integers(1, 5))
    axis = data.draw(st.integers(-1, len(shape)))
    k = data.draw(st.integers(-3, 3))
    upper = data.draw(st.booleans())
    idx = rng.integers(-1, depth + 1, shape).astype("int32")
    x = random_array(rng, shape, dtype)
    valid = rng.integers(0, shape[0] + 1, (shape[1],)).astype("int32")
    text = (
        f"def @main(%i: {tensor(shape, 'int32')}, %x: {tensor(shape, dtype)}, %v: {tensor((shape[1],), 'int32')}) {{ "
        f'(one_hot(%i, 3f, -1f, depth={depth}, axis={axis}, dtype="float32"), '
        f"trilu(%x, {k}, upper={upper}), sequence_mask(%x, %v, mask_value=-2f), "
        f"add(trilu(%x, {k}), %x), sequence_mask(%x, %f, axis=0), "
        f'one_hot(%i, 1f, 0f, depth={depth}, dtype="int8")) }}'
    )
    check(text.replace("%v: ", f"%f: {tensor((shape[1],), 'float32')}, %v: "), idx, x, (valid + 0.5).astype("float32"), valid)


def test_collapse_sum_to():
    x = np.arange(24, dtype="float32").reshape(2, 3, 4)
    v = relay.var("x", shape=(2, 3, 4))
    check(relay.IRModule.from_expr(relay.Function([v], relay.collapse_sum_to(v, (3, 1)))), x)


def test_unlowered_ops_run_in_the_interpreter_inside_a_build():
    """topk has no lowering: relay.build still runs the program, and report() says so."""
    text = (
        "def @main(%x: Tensor[(3, 5), float32]) { "
        "%0 = exp(%x); %1 = topk(%0, k=2, ret_type=\"values\"); cumsum(%1, axis=1) }"
    )
    lib = relay.build(relay.parse(text))
    x = np.random.default_rng(0).normal(size=(3, 5)).astype("float32")
    ref = relay.create_executor("interpreter", mod=relay.parse(text)).evaluate()(x)
    np.testing.assert_allclose(lib(x), ref, rtol=1e-6)  # the JIT's exp is within an ulp
    report = lib.report()
    assert "topk" in report.fallback_ops and "cumsum" in report.native_ops
    assert "topk" in str(report)


@PROPS
@given(data=st.data())
def test_gather_nd_and_adv_index(data):
    rng = _rng(data)
    shape = shape_of(data, min_rank=2, max_rank=4)
    m = data.draw(st.integers(1, len(shape) - 1))
    nb = data.draw(st.integers(0, len(shape) - m))
    y = list(shape[:nb]) + [data.draw(st.integers(1, 3))]
    bounds = np.array(shape[nb : nb + m]).reshape((m,) + (1,) * len(y))
    idx = (rng.integers(0, 2**16, (m, *y)) % bounds).astype("int32")
    x = random_array(rng, shape, "float32")
    a = rng.integers(-shape[0], shape[0], (2, 1)).astype("int64")
    b = rng.integers(-shape[1], shape[1], (3,)).astype("int32")
    text = (
        f"def @main(%x: {tensor(shape, 'float32')}, %i: {tensor(idx.shape, 'int32')}, %a: Tensor[(2, 1), int64], "
        f"%b: Tensor[(3), int32]) {{ (gather_nd(%x, %i, batch_dims={nb}), negative(adv_index((%x, %a, %b)))) }}"
    )
    check(text, x, idx, a, b)


@PROPS
@given(data=st.data())
def test_reverse_sequence_slice_like_meshgrid_reverse_reshape(data):
    rng = _rng(data)
    shape = shape_of(data, min_rank=2, max_rank=4)
    x = random_array(rng, shape, "int32")
    lengths = rng.integers(-1, shape[1] + 2, (shape[0],)).astype("int32")
    like = tuple(data.draw(st.integers(1, n)) for n in shape[:2])
    text = (
        f"def @main(%x: {tensor(shape, 'int32')}, %l: {tensor((shape[0],), 'int32')}, %s: {tensor(like, 'float32')}, "
        f"%u: Tensor[(3), float32], %v: Tensor[(2), float32], %w: float32) {{ "
        f"(reverse_sequence(%x, %l, seq_axis=1, batch_axis=0), slice_like(%x, %s), slice_like(%x, %s, axes=[1]), "
        f'meshgrid((%u, %v, %w)), meshgrid((%u, %v), indexing="xy"), '
        f"contrib_reverse_reshape(%x, newshape=[-1, 0])) }}"
    )
    u, v, w = (random_array(rng, s, "float32") for s in ((3,), (2,), ()))
    check(text, x, lengths, np.zeros(like, "float32"), u, v, w)


@PROPS
@given(data=st.data())
def test_matrix_set_diag(data):
    rng = _rng(data)
    rows, cols = data.draw(st.integers(1, 4)), data.draw(st.integers(1, 4))
    k1 = data.draw(st.integers(-rows + 1, cols - 1))
    k2 = data.draw(st.integers(k1, cols - 1))
    width = min(rows + min(0, k2), cols - max(0, k1))
    gshape = (2,) + ((k2 - k1 + 1,) if k1 != k2 else ()) + (width,)
    sup, sub = data.draw(st.booleans()), data.draw(st.booleans())
    x = random_array(rng, (2, rows, cols), "float32")
    g = random_array(rng, gshape, "float32")
    text = (
        f"def @main(%x: {tensor((2, rows, cols), 'float32')}, %g: {tensor(gshape, 'float32')}) {{ "
        f"matrix_set_diag(%x, %g, k1={k1}, k2={k2}, super_diag_right_align={sup}, sub_diag_right_align={sub}) }}"
    )
    check(text, x, g)


def test_unravel_fixed_point_reinterpret_size_layout():
    rng = np.random.default_rng(5)
    idx = rng.integers(0, 60, (7,)).astype("int32")
    x = rng.integers(-(2**20), 2**20, (2, 8)).astype("int32")
    f = rng.normal(size=(2, 8)).astype("float32")
    a = rng.normal(size=(1, 8, 2, 3)).astype("float32")
    text = (
        "def @main(%i: Tensor[(7), int32], %s: Tensor[(3), int64], %x: Tensor[(2, 8), int32], "
        "%f: Tensor[(2, 8), float32], %a: Tensor[(1, 8, 2, 3), float32]) { "
        "(unravel_index(%i, %s), unravel_index(%i, meta[relay.Constant][0]), "
        "fixed_point_multiply(%x, multiplier=1518500250, shift=-3), fixed_point_multiply(%x, multiplier=1963413621, shift=2), "
        'reinterpret(%f, dtype="int32"), reinterpret(%x, dtype="float32"), ndarray_size(%a, dtype="int64"), '
        'auto_scheduler_layout_transform(%a, src_layout="1N8C2H3W", dst_layout="1N2C3W2H4C")) }'
    )
    shape = relay.const(np.array([0, 4, 5], "int32"))  # a zero dim: x / 0 and x % 0 are 0
    mod = relay.parse(text, init_meta_table={"relay.Constant": [shape]})
    check(mod, idx, np.array([3, 4, 5], "int64"), x, f, a)


@PROPS
@given(data=st.data(), lshift=st.booleans(), rshift=st.booleans())
def test_fixed_point_multiply_per_axis(data, lshift, rshift):
    rng = _rng(data)
    shape = shape_of(data, min_rank=1, max_rank=3)
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    c = shape[axis]
    x = rng.integers(-(2**20), 2**20, shape).astype("int32")
    m = rng.integers(2**29, 2**31 - 1, (c,)).astype("int32")
    ls = rng.integers(-1, 66, (c,)).astype("int32")  # with counts numpy shifts to 0 / the sign
    rs = rng.integers(-1, 40, (c,)).astype("int32")
    text = (
        f"def @main(%x: {tensor(shape, 'int32')}, %m: {tensor((c,), 'int32')}, %l: {tensor((c,), 'int32')}, "
        f"%r: {tensor((c,), 'int32')}) {{ fixed_point_multiply_per_axis(%x, %m, %l, %r, "
        f"is_lshift_required={lshift}, is_rshift_required={rshift}, axes=[{axis}]) }}"
    )
    check(text, x, m, ls, rs)


@pytest.mark.parametrize(
    "perm, bad",
    [([2, 0, 3, 1], None), ([], None), ([1, 1, 0], 1), ([0, 3, 1], 3), ([-1, 0, 1], -1)],
)
def test_invert_permutation(perm, bad):
    text = f"def @main(%p: Tensor[({len(perm)}), int32]) {{ invert_permutation(%p) }}"
    p = np.array(perm, "int32")
    if bad is None:
        check(text, p)
        return
    for ex in ("interpreter", "jit"):
        f = relay.create_executor(ex, mod=relay.parse(text)).evaluate()
        with pytest.raises(relay.EvalError, match=rf"value {bad} is out of range or repeated"):
            f(p)


@pytest.mark.parametrize(
    "equation, shapes",
    [
        ("ij,jk->ik", [(2, 3), (3, 4)]),
        ("bij,bjk->bik", [(2, 2, 3), (2, 3, 2)]),
        ("ii->i", [(3, 3)]),
        ("ii", [(3, 3)]),
        ("i,j->ij", [(3,), (2,)]),
        ("...ij,...jk->...ik", [(2, 1, 2, 3), (3, 3, 2)]),
        ("ij,ij,ij->", [(2, 3), (2, 3), (1, 3)]),
    ],
)
@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_einsum(equation, shapes, dtype):
    rng = np.random.default_rng(7)
    args = [random_array(rng, s, dtype) for s in shapes]
    params = ", ".join(f"%a{k}: {tensor(s, dtype)}" for k, s in enumerate(shapes))
    fields = ", ".join(f"%a{k}" for k in range(len(shapes)))
    text = f'def @main({params}) {{ einsum(({fields},), equation="{equation}") }}'
    check(text, *args, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    "shape, index_map",
    [
        ((8, 3), "lambda i, j: (i // 4, j, i % 4)"),
        ((4, 6), "lambda i, j: (j, i)"),
        ((2, 3, 4), "lambda a, b, c: (a * 3 + b, c - 2)"),
        ((5, 2), "lambda i, j: (i % 2, j)"),  # not a bijection: later elements win, gaps are 0
    ],
)
def test_meta_schedule_layout_transform(shape, index_map):
    x = random_array(np.random.default_rng(3), shape, "float32")
    check(f'def @main(%x: {tensor(shape, "float32")}) {{ meta_schedule_layout_transform(%x, index_map="{index_map}") }}', x)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_strided_set_with_python_slice_rules(data):
    rng = _rng(data)
    shape = shape_of(data, min_rank=1, max_rank=3)
    n = data.draw(st.integers(1, len(shape)))
    begin = [data.draw(st.integers(-6, 6)) for _ in range(n)]
    end = [data.draw(st.integers(-6, 6)) for _ in range(n)]
    steps = [data.draw(st.sampled_from([1, 2, -1, -3])) for _ in range(data.draw(st.integers(0, n)))]
    region = np.zeros(shape)[tuple(slice(b, e, s) for b, e, s in zip(begin, end, steps + [1] * n))].shape
    vshape = tuple(d if data.draw(st.booleans()) else 1 for d in region[data.draw(st.integers(0, len(shape))) :])
    x = random_array(rng, shape, "float32")
    v = random_array(rng, vshape, "float32")
    text = (
        f"def @main(%x: {tensor(shape, 'float32')}, %v: {tensor(vshape, 'float32')}, %b: {tensor((n,), 'int64')}, "
        f"%e: {tensor((n,), 'int32')}, %s: {tensor((len(steps),), 'int64')}) {{ strided_set(%x, %v, %b, %e, %s) }}"
    )
    check(text, x, v, np.array(begin, "int64"), np.array(end, "int32"), np.array(steps, "int64"))


@pytest.mark.parametrize(
    "v_shape, strides, message",
    [((3,), [1, 1], "axis 0 of v (3) does not broadcast to the 2 elements the slice has along axis 1"),
     ((1,), [1, 0], "strides must not be 0")],
)  # fmt: skip
def test_strided_set_errors_are_the_interpreters(v_shape, strides, message):
    text = (
        f"def @main(%x: Tensor[(4, 5), float32], %v: {tensor(v_shape, 'float32')}, %s: Tensor[(2), int32]) {{ "
        "strided_set(%x, %v, meta[relay.Constant][0], meta[relay.Constant][1], %s) }"
    )
    meta = {"relay.Constant": [relay.const(np.array([0, 1], "int32")), relay.const(np.array([2, 3], "int32"))]}
    for ex in ("interpreter", "jit"):
        f = relay.create_executor(ex, mod=relay.parse(text, init_meta_table=meta)).evaluate()
        with pytest.raises(relay.EvalError, match=re.escape(message)):
            f(np.zeros((4, 5), "float32"), np.ones(v_shape, "float32"), np.array(strides, "int32"))


@pytest.mark.parametrize(
    "prev, new, error",
    [
        ([4, 5], [2, -1, 5], None),
        ([4, 5], [20], None),
        ([2, 3, 4], [-1, 6], None),
        ([4, 5], [5, 0], "cannot reshape 20 elements into new_shape"),
        ([4, 5], [-1, 3], "cannot reshape 20 elements into new_shape"),
        ([4, 5], [-1, -1], "only one dimension of new_shape can be -1"),
    ],
)
def test_sparse_reshape(prev, new, error):
    rng = np.random.default_rng(2)
    idx = np.stack([rng.integers(0, d, 6) for d in prev], axis=1).astype("int64")
    text = (
        f"def @main(%i: Tensor[(6, {len(prev)}), int64], %p: Tensor[({len(prev)}), int64], "
        f"%n: Tensor[({len(new)}), int32]) {{ sparse_reshape(%i, %p, %n) }}"
    )
    args = (idx, np.array(prev, "int64"), np.array(new, "int32"))
    if error is None:
        check(text, *args)
        return
    for ex in ("interpreter", "jit"):
        with pytest.raises(relay.EvalError, match=re.escape(error)):
            relay.create_executor(ex, mod=relay.parse(text)).evaluate()(*args)


def test_einsum_fuses_with_elementwise_neighbours():
    """einsum is injective in TVM, so FuseOps groups it with its producers and consumers."""
    rng = np.random.default_rng(4)
    a, b = random_array(rng, (3, 4), "float32"), random_array(rng, (4, 2), "float32")
    text = (
        "def @main(%a: Tensor[(3, 4), float32], %b: Tensor[(4, 2), float32]) { "
        '%0 = einsum((exp(%a), %b), equation="ij,jk->ik"); negative(%0) }'
    )
    ex = check(text, a, b, rtol=1e-5, atol=1e-5)
    assert [k.ops for k in ex.kernels] == [["exp", "einsum", "negative"]]
