"""W_nc's rate is the power of the forces the residual applies, for every dissipative
element: structural damping (alpha K, beta M) on nodal and reduced beams with
geometric stiffness, node masses and inertias and a link carried at the tip; modal
damping by mode and by band; joint dampers and a point damper; motors with and
without their torque limit; user laws; loads; in a tree and in a closed loop.

Two checks per model. At states off any trajectory, dE/dt along the state derivative
the kernels give (a directional difference of the energies, exact to O(eps^4)) equals
P = dW_nc/dt: a mismatch between a force and its power shows here to round-off,
without an integrator. Along a run at rtol 1e-10, E(t) - E(0) stays within 1e-8 of
the largest energy term.
"""

import numpy as np
import pytest

import flexmbs
from flexmbs import compile_model, simulate
from flexmbs.dynamics import api
from flexmbs.dynamics.constrained import make_consistent
from flexmbs.formats.toml_reader import loads_model
from flexmbs.simulation import build_system

BASE = """
[model]
name = "dissipation"
gravity = [0.0, 0.0, -9.81]

[solver]
t_end = 0.1
rtol = 1e-10
atol = 1e-12

[output]
step = 0.002

[ground.markers.anchor]
position = [0.3, 0.0, -0.3]

[bodies.upper]
mass = 1.0
com = [0.15, 0.0, 0.0]
inertia = [1e-4, 8e-3, 8e-3]
inertia_about = "com"

[bodies.upper.markers.elbow]
position = [0.3, 0.0, 0.0]

[bodies.arm]
type = "beam"
points = [[0.0, 0.0, 0.0], [0.4, 0.0, 0.0]]
elements = 3
reference = [0.0, 1.0, 0.0]
{beam}

[bodies.arm.node_masses]
"-1" = 0.1

[bodies.arm.node_inertias]
"-1" = [1e-5, 2e-5, 2e-5]

[bodies.arm.section]
type = "round_tube"
outer_diameter = 0.02
wall_thickness = 0.002

[bodies.arm.material]
youngs_modulus = 7.0e10
shear_modulus = 2.63e10
density = 2700.0

[bodies.arm.markers.tip]
node = -1

[bodies.arm.markers.middle]
node = 1

[bodies.payload]
mass = 0.2
com = [0.05, 0.0, 0.0]
inertia = [1e-5, 1e-4, 1e-4]
inertia_about = "com"

[joints.shoulder]
type = "revolute"
parent = "ground"
child = "upper"
axis = [0.0, 1.0, 0.0]
initial = 0.3
{shoulder}

[joints.elbow]
type = "revolute"
parent = "upper"
parent_marker = "elbow"
child = "arm"
axis = [0.0, 0.0, 1.0]
initial = -0.4
initial_rate = 1.0

[joints.wrist]
type = "revolute"
parent = "arm"
parent_marker = "tip"
child = "payload"
axis = [0.0, 1.0, 0.0]
initial_rate = -2.0
"""

ELEMENTS = {
    "alpha": ("beam", "alpha = 1e-4"),
    "beta": ("beam", "beta = 0.5"),
    "modal": ("beam", "modal_damping = 0.02"),
    "modal_list": ("beam", "modes = 3\nmodal_derivatives = false\n"
                           "modal_damping = [0.01, 0.02, 0.05]"),
    "bands": ("beam", 'modal_damping = "bands"'),
    "joint_damper": ("shoulder", "damping = 0.05"),
    "point_damper": ("extra", """
[springs.tie]
body1 = "arm"
marker1 = "middle"
body2 = "ground"
marker2 = "anchor"
stiffness = 50.0
damping = 2.0
"""),
    "motor": ("extra", """
[actuators.elbow]
joint = "elbow"
kp = 20.0
kd = 0.5
gear_ratio = 10.0
rotor_inertia = 1e-5
motor_damping = 1e-4
[actuators.elbow.setpoint]
law = "harmonic"
amplitude = 0.3
omega = 20.0
"""),
    "saturated_motor": ("extra", """
[actuators.elbow]
joint = "elbow"
kp = 20.0
kd = 0.5
gear_ratio = 10.0
max_torque = 0.05
[actuators.elbow.setpoint]
law = "harmonic"
amplitude = 0.3
omega = 20.0
"""),
    "load": ("extra", """
[forces.push]
type = "force"
body = "arm"
marker = "middle"
vector = [0.0, 1.0, 2.0]
frame = "marker"
[forces.push.function]
law = "harmonic"
amplitude = 1.0
omega = 30.0
"""),
}
REDUCED = "modes = 3\ncorrection_modes = true"


def _tip_damper(t, q, u, params, out):
    """A force at the tip against the elastic rates of two tip coordinates, N."""
    c = params[0]
    out[1] = -c * u[int(params[1])]
    out[2] = -c * u[int(params[2])]


def model_text(elements, reduced=False):
    """The base model with the dissipative `elements` (keys of ELEMENTS)."""
    beam = [REDUCED] if reduced else []
    shoulder, extra = [], []
    for e in elements:
        where, text = ELEMENTS[e]
        {"beam": beam, "shoulder": shoulder, "extra": extra}[where].append(text)
    text = BASE.format(beam="\n".join(beam), shoulder="\n".join(shoulder))
    return text + "\n".join(extra)


def build(elements, reduced=False):
    """The model of model_text; the element "user_law" adds a damper at the tip
    written as a user law."""
    model = loads_model(model_text([e for e in elements if e != "user_law"], reduced))
    if "user_law" in elements:
        cm = compile_model(model)
        tip = [n for n in cm.coordinate_names if n.startswith("arm.")][-3:-1]
        model.add_user_law("tip_damper", flexmbs.user_law(_tip_damper), body="arm", marker="tip",
                           frame="marker", params=[0.5], read_coordinates=tip)
    return model


def _directional_rate(cm, t, y, yp, eps):
    """d/dt of T, V_g, U, V_s along y' at (t, y) (W, an array of 4): the 4th-order
    central difference over (t + k eps, y + k eps y'), k = -2..2."""
    nq = cm.nq

    def energy(k):
        z = y + k * eps * yp
        e = api.energies(cm, z[:nq], z[nq:2 * nq], t + k * eps)
        return np.array([e["kinetic"], e["gravity"], e["strain"], e["spring"]])

    return (energy(-2) - 8 * energy(-1) + 8 * energy(1) - energy(2)) / (12 * eps)


def assert_power_balance(rates, power, t):
    """sum(rates) = P to 1e-7 of the largest rate of an energy term (the difference
    quotient's truncation and rounding)."""
    scale = max(np.abs(rates).max(), abs(power), 1e-9)
    assert abs(rates.sum() - power) <= 1e-7 * scale, (
        f"dE/dt = {rates.sum():.12g} W (T {rates[0]:.6g}, V_g {rates[1]:.6g}, U "
        f"{rates[2]:.6g}, V_s {rates[3]:.6g}), P = {power:.12g} W at t = {t}")


ALL = tuple(ELEMENTS) + ("user_law",)
COMBINED = tuple(k for k in ALL if k not in ("saturated_motor", "bands", "modal_list"))
CASES = [((e,), False) for e in ALL] + [((e,), True) for e in ("alpha", "modal", "user_law")] \
    + [(COMBINED, False),
       (tuple(k for k in ALL if k not in ("motor", "modal", "modal_list")), True)]


@pytest.mark.parametrize("elements, reduced", CASES,
                         ids=["+".join(e) + ("-reduced" if r else "") for e, r in CASES])
def test_the_work_rate_is_the_power_of_the_forces(elements, reduced):
    cm = compile_model(build(elements, reduced))
    system = build_system(cm)
    rng = np.random.default_rng(7)
    nq = cm.nq
    for _ in range(3):
        y = cm.initial_state()
        y[:nq] += 0.05 * rng.normal(size=nq) * np.where(np.abs(cm.q0) > 0, 1, 0.01)
        y[nq:2 * nq] += rng.normal(size=nq) * 0.1
        t = float(rng.uniform(0.0, 0.2))
        yp = system.rhs(t, y)
        power = yp[2 * nq]
        eps = 1e-4 / max(1.0, np.abs(yp[nq:2 * nq]).max() ** 0.5)
        assert_power_balance(_directional_rate(cm, t, y, yp, eps), power, t)


USER_MODELS = __import__("pathlib").Path(__file__).parent / "user_models"


def test_the_work_rate_is_the_power_of_the_forces_in_a_closed_loop():
    """The damped flexible four-bar (structural damping, damped pivots, a spring at
    the rocker, a torque-limited PD motor on steps): at states of its run, which hold
    the loop closed, dE/dt along y' is P (the constraint forces do no work there)."""
    model = flexmbs.load_model(USER_MODELS / "four_bar_damped.toml")
    sim = simulate(model, None, t_end=0.2, rtol=1e-9, atol=1e-11)
    assert sim.status == "finished"
    cm = compile_model(model)
    make_consistent(cm)
    system = build_system(cm)
    nq = cm.nq
    for k in (10, 25, 40):
        t = float(sim.t[k])
        y = np.array(sim.y[k])
        yp = system.rhs(t, y)
        power = yp[2 * nq]
        eps = 1e-4 / max(1.0, np.abs(yp[nq:2 * nq]).max() ** 0.5)
        assert_power_balance(_directional_rate(cm, t, y, yp, eps), power, t)


RUNS = [(("alpha", "beta", "joint_damper", "point_damper", "motor", "load", "user_law"), False),
        (("modal", "saturated_motor", "joint_damper"), False),
        (("alpha", "bands", "point_damper", "saturated_motor", "user_law"), True)]


@pytest.mark.parametrize("method", ["bdf"])
@pytest.mark.parametrize("elements, reduced", RUNS,
                         ids=["+".join(e) + ("-reduced" if r else "") for e, r in RUNS])
def test_the_energy_balance_of_a_damped_run_closes_to_the_tolerance(elements, reduced,
                                                                    method, tmp_path):
    """0.1 s at rtol 1e-10: E(t) - E(0) within 1e-8 of the largest energy term."""
    sim = simulate(build(elements, reduced), tmp_path / "run.h5", method=method)
    assert sim.status == "finished", sim.message
    balance = flexmbs.energy_balance(tmp_path / "run.h5")
    assert balance["relative_drift"] <= 1e-8, balance


def test_the_energy_balance_of_a_damped_loop_closes_to_the_tolerance(tmp_path):
    model = flexmbs.load_model(USER_MODELS / "four_bar_damped.toml")
    sim = simulate(model, tmp_path / "run.h5", t_end=0.5, rtol=1e-10, atol=1e-12)
    assert sim.status == "finished", sim.message
    balance = flexmbs.energy_balance(tmp_path / "run.h5")
    assert balance["relative_drift"] <= 1e-8, balance
