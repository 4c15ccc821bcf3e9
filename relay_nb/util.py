"""Small helpers shared across layers."""

from __future__ import annotations

import contextlib
import gc
import os
from typing import Any, Callable, Iterator


class ByClass(dict):
    """A table keyed by class that answers for subclasses too: a class not listed gets
    the value of its nearest listed base (``fallback(cls)`` when none is), found once and
    kept, so dispatch on a node's class is one dict lookup however it was subclassed."""

    def __init__(self, table: dict[type, Any], fallback: Callable[[type], Any]) -> None:
        super().__init__(table)
        self._listed = dict(table)
        self._fallback = fallback

    def __missing__(self, cls: type) -> Any:
        listed = self._listed
        base = next((k for k in cls.__mro__ if k in listed), None)
        value = listed[base] if base is not None else self._fallback(cls)
        self[cls] = value
        return value


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector for one whole-program job (parse, infer, print).

    Such a job allocates a few container objects per node while the whole program stays
    alive; with the collector on, its full collections rescan that program again and again
    and a 10x bigger program takes 15-20x longer (quadratic on a 100,000-deep let chain).
    The jobs make no reference cycles, so nothing is left for the collector afterwards.
    Re-entrant: a nested pause leaves the collector off until the outer one ends.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def memory_limit() -> int:
    """Bytes one call may allocate: the machine's physical memory.  Both executors refuse
    a result bigger than this with the same message (see :func:`too_big`)."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):  # pragma: no cover - non-POSIX
        return 1 << 40


MEMORY_LIMIT = memory_limit()


def gib(n: int) -> str:
    return f"{n / 2**30:.1f} GiB"


def too_big(nbytes: int, what: str = "its results") -> str:
    """The message for a result that cannot fit: ``needs 37.3 GiB for its results, ...``."""
    return f"needs {gib(nbytes)} for {what}, more than this machine's {gib(MEMORY_LIMIT)} of memory"
