"""The checks a user reads to trust a run: `flexmbs verify` (and simulate's
verify=True), the energy check's verdict (the tolerance it closes to, the
small-deformation range), a sweep that names its failing cases, and a fit that never
returns an unconverged value as if it had converged."""

import csv
import json
import warnings
from pathlib import Path

import numpy as np
import pytest
from cli_in_process import flexmbs_here

import flexmbs
from flexmbs import simulate
from flexmbs.analysis.energy import energy_balance, format_energy_report
from flexmbs.analysis.sweep import parse_sweep_parameter
from flexmbs.io.results import Result
from flexmbs.model.library import huang_two_link
from flexmbs.simulation.convergence import format_convergence

ROOT = Path(__file__).resolve().parents[1]
USER_MODELS = ROOT / "tests" / "user_models"
ROTARY = USER_MODELS / "rotary_link_step.toml"


# ---------------------------------------------------------------- verify
def test_a_converged_run_passes_and_a_loose_one_fails():
    """The rotary link at rtol 1e-8 converges (each group within 1e-4 of its scale at
    ten times tighter); at rtol 1e-2 its joint and sensors move by more than 1e-3."""
    model = flexmbs.load_model(ROTARY)
    sim = simulate(model, None, t_end=0.3, rtol=1e-8, atol=1e-10, verify=True,
                   verify_limit=1e-4)
    conv = sim.convergence
    assert conv.passed, format_convergence(conv)
    names = [g.name for g in conv.groups]
    assert names[:2] == ["joint coordinates", "elastic coordinates"]
    assert {"sensor hub_angle", "sensor tip", "energy"} <= set(names)
    assert conv.statistics[1]["nsteps"] > conv.statistics[0]["nsteps"]
    assert 0 < conv.worst.relative < 1e-4
    loose = simulate(model, None, t_end=0.3, rtol=1e-2, atol=1e-4, verify=True).convergence
    assert not loose.passed
    text = format_convergence(loose, "rotary")
    assert "FAIL" in text and "remedy" in text
    json.dumps(loose.as_dict(), allow_nan=False)


def test_the_verify_command(tmp_path, capsys):
    out = tmp_path / "r.h5"
    done = flexmbs_here(capsys, "verify", ROTARY, "--t-end", 0.2, "--rtol", 1e-8, "-o", out,
                        "-q")
    assert done.returncode == 0, done.stderr
    assert "verdict" in done.stdout and "PASS" in done.stdout
    assert flexmbs.open_result(out).status == "finished"
    done = flexmbs_here(capsys, "verify", ROTARY, "--t-end", 0.2, "--rtol", 1e-2,
                        "--json", "-q")
    assert done.returncode == 1
    assert json.loads(done.stdout)["passed"] is False
    done = flexmbs_here(capsys, "verify", ROTARY, "--factor", 1)
    assert done.returncode == 2 and "--factor" in done.stderr


# ---------------------------------------------------------------- energy
def _result(drift, rtol=1e-8, method="bdf", small=None):
    t = np.linspace(0.0, 1.0, 101)
    kinetic = 1.0 + np.sin(3 * t) ** 2
    strain = 0.1 * np.cos(3 * t) ** 2
    dissipated = -0.5 * t
    gravity = -kinetic - strain + 2.0 + dissipated + drift * t
    solver = {"method": method, "rtol": rtol}
    if small:
        solver["small_deformation"] = small
    return Result(path="synthetic", time=t, q=np.zeros((101, 0)), u=np.zeros((101, 0)),
                  coordinate_names=[], energy={"kinetic": kinetic, "gravity": gravity,
                                               "strain": strain, "spring": 0 * t,
                                               "dissipated": dissipated},
                  sensors={}, status="finished", t_reached=1.0, solver=solver)


def test_a_balance_that_does_not_close_to_its_tolerance_fails():
    """Huang's ratio 1e-4 passes its limit, but at rtol 1e-9 the drift is tens of
    thousands of tolerances: the integration was not as accurate as asked."""
    b = energy_balance(_result(1e-5, rtol=1e-9))
    assert b["ratio"] < 1e-2 and b["tolerances"] > 1e3
    assert not b["passed"] and "tolerance" in b["failed_because"][0]
    assert energy_balance(_result(1e-5, rtol=1e-6))["passed"]
    # galpha's numerical dissipation is drift by design: not asked to close
    g = energy_balance(_result(1e-5, rtol=1e-9, method="galpha"))
    assert g["closes_to_tolerance"] is None and g["passed"]
    b = energy_balance(_result(1e-5, rtol=1e-9))
    assert b["work_done"] == pytest.approx(0.5) and b["largest_component_name"] == "kinetic"
    text = format_energy_report(b)
    for words in ("Huang's ratio", "the largest energy held", "the work done",
                  "tolerances", "fails:", "next:", "flexmbs verify"):
        assert words in text
    # past the criterion, the drift scales with rtol: the rtol named meets it twice over
    past = energy_balance(_result(0.05, rtol=1e-6))
    assert past["criterion_value"] == pytest.approx(0.02, rel=1e-3)
    assert past["next_step"] == "tighten rtol to 2e-7"  # 1e-6 / (2 x 2.0)


def test_a_beam_outside_the_small_deformation_range_fails_unless_accepted(tmp_path,
                                                                           capsys):
    small = "outside the small-deformation range: beam \"link2\" ..."
    assert not energy_balance(_result(0.0, small=small))["passed"]
    assert energy_balance(_result(0.0, small=small), accept_large_deformation=True)["passed"]
    path = tmp_path / "soft.h5"
    with pytest.warns(flexmbs.SmallDeformationWarning, match="link2"):
        sim = simulate(huang_two_link(2, youngs_modulus_scale=1e-4), path, t_end=0.5,
                       rtol=1e-5, atol=1e-7, method="galpha")
    assert sim.small_deformation and "link2" in sim.small_deformation
    assert flexmbs_here(capsys, "energy", path).returncode == 1
    assert flexmbs_here(capsys, "energy", path, "--accept-large-deformation").returncode == 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert simulate(huang_two_link(1), None, t_end=0.05).small_deformation is None


# ---------------------------------------------------------------- sweeps
def test_linspace_values_print_as_written():
    p = parse_sweep_parameter("bodies.forearm.node_masses.-1=0.1:0.4:4")
    assert p.values == ("0.1", "0.2", "0.3", "0.4")


def test_a_sweep_names_its_failing_cases_and_exits_1(tmp_path, capsys):
    """Two cases of the rotary link, one at a tolerance that passes every check and
    one so loose that its convergence check fails (and, galpha at rtol 1e-2 damping
    what it does not resolve, its energy check): the table has the verdicts, the
    failing case is named with its reasons, and the sweep exits 1."""
    out = tmp_path / "s"
    done = flexmbs_here(capsys, "sweep", ROTARY, "--param", "solver.rtol=1e-8,1e-2",
                        "--set", "solver.t_end=0.2", "--set", "solver.atol=1e-10",
                        "-o", out, "--serial", "--verify", "-q")
    assert done.returncode == 1
    with open(out / "summary.csv") as f:
        rows = list(csv.DictReader(f))
    assert [r["solver.rtol"] for r in rows] == ["1e-08", "0.01"]
    assert rows[0]["energy_check"] == "PASS"
    assert [r["converged"] for r in rows] == ["PASS", "FAIL"]
    assert "case_001:" in done.stderr and "the convergence check failed" in done.stderr
    assert "case_000" not in done.stderr


# ---------------------------------------------------------------- fits
def _record(tmp_path, alpha=8e-4, kd=0.05, noise=(2e-5, 2e-6)):
    """A record made by the rotary link itself (bdf, rtol 1e-10) with `alpha` and
    `kd`: the hub angle and the tip's deflection at 1 kHz with Gaussian noise, and
    its channel map."""
    model = flexmbs.load_model(ROTARY, [f"bodies.ruler.alpha={alpha}",
                                        f"actuators.hub.kd={kd}"])
    sim = simulate(model, None, t_end=0.5, rtol=1e-10, atol=1e-12, method="bdf",
                   output_step=1e-3)
    hub = sim.coordinate_names.index("motor")
    cm = flexmbs.compile_model(model)
    k = cm.sensor_names.index("tip")
    first = sum(cm.sensor_sizes[:k])
    rng = np.random.default_rng(3)
    angle = sim.y[:, hub] + noise[0] * rng.normal(size=len(sim.t))
    tip = sim.sensors[:, first + 1] + noise[1] * rng.normal(size=len(sim.t))
    csv_path = tmp_path / "record.csv"
    np.savetxt(csv_path, np.column_stack([sim.t, angle, tip]), delimiter=",",
               header="time [s],hub [rad],tip [m]", comments="")
    cmap = tmp_path / "record.map.toml"
    cmap.write_text('[experiment]\ntime = "time"\n\n[alignment]\nmethod = "offset"\n'
                    'offset = 0.0\n\n[channels.hub]\nsensor = "hub_angle"\n'
                    'experiment = "hub"\n\n[channels.tip]\nsensor = "tip"\n'
                    'component = 1\nexperiment = "tip"\n')
    return csv_path, cmap


def test_a_fit_with_the_models_own_solver_recovers_its_values(tmp_path, capsys):
    """The rotary link's file runs galpha; its record was made by bdf at rtol 1e-10
    with alpha = 8e-4 s and kd = 0.05 N m s/rad. From 20 % off, the fit with the
    file's solver at the fit's tolerance recovers both within 1 %."""
    record, cmap = _record(tmp_path)
    done = flexmbs_here(capsys, "fit", ROTARY, record, "--map", cmap, "--param",
                        "bodies.ruler.alpha", "--param", "actuators.hub.kd", "--set",
                        "bodies.ruler.alpha=6.4e-4", "--set", "actuators.hub.kd=0.06",
                        "--fixed-offset", "-o", tmp_path / "fit", "--json", "-q",
                        "--no-plots", "--serial")
    assert done.returncode == 0, done.stderr
    fit = json.loads(done.stdout)["fit"]
    values = {v["path"]: v for v in fit["values"]}
    assert values["bodies.ruler.alpha"]["value"] == pytest.approx(8e-4, rel=0.01)
    assert values["actuators.hub.kd"]["value"] == pytest.approx(0.05, rel=0.01)
    # the tolerance the convergence checks chose, from the file's 1e-6, and said how
    assert fit["rtol"] < 1e-6 and "the model's rtol 1e-06 tightened" in fit["tolerance"]
    assert "at the optimum," in fit["tolerance"]


def test_a_fit_refuses_a_model_that_does_not_converge_at_its_tolerance(tmp_path, capsys):
    record, cmap = _record(tmp_path)
    done = flexmbs_here(capsys, "fit", ROTARY, record, "--map", cmap, "--param",
                        "actuators.hub.kd", "--rtol", 1e-3, "-o", tmp_path / "fit", "-q",
                        "--no-plots")
    assert done.returncode == 2
    assert "does not converge at the fit's tolerance" in done.stderr
    assert "solver.method" in done.stderr and "Traceback" not in done.stderr


def test_a_fit_stopped_on_its_budget_says_so(tmp_path, capsys):
    """A fit that spends its --max-runs before it converges exits 3, says UNCONVERGED
    in its report, its fit.json and its fitted file's header; far from the optimum
    (s^2 far above 1) it gives no standard deviation."""
    record, cmap = _record(tmp_path)
    out = tmp_path / "fit"
    done = flexmbs_here(capsys, "fit", ROTARY, record, "--map", cmap, "--param",
                        "actuators.hub.kd", "--set", "actuators.hub.kd=0.08",
                        "--fixed-offset", "--max-runs", 3, "-o", out, "-q", "--no-plots",
                        "--no-verify", "--serial")
    assert done.returncode == 3
    assert "UNCONVERGED" in done.stdout and "n/a" in done.stdout
    fit = json.loads((out / "fit.json").read_text())["fit"]
    assert fit["success"] is False and fit["stop"] == "budget"
    assert all(v["std"] is None for v in fit["values"])
    header = (out / "rotary_link_step_fitted.toml").read_text().splitlines()[:6]
    assert any("UNCONVERGED" in line for line in header)
    assert not any("+-" in line for line in header)

