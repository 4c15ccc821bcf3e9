"""FuseOps: TVM's grouping on a CNN and on the classic shapes (diamonds, tuples,
reductions, projections), fuse_opt_level, max_depth, control flow, round trips, sharing,
and random dataflow graphs."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pass_testing import check_pass, evaluate, random_inputs, results_agree
from strategies import FAST, as_module, programs

import relay_nb as relay
from relay_nb.ir.expr import Call, Function, Op, Tuple
from relay_nb.ir.functor import post_order
from relay_nb.op.registry import get_op, make_attrs
from relay_nb.transform import FuseOps, InferType, PassContext

CNN = """
def @main(%data: Tensor[(1, 3, 8, 8), float32], %w1: Tensor[(8, 3, 3, 3), float32], %b1: Tensor[(8), float32],
          %w2: Tensor[(8, 8, 3, 3), float32], %b2: Tensor[(8), float32],
          %wd: Tensor[(10, 32), float32], %bd: Tensor[(10), float32]) {
  %0 = nn.conv2d(%data, %w1, padding=[1, 1], channels=8, kernel_size=[3, 3]);
  %1 = nn.bias_add(%0, %b1);
  %2 = nn.relu(%1);
  %3 = nn.conv2d(%2, %w2, padding=[1, 1], channels=8, kernel_size=[3, 3]);
  %4 = nn.bias_add(%3, %b2);
  %5 = add(%4, %2);
  %6 = nn.relu(%5);
  %7 = nn.max_pool2d(%6, pool_size=[2, 2], strides=[2, 2]);
  %8 = nn.avg_pool2d(%7, pool_size=[2, 2], strides=[2, 2]);
  %9 = nn.batch_flatten(%8);
  %10 = nn.dense(%9, %wd);
  %11 = nn.bias_add(%10, %bd);
  nn.softmax(%11)
}
"""


def typed(text: str) -> relay.IRModule:
    return InferType()(relay.parse(text))


def groups(mod: relay.IRModule, name: str = "main") -> list[list[str]]:
    """The op names of each primitive function, in evaluation order."""
    out = []
    for node in post_order(mod[name]):  # calls come after their arguments
        if isinstance(node, Call) and isinstance(node.op, Function) and node.op.is_primitive:
            out.append(
                [
                    n.op.name
                    for n in post_order(node.op.body)
                    if isinstance(n, Call) and isinstance(n.op, Op)
                ]
            )
    return out


def check_fused(mod: relay.IRModule, fuse=None, **kw) -> relay.IRModule:
    """check_pass plus: every op call is inside a primitive function, the text round-trips,
    and re-inference gives the types the pass recorded."""
    out = check_pass(fuse or FuseOps(), mod, **kw)
    text = out.astext()
    back = relay.parse(text)
    relay.assert_structural_equal(back, out, map_free_vars=True)
    InferType()(back)
    assert back.astext() == text  # same types after re-inference
    for func in out.functions.values():
        inside = set()
        for node in post_order(func):
            if isinstance(node, Function) and node.is_primitive:
                inside |= set(post_order(node.body))
        calls = [n for n in post_order(func) if isinstance(n, Call) and isinstance(n.op, Op)]
        assert all(c in inside for c in calls), (
            "an operator call was left outside the fused functions"
        )
    return out


def test_cnn(golden):
    out = check_fused(typed(CNN), golden=golden, case="fuse_ops_cnn")
    assert groups(out) == [
        ["nn.conv2d", "nn.bias_add", "nn.relu"],  # conv2d takes its elementwise epilogue
        ["nn.conv2d", "nn.bias_add", "add", "nn.relu"],  # ... including the residual add
        ["nn.max_pool2d"],  # the next op (a pool) is not elementwise
        ["nn.avg_pool2d"],
        ["nn.batch_flatten"],  # injective, followed by dense: not fusable into it
        ["nn.dense", "nn.bias_add"],
        ["nn.softmax"],  # opaque: alone
    ]
    fused = [n for n in post_order(out["main"]) if isinstance(n, Function) and n.is_primitive]
    assert all(p.name_hint == f"p{i}" for f in fused for i, p in enumerate(f.params))
    assert all(int(f.attrs["Primitive"]) == 1 for f in fused)


def test_fuse_opt_level_zero_puts_each_op_alone(golden):
    out = check_fused(
        typed(CNN), FuseOps(fuse_opt_level=0), golden=golden, case="fuse_ops_cnn_level0"
    )
    assert all(len(g) == 1 for g in groups(out)) and len(groups(out)) == 13
    with PassContext(opt_level=0):  # -1: the context's level
        assert groups(FuseOps()(typed(CNN))) == groups(out)


def test_diamond_and_scalar_constants(golden):
    mod = typed(
        """
        def @main(%x: Tensor[(1, 4, 6, 6), float32], %w: Tensor[(4, 4, 3, 3), float32]) {
          %0 = nn.conv2d(%x, %w, padding=[1, 1]);
          %1 = add(%0, 1f);
          %2 = multiply(%0, 2f);
          %3 = nn.relu(%0);
          %4 = add(%1, %2);
          add(%4, %3)
        }
        """
    )
    out = check_fused(mod, golden=golden, case="fuse_ops_diamond")
    # the post-dominator of conv2d is the last add: the whole diamond is one kernel
    assert groups(out) == [["nn.conv2d", "add", "multiply", "add", "nn.relu", "add"]]
    (fused,) = [n for n in post_order(out["main"]) if isinstance(n, Function)][:1]
    assert len(fused.params) == 2  # scalar constants are fused in, not parameters


def test_concatenate_and_tuple_fields(golden):
    mod = typed(
        """
        def @main(%x: Tensor[(2, 4), float32], %y: Tensor[(4, 2), float32]) {
          %0 = exp(%x);
          %1 = transpose(%y);
          %2 = (%0, %1);
          %3 = concatenate(%2, axis=1);
          %4 = add(%3, 1f);
          %5 = (exp(%y), %4);
          %5
        }
        """
    )
    out = check_fused(mod, golden=golden, case="fuse_ops_tuples")
    assert groups(out) == [["exp"], ["exp", "transpose", "concatenate", "add"]]
    assert isinstance(out["main"].body, Tuple)  # a root tuple stays a plain tuple


def test_reductions_take_elementwise_inputs_but_no_epilogue():
    mod = typed(
        """
        def @main(%x: Tensor[(2, 4), float32]) {
          %0 = exp(%x);
          %1 = multiply(%0, 2f);
          %2 = sum(%1, axis=[1]);
          %3 = sqrt(%2);
          %4 = reshape(%x, newshape=[8]);
          %5 = max(%4);
          (%3, %5)
        }
        """
    )
    out = check_fused(mod)
    assert groups(out) == [["exp", "multiply", "sum"], ["sqrt"], ["reshape"], ["max"]]


def test_projection_of_an_opaque_tuple():
    mod = typed(
        """
        def @main(%x: Tensor[(1, 2, 3, 3), float32], %g: Tensor[(2), float32], %b: Tensor[(2), float32],
                  %m: Tensor[(2), float32], %v: Tensor[(2), float32]) {
          %0 = nn.batch_norm(%x, %g, %b, %m, %v);
          %1 = %0.0;
          nn.relu(%1)
        }
        """
    )
    out = check_fused(mod, inputs=None)
    assert groups(out) == [["nn.batch_norm"], ["nn.relu"]]
    relu_fn = out["main"].body.op
    assert isinstance(relu_fn.params[0].checked_type, relay.TupleType)  # %p0.0 inside the kernel


def test_split_outputs_fuse_into_their_consumer():
    mod = typed(
        """
        def @main(%x: Tensor[(2, 4), float32]) {
          %0 = split(%x, indices_or_sections=2, axis=1);
          %1 = add(%0.0, %0.1);
          exp(%1)
        }
        """
    )
    out = check_fused(mod)
    assert groups(out) == [["split", "add", "exp"]]


def test_max_depth_config():
    x = relay.var("x", shape=(4,))
    e = x
    for _ in range(10):
        e = relay.nn.relu(e)
    mod = InferType()(relay.IRModule.from_expr(relay.Function([x], e)))
    with PassContext(config={"relay.FuseOps.max_depth": 3}):
        out = check_fused(mod)
    assert [len(g) for g in groups(out)] == [3, 3, 3, 1]
    assert [len(g) for g in groups(check_fused(mod))] == [10]


def test_control_flow_and_closures_are_not_fused_across():
    mod = typed(
        """
        def @main(%x: Tensor[(3), float32], %c: bool) {
          %0 = exp(%x);
          %1 = if (%c) { nn.relu(%0) } else { negative(%0) };
          let %f = fn (%z: Tensor[(3), float32]) { tanh(add(%z, 1f)) };
          let %y = add(%1, %x);
          %f(%y)
        }
        """
    )
    out = check_fused(mod)
    assert sorted(map(tuple, groups(out))) == [
        ("add",),
        ("add", "tanh"),
        ("exp",),
        ("negative",),
        ("nn.relu",),
    ]
    for c in (True, False):
        args = [np.arange(3, dtype="float32"), np.asarray(c)]
        assert results_agree(evaluate(mod, args), evaluate(out, args))


def test_running_twice_changes_nothing_and_other_functions_are_kept():
    mod = typed(
        """
        def @id(%a: Tensor[(3), float32]) { %a }
        def @main(%x: Tensor[(3), float32]) { @id(exp(%x)) }
        """
    )
    once = check_fused(mod)
    assert once["id"] is mod["id"]
    twice = FuseOps()(once)
    assert twice["main"] is once["main"]


def test_a_shared_value_is_computed_once():
    mod = typed(
        """
        def @main(%x: Tensor[(3), float32]) {
          %0 = exp(%x);
          %1 = sum(%0);
          %2 = max(%0);
          (%1, %2, %0)
        }
        """
    )
    out = check_fused(mod)
    assert groups(out) == [["exp"], ["sum"], ["max"]]
    body = out["main"].body
    exp_call = body.fields[2]
    assert body.fields[0].args[0] is exp_call and body.fields[1].args[0] is exp_call


def test_untyped_input_and_pass_info():
    out = FuseOps()(relay.parse("def @main(%x: Tensor[(2), float32]) { exp(negative(%x)) }"))
    assert groups(out) == [["negative", "exp"]]
    info = FuseOps().info
    assert (info.name, info.opt_level, info.required) == ("FuseOps", 0, ("InferType",))


# -- random dataflow graphs -------------------------------------------------------------------

ELEMWISE = ("exp", "negative", "nn.relu", "tanh", "abs")
BROADCAST = ("add", "multiply", "subtract", "maximum")


@st.composite
def dataflow_graphs(draw, max_ops: int = 20):
    """``fn (%x: (2, 3), %y: (2, 3), %z: (3)) -> tuple``: a random DAG of elementwise,
    broadcast, injective, reduction, out-elemwise-fusable and opaque ops, with tuples,
    projections and scalar constants; every value has shape (2, 3) or (3)."""
    x, y = relay.var("x", shape=(2, 3)), relay.var("y", shape=(2, 3))
    z = relay.var("z", shape=(3,))
    full, vec = [x, y], [z]

    def call(name, *args, **attrs):
        return Call(get_op(name), args, make_attrs(name, attrs))

    for _ in range(draw(st.integers(1, max_ops))):
        a = draw(st.sampled_from(full))
        kind = draw(st.integers(0, 10))
        if kind <= 2:
            full.append(call(draw(st.sampled_from(ELEMWISE)), a))
        elif kind <= 4:
            b = draw(st.sampled_from(full + vec + [relay.const(0.5)]))
            full.append(call(draw(st.sampled_from(BROADCAST)), a, b))
        elif kind == 5:
            full.append(call("reshape", call("transpose", a), newshape=[2, 3]))
        elif kind == 6:
            vec.append(call(draw(st.sampled_from(["sum", "max", "mean"])), a, axis=[0]))
        elif kind == 7:
            b = draw(st.sampled_from(full))
            full.append(
                call(
                    "strided_slice", call("concatenate", Tuple((a, b)), axis=0), begin=[1], end=[3]
                )
            )
        elif kind == 8:
            parts = call("split", a, indices_or_sections=3, axis=1)
            full.append(
                call(
                    "concatenate",
                    Tuple(
                        (
                            relay.TupleGetItem(parts, 2),
                            relay.TupleGetItem(parts, 0),
                            relay.TupleGetItem(parts, 1),
                        )
                    ),
                    axis=1,
                )
            )
        elif kind == 9:
            full.append(call("nn.softmax", a))
        else:
            w = draw(st.sampled_from(full))
            d = call("nn.dense", call("transpose", a), call("transpose", w))  # (3, 2) x (3, 2)^T
            vec.append(call("sum", call("nn.relu", d), axis=[1]))
    outs = draw(st.lists(st.sampled_from(full[2:] or full), min_size=1, max_size=2))
    outs += draw(st.lists(st.sampled_from(vec), max_size=1))
    return relay.Function((x, y, z), Tuple(tuple(outs)))


@FAST
@given(dataflow_graphs(), st.sampled_from([0, 1, 2]))
def test_random_dataflow_graphs(fn, level):
    check_fused(InferType()(as_module(fn)), FuseOps(fuse_opt_level=level))


@FAST
@given(programs(refs=True))
def test_random_programs_with_control_flow(fn):
    check_fused(InferType()(as_module(fn)))


@pytest.mark.parametrize("depth", [2, 256])
def test_group_sizes_never_exceed_max_depth(depth):
    x = relay.var("x", shape=(2,))
    e, rng = x, np.random.default_rng(0)
    for i in range(300):
        e = relay.add(e, relay.exp(e)) if rng.random() < 0.3 else relay.negative(e)
    mod = InferType()(relay.IRModule.from_expr(relay.Function([x], e)))
    with PassContext(config={"relay.FuseOps.max_depth": depth}):
        out = FuseOps()(mod)
    assert max(len(g) for g in groups(out)) <= depth
    args = random_inputs(mod)
    assert results_agree(evaluate(mod, args), evaluate(out, args))
