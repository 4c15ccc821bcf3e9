"""Copy the course tutorials into a workspace that JupyterLab opens, so the checkout stays clean.

    python scripts/lab_workspace.py [DEST]       # default: workspace/ (git-ignored)

JupyterLab writes to every notebook it opens (its kernel's ``language_info``, cell metadata,
outputs, the learner's answers), so ``scripts/main.sh`` serves copies, not
``tutorials/*.ipynb``, which are generated from ``tutorials/src/`` and committed clean.
A notebook already in the workspace is the learner's work and is never overwritten (a note
says when the course's version differs; delete the copy to get the new one).  ``checks.py``
and ``README.md`` are course material, not answers, and are always refreshed.
"""

from __future__ import annotations

import filecmp
import shutil
import sys
from pathlib import Path
from typing import Optional, Sequence

ROOT = Path(__file__).resolve().parents[1]
TUTORIALS = ROOT / "tutorials"
DEFAULT = ROOT / "workspace"
REFRESHED = ("checks.py", "README.md")


def copy_tutorials(dest: Path, tutorials: Path = TUTORIALS) -> tuple[list[str], list[str]]:
    """Copy the tutorials into ``dest``; return (names copied, names kept that differ)."""
    dest.mkdir(parents=True, exist_ok=True)
    copied, kept = [], []
    for path in sorted(tutorials.glob("[0-9][0-9]_*.ipynb")):
        out = dest / path.name
        if not out.exists():
            shutil.copyfile(path, out)
            copied.append(path.name)
        elif not filecmp.cmp(path, out, shallow=False):
            kept.append(path.name)
    for name in REFRESHED:
        if (tutorials / name).exists():
            shutil.copyfile(tutorials / name, dest / name)
    return copied, kept


def main(argv: Optional[Sequence[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    dest = Path(argv[0]) if argv else DEFAULT
    copied, kept = copy_tutorials(dest)
    where = dest.relative_to(ROOT) if dest.is_relative_to(ROOT) else dest
    print(f"lab_workspace: JupyterLab opens copies of the tutorials in {where}/ "
          f"({len(copied)} copied, {len(kept)} kept with your changes)")
    for name in kept:
        print(f"lab_workspace: kept your {where}/{name}; delete it to get the current tutorial")
    return 0


if __name__ == "__main__":
    sys.exit(main())
