"""Every command on every model: each shipped model, each user-like model of
tests/user_models (together they use every documented field of the model file) and a
URDF robot imported with flexible links is run briefly, then `info`, `energy`,
`plot`, `export`, `animate` and `compare` (against a record made from the run) are
run on its result. None may end in a traceback; each ends as its documentation says.
"""

import glob
import sysconfig
import tomllib
from pathlib import Path

import h5py
import numpy as np
import pytest
from cli_in_process import flexmbs_here

from flexmbs.formats import toml_schema as tr
from flexmbs.model.description import CONTACT_TYPES, JOINT_TYPES, SENSOR_TYPES, SOLVER_METHODS

ROOT = Path(__file__).resolve().parents[1]
USER_MODELS = sorted(glob.glob(str(ROOT / "tests" / "user_models" / "*.toml")))
SHIPPED = sorted(glob.glob(str(ROOT / "data" / "models" / "*.toml")))
UR5 = (Path(sysconfig.get_paths()["purelib"])
       / "cmeel.prefix/share/example-robot-data/robots/ur_description/urdf/ur5_robot.urdf")

RUN_OUTPUTS = 4
"""Output steps each model runs: the commands need a few samples, not the physics."""


def _schemas():
    fixed = [tr._MODEL, tr._SOLVER, tr._OUTPUT, tr._MARKER, tr._BODY, tr._JOINT, tr._FORCE,
             tr._JOINT_SENSOR, tr._MARKER_SENSOR, tr._ACTUATOR, tr._ACTUATOR_SENSOR,
             tr._STRAIN_SENSOR, tr._SECTION_SENSOR, tr._CENTERLINE_SENSOR, tr._BEAM,
             tr._BEAM_MARKER, tr._MATERIAL, tr._CONTACT, tr._CONTACT_SENSOR]
    return fixed + [schema for _, schema in tr.SECTIONS.values()]


def test_the_corpus_uses_every_documented_field_and_type():
    """The shipped and user-like models together use every field the reader accepts,
    every joint, sensor, contact, section type and time law."""
    keys, values = set(), set()

    def walk(doc):
        for k, v in doc.items():
            keys.add(k)
            if isinstance(v, dict):
                walk(v)
            elif isinstance(v, str):
                values.add(v)

    for path in SHIPPED + USER_MODELS:
        with open(path, "rb") as f:
            walk(tomllib.load(f))
    fields = {f for s in _schemas() for f in s.fields} | set(tr._DRIVER_BASE)
    fields |= {f for law in tr.LAW_FIELDS.values() for f in law}
    # a method's own table [solver.METHOD]: bdf's and galpha's stand for the others'
    fields -= set(SOLVER_METHODS) - {"bdf", "galpha"}
    assert not sorted(fields - keys), f"fields no model uses: {sorted(fields - keys)}"
    names = set(JOINT_TYPES) | set(SENSOR_TYPES) | set(tr.LAW_FIELDS) | set(tr.SECTIONS) | \
        set(CONTACT_TYPES)
    assert not sorted(names - values), f"types no model uses: {sorted(names - values)}"


def _model_cases():
    cases = [pytest.param(p, id=Path(p).stem) for p in SHIPPED + USER_MODELS]
    cases.append(pytest.param("urdf", id="ur5_flexible",
                              marks=pytest.mark.skipif(not UR5.exists(),
                                                       reason="example-robot-data missing")))
    return cases


def _record_from(result, path):
    """A CSV record of the result's first scalar sensor (or its first coordinate) and
    its channel map: `compare` then has a measurement to read."""
    with h5py.File(result, "r") as f:
        t = f["time"][:]
        names = [n.decode() if isinstance(n, bytes) else str(n)
                 for n in f["sensors"].attrs["names"]]
        scalar = [n for n in names if f[f"sensors/{n}"].ndim == 1]
    if not scalar:
        return None
    name = scalar[0]
    with h5py.File(result, "r") as f:
        x = f[f"sensors/{name}"][:]
    csv = path.with_suffix(".csv")
    np.savetxt(csv, np.column_stack([t, x + 1e-6 * np.sin(50 * t)]), delimiter=",",
               header="time,signal", comments="")
    cmap = path.with_suffix(".map.toml")
    cmap.write_text('[experiment]\ntime = "time"\n\n[alignment]\nmethod = "offset"\n'
                    f'offset = 0.0\n\n[channels.signal]\nsensor = "{name}"\n'
                    'experiment = "signal"\n')
    return csv, cmap


@pytest.mark.parametrize("model", _model_cases())
def test_every_command_runs_on_every_model(model, tmp_path, capsys):
    if model == "urdf":
        model = tmp_path / "ur5.toml"
        done = flexmbs_here(capsys, "import-urdf", UR5, "-o", model, "--flexible",
                            "forearm_link:z", "--flexible", "upper_arm_link:z")
        assert done.returncode == 0, done.stderr
    with open(model, "rb") as f:
        step = tomllib.load(f).get("output", {}).get("step", 0.01)
    result = tmp_path / "run.h5"
    run = flexmbs_here(capsys, "run", model, "-o", result, "--t-end",
                       RUN_OUTPUTS * step, "-q")
    assert run.returncode == 0, run.stderr
    for args, allowed in [
        (("info", result), (0,)),
        (("energy", result), (0, 1)),
        (("energy", result, "--json"), (0, 1)),
        (("plot", result, "energy", "-o", tmp_path / "plot.png"), (0,)),
        (("export", result, "-o", tmp_path / "shape.vtkhdf"), (0,)),
        (("animate", result, "-o", tmp_path / "frame.png", "--at", "0"), (0,)),
    ]:
        done = flexmbs_here(capsys, *args)
        assert done.returncode in allowed, (args, done.stderr)
        assert "Traceback" not in done.stderr + done.stdout, (args, done.stderr)
    record = _record_from(result, tmp_path / "record")
    if record is not None:
        csv, cmap = record
        done = flexmbs_here(capsys, "compare", result, csv, "--map", cmap, "-o",
                            tmp_path / "report")
        assert done.returncode in (0, 1), done.stderr
        assert "Traceback" not in done.stderr + done.stdout
