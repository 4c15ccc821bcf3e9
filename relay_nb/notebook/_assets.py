"""Where the front-end assets (plain ESM + CSS in ``widgets/``) are, checkout or wheel.

In a repository checkout they sit next to the package (``<repo>/widgets``); an installed
wheel carries them inside the package (pyproject force-includes ``widgets`` as
``relay_nb/widgets``).  Widgets read them as text, so nothing is fetched from a CDN and
everything works offline.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from ..errors import RelayError

_PACKAGE = Path(__file__).resolve().parent.parent  # .../relay_nb


def candidate_dirs() -> list[Path]:
    """The places the ``widgets`` folder may be, in the order they are tried."""
    # Installed wheel first: it is the copy that belongs to the imported package.
    return [_PACKAGE / "widgets", _PACKAGE.parent / "widgets"]


@lru_cache(maxsize=None)
def widgets_dir() -> Path:
    """The ``widgets`` folder holding ``graph_inspector.js`` and the CSS files."""
    for path in candidate_dirs():
        if (path / "graph_inspector.js").is_file():
            return path
    tried = ", ".join(str(p) for p in candidate_dirs())
    raise RelayError(
        f"relay_nb's widget assets are missing (looked in {tried}); reinstall relay_nb"
    )


def asset_path(name: str) -> Path:
    """The path of one asset file, e.g. ``asset_path("graph_inspector.js")``."""
    path = widgets_dir() / name
    if not path.is_file():
        raise RelayError(f"relay_nb's widget asset {name} is missing from {widgets_dir()}")
    return path


@lru_cache(maxsize=None)
def read_asset(name: str) -> str:
    """The text of one asset file (cached: assets do not change while a kernel runs)."""
    return asset_path(name).read_text(encoding="utf-8")


__all__ = ["asset_path", "candidate_dirs", "read_asset", "widgets_dir"]
