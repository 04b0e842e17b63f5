"""The state-space model of a linearization (Linearization.to_statespace,
flexmbs.analysis.statespace): against the nonlinear model's response to small sines
around the first two modes of a flexible link, and against the closed-form matrices
of a DC motor with an inductance."""

import numpy as np
import pytest

import flexmbs
from flexmbs import compile_model, linearize, simulate
from flexmbs.formats.toml_reader import loads_model
from flexmbs.model import Harmonic

control = pytest.importorskip("control")

LINK = """
[model]
name = "link"
gravity = [0.0, 0.0, -9.81]
[solver]
method = "bdf"
rtol = 1e-9
atol = 1e-12
[bodies.hub]
mass = 0.5
inertia = [1.2e-3, 1.2e-3, 2e-3]
inertia_about = "com"
[bodies.hub.markers.clamp]
position = [0.02, 0.0, 0.0]
[bodies.ruler]                 # a steel strip on its edge: it bends in the plane
type = "beam"
points = [[0.0, 0.0, 0.0], [0.42, 0.0, 0.0]]
elements = 6
reference = [0.0, 1.0, 0.0]
modes = 3
modal_damping = 0.05
[bodies.ruler.markers.root]
node = 0
[bodies.ruler.markers.tip]
node = -1
[bodies.ruler.section]
type = "rectangle"
width = 0.0008
height = 0.025
[bodies.ruler.material]
youngs_modulus = 2.0e11
shear_modulus = 7.9e10
density = 7850.0
[joints.shaft]
type = "revolute"
parent = "ground"
child = "hub"
axis = [0.0, 0.0, 1.0]
stiffness = 8.0
damping = 0.15
[joints.clamp]
type = "fixed"
parent = "hub"
parent_marker = "clamp"
child = "ruler"
child_marker = "root"
[actuators.motor]
joint = "shaft"
type = "torque"
gear_ratio = 10.0
rotor_inertia = 2e-6
[actuators.motor.torque]
law = "constant"
value = 0.0
[sensors.angle]
type = "joint_coordinate"
joint = "shaft"
[sensors.tip]
type = "marker_deflection"
body = "ruler"
marker = "tip"
frame = "ruler"
"""
# N m at the motor: a tip deflection of 0.6 mm at the first resonance. The nonlinear
# response departs from the linear one as the amplitude squared, by the modal damping
# of the ruler's derivative coordinates acting on its foreshortening (the test of the
# clamped ruler below): ten times this, a 6 mm tip, takes 2 % off the first resonance
AMPLITUDE = 2e-4
SAMPLES = 64          # per period
DECAY = np.log(1e5)   # the transients' decay before the window: exp(-DECAY)


def _lock_in(y, samples):
    """The complex amplitude of the fundamental of y over whole periods."""
    k = np.arange(len(y))
    return 2.0 / len(y) * np.sum(y * np.exp(-2j * np.pi * k / samples))


def _rigid_link():
    """LINK with the ruler a rigid bar of its mass and inertia (no tip sensor)."""
    start = LINK.index("[bodies.ruler]")
    end = LINK.index("[joints.shaft]")
    bar = """[bodies.ruler]
mass = 0.066
com = [0.21, 0.0, 0.0]
inertia = [1e-6, 9.7e-4, 9.7e-4]
inertia_about = "com"
[bodies.ruler.markers.root]
position = [0.0, 0.0, 0.0]
"""
    text = LINK[:start] + bar + LINK[end:]
    return text[: text.index("[sensors.tip]")]


def _response_errors(text, outputs, modes):
    """The largest gain error (relative) and phase error (degrees) of the linear
    model's frequency response against the nonlinear model's response to a sine of
    the motor's torque at 0.9, 1 and 1.1 times each of its `modes` lowest damped
    frequencies, for the sensor components `outputs`."""
    cm = compile_model(loads_model(text))
    lin = linearize(cm)
    sys = lin.to_statespace(outputs=outputs)
    assert sys.input_labels == ["motor_torque"] and sys.output_labels == outputs
    eig = np.linalg.eigvals(sys.A)
    eig = eig[eig.imag >= -1e-9 * np.abs(eig).max()]
    np.testing.assert_allclose(np.sort(np.abs(eig)), np.sort(np.abs(lin.poles)), rtol=1e-6)
    columns = [k for k, name in enumerate(lin_outputs(cm)) if name in outputs]
    poles = np.sort(np.abs(lin.poles[lin.poles.imag > 0].imag)) / (2 * np.pi)
    settle = DECAY / np.min(-lin.poles.real)     # s: the slowest mode's transient
    worst_gain, worst_phase = 0.0, 0.0
    for f in [r * poles[j] for j in range(modes) for r in (0.9, 1.0, 1.1)]:
        w = 2 * np.pi * f
        period = 1.0 / f
        m = loads_model(text)
        m.actuators["motor"].torque = Harmonic(amplitude=AMPLITUDE, omega=w)
        t_end = period * (np.ceil(settle / period) + 4)
        sim = simulate(m, t_end=t_end, output_step=period / SAMPLES)
        assert sim.status == "finished", sim.message
        last = sim.sensors[-4 * SAMPLES - 1:-1]       # four whole periods
        measured = np.array([_lock_in(last[:, c], SAMPLES) for c in columns])
        start = sim.t[-4 * SAMPLES - 1]
        u = AMPLITUDE * np.exp(1j * (w * start - np.pi / 2))  # sin(w t) at the window
        g_nl = measured / u
        g_lin = np.reshape(sys(1j * w), (len(outputs), -1))[:, 0]
        worst_gain = max(worst_gain, np.abs(np.abs(g_nl) / np.abs(g_lin) - 1).max())
        worst_phase = max(worst_phase, np.degrees(np.abs(np.angle(g_nl / g_lin))).max())
    return worst_gain, worst_phase


def lin_outputs(cm):
    """The sensor components in the order of a result's sensor columns."""
    return flexmbs.analysis.statespace.state_space_matrices(linearize(cm), cm).outputs


def test_the_frequency_response_is_the_nonlinear_models_for_a_rigid_link():
    """The link's hub on its spring, the ruler rigid: gain within 1 % and phase within
    1 degree around its one mode (the input and output matrices, the gear and the
    rotor's inertia)."""
    gain, phase = _response_errors(_rigid_link(), ["angle"], 1)
    assert gain <= 0.01 and phase <= 1.0, (gain, phase)


def test_the_frequency_response_is_the_nonlinear_models_around_two_modes():
    """Gain within 1 % and phase within 1 degree of the nonlinear response to a sine
    of the motor's torque, at 0.9, 1 and 1.1 times each of the first two damped
    frequencies, for the hub's angle and the tip's deflection (measured: 0.03 % and
    0.01 degrees, the nonlinear model's own departure at this amplitude)."""
    gain, phase = _response_errors(LINK, ["angle", "tip[1]"], 2)
    assert gain <= 0.01 and phase <= 1.0, (gain, phase)


RULER = LINK[: LINK.index("[bodies.hub]")] + LINK[
    LINK.index("[bodies.ruler]") : LINK.index("[joints.shaft]")].replace(
    "modes = 3", "modes = 1") + """
[joints.clamp]
type = "fixed"
parent = "ground"
child = "ruler"
child_marker = "root"
[forces.push]
type = "force"
body = "ruler"
marker = "tip"
vector = [0.0, 1.0, 0.0]
[forces.push.function]
law = "constant"
value = 0.0
""" + LINK[LINK.index("[sensors.tip]") :]


def _resonance_gain(text, amplitude):
    """The gain of the tip's deflection to a sine of the tip's force at the first
    damped frequency, nonlinear over linear, and the phase between them (degrees)."""
    cm = compile_model(loads_model(text))
    lin = linearize(cm)
    w = lin.poles[0].imag
    period = 2 * np.pi / w
    m = loads_model(text)
    m.forces["push"].function = Harmonic(amplitude=amplitude, omega=w)
    t_end = period * (np.ceil(DECAY / -lin.poles[0].real / period) + 4)
    sim = simulate(m, t_end=t_end, output_step=period / SAMPLES)
    measured = _lock_in(sim.sensors[-4 * SAMPLES - 1:-1, 1], SAMPLES)
    g_nl = measured / (amplitude * np.exp(1j * (w * sim.t[-4 * SAMPLES - 1] - np.pi / 2)))
    g_lin = np.reshape(lin.to_statespace(outputs=["tip[1]"])(1j * w), -1)[0]
    return np.abs(g_nl / g_lin), np.degrees(np.angle(g_nl / g_lin))


def test_modal_damping_of_the_derivative_coordinates_damps_a_bent_rulers_foreshortening():
    """The ruler clamped, one bending mode and its derivative coordinate (the axial
    motion that lets the bent ruler shorten), pushed at its tip at resonance to a
    2 mm deflection: with the 5 % modal damping on both coordinates, the derivative's
    damping (its mode is axial, 4.7 kHz) acts on the foreshortening, an energy loss
    that grows as the deflection squared, and the resonance is 1 % below the linear
    model's at the same phase; with the bending mode alone damped the nonlinear
    response is the linear one to 1e-4 (measured 3e-7)."""
    gain, phase = _resonance_gain(RULER, 2e-3)
    assert 0.005 < 1 - gain < 0.02 and abs(phase) < 0.1, (gain, phase)
    bending_only = RULER.replace("modal_damping = 0.05", "modal_damping = [0.05, 0.0]")
    gain, phase = _resonance_gain(bending_only, 2e-3)
    assert abs(gain - 1) < 1e-4 and abs(phase) < 0.1, (gain, phase)


def test_the_stiffness_is_the_derivative_of_the_residual_simulate_integrates():
    """K of linearize against extrapolated central differences of the run's residual
    rows M* u' - Q* in the positions, at the state and accelerations of the start (the
    rows scaled by the largest entry of K's row, so that the modal rows count)."""
    from flexmbs.simulation import prepare_run, start_state

    model = loads_model(LINK)
    lin = linearize(compile_model(model))
    system, y0 = start_state(prepare_run(model), 0.0)
    n, nq = system.n, len(lin.q)
    yp0 = system.rhs(0.0, y0)

    def difference(j, h):
        rows = []
        for sign in (1.0, -1.0):
            y = y0.copy()
            y[j] += sign * h
            out = np.zeros(n)
            system.dae_residual(0.0, y, yp0.copy(), (system.m, system.ws), out)
            rows.append(out[nq : 2 * nq])
        return (rows[0] - rows[1]) / (2 * h)

    # central differences extrapolated (Richardson): the residual's elastic rows are
    # cubic in the elastic coordinates, and one central difference is off by h^2 / 6
    # times their third derivative
    k = np.column_stack([(4 * difference(j, 5e-7) - difference(j, 1e-6)) / 3
                         for j in range(nq)])
    scale = np.abs(k).max(axis=1, keepdims=True)
    np.testing.assert_allclose(lin.K / scale, k / scale, rtol=0, atol=1e-5)


def test_a_dc_motor_with_inductance_has_its_closed_form_matrices():
    """theta, theta', i of a rigid load on a DC motor: A and B of the linear ODE of
    tests/test_dc_motor.py, and the current as an output."""
    from test_dc_motor import B_MOTOR, ETA, GEAR, J_LOAD, J_ROTOR, KT, R, _servo
    inductance = 2e-3
    cm = compile_model(_servo("bdf", inductance))
    s = flexmbs.analysis.statespace.state_space_matrices(linearize(cm), cm)
    j = J_LOAD + GEAR ** 2 * J_ROTOR
    b = GEAR ** 2 * B_MOTOR
    a = np.array([[0.0, 1.0, 0.0], [0.0, -b / j, ETA * GEAR * KT / j],
                  [0.0, -KT * GEAR / inductance, -R / inductance]])
    np.testing.assert_allclose(s.A, a, rtol=1e-7, atol=1e-7 * np.abs(a).max())
    np.testing.assert_allclose(s.B, [[0.0], [0.0], [1.0 / inductance]], rtol=1e-7, atol=1e-9)
    assert s.states == ["hub", "hub.rate", "motor.current"]
    assert s.inputs == ["motor.voltage"]
    current = s.outputs.index("current")
    np.testing.assert_allclose(s.C[current], [0.0, 0.0, 1.0], atol=1e-9)
