"""A throw-away JupyterLab server on 127.0.0.1: random free port, random token, its own
root, settings, workspaces, config and runtime folders, so nothing of the user's setup
leaks in and nothing of the test leaks out.

Settings make the page deterministic for a browser test: every cell stays in the DOM
(``windowingMode: none``; JupyterLab otherwise virtualizes cells out of view), the
notebook's kernel starts without a "Select Kernel" dialog, and no news, update check or
extension manager reaches for the network.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

SETTINGS = {
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {
        "windowingMode": "none",
        "autoStartDefaultKernel": True,
    },
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false",
        "checkForUpdates": False,
    },
}


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class LabServer:
    """A running ``jupyter lab``; :meth:`stop` ends it and its kernels."""

    process: subprocess.Popen
    port: int
    token: str
    root: Path
    log: Path

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def url(self, path: str) -> str:
        """``path`` (e.g. ``/lab/tree/x.ipynb``) with the token."""
        sep = "&" if "?" in path else "?"
        return f"{self.base_url}{path}{sep}token={self.token}"

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def stop(self, timeout: float = 30.0) -> None:
        """SIGTERM (the server shuts its kernels down), then SIGKILL its process group."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                pass
        try:  # kernels left behind by a server that did not stop cleanly
            os.killpg(self.process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        if self.process.poll() is None:
            self.process.wait(10)


def _write_settings(folder: Path) -> None:
    for rel, value in SETTINGS.items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(value), encoding="utf-8")


def start_lab(
    root: Path, work: Path, timeout: float = 120.0, env: Optional[dict[str, str]] = None
) -> LabServer:
    """Start ``jupyter lab --no-browser`` serving ``root``; return once its API answers.

    ``work`` holds the server's own folders and its log (``work/lab.log``); ``env`` adds
    environment variables (e.g. ``JUPYTER_PATH`` for a labextension of the checkout).
    """
    port, token = free_port(), secrets.token_hex(16)
    for name in ("settings", "workspaces", "config", "runtime", "ipython"):
        (work / name).mkdir(parents=True, exist_ok=True)
    _write_settings(work / "settings")
    env = dict(os.environ, **(env or {}))
    env.update(
        JUPYTER_CONFIG_DIR=str(work / "config"),
        JUPYTER_RUNTIME_DIR=str(work / "runtime"),
        IPYTHONDIR=str(work / "ipython"),
    )
    cmd = [
        sys.executable, "-m", "jupyterlab",
        "--no-browser",
        "--allow-root",
        "--ServerApp.open_browser=False",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
        f"--LabApp.user_settings_dir={work / 'settings'}",
        f"--LabApp.workspaces_dir={work / 'workspaces'}",
        "--LabApp.news_url=",
        "--LabApp.extension_manager=readonly",
        "--ServerApp.terminals_enabled=False",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    ]  # fmt: skip
    log = work / "lab.log"
    with open(log, "wb") as out:
        process = subprocess.Popen(
            cmd, cwd=root, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    server = LabServer(process, port, token, root, log)
    deadline = time.monotonic() + timeout
    last: Optional[BaseException] = None
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"jupyter lab exited with {process.returncode}:\n{server.log_tail()}")
        try:
            with urllib.request.urlopen(server.url("/api/status"), timeout=5) as resp:
                if resp.status == 200:
                    return server
        except (urllib.error.URLError, ConnectionError, OSError) as exc:
            last = exc
        time.sleep(0.5)
    server.stop()
    raise RuntimeError(f"jupyter lab did not answer in {timeout:.0f} s ({last}):\n{server.log_tail()}")


__all__ = ["LabServer", "free_port", "start_lab"]
