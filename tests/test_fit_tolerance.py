"""The tolerance of a fit's runs: the model file's own, ten times tighter at a step
until the convergence check (the run against one ten times tighter, over the fitted
window) passes; no tighter than that, and reported. The model: a disk on a torsion
spring, its file's rtol 1e-3 too loose for a check of 1e-4 of the angle's scale."""

import numpy as np
import pytest
from test_fit_workflow import DISK as WORKFLOW_DISK
from test_fit_workflow import MAP

from flexmbs import load_model
from flexmbs.analysis.channel_map import loads_channel_map
from flexmbs.analysis.experiment import read_experiment
from flexmbs.analysis.fit import (
    fit_model,
    parse_parameter,
    quantizing_sensors,
    unquantized_overrides,
)
from flexmbs.analysis.fit_tolerance import converged_tolerance
from flexmbs.simulation import simulate
from flexmbs.simulation.convergence import compare_runs

LIMIT = 1e-4
STEP = 2e-4  # s, the runs' outputs (the fit's: a tenth of the record's 2 ms)
# the fit workflow's disk and map, its file's tolerance loosened to 1e-3
DISK = WORKFLOW_DISK.replace('t_end = 2.0\n', 't_end = 2.0\nrtol = 1e-3\natol = 1e-5\n', 1)
assert "rtol = 1e-3" in DISK


@pytest.fixture
def model_file(tmp_path):
    path = tmp_path / "disk.toml"
    path.write_text(DISK)
    return path


def _passes(model, rtol, atol):
    """The convergence check at (rtol, atol) against ten times tighter, by hand."""
    runs = [simulate(model, None, rtol=rtol / f, atol=atol / f, output_step=STEP)
            for f in (1.0, 10.0)]
    groups = compare_runs(model, runs[0], runs[1], LIMIT, (0.0, 2.0))
    return all(g.passed for g in groups if g.name == "sensor angle")


def test_the_tolerance_is_the_first_that_converges(model_file):
    """From the file's rtol 1e-3 the search stops at the first tolerance whose check
    passes: the check fails at ten times looser (so no looser one would do), and the
    atol goes down with the rtol."""
    found = converged_tolerance(str(model_file), [], 2.0, (0.0, 2.0), 1e-3, 1e-5, STEP,
                                LIMIT, {"angle": 0.0}, tighten=True)
    assert found.kind == "converged"
    assert found.rtol < 1e-3 and found.atol == pytest.approx(found.rtol / 100)
    steps = round(np.log10(1e-3 / found.rtol))
    assert found.runs == steps + 2  # each step's tighter run is the next's looser
    model = load_model(model_file)
    assert _passes(model, found.rtol, found.atol)
    assert not _passes(model, 10 * found.rtol, 10 * found.atol)
    held = converged_tolerance(str(model_file), [], 2.0, (0.0, 2.0), 1e-3, 1e-5, STEP,
                               LIMIT, {"angle": 0.0}, tighten=False)
    assert held.kind == "moves" and held.rtol == 1e-3 and "sensor angle" in held.text


def test_a_fit_runs_at_the_tolerance_the_check_found(model_file, tmp_path):
    """The fit without --rtol starts from the model's 1e-3, runs at the tolerance the
    check found (reported, with how it was had) and recovers the values; without the
    check it keeps the model's own."""
    sim = simulate(load_model(model_file, ["joints.shaft.stiffness=1.0"]), rtol=1e-10,
                   atol=1e-12)
    angle = sim.sensor("angle") + 1e-3 * np.random.default_rng(3).normal(size=len(sim.t))
    record = tmp_path / "record.csv"
    record.write_text("time [s],angle [rad]\n"
                      + "\n".join(f"{t:.4f},{a:.9f}" for t, a in zip(sim.t, angle)) + "\n")
    cmap = loads_channel_map(MAP, str(tmp_path / "map.toml"))
    experiment = read_experiment(record, cmap.time_name, cmap.group)
    params = [parse_parameter("joints.shaft.stiffness")]
    found = converged_tolerance(str(model_file), ["joints.shaft.stiffness=1.2"], 2.0,
                                (0.0, 2.0), 1e-3, 1e-5, STEP, LIMIT, {"angle": 0.0}, True)
    fit = fit_model(model_file, experiment, cmap, params, fit_offset=False,
                    overrides=["joints.shaft.stiffness=1.2"], verify_limit=LIMIT)
    assert fit.rtol == found.rtol and fit.atol == found.atol
    assert "the model's rtol 0.001 tightened" in fit.tolerance
    assert fit.to_dict()["tolerance"] == fit.tolerance
    value = fit.value("joints.shaft.stiffness")
    assert abs(value.value - 1.0) < 3 * value.std
    unchecked = fit_model(model_file, experiment, cmap, params, fit_offset=False,
                          overrides=["joints.shaft.stiffness=1.2"], verify_limit=None,
                          max_runs=4)
    assert (unchecked.rtol, unchecked.atol) == (1e-3, 1e-5)
    assert unchecked.tolerance == "the model's, unchecked"


def test_a_controller_resolution_quantizes_too():
    """A sensor that quantizes only what the controller reads is a quantizing sensor,
    and its trend sets both resolutions it gives to 0."""
    doc = {"sensors": {"a": {"resolution": 0.001}, "b": {"controller_resolution": 0.002},
                       "c": {"resolution": 0.0, "controller_resolution": 0.0}, "d": {},
                       "e": {"resolution": 0.001, "controller_resolution": 0.0}}}
    assert quantizing_sensors(doc) == ["a", "b", "e"]
    assert unquantized_overrides(doc) == [
        "sensors.a.resolution=0.0",
        "sensors.b.controller_resolution=0.0",
        "sensors.e.resolution=0.0",
        "sensors.e.controller_resolution=0.0",
    ]


def test_the_tolerance_holds_the_integration_error_below_the_noise(model_file):
    """A record far less noisy than the check's limit of the scale asks for a tighter
    tolerance: the change at ten times tighter stays below half the noise."""
    by_scale = converged_tolerance(str(model_file), [], 2.0, (0.0, 2.0), 1e-3, 1e-5, STEP,
                                   LIMIT, {"angle": 0.0}, tighten=True)
    sigma = 1e-7  # rad, far below 1e-4 of the angle's 0.5 rad
    by_noise = converged_tolerance(str(model_file), [], 2.0, (0.0, 2.0), 1e-3, 1e-5, STEP,
                                   LIMIT, {"angle": sigma}, tighten=True)
    assert by_noise.kind == "converged" and by_noise.rtol < by_scale.rtol
    model = load_model(model_file)
    runs = [simulate(model, None, rtol=by_noise.rtol / f, atol=by_noise.atol / f,
                     output_step=STEP) for f in (1.0, 10.0)]
    change = {g.name: g.change for g in compare_runs(model, runs[0], runs[1], LIMIT)}
    assert change["sensor angle"] <= 0.5 * sigma


def test_the_end_checks_step_is_the_least_squares_step_in_standard_deviations():
    """_step_in_sd: the Gauss-Newton step toward other residuals, -(J^T J)^-1 J^T dr,
    is the least-squares solution of J d = -dr, and its size is counted in the
    standard deviations sqrt(s^2 (J^T J)^-1_ii) of the values."""
    from flexmbs.analysis.fit_search import _step_in_sd

    rng = np.random.default_rng(7)
    jac = rng.normal(size=(200, 3))
    r = rng.normal(size=200)
    toward = rng.normal(size=200)
    d = np.linalg.lstsq(jac, -toward, rcond=None)[0]
    s2 = (r @ r) / (200 - 3)
    sd = np.sqrt(s2 * np.diag(np.linalg.inv(jac.T @ jac)))
    assert _step_in_sd(jac, r, toward) == pytest.approx(np.max(np.abs(d) / sd), rel=1e-10)
    assert _step_in_sd(jac, r, jac @ np.array([0.0, 2.0 * sd[1], 0.0])) == pytest.approx(2.0)
