"""SimplifyExpr: the rule table, type-respecting rewrites, effects, identity of untouched
subtrees, DAG sharing, and random programs built to trigger the rules."""

from __future__ import annotations

import inspect
import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pass_testing import check_pass
from strategies import FAST, as_module, programs

import relay_nb as relay
from relay_nb.ir.expr import Call, Constant, Function, Tuple, Var
from relay_nb.op.registry import get_op, make_attrs
from relay_nb.transform import InferType, SimplifyExpr, simplify_expr


def typed(text: str) -> relay.IRModule:
    return InferType()(relay.parse(text))


def simplified_body(text: str) -> relay.Expr:
    return check_pass(SimplifyExpr(), typed(text))["main"].body


def test_rules_golden(golden):
    before = typed(
        """
        def @main(%x: Tensor[(2, 3), float32], %i: Tensor[(2, 3), int32]) {
          %0 = add(-0f, multiply(%x, 1f));
          %1 = divide(subtract(%0, 0f), 1f);
          %2 = reshape(reshape(%1, newshape=[6]), newshape=[3, 2]);
          %3 = transpose(transpose(%x, axes=[1, 0]), axes=[1, 0]);
          %4 = squeeze(expand_dims(%x, axis=1), axis=[1]);
          %5 = negative(negative(cast(%x, dtype="float32")));
          %6 = multiply(%i, 0);
          %7 = add(%x, negative(%3));
          %8 = cast(cast(%i, dtype="int64"), dtype="float32");
          (%2, %4, %5, %6, %7, %8, concatenate((%x,), axis=0))
        }
        """
    )
    after = check_pass(SimplifyExpr(), before, golden=golden, case="simplify_expr_rules")
    f = after["main"].body.fields
    x, i = after["main"].params
    assert f[0].op.name == "reshape" and f[0].args[0] is x  # reshape(reshape(x)) -> reshape(x)
    assert f[1] is x and f[2] is x and f[6] is x
    assert f[3].op.name == "zeros"  # int x * 0 -> zeros
    assert f[4].op.name == "subtract" and f[4].args == (x, x)  # x + -(transpose∘transpose x)
    assert f[5].op.name == "cast" and f[5].args[0] is i  # lossless int32 -> int64 dropped


@pytest.mark.parametrize(
    "text",
    [
        # 1 broadcasts %y to a bigger shape: x * 1 is not x
        'def @main(%y: Tensor[(3), float32]) { multiply(%y, ones(shape=[2, 3], dtype="float32")) }',
        # float x * 0 is NaN for inf and NaN: not rewritten
        "def @main(%x: Tensor[(3), float32]) { multiply(%x, 0f) }",
        # a square transpose keeps the type but not the values
        "def @main(%x: Tensor[(2, 2), float32]) { transpose(%x) }",
        # x + 1 is not x
        "def @main(%x: Tensor[(2, 2), float32]) { add(%x, 1f) }",
        # a lossy inner cast must stay
        'def @main(%x: Tensor[(2), float32]) { cast(cast(%x, dtype="int8"), dtype="float32") }',
        # reversing two different axes is not the identity
        "def @main(%x: Tensor[(2, 2), float32]) { reverse(reverse(%x, axis=0), axis=1) }",
        # -0.0 + 0.0 is +0.0 and -0.0 - -0.0 is +0.0: not x
        "def @main(%x: Tensor[(3), float32]) { add(%x, 0f) }",
        "def @main(%x: Tensor[(3), float64]) { add(zeros(shape=[3], dtype=\"float64\"), %x) }",
        "def @main(%x: Tensor[(3), float32]) { subtract(%x, -0f) }",
        # the logical ops on numbers return 0/1, not x
        "def @main(%x: Tensor[(3), float32]) { logical_and(%x, %x) }",
        "def @main(%x: Tensor[(3), int32]) { logical_or(%x, %x) }",
        "def @main(%x: Tensor[(3), float32]) { logical_not(logical_not(%x)) }",
        # bool: negative is NOT, add is OR, subtract is an error
        "def @main(%x: Tensor[(2), bool], %y: Tensor[(2), bool]) { add(%x, negative(%y)) }",
        "def @main(%x: Tensor[(2), bool], %y: Tensor[(2), bool]) { subtract(%x, negative(%y)) }",
        # int64 -> float64 rounds above 2**53
        'def @main(%x: Tensor[(2), int64]) { cast(cast(%x, dtype="float64"), dtype="int64") }',
        # through a float a too-wide int saturates, directly it wraps
        'def @main(%x: Tensor[(2), int32]) { cast(cast(%x, dtype="float64"), dtype="int8") }',
    ],
)
def test_rules_respect_types_and_values(text):
    mod = typed(text)
    assert SimplifyExpr()(mod)["main"] is mod["main"]


@pytest.mark.parametrize(
    ("text", "args"),
    [
        ("def @main(%x: Tensor[(3), float32]) { logical_and(%x, %x) }", [[0, 2.5, -1]]),
        ("def @main(%x: Tensor[(3), float32]) { logical_not(logical_not(%x)) }", [[0, 2.5, -1]]),
        (
            "def @main(%x: Tensor[(2), bool], %y: Tensor[(2), bool]) { add(%x, negative(%y)) }",
            [[True, False], [True, True]],
        ),
        (
            'def @main(%x: Tensor[(2), int64]) { cast(cast(%x, dtype="float64"), dtype="int64") }',
            [[2**62 + 1, 3]],
        ),
        ("def @main(%x: Tensor[(2), float32]) { divide(1f, add(%x, 0f)) }", [[-0.0, 1.0]]),
        (
            'def @main(%x: Tensor[(2), int32]) { cast(cast(%x, dtype="float64"), dtype="int8") }',
            [[300, 3]],
        ),
    ],
)
def test_rules_keep_values_at_every_opt_level(text, args):
    mod = typed(text)
    xs = [np.array(a, dtype=p.checked_type.dtype) for a, p in zip(args, mod["main"].params)]
    want = relay.create_executor("interpreter", mod=mod).evaluate()(*xs)
    for level in (0, 3):
        with relay.transform.PassContext(opt_level=level):
            out = relay.create_executor("interpreter", mod=SimplifyExpr()(mod)).evaluate()(*xs)
        np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize(
    "text",
    [
        "def @main(%x: Tensor[(3), float32]) { add(%x, -0f) }",
        "def @main(%x: Tensor[(3), float32]) { subtract(%x, 0f) }",
        "def @main(%x: Tensor[(3), int32]) { add(0, %x) }",
    ],
)
def test_zero_rules_that_keep_every_zero_sign_still_fire(text):
    assert isinstance(simplified_body(text), Var)


def test_logical_rules_still_fire_on_bool():
    body = simplified_body(
        "def @main(%b: Tensor[(3), bool]) { logical_or(logical_not(logical_not(%b)), %b) }"
    )
    assert isinstance(body, Var)


def test_exact_casts_still_collapse():
    body = simplified_body(
        'def @main(%x: Tensor[(2), int16]) { cast(cast(%x, dtype="float32"), dtype="int32") }'
    )
    assert body.op.name == "cast" and isinstance(body.args[0], Var)  # int16 fits float32 and int32


def test_the_scalar_one_broadcasts_but_keeps_the_type():
    body = simplified_body("def @main(%x: Tensor[(2, 3), float16]) { multiply(1, %x) }")
    assert isinstance(body, Var)


def test_composed_transpose_and_concretized_like():
    body = simplified_body(
        """
        def @main(%x: Tensor[(2, 3, 4), float32]) {
          (transpose(transpose(%x, axes=[1, 2, 0]), axes=[1, 2, 0]), zeros_like(%x), ones_like(%x))
        }
        """
    )
    t, z, o = body.fields
    assert t.op.name == "transpose" and list(t.attrs["axes"]) == [2, 0, 1]
    assert z.op.name == "zeros" and o.op.name == "ones" and list(z.attrs["shape"]) == [2, 3, 4]


def test_operand_writing_a_reference_is_not_dropped():
    mod = typed(
        """
        def @main(%x: float32) {
          let %r = ref(1f);
          %0 = multiply(%x, ones_like((ref_write(%r, 5f), %x).1));
          add(%0, ref_read(%r))
        }
        """
    )
    out = check_pass(SimplifyExpr(), mod, inputs=[np.float32(2)])
    assert out["main"] is mod["main"]


def test_untouched_subtrees_are_the_same_objects_and_sharing_is_kept():
    mod = typed(
        """
        def @main(%x: Tensor[(4), float32]) {
          %0 = exp(%x);
          %1 = tanh(%0);
          %2 = subtract(multiply(%0, 1f), 0f);
          (%1, %2, %2)
        }
        """
    )
    out = check_pass(SimplifyExpr(), mod)
    f = out["main"].body.fields
    assert f[0] is mod["main"].body.fields[0]
    assert f[1] is f[2] is mod["main"].body.fields[0].args[0]  # both rewritten to the shared exp


def test_every_rule_has_a_rewrite_comment():
    src = inspect.getsource(simplify_expr)
    table = src[src.index("RULES: list") : src.index("\n]\n")]
    rule_lines = [line for line in table.splitlines() if line.strip().startswith("((")]
    assert len(rule_lines) == len(simplify_expr.RULES)
    for line in rule_lines:
        assert re.search(r"#\s.*->", line), f"rule without a '# lhs -> rhs' comment: {line.strip()}"


def test_pass_info():
    assert SimplifyExpr().info.opt_level == 0 and SimplifyExpr().info.name == "SimplifyExpr"
    assert relay.transform.get_pass("SimplifyExpr").info.required == ("InferType",)


# -- random programs that exercise the rules -------------------------------------------------

SHAPE = (2, 3, 2)


@st.composite
def rule_programs(draw, max_ops: int = 25):
    """``fn (%x: Tensor[(2, 3, 2), dt], %y: same)``: a DAG of rule-triggering ops."""
    dtype = draw(st.sampled_from(["float32", "int32"]))
    x, y = relay.var("x", shape=SHAPE, dtype=dtype), relay.var("y", shape=SHAPE, dtype=dtype)
    one = Constant(np.asarray(1, dtype), is_literal=True)
    zero = Constant(np.asarray(0, dtype), is_literal=True)
    pool = [x, y]

    def call(name, *args, **attrs):
        return relay.Call(get_op(name), args, make_attrs(name, attrs))

    for _ in range(draw(st.integers(1, max_ops))):
        a = draw(st.sampled_from(pool))
        kind = draw(st.integers(0, 13))
        if kind == 0:
            e = call("multiply", a, one) if draw(st.booleans()) else call("multiply", one, a)
        elif kind == 1:
            e = call(draw(st.sampled_from(["add", "subtract"])), a, zero)
        elif kind == 2:
            e = call("negative", a)
        elif kind == 3:  # reshape there and back
            e = call(
                "reshape",
                call("reshape", a, newshape=[draw(st.sampled_from([12, 6, 4]))] + [-1]),
                newshape=list(SHAPE),
            )
        elif kind == 4:
            perm = draw(st.permutations([0, 1, 2]))
            e = call(
                "transpose", call("transpose", a, axes=list(perm)), axes=list(np.argsort(perm))
            )
        elif kind == 5:
            ax = draw(st.integers(0, 3))
            e = call("squeeze", call("expand_dims", a, axis=ax), axis=[ax])
        elif kind == 6:
            e = call("cast", call("cast", a, dtype="float64"), dtype=dtype)
        elif kind == 7:
            e = call("concatenate", Tuple((a,)), axis=0)
        elif kind == 8:
            e = (
                call("multiply", a, zero)
                if draw(st.booleans())
                else call("multiply", a, call("ones_like", a))
            )
        elif kind == 9:
            e = call(draw(st.sampled_from(["maximum", "minimum"])), a, a)
        elif kind == 10:
            e = call("add", a, call("negative", draw(st.sampled_from(pool))))
        elif kind == 11:
            e = call("reverse", call("reverse", a, axis=1), axis=draw(st.integers(0, 1)))
        elif kind == 12:
            e = call("add", a, draw(st.sampled_from(pool)))
        else:
            e = call("nn.relu", call("nn.relu", a)) if dtype == "float32" else call("abs", a)
        pool.append(e)
    outs = draw(st.lists(st.sampled_from(pool), min_size=1, max_size=3))
    return Function((x, y), Tuple(tuple(outs)))


@FAST
@given(rule_programs())
def test_random_rule_programs(fn):
    before = InferType()(as_module(fn))
    after = check_pass(SimplifyExpr(), before)
    InferType()(relay.parse(after.astext()))  # the result still type-checks after a round trip


@FAST
@given(programs())
def test_random_scalar_programs(fn):
    check_pass(SimplifyExpr(), InferType()(as_module(fn)))


def test_simplify_reaches_a_fixpoint_on_chains():
    x = relay.var("x", shape=(4,))
    e = x
    for _ in range(50):
        e = relay.negative(relay.negative(relay.multiply(e, relay.const(1.0))))
    mod = InferType()(relay.IRModule.from_expr(relay.Function([x], e)))
    out = check_pass(SimplifyExpr(), mod)
    assert out["main"].body is out["main"].params[0]
    assert isinstance(mod["main"].body, Call)
