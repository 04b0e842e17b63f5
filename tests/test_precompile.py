"""Compiling the output quantities in a second process (flexmbs.precompile): the process
fills the kernel cache that a run then loads from, and is started only when the cache
lacks those kernels."""

import subprocess
import sys
from pathlib import Path

from flexmbs.precompile import OutputKernelsElsewhere, output_kernels_cached

ROOT = Path(__file__).resolve().parents[1]


def test_the_second_process_fills_the_cache_and_is_not_started_again(tmp_path):
    assert not output_kernels_cached(str(tmp_path))  # an empty cache lacks them
    r = subprocess.run([sys.executable, "-m", "flexmbs.precompile"], cwd=ROOT,
                       capture_output=True, text=True, timeout=1800)
    assert r.returncode == 0, r.stderr[-2000:]
    assert output_kernels_cached()
    assert OutputKernelsElsewhere.start_if_useful() is None
