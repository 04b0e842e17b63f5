"""Every URDF of the example-robot-data package (69 robot descriptions by others:
arms, hands, quadrupeds, humanoids, flying arms) imports at the defaults, or is
refused on one line for a reason that is right; a sample of kinds runs 0.5 s under
gravity and keeps its energy balance. The whole package run and checked, with its
timings, is benchmarks/bench_urdf_robots.py (the table of docs/guides/urdf.md)."""

import sysconfig
from pathlib import Path

import pytest

from flexmbs import simulate
from flexmbs.analysis.energy import energy_balance
from flexmbs.formats.toml_reader import load_model
from flexmbs.formats.urdf import import_urdf
from flexmbs.formats.urdf_reader import UrdfError
from flexmbs.io.results import open_result

ROBOTS = Path(sysconfig.get_paths()["purelib"]) / "cmeel.prefix/share/example-robot-data/robots"
pytestmark = pytest.mark.skipif(not ROBOTS.is_dir(), reason="example-robot-data missing")
REFUSED = {  # the file -> the words of its one line, and why the refusal is right
    "ur_description/urdf/ur3.urdf": "no <link> in <robot>",  # an empty <robot>
    # a quadrotor's body, every link fixed to the root: nothing moves on a fixed base
    "hector_description/robots/quadrotor_base.urdf": "--floating-base",
    "iris_description/robots/iris_simple.urdf": "--floating-base",
    # ixz = 0.025 > sqrt(ixx izz): a negative principal moment, no body has it
    "romeo_description/urdf/romeo_laas_small.urdf": "one negative",
}
SAMPLE = [  # kinds: names made legal, a joint named like a link, starts outside the
    # limits, legs on stops, three revolutes through massless links, point masses
    "allegro_hand_description/urdf/allegro_left_hand.urdf",
    "iris_description/robots/iris.urdf",
    "so_arm_description/urdf/so100.urdf",
    "panda_description/urdf/panda.urdf",
    "go1_description/urdf/go1.urdf",
    "human_description/robots/human.urdf",
    "icub_description/robots/icub_reduced.urdf",
]


def test_every_urdf_of_the_package_imports_or_is_refused_for_its_reason():
    files = sorted(ROBOTS.rglob("*.urdf"))
    assert len(files) >= 69
    for path in files:
        name = str(path.relative_to(ROBOTS))
        if name in REFUSED:
            with pytest.raises(UrdfError, match=REFUSED[name].replace("<", ".").replace(">", ".")):
                import_urdf(path)
            continue
        done = import_urdf(path)
        assert done.model.bodies, name


def test_a_robot_refused_for_no_moving_link_flies_on_a_floating_base(tmp_path):
    done = import_urdf(ROBOTS / "iris_description/robots/iris_simple.urdf", floating_base=True)
    simulate(done.model, tmp_path / "iris.h5", t_end=0.2)
    result = open_result(tmp_path / "iris.h5")
    z = result.q[-1][result.coordinate_names.index("floating_base[2]")]
    assert z == pytest.approx(-0.5 * 9.81 * 0.2**2, rel=1e-6)  # free fall
    assert energy_balance(result)["passed"]


@pytest.mark.parametrize("name", SAMPLE, ids=[Path(n).stem for n in SAMPLE])
def test_a_sample_runs_under_gravity_and_keeps_its_energy(tmp_path, name):
    done = import_urdf(ROBOTS / name)
    out = tmp_path / "run.h5"
    simulate(done.model, out, t_end=0.5)
    balance = energy_balance(out)
    assert balance["passed"], (name, balance["failed_because"])


def test_a_kinematic_only_description_imports_with_a_density(tmp_path):
    """The UR5 with every <inertial> taken out, as kinematic descriptions are
    published: refused at the defaults, saying what to add; with --density the links
    weigh what their collision meshes (package:// paths, STL) hold, and it runs."""
    import re

    pytest.importorskip("trimesh")
    text = (ROBOTS / "ur_description/urdf/ur5_robot.urdf").read_text()
    folder = tmp_path / "ur_description" / "urdf"
    folder.mkdir(parents=True)
    path = folder / "ur5_kinematic.urdf"
    path.write_text(re.sub(r"<inertial>.*?</inertial>", "", text, flags=re.S))
    with pytest.raises(UrdfError, match="--density"):
        import_urdf(path)
    done = import_urdf(path, density=2700.0)
    assert any("ur5_kinematic" not in n and "forearm_link" in n for n in done.notes)
    forearm = done.model.bodies["forearm_link"]
    assert 3.0 < forearm.mass < 10.0 and 0.1 < forearm.com[2] < 0.3  # along its 0.39 m
    assert forearm.density == 2700.0 and forearm.shapes[0].type == "mesh"
    model_file = tmp_path / "ur5_kinematic.toml"  # the model file says where the masses
    model_file.write_text(done.text)              # come from: one density to change
    again = load_model(model_file, overrides=["bodies.forearm_link.density=1350.0"])
    assert again.bodies["forearm_link"].mass == pytest.approx(forearm.mass / 2, rel=1e-12)
    assert again.bodies["upper_arm_link"].mass == done.model.bodies["upper_arm_link"].mass
    simulate(done.model, tmp_path / "run.h5", t_end=0.2)
    assert energy_balance(tmp_path / "run.h5")["passed"]


def test_a_flexible_ur5_at_the_imported_defaults_runs_galpha_at_a_fixed_1ms_step(tmp_path):
    """The UR5 with its upper arm a beam at the import's defaults (four modes with their
    correction modes and derivatives, damped in bands, critically above 1 kHz: up to
    h omega = 216 at 1 ms) and geared motors with rotor inertias, falling under
    gravity: galpha at a fixed 1 ms step failed its Newton iteration at the third step
    on the rate of the dissipated work, quadratic in the critically damped speeds
    (flexmbs.solvers.bdf_kernels._wrms_newton). It runs without a failed iteration,
    and its energy balance closes."""
    from flexmbs.model import Constant

    done = import_urdf(ROBOTS / "ur_description/urdf/ur5_robot.urdf",
                       flexible=["upper_arm_link:z"])
    model = done.model
    assert model.bodies["upper_arm_link"].modal_damping == "bands"
    for name in [n for n, j in model.joints.items() if j.type == "revolute"]:
        model.add_actuator(f"{name}_motor", name, type="torque", torque=Constant(0.0),
                           gear_ratio=100.0, rotor_inertia=5e-5)
    out = tmp_path / "run.h5"
    result = simulate(model, out, t_end=0.05, method="galpha", fixed_step=1e-3)
    assert result.status == "finished", result.message
    assert result.statistics["nconvfail"] == 0
    balance = energy_balance(out)
    assert balance["passed"], balance["failed_because"]
