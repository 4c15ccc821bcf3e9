"""What a notebook shows of the JIT: each kernel's Relay source, LLVM IR before and after
optimization (vectorized for this CPU), assembly, compile and run times; ``relay.build``'s
text and HTML views and its report of native and fallback ops."""

from __future__ import annotations

import re

import numpy as np

import relay_nb as relay
from relay_nb.backend.llvm.jit import host_cpu

CHAIN = "def @main(%x: Tensor[(1024,), float32]) { %0 = exp(%x); %1 = multiply(%0, %x); %2 = multiply(%x, 0.5f); %3 = add(%1, %2); subtract(%3, 1f) }"


def test_an_elementwise_float32_kernel_is_vectorized_for_the_host():
    lib = relay.build(relay.parse(CHAIN))
    (k,) = lib.kernels
    assert k.native and k.ops == ["exp", "multiply", "multiply", "add", "subtract"]
    assert "exp(%p0)" in k.source and "Primitive=1" in k.source
    assert k.ir.startswith("; ModuleID") and "define void" in k.ir
    features = host_cpu()["features"]
    widths = [16, 8] if "avx512f" in features else [8] if "avx2" in features or "avx" in features else [4]
    # the loop vectorizer widened the chain (to 512 or 256 bits with AVX-512: LLVM's choice per CPU)
    assert any(f"<{w} x float>" in k.optimized_ir for w in widths)
    assert "llvm.exp" not in k.optimized_ir  # exp is a polynomial, not a libm call
    if widths[0] >= 8:
        assert re.search(r"vfmadd\w*\s+%[yz]mm", k.asm)  # FMA on 256- or 512-bit registers
    assert 0 < k.compile_seconds < 5


def test_run_time_and_calls_accumulate():
    lib = relay.build(relay.parse(CHAIN))
    (k,) = lib.kernels
    calls, seconds = k.calls, k.run_seconds
    x = np.linspace(-3, 3, 1024, dtype="float32")
    for _ in range(3):
        out = lib(x)
    assert k.calls == calls + 3 and k.run_seconds > seconds and k.mean_run_seconds > 0
    np.testing.assert_allclose(out, np.exp(x) * x + x * 0.5 - 1, rtol=2e-6, atol=1e-6)


def test_text_and_html_views():
    lib = relay.build(relay.parse("def @main(%x: Tensor[(8,), float32]) { %0 = tanh(%x); nn.softmax(%0) }"))
    text = repr(lib)
    assert text.startswith("<BuiltModule: 2 kernels (2 native)") and "fused_tanh" in text and "fused_nn_softmax" in text
    page = lib._repr_html_()
    assert "<table>" in page and "fused_tanh" in page and "LLVM IR" in page and "assembly" in page
    kernel_page = lib.kernels[0]._repr_html_()
    assert "<details>" in kernel_page and "define void" in kernel_page


def test_report_lists_native_ops_and_fallbacks_with_reasons():
    text = """def @main(%x: Tensor[(2, 4), float32], %h: Tensor[(2, 4), float16]) {
      %0 = exp(%x);
      %1 = nn.softmax(%0);
      %2 = add(%h, %h);
      (%1, %2)
    }"""
    lib = relay.build(relay.parse(text))
    x = np.random.default_rng(0).standard_normal((2, 4)).astype("float32")
    h = x.astype("float16")
    ref = relay.create_executor("interpreter", mod=relay.parse(text)).evaluate()(x, h)
    out = lib(x, h)
    np.testing.assert_allclose(out[0], ref[0], rtol=1e-6)
    np.testing.assert_array_equal(out[1], ref[1])
    report = lib.report()
    assert report.native_ops == ["exp", "nn.softmax"]
    assert list(report.fallback_ops) == ["add"] and "float16" in report.fallback_ops["add"]
    text_report = str(report)
    assert "2 native, 1 fell back" in text_report and "fell back: add (" in text_report and "compile ms" in text_report
    assert "<table>" in report._repr_html_()


def test_library_is_callable_many_times_and_by_global_name():
    mod = relay.parse(
        "def @double(%x: Tensor[(3,), int32]) { add(%x, %x) }\n"
        "def @main(%x: Tensor[(3,), int32]) { @double(multiply(%x, 3)) }"
    )
    lib = relay.build(mod)
    x = np.array([1, 2, 3], "int32")
    for _ in range(3):
        np.testing.assert_array_equal(lib(x), [6, 12, 18])
    np.testing.assert_array_equal(lib["double"](x), [2, 4, 6])
    np.testing.assert_array_equal(lib["main"](x), [6, 12, 18])


# Broadcast ops that still run on numpy inside built programs (the coverage table says
# so); a new elementwise or broadcast op must come with its lowering, not join this list.
NOT_LOWERED_YET: set[str] = set()


def test_every_elementwise_and_broadcast_op_has_an_llvm_rule():
    """Ops TVM patterns as elementwise or broadcast are lowered (issue 12); the others that
    have none run on numpy inside built programs (the report names them)."""
    from relay_nb.backend.llvm.codegen.rules import llvm_rules
    from relay_nb.op.registry import OpPattern, get_column

    from relay_nb.op.registry import OpPattern

    rules = llvm_rules()
    pattern = get_column("TOpPattern")
    # Ops other test modules register for themselves (named "test_*.op") are not ours.
    missing = sorted(
        name
        for name in set(get_column("impl")) - set(rules)
        if not name.startswith("test")
        and pattern.get(name) in (OpPattern.ELEMWISE, OpPattern.BROADCAST)
    )
    assert len(rules) >= 110
    assert missing == sorted(NOT_LOWERED_YET), missing
