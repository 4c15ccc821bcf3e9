"""The process's worker threads: one kernel call split into chunks that run at once.

A native kernel is called through ctypes, which releases the GIL for the call, so Python
threads calling chunks of one kernel run truly in parallel.  :func:`run_chunks` runs the
chunks on the calling thread and persistent daemon workers (slot 0 and slots 1, 2, ...:
per-slot state such as a workspace buffer is only ever used by one thread at a time),
then waits for all of them before returning —
even when the caller's own chunk raised or a Ctrl-C arrived — so that no chunk is still
writing a buffer the caller reuses.  The first error is raised after the wait; the pool
stays usable.

Workers are daemon threads: they never keep the interpreter alive, and an ``atexit`` hook
stops them cleanly before shutdown.  A call is cut into a few chunks per thread, which
the threads take in turn (see :data:`CHUNKS_PER_THREAD`).
"""

from __future__ import annotations

import atexit
import itertools
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


_QUEUED, _RUNNING, _LEFT = 0, 1, 2


class _Call:
    """One split call in flight: hands out chunk numbers, tracks which workers are in it,
    keeps the first error (after which no new chunk starts)."""

    __slots__ = ("next", "count", "state", "cond", "error")

    def __init__(self, count: int, threads: int) -> None:
        self.next = itertools.count().__next__  # atomic under the GIL
        self.count = count
        self.state = [_RUNNING] + [_QUEUED] * (threads - 1)  # per slot (0: the caller)
        self.cond = threading.Condition(threading.Lock())
        self.error: Optional[BaseException] = None

    def drain(self, chunk: Callable[[int, int], None], slot: int) -> None:
        """Run chunks as slot ``slot`` until none is left (or one failed)."""
        while self.error is None:
            k = self.next()
            if k >= self.count:
                return
            chunk(slot, k)

    def enter(self, slot: int) -> bool:
        """A worker joins; False if the caller already gave up waiting for it."""
        with self.cond:
            if self.state[slot] != _QUEUED:
                return False
            self.state[slot] = _RUNNING
            return True

    def leave(self, slot: int, error: Optional[BaseException]) -> None:
        with self.cond:
            if error is not None and self.error is None:
                self.error = error
            self.state[slot] = _LEFT
            self.cond.notify_all()

    def wait(self) -> Optional[BaseException]:
        """Once the caller is done: workers not started yet are told not to join (on a
        loaded machine a worker may wake long after the caller took every chunk), and
        those running are waited for.  A Ctrl-C during the wait is kept, not lost, and
        returned once they are done: they write memory the caller owns."""
        interrupt: Optional[BaseException] = None
        while True:
            try:
                with self.cond:
                    self.state = [_LEFT if s == _QUEUED else s for s in self.state]
                    self.state[0] = _LEFT
                    while _RUNNING in self.state:
                        self.cond.wait()
                return interrupt
            except KeyboardInterrupt as e:
                interrupt = interrupt or e


_workers: list[_Worker] = []
_workers_lock = threading.Lock()
_busy = threading.Lock()  # one split call at a time: the workers' slots are shared


def _ensure(count: int) -> list[_Worker]:
    with _workers_lock:
        while len(_workers) < count:
            _workers.append(_Worker(len(_workers) + 1))
        return _workers


def run_chunks(chunk: Callable[[int, int], None], count: int, threads: int) -> None:
    """``chunk(slot, k)`` for every ``k`` in ``range(count)``, on ``threads`` threads at
    once: this one (slot 0) and workers (slots 1, 2, ...), each taking the next chunk not
    taken yet, so a thread the OS preempts holds up at most one chunk.  Per-slot state
    (a workspace) is only ever used by one thread at a time.  Returns when every chunk
    has finished; then raises the first error (this thread's own first, e.g. Ctrl-C)."""
    threads = min(threads, count)
    if threads <= 1 or not _busy.acquire(blocking=False):
        # (another thread is splitting a call: run this one serially rather than queue
        # behind it; the two calls' slots must not mix)
        for k in range(count):
            chunk(0, k)
        return
    # (the try starts right after the acquire: a Ctrl-C is only handled at a call, and
    # whatever happens from here on, the lock is released)
    call: Optional[_Call] = None
    error: Optional[BaseException] = None
    try:
        call = _Call(count, threads)
        workers = _ensure(threads - 1)
        for slot in range(1, threads):
            workers[slot - 1].tasks.put(_task(chunk, slot, call))
        call.drain(chunk, 0)
    except BaseException as e:  # noqa: BLE001 - raised after the workers finish
        error = e
        if call is not None:
            call.error = call.error or e  # the workers take no new chunk
    finally:
        try:
            interrupt = call.wait() if call is not None else None
        finally:
            _busy.release()
    error = error or interrupt or (call.error if call is not None else None)
    if error is not None:
        raise error


def native_split(nargs: int, slots: int) -> bool:
    """Whether a kernel of ``nargs`` tensor arguments split on ``slots`` threads runs on the
    native pool (see :class:`SplitCall`)."""
    from . import native_pool

    return NATIVE and nargs <= native_pool.MAX_ARGS and 1 < slots <= native_pool.MAX_SLOTS


def prepare_native(kernels: list) -> None:
    """Load (or compile) the native pool and the trampolines ``kernels`` are called through
    (split calls and native plan runs), at build time: a cold build then stores them in
    the disk cache beside the kernels, so a warm process never starts LLVM's compiler
    for them (its first compile raises the process's peak memory by ~45 MB)."""
    if not NATIVE:
        return
    from . import native_pool

    for arity in sorted({k.arity for k in kernels if k.native and k.arity <= native_pool.MAX_ARGS}):
        native_pool.trampoline(arity)


class SplitCall:
    """One native kernel's split call, prepared once: ``call(base)`` runs chunk ``k`` as
    ``cfunc(*base, *fixed[slot], *ranges[k])`` on ``len(fixed)`` thread slots, where
    ``fixed[slot]`` is that slot's (workspace, status word) addresses.

    It runs on the native pool (:mod:`.native_pool`: dispatch in native code, no GIL
    between chunks) where that exists and the kernel's arity has a trampoline
    (``fn`` is the kernel's address, ``nargs`` the length of ``base``), else on the Python
    pool; while another thread splits a call, serially (as :func:`run_chunks`).
    ``RELAY_NB_NATIVE_POOL=0`` turns the native pool off (to compare the two)."""

    __slots__ = ("cfunc", "ranges", "fixed", "native", "nargs", "argv", "words", "job", "job_address", "pool", "slots")

    def __init__(self, cfunc: Callable, fn: int, nargs: int, ranges: list[tuple[int, int]], fixed: list[tuple[int, int]]):
        import numpy as np

        from . import native_pool

        self.cfunc, self.ranges, self.fixed, self.nargs, self.slots = cfunc, ranges, fixed, nargs, len(fixed)
        self.native = native_split(nargs, len(fixed))
        if not self.native:
            return
        self.pool = native_pool.get()
        self.argv = np.zeros(max(nargs, 1), np.int64)
        # the chunks' (lo, hi) pairs, per slot its workspace, per slot its status, then
        # per chunk its claim word (see native_pool)
        words = [x for r in ranges for x in r] + [f[0] for f in fixed] + [f[1] for f in fixed]
        self.words = np.array(words + [0] * len(ranges), np.int64)
        w, n, s = self.words.ctypes.data, len(ranges), len(fixed)
        self.job = native_pool.job(
            native_pool.trampoline(nargs), fn, self.argv.ctypes.data, w, n, w + 16 * n, w + 16 * n + 8 * s, w + 16 * n + 16 * s, s
        )
        self.job_address = self.job.ctypes.data

    def __call__(self, base: list) -> None:
        if self.native and _busy.acquire(blocking=False):
            try:
                self.argv[: self.nargs] = base
                self.pool.call(self.job_address, self.slots)
            finally:
                _busy.release()
            return
        cfunc, fixed, ranges = self.cfunc, self.fixed, self.ranges

        def chunk(slot: int, k: int) -> None:
            cfunc(*base, *fixed[slot], *ranges[k])

        run_chunks(chunk, len(ranges), len(fixed))


def _task(chunk: Callable[[int, int], None], slot: int, call: _Call) -> Callable[[], None]:
    def task() -> None:
        if not call.enter(slot):
            return
        try:
            call.drain(chunk, slot)
        except BaseException as e:  # noqa: BLE001 - handed to the caller
            call.leave(slot, e)
        else:
            call.leave(slot, None)

    return task


def _native() -> bool:
    from .native_pool import available

    return available() and os.environ.get("RELAY_NB_NATIVE_POOL", "1").strip() != "0"


NATIVE = _native()
"""Split calls run on the native pool (:mod:`.native_pool`), whose dispatch is cheap."""

SPLIT_MIN_NS = float(os.environ.get("RELAY_NB_SPLIT_MIN_NS", 20_000 if NATIVE else 100_000))
"""A kernel call is split only if it is estimated to take this long on one core.  On this
project's 2-core test machine a split call on the Python pool (:func:`dispatch_seconds`,
median of 200 empty split calls) cost 16 us at load 3 and 7 us at load 6.7; a split saves
at most (1 - 1/threads) of the call, so at 0.1 ms it saves ~50 us for ~10 us of dispatch.
The native pool's split call costs ~2 us more than an unsplit one (a 2048-element tanh,
3.5 -> 5.7 us), so there calls from 20 us up are split."""

CHUNKS_PER_THREAD = 4
"""A split call is cut into this many chunks per thread (threads take the next free
one): on a loaded machine a preempted thread then delays one small chunk, not half the
call, while the others take the rest."""

MIN_CHUNK_NS = 5_000.0 if NATIVE else 25_000.0
"""No chunk smaller than this (estimated): on the Python pool taking a chunk costs a
ctypes call (~2 us), on the native pool an atomic exchange and a call through the
trampoline."""

CHUNK_OVERHEAD = 0.05
"""Beyond one chunk per thread, cut no more chunks than keep the work each chunk repeats
(a GEMM chunk packs its own copy of the shared operand) within this share of the call."""


def chunk_count(units: int, unit_ns: float, threads: int, chunk_ns: float = 0.0) -> int:
    """Into how many chunks to split a call of ``units`` parallel units of ``unit_ns``
    each, a chunk repeating ``chunk_ns`` of work: 1 (run it whole) for small calls, else
    one per thread, or a few per thread when that repeats little."""
    total = units * unit_ns
    if threads <= 1 or units < 2 or total < SPLIT_MIN_NS:
        return 1
    count = min(units, threads * CHUNKS_PER_THREAD, int(total // MIN_CHUNK_NS))
    if chunk_ns > 0:
        count = min(count, int(total * CHUNK_OVERHEAD // chunk_ns))
    if count > threads:
        count -= count % threads  # every thread as many of its own chunks (see native_pool)
    return max(count, min(threads, units))


def split(units: int, count: int) -> list[tuple[int, int]]:
    """``range(units)`` cut into ``count`` contiguous, near-equal ``(lo, hi)`` chunks."""
    return [(units * k // count, units * (k + 1) // count) for k in range(count)]


def dispatch_seconds(threads: int = 2, repeat: int = 200) -> float:
    """The median time of one split call of empty chunks on the Python pool (its fixed
    cost; a split call on the native pool costs ~2 us more than a whole one, see
    SPLIT_MIN_NS)."""
    import time

    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run_chunks(lambda slot, k: None, threads, threads)
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


def _after_fork() -> None:
    """A forked child has none of the parent's threads: it starts its own workers."""
    global _workers_lock, _busy
    _workers.clear()
    _workers_lock, _busy = threading.Lock(), threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)


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
    "split", "SplitCall", "using_threads", "worker_count",
]
