"""The TOML model reader: every bad input names the file, the item and the field and
says what was expected; a good file gives the expected model objects."""

import dataclasses
import textwrap

import numpy as np
import pytest

from flexmbs import ModelError
from flexmbs.formats.toml_reader import LAW_FIELDS, load_model, loads_model
from flexmbs.model.timefunctions import TIME_FUNCTION_LAWS, ConstantRate, Harmonic, SpinUp, Table
from flexmbs.model.topology import build_topology

# A valid pendulum; the bad-input tests add or replace parts of it.
PENDULUM = """
[model]
name = "pendulum"

[bodies.link1]
mass = 1.0
com = [0.0, 0.0, -0.25]
inertia = [0.0209, 0.0209, 1e-4]
inertia_about = "com"

[bodies.link1.markers.tip]
position = [0.0, 0.0, -0.5]

[joints.j1]
type = "revolute"
parent = "ground"
child = "link1"
axis = [0.0, 1.0, 0.0]
"""

LINK = """
[bodies.{name}]
mass = 1.0
inertia = [0.1, 0.1, 0.1]
inertia_about = "com"
"""

REVOLUTE = """
[joints.{name}]
type = "revolute"
parent = "{parent}"
child = "{child}"
"""


def write(tmp_path, text):
    path = tmp_path / "model.toml"
    path.write_text(textwrap.dedent(text))
    return path


def load_error(tmp_path, text, overrides=()):
    """(the ModelError of loading `text` from a file, the file's path)"""
    path = write(tmp_path, text)
    with pytest.raises(ModelError) as info:
        load_model(path, overrides)
    return info.value, path


def assert_error(err, path, item, field, fragment):
    assert err.source == str(path)
    assert err.item == item
    assert err.field == field
    assert fragment in err.message
    assert str(path) in str(err)


def links(*names):
    return "".join(LINK.format(name=n) for n in names)


def revolutes(*triples):
    return "".join(REVOLUTE.format(name=n, parent=p, child=c) for n, p, c in triples)


# ---------------------------------------------------------------- the file
def test_unparsable_toml(tmp_path):
    err, path = load_error(tmp_path, '[model]\nname = "x"\n\n[bodies.link2\nmass = 1\n')
    assert_error(err, path, None, None, "not valid TOML")
    assert "line 4, column 14" in err.message


def test_missing_file_is_a_model_error(tmp_path):
    path = tmp_path / "nowhere.toml"
    with pytest.raises(ModelError) as info:
        load_model(path)
    assert_error(info.value, path, None, None, "cannot read")


def test_unknown_section(tmp_path):
    err, path = load_error(tmp_path, PENDULUM + "\n[bodys.link2]\nmass = 1.0\n")
    assert_error(err, path, 'section "bodys"', None, "unknown section [bodys]")
    assert "bodies" in err.message


def test_section_that_is_not_a_table(tmp_path):
    err, path = load_error(tmp_path, "[[bodies]]\nmass = 1.0\n")
    assert_error(err, path, 'section "bodies"', None,
                 "expected a table [bodies], got an array")


# ------------------------------------------------------------- field checks
def test_missing_required_field(tmp_path):
    text = PENDULUM.replace("mass = 1.0\n", "")
    err, path = load_error(tmp_path, text)
    assert_error(err, path, 'body "link1"', "mass", 'missing required field "mass"')


def test_unknown_field_lists_the_allowed_ones(tmp_path):
    text = PENDULUM.replace("mass = 1.0", "masss = 1.0")
    err, path = load_error(tmp_path, text)
    assert_error(err, path, 'body "link1"', "masss", 'unknown field "masss"')
    assert "mass, com, inertia, inertia_about" in err.message


def test_unknown_field_of_a_marker(tmp_path):
    text = PENDULUM.replace("position = [0.0, 0.0, -0.5]", "pos = [0.0, 0.0, -0.5]")
    err, path = load_error(tmp_path, text)
    assert_error(err, path, 'marker "tip" on body "link1"', "pos", "position, orientation")


def test_string_where_a_number_is_expected(tmp_path):
    text = PENDULUM.replace("mass = 1.0", 'mass = "1.0"')
    err, path = load_error(tmp_path, text)
    assert_error(err, path, 'body "link1"', "mass", 'expected a number, got a string "1.0"')


def test_table_where_a_list_is_expected(tmp_path):
    text = PENDULUM.replace("com = [0.0, 0.0, -0.25]", "com = {x = 0.0}")
    err, path = load_error(tmp_path, text)
    assert_error(err, path, 'body "link1"', "com", "expected a list of numbers, got a table")


def test_solver_setting_of_the_wrong_type(tmp_path):
    err, path = load_error(tmp_path, PENDULUM + '\n[solver]\nrtol = "tight"\n')
    assert_error(err, path, "solver", "rtol", 'expected a number, got a string "tight"')


def test_unknown_body_type(tmp_path):
    text = PENDULUM.replace("mass = 1.0", 'type = "flexible"\nmass = 1.0')
    err, path = load_error(tmp_path, text)
    assert_error(err, path, 'body "link1"', "type", "expected a body type, one of rigid")


# ------------------------------------------------------------- body values
@pytest.mark.parametrize("mass", ["-1.0", "0.0"])
def test_mass_must_be_positive(tmp_path, mass):
    err, path = load_error(tmp_path, PENDULUM.replace("mass = 1.0", f"mass = {mass}"))
    assert_error(err, path, 'body "link1"', "mass", "expected a positive number")


def test_inertia_not_symmetric(tmp_path):
    text = PENDULUM.replace("inertia = [0.0209, 0.0209, 1e-4]",
                            "inertia = [[1.0, 0.1, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]")
    err, path = load_error(tmp_path, text)
    assert_error(err, path, 'body "link1"', "inertia", "symmetric")


def test_inertia_not_positive_definite(tmp_path):
    text = PENDULUM.replace("inertia = [0.0209, 0.0209, 1e-4]", "inertia = [1.0, 1.0, 0.0]")
    err, path = load_error(tmp_path, text)
    assert_error(err, path, 'body "link1"', "inertia", "positive definite")


def test_inertia_violating_the_triangle_inequality(tmp_path):
    text = PENDULUM.replace("inertia = [0.0209, 0.0209, 1e-4]", "inertia = [1.0, 1.0, 3.0]")
    err, path = load_error(tmp_path, text)
    assert_error(err, path, 'body "link1"', "inertia", "triangle inequality")


def test_inertia_about_origin_not_positive_about_com(tmp_path):
    # about the origin 0.01; m |c|^2 = 0.0625 is more than that: nothing is left about c
    text = (PENDULUM.replace("inertia = [0.0209, 0.0209, 1e-4]",
                             "inertia = [0.01, 0.01, 0.01]")
            .replace('inertia_about = "com"', 'inertia_about = "origin"'))
    err, path = load_error(tmp_path, text)
    assert_error(err, path, 'body "link1"', "inertia", "converted from the frame origin")


def test_inertia_without_inertia_about(tmp_path):
    err, path = load_error(tmp_path, PENDULUM.replace('inertia_about = "com"\n', ""))
    assert_error(err, path, 'body "link1"', "inertia_about", "missing required field")


# ------------------------------------------------------------- joint values
def test_zero_axis(tmp_path):
    err, path = load_error(tmp_path, PENDULUM.replace("axis = [0.0, 1.0, 0.0]",
                                                      "axis = [0.0, 0.0, 0.0]"))
    assert_error(err, path, 'joint "j1"', "axis", "non-zero axis")


def test_non_finite_axis(tmp_path):
    err, path = load_error(tmp_path, PENDULUM.replace("axis = [0.0, 1.0, 0.0]",
                                                      "axis = [nan, 1.0, 0.0]"))
    assert_error(err, path, 'joint "j1"', "axis", "finite")


def test_joint_naming_an_unknown_body(tmp_path):
    err, path = load_error(tmp_path, PENDULUM.replace('child = "link1"', 'child = "link9"'))
    assert_error(err, path, 'joint "j1"', "child", 'unknown body "link9"')


def test_joint_naming_an_unknown_marker(tmp_path):
    text = PENDULUM + links("link2") + revolutes(("j2", "link1", "link2")) + \
        'parent_marker = "tipp"\n'
    err, path = load_error(tmp_path, text)
    assert_error(err, path, 'joint "j2"', "parent_marker", 'unknown marker "tipp" on body '
                 '"link1"')


# ------------------------------------------------------------ topology
def topology_error(tmp_path, text):
    path = write(tmp_path, text)
    model = load_model(path)
    with pytest.raises(ModelError) as info:
        build_topology(model)
    return info.value.with_source(str(path)), path


def test_body_whose_parent_joint_closes_nothing_is_not_connected(tmp_path):
    """j2 and j3 both end at C: one of them is cut (a loop closure), and B, which only
    j3 reaches, is then not connected to the ground."""
    text = links("A", "B", "C") + revolutes(("j1", "ground", "A"), ("j2", "A", "C"),
                                            ("j3", "B", "C"))
    err, path = topology_error(tmp_path, text)
    assert_error(err, path, 'body "B"', None, "not connected to the ground")


def test_body_not_connected_to_ground(tmp_path):
    text = links("A", "B", "C") + revolutes(("j1", "ground", "A"), ("j2", "B", "C"))
    err, path = topology_error(tmp_path, text)
    assert_error(err, path, 'body "B"', None, "not connected to the ground")


FOUR_BAR_JOINTS = (("j1", "ground", "crank"), ("j2", "crank", "coupler"),
                   ("j3", "ground", "rocker"), ("j4", "coupler", "rocker"))


def test_four_bar_loop_without_cut_joint_is_cut_by_choice(tmp_path):
    """No joint marked: the rocker has two joints of which it is the child; the first
    in the file (of the fewest equations) stays in the tree, the other is cut, and
    the compiled model says so."""
    from flexmbs import compile_model
    path = tmp_path / "m.toml"
    path.write_text(links("crank", "coupler", "rocker") + revolutes(*FOUR_BAR_JOINTS))
    cm = compile_model(load_model(path))
    assert cm.topology.cut_joint_names == ("j4",)
    assert cm.topology.cut_reasons == ("chosen",)
    assert any('joint "j4" closes a loop and is cut' in w for w in cm.warnings)


def test_cut_joint_marked_in_the_file(tmp_path):
    from flexmbs import compile_model
    path = tmp_path / "m.toml"
    path.write_text(links("crank", "coupler", "rocker") + revolutes(*FOUR_BAR_JOINTS[:2])
                    + revolutes(FOUR_BAR_JOINTS[3]) + "cut = true\n"
                    + revolutes(FOUR_BAR_JOINTS[2]))
    cm = compile_model(load_model(path))
    assert cm.topology.cut_joint_names == ("j4",)
    assert cm.topology.cut_reasons == ("marked",)
    assert cm.topology.joint_names == ("j1", "j3", "j2")


def test_cut_must_be_a_boolean(tmp_path):
    err, path = load_error(tmp_path, PENDULUM + 'cut = "yes"\n')
    assert_error(err, path, 'joint "j1"', "cut", 'expected true or false, got a string "yes"')


# ------------------------------------------------------------ overrides
def test_set_path_that_does_not_exist(tmp_path):
    err, path = load_error(tmp_path, PENDULUM, ["joints.j2.initial=0.5"])
    assert_error(err, path, '--set "joints.j2.initial"', None, 'no table "j2" in joints')
    assert "existing keys: j1" in err.message


def test_set_path_into_an_array(tmp_path):
    """A whole-number key indexes an array from 0: an element of a list value, or a
    field of an array of tables; an index beyond it is refused with the array's length."""
    model = load_model(write(tmp_path, PENDULUM), ["joints.j1.axis.2=-1.0"])
    axis = model.joints["j1"].rotation_axes[0]  # [0, 1, -1], normalised
    assert axis == pytest.approx([0.0, 2**-0.5, -(2**-0.5)])
    err, path = load_error(tmp_path, PENDULUM, ["joints.j1.axis.3=1.0"])
    assert_error(err, path, '--set "joints.j1.axis.3"', None,
                 '"joints.j1.axis" is an array of 3, not a table: expected an index from 0 '
                 'to 2 after it, got "3"')


def test_set_path_through_a_value(tmp_path):
    err, path = load_error(tmp_path, PENDULUM, ["joints.j1.axis.x=1.0"])
    assert_error(err, path, '--set "joints.j1.axis.x"', None, "not a table")


def test_set_without_value(tmp_path):
    err, path = load_error(tmp_path, PENDULUM, ["solver.rtol"])
    assert_error(err, path, '--set "solver.rtol"', None, "expected dotted.path=value")


def test_set_unknown_leaf_field(tmp_path):
    err, path = load_error(tmp_path, PENDULUM, ["joints.j1.intial=0.5"])
    assert_error(err, path, 'joint "j1"', "intial", 'unknown field "intial"')


def test_set_changes_values(tmp_path):
    path = write(tmp_path, PENDULUM + "\n[solver]\nrtol = 1e-6\n")
    overrides = ["solver.rtol=1e-9", "joints.j1.initial=0.5", "model.gravity=[0, 0, 0]",
                 "bodies.link1.markers.tip.position=[0.5, 0, 0]", "solver.method=dop853",
                 "output.step=0.002"]
    model = load_model(path, overrides)
    assert model.solver.rtol == 1e-9
    assert model.joints["j1"].initial.tolist() == [0.5]
    assert model.gravity.tolist() == [0.0, 0.0, 0.0]
    assert model.marker("link1", "tip").position.tolist() == [0.5, 0.0, 0.0]
    assert model.solver.method == "dop853"  # not TOML: taken as a plain string
    assert model.output.step == 0.002  # [output] is not in the file: created
    assert model.overrides == overrides
    assert model.source_text == path.read_text()
    assert model.source_path == str(path)


def test_set_later_override_wins(tmp_path):
    model = load_model(write(tmp_path, PENDULUM), ["joints.j1.initial=0.5",
                                                   "joints.j1.initial=0.25"])
    assert model.joints["j1"].initial.tolist() == [0.25]


# --------------------------------------------------------- drivers, loads, sensors
DRIVER = """
[drivers.d1]
joint = "{joint}"
law = "rate"
rate = 2.0
"""


def test_driver_on_unknown_joint(tmp_path):
    err, path = load_error(tmp_path, PENDULUM + DRIVER.format(joint="j9"))
    assert_error(err, path, 'driver "d1"', "joint", 'unknown joint "j9"')


def test_driver_coordinate_out_of_range(tmp_path):
    err, path = load_error(tmp_path, PENDULUM + DRIVER.format(joint="j1") + "coordinate = 1\n")
    assert_error(err, path, 'driver "d1"', "coordinate", "expected a coordinate index 0..0")


def test_driver_without_law(tmp_path):
    text = PENDULUM + '\n[drivers.d1]\njoint = "j1"\nrate = 1.0\n'
    err, path = load_error(tmp_path, text)
    assert_error(err, path, 'driver "d1"', "law", 'missing required field "law"')


def test_driver_unknown_law(tmp_path):
    text = PENDULUM + DRIVER.format(joint="j1").replace('"rate"', '"ramp"')
    err, path = load_error(tmp_path, text)
    assert_error(err, path, 'driver "d1"', "law", "expected a law, one of constant, rate")


def test_driver_field_of_another_law(tmp_path):
    text = PENDULUM + DRIVER.format(joint="j1") + "omega = 3.0\n"
    err, path = load_error(tmp_path, text)
    assert_error(err, path, 'driver "d1"', "omega", "allowed fields: law, joint, coordinate, "
                 "value, rate")


def test_table_with_non_increasing_times(tmp_path):
    text = PENDULUM + textwrap.dedent("""
        [drivers.d1]
        joint = "j1"
        law = "table"
        time = [0.0, 1.0, 1.0]
        value = [0.0, 1.0, 2.0]
        """)
    err, path = load_error(tmp_path, text)
    assert_error(err, path, 'driver "d1"', "time", "strictly increasing")


def test_force_table_with_non_increasing_times(tmp_path):
    text = PENDULUM + textwrap.dedent("""
        [forces.push]
        type = "force"
        body = "link1"
        vector = [1.0, 0.0, 0.0]
        [forces.push.function]
        law = "table"
        time = [0.0, 2.0, 1.0]
        value = [0.0, 1.0, 2.0]
        """)
    err, path = load_error(tmp_path, text)
    assert_error(err, path, 'force "push"', "function.time", "strictly increasing")


def test_force_function_non_finite(tmp_path):
    text = PENDULUM + textwrap.dedent("""
        [forces.push]
        type = "force"
        body = "link1"
        vector = [1.0, 0.0, 0.0]
        [forces.push.function]
        law = "harmonic"
        amplitude = 1.0
        omega = inf
        """)
    err, path = load_error(tmp_path, text)
    assert_error(err, path, 'force "push"', "function.omega", "expected finite numbers")


def test_sensor_with_unknown_marker(tmp_path):
    text = PENDULUM + '\n[sensors.s1]\ntype = "marker_position"\nbody = "link1"\n' \
        'marker = "tipp"\n'
    err, path = load_error(tmp_path, text)
    assert_error(err, path, 'sensor "s1"', "marker", 'unknown marker "tipp" on body "link1"')


def test_joint_sensor_with_a_marker_field(tmp_path):
    text = PENDULUM + '\n[sensors.s1]\ntype = "joint_rate"\njoint = "j1"\nmarker = "tip"\n'
    err, path = load_error(tmp_path, text)
    assert_error(err, path, 'sensor "s1"', "marker", "allowed fields: type, joint, coordinate")


def test_law_fields_match_the_time_function_classes():
    assert set(LAW_FIELDS) == set(TIME_FUNCTION_LAWS)
    for law, cls in TIME_FUNCTION_LAWS.items():
        assert list(LAW_FIELDS[law]) == [f.name for f in dataclasses.fields(cls)]


# ------------------------------------------------------------ a good model
COMPLETE = """
[model]
name = "complete"
gravity = [0.0, -9.81, 0.0]

[solver]
method = "scipy-bdf"
t_end = 2.5
rtol = 1e-8
atol = 1e-10
max_step = 0.01

[output]
step = 0.005

[ground.markers.pivot]
position = [0.0, 1.0, 0.0]
euler_xyz = [0.0, 0.0, 1.5707963267948966]

[bodies.arm]
type = "rigid"
mass = 2.0
com = [0.5, 0.0, 0.0]
inertia = [0.01, 0.6666666666666666, 0.6666666666666666]
inertia_about = "origin"

[bodies.arm.markers.tip]
position = [1.0, 0.0, 0.0]
orientation = [[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]

[bodies.slider]
mass = 0.5
inertia = [1e-3, 1e-3, 1e-3, 0.0, 0.0, 0.0]
inertia_about = "com"

[bodies.ball]
mass = 0.1
inertia = [[4e-6, 0.0, 0.0], [0.0, 4e-6, 0.0], [0.0, 0.0, 4e-6]]
inertia_about = "com"

[joints.hinge]
type = "revolute"
parent = "ground"
child = "arm"
parent_marker = "pivot"
axis = [0, 0, 2]
initial = 0.3
initial_rate = -1.0
stiffness = 10.0
damping = 0.1
rest = 0.05

[joints.slide]
type = "prismatic"
parent = "arm"
child = "slider"
parent_marker = "tip"
axis = [1.0, 0.0, 0.0]

[joints.socket]
type = "general"
parent = "slider"
child = "ball"
translation_axes = [[0.0, 0.0, 1.0]]
rotation_axes = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
initial = [0.1, 0.2, 0.3]
cut = false

[drivers.push]
joint = "slide"
law = "harmonic"
amplitude = 0.1
omega = 6.283185307179586

[drivers.lift]
joint = "socket"
coordinate = 0
law = "table"
time = [0.0, 1.0, 2.0]
value = [0.0, 0.1, 0.0]
interpolation = "linear"

[drivers.turn]
joint = "socket"
coordinate = 2
law = "spinup"
rate = 3.0
duration = 0.5

[forces.wind]
type = "force"
body = "arm"
marker = "tip"
vector = [0.0, 0.0, 1.0]
frame = "marker"

[forces.wind.function]
law = "rate"
rate = 2.0

[forces.motor]
type = "torque"
body = "arm"
vector = [0.0, 0.0, 0.5]

[sensors.angle]
type = "joint_coordinate"
joint = "hinge"

[sensors.tilt]
type = "joint_rate"
joint = "socket"
coordinate = 1

[sensors.tip]
type = "marker_position"
body = "arm"
marker = "tip"

[sensors.tip_in_arm]
type = "marker_velocity"
body = "ball"
marker = "origin"
frame = "arm"
"""


def test_complete_model(tmp_path):
    path = write(tmp_path, COMPLETE)
    model = load_model(path)
    assert model.name == "complete"
    assert model.gravity.tolist() == [0.0, -9.81, 0.0]
    assert (model.solver.method, model.solver.t_end, model.solver.rtol, model.solver.atol,
            model.solver.max_step) == ("scipy-bdf", 2.5, 1e-8, 1e-10, 0.01)
    assert model.output.step == 0.005
    assert list(model.bodies) == ["arm", "slider", "ball"]  # file order kept
    assert list(model.joints) == ["hinge", "slide", "socket"]

    pivot = model.marker("ground", "pivot")
    assert np.allclose(pivot.orientation, [[0, -1, 0], [1, 0, 0], [0, 0, 1]])

    # rod of 2 kg, 1 m: m L^2/3 about the end is m L^2/12 about the centre
    arm = model.bodies["arm"]
    assert np.allclose(arm.inertia, np.diag([0.01, 2.0 / 12.0, 2.0 / 12.0]))
    assert np.allclose(arm.inertia_about_origin, np.diag([0.01, 2.0 / 3.0, 2.0 / 3.0]))
    assert np.allclose(model.marker("arm", "tip").orientation[:, 0], [0.0, 1.0, 0.0])
    assert np.allclose(model.bodies["slider"].inertia, 1e-3 * np.eye(3))

    hinge = model.joints["hinge"]
    assert hinge.parent_marker == "pivot" and hinge.child_marker == "origin"
    assert np.allclose(hinge.rotation_axes, [[0.0, 0.0, 1.0]])  # normalised
    assert (hinge.initial[0], hinge.initial_rate[0], hinge.stiffness[0], hinge.damping[0],
            hinge.rest[0]) == (0.3, -1.0, 10.0, 0.1, 0.05)
    socket = model.joints["socket"]
    assert socket.ndof == 3 and socket.initial.tolist() == [0.1, 0.2, 0.3]
    assert socket.coordinate_names() == ["socket[0]", "socket[1]", "socket[2]"]

    assert model.drivers["push"].function == Harmonic(amplitude=0.1, omega=2 * np.pi)
    assert model.drivers["push"].coordinate == 0
    assert model.drivers["lift"].function == Table((0.0, 1.0, 2.0), (0.0, 0.1, 0.0), "linear")
    assert model.drivers["turn"].function == SpinUp(rate=3.0, duration=0.5)
    assert model.drivers["turn"].coordinate == 2

    wind = model.forces["wind"]
    assert (wind.type, wind.marker, wind.frame) == ("force", "tip", "marker")
    assert wind.function == ConstantRate(value=0.0, rate=2.0)
    motor = model.forces["motor"]
    assert motor.marker == "origin" and motor.frame == "global"
    assert motor.function.law == "constant" and motor.function.value == 1.0

    assert model.sensors["angle"].coordinate == 0
    assert model.sensors["tilt"].coordinate == 1
    assert model.sensors["tip"].frame == "ground"
    assert model.sensors["tip_in_arm"].frame == "arm"

    assert model.source_text == path.read_text() and model.overrides == []
    assert build_topology(model).body_names == ("arm", "slider", "ball")


def test_loads_model_names_its_source():
    with pytest.raises(ModelError) as info:
        loads_model(PENDULUM.replace("mass = 1.0", "mass = -1.0"), source="inline.toml")
    assert info.value.source == "inline.toml"
    assert str(info.value).startswith('inline.toml: body "link1": field "mass": ')


NAMED = """
[bodies."{body}"]
mass = 1.0
inertia = [0.1, 0.1, 0.1]
inertia_about = "com"
[joints."{joint}"]
type = "revolute"
parent = "ground"
child = "{body}"
[sensors."{sensor}"]
type = "joint_coordinate"
joint = "{joint}"
"""


@pytest.mark.parametrize("body, joint, sensor, field, words", [
    ("link one", "j", "s", 'body "link one"', "no spaces or dots"),
    ("link.1", "j", "s", 'body "link.1"', "no spaces or dots"),
    ("arm", "arm", "s", 'joint "arm"', "that of a body"),
    ("arm", "j.1", "s", 'joint "j.1"', "no spaces or dots"),
    ("arm", "j", "a b", 'sensor "a b"', "without spaces"),
    ("arm", "j", "a/b", 'sensor "a/b"', "without spaces or '/'"),
])
def test_names_that_would_be_ambiguous_are_refused(body, joint, sensor, field, words):
    """Names make coordinate names ("joint.rz", "body.n3.u"), --set paths and the
    datasets of the result file: no spaces or dots in the names of bodies, joints and
    the other items, none of spaces or '/' in a sensor's, and no body and joint of the
    same name."""
    text = NAMED.format(body=body, joint=joint, sensor=sensor)
    with pytest.raises(ModelError) as err:
        loads_model(text, source="named.toml")
    assert field in str(err.value) and words in str(err.value)
    assert 'field "name"' in str(err.value)


def test_sensors_may_be_named_after_coordinates():
    model = loads_model(NAMED.format(body="arm", joint="j", sensor="j.rz"))
    assert "j.rz" in model.sensors


def test_an_axis_is_a_direction_whatever_its_length():
    """Components near the float64 limit give the same unit axis as small ones (the norm
    is taken after scaling), and a zero axis is refused."""
    from flexmbs.model.field_checks import _axis
    big = _axis([1e308, 1e308, 0.0], "joint", "axis")
    assert np.allclose(big, [2 ** -0.5, 2 ** -0.5, 0.0], rtol=0, atol=1e-15)
    assert np.allclose(_axis([3e-10, 4e-10, 0.0], "joint", "axis"), [0.6, 0.8, 0.0])
    with pytest.raises(ModelError, match="non-zero axis"):
        _axis([0.0, 0.0, 0.0], "joint", "axis")
