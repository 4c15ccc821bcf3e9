"""The reference interpreter through the public API: closures, recursion, ADTs, refs, sharing,
deep programs, errors."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from interrupts import ctrl_c_soon

import relay_nb as relay
from relay_nb.eval.values import ConstructorValue, format_value

NAT = """
type Nat {
  Z,
  S(Nat),
}
"""

LIST = """
type List[A] {
  Cons(A, List[A]),
  Nil,
}
"""


def run(text: str, *args, **options):
    mod = relay.parse(text)
    return relay.create_executor("interpreter", mod=mod, **options).evaluate()(*args)


def nat_value(mod: relay.IRModule, n: int) -> ConstructorValue:
    z, s = mod.get_constructor("Z"), mod.get_constructor("S")
    v = ConstructorValue(z, ())
    for _ in range(n):
        v = ConstructorValue(s, (v,))
    return v


def nat_to_int(v: ConstructorValue) -> int:
    n = 0
    while v.constructor.name_hint == "S":
        v, n = v.fields[0], n + 1
    return n


# --- values ---------------------------------------------------------------------------------


def test_tensor_result_is_numpy_and_scalars_are_0d():
    out = run("def @main(%x: Tensor[(2), float32]) { add(%x, %x) }", np.array([1.0, 2.5], "float32"))
    assert isinstance(out, np.ndarray) and out.dtype == np.float32
    np.testing.assert_array_equal(out, [2.0, 5.0])
    scalar = run("def @main() { add(1, 2) }")
    assert isinstance(scalar, np.ndarray) and scalar.shape == () and scalar.dtype == np.int32 and scalar == 3


def test_tuples_are_python_tuples():
    out = run("def @main(%x: int32) { (%x, (%x, True)) }", 4)
    assert isinstance(out, tuple) and out[0] == 4 and out[1][1] == True  # noqa: E712


def test_adt_values_have_constructor_and_fields_and_a_readable_repr():
    out = run(LIST + "def @main() { Cons(1, Cons(2, Nil)) }")
    assert out.constructor.name == "Cons" and len(out.fields) == 2
    assert out.fields[0] == 1 and out.fields[1].constructor.name == "Cons"
    assert repr(out) == "Cons(1, Cons(2, Nil))"


def test_closures_are_callable_from_python():
    f = run("def @main(%y: float32) { fn (%x: float32) { multiply(%x, %y) } }", np.float32(3))
    np.testing.assert_allclose(f(np.float32(2)), 6.0)


def test_refs_are_cells_and_ref_write_returns_unit():
    # The derived TVM test case from relay_text_format.md §12: evaluates to 3.
    out = run("def @main() { let %i = ref(1); let %a = ref_read(%i); let %u = ref_write(%i, 2); add(%a, ref_read(%i)) }")
    assert out == 3
    assert run("def @main() { ref_write(ref(1), 2) }") == ()


# --- seeds' semantics ------------------------------------------------------------------------


def test_seed_closure_captures_its_environment_at_definition():
    """Seed 000: the closure for %f stores %x = 0 where it was defined, so the result is zeros."""
    text = """
    def @main() {
      let %g = fn () {
        let %x = zeros(shape=[10, 10], dtype="float32");
        fn (%y: Tensor[(10, 10), float32]) { multiply(%y, %x) }
      };
      let %f = %g();
      let %x = ones(shape=[10, 10], dtype="float32");
      %f(%x)
    }
    """
    out = run(text)
    np.testing.assert_array_equal(out, np.zeros((10, 10), "float32"))


def test_seed_call_example_evaluates_to_22():
    """Seed 000: %f(10, 11) with float32 parameters and %c = 1 evaluates to 22."""
    text = """
    def @main() {
      let %c = 1;
      let %f = fn (%x: Tensor[(), float32], %y: Tensor[(), float32]) { %x + %y + %c };
      %f(10, 11)
    }
    """
    out = run(text)
    assert out.dtype == np.float32 and out == 22


def test_seed_shadowing_example_evaluates_to_4():
    assert run("def @main() { let %a = 1; let %b = 2 * %a; let %a = %a + %a; %a + %b }") == 4


def test_let_bound_recursion_factorial():
    text = """
    def @main(%n: int32) {
      let %fact = fn (%x: int32) -> int32 {
        if (%x == 0) { 1 } else { %x * %fact(%x - 1) }
      };
      %fact(%n)
    }
    """
    assert run(text, 10) == 3628800


def test_global_recursion_ackermann():
    text = """
    def @ackermann(%m: int32, %n: int32) -> int32 {
      if (%m == 0) { %n + 1 }
      else { if (logical_and(%m > 0, %n == 0)) { @ackermann(%m - 1, 1) }
      else { @ackermann(%m - 1, @ackermann(%m, %n - 1)) } }
    }
    def @main(%m: int32, %n: int32) { @ackermann(%m, %n) }
    """
    assert run(text, 2, 3) == 9


def test_mutual_recursion_between_globals():
    text = """
    def @even(%n: int32) -> bool { if (%n == 0) { True } else { @odd(%n - 1) } }
    def @odd(%n: int32) -> bool { if (%n == 0) { False } else { @even(%n - 1) } }
    def @main(%n: int32) { (@even(%n), @odd(%n)) }
    """
    assert run(text, 7) == (False, True)


def test_match_nested_patterns_wildcards_and_clause_order():
    text = NAT + """
    def @sub2(%v: Nat) -> Nat {
      match (%v) {
        S(S(%n)) => %n,
        _ => %v,
      }
    }
    def @first_wins(%v: Nat) -> int32 {
      match (%v) {
        _ => 0,
        S(S(%n)) => 1,
        S(%n) => 2,
        Z => 3,
      }
    }
    def @main() { (@sub2(S(S(S(Z)))), @sub2(S(Z)), @first_wins(S(S(Z)))) }
    """
    a, b, c = run(text)
    assert repr(a) == "S(Z)" and repr(b) == "S(Z)" and c == 0


def test_tuple_patterns():
    out = run("def @main() { match ((1, (2, 3))) { (%a, (_, %c)) => add(%a, %c) } }")
    assert out == 4


def test_incomplete_match_failing_names_the_value_and_the_line():
    text = LIST + """
    def @hd(%l: List[int32]) -> int32 {
      match? (%l) {
        Cons(%h, _) => %h,
      }
    }
    def @main() { @hd(Nil) }
    """
    with pytest.raises(relay.EvalError) as info:
        run(text)
    msg = str(info.value)
    assert "no clause of match? matches Nil" in msg
    assert info.value.line == 8  # the line of `match?` in the text


def test_shared_node_is_evaluated_once():
    # If %0 were evaluated twice there would be two cells and ref_read would see 1.
    text = "def @main() { %0 = ref(1); %1 = ref_write(%0, 2); (%1, ref_read(%0)) }"
    assert run(text)[1] == 2


# --- deep programs -----------------------------------------------------------------------


def test_deep_let_chain_at_default_recursion_limit():
    n = 100_000
    lines = ["def @main(%x0: int32) {"]
    lines += [f"  let %x{k} = add(%x{k - 1}, 1);" for k in range(1, n + 1)]
    lines += [f"  %x{n}", "}"]
    assert sys.getrecursionlimit() <= 1000 + 100
    assert run("\n".join(lines), 5) == n + 5


def test_tail_recursion_100000_calls_deep():
    text = "def @loop(%i: int32, %acc: int32) -> int32 { if (%i == 0) { %acc } else { @loop(%i - 1, %acc + 2) } }\n"
    text += "def @main(%n: int32) { @loop(%n, 0) }"
    assert run(text, 100_000) == 200_000


def test_non_tail_recursion_100000_deep_on_adts():
    text = NAT + """
    def @copy(%n: Nat) -> Nat { match (%n) { Z => Z, S(%m) => S(@copy(%m)) } }
    def @main(%n: Nat) { @copy(%n) }
    """
    mod = relay.parse(text)
    f = relay.create_executor("interpreter", mod=mod).evaluate()
    assert nat_to_int(f(nat_value(mod, 100_000))) == 100_000


def test_runaway_recursion_is_a_clear_eval_error_naming_function_and_line():
    text = "def @forever(%x: int32) -> int32 { add(@forever(%x), 1) }\ndef @main() { @forever(1) }"
    with pytest.raises(relay.EvalError) as info:
        run(text, max_depth=5_000)
    assert "recursion deeper than 5000 calls in @forever" in str(info.value)
    assert info.value.line == 1


def test_keyboard_interrupt_stops_evaluation_and_interpreter_stays_usable():
    text = "def @spin(%i: int32) -> int32 { @spin(add(%i, 1)) }\ndef @main(%i: int32) { @spin(%i) }"
    mod = relay.parse(text)
    spin = relay.create_executor("interpreter", mod=mod).evaluate()
    with pytest.raises(KeyboardInterrupt), ctrl_c_soon():
        spin(0)
    ok = relay.create_executor("interpreter", mod=relay.parse("def @main(%x: int32) { add(%x, 1) }")).evaluate()
    assert ok(1) == 2


# --- argument checking ----------------------------------------------------------------------


def test_arguments_are_checked_against_parameter_types():
    f = relay.create_executor("interpreter", mod=relay.parse("def @main(%x: Tensor[(2, 3), float32]) { %x }")).evaluate()
    with pytest.raises(relay.EvalError, match=r"expects shape \(2, 3\), got \(3, 2\)"):
        f(np.zeros((3, 2), "float32"))
    with pytest.raises(relay.EvalError, match="expects dtype float32, got an array of int64"):
        f(np.zeros((2, 3), "int64"))
    with pytest.raises(relay.EvalError, match="expects 1 arguments, got 2"):
        f(np.zeros((2, 3), "float32"), 1)


def test_python_scalars_are_converted_to_the_parameter_dtype():
    f = relay.create_executor("interpreter", mod=relay.parse("def @main(%x: float32) { %x }")).evaluate()
    out = f(2)
    assert out.dtype == np.float32 and out == 2.0


def test_evaluate_an_expression_and_debug_alias():
    ex = relay.create_executor("debug", mod=relay.parse("def @main() { 1 }"))
    assert ex.evaluate(relay.parse_expr("add(3, 4)")) == 7
    with pytest.raises(relay.RelayError, match="unknown executor kind"):
        relay.create_executor("nonsense")


def test_format_value_handles_very_deep_lists():
    mod = relay.parse(NAT)
    assert format_value(nat_value(mod, 50_000)).count("S(") == 50_000
