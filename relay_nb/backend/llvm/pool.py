"""The process's worker threads: one kernel call split into chunks that run at once.

A native kernel is called through ctypes, which releases the GIL for the call, so Python
threads calling chunks of one kernel run truly in parallel.  :func:`run_chunks` runs chunk
0 on the calling thread and the others on persistent daemon workers (one queue each: a
worker runs chunk ``k`` of every split call, so per-chunk state such as a workspace buffer
is only ever used by one thread at a time), then waits for all of them before returning —
even when the caller's own chunk raised or a Ctrl-C arrived — so that no chunk is still
writing a buffer the caller reuses.  The first error is raised after the wait; the pool
stays usable.

Workers are daemon threads: they never keep the interpreter alive, and an ``atexit`` hook
stops them cleanly before shutdown.
"""

from __future__ import annotations

import atexit
import os
import queue
import threading
from typing import Callable, Optional

_ENV = "RELAY_NB_NUM_THREADS"


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not Linux
        return max(1, os.cpu_count() or 1)


def resolve_threads(threads: Optional[int]) -> int:
    """How many threads a built module uses: ``threads`` if given, else the environment's
    ``RELAY_NB_NUM_THREADS``, else every core the process may run on."""
    from ...errors import RelayError

    if threads is None:
        env = os.environ.get(_ENV, "").strip()
        if not env:
            return available_cores()
        try:
            threads = int(env)
        except ValueError:
            raise RelayError(f"{_ENV} must be a positive integer, got {env!r}") from None
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise RelayError(f"threads must be a positive integer or None, got {threads!r}")
    return threads


class _Worker:
    """A daemon thread running the callables put on its queue (None stops it)."""

    def __init__(self, index: int):
        self.tasks: queue.SimpleQueue = queue.SimpleQueue()
        self.thread = threading.Thread(target=self._loop, name=f"relay_nb-worker-{index}", daemon=True)
        self.thread.start()

    def _loop(self) -> None:
        while True:
            task = self.tasks.get()
            if task is None:
                return
            task()


class _Call:
    """One split call in flight: counts the workers' chunks, keeps their first error."""

    __slots__ = ("pending", "cond", "error")

    def __init__(self) -> None:
        self.pending = 0
        self.cond = threading.Condition(threading.Lock())
        self.error: Optional[BaseException] = None

    def started(self) -> None:
        with self.cond:
            self.pending += 1

    def finish(self, error: Optional[BaseException]) -> None:
        with self.cond:
            if error is not None and self.error is None:
                self.error = error
            self.pending -= 1
            if self.pending == 0:
                self.cond.notify_all()

    def wait(self) -> Optional[BaseException]:
        """Wait until every handed-out chunk finished.  A Ctrl-C during the wait is kept,
        not lost, and returned once they are done: they write memory the caller owns."""
        interrupt: Optional[BaseException] = None
        while True:
            try:
                with self.cond:
                    while self.pending:
                        self.cond.wait()
                return interrupt
            except KeyboardInterrupt as e:
                interrupt = interrupt or e


_workers: list[_Worker] = []
_workers_lock = threading.Lock()
_busy = threading.Lock()  # one split call at a time: the workers' chunk slots are shared


def _ensure(count: int) -> list[_Worker]:
    with _workers_lock:
        while len(_workers) < count:
            _workers.append(_Worker(len(_workers) + 1))
        return _workers


def run_chunks(chunk: Callable[[int], None], count: int) -> None:
    """``chunk(0)``, ..., ``chunk(count - 1)``, all at once: 0 on this thread, ``k`` on
    worker ``k``.  Returns when every chunk has finished; then raises the first error
    (this thread's own first, e.g. a KeyboardInterrupt)."""
    if count <= 1:
        chunk(0)
        return
    if not _busy.acquire(blocking=False):
        # another thread is splitting a call: run this one serially rather than queue
        # chunks behind it (the per-chunk state of the two calls must not mix)
        for k in range(count):
            chunk(k)
        return
    call = _Call()
    error: Optional[BaseException] = None
    try:
        workers = _ensure(count - 1)
        for k in range(1, count):
            call.started()  # counted before it is queued: the wait below covers it
            workers[k - 1].tasks.put(_task(chunk, k, call))
        chunk(0)
    except BaseException as e:  # noqa: BLE001 - raised after the workers finish
        error = e
    finally:
        interrupt = call.wait()
        _busy.release()
    error = error or interrupt or call.error
    if error is not None:
        raise error


def _task(chunk: Callable[[int], None], k: int, call: _Call) -> Callable[[], None]:
    def task() -> None:
        try:
            chunk(k)
        except BaseException as e:  # noqa: BLE001 - handed to the caller
            call.finish(e)
        else:
            call.finish(None)

    return task


SPLIT_MIN_NS = 100_000.0
"""A kernel call is split only if it is estimated to take this long on one core (see
``chunk_count``).  Handing chunks to the workers and waiting for them costs ~20-40 us per
split call on this project's 2-core test machine (measured with :func:`dispatch_seconds`
under load; 8 us idle), and a chunk only gains (1 - 1/threads) of the call's time, so
below ~0.1 ms the wake-ups eat the gain."""


def chunk_count(units: int, unit_ns: float, threads: int) -> int:
    """Into how many chunks to split a call of ``units`` parallel units of ``unit_ns``
    each: 1 (run it whole) for small calls, else one per thread."""
    if threads <= 1 or units < 2 or units * unit_ns < SPLIT_MIN_NS:
        return 1
    return min(threads, units)


def split(units: int, count: int) -> list[tuple[int, int]]:
    """``range(units)`` cut into ``count`` contiguous, near-equal ``(lo, hi)`` chunks."""
    return [(units * k // count, units * (k + 1) // count) for k in range(count)]


def dispatch_seconds(threads: int = 2, repeat: int = 200) -> float:
    """The median time of one split call of empty chunks (the pool's fixed cost)."""
    import time

    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run_chunks(lambda k: None, threads)
        times.append(time.perf_counter() - start)
    times.sort()
    return times[len(times) // 2]


_local = threading.local()


def current_threads() -> int:
    """The threads this thread's kernel calls may use (set by the JIT executor around a
    call: :class:`using_threads`); 1 outside."""
    return getattr(_local, "threads", 1)


class using_threads:
    """``with using_threads(n):`` kernel calls on this thread split across ``n`` threads."""

    def __init__(self, threads: int):
        self.threads = threads

    def __enter__(self) -> None:
        self.saved = current_threads()
        _local.threads = self.threads

    def __exit__(self, *exc) -> None:
        _local.threads = self.saved


def worker_count() -> int:
    """How many worker threads exist now (they are started on the first split call)."""
    return len(_workers)


@atexit.register
def _shutdown() -> None:
    """Stop the workers before the interpreter finalizes (each finishes its chunk first)."""
    with _workers_lock:
        workers = list(_workers)
        _workers.clear()
    for w in workers:
        w.tasks.put(None)
    for w in workers:
        w.thread.join(timeout=5.0)


__all__ = [
    "available_cores", "chunk_count", "current_threads", "dispatch_seconds", "resolve_threads", "run_chunks",
    "split", "using_threads", "worker_count",
]
