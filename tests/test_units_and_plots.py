"""Units in the result file (flexmbs.checks.units) and the plots they label: every
column of q, u and the sensors has its unit, and `flexmbs plot` groups by kind and
unit."""

from pathlib import Path

import numpy as np
import pytest

from flexmbs import load_model, open_result
from flexmbs.analysis.plot import UnknownNameError, _default_panels, _panel, plot_result
from flexmbs.checks.units import coordinate_units, rate_units, sensor_units
from flexmbs.cli import main

ROOT = Path(__file__).resolve().parents[1]
H2 = ROOT / "data" / "models" / "huang_two_link.toml"
EXTRA = """
[sensors.forces]
type = "beam_section_forces"
body = "link2"

[sensors.strain]
type = "beam_strain"
body = "link2"
point = [0.0, 6.35e-3]

[sensors.curvature]
type = "beam_curvature"
body = "link2"

[sensors.rate1]
type = "joint_rate"
joint = "joint1"

[sensors.line]
type = "beam_centerline"
body = "link2"
subdivisions = 2

[sensors.speed]
type = "marker_velocity"
body = "link2"
marker = "tip"
"""
WANT = {
    "theta1": ["rad"], "tip": ["m"] * 3, "tip_deflection": ["m"] * 3,
    "forces": ["N", "N", "N", "N m", "N m", "N m"], "strain": ["1"],
    "curvature": ["1/m", "1/m"], "rate1": ["rad/s"], "line": ["m"] * 9,
    "speed": ["m/s"] * 3,
}


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("units")
    model = folder / "h2.toml"
    model.write_text(H2.read_text() + EXTRA)
    out = folder / "h2.h5"
    assert main(["run", str(model), "-o", str(out), "-q", "--set", "solver.t_end=0.02",
                 "--set", "output.step=0.01"]) == 0
    return out


def test_every_column_of_the_file_has_its_unit(run):
    r = open_result(run)
    assert dict(zip(r.coordinate_names, r.coordinate_units)) == {
        "joint1": "rad", "joint2": "rad",
        **{f"link2.n1.{d}": "m" for d in "uvw"},
        **{f"link2.n1.{d}": "rad" for d in ("tx", "ty", "tz")}}
    for name, units in WANT.items():
        assert r.sensor_units[name] == units, name
        size = 1 if r.sensors[name].ndim == 1 else r.sensors[name].shape[1]
        assert len(units) == size


def test_units_of_other_coordinates_and_rates():
    from flexmbs.model.library import slider_crank
    model = slider_crank(t_end=0.1)  # a prismatic joint and a reduced-free beam
    names = [n for j in model.joints.values() for n in j.coordinate_names()]
    units = coordinate_units(model, names)
    assert "m" in units and "rad" in units
    assert rate_units(["m", "rad", "kg^(1/2) m", ""]) == ["m/s", "rad/s", "(kg^(1/2) m)/s", ""]
    reduced = load_model(H2, overrides=["bodies.link2.modes=2", "bodies.link2.elements=3"])
    beam = reduced.bodies["link2"]
    assert set(coordinate_units(reduced, beam.coordinate_names())) == {"kg^(1/2) m"}
    assert sensor_units(reduced, "no such sensor", 2) == ["", ""]


def test_the_default_plot_groups_by_kind_and_unit(run, tmp_path):
    pytest.importorskip("matplotlib")
    r = open_result(run)
    panels = [(title, label, [c for c, _ in curves]) for title, label, curves
              in _default_panels(r)]
    assert panels[0] == ("joint coordinates", "rad", ["joint1", "joint2"])
    assert panels[1] == ("elastic coordinates", "m", [f"link2.n1.{d}" for d in "uvw"])
    assert panels[2] == ("elastic coordinates", "rad",
                         [f"link2.n1.{d}" for d in ("tx", "ty", "tz")])
    forces = [(label, names) for title, label, names in panels if title == "sensor forces"]
    assert forces == [("N", ["0", "1", "2"]), ("N m", ["3", "4", "5"])]
    assert panels[-1][0] == "energy" and panels[-1][1] == "J"
    out = plot_result(run, None, tmp_path / "all.png")
    assert Path(out).stat().st_size > 10_000
    named = plot_result(run, ["theta1", "forces"], tmp_path / "two.png")
    assert Path(named).exists()


def test_a_file_without_units_still_plots(run, tmp_path):
    """Files written before units were stored: the labels say "m, rad" and "value"."""
    import shutil

    import h5py
    old = tmp_path / "old.h5"
    shutil.copy(run, old)
    with h5py.File(old, "r+") as f:
        for ds in [f["q"], f["u"], *f["sensors"].values()]:
            if "units" in ds.attrs:
                del ds.attrs["units"]
    r = open_result(old)
    assert r.coordinate_units == [] and r.sensor_units == {}
    panels = _default_panels(r)
    assert panels[0][1] == "m, rad" and np.isfinite(panels[0][2][0][1]).all()
    assert any(label == "value" for _, label, _ in panels)


def test_one_column_of_a_sensor_by_index_or_label(run, tmp_path, capsys):
    """`flexmbs plot RESULT "tip[1]"`: the syntax of `sweep --summary`, 0-based or by
    the column's label, one curve in the column's own unit."""
    from cli_in_process import flexmbs_here

    r = open_result(run)
    for name in ("tip[1]", "tip[y]"):
        title, label, curves = _panel(r, name)
        assert (title, label) == (f"sensor {name}", "m") and len(curves) == 1
        assert np.array_equal(curves[0][1], r.sensors["tip"][:, 1])
    assert _panel(r, "forces[4]")[1] == "N m"
    for bad in ("tip[3]", "tip[w]", "tip[-1]"):
        with pytest.raises(UnknownNameError, match=r"sensor 'tip' has 3 columns \(x, y, z\)"):
            _panel(r, bad)
    with pytest.raises(UnknownNameError, match=r"one column of a sensor: NAME\[k\]"):
        _panel(r, "theta9[0]")
    pytest.importorskip("matplotlib")
    png = tmp_path / "tip1.png"
    p = flexmbs_here(capsys, "plot", run, "tip[1]", "-o", png)
    assert p.returncode == 0, p.stderr
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    p = flexmbs_here(capsys, "plot", run, "tip[5]", "-o", png)
    assert p.returncode == 2 and "tip[0] to tip[2]" in p.stderr and "Traceback" not in p.stderr
