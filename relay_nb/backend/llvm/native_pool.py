"""Split kernel calls dispatched in native code: workers that wait without the GIL.

The Python pool (:mod:`.pool`) hands a chunk to a worker through a queue and a condition
variable, and each chunk is a ctypes call made with the GIL held: on a 1 x 512 . 2048 x 512
GEMV cut into two 78 us halves it measured 16 us from the call to the first chunk, the
worker starting 20-45 us after the caller (thread wake-up plus the GIL) and 22 us from the
last chunk to the return, so two threads were no faster than one.  Here the whole split
call is one ctypes call (:meth:`_Pool.call`, or a step of a native plan run, see
:mod:`.plan_runner`; the GIL is released for it): it posts the job's descriptor in a
shared block of memory, runs chunks itself, and waits for the workers that joined by
spinning on their state words.  The workers are Python daemon threads that live inside
one native call (``relay_nb_pool_worker``): they spin on the job counter for about a
millisecond after each job (``SPIN_CYCLES``), so the steps of a model find them awake,
then sleep in the kernel (a futex) so an idle notebook costs no CPU.

A kernel takes its tensor addresses, a workspace, a status word and its ``[lo, hi)``
range; a chunk is called through a trampoline of the kernel's arity
(``relay_nb_pool_call_N``), which loads the tensor addresses from an array.

The protocol (all shared words are 64-bit, accessed with sequentially consistent atomics):
the caller writes the job, sets each helping slot's state to ``4 g`` (queued for job
``g``), then publishes ``g``; a worker that sees ``g`` joins by moving its state from
``4 g`` to ``4 g + 1`` (running) and leaves with ``4 g + 2``.  A thread runs chunk ``k``
if its exchange of the chunk's claim word with ``g`` returned another value.  Slot ``s``
first claims its own run of chunks ``[s * per, (s + 1) * per)`` (``per = count // slots``)
— the same parts of the operands every call, so a memory-bound kernel can find its part of
a weight still in that core's cache, and neighbouring chunks on one core, so two threads
share the cache lines at one chunk boundary, not at every one — then any chunk still
unclaimed.
When the caller has no chunk left it closes each slot: queued -> left (the worker came
too late and will not touch the job), or it waits for running -> left.  So no worker
reads a job after the call returns, and a preempted worker delays nobody: the others
take its chunks.

Linux on x86-64 only (``pause``, ``futex`` through ``syscall``); elsewhere
:func:`available` is False and the Python pool runs split calls.
"""

from __future__ import annotations

import atexit
import ctypes
import os
import platform
import sys
import threading
import time
from typing import Optional

import numpy as np

MAX_ARGS = 1024
"""Tensor arguments (inputs, constants, outputs) a trampoline is made for (one module per
arity, when first needed: an LSTM's sequence split has 65); a kernel with more is split
by the Python pool and its plan runs from Python."""

MAX_SLOTS = 64
"""Threads one split call can use (the caller and ``MAX_SLOTS - 1`` workers)."""

SPIN_CYCLES = 3_000_000
"""How long a worker spins for the next job before it sleeps: ~1 ms of time-stamp counter
at 2-3 GHz.  The gaps between a model's split steps (its single-threaded kernels) are
mostly shorter, so the workers stay awake through a run; an idle
notebook's workers sleep after a millisecond."""

# word offsets in the shared block (64-byte lines apart where different threads write)
_GEN, _JOB, _SLEEPERS, _STOP, _STATE = 0, 8, 24, 25, 32
_JOB_FIELDS = ("tramp", "fn", "argv", "ranges", "count", "ws", "status", "claims", "slots")
_WORDS = _STATE + 8 * MAX_SLOTS
_SYS_FUTEX = 202  # x86-64
_FUTEX_WAIT_PRIVATE, _FUTEX_WAKE_PRIVATE = 128, 129


def _word(pool: str, index: int | str, into: str) -> str:
    """IR: ``%into`` = the address of word ``index`` (an int or an i64 value) of ``%pool``."""
    return f"  %{into} = getelementptr i64, ptr %{pool}, i64 {index}\n"


def _trampoline(n: int) -> str:
    loads = "".join(
        f"  %p{i} = getelementptr i64, ptr %argv, i64 {i}\n  %a{i} = load i64, ptr %p{i}, align 8\n" for i in range(n)
    )
    call_args = ", ".join([f"i64 %a{i}" for i in range(n)] + ["i64 %ws", "i64 %st", "i64 %lo", "i64 %hi"])
    return (
        f"define void @relay_nb_pool_call_{n}(i64 %fn, i64 %argv_i, i64 %ws, i64 %st, i64 %lo, i64 %hi) {{\n"
        f"entry:\n  %argv = inttoptr i64 %argv_i to ptr\n  %f = inttoptr i64 %fn to ptr\n{loads}"
        f"  call void %f({call_args})\n  ret void\n}}\n"
    )


def _job_loads(job: str) -> str:
    """IR: load every field of the job descriptor at ``%job``."""
    return "".join(
        _word(job, i, f"{field}_p") + f"  %{field} = load i64, ptr %{field}_p, align 8\n" for i, field in enumerate(_JOB_FIELDS)
    )


def _ir() -> str:
    """The pool's LLVM IR: ``drain`` (take chunks until none is left), the worker loop,
    the caller's ``run``, ``stop``, and the trampolines."""
    state = f"{_STATE}"
    # chunk k: claimed by the slot whose exchange of claims[k] with g returns another value
    claim = (
        "  %{p} = getelementptr i64, ptr %cl, i64 %{k}\n"
        "  %{p}_old = atomicrmw xchg ptr %{p}, i64 %g seq_cst, align 8\n"
        "  %{p}_mine = icmp ne i64 %{p}_old, %g\n"
    )
    chunk = (
        "  %{k}2 = shl i64 %{k}, 1\n  %{k}lop = getelementptr i64, ptr %rg, i64 %{k}2\n"
        "  %{k}lo = load i64, ptr %{k}lop, align 8\n  %{k}hip = getelementptr i64, ptr %{k}lop, i64 1\n"
        "  %{k}hi = load i64, ptr %{k}hip, align 8\n"
        "  call void %tr(i64 %fn, i64 %argv, i64 %wsv, i64 %stv, i64 %{k}lo, i64 %{k}hi)\n"
    )
    drain = (
        "define internal void @drain(ptr %pool, i64 %slot, i64 %g) {\nentry:\n" + _word("pool", _JOB, "jobp") +
        "  %job_i = load i64, ptr %jobp, align 8\n  %job = inttoptr i64 %job_i to ptr\n" + _job_loads("job") +
        "  %ws_a = inttoptr i64 %ws to ptr\n  %wsp = getelementptr i64, ptr %ws_a, i64 %slot\n"
        "  %wsv = load i64, ptr %wsp, align 8\n"
        "  %st_a = inttoptr i64 %status to ptr\n  %stp = getelementptr i64, ptr %st_a, i64 %slot\n"
        "  %stv = load i64, ptr %stp, align 8\n"
        "  %rg = inttoptr i64 %ranges to ptr\n  %tr = inttoptr i64 %tramp to ptr\n  %cl = inttoptr i64 %claims to ptr\n"
        "  %per = udiv i64 %count, %slots\n  %k0 = mul i64 %slot, %per\n  %kend = add i64 %k0, %per\n"
        "  %last = sub i64 %count, 1\n  br label %own\n"
        # first the slot's own run of chunks [slot * per, (slot + 1) * per): the same part
        # of the operands every call, so a core finds its part of a weight in its own
        # cache, and neighbouring chunks on one core (two threads writing the two sides
        # of a chunk boundary share the cache lines there: false sharing)
        "own:\n  %k = phi i64 [ %k0, %entry ], [ %k1, %own_next ]\n  %in = icmp slt i64 %k, %kend\n"
        "  br i1 %in, label %own_claim, label %steal\n"
        "own_claim:\n" + claim.format(p="c", k="k") + "  br i1 %c_mine, label %own_run, label %own_next\n"
        "own_run:\n" + chunk.format(k="k") + "  br label %own_next\n"
        "own_next:\n  %k1 = add i64 %k, 1\n  br label %own\n"
        # then any chunk nobody took yet (a preempted thread's), from the last: the ones
        # their owner reaches last
        "steal:\n  %j = phi i64 [ %last, %own ], [ %j1, %steal_next ]\n  %jin = icmp sge i64 %j, 0\n"
        "  br i1 %jin, label %steal_claim, label %exit\n"
        "steal_claim:\n" + claim.format(p="d", k="j") + "  br i1 %d_mine, label %steal_run, label %steal_next\n"
        "steal_run:\n" + chunk.format(k="j") + "  br label %steal_next\n"
        "steal_next:\n  %j1 = sub i64 %j, 1\n  br label %steal\n"
        "exit:\n  ret void\n}\n"
    )
    worker = (
        "define void @relay_nb_pool_worker(i64 %pool_i, i64 %slot, i64 %seen0) {\nentry:\n"
        "  %pool = inttoptr i64 %pool_i to ptr\n"
        + _word("pool", _GEN, "genp") + _word("pool", _STOP, "stopp") + _word("pool", _SLEEPERS, "sleepp") +
        f"  %si = shl i64 %slot, 3\n  %so = add i64 %si, {state}\n" + _word("pool", "%so", "statep") +
        "  %t0 = call i64 @llvm.readcyclecounter()\n  br label %wait\n"
        "wait:\n"
        "  %seen = phi i64 [ %seen0, %entry ], [ %g, %next ], [ %seen, %spin ], [ %seen, %woke ]\n"
        "  %since = phi i64 [ %t0, %entry ], [ %tn, %next ], [ %since, %spin ], [ %tw, %woke ]\n"
        "  %g = load atomic i64, ptr %genp seq_cst, align 8\n"
        "  %stop = load atomic i64, ptr %stopp seq_cst, align 8\n"
        "  %stopping = icmp ne i64 %stop, 0\n  br i1 %stopping, label %exit, label %check\n"
        "check:\n  %changed = icmp ne i64 %g, %seen\n  br i1 %changed, label %job, label %idle\n"
        "idle:\n  %now = call i64 @llvm.readcyclecounter()\n  %spent = sub i64 %now, %since\n"
        f"  %long = icmp ugt i64 %spent, {SPIN_CYCLES}\n  br i1 %long, label %sleep, label %spin\n"
        "spin:\n  call void @llvm.x86.sse2.pause()\n  br label %wait\n"
        "sleep:\n  %s1 = atomicrmw add ptr %sleepp, i64 1 seq_cst, align 8\n"
        "  %g2 = load atomic i64, ptr %genp seq_cst, align 8\n"
        "  %stop2 = load atomic i64, ptr %stopp seq_cst, align 8\n"
        "  %same = icmp eq i64 %g2, %seen\n  %calm = icmp eq i64 %stop2, 0\n  %both = and i1 %same, %calm\n"
        "  br i1 %both, label %futex, label %woke\n"
        # the kernel sleeps only while the job counter's low half still reads `seen`
        f"futex:\n  %want = trunc i64 %seen to i32\n"
        f"  %r = call i64 (i64, ...) @syscall(i64 {_SYS_FUTEX}, ptr %genp, i32 {_FUTEX_WAIT_PRIVATE}, i32 %want, ptr null)\n"
        "  br label %woke\n"
        "woke:\n  %s2 = atomicrmw sub ptr %sleepp, i64 1 seq_cst, align 8\n"
        "  %tw = call i64 @llvm.readcyclecounter()\n  br label %wait\n"
        "job:\n  %tag = shl i64 %g, 2\n  %running = or i64 %tag, 1\n"
        "  %x = cmpxchg ptr %statep, i64 %tag, i64 %running seq_cst seq_cst, align 8\n"
        "  %ok = extractvalue { i64, i1 } %x, 1\n  br i1 %ok, label %work, label %next\n"
        "work:\n  call void @drain(ptr %pool, i64 %slot, i64 %g)\n  %left = or i64 %tag, 2\n"
        "  store atomic i64 %left, ptr %statep seq_cst, align 8\n  br label %next\n"
        "next:\n  %tn = call i64 @llvm.readcyclecounter()\n  br label %wait\n"
        "exit:\n  ret void\n}\n"
    )
    run = (
        "define void @relay_nb_pool_run(i64 %pool_i, i64 %job_i) {\nentry:\n  %pool = inttoptr i64 %pool_i to ptr\n"
        "  %job = inttoptr i64 %job_i to ptr\n" + _word("job", _JOB_FIELDS.index("slots"), "slotsp") +
        "  %slots = load i64, ptr %slotsp, align 8\n" + _word("pool", _JOB, "jobp")
        + _word("pool", _GEN, "genp") + _word("pool", _SLEEPERS, "sleepp") +
        "  %g0 = load atomic i64, ptr %genp seq_cst, align 8\n  %g = add i64 %g0, 1\n  %tag = shl i64 %g, 2\n"
        + "  store i64 %job_i, ptr %jobp, align 8\n  br label %post\n"
        # every helping slot: queued for job g
        "post:\n  %i = phi i64 [ 1, %entry ], [ %i1, %post_body ]\n  %more = icmp slt i64 %i, %slots\n"
        "  br i1 %more, label %post_body, label %publish\n"
        f"post_body:\n  %io = shl i64 %i, 3\n  %io2 = add i64 %io, {state}\n"
        + _word("pool", "%io2", "sp") +
        "  store atomic i64 %tag, ptr %sp seq_cst, align 8\n  %i1 = add i64 %i, 1\n  br label %post\n"
        "publish:\n  store atomic i64 %g, ptr %genp seq_cst, align 8\n"
        "  %sl = load atomic i64, ptr %sleepp seq_cst, align 8\n  %asleep = icmp sgt i64 %sl, 0\n"
        "  br i1 %asleep, label %wake, label %own\n"
        f"wake:\n  %r = call i64 (i64, ...) @syscall(i64 {_SYS_FUTEX}, ptr %genp, i32 {_FUTEX_WAKE_PRIVATE}, i32 2147483647)\n"
        "  br label %own\n"
        "own:\n  call void @drain(ptr %pool, i64 0, i64 %g)\n  %left = or i64 %tag, 2\n  br label %close\n"
        # every helping slot: queued -> left (too late to join), or wait until it left
        "close:\n  %j = phi i64 [ 1, %own ], [ %j1, %closed ]\n  %cmore = icmp slt i64 %j, %slots\n"
        "  br i1 %cmore, label %close_body, label %exit\n"
        f"close_body:\n  %jo = shl i64 %j, 3\n  %jo2 = add i64 %jo, {state}\n" + _word("pool", "%jo2", "cp") +
        "  %cx = cmpxchg ptr %cp, i64 %tag, i64 %left seq_cst seq_cst, align 8\n"
        "  %cok = extractvalue { i64, i1 } %cx, 1\n  br i1 %cok, label %closed, label %await\n"
        "await:\n  %v = load atomic i64, ptr %cp seq_cst, align 8\n  %gone = icmp eq i64 %v, %left\n"
        "  br i1 %gone, label %closed, label %pause\n"
        "pause:\n  call void @llvm.x86.sse2.pause()\n  br label %await\n"
        "closed:\n  %j1 = add i64 %j, 1\n  br label %close\n"
        "exit:\n  ret void\n}\n"
    )
    stop = (
        "define void @relay_nb_pool_stop(i64 %pool_i) {\nentry:\n  %pool = inttoptr i64 %pool_i to ptr\n"
        + _word("pool", _GEN, "genp") + _word("pool", _STOP, "stopp") +
        "  store atomic i64 1, ptr %stopp seq_cst, align 8\n"
        f"  %r = call i64 (i64, ...) @syscall(i64 {_SYS_FUTEX}, ptr %genp, i32 {_FUTEX_WAKE_PRIVATE}, i32 2147483647)\n"
        "  ret void\n}\n"
    )
    # a plan's steps in one call: descriptor i is words 6i.. of %steps
    steps = (
        "define i64 @relay_nb_plan_run(i64 %pool_i, i64 %steps_i, i64 %n, i64 %cycles_i, i64 %serial) {\nentry:\n"
        "  %steps = inttoptr i64 %steps_i to ptr\n  %cycles = inttoptr i64 %cycles_i to ptr\n"
        "  %threaded = icmp eq i64 %serial, 0\n  br label %loop\n"
        "loop:\n  %i = phi i64 [ 0, %entry ], [ %i1, %next ]\n  %more = icmp slt i64 %i, %n\n"
        "  br i1 %more, label %body, label %done\n"
        "body:\n  %d0 = mul i64 %i, 6\n"
        + "".join(
            f"  %f{j}p = getelementptr i64, ptr %steps, i64 %d{j}\n  %f{j} = load i64, ptr %f{j}p, align 8\n"
            + (f"  %d{j + 1} = add i64 %d{j}, 1\n" if j < 5 else "")
            for j in range(6)
        ) +
        "  %t0 = call i64 @llvm.readcyclecounter()\n  %split = icmp ne i64 %f5, 0\n"
        "  %par = and i1 %split, %threaded\n  br i1 %par, label %parallel, label %whole\n"
        "parallel:\n  call void @relay_nb_pool_run(i64 %pool_i, i64 %f5)\n  br label %timed\n"
        f"whole:\n  %tr = inttoptr i64 %f0 to ptr\n"
        f"  call void %tr(i64 %f1, i64 %f2, i64 %f3, i64 %f4, i64 0, i64 {1 << 62})\n  br label %timed\n"
        "timed:\n  %t1 = call i64 @llvm.readcyclecounter()\n  %cp = getelementptr i64, ptr %cycles, i64 %i\n"
        "  %c = load i64, ptr %cp, align 8\n  %dt = sub i64 %t1, %t0\n  %c1 = add i64 %c, %dt\n"
        "  store i64 %c1, ptr %cp, align 8\n"
        "  %stp = inttoptr i64 %f4 to ptr\n  %st = load volatile i64, ptr %stp, align 8\n"
        "  %bad = icmp ne i64 %st, 0\n  br i1 %bad, label %failed, label %next\n"
        "next:\n  %i1 = add i64 %i, 1\n  br label %loop\n"
        "failed:\n  ret i64 %i\n"
        "done:\n  ret i64 -1\n}\n"
        "define i64 @relay_nb_pool_clock() {\nentry:\n  %t = call i64 @llvm.readcyclecounter()\n  ret i64 %t\n}\n"
    )
    head = (
        "declare i64 @syscall(i64, ...)\ndeclare i64 @llvm.readcyclecounter()\ndeclare void @llvm.x86.sse2.pause()\n"
    )
    return head + drain + worker + run + stop + steps


_SYMBOLS = ["relay_nb_pool_worker", "relay_nb_pool_run", "relay_nb_pool_stop", "relay_nb_plan_run", "relay_nb_pool_clock"]


def available() -> bool:
    """Whether split calls can run on the native pool here (Linux on x86-64)."""
    return sys.platform.startswith("linux") and platform.machine() in ("x86_64", "AMD64")


class _Pool:
    """The shared block, the compiled entry points and the worker threads of one process."""

    def __init__(self) -> None:
        from .disk_cache import compile_cached
        from .jit import target_data_layout

        triple, layout = target_data_layout()
        self._head = f'target triple = "{triple}"\ntarget datalayout = "{layout}"\n'
        compiled = compile_cached(
            f"runtime native pool v4 spin{SPIN_CYCLES}", lambda: self._head + _ir(), _SYMBOLS, "relay_nb_runtime_pool"
        )
        self.modules = [compiled]  # the engine keeps a module while something refers to it
        word = ctypes.c_int64
        self.run = ctypes.CFUNCTYPE(None, word, word)(compiled.address("relay_nb_pool_run"))
        self.worker = ctypes.CFUNCTYPE(None, word, word, word)(compiled.address("relay_nb_pool_worker"))
        self.stop = ctypes.CFUNCTYPE(None, word)(compiled.address("relay_nb_pool_stop"))
        self.run_steps = ctypes.CFUNCTYPE(word, word, word, word, word, word)(compiled.address("relay_nb_plan_run"))
        self.clock = ctypes.CFUNCTYPE(word)(compiled.address("relay_nb_pool_clock"))
        self._clock0 = (self.clock(), time.perf_counter())
        self._period = 0.0
        self.trampolines: dict[int, int] = {}
        self.reset()

    def trampoline(self, nargs: int) -> int:
        """The address of the trampoline for kernels of ``nargs`` tensor arguments: each
        arity in a module of its own, compiled (or loaded from the disk cache) when a
        kernel of that arity is first split (all 65 in one module took 0.23 s and 47 MB
        of compiler memory at its peak)."""
        address = self.trampolines.get(nargs)
        if address is None:
            from .disk_cache import compile_cached

            name = f"relay_nb_pool_call_{nargs}"
            compiled = compile_cached(
                f"runtime native pool call {nargs}", lambda: self._head + _trampoline(nargs), [name], f"relay_nb_runtime_{name}"
            )
            self.modules.append(compiled)
            address = self.trampolines[nargs] = compiled.address(name)
        return address

    def ready(self, slots: int) -> None:
        """Workers for a split call on ``slots`` threads (started if missing)."""
        if len(self.threads) < slots - 1:
            with _lock:
                self.ensure(slots - 1)

    def call(self, job: int, slots: int) -> None:
        """Run the split call whose descriptor (:func:`job`) is at address ``job`` on
        ``slots`` threads; the caller makes sure only one runs at a time
        (:class:`.pool.SplitCall`)."""
        if len(self.threads) < slots - 1:
            with _lock:
                self.ensure(slots - 1)
        self.run(self.address, job)

    def seconds_per_cycle(self) -> float:
        """The time-stamp counter's period, measured once against ``perf_counter`` (from
        the pool's creation, or over 30 ms if the pool is younger than 0.2 s) and then
        kept: a kernel's run time is its cycles times this one constant, so the time of
        a run is the difference of two readings (a period measured afresh per reading
        put its error times all earlier cycles into that difference)."""
        if not self._period:
            c0, t0 = self._clock0
            if time.perf_counter() - t0 < 0.2:
                c0, t0 = self.clock(), time.perf_counter()
                time.sleep(0.03)
            self._period = (time.perf_counter() - t0) / max(self.clock() - c0, 1)
        return self._period

    def reset(self) -> None:
        """A fresh shared block and no workers; job numbers go on from the old block's
        (chunk claims made before hold them)."""
        last = int(self.words[_GEN]) if hasattr(self, "words") else 0
        self.block = np.zeros(_WORDS + 8, np.int64)  # + 8: align the block to a 64-byte line
        base = self.block.ctypes.data
        self.address = base + (-base % 64)
        self.words = self.block[(self.address - base) // 8 :][:_WORDS]
        self.words[_GEN] = last
        self.threads: list[threading.Thread] = []

    def ensure(self, workers: int) -> None:
        """At least ``workers`` worker threads (slots 1..workers) waiting for jobs."""
        while len(self.threads) < workers:
            slot = len(self.threads) + 1
            seen = int(self.words[_GEN])  # a job posted from now on is new to the worker
            t = threading.Thread(
                target=self.worker, args=(self.address, slot, seen), name=f"relay_nb-worker-{slot}", daemon=True
            )
            t.start()
            self.threads.append(t)

    def shutdown(self) -> None:
        self.stop(self.address)
        for t in self.threads:
            t.join(timeout=5.0)
        self.threads.clear()


_pool: Optional[_Pool] = None
_lock = threading.Lock()


def trampoline(nargs: int) -> int:
    """The address of the trampoline for ``nargs`` tensor arguments (see :meth:`_Pool.trampoline`)."""
    pool = _get(0)
    with _lock:
        return pool.trampoline(nargs)


def get() -> _Pool:
    """The process's pool (built, with its code loaded or compiled, on first use)."""
    return _get(0)


def _get(workers: int) -> _Pool:
    global _pool
    with _lock:
        if _pool is None:
            _pool = _Pool()
        _pool.ensure(workers)
        return _pool


def job(tramp: int, fn: int, argv: int, ranges: int, count: int, ws: int, status: int, claims: int, slots: int) -> np.ndarray:
    """The descriptor of a split call (:meth:`_Pool.call` runs it): kernel ``fn`` through
    trampoline ``tramp`` (:func:`trampoline`: it loads the kernel's tensor addresses from
    the int64 array at ``argv``) on ``count`` chunks (``[lo, hi)`` pairs at ``ranges``)
    with ``slots`` threads; slot ``s`` passes workspace ``ws[s]`` and status word address
    ``status[s]``.  ``claims`` are ``count`` words the chunks are claimed in, kept between
    calls (they hold job numbers, which only grow).  Every address must stay valid while
    the descriptor is used."""
    return np.array([tramp, fn, argv, ranges, count, ws, status, claims, slots], np.int64)


def worker_count() -> int:
    return len(_pool.threads) if _pool is not None else 0


def _after_fork() -> None:
    """A forked child has none of the parent's threads: it makes its own block and workers
    (the engine and the pool's code are inherited)."""
    global _lock
    _lock = threading.Lock()
    if _pool is not None:
        _pool.reset()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)


@atexit.register
def _shutdown() -> None:
    """Stop the workers before the interpreter finalizes: each returns from its native
    loop (no job runs then: a split call returns only when its workers left)."""
    if _pool is not None:
        _pool.shutdown()
