"""Property tests: the injective ops (index maps) with random attributes — transpose,
reshape family, strided_slice, take (all modes, batch_dims), concatenate, stack, split,
pad (all modes), tile, repeat, reverse, broadcast_to, layout_transform — agree exactly
with the interpreter."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jit_testing import check, compares, random_array, tensor

import relay_nb as relay

PROPS = settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _rng(data) -> np.random.Generator:
    return np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))


def shape_of(data, min_rank=1, max_rank=4, lo=1):
    rank = data.draw(st.integers(min_rank, max_rank))
    return tuple(data.draw(st.lists(st.integers(lo, 4), min_size=rank, max_size=rank)))


def ints(values) -> str:
    return "[" + ", ".join(str(int(v)) for v in values) + "]"


@PROPS
@given(data=st.data())
def test_transpose_and_reverse(data):
    shape = shape_of(data)
    perm = data.draw(st.permutations(range(len(shape))))
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    x = random_array(_rng(data), shape, "int32")
    check(f"def @main(%x: {tensor(shape, 'int32')}) {{ (transpose(%x, axes={ints(perm)}), transpose(%x), reverse(%x, axis={axis})) }}", x)


@PROPS
@given(data=st.data())
def test_reshape_squeeze_expand_dims_flatten(data):
    shape = shape_of(data, lo=0)
    total = int(np.prod(shape))
    x = random_array(_rng(data), shape, "float32")
    newshape = "[-1]" if total == 0 else ints([total // shape[0], -1]) if shape[0] else "[-1]"
    ax = data.draw(st.integers(-len(shape) - 1, len(shape)))
    text = (
        f"def @main(%x: {tensor(shape, 'float32')}) {{ (reshape(%x, newshape={newshape}), "
        f"expand_dims(%x, axis={ax}, num_newaxis=2), squeeze(expand_dims(%x, axis=0)), nn.batch_flatten(%x)) }}"
    )
    check(text, x)


@compares(PROPS.max_examples)
@PROPS
@given(data=st.data())
def test_strided_slice_with_negative_strides_and_clamping(data):
    """Nonzero strides and at most ``rank`` entries: every drawn slice is well-typed (empty
    ones included), so every example runs; the rejected ones have their own test below."""
    shape = shape_of(data)
    rank = len(shape)
    n = data.draw(st.integers(1, rank))
    begin = [data.draw(st.integers(-6, 6)) for _ in range(n)]
    end = [data.draw(st.integers(-6, 6)) for _ in range(n)]
    strides = [data.draw(st.sampled_from([1, 2, -1, -2, 3])) for _ in range(n)]
    x = random_array(_rng(data), shape, "int16")
    text = f"def @main(%x: {tensor(shape, 'int16')}) {{ strided_slice(%x, begin={ints(begin)}, end={ints(end)}, strides={ints(strides)}) }}"
    check(text, x)
    expected = x[tuple(slice(b, e, st_) for b, e, st_ in zip(begin, end, strides))].shape
    typed = relay.transform.InferType()(relay.parse(text))["main"].checked_type.ret_type
    assert tuple(typed.shape) == expected  # the relation slices as numpy does


@pytest.mark.parametrize(
    "attrs, message",
    [
        ("begin=[0], end=[2], strides=[0]", "stride"),
        ("begin=[0, 0, 0], end=[1, 1, 1], strides=[1]", "rank"),
        ("begin=[0], end=[2], strides=[1], axes=[0, 1]", "same length"),
        ('begin=[0], end=[2], slice_mode="middle"', "slice_mode"),
    ],
)
def test_strided_slice_rejects_zero_strides_and_extra_entries(attrs, message):
    text = f"def @main(%x: Tensor[(3, 4), int16]) {{ strided_slice(%x, {attrs}) }}"
    with pytest.raises(relay.RelayError, match=message):
        relay.transform.InferType()(relay.parse(text))


@PROPS
@given(data=st.data())
def test_strided_slice_size_mode_and_axes(data):
    shape = shape_of(data, min_rank=2)
    x = random_array(_rng(data), shape, "float32")
    check(f"def @main(%x: {tensor(shape, 'float32')}) {{ strided_slice(%x, begin=[0, 1], end=[1, -1], slice_mode=\"size\") }}", x)
    check(f"def @main(%x: {tensor(shape, 'float32')}) {{ strided_slice(%x, begin=[1], end=[4], axes=[1]) }}", x)


@pytest.mark.parametrize("mode", ["clip", "wrap", "fast"])
@PROPS
@given(data=st.data())
def test_take_in_every_mode(mode, data):
    shape = shape_of(data)
    rng = _rng(data)
    axis = data.draw(st.one_of(st.none(), st.integers(-len(shape), len(shape) - 1)))
    n = int(np.prod(shape)) if axis is None else shape[axis]
    ishape = shape_of(data, min_rank=0, max_rank=2)
    lo, hi = (0, n - 1) if mode == "fast" else (-2 * n - 1, 2 * n + 1)
    idx = rng.integers(lo, hi, size=ishape, endpoint=True).astype(data.draw(st.sampled_from(["int32", "int64", "uint8"]) if lo >= 0 else st.sampled_from(["int32", "int64"])))
    x = random_array(rng, shape, "float32")
    attr = "" if axis is None else f", axis={axis}"
    check(f'def @main(%x: {tensor(shape, "float32")}, %i: {tensor(ishape, idx.dtype.name)}) {{ take(%x, %i{attr}, mode="{mode}") }}', x, idx)


@PROPS
@given(data=st.data())
def test_take_with_batch_dims(data):
    b, n, k = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 4)), data.draw(st.integers(1, 3))
    rng = _rng(data)
    x = random_array(rng, (b, n, 2), "int32")
    idx = rng.integers(-1, n + 1, size=(b, k)).astype("int32")
    check(f"def @main(%x: Tensor[({b}, {n}, 2), int32], %i: Tensor[({b}, {k}), int32]) {{ take(%x, %i, axis=1, batch_dims=1) }}", x, idx)


@PROPS
@given(data=st.data())
def test_concatenate_stack_split(data):
    shape = shape_of(data)
    rank = len(shape)
    axis = data.draw(st.integers(-rank, rank - 1))
    k = data.draw(st.integers(1, 4))
    rng = _rng(data)
    shapes = []
    for _ in range(k):
        s = list(shape)
        s[axis] = data.draw(st.integers(0, 3))
        shapes.append(tuple(s))
    xs = [random_array(rng, s, "int32") for s in shapes]
    params = ", ".join(f"%x{i}: {tensor(s, 'int32')}" for i, s in enumerate(shapes))
    fields = ", ".join(f"%x{i}" for i in range(k)) + ("," if k == 1 else "")
    # all parts empty: the JIT leaves the (empty) result to numpy, so it is not native
    native = sum(s[axis] for s in shapes) > 0
    check(f"def @main({params}) {{ concatenate(({fields}), axis={axis}) }}", *xs, native=native)
    same = [random_array(rng, shape, "int32") for _ in range(k)]
    sparams = ", ".join(f"%x{i}: {tensor(shape, 'int32')}" for i in range(k))
    sax = data.draw(st.integers(-rank - 1, rank))
    check(f"def @main({sparams}) {{ stack(({fields}), axis={sax}) }}", *same)
    big = random_array(rng, tuple(d * 2 if i == (axis % rank) else d for i, d in enumerate(shape)), "int32")
    check(f"def @main(%x: {tensor(big.shape, 'int32')}) {{ split(%x, indices_or_sections=2, axis={axis}) }}", big)


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect"])
@PROPS
@given(data=st.data())
def test_pad(mode, data):
    shape = shape_of(data, max_rank=3, lo=2 if mode == "reflect" else 1)
    widths = [[data.draw(st.integers(0, d - 1 if mode == "reflect" else 3)) for _ in range(2)] for d in shape]
    rng = _rng(data)
    x = random_array(rng, shape, "float32")
    pw = "[" + ", ".join(ints(w) for w in widths) + "]"
    check(f'def @main(%x: {tensor(shape, "float32")}, %v: float32) {{ nn.pad(%x, %v, pad_width={pw}, pad_mode="{mode}") }}', x, np.float32(2.5))


@PROPS
@given(data=st.data())
def test_tile_repeat_broadcast_to(data):
    shape = shape_of(data, max_rank=3)
    reps = [data.draw(st.integers(1, 3)) for _ in range(data.draw(st.integers(1, 4)))]
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    target = (2,) + tuple(d if data.draw(st.booleans()) else d for d in shape)
    x = random_array(_rng(data), shape, "uint8")
    text = (
        f"def @main(%x: {tensor(shape, 'uint8')}) {{ (tile(%x, reps={ints(reps)}), repeat(%x, repeats=3, axis={axis}), "
        f"broadcast_to(%x, shape={ints(target)})) }}"
    )
    check(text, x)


def test_layout_transform_packs_and_unpacks_channels():
    x = np.arange(2 * 8 * 3 * 5, dtype="float32").reshape(2, 8, 3, 5)
    check('def @main(%x: Tensor[(2, 8, 3, 5), float32]) { layout_transform(%x, src_layout="NCHW", dst_layout="NHWC") }', x)
    check(
        'def @main(%x: Tensor[(2, 8, 3, 5), float32]) { %0 = layout_transform(%x, src_layout="NCHW", dst_layout="NCHW4c");'
        ' layout_transform(%0, src_layout="NCHW4c", dst_layout="NHWC2c") }',
        x,
    )


def test_dropout_is_the_identity_with_a_mask_of_ones():
    x = np.arange(6, dtype="float32").reshape(2, 3)
    check("def @main(%x: Tensor[(2, 3), float32]) { nn.dropout(%x) }", x)


def test_injective_chain_with_an_elementwise_tail_is_one_kernel():
    x = np.arange(24, dtype="float32").reshape(2, 3, 4)
    text = """def @main(%x: Tensor[(2, 3, 4), float32]) {
      %0 = transpose(%x, axes=[2, 0, 1]);
      %1 = reshape(%0, newshape=[4, 6]);
      %2 = strided_slice(%1, begin=[1, 0], end=[4, 6], strides=[2, 1]);
      exp(%2)
    }"""
    ex = check(text, x, rtol=1e-5)
    assert len(ex.kernels) == 1 and ex.kernels[0].ops == ["transpose", "reshape", "strided_slice", "exp"]


@PROPS
@given(data=st.data())
def test_like_ops_take_their_shape_or_dtype_from_the_second_argument(data):
    shape = shape_of(data, max_rank=3)
    target = (2,) + shape
    rng = _rng(data)
    x = random_array(rng, shape, "int16")
    like = random_array(rng, target, "float32")
    flat = (int(np.prod(shape)),)
    text = (
        f"def @main(%x: {tensor(shape, 'int16')}, %l: {tensor(target, 'float32')}, %f: {tensor(flat, 'uint8')}) "
        "{ (broadcast_to_like(%x, %l), cast_like(%x, %l), reshape_like(%f, %x)) }"
    )
    check(text, x, like, random_array(rng, flat, "uint8"))
