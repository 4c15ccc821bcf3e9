"""Shared pytest setup.

``pytest --update-golden`` rewrites golden files (``tests/golden/<area>/<case>.out``) from
the current output instead of comparing; ``git diff`` is then the review.  Tests compare
through the ``golden`` fixture::

    def test_something(golden):
        golden("printer/seed004_dag.out", text)
"""

from __future__ import annotations

from pathlib import Path

import pytest

GOLDEN_DIR = Path(__file__).parent / "golden"


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
