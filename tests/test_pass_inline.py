"""Inline: globals marked Inline=1, and Inline(all_non_recursive=True)."""

from __future__ import annotations

import time

import numpy as np
import pytest
from hypothesis import given
from pass_testing import check_pass
from strategies import FAST, big_let_chain, modules

import relay_nb as relay
from relay_nb.analysis import well_formed
from relay_nb.ir.expr import Function, GlobalVar, RefCreate
from relay_nb.ir.functor import post_order
from relay_nb.transform import Inline

SEED004 = """
def @muladd(%x: float32, %y: float32, %z: float32, Inline=1) {
  %1 = multiply(%x, %y);
  add(%1, %z)
}
def @main(%x: float32) {
  %1 = @muladd(%x, 1f, 2f);
  @muladd(%1, 2f, 3f)
}"""

CASES = {
    # seed 004's @muladd/@myfunc, with @muladd marked Inline=1
    "inline_seed004": SEED004,
    # unmarked and recursive globals stay; a marked one called from another is inlined
    # there too (callees first)
    "inline_marked_only": """
def @sq(%x: float32, Inline=1) { multiply(%x, %x) }
def @quad(%x: float32, Inline=1) { @sq(@sq(%x)) }
def @keep(%x: float32) { negative(%x) }
def @loop(%n: int32, Inline=1) -> int32 { if (equal(%n, 0)) { 0 } else { @loop(subtract(%n, 1)) } }
def @main(%x: float32) { (@quad(%x), @keep(%x), @loop(3)) }""",
    # the body's binders are renamed at each call site, effects duplicated
    "inline_binders_and_refs": """
def @cell(%x: float32, Inline=1) {
  let %r = ref(%x);
  let %f = fn (%y: float32) { add(%y, ref_read(%r)) };
  %f(%x)
}
def @main(%x: float32) { add(@cell(%x), @cell(log(%x))) }""",
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_golden(case, golden):
    check_pass(Inline(), CASES[case], golden=golden, case=case)


def test_golden_all_non_recursive(golden):
    check_pass(
        Inline(all_non_recursive=True),
        CASES["inline_marked_only"],
        golden=golden,
        case="inline_all_non_recursive",
    )


def test_seed004_expected():
    check_pass(
        Inline(),
        SEED004,
        """
def @main(%x: float32) {
  %1 = multiply(%x, 1f);
  let %x1: float32 = add(%1, 2f);
  %2 = multiply(%x1, 2f);
  add(%2, 3f)
}""",
    )


def test_what_stays():
    out = Inline()(relay.parse(CASES["inline_marked_only"]))
    assert sorted(gv.name_hint for gv in out.functions) == ["keep", "loop", "main"]
    called = {n.name_hint for n in post_order(out["main"]) if type(n) is GlobalVar}
    assert called == {"keep", "loop"}
    everything = Inline(all_non_recursive=True)(relay.parse(CASES["inline_marked_only"]))
    assert sorted(gv.name_hint for gv in everything.functions) == ["loop", "main"]


def test_fresh_binders_and_effects():
    out = check_pass(Inline(), CASES["inline_binders_and_refs"])
    main = out["main"]
    assert well_formed(main)
    assert sum(1 for n in post_order(main) if type(n) is RefCreate) == 2
    assert sum(1 for n in post_order(main) if type(n) is Function) == 3  # @main and 2 closures


def test_non_atomic_argument_is_evaluated_once():
    text = """
def @twice(%x, Inline=1) { (%x, %x) }
def @main(%r: float32) {
  let %c = ref(%r);
  let %t = @twice(ref_write(%c, add(ref_read(%c), 1f)));
  ref_read(%c)
}"""
    out = check_pass(Inline(), text, inputs=[np.float32(1)])
    assert float(relay.create_executor("interpreter", mod=out).evaluate()(np.float32(1))) == 2.0


def test_dag_sharing_inside_an_inlined_body():
    text = """
def @f(%x: float32, Inline=1) { %1 = log(%x); add(%1, %1) }
def @main(%y: float32) { (@f(%y), @f(exp(%y))) }"""
    out = check_pass(Inline(), text)
    adds = [
        n for n in post_order(out["main"]) if getattr(getattr(n, "op", None), "name", "") == "add"
    ]
    assert len(adds) == 2 and all(a.args[0] is a.args[1] for a in adds)  # one log per copy


def test_identity_untouched():
    mod = relay.parse(CASES["inline_marked_only"])
    out = Inline()(mod)
    assert out["keep"] is mod["keep"] and out["loop"] is mod["loop"]
    plain = relay.parse("def @main(%x: float32) { log(%x) }")
    assert Inline()(plain)["main"] is plain["main"]


def test_primitive_not_inlined():
    mod = relay.parse(
        """
        def @k(%x: float32, Primitive=1, Inline=1) { log(%x) }
        def @main(%x: float32) { @k(%x) }
        """
    )
    assert Inline()(mod)["main"] is mod["main"]


def test_registry():
    p = relay.transform.get_pass("Inline")
    assert p.info.name == "InlineGlobals" and p.info.opt_level == 1
    assert type(relay.transform.get_pass("InlineGlobals")) is Inline


@FAST
@given(modules())
def test_random_modules(mod):
    check_pass(Inline(), mod)
    out = check_pass(Inline(all_non_recursive=True), mod)
    called = {n.name_hint for n in post_order(out["main"]) if type(n) is GlobalVar}
    assert called <= {"count"}  # every non-recursive callee was inlined


def _chain_of_globals(n):
    text = ["def @g0(%x: float32) { add(%x, 1f) }"]
    text += [f"def @g{i}(%x: float32) {{ @g{i - 1}(multiply(%x, 2f)) }}" for i in range(1, n)]
    text.append(f"def @main(%x: float32) {{ @g{n - 1}(%x) }}")
    return relay.parse("\n".join(text))


def test_scale():
    mod = big_let_chain(100_000).copy()  # the builder's module is shared: do not edit it
    helper = relay.parse("def @inc(%x: float32, Inline=1) { add(%x, 1f) }")
    mod.add("inc", helper["inc"])
    main = mod["main"]
    mod["main"] = relay.Function(main.params, relay.Call(mod.get_global_var("inc"), (main.body,)))
    start = time.perf_counter()
    out = Inline()(mod)
    assert time.perf_counter() - start < 20
    assert well_formed(out["main"]) and "inc" not in out
    chain = _chain_of_globals(300)  # 300 globals inlined transitively (linear: bodies move)
    start = time.perf_counter()
    out = Inline(all_non_recursive=True)(chain)
    assert time.perf_counter() - start < 20
    assert list(out.functions) == [out.get_global_var("main")]
    check_pass(Inline(all_non_recursive=True), _chain_of_globals(50), inputs=[np.float32(0.5)])
