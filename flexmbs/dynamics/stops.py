"""Joint stops (numba): the limits of a joint coordinate as compliant stops.

Stop s holds coordinate x (m or rad) within [lower, upper]. Past a limit, by the
penetration d = x - upper (or lower - x), the stop pushes back with the generalized
force

    Q_stop = -(k d + c x')       at the upper limit,   -(-k d + c x') at the lower,

a spring of stiffness k (N/m or N m/rad) and a damper c (N s/m or N m s/rad) that act
while the stop is touched (Kelvin and Voigt's contact; the damper can pull during the
rebound, as Simscape's hard stop with damped rebound does). Its force jumps by c x' at
the contact and at the release, where the integrators stop, locate the crossing of
the limit and start again (the stops' block of flexmbs.dynamics.switches; between
them the contact's branch ws.stop_branch[s] is held: 0 free, +1 on the upper stop, -1
on the lower; NaN outside a run: by value).

Energy: the stop's spring holds k d^2 / 2 (in V_s), its damper takes c x'^2 (in
W_nc); both vanish at the contact's ends (d = 0), so the balance has no jump there.
"""

import numpy as np

from ..runtime.config import jit_inline

__all__ = ["stop_side", "stop_force", "add_stop_forces", "stops_energy_and_power",
           "stop_switch_values"]


@jit_inline
def stop_side(m, ws, s, x):
    """The side stop s touches at coordinate value x: +1 upper, -1 lower, 0 none (by
    its branch held over a segment, or by value)."""
    b = ws.stop_branch[s]
    if np.isnan(b):
        if x > m.stop_upper[s]:
            return 1.0
        if x < m.stop_lower[s]:
            return -1.0
        return 0.0
    return b


@jit_inline
def stop_force(m, ws, s):
    """Q_stop of stop s on its coordinate (N or N m; after the kinematics)."""
    c = m.stop_coord[s]
    x = ws.x[c]
    side = stop_side(m, ws, s, x)
    if side == 0.0:
        return 0.0
    limit = m.stop_upper[s] if side > 0.0 else m.stop_lower[s]
    return -(m.stop_stiffness[s] * (x - limit) + m.stop_damping[s] * ws.xd[c])


@jit_inline
def add_stop_forces(m, ws, out, sign):
    """out[q index of each stop's coordinate] += sign Q_stop."""
    for s in range(m.stop_coord.shape[0]):
        out[m.coord_qindex[m.stop_coord[s]]] += sign * stop_force(m, ws, s)


@jit_inline
def stops_energy_and_power(m, ws):
    """(sum k d^2 / 2 (J), -sum c x'^2 (W)) over the stops touched."""
    energy = 0.0
    power = 0.0
    for s in range(m.stop_coord.shape[0]):
        c = m.stop_coord[s]
        x = ws.x[c]
        side = stop_side(m, ws, s, x)
        if side == 0.0:
            continue
        d = x - (m.stop_upper[s] if side > 0.0 else m.stop_lower[s])
        energy += 0.5 * m.stop_stiffness[s] * d * d
        power -= m.stop_damping[s] * ws.xd[c] * ws.xd[c]
    return energy, power


@jit_inline
def stop_switch_values(m, y, out, first):
    """out[first + 2 s] = upper - x, out[first + 2 s + 1] = x - lower (1 for a side
    without a limit): positive while the stop is free, x read from the state y."""
    for s in range(m.stop_coord.shape[0]):
        x = y[m.coord_qindex[m.stop_coord[s]]]
        hi = m.stop_upper[s]
        lo = m.stop_lower[s]
        out[first + 2 * s] = hi - x if np.isfinite(hi) else 1.0
        out[first + 2 * s + 1] = x - lo if np.isfinite(lo) else 1.0
