"""The Binder configuration: repo2docker files, and postBuild's install steps run for real in a
fresh virtual environment (system site-packages visible, so nothing big is downloaded)."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BINDER = ROOT / "binder"
# What a checkout holds that the build needs (a copy keeps the work tree untouched).
COPIED = ("pyproject.toml", "README.md", "relay_nb", "kernels", "widgets", "binder", "labextension")


def test_repo2docker_files():
    assert (BINDER / "runtime.txt").read_text().strip() == "python-3.11"
    assert not (BINDER / "Dockerfile").exists() and not (ROOT / "Dockerfile").exists()
    requirements = (BINDER / "requirements.txt").read_text().splitlines()
    names = {line.split(">")[0].split("=")[0].strip() for line in requirements if line.strip() and not line.startswith("#")}
    assert {"jupyterlab", "ipywidgets", "nbclient"} <= names
    post = BINDER / "postBuild"
    assert post.stat().st_mode & stat.S_IXUSR, "postBuild must be executable"
    text = post.read_text()
    assert text.startswith("#!/bin/bash") and "set -euo pipefail" in text
    assert 'pip install --no-cache-dir ".[notebook]"' in text
    assert "python -m relay_nb.kernelspec install --sys-prefix" in text


def _copy_checkout(dest: Path) -> None:
    # node_modules: the labextension's npm packages, if it was built here (not shipped).
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info", ".ipynb_checkpoints", "node_modules", ".yarn")
    for name in COPIED:
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=ignore)
        else:
            shutil.copy2(src, dest / name)


def test_postbuild_installs_relay_nb_and_both_kernels_in_a_fresh_venv(tmp_path):
    env_dir, repo, elsewhere = tmp_path / "venv", tmp_path / "repo", tmp_path / "elsewhere"
    venv.EnvBuilder(system_site_packages=True, with_pip=False).create(env_dir)
    repo.mkdir()
    _copy_checkout(repo)
    elsewhere.mkdir()
    python = env_dir / "bin" / "python"
    env = {
        k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "JUPYTER_PATH", "JUPYTER_DATA_DIR")
    }
    # repo2docker runs postBuild from the repository root with its environment first on PATH.
    env.update(PATH=f"{env_dir / 'bin'}{os.pathsep}{env['PATH']}", VIRTUAL_ENV=str(env_dir), PIP_NO_INPUT="1")
    build = subprocess.run(["bash", "binder/postBuild"], cwd=repo, env=env, capture_output=True, text=True, timeout=600)
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]

    # From another folder, so the checkout itself is not importable: the venv's copy is used.
    probe = subprocess.run(
        [
            str(python), "-c",
            "import json, relay_nb, relay_nb.kernelspec as ks\n"
            "from jupyter_client.kernelspec import KernelSpecManager\n"
            "specs = KernelSpecManager().get_all_specs()\n"
            "print(json.dumps({'file': relay_nb.__file__,\n"
            "  'specs': {n: specs[n] for n in ks.KERNEL_NAMES if n in specs}}))",
        ],
        cwd=elsewhere, env=env, capture_output=True, text=True, timeout=120,
    )
    assert probe.returncode == 0, probe.stderr
    found = json.loads(probe.stdout)
    assert Path(found["file"]).is_relative_to(env_dir)
    for name, display in (("relay_nb", "Python 3 (relay_nb)"), ("relay", "Relay")):
        spec = found["specs"][name]
        assert Path(spec["resource_dir"]).is_relative_to(env_dir / "share" / "jupyter" / "kernels")
        assert spec["spec"]["display_name"] == display
        assert spec["spec"]["argv"][0] == str(python)

    # The installed Relay kernel's module runs from the venv too.
    check = subprocess.run(
        [str(python), "-c", "import relay_nb.notebook.kernel as k; print(k.RelayKernel.language_info['name'])"],
        cwd=elsewhere, env=env, capture_output=True, text=True, timeout=120,
    )
    assert check.returncode == 0 and check.stdout.strip() == "relay", check.stderr

    # The prebuilt JupyterLab extension that highlights Relay, installed with no Node.js.
    listing = subprocess.run(
        [str(python), "-m", "jupyterlab.labextensions", "list"],
        cwd=elsewhere, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    text = listing.stdout + listing.stderr
    assert listing.returncode == 0, text
    (line,) = [ln for ln in text.splitlines() if "relay-nb-highlight" in ln]
    assert "enabled" in line and "OK" in line and "relay_nb" in line, line
    assert (env_dir / "share" / "jupyter" / "labextensions" / "relay-nb-highlight" / "install.json").is_file()
    assert sys.executable != str(python)
