"""dft and stft: relations, values against direct sums (and TVM's documented example)."""

from __future__ import annotations

import cmath

import numpy as np
import pytest

import relay_nb as relay
from relay_nb.ir.ty import Any, TensorType, TupleType

try:
    from .ops_testing import check_roundtrip, check_type_error, evaluate, result_type
except ImportError:
    from ops_testing import check_roundtrip, check_type_error, evaluate, result_type


def T(shape, dtype="float32"):
    return TensorType(tuple(shape), dtype)


def test_relations():
    assert result_type(lambda a, b: relay.dft(a, b), ((2, 8), "float32"), ((2, 8), "float32")) == TupleType(
        (T((2, 8)), T((2, 8)))
    )
    window = relay.const(np.ones(4, "float32"))
    assert result_type(lambda x: relay.stft(x, 4, 2, 4, window), ((3, 10), "float32")) == T((3, 3, 4, 2))
    assert result_type(lambda x: relay.stft(x, 4, 2, 4, window, onesided=False), ((10,), "float32")) == T((4, 4, 2))
    assert result_type(lambda x: relay.stft(x, 4, 2, 4, window), ((Any,), "float32")) == T((3, Any, 2))


@pytest.mark.parametrize(
    "body,match",
    [
        ("dft(%x, %y)", "must have one shape"),
        ("stft(%x, %w, n_fft=4, hop_length=0, win_length=4)", "must be positive"),
        ("stft(%x, %w, n_fft=4, hop_length=1, win_length=3)", "window must have shape (3,)"),
        ("stft(%x, %w, n_fft=16, hop_length=1, win_length=4)", "shorter than n_fft 16"),
    ],
)
def test_relation_errors_are_located(body, match):
    text = "fn (%x: Tensor[(10), float32], %y: Tensor[(9), float32], %w: Tensor[(4), float32]) { " + body + " }"
    check_type_error(text, match)


@pytest.mark.parametrize("inverse", [False, True])
def test_dft_against_the_direct_sum(inverse):
    rng = np.random.default_rng(1)
    re, im = rng.normal(size=(2, 6)), rng.normal(size=(2, 6))
    got_re, got_im = evaluate(lambda a, b: relay.dft(a, b, inverse), re, im)
    sign = 1 if inverse else -1
    for b in range(2):
        for k in range(6):
            s = sum(complex(re[b, n], im[b, n]) * cmath.exp(sign * 2j * cmath.pi * k * n / 6) for n in range(6))
            s = s / 6 if inverse else s
            assert abs(got_re[b, k] - s.real) < 1e-9 and abs(got_im[b, k] - s.imag) < 1e-9


def test_stft_by_hand():
    """TVM's docstring example, worked by hand from its kernel (the docstring's printed
    numbers do not match its kernel): frames [1, 2, 3] and [4, 5, 6] weighted by
    [4, 3, 2] are [4, 6, 6] and [16, 15, 12]; row f sums them times exp(-2 pi i f w / 3)."""
    data = np.array([1, 2, 3, 4, 5, 6], "float32")
    window = relay.const(np.array([4, 3, 2], "float32"))
    got = evaluate(lambda x: relay.stft(x, 3, 3, 3, window, False, True), data)
    h = 3**0.5 / 2
    want = [[[16, 0], [43, 0]], [[4 - 6 * 0.5 - 6 * 0.5, -6 * h + 6 * h], [16 - 15 * 0.5 - 12 * 0.5, -15 * h + 12 * h]]]
    np.testing.assert_allclose(got, want, atol=1e-5)


def test_stft_batch_normalized_against_direct_sums():
    rng = np.random.default_rng(2)
    data = rng.normal(size=(2, 12)).astype("float32")
    win = rng.uniform(size=4).astype("float32")
    got = evaluate(lambda x: relay.stft(x, 4, 3, 4, relay.const(win), True, False), data)
    assert got.shape == (2, 4, 3, 2)
    for b in range(2):
        for f in range(4):
            for t in range(3):
                s = sum(win[w] * data[b, 3 * t + w] * cmath.exp(-2j * cmath.pi * f * w / 4) for w in range(4)) / 2
                np.testing.assert_allclose(got[b, f, t], [s.real, s.imag], atol=1e-5)


@pytest.mark.parametrize(
    "body",
    ["dft(%x, %x, inverse=True)", "stft(%x, %w, n_fft=4, hop_length=2, win_length=4, normalized=True, onesided=False)"],
)
def test_text_round_trip(body):
    text = '#[version = "0.0.5"]\ndef @main(%x: Tensor[(2, 10), float32], %w: Tensor[(4), float32]) { ' + body + " }"
    assert body in check_roundtrip(text)
