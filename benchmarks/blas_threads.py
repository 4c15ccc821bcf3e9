"""One thread for every BLAS: imported by each benchmark before numpy (or torch) loads,
because OpenBLAS, OpenMP and MKL read these variables only when they start."""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS"):
    os.environ[_var] = "1"


def os_threads() -> int:
    """Threads of this process now (Linux), 0 if unknown: after a BLAS call, 1 shows that
    the pinning took (an unpinned OpenBLAS starts one worker per core on its first product)."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return 0


def describe() -> str:
    """The header line's thread statement, checked rather than assumed."""
    import numpy as np

    a = np.ones((256, 256), "float32")
    a @ a  # starts OpenBLAS's workers if it has any
    n = os_threads()
    seen = f"{n} OS thread(s) in this process after a BLAS product" if n else "thread count unknown"
    return f"OPENBLAS/OMP/MKL_NUM_THREADS=1 set before numpy loaded; {seen}"
