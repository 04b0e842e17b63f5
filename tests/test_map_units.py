"""The units of a channel map (flexmbs.analysis.channel_map.UNITS): the set a
data-acquisition file uses, each converted to the SI unit the model's sensors give
(flexmbs.checks.units), and a unit of another quantity than the sensor's refused on
one line. A DC motor's current and voltage recorded in mA and V compare with the
run's A and V."""

import math

import numpy as np
import pytest
from cli_in_process import flexmbs_here

from flexmbs import simulate
from flexmbs.analysis.channel_map import (
    SI_UNITS,
    UNITS,
    canonical_unit,
    check_sensors,
    loads_channel_map,
    sensor_quantities,
)
from flexmbs.analysis.compare import compare_files
from flexmbs.checks.units import SI_QUANTITIES, sensor_type_units
from flexmbs.errors import ExperimentError
from flexmbs.formats.serialize import model_to_json
from flexmbs.io.results import open_result
from flexmbs.model import Model, Steps
from flexmbs.model.vocabulary import SENSOR_TYPES


def test_every_unit_converts_to_an_si_unit_of_the_table():
    """Each quantity's SI unit is in the table with factor 1, and every unit's factor
    is positive: a unit is its quantity's SI unit times its factor."""
    for unit, (quantity, factor) in UNITS.items():
        assert factor > 0, unit
        si = SI_UNITS[quantity]
        assert UNITS[si] == (quantity, 1.0), (unit, si)


def test_the_model_s_sensor_units_are_map_units():
    """Every unit a sensor type's columns carry in the result file (flexmbs.checks.units)
    has its quantity, and is that quantity's SI unit in the map's table: a sensor's
    values and a channel in its SI unit compare without a factor."""
    fixed = 0
    for kind in SENSOR_TYPES:
        for unit in sensor_type_units(kind) or []:
            fixed += 1
            assert unit in SI_QUANTITIES, (kind, unit)
            assert UNITS[unit] == (SI_QUANTITIES[unit], 1.0), (kind, unit)
    assert fixed > 20
    assert sensor_type_units("actuator_current") == ["A"]
    assert sensor_type_units("actuator_voltage") == ["V"]


@pytest.mark.parametrize("unit, quantity, si_value_of_one", [
    ("mV", "voltage", 1e-3), ("kV", "voltage", 1e3), ("uV", "voltage", 1e-6),
    ("mA", "current", 1e-3), ("uA", "current", 1e-6), ("A", "current", 1.0),
    ("mW", "power", 1e-3), ("kW", "power", 1e3),
    ("kOhm", "resistance", 1e3), ("Hz", "frequency", 1.0), ("kHz", "frequency", 1e3),
    ("N mm", "torque", 1e-3), ("kN m", "torque", 1e3), ("mN", "force", 1e-3),
    ("rpm", "angular velocity", 2 * math.pi / 60), ("rev/s", "angular velocity", 2 * math.pi),
    ("g", "acceleration", 9.80665), ("bar", "pressure", 1e5), ("MPa", "pressure", 1e6),
    ("kJ", "energy", 1e3), ("urad", "angle", 1e-6),
])
def test_a_channel_in_a_unit_is_calibrated_to_si(unit, quantity, si_value_of_one):
    cmap = loads_channel_map(f'[channels.c]\nexperiment = "x"\nunit = "{unit}"\n'
                             "gain = 2.0\noffset = 0.5\n")
    ch = cmap.channels[0]
    assert ch.quantity == quantity
    assert ch.si_unit == SI_UNITS[quantity]
    assert ch.calibrate([1.0])[0] == pytest.approx(si_value_of_one)


@pytest.mark.parametrize("spelling, unit", [("\u00b5A", "uA"), ("\u03bcV", "uV"),
                                            ("k\u03a9", "kOhm"), ("\u2126", "Ohm"),
                                            ("ohm", "Ohm"), ("mV", "mV")])
def test_other_spellings_of_micro_and_ohm(spelling, unit):
    assert canonical_unit(spelling) == unit
    cmap = loads_channel_map(f'[channels.c]\nexperiment = "x"\nunit = "{spelling}"\n')
    assert cmap.channels[0].unit == unit


def test_an_unknown_unit_is_named_with_the_known_ones():
    with pytest.raises(ExperimentError) as err:
        loads_channel_map('[channels.c]\nexperiment = "x"\nunit = "volt"\n', "m.toml")
    text = str(err.value)
    assert 'm.toml: channel "c": field "unit": unknown unit "volt"; known units:' in text
    assert ", V, " in text and ", mA, " in text and "\n" not in text


def _servo():
    """A disk on a revolute joint turned by a DC motor, its current and voltage read."""
    m = Model("servo")
    m.add_rigid_body("disk", mass=2.0, com=(0, 0, 0), inertia=(0.01, 0.01, 0.02),
                     inertia_about="com")
    m.add_joint("hub", "revolute", parent="ground", child="disk", axis=(0, 0, 1))
    m.add_actuator("motor", "hub", type="dc_motor", voltage=Steps((0.0, 0.05), (0.0, 6.0)),
                   resistance=2.6, torque_constant=7.68e-3, gear_ratio=70.0, efficiency=0.9,
                   rotor_inertia=3.9e-7, motor_damping=1e-6)
    m.add_sensor("theta", "joint_coordinate", joint="hub")
    m.add_sensor("rate", "joint_rate", joint="hub")
    m.add_sensor("current", "actuator_current", actuator="motor")
    m.add_sensor("voltage", "actuator_voltage", actuator="motor")
    m.add_sensor("reaction", "joint_reaction", joint="hub")
    m.set_solver(method="bdf", t_end=0.3, rtol=1e-8, atol=1e-10)
    m.set_output(step=0.001)
    return m


def test_quantities_of_the_electrical_and_mixed_sensors():
    q = sensor_quantities(model_to_json(_servo()))
    assert q["current"] == "current" and q["voltage"] == "voltage"
    assert q["theta"] == "angle" and q["rate"] == "angular velocity"
    assert q["reaction"] == ("force",) * 3 + ("torque",) * 3


@pytest.mark.parametrize("channel, words", [
    ('sensor = "current"\nunit = "V"',
     '"V" is a voltage unit, but sensor "current" gives a current value (A): expected a '
     "current unit: A, uA, mA"),
    ('sensor = "voltage"\nunit = "mA"',
     '"mA" is a current unit, but sensor "voltage" gives a voltage value (V)'),
    ('sensor = "rate"\nunit = "Hz"',
     '"Hz" is a frequency unit, but sensor "rate" gives an angular velocity value (rad/s)'),
    ('sensor = "reaction"\ncomponent = 3\nunit = "kN"',
     '"kN" is a force unit, but sensor "reaction" gives a torque value (N m)'),
])
def test_a_unit_of_another_quantity_is_refused(channel, words):
    model = _servo()
    q = sensor_quantities(model_to_json(model))
    sensors = {"current": np.zeros(4), "voltage": np.zeros(4), "rate": np.zeros(4),
               "reaction": np.zeros((4, 6))}
    cmap = loads_channel_map(f'[channels.c]\nexperiment = "x"\n{channel}\n', "m.toml")
    with pytest.raises(ExperimentError) as err:
        check_sensors(cmap, sensors, q, "run.h5")
    assert str(err.value).startswith('m.toml: channel "c": field "unit": ')
    assert words in str(err.value) and "\n" not in str(err.value)


@pytest.fixture(scope="module")
def servo_record(tmp_path_factory):
    """A run of the servo and the record of it an acquisition card writes: the current
    in mA, the voltage in V, the angle in deg and the rate in rpm."""
    folder = tmp_path_factory.mktemp("servo_units")
    run = simulate(_servo(), folder / "servo.h5")
    assert run.success, run.message
    r = open_result(folder / "servo.h5")
    t, s = r.time, r.sensors
    csv = folder / "servo.csv"
    columns = np.column_stack([t, 1e3 * s["current"], s["voltage"],
                               np.degrees(s["theta"]), s["rate"] * 60 / (2 * math.pi)])
    with open(csv, "w") as f:
        f.write("time [s],I [mA],U [V],angle [deg],speed [rpm]\n")
        np.savetxt(f, columns, delimiter=",", fmt="%.10g")
    return folder, csv


MAP = """
[channels.current]
experiment = "I"
raw_unit = "mA"
unit = "mA"

[channels.voltage]
experiment = "U"
unit = "V"

[channels.angle]
sensor = "theta"
experiment = "angle"
unit = "deg"

[channels.rate]
experiment = "speed"
unit = "rpm"
"""


def test_a_record_in_ma_and_v_compares_with_the_run(servo_record):
    folder, csv = servo_record
    (folder / "servo.map.toml").write_text(MAP)
    c = compare_files(folder / "servo.h5", csv, folder / "servo.map.toml")
    assert c.channel("current").unit == "A" and c.channel("voltage").unit == "V"
    for ch in c.channels:
        # the record printed to 10 digits: the channels agree to that
        assert ch.nrmse < 1e-8, ch
    assert c.experiment["current"].max() == pytest.approx(6.0 / 2.6, rel=1e-3)


def test_a_volt_channel_on_a_current_sensor_is_one_line(servo_record, capsys):
    folder, csv = servo_record
    bad = folder / "bad.map.toml"
    bad.write_text(MAP.replace('raw_unit = "mA"\nunit = "mA"', 'unit = "V"'))
    r = flexmbs_here(capsys, "compare", folder / "servo.h5", csv, "--map", bad,
                     "-o", folder / "report")
    assert r.returncode == 2
    assert r.stderr.startswith(f'flexmbs: error: {bad}: channel "current": field "unit": '
                               '"V" is a voltage unit, but sensor "current" gives a current '
                               "value (A)"), r.stderr
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
