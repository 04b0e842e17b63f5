"""Joint friction forces (numba): the laws of flexmbs.model.friction on the joint
coordinates, and the rows that hold a stuck joint still.

Friction f acts on coordinate c = fric_coord[f] at the rate v = x'_c with
fric_data[f] = (F_c, F_s, v_s, c_v, v_eps):

    F(v) = F_c + (F_s - F_c) exp(-(v / v_s)^2)                      (N m or N)
    regularized (fric_law 0):  f = -F(v) tanh(v / v_eps) - c_v v
    stick-slip (fric_law 1), sliding with sign s = ws.fric_mode[f] = +-1:
                               f = -s F(v) - c_v v
    stick-slip, stuck (ws.fric_mode[f] = 0): the row of the coordinate in the
        equations of motion, M* u' - Q* - f = 0, becomes m_c u'_c = 0 (m_c =
        ws.fric_scale[f], the coordinate's diagonal of M* when it stuck), and f
        is the force that holds it, ws.fric_hold[f] = (M* u' - Q*)_c with the
        friction left out (a reaction, doing no work at v = 0).

Outside a run (ws.fric_mode NaN: linearization, statics) a stick-slip law acts as a
regularized one.
"""

import numpy as np

from ..runtime.config import jit, jit_inline

__all__ = ["friction_level", "joint_friction_forces", "hold_stuck_rows",
           "stuck_mass_rows", "has_friction"]


@jit_inline
def has_friction(m):
    """True when the model has joint friction."""
    return m.fric_coord.shape[0] > 0


@jit_inline
def friction_level(d, v):
    """F(v) = F_c + (F_s - F_c) exp(-(v / v_s)^2) (N m or N), d = fric_data[f];
    F_c without a Stribeck curve (v_s inf: the static level is the breakaway's)."""
    if np.isfinite(d[2]):
        r = v / d[2]
        return d[0] + (d[1] - d[0]) * np.exp(-r * r)
    return d[0]


@jit
def joint_friction_forces(m, ws):
    """ws.fric_force[f] = the friction force f(v) on each friction's coordinate
    (module text; 0 for a stuck joint, held by its row). After forward_kinematics."""
    for f in range(m.fric_coord.shape[0]):
        v = ws.xd[m.fric_coord[f]]
        d = m.fric_data[f]
        mode = ws.fric_mode[f]
        if m.fric_law[f] == 1 and not np.isnan(mode):
            if mode == 0.0:
                ws.fric_force[f] = 0.0
            else:
                ws.fric_force[f] = -mode * friction_level(d, v) - d[3] * v
        else:
            ws.fric_force[f] = -friction_level(d, v) * np.tanh(v / d[4]) - d[3] * v


@jit
def hold_stuck_rows(m, ws, udot, out):
    """Each stuck coordinate's row of out = M* u' - Q* (with the friction left out)
    into ws.fric_hold, and the row replaced by m_c u'_c (module text)."""
    for f in range(m.fric_coord.shape[0]):
        if ws.fric_mode[f] == 0.0:
            qc = m.coord_qindex[m.fric_coord[f]]
            ws.fric_hold[f] = out[qc]
            out[qc] = ws.fric_scale[f] * udot[qc]


@jit_inline
def stuck_mass_rows(m, ws, mass):
    """The mass matrix of the rows after `hold_stuck_rows`: each stuck coordinate's
    row and column of M* (nq x nq, the top left of `mass`) zero but its diagonal,
    m_c. The dropped column terms M*_rc u'_c vanish with u'_c = 0; the matrix stays
    symmetric positive definite."""
    nq = ws.mass.shape[0]
    for f in range(m.fric_coord.shape[0]):
        if ws.fric_mode[f] == 0.0:
            qc = m.coord_qindex[m.fric_coord[f]]
            for k in range(nq):
                mass[qc, k] = 0.0
                mass[k, qc] = 0.0
            mass[qc, qc] = ws.fric_scale[f]
