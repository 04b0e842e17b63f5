"""`flexmbs sweep` and `flexmbs fit --workers`: runs spread over a two-worker dask
LocalCluster give what the same runs give here, and no case is lost."""

import csv
from pathlib import Path

import numpy as np
import pytest

from flexmbs import open_result
from flexmbs.analysis.sweep import (
    _output,
    parse_sweep_parameter,
    run_case,
    run_sweep,
    sweep_cases,
)
from flexmbs.cli import main
from flexmbs.errors import FlexmbsError, ModelError

pytest.importorskip("distributed")

ROOT = Path(__file__).resolve().parents[1]
H2 = ROOT / "data" / "models" / "huang_two_link.toml"
SHORT = ["solver.t_end=0.05", "output.step=0.01"]


@pytest.fixture(scope="module")
def executor():
    from flexmbs.analysis.distributed import dask_executor
    with dask_executor(workers=2) as ex:
        yield ex


def test_parameters_and_cases():
    p = parse_sweep_parameter("bodies.link2.alpha=0, 1e-4,2e-4")
    assert p.path == "bodies.link2.alpha" and p.values == ("0", "0.0001", "0.0002")
    q = parse_sweep_parameter("joints.joint1.initial=1:2:3")
    assert q.values == ("1.0", "1.5", "2.0")
    r = parse_sweep_parameter('solver.method=bdf,"galpha"')
    assert r.values == ('"bdf"', '"galpha"')
    assert sweep_cases([p, q])[:2] == [["bodies.link2.alpha=0", "joints.joint1.initial=1.0"],
                                       ["bodies.link2.alpha=0", "joints.joint1.initial=1.5"]]
    assert len(sweep_cases([p, q, r])) == 18
    for bad in ("nothing", "a=", "a=1:2:x", "a=1:2:0", "a=1,,2"):
        with pytest.raises(ModelError):
            parse_sweep_parameter(bad)


def test_a_sweep_on_two_workers_is_the_sweep_run_here(tmp_path, executor):
    params = [parse_sweep_parameter("bodies.link2.node_masses.-1=0.25,0.5"),
              parse_sweep_parameter("joints.joint1.initial=1.0:1.5:2")]
    summary = ["theta1", "tip_deflection[1]:maxabs", "energy.strain:max"]
    rows = run_sweep(H2, params, tmp_path / "sweep", SHORT, summary, executor)
    assert [r["case"] for r in rows] == [f"case_{k:03d}" for k in range(4)]
    with open(tmp_path / "sweep" / "summary.csv") as f:
        table = list(csv.DictReader(f))
    assert len(table) == 4 and table[3]["bodies.link2.node_masses.-1"] == "0.5"
    for k, (row, case) in enumerate(zip(rows, sweep_cases(params))):
        result = open_result(tmp_path / "sweep" / f"case_{k:03d}.h5")
        assert result.status == "finished" and row["status"] == "finished"
        assert result.model_overrides == SHORT + case  # each file says what it ran
        here = run_case(str(H2), SHORT + case, str(tmp_path / f"here_{k}.h5"), summary)
        for spec in summary:  # the same run, in another process: the same numbers
            assert row[spec] == here[spec], (k, spec)
        assert row["theta1"] == result.sensors["theta1"][-1]
    assert rows[0]["theta1"] != rows[2]["theta1"]  # the tip mass matters
    # a column by its label, as `flexmbs plot` takes it; a sensor of columns needs one
    assert _output(result, "tip_deflection[y]:maxabs") == rows[-1]["tip_deflection[1]:maxabs"]
    with pytest.raises(FlexmbsError, match=r"3 columns \(x, y, z\); name one as"):
        _output(result, "tip_deflection:max")


def test_the_fits_difference_columns_on_workers_are_the_fit_here(executor):
    """The same fit (one parameter, 1 s of the rig record) with its Jacobian's columns
    run on the workers: the same values, bit for bit."""
    from flexmbs.analysis.channel_map import load_channel_map
    from flexmbs.analysis.experiment import read_experiment
    from flexmbs.analysis.fit import fit_model, parse_parameter
    experiments = ROOT / "data" / "experiments"
    rig = ROOT / "data" / "models" / "huang_rig.toml"
    channel_map = load_channel_map(experiments / "rig_30deg_synthetic.map.toml")
    record = read_experiment(experiments / "rig_30deg_synthetic.csv", channel_map.time_name,
                             channel_map.group)
    args = dict(overrides=["joints.joint2.damping=0.08"], t_end=0.5, max_runs=8)
    params = [parse_parameter("joints.joint2.damping"), parse_parameter("joints.joint2.stiffness")]
    here = fit_model(rig, record, channel_map, params, **args)
    there = fit_model(rig, record, channel_map, params, executor=executor, **args)
    assert [v.value for v in there.values] == [v.value for v in here.values]
    assert there.runs == here.runs


def test_a_fit_of_two_records_on_workers_is_the_fit_here(tmp_path, executor):
    """Two records sharing two values, each with its initial angle: the records' runs
    and every Jacobian column on the workers give the fit made here, bit for bit, in
    as many runs (three steps of the search, on a budget of 26 runs)."""
    import test_fit_workflow as disk

    from flexmbs.analysis.fit import FitRecord, fit_records, parse_parameter
    records = []
    for name, over in [("a", []), ("b", ["joints.shaft.initial=-0.3"])]:
        (tmp_path / name).mkdir()
        model, record, cmap_path = disk._record(tmp_path / name, name, over)
        experiment, cmap = disk._read(record, cmap_path)
        records.append(FitRecord(model, experiment, cmap, over + disk.START,
                                 [parse_parameter("joints.shaft.initial")], name=name))
    params = [parse_parameter(p) for p in disk.PARAMS]
    args = dict(fit_offset=False, verify_limit=None, max_runs=26)  # three steps
    here = fit_records(records, params, **args)
    there = fit_records(records, params, executor=executor, **args)
    assert [v.value for v in there.values] == [v.value for v in here.values]
    np.testing.assert_array_equal([v.std for v in there.values], [v.std for v in here.values])
    assert there.runs == here.runs == 26 and there.stop == here.stop


def test_a_local_cluster_starts_only_for_slow_runs():
    """By default a fit's runs are made here while they are quick, and go to a local
    cluster once they take longer than the threshold each on average, the first left
    out (the cluster's start would cost more than quick runs side by side save)."""
    import time

    from flexmbs.analysis.distributed import LocalClusterWhenSlow
    said = []
    with LocalClusterWhenSlow(1, threshold=0.05, log=said.append) as ex:
        ex.submit(time.sleep, 0.2).result()  # the first: it loads the kernels
        assert list(ex.map(abs, [-1, -2])) == [1, 2] and not ex.started
        ex.submit(time.sleep, 0.5).result()
        assert not ex.started and not said
        assert ex.submit(abs, -3).result() == 3 and ex.started
        assert "local dask cluster of 1 workers" in said[0]
    assert not ex.started


def test_sweep_command_line(tmp_path, capsys):
    out = tmp_path / "s"
    args = ["sweep", str(H2), "--param", "joints.joint1.initial=1.0,1.2", "--set", SHORT[0],
            "--set", SHORT[1], "--summary", "theta1:max", "-o", str(out), "--serial", "-q"]
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "case_001" in text and "theta1:max" in text
    assert sorted(p.name for p in out.iterdir()) == ["case_000.h5", "case_001.h5",
                                                     "summary.csv"]
    bad = ["sweep", str(H2), "--param", "joints.joint1.initial=1:2:x", "-o", str(out)]
    assert main(bad) == 2
    assert "--param" in capsys.readouterr().err
    with pytest.raises(FlexmbsError, match="unknown statistic"):
        run_sweep(H2, [parse_sweep_parameter("joints.joint1.initial=1")], out, SHORT,
                  ["theta1:median"])
    assert main(["sweep", str(H2), "--param", "joints.nope.initial=1,2", "-o", str(out),
                 "--serial"]) == 2
    assert '"nope"' in capsys.readouterr().err


def _worker_kernels(model_path):
    """On a worker: its kernel target and cache, and what a short run of the model
    compiles there."""
    from flexmbs.formats.toml_reader import load_model
    from flexmbs.runtime.compile_notice import CompileWatch
    from flexmbs.runtime.config import CACHE_DIR, TARGET
    from flexmbs.simulation import simulate
    with CompileWatch() as watch:
        simulate(load_model(model_path, SHORT), None)
    return TARGET.kind, TARGET.shipped, CACHE_DIR, watch.functions


def test_workers_read_the_kernels_this_process_reads(executor):
    """A worker chooses the same processor and reads the same kernels (shipped and
    user cache) as the process that started it, so after `flexmbs precompile` (make
    test runs it first) a worker's run of H2 compiles nothing."""
    from flexmbs.cli.precompile import precompile
    from flexmbs.runtime.config import CACHE_DIR, TARGET
    precompile(jobs=1)
    kind, shipped, cache, compiled = executor.submit(_worker_kernels, str(H2)).result()
    assert (kind, shipped, cache) == (TARGET.kind, TARGET.shipped, CACHE_DIR)
    assert compiled == 0
