"""Properties shared by the classic passes (ToANormalForm ... LambdaLift) on random modules:
types are kept, and any sequence of them keeps the meaning."""

from __future__ import annotations

from hypothesis import given
from pass_testing import check_pass
from strategies import FAST, modules

import relay_nb as relay

T = relay.transform


def classic_passes():
    return [
        T.ToANormalForm(),
        T.ToGraphNormalForm(),
        T.ToBasicBlockNormalForm(),
        T.DeadCodeElimination(),
        T.DeadCodeElimination(inline_once=True),
        T.EliminateCommonSubexpr(),
        T.Inline(),
        T.Inline(all_non_recursive=True),
        T.LambdaLift(),
    ]


@FAST
@given(modules())
def test_types_are_kept(mod):
    want = T.InferType()(mod)["main"].checked_type
    for p in classic_passes():
        got = T.InferType()(p(mod))["main"].checked_type
        assert relay.structural_equal(got, want), f"{p}: {got} != {want}"


@FAST
@given(modules())
def test_a_pipeline_keeps_the_meaning(mod):
    seq = T.Sequential(
        [
            T.Inline(all_non_recursive=True),
            T.LambdaLift(),
            T.ToANormalForm(),
            T.DeadCodeElimination(),
            T.ToGraphNormalForm(),
            T.EliminateCommonSubexpr(),
            T.ToBasicBlockNormalForm(),
        ]
    )
    # CSE requires InferType, which fills the (shared) nodes' type cache: type the input
    # first so that its printed text, which check_pass compares, does not change.
    mod = T.InferType()(mod)
    with T.PassContext(opt_level=3):
        check_pass(seq, mod)
