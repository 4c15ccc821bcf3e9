"""Execute every tutorial headlessly and write the executed notebooks.

    python scripts/run_tutorials.py [OUT_DIR] [--only 03] [--timeout 300] [--kernel python3]

Each ``tutorials/NN_*.ipynb`` runs with nbclient in a fresh ``python3`` kernel whose working
directory is ``tutorials/`` (so a notebook imports ``checks.py`` beside it and loads the
extension itself with ``%load_ext relay_nb``).  Executed copies go to ``OUT_DIR``
(default ``build/tutorials/``).  Nothing touches the network.  Exit code 0 when every
notebook ran without an error, 1 otherwise (the failing cell and its error are printed).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Optional, Sequence

ROOT = Path(__file__).resolve().parents[1]
TUTORIALS = ROOT / "tutorials"


def notebooks(only: Sequence[str] = ()) -> list[Path]:
    """The tutorial notebooks in course order, or those whose name starts with ``only``."""
    found = sorted(TUTORIALS.glob("[0-9][0-9]_*.ipynb"))
    if only:
        found = [p for p in found if any(p.name.startswith(o) for o in only)]
    return found


def execute(path: Path, out_dir: Optional[Path] = None, timeout: int = 300, kernel: str = "python3"):
    """Run one notebook; return ``(executed notebook, error text or None, seconds)``."""
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb,
        kernel_manager_class=_local_kernel_manager(),
        timeout=timeout,
        kernel_name=kernel,
        resources={"metadata": {"path": str(path.parent)}},
    )
    error = None
    start = time.perf_counter()
    try:
        client.execute()
    except (CellExecutionError, CellTimeoutError, DeadKernelError) as exc:
        error = str(exc)
    seconds = time.perf_counter() - start
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, out_dir / path.name)
    return nb, error, seconds


def _local_kernel_manager():
    """nbclient's kernel manager, talking over Unix sockets where there are any: the kernel
    is local, and over TCP ipykernel warns at every start that traffic is unencrypted.
    The socket path is absolute (the kernel runs in ``tutorials/``, not here), in a
    temporary directory removed with the process."""
    import atexit
    import os
    import shutil
    import tempfile

    from jupyter_client.manager import AsyncKernelManager

    if os.name != "posix":
        return AsyncKernelManager
    sockets = tempfile.mkdtemp(prefix="relay_nb-kernel-")
    atexit.register(shutil.rmtree, sockets, ignore_errors=True)

    class LocalKernelManager(AsyncKernelManager):
        def __init__(self, **kwargs):
            kwargs.setdefault("transport", "ipc")
            kwargs.setdefault("ip", os.path.join(sockets, "kernel"))
            super().__init__(**kwargs)

    return LocalKernelManager


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out_dir", nargs="?", default=str(ROOT / "build" / "tutorials"))
    parser.add_argument("--only", action="append", default=[], help="run notebooks starting with this (repeatable)")
    parser.add_argument("--timeout", type=int, default=300, help="seconds per cell")
    parser.add_argument("--kernel", default="python3", help="kernelspec name")
    args = parser.parse_args(argv)
    paths = notebooks(args.only)
    if not paths:
        print("no tutorials found", file=sys.stderr)
        return 1
    failed = 0
    for path in paths:
        _, error, seconds = execute(path, Path(args.out_dir), args.timeout, args.kernel)
        status = "ok" if error is None else "FAILED"
        print(f"{status:6} {path.name} ({seconds:.1f} s)")
        if error is not None:
            failed += 1
            print(error, file=sys.stderr)
    print(f"tutorials: {len(paths) - failed} ran cleanly, {failed} with errors; executed copies in {args.out_dir}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
