"""numpy implementations of the ``random.*`` operators: TVM's Threefry, word for word.

**Threefry-4x64** (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC 2011)
encrypts a 256-bit counter under a 256-bit key with 20 rounds of add-rotate-xor ``mix``
(the Threefish rotation constants) and a word permutation, injecting the key schedule
``k[(s + j) % 5]`` (``k[4] = 0x1BD11BDAA9FC1A22 ^ k0 ^ k1 ^ k2 ^ k3``, plus ``s`` on the
last word) before every group of 4 rounds.  TVM's ``topi.random`` stops after the 20th
round: it omits the final (sixth) key injection of the standard cipher.  ``threefry4x64``
implements both; ``final_injection=True`` reproduces the Random123 known-answer vectors,
and the ops use TVM's variant, so their bits are TVM's.

**The key** (``Tensor[(10), uint64]``): words 0-3 the Threefry key, 4-5 a 128-bit *path*,
6-7 the counter (only word 7 counts), 8-9 a single bit marking the next free path position.
``threefry_generate`` encrypts the counter blocks ``[path, counter] + i`` (TVM adds ``i``
to all four words) and advances the counter; when the counter would overflow it extends
the path (or, with the path full, derives a new key).  ``threefry_split`` appends a 0 (left)
or 1 (right) to the path, or derives a new key when the path is full.

Defined behaviour: TVM's path-full branch of ``threefry_generate`` encrypts a 2-word
counter buffer as if it had 4 words (reading past its end); here those words are all ones.
"""

from __future__ import annotations

import math

import numpy as np

from ...errors import EvalError
from ._util import impl

U64 = np.uint64
MASK = (1 << 64) - 1
PARITY = 0x1BD11BDAA9FC1A22
ROTATIONS = [(14, 16), (52, 57), (23, 40), (5, 37), (25, 33), (46, 12), (58, 22), (32, 32)]
PERMUTATION = [0, 3, 2, 1]


def _rotl(x: np.ndarray, r: int) -> np.ndarray:
    return (x << U64(r)) | (x >> U64(64 - r))


def threefry4x64(key, counters, final_injection: bool = False) -> np.ndarray:
    """Encrypt ``counters`` (n, 4) under ``key`` (4,) with 20 rounds; (n, 4) uint64."""
    k = [int(w) for w in np.asarray(key, U64).reshape(4)]
    schedule = k + [PARITY ^ k[0] ^ k[1] ^ k[2] ^ k[3]]
    x = [np.array(col, U64) for col in np.asarray(counters, U64).reshape(-1, 4).T]

    def inject(s):
        for j in range(4):
            x[j] = x[j] + U64((schedule[(s + j) % 5] + (s if j == 3 else 0)) & MASK)

    with np.errstate(over="ignore"):
        for s in range(5):
            inject(s)
            for r in range(4):
                rot = ROTATIONS[(s * 4 + r) % 8]
                for j in range(2):  # mix the pairs (0, 1) and (2, 3)
                    a, b = x[2 * j], x[2 * j + 1]
                    a = a + b
                    x[2 * j], x[2 * j + 1] = a, _rotl(b, rot[j]) ^ a
                x = [x[p] for p in PERMUTATION]
        if final_injection:
            inject(5)
    return np.stack(x, axis=1)


def _blocks(key_state: np.ndarray, n: int) -> np.ndarray:
    """TVM's _threefry over ``n`` counter blocks ``state[4:8] + i``: (n * 4,) uint64."""
    base = key_state[4:8].astype(U64)
    with np.errstate(over="ignore"):
        counters = base[None, :] + np.arange(n, dtype=U64)[:, None]
    return threefry4x64(key_state[:4], counters).reshape(-1)


def _shift_right(a: int, b: int) -> tuple[int, int]:
    """The 128-bit path marker ``(a, b)`` moved one bit right."""
    if a == 1:
        return 0, 1 << 63
    if a == 0:
        return 0, b >> 1
    return a >> 1, 0


def threefry_generate(key: np.ndarray, shape) -> tuple[np.ndarray, np.ndarray]:
    """TVM's topi.random.threefry_generate: (new key, uint64 bits of ``shape``)."""
    gen = [int(w) for w in np.asarray(key, U64).reshape(-1)]
    if len(gen) != 10:
        raise EvalError(f"a threefry key has 10 words, got {len(gen)}")
    n = math.prod(shape)
    if n > MASK:
        raise EvalError(f"can only generate up to 2^64 random numbers, but {n} were requested")
    if gen[7] < MASK - n:
        tmp = list(gen)
    elif gen[8] == 0 and gen[9] == 0:  # no room in the path: a new key from this one
        fresh = threefry4x64(gen[:4], np.full((1, 4), MASK, U64))[0]
        tmp = [int(w) for w in fresh] + [0, 0, 0, 0, 1 << 63, 0]
    else:  # extend the path with a 1, reset the counter
        tmp = gen[:4] + [gen[4] | gen[8], gen[5] | gen[9], 0, 0, *_shift_right(gen[8], gen[9])]
    state = np.array(tmp, U64)
    out = np.empty(n, U64)
    full = n // 4 * 4
    if full:
        out[:full] = _blocks(state, n // 4)
    if n % 4:
        tmp[7] = (tmp[7] + full) & MASK
        state = np.array(tmp, U64)
        out[full:] = _blocks(state, 1)[: n % 4]
    new = tmp[:6] + [0, (tmp[7] + (4 if n % 4 else n)) & MASK, tmp[8], tmp[9]]
    return np.array(new, U64), out.reshape(tuple(shape))


def threefry_split(key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """TVM's topi.random.threefry_split: (left key, right key)."""
    gen = [int(w) for w in np.asarray(key, U64).reshape(-1)]
    if len(gen) != 10:
        raise EvalError(f"a threefry key has 10 words, got {len(gen)}")
    if gen[8] == 0 and gen[9] == 0:  # the path is full: derive a new key from the whole state
        fresh = [int(w) for w in threefry4x64(gen[:4], np.array([gen[4:8]], U64))[0]]
        left = fresh + [0, 0, 0, 0, 1 << 62, 0]
        right = fresh + [1 << 63, 0, 0, 0, 1 << 62, 0]
    else:
        marker = list(_shift_right(gen[8], gen[9]))
        left = gen[:8] + marker
        right = gen[:4] + [gen[4] | gen[8], gen[5] | gen[9], gen[6], gen[7]] + marker
    return np.array(left, U64), np.array(right, U64)


def uniform_bits(bits: np.ndarray, dtype) -> np.ndarray:
    """Standard uniform [0, 1) values from random bits, as TVM: the top 23 (float32; of the
    low 32 bits) or 52 (float64) bits as the mantissa of a number in [1, 2), minus 1."""
    if np.dtype(dtype) == np.float32:
        mantissa = (bits.astype(np.uint32) >> np.uint32(9)) | np.uint32(127 << 23)
        return mantissa.view(np.float32) - np.float32(1)
    mantissa = (bits >> U64(12)) | U64(1023 << 52)
    return mantissa.view(np.float64) - np.float64(1)


def uniform(key, low, high, shape, dtype):
    new_key, bits = threefry_generate(key, shape)
    dt = np.dtype(dtype)
    values = uniform_bits(bits, dt) * (dt.type(high) - dt.type(low)) + dt.type(low)
    return new_key, values.astype(dt)


def normal(key, mean, scale, shape, dtype):
    """Box-Muller, as TVM: ``sqrt(-2 log(1 - u1)) * sin(2 pi u2) * scale + mean`` with
    ``(u1, u2)`` drawn as one uniform tensor of shape ``(2, *shape)``."""
    dt = np.dtype(dtype)
    new_key, u = uniform(key, 0.0, 1.0, (2, *shape), dt)
    radius = np.sqrt(dt.type(-2) * np.log(dt.type(1) - u[0]))
    values = radius * np.sin(dt.type(2 * math.pi) * u[1]) * dt.type(scale) + dt.type(mean)
    return new_key, values.astype(dt)


def multinomial(key, probs, num_samples):
    """TVM's inverse-CDF sampling: the first index whose cumulative probability exceeds a
    uniform draw (0 when rounding leaves none)."""
    p = np.maximum(np.asarray(probs, np.float32), np.float32(0))
    p = p / p.sum(axis=-1, keepdims=True)
    cdf = np.cumsum(p, axis=-1, dtype=np.float32)
    new_key, u = uniform(key, 0.0, 1.0, (*p.shape[:-1], num_samples), np.float32)
    gap = cdf[..., :, None] - u[..., None, :]
    gap = np.where(gap > 0, gap, np.float32(1))
    return new_key, np.argmin(gap, axis=-2).astype(np.int32)


@impl("random.threefry_generate")
def _generate(args, attrs, out):
    return threefry_generate(args[0], attrs["out_shape"])


@impl("random.threefry_split")
def _split(args, attrs, out):
    return threefry_split(args[0])


@impl("random.uniform")
def _uniform(args, attrs, out):
    key, low, high = args
    return uniform(key, low, high, attrs["out_shape"], attrs["out_dtype"] or "float32")


@impl("random.normal")
def _normal(args, attrs, out):
    key, mean, scale = args
    return normal(key, mean, scale, attrs["out_shape"], attrs["out_dtype"] or "float32")


@impl("random.multinomial")
def _multinomial(args, attrs, out):
    return multinomial(args[0], args[1], attrs["num_samples"])
