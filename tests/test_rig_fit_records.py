"""The geared rig's fit over its two records (docs/guides/test-rig.md): the guide's
fit file is the one shipped (data/experiments/servo.fit.toml), it reads as two
records with their own gains, and a short fit over both records recovers the shared
torque constant and the stiff trial's own starting angle within their standard
deviations. The whole fit of four shared values from 20 % off is a benchmark
(benchmarks/bench_rig_fit.py); here the first 0.3 s of the two records and two
values, from 20 % off, the others at their true values."""

import dataclasses
import re
from pathlib import Path

from flexmbs.analysis.fit import fit_records, parse_parameter
from flexmbs.analysis.fit_file import read_fit_file
from flexmbs.formats.toml_reader import load_model

ROOT = Path(__file__).resolve().parents[1]
FIT_FILE = ROOT / "data" / "experiments" / "servo.fit.toml"
GUIDE = ROOT / "docs" / "guides" / "test-rig.md"
TRUE = ["frictions.bearings.coulomb=0.012", "frictions.bearings.viscous=0.002",
        "backlashes.gear.gap=0.004"]


def test_the_guides_fit_file_is_the_one_shipped():
    """The fit file the guide shows is data/experiments/servo.fit.toml, to the byte:
    the guide's command runs on the repository's files as written."""
    blocks = re.findall(r"```toml\n(.*?)```", GUIDE.read_text(), re.S)
    shown = [b for b in blocks if b.startswith("# servo.fit.toml")]
    assert shown == [FIT_FILE.read_text()]


def test_the_fit_file_reads_as_two_trials_with_their_gains():
    records, shared = read_fit_file(FIT_FILE)
    assert [r.name for r in records] == ["soft", "stiff"]
    assert [p.path for p in shared] == [
        "frictions.bearings.coulomb", "frictions.bearings.viscous",
        "actuators.motor.torque_constant", "backlashes.gear.gap"]
    gains = [load_model(r.model_path, r.overrides).controllers["servo"].inputs[0].gain
             for r in records]
    assert gains == [15.0, 25.0]
    assert [p.path for p in records[1].parameters] == ["joints.shaft.initial"]


def test_a_short_fit_over_both_records():
    """Both records' first 0.3 s, the torque constant shared and the stiff trial's
    starting angle its own, from 20 % off: each within three standard deviations of
    the truth and within 2 %, s^2 near 1."""
    records, _ = read_fit_file(FIT_FILE)
    records = [dataclasses.replace(
        r, window=(0.0, 0.3), overrides=[*r.overrides, *TRUE],
        parameters=[parse_parameter(p.path) for p in r.parameters]) for r in records]
    fit = fit_records(records, [parse_parameter("actuators.motor.torque_constant")],
                      max_runs=150)
    assert fit.stop == "converged", fit.message
    assert fit.variance_ratio < 1.5
    for name, true in (("actuators.motor.torque_constant", 0.25),
                       ("stiff:joints.shaft.initial", 0.1)):
        v = fit.value(name)
        assert abs(v.value - true) < 3 * v.std, (name, v)
        assert abs(v.value / true - 1) < 0.02, (name, v)
