"""A less eager garbage collector while the interpreter runs.

Relay programs that build data (a 10,000-cell ADT list, a tree) allocate many small
objects that all stay alive; with CPython's default gen-0 threshold of 700 the collector
runs every 700 allocations and rescans them, which made building and summing such a list
take 5.2x CPython's time (3.5x with a gen-0 threshold of 10,000; benchmarks/bench_interp.py).
The collector stays on — only its gen-0 threshold is raised, and only for the outermost
deep evaluation (the interpreter's trampoline: short calls do not pay for the switch);
the user's setting is restored when it ends.  A threshold of 0 (automatic
collection off) is left alone.
"""

from __future__ import annotations

import gc
import threading

RELAXED_GEN0 = 10_000

_lock = threading.Lock()
_depth = 0
_saved: tuple = ()


def enter_relaxed_gc() -> None:
    """Raise the gen-0 threshold unless an evaluation already did; pair with
    :func:`exit_relaxed_gc` in a ``finally`` (no ``with``: this sits on a hot entry path)."""
    global _depth, _saved
    with _lock:
        if _depth == 0:
            _saved = gc.get_threshold()
            if 0 < _saved[0] < RELAXED_GEN0:
                gc.set_threshold(RELAXED_GEN0, *_saved[1:])
        _depth += 1


def exit_relaxed_gc() -> None:
    """End one evaluation; the outermost one restores the thresholds it found."""
    global _depth
    with _lock:
        _depth -= 1
        if _depth == 0 and gc.get_threshold()[0] == RELAXED_GEN0 != _saved[0]:
            gc.set_threshold(*_saved)


__all__ = ["RELAXED_GEN0", "enter_relaxed_gc", "exit_relaxed_gc"]
