"""`flexmbs export-fmu`: an FMI 2.0 co-simulation unit of a model file, run with fmpy
and compared with `flexmbs run` of the same model under the same inputs."""

import numpy as np
import pytest

from flexmbs.cli import main

fmpy = pytest.importorskip("fmpy")
pytest.importorskip("pythonfmu")

SERVO = """
[model]
name = "servo"
gravity = [0.0, 0.0, -9.81]
[solver]
method = "bdf"
t_end = 0.3
rtol = 1e-9
atol = 1e-11
[output]
step = 0.002
[bodies.disk]
mass = 2.0
inertia = [0.01, 0.01, 0.02]
inertia_about = "com"
[bodies.arm]
mass = 0.3
com = [0.1, 0.0, 0.0]
inertia = [1e-4, 1e-3, 1e-3]
inertia_about = "com"
[joints.shaft]
type = "revolute"
parent = "ground"
child = "disk"
axis = [0.0, 0.0, 1.0]
[joints.elbow]
type = "revolute"
parent = "disk"
child = "arm"
axis = [0.0, 0.0, 1.0]
stiffness = 0.3
damping = 0.01
limits = [-0.12, 0.12]
limit_stiffness = 200.0
limit_damping = 0.5
[actuators.motor]
joint = "shaft"
type = "dc_motor"
resistance = 2.6
inductance = 5e-4
torque_constant = 7.68e-3
gear_ratio = 70.0
efficiency = 0.9
max_current = 1.5
[actuators.motor.voltage]
{law}
[sensors.theta]
type = "joint_coordinate"
joint = "shaft"
[sensors.bend]
type = "joint_coordinate"
joint = "elbow"
[sensors.current]
type = "actuator_current"
actuator = "motor"
"""
STEP = 0.002


def test_an_fmu_run_with_fmpy_is_flexmbs_run(tmp_path):
    model = tmp_path / "servo.toml"
    model.write_text(SERVO.format(law='law = "constant"\nvalue = 0.0'))
    fmu = tmp_path / "servo.fmu"
    assert main(["export-fmu", str(model), "-o", str(fmu)]) == 0
    description = fmpy.read_model_description(str(fmu))
    variables = {v.name: v.causality for v in description.modelVariables}
    assert variables["motor.voltage"] == "input"
    assert {variables[n] for n in ("theta", "bend", "current")} == {"output"}
    times = np.arange(0.0, 0.3 + STEP / 2, STEP)
    volts = np.round(8.0 * np.sin(30.0 * times) * (times < 0.2), 6)
    # fmpy loads the unit's binary into this process, as a Python importer does
    signal = np.array(list(zip(times, volts)),
                      dtype=[("time", float), ("motor.voltage", float)])
    out = fmpy.simulate_fmu(str(fmu), start_time=0.0, stop_time=0.3, step_size=STEP,
                            output_interval=STEP, input=signal,
                            output=["theta", "bend", "current"])
    steps = 'law = "steps"\ntimes = [' + ", ".join(f"{t:.6f}" for t in times) + \
        ']\nvalues = [' + ", ".join(f"{v:.6f}" for v in volts) + "]"
    held = tmp_path / "held.toml"
    held.write_text(SERVO.format(law=steps))
    result = tmp_path / "held.h5"
    assert main(["run", str(held), "-o", str(result), "-q"]) == 0
    import flexmbs
    r = flexmbs.open_result(result)
    assert len(out) == len(r.time)
    np.testing.assert_allclose(out["time"], r.time, atol=1e-12)
    for name in ("theta", "bend", "current"):
        scale = np.abs(r.sensors[name]).max()
        assert np.abs(out[name] - r.sensors[name]).max() <= 1e-6 * scale, name
    # the unit saw the current limit and the stop, as the run did
    assert np.abs(r.sensors["current"]).max() == pytest.approx(1.5, rel=1e-9)
    assert np.abs(r.sensors["bend"]).max() > 0.12
