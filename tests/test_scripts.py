"""The two commands' shell scripts: which Python they use, JupyterLab as root, and the
workspace of tutorial copies that JupyterLab opens (so the checkout stays clean)."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = ROOT / "scripts"


def _load_workspace():
    spec = importlib.util.spec_from_file_location("lab_workspace", SCRIPTS / "lab_workspace.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _fake_python(path: Path, log: Path) -> Path:
    """An executable that logs its arguments; ``-m venv DIR`` also makes DIR/bin/python."""
    path.write_text(
        "#!/usr/bin/env bash\n"
        f'echo "$0 $*" >> {log}\n'
        'if [ "$1 $2" = "-m venv" ]; then\n'
        '  dir="${@: -1}"; mkdir -p "$dir/bin"; cp "$0" "$dir/bin/python"\n'
        "fi\n"
    )
    path.chmod(0o755)
    return path


def _env_without_python_choice(**extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "CONDA_PREFIX", "RELAY_NB_PYTHON", "RELAY_NB_USE_ACTIVE_PYTHON")}
    return {**env, **extra}


def _chosen_python(checkout: Path, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", "-c", 'source scripts/python_env.sh && echo "$RELAY_NB_PYTHON"'],
        cwd=checkout, env=env, capture_output=True, text=True, timeout=60,
    )


@pytest.fixture
def checkout(tmp_path):
    (tmp_path / "scripts").mkdir()
    shutil.copy(SCRIPTS / "python_env.sh", tmp_path / "scripts")
    return tmp_path


def test_a_venv_in_the_checkout_is_the_default(checkout, tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "log"
    _fake_python(bin_dir / "python3", log)
    env = _env_without_python_choice(PATH=f"{bin_dir}:{os.environ['PATH']}")
    done = _chosen_python(checkout, env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(checkout / ".venv" / "bin" / "python")
    assert f"-m venv --clear {checkout / '.venv'}" in log.read_text()
    assert "RELAY_NB_USE_ACTIVE_PYTHON=1" in done.stderr  # the opt-out is named
    log.unlink()
    again = _chosen_python(checkout, env)  # the second run reuses it
    assert again.stdout == done.stdout and "-m venv" not in log.read_text()


@pytest.mark.parametrize(
    "extra, says",
    [({"VIRTUAL_ENV": "/somewhere/env"}, "/somewhere/env"), ({"CONDA_PREFIX": "/opt/conda/envs/x"}, "/opt/conda/envs/x"), ({"RELAY_NB_USE_ACTIVE_PYTHON": "1"}, "RELAY_NB_USE_ACTIVE_PYTHON=1")],
)
def test_an_active_environment_or_the_opt_out_uses_python_on_path(checkout, extra, says):
    done = _chosen_python(checkout, _env_without_python_choice(**extra))
    assert done.returncode == 0 and done.stdout.strip() == "python" and says in done.stderr
    assert not (checkout / ".venv").exists()


def test_main_job_opens_the_workspace_and_allows_root_only_as_root(tmp_path):
    log = tmp_path / "log"
    python = _fake_python(tmp_path / "python", log)
    done = subprocess.run(
        ["bash", str(SCRIPTS / "main.sh"), "--no-browser"],
        env=_env_without_python_choice(RELAY_NB_PYTHON=str(python)),
        capture_output=True, text=True, timeout=60,
    )
    assert done.returncode == 0, done.stderr
    lab = [line for line in log.read_text().splitlines() if "-m jupyterlab" in line]
    assert len(lab) == 1 and "--notebook-dir=workspace" in lab[0] and lab[0].endswith("--no-browser")
    assert "scripts/lab_workspace.py workspace" in log.read_text()
    as_root = os.geteuid() == 0
    assert ("--allow-root" in lab[0]) == as_root
    assert ("running as root" in done.stderr) == as_root


def test_workspace_gets_copies_and_keeps_the_learners_work(tmp_path):
    workspace = _load_workspace()
    course = tmp_path / "tutorials"
    course.mkdir()
    for name in ("01_a.ipynb", "02_b.ipynb", "checks.py", "README.md"):
        (course / name).write_text(f"course {name}")
    dest = tmp_path / "workspace"
    assert workspace.copy_tutorials(dest, course) == (["01_a.ipynb", "02_b.ipynb"], [])
    assert sorted(p.name for p in dest.iterdir()) == ["01_a.ipynb", "02_b.ipynb", "README.md", "checks.py"]
    (dest / "01_a.ipynb").write_text("my answers")
    (course / "checks.py").write_text("course checks v2")
    assert workspace.copy_tutorials(dest, course) == ([], ["01_a.ipynb"])
    assert (dest / "01_a.ipynb").read_text() == "my answers"
    assert (dest / "checks.py").read_text() == "course checks v2"


def test_the_venv_and_the_workspace_are_git_ignored():
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    done = subprocess.run(["git", "check-ignore", ".venv/", "workspace/"], cwd=ROOT, capture_output=True, text=True)
    assert done.stdout.split() == [".venv/", "workspace/"]
