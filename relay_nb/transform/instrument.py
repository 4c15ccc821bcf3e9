"""Pass instruments: observers attached to a PassContext (TVM's PassInstrument hooks).

An instrument is any object with some of ``enter_pass_ctx()``, ``exit_pass_ctx()``,
``should_run(mod, info) -> bool``, ``run_before_pass(mod, info)`` and
``run_after_pass(mod, info)``.  Timing, printing and the notebook's pass stepper are all
instruments; none of them changes what a pass does.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from typing import Callable, Optional, TextIO

from ..ir.module import IRModule
from .infra import PassInfo


class PassInstrument:
    """Base class with no-op hooks; subclass and override what you need."""

    def enter_pass_ctx(self) -> None:
        pass

    def exit_pass_ctx(self) -> None:
        pass

    def should_run(self, mod: IRModule, info: PassInfo) -> bool:
        return True

    def run_before_pass(self, mod: IRModule, info: PassInfo) -> None:
        pass

    def run_after_pass(self, mod: IRModule, info: PassInfo) -> None:
        pass


class PassTimingInstrument(PassInstrument):
    """Times every pass, nested passes (Sequential's children) indented under their parent.

    >>> timing = PassTimingInstrument()
    >>> with PassContext(instruments=[timing]):
    ...     mod = seq(mod)
    >>> print(timing.render())
    """

    def __init__(self) -> None:
        self._stack: list[tuple[str, float, list]] = []
        self.records: list[tuple[str, float, list]] = []

    def enter_pass_ctx(self) -> None:
        self._stack.clear()
        self.records = []

    def run_before_pass(self, mod: IRModule, info: PassInfo) -> None:
        self._stack.append((info.name, time.perf_counter(), []))

    def run_after_pass(self, mod: IRModule, info: PassInfo) -> None:
        name, start, children = self._stack.pop()
        record = (name, time.perf_counter() - start, children)
        (self._stack[-1][2] if self._stack else self.records).append(record)

    def render(self) -> str:
        """A readable report: one line per pass run, with seconds and share of its parent."""
        lines = ["pass timing:"]

        def emit(records: list, depth: int, total: float) -> None:
            for name, secs, children in records:
                share = f"{100 * secs / total:5.1f}%" if total > 0 else "     -"
                lines.append(f"{'  ' * (depth + 1)}{name}: {secs * 1e3:.3f} ms {share}")
                emit(children, depth + 1, secs)

        emit(self.records, 0, sum(r[1] for r in self.records))
        return "\n".join(lines)


class PrintBeforeAll(PassInstrument):
    """Prints the module before every pass."""

    def __init__(self, file: Optional[TextIO] = None, form: str = "graph"):
        self.file = file
        self.form = form

    def run_before_pass(self, mod: IRModule, info: PassInfo) -> None:
        out = self.file or sys.stdout
        out.write(f"// before {info.name}\n{mod.astext(form=self.form)}\n")


class PrintAfterAll(PassInstrument):
    """Prints the module after every pass."""

    def __init__(self, file: Optional[TextIO] = None, form: str = "graph"):
        self.file = file
        self.form = form

    def run_after_pass(self, mod: IRModule, info: PassInfo) -> None:
        out = self.file or sys.stdout
        out.write(f"// after {info.name}\n{mod.astext(form=self.form)}\n")


@dataclass
class PassRecord:
    """One pass run: its name, the module before and after, its time, and whether it changed
    the program (structurally)."""

    name: str
    before: IRModule
    after: IRModule
    seconds: float
    changed: bool
    depth: int = 0


class PassRecorder(PassInstrument):
    """Keeps a :class:`PassRecord` for every pass run (the notebook stepper's source).

    ``leaves_only=True`` skips composite passes (a Sequential's own record), so each record
    is one real transformation.
    """

    def __init__(self, leaves_only: bool = False, changed: Optional[Callable[[IRModule, IRModule], bool]] = None):
        self.leaves_only = leaves_only
        self._changed = changed
        self.records: list[PassRecord] = []
        self._stack: list[tuple[PassInfo, IRModule, float, list]] = []

    def enter_pass_ctx(self) -> None:
        self._stack.clear()

    def run_before_pass(self, mod: IRModule, info: PassInfo) -> None:
        self._stack.append((info, mod, time.perf_counter(), []))
        if len(self._stack) > 1:
            self._stack[-2][3].append(info.name)

    def run_after_pass(self, mod: IRModule, info: PassInfo) -> None:
        pinfo, before, start, children = self._stack.pop()
        seconds = time.perf_counter() - start
        if self.leaves_only and children:
            return
        self.records.append(
            PassRecord(info.name, before, mod, seconds, self.changed(before, mod), depth=len(self._stack))
        )

    def changed(self, before: IRModule, after: IRModule) -> bool:
        if self._changed is not None:
            return self._changed(before, after)
        if before is after:
            return False
        from ..ir.structural import structural_equal

        return not structural_equal(before, after)


__all__ = [
    "PassInstrument",
    "PassTimingInstrument",
    "PrintBeforeAll",
    "PrintAfterAll",
    "PassRecord",
    "PassRecorder",
]
