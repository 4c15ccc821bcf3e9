"""FoldConstant: golden before/after, semantics, well-formedness, identity of untouched
subtrees, DAG sharing, literal dtypes, effects, and random programs."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from pass_testing import check_pass
from strategies import FAST, as_module, modules, programs

import relay_nb as relay
from relay_nb.ir.expr import Constant, Tuple
from relay_nb.transform import FoldConstant, InferType


def typed(text: str) -> relay.IRModule:
    return InferType()(relay.parse(text))


def test_arithmetic_and_let(golden):
    before = typed(
        """
        def @main(%x: Tensor[(2, 3), float32]) {
          let %c = add(1f, multiply(2f, 3f));
          %0 = full(1f, shape=[2, 3], dtype="float32");
          %1 = exp(zeros_like(%0));
          %2 = add(multiply(%x, %c), %1);
          (%2, zeros_like(ones(shape=[2], dtype="float32")))
        }
        """
    )
    after = check_pass(FoldConstant(), before, golden=golden, case="fold_constant_arithmetic")
    body, unfolded = after["main"].body.fields
    # let %c = 7f; ... -> the constant is substituted and the let disappears
    assert body.args[0].args[1].data == np.float32(7)
    assert isinstance(body.args[1], Constant) and np.all(body.args[1].data == 1)
    # ones() has no arguments and is not folded (TVM's rule), so neither is what uses it
    assert unfolded is before["main"].body.body.fields[1]


def test_tuples_projections_and_if(golden):
    before = typed(
        """
        def @main(%x: float32) {
          %0 = split(full(1f, shape=[4], dtype="float32"), indices_or_sections=2);
          %1 = if (less(1f, 2f)) { (%x, add(1f, 1f)).1 } else { %x };
          (%0.1, %1, (%x, 3f).0)
        }
        """
    )
    after = check_pass(FoldConstant(), before, golden=golden, case="fold_constant_tuples_if")
    fields = after["main"].body.fields
    assert isinstance(fields[0], Constant) and fields[0].data.shape == (2,)
    assert (
        isinstance(fields[1], Constant) and fields[1].data == 2
    )  # if (True) -> branch, (a, b).1 -> b
    assert fields[2] is after["main"].params[0]  # (%x, ...).0 -> %x


def test_literal_takes_the_inferred_dtype():
    before = typed("def @main(%x: Tensor[(2), float16]) { multiply(%x, add(1, 2)) }")
    after = check_pass(FoldConstant(), before)
    c = after["main"].body.args[1]
    assert (
        isinstance(c, Constant) and c.data.dtype == np.float16 and c.checked_type.dtype == "float16"
    )
    InferType()(after)  # still typeable


def test_int_and_shape_of(golden):
    before = typed(
        """
        def @main(%x: Tensor[(2, 5), float32]) {
          %0 = shape_of(%x);
          %1 = take(%0, 1);
          (%1, floor_divide(7, 2), cast(%1, dtype="float32"))
        }
        """
    )
    after = check_pass(FoldConstant(), before, golden=golden, case="fold_constant_shape_of")
    f = after["main"].body.fields
    assert [type(v) for v in f] == [Constant, Constant, Constant]
    assert f[0].data == 5 and f[1].data == 3 and f[2].data.dtype == np.float32


def test_untouched_subtrees_and_whole_functions_are_the_same_objects():
    before = typed(
        """
        def @other(%y: float32) { exp(%y) }
        def @main(%x: float32) {
          %0 = log(%x);
          %1 = tanh(%0);
          (%1, add(1f, 2f))
        }
        """
    )
    after = check_pass(FoldConstant(), before)
    assert after["other"] is before["other"]
    assert after["main"].body.fields[0] is before["main"].body.fields[0]
    nothing = typed("def @main(%x: float32) { add(%x, 1f) }")
    assert FoldConstant()(nothing)["main"] is nothing["main"]


def test_sharing_is_kept():
    before = typed(
        """
        def @main(%x: float32) {
          %0 = add(%x, add(1f, 2f));
          %1 = multiply(%0, %0);
          (%1, %0)
        }
        """
    )
    after = check_pass(FoldConstant(), before)
    mul, shared = after["main"].body.fields
    assert mul.args[0] is mul.args[1] is shared


def test_effects_are_not_dropped_or_folded():
    before = typed(
        """
        def @main(%x: float32) {
          let %r = ref(1f);
          %0 = (ref_write(%r, %x), 2f);
          let %y = %0.1;
          add(%y, ref_read(%r))
        }
        """
    )
    after = check_pass(FoldConstant(), before, inputs=[np.float32(5)])
    assert "ref_write" in after.astext()


def test_failing_evaluation_is_left_for_run_time():
    c = relay.const(np.arange(3, dtype="float32"))
    bad = relay.take(c, relay.const(7), mode="fast")  # out of range: an EvalError at run time
    mod = InferType()(relay.IRModule.from_expr(relay.Function([], bad)))
    out = FoldConstant()(mod)
    assert out["main"].body is mod["main"].body


def test_primitive_functions_are_not_folded():
    before = typed(
        """
        def @main(%x: float32) {
          %0 = fn (%p0: float32, Primitive=1) { add(%p0, add(1f, 2f)) };
          %0(%x)
        }
        """
    )
    after = check_pass(FoldConstant(), before)
    assert after["main"] is before["main"]


def test_untyped_input_is_type_checked_first():
    mod = relay.parse("def @main() { add(1f, 2f) }")
    out = FoldConstant()(mod)
    assert isinstance(out["main"].body, Constant) and out["main"].body.data == 3


def test_opt_level_and_registry():
    assert FoldConstant().info.opt_level == 2
    assert relay.transform.get_pass("FoldConstant").info.name == "FoldConstant"
    mod = typed("def @main() { add(1f, 2f) }")
    with relay.transform.PassContext(opt_level=1):
        out = relay.transform.Sequential([FoldConstant()])(mod)
    assert not isinstance(out["main"].body, Constant)


@FAST
@given(programs())
def test_random_programs(fn):
    before = InferType()(as_module(fn))
    check_pass(FoldConstant(), before)


@FAST
@given(modules())
def test_random_modules(mod):
    check_pass(FoldConstant(), InferType()(mod))


@pytest.mark.parametrize("n", [2, 3])
def test_folded_tuple_results(n):
    x = relay.const(np.arange(6, dtype="float32"))
    mod = InferType()(relay.IRModule.from_expr(relay.Function([], relay.split(x, n).astuple())))
    out = check_pass(FoldConstant(), mod)
    assert isinstance(out["main"].body, Tuple) and all(
        isinstance(f, Constant) for f in out["main"].body.fields
    )
