"""The switch functions of a model (numba) and the discrete state they set: the state
events at which the integrators stop, locate the crossing and restart
(flexmbs.solvers.events).

Each kind of element has a block of its own in the vector of switch functions, one
after the other (switch_blocks): the actuators' torque limits, the DC motors' voltage
and current limits (flexmbs.dynamics.motors), the joint stops
(flexmbs.dynamics.stops); a kind the model does not use has an empty block.

Torque limits. An actuator a with a torque limit has two switch functions,

    g_2a = max_torque - tau_m,      g_2a+1 = max_torque + tau_m,

tau_m the motor torque before the limit (N m, motor_torque_before_limit): both are
positive while the motor is within its limit, g_2a < 0 past +max_torque, g_2a+1 < 0
past -max_torque. Between events the integrator holds each actuator's branch
(ws.act_branch: 0 within the limits, +1 at +max_torque, -1 at -max_torque), so the
torque is one smooth function of the state over a segment and its kink, where the
motor enters or leaves saturation, is a restart. An actuator without a limit has
g = 1 (never crossed). A model without limits has no switch functions.

DC motors (4 per actuator when a DC motor has a limit): V_max - K_a u and
V_max + K_a u (the amplifier's voltage limit), then for the current, without an
inductance i_max - i_free and i_max + i_free (i_free = (V - k_e n x') / R), with one
i_max - i and i_max + i while the current is free, and while it is held at +i_max
(-i_max) the function of that side becomes -(V - R i - k_e n x') / R (its opposite):
positive once the voltage would drive the current back (motor_branches, which then
writes the held side's new value). Joint stops (2 per stop): upper - x, x - lower.
"""

import numpy as np

from ..kinematics.timefunctions import evaluate_time_function
from ..runtime.config import jit_entry, jit_inline
from .controllers import actuator_commands
from .motors import DC_MOTOR, command_voltage, dc_motor_torque, limited, load_motor_state
from .stops import stop_switch_values

__all__ = ["motor_torque_before_limit", "limited_motor_torque", "switch_values",
           "switch_count", "switch_blocks", "actuator_branches",
           "set_branches"]


@jit_inline
def motor_torque_before_limit(m, ws, a, t, x, xd):
    """tau_m (N m) of actuator a before its limit: (kp (x_ref - x) + kd (x_ref' -
    x')) / n for type pd (x_ref = setpoint(t)), torque(t) for type torque, plus the
    controllers' command ws.act_command[a]; eta k_t i for a DC motor
    (flexmbs.dynamics.motors); x, x' its joint coordinate and rate (rad, rad/s or
    m, m/s)."""
    if m.act_type[a] == DC_MOTOR:
        return dc_motor_torque(m, ws, a, t, xd)
    evaluate_time_function(m.tf_kind, m.tf_ptr, m.tf_data, m.act_function[a], t,
                           ws.segment_time[0], ws.tf3)
    if m.act_type[a] == 0:
        return (m.act_kp[a] * (ws.tf3[0] - x) + m.act_kd[a] * (ws.tf3[1] - xd)) / \
            m.act_gear[a] + ws.act_command[a]
    return ws.tf3[0] + ws.act_command[a]


@jit_inline
def limited_motor_torque(m, ws, a, tm):
    """The motor torque tau_m limited to |tau_m| <= max_torque: by its branch held
    over the segment (ws.act_branch[a]: 0 as is, +1 at +max, -1 at -max), or by
    value outside a run (NaN)."""
    lim = m.act_max[a]
    b = ws.act_branch[a]
    if np.isnan(b):
        if tm > lim:
            return lim
        if tm < -lim:
            return -lim
        return tm
    if b > 0.0:
        return lim
    if b < 0.0:
        return -lim
    return tm


@jit_inline
def torque_switch_count(m):
    """The torque limits' block: 2 per actuator when one has a limit, else 0."""
    for a in range(m.act_max.shape[0]):
        if np.isfinite(m.act_max[a]):
            return 2 * m.act_max.shape[0]
    return 0


@jit_inline
def motor_switch_count(m):
    """The DC motors' block: 4 per actuator when a DC motor has a limit, else 0."""
    for a in range(m.act_type.shape[0]):
        if m.act_type[a] == DC_MOTOR and (np.isfinite(m.act_max_voltage[a])
                                          or np.isfinite(m.act_max_current[a])):
            return 4 * m.act_type.shape[0]
    return 0


@jit_inline
def _torque_switch_values(m, ws, t, y, out):
    """The torque limits' block (module text) into out[0:2 na]."""
    nq = ws.q.shape[0]
    for a in range(m.act_coord.shape[0]):
        lim = m.act_max[a]
        if not np.isfinite(lim):
            out[2 * a] = 1.0
            out[2 * a + 1] = 1.0
            continue
        k = m.coord_qindex[m.act_coord[a]]
        tm = motor_torque_before_limit(m, ws, a, t, y[k], y[nq + k])
        out[2 * a] = lim - tm
        out[2 * a + 1] = lim + tm


@jit_inline
def _motor_switch_values(m, ws, t, y, out, first):
    """The DC motors' block (module text) into out[first:first + 4 na]."""
    nq = ws.q.shape[0]
    for a in range(m.act_coord.shape[0]):
        o = first + 4 * a
        for r in range(4):
            out[o + r] = 1.0
        if m.act_type[a] != DC_MOTOR:
            continue
        v = command_voltage(m, ws, a, t)
        vmax = m.act_max_voltage[a]
        if np.isfinite(vmax):
            out[o] = vmax - v
            out[o + 1] = vmax + v
        imax = m.act_max_current[a]
        if not np.isfinite(imax):
            continue
        v = limited(v, vmax, ws.motor_branch[a, 0])
        xd = y[nq + m.coord_qindex[m.act_coord[a]]]
        r_ = m.act_resistance[a]
        emf = m.act_ke[a] * m.act_gear[a] * xd
        if m.act_inductance[a] == 0.0:
            i = (v - emf) / r_
            out[o + 2] = imax - i
            out[o + 3] = imax + i
            continue
        i = ws.motor_current[a]
        out[o + 2] = imax - i
        out[o + 3] = imax + i
        held = ws.motor_branch[a, 1]
        if held > 0.0:
            out[o + 2] = -(v - r_ * i - emf) / r_
        elif held < 0.0:
            out[o + 3] = (v - r_ * i - emf) / r_


@jit_entry
def switch_values(m, ws, t, y, out):
    """out = the model's switch functions (module text) at (t, y), y = [q, u, ...],
    block after block; reads the state directly (no kinematics)."""
    load_motor_state(m, ws, y)
    if m.ctrl_act.shape[0] > 0:
        nq = ws.q.shape[0]
        actuator_commands(m, ws, t, y[:nq], y[nq:2 * nq])
    first = torque_switch_count(m)
    if first:
        _torque_switch_values(m, ws, t, y, out)
    nmotor = motor_switch_count(m)
    if nmotor:
        _motor_switch_values(m, ws, t, y, out, first)
    stop_switch_values(m, y, out, first + nmotor)


def switch_blocks(m):
    """{kind: (first, count)} of the blocks of switch functions of a model's arrays:
    "torque" (the actuators' torque limits), "motor" (the DC motors' limits), "stop"
    (the joint stops), in that order (module text)."""
    torque = 2 * len(m.act_max) if np.any(np.isfinite(m.act_max)) else 0
    dc = np.asarray(m.act_type) == DC_MOTOR
    limited_dc = dc & (np.isfinite(m.act_max_voltage) | np.isfinite(m.act_max_current))
    motor = 4 * len(m.act_type) if np.any(limited_dc) else 0
    stop = 2 * len(m.stop_coord)
    return {"torque": (0, torque), "motor": (torque, motor), "stop": (torque + motor, stop)}


def switch_count(m):
    """The number of switch functions of a model's arrays (switch_blocks)."""
    return sum(count for _, count in switch_blocks(m).values())


def actuator_branches(g):
    """Each actuator's branch (0, +1, -1; ws.act_branch) for switch functions g on
    their side: +1 where max_torque - tau_m < 0, -1 where max_torque + tau_m < 0."""
    g = np.asarray(g, dtype=float).reshape(-1, 2)
    return np.where(g[:, 0] < 0.0, 1.0, np.where(g[:, 1] < 0.0, -1.0, 0.0))


def _held_current_branch(old, upper, lower):
    """The branch of a current held by an inductance (module text): its old branch
    and its two switch functions after a crossing."""
    if old > 0.0:
        return 0.0 if upper > 0.0 else 1.0
    if old < 0.0:
        return 0.0 if lower > 0.0 else -1.0
    return 1.0 if upper < 0.0 else (-1.0 if lower < 0.0 else 0.0)


def motor_branches(m, ws, t, y, g):
    """ws.motor_branch for the DC motors' block g (4 per actuator) on its side; where
    a held current's branch changed, g's entries of that motor become their values
    on the new branch (written in place)."""
    g4 = g.reshape(-1, 4)
    changed = []
    for a in range(len(g4)):
        if m.act_type[a] != DC_MOTOR:
            continue
        ws.motor_branch[a, 0] = actuator_branches(g4[a, :2])[0]
        if m.act_inductance[a] == 0.0:
            ws.motor_branch[a, 1] = actuator_branches(g4[a, 2:])[0]
            continue
        old = ws.motor_branch[a, 1]
        new = _held_current_branch(0.0 if np.isnan(old) else old, g4[a, 2], g4[a, 3])
        ws.motor_branch[a, 1] = new
        if new != (0.0 if np.isnan(old) else old):
            changed.append(a)
    return changed


def set_branches(m, ws, t, y, g, values):
    """The discrete state of a run (ws.act_branch, ws.motor_branch, ws.stop_branch)
    for the switch functions g (switch_blocks' layout) on their side at (t, y); g's
    entries whose function depends on it are rewritten for it (motor_branches), from
    `values`(t, y), the functions' values in that layout under the new branches."""
    blocks = switch_blocks(m)
    first, count = blocks["torque"]
    if count:
        ws.act_branch[:] = actuator_branches(g[first : first + count])
    first, count = blocks["motor"]
    if count:
        changed = motor_branches(m, ws, t, y, g[first : first + count])
        if changed:
            fresh = values(t, y)
            for a in changed:
                g[first + 4 * a : first + 4 * a + 4] = fresh[first + 4 * a : first + 4 * a + 4]
    first, count = blocks["stop"]
    if count:
        ws.stop_branch[:] = actuator_branches(g[first : first + count])
