"""random.*: relations (accepts and TVM's rejections), builders as relay.random.*, text
round trips with attributes, and random ops inside JIT-built programs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import relay_nb as relay
from relay_nb.errors import RelayTypeError
from relay_nb.ir.ty import Any, IncompleteType, TupleType
from relay_nb.op.registry import get_op, list_ops

try:
    from ._reporter import T, infer, solve
except ImportError:
    from _reporter import T, infer, solve

KEY = T((10,), "uint64")


def test_all_5_tvm_random_ops_are_registered_with_numpy_implementations():
    names = Path(relay.op.__path__[0], "tvm_ops.txt").read_text().split()
    tvm = [n for n in names if n.startswith("random.")]
    assert len(tvm) == 5 and set(tvm) <= set(list_ops())
    for name in tvm:
        assert get_op(name).get_attr("impl") is not None, name


ACCEPT = [
    (
        "random.threefry_generate",
        (KEY,),
        {"out_shape": [2, 3]},
        TupleType((KEY, T((2, 3), "uint64"))),
    ),
    ("random.threefry_split", (KEY,), {}, TupleType((KEY, KEY))),
    (
        "random.uniform",
        (KEY, T(()), T(())),
        {"out_shape": [4], "out_dtype": "float32"},
        TupleType((KEY, T((4,)))),
    ),
    (
        "random.normal",
        (KEY, T((), "float64"), T((), "float64")),
        {"out_shape": [], "out_dtype": "float64"},
        TupleType((KEY, T((), "float64"))),
    ),
    (
        "random.multinomial",
        (KEY, T((2, 5))),
        {"num_samples": 3},
        TupleType((KEY, T((2, 3), "int32"))),
    ),
    ("random.multinomial", (KEY, T((Any, 5))), {}, TupleType((KEY, T((Any, 1), "int32")))),
]


@pytest.mark.parametrize("op, args, attrs, expected", ACCEPT, ids=[c[0] for c in ACCEPT])
def test_relation_accepts(op, args, attrs, expected):
    assert infer(op, *args, **attrs) == expected


def test_an_unannotated_key_gets_the_key_type():
    _, types = solve("random.threefry_split", IncompleteType())
    assert types[0] == KEY


REJECT = [
    (
        "random.threefry_generate",
        (T((9,), "uint64"),),
        {"out_shape": [2]},
        r"the key must be a threefry key Tensor\[\(10\), uint64\]",
    ),
    ("random.threefry_split", (T((10,), "int64"),), {}, "the key must be a threefry key"),
    (
        "random.uniform",
        (KEY, T((), "int32"), T((), "int32")),
        {"out_shape": [4], "out_dtype": "int32"},
        "We only support generating uniform random value of type float32 or float64, got int32",
    ),
    (
        "random.normal",
        (KEY, T(()), T(())),
        {"out_shape": [4]},
        "Normal random value of type float32 or float64, got unset",
    ),
    (
        "random.uniform",
        (KEY, T((2,)), T(())),
        {"out_shape": [4], "out_dtype": "float32"},
        "low must be a scalar",
    ),
    (
        "random.uniform",
        (KEY, T((), "float64"), T(())),
        {"out_shape": [4], "out_dtype": "float32"},
        "low must be a float32 scalar",
    ),
    ("random.multinomial", (KEY, T(())), {}, "probs must have at least one dimension"),
]


@pytest.mark.parametrize("op, args, attrs, message", REJECT, ids=[c[0] for c in REJECT])
def test_relation_rejects(op, args, attrs, message):
    with pytest.raises(RelayTypeError, match=message):
        infer(op, *args, **attrs)


def test_wrong_key_in_text_is_a_located_error():
    text = "def @main(%k: Tensor[(9), uint64]) {\n  random.threefry_split(%k)\n}\n"
    with pytest.raises(RelayTypeError, match="random.threefry_split: the key must be") as info:
        relay.transform.InferType()(relay.parse(text))
    assert info.value.line == 2


def _cases():
    k = relay.var("k", shape=(10,), dtype="uint64")
    r = relay.random
    return [
        r.threefry_generate(k, (2, 3)),
        r.threefry_split(k),
        r.uniform(k, (4,), dtype="float64", low=-1.0, high=1.0),
        r.normal(k, (2, 2), mean=1.0, scale=0.5),
        r.multinomial(k, relay.var("p", shape=(3, 4)), 7),
    ]


@pytest.mark.parametrize("index", range(len(_cases())))
def test_builder_programs_print_and_parse_back(index):
    expr = _cases()[index]
    params = relay.analysis.free_vars(expr)
    m1 = relay.transform.InferType()(relay.IRModule.from_expr(relay.Function(params, expr)))
    m2 = relay.transform.InferType()(relay.parse(m1.astext()))
    assert relay.structural_equal(m1["main"], m2["main"], map_free_vars=True)
    assert m1["main"].checked_type == m2["main"].checked_type


def test_relay_build_runs_random_ops_interpreted():
    text = (
        "def @main(%k: Tensor[(10), uint64]) {\n"
        '  %0 = random.uniform(%k, 0f, 1f, out_shape=[8], out_dtype="float32");\n'
        "  add(%0.1, 1f)\n"
        "}\n"
    )
    mod = relay.parse(text)
    key = relay.random.threefry_key(5).data
    lib = relay.build(mod)
    want = relay.create_executor("interpreter", mod=mod).evaluate()(key)
    np.testing.assert_array_equal(lib(key), want)
    assert ((want >= 1) & (want < 2)).all()
    report = lib.report()
    assert "random.uniform" in report.fallback_ops or "random.uniform" in report.interpreted_ops, (
        str(report)
    )
