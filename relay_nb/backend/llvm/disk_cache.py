"""Compiled object code kept on disk, so a restarted process loads kernels instead of
compiling them.

An entry is one LLVM module's object code (what MCJIT's object cache hands over, see
:mod:`.jit`) with a small JSON ``meta`` the caller needs to use it without generating the
IR again (a kernel's calling convention).  It is found by a *key*: text that the caller
builds from what determines the code (a kernel's Relay skeleton and types) — never from
the LLVM IR, so a hit skips lowering as well as LLVM — joined with :func:`environment`:
the relay_nb version, a digest of the sources that generate code, the llvmlite and LLVM
versions, and the host triple, CPU name and CPU feature string.  The version alone would
not do: in a development checkout a changed lowering keeps the version, and loading the
old lowering's code would run the wrong kernel.  The CPU features matter because code
compiled for AVX-512 dies with SIGILL on a machine without it.

The file is ``<digest of key>.o`` in :func:`cache_dir`::

    MAGIC | sha256 of the rest (32 bytes) | header length (8 bytes) | header JSON | object

and the header holds the full key and environment.  An entry is used only if its
checksum, key and environment all match (a truncated file, random bytes, a hash-named
file for another key, another version or another CPU are all refused, then rebuilt and
overwritten): object code that LLVM loads is trusted completely.  Writers write a
temporary file in the same directory and ``os.replace`` it, so concurrent processes
building the same kernel each publish a whole file and readers never see a partial one.

``RELAY_NB_CACHE_DIR`` names the directory (default ``$XDG_CACHE_HOME/relay_nb`` or
``~/.cache/relay_nb``); ``RELAY_NB_DISK_CACHE=0`` turns the disk cache off.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import tempfile
from pathlib import Path
from typing import Callable, Optional

MAGIC = b"relay_nb object cache v1\n"
_SUFFIX = ".o"
_SOURCE_DIRS = ("backend/llvm", "op")  # what lowering reads: codegen, kernels, op rules
_DECLARE = re.compile(r'^declare [^@]*@"?([^"(\s]+)"?\(', re.M)
_DEFINE_FN = re.compile(r'^define (?!(?:internal|private) )[^@]*@"?([^"(\s]+)"?\(', re.M)
_DEFINE_VAR = re.compile(r'^@"?([^"\s]+)"? = (?!(?:internal|private) )', re.M)


def cache_dir() -> Path:
    """The directory of cached objects (not created until something is stored)."""
    explicit = os.environ.get("RELAY_NB_CACHE_DIR")
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "relay_nb"


def enabled() -> bool:
    """Whether kernels are looked up on and written to disk (``RELAY_NB_DISK_CACHE=0``: no)."""
    return os.environ.get("RELAY_NB_DISK_CACHE", "1").strip().lower() not in ("0", "false", "no", "off")


@functools.lru_cache(maxsize=None)
def source_digest() -> str:
    """sha256 over the sources code generation depends on (paths and contents)."""
    root = Path(__file__).resolve().parents[2]  # the relay_nb package
    h = hashlib.sha256()
    for sub in _SOURCE_DIRS:
        for path in sorted((root / sub).rglob("*.py")):
            h.update(str(path.relative_to(root)).encode() + b"\0")
            h.update(path.read_bytes() + b"\0")
    return h.hexdigest()


@functools.lru_cache(maxsize=None)
def environment() -> str:
    """Everything besides the key that the object code depends on, as one text."""
    import llvmlite
    import llvmlite.binding as llvm

    from ... import __version__

    return "\n".join(
        (
            f"relay_nb {__version__} sources {source_digest()}",
            f"llvmlite {llvmlite.__version__} llvm {'.'.join(map(str, llvm.llvm_version_info))}",
            f"triple {llvm.get_process_triple()} cpu {llvm.get_host_cpu_name()}",
            f"features {llvm.get_host_cpu_features().flatten()}",
        )
    )


def _path(key: str) -> Path:
    digest = hashlib.sha256((environment() + "\0" + key).encode()).hexdigest()
    return cache_dir() / (digest[:40] + _SUFFIX)


def load(key: str) -> Optional[tuple[dict, bytes]]:
    """``(meta, object code)`` stored under ``key``, or None if there is no valid entry."""
    try:
        data = _path(key).read_bytes()
    except OSError:
        return None
    return _parse(data, key)


def _parse(data: bytes, key: str) -> Optional[tuple[dict, bytes]]:
    n = len(MAGIC)
    if len(data) < n + 40 or not data.startswith(MAGIC):
        return None
    if hashlib.sha256(data[n + 32 :]).digest() != data[n : n + 32]:
        return None  # truncated or damaged
    size = int.from_bytes(data[n + 32 : n + 40], "little")
    try:
        header = json.loads(data[n + 40 : n + 40 + size].decode())
    except (UnicodeDecodeError, ValueError):
        return None
    if not isinstance(header, dict) or header.get("key") != key or header.get("environment") != environment():
        return None  # another kernel (a digest collision), version or CPU
    meta = header.get("meta")
    obj = data[n + 40 + size :]
    if not isinstance(meta, dict) or not obj:
        return None
    return meta, obj


def store(key: str, meta: dict, obj: bytes) -> bool:
    """Write an entry atomically; False (and nothing written) if the directory is not
    writable — a cache that cannot be written only costs time."""
    tmp = None
    try:
        header = json.dumps({"key": key, "environment": environment(), "meta": meta}).encode()
        rest = len(header).to_bytes(8, "little") + header + obj
        target = _path(key)
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=_SUFFIX, dir=target.parent)
        with os.fdopen(fd, "wb") as f:
            f.write(MAGIC + hashlib.sha256(rest).digest() + rest)
        os.replace(tmp, target)  # atomic: a reader sees the old file or the new one
        return True
    except (OSError, TypeError, ValueError):
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
        return False


def externals(ir_text: str) -> list[str]:
    """The functions LLVM IR calls outside its module (intrinsics aside): a loader makes
    sure each exists before handing the code to MCJIT, which aborts on a missing one."""
    return [s for s in _DECLARE.findall(ir_text) if not s.startswith("llvm.")]


def exports(ir_text: str) -> list[str]:
    """The names LLVM IR defines for other modules to see.  Only code whose exports are
    exactly its entry points is stored: a global named by a per-process counter (as
    ``taps3``) would be defined twice, with different contents, once a process loads one
    module and compiles another, and MCJIT links symbols across the modules of its engine."""
    return _DEFINE_FN.findall(ir_text) + _DEFINE_VAR.findall(ir_text)


def compile_cached(key: str, build: Callable[[], str], symbols: list[str], name: str, speed_level: int = 3, offload: bool = False):
    """The :class:`~.jit.CompiledModule` of ``build()``'s IR, stored under ``key``: loaded
    from disk when a valid entry exists (``build`` then runs only if someone asks for
    the IR), else compiled and stored (``offload``: see :func:`.jit.compile_ir`)."""
    from .jit import compile_ir, load_object

    if not enabled():
        return compile_ir(build(), symbols, name, speed_level, emit_asm=False, offload=offload)
    entry = load(key)
    if entry is not None:
        try:
            return load_object(entry[1], symbols, name, [str(e) for e in entry[0]["externals"]], build, speed_level)
        except (KeyError, TypeError, RuntimeError):
            pass  # compile and overwrite it
    ir_text = build()
    save = functools.partial(store, key, {"externals": externals(ir_text)}) if exports(ir_text) == symbols else None
    return compile_ir(ir_text, symbols, name, speed_level, emit_asm=False, save_object=save, offload=offload)


def clear_cache() -> int:
    """Delete every cached object (and stray temporary files); return how many files.

    Examples
    --------
    >>> relay_nb.backend.clear_cache()
    28
    """
    removed = 0
    try:
        entries = list(cache_dir().iterdir())
    except OSError:
        return 0
    for path in entries:
        if path.suffix == _SUFFIX and path.is_file():
            try:
                path.unlink()
                removed += 1
            except OSError:
                pass
    return removed


__all__ = ["cache_dir", "clear_cache", "compile_cached", "enabled", "environment", "exports", "externals", "load", "store"]
