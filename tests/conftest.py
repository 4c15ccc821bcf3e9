"""Shared pytest setup.

``pytest --update-golden`` rewrites golden files (``tests/golden/<area>/<case>.out``) from
the current output instead of comparing; ``git diff`` is then the review.  Tests compare
through the ``golden`` fixture::

    def test_something(golden):
        golden("printer/seed004_dag.out", text)
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

import pytest

GOLDEN_DIR = Path(__file__).parent / "golden"

# The JIT's disk cache of compiled kernels (relay_nb/backend/llvm/disk_cache.py) stays on
# in the tests, so that storing is exercised everywhere, but in a directory of this run:
# never the user's ~/.cache/relay_nb.  Set here, at import, so that collection-time
# builds and subprocesses (notebook kernels, the CLI) use it too.  Within one process a
# kernel is never loaded back from disk (a second compile of one key compiles), so the
# in-process tests do not depend on each other through it; a subprocess may load what an
# earlier test stored, which changes only how long it takes.
_CACHE_DIR = tempfile.mkdtemp(prefix="relay_nb_test_kernels_")
os.environ["RELAY_NB_CACHE_DIR"] = _CACHE_DIR
atexit.register(shutil.rmtree, _CACHE_DIR, ignore_errors=True)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-golden",
        action="store_true",
        default=False,
        help="rewrite tests/golden/**/*.out from the current output instead of comparing",
    )


@pytest.fixture
def golden(request: pytest.FixtureRequest):
    """``golden(relative_path, actual)``: compare with (or, with --update-golden, write)
    ``tests/golden/<relative_path>``."""
    update = request.config.getoption("--update-golden")

    def check(relative: str, actual: str) -> None:
        path = GOLDEN_DIR / relative
        if update:
            path.parent.mkdir(parents=True, exist_ok=True)
            if not path.exists() or path.read_text(encoding="utf-8") != actual:
                path.write_text(actual, encoding="utf-8")
            return
        if not path.exists():
            pytest.fail(f"missing golden file {path} (run pytest --update-golden to create it)")
        expected = path.read_text(encoding="utf-8")
        assert actual == expected, (
            f"output differs from {path} (pytest --update-golden rewrites it)"
        )

    return check


# CPython's default recursion limit.  Importing jedi (IPython's completer does, so any test
# that starts an in-process IPython shell) raises the process's limit to 3000 for good;
# the deep-program tests promise to work at the default, so every test (and module
# setup) starts there.
DEFAULT_RECURSION_LIMIT = 1000


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    import sys

    if sys.getrecursionlimit() > DEFAULT_RECURSION_LIMIT:
        sys.setrecursionlimit(DEFAULT_RECURSION_LIMIT)
