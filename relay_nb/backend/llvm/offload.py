"""A build's kernels compiled on two cores: a second process runs LLVM beside this one.

llvmlite holds one process-wide lock around every call into LLVM, so threads cannot
compile at once, and LLVM is most of a cold build (ResNet-50: ~2.4 of ~3 s).
``relay.build`` lowers kernel after kernel in Python; inside :func:`parallel_compiles` a
compile process (:mod:`.compile_worker`) takes modules while it has fewer than ``QUEUE``
waiting (:func:`submit`), and this process compiles the rest itself, to machine code too,
so neither waits for the other (nor a kernel for a runtime routine it calls).  The build
then loads every module's code in order through the engine's object cache
(:meth:`.jit.CompiledModule.finish`): the same bytes MCJIT would have made.

The process starts at a build's first compile (a warm build, all from the disk cache,
never starts it), only for builds of at least ``MIN_FUNCTIONS`` primitive functions and
when two or more cores are ours, and ends with the build.  If it cannot start, dies, or
sends code that does not load, this process compiles those modules: a build never fails
because of it.  ``RELAY_NB_COMPILE_PROCESS=0`` turns it off.
"""

from __future__ import annotations

import contextlib
import os
import queue
import subprocess
import sys
import threading
import time
from typing import Iterator, Optional

from .compile_worker import REPLY, REQUEST

MIN_FUNCTIONS = 16
"""Smaller builds compile here: starting the process (~0.15 s of the other core) and the
round trip cost more than the few modules it would take."""

QUEUE = 2
"""Modules the compile process may have waiting: one compiling and one next, so it never
idles while this process lowers; more would leave this process idle at the end."""

TIMEOUT_S = 120.0
"""A module not back after this long is compiled here (one takes ~50 ms)."""


def command() -> list[str]:
    """How the compile process is started."""
    return [sys.executable, "-m", "relay_nb.backend.llvm.compile_worker"]


class Job:
    """One module handed to the compile process; ``result()`` waits for its code."""

    __slots__ = ("done", "code", "seconds", "error", "module", "remote", "owner")

    def __init__(self, owner: Optional["_Process"] = None) -> None:
        self.owner = owner  # the compile process doing it (None: compiled in this process)
        self.remote = owner is not None
        self.done = threading.Event()
        self.code = b""
        self.seconds = 0.0
        self.error = ""
        self.module = None  # the pending CompiledModule (set by jit.compile_ir)

    def result(self) -> tuple[bytes, float]:
        if not self.done.wait(TIMEOUT_S):
            self.owner.proc.kill()  # hung: its other jobs fail now instead of each timing out
            raise RuntimeError("the compile process did not answer")
        if self.error:
            raise RuntimeError(self.error)
        return self.code, self.seconds

    def fail(self, error: str) -> None:
        self.error = error
        self.done.set()


class _Process:
    """The compile process, with a thread writing requests and one reading replies (a
    large module must not block the build on a full pipe)."""

    def __init__(self) -> None:
        import relay_nb

        env = dict(os.environ)
        # the process imports the same relay_nb as this one, wherever that came from
        root = os.path.dirname(os.path.dirname(os.path.abspath(relay_nb.__file__)))
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
        self.proc = subprocess.Popen(
            command(),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env,
        )
        self.jobs: dict[int, Job] = {}
        self.lock = threading.Lock()
        self.outbox: queue.SimpleQueue = queue.SimpleQueue()
        self.count = 0
        self.threads = [threading.Thread(target=f, daemon=True, name=f"relay_nb compile {f.__name__}") for f in (self._write, self._read)]
        for t in self.threads:
            t.start()

    def waiting(self) -> int:
        with self.lock:
            return len(self.jobs)

    def submit(self, ir_text: str, name: str, speed_level: int) -> Job:
        job = Job(self)
        with self.lock:
            self.count += 1
            self.jobs[self.count] = job
            payload = name.encode() + b"\0" + ir_text.encode()
            self.outbox.put(REQUEST.pack(self.count, speed_level, len(payload)) + payload)
        return job

    def close(self) -> None:
        """End the process (it exits when its input ends) and fail what it still owes."""
        self.outbox.put(None)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for t in self.threads:
            t.join(timeout=10)
        self._fail_all("the compile process ended")

    def _fail_all(self, error: str) -> None:
        with self.lock:
            jobs, self.jobs = list(self.jobs.values()), {}
        for job in jobs:
            job.fail(error)

    def _write(self) -> None:
        try:
            while (frame := self.outbox.get()) is not None:
                self.proc.stdin.write(frame)
                self.proc.stdin.flush()
        except (OSError, ValueError):  # the process died: its jobs fail, _read says so
            pass
        finally:
            with contextlib.suppress(OSError, ValueError):
                self.proc.stdin.close()

    def _read(self) -> None:
        out = self.proc.stdout
        try:
            while len(head := out.read(REPLY.size)) == REPLY.size:
                number, ok, seconds, size = REPLY.unpack(head)
                body = out.read(size)
                with self.lock:
                    job = self.jobs.pop(number, None)
                if job is None or len(body) < size:
                    break
                if ok and object_file(body):
                    job.code, job.seconds = body, seconds
                    job.done.set()
                else:
                    job.fail(body.decode(errors="replace") if not ok else "the compile process sent no object file")
        except (OSError, ValueError):
            pass
        self._fail_all("the compile process ended")


def object_file(code: bytes) -> bool:
    """Whether ``code`` starts as a relocatable object file does (ELF ``ET_REL``, Mach-O
    ``MH_OBJECT``, or x86-64/arm64 COFF): MCJIT aborts the process on bytes that are not one,
    so nothing else is handed to it."""
    if code[:4] == b"\x7fELF":
        return code[16:18] in (b"\x01\x00", b"\x00\x01")
    if code[:4] in (b"\xcf\xfa\xed\xfe", b"\xce\xfa\xed\xfe"):
        return code[12:16] == b"\x01\x00\x00\x00"
    return code[:2] in (b"\x64\x86", b"\x64\xaa")


class _Batch:
    """The pending modules of one build, and its compile process (started on demand)."""

    def __init__(self) -> None:
        self.process: Optional[_Process] = None
        self.broken = False
        self.jobs: list[Job] = []

    def submit(self, ir_text: str, name: str, speed_level: int) -> Job:
        """The module to the compile process if it is idle enough, else compiled here now;
        either way loaded at :meth:`finish` (after the routines it calls)."""
        if self.process is None and not self.broken:
            try:
                self.process = _Process()
            except Exception:  # no interpreter to start (embedded Python), no fork: compile here
                self.broken = True
        if self.process is not None and self.process.proc.poll() is not None:
            self.broken = True
        if not self.broken and self.process.waiting() < QUEUE:
            job = self.process.submit(ir_text, name, speed_level)
        else:
            from .jit import compile_object

            job = Job()
            start = time.perf_counter()
            try:
                job.code = compile_object(ir_text, name, speed_level)
            except Exception as exc:  # LLVM rejects it: finish() tries again and says why
                job.error = f"{type(exc).__name__}: {exc}"
            job.seconds = time.perf_counter() - start
            job.done.set()
        self.jobs.append(job)
        return job

    def finish(self) -> None:
        """Load every pending module (each compiled here if its code did not come), then end
        the process."""
        try:
            for job in self.jobs:
                if job.module is not None:
                    job.module.finish()
        finally:
            if self.process is not None:
                self.process.close()


_local = threading.local()


def enabled() -> bool:
    """Whether builds may use a compile process (``RELAY_NB_COMPILE_PROCESS=0``: no)."""
    return os.environ.get("RELAY_NB_COMPILE_PROCESS", "1").strip().lower() not in ("0", "false", "no", "off")


@contextlib.contextmanager
def parallel_compiles(functions: int) -> Iterator[None]:
    """Within: :func:`submit` may hand this thread's compiles to a compile process; on
    leaving, every module handed over is in the engine.  ``functions``: how many
    primitive functions the build has (few: no process)."""
    from .pool import available_cores

    if functions < MIN_FUNCTIONS or available_cores() < 2 or not enabled():
        yield
        return
    outer = getattr(_local, "batch", None)
    batch = _local.batch = _Batch()
    try:
        yield
    finally:
        _local.batch = outer
        batch.finish()


def submit(ir_text: str, name: str, speed_level: int) -> Optional[Job]:
    """Module ``name``'s machine code to come, from the compile process or compiled here,
    for loading when the build ends; None when no build runs on this thread."""
    batch = getattr(_local, "batch", None)
    return batch.submit(ir_text, name, speed_level) if batch is not None else None


__all__ = ["MIN_FUNCTIONS", "QUEUE", "enabled", "parallel_compiles", "submit"]
