"""Energies of the system (numba), FORMULATION.md section 7 (Huang H3.3).

    T   = 1/2 sum_i v_i^T M_i v_i + 1/2 sum_a n_a^2 J_r,a x_a'^2   (bodies, rotors)
    V_g = -sum_i g^T (m_i r_i + A_i St_i)
    V_s = sum_c 1/2 k_c (x_c - x_rest,c)^2      (every joint coordinate, prescribed too)
    U   = strain energy (0 for rigid bodies)
and W_nc, the work of the non-conservative forces, is the state's last component.
E = T + V_g + U + V_s - W_nc is constant.
"""

from ..config import jit
from .rigid_body import apply_body_mass

__all__ = ["energies", "ENERGY_COMPONENTS"]

ENERGY_COMPONENTS = ("kinetic", "gravity", "strain", "spring", "dissipated")


@jit
def energies(m, ws, w_nc, out):
    """out[0:5] = T, V_g, U, V_s, W_nc in J (after forward_kinematics)."""
    kinetic = 0.0
    gravity = 0.0
    g = m.gravity
    vw = ws.v3[0]
    for i in range(m.body_mass.shape[0]):
        rot = ws.rot[i]
        om = ws.omega[i]
        for r in range(3):
            vw[r] = rot[0, r] * om[0] + rot[1, r] * om[1] + rot[2, r] * om[2]
        apply_body_mass(m, i, rot, ws.rd[i], vw, ws.mbcol, 0)
        for r in range(3):
            kinetic += 0.5 * (ws.rd[i, r] * ws.mbcol[r, 0] + vw[r] * ws.mbcol[3 + r, 0])
        st = m.body_first_moment[i]
        for r in range(3):
            pos = m.body_mass[i] * ws.r[i, r] + rot[r, 0] * st[0] + rot[r, 1] * st[1] + \
                rot[r, 2] * st[2]
            gravity -= g[r] * pos
    for a in range(m.act_coord.shape[0]):
        xd = ws.xd[m.act_coord[a]]
        kinetic += 0.5 * m.act_inertia[a] * xd * xd
    spring = 0.0
    for c in range(m.coord_qindex.shape[0]):
        e = ws.x[c] - m.coord_rest[c]
        spring += 0.5 * m.coord_stiffness[c] * e * e
    out[0] = kinetic
    out[1] = gravity
    out[2] = 0.0
    out[3] = spring
    out[4] = w_nc
