"""Errors of the Relay reader: always ParseError/AttrError with a location and a caret,
never a lark exception or a Python traceback."""

from __future__ import annotations

import pytest

from relay_nb.errors import AttrError, ParseError, RelayError
from relay_nb.syntax.parser import parse, parse_expr


def error_of(text: str, kind=ParseError, expr: bool = False, **kw) -> RelayError:
    with pytest.raises(RelayError) as info:
        (parse_expr if expr else parse)(text, source_name="prog.relay", **kw)
    err = info.value
    assert type(err) is kind, f"{type(err).__name__}: {err}"
    assert err.span is not None, str(err)
    return err


def check(err: RelayError, line: int, column: int, message: str, width: int | None = None) -> None:
    assert message in err.message, err.message
    assert (err.line, err.column) == (line, column), str(err)
    rendered = str(err)
    assert f"--> prog.relay:{line}:{column}" in rendered
    lines = rendered.splitlines()
    # the quoted source line, then the caret line under the column
    src = next(i for i, l in enumerate(lines) if l.lstrip().startswith(f"{line} |"))
    caret = lines[src + 1]
    bar = caret.index("|")
    marks = caret[bar + 2 :]
    assert marks.index("^") == column - 1, rendered
    if width is not None:
        assert marks.count("^") == width, rendered


# ---------------------------------------------------------------- brackets and comments


def test_unclosed_brace():
    err = error_of("def @main(%x) {\n  add(%x, %x)\n")
    check(err, 1, 15, "'{' is never closed", 1)


def test_unclosed_paren_before_a_closing_brace():
    err = error_of("def @main(%x) {\n  add(%x, %x\n}")
    check(err, 3, 1, "expected ')' to close the '(' at line 2, column 6, but found '}'")


def test_mismatched_bracket():
    err = error_of("fn (%x) { (%x, %x] }", expr=True)
    check(err, 1, 18, "expected ')' to close the '('")


def test_unclosed_comment():
    err = error_of("def @main(%x) {\n  /* oops /* nested */\n  %x\n}")
    check(err, 2, 3, "unclosed /* comment", 2)


def test_stray_closing_brace():
    err = error_of("def @main(%x) {\n  %x\n}\n}")
    check(err, 4, 1, "but found '}'")
    assert "a definition" in err.message


def test_trailing_semicolon_before_brace():
    # TVM issue #15358: `e;` before `}` is not an expression sequence
    err = error_of("def @main(%x) {\n  let %y = %x;\n  %y;\n}")
    check(err, 3, 5, "unexpected ';' before '}'", 1)
    assert "remove the trailing ';'" in err.message


def test_missing_semicolon_after_let_value():
    err = error_of("def @main(%x) { let %y = %x %y }")
    check(err, 1, 29, "expected ';' or an operator but found '%y'")


def test_if_without_else():
    err = error_of("fn (%c: bool) { if (%c) { 1 } }", expr=True)
    check(err, 1, 31, "expected 'else' but found '}'")


def test_end_of_input_inside_an_expression():
    err = error_of("let %x = 1;", expr=True)
    check(err, 1, 12, "unexpected end of input")


def test_graph_label_assignment_to_a_local_has_a_hint():
    err = error_of("def @main(%x) { %x = 1 }")
    check(err, 1, 20, "but found '='")
    assert any("let %x = value;" in n for n in err.notes)


def test_spaced_match_arrow_is_an_error():
    err = error_of("fn (%x) { match (%x) { _ = > 1 } }", expr=True)
    check(err, 1, 26, "but found '='")
    assert "'=>'" in err.message


# ---------------------------------------------------------------- characters and literals


def test_unknown_character():
    err = error_of("def @main(%x) { %x $ 1 }")
    check(err, 1, 20, "unexpected character '$'", 1)


def test_single_ampersand():
    err = error_of("fn (%a, %b) { %a & %b }", expr=True)
    check(err, 1, 18, "unexpected character '&'")


def test_unterminated_string():
    err = error_of('def @main(%x) { cast(%x, dtype="float32) }')
    check(err, 1, 32, "unterminated string")


def test_unknown_directive():
    err = error_of("#[foo]\ndef @main() { 1 }")
    check(err, 1, 1, "unknown directive", 6)


def test_unsupported_version():
    err = error_of('#[version = "1.0.0"]\ndef @main() { 1 }')
    check(err, 1, 1, "unsupported version '1.0.0'", 20)


def test_int32_literal_out_of_range():
    err = error_of("def @main() {\n  2147483648i32\n}")
    check(err, 2, 3, "integer literal 2147483648i32 does not fit in int32", 13)


def test_int16_and_float16_out_of_range():
    check(error_of("32768i16", expr=True), 1, 1, "does not fit in int16")
    check(error_of("65505f16", expr=True), 1, 1, "out of range for float16")


def test_bad_numeric_suffix():
    check(error_of("(1, 2u8)", expr=True), 1, 5, "invalid numeric suffix 'u8'", 3)


def test_integer_suffix_on_a_decimal():
    check(error_of("1.5i32", expr=True), 1, 1, "integer suffix on a decimal")


# ---------------------------------------------------------------- names


def test_undefined_local_variable():
    err = error_of("def @main(%x) {\n  add(%x, %y)\n}")
    check(err, 2, 11, "undefined variable %y", 2)


def test_undefined_variable_suggests_a_close_name():
    err = error_of("def @main(%input) { negative(%inptu) }")
    assert "did you mean %input?" in err.message


def test_undefined_variable_in_a_fn_that_is_main():
    # a bare `fn` is @main itself, so it cannot have unbound inputs
    err = error_of("fn (%x) {\n  %y\n}")
    check(err, 2, 3, "undefined variable %y")


def test_variable_out_of_scope():
    err = error_of("def @main() {\n  let %a = (let %b = 1; %b);\n  %b\n}")
    check(err, 3, 3, "%b is used outside the scope of its binding (bound at line 2, column 17)")


def test_let_variable_used_in_the_other_branch_is_not_a_free_variable():
    # TVM's test_ir_parser.py::test_ifelse_scope: a bare expression reads unbound names as
    # free variables, but not a name whose binding's scope has closed.
    err = error_of("if (True) {\n  let %x = ();\n  ()\n} else {\n  %x\n}")
    check(err, 5, 3, "%x is used outside the scope of its binding (bound at line 2, column 7)")
    err = error_of("(fn (%a) { %a }, %a)")
    check(err, 1, 18, "%a is used outside the scope of its binding")


def test_genuinely_free_variables_still_read_in_bare_expressions():
    import relay_nb as relay

    e = relay.parse_expr("let %y = %z; add(%y, %z)")
    assert [v.name_hint for v in relay.analysis.free_vars(e)] == ["z"]


def test_pattern_variable_out_of_its_arm():
    err = error_of("type L { C(int32), N }\ndef @f(%l: L) { match (%l) { C(%v) => %v, N => %v } }")
    check(err, 2, 48, "%v is used outside the scope of its binding (bound at line 2, column 32)")


def test_undefined_graph_label():
    check(error_of("def @main() { %3 }"), 1, 15, "graph variable %3 has not been defined yet", 2)


def test_undefined_global_reports_its_first_use():
    err = error_of("def @main(%x) {\n  @foo(%x)\n}\ndef @bar() { @foo(1) }")
    check(err, 2, 3, "undefined global @foo", 4)


def test_undefined_global_suggests_a_close_name():
    err = error_of("def @mian() { 1 }\ndef @f() { @main() }")
    assert "did you mean @mian?" in err.message


def test_duplicate_global():
    err = error_of("def @f() { 1 }\ndef @f() { 2 }")
    check(err, 2, 5, "duplicate global function @f", 2)
    assert "line 1" in err.message


def test_duplicate_global_with_the_init_module():
    base = parse("def @f() { 1 }")
    with pytest.raises(ParseError, match="duplicate global function @f"):
        parse("def @f() { 2 }", init_module=base)


def test_bare_expression_and_main_definition():
    with pytest.raises(ParseError, match="both a @main definition and a bare expression"):
        parse("def @main() { 1 }\n2")


def test_duplicate_parameter():
    check(error_of("fn (%x, %x) { %x }", expr=True), 1, 9, "duplicate parameter %x")


def test_unknown_operator_suggests_the_closest():
    err = error_of("def @main(%x) { ad(%x, %x) }")
    check(err, 1, 17, "unknown operator ad; did you mean add", 2)
    err = error_of("def @main(%x) { nn.conv(%x, %x) }")
    assert "nn.conv2d" in err.message


def test_placeholder_identifier_is_an_unknown_operator():
    # seed 000's `fn() { body }` uses `body` as a placeholder
    check(error_of("fn() { body }"), 1, 8, "unknown operator body", 4)


def test_undefined_constructor_in_an_expression():
    # the arguments are read before the callee is resolved, so Nil is reported first
    err = error_of("def @main() { Cons(1, Nil) }")
    check(err, 1, 23, "undefined constructor or operator Nil", 3)
    err = error_of("def @main() { Cons(1, 2) }")
    check(err, 1, 15, "undefined constructor or operator Cons", 4)


def test_undefined_constructor_in_a_pattern():
    err = error_of(
        "type Nat { Z, S(Nat) }\ndef @main(%n: Nat) { match (%n) { Z => 0, Succ(%m) => 1 } }"
    )
    check(err, 2, 43, "undefined constructor Succ", 4)
    assert "did you mean" not in err.message or "S" in err.message


def test_constructor_used_before_its_definition():
    err = error_of("def @main() { Z }\ntype Nat { Z, S(Nat) }")
    check(err, 1, 15, "undefined constructor or operator Z")


def test_duplicate_type_and_constructor():
    check(error_of("type T { A }\ntype T { B }"), 2, 6, "duplicate type definition T", 1)
    check(
        error_of("type T { A }\ntype U { A }"), 2, 10, "constructor A is already defined by type T"
    )


def test_data_constructor_must_return_its_type():
    err = error_of("data Nat { Z : () -> Nat  S : (Nat) -> Int }")
    check(err, 1, 27, "constructor S of data Nat must return Nat")


# ---------------------------------------------------------------- types


def test_bad_dtype_suggests_the_closest():
    err = error_of("def @main(%x: Tensor[(2), flaot32]) { %x }")
    check(err, 1, 27, "unknown dtype 'flaot32'; did you mean float32?", 7)


def test_misplaced_bracket_in_a_type():
    # seed 000's typo: Tensor[(), bool)]
    err = error_of("free_var %f; %f<Tensor[(), bool)]>(True)", expr=True)
    check(err, 1, 32, "expected ']' to close the '[' at line 1, column 23, but found ')'", 1)


def test_unknown_kind_and_shape_var():
    check(error_of("fn <t : Typ>(%x: t) { %x }", expr=True), 1, 9, "unknown kind 'Typ'", 3)
    check(
        error_of("fn (%x: Tensor[s, float32]) { %x }", expr=True),
        1,
        16,
        "s is not a type parameter",
    )


def test_unknown_type_relation():
    err = error_of("fn (%x) where Broadcst { %x }", expr=True)
    check(err, 1, 15, "unknown type relation Broadcst; did you mean Broadcast?", 8)


def test_something_else_than_where():
    check(
        error_of("fn (%x) wher Broadcast { %x }", expr=True), 1, 9, "expected '{' but found 'wher'"
    )


# ---------------------------------------------------------------- attributes


def test_unknown_attribute():
    err = error_of(
        "def @main(%x, %w) { nn.conv2d(%x, %w, padding=[1, 1], chanels=3) }", kind=AttrError
    )
    check(err, 1, 55, "unknown attribute chanels; did you mean channels?", 9)


def test_bad_attribute_value():
    err = error_of('def @main(%x, %w) { nn.conv2d(%x, %w, padding="same") }', kind=AttrError)
    check(err, 1, 39, "attribute padding expects a list of integers", 14)
    err = error_of("def @main(%x) {\n  sum(%x,\n      keepdims=3)\n}", kind=AttrError)
    check(err, 3, 7, "attribute keepdims expects True or False", 10)


def test_attribute_on_an_op_without_attributes():
    err = error_of("def @main(%x) { add(%x, %x, axis=1) }", kind=AttrError)
    check(err, 1, 29, "operator add takes no attributes", 6)


def test_attribute_given_twice():
    check(
        error_of("def @main(%x) { sum(%x, axis=1, axis=2) }"),
        1,
        33,
        "attribute axis is given twice",
    )


def test_attribute_value_that_is_a_bare_name():
    err = error_of("def @main(%x) { nn.conv2d(%x, %x, data_layout=NCHW) }")
    check(err, 1, 35, 'cannot be the bare name NCHW (write a string: "NCHW")')


def test_attributes_on_a_function_call():
    err = error_of("fn (%f, %x) { %f(%x, name=1) }", expr=True)
    check(err, 1, 22, "only operator calls take attributes")


def test_bad_metadata_section():
    with pytest.raises(ParseError) as info:
        parse("fn (%x) { meta[relay.Constant][0] }\n#[metadata]\n{not json")
    assert info.value.span is not None and "metadata" in info.value.message


def test_meta_entry_that_is_not_an_expression():
    from relay_nb.ir.attrs import Attrs

    err = error_of(
        "fn () { meta[relay.attrs.Foo][0] }",
        expr=True,
        init_meta_table={"relay.attrs.Foo": [Attrs({}, "relay.attrs.Foo")]},
    )
    check(err, 1, 9, "not an expression")


# ---------------------------------------------------------------- no traceback ever


@pytest.mark.parametrize(
    "text",
    [
        "def",
        "def @",
        "def @f(",
        "fn (%x) {",
        "type",
        "type T {",
        "match",
        "%",
        "@",
        "(((",
        ")))",
        "let %x = ",
        "let %x: = 1; %x",
        "Tensor[",
        "fn (%x: Tensor[(1, 2), ]) { %x }",
        "1 +",
        "1 + + 2",
        "%0 = ",
        "free_var",
        "#[version",
        "meta[",
        "match? (%x) {}",
        "case",
        "data D { A : }",
        "fn [](%x) { %x }",
        "\x00",
        "\x01",
        "fn (%x) { %x.a }",
        "def @f() { 1 } def @f()",
        "if (True) { 1 } else",
        "x" * 1000,
        "(" * 5000,
        "fn (%x) { %x } /*",
    ],
)
def test_garbage_gives_a_located_parse_error(text):
    with pytest.raises(ParseError) as info:
        parse(text)
    assert info.value.span is not None
    assert "internal parser error" not in info.value.message


DIGITS = "9" * 5000  # past Python's 4,300-digit limit for int()


@pytest.mark.parametrize(
    "text, column, message",
    [
        ("def @main() { meta[relay.Constant][" + DIGITS + "] }", 36, "number too large: 9999999999999999..."),
        ("fn (%x: (int32,)) { %x." + DIGITS + " }", 21, "number too large: 9999999999999999..."),
        ("def @main() { " + DIGITS + " }", 15, "number too large: integer literal"),
        ("def @main() { " + DIGITS + "i64 }", 15, "number too large: integer literal"),
        ("def @main() { 1e" + DIGITS + " }", 15, "number too large: 1e99999999999999..."),
        ("def @main(%x: Tensor[(" + DIGITS + ",), float32]) { %x }", 23, "number too large"),
        ("def @main(%x: Tensor[(2,), float32]) { sum(%x, axis=[" + DIGITS + "]) }", None, "number too large"),
    ],
)
def test_huge_digit_runs_give_a_located_number_too_large(text, column, message):
    err = error_of(text)
    assert message in err.message and "sys.set_int_max_str_digits" not in err.message
    assert "(5000 characters)" in err.message or "(5002 characters)" in err.message or "(5003" in err.message
    assert len(err.message) < 200  # the digits are not repeated in full
    if column is not None:
        check(err, 1, column, message)


@pytest.mark.parametrize("brk", ["\r", "\u2028", "\u2029", "\x0c", "\x85", "\x1c"])
def test_excerpts_split_lines_as_locations_count_them(brk):
    # Locations count "\n" only; the quoted line and caret must be that same line, the
    # other breaks shown as one visible character so the caret stays in its column.
    text = f"def @main() {{{brk}  let %a = 1;{brk}  %y\n}}"
    err = error_of(text)
    column = text.index("%y") + 1
    check(err, 1, column, "undefined variable %y", 2)
    quoted = next(l for l in str(err).splitlines() if l.lstrip().startswith("1 |"))
    assert brk not in quoted and "let %a = 1;" in quoted


def test_crlf_excerpt_drops_the_carriage_return():
    err = error_of("def @main() {\r\n  %y\r\n}")
    check(err, 2, 3, "undefined variable %y", 2)
    assert "\r" not in str(err)


@pytest.mark.parametrize("bare, column", [("exp", 1), ("  @main", 3), ("// note\n  %x", 3), ("nn.relu", 1)])
def test_main_and_bare_expression_error_points_at_the_bare_expression(bare, column):
    # an operator, a global or a variable has no span of its use (issue #11 §5)
    text = "def @main() { 1 }\n" + bare
    err = error_of(text)
    line = text.count("\n", 0, text.rindex(bare.strip().splitlines()[-1].strip())) + 1
    check(err, line, column, "both a @main definition and a bare expression")


@pytest.mark.parametrize(
    "use, line, column",
    [
        ("def @main(%y: float32) {\n  %1 = multiply(%0, %y);\n  %1\n}", 6, 17),  # in an argument list
        ("def @main(%y: float32) {\n  add(%y, %0)\n}", 6, 11),  # a later argument
        ("def @main(%y: float32) {\n  %0\n}", 6, 3),  # the body itself
        ("%0", 5, 1),  # a bare expression after the definitions
    ],
)
def test_graph_variable_of_another_definition_is_rejected(use, line, column):
    # it parsed into a free variable of @main that only failed at run time (issue #11 §5)
    text = "def @f(%x: float32) {\n  %0 = add(%x, 1f);\n  %0\n}\n" + use
    check(error_of(text), line, column, "graph variable %0 is bound in @f and uses its variable %x, which is not in scope here", 2)


def test_graph_variable_numbers_can_be_reused_by_another_definition():
    text = "def @f(%x: float32) {\n  %0 = add(%x, 1f);\n  %0\n}\ndef @main(%y: float32) {\n  %0 = multiply(%y, %y);\n  %0\n}"
    assert "multiply(%y, %y)" in str(parse(text))
