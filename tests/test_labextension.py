"""The JupyterLab extension that highlights Relay (labextension/): shipped prebuilt in the
wheel, built from the current source, highlighting the words the Pygments lexer does, and
named by the Relay kernel.  No browser here (tests/test_e2e_highlight.py drives one)."""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from relay_nb.syntax import pygments_lexer

ROOT = Path(__file__).resolve().parents[1]
FOLDER = ROOT / "labextension"
NAME = "relay-nb-highlight"


def _ts_list(source: str, name: str) -> tuple[str, ...]:
    """The strings of ``export const NAME = [...]`` in TypeScript source."""
    body = re.search(rf"export const {name} = \[(.*?)\];", source, re.S)
    assert body, name
    return tuple(re.findall(r"'([^']*)'", body.group(1)))


def test_the_wheel_ships_the_prebuilt_extension(tmp_path):
    # What `pip install relay_nb` gets: the wheel pip builds from this checkout.
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(ROOT)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    (wheel,) = tmp_path.glob("relay_nb-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    data = next(n.split("/data/")[0] for n in names if ".data/data/" in n) + "/data"
    target = f"{data}/share/jupyter/labextensions/{NAME}"
    with zipfile.ZipFile(wheel) as z:
        package = json.loads(z.read(f"{target}/package.json"))
        install = json.loads(z.read(f"{target}/install.json"))
    assert package["name"] == NAME
    assert f"{target}/{package['jupyterlab']['_build']['load']}" in names  # the remote entry
    assert install["packageManager"] == "python" and install["packageName"] == "relay_nb"
    # Only the bundle: no node_modules, no TypeScript, no source maps.
    shipped = [n for n in names if n.startswith(target)]
    assert not [n for n in shipped if "node_modules" in n or n.endswith((".ts", ".map"))]
    assert sum(zipfile.ZipFile(wheel).getinfo(n).file_size for n in shipped) < 200_000


def test_the_prebuilt_bundle_is_built_from_the_current_source():
    spec = importlib.util.spec_from_file_location("labextension_hash", ROOT / "scripts" / "labextension_hash.py")
    hashing = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hashing)
    recorded = (FOLDER / "prebuilt.sha256").read_text().strip()
    assert recorded == hashing.source_hash(FOLDER), (
        "labextension/src changed since labextension/prebuilt was built: run scripts/build_labextension.sh"
    )
    built = json.loads((FOLDER / "prebuilt" / "package.json").read_text())
    source = json.loads((FOLDER / "package.json").read_text())
    assert (built["name"], built["version"]) == (source["name"], source["version"]) == (NAME, source["version"])


def test_the_editor_highlights_the_words_the_pygments_lexer_does():
    source = (FOLDER / "src" / "relay.ts").read_text()
    assert _ts_list(source, "KEYWORDS") == pygments_lexer.KEYWORDS
    assert _ts_list(source, "CONSTANTS") == pygments_lexer.CONSTANTS
    assert _ts_list(source, "DTYPES") == pygments_lexer.DTYPES


def test_the_relay_kernel_names_the_language_the_extension_registers():
    pytest.importorskip("ipykernel")
    from relay_nb.notebook.kernel import RelayKernel

    info = RelayKernel.language_info
    index = (FOLDER / "src" / "index.ts").read_text()
    registered = re.search(r"addLanguage\(\{(.*?)\}\)", index, re.S).group(1)
    assert f"name: '{info['codemirror_mode']}'" in registered
    assert f"mime: '{info['mimetype']}'" in registered
    assert f"'{info['file_extension'].lstrip('.')}'" in registered
    kernelspec = json.loads((ROOT / "kernels" / "relay" / "kernel.json").read_text())
    assert kernelspec["language"] == info["name"] == "relay"
