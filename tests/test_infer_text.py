"""Type inference on programs written in the text format (seed 000's examples among them)."""

from __future__ import annotations

import pytest

from relay_nb.errors import RelayTypeError
from relay_nb.ir.ty import FuncType, TensorType, TupleType
from relay_nb.syntax import parser
from relay_nb.transform import InferType
from relay_nb.typing.text import type_text

HEADER = '#[version = "0.0.5"]\n'


def typecheck(src: str):
    """Parse (with the version header) and run InferType."""
    return InferType()(parser.parse(HEADER + src))


def T(*shape, dtype="float32"):
    return TensorType(tuple(shape), dtype)


def test_seed_call_example_literals_take_float32():
    mod = typecheck(
        """
def @main() {
  let %c = 1;
  let %f = fn(%x : Tensor[(), float32], %y : Tensor[(), float32]) { %x + %y + %c };
  %f(10, 11)
}
"""
    )
    assert mod["main"].checked_type == FuncType((), T())


def test_seed_ackermann():
    mod = typecheck(
        """
def @ackermann(%m : Tensor[(), int32], %n : Tensor[(), int32]) -> Tensor[(), int32] {
    if (%m == 0) {
        %n + 1
    } else {
        if (%m > 0 && %n == 0) {
            @ackermann(%m - 1, 1)
        } else {
            @ackermann(%m - 1, @ackermann(%m, %n - 1))
        }
    }
}
"""
    )
    assert mod["ackermann"].checked_type == FuncType((T(dtype="int32"),) * 2, T(dtype="int32"))


def test_seed_ackermann_verbatim_pseudo_syntax():
    mod = typecheck(
        """
def @ackermann(%m : Tensor[(), int32], %n : Tensor[(), int32]) -> Tensor[(), int32] {
if (%m == 0) {
%n + 1
} else if (%m > 0 && %n == 0) {
@ackermann(%m - 1, 1)
} else {
@ackermann(%m - 1, @ackermann(%m, %n - 1))
}
}
""",
    )
    assert mod["ackermann"].checked_type.ret_type == T(dtype="int32")


def test_recursive_let_fact_scalar():
    mod = typecheck(
        """
def @main() {
  let %fact = fn(%x : float32) -> float32 {
    if (%x == 0f) { 1f } else { %x * %fact(%x - 1f) }
  };
  %fact(10f)
}
"""
    )
    assert mod["main"].checked_type.ret_type == T()


def test_seed_fact_with_tensors_is_rejected_for_its_non_scalar_condition():
    with pytest.raises(
        RelayTypeError, match="if condition must be bool, found Tensor\\[\\(10, 10\\), bool\\]"
    ):
        typecheck(
            """
def @main() {
let %fact = fn(%x : Tensor[(10, 10), float32]) -> Tensor[(10, 10), float32] {
if (%x == Constant(0, (10, 10), float32)) {
Constant(1, (10, 10), float32)
} else {
%x * %fact(%x - Constant(1, (10, 10), float32))
}
};
%fact(Constant(10, (10, 10), float32))
}
""",
        )


def test_seed_closure_example():
    mod = typecheck(
        """
def @main() {
  let %g = fn() {
    let %x = zeros(shape=[10, 10], dtype="float32");
    fn(%y) { %y * %x }
  };
  let %f = %g();
  let %x = ones(shape=[10, 10], dtype="float32");
  %f(%x)
}
"""
    )
    assert mod["main"].checked_type.ret_type == T(10, 10)


def test_seed_tuple_example():
    mod = typecheck(
        """
def @main(%a : Tensor[(10, 10), float32], %b : float32, %c : Tensor[(100, 100), float32]) {
  let %tup = (%a, %b);
  ((%tup.0 + %tup.1), %c)
}
"""
    )
    assert mod["main"].checked_type.ret_type == TupleType((T(10, 10), T(100, 100)))


def test_seed_nat_match_examples():
    mod = typecheck(
        """
type Nat {
  Z,
  S(Nat),
}

def @dec(%v: Nat[]) -> Nat[] {
  match (%v) {
    Z => Z,
    S(%n) => %n,
  }
}

def @dec2(%v : Nat[]) -> Nat[] {
  match (%v) {
    S(S(%n)) => %n,
    _ => %v,
  }
}

def @add_nat(%a: Nat[], %b: Nat[]) -> Nat[] {
  match (%a) {
    Z => %b,
    S(%n) => S(@add_nat(%n, %b)),
  }
}

def @main() -> Nat[] {
  @add_nat(S(S(Z)), @dec2(S(Z)))
}
"""
    )
    for name in ("dec", "dec2", "add_nat"):
        assert type_text(mod[name].checked_type).startswith("fn (Nat[]")


def test_generalization_in_text():
    mod = typecheck(
        """
def @f(%x, %y) { add(%x, %y) }

def @main(%a: Tensor[(2, 3), float32], %b: Tensor[(3), float32], %i: int32) {
  (@f(%a, %b), @f(%i, 1))
}
"""
    )
    assert type_text(mod["f"].checked_type) == "fn [A, B, C](A, B) -> C where Broadcast(A, B, C)"
    assert mod["main"].checked_type.ret_type == TupleType((T(2, 3), T(dtype="int32")))


def test_type_params_in_text():
    mod = typecheck(
        """
type List[A] {
  Cons(A, List[A]),
  Nil,
}

def @id[A](%x: A) -> A { %x }

def @length[A](%l: List[A]) -> int32 {
  match (%l) {
    Cons(_, %t) => 1 + @length(%t),
    Nil => 0,
  }
}

def @main() {
  let %g = fn [t](%x: t) -> t { %x };
  (@id(1f), %g(2), @length(Cons(1, Cons(2, Nil))))
}
"""
    )
    assert mod["main"].checked_type.ret_type == TupleType((T(), T(dtype="int32"), T(dtype="int32")))


def test_refs_in_text():
    mod = typecheck(
        """
def @main() {
  let %i = ref(1);
  let %a = ref_read(%i);
  let %u = ref_write(%i, 2);
  %a + ref_read(%i)
}
"""
    )
    assert mod["main"].checked_type.ret_type == T(dtype="int32")


def test_error_points_at_source_line_and_column():
    src = """def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(4, 3), float32]) {
  add(%x, %y)
}
"""
    with pytest.raises(
        RelayTypeError, match="add: shapes \\(2, 3\\) and \\(4, 3\\) do not broadcast"
    ) as info:
        typecheck(src)
    err = info.value
    assert err.line == 3  # the header is line 1
    assert err.column == 3
    rendered = str(err)
    assert "add(%x, %y)" in rendered and "^" in rendered


@pytest.mark.parametrize(
    "src, message",
    [
        (
            "def @main(%x: float32, %y: int32) { add(%x, %y) }",
            "add: dtype mismatch: float32 vs int32",
        ),
        ("def @f(%a, %b) { %a }\ndef @main() { @f(1, 2, 3) }", "@f expects 2 arguments, got 3"),
        ("def @main() { (1, 2).3 }", "tuple index 3 out of range for a 2-tuple"),
        (
            "def @main(%x: Tensor[(2), float32]) { %x(1) }",
            "cannot call a value of type Tensor\\[\\(2\\), float32\\]",
        ),
        ("def @main() { if (1) { 2 } else { 3 } }", "if condition must be bool, found int32"),
        (
            "def @main(%i: int32) -> float32 { %i }",
            "function declared to return float32 but its body has type int32",
        ),
        (
            "def @main(%x: float32) -> int32 { %x }",
            "function declared to return int32 but its body has type float32",
        ),
        (
            "type List[A] { Cons(A, List[A]), Nil, }\ndef @main() { Cons(1, 2) }",
            "constructor Cons expects field 1 of type List\\[A\\], found int32",
        ),
    ],
)
def test_error_messages(src, message):
    with pytest.raises(RelayTypeError, match=message) as info:
        typecheck(src)
    assert info.value.span is not None


def test_where_clause_in_text():
    mod = typecheck(
        """
def @main(%p: Tensor[(2, 3), float32], %q: Tensor[(3), float32]) {
  let %f = fn(%x, %y) where Broadcast { add(%x, %y) };
  %f(%p, %q)
}
""",
    )
    assert mod["main"].checked_type.ret_type == T(2, 3)


def test_literal_in_unannotated_global_follows_the_argument():
    mod = typecheck(
        """
def @inc(%x) { %x + 1 }

def @main(%a: Tensor[(2), float32], %b: int8) {
  (@inc(%a), @inc(%b))
}
"""
    )
    assert mod["main"].checked_type.ret_type == TupleType((T(2), T(dtype="int8")))


def test_seed_polymorphism_pseudo_syntax():
    mod = typecheck(
        """
def @main(%v: Tensor[(2, 7), int8]) {
  let %id = fn<t : Type>(%x : t) -> t { %x };
  let %keep = fn<s : Shape, bt : BaseType>(%x : Tensor[s, bt]) { %x };
  (%id(True), %keep(%v))
}
""",
    )
    assert mod["main"].checked_type.ret_type == TupleType((T(dtype="bool"), T(2, 7, dtype="int8")))


@pytest.mark.parametrize("cond, width", [("(%a)", 4), ("%a", 2)])
def test_non_bool_variable_condition_points_at_the_condition_with_the_binding_as_a_note(cond, width):
    # %a's own span is its binding in the parameter list (issue #11 §5)
    src = f"def @main(%a: float32) {{\n  if {cond} {{ 1 }} else {{ 2 }}\n}}"
    with pytest.raises(RelayTypeError, match="if condition must be bool, found float32") as info:
        InferType()(parser.parse(src))
    err = info.value
    assert (err.line, err.column) == (2, 6)
    assert err.span.end_column - err.span.column == width
    assert err.notes == ("%a is bound at line 1, column 11",)
    assert f"2 |   if {cond} {{ 1 }}" in str(err)
