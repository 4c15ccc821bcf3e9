"""``with ignore_numpy_errors():`` — numpy's ``errstate(all="ignore")``, but cheap.

The interpreter enters it once per evaluation, and a Python caller may evaluate a small
function thousands of times (``[fact(20) for _ in range(100)]``): ``np.errstate`` costs
about 2 µs per entry, more than the whole factorial.  numpy keeps its error state in a
context variable; setting that variable to a prebuilt "ignore everything" state is the
same thing for a quarter of the price.  If numpy's internals move, this falls back to
``np.errstate``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

try:  # numpy >= 2.0
    from numpy._core._ufunc_config import _extobj_contextvar, _make_extobj

    _IGNORE: Any = _make_extobj(all="ignore")
except (ImportError, AttributeError, TypeError):  # pragma: no cover - other numpy versions
    _extobj_contextvar = None


class _Ignore:
    __slots__ = ("token",)

    def __enter__(self) -> None:
        self.token = _extobj_contextvar.set(_IGNORE)  # type: ignore[union-attr]

    def __exit__(self, *exc: Any) -> None:
        _extobj_contextvar.reset(self.token)  # type: ignore[union-attr]


def enter_ignore() -> Any:
    """Start ignoring numpy errors; pass the token to :func:`exit_ignore` (no ``with``:
    the interpreter's entry is hot enough for the context manager protocol to show)."""
    if _extobj_contextvar is None:  # pragma: no cover
        state = np.errstate(all="ignore")
        state.__enter__()
        return state
    return _extobj_contextvar.set(_IGNORE)


def exit_ignore(token: Any) -> None:
    if _extobj_contextvar is None:  # pragma: no cover
        token.__exit__(None, None, None)
    else:
        _extobj_contextvar.reset(token)


def ignore_numpy_errors() -> Any:
    """A context in which numpy neither warns nor raises on overflow, division by zero or
    invalid values (the interpreter's defined behaviours make them ordinary results).

    Examples
    --------
    >>> with ignore_numpy_errors():
    ...     np.int8(127) + np.int8(1)
    np.int8(-128)
    """
    if _extobj_contextvar is None:  # pragma: no cover
        return np.errstate(all="ignore")
    return _Ignore()


__all__ = ["ignore_numpy_errors", "enter_ignore", "exit_ignore"]
