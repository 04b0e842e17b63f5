"""The switch functions of a model (numba) and the discrete state they set: the state
events at which the integrators stop, locate the crossing and restart
(flexmbs.solvers.events).

An actuator a with a torque limit has two switch functions,

    g_2a = max_torque - tau_m,      g_2a+1 = max_torque + tau_m,

tau_m the motor torque before the limit (N m, motor_torque_before_limit): both are
positive while the motor is within its limit, g_2a < 0 past +max_torque, g_2a+1 < 0
past -max_torque. Between events the integrator holds each actuator's branch
(ws.act_branch: 0 within the limits, +1 at +max_torque, -1 at -max_torque), so the
torque is one smooth function of the state over a segment and its kink, where the
motor enters or leaves saturation, is a restart. An actuator without a limit has
g = 1 (never crossed). A model without limits has no switch functions.
"""

import numpy as np

from ..config import jit_entry, jit_inline
from ..kinematics.timefunctions import evaluate_time_function
from ..tuple_ref import member_ref, tuple_ref
from .controllers import actuator_commands

__all__ = ["motor_torque_before_limit", "limited_motor_torque", "switch_values",
           "dae_switch_values", "switch_count", "actuator_branches"]


@jit_inline
def motor_torque_before_limit(m, ws, a, t, x, xd):
    """tau_m (N m) of actuator a before its limit: (kp (x_ref - x) + kd (x_ref' -
    x')) / n for type pd (x_ref = setpoint(t)), torque(t) for type torque, plus the
    controllers' command ws.act_command[a]; x, x' its joint coordinate and rate
    (rad, rad/s or m, m/s)."""
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


@jit_entry
def switch_values(m, ws, t, y, out):
    """out (2 na) = the actuators' switch functions (module text) at (t, y), y =
    [q, u, ...]; reads the state directly (no kinematics)."""
    nq = ws.q.shape[0]
    if m.ctrl_act.shape[0] > 0:
        actuator_commands(m, ws, t, y[:nq], y[nq:2 * nq])
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


@jit_entry
def dae_switch_values(t, y, args, out):
    """`switch_values` in the argument order of the integrators' switch hook, args =
    (m, ws) or a reference to it (flexmbs.tuple_ref)."""
    ref = tuple_ref(args)
    switch_values(member_ref(ref, 0), member_ref(ref, 1), t, y, out)


def switch_count(m):
    """The number of switch functions of a model's arrays: 2 per actuator when one
    of them has a torque limit, else 0."""
    return 2 * len(m.act_max) if np.any(np.isfinite(m.act_max)) else 0


def actuator_branches(g):
    """Each actuator's branch (0, +1, -1; ws.act_branch) for switch functions g on
    their side: +1 where max_torque - tau_m < 0, -1 where max_torque + tau_m < 0."""
    g = np.asarray(g, dtype=float).reshape(-1, 2)
    return np.where(g[:, 0] < 0.0, 1.0, np.where(g[:, 1] < 0.0, -1.0, 0.0))
