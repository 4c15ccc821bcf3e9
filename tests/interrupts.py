"""Simulated Ctrl-C for the tests that stop an endless evaluation."""

from __future__ import annotations

import _thread
import contextlib
import gc
import signal
import threading
from collections.abc import Iterator


@contextlib.contextmanager
def ctrl_c_soon(first: float = 0.3, every: float = 0.3) -> Iterator[None]:
    """Inside the block, Ctrl-C arrives after ``first`` s, then every ``every`` s.

    Our own handler is installed for the block: a process started in the background by a
    non-interactive shell inherits SIGINT as ignored, and ``_thread.interrupt_main()``
    then does nothing.  A signal handler runs in whatever Python code is executing, and
    that can be a ``__del__`` or a ``gc.callbacks`` hook (a zmq socket left over from a
    kernel test, hypothesis's gc-time tracker) that the collector calls in the middle of
    the evaluation; raising there cannot reach the evaluation — CPython reports it as
    "Exception ignored" (pytest's PytestUnraisableExceptionWarning) — so the handler lets
    that one pass and the repeats bring the next.  Once the block ends the handler is
    disarmed, so an interrupt still in flight cannot hit the rest of the test.
    """
    armed = True

    def handler(signum, frame):
        if armed and not _inside_finalizer(frame):
            raise KeyboardInterrupt

    done = threading.Event()

    def fire() -> None:
        wait = first
        while not done.wait(wait):
            _thread.interrupt_main()
            wait = every

    previous = signal.signal(signal.SIGINT, handler)
    thread = threading.Thread(target=fire, daemon=True)
    thread.start()
    try:
        yield
    finally:
        armed = False
        done.set()
        thread.join()
        _let_pending_signals_run()
        signal.signal(signal.SIGINT, previous)


def _inside_finalizer(frame) -> bool:
    """True when ``frame`` runs under a ``__del__`` or a gc callback: an exception raised
    there is swallowed by the interpreter instead of unwinding the interrupted code."""
    hooks = {getattr(cb, "__code__", None) for cb in gc.callbacks}
    while frame is not None:
        if frame.f_code.co_name == "__del__" or frame.f_code in hooks:
            return True
        frame = frame.f_back
    return False


def _let_pending_signals_run() -> None:
    """A Python call: CPython runs pending signal handlers (now disarmed) on entry."""
