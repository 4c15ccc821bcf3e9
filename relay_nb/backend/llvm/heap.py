"""Give the heap pages that optimization freed back to the operating system.

Constant folding evaluates weight expressions in the interpreter and drops the
intermediates; glibc keeps the freed pages (after one large array is freed it raises its
mmap threshold, so the next large arrays come from the heap, and fragments pin the heap
top).  They would count in the process's resident size for its whole life, and
the build's peak too: loading LLVM and emitting code come after folding, on top of
them (an LSTM 2x512: 17 MB of 156 MB).  ``malloc_trim`` returns them; on a C library
without it this does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
from typing import Optional

_trim: Optional[object] = None
_looked_up = False


def _malloc_trim():
    global _trim, _looked_up
    if not _looked_up:
        _looked_up = True
        try:
            libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
            _trim = libc.malloc_trim
            _trim.argtypes, _trim.restype = [ctypes.c_size_t], ctypes.c_int
        except (OSError, AttributeError):  # not glibc (macOS, musl without it)
            _trim = None
    return _trim


def release_freed() -> None:
    """Collect young cyclic garbage (the last passes' checkers and interpreters hold folded
    IR), then return free heap pages to the OS.

    Only the young generations: a full collection rescans every long-lived object (20 ms
    of ResNet-50's warm build) and found only the pipeline's passes, which no longer make
    cycles (tests/test_jit_build_heap.py checks that a build leaves none holding IR)."""
    gc.collect(1)
    trim = _malloc_trim()
    if trim is not None:
        trim(0)
