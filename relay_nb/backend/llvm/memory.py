"""Result buffers: large results reuse the memory of results nobody holds any more.

A fresh 40 MB array costs more than the kernel that fills it: the operating system maps
and zeroes every page on first touch.  Large results are therefore cut from raw buffers
kept in a pool; a buffer is handed out again only when no array refers to it any more
(its reference count is back to the pool's own), so a result the caller still holds, or
any view of it, is never overwritten.  The pool is bounded (:data:`POOL_BYTES`); beyond
it, results are ordinary new arrays.  Small results are always ``np.empty``.
"""

from __future__ import annotations

import math
import sys
import threading
from typing import Optional

import numpy as np

ALIGN = 64
MIN_BYTES = 1 << 20
"""Results smaller than this are ordinary ``np.empty`` arrays (cheap to fault in)."""

_lock = threading.Lock()
_pool: dict[int, list[np.ndarray]] = {}
_pooled = 0


def _pool_limit() -> int:
    try:
        import os

        return min(2 << 30, os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // 8)
    except (ValueError, OSError, AttributeError):  # pragma: no cover - non-POSIX
        return 512 << 20


POOL_BYTES = _pool_limit()


def _unreferenced_count() -> int:
    """``sys.getrefcount`` of a pooled buffer nobody else holds, as :func:`empty` sees it."""
    probe = [np.empty(1, np.uint8)]
    for raw in probe:
        return sys.getrefcount(raw)
    return 3  # pragma: no cover


_FREE = _unreferenced_count()


def _view(raw: np.ndarray, shape: tuple, dtype: np.dtype, nbytes: int, phase: int) -> np.ndarray:
    start = (phase - raw.ctypes.data) % ALIGN
    return raw[start : start + nbytes].view(dtype).reshape(shape)


def empty(shape: tuple, dtype, nbytes: Optional[int] = None, phase: int = 0) -> np.ndarray:
    """An uninitialized C-contiguous array; a large one starts ``phase`` bytes past a 64-byte
    boundary (``phase`` a multiple of the item size).

    A kernel peels its first elements until the output is on a cache line (see
    :mod:`.codegen.lower`); an input with the same phase is then aligned too, so giving a
    result its input's phase keeps every vector load and store off the cache-line
    boundary.  ``nbytes``, when the caller knows it, saves recomputing the size."""
    global _pooled
    if nbytes is None:
        nbytes = math.prod(shape) * np.dtype(dtype).itemsize
    if nbytes < MIN_BYTES:
        return np.empty(shape, dtype)
    dt = np.dtype(dtype)
    phase -= phase % dt.itemsize  # an int8 input's odd phase must not misalign a float32 result
    with _lock:
        bucket = _pool.setdefault(nbytes, [])
        for raw in bucket:
            if sys.getrefcount(raw) <= _FREE:
                return _view(raw, shape, dt, nbytes, phase)
        raw = np.empty(nbytes + ALIGN, np.uint8)
        if _pooled + raw.size <= POOL_BYTES:
            bucket.append(raw)
            _pooled += raw.size
        return _view(raw, shape, dt, nbytes, phase)


def pooled_bytes() -> int:
    """Bytes held by the pool (in use or free)."""
    return _pooled


def release() -> None:
    """Drop the pool's references (arrays still in use keep their memory)."""
    global _pooled
    with _lock:
        _pool.clear()
        _pooled = 0


__all__ = ["empty", "pooled_bytes", "release", "MIN_BYTES", "POOL_BYTES"]
