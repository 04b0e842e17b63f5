"""Energies of the system (numba), docs/explanation/formulation.md section 7 (Huang H3.3).

    T   = 1/2 sum_i v_i^T M_i v_i + 1/2 sum_a n_a^2 J_r,a x_a'^2   (bodies, rotors)
          + 1/2 sum_a L_a i_a^2                  (DC motors' windings, flexmbs.dynamics.motors)
    V_g = -sum_i g^T (m_i r_i + A_i St_i)
    V_s = sum_c 1/2 k_c (x_c - x_rest,c)^2      (every joint coordinate, prescribed too)
          + sum_s 1/2 k_s (L_s - L0_s)^2         (point-to-point springs)
          + sum 1/2 k d^2                        (joint stops touched, flexmbs.dynamics.stops)
    U   = strain energy (0 for rigid bodies): U2 = qf^T K qf / 2 plus the geometric
          stiffness' U3 (axial force) and U4 (foreshortening),
          docs/explanation/formulation.md section 6
and W_nc, the work of the non-conservative forces, is the state's last component.
E = T + V_g + U + V_s - W_nc is constant.
"""

from ..runtime.config import jit
from .flexible_body import block_quadratic_form, flexible_mass_times
from .geometric import geometric_elastic_forces
from .motors import magnetic_energy
from .rigid_body import apply_body_mass
from .stops import stops_energy_and_power
from .system import (
    flexible_arrays,
    k_blocks,
    m_blocks,
    springs_energy_and_power,
    update_flexible_moments,
)

__all__ = ["energies", "ENERGY_COMPONENTS"]

ENERGY_COMPONENTS = ("kinetic", "gravity", "strain", "spring", "dissipated",
                     "strain_axial_force", "strain_foreshortening")


@jit
def _flexible_energies(m, ws, i, k, vw):
    """T = v^T M v / 2 (v = [rd; A^T omega; dqf]), V_g = -g . (m r + A St),
    U2 = qf^T K qf / 2 and the geometric U3, U4 of flexible body i (J), element by
    element."""
    nf, sbar, ninv = flexible_arrays(m, k)
    q0 = m.flex_q[k]
    n6 = 6 + nf
    work = update_flexible_moments(m, ws, k)
    v = ws.flex_acc[:n6]
    mv = ws.flex_vec2[:n6]
    for r in range(3):
        v[r] = ws.rd[i, r]
        v[3 + r] = vw[r]
    for e in range(nf):
        v[6 + e] = ws.u[q0 + e]
    flexible_mass_times(m.flex_mass[k], sbar, m_blocks(m, k), ws.rot[i], work, v, True,
                        mv)
    kinetic = 0.0
    for r in range(n6):
        kinetic += 0.5 * v[r] * mv[r]
    rot = ws.rot[i]
    gravity = 0.0
    st = work[nf + 2, 0]
    for r in range(3):
        pos = m.flex_mass[k] * ws.r[i, r] + rot[r, 0] * st[0] + rot[r, 1] * st[1] + \
            rot[r, 2] * st[2]
        gravity -= m.gravity[r] * pos
    qf = ws.q[q0:q0 + nf]
    strain = 0.5 * block_quadratic_form(k_blocks(m, k), qf)
    u3 = 0.0
    u4 = 0.0
    if m.geo_code[k] != 0:
        dummy = ws.flex_vec[:nf]
        dummy[:] = 0.0
        u3, u4 = geometric_elastic_forces(
            m.geo_code[k], m.geo_ptr[k], m.geo_ptr[k + 1], m.geo_ea, m.geo_length,
            m.geo_gmat, m.geo_col_ptr, m.geo_col, m.geo_row_ptr, m.geo_row_data, m.geo_dv,
            m.geo_dw, m.geo_weight, qf, dummy, ws.geo_scratch)
    return kinetic, gravity, strain, u3, u4


@jit
def energies(m, ws, w_nc, out):
    """out[0:7] = T, V_g, U, V_s, W_nc, U3, U4 in J (after forward_kinematics); U
    includes U3 (the axial force's) and U4 (foreshortening's)."""
    kinetic = 0.0
    gravity = 0.0
    g = m.gravity
    vw = ws.omega_body
    strain = 0.0
    axial = 0.0
    foreshortening = 0.0
    for i in range(m.body_mass.shape[0]):
        rot = ws.rot[i]
        om = ws.omega[i]
        for r in range(3):
            vw[r] = rot[0, r] * om[0] + rot[1, r] * om[1] + rot[2, r] * om[2]
        k = m.body_flex[i]
        if k >= 0:
            t_flex, v_flex, u_flex, u3, u4 = _flexible_energies(m, ws, i, k, vw)
            kinetic += t_flex
            gravity += v_flex
            strain += u_flex + u3 + u4
            axial += u3
            foreshortening += u4
            continue
        apply_body_mass(m.body_mass[i], m.body_first_moment[i], m.body_inertia_origin[i],
                        rot, ws.rd[i], vw, ws.mbcol, 0)
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
    if m.elec_actuator.shape[0] > 0:
        kinetic += magnetic_energy(m, ws)
    spring = 0.0
    for c in range(m.coord_qindex.shape[0]):
        e = ws.x[c] - m.coord_rest[c]
        spring += 0.5 * m.coord_stiffness[c] * e * e
    if m.spring_k.shape[0] > 0:
        spring += springs_energy_and_power(m, ws)[0]
    if m.stop_coord.shape[0] > 0:
        spring += stops_energy_and_power(m, ws)[0]
    out[0] = kinetic
    out[1] = gravity
    out[2] = strain
    out[3] = spring
    out[4] = w_nc
    out[5] = axial
    out[6] = foreshortening
