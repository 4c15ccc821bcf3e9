"""The interpreter raises the collector's gen-0 threshold while it runs, and restores it."""

from __future__ import annotations

import gc

import numpy as np
import pytest

import relay_nb as relay
from relay_nb.eval.gcstate import RELAXED_GEN0, enter_relaxed_gc, exit_relaxed_gc

LIST_PROGRAM = """
type List[A] { Cons(A, List[A]), Nil, }
def @range(%i: int32, %n: int32) -> List[int32] {
  if (less(%i, %n)) { Cons(%i, @range(add(%i, 1), %n)) } else { Nil }
}
def @sum(%l: List[int32], %acc: int32) -> int32 {
  match (%l) { Cons(%h, %t) => @sum(%t, add(%acc, %h)), Nil => %acc, }
}
def @main(%n: int32) -> int32 { @sum(@range(0, %n), 0) }
"""


@pytest.fixture
def default_thresholds():
    saved = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    yield
    gc.set_threshold(*saved)


def test_evaluation_restores_the_thresholds_it_found(default_thresholds):
    run = relay.create_executor("interpreter", mod=relay.parse(LIST_PROGRAM)).evaluate()
    assert int(run(np.int32(3000))) == sum(range(3000))
    assert gc.get_threshold() == (700, 10, 10)


def test_a_deep_evaluation_collects_with_the_relaxed_threshold(default_thresholds):
    run = relay.create_executor("interpreter", mod=relay.parse(LIST_PROGRAM)).evaluate()
    seen: list = []

    def record(phase, info):
        if phase == "start" and info["generation"] == 0:
            seen.append(gc.get_threshold()[0])

    gc.callbacks.append(record)
    try:
        assert int(run(np.int32(30000))) == sum(range(30000))  # < 2**31
    finally:
        gc.callbacks.remove(record)
    # The collector still ran, at the relaxed threshold once the recursion got deep (the
    # first 40 nested calls run as direct calls, at the user's threshold).
    assert seen.count(RELAXED_GEN0) >= 3 and seen.count(RELAXED_GEN0) > len(seen) / 2, seen


def test_nested_evaluations_relax_once_and_the_outermost_restores(default_thresholds):
    enter_relaxed_gc()
    assert gc.get_threshold() == (RELAXED_GEN0, 10, 10)
    enter_relaxed_gc()
    exit_relaxed_gc()
    assert gc.get_threshold() == (RELAXED_GEN0, 10, 10)  # still inside the outer one
    exit_relaxed_gc()
    assert gc.get_threshold() == (700, 10, 10)


def test_a_user_who_turned_automatic_collection_off_keeps_it_off(default_thresholds):
    gc.set_threshold(0)
    run = relay.create_executor("interpreter", mod=relay.parse(LIST_PROGRAM)).evaluate()
    assert int(run(np.int32(100))) == sum(range(100))
    assert gc.get_threshold()[0] == 0


def test_an_error_inside_the_evaluation_still_restores(default_thresholds):
    mod = relay.parse("def @main(%x: int32) -> int32 { add(@main(%x), 1) }")  # runaway
    ex = relay.create_executor("interpreter", mod=mod)
    ex.max_depth = 50
    with pytest.raises(relay.RelayError, match="depth"):
        ex.evaluate()(np.int32(1))
    assert gc.get_threshold() == (700, 10, 10)
