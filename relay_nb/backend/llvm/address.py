"""The data pointer of a numpy array, fast: the per-call cost of a kernel call.

``a.__array_interface__["data"][0]`` (or ``a.ctypes.data``) builds a dict or an object
and costs about a microsecond here — several per kernel call, as much as a small
kernel's arithmetic.  The pointer is the first field of numpy's ``PyArrayObject`` after
the object header (what the C macro ``PyArray_DATA`` reads), so for an exact
``np.ndarray`` it is read straight from the object's memory (~0.1 us).  The offset is
verified at import against ``__array_interface__`` on arrays of several kinds (fresh,
views with an offset, 0-d, read-only); if any disagrees (another interpreter or numpy
layout), every call takes the slow, documented route instead.
"""

from __future__ import annotations

import ctypes

import numpy as np

_read = ctypes.c_void_p.from_address


def _slow(a: np.ndarray) -> int:
    return a.__array_interface__["data"][0]


def _offset() -> int:
    """Where the data pointer sits in an ndarray object, or 0 if it cannot be trusted."""
    base = np.arange(64, dtype=np.float32)
    ro = np.zeros(3)
    ro.flags.writeable = False
    samples = [base, base[5:], base.reshape(8, 8)[2:, 3:], np.array(1.5), ro, np.empty(0)]
    for offset in (2 * ctypes.sizeof(ctypes.c_void_p),):
        if all((_read(id(s) + offset).value or 0) == _slow(s) for s in samples if type(s) is np.ndarray):
            return offset
    return 0  # pragma: no cover - an ndarray layout we do not know


_OFFSET = _offset()


def address(a: np.ndarray) -> int:
    """The address of ``a``'s first element (an ndarray the caller holds a reference to)."""
    if _OFFSET and type(a) is np.ndarray:
        return _read(id(a) + _OFFSET).value or 0
    return _slow(a)


__all__ = ["address"]
