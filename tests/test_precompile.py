"""Compiling the output quantities in a second process (flexmbs.precompile): the process
fills the kernel cache that a run then loads from, and is started only when the cache
lacks those kernels and it is not switched off."""

import subprocess
import sys
from pathlib import Path

import flexmbs.precompile as precompile
from flexmbs.precompile import OutputKernelsElsewhere, output_kernels_cached

ROOT = Path(__file__).resolve().parents[1]


def test_the_second_process_fills_the_cache_and_is_not_started_again(tmp_path, monkeypatch):
    assert not output_kernels_cached(str(tmp_path))  # an empty cache lacks them
    r = subprocess.run([sys.executable, "-m", "flexmbs.precompile"], cwd=ROOT,
                       capture_output=True, text=True, timeout=1800)
    assert r.returncode == 0, r.stderr[-2000:]
    assert output_kernels_cached()
    monkeypatch.setenv("FLEXMBS_COMPILE_ELSEWHERE", "1")
    assert OutputKernelsElsewhere.start_if_useful() is None  # cached: nothing to do


def test_the_second_process_starts_on_a_cold_cache_unless_switched_off(monkeypatch):
    monkeypatch.setattr(precompile, "output_kernels_cached", lambda cache_dir=None: False)
    monkeypatch.setattr(precompile, "_a_core_is_free", lambda: True)
    started = []

    class Process:
        def __init__(self, argv, **kwargs):
            started.append(argv)

    monkeypatch.setattr(precompile.subprocess, "Popen", Process)
    monkeypatch.setenv("FLEXMBS_COMPILE_ELSEWHERE", "0")
    assert OutputKernelsElsewhere.start_if_useful() is None and not started
    monkeypatch.setenv("FLEXMBS_COMPILE_ELSEWHERE", "1")
    helper = OutputKernelsElsewhere.start_if_useful()
    assert helper is not None and started == [[sys.executable, "-m", "flexmbs.precompile"]]
