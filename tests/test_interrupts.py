"""The simulated Ctrl-C (tests/interrupts.py) stays inside the test that sends it: an
interrupt that lands in a ``__del__``, a weakref callback or a gc callback is not raised
there (it would be "Exception ignored", a PytestUnraisableExceptionWarning in the summary)
but retried."""

from __future__ import annotations

import gc
import sys
import time
import weakref

import pytest
from interrupts import ctrl_c_soon


def _spin(seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


class SlowFinalizer:
    def __del__(self):
        _spin(0.3)


def _slow_gc_hook(phase, info):
    if phase == "start":
        _spin(0.3)


def _interrupts_lost(unraisable) -> list:
    """The KeyboardInterrupts reported as "Exception ignored", and where."""
    return [(u.err_msg, u.object) for u in unraisable if issubclass(u.exc_type, KeyboardInterrupt)]


@pytest.fixture
def unraisable(monkeypatch):
    seen = []
    monkeypatch.setattr(sys, "unraisablehook", seen.append)
    return seen


def test_an_interrupt_during_a_finalizer_reaches_the_test_not_the_finalizer(unraisable):
    with pytest.raises(KeyboardInterrupt), ctrl_c_soon(first=0.05, every=0.05):
        obj = SlowFinalizer()
        del obj  # the first interrupts arrive while __del__ spins
        _spin(30)
    assert _interrupts_lost(unraisable) == []


def test_an_interrupt_during_a_gc_callback_reaches_the_test(unraisable):
    gc.callbacks.append(_slow_gc_hook)
    try:
        with pytest.raises(KeyboardInterrupt), ctrl_c_soon(first=0.05, every=0.05):
            gc.collect()  # the first interrupts arrive while the hook spins
            _spin(30)
    finally:
        gc.callbacks.remove(_slow_gc_hook)
    assert _interrupts_lost(unraisable) == []


class _Referent:
    pass


def test_an_interrupt_during_a_library_weakref_callback_reaches_the_test(unraisable):
    obj = _Referent()
    weakref.finalize(obj, time.sleep, 0.3)  # the callback runs in weakref.py, not our code
    with pytest.raises(KeyboardInterrupt), ctrl_c_soon(first=0.05, every=0.05):
        del obj  # the first interrupts arrive while the finalizer sleeps
        _spin(30)
    assert _interrupts_lost(unraisable) == []
