"""The kernelspecs: shipped files, the installer, and the ``relay_nb`` kernel started for real."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from kernel_testing import execute, kernel_dirs, running_kernel

import relay_nb.kernelspec as ks
from relay_nb.errors import RelayError

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("name", ks.KERNEL_NAMES)
def test_shipped_kernel_json_is_the_installer_spec_with_bare_python(name):
    shipped = json.loads((ROOT / "kernels" / name / "kernel.json").read_text())
    assert shipped == ks.kernel_dict(name)
    assert shipped["argv"][0] == "python"  # Jupyter swaps in its own interpreter


def test_specs_name_the_kernels_and_their_launchers():
    nb, rl = ks.kernel_dict("relay_nb"), ks.kernel_dict("relay")
    assert nb["display_name"] == "Python 3 (relay_nb)" and nb["language"] == "python"
    assert nb["argv"][1:] == ["-m", "ipykernel_launcher", "-f", "{connection_file}", "--ext=relay_nb"]
    assert rl["display_name"] == "Relay" and rl["language"] == "relay"
    assert rl["argv"][1:] == ["-m", "relay_nb.notebook.kernel", "-f", "{connection_file}"]


def test_unknown_kernel_name_is_a_relay_error():
    with pytest.raises(RelayError, match="unknown kernel 'python3'"):
        ks.kernel_dict("python3")


def test_install_into_a_prefix_writes_this_interpreter(tmp_path, capsys):
    assert ks.main(["install", "--prefix", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    for name in ks.KERNEL_NAMES:
        spec_file = tmp_path / "share" / "jupyter" / "kernels" / name / "kernel.json"
        spec = json.loads(spec_file.read_text())
        assert spec["argv"][0] == sys.executable
        assert spec["argv"][1:] == ks.kernel_dict(name)["argv"][1:]
        assert f"installed {name}: " in out

    from jupyter_client.kernelspec import KernelSpecManager

    found = KernelSpecManager(kernel_dirs=kernel_dirs(tmp_path)).get_all_specs()
    assert found["relay"]["spec"]["language"] == "relay"
    assert found["relay_nb"]["spec"]["display_name"] == "Python 3 (relay_nb)"


def test_install_one_kernel_then_list_and_uninstall(tmp_path, monkeypatch, capsys):
    from jupyter_client.kernelspec import KernelSpecManager

    # Look only in the temporary prefix: never list or remove the machine's own kernels.
    monkeypatch.setattr(ks, "_manager", lambda: KernelSpecManager(kernel_dirs=kernel_dirs(tmp_path)))
    assert ks.main(["install", "--prefix", str(tmp_path), "--name", "relay"]) == 0
    capsys.readouterr()
    assert ks.main(["list"]) == 0
    listing = capsys.readouterr().out
    assert "relay_nb: not installed" in listing
    assert f"relay: {tmp_path / 'share' / 'jupyter' / 'kernels' / 'relay'}" in listing
    assert ks.main(["uninstall"]) == 0
    assert "removed" in capsys.readouterr().out
    assert ks.installed() == {}


def test_user_and_prefix_together_are_refused(tmp_path):
    with pytest.raises(SystemExit) as exc:
        ks.main(["install", "--user", "--prefix", str(tmp_path)])
    assert exc.value.code == 2
    with pytest.raises(RelayError, match="either"):
        ks.install(user=True, prefix=str(tmp_path))


def test_install_error_is_reported_without_traceback(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    assert ks.main(["install", "--prefix", str(blocker)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "Traceback" not in err


def test_module_entry_point_installs(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "relay_nb.kernelspec", "install", "--prefix", str(tmp_path)],
        capture_output=True, text=True, cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in (tmp_path / "share" / "jupyter" / "kernels").iterdir()) == ["relay", "relay_nb"]


def test_relay_nb_kernel_has_the_magic_preloaded(tmp_path):
    ks.install(prefix=str(tmp_path))
    with running_kernel("relay_nb", tmp_path) as kc:
        # No %load_ext: the kernelspec's --ext=relay_nb loaded it.
        cell = execute(kc, "%%relay -n f --run 2.5 4\ndef @main(%x: float32, %y: float32) { %x * %y }")
        assert cell.status == "ok", cell.error
        assert cell.data()[-1] == "10.0"
        check = execute(kc, "import sys\nprint(sys.executable)\nfloat(f_result)")
        assert check.stdout.strip() == sys.executable
        assert check.data() == ["10.0"]
        # A Relay error in a %%relay cell: located, with a caret, no Python traceback.
        bad = execute(kc, "%%relay\ndef @main(%x: int32) {\n  add(%x, %y)\n}")
        assert bad.status == "error"
        assert "cell:3:11" in bad.error and "^^" in bad.error and "Traceback" not in bad.error
