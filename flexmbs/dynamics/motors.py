"""DC motors driven by voltage (numba): the armature's current, the motor torque, the
electrical states and their energy.

An amplifier of gain K_a turns its input u(t) (the actuator's `voltage` law, V, plus
the command of the controllers driving it, flexmbs.dynamics.controllers) into
the voltage V = K_a u, limited to |V| <= V_max. The armature, of resistance R and
inductance L, carries the current i,

    L di/dt = V - R i - k_e n x'          (x' the joint rate, n x' the motor's)

limited to |i| <= i_max by the amplifier; without inductance i = (V - k_e n x') / R.
The motor torque tau_m = eta k_t i goes through the gear to the joint, where the
actuator applies n tau_m - n^2 b_m x' (flexmbs.dynamics.system.actuator_torques),
the rotor's n^2 J_r among the inertias.

At the limit of its current the amplifier holds it: with an inductance, i stays at
+-i_max (di/dt = 0) while the voltage would drive it further, the amplifier then
applying V_m = R i + k_e n x' (less than asked); without one, i = +-i_max and the
same V_m. The limits are kinks that the integrators locate as state events (the
motors' block of flexmbs.dynamics.switches): between them each limit's branch is held
(ws.motor_branch[a, 0] the voltage's, [a, 1] the current's: 0 within, +1 at the upper
limit, -1 at the lower; NaN outside a run: by value).

Energy (docs/explanation/formulation.md section 7). The source delivers V_m i, the
winding burns R i^2, its field holds L i^2 / 2 (magnetic co-energy, which in the
Lagrangian of an electromechanical system plays the part of a kinetic energy, and
counts in T), the gear loses (1 - eta) k_t n i x', the motor's viscous resistance
n^2 b_m x'^2, and a back-EMF constant other than the torque constant converts
(k_e - k_t) n i x' into heat. W_nc counts the motor's power as

    P_motor = V_m i - R i^2 - (1 - eta) k_t n i x' - (k_e - k_t) n i x' - n^2 b_m x'^2
            = d(L i^2 / 2)/dt + (n eta k_t i - n^2 b_m x') x'

(the second line by the armature's equation), so that the balance
E = T + V_g + U + V_s - W_nc holds the electrical side too. Each motor's electrical
states, after the works W_nc and W_a in the state: the work of its source
W_source = int V_m i dt and its resistive loss W_resistive = int R i^2 dt (J), and
its current i (A) when L > 0 (act_electric, elec_actuator in flexmbs.model.arrays).
"""

import numpy as np

from ..kinematics.timefunctions import evaluate_time_function
from ..runtime.config import jit_inline

__all__ = ["DC_MOTOR", "work_count", "load_motor_state", "command_voltage", "motor_voltage",
           "motor_current", "terminal_voltage", "current_rate", "dc_motor_torque",
           "dc_motor_power", "electrical_rates", "magnetic_energy", "limited"]

DC_MOTOR = 2
"""act_type of a DC motor (flexmbs.model.arrays.ACTUATOR_CODES)."""


@jit_inline
def work_count(m):
    """The length of w in the state: W_nc, W_a of each actuator, the electrical
    states."""
    return 1 + m.act_coord.shape[0] + m.elec_actuator.shape[0]


@jit_inline
def _electric_index(m, a, nq):
    """The index in y of motor a's first electrical state (W_source)."""
    return 2 * nq + 1 + m.act_coord.shape[0] + m.act_electric[a]


@jit_inline
def load_motor_state(m, ws, y):
    """ws.motor_current = the current of each DC motor with an inductance, from the
    state y (the kernels read it from there)."""
    nq = ws.mass.shape[0]
    for a in range(m.act_coord.shape[0]):
        if m.act_type[a] == DC_MOTOR and m.act_inductance[a] > 0.0:
            ws.motor_current[a] = y[_electric_index(m, a, nq) + 2]


@jit_inline
def limited(value, limit, branch):
    """value limited to |value| <= limit: by its branch held over a segment (0 as is,
    +1 at +limit, -1 at -limit), or by value (branch NaN)."""
    if np.isnan(branch):
        if value > limit:
            return limit
        if value < -limit:
            return -limit
        return value
    if branch > 0.0:
        return limit
    if branch < 0.0:
        return -limit
    return value


@jit_inline
def command_voltage(m, ws, a, t):
    """K_a (u(t) + u_c): the voltage the amplifier is asked for (V), u_c the
    controllers' command ws.act_command[a] (flexmbs.dynamics.controllers)."""
    evaluate_time_function(m.tf_kind, m.tf_ptr, m.tf_data, m.act_function[a], t,
                           ws.segment_time[0], ws.tf3)
    return m.act_amplifier[a] * (ws.tf3[0] + ws.act_command[a])


@jit_inline
def motor_voltage(m, ws, a, t):
    """V: the command voltage within the amplifier's limit (V)."""
    return limited(command_voltage(m, ws, a, t), m.act_max_voltage[a], ws.motor_branch[a, 0])


@jit_inline
def _back_emf(m, a, xd):
    """k_e n x' (V)."""
    return m.act_ke[a] * m.act_gear[a] * xd


@jit_inline
def motor_current(m, ws, a, t, xd):
    """i (A) at the joint rate xd: the state's (with an inductance), else
    (V - k_e n x') / R within the current limit."""
    if m.act_inductance[a] > 0.0:
        return ws.motor_current[a]
    free = (motor_voltage(m, ws, a, t) - _back_emf(m, a, xd)) / m.act_resistance[a]
    return limited(free, m.act_max_current[a], ws.motor_branch[a, 1])


@jit_inline
def _current_held(m, ws, a):
    """The amplifier holds the current of motor a (an inductance) at its limit."""
    b = ws.motor_branch[a, 1]
    if np.isnan(b):
        return abs(ws.motor_current[a]) >= m.act_max_current[a]
    return b != 0.0


@jit_inline
def terminal_voltage(m, ws, a, t, xd, i):
    """V_m: the voltage the amplifier applies (V). Without an inductance R i +
    k_e n x' (V itself within the current limit); with one V, or, while the current
    is held at its limit, R i + k_e n x'."""
    if m.act_inductance[a] > 0.0 and not _current_held(m, ws, a):
        return motor_voltage(m, ws, a, t)
    return m.act_resistance[a] * i + _back_emf(m, a, xd)


@jit_inline
def current_rate(m, ws, a, t, xd, i):
    """di/dt (A/s) of a motor with an inductance: (V - R i - k_e n x') / L, 0 while
    the current is held at its limit."""
    if _current_held(m, ws, a):
        return 0.0
    v = motor_voltage(m, ws, a, t)
    return (v - m.act_resistance[a] * i - _back_emf(m, a, xd)) / m.act_inductance[a]


@jit_inline
def dc_motor_torque(m, ws, a, t, xd):
    """tau_m = eta k_t i (N m, at the motor after the gear's loss)."""
    return m.act_efficiency[a] * m.act_kt[a] * motor_current(m, ws, a, t, xd)


@jit_inline
def dc_motor_power(m, ws, a, t, xd):
    """P_motor of the module text (W): the source's power less the resistive, gear,
    conversion and viscous losses."""
    i = motor_current(m, ws, a, t, xd)
    n = m.act_gear[a]
    vm = terminal_voltage(m, ws, a, t, xd, i)
    kt = m.act_kt[a]
    converted = n * i * xd
    return (vm * i - m.act_resistance[a] * i * i
            - (1.0 - m.act_efficiency[a]) * kt * converted
            - (m.act_ke[a] - kt) * converted - m.act_damping[a] * xd * xd)


@jit_inline
def electrical_rates(m, ws, t, out, first):
    """out[first + act_electric[a] + ...] = d/dt of each motor's electrical states:
    V_m i, R i^2 and, with an inductance, di/dt (after the kinematics: ws.xd)."""
    for a in range(m.act_coord.shape[0]):
        if m.act_type[a] != DC_MOTOR:
            continue
        xd = ws.xd[m.act_coord[a]]
        i = motor_current(m, ws, a, t, xd)
        k = first + m.act_electric[a]
        out[k] = terminal_voltage(m, ws, a, t, xd, i) * i
        out[k + 1] = m.act_resistance[a] * i * i
        if m.act_inductance[a] > 0.0:
            out[k + 2] = current_rate(m, ws, a, t, xd, i)


@jit_inline
def magnetic_energy(m, ws):
    """sum L i^2 / 2 over the motors with an inductance (J)."""
    e = 0.0
    for a in range(m.act_coord.shape[0]):
        if m.act_type[a] == DC_MOTOR and m.act_inductance[a] > 0.0:
            e += 0.5 * m.act_inductance[a] * ws.motor_current[a] ** 2
    return e
