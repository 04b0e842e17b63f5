"""Quantities written at the output times (numba): energies and sensors of a batch."""

import numpy as np

from ..kinematics.recursive import forward_kinematics
from ..runtime.config import jit_entry
from .controllers import actuator_commands
from .energy import energies
from .motors import load_motor_state
from .sensors import (
    REACTION_SENSOR_FIRST,
    REACTION_SENSOR_LAST,
    reaction_sensor_values,
    sensor_values,
)
from .system import actuator_torques, split_state

__all__ = ["output_quantities", "kinematic_outputs", "reaction_outputs",
           "has_reaction_sensors"]


def has_reaction_sensors(m):
    """True when the model (ModelArrays) has a reaction sensor (joint or contact
    reaction, constraint residual, cut-joint coordinate: flexmbs.dynamics.sensors)."""
    kinds = np.asarray(m.sensor_type)
    return bool(np.any((kinds >= REACTION_SENSOR_FIRST) & (kinds <= REACTION_SENSOR_LAST)))


def output_quantities(m, ws, t, y, energy_out, sensor_out):
    """For each row k: energy_out[k] = (T, V_g, U, V_s, W_nc, ...) and sensor_out[k] =
    the sensors' values at (t[k], y[k]).

    t (k,), y (k, n) states [q, u, w, lambda, mu]; energy_out (k, 7)
    (ENERGY_COMPONENTS), sensor_out (k, sensor_offset[-1]). The reaction sensors come
    from a kernel of their own (reaction_outputs), compiled and called only for a
    model that has them."""
    kinematic_outputs(m, ws, t, y, energy_out, sensor_out)
    if has_reaction_sensors(m):
        reaction_outputs(m, ws, t, y, sensor_out)


@jit_entry
def kinematic_outputs(m, ws, t, y, energy_out, sensor_out):
    """The energies and every sensor but the reaction sensors, row by row (arguments as
    output_quantities). Compiled without reference counting (`config.jit_entry`):
    with it, a row of CHAIN-2 cost 13 us, most of a short run's output."""
    if energy_out.shape[1] != 7 or sensor_out.shape[1] != m.sensor_offset[-1] or \
            energy_out.shape[0] < t.shape[0] or sensor_out.shape[0] < t.shape[0]:
        raise ValueError("output_quantities: energy_out must be (k, 7) and sensor_out "
                         "(k, number of sensor values)")
    nq = ws.mass.shape[0]
    for k in range(t.shape[0]):
        q, u, w = split_state(y[k], nq)
        load_motor_state(m, ws, y[k])
        forward_kinematics(m, ws, t[k], q, u)
        if m.ctrl_act.shape[0] > 0:
            actuator_commands(m, ws, t[k], q, u)
        actuator_torques(m, ws, t[k])
        energies(m, ws, w[0], energy_out[k])
        sensor_values(m, ws, t[k], w, sensor_out[k])


@jit_entry
def reaction_outputs(m, ws, t, y, sensor_out):
    """The reaction sensors' values, row by row (arguments as output_quantities)."""
    if sensor_out.shape[1] != m.sensor_offset[-1] or sensor_out.shape[0] < t.shape[0]:
        raise ValueError("output_quantities: sensor_out must be (k, number of sensor "
                         "values)")
    nq = ws.mass.shape[0]
    for k in range(t.shape[0]):
        q, u, w = split_state(y[k], nq)
        load_motor_state(m, ws, y[k])
        forward_kinematics(m, ws, t[k], q, u)
        if m.ctrl_act.shape[0] > 0:
            actuator_commands(m, ws, t[k], q, u)
        actuator_torques(m, ws, t[k])
        reaction_sensor_values(m, ws, t[k], w, sensor_out[k])
