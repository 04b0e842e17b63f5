"""Quantities written at the output times (numba): energies and sensors of a batch."""

from ..config import jit
from ..kinematics.recursive import forward_kinematics
from .energy import energies
from .sensors import sensor_values
from .system import actuator_torques, split_state

__all__ = ["output_quantities"]


@jit
def output_quantities(m, ws, t, y, energy_out, sensor_out):
    """For each row k: energy_out[k] = (T, V_g, U, V_s, W_nc), sensor_out[k] = sensors.

    t (k,), y (k, 2 nq + 1 + na) states [q, u, w].
    """
    nq = ws.mass.shape[0]
    for k in range(t.shape[0]):
        q, u, w = split_state(y[k], nq)
        forward_kinematics(m, ws, t[k], q, u)
        actuator_torques(m, ws, t[k])
        energies(m, ws, w[0], energy_out[k])
        sensor_values(m, ws, w, sensor_out[k])
