"""The Relay text reader: the IR it builds (node types, sharing, scoping, spans, attrs).

Errors are in test_parser_errors.py, deep/large programs in test_parser_scale.py, the
seed documents' examples in tests/seeds/.
"""

from __future__ import annotations

import logging

import numpy as np
import pytest

import relay_nb as relay
from relay_nb.ir.adt import TypeData
from relay_nb.ir.attrs import Attrs
from relay_nb.ir.expr import (
    Call,
    Constant,
    Constructor,
    Function,
    GlobalVar,
    If,
    Let,
    Match,
    MetaRef,
    Op,
    PatternConstructor,
    PatternTuple,
    PatternVar,
    PatternWildcard,
    RefCreate,
    RefRead,
    RefWrite,
    Tuple,
    TupleGetItem,
)
from relay_nb.ir.module import IRModule
from relay_nb.ir.ty import (
    Any,
    FuncType,
    GlobalTypeVar,
    IncompleteType,
    Kind,
    RefType,
    TensorType,
    TupleType,
    TypeCall,
    TypeRelation,
)
from relay_nb.syntax.parser import fromtext, parse, parse_expr, parse_type


def op_name(call):
    assert isinstance(call, Call) and isinstance(call.op, Op), call
    return call.op.name


# ---------------------------------------------------------------- entry points


def test_public_api_is_exported():
    assert relay.parse is parse
    assert relay.parse_expr is parse_expr
    assert relay.fromtext is fromtext is parse


def test_module_with_header_and_def():
    mod = parse('#[version = "0.0.5"]\ndef @main(%x: Tensor[(2, 3), float32]) { add(%x, %x) }')
    assert isinstance(mod, IRModule)
    f = mod["main"]
    assert isinstance(f, Function)
    (x,) = f.params
    assert x.name_hint == "x" and x.type_annotation == TensorType((2, 3), "float32")
    assert op_name(f.body) == "add"
    assert f.body.args[0] is x and f.body.args[1] is x


def test_header_is_optional_and_v004_header_is_read():
    a = parse("def @main() { 1 }")
    b = parse("v0.0.4\ndef @main() { 1 }")
    assert a["main"].body.data == b["main"].body.data == 1


def test_bare_fn_becomes_main_itself():
    mod = parse("fn (%x: int32) { %x }")
    f = mod["main"]
    assert f.body is f.params[0]


def test_v004_bare_expression_program():
    mod = parse("v0.0.4\nfn (%x: int32) { add(%x, 1) }")
    assert op_name(mod["main"].body) == "add"


def test_bare_expression_is_wrapped_with_its_free_vars_as_params():
    mod = parse("free_var %x: int32; add(%x, 1)")
    f = mod["main"]
    assert [p.name_hint for p in f.params] == ["x"]
    assert f.body.args[0] is f.params[0]


def test_empty_text_is_an_empty_module():
    assert len(parse("")) == 0
    assert len(parse('#[version = "0.0.5"]\n')) == 0
    assert len(parse("// just a comment\n/* and another */")) == 0


def test_definitions_and_a_bare_expression_together():
    mod = parse("type Nat { Z, S(Nat) }\nfn (%n: Nat) { S(%n) }")
    assert mod.get_constructor("S").belong_to == GlobalTypeVar("Nat")
    assert mod["main"].body.op is mod.get_constructor("S")


def test_parse_expr_returns_an_expression():
    e = parse_expr("fn (%x) { %x }")
    assert isinstance(e, Function) and e.body is e.params[0]
    assert isinstance(parse_expr('#[version = "0.0.5"]\n(1, 2)'), Tuple)


def test_parse_type():
    assert parse_type("Tensor[(2, 3), float32]") == TensorType((2, 3), "float32")
    assert parse_type("fn (int32) -> bool") == FuncType(
        (TensorType((), "int32"),), TensorType((), "bool")
    )


def test_init_module_is_visible_and_not_mutated():
    base = parse(
        "type List[A] { Cons(A, List[A]), Nil }\ndef @hd[A](%l: List[A]) -> A { match? (%l) { Cons(%x, _) => %x } }"
    )
    mod = parse("def @main() { @hd(Cons(1, Nil)) }", init_module=base)
    assert "main" not in base and "main" in mod
    body = mod["main"].body
    assert body.op is base.get_global_var("hd")
    assert body.args[0].op is base.get_constructor("Cons")
    assert body.args[0].args[1].op is base.get_constructor("Nil")


def test_infer_type_flag_runs_inference():
    mod = parse("def @main(%x: Tensor[(2), float32]) { add(%x, %x) }", infer_type=True)
    assert mod["main"].body.checked_type == TensorType((2,), "float32")


def test_bytes_input():
    assert op_name(parse(b"def @main(%x) { negative(%x) }")["main"].body) == "negative"


# ---------------------------------------------------------------- scoping


def test_shadowing_makes_distinct_vars_seed000():
    # seed 000: let %a = 1; let %b = 2 * %a; let %a = %a + %a; %a + %b
    e = parse_expr("let %a = 1;\nlet %b = 2 * %a;\nlet %a = %a + %a;\n%a + %b")
    a1, b, a2 = e.var, e.body.var, e.body.body.var
    assert a1 is not a2 and a1.name_hint == a2.name_hint == "a"
    assert e.body.value.args[1] is a1  # 2 * %a uses the first %a
    # `let %a = %a + %a`: the value is not a function, so it reads the OUTER %a
    assert e.body.body.value.args == (a1, a1)
    final = e.body.body.body
    assert final.args == (a2, b)


def test_let_var_is_in_scope_in_its_own_function_value():
    e = parse_expr("let %f = fn (%n: int32) { %f(%n) }; %f(1)")
    f = e.var
    assert isinstance(e.value, Function)
    assert e.value.body.op is f  # recursion through the let variable
    assert e.body.op is f


def test_let_rec_through_parenthesised_fn_and_comment():
    e = parse_expr("let %f = /* rec */ (fn () { %f() }); %f")
    assert e.value.body.op is e.var


def test_same_name_in_two_functions_are_different_vars():
    mod = parse("def @f(%x) { %x }\ndef @g(%x) { %x }")
    assert mod["f"].params[0] is not mod["g"].params[0]
    assert mod["f"].body is mod["f"].params[0]
    assert mod["g"].body is mod["g"].params[0]


def test_fn_params_shadow_outer_vars():
    e = parse_expr("fn (%x) { (fn (%x) { %x }, %x) }")
    inner = e.body.fields[0]
    assert inner.body is inner.params[0] is not e.params[0]
    assert e.body.fields[1] is e.params[0]


def test_let_scope_ends_with_its_body():
    # the let inside the first tuple field does not leak into the second
    e = parse_expr("fn (%x) { ((let %x = 1; %x), %x) }")
    first, second = e.body.fields
    assert isinstance(first, Let) and first.body is first.var
    assert second is e.params[0]


def test_pattern_vars_are_scoped_to_their_arm():
    mod = parse(
        "type L { C(int32, L), N }\n"
        "def @main(%n: int32, %l: L) { match (%l) { C(%n, _) => %n, N => %n } }"
    )
    f = mod["main"]
    arm1, arm2 = f.body.clauses
    bound = arm1.lhs.patterns[0].var
    assert isinstance(arm1.lhs.patterns[0], PatternVar)
    assert arm1.rhs is bound and bound is not f.params[0]
    assert arm2.rhs is f.params[0]


def test_block_and_if_branches():
    e = parse_expr("fn (%c: bool) { if (%c) { let %y = 1; %y } else { { 2 } } }")
    assert isinstance(e.body, If)
    assert isinstance(e.body.true_branch, Let)
    assert isinstance(e.body.false_branch, Constant)


def test_sequence_is_a_let_with_an_empty_name():
    e = parse_expr("(); ()")
    assert isinstance(e, Let) and e.var.name_hint == ""
    assert isinstance(e.value, Tuple) and isinstance(e.body, Tuple)


def test_free_var_declaration():
    e = parse_expr("free_var %x: Tensor[(3), float32]; add(%x, %x)")
    x = e.args[0]
    assert e.args[1] is x and x.type_annotation == TensorType((3,), "float32")


def test_undeclared_inputs_of_a_bare_expression_become_free_vars():
    # seed 000's fragments read their inputs this way: `%1 = %a + %b ...`
    mod = parse("%1 = %a + %b\n%2 = %1 + %1\n%2 * %2")
    f = mod["main"]
    a, b = f.params
    assert (a.name_hint, b.name_hint) == ("a", "b")
    s2 = f.body.args[0]
    assert f.body.args[1] is s2
    s1 = s2.args[0]
    assert s2.args[1] is s1 and s1.args == (a, b)


# ---------------------------------------------------------------- graph bindings


def test_graph_binding_shares_the_node():
    e = parse_expr("fn (%x) { %1 = log(%x); %2 = add(%1, %1); %2 }")
    add = e.body
    assert op_name(add) == "add"
    assert add.args[0] is add.args[1]
    assert op_name(add.args[0]) == "log"


def test_graph_bindings_without_semicolons_seed004():
    mod = parse("def @muladd(%x, %y, %z) {\n  %1 = mul(%x, %y)\n  %2 = add(%1, %z)\n  %2\n}")
    body = mod["muladd"].body
    assert op_name(body) == "add" and op_name(body.args[0]) == "multiply"


def test_graph_labels_are_global_and_first_binding_wins():
    # TVM's printer refers to a node printed in another scope (§11.3)
    e = parse_expr("fn (%x, %c: bool) { if (%c) { %1 = add(%x, %x); %1 } else { %1 } }")
    assert e.body.true_branch is e.body.false_branch
    e = parse_expr("fn (%x) { %0 = add(%x, %x); %0 = negative(%x); %0 }")
    assert op_name(e.body) == "add"


def test_graph_labels_rebound_in_a_later_def_take_the_new_node_seed004():
    mod = parse(
        "def @muladd(%x, %y, %z) {\n  %1 = mul(%x, %y)\n  %2 = add(%1, %z)\n  %2\n}\n"
        "def @myfunc(%x) {\n  %1 = @muladd(%x, 1, 2)\n  %2 = @muladd(%1, 2, 3)\n  %2\n}"
    )
    f = mod["myfunc"]
    outer = f.body
    assert outer.op is mod.get_global_var("muladd")
    inner = outer.args[0]
    assert inner.op is mod.get_global_var("muladd") and inner.args[0] is f.params[0]


def test_graph_label_from_an_earlier_def_is_visible_when_not_rebound():
    mod = parse('def @f(%x) { %0 = zeros(shape=[2], dtype="float32"); %0 }\ndef @g() { %0 }')
    assert mod["g"].body is mod["f"].body


def test_graph_and_let_mixed():
    e = parse_expr("fn (%x) { %0 = add(%x, %x); let %y = %0; (%0, %y) }")
    assert isinstance(e.body, Let)
    assert e.body.value is e.body.body.fields[0]
    assert e.body.body.fields[1] is e.body.var


def test_hoisted_match_and_let_match():
    mod = parse(
        "type Nat { Z, S(Nat) }\n"
        "def @main(%n: Nat) { %1 = match (%n) { Z => Z, S(%p) => %p, }; let %m = match (%1) { _ => 0 }; %m }"
    )
    let = mod["main"].body
    assert isinstance(let.value, Match) and isinstance(let.value.data, Match)


# ---------------------------------------------------------------- literals


@pytest.mark.parametrize(
    "text, value, dtype, literal",
    [
        ("3", 3, "int32", True),
        ("-2", -2, "int32", True),
        ("2147483647", 2147483647, "int32", True),
        ("2147483648", 2147483648, "int64", True),
        ("3i64", 3, "int64", False),
        ("-2i64", -2, "int64", False),
        ("7i16", 7, "int16", False),
        ("7i32", 7, "int32", False),
        ("1.5", 1.5, "float32", True),
        ("1e5", 1e5, "float32", True),
        ("0.5f", 0.5, "float32", False),
        ("1f", 1.0, "float32", False),
        ("3f16", 3.0, "float16", False),
        ("2.5f64", 2.5, "float64", False),
        ("1E+3f32", 1000.0, "float32", False),
        ("--10", 10, "int32", True),
        ("---10", -10, "int32", True),
    ],
)
def test_numeric_literals(text, value, dtype, literal):
    c = parse_expr(text)
    assert isinstance(c, Constant) and c.data.ndim == 0
    assert str(c.data.dtype) == dtype
    assert c.data.item() == value
    assert c.is_literal is literal


def test_inf_and_bools():
    inf, ninf, t, f = parse_expr("(inff, -inff, True, False)").fields
    assert inf.data.item() == np.inf and str(inf.data.dtype) == "float32"
    assert ninf.data.item() == -np.inf
    assert t.data.item() is True and str(t.data.dtype) == "bool"
    assert f.data.item() is False


def test_each_literal_is_its_own_node():
    a, b = parse_expr("(1, 1)").fields
    assert a is not b


def test_constant_pseudo_syntax():
    c = parse_expr("Constant(1, (10, 10), float32)")
    assert c.data.shape == (10, 10) and str(c.data.dtype) == "float32"
    assert np.all(c.data == 1) and not c.is_literal
    assert parse_expr('Constant(0, (), "int8")').data.shape == ()


# ---------------------------------------------------------------- operators and calls


def test_infix_precedence_and_associativity():
    # 1 * 2 + 3 < 4 == True  groups as  (((1 * 2) + 3) < 4) == True
    e = parse_expr("1 * 2 + 3 < 4 == True")
    assert op_name(e) == "equal"
    lt = e.args[0]
    assert op_name(lt) == "less" and op_name(lt.args[0]) == "add"
    assert op_name(lt.args[0].args[0]) == "multiply"
    # a == b < c + d * e  groups as  a == (b < (c + (d * e)))
    e = parse_expr(
        "free_var %a; free_var %b; free_var %c; free_var %d; free_var %e; %a == %b < %c + %d * %e"
    )
    assert op_name(e) == "equal" and op_name(e.args[1]) == "less"
    assert op_name(e.args[1].args[1]) == "add" and op_name(e.args[1].args[1].args[1]) == "multiply"
    # left associative
    e = parse_expr("10 - 2 - 3")
    assert op_name(e) == "subtract" and op_name(e.args[0]) == "subtract"
    assert e.args[1].data == 3


def test_logical_operators_seed000():
    e = parse_expr("free_var %m; free_var %n; %m > 0 && %n == 0 || %m < 0")
    assert op_name(e) == "logical_or" and op_name(e.args[0]) == "logical_and"
    assert op_name(e.args[0].args[0]) == "greater" and op_name(e.args[0].args[1]) == "equal"


@pytest.mark.parametrize("text", ["%x - 1", "%x -1", "%x-1"])
def test_subtraction_of_a_literal_in_any_spacing(text):
    e = parse_expr(f"fn (%x: int32) {{ {text} }}")
    assert op_name(e.body) == "subtract"
    assert e.body.args[0] is e.params[0] and e.body.args[1].data == 1


def test_unary_minus():
    e = parse_expr("fn (%x) { -%x }")
    assert op_name(e.body) == "negative" and e.body.args[0] is e.params[0]
    c = parse_expr("- 1.5")
    assert isinstance(c, Constant) and c.data.item() == -1.5 and str(c.data.dtype) == "float32"


def test_mul_and_sub_aliases_seed004():
    e = parse_expr("fn (%x, %y) { (mul(%x, %y), sub(%x, %y)) }")
    assert [op_name(f) for f in e.body.fields] == ["multiply", "subtract"]


def test_op_is_the_registered_object():
    e = parse_expr("fn (%x) { (add(%x, %x), add(%x, %x)) }")
    a, b = e.body.fields
    assert a is not b and a.op is b.op is relay.op.get("add")


def test_call_attributes_are_checked_and_defaulted():
    e = parse_expr(
        "fn (%x, %w) { nn.conv2d(%x, %w, strides=[2, 2], padding=[1, 1, 1, 1], channels=64, "
        'kernel_size=[3, 3], data_layout="NCHW") }'
    )
    attrs = e.body.attrs
    assert isinstance(attrs, Attrs)
    assert attrs.strides == (2, 2) and attrs.padding == (1, 1, 1, 1)
    assert attrs.channels == 64 and attrs.kernel_size == (3, 3)
    assert attrs.groups == 1  # a default


def test_attribute_value_kinds():
    e = parse_expr(
        "fn (%x) { (nn.pad(%x, pad_width=[[0, 0], [1, 1]]), sum(%x, axis=[1], keepdims=True), "
        'clip(%x, a_min=-1f, a_max=1f), nn.dense(%x, %x, units=None), cast(%x, dtype="int8"), '
        "cast(%x, dtype=float16), nn.batch_norm(%x, %x, %x, %x, %x, epsilon=1e-05f), sum(%x, axis=[]), "
        "nn.softmax(%x, axis=(-1))) }"
    )
    pad, s, clip, dense, cast1, cast2, bn, s2, sm = e.body.fields
    assert pad.attrs.pad_width == ((0, 0), (1, 1))
    assert s.attrs.axis == (1,) and s.attrs.keepdims is True
    assert clip.attrs.a_min == -1.0 and clip.attrs.a_max == 1.0
    assert dense.attrs.units is None
    assert cast1.attrs.dtype == "int8" and cast2.attrs.dtype == "float16"
    assert bn.attrs.epsilon == pytest.approx(1e-05)
    assert s2.attrs.axis == ()
    assert sm.attrs.axis == -1


def test_attributes_spread_over_lines_and_with_comments():
    e = parse_expr(
        "fn (%x, %w) { nn.conv2d(%x, %w,\n    padding=[1, 1,\n             1, 1], channels=3 /* c */, kernel_size=[3, 3]) }"
    )
    assert e.body.attrs.padding == (1, 1, 1, 1) and e.body.attrs.channels == 3


def test_identical_attributes_share_one_attrs_object():
    e = parse_expr("fn (%x) { (nn.softmax(%x, axis=1), nn.softmax(%x, axis=1)) }")
    a, b = e.body.fields
    assert a.attrs is b.attrs


def test_call_attrs_on_non_operator_need_attrs_type_key():
    e = parse_expr('fn (%f, %x) { %f(%x, name="x", attrs_type_key="attrs.TestAttrs") }')
    assert e.body.attrs.type_key == "attrs.TestAttrs" and e.body.attrs["name"] == "x"


def test_function_attributes_in_the_param_list():
    e = parse_expr(
        'fn (%p0: Tensor[(1, 8), float32], Primitive=1, Compiler="dnnl", relay.reshape_only=1) { nn.relu(%p0) }'
    )
    assert e.attrs["Primitive"] == 1 and e.attrs["Compiler"] == "dnnl"
    assert e.attrs["relay.reshape_only"] == 1
    assert e.is_primitive
    f = parse_expr("fn (Primitive=1) { 1 }")
    assert f.params == () and f.attrs["Primitive"] == 1
    mod = parse('def @f(%x: float32, global_symbol="f", Primitive=1) -> float32 { %x }')
    assert mod["f"].attrs["global_symbol"] == "f"


def test_param_virtual_device_is_accepted():
    e = parse_expr(
        "fn (%x {virtual_device=meta[VirtualDevice][0]}: Tensor[(5, 7), float32]) { %x }"
    )
    assert e.params[0].type_annotation == TensorType((5, 7), "float32")


def test_curried_call_and_call_site_type_args():
    e = parse_expr("free_var %f; %f(1)(2)")
    assert isinstance(e.op, Call) and e.op.op.name_hint == "f"
    e = parse_expr("free_var %f; %f<Tensor[(), bool], int32>(True, False)")
    assert e.type_args == (TensorType((), "bool"), TensorType((), "int32"))
    assert len(e.args) == 2
    # a comparison stays a comparison
    e = parse_expr("free_var %a; free_var %b; (%a<%b, %a < %b)")
    assert [op_name(f) for f in e.fields] == ["less", "less"]


def test_global_forward_references_and_recursion():
    mod = parse("def @f(%n) { @g(%n) }\ndef @g(%n) { @f(%n) }")
    assert mod["f"].body.op is mod.get_global_var("g")
    assert mod["g"].body.op is mod.get_global_var("f")
    assert isinstance(mod["f"].body.op, GlobalVar)


def test_tuples_and_projection():
    e = parse_expr("fn (%a, %b) { ((), (%a,), (%a, %b), (%a), (%a, %b,)) }")
    unit, one, two, paren, trailing = e.body.fields
    assert unit.fields == () and one.fields == (e.params[0],)
    assert two.fields == e.params and paren is e.params[0]
    assert len(trailing.fields) == 2


def test_chained_projection_and_projection_after_call():
    e = parse_expr("fn (%t, %f) { (%t.0.1, %f(%t).0, (%t.0).1, (%t, %t).1) }")
    a, b, c, d = e.body.fields
    assert isinstance(a, TupleGetItem) and a.index == 1 and a.tuple_value.index == 0
    assert a.tuple_value.tuple_value is e.params[0]
    assert isinstance(b.tuple_value, Call) and b.index == 0
    assert c.index == 1 and c.tuple_value.index == 0
    assert d.index == 1 and isinstance(d.tuple_value, Tuple)


def test_dotted_and_slashed_variable_names():
    e = parse_expr("fn (%layer1.weight, %gpu_0/conv_w) { add(%layer1.weight, %gpu_0/conv_w) }")
    assert [p.name_hint for p in e.params] == ["layer1.weight", "gpu_0/conv_w"]
    assert e.body.args == e.params


def test_if_else_if_chain():
    e = parse_expr("fn (%x: int32) { if (%x == 0) { 0 } else if (%x == 1) { 1 } else { 2 } }")
    assert isinstance(e.body, If) and isinstance(e.body.false_branch, If)
    assert e.body.false_branch.false_branch.data == 2
    # if is atomic: it can be an operand
    e = parse_expr("fn (%c: bool) { 1 + if (%c) { 1 } else { 2 } }")
    assert isinstance(e.body.args[1], If)


def test_references():
    e = parse_expr(
        "let %i = ref(1); let %a = ref_read(%i); let %u = ref_write(%i, 2); %a + ref_read(%i)"
    )
    assert isinstance(e.value, RefCreate)
    assert isinstance(e.body.value, RefRead) and e.body.value.ref is e.var
    assert isinstance(e.body.body.value, RefWrite)


def test_statement_level_in_parentheses():
    e = parse_expr("(let %a = 1; 3) + 2")
    assert op_name(e) == "add" and isinstance(e.args[0], Let)


# ---------------------------------------------------------------- ADTs and match


def test_type_definition_and_constructors():
    mod = parse("type List[A] { Cons(A, List[A]), Nil, }")
    td = mod.get_type("List")
    assert isinstance(td, TypeData) and len(td.type_vars) == 1
    cons, nil = td.constructors
    assert (cons.name_hint, cons.tag, nil.name_hint, nil.tag) == ("Cons", 0, "Nil", 1)
    a = td.type_vars[0]
    assert cons.inputs[0] is a
    assert cons.inputs[1] == TypeCall(GlobalTypeVar("List"), (a,))


def test_data_pseudo_syntax_seed000():
    mod = parse("data Nat {\nZ : () -> Nat # zero\nS : (Nat) -> Nat # successor (+1) to a nat\n}")
    z, s = mod.get_type("Nat").constructors
    assert z.inputs == () and s.inputs == (TypeCall(GlobalTypeVar("Nat"), ()),)
    mod = parse("data Optional<a> { None : () -> Optional, Some : (a) -> Optional }")
    assert [c.name_hint for c in mod.get_type("Optional").constructors] == ["None", "Some"]


def test_extern_type():
    mod = parse("extern type Storage\ndef @f(%s: Storage[]) { %s }")
    assert mod.get_type("Storage").constructors == ()


def test_nullary_constructor_is_a_call_and_nary_is_unapplied():
    mod = parse(
        "type List[A] { Cons(A, List[A]), Nil }\ndef @main() { (Cons, Nil, Nil(), Cons(1, Nil)) }"
    )
    cons, nil, nil2, full = mod["main"].body.fields
    assert isinstance(cons, Constructor)
    assert isinstance(nil, Call) and isinstance(nil.op, Constructor) and nil.args == ()
    assert isinstance(nil2, Call) and nil2.op is nil.op and nil2.args == ()
    assert full.op is cons and full.args[1].op is nil.op


def test_match_and_patterns():
    mod = parse(
        "type List[A] { Cons(A, List[A]), Nil }\n"
        "def @main(%x: List[(List[()],)]) { match (%x) { Cons((Nil), Nil) => 1, Cons(%h: (List[()],), _) => 2, _ => 0, } }"
    )
    m = mod["main"].body
    assert isinstance(m, Match) and m.complete and len(m.clauses) == 3
    p0 = m.clauses[0].lhs
    assert isinstance(p0, PatternConstructor) and p0.constructor.name_hint == "Cons"
    # (p) in a pattern is a one-element tuple pattern
    assert isinstance(p0.patterns[0], PatternTuple) and len(p0.patterns[0].patterns) == 1
    assert isinstance(p0.patterns[1], PatternConstructor) and p0.patterns[1].patterns == ()
    p1 = m.clauses[1].lhs.patterns[0]
    assert isinstance(p1, PatternVar) and isinstance(p1.var.type_annotation, TupleType)
    assert isinstance(m.clauses[2].lhs, PatternWildcard)


def test_partial_match_and_unparenthesised_scrutinee():
    mod = parse("type L { C(int32, L), N }\ndef @hd(%l: L) { match? %l { C(%x, _) => %x } }")
    assert mod["hd"].body.complete is False


def test_case_arms_pseudo_syntax_seed000():
    base = parse("data Nat {\nZ : () -> Nat\nS : (Nat) -> Nat\n}")
    mod = parse(
        "fn(%v: Nat[]) -> Nat[] {\nmatch(%v) {\ncase Z() { Z() }\ncase S(%n) { %n } # bound here\n}\n}",
        init_module=base,
    )
    m = mod["main"].body
    z, s = m.clauses
    assert isinstance(z.lhs, PatternConstructor) and z.lhs.patterns == ()
    assert isinstance(z.rhs, Call) and z.rhs.op is base.get_constructor("Z")
    assert s.rhs is s.lhs.patterns[0].var


def test_tuple_pattern():
    e = parse_expr("fn (%p) { match (%p) { (%a, %b) => %b } }")
    lhs = e.body.clauses[0].lhs
    assert isinstance(lhs, PatternTuple) and e.body.clauses[0].rhs is lhs.patterns[1].var


# ---------------------------------------------------------------- types


def test_types():
    e = parse_expr(
        "fn (%a: (int32), %b: (), %c: fn (int32) -> bool, %d: Tensor[(?, 3), float32], "
        "%e: Tensor[(1i64, 4i64), float32], %f: int, %g: _, %h: Tensor[(), float32], %i: float, "
        "%j: (int8, uint8,), %k: Tensor[(10), bfloat16], %l: float16x4) { %a }"
    )
    t = {p.name_hint: p.type_annotation for p in e.params}
    assert t["a"] == TupleType((TensorType((), "int32"),))  # (T) is a 1-tuple type
    assert t["b"] == TupleType(())
    assert t["c"] == FuncType((TensorType((), "int32"),), TensorType((), "bool"))
    assert t["d"].shape == (Any, 3)
    assert t["e"] == TensorType((1, 4), "float32")
    assert t["f"] == TensorType((), "int32")
    assert t["g"] is None  # `%g: _` is no annotation (TVM reads it so: its test_incomplete_type)
    assert t["h"] == TensorType((), "float32")
    assert t["i"] == TensorType((), "float32")
    assert t["j"] == TupleType((TensorType((), "int8"), TensorType((), "uint8")))
    assert t["k"].dtype == "bfloat16"
    assert t["l"] == TensorType((), "float16x4")


def test_adt_name_with_and_without_brackets_is_the_same_type():
    e = parse_expr("fn (%a: Nat, %b: Nat[], %c: List[int32]) { %a }")
    a, b, c = (p.type_annotation for p in e.params)
    assert a == b == TypeCall(GlobalTypeVar("Nat"), ())
    assert c == TypeCall(GlobalTypeVar("List"), (TensorType((), "int32"),))


def test_type_params_and_kinds():
    e = parse_expr("fn [A, B](%x: A, %y: B) -> A { %x }")
    a, _b = e.type_params
    assert e.params[0].type_annotation is a and e.ret_type is a and a.kind == Kind.Type
    e = parse_expr("fn<s : Shape, bt : BaseType>(%x : Tensor[s, bt]) { %x }")
    s, bt = e.type_params
    assert (s.kind, bt.kind) == (Kind.ShapeVar, Kind.BaseType)
    ty = e.params[0].type_annotation
    assert ty.shape is s and ty.dtype is bt
    mod = parse("def @first<a>(%x: a) -> a { %x }")
    (a,) = mod["first"].type_params
    assert mod["first"].ret_type is a


def test_type_param_scope_ends_with_the_function():
    e = parse_expr("fn [A](%x: A) { fn (%y: A) { %y } }")
    assert e.body.params[0].type_annotation is e.type_params[0]
    e2 = parse_expr("(fn [A](%x: A) { %x }, fn (%y: A) { %y })")
    assert e2.fields[1].params[0].type_annotation == TypeCall(GlobalTypeVar("A"), ())


def test_polymorphic_function_type_and_ref_type():
    t = parse_type("fn [A](A) -> A")
    assert isinstance(t, FuncType) and t.arg_types[0] is t.type_params[0] is t.ret_type
    assert parse_type("ref(int32)") == RefType(TensorType((), "int32"))


def test_where_clause_becomes_type_constraints():
    e = parse_expr("fn(%x, %y) where Broadcast { add(%x, %y) }")
    (rel,) = e.attrs["type_constraints"]
    assert isinstance(rel, TypeRelation) and rel.func.name == "Broadcast"
    # no arguments: the relation holds over (param types..., return type)
    assert rel.args == () and rel.num_inputs == 2
    e = parse_expr(
        "fn [A, B, C](%x: A, %y: B) -> C where Broadcast(A, B, C), Identity(A, A) { add(%x, %y) }"
    )
    r1, r2 = e.attrs["type_constraints"]
    assert r1.args == tuple(e.type_params) and r1.num_inputs == 2
    assert r2.func.name == "Identity" and r2.num_inputs == 1


def test_where_is_still_an_operator_name():
    e = parse_expr("fn (%c: bool, %a, %b) { where(%c, %a, %b) }")
    assert op_name(e.body) == "where"


def test_let_with_scalar_and_adt_annotations():
    e = parse_expr("let %x: float32 = 1f; let %y: Nat = %x; %y")
    assert e.var.type_annotation == TensorType((), "float32")
    assert e.body.var.type_annotation == TypeCall(GlobalTypeVar("Nat"), ())
    assert e.body.value is e.var


# ---------------------------------------------------------------- comments, printer output


def test_printer_output_with_type_and_span_comments():
    text = """#[version = "0.0.5"]
def @main(%data: Tensor[(1, 3, 8, 8), float32] /* ty=Tensor[(1, 3, 8, 8), float32] */, %w: Tensor[(4, 3, 3, 3), float32] /* ty=Tensor[(4, 3, 3, 3), float32] */) -> Tensor[(1, 4, 8, 8), float32] {
  %0 = nn.conv2d(%data, %w, padding=[1, 1, 1, 1], channels=4, kernel_size=[3, 3]) /* ty=Tensor[(1, 4, 8, 8), float32] span=from_string:4:15 */;
  %1 = (%0, %0) /* ty=(Tensor[(1, 4, 8, 8), float32], Tensor[(1, 4, 8, 8), float32]) */;
  %2 = %1.0 /* ty=Tensor[(1, 4, 8, 8), float32] */;
  nn.relu(%2) /* ty=Tensor[(1, 4, 8, 8), float32] */
} /* ty=fn (Tensor[(1, 3, 8, 8), float32], Tensor[(4, 3, 3, 3), float32]) -> Tensor[(1, 4, 8, 8), float32] */
"""
    mod = parse(text)
    relu = mod["main"].body
    proj = relu.args[0]
    tup = proj.tuple_value
    assert tup.fields[0] is tup.fields[1] and op_name(tup.fields[0]) == "nn.conv2d"


def test_nested_block_comments_and_hash_comments():
    e = parse_expr("/* a /* b */ c */ fn (%x) { %x /* ty=/* nested */ */ } // end")
    assert e.body is e.params[0]
    mod = parse("# a comment line\ndef @main() { 1 } # trailing")
    assert mod["main"].body.data == 1


def test_string_escapes_are_processed():
    e = parse_expr('fn (%f, %x) { %f(%x, name="a\\"b\\\\c\\n", attrs_type_key="T") }')
    assert e.body.attrs["name"] == 'a"b\\c\n'


# ---------------------------------------------------------------- meta references


def test_meta_constant_from_init_meta_table_is_shared():
    w = np.arange(6, dtype="float32").reshape(2, 3)
    e = parse_expr(
        "fn (%x) { (add(%x, meta[relay.Constant][0]), meta[relay.Constant][0], meta[relay.Constant][1]) }",
        init_meta_table={"relay.Constant": [w, relay.const(2.0)]},
    )
    a, b, c = e.body.fields
    assert isinstance(b, Constant) and a.args[1] is b
    np.testing.assert_array_equal(b.data, w)
    assert c.data.item() == 2.0


def test_missing_meta_entry_is_a_metaref_with_the_comment_type():
    e = parse_expr(
        "fn (%x) { add(%x, meta[relay.Constant][0] /* ty=Tensor[(64, 3, 7, 7), float32] */) }"
    )
    m = e.body.args[1]
    assert isinstance(m, MetaRef) and (m.type_key, m.index) == ("relay.Constant", 0)
    assert m.type_annotation == TensorType((64, 3, 7, 7), "float32")
    e = parse_expr("meta[relay.Constant][3]")
    assert isinstance(e, MetaRef) and e.type_annotation is None
    # a comment that is not a type is ignored
    assert parse_expr("meta[relay.Constant][0] /* ty=what? */").type_annotation is None


def test_metadata_section_round_trip():
    w = np.arange(6, dtype="float32").reshape(2, 3)
    # a module printed with a non-scalar constant carries a #[metadata] section
    mod = parse(
        "fn (%x: Tensor[(2, 3), float32]) { add(%x, meta[relay.Constant][0]) }",
        init_meta_table={"relay.Constant": [w]},
    )
    text = mod.astext()
    assert "#[metadata]" in text
    again = parse(text)
    np.testing.assert_array_equal(again["main"].body.args[1].data, w)


def test_meta_table_entries_append_after_the_texts_own_section():
    w = np.ones((2,), dtype="float32")
    v = np.zeros((3,), dtype="float32")
    mod = parse(
        "fn (%x: Tensor[(2), float32]) { add(%x, meta[relay.Constant][0]) }",
        init_meta_table={"relay.Constant": [w]},
    )
    text = mod.astext()
    again = parse(
        text.replace(
            "add(%x, meta[relay.Constant][0])", "(meta[relay.Constant][0], meta[relay.Constant][1])"
        ),
        init_meta_table={"relay.Constant": [v]},
    )
    first, second = again["main"].body.fields
    assert first.data.shape == (2,) and second.data.shape == (3,)


def test_null_metadata_entry_is_a_missing_constant():
    w = np.ones((2,), dtype="float32")
    text = parse(
        "fn (%x: Tensor[(2), float32]) { (meta[relay.Constant][0], meta[relay.Constant][1]) }",
        init_meta_table={"relay.Constant": [w, w * 2]},
    ).astext()
    assert "#[metadata]" in text
    from relay_nb.syntax.metadata import parse_metadata, write_metadata

    table = parse_metadata(text.split("#[metadata]", 1)[1])
    table["relay.Constant"][0] = None
    holey = text.split("#[metadata]", 1)[0] + "#[metadata]\n" + write_metadata(table)
    first, second = parse(holey)["main"].body.fields
    assert isinstance(first, MetaRef) and isinstance(second, Constant)


def test_v004_metadata_trailer_ends_the_program():
    mod = parse("v0.0.4\nfn (%x: int32) { %x }\nMETADATA:\n")
    assert mod["main"].body is mod["main"].params[0]


# ---------------------------------------------------------------- spans


def test_spans_point_at_the_source():
    text = "def @main(%x: float32) {\n  let %y = add(%x, 1f);\n  negative(%y)\n}"
    mod = parse(text, source_name="prog.relay")
    f = mod["main"]
    let = f.body
    assert let.span.source.name == "prog.relay" and let.span.source.text == text
    assert (let.span.line, let.span.column) == (2, 3)
    assert (let.var.span.line, let.var.span.column, let.var.span.end_column) == (2, 7, 9)
    add = let.value
    assert (add.span.line, add.span.column, add.span.end_column) == (2, 12, 23)
    one = add.args[1]
    assert (one.span.line, one.span.column, one.span.end_column) == (2, 20, 22)
    neg = let.body
    assert (neg.span.line, neg.span.column) == (3, 3)
    assert (f.params[0].span.line, f.params[0].span.column) == (1, 11)
    assert (f.span.line, f.span.end_line) == (1, 4)
    # one Source object per parse, shared by every span
    assert add.span.source is neg.span.source is f.span.source


def test_infix_call_spans_cover_their_operands():
    e = parse_expr("fn (%a, %b, %c) { %a + %b * %c }")
    add = e.body
    mul = add.args[1]
    assert (add.span.column, add.span.end_column) == (19, 31)
    assert (mul.span.column, mul.span.end_column) == (24, 31)


def test_pattern_and_clause_spans():
    mod = parse("type N { Z }\ndef @f(%n: N) {\n  match (%n) {\n    Z => 0,\n  }\n}")
    clause = mod["f"].body.clauses[0]
    assert (clause.span.line, clause.span.column) == (4, 5)
    assert (clause.lhs.span.line, clause.lhs.span.column) == (4, 5)


# ---------------------------------------------------------------- the grammar itself


def test_every_rule_has_a_callback_or_a_single_child():
    from relay_nb.syntax.parser import _Converter, _tables

    for size, name, origin, keep in _tables().rules:
        assert hasattr(_Converter, name) or keep >= 0, (name, origin)


def test_grammar_conflicts_are_exactly_the_intended_ones(caplog):
    """Every shift/reduce conflict of relay.lark is resolved as shift on purpose:
    `type T` before `{`, data constructors after `,`, a call or '-1' continuing the value
    of a graph binding written without ';' (seed 004), and the hot-path shortcuts."""
    from importlib import resources

    from lark import Lark, logger
    from lark.lexer import Lexer

    class _L(Lexer):
        def __init__(self, conf):
            pass

        def lex(self, data):  # pragma: no cover
            return iter(())

    grammar = resources.files("relay_nb.syntax").joinpath("relay.lark").read_text()
    old = logger.level
    logger.setLevel(logging.DEBUG)
    try:
        with caplog.at_level(logging.DEBUG, logger="lark"):
            Lark(
                grammar,
                parser="lalr",
                lexer=_L,
                start=["module", "expr_only", "type_only"],
                debug=True,
            )
    finally:
        logger.setLevel(old)
    found = []
    lines = [r.getMessage() for r in caplog.records]
    for i, line in enumerate(lines):
        if line.startswith("Shift/Reduce conflict"):
            term = line.split("terminal ")[1].split(":")[0]
            found.append((term, lines[i + 1].strip().lstrip("* ").strip()))
    expected = sorted(
        [
            ("IDENT", "<data_ctors : data_ctors COMMA>"),
            ("LBRACE", "<defn : type_head>"),
            ("LPAR", "<infix : postfix>"),
            ("LPAR", "<infix : postfix>"),
            ("LPAR", "<infix : postfix>"),
            ("LPAR", "<neg : MINUS postfix>"),
            ("LPAR", "<operand : postfix>"),
            ("LPAR", "<postfix : IDENT>"),
            ("LPAR", "<postfix : IDENT>"),
            ("MINUS", "<infix : chain>"),
            ("NEGNUMBER", "<infix : chain>"),
            ("RPAR", "<call_args : arg_list COMMA attr_list>"),
            ("RPAR", "<call_args : arg_list>"),
            ("SEMICOLON", "<infix : postfix>"),
            ("SEMICOLON", "<infix : postfix>"),
            ("SEMICOLON", "<infix : postfix>"),
        ]
    )
    assert sorted(found) == expected
