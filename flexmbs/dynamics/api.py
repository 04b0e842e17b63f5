"""Python face of the kernels: friendly functions of (CompiledModel, q, u, t) that
return new arrays. For analysis, tests and the linearization; the integrators call the
kernels directly with a preallocated Workspace.

Body velocities are stacked per body (root to leaves) as [dr/dt (global, m/s);
w (body axes, rad/s)], 6 rows per body, followed for a flexible body by its elastic
rates dqf/dt (docs/explanation/formulation.md section 1).
"""

import numpy as np

from ..kinematics.recursive import forward_kinematics, velocity_transformation_rate
from . import energy as _energy
from . import system as _system

__all__ = ["body_poses", "velocity_transformation", "prescribed_velocity",
           "body_velocities", "bias_acceleration", "velocity_transformation_rate_matrix",
           "mass_matrix", "generalized_forces", "accelerations", "energies",
           "driver_forces", "kinematics", "constraint_values", "marker_frames",
           "state_rates", "sensor_values", "operating_works"]


def _arr(x, n):
    a = np.ascontiguousarray(np.asarray(x, dtype=float).reshape(-1))
    if a.size != n:
        raise ValueError(f"expected {n} values, got {a.size}")
    return a


def kinematics(cm, q, u=None, t=0.0, ws=None):
    """A Workspace after forward_kinematics at (t, q, u) (u = 0 if not given): `ws`,
    or a new one."""
    ws = cm.new_workspace() if ws is None else ws
    u = np.zeros(cm.nq) if u is None else u
    forward_kinematics(cm.arrays, ws, float(t), _arr(q, cm.nq), _arr(u, cm.nq))
    return ws


def body_poses(cm, q, t=0.0):
    """(r (N, 3) frame origins, global; A (N, 3, 3) body-to-global rotations)."""
    ws = kinematics(cm, q, None, t)
    return ws.r.copy(), ws.rot.copy()


def _row_offsets(cm):
    """First row of each body in the stacked body velocities: 6 rows per body
    ([dr/dt; w]) and, for a flexible body, its nf elastic rates after them."""
    m = cm.arrays
    sizes = [6 + (m.flex_nf[k] if k >= 0 else 0) for k in m.body_flex]
    return np.concatenate([[0], np.cumsum(sizes)]).astype(int)


def _columns(cm, ws, free):
    """B's columns (body rows stacked as in `_row_offsets`) at the free (free=True) or
    prescribed columns."""
    m = cm.arrays
    cols = np.flatnonzero((m.col_qindex >= 0) == free)
    off = _row_offsets(cm)
    out = np.zeros((off[-1], len(cols)))
    for i in range(cm.nbodies):
        out[off[i]:off[i] + 3] = ws.jr[i][:, cols]
        out[off[i] + 3:off[i] + 6] = ws.rot[i].T @ ws.jw[i][:, cols]
        k = m.body_flex[i]
        if k >= 0:
            for e in range(m.flex_nf[k]):
                hit = np.flatnonzero(cols == m.flex_col[k] + e)
                out[off[i] + 6 + e, hit] = 1.0
    return out, cols


def velocity_transformation(cm, q, t=0.0):
    """B (rows as `_row_offsets`, nq columns): body velocities = B u + b_t (H2.129)."""
    b, _ = _columns(cm, kinematics(cm, q, None, t), True)
    return b


def prescribed_velocity(cm, q, t=0.0):
    """b_t: the body velocities due to prescribed motion alone."""
    ws = kinematics(cm, q, None, t)
    b, cols = _columns(cm, ws, False)
    return b @ ws.xd[cols]


def body_velocities(cm, q, u, t=0.0):
    """v from the recursion (= B u + b_t): per body [dr/dt (global); w (body axes)]
    and, for a flexible body, dqf/dt."""
    ws = kinematics(cm, q, u, t)
    return _stack(cm, ws, ws.rd, ws.omega, ws.u)


def _stack(cm, ws, lin, ang, elastic):
    m = cm.arrays
    off = _row_offsets(cm)
    out = np.zeros(off[-1])
    for i in range(cm.nbodies):
        out[off[i]:off[i] + 3] = lin[i]
        out[off[i] + 3:off[i] + 6] = ws.rot[i].T @ ang[i]
        k = m.body_flex[i]
        if k >= 0:
            out[off[i] + 6:off[i + 1]] = elastic[m.flex_q[k]:m.flex_q[k] + m.flex_nf[k]]
    return out


def bias_acceleration(cm, q, u, t=0.0):
    """a_bias = (dB/dt) u + db_t/dt: body accelerations when du/dt = 0 (the elastic
    rows are zero)."""
    ws = kinematics(cm, q, u, t)
    return _stack(cm, ws, ws.ar, ws.aw, np.zeros(cm.nq))


def velocity_transformation_rate_matrix(cm, q, u, t=0.0):
    """dB/dt (rows as `_row_offsets`, nq columns) along the motion (q, u) at time t.

    Body rows: d(jr)/dt and d(A^T jw)/dt = A^T (d(jw)/dt - omega x jw); the elastic
    rows of B are constant.
    """
    ws = kinematics(cm, q, u, t)
    velocity_transformation_rate(cm.arrays, ws)
    cols = np.flatnonzero(cm.arrays.col_qindex >= 0)
    off = _row_offsets(cm)
    out = np.zeros((off[-1], len(cols)))
    for i in range(cm.nbodies):
        out[off[i]:off[i] + 3] = ws.djr[i][:, cols]
        jw = ws.jw[i][:, cols]
        out[off[i] + 3:off[i] + 6] = ws.rot[i].T @ (ws.djw[i][:, cols]
                                                    - np.cross(ws.omega[i], jw.T).T)
    return out


def mass_matrix(cm, q, t=0.0):
    """M* (nq, nq)."""
    ws = kinematics(cm, q, None, t)
    _system.mass_matrix(cm.arrays, ws)
    return ws.mass.copy()


def generalized_forces(cm, q, u, t=0.0):
    """Q* (nq,): quadratic-velocity, gravity, loads, joint springs and dampers, minus
    the bias accelerations' inertia forces."""
    ws = kinematics(cm, q, u, t)
    _system.generalized_forces(cm.arrays, ws, float(t))
    return ws.force.copy()


def operating_works(cm):
    """The works' part of a state (nworks): zero works, the DC motors' currents at
    cm.operating_currents."""
    w = np.zeros(cm.nworks)
    m = cm.arrays
    first = 1 + cm.nactuators
    for a in range(cm.nactuators):
        if m.act_electric[a] >= 0 and m.act_inductance[a] > 0.0:
            w[first + m.act_electric[a] + 2] = cm.operating_currents[a]
    return w


def accelerations(cm, q, u, t=0.0):
    """du/dt (nq,) = M*^-1 Q* (of a tree: a closed loop's need its multipliers,
    flexmbs.dynamics.constrained.constrained_accelerations)."""
    y = np.concatenate([np.zeros(2 * cm.nq), operating_works(cm)])  # works after q, u
    y[:cm.nq] = _arr(q, cm.nq)
    y[cm.nq:2 * cm.nq] = _arr(u, cm.nq)
    ws = cm.new_workspace()
    out = np.zeros_like(y)
    _system.state_derivative(cm.arrays, ws, float(t), y, out)
    return out[cm.nq:2 * cm.nq]


def state_rates(cm, q, u, t=0.0, works=None):
    """y' (2 nq + nworks) of the ODE state y = [q, u, works] of a tree
    (flexmbs.dynamics.system.state_derivative): u, du/dt, the rates of the works and
    of the DC motors' electrical states; works (W_nc, W_a, the electrical states:
    flexmbs.model.arrays) None: operating_works."""
    y = np.zeros(2 * cm.nq + cm.nworks)
    y[:cm.nq] = _arr(q, cm.nq)
    y[cm.nq:2 * cm.nq] = _arr(u, cm.nq)
    y[2 * cm.nq:] = operating_works(cm) if works is None else _arr(works, cm.nworks)
    out = np.zeros_like(y)
    _system.state_derivative(cm.arrays, cm.new_workspace(), float(t), y, out)
    return out


def driver_forces(cm, q, u, udot, t=0.0):
    """Generalized force (nc,) each driver applies at its prescribed coordinate."""
    ws = kinematics(cm, q, u, t)
    _system.body_forces(cm.arrays, ws, float(t))
    _system.dynamic_rows(cm.arrays, ws, _arr(udot, cm.nq), np.zeros(cm.nq))
    return ws.tau.copy()


def energies(cm, q, u, t=0.0, w_nc=0.0):
    """dict kinetic, gravity, strain (U2 + U3 + U4), spring, dissipated,
    strain_axial_force (U3), strain_foreshortening (U4), in J."""
    ws = kinematics(cm, q, u, t)
    out = np.zeros(len(_energy.ENERGY_COMPONENTS))
    _energy.energies(cm.arrays, ws, float(w_nc), out)
    return dict(zip(_energy.ENERGY_COMPONENTS, out))


def sensor_values(cm, q, u, t=0.0, extra=None):
    """The sensor values (cm.nsensor_values) at state y = [q, u, extra], extra the rest
    of the state (the works W_nc and W_a, the DC motors' electrical states, then the
    multipliers of the cut joints' active rows; None: operating_works and zero
    multipliers), as the result file records them."""
    from .outputs import output_quantities
    nrest = cm.nstate - 2 * cm.nq
    rest = np.zeros(nrest)
    rest[:cm.nworks] = operating_works(cm)
    y = np.concatenate([_arr(q, cm.nq), _arr(u, cm.nq),
                        rest if extra is None else _arr(extra, nrest)])
    ws = cm.new_workspace()
    out = np.zeros((1, cm.nsensor_values))
    output_quantities(cm.arrays, ws, np.array([float(t)]), y[None, :],
                      np.zeros((1, len(_energy.ENERGY_COMPONENTS))), out)
    return out[0]


def constraint_values(cm, q, u=None, t=0.0):
    """(phi, phid, jac, jacx) of every constraint row of the cut joints, then of the
    rolling contacts (redundant ones included): the position residuals Phi (m or 1;
    0 for a contact's velocity rows), the velocity residuals Phi_q u + Phi_t (C u + xi
    for a velocity row), the Jacobian Phi_q or C (rows, nq) and its columns at the
    prescribed coordinates (rows, nc). docs/explanation/formulation.md section 5."""
    from .constraints import constraint_terms
    ws = kinematics(cm, q, u, t, cm.scratch_workspace())
    constraint_terms(cm.arrays, ws)
    return ws.con_phi.copy(), ws.con_phid.copy(), ws.con_jac.copy(), ws.con_jacx.copy()


def marker_frames(cm, q, u=None, t=0.0):
    """(positions (nmk, 3), axes (nmk, 3, 3), velocities, angular velocities) of the
    markers of the compiled marker table (those that loads, springs, sensors and cut
    joints use), global axes, markers on beams following their node."""
    from ..kinematics.markers import marker_frame_kernel
    ws = kinematics(cm, q, u, t)
    n = len(cm.arrays.marker_body)
    pos, rot = np.zeros((n, 3)), np.zeros((n, 3, 3))
    vel, om = np.zeros((n, 3)), np.zeros((n, 3))
    arm, tm = np.zeros(3), np.zeros((3, 3))
    for k in range(n):
        marker_frame_kernel(cm.arrays, ws, k, pos[k], rot[k], vel[k], om[k], arm, tm)
    return pos, rot, vel, om
