"""Helpers for tests that start a real Jupyter kernel with jupyter_client.

Kernelspecs are installed into a temporary prefix by ``relay_nb.kernelspec`` and the kernel
is found through a KernelSpecManager looking only there, so the tests never touch the
machine's own Jupyter setup.
"""

from __future__ import annotations

import os
import re
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

ANSI = re.compile(r"\x1b\[[0-9;]*m")


@dataclass
class CellResult:
    """The reply to one execute request and the IOPub messages it produced."""

    reply: dict
    messages: list[dict] = field(default_factory=list)

    @property
    def status(self) -> str:
        return self.reply["content"]["status"]

    def of_type(self, *kinds: str) -> list[dict]:
        return [m["content"] for m in self.messages if m["header"]["msg_type"] in kinds]

    @property
    def stdout(self) -> str:
        return "".join(c["text"] for c in self.of_type("stream") if c["name"] == "stdout")

    @property
    def stderr(self) -> str:
        return "".join(c["text"] for c in self.of_type("stream") if c["name"] == "stderr")

    def data(self, mime: str = "text/plain") -> list[str]:
        """The ``mime`` parts of every display_data / execute_result, in order."""
        return [c["data"][mime] for c in self.of_type("display_data", "execute_result") if mime in c["data"]]

    @property
    def error(self) -> str:
        """The error report as the user sees it (traceback lines, colour codes removed)."""
        return "\n".join(ANSI.sub("", "\n".join(c["traceback"])) for c in self.of_type("error"))


def kernel_dirs(prefix: Path) -> list[str]:
    return [str(prefix / "share" / "jupyter" / "kernels")]


@contextmanager
def running_kernel(name: str, prefix: Path, timeout: float = 60) -> Iterator[Any]:
    """Start kernel ``name`` from the specs installed under ``prefix``; yield a client."""
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import KernelManager

    ksm = KernelSpecManager(kernel_dirs=kernel_dirs(prefix))
    km = KernelManager(kernel_name=name, kernel_spec_manager=ksm)
    env = dict(os.environ, IPYTHONDIR=str(prefix / "ipython"), PYDEVD_DISABLE_FILE_VALIDATION="1")
    km.start_kernel(env=env, cwd=str(prefix))
    kc = km.client()
    kc.start_channels()
    try:
        kc.wait_for_ready(timeout=timeout)
        yield kc
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def execute(kc: Any, code: str, timeout: float = 60) -> CellResult:
    """Run ``code``; return the reply and the IOPub messages of this request."""
    messages: list[dict] = []
    reply = kc.execute_interactive(code, output_hook=messages.append, timeout=timeout, allow_stdin=False)
    return CellResult(reply, messages)
