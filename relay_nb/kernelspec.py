"""Install the two Jupyter kernelspecs: ``relay_nb`` (IPython + ``%%relay``) and ``relay``.

A wheel ships them as data files (``share/jupyter/kernels/...``, from ``kernels/``); an
editable install has no such files in its prefix, so this command writes them::

    python -m relay_nb.kernelspec install [--user | --sys-prefix | --prefix P] [--name N]
    python -m relay_nb.kernelspec list
    python -m relay_nb.kernelspec uninstall [--name N]

The specs here are the single source: ``kernels/*/kernel.json`` are these dicts with
``argv[0] == "python"`` (Jupyter replaces a bare ``python`` by its own interpreter), and a
test keeps them equal.  Installing writes ``sys.executable`` instead, so the kernel runs
the interpreter relay_nb is installed in even when Jupyter lives elsewhere.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Optional, Sequence

from .errors import RelayError

KERNEL_NAMES = ("relay_nb", "relay")


def kernel_dict(name: str, executable: str = "python") -> dict:
    """The ``kernel.json`` contents of kernel ``name`` (``"relay_nb"`` or ``"relay"``).

    Examples
    --------
    >>> kernel_dict("relay_nb")["argv"][-1]
    '--ext=relay_nb'
    """
    if name == "relay_nb":
        # ipykernel loads the extension at start-up, so %%relay works without %load_ext.
        return {
            "argv": [executable, "-m", "ipykernel_launcher", "-f", "{connection_file}", "--ext=relay_nb"],
            "display_name": "Python 3 (relay_nb)",
            "language": "python",
            "metadata": {"debugger": True},
            "kernel_protocol_version": "5.5",
        }
    if name == "relay":
        return {
            "argv": [executable, "-m", "relay_nb.notebook.kernel", "-f", "{connection_file}"],
            "display_name": "Relay",
            "language": "relay",
            "metadata": {},
            "kernel_protocol_version": "5.5",
        }
    raise RelayError(f"unknown kernel {name!r}; the kernels are {', '.join(KERNEL_NAMES)}")


def _manager():
    try:
        from jupyter_client.kernelspec import KernelSpecManager
    except ImportError:  # pragma: no cover - the notebook extra is missing
        raise RelayError(
            "installing kernelspecs needs jupyter_client: pip install 'relay_nb[notebook]'"
        ) from None
    return KernelSpecManager()


def install(
    names: Sequence[str] = KERNEL_NAMES,
    user: bool = False,
    prefix: Optional[str] = None,
    executable: Optional[str] = None,
) -> list[str]:
    """Install kernelspecs and return the directories they were written to.

    Parameters
    ----------
    names : sequence of str
        Which kernels (default both).
    user : bool
        Install for the current user (``~/.local/share/jupyter/kernels``).
    prefix : str, optional
        Install under ``<prefix>/share/jupyter/kernels`` (``sys.prefix`` for a venv).
        With neither ``user`` nor ``prefix`` the system-wide location is used.
    executable : str, optional
        The Python that runs the kernel (default ``sys.executable``).

    Examples
    --------
    >>> import sys
    >>> install(prefix=sys.prefix)            # doctest: +SKIP
    ['.../share/jupyter/kernels/relay_nb', '.../share/jupyter/kernels/relay']
    """
    if user and prefix:
        raise RelayError("choose either user=True or a prefix, not both")
    manager = _manager()
    out = []
    for name in names:
        spec = kernel_dict(name, executable or sys.executable)
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / "kernel.json").write_text(json.dumps(spec, indent=1) + "\n", encoding="utf-8")
            out.append(manager.install_kernel_spec(tmp, name, user=user, prefix=prefix))
    return out


def installed() -> dict[str, str]:
    """``{kernel name: directory}`` for the relay_nb kernels Jupyter can find now."""
    specs = _manager().find_kernel_specs()
    return {name: specs[name] for name in KERNEL_NAMES if name in specs}


def uninstall(names: Sequence[str] = KERNEL_NAMES) -> list[str]:
    """Remove the installed kernelspecs ``names``; returns the directories removed."""
    manager = _manager()
    found = manager.find_kernel_specs()
    return [manager.remove_kernel_spec(name) for name in names if name in found]


def main(argv: Optional[Sequence[str]] = None) -> int:
    """The command line; returns the exit code (0 ok, 1 error, 2 bad usage)."""
    parser = argparse.ArgumentParser(prog="python -m relay_nb.kernelspec", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    inst = sub.add_parser("install", help="install the kernelspecs")
    where = inst.add_mutually_exclusive_group()
    where.add_argument("--user", action="store_true", help="for the current user")
    where.add_argument("--sys-prefix", action="store_true", help=f"into sys.prefix ({sys.prefix})")
    where.add_argument("--prefix", help="into PREFIX/share/jupyter/kernels")
    for p in (inst, sub.add_parser("uninstall", help="remove the kernelspecs")):
        p.add_argument("--name", choices=KERNEL_NAMES, action="append", help="only this kernel (repeatable)")
    sub.add_parser("list", help="show where Jupyter finds them")
    args = parser.parse_args(argv)
    try:
        if args.command == "install":
            prefix = sys.prefix if args.sys_prefix else args.prefix
            for path in install(args.name or KERNEL_NAMES, user=args.user, prefix=prefix):
                print(f"installed {Path(path).name}: {path}")
        elif args.command == "uninstall":
            for path in uninstall(args.name or KERNEL_NAMES):
                print(f"removed {path}")
        else:
            found = installed()
            for name in KERNEL_NAMES:
                print(f"{name}: {found.get(name, 'not installed')}")
    except (RelayError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
