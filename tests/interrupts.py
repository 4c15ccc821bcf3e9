"""Simulated Ctrl-C for the tests that stop an endless evaluation."""

from __future__ import annotations

import _thread
import contextlib
import gc
import os
import signal
import threading
from collections.abc import Iterator

import relay_nb


@contextlib.contextmanager
def ctrl_c_soon(first: float = 0.3, every: float = 0.3) -> Iterator[None]:
    """Inside the block, Ctrl-C arrives after ``first`` s, then every ``every`` s.

    Our own handler is installed for the block: a process started in the background by a
    non-interactive shell inherits SIGINT as ignored, and ``_thread.interrupt_main()``
    then does nothing.  A signal handler runs in whatever Python code is executing, and
    that can be a ``__del__``, a weakref callback or a ``gc.callbacks`` hook (a zmq socket
    left over from a kernel test, a WeakSet entry, hypothesis's gc-time tracker) that the
    interpreter calls in the middle of the evaluation; raising there cannot reach the
    evaluation — CPython reports it as "Exception ignored" (pytest's
    PytestUnraisableExceptionWarning).  So the handler raises only in this project's own
    code (relay_nb, the tests) outside such hooks, and otherwise lets that interrupt pass:
    the repeats bring the next.  Once the block ends the handler is disarmed, so an
    interrupt still in flight cannot hit the rest of the test.
    """
    armed = True

    def handler(signum, frame):
        if armed and _ours(frame) and not _inside_finalizer(frame):
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


_OUR_CODE = (
    os.path.dirname(os.path.abspath(relay_nb.__file__)) + os.sep,
    os.path.dirname(os.path.abspath(__file__)) + os.sep,
)


def _ours(frame) -> bool:
    """True when ``frame`` runs relay_nb's or the tests' code, or Python the interpreter
    compiled from a Relay program (``<relay ...>``) — not a library's callback (``weakref``,
    ``_weakrefset``) that the interpreter may be running in between."""
    if frame is None:
        return False
    name = frame.f_code.co_filename
    return name.startswith("<relay ") or os.path.abspath(name).startswith(_OUR_CODE)


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
