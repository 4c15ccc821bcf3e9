"""Annotation, device and call-wrapper ops: text, types, values, and what passes keep."""

from __future__ import annotations

import numpy as np
import pytest

import relay_nb as relay
from relay_nb.op.impl import annotation as annotation_impl

HEADER = '#[version = "0.0.5"]\n'


def _typed(text: str) -> relay.IRModule:
    return relay.transform.InferType()(relay.parse(HEADER + text))


def _run(mod, *args, executor="interpreter"):
    return relay.create_executor(executor, mod=mod).evaluate()(*args)


def _roundtrip(mod):
    text = mod.astext()
    again = relay.transform.InferType()(relay.parse(text))
    assert again.astext() == text
    assert relay.structural_equal(again, mod)


# --- every op reads, prints back, type-checks as the identity and runs as one --------------

IDENTITY_CALLS = [
    "annotation.stop_fusion(%x)",
    "annotation.bitpack_start(%x)",
    "annotation.bitpack_end(%x)",
    "annotation.checkpoint(%x)",
    'annotation.cast_hint(%x, dtype="int8")',
    'annotation.compiler_begin(%x, compiler="dnnl")',
    'annotation.compiler_end(%x, compiler="dnnl")',
    "annotation.with_funcid(%x, fid=3)",
    "on_device(%x, virtual_device=meta[VirtualDevice][0], constrain_result=True)",
    "on_device(%x, constrain_body=False)",
    "device_copy(%x, src_virtual_device=meta[VirtualDevice][0], "
    "dst_virtual_device=meta[VirtualDevice][1])",
]


@pytest.mark.parametrize("call", IDENTITY_CALLS, ids=lambda c: c.split("(")[0])
def test_identity_ops_read_print_type_and_run(call):
    mod = _typed(f"def @main(%x: Tensor[(2, 3), float32]) {{\n  {call}\n}}")
    assert str(mod["main"].body.checked_type) == "Tensor[(2, 3), float32]"
    assert call in mod.astext()  # attributes printed back as written
    _roundtrip(mod)
    x = np.arange(6, dtype="float32").reshape(2, 3)
    np.testing.assert_array_equal(_run(mod, x), x)
    np.testing.assert_array_equal(_run(mod, x, executor="jit"), x)


def test_on_device_wraps_values_of_any_type():
    mod = _typed(
        "def @main(%x: float32) {\n"
        "  %0 = on_device((%x, 2f), constrain_body=False);\n"
        "  %1 = on_device(fn (%y: float32) { multiply(%y, %x) });\n"
        "  %1(%0.1)\n"
        "}"
    )
    assert str(mod["main"].checked_type) == "fn (float32) -> float32"
    assert _run(mod, np.float32(3)) == 6.0
    assert _run(mod, np.float32(3), executor="jit") == 6.0


def test_builders_make_the_calls_tvm_makes():
    x = relay.var("x", shape=(4,))
    assert relay.annotation.stop_fusion(x).op.name == "annotation.stop_fusion"
    assert relay.annotation.compiler_begin(x, "dnnl").attrs.compiler == "dnnl"
    on = relay.annotation.on_device(x, "cpu", constrain_result=True)
    assert (on.attrs.virtual_device, on.attrs.constrain_result, on.attrs.constrain_body) == (
        "cpu",
        True,
        True,
    )
    assert relay.device_copy(x).op.name == "device_copy"
    assert relay.annotation.cast_hint(x, "int8").attrs.dtype == "int8"
    assert relay.annotation.checkpoint(x).op.name == "annotation.checkpoint"


def test_cast_hint_checks_its_dtype():
    with pytest.raises(relay.RelayError, match="unknown dtype"):
        relay.parse(HEADER + 'def @main(%x: float32) { annotation.cast_hint(%x, dtype="int7") }')


# --- debug --------------------------------------------------------------------------------------


def test_debug_shows_the_value_and_passes_it_on(monkeypatch, capsys):
    mod = _typed("def @main(%x: Tensor[(2), int32]) {\n  add(debug(%x), 1)\n}")
    out = _run(mod, np.array([4, 5], "int32"))
    np.testing.assert_array_equal(out, [5, 6])
    assert "debug: [4, 5]" in capsys.readouterr().out

    seen = []
    monkeypatch.setattr(annotation_impl, "debug_hook", lambda value, attrs: seen.append(value))
    _run(mod, np.array([7, 8], "int32"))
    np.testing.assert_array_equal(seen[0], [7, 8])


# --- call_lowered ---------------------------------------------------------------------------------

LOWERED = (
    "def @lowered(%a: Tensor[(3), float32], %b: Tensor[(3), float32], Primitive=1) {\n"
    "  subtract(multiply(%a, %b), %b)\n"
    "}\n"
    "def @main(%x: Tensor[(3), float32], %y: Tensor[(3), float32]) {\n"
    "  call_lowered(@lowered, (%x, %y))\n"
    "}"
)


def test_call_lowered_calls_its_function():
    mod = _typed(LOWERED)
    assert str(mod["main"].body.checked_type) == "Tensor[(3), float32]"
    x = np.array([1, 2, 3], "float32")
    y = np.array([4, 5, -6], "float32")
    expected = np.array([1 * 4 - 4, 2 * 5 - 5, 3 * -6 + 6], "float32")
    np.testing.assert_array_equal(_run(mod, x, y), expected)
    np.testing.assert_array_equal(_run(mod, x, y, executor="jit"), expected)
    _roundtrip(mod)


@pytest.mark.parametrize(
    "main, message",
    [
        ("call_lowered(@lowered, (%x,))", "the function takes 2 arguments, the tuple has 1"),
        ("call_lowered(%x, (%x, %x))", "the function to call must be a function"),
        ("call_lowered(@lowered, %x)", "the arguments must be a tuple"),
    ],
)
def test_call_lowered_errors_are_located(main, message):
    text = LOWERED.replace("call_lowered(@lowered, (%x, %y))", main)
    with pytest.raises(relay.RelayError, match=message) as info:
        _typed(text)
    assert info.value.span is not None and info.value.span.line == 6


def test_call_lowered_builder():
    a = relay.var("a", shape=(2,))
    f = relay.GlobalVar("f")
    c = relay.call_lowered(f, [a, a])
    assert c.op.name == "call_lowered" and len(c.args[1].fields) == 2


# --- TVM-internal ops -----------------------------------------------------------------------------


def test_simulated_quantize_rounds_in_float():
    mod = _typed(
        "def @main(%x: Tensor[(5), float32]) {\n"
        "  relay.op.annotation.simulated_quantize(%x, 0.5f, -1f, 4f, kind=1)\n"
        "}"
    )
    x = np.array([0.26, -0.74, 3.0, 0.25, -0.25], "float32")
    # x / 0.5 = [0.52, -1.48, 6, 0.5, -0.5]; clip to [-1, 4]; round halves away from zero;
    # times 0.5
    expected = np.array([0.5, -0.5, 2.0, 0.5, -0.5], "float32")
    np.testing.assert_array_equal(_run(mod, x), expected)
    np.testing.assert_array_equal(_run(mod, x, executor="jit"), expected)
    lib = relay.build(mod)
    assert lib.report().native_ops == ["relay.op.annotation.simulated_quantize"]
    _roundtrip(mod)
    identity = _typed(
        "def @main(%x: Tensor[(5), float32]) {\n"
        "  relay.op.annotation.simulated_quantize(%x, 0.5f, -1f, 4f, kind=0)\n"
        "}"
    )
    np.testing.assert_array_equal(_run(identity, x), x)


def test_simulated_quantize_rejects_a_scalar():
    with pytest.raises(relay.RelayError, match="data must not be a scalar"):
        _typed(
            "def @main(%x: float32) {\n"
            "  relay.op.annotation.simulated_quantize(%x, 0.5f, -1f, 4f, kind=1)\n"
            "}"
        )


@pytest.mark.parametrize(
    "call, message",
    [
        ('parser.MetaRef(node_type_key="relay.Constant")', "placeholder of TVM's parser"),
        ('torch_op(%x, serialized_function="PK", len=2)', "relay_nb never does"),
    ],
)
def test_internal_ops_read_but_say_why_they_do_not_type_check(call, message):
    text = f"def @main(%x: float32) {{\n  {call}\n}}"
    mod = relay.parse(HEADER + text)
    assert call in mod.astext()
    with pytest.raises(relay.RelayError, match=message) as info:
        relay.transform.InferType()(mod)
    assert info.value.span.line == 3
