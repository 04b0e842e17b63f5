"""The FMU in the hands of an importing tool: instantiated, run and freed many times in
one process, two instances side by side and in two threads, the host exiting cleanly;
its model description valid for FMPy and carrying units; export-fmu refusing settings
the unit could not run with."""

import json
import os
import re
import shutil
import site
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import numpy as np
import pytest

import flexmbs
from flexmbs.cli import main

fmpy = pytest.importorskip("fmpy")
pytest.importorskip("pythonfmu")
from fmpy.validation import validate_fmu  # noqa: E402
from test_fmu import SERVO  # noqa: E402

HOST = Path(__file__).with_name("fmu_host.py")
C_HOST = Path(__file__).with_name("fmu_c_host.c")
CYCLES = 5


@pytest.fixture(scope="module")
def servo_fmu(tmp_path_factory):
    folder = tmp_path_factory.mktemp("fmu")
    model = folder / "servo.toml"
    model.write_text(SERVO.format(law='law = "constant"\nvalue = 0.0'))
    fmu = folder / "servo.fmu"
    assert main(["export-fmu", str(model), "-o", str(fmu)]) == 0
    return fmu


def test_a_host_runs_the_unit_many_times_side_by_side_and_in_threads(servo_fmu):
    done = subprocess.run(
        [sys.executable, str(HOST), str(servo_fmu), str(CYCLES)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    # the host's process, its interpreter and its C runtime ended cleanly
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    simulated, by_hand = np.array(report["simulate_fmu"]), np.array(report["by_hand"])
    assert simulated.shape == by_hand.shape == (CYCLES, 3)
    assert abs(simulated[0, 0]) > 1e-3  # the motor turned
    # every cycle the same run, to the last bit
    for runs in (simulated, by_hand):
        assert np.array_equal(runs, np.repeat(runs[:1], CYCLES, axis=0))
    # fmpy's communication times are start + k h, the hand loop's sums of h
    np.testing.assert_allclose(simulated[0], by_hand[0], rtol=1e-9)
    # instances side by side and in threads keep their own state
    alone = np.array(report["alone"])
    assert not np.allclose(alone[0], alone[1])
    np.testing.assert_array_equal(np.array(report["side_by_side"]), alone)
    np.testing.assert_array_equal(np.array(report["threads"]), alone)
    np.testing.assert_array_equal(alone[0], by_hand[0])
    # memory: about 0.1 MB a cycle from one extracted copy (measured 0.5 MB over five)
    memory = np.array(report["memory_mb"])
    assert memory[-1] - memory[CYCLES] < 1.0 * CYCLES, memory


def errors_in_unit(command, log, env=None):
    """The errors valgrind reports in `command` that come from the unit's binary."""
    subprocess.run(
        ["valgrind", f"--log-file={log}", *command],
        check=True,
        capture_output=True,
        timeout=900,
        env=env,
    )
    blocks = re.split(r"\n==\d+== *\n", log.read_text())  # an error a block
    errors = [b for b in blocks if re.match(r"==\d+== (Invalid|Mismatched|Conditional)", b)]
    return [b for b in errors if "binaries/linux64/" in b]


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed")
def test_a_host_exiting_with_the_unit_loaded_touches_no_freed_memory(servo_fmu, tmp_path):
    """The unit's binary keeps the interpreter's state in a static pointer which the
    C++ runtime frees at the exit before the library's destructor resets it: read and
    written after it was freed, it corrupts the host's heap (a crash or not, as the
    heap lies). valgrind sees every such access; none may be the binary's."""
    command = [sys.executable, str(HOST), str(servo_fmu), "once"]
    in_unit = errors_in_unit(command, tmp_path / "valgrind.log")
    assert not in_unit, in_unit[0]


@pytest.fixture(scope="module")
def c_host(servo_fmu, tmp_path_factory):
    """The C importer built, the unit extracted for it, and the environment its
    embedded interpreter needs: (argv's first three, env)."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    library = Path(sysconfig.get_config_var("LIBDIR") or "") / (
        sysconfig.get_config_var("LDLIBRARY") or ""
    )
    if compiler is None or not sysconfig.get_config_var("Py_ENABLE_SHARED"):
        pytest.skip("no C compiler, or a Python without its shared library")
    folder = tmp_path_factory.mktemp("c_host")
    program = folder / "fmu_c_host"
    subprocess.run([compiler, "-O1", "-o", str(program), str(C_HOST), "-ldl"], check=True)
    unit = Path(fmpy.extract(str(servo_fmu), unzipdir=str(folder / "unit")))
    description = fmpy.read_model_description(str(servo_fmu))
    binary = unit / "binaries" / "linux64" / f"{description.coSimulation.modelIdentifier}.so"
    paths = [*site.getsitepackages(), str(Path(flexmbs.__file__).parents[1])]
    env = dict(os.environ, LD_PRELOAD=str(library), PYTHONPATH=os.pathsep.join(paths))
    argv = [str(program), str(binary), description.guid, (unit / "resources").as_uri()]
    return argv, env


def test_a_c_host_runs_the_unit_loaded_and_unloaded(c_host, servo_fmu):
    argv, env = c_host
    model = servo_fmu.with_name("servo.toml")
    with flexmbs.Simulator(str(model)) as sim:
        for _ in range(20):
            sim.step(0.002, inputs={"motor.voltage": 4.0})
        theta = float(sim.sensors["theta"])
    for unload in ([], ["unload"]):
        done = subprocess.run(
            [*argv, "3", "20", *unload], capture_output=True, text=True, env=env, timeout=600
        )
        assert done.returncode == 0, done.stderr[-2000:]
        values = [float(line.split(":")[1]) for line in done.stdout.splitlines()
                  if line.startswith("cycle")]
        assert values == [values[0]] * 3, unload
        assert values[0] == pytest.approx(theta, rel=1e-9, abs=1e-15)


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed")
def test_a_c_host_exiting_with_the_unit_loaded_touches_no_freed_memory(c_host, tmp_path):
    """As the Python host's: the binary started the interpreter itself here, and
    finalizes it from its own thread at the exit."""
    argv, env = c_host
    in_unit = errors_in_unit([*argv, "1", "0"], tmp_path / "valgrind.log", env)
    assert not in_unit, in_unit[0]


def test_instantiations_keep_the_script_module_alive(servo_fmu, tmp_path):
    """pythonfmu's binary releases a reference to the script module's namespace at
    every instantiation; the script makes up for it, so that the namespace keeps its
    count (in the importer's own process: here, the test's)."""
    from fmpy.fmi2 import FMU2Slave

    description = fmpy.read_model_description(str(servo_fmu))
    name = description.coSimulation.modelIdentifier
    folder = fmpy.extract(str(servo_fmu), unzipdir=str(tmp_path / "unit"))
    counts = []
    for k in range(4):
        slave = FMU2Slave(
            guid=description.guid,
            unzipDirectory=folder,
            modelIdentifier=name,
            instanceName=f"i{k}",
        )
        slave.instantiate()
        slave.freeInstance()
        counts.append(sys.getrefcount(sys.modules[name].__dict__))
    assert counts == [counts[0]] * 4 and counts[0] >= 2
    assert sys.path.count(str(Path(folder) / "resources")) <= 1


def test_the_unit_is_valid_for_fmpy_with_units_and_an_experiment(servo_fmu):
    assert validate_fmu(str(servo_fmu)) == []
    description = fmpy.read_model_description(str(servo_fmu))
    units = {v.name: v.unit for v in description.modelVariables}
    assert units["motor.voltage"] == "V"
    assert units["theta"] == "rad" and units["current"] == "A"
    defined = {u.name: u for u in description.unitDefinitions}
    assert defined["V"].baseUnit.kg == 1 and defined["V"].baseUnit.A == -1
    experiment = description.defaultExperiment
    assert float(experiment.stopTime) == pytest.approx(0.3)
    assert float(experiment.stepSize) == pytest.approx(0.002)
    with zipfile.ZipFile(servo_fmu) as archive:
        script = archive.read("resources/servo.py").decode()
    assert "keep_script_namespace(globals(), locals())" in script


@pytest.mark.parametrize(
    "option, field",
    [
        (["--rtol", "-1"], '"rtol": expected a positive number'),
        (["--fixed-step", "0"], '"fixed_step": expected a positive number'),
        (["--atol", "nan"], '"atol": expected a finite number'),
    ],
)
def test_export_fmu_refuses_settings_as_run_does(servo_fmu, tmp_path, capsys, option, field):
    model = servo_fmu.with_name("servo.toml")
    out = tmp_path / "bad.fmu"
    assert main(["export-fmu", str(model), "-o", str(out), *option]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and field in err and "servo.toml" in err
    assert not out.exists()


def test_base_units_of_flexmbs_units():
    from flexmbs.control.fmu import base_units

    assert base_units("N m") == {"kg": 1, "m": 2, "s": -2}
    assert base_units("rad/s") == {"rad": 1, "s": -1}
    assert base_units("1/m") == {"m": -1}
    assert base_units("m/s^2") == {"m": 1, "s": -2}
    assert base_units("kg^(1/2) m") == {}
    assert base_units("1") == {}
