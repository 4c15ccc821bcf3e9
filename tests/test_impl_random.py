"""random.*: Threefry-4x64 against the Random123 known-answer vectors, TVM's generator state
rules, and the distributions (determinism, ranges, rough uniformity, moments)."""

from __future__ import annotations

import struct

import numpy as np
import pytest

import relay_nb as relay
from relay_nb.op.impl.random import threefry4x64

rnd = relay.random
ONES = (1 << 64) - 1
PARITY = 0x1BD11BDAA9FC1A22

# Random123's kat_vectors for threefry4x64_20: (counter, key, output).
KAT = [
    (
        [0] * 4,
        [0] * 4,
        [0x09218EBDE6C85537, 0x55941F5266D86105, 0x4BD25E16282434DC, 0xEE29EC846BD2E40B],
    ),
    (
        [ONES] * 4,
        [ONES] * 4,
        [0x29C24097942BBA1B, 0x0371BBFB0F6F4E11, 0x3C231FFA33F83A1C, 0xCD29113FDE32D168],
    ),
    (
        [0x243F6A8885A308D3, 0x13198A2E03707344, 0xA4093822299F31D0, 0x082EFA98EC4E6C89],
        [0x452821E638D01377, 0xBE5466CF34E90C6C, 0xBE5466CF34E90C6C, 0xC0AC29B7C97C50DD],
        [0xA7E8FDE591651BD9, 0xBAAFD0C30138319B, 0x84A5C1A729E685B9, 0x901D406CCEBC1BA4],
    ),
]


@pytest.mark.parametrize("ctr, key, expected", KAT)
def test_threefry4x64_20_known_answers(ctr, key, expected):
    got = threefry4x64(np.array(key, "uint64"), np.array([ctr], "uint64"), final_injection=True)
    assert [int(v) for v in got[0]] == expected


@pytest.mark.parametrize("ctr, key, expected", KAT)
def test_tvm_variant_is_the_cipher_without_its_final_key_injection(ctr, key, expected):
    # topi.random runs 5 groups of (inject, 4 rounds) and stops: the standard sixth injection
    # k[(5 + j) % 5] (+ 5 on the last word) is missing.
    schedule = key + [PARITY ^ key[0] ^ key[1] ^ key[2] ^ key[3]]
    final = [schedule[j] for j in range(4)]
    final[3] += 5
    want = [(e - f) % (1 << 64) for e, f in zip(expected, final)]
    got = threefry4x64(np.array(key, "uint64"), np.array([ctr], "uint64"))
    assert [int(v) for v in got[0]] == want


def run(expr):
    expr = expr.astuple() if isinstance(expr, relay.TupleWrapper) else expr
    mod = relay.transform.InferType()(relay.IRModule.from_expr(relay.Function([], expr)))
    return relay.create_executor("interpreter", mod=mod).evaluate()()


def generate(key, shape):
    return run(rnd.threefry_generate(key, shape))


def key_of(words):
    return relay.const(np.array(words, "uint64"))


def test_threefry_key_layout():
    k = rnd.threefry_key(0).data
    assert k.dtype == np.uint64 and k.tolist() == [0, 0, 0, 0, 0, 0, 0, 0, 1 << 63, 0]
    assert rnd.threefry_key(5).data[0] == 5


def test_generate_known_answer_from_key_zero():
    new_key, bits = generate(rnd.threefry_key(0), (4,))
    # the first counter block is (path, counter) = 0: the zero-key KAT without its final injection
    assert bits.tolist() == [
        0x09218EBDE6C85537,
        0x55941F5266D86105,
        0x4BD25E16282434DC,
        0xEE29EC846BD2E40B - 5,
    ]
    assert new_key.tolist() == [0, 0, 0, 0, 0, 0, 0, 4, 1 << 63, 0]


def test_generate_blocks_and_remainder_use_tvm_counters():
    zero = np.zeros(4, "uint64")
    _, eight = generate(rnd.threefry_key(0), (2, 4))
    # block i encrypts (path, counter) + i, i added to all four words, as topi does
    assert (
        eight.reshape(-1)[4:].tolist() == threefry4x64(zero, np.ones((1, 4), "uint64"))[0].tolist()
    )
    new_key, seven = generate(rnd.threefry_key(0), (7,))
    assert seven[:4].tolist() == eight.reshape(-1)[:4].tolist()
    # the last partial block bumps the counter word by the whole blocks done (4)
    partial = threefry4x64(zero, np.array([[0, 0, 0, 4]], "uint64"))[0]
    assert seven[4:].tolist() == partial[:3].tolist()
    assert new_key[7] == 8


def test_determinism_and_sequential_keys():
    a = generate(rnd.threefry_key(1), (12,))
    b = generate(rnd.threefry_key(1), (12,))
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
    k, first = relay.TupleWrapper(rnd.threefry_generate(rnd.threefry_key(1), (7,)), 2)
    _, second = relay.TupleWrapper(rnd.threefry_generate(k, (7,)), 2)
    x, y = run(relay.Tuple([first, second]))
    assert (x != y).all()


def test_split_keys_differ_and_follow_the_path_rules():
    left, right = run(rnd.threefry_split(rnd.threefry_key(1)))
    assert left.tolist() == [1, 0, 0, 0, 0, 0, 0, 0, 1 << 62, 0]
    assert right.tolist() == [1, 0, 0, 0, 1 << 63, 0, 0, 0, 1 << 62, 0]
    l, r = relay.TupleWrapper(rnd.threefry_split(rnd.threefry_key(1)), 2)
    a = relay.TupleWrapper(rnd.threefry_generate(l, (16,)), 2)[1]
    b = relay.TupleWrapper(rnd.threefry_generate(r, (16,)), 2)[1]
    x, y = run(relay.Tuple([a, b]))
    assert (x != y).all()


def test_split_with_a_full_path_derives_a_new_key():
    words = [1, 2, 3, 4, 5, 6, 7, 8, 0, 0]
    left, right = run(rnd.threefry_split(key_of(words)))
    fresh = threefry4x64(np.array(words[:4], "uint64"), np.array([words[4:8]], "uint64"))[
        0
    ].tolist()
    assert left.tolist() == fresh + [0, 0, 0, 0, 1 << 62, 0]
    assert right.tolist() == fresh + [1 << 63, 0, 0, 0, 1 << 62, 0]


def test_generate_past_the_counter_limit():
    # the counter would overflow: a 1 is appended to the path and the counter restarts
    new_key, _ = generate(key_of([0, 0, 0, 0, 0, 0, 0, ONES - 1, 1 << 63, 0]), (2048,))
    assert new_key[4] == 1 << 63 and new_key[7] == 2048 and new_key[8] == 1 << 62
    # ... and with no room left in the path, the key itself changes
    new_key, _ = generate(key_of([0, 0, 0, 0, 0, 0, 0, ONES - 1, 0, 0]), (2048,))
    assert new_key[:4].tolist() != [0, 0, 0, 0] and new_key[8] == 1 << 63


def _f32_from_bits(word: int) -> float:
    mantissa = ((word & 0xFFFFFFFF) >> 9) | (127 << 23)
    return struct.unpack("<f", struct.pack("<I", mantissa))[0] - 1.0


def test_uniform_values_from_the_bits():
    _, bits = generate(rnd.threefry_key(3), (5,))
    _, u = run(rnd.uniform(rnd.threefry_key(3), (5,), low=-2.0, high=6.0))
    want = [np.float32(_f32_from_bits(int(b))) * np.float32(8) - np.float32(2) for b in bits]
    assert u.dtype == np.float32 and u.tolist() == [float(w) for w in want]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_uniform_is_in_range_and_roughly_uniform(dtype):
    _, u = run(rnd.uniform(rnd.threefry_key(7), (20000,), dtype=dtype, low=1.0, high=3.0))
    assert u.dtype == np.dtype(dtype) and u.min() >= 1.0 and u.max() < 3.0
    counts = np.histogram(u, bins=10, range=(1.0, 3.0))[0]
    chi2 = ((counts - 2000) ** 2 / 2000).sum()
    assert chi2 < 30  # 9 degrees of freedom: p < 0.001 above 27.9
    assert abs(u.mean() - 2.0) < 0.02


def test_normal_moments():
    _, x = run(rnd.normal(rnd.threefry_key(11), (20000,), mean=3.0, scale=2.0))
    assert x.dtype == np.float32 and x.shape == (20000,)
    assert abs(x.mean() - 3.0) < 0.06 and abs(x.std() - 2.0) < 0.06
    assert abs(np.mean(np.abs(x - 3.0) < 2.0) - 0.6827) < 0.015  # within one sigma


def test_multinomial():
    probs = relay.const(np.array([[0.0, 1.0, 0.0], [1.0, -5.0, 3.0]], "float32"))
    _, idx = run(rnd.multinomial(rnd.threefry_key(2), probs, 4000))
    assert idx.dtype == np.int32 and idx.shape == (2, 4000)
    assert (idx[0] == 1).all()
    assert set(idx[1].tolist()) <= {0, 2}  # the negative weight counts as 0
    assert abs((idx[1] == 2).mean() - 0.75) < 0.03
