"""A negative output dimension taken from an attribute is a type error that points at the
attribute (before, it type-checked and the JIT leaked numpy's ValueError)."""

from __future__ import annotations

import time

import pytest

import relay_nb as relay

X = "%x: Tensor[(1, 2, 4, 4), float32]"

CASES = [
    ("def @main() { full(1f, shape=[2, -3]) }", "shape=[2, -3]"),
    ("def @main() { zeros(shape=[-1]) }", "shape=[-1]"),
    ('def @main() { ones(shape=[2, -1], dtype="int8") }', "shape=[2, -1]"),
    (f"def @main({X}) {{ nn.upsampling(%x, scale_h=-1f, scale_w=1f) }}", "scale_h=-1f"),
    (f"def @main({X}) {{ nn.upsampling(%x, scale_h=2f, scale_w=-0.1f) }}", "scale_w=-0.1f"),
    (f"def @main({X}) {{ image.resize2d(%x, size=[1, -2]) }}", "size=[1, -2]"),
    (f"def @main({X}) {{ nn.adaptive_avg_pool2d(%x, output_size=[-2, 3]) }}", "output_size=[-2, 3]"),
    (f"def @main({X}) {{ nn.adaptive_max_pool2d(%x, output_size=[2, -3]) }}", "output_size=[2, -3]"),
    # the outer call's shape, not the nested zeros' one
    ("def @main() { broadcast_to(zeros(shape=[3]), shape=[-1, 3]) }", "shape=[-1, 3]"),
    (
        f"def @main({X}) {{ nn.conv2d_transpose(%x, ones(shape=[2, 2, 1, 1]), padding=[3, 3]) }}",
        "padding=[3, 3]",
    ),
]


@pytest.mark.parametrize(("text", "attr"), CASES)
def test_negative_dims_from_attributes_are_type_errors_at_the_attribute(text, attr):
    with pytest.raises(relay.RelayTypeError, match="negative|>= 0") as info:
        relay.transform.InferType()(relay.parse(text))
    err = info.value
    start = text.rindex(attr)
    assert (err.line, err.column) == (1, start + 1)
    assert (err.span.end_line, err.span.end_column) == (1, start + 1 + len(attr))
    assert "^" * len(attr) in str(err)


@pytest.mark.parametrize(
    ("text", "attr"),
    [
        ("def @main(%x: Tensor[(6), float32]) { split(%x, indices_or_sections=[3, 1]).1 }", "indices_or_sections=[3, 1]"),
        ("def @main(%v: Tensor[(3), float32]) { tile(%v, reps=[-2]) }", "reps=[-2]"),
        ("def @main(%v: Tensor[(3), float32]) { repeat(%v, repeats=-1, axis=0) }", "repeats=-1"),
        ("def @main(%v: Tensor[(3), float32]) { expand_dims(%v, axis=0, num_newaxis=-1) }", "num_newaxis=-1"),
    ],
)
def test_other_bad_attribute_values_point_at_the_attribute(text, attr):
    with pytest.raises(relay.RelayTypeError) as info:
        relay.transform.InferType()(relay.parse(text))
    start = text.rindex(attr)
    assert (info.value.column, info.value.span.end_column) == (start + 1, start + 1 + len(attr))


def test_the_attribute_is_found_across_lines():
    text = 'def @main() {\n  %0 = zeros(shape=[3]);\n  add(%0, full(1f, shape=[2, -3],\n     dtype="float32"))\n}'
    with pytest.raises(relay.RelayTypeError) as info:
        relay.transform.InferType()(relay.parse(text))
    assert (info.value.line, info.value.column) == (3, 20)


def test_a_call_built_in_python_has_no_text_but_still_fails_in_the_relation():
    mod = relay.IRModule.from_expr(relay.zeros(shape=[-1], dtype="float32"))
    with pytest.raises(relay.RelayTypeError, match="negative dimension -1"):
        relay.transform.InferType()(mod)


@pytest.mark.parametrize("kind", ["interpreter", "jit"])
def test_both_executors_refuse_before_running(kind):
    mod = relay.parse("def @main() { full(1f, shape=[2, -3]) }")
    with pytest.raises(relay.RelayTypeError):
        relay.create_executor(kind, mod=mod).evaluate()()


# --- results too big for memory: the same EvalError from both executors ---------------------

HUGE = [
    "def @main() { zeros(shape=[1000000, 1000000]) }",
    "def @main(%x: Tensor[(1), float32]) { broadcast_to(%x, shape=[1000000, 1000000]) }",
    "def @main(%x: Tensor[(2), float32]) { tile(%x, reps=[1000000, 500000]) }",
    "def @main(%x: Tensor[(1), float32]) { full(1f, shape=[1000000, 1000000]) }",
    # the JIT does not spend minutes emitting tap tables for a result it cannot hold
    "def @main(%x: Tensor[(1, 1, 2, 2), float32]) { image.resize2d(%x, size=[1000000, 1000000]) }",
    "def @main(%x: Tensor[(1, 1, 2, 2), float32]) { nn.upsampling(%x, scale_h=500000f, scale_w=500000f) }",
]


@pytest.mark.parametrize("text", HUGE)
def test_a_result_too_big_for_memory_is_an_eval_error_in_both_executors(text):
    import numpy as np

    mod = relay.parse(text)
    args = [np.ones(p.type_annotation.shape, "float32") for p in mod["main"].params]
    for kind in ("interpreter", "jit"):
        start = time.perf_counter()
        with pytest.raises(relay.EvalError, match=r"needs 3725\.3 GiB for its results?, more than this machine's"):
            relay.create_executor(kind, mod=mod).evaluate()(*args)
        assert time.perf_counter() - start < 10
