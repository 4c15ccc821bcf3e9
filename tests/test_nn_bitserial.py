"""relay_nb.op.nn_bitserial: bitpack against bit-by-bit loops; bitserial dense / conv2d
against TVM's popcount formulation written out with Python integers."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import relay_nb as relay
from relay_nb.errors import RelayTypeError
from relay_nb.ir.ty import Any

try:
    from ._reporter import T, infer
except ImportError:
    from _reporter import T, infer


try:
    from .ops_testing import no_warnings, run_impl as run  # noqa: F401  (no_warnings: autouse)
except ImportError:
    from ops_testing import no_warnings, run_impl as run  # noqa: F401


RNG = np.random.default_rng(29)

SHAPES = [
    ("nn.bitpack", [T((2, 64, 3), "int8")], {"bits": 2, "pack_axis": 1, "bit_axis": 2, "pack_type": "uint32"}, T((2, 2, 2, 3), "uint32")),
    ("nn.bitpack", [T((2, 16), "int32")], {"bits": 3, "pack_axis": 1, "bit_axis": -1, "pack_type": "uint8"}, T((2, 2, 3), "uint8")),
    ("nn.bitpack", [T((Any, 16), "int32")], {"bits": 1, "pack_axis": 1, "bit_axis": 0, "pack_type": "uint16"}, T((1, Any, 1), "uint16")),
    ("nn.bitserial_dense", [T((4, 64), "int8"), T((8, 64), "int8")], {"units": 8, "out_dtype": "int16"}, T((4, 8), "int16")),
    ("nn.bitserial_conv2d", [T((1, 32, 6, 6), "int8"), T((4, 32, 3, 3), "int8")], {"channels": 4, "padding": [1, 1], "out_dtype": "int32"}, T((1, 4, 6, 6), "int32")),
    ("nn.bitserial_conv2d", [T((1, 6, 6, 32), "int8"), T((3, 3, 32, 4), "int8")], {"channels": 4, "strides": [2, 2], "data_layout": "NHWC", "kernel_layout": "HWIO"}, T((1, 2, 2, 4), "int8")),
]


@pytest.mark.parametrize("op, args, attrs, expected", SHAPES, ids=[c[0] for c in SHAPES])
def test_shapes(op, args, attrs, expected):
    assert infer(op, *args, **attrs) == expected


ERRORS = [
    ("nn.bitpack", [T((2, 60), "int8")], {"pack_type": "uint32"}, "not a multiple of the 32-bit"),
    ("nn.bitpack", [T((2, 64), "int8")], {"pack_type": "int32"}, "pack_type must be one of"),
    ("nn.bitpack", [T((2, 64), "float32")], {"pack_type": "uint32"}, "packs integers"),
    ("nn.bitpack", [T((2, 64), "int8")], {"pack_type": "uint32", "bit_axis": 5}, "bit_axis 5 is out of range"),
    ("nn.bitserial_dense", [T((4, 64), "int8"), T((8, 64), "int8")], {}, "units must be given"),
    ("nn.bitserial_conv2d", [T((1, 32, 6, 6), "int8"), T((4, 32, 3, 3), "int8")], {}, "channels must be given"),
    ("nn.bitserial_conv2d", [T((1, 32, 2, 2), "int8"), T((4, 32, 3, 3), "int8")], {"channels": 4}, "larger than the padded input"),
]


@pytest.mark.parametrize("op, args, attrs, message", ERRORS, ids=[c[0] for c in ERRORS])
def test_errors(op, args, attrs, message):
    with pytest.raises(RelayTypeError, match=message):
        infer(op, *args, **attrs)


def test_bitpack_against_bit_loops():
    x = RNG.integers(0, 8, (2, 16, 3)).astype("int32")
    got = run("nn.bitpack", x, bits=3, pack_axis=1, bit_axis=2, pack_type="uint8")
    assert got.shape == (2, 2, 3, 3) and got.dtype == np.uint8
    for n, p, b, c in itertools.product(range(2), range(2), range(3), range(3)):
        word = 0
        for k in range(8):  # the first element goes to the top bit
            word = (word << 1) | ((int(x[n, p * 8 + k, c]) >> b) & 1)
        assert got[n, p, b, c] == word


def popcount(v: int) -> int:
    return bin(v).count("1")


def bitserial_dot(d_row, w_row, dbits, wbits, unipolar):
    """TVM's kernel for one output: popcounts of packed bit planes, shifted by db + wb."""
    total = 0
    for db, wb in itertools.product(range(dbits), range(wbits)):
        dword = sum(((int(v) >> db) & 1) << i for i, v in enumerate(d_row))
        wword = sum(((int(v) >> wb) & 1) << i for i, v in enumerate(w_row))
        mask = (1 << len(d_row)) - 1
        term = popcount(wword & dword)
        if unipolar:
            term -= popcount(~wword & mask & dword)
        total += term << (db + wb)
    return total


@pytest.mark.parametrize("unipolar", [True, False])
def test_bitserial_dense_against_popcounts(unipolar):
    d = RNG.integers(0, 4, (3, 32)).astype("int8")
    w = RNG.integers(0, 2, (5, 32)).astype("int8")
    got = run("nn.bitserial_dense", d, w, units=5, data_bits=2, weight_bits=1,
              unipolar=unipolar, out_dtype="int32")  # fmt: skip
    for i, j in itertools.product(range(3), range(5)):
        assert got[i, j] == bitserial_dot(d[i], w[j], 2, 1, unipolar)


@pytest.mark.parametrize("unipolar", [True, False])
def test_bitserial_conv2d_against_popcounts(unipolar):
    x = RNG.integers(0, 4, (1, 8, 4, 4)).astype("int8")
    w = RNG.integers(0, 4, (2, 8, 3, 3)).astype("int8")
    got = run("nn.bitserial_conv2d", x, w, channels=2, padding=[1, 1], activation_bits=2,
              weight_bits=2, unipolar=unipolar, out_dtype="int32")  # fmt: skip
    xp = np.pad(x, [(0, 0), (0, 0), (1, 1), (1, 1)])
    for o, y, xx in itertools.product(range(2), range(4), range(4)):
        patch = xp[0, :, y : y + 3, xx : xx + 3].reshape(-1)
        assert got[0, o, y, xx] == bitserial_dot(patch, w[o].reshape(-1), 2, 2, unipolar)


def test_printed_calls_parse_back():
    d = relay.var("d", shape=(4, 64), dtype="int8")
    cases = [
        relay.nn.bitpack(d, bits=2, pack_axis=1, bit_axis=1, pack_type="uint8"),
        relay.nn.bitserial_dense(d, relay.var("w", shape=(8, 64), dtype="int8"), units=8),
        relay.nn.bitserial_conv2d(relay.var("x", shape=(1, 32, 6, 6), dtype="int8"),
                                  relay.var("k", shape=(4, 32, 3, 3), dtype="int8"), channels=4,
                                  padding=(1, 1), unipolar=False),  # fmt: skip
    ]
    for expr in cases:
        m1 = relay.transform.InferType()(
            relay.IRModule.from_expr(relay.Function(relay.analysis.free_vars(expr), expr))
        )
        text = m1.astext()
        m2 = relay.transform.InferType()(relay.parse(text))
        assert relay.structural_equal(m1["main"], m2["main"], map_free_vars=True)
        assert m2.astext() == text
