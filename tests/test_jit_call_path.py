"""The per-call path of compiled modules: data pointers read from the array object, the
executor's skip of argument conversion for exact matches, pooled result buffers.  Each
shortcut must give the interpreter's answers, keep every check (wrong shape, dtype or type
raises, strided and misaligned inputs are copied, not misread), and never hand out a
result buffer the caller still holds."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest

import relay_nb as relay
from relay_nb.backend.llvm import memory
from relay_nb.backend.llvm.address import address
from relay_nb.backend.llvm.executor import JITExecutor
from relay_nb.errors import RelayError


def slow(a: np.ndarray) -> int:
    return a.__array_interface__["data"][0]


class Sub(np.ndarray):
    """An ndarray subclass (takes the documented route)."""


def test_address_matches_the_array_interface_for_every_kind_of_array():
    base = np.arange(1000, dtype=np.float64)
    ro = np.ones(7, np.int8)
    ro.flags.writeable = False
    arrays = [base, base[3:], base[::-2], base.reshape(10, 100)[:, 7:], base.reshape(10, 100).T, np.array(2.5),
              np.empty(0, np.float32), ro, np.frombuffer(bytearray(16), np.uint8)[1:],
              np.eye(3).view(Sub), np.zeros((2, 3), order="F")]  # fmt: skip
    for a in arrays:
        assert address(a) == slow(a), a


def test_address_of_a_raw_ctypes_buffer_view():
    buf = (ctypes.c_float * 8)()
    a = np.ctypeslib.as_array(buf)
    assert address(a) == ctypes.addressof(buf)


DENSE = """def @main(%x: Tensor[(1, 37), float32], %w: Tensor[(11, 37), float32], %b: Tensor[(11), float32]) {
  nn.relu(nn.bias_add(nn.dense(%x, %w), %b))
}"""


def test_strided_offset_and_misaligned_inputs_are_copied_not_misread():
    rng = np.random.default_rng(0)
    lib = relay.build(relay.parse(DENSE))
    ref = relay.create_executor("interpreter", mod=relay.parse(DENSE)).evaluate()
    x, w, b = rng.standard_normal((1, 37)), rng.standard_normal((11, 37)), rng.standard_normal(11)
    x, w, b = (a.astype("float32") for a in (x, w, b))
    expected = ref(x, w, b)
    np.testing.assert_allclose(lib(x, w, b), expected, rtol=1e-5, atol=1e-6)
    wide = np.zeros((22, 74), "float32")
    wide[::2, ::2] = w  # a strided view
    np.testing.assert_allclose(lib(x, wide[::2, ::2], b), expected, rtol=1e-5, atol=1e-6)
    reversed_b = b[::-1].copy()[::-1]  # negative strides
    np.testing.assert_allclose(lib(x, w, reversed_b), expected, rtol=1e-5, atol=1e-6)
    raw = np.zeros(37 * 4 + 1, np.uint8)
    odd = raw[1:].view("float32").reshape(1, 37)  # misaligned by one byte
    odd[...] = x
    assert not odd.flags.aligned
    np.testing.assert_allclose(lib(odd, w, b), expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(lib(np.asfortranarray(x), np.asfortranarray(w), b), expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    "args",
    [
        lambda x, w, b: (x.astype("float64"), w, b),  # dtype
        lambda x, w, b: (x.reshape(37, 1), w, b),  # shape
        lambda x, w, b: (x, w[:10], b),  # shape
        lambda x, w, b: (x, w, "b"),  # type
        lambda x, w, b: (x, w),  # count
    ],
)
def test_wrong_arguments_still_raise(args):
    lib = relay.build(relay.parse(DENSE))
    x, w, b = np.ones((1, 37), "float32"), np.ones((11, 37), "float32"), np.ones(11, "float32")
    with pytest.raises(RelayError):
        lib(*args(x, w, b))


def test_non_array_arguments_still_go_through_conversion():
    lib = relay.build(relay.parse(DENSE))
    x, w = np.ones((1, 37), "float32"), np.ones((11, 37), "float32")
    np.testing.assert_allclose(lib(x, w, [1.0] * 11), np.full((1, 11), 38.0, "float32"))


BIG = 1 << 19  # float32 elements: 2 MB, above memory.MIN_BYTES, so results come from the pool


def test_a_pooled_result_the_caller_holds_is_never_overwritten():
    assert BIG * 4 >= memory.MIN_BYTES
    lib = relay.build(relay.parse(f"def @main(%x: Tensor[({BIG}), float32]) {{ add(%x, 1f) }}"))
    first = lib(np.zeros(BIG, "float32"))
    second = lib(np.full(BIG, 5.0, "float32"))
    view = second[10:20]  # only a view of the second result survives
    del second
    third = lib(np.full(BIG, 7.0, "float32"))
    assert (first == 1.0).all() and (view == 6.0).all() and (third == 8.0).all()
    assert slow(third) != slow(first) and not np.shares_memory(third, view)


def test_a_dropped_result_is_reused():
    lib = relay.build(relay.parse(f"def @main(%x: Tensor[({BIG}), float32]) {{ multiply(%x, 2f) }}"))
    x = np.arange(BIG, dtype="float32")
    seen = set()
    for _ in range(4):
        out = lib(x)
        np.testing.assert_array_equal(out, x * 2)
        seen.add(slow(out))
        del out
    assert len(seen) == 1  # nobody held it: the same buffer every call, no fresh page faults


def at_phase(values: np.ndarray, phase: int) -> np.ndarray:
    """A copy of ``values`` whose data starts ``phase`` bytes past a 64-byte boundary."""
    raw = np.empty(values.nbytes + 128, np.uint8)
    start = (phase - slow(raw)) % 64
    out = raw[start : start + values.nbytes].view(values.dtype).reshape(values.shape)
    out[...] = values
    return out


@pytest.mark.parametrize("n", [BIG, BIG + 3, BIG + 17])
@pytest.mark.parametrize("phase", [0, 4, 16, 60])
def test_large_results_take_their_inputs_phase_and_the_peel_is_exact(n, phase):
    """Whatever the input's alignment, the kernel peels up to the output's cache line, and
    the whole result equals the interpreter's (sizes not a multiple of any vector width)."""
    text = f"def @main(%x: Tensor[({n}), float32], %y: Tensor[({n}), float32]) {{ subtract(multiply(exp(%x), %y), %x) }}"
    rng = np.random.default_rng(n + phase)
    x = at_phase(rng.standard_normal(n).astype("float32"), phase)
    y = at_phase(rng.standard_normal(n).astype("float32"), (phase + 8) % 64)
    expected = relay.create_executor("interpreter", mod=relay.parse(text)).evaluate()(x, y)
    planned = relay.build(relay.parse(text))(x, y)
    interpreted = JITExecutor(relay.parse(text), plans=False).evaluate()(x, y)  # Kernel.__call__
    for out in (planned, interpreted):
        assert slow(out) % 64 == phase  # the first input's phase
        np.testing.assert_allclose(out, expected, rtol=2e-6, atol=1e-6)


def test_the_peel_covers_every_dtype_and_a_broadcast_result():
    n = (1 << 20) + 5  # int8 / bool results of 1 MB and more
    text = f"def @main(%x: Tensor[({n}), int8], %s: Tensor[(1), int8]) {{ (add(%x, %s), greater(%x, 0i8)) }}"
    x = at_phase(np.arange(n, dtype=np.int64).astype(np.int8), 3)
    s = np.array([7], np.int8)
    total, positive = relay.build(relay.parse(text))(x, s)
    np.testing.assert_array_equal(total, x + s)
    np.testing.assert_array_equal(positive, x > 0)
    assert slow(total) % 64 == 3


def test_results_of_anchor_kernels_stay_on_cache_lines():
    """Only peeled elementwise loops take an input's phase; a GEMM's result (1 MB, the size
    of its misaligned input) stays 64-byte aligned for the tiled kernel's stores."""
    text = "def @main(%x: Tensor[(512, 512), float32], %w: Tensor[(512, 512), float32]) { nn.relu(nn.dense(%x, %w)) }"
    rng = np.random.default_rng(5)
    x = at_phase(rng.standard_normal((512, 512)).astype("float32"), 16)
    w = rng.standard_normal((512, 512)).astype("float32")
    (kernel,) = relay.build(relay.parse(text)).kernels
    assert [source for *_, source in kernel._out_specs] == [-1]
    out = relay.build(relay.parse(text))(x, w)
    assert slow(out) % 64 == 0
    np.testing.assert_allclose(out, np.maximum(x @ w.T, 0), rtol=1e-4, atol=1e-3)


def test_the_fields_of_a_tuple_argument_are_checked_before_the_kernel_reads_them():
    lib = relay.build(relay.parse(
        "def @main(%t: (Tensor[(100000), float32], Tensor[(100000), float32])) { add(%t.0, %t.1) }"
    ))
    ones = np.ones(100000, "float32")
    np.testing.assert_array_equal(lib((ones, ones)), ones * 2)
    for bad in [(ones[:3], ones[:3]), (ones.astype("float64"), ones), (ones, ones.reshape(1000, 100))]:
        with pytest.raises(RelayError, match="tuple argument"):
            lib(bad)
    with pytest.raises(RelayError):
        lib((ones,))


@pytest.mark.parametrize("phase", [0, 1, 3, 4, 17, 60])
def test_a_pooled_result_takes_an_input_phase_only_as_far_as_its_items_stay_aligned(phase):
    """An int8 input may sit at any address; a float32 result given its phase must still
    start on a 4-byte boundary (an unaligned result would be copied by every later call)."""
    for dtype in ("float32", "float64", "int8"):
        itemsize = np.dtype(dtype).itemsize
        a = memory.empty((memory.MIN_BYTES // itemsize,), dtype, phase=phase)
        assert a.flags.aligned and a.flags.c_contiguous
        assert a.ctypes.data % 64 == phase - phase % itemsize
