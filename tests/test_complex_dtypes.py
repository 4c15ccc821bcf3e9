"""Complex dtypes are refused at every entry point (issue #16 §1).

Relay, like TVM, has no complex tensors.  Accepting one anywhere made a silent wrong
answer: ``exp(const(1j))`` evaluated to ``1+0j`` because the ops drop the imaginary part.
"""

from __future__ import annotations

import numpy as np
import pytest

import relay_nb as relay
from relay_nb.errors import AttrError, EvalError, ParseError, RelayTypeError

MESSAGE = "complex dtype complex(64|128) is not supported: Relay has no complex tensors"


@pytest.mark.parametrize(
    "value",
    [np.array([1j, 2 + 0j]), np.array([1j], "complex64"), 1j, np.complex64(1), [1, 2j]],
)
def test_const_refuses_complex(value):
    with pytest.raises(RelayTypeError, match=MESSAGE):
        relay.const(value)


def test_const_refuses_complex_even_with_a_real_dtype_string():
    with pytest.raises(RelayTypeError, match=MESSAGE):
        relay.const(np.zeros(2), dtype="complex64")


def test_var_refuses_complex():
    with pytest.raises(RelayTypeError, match=MESSAGE):
        relay.var("x", shape=(2,), dtype="complex64")
    with pytest.raises(RelayTypeError, match=MESSAGE):
        relay.var("x", "complex128")


def test_type_checker_names_complex_in_a_built_annotation():
    x = relay.Var("x", relay.TensorType((2,), "complex64"))
    mod = relay.IRModule.from_expr(relay.Function([x], x))
    with pytest.raises(RelayTypeError, match=MESSAGE):
        relay.transform.InferType()(mod)


@pytest.mark.parametrize(
    "text, column, error",
    [
        ("def @main(%x: complex64) { %x }", 15, ParseError),  # not an undefined ADT
        ("def @main(%x: Tensor[(2), complex128]) { %x }", 27, ParseError),
        ('def @main() { cast(1f, dtype="complex64") }', 24, AttrError),
        ("def @main() { cast(1f, dtype=complex64) }", 24, ParseError),
        ('def @main() { zeros(shape=[2], dtype="complex128") }', 32, AttrError),
    ],
)
def test_text_refuses_complex_with_a_location(text, column, error):
    with pytest.raises(error, match=MESSAGE) as info:
        relay.parse(text)
    assert (info.value.line, info.value.column) == (1, column)


@pytest.mark.parametrize("kind", ["interpreter", "jit"])
@pytest.mark.parametrize("annotated", [True, False])
@pytest.mark.parametrize("value", [np.array([1j, 2 + 0j]), np.array([1j, 2], "complex64"), 1j])
def test_executors_refuse_complex_arguments(kind, annotated, value):
    # Without an annotation the parameter's type comes from the argument, so nothing else
    # would stop exp from computing exp(re) and returning it as a complex array.
    text = "def @main(%x: Tensor[(2), float32]) { exp(%x) }" if annotated else "def @main(%x) { exp(%x) }"
    f = relay.create_executor(kind, mod=relay.parse(text)).evaluate()
    with pytest.raises(EvalError, match="argument 0 \\(%x\\): " + MESSAGE):
        f(value)


def test_built_module_refuses_complex_arguments():
    lib = relay.build(relay.parse("def @main(%x) { exp(%x) }"))
    with pytest.raises(EvalError, match=MESSAGE):
        lib(np.array([1j]))
