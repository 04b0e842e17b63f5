"""Where compiled kernels are kept and for which processor (flexmbs.runtime.kernel_cache): a
kernel cache made in one place loads in a copy of the package elsewhere (the wheel's
shipped kernels), only for the numba, Python, target and sources it was made for; the
processor is chosen before numba compiles; what a run cannot find is compiled into the
user cache, saying why."""

import json
import os
import pickle
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numba
import pytest

from flexmbs.cli.precompile import native_choice
from flexmbs.runtime import kernel_cache

ROOT = Path(__file__).resolve().parents[1]
JIT = os.environ.get("NUMBA_DISABLE_JIT") != "1"

_CALL = textwrap.dedent("""
    import json, sys
    sys.path.insert(0, sys.argv[1])
    import numpy as np
    from flexmbs.runtime.config import TARGET, CACHE_DIR
    from flexmbs.numerics.linalg import cross
    import flexmbs
    out = np.zeros(3)
    cross(np.array([1.0, 0, 0]), np.array([0, 1.0, 0]), out)
    print(json.dumps({"kind": TARGET.kind, "shipped": TARGET.shipped, "why": TARGET.why,
                      "hits": sum(cross._cache_hits.values()),
                      "misses": sum(cross._cache_misses.values()),
                      "package": flexmbs.__file__, "cache": CACHE_DIR,
                      "out": out.tolist()}))
""")


def _call(site, cache, **env):
    """Run _CALL with the package at `site` and the user cache under `cache`."""
    run_env = {k: v for k, v in os.environ.items()
               if k not in ("NUMBA_CACHE_DIR", "NUMBA_CPU_NAME", "FLEXMBS_KERNELS")}
    run_env.update(FLEXMBS_CACHE_DIR=str(cache), PYTHONPATH="", **env)
    r = subprocess.run([sys.executable, "-c", _CALL, str(site)], env=run_env,
                       capture_output=True, text=True, timeout=900, cwd="/")
    assert r.returncode == 0, r.stderr[-2000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def copied_package(tmp_path_factory):
    """A copy of the package's sources in a new folder (as an installation puts them)."""
    site = tmp_path_factory.mktemp("site")
    shutil.copytree(ROOT / "flexmbs", site / "flexmbs",
                    ignore=shutil.ignore_patterns("__pycache__", "_kernels"))
    return site


@pytest.mark.skipif(not JIT, reason="numba off")
def test_kernels_compiled_elsewhere_load_from_a_copied_package(copied_package, tmp_path):
    """A kernel compiled (generic processor) with the checkout's package, its entries
    copied into the copied package's _kernels with a manifest: the copy loads it from
    there without compiling, and compiles nothing into its user cache (which keeps
    only numba's runtime module and the source hash, flexmbs.runtime.cached_library and
    kernel_cache.source_hash). A manifest of another numba release is refused with
    the reason, and the kernel then compiles into the user cache."""
    build_cache, user_cache = tmp_path / "build", tmp_path / "user"
    made = _call(ROOT, build_cache, FLEXMBS_KERNELS="generic")
    assert made["kind"] == "generic" and made["misses"] == 1 and made["out"] == [0, 0, 1]
    shipped = copied_package / "flexmbs" / "_kernels"
    foreign = Path(made["cache"]) / "tests_0123456789abcdef0123456789abcdef01234567"
    foreign.mkdir()
    (foreign / "test_law.law-1.py311.nbi").write_bytes(b"not an index of the package's")
    unreadable = Path(made["cache"]) / "_" / "tuple_ref._store_tuple-1.py311.nbi"
    unreadable.parent.mkdir(exist_ok=True)
    unreadable.write_bytes(pickle.dumps(numba.__version__) + b"cno_such_module_here\nPair\n.")
    skipped = []
    functions, size = kernel_cache.copy_entries(made["cache"], shipped, "generic", skipped)
    assert functions >= 1 and size > 0
    assert not (shipped / foreign.name).exists(), "a test's or a user's entries stay behind"
    assert skipped == [str(unreadable)] and not (shipped / "_" / unreadable.name).exists()
    record = kernel_cache.build_record("generic", "")
    (shipped / kernel_cache.MANIFEST).write_text(json.dumps(record))

    used = _call(copied_package, user_cache)
    assert used["package"].startswith(str(copied_package))
    assert (used["kind"], used["shipped"], used["why"]) == ("generic", True, None)
    assert (used["hits"], used["misses"]) == (1, 0) and used["out"] == [0, 0, 1]
    written = [p.name for p in user_cache.rglob("*") if p.is_file()]
    assert not [n for n in written if n.endswith((".nbi", ".nbc"))], "nothing compiles"
    assert all(n.startswith(("nrt-", "source-hash-")) for n in written), written

    (shipped / kernel_cache.MANIFEST).write_text(json.dumps(dict(record, numba="0.1.0")))
    other = _call(copied_package, tmp_path / "user2")
    assert other["kind"] == "generic" and not other["shipped"]
    assert "numba 0.1.0" in other["why"] and other["misses"] == 1


def test_a_manifest_names_what_does_not_fit(monkeypatch, tmp_path):
    """shipped_problem: None for this installation's record; otherwise the field that
    differs, each in words; no manifest at all says how to get one."""
    monkeypatch.setattr(kernel_cache, "SHIPPED_DIR", tmp_path)
    assert "make wheel" in kernel_cache.shipped_problem()
    record = kernel_cache.build_record("generic", "")
    for field, value, words in [("python", "2.7", "Python 2.7"),
                                ("triple", "aarch64-unknown-linux-gnu", "aarch64"),
                                ("source_hash", "0123456789ab", "kernel sources"),
                                ("numba", "0.67.0", "numba 0.67.0")]:
        (tmp_path / kernel_cache.MANIFEST).write_text(json.dumps(dict(record, **{field: value})))
        assert words in kernel_cache.shipped_problem()
    (tmp_path / kernel_cache.MANIFEST).write_text(json.dumps(record))
    assert kernel_cache.shipped_problem() is None
    (tmp_path / kernel_cache.MANIFEST).write_text("{")
    assert "cannot be read" in kernel_cache.shipped_problem()


def test_the_source_hash_is_kept_while_the_sources_are_unchanged(monkeypatch, tmp_path):
    """source_hash reads the kept result while the package's files keep their sizes
    and times, and hashes the contents again when one changes (a kernel's module, or
    a module that begins to drive kernels); an unreadable record is hashed over."""
    package, cache = tmp_path / "package", tmp_path / "cache"
    (package / "sub").mkdir(parents=True)
    (package / "kernels.py").write_text("import numba\n")
    (package / "sub" / "plain.py").write_text("x = 1\n")
    (package / "kernel_cache.py").write_text("import numba  # NOT_CODE\n")
    monkeypatch.setattr(kernel_cache, "PACKAGE_ROOT", package)
    monkeypatch.setenv("FLEXMBS_CACHE_DIR", str(cache))

    def fresh():
        for kept in cache.glob("source-hash-*.json"):
            kept.unlink()
        return kernel_cache.source_hash()

    first = fresh()
    assert len(list(cache.glob("source-hash-*.json"))) == 1
    assert kernel_cache.source_hash() == first
    os.utime(package / "kernel_cache.py", ns=(1, 1))  # left out of the hash and record
    assert kernel_cache.source_hash() == first
    (package / "kernels.py").write_text("import numba\nY = 2\n")
    changed = kernel_cache.source_hash()
    assert changed != first and changed == fresh()
    (package / "sub" / "plain.py").write_text("from numba import njit\n")
    drives = kernel_cache.source_hash()
    assert drives not in (first, changed) and drives == fresh()
    next(cache.glob("source-hash-*.json")).write_text("[1, 2")
    assert kernel_cache.source_hash() == drives


_TARGET = ("import json; from flexmbs.runtime.config import TARGET; import numba; "
           "print(json.dumps([TARGET.kind, TARGET.shipped, numba.config.CPU_NAME]))")


def _target(cache, **env):
    run_env = {k: v for k, v in os.environ.items()
               if k not in ("NUMBA_CACHE_DIR", "NUMBA_CPU_NAME", "FLEXMBS_KERNELS")}
    run_env.update(FLEXMBS_CACHE_DIR=str(cache), **env)
    r = subprocess.run([sys.executable, "-c", _TARGET], env=run_env, capture_output=True,
                       text=True, cwd=ROOT, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_the_processor_is_chosen_before_numba_compiles(tmp_path):
    """FLEXMBS_KERNELS chooses; NUMBA_CPU_NAME is numba's and kept; a native marker
    written by `flexmbs precompile --native` for this machine makes native the
    default, and one written for another processor does not."""
    default = _target(tmp_path)
    assert default == ["generic", False, "generic"]
    assert _target(tmp_path, FLEXMBS_KERNELS="generic") == ["generic", False, "generic"]
    assert _target(tmp_path, FLEXMBS_KERNELS="native") == ["native", False, None]
    assert _target(tmp_path, NUMBA_CPU_NAME="haswell") == ["haswell", False, "haswell"]
    r = subprocess.run([sys.executable, "-c",
                        "from flexmbs.runtime.config import CACHE_DIR; from flexmbs.cli.precompile "
                        "import write_native_marker; write_native_marker(CACHE_DIR, {})"],
                       env=dict(os.environ, FLEXMBS_CACHE_DIR=str(tmp_path)), cwd=ROOT,
                       check=True, capture_output=True, text=True)
    assert r.returncode == 0
    assert _target(tmp_path) == ["native", False, None]
    assert _target(tmp_path, FLEXMBS_KERNELS="generic")[0] == "generic"
    marker = next(tmp_path.rglob(kernel_cache.NATIVE_MARKER))
    record = json.loads(marker.read_text())
    marker.write_text(json.dumps(dict(record, cpu="another")))
    assert _target(tmp_path) == default


def test_native_kernels_are_kept_only_when_measurably_faster():
    fast = {"H2": {"ratio": 1.12}, "arm": {"ratio": 1.08}}
    slow = {"H2": {"ratio": 1.12}, "arm": {"ratio": 1.01}}
    assert native_choice(fast)[0] and "1.08" in native_choice(fast)[1]
    keep, sentence = native_choice(slow)
    assert not keep and "1.01" in sentence and "generic" in sentence


def test_a_user_cache_that_cannot_be_written_warns_once_and_the_run_goes_on(tmp_path):
    """The kernel compiles and runs; the warning names the folder and the remedy."""
    code = ("import warnings, numpy as np; warnings.simplefilter('error', RuntimeWarning)\n"
            "from flexmbs.numerics.linalg import cross\n"
            "o = np.zeros(3)\n"
            "try:\n"
            "    cross(np.ones(3), np.ones(3), o)\n"
            "except RuntimeWarning as w:\n"
            "    print('WARNED', w)\n")
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["FLEXMBS_CACHE_DIR"] = str(blocked)
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       cwd=ROOT, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    if JIT:
        assert "WARNED" in r.stdout and "FLEXMBS_CACHE_DIR" in r.stdout


def test_the_wheel_build_hook_puts_the_kernels_in_the_package(tmp_path):
    """setup.py's build step copies FLEXMBS_SHIP_KERNELS into flexmbs/_kernels of the
    built package, and nothing without it."""
    pytest.importorskip("setuptools")
    kernels = tmp_path / "kernels"
    (kernels / "dynamics").mkdir(parents=True)
    (kernels / "manifest.json").write_text("{}")
    (kernels / "dynamics" / "x.nbi").write_bytes(b"1")
    for ship in (True, False):
        build = tmp_path / f"build{ship}"
        env = dict(os.environ, FLEXMBS_SHIP_KERNELS=str(kernels)) if ship else \
            {k: v for k, v in os.environ.items() if k != "FLEXMBS_SHIP_KERNELS"}
        r = subprocess.run([sys.executable, "setup.py", "-q", "build_py", "--build-lib",
                            str(build)], cwd=ROOT, env=env, capture_output=True, text=True,
                           timeout=300)
        assert r.returncode == 0, r.stderr[-2000:]
        assert (build / "flexmbs" / "runtime" / "kernel_cache.py").is_file()
        assert (build / "flexmbs" / "_kernels" / "dynamics" / "x.nbi").is_file() == ship
