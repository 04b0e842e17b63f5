"""Compiling ahead: the output quantities in a second process (flexmbs.simulation.output_kernels),
which fills the kernel cache that a run then loads from and is started only when the
cache lacks those kernels and it is not switched off; and every kernel before the
first run (flexmbs.cli.precompile), its workloads reaching them all."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import flexmbs.cli.precompile as precompile
import flexmbs.simulation.output_kernels as output_kernels
from flexmbs.simulation.output_kernels import OutputKernelsElsewhere, output_kernels_cached

ROOT = Path(__file__).resolve().parents[1]


def test_the_second_process_fills_the_cache_and_is_not_started_again(tmp_path, monkeypatch):
    assert not output_kernels_cached(str(tmp_path))  # an empty cache lacks them
    r = subprocess.run([sys.executable, "-m", "flexmbs.simulation.output_kernels"], cwd=ROOT,
                       capture_output=True, text=True, timeout=1800)
    assert r.returncode == 0, r.stderr[-2000:]
    assert output_kernels_cached()
    monkeypatch.setenv("FLEXMBS_COMPILE_ELSEWHERE", "1")
    assert OutputKernelsElsewhere.start_if_useful() is None  # cached: nothing to do


def test_the_second_process_starts_on_a_cold_cache_unless_switched_off(monkeypatch):
    monkeypatch.setattr(output_kernels, "output_kernels_cached", lambda cache_dir=None: False)
    monkeypatch.setattr(output_kernels, "_a_core_is_free", lambda: True)
    started = []

    class Process:
        def __init__(self, argv, **kwargs):
            started.append(argv)

    monkeypatch.setattr(output_kernels.subprocess, "Popen", Process)
    monkeypatch.setenv("FLEXMBS_COMPILE_ELSEWHERE", "0")
    assert OutputKernelsElsewhere.start_if_useful() is None and not started
    monkeypatch.setenv("FLEXMBS_COMPILE_ELSEWHERE", "1")
    helper = OutputKernelsElsewhere.start_if_useful()
    assert helper is not None
    assert started == [[sys.executable, "-m", "flexmbs.simulation.output_kernels"]]


JIT = os.environ.get("NUMBA_DISABLE_JIT") != "1"


@pytest.mark.skipif(not JIT, reason="numba off")
def test_the_workloads_reach_every_kernel():
    """After `precompile` every kernel of the package that numba does not inline is
    in the cache for this processor: a kernel that no workload reaches (a new kind of
    model the library and data/models do not have) is named here. On a warm cache
    (make test runs `flexmbs precompile` first) no workload needs to run."""
    from flexmbs.runtime.kernel_cache import kernel_dispatchers
    r = precompile.precompile(jobs=1)
    assert r["uncached"] == [], r["uncached"]
    assert r["kernels"] > 100 and r["target"]["kind"] in ("generic", "native")
    assert set(precompile.NOT_RUN_KERNELS) <= set(kernel_dispatchers())


_NO_COMPILING = textwrap.dedent("""
    import json, sys, warnings
    from pathlib import Path
    from flexmbs.runtime.compile_notice import CompileWatch
    from flexmbs.formats.toml_reader import load_model
    from flexmbs.simulation import simulate
    from flexmbs.analysis.modes import model_modes
    warnings.simplefilter("ignore")
    compiled = {}
    for path in sorted(Path(sys.argv[1]).glob("*.toml")):
        model = load_model(str(path))
        with CompileWatch() as watch:
            for method in ("bdf", "galpha"):
                simulate(model, None, t_end=2e-3, output_step=1e-3, method=method)
            model_modes(model)
        compiled[path.name] = watch.functions
    print(json.dumps(compiled))
""")


@pytest.mark.skipif(not JIT, reason="numba off")
def test_every_model_file_runs_without_compiling_after_precompile():
    """Each model of data/models, under bdf and galpha and through `modes`, in a new
    process: nothing compiles (each kernel it needs was compiled ahead)."""
    precompile.precompile(jobs=1)
    r = subprocess.run([sys.executable, "-c", _NO_COMPILING, str(ROOT / "data" / "models")],
                       cwd=ROOT, capture_output=True, text=True, timeout=1800)
    assert r.returncode == 0, r.stderr[-2000:]
    compiled = json.loads(r.stdout.strip().splitlines()[-1])
    assert len(compiled) >= 10
    assert {k: v for k, v in compiled.items() if v} == {}


def test_the_workloads_come_from_the_library_and_the_solver_vocabulary():
    """Every library model that builds without arguments, and every model file of
    the checkout, is run with every solver."""
    from flexmbs.model.vocabulary import SOLVER_METHODS
    names = [name for name, _ in precompile.workloads()]
    assert "huang_two_link bdf" in names and "four_bar galpha projection" in names
    for method in SOLVER_METHODS:
        assert f"chain_model {method}" not in names   # needs an argument: not derived
        assert f"huang_two_link {method}" in names and f"four_bar.toml {method}" in names
