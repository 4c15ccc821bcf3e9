"""The JIT's disk cache of compiled kernels (relay_nb/backend/llvm/disk_cache.py).

A kernel is loaded from disk only by a process that has not compiled it itself, so the
end-to-end tests run the build in fresh subprocesses sharing one cache directory.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import relay_nb as relay
from relay_nb.backend.llvm import disk_cache

ROOT = Path(__file__).resolve().parents[1]

# conv2d (a tiled anchor calling runtime routines), an elementwise epilogue with a
# constant, dense (another runtime routine): every kind of code the cache holds
PROGRAM = """
def @main(%x: Tensor[(1, 3, 8, 8), float32], %w: Tensor[(4, 3, 3, 3), float32], %d: Tensor[(10, 256), float32]) {
  %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1]);
  %1 = nn.relu(add(%0, 0.5f));
  %2 = reshape(%1, newshape=[1, 256]);
  nn.dense(%2, %d)
}
"""

WORKER = f"""
import json, sys
import numpy as np
import relay_nb as relay
from relay_nb.backend.llvm.cache import default_cache
lib = relay.build(relay.parse({PROGRAM!r}))
rng = np.random.default_rng(0)
args = [rng.standard_normal(s).astype("float32") for s in ((1, 3, 8, 8), (4, 3, 3, 3), (10, 256))]
out = lib(*args)
kernels = [k for k in lib.kernels if k.native]
lazy = all(k._compiled.text_bytes() == 0 for k in kernels if k.from_disk)
print(json.dumps({{
    "out": out.tobytes().hex(),
    "stats": default_cache().stats(),
    "from_disk": [k.from_disk for k in kernels],
    "lazy": lazy,
    "ir": [k.ir for k in kernels],
    "report": str(lib.report()),
    "split": [[k._parallel, k._unit_ns, k._chunk_ns] for k in kernels],
}}))
"""


def _run(cache: Path, extra_env: dict | None = None) -> subprocess.Popen:
    env = dict(os.environ, RELAY_NB_CACHE_DIR=str(cache), PYTHONPATH=str(ROOT), **(extra_env or {}))
    return subprocess.Popen([sys.executable, "-c", WORKER], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _result(proc: subprocess.Popen) -> dict:
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err
    return json.loads(out.strip().splitlines()[-1])


def _build(cache: Path) -> dict:
    return _result(_run(cache))


@pytest.fixture(scope="module")
def populated(tmp_path_factory) -> tuple[Path, dict]:
    """A cache directory filled by one process, and that process's result."""
    cache = tmp_path_factory.mktemp("populated")
    return cache, _build(cache)


def _copy(src: Path, dst: Path) -> Path:
    dst.mkdir()
    for f in src.iterdir():
        (dst / f.name).write_bytes(f.read_bytes())
    return dst


def test_a_fresh_process_loads_every_kernel_from_disk(populated, tmp_path):
    cache, first = populated
    assert first["stats"]["compiles"] >= 3 and first["stats"]["disk_loads"] == 0
    assert not any(first["from_disk"])
    warm = _build(_copy(cache, tmp_path / "c"))
    assert warm["stats"]["compiles"] == 0
    assert warm["stats"]["disk_loads"] == first["stats"]["compiles"]
    assert all(warm["from_disk"])
    assert warm["out"] == first["out"]  # the same machine code: bitwise the same result
    assert warm["lazy"]  # no LLVM IR was generated for loaded kernels ...
    assert warm["ir"] == first["ir"]  # ... until asked for: then the same IR as compiled
    n = len(warm["from_disk"])
    assert f"{n} native, 0 fell back to numpy; {n} loaded from the disk cache" in warm["report"]
    assert f"0 compiled, {n} loaded from disk" in warm["report"]
    assert warm["report"].count("native (disk cache)") == n
    # a loaded kernel splits across threads as the compiled one does
    assert warm["split"] == first["split"] and any(p > 0 for p, _, _ in first["split"])


def _truncate(data: bytes, i: int) -> bytes:
    return data[: len(data) // 2]


def _random(data: bytes, i: int) -> bytes:
    return np.random.default_rng(i).integers(0, 256, len(data), dtype=np.uint8).tobytes()


def _flip(data: bytes, i: int) -> bytes:
    b = bytearray(data)
    b[-10] ^= 0x40  # in the machine code
    return bytes(b)


def _foreign(data: bytes, i: int) -> bytes:
    """A whole, checksummed entry made on another CPU (the path is the same only through a
    hash collision or a copied directory: the header must still refuse it)."""
    import hashlib

    n = len(disk_cache.MAGIC)
    size = int.from_bytes(data[n + 32 : n + 40], "little")
    header = json.loads(data[n + 40 : n + 40 + size])
    header["environment"] = header["environment"].replace("features ", "features -avx512f,")
    raw = json.dumps(header).encode()
    rest = len(raw).to_bytes(8, "little") + raw + data[n + 40 + size :]
    return disk_cache.MAGIC + hashlib.sha256(rest).digest() + rest


CORRUPTIONS = {"truncated": _truncate, "random bytes": _random, "flipped bit": _flip, "other CPU": _foreign}


@pytest.mark.parametrize("how", [*CORRUPTIONS, "other kernel's entry"])
def test_corrupt_or_foreign_entries_are_rebuilt_not_loaded(populated, tmp_path, how):
    cache, first = populated
    cache = _copy(cache, tmp_path / "c")
    files = sorted(cache.iterdir())
    contents = [f.read_bytes() for f in files]
    for i, f in enumerate(files):
        if how == "other kernel's entry":  # each file holds the next one's entry
            f.write_bytes(contents[(i + 1) % len(files)])
        else:
            f.write_bytes(CORRUPTIONS[how](contents[i], i))
    again = _build(cache)
    assert again["stats"]["disk_loads"] == 0
    assert again["stats"]["compiles"] == first["stats"]["compiles"]
    assert again["out"] == first["out"]
    if how == "truncated":  # the rebuilt entries replaced the bad ones
        warm = _build(cache)
        assert all(warm["from_disk"]) and warm["out"] == first["out"]


def test_concurrent_processes_building_the_same_module_do_not_corrupt_it(tmp_path):
    cache = tmp_path / "c"
    procs = [_run(cache) for _ in range(4)]
    results = [_result(p) for p in procs]
    assert len({r["out"] for r in results}) == 1
    assert not [f for f in cache.iterdir() if not f.name.endswith(".o") or f.name.startswith(".tmp")]
    warm = _build(cache)
    assert all(warm["from_disk"]) and warm["stats"]["compiles"] == 0
    assert warm["out"] == results[0]["out"]


def _fresh_module(n: int) -> relay.IRModule:
    # a shape this test module uses nowhere else: a key no earlier test compiled
    return relay.parse(f"def @main(%x: Tensor[({n}, 7), float32]) {{ tanh(%x) * 3f }}")


def test_kernels_are_stored_in_RELAY_NB_CACHE_DIR_and_clear_cache_deletes_them(tmp_path, monkeypatch):
    monkeypatch.setenv("RELAY_NB_CACHE_DIR", str(tmp_path / "k"))
    lib = relay.build(_fresh_module(1013))
    np.testing.assert_allclose(lib(np.ones((1013, 7), "float32"))[0, 0], 3 * np.tanh(1.0), rtol=1e-6)
    stored = list((tmp_path / "k").glob("*.o"))
    assert stored
    assert relay.backend.clear_cache() == len(stored)
    assert not list((tmp_path / "k").iterdir())


def test_RELAY_NB_DISK_CACHE_0_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("RELAY_NB_CACHE_DIR", str(tmp_path / "k"))
    monkeypatch.setenv("RELAY_NB_DISK_CACHE", "0")
    lib = relay.build(_fresh_module(1019))
    assert lib.kernels[0].native
    assert not (tmp_path / "k").exists()


def test_an_unwritable_cache_directory_only_costs_time(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("RELAY_NB_CACHE_DIR", str(blocker / "k"))
    lib = relay.build(_fresh_module(1021))
    np.testing.assert_allclose(lib(np.zeros((1021, 7), "float32")), 0)


def test_the_cache_directory_follows_XDG_CACHE_HOME_then_home(tmp_path, monkeypatch):
    monkeypatch.delenv("RELAY_NB_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert disk_cache.cache_dir() == tmp_path / "xdg" / "relay_nb"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert disk_cache.cache_dir() == tmp_path / "home" / ".cache" / "relay_nb"


def test_the_test_suite_never_uses_the_users_cache_directory():
    assert Path(os.environ["RELAY_NB_CACHE_DIR"]).name.startswith("relay_nb_test_kernels_")


def test_load_refuses_an_entry_for_another_key(tmp_path, monkeypatch):
    monkeypatch.setenv("RELAY_NB_CACHE_DIR", str(tmp_path))
    assert disk_cache.store("key a", {"n": 1}, b"object a")
    assert disk_cache.load("key a") == ({"n": 1}, b"object a")
    [a] = tmp_path.iterdir()
    assert disk_cache.store("key b", {"n": 2}, b"object b")
    [b] = [f for f in tmp_path.iterdir() if f != a]
    b.write_bytes(a.read_bytes())  # the path of "key b" holds the entry of "key a"
    assert disk_cache.load("key b") is None
    assert disk_cache.load("key c") is None


def test_only_code_exporting_just_its_entry_point_is_stored():
    ir = """define void @"k_1"(ptr %".1") nounwind
{
}
@"taps0" = private constant [1 x i64] [i64 0]
define internal void @"helper"() {
}
declare void @"relay_nb_dot_float32"(i1 %".1")
"""
    assert disk_cache.exports(ir) == ["k_1"]
    assert disk_cache.externals(ir) == ["relay_nb_dot_float32"]
    # an externally visible global would clash with another process's of that name
    assert disk_cache.exports(ir + '@"taps1" = constant [1 x i64] [i64 0]\n') == ["k_1", "taps1"]


PACKED_WORKER = """
import json
import numpy as np
import relay_nb as relay
x = relay.var("x", shape=(1, 32, 12, 12))
w = relay.var("w", shape=(48, 32, 3, 3))
mod = relay.IRModule.from_expr(relay.Function([x, w], relay.nn.relu(relay.nn.conv2d(x, w, padding=(1, 1)))))
rng = np.random.default_rng(3)
weights = rng.standard_normal((48, 32, 3, 3)).astype("float32")
data = rng.standard_normal((1, 32, 12, 12)).astype("float32")
lib = relay.build(mod, params={"w": weights}, threads=1)  # w constant: packed into panels
(k,) = lib.kernels
want = relay.create_executor("interpreter", mod=mod).evaluate()(data, weights)
print(json.dumps({"out": lib(data).tobytes().hex(), "from_disk": k.from_disk,
                  "packed": any(a is not b for a, b in zip(k._constants, k._sources)),
                  "err": float(np.abs(lib(data) - want).max())}))
"""


def _cold_then_warm(worker: str, cache: Path) -> tuple[dict, dict]:
    """The JSON last printed by ``worker`` run in two fresh processes sharing ``cache``."""
    env = dict(os.environ, RELAY_NB_CACHE_DIR=str(cache), PYTHONPATH=str(ROOT))
    runs = []
    for _ in range(2):
        done = subprocess.run([sys.executable, "-c", worker], env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr
        runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    return runs[0], runs[1]


def test_a_kernel_reading_packed_weights_loads_from_disk_with_their_layout(tmp_path):
    """The entry says how the kernel's constants are packed: a loaded conv with constant
    weights packs them as the compiled one did (it read them unpacked: wrong results)."""
    cold, warm = _cold_then_warm(PACKED_WORKER, tmp_path)
    assert cold["packed"] and not cold["from_disk"]
    assert warm["packed"] and warm["from_disk"]
    assert warm["out"] == cold["out"] and cold["err"] < 1e-4


RULES_WORKER = f"""
import json
import sys
import numpy as np
import relay_nb as relay
from relay_nb.backend.llvm import codegen
rng = np.random.default_rng(5)
args = [rng.standard_normal(s).astype("float32") for s in ((1, 3, 8, 8), (4, 3, 3, 3), (10, 256))]
plain = relay.build(relay.parse({PROGRAM!r}))(*args)
rules_loaded = codegen._LOADED
generator = [m for m in ("relay_nb.backend.llvm.codegen.lower", "relay_nb.backend.llvm.kernels.driver") if m in sys.modules]
# a kernel a rewrite rule decomposes (the pad adds a constant), with a constant of its own
mod = relay.parse('''
def @main(%w: Tensor[(3, 3, 5, 6), float32], %b: Tensor[(2, 8, 8, 4), float32]) {{
  add(nn.contrib_conv2d_gemm_weight_transform(%w, tile_N=4, tile_K=8), %b)
}}''')
w = rng.standard_normal((3, 3, 5, 6)).astype("float32")
b = rng.standard_normal((2, 8, 8, 4)).astype("float32")
lib = relay.build(mod, params={{"b": b}})
got = lib(w)
want = relay.create_executor("interpreter", mod=mod).evaluate()(w, b)
print(json.dumps({{"rules_loaded": rules_loaded, "generator": generator, "plain": plain.tobytes().hex(), "out": got.tobytes().hex(),
                  "from_disk": [k.from_disk for k in lib.kernels if k.native],
                  "err": float(np.abs(got - want).max())}}))
"""


def test_a_warm_build_loads_no_lowering_rules_and_decomposed_kernels_stay_right(tmp_path):
    """Whether a rewrite rule decomposed a kernel is stored with its code: a warm build
    finds its kernels' constants without importing every op's lowering rule (12-19 ms of a
    warm ResNet-50 build) or the code generator (kernel_abi.py, routines.py: ~25 ms),
    and a decomposed kernel still gets its constants in lower's order."""
    cold, warm = _cold_then_warm(RULES_WORKER, tmp_path)
    assert cold["rules_loaded"] and not warm["rules_loaded"]
    assert len(cold["generator"]) == 2 and warm["generator"] == []
    assert warm["from_disk"] and all(warm["from_disk"]) and not any(cold["from_disk"])
    assert warm["plain"] == cold["plain"] and warm["out"] == cold["out"]
    assert cold["err"] == 0.0 and warm["err"] == 0.0


def test_the_routine_registry_names_every_dtype_the_routines_are_built_for():
    """routines.py lists the dtype names without importing codegen.types (a warm build
    does not load the generator): the list must stay the generator's."""
    from relay_nb.backend.llvm import routines
    from relay_nb.backend.llvm.codegen.types import _DTYPES

    assert sorted(routines.DTYPES) == sorted(_DTYPES)
    routines.require("relay_nb_pack_b_float32")  # a real routine loads (or compiles)
    with pytest.raises(KeyError):
        routines.require("relay_nb_pack_b_float16")
