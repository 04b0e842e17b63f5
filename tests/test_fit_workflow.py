"""The fit's workflow on a disk on a torsion spring (one run: hundredths of a second):
the budget of runs is the user's and a fit that spends it reports its last point with
its standard deviations; `--resume` goes on from there and converges; the progress
says each step once; `--window` counts only the window's samples; several records
share values and keep their own (their initial angles) in one search.

The records are the model's own runs at rtol 1e-10 with white noise of SIGMA rad."""

import json

import numpy as np
import pytest
from cli_in_process import flexmbs_here

from flexmbs import load_model
from flexmbs.analysis import fit as fit_module
from flexmbs.analysis import fit_runs
from flexmbs.analysis.channel_map import load_channel_map
from flexmbs.analysis.experiment import read_experiment
from flexmbs.analysis.fit import FitRecord, fit_model, fit_records, parse_parameter
from flexmbs.simulation import simulate

SIGMA = 1e-3  # rad
TRUE = {"joints.shaft.stiffness": 1.0, "joints.shaft.damping": 0.004}
START = ["joints.shaft.stiffness=1.2", "joints.shaft.damping=0.0048"]  # 20 % off
PARAMS = ["joints.shaft.stiffness", "joints.shaft.damping"]

DISK = """
[model]
name = "torsion_disk"
gravity = [0.0, 0.0, -9.81]

[solver]
method = "bdf"
t_end = 2.0

[output]
step = 0.002

[bodies.disk]
mass = 1.0
inertia = [0.01, 0.01, 0.01]
inertia_about = "com"

[joints.shaft]
type = "revolute"
parent = "ground"
child = "disk"
axis = [0.0, 0.0, 1.0]
stiffness = 1.0
damping = 0.004
initial = 0.5

[sensors.angle]
type = "joint_coordinate"
joint = "shaft"
"""

MAP = """
[experiment]
time = "time"

[alignment]
method = "offset"
offset = 0.0

[channels.angle]
sensor = "angle"
experiment = "angle"
raw_unit = "rad"
unit = "rad"
noise = 0.001
"""


def _record(tmp_path, name="record", overrides=(), seed=1, spoil_before=None):
    """The disk's model file, a record of its run (SIGMA of noise; the samples before
    `spoil_before` s moved by 0.2 rad) and its channel map."""
    model_file = tmp_path / "disk.toml"
    model_file.write_text(DISK)
    sim = simulate(load_model(model_file, list(overrides)), rtol=1e-10, atol=1e-12)
    assert sim.success, sim.message
    angle = sim.sensor("angle") + SIGMA * np.random.default_rng(seed).normal(size=len(sim.t))
    if spoil_before is not None:
        angle[sim.t < spoil_before] += 0.2
    record = tmp_path / f"{name}.csv"
    rows = [f"{t:.4f},{a:.9f}" for t, a in zip(sim.t, angle)]
    record.write_text("time [s],angle [rad]\n" + "\n".join(rows) + "\n")
    channel_map = tmp_path / f"{name}.map.toml"
    channel_map.write_text(MAP)
    return model_file, record, channel_map


def _read(record, channel_map):
    cmap = load_channel_map(channel_map)
    return read_experiment(record, cmap.time_name, cmap.group), cmap


def _count_runs(monkeypatch):
    """The runs the fit really makes, counted where they are made."""
    made = []
    real = fit_runs._simulated_signals

    def counted(*args, **kwargs):
        made.append(args[1])
        return real(*args, **kwargs)

    monkeypatch.setattr(fit_runs, "_simulated_signals", counted)
    return made


@pytest.mark.parametrize("max_runs", [6, 11, 17])
def test_the_budget_is_the_runs_the_user_gave(tmp_path, monkeypatch, max_runs):
    """Two values, the offset held: each step is a run and a Jacobian of two, so the
    fit stops when fewer than 3 runs are left: it makes between max_runs - 2 and
    max_runs runs (counted where they run), says why it stopped and gives the
    standard deviations of its last point."""
    model_file, record, channel_map = _record(tmp_path)
    experiment, cmap = _read(record, channel_map)
    made = _count_runs(monkeypatch)
    fit = fit_model(model_file, experiment, cmap, [parse_parameter(p) for p in PARAMS],
                    overrides=["joints.shaft.stiffness=2.0", "joints.shaft.damping=0.02"],
                    fit_offset=False, max_runs=max_runs, verify_limit=None)
    assert fit.stop == "budget" and not fit.success and fit.std_at == "last point"
    assert len(made) == fit.runs
    assert max_runs - 2 <= fit.runs <= max_runs
    assert f"budget of {max_runs} runs is spent: {fit.runs} made" in fit.message
    text = fit_module.format_fit_report(fit, resume="x/fit.json")
    assert "std (last point)" in text and "--resume x/fit.json" in text


def test_a_fit_that_converges_needs_no_more_than_its_runs(tmp_path, monkeypatch):
    """From 20 % off the fit converges well within 200 runs, the values within three
    standard deviations (at the optimum) of the truth, s^2 near 1."""
    model_file, record, channel_map = _record(tmp_path)
    experiment, cmap = _read(record, channel_map)
    made = _count_runs(monkeypatch)
    fit = fit_model(model_file, experiment, cmap, [parse_parameter(p) for p in PARAMS],
                    overrides=START, fit_offset=False, verify_limit=None)
    assert fit.stop == "converged" and fit.std_at == "optimum", fit.message
    assert len(made) == fit.runs < 200
    for path, true in TRUE.items():
        v = fit.value(path)
        assert abs(v.value - true) < 3 * v.std, (path, v)
    assert 0.8 < fit.variance_ratio < 1.2


def test_a_fit_stopped_on_its_budget_is_resumed_and_converges(tmp_path, capsys):
    """`flexmbs fit` with too few runs exits 3 (not a failure of the fit: its outputs
    are written, its last point's standard deviations in fit.json); `--resume
    fit.json` goes on from that point to convergence (exit 0); the progress says each
    step once, with the runs, the cost, the time and what is left."""
    model_file, record, channel_map = _record(tmp_path)
    out = tmp_path / "fit"
    args = ["fit", model_file, record, "--map", channel_map, "--fixed-offset", "--serial",
            "--no-plots", "-o", out]
    for p, s in zip(PARAMS, ["joints.shaft.stiffness=1.5", "joints.shaft.damping=0.006"]):
        args += ["--param", p, "--set", s]
    done = flexmbs_here(capsys, *args, "--max-runs", 9)
    assert done.returncode == 3, done.stderr
    assert "stopped on its budget" in done.stderr and "--resume" in done.stderr
    assert "Traceback" not in done.stderr
    progress = [line for line in done.stderr.splitlines() if " of 9: cost " in line]
    assert progress and len(progress) == len(set(progress))
    assert all("left (about" in line for line in progress)
    first = json.loads((out / "fit.json").read_text())["fit"]
    assert first["stop"] == "budget" and first["std_at"] == "last point"
    assert first["runs"] <= 9
    header = (out / "disk_fitted.toml").read_text().splitlines()[:5]
    assert any("UNCONVERGED" in line and "budget" in line for line in header)

    again = flexmbs_here(capsys, "fit", "--resume", out / "fit.json", "--serial", "--no-plots",
                         "--json", "-q")
    assert again.returncode == 0, again.stderr
    second = json.loads(again.stdout)["fit"]
    assert second["stop"] == "converged" and second["std_at"] == "optimum"
    starts = {v["path"]: v["start"] for v in second["values"]}
    for v in first["values"]:
        assert starts[v["path"]] == pytest.approx(v["value"], rel=1e-12)  # went on from there
    for v in second["values"]:
        assert abs(v["value"] - TRUE[v["path"]]) < 3 * v["std"], v


def test_the_window_alone_is_fitted(tmp_path):
    """A record spoilt before 1 s (moved by 0.2 rad) fitted over the window 1 to 2 s of
    model time: the samples are the window's, the state at 1 s the model's (the runs
    start at 0), and the values are recovered with s^2 near 1; over the whole record
    the spoilt part would dominate the cost."""
    model_file, record, channel_map = _record(tmp_path, spoil_before=1.0)
    experiment, cmap = _read(record, channel_map)
    params = [parse_parameter(p) for p in PARAMS]
    fit = fit_model(model_file, experiment, cmap, params, overrides=START, fit_offset=False,
                    window=(1.0, 2.0))
    assert fit.stop == "converged", fit.message
    inside = (experiment.time >= 1.0) & (experiment.time <= 2.0)
    assert fit.samples == {"angle": int(inside.sum())}
    assert fit.window == (pytest.approx(1.0), pytest.approx(2.0))
    assert 0.8 < fit.variance_ratio < 1.2
    for path, true in TRUE.items():
        v = fit.value(path)
        assert abs(v.value - true) < 3 * v.std, (path, v)
    whole = fit_model(model_file, experiment, cmap, params, overrides=START,
                      fit_offset=False, verify_limit=None, max_runs=8)
    assert whole.variance_ratio > 100  # the spoilt samples, had they counted


def test_several_records_share_their_values_and_keep_their_own(tmp_path):
    """Two records of the disk, released from 0.5 and -0.3 rad with inertias 0.01 and
    0.02 kg m^2: one search over both recovers the shared spring and damper and each
    record's initial angle (its own value) from 20 % off, within three standard
    deviations and 1 %; the report gives each record's cost and s^2."""
    (tmp_path / "a").mkdir()
    a_model, a_record, a_map = _record(tmp_path / "a", "a")
    b_over = ["joints.shaft.initial=-0.3", "bodies.disk.inertia=[0.02, 0.02, 0.02]"]
    (tmp_path / "b").mkdir()
    b_model, b_record, b_map = _record(tmp_path / "b", "b", b_over, seed=2)
    records = []
    for name, model, rec, cmap_path, over, start in [
        ("a", a_model, a_record, a_map, [], 0.4),
        ("b", b_model, b_record, b_map, b_over[1:], -0.24),
    ]:
        experiment, cmap = _read(rec, cmap_path)
        records.append(FitRecord(model, experiment, cmap, over + START
                                 + [f"joints.shaft.initial={start}"],
                                 [parse_parameter("joints.shaft.initial")], name=name))
    fit = fit_records(records, [parse_parameter(p) for p in PARAMS], fit_offset=False,
                      verify_limit=None)
    assert fit.stop == "converged", fit.message
    truth = dict(TRUE, **{"a:joints.shaft.initial": 0.5, "b:joints.shaft.initial": -0.3})
    assert [v.name for v in fit.values] == list(truth)
    for name, true in truth.items():
        v = fit.value(name)
        assert abs(v.value - true) < max(3 * v.std, 1e-12) and abs(v.value - true) < 0.01 * abs(
            true), (name, v)
    assert [r["name"] for r in fit.records] == ["a", "b"]
    for r in fit.records:
        assert 0.7 < r["variance_ratio"] < 1.3
    text = fit_module.format_fit_report(fit)
    assert "records:" in text and "a:joints.shaft.initial" in text


def test_a_fit_file_names_the_records(tmp_path, capsys):
    """`flexmbs fit --records FILE`: the records of a fit file, their outputs in a
    folder each; a bad field of the file is one line naming it (exit 2)."""
    (tmp_path / "a").mkdir()
    _record(tmp_path / "a", "a")
    (tmp_path / "b").mkdir()
    _record(tmp_path / "b", "b", ["joints.shaft.initial=-0.3"], seed=2)
    fit_file = tmp_path / "two.fit.toml"
    fit_file.write_text(
        'param = ["joints.shaft.stiffness", "joints.shaft.damping"]\n'
        'set = ["joints.shaft.stiffness=1.2", "joints.shaft.damping=0.0048"]\n\n'
        '[records.a]\nmodel = "a/disk.toml"\nexperiment = "a/a.csv"\nmap = "a/a.map.toml"\n'
        'window = [0.0, 1.0]\n\n'
        '[records.b]\nmodel = "b/disk.toml"\nexperiment = "b/b.csv"\nmap = "b/b.map.toml"\n'
        'set = ["joints.shaft.initial=-0.3"]\nwindow = [0.5, 1.5]\n')
    out = tmp_path / "out"
    done = flexmbs_here(capsys, "fit", "--records", fit_file, "--fixed-offset", "--serial",
                        "--no-plots", "-o", out, "--json", "-q")
    assert done.returncode == 0, done.stderr
    fit = json.loads(done.stdout)["fit"]
    assert [r["window"] for r in fit["records"]] == [[0.0, 1.0], [0.5, 1.5]]
    assert (out / "a" / "disk_fitted.toml").exists() and (out / "b" / "report.md").exists()
    for v in fit["values"]:
        assert v["value"] == pytest.approx(TRUE[v["path"]], rel=0.05)
    short = flexmbs_here(capsys, "fit", "--records", fit_file, "--serial", "--no-plots",
                         "-o", tmp_path / "short", "--max-runs", 12, "-q")
    assert short.returncode == 3, short.stderr
    stopped = json.loads((tmp_path / "short" / "fit.json").read_text())["fit"]
    again = flexmbs_here(capsys, "fit", "--resume", tmp_path / "short" / "fit.json",
                         "--serial", "--no-plots", "--json", "-q")
    assert again.returncode == 0, again.stderr
    resumed = json.loads(again.stdout)["fit"]
    assert [r["window"] for r in resumed["records"]] == [[0.0, 1.0], [0.5, 1.5]]
    starts = {(v["record"] or "") + ":" + v["path"]: v["start"] for v in resumed["values"]}
    for v in stopped["values"]:
        assert starts[(v["record"] or "") + ":" + v["path"]] == pytest.approx(v["value"], rel=1e-12)
    for v in resumed["values"]:
        if v["path"] in TRUE:
            assert v["value"] == pytest.approx(TRUE[v["path"]], rel=0.05)
    fit_file.write_text('param = ["joints.shaft.stiffness"]\n[records.a]\nmodel = "a/disk.toml"\n'
                        'experiment = "a/a.csv"\nmap = "a/a.map.toml"\nwindow = [1.0, 0.5]\n')
    bad = flexmbs_here(capsys, "fit", "--records", fit_file, "--serial", "-o", out)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert 'record "a"' in bad.stderr and 'field "window"' in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1


def test_the_least_budget_and_the_forms_of_the_command(tmp_path, capsys):
    model_file, record, channel_map = _record(tmp_path)
    experiment, cmap = _read(record, channel_map)
    params = [parse_parameter(p) for p in PARAMS]
    from flexmbs.errors import ModelError
    with pytest.raises(ModelError, match=r"expected --max-runs >= 4"):
        fit_model(model_file, experiment, cmap, params, fit_offset=False, max_runs=3)
    both = flexmbs_here(capsys, "fit", model_file, record, "--map", channel_map, "--param",
                        PARAMS[0], "--window", 0, 1, "--t-end", 1, "--serial")
    assert both.returncode == 2 and "--window" in both.stderr
    none = flexmbs_here(capsys, "fit", "--serial")
    assert none.returncode == 2 and "--records" in none.stderr


def test_the_reference_lists_every_field_of_a_fit_file():
    from pathlib import Path

    from flexmbs.analysis.fit_file import RECORD_FIELDS, TOP_FIELDS
    page = (Path(__file__).resolve().parents[1] / "docs" / "reference"
            / "experiment-files.md").read_text()
    section = page[page.index("## Fit files"):]
    missing = [k for k in list(TOP_FIELDS) + list(RECORD_FIELDS) if f"| `{k}` |" not in section]
    assert not missing, missing


def test_the_convergence_check_counts_its_window_alone(tmp_path, capsys):
    """Two runs that differ only before 1 s: compared over 1 to 2 s they agree (the
    change there is zero), over the whole run they do not; `flexmbs verify --window`
    says which window it compared, and its largest changes lie in it."""
    from types import SimpleNamespace

    from flexmbs.simulation.convergence import compare_runs
    model_file, _, _ = _record(tmp_path)
    model = load_model(model_file)
    sim = simulate(model, rtol=1e-8, atol=1e-10)
    fine = SimpleNamespace(t=sim.t, y=sim.y.copy(), sensors=sim.sensors.copy(),
                           energy=np.asarray(sim.energy).copy())
    early = sim.t < 1.0
    fine.y[early, 0] += 1e-3
    fine.sensors[early, 0] += 1e-3
    whole = {g.name: g for g in compare_runs(model, sim, fine, 1e-4)}
    inside = {g.name: g for g in compare_runs(model, sim, fine, 1e-4, (1.0, 2.0))}
    assert not whole["sensor angle"].passed and not whole["joint coordinates"].passed
    assert inside["sensor angle"].change == 0.0 and inside["joint coordinates"].change == 0.0
    done = flexmbs_here(capsys, "verify", model_file, "--window", 1.0, 2.0, "--json", "-q")
    assert done.returncode == 0, done.stderr
    conv = json.loads(done.stdout)
    assert conv["window"] == [1.0, 2.0]
    assert all(1.0 <= g["at_time"] <= 2.0 for g in conv["groups"] if g["at_time"] is not None)


def test_compare_counts_its_window_alone(tmp_path, capsys):
    """A run compared with a record spoilt before 1 s: over the window 1 to 2 s the
    errors are the noise's (RMSE near SIGMA), over the whole record the spoilt part's;
    the report says which window it compared."""
    model_file, record, channel_map = _record(tmp_path, spoil_before=1.0)
    result = tmp_path / "disk.h5"
    simulate(load_model(model_file), result, rtol=1e-10, atol=1e-12, output_step=0.0005)
    whole = flexmbs_here(capsys, "compare", result, record, "--map", channel_map, "--json",
                         "--no-plots", "-o", tmp_path / "c1")
    window = flexmbs_here(capsys, "compare", result, record, "--map", channel_map, "--json",
                          "--no-plots", "-o", tmp_path / "c2", "--window", 1.0, 2.0)
    assert whole.returncode == 0 and window.returncode == 0, window.stderr
    a, b = json.loads(whole.stdout), json.loads(window.stdout)
    assert a["channels"][0]["rmse"] > 0.1
    assert b["channels"][0]["rmse"] == pytest.approx(SIGMA, rel=0.2)
    base = b["common_time_base"]
    assert 1.0 <= base["t_start"] < 1.01 and 1.99 < base["t_end"] <= 2.0
    assert any("--window" in note for note in b["notes"])


@pytest.mark.parametrize("max_runs", [16, 200])
def test_records_with_and_without_a_quantizing_sensor(tmp_path, max_runs):
    """A record whose model has a quantizing sensor (its Jacobian taken on the trend)
    beside one whose model has none: stopped on its budget or converged, the fit
    reports both records; the trend of the second is the first's own runs."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    a_model, a_record, a_map = _record(tmp_path / "a", "a")
    b_model, b_record, b_map = _record(tmp_path / "b", "b", seed=2)
    b_model.write_text(DISK + '\n[sensors.encoder]\ntype = "joint_coordinate"\n'
                       'joint = "shaft"\nresolution = 0.0015339807878856412\n')
    records = []
    for name, model, rec, cmap_path in [("a", a_model, a_record, a_map),
                                        ("b", b_model, b_record, b_map)]:
        experiment, cmap = _read(rec, cmap_path)
        records.append(FitRecord(model, experiment, cmap, START, name=name))
    fit = fit_records(records, [parse_parameter(p) for p in PARAMS], fit_offset=False,
                      verify_limit=None, max_runs=max_runs)
    assert fit.smooth_jacobian == ["encoder"]
    assert fit.stop == ("budget" if max_runs == 16 else "converged"), fit.message
    assert fit.runs <= max_runs and len(fit.quantization_shift) == 2
    assert [r["name"] for r in fit.records] == ["a", "b"]
    if fit.stop == "converged":
        for path, true in TRUE.items():
            v = fit.value(path)
            assert abs(v.value - true) < 3 * v.std, (path, v)
