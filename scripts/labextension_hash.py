"""The hash of the JupyterLab extension's source (labextension/src, package.json,
tsconfig.json) that its committed build was made from.

scripts/build_labextension.sh writes it to labextension/prebuilt.sha256; a test compares
it with the source's, so editing the source without rebuilding the shipped bundle fails.

    python scripts/labextension_hash.py [labextension/]   # prints the hash
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

FOLDER = Path(__file__).resolve().parents[1] / "labextension"


def source_hash(folder: Path = FOLDER) -> str:
    """sha256 over the names and bytes of the files the build reads."""
    sources = sorted(p for p in (folder / "src").iterdir() if p.suffix in (".ts", ".js"))
    files = [folder / "package.json", folder / "tsconfig.json", *sources]
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.relative_to(folder).as_posix().encode() + b"\n")
        digest.update(path.read_bytes().replace(b"\r\n", b"\n") + b"\n")
    return digest.hexdigest()


if __name__ == "__main__":
    print(source_hash(Path(sys.argv[1]) if len(sys.argv) > 1 else FOLDER))
