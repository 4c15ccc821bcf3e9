"""The seed documents' programs, type-checked and *run*: each gives the value the seed states.

The programs are the verbatim seed files next to this test (pseudo-syntax included).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import relay_nb as relay
from relay_nb.eval.values import ConstructorValue

HERE = Path(__file__).parent


def load(name: str, init_module=None) -> relay.IRModule:
    return relay.parse((HERE / name).read_text(), source_name=name, init_module=init_module)


def main_of(mod: relay.IRModule):
    return relay.create_executor("interpreter", mod=mod).evaluate()


def global_of(mod: relay.IRModule, name: str):
    return relay.create_executor("interpreter", mod=mod).evaluate(mod.get_global_var(name))


def nat(mod: relay.IRModule, n: int) -> ConstructorValue:
    v = ConstructorValue(mod.get_constructor("Z"), ())
    for _ in range(n):
        v = ConstructorValue(mod.get_constructor("S"), (v,))
    return v


def test_000_01_shadowing_has_value_4():
    assert main_of(load("000_01_shadowing.relay"))() == 4


def test_000_05_fact_is_ill_typed_as_written():
    # The seed branches on a (10, 10) tensor comparison: `if` needs a scalar bool.
    mod = load("000_05_fact.relay")
    with pytest.raises(relay.RelayTypeError, match=r"if condition must be bool, found Tensor\[\(10, 10\), bool\]"):
        relay.transform.InferType()(mod)


def test_000_06_closure_evaluates_to_zeros():
    out = main_of(load("000_06_closure.relay"))()
    assert out.shape == (10, 10) and out.dtype == np.float32 and not out.any()


def test_000_10_call_evaluates_to_22():
    out = main_of(load("000_10_call.relay"))()
    assert out.dtype == np.float32 and out == 22


def test_000_13_ackermann_agrees_with_python():
    def ack(m: int, n: int) -> int:
        return n + 1 if m == 0 else ack(m - 1, 1) if n == 0 else ack(m - 1, ack(m, n - 1))

    f = global_of(load("000_13_ackermann.relay"), "ackermann")
    for m, n in [(0, 0), (1, 3), (2, 2), (2, 5), (3, 2)]:
        assert f(m, n) == ack(m, n)


def test_000_14_tuples_types_and_values():
    mod = relay.transform.InferType()(load("000_14_tuples.relay"))
    ret = mod["main"].checked_type.ret_type
    assert ret == relay.TupleType([relay.TensorType((10, 10), "float32"), relay.TensorType((100, 100), "float32")])
    a, b, c = np.ones((10, 10), "float32"), np.float32(2), np.zeros((100, 100), "float32")
    left, right = main_of(mod)(a, b, c)
    np.testing.assert_array_equal(left, np.full((10, 10), 3, "float32"))
    assert right is not None and right.shape == (100, 100)


def test_000_16_let_constant_is_x_plus_x():
    # The seed says the tensor is "all 1": that is %x; the expression %x + %x is all 2.
    out = main_of(load("000_16_let_constant.relay"))()
    np.testing.assert_array_equal(out, np.full((10, 10), 2, "float32"))


def test_000_19_if_returns_the_chosen_branch():
    mod = load("000_19_if.relay")
    params = [p.name_hint for p in mod["main"].params]
    assert params == ["t", "u"]
    # Unannotated: @main is generalized, so any scalar dtype runs.
    f = main_of(mod)
    assert f(np.int32(3), np.int32(3)) == 3 and f(np.int32(3), np.int32(5)) == 5
    assert f(np.float32(1.5), np.float32(2.5)) == 2.5


@pytest.mark.parametrize(
    "name, inputs, outputs",
    [
        ("000_21_match_pred.relay", [0, 1, 3], [0, 0, 2]),  # subtract one (Z stays Z)
        ("000_22_match_nested.relay", [0, 1, 2, 5], [0, 1, 0, 3]),  # subtract two if >= 2
        ("000_23_match_order.relay", [0, 1, 4], [0, 1, 4]),  # the wildcard arm always wins
    ],
)
def test_000_21_to_23_nat_matches(name, inputs, outputs):
    nat_mod = load("000_20_data_nat.relay")
    mod = load(name, init_module=nat_mod)
    f = main_of(mod)
    for n, want in zip(inputs, outputs):
        got = f(nat(mod, n))
        count = 0
        while got.constructor.name == "S":
            got, count = got.fields[0], count + 1
        assert count == want, (name, n)


def test_004_01_muladd_module():
    # @myfunc(x) = muladd(muladd(x, 1, 2), 2, 3) = (x + 2) * 2 + 3
    f = global_of(load("004_01_module.relay"), "myfunc")
    assert f(np.int32(5)) == 17
    assert f(np.float32(0.5)) == pytest.approx(8.0)


def test_004_02_recursion_doubles():
    # @myfunc(x) = x if x == 1 else 2 * @myfunc(x - 1), i.e. 2 ** (x - 1)
    f = global_of(load("004_02_recursion.relay"), "myfunc")
    assert [int(f(np.int32(x))) for x in (1, 2, 5, 10)] == [1, 2, 16, 512]


def test_004_03_closure_adds_the_captured_log():
    make = main_of(load("004_03_closure_scope.relay"))
    x = np.array([1.0, np.e], "float32")
    add_log = make(x)
    np.testing.assert_allclose(add_log(np.array([10.0, 10.0], "float32")), [10.0, 11.0], rtol=1e-6)
