"""Printing then parsing gives back the same program.

* graph form: ``parse(astext(p))`` is structurally equal to ``p``;
* A-normal form: ``parse(astext(p, form="anf"))`` is structurally equal to
  ``to_a_normal_form(p)``, and printing that again gives the same text;

for every program of the printer's test cases, the bundled examples, the golden text
inputs, and random well-formed programs generated with hypothesis (lets, tuples,
projections, ifs, closures and their calls, unary and binary operators, sharing of nodes
within and across scopes).
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_printer_cases import CASES

import relay_nb as relay
from relay_nb.ir.expr import Call, Constant, Expr, Function, If, Let, Tuple, TupleGetItem
from relay_nb.ir.module import IRModule
from relay_nb.ir.structural import assert_structural_equal
from relay_nb.op.registry import get_op
from relay_nb.syntax.parser import parse, parse_expr
from relay_nb.syntax.printer import astext
from relay_nb.transform.to_a_normal_form import to_a_normal_form


def reparse(obj, text: str):
    return parse(text) if isinstance(obj, IRModule) else parse_expr(text)


def anf_of(obj):
    if isinstance(obj, IRModule):
        return obj.with_functions({gv: to_a_normal_form(fn) for gv, fn in obj.functions.items()})
    return to_a_normal_form(obj)


def check_graph(obj) -> None:
    text = astext(obj)
    back = reparse(obj, text)
    assert_structural_equal(back, obj, map_free_vars=True)
    # The text is canonical: what we read prints the same (types aside: not re-inferred).
    assert astext(back, show_types=False) == astext(obj, show_types=False)


def check_anf(obj) -> None:
    anf = anf_of(obj)
    text = astext(obj, form="anf")
    assert text == astext(anf)
    back = reparse(obj, text)
    assert_structural_equal(back, anf, map_free_vars=True)
    assert astext(back, form="anf", show_types=False) == astext(obj, form="anf", show_types=False)


@pytest.mark.parametrize("name", sorted(CASES))
def test_case_graph(name):
    check_graph(CASES[name]())


@pytest.mark.parametrize("name", sorted(CASES))
def test_case_anf(name):
    check_anf(CASES[name]())


EXAMPLES = sorted(
    p.name for p in resources.files("relay_nb.examples").iterdir() if p.name.endswith(".relay")
)
TEXT_INPUTS = sorted((Path(__file__).parent / "golden" / "printer").glob("*.relay"))


@pytest.mark.parametrize("name", EXAMPLES)
def test_examples(name):
    mod = parse(resources.files("relay_nb.examples").joinpath(name).read_text(encoding="utf-8"))
    check_graph(mod)
    check_anf(mod)


@pytest.mark.parametrize("path", TEXT_INPUTS, ids=[p.stem for p in TEXT_INPUTS])
def test_text_inputs(path):
    from test_printer_golden import read_input

    obj = read_input(path)
    check_graph(obj)
    check_anf(obj)


# -- random programs ------------------------------------------------------------------------

UNARY = ("log", "exp", "negative", "sqrt", "nn.relu", "tanh")
BINARY = ("add", "multiply", "subtract", "maximum")
SCALAR = relay.scalar_type("float32")


@st.composite
def programs(draw, max_nodes: int = 40):
    """A well-formed, well-typed ``fn (%p0: float32, ..., %c: bool) -> float32``.

    Every value is a float32 scalar except closures (float32 -> float32) and tuples; a
    pool of already built sub-expressions is reused to make DAGs, also across scopes (a
    node is reused only where all of its free variables are in scope).
    """
    budget = [max_nodes]
    params = [relay.var(f"p{i}", "float32") for i in range(draw(st.integers(1, 3)))]
    cond_var = relay.var("c", "bool")
    names = st.sampled_from(["x", "y", "v", "a", "x1", "", "_t"])

    def spend() -> bool:
        budget[0] -= 1
        return budget[0] > 0

    # A pool entry: (expr, set of the variables it uses).
    def scalar(env: list, pool: list, depth: int) -> tuple[Expr, frozenset]:
        usable = [p for p in pool if p[1] <= set(env)]
        kinds = ["var", "const"]
        if spend() and depth < 6:
            kinds += ["unary", "binary", "binary", "let", "if", "tuple", "closure"]
        if usable:
            kinds += ["shared", "shared"]
        kind = draw(st.sampled_from(kinds))
        if kind == "var":
            v = draw(st.sampled_from([e for e in env if e is not cond_var]))
            return v, frozenset([v])
        if kind == "const":
            value = draw(st.floats(-1e6, 1e6, allow_nan=False, width=32))
            return Constant(np.asarray(value, "float32")), frozenset()
        if kind == "shared":
            return draw(st.sampled_from(usable))
        if kind == "unary":
            a, fa = scalar(env, pool, depth + 1)
            out = (Call(get_op(draw(st.sampled_from(UNARY))), (a,)), fa)
        elif kind == "binary":
            a, fa = scalar(env, pool, depth + 1)
            b, fb = scalar(env, pool, depth + 1)
            out = (Call(get_op(draw(st.sampled_from(BINARY))), (a, b)), fa | fb)
        elif kind == "let":
            v = relay.var(draw(names), "float32") if draw(st.booleans()) else relay.var(draw(names))
            value, fv = scalar(env, pool, depth + 1)
            body, fb = scalar(env + [v], pool, depth + 1)
            out = (Let(v, value, body), fv | (fb - {v}))
        elif kind == "if":
            then, ft = scalar(env, pool, depth + 1)
            other, fo = scalar(env, pool, depth + 1)
            if draw(st.booleans()):
                a, fa = scalar(env, pool, depth + 1)
                b, fb = scalar(env, pool, depth + 1)
                cond, fc = Call(get_op("less"), (a, b)), fa | fb
            else:
                cond, fc = cond_var, frozenset([cond_var])
            out = (If(cond, then, other), fc | ft | fo)
        elif kind == "tuple":
            fields = [scalar(env, pool, depth + 1) for _ in range(draw(st.integers(1, 3)))]
            tup = Tuple(tuple(f for f, _ in fields))
            fs = frozenset().union(*(s for _, s in fields))
            out = (TupleGetItem(tup, draw(st.integers(0, len(fields) - 1))), fs)
        else:  # closure, called right away or through a let
            y = relay.var(draw(names), "float32")
            body, fb = scalar(env + [y], pool, depth + 1)
            fn = Function((y,), body, SCALAR)
            arg, fa = scalar(env, pool, depth + 1)
            if draw(st.booleans()):
                out = (Call(fn, (arg,)), (fb - {y}) | fa)
            else:
                f = relay.var("f")
                out = (Let(f, fn, Call(f, (arg,))), (fb - {y}) | fa)
        pool.append(out)
        return out

    env = params + [cond_var]
    body, _ = scalar(env, [], 0)
    return Function(tuple(env), body, SCALAR)


FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FAST
@given(programs())
def test_random_graph(fn):
    check_graph(fn)


@FAST
@given(programs())
def test_random_anf(fn):
    check_anf(fn)


@FAST
@given(programs())
def test_random_module(fn):
    mod = IRModule()
    mod["main"] = fn
    check_graph(mod)
    check_anf(mod)


@settings(max_examples=300, deadline=None)
@given(st.floats(width=32, allow_nan=False, allow_infinity=False))
def test_float32_literals_read_back_exactly(value):
    c = Constant(np.asarray(value, "float32"))
    back = parse_expr(astext(c))
    assert back.data.dtype == np.float32
    assert back.data.tobytes() == c.data.tobytes()


@settings(max_examples=300, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_float64_literals_read_back_exactly(value):
    c = Constant(np.asarray(value, "float64"))
    back = parse_expr(astext(c))
    assert back.data.dtype == np.float64
    assert back.data.tobytes() == c.data.tobytes()


@settings(max_examples=300, deadline=None)
@given(st.floats(width=16, allow_nan=False, allow_infinity=False))
def test_float16_literals_read_back_exactly(value):
    c = Constant(np.asarray(value, "float16"))
    back = parse_expr(astext(c))
    assert back.data.dtype == np.float16
    assert back.data.tobytes() == c.data.tobytes()


@settings(max_examples=100, deadline=None)
@given(st.floats(allow_nan=False, min_value=-1e300, max_value=1e300))
def test_float_attributes_read_back_exactly(value):
    x = relay.var("x", shape=(2,))
    call = relay.nn.leaky_relu(x, alpha=value)
    back = parse_expr(astext(relay.Function([x], call)))
    assert back.body.attrs["alpha"] == call.attrs["alpha"]


# -- strings and call type arguments (issue #16 §5) ------------------------------------------

# Any code point, with the ones printing and lexing treat specially drawn often: line and
# paragraph separators, quotes, backslashes (also before "u", "x", "U"), controls, astral
# characters, lone surrogates.
SPECIAL_CHARS = st.sampled_from(
    ["\u2028", "\u2029", "\r", "\n", "\t", '"', "\\", "\\u", "\\x4", "\\U0001", "\x00", "\x85", "\U0001f600", "\ud800", "é"]
)
ATTR_STRINGS = st.lists(st.one_of(st.characters(), SPECIAL_CHARS), max_size=12).map("".join)
SCALARS = ["float32", "int8", "bool", "float16", "uint64"]


@st.composite
def type_args(draw, depth: int = 0):
    """A type to instantiate a call with: scalars, tensors, tuples, functions."""
    kinds = ["scalar", "tensor"] + (["tuple", "func"] if depth < 2 else [])
    kind = draw(st.sampled_from(kinds))
    if kind == "scalar":
        return relay.scalar_type(draw(st.sampled_from(SCALARS)))
    if kind == "tensor":
        shape = tuple(draw(st.lists(st.integers(0, 5), max_size=3)))
        return relay.TensorType(shape, draw(st.sampled_from(SCALARS)))
    if kind == "tuple":
        return relay.TupleType([draw(type_args(depth + 1)) for _ in range(draw(st.integers(0, 2)))])
    return relay.FuncType([draw(type_args(depth + 1))], draw(type_args(depth + 1)))


@st.composite
def modules_with_strings_and_type_args(draw):
    """``@id[A](%x: A) -> A`` and ``@main`` calling it with explicit type arguments on
    arguments that carry string attributes (``layout_transform``)."""
    a = relay.TypeVar("A")
    x = relay.var("x", a)
    mod = IRModule()
    ident = relay.GlobalVar("id")
    mod[ident] = Function((x,), x, a, (a,))
    p = relay.var("p", shape=(2,))
    fields = []
    for _ in range(draw(st.integers(1, 4))):
        arg = relay.layout_transform(p, draw(ATTR_STRINGS), draw(ATTR_STRINGS))
        targs = (draw(type_args()),) if draw(st.booleans()) else ()
        fields.append(Call(ident, (arg,), None, targs))
    mod["main"] = Function((p,), Tuple(tuple(fields)))
    return mod


@FAST
@given(modules_with_strings_and_type_args())
def test_strings_and_call_type_arguments_round_trip(mod):
    check_graph(mod)
    check_anf(mod)


@pytest.mark.parametrize("s", ["\u2028", "a\u2029b", "\U0001f600\x85", "\\u2028", "\ud800"])
def test_special_string_attributes_read_back(s):
    p = relay.var("p", shape=(2,))
    back = parse_expr(astext(relay.Function([p], relay.layout_transform(p, s, "NC"))))
    assert back.body.attrs["src_layout"] == s


def test_call_type_arguments_are_printed():
    mod = parse("def @id[A](%x: A) -> A { %x }\ndef @main() { @id<int32>(1) }")
    assert "@id<int32>(1)" in astext(mod)
    assert parse(astext(mod))["main"].body.type_args == (relay.scalar_type("int32"),)
