"""Simulated Ctrl-C for the tests that stop an endless evaluation."""

from __future__ import annotations

import _thread
import contextlib
import signal
import threading
from collections.abc import Iterator


@contextlib.contextmanager
def ctrl_c_soon(first: float = 0.3, every: float = 0.3) -> Iterator[None]:
    """Inside the block, Ctrl-C arrives after ``first`` s, then every ``every`` s.

    Our own handler is installed for the block: a process started in the background by a
    non-interactive shell inherits SIGINT as ignored, and ``_thread.interrupt_main()``
    then does nothing.  The repeats are needed because CPython can lose one interrupt: if
    the handler runs inside a ``__del__`` that the garbage collector calls (a zmq socket
    left over from a kernel test, say), the KeyboardInterrupt is reported as "Exception
    ignored" there instead of reaching the evaluation.  Once the block ends the handler
    is disarmed, so an interrupt still in flight cannot hit the rest of the test.
    """
    armed = True

    def handler(signum, frame):
        if armed:
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


def _let_pending_signals_run() -> None:
    """A Python call: CPython runs pending signal handlers (now disarmed) on entry."""
