"""Generate the tutorial notebooks from their percent-format sources.

    python tutorials/build.py            # write tutorials/NN_name.ipynb from tutorials/src/
    python tutorials/build.py --check    # exit 1 if a notebook's cells are out of date

The sources (``tutorials/src/NN_name.py``) are what we review and edit; the notebooks are
generated, committed with no outputs, and never edited by hand.  The format is jupytext's
"percent" format, read here with nbformat alone (jupytext is not a dependency):

* ``# %%`` starts a code cell, ``# %% [markdown]`` a Markdown cell whose lines are
  ``# ``-commented;
* in a code cell, magics are commented (``# %load_ext relay_nb``), and a cell that starts
  with a cell magic (``# %%relay ...``) is commented entirely, since its body is Relay,
  not Python — so every source stays a valid Python file for linters.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import nbformat

HERE = Path(__file__).resolve().parent
SRC = HERE / "src"

_CELL = re.compile(r"^# %%(?: .*)?$")
_KIND = re.compile(r"\[(markdown|md|raw)\]")
_MAGIC = re.compile(r"^# (%{1,2}[A-Za-z])")
_KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}


def _uncomment(line: str) -> str:
    """``# text`` -> ``text`` (and a lone ``#`` -> empty line)."""
    if line.startswith("# "):
        return line[2:]
    return line[1:] if line.startswith("#") else line


def _trim(lines: list[str]) -> list[str]:
    while lines and not lines[0].strip():
        lines = lines[1:]
    while lines and not lines[-1].strip():
        lines = lines[:-1]
    return lines


def _code_source(lines: list[str]) -> str:
    lines = _trim(lines)
    if lines and lines[0].startswith("# %%"):
        # A cell magic: the whole cell is commented.
        return "\n".join(_uncomment(ln) for ln in lines)
    return "\n".join(_MAGIC.sub(r"\1", ln) for ln in lines)


def notebook_from_source(text: str) -> nbformat.NotebookNode:
    """The notebook a percent-format source describes (no outputs, no execution counts)."""
    cells = []
    kind, body = None, []

    def flush() -> None:
        if kind is None:
            return
        if kind == "code":
            source = _code_source(body)
            if source:
                cells.append(nbformat.v4.new_code_cell(source))
        else:
            source = "\n".join(_uncomment(ln) for ln in _trim(body))
            maker = nbformat.v4.new_markdown_cell if kind == "markdown" else nbformat.v4.new_raw_cell
            cells.append(maker(source))

    for line in text.splitlines():
        m = _CELL.match(line)
        if m:
            flush()
            found = _KIND.search(line)
            k = found.group(1) if found else None
            kind, body = ("markdown" if k in ("markdown", "md") else k or "code"), []
        elif kind is not None:
            body.append(line)
    flush()
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = dict(_KERNELSPEC)
    nb.metadata["language_info"] = {"name": "python"}
    # Stable cell ids, so regenerating gives byte-identical files.
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"cell-{i:03d}"
    return nb


def notebook_text(source: Path) -> str:
    """The ``.ipynb`` JSON text generated from ``source``."""
    nb = notebook_from_source(source.read_text(encoding="utf-8"))
    nbformat.validate(nb)
    return nbformat.writes(nb) + "\n"


def generated_part(nb: nbformat.NotebookNode) -> list:
    """What the source decides: each cell's id, kind and text, and the kernel to start.

    A front end rewrites the rest when it opens a notebook (JupyterLab fills in
    ``language_info`` with the running Python's version, adds cell metadata), so the staleness
    check ignores it; outputs are checked separately (committed notebooks have none)."""
    cells = [(c.get("id"), c.cell_type, c.source) for c in nb.cells]
    return [nb.nbformat, nb.metadata.get("kernelspec", {}).get("name"), cells]


def is_stale(source: Path) -> bool:
    """True when ``source``'s notebook is missing or its cells differ from what it generates."""
    out = target(source)
    if not out.exists():
        return True
    on_disk = nbformat.reads(out.read_text(encoding="utf-8"), as_version=4)
    return generated_part(on_disk) != generated_part(notebook_from_source(source.read_text(encoding="utf-8")))


def sources() -> list[Path]:
    return sorted(SRC.glob("[0-9][0-9]_*.py"))


def target(source: Path) -> Path:
    return HERE / (source.stem + ".ipynb")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="only check that notebooks are up to date")
    args = parser.parse_args(argv)
    stale = []
    for src in sources():
        if args.check:
            if is_stale(src):
                stale.append(target(src).name)
            continue
        # Writing restores the canonical bytes, front-end metadata included.
        text, out = notebook_text(src), target(src)
        if not (out.exists() and out.read_text(encoding="utf-8") == text):
            out.write_text(text, encoding="utf-8")
            print(f"wrote {out.relative_to(HERE.parent)}")
    if args.check and stale:
        print("out of date (run python tutorials/build.py): " + ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
