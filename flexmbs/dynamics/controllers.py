"""The controllers' commands of the actuators (numba; flexmbs.model.controllers).

ws.act_command[a] = the sum of the outputs of the controllers driving actuator a:
a sampled controller's held output ws.ctrl_held[k] (set between the integrator's
segments, flexmbs.simulation.sampled_control), a continuous one's

    u = clip(offset + sum_i gain_i (r_i(t) - y_i) - rate_gain_i y_i', min, max)

y_i a free coordinate q_j (y' = u_j) or its rate u_j, r_i(t) its set-point (0
without one).
"""

from ..kinematics.timefunctions import evaluate_time_function
from ..runtime.config import jit

__all__ = ["actuator_commands", "has_controllers"]


@jit
def actuator_commands(m, ws, t, q, u):
    """ws.act_command (na,) at time t and coordinates q, speeds u (module text)."""
    ws.act_command[:] = 0.0
    for k in range(m.ctrl_act.shape[0]):
        if m.ctrl_sampled[k] == 1:
            ws.act_command[m.ctrl_act[k]] += ws.ctrl_held[k]
            continue
        v = m.ctrl_offset[k]
        for i in range(m.ctrl_in_ptr[k], m.ctrl_in_ptr[k + 1]):
            j = m.ctrl_in_q[i]
            r = 0.0
            if m.ctrl_in_setpoint[i] >= 0:
                evaluate_time_function(m.tf_kind, m.tf_ptr, m.tf_data,
                                       m.ctrl_in_setpoint[i], t, ws.segment_time[0],
                                       ws.tf3)
                r = ws.tf3[0]
            if m.ctrl_in_rate[i] == 1:
                v += m.ctrl_in_gain[i, 0] * (r - u[j])
            else:
                v += m.ctrl_in_gain[i, 0] * (r - q[j]) - m.ctrl_in_gain[i, 1] * u[j]
        lo = m.ctrl_limits[k, 0]
        hi = m.ctrl_limits[k, 1]
        if v < lo:
            v = lo
        elif v > hi:
            v = hi
        ws.act_command[m.ctrl_act[k]] += v


def has_controllers(m):
    """True when the model has controllers (in Python)."""
    return len(m.ctrl_act) > 0
