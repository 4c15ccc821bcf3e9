"""A plan's steps run in one native call, as TVM's graph executor runs its op list.

Run from Python, every step of a :class:`~.plan.Plan` costs a ctypes call with a dozen
arguments plus the loop around it: 2.5-4 us, which on an LSTM's 500 small steps per call
was a tenth of the model's time.  Here each step is a row of six words prepared once —
trampoline, kernel, argument array, workspace, status word, split job (or 0) — and
``relay_nb_plan_run`` (:mod:`.native_pool`) walks the rows: a split step runs on the native
pool, any other through its trampoline on the whole range.  Per call Python only
allocates the fresh result arrays, writes the addresses that change (parameters, fresh
results) into the argument arrays, and checks status words: a step that reports an error
stops the run, and its error is raised.  The GIL is released for the whole run.

Each step's time is counted in time-stamp counter cycles (:class:`StepClock`), so a
kernel's ``run_seconds`` and ``calls`` stay what a Python run would report.
"""

from __future__ import annotations

import weakref
from typing import Optional

import numpy as np

from ...errors import EvalError
from .kernel import _NO_STATUS, _address, clock_seconds
from .pool import NATIVE, _busy


class StepClock:
    """Cycles spent per step over all runs, and how many runs: what the kernels' run
    time and call count include (weakly: when the runner goes, its totals are folded
    into the kernels)."""

    def __init__(self, kernels: list) -> None:
        self.cycles = np.zeros(len(kernels), np.int64)
        self.runs = np.zeros(1, np.int64)
        me = weakref.ref(self)
        for i, k in enumerate(kernels):
            k._clocks.append((me, i))
        weakref.finalize(self, _fold, kernels, self.cycles, self.runs)


def _fold(kernels: list, cycles: np.ndarray, runs: np.ndarray) -> None:
    for i, k in enumerate(kernels):
        k._clocks = [(ref, j) for ref, j in k._clocks if ref() is not None]
        if cycles[i]:
            k._seconds += clock_seconds(int(cycles[i]))
        k._calls += int(runs[0])


class NativeSteps:
    """The rows of a prepared plan's steps (see the module docstring)."""

    @classmethod
    def make(cls, plan, addresses: list) -> Optional["NativeSteps"]:
        """The runner of ``plan`` (after its ``_prepare``), or None when a step cannot run
        natively (a numpy fallback, more arguments than a trampoline takes, no native pool)."""
        from .native_pool import MAX_ARGS

        if not NATIVE or not plan.steps:
            return None
        for step in plan.steps:
            if not step.kernel.native or len(step.own) > MAX_ARGS or (step.split is not None and not step.split.native):
                return None
        return cls(plan, addresses)

    def __init__(self, plan, addresses: list) -> None:
        from .native_pool import get, trampoline

        self.pool = get()
        variable = {s for leaves in plan.params for s in leaves}
        variable |= {f[0] for step in plan.steps for f in step.fresh}
        rows: list[int] = []
        self.patches: list[tuple[np.ndarray, int, int]] = []  # (argument array, position, slot)
        self.arrays: list[np.ndarray] = []  # the argument arrays (kept alive: rows hold addresses)
        self.statuses: list[np.ndarray] = []
        self.split_statuses: list[tuple] = []  # (kernel, status arrays of its thread slots)
        self.slots = 1
        for step in plan.steps:
            k, own = step.kernel, step.own
            argv = step.split.argv if step.split is not None else np.zeros(max(len(own), 1), np.int64)
            argv[: len(own)] = [0 if s in variable else addresses[s] for s in own]
            self.patches += [(argv, j, s) for j, s in enumerate(own) if s in variable]
            self.arrays.append(argv)
            ws = step.workspace[1] if step.workspace else 0
            status = step.status if step.status is not None else _NO_STATUS
            if step.status is not None:
                self.statuses.append(step.status)
            job = 0
            if step.split is not None:
                job = step.split.job_address
                self.slots = max(self.slots, step.split.slots)
                extra = [st for _, st in step.slots[1:] if st is not None]
                self.statuses += extra
                if extra:
                    self.split_statuses.append((k, extra))
            rows += [trampoline(len(own)), k._fn, argv.ctypes.data, ws, _address(status), job]
        self.steps = plan.steps
        self.rows = np.array(rows, np.int64)
        self.fresh = [step for step in plan.steps if step.fresh]
        self.clock = StepClock([step.kernel for step in plan.steps])

    def run(self, arrays: list, addr: list) -> None:
        """One call of the plan: ``arrays``/``addr`` hold the parameters (and receive the
        fresh results); the plan's lock is held."""
        for step in self.fresh:
            step.allocate_fresh(arrays, addr)
        for argv, j, s in self.patches:
            argv[j] = addr[s]
        for status in self.statuses:
            status[0] = 0
        pool = self.pool
        threaded = self.slots > 1 and _busy.acquire(blocking=False)
        try:
            if threaded:
                pool.ready(self.slots)
            # (while another thread splits a call, every step runs whole: same bits)
            failed = pool.run_steps(pool.address, self.rows.ctypes.data, len(self.steps), self.clock.cycles.ctypes.data, 0 if threaded else 1)
        finally:
            if threaded:
                _busy.release()
        self.clock.runs[0] += 1
        if failed >= 0:
            step = self.steps[failed]
            _raise(step.kernel, step.status)
        for kernel, statuses in self.split_statuses:
            for status in statuses:
                if status[0]:
                    _raise(kernel, status)


def _raise(kernel, status: np.ndarray) -> None:
    raise EvalError(kernel._errors.get(int(status[0]), "kernel error {detail}").format(detail=int(status[1])))
