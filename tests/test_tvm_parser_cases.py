"""The cases of TVM 0.19's parser tests (``tests/python/relay/test_ir_parser.py``), as data.

Every snippet TVM's parser accepts parses here and prints back to a structurally equal
program (most are also compared with the program built by hand); every snippet TVM
rejects fails here with a located :class:`relay.RelayError`.  Two TVM cases are not
kept: ``test_import_grad`` and ``test_load_prelude`` load TVM's standard library files
(``gradient.rly``, ``prelude.rly``), which relay_nb does not ship.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import relay_nb as relay

SEMVER = '#[version = "0.0.5"]\n'
LIST_DEFN = "type List[A] {\n    Cons(A, List[A]),\n    Nil,\n}\n"
INT32 = relay.scalar_type("int32")
UNIT = relay.Tuple([])


def parse_text(code: str) -> relay.Expr:
    """parse_expr, and the printed expression reads back the same (TVM's roundtrip_expr)."""
    expr = relay.parse_expr(code)
    again = relay.parse_expr(relay.astext(expr))
    relay.assert_structural_equal(again, expr, map_free_vars=True)
    return expr


def parse_module(code: str) -> relay.IRModule:
    mod = relay.parse(SEMVER + code)
    relay.assert_structural_equal(relay.parse(mod.astext()), mod, map_free_vars=True)
    return mod


def assert_parses_as(code: str, expected: relay.Expr) -> None:
    relay.assert_structural_equal(parse_text(code), expected, map_free_vars=True)


def scalar(code: str):
    c = parse_text(code)
    assert isinstance(c, relay.Constant)
    return c.data.item(), str(c.data.dtype)


# --- literals -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "code, value, dtype",
    [
        ("1", 1, "int32"),
        ("10", 10, "int32"),
        ("0", 0, "int32"),
        ("-100", -100, "int32"),
        ("-05", -5, "int32"),
        ("9223372036854775807", 9223372036854775807, "int64"),
        ("-42i", -42, "int32"),
        ("-42i16", -42, "int16"),
        ("-42i32", -42, "int32"),
        ("-42i64", -42, "int64"),
        ("2147483647", 2147483647, "int32"),
        ("2147483648", 2147483648, "int64"),
        ("1.0f", 1.0, "float32"),
        ("0.0f", 0.0, "float32"),
        ("-10.0f", -10.0, "float32"),
        ("1e+1f", 10.0, "float32"),
        ("1E+1f", 10.0, "float32"),
        ("1.0e+1f", 10.0, "float32"),
        ("1.0E+1f", 10.0, "float32"),
        ("3f16", 3.0, "float16"),
        ("3f32", 3.0, "float32"),
        ("3f", 3.0, "float32"),
        ("3f64", 3.0, "float64"),
        ("True", True, "bool"),
        ("False", False, "bool"),
        ("--10", 10, "int32"),
        ("---10", -10, "int32"),
    ],
)
def test_literals(code, value, dtype):
    assert scalar(code) == (value, dtype)


@pytest.mark.parametrize("code, value", [("1.56667f", 1.56667), ("1e-1f", 0.1), ("1E-1f", 0.1), ("1.0e-1f", 0.1)])
def test_float_literals_close(code, value):
    got, dtype = scalar(code)
    assert dtype == "float32" and math.isclose(got, value, rel_tol=1e-6)


# --- what TVM's parser rejects ------------------------------------------------------------------

MUST_FAIL_EXPR = {
    "int32 literal out of range": "2147483648i32",
    "int16 literal out of range": "32768i16",
    "float32 literal out of range": "3.40283e+38f32",
    "float16 literal out of range": "65505f16",
    "meta reference without a table": "meta[type_key][1337]",
    "let of a global": "let @x = 1; ()",
    "let of a bare name": "let x = 1; ()",
    "let variable used outside its scope": "if (True) {\n    let %x = ();\n    ()\n} else {\n    %x\n}",
}

MUST_FAIL_MODULE = {
    "duplicate ADT": LIST_DEFN + "type List[A] {\n  Cons(A, List[A]),\n  Nil,\n}\n",
    "duplicate constructor": "type Ayy { Lmao }\ntype Haha { Lmao }\n",
    "constructor named like an ADT": "type Ayy { Lmao }\ntype Lmao { Ayy }\n",
    "duplicate global": "def @id[A](%x: A) -> A { %x }\ndef @id[A](%x: A) -> A { %x }\n",
}


@pytest.mark.parametrize("code", MUST_FAIL_EXPR.values(), ids=MUST_FAIL_EXPR.keys())
def test_rejected_expressions_fail_with_a_location(code):
    with pytest.raises(relay.RelayError) as info:
        relay.parse_expr(code)
    assert info.value.span is not None and info.value.span.line >= 1, str(info.value)


@pytest.mark.parametrize("code", MUST_FAIL_MODULE.values(), ids=MUST_FAIL_MODULE.keys())
def test_rejected_modules_fail_with_a_location(code):
    with pytest.raises(relay.RelayError) as info:
        relay.parse(SEMVER + code)
    assert info.value.span is not None and info.value.span.line >= 2, str(info.value)


# --- expressions ------------------------------------------------------------------------------

ONE = relay.const(1)


def test_comments():
    for code in (
        "// This is a line comment!\n()",
        "/* This is a block comment!\n   This is still a block comment!\n*/\n()",
        "/* This is a block comment!\n   /*Block comment is recursive!*/\n*/\n()",
    ):
        assert_parses_as(code, UNIT)


@pytest.mark.parametrize(
    "sym, build",
    [("*", relay.multiply), ("/", relay.divide), ("+", relay.add), ("-", relay.subtract),
     ("<", relay.less), (">", relay.greater), ("<=", relay.less_equal),
     (">=", relay.greater_equal), ("==", relay.equal), ("!=", relay.not_equal)],
)  # fmt: skip
def test_binary_operators(sym, build):
    assert_parses_as(f"1 {sym} 1", build(relay.const(1), relay.const(1)))


def test_precedence_and_associativity():
    eq = relay.structural_equal
    assert eq(parse_text("1 * 1 + 1"), parse_text("(1 * 1) + 1"))
    assert not eq(parse_text("1 * 1 + 1"), parse_text("1 * (1 + 1)"))
    assert eq(parse_text("1 * 1 + 1 < 1 == 1"), parse_text("(((1 * 1) + 1) < 1) == 1"))
    assert eq(parse_text("1 == 1 < 1 + 1 * 1"), parse_text("1 == (1 < (1 + (1 * 1)))"))


def test_variables_globals_and_operators():
    var = parse_text("let %foo = (); %foo")
    assert isinstance(var.body, relay.Var) and var.body.name_hint == "foo"
    gv = parse_text("@foo")
    assert isinstance(gv, relay.GlobalVar) and gv.name_hint == "foo"
    assert parse_text("add").name == "add"
    assert parse_text("nn.global_avg_pool2d").name == "nn.global_avg_pool2d"


def test_let_sequence_and_graph_bindings():
    x, y, _ = relay.Var("x"), relay.Var("y"), relay.Var("_")
    assert_parses_as("let %x = 1; ()", relay.Let(x, ONE, UNIT))
    assert_parses_as("let %x = 1;\nlet %y = 2;\n()", relay.Let(x, ONE, relay.Let(y, relay.const(2), UNIT)))
    assert_parses_as("(); ()", relay.Let(_, UNIT, UNIT))
    assert_parses_as("let %_ = 1; ()", relay.Let(x, ONE, UNIT))
    assert_parses_as("%0 = (); %1 = 1; (%0, %0, %1)", relay.Tuple([UNIT, UNIT, ONE]))
    assert_parses_as("%1 = (); %1", relay.Tuple([]))


def test_tuples_and_projection():
    assert_parses_as("()", relay.Tuple([]))
    assert_parses_as("(0,)", relay.Tuple([relay.const(0)]))
    assert_parses_as("(0, 1)", relay.Tuple([relay.const(0), ONE]))
    assert_parses_as("(0, 1, 2)", relay.Tuple([relay.const(0), ONE, relay.const(2)]))
    x = relay.var("x", shape=())
    assert_parses_as(
        "free_var %x: float32; %x((%x,).0, %x)",
        relay.Call(x, [relay.TupleGetItem(relay.Tuple([x]), 0), x]),
    )


def test_functions():
    x, y = relay.Var("x"), relay.Var("y")
    assert_parses_as("fn () { 0 }", relay.Function([], relay.const(0)))
    assert_parses_as("fn (%x) { %x }", relay.Function([x], x))
    assert_parses_as("fn (%x, %y) { %x + %y }", relay.Function([x, y], relay.add(x, y)))
    xa = relay.Var("x", INT32)
    assert_parses_as("fn (%x: int32) -> int32 { %x }", relay.Function([xa], xa, INT32))


def test_definitions_and_recursion():
    assert isinstance(parse_module("def @id(%x: int32) -> int32 {\n  %x\n}"), relay.IRModule)
    assert isinstance(parse_module("def @id(%x: int32) -> int32 {\n  @id(%x)\n}"), relay.IRModule)


def test_if_else():
    assert_parses_as("if (True) {\n  0\n} else {\n  1\n}", relay.If(relay.const(True), relay.const(0), ONE))


def test_references():
    parse_module("def @main(%x: float32) {\n  %0 = ref(%x);\n  ref_write(%0, 1f);\n  ref_read(%0)\n}")


def test_calls():
    x, y = relay.Var("x"), relay.Var("y")
    ident = relay.Var("id")
    assert_parses_as(
        "let %id = fn (%x) { %x };\n10 * %id(10)",
        relay.Let(ident, relay.Function([x], x), relay.multiply(relay.const(10), relay.Call(ident, [relay.const(10)]))),
    )
    constant = relay.Var("constant")
    assert_parses_as(
        "let %constant = fn () { 0 };\n%constant()",
        relay.Let(constant, relay.Function([], relay.const(0)), relay.Call(constant, [])),
    )
    mul = relay.Var("multiply")
    assert_parses_as(
        "let %multiply = fn (%x, %y) { %x * %y };\n%multiply(0, 0)",
        relay.Let(mul, relay.Function([x, y], relay.multiply(x, y)), relay.Call(mul, [relay.const(0), relay.const(0)])),
    )
    assert_parses_as("(fn (%x) { %x })(0)", relay.Call(relay.Function([x], x), [relay.const(0)]))
    curried, _ = relay.Var("curried_mult"), relay.Var("_")
    inner = relay.Call(curried, [relay.const(0)])
    assert_parses_as(
        "let %curried_mult =\n  fn (%x) {\n  fn (%y) {\n    %x * %y\n  }\n  };\n"
        "  %curried_mult(0);\n  %curried_mult(0)(0)",
        relay.Let(
            curried,
            relay.Function([x], relay.Function([y], relay.multiply(x, y))),
            relay.Let(_, inner, relay.Call(relay.Call(curried, [relay.const(0)]), [relay.const(0)])),
        ),
    )
    assert_parses_as("abs(1)", relay.Call(relay.op.get("abs"), [ONE]))


# --- types ------------------------------------------------------------------------------------


def test_incomplete_and_builtin_types():
    assert_parses_as("let %_ : _ = (); ()", relay.Let(relay.Var("_"), UNIT, UNIT))
    for ty in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
               "float16", "float32", "float64", "bool", "int8x4", "uint1x4", "float16x4"):  # fmt: skip
        let = parse_text(f"let %_ : {ty} = (); ()")
        assert str(let.var.type_annotation) == ty


@pytest.mark.parametrize("shape", [(), (1,), (1, 1), (relay.Any, 1)])
def test_tensor_types(shape):
    dims = ", ".join("?" if d is relay.Any else str(d) for d in shape)
    text = f"({dims})" if len(shape) != 1 else f"({dims})"
    let = parse_text(f"let %_ : Tensor[{text}, float32] = (); ()")
    relay.assert_structural_equal(let.var.type_annotation, relay.TensorType(shape, "float32"))


def test_function_and_tuple_types():
    cases = [
        ("let %_: fn () -> int32 = fn () -> int32 { 0 }; ()", relay.FuncType([], INT32)),
        ("let %_: fn (int32) -> int32 = fn (%x: int32) -> int32 { 0 }; ()", relay.FuncType([INT32], INT32)),
        ("let %_: fn (int32, int32) -> int32 = fn (%x: int32, %y: int32) -> int32 { 0 }; ()",
         relay.FuncType([INT32, INT32], INT32)),
        ("let %_: () = (); ()", relay.TupleType([])),
        ("let %_: (int32,) = (0,); ()", relay.TupleType([INT32])),
        ("let %_: (int32, int32) = (0, 1); ()", relay.TupleType([INT32, INT32])),
    ]  # fmt: skip
    for code, ty in cases:
        relay.assert_structural_equal(parse_text(code).var.type_annotation, ty)


# --- ADTs and match -----------------------------------------------------------------------------


def test_adt_definitions():
    mod = parse_module("type Ayy { Nil }")
    (gtv,) = [g for g in mod.type_definitions if g.name_hint == "Ayy"]
    assert [c.name_hint for c in mod.type_definitions[gtv].constructors] == ["Nil"]
    mod = parse_module("type Ayy { }")
    assert mod.type_definitions[mod.get_global_type_var("Ayy")].constructors == ()
    mod = parse_module(LIST_DEFN)
    data = mod.type_definitions[mod.get_global_type_var("List")]
    assert [c.name_hint for c in data.constructors] == ["Cons", "Nil"] and len(data.type_vars) == 1
    mod = parse_module("type Either[A, B] {\n  Left(A),\n  Right(B),\n}")
    data = mod.type_definitions[mod.get_global_type_var("Either")]
    assert [len(c.inputs) for c in data.constructors] == [1, 1] and len(data.type_vars) == 2
    mod = parse_module("extern type T[A]")
    assert mod.type_definitions[mod.get_global_type_var("T")].constructors == ()


def test_adt_with_a_dynamic_dimension():
    mod = parse_module("type my_dtype {\n    my_cons(Tensor[(?, 1), uint16]),\n}")
    (cons,) = mod.type_definitions[mod.get_global_type_var("my_dtype")].constructors
    assert cons.name_hint == "my_cons"
    assert cons.inputs[0].shape == (relay.Any, 1)


@pytest.mark.parametrize("keyword", ["match", "match?"])
def test_match(keyword):
    mod = parse_module(
        LIST_DEFN + "def @length[A](%xs: List[A]) -> int32 {\n"
        f"  {keyword} (%xs) {{\n"
        "    Cons(_, %rest : List[A]) => {\n      ();\n      1 + @length(%rest)\n    },\n"
        "    Nil => 0,\n  }\n}"
    )
    match = mod["length"].body
    assert isinstance(match, relay.Match) and match.complete == (keyword == "match")
    cons, nil = (mod.get_constructor(n) for n in ("Cons", "Nil"))
    two = relay.Call(mod.get_global_var("length"), [cons(relay.const(1), cons(relay.const(2), nil()))])
    assert relay.create_executor("interpreter", mod=mod).evaluate(two) == 2


def test_constructor_calls():
    mod = parse_module(LIST_DEFN + "def @make_singleton(%x: int32) -> List[int32] {\n  Cons(%x, Nil)\n}")
    relay.transform.InferType()(mod)


def test_tuple_of_constructor_values_and_if_in_a_binding():
    parse_module(
        "type Box[T] {\n    constructor(T)\n}\n"
        "def @example() {\n    %0 = ();\n    %1 = constructor(%0);\n    %2 = constructor(0f);\n    (%1, %2,)\n}"
    )
    parse_module("def @example(%b: bool) {\n    %0 = if (%b) {\n        1\n    } else {\n        0\n    };\n    %0\n}")


# --- attributes, whole programs, meta tables ------------------------------------------------------


def test_string_attributes():
    call = parse_text(
        "free_var %x: Tensor[(1, 32, 32, 3), float32];\nfree_var %y: Tensor[(1, 1, 3, 3), float32];\n"
        'nn.conv2d(%x, %y, data_layout="NHWC", kernel_layout="HWIO")'
    )
    assert call.op.name == "nn.conv2d"
    assert (call.attrs.data_layout, call.attrs.kernel_layout) == ("NHWC", "HWIO")


def test_call_attributes_with_their_type_key():
    mod = parse_module(
        "def @main(%p0: Tensor[(2, 4), float32], %p1: Tensor[(2, 4), float32]) {\n"
        "%2 = fn (%data: Tensor[(2, 4), float32], %weight: Tensor[(2, 4), float32]) {\n"
        "    %0 = nn.dense(%data, %weight, units=None);\n    %1 = nn.relu(%0);\n    add(%1, 1f)\n};\n"
        '%2(%p0, %p1, name="func_call_attrs", attrs_type_key="attrs.TestAttrs")\n}'
    )
    call = mod["main"].body
    assert call.attrs.type_key == "attrs.TestAttrs" and call.attrs.name == "func_call_attrs"


def test_function_attributes_with_a_dotted_key():
    x = relay.var("x", shape=(2, 3))
    func = relay.Function([x], relay.reshape(x, (-1,)), attrs={"Primitive": 1, "relay.reshape_only": 1})
    assert_parses_as(relay.astext(func), func)


def test_infinite_clip_bounds_print_and_read_back():
    x = relay.var("x", shape=(3, 4), dtype="float32")
    mod = relay.IRModule.from_expr(relay.Function([x], relay.clip(x, -np.inf, np.inf)))
    relay.assert_structural_equal(relay.parse(mod.astext()), mod)


def test_mlp_workload_prints_and_reads_back():
    mod, params = relay.testing.mlp.get_workload(1)
    relay.assert_structural_equal(relay.parse(mod.astext()), mod)
    # with its weights inlined as constants (a #[metadata] section)
    inlined = relay.transform.InferType()(
        relay.IRModule.from_expr(relay.build_module.bind_params_by_name(mod["main"], params))
    )
    relay.assert_structural_equal(relay.parse(inlined.astext()), inlined)


def test_init_module_and_meta_table():
    init_meta = {"relay.Constant": [relay.const(np.random.default_rng(0).random((2, 3)), dtype="float32")]}
    init_module = relay.parse(SEMVER + "def @f(%y : Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32] {\n  negative(%y)\n}")
    mod = relay.parse(
        SEMVER + "def @main(%x: Tensor[(2, 3), float32]) {\n  add(@f(%x), meta[relay.Constant][0])\n}",
        "from_string",
        init_module,
        init_meta,
    )
    relay.assert_structural_equal(relay.parse(mod.astext()), mod)
