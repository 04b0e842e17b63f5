"""Quantities written at the output times (numba): energies and sensors of a batch."""

from ..config import jit_entry
from ..kinematics.recursive import forward_kinematics
from .energy import energies
from .sensors import sensor_values
from .system import actuator_torques, split_state

__all__ = ["output_quantities"]


@jit_entry
def output_quantities(m, ws, t, y, energy_out, sensor_out):
    """For each row k: energy_out[k] = (T, V_g, U, V_s, W_nc), sensor_out[k] = sensors.

    t (k,), y (k, 2 nq + 1 + na) states [q, u, w]; energy_out (k, 7) (ENERGY_COMPONENTS),
    sensor_out (k, sensor_offset[-1]). Compiled without reference counting
    (`config.jit_entry`): with it, a row of CHAIN-2 cost 13 us, most of a short run's
    output.
    """
    if energy_out.shape[1] != 7 or sensor_out.shape[1] != m.sensor_offset[-1] or \
            energy_out.shape[0] < t.shape[0] or sensor_out.shape[0] < t.shape[0]:
        raise ValueError("output_quantities: energy_out must be (k, 7) and sensor_out "
                         "(k, number of sensor values)")
    nq = ws.mass.shape[0]
    for k in range(t.shape[0]):
        q, u, w = split_state(y[k], nq)
        forward_kinematics(m, ws, t[k], q, u)
        actuator_torques(m, ws, t[k])
        energies(m, ws, w[0], energy_out[k])
        sensor_values(m, ws, t[k], w, sensor_out[k])
