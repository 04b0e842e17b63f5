"""Recursive kinematics of a tree (numba): poses, the velocity transformation B, the
bias acceleration a_bias = (dB/dt) u + db_t/dt, and dB/dt column by column.

docs/explanation/formulation.md sections 1 and 4 (Huang H2.129-2.130, H2.148-2.166). Bodies
are visited root to leaves (parent index < child index). Body i's frame follows from its
parent's by the elementary motions of `flexmbs.model.motions` (parent marker with its
deformation, joint translations and rotations, child marker with its deformation, inverted).
A moving frame (position P, rotation R, velocity v, angular velocity w, bias accelerations
a, al; all global) runs through them:

    OFFSET s       y = R s:       P += y, v += w x y, a += al x y + w x (w x y)
    ROTATE_FIXED C R = R C
    TRANSLATE a, x e = R a, y = e x: P += y, v += w x y + e x',
                   a += al x y + w x (w x y) + 2 w x (e x') + e x''
    ROTATE a, x    e = R a:       al += w x (e x') + e x'',  w += e x',  R = R Rot(a, x)

with x = sum coef x[col] over the motion's terms (x'' the prescribed accelerations:
zero for free and elastic coordinates in the bias pass). Velocities are split by
column: the workspace holds per body the partial velocities jr[i][:, c] =
d(dr_i/dt)/d(xd_c) and jw[i][:, c] = d(omega_i)/d(xd_c) (global axes) at the body's
frame columns (the body path and joint path matrices: all other columns stay zero):

    TRANSLATE: jr[:, c] += e coef_c;  ROTATE: jw[:, c] += e coef_c;
    every displacement y: jr[:, c] += jw[:, c] x y for all columns.

The last rule is applied lazily, once per run of displacements (`pend`), before the
next rotation changes jw and at the end. Body i's rows of B are [jr[i]; A_i^T jw[i]]
at the free columns (and the identity at its own elastic coordinates); the prescribed
coordinates' columns times their rates form b_t.
"""


from ..numerics.linalg import add_cross, copy33, matmul3, matvec3
from ..runtime.config import jit, jit_inline, jit_shared
from .rotations import rotation_about_axis
from .timefunctions import evaluate_time_function

__all__ = ["coordinate_values", "forward_kinematics", "forward_kinematics_terms",
           "terms_current", "velocity_transformation_rate",
           "OFFSET", "ROTATE_FIXED", "TRANSLATE", "ROTATE"]

OFFSET, ROTATE_FIXED, TRANSLATE, ROTATE = 0, 1, 2, 3  # flexmbs.model.motions


@jit_shared
def coordinate_values(m, ws, t, q, u):
    """ws.x, ws.xd, ws.xdd (size ncol) from q, u (size nq) and the drivers at time t
    (s); ws.q, ws.u copies of q, u.

    Free and elastic columns get xdd = 0 (the bias pass); prescribed ones their
    driver's value, rate and acceleration.
    """
    for k in range(q.shape[0]):
        ws.q[k] = q[k]
        ws.u[k] = u[k]
    nc = m.coord_qindex.shape[0]
    for c in range(m.col_qindex.shape[0]):
        k = m.col_qindex[c]
        if k >= 0:
            ws.x[c] = q[k]
            ws.xd[c] = u[k]
            ws.xdd[c] = 0.0
        elif c < nc:
            evaluate_time_function(m.tf_kind, m.tf_ptr, m.tf_data, m.coord_function[c], t,
                                   ws.segment_time[0], ws.tf3)
            ws.x[c] = ws.tf3[0]
            ws.xd[c] = ws.tf3[1]
            ws.xdd[c] = ws.tf3[2]


@jit_inline
def _amount(term_ptr, term_col, term_coef, j, x, xd, xdd):
    """(x, x', x'') of motion j: sum coef (x, xd, xdd)[col] over its terms.

    Helpers in the per-body loops take arrays, not the (m, ws) tuples: a call that
    passes the tuples, even inlined, pays a reference count for each of their arrays.
    They are inlined (a compiled call pushes every field of its 6 arrays, ~45 words).
    """
    a = 0.0
    ad = 0.0
    add = 0.0
    for k in range(term_ptr[j], term_ptr[j + 1]):
        c = term_col[k]
        f = term_coef[k]
        a += f * x[c]
        ad += f * xd[c]
        add += f * xdd[c]
    return a, ad, add


@jit
def _take_columns(frame_ptr, frame_col, frame_inherited, jr, jw, i, p, pend, pending):
    """Body i's partial velocities start as its parent's, moved by the displacement
    pend (jr_p + jw_p x pend), zero at its new columns."""
    p0 = pend[0]
    p1 = pend[1]
    p2 = pend[2]
    for k in range(frame_ptr[i], frame_ptr[i + 1]):
        c = frame_col[k]
        if frame_inherited[k] != 0:
            w0 = jw[p, 0, c]
            w1 = jw[p, 1, c]
            w2 = jw[p, 2, c]
            jw[i, 0, c] = w0
            jw[i, 1, c] = w1
            jw[i, 2, c] = w2
            if pending:
                jr[i, 0, c] = jr[p, 0, c] + w1 * p2 - w2 * p1
                jr[i, 1, c] = jr[p, 1, c] + w2 * p0 - w0 * p2
                jr[i, 2, c] = jr[p, 2, c] + w0 * p1 - w1 * p0
            else:
                for r in range(3):
                    jr[i, r, c] = jr[p, r, c]
        else:
            for r in range(3):
                jr[i, r, c] = 0.0
                jw[i, r, c] = 0.0


@jit
def _move_columns(frame_ptr, frame_col, jr, jw, i, pend):
    """jr[i][:, c] += jw[i][:, c] x pend at body i's frame columns."""
    p0 = pend[0]
    p1 = pend[1]
    p2 = pend[2]
    for k in range(frame_ptr[i], frame_ptr[i + 1]):
        c = frame_col[k]
        jr[i, 0, c] += jw[i, 1, c] * p2 - jw[i, 2, c] * p1
        jr[i, 1, c] += jw[i, 2, c] * p0 - jw[i, 0, c] * p2
        jr[i, 2, c] += jw[i, 0, c] * p1 - jw[i, 1, c] * p0


@jit_shared
def forward_kinematics(m, ws, t, q, u):
    """Poses, velocities, partial velocities and bias accelerations of every body.

    In: m (ModelArrays), t (s), q, u (size nq). Out (ws, global axes): r, rot (A), rd,
    omega, jr, jw (at the frame columns), ar, aw (accelerations with du/dt = 0, the
    prescribed accelerations included), x, xd, xdd. Exact: B is the Jacobian of the
    position map, with rotations by Rodrigues' formula. Cost O(sum of the bodies'
    frame columns): O(N^2) on a chain of N bodies.
    """
    _forward_kinematics(m, ws, t, q, u, True)


@jit_shared
def forward_kinematics_terms(m, ws, t, q, u):
    """`forward_kinematics` in O(N): the same poses, velocities and bias accelerations,
    and instead of the partial velocities at every frame column only what each body's
    own joint adds to them, per motion term k (ws.term_jr[k], ws.term_jw[k], global
    axes): the rules of the module docstring applied to the joint's own terms, the
    displacements acting on the terms before them. Body i's partial velocities are
    then, recursively (parent p, column c),

        jw_i[:, c] = jw_p[:, c] + sum term_jw[k],
        jr_i[:, c] = jr_p[:, c] + jw_p[:, c] x (r_i - r_p) + sum term_jr[k]

    (sums over the terms k of body i's motions at column c; the parent's part is zero
    unless c is one of its frame columns). ws.jr, ws.jw are left as they were.
    ws.kin_key = [1, t] records that ws holds these terms (terms_current).
    """
    _forward_kinematics(m, ws, t, q, u, False)


@jit_inline
def terms_current(ws, t, q, u):
    """True when ws holds forward_kinematics_terms at exactly (t, q, u): the last
    forward kinematics was that one (ws.kin_key = [1, t], ws.q = q, ws.u = u) and
    nothing has changed its terms since (composite_mass_matrix, which shifts them,
    sets ws.kin_key[0] = 0, as does `forward_kinematics`). The mass hook of the BDF
    driver, called right after the residual at the same state, then skips them."""
    if ws.kin_key[0] == 0.0 or ws.kin_key[1] != t:
        return False
    for k in range(q.shape[0]):
        if ws.q[k] != q[k] or ws.u[k] != u[k]:
            return False
    return True


@jit_inline
def _add_displacement_to_terms(ws, k0, k1, y):
    """term_jr[k] += term_jw[k] x y for the terms k0 <= k < k1 (a displacement y after
    them)."""
    for k in range(k0, k1):
        w = ws.term_jw[k]
        ws.term_jr[k, 0] += w[1] * y[2] - w[2] * y[1]
        ws.term_jr[k, 1] += w[2] * y[0] - w[0] * y[2]
        ws.term_jr[k, 2] += w[0] * y[1] - w[1] * y[0]


@jit_inline
def _add_motion_terms(term_ptr, term_col, term_coef, i, j, e, columns, jcol, term_own,
                      term_other):
    """Motion j of body i along e (global) at its terms: columns True, jcol[i][:, c] +=
    e coef_c (jcol = jw for a rotation, jr for a translation); False, term_own[k] =
    e coef_k and term_other[k] = 0 (term_jw and term_jr, or the reverse)."""
    if columns:
        for k in range(term_ptr[j], term_ptr[j + 1]):
            c = term_col[k]
            f = term_coef[k]
            for r in range(3):
                jcol[i, r, c] += e[r] * f
        return
    for k in range(term_ptr[j], term_ptr[j + 1]):
        f = term_coef[k]
        for r in range(3):
            term_own[k, r] = e[r] * f
            term_other[k, r] = 0.0


@jit_inline
def _forward_kinematics(m, ws, t, q, u, columns):
    """forward_kinematics (columns True: jr, jw at every frame column) or
    forward_kinematics_terms (False: term_jr, term_jw)."""
    coordinate_values(m, ws, t, q, u)
    nb = m.body_mass.shape[0]
    tmp = ws.kin_product
    rk = ws.kin_rotation
    pend = ws.kin_pending
    e = ws.kin_axis
    y = ws.kin_step
    w3 = ws.kin_step_velocity
    for i in range(nb):
        # body i's pose and motion, built in place from its parent's
        rr = ws.rot[i]
        pos = ws.r[i]
        vel = ws.rd[i]
        acc = ws.ar[i]
        om = ws.omega[i]
        al = ws.aw[i]
        p = m.body_parent[i]
        if p >= 0:
            copy33(ws.rot[p], rr)
            for r in range(3):
                pos[r] = ws.r[p, r]
                vel[r] = ws.rd[p, r]
                acc[r] = ws.ar[p, r]
                om[r] = ws.omega[p, r]
                al[r] = ws.aw[p, r]
        else:
            rr[:, :] = 0.0
            for r in range(3):
                rr[r, r] = 1.0
                pos[r] = 0.0
                vel[r] = 0.0
                acc[r] = 0.0
                om[r] = 0.0
                al[r] = 0.0
        pend[:] = 0.0
        pending = False
        taken = False
        k0 = m.motion_term_ptr[m.motion_ptr[i]]   # body i's first term
        k1 = k0                                    # its terms so far: k0 <= k < k1
        for j in range(m.motion_ptr[i], m.motion_ptr[i + 1]):
            kind = m.motion_kind[j]
            if kind == ROTATE_FIXED:
                matmul3(rr, m.motion_rotation[j], tmp)
                copy33(tmp, rr)
                continue
            if kind == OFFSET:
                matvec3(rr, m.motion_vector[j], y)
                xd = 0.0
                xdd = 0.0
            else:
                x, xd, xdd = _amount(m.motion_term_ptr, m.motion_term_col,
                                     m.motion_term_coef, j, ws.x, ws.xd, ws.xdd)
                matvec3(rr, m.motion_vector[j], e)
                if columns and not taken:
                    _take_columns(m.frame_ptr, m.frame_col, m.frame_inherited, ws.jr,
                                  ws.jw, i, p, pend, pending)
                    taken = True
                    pend[:] = 0.0
                    pending = False
                if kind == ROTATE:
                    if pending:
                        _move_columns(m.frame_ptr, m.frame_col, ws.jr, ws.jw, i, pend)
                        pend[:] = 0.0
                        pending = False
                    add_cross(om, e, xd, al)
                    for r in range(3):
                        al[r] += e[r] * xdd
                        om[r] += e[r] * xd
                    _add_motion_terms(m.motion_term_ptr, m.motion_term_col,
                                      m.motion_term_coef, i, j, e, columns, ws.jw,
                                      ws.term_jw, ws.term_jr)
                    k1 = m.motion_term_ptr[j + 1]
                    rotation_about_axis(m.motion_vector[j], x, rk)
                    matmul3(rr, rk, tmp)
                    copy33(tmp, rr)
                    continue
                _add_motion_terms(m.motion_term_ptr, m.motion_term_col, m.motion_term_coef,
                                  i, j, e, columns, ws.jr, ws.term_jr, ws.term_jw)
                k1 = m.motion_term_ptr[j + 1]
                for r in range(3):
                    y[r] = e[r] * x
            # a displacement y (OFFSET, or TRANSLATE with rate xd along e)
            for r in range(3):
                pos[r] += y[r]
            if columns:
                for r in range(3):
                    pend[r] += y[r]
                pending = True
            else:
                _add_displacement_to_terms(ws, k0, k1, y)
            add_cross(al, y, 1.0, acc)
            w3[0] = om[1] * y[2] - om[2] * y[1]
            w3[1] = om[2] * y[0] - om[0] * y[2]
            w3[2] = om[0] * y[1] - om[1] * y[0]
            add_cross(om, w3, 1.0, acc)
            for r in range(3):
                vel[r] += w3[r]
            if kind == TRANSLATE:
                add_cross(om, e, 2.0 * xd, acc)
                for r in range(3):
                    vel[r] += e[r] * xd
                    acc[r] += e[r] * xdd
        if columns and not taken:
            _take_columns(m.frame_ptr, m.frame_col, m.frame_inherited, ws.jr, ws.jw, i, p,
                          pend, pending)
        elif pending:
            _move_columns(m.frame_ptr, m.frame_col, ws.jr, ws.jw, i, pend)
    ws.kin_key[0] = 0.0 if columns else 1.0
    ws.kin_key[1] = t


@jit
def velocity_transformation_rate(m, ws):
    """d(jr)/dt and d(jw)/dt (ws.djr, ws.djw, global axes) along the current motion.

    Call after forward_kinematics. The same run through the motions, differentiated in
    time: with w the frame's angular velocity where the motion acts and e = R a,
    de/dt = w x e, so

        TRANSLATE: djr[:, c] += (w x e) coef_c;  ROTATE: djw[:, c] += (w x e) coef_c
        displacement y (rate ydot = w x y + e x'): djr[:, c] += djw[:, c] x y
                                                               + jw[:, c] x ydot

    with jw and djw as they stand where the displacement acts (ws.jw[i] is rebuilt
    along the run, ending at the same values). Then (dB/dt) u + db_t/dt = a_bias
    (checked in the tests).
    """
    nb = m.body_mass.shape[0]
    rr = ws.kin_frame_axes
    tmp = ws.kin_product
    rk = ws.kin_rotation
    om = ws.kin_frame_omega
    pend = ws.kin_pending
    pendd = ws.kin_pending_rate
    e = ws.kin_axis
    y = ws.kin_step
    we = ws.kin_axis_rate
    for i in range(nb):
        p = m.body_parent[i]
        if p >= 0:
            copy33(ws.rot[p], rr)
            for r in range(3):
                om[r] = ws.omega[p, r]
        else:
            rr[:, :] = 0.0
            for r in range(3):
                rr[r, r] = 1.0
                om[r] = 0.0
        for k in range(m.frame_ptr[i], m.frame_ptr[i + 1]):
            c = m.frame_col[k]
            for r in range(3):
                if m.frame_inherited[k] != 0:
                    ws.djr[i, r, c] = ws.djr[p, r, c]
                    ws.djw[i, r, c] = ws.djw[p, r, c]
                    ws.jw[i, r, c] = ws.jw[p, r, c]
                else:
                    ws.djr[i, r, c] = 0.0
                    ws.djw[i, r, c] = 0.0
                    ws.jw[i, r, c] = 0.0
        pend[:] = 0.0
        pendd[:] = 0.0
        pending = False
        for j in range(m.motion_ptr[i], m.motion_ptr[i + 1]):
            kind = m.motion_kind[j]
            if kind == ROTATE_FIXED:
                matmul3(rr, m.motion_rotation[j], tmp)
                copy33(tmp, rr)
                continue
            xd = 0.0
            if kind == OFFSET:
                matvec3(rr, m.motion_vector[j], y)
            else:
                x, xd, xdd = _amount(m.motion_term_ptr, m.motion_term_col,
                                     m.motion_term_coef, j, ws.x, ws.xd, ws.xdd)
                matvec3(rr, m.motion_vector[j], e)
                we[0] = om[1] * e[2] - om[2] * e[1]
                we[1] = om[2] * e[0] - om[0] * e[2]
                we[2] = om[0] * e[1] - om[1] * e[0]
                if kind == ROTATE:
                    if pending:
                        _move_rate_columns(m, ws, i, pend, pendd)
                        pend[:] = 0.0
                        pendd[:] = 0.0
                        pending = False
                    for k in range(m.motion_term_ptr[j], m.motion_term_ptr[j + 1]):
                        c = m.motion_term_col[k]
                        f = m.motion_term_coef[k]
                        for r in range(3):
                            ws.djw[i, r, c] += we[r] * f
                            ws.jw[i, r, c] += e[r] * f
                    for r in range(3):
                        om[r] += e[r] * xd
                    rotation_about_axis(m.motion_vector[j], x, rk)
                    matmul3(rr, rk, tmp)
                    copy33(tmp, rr)
                    continue
                for k in range(m.motion_term_ptr[j], m.motion_term_ptr[j + 1]):
                    c = m.motion_term_col[k]
                    f = m.motion_term_coef[k]
                    for r in range(3):
                        ws.djr[i, r, c] += we[r] * f
                for r in range(3):
                    y[r] = e[r] * x
            for r in range(3):
                pend[r] += y[r]
            pending = True
            add_cross(om, y, 1.0, pendd)
            if kind == TRANSLATE:
                for r in range(3):
                    pendd[r] += e[r] * xd
        if pending:
            _move_rate_columns(m, ws, i, pend, pendd)


@jit_shared
def _move_rate_columns(m, ws, i, pend, pendd):
    """djr[i][:, c] += djw[:, c] x pend + jw[:, c] x pendd at body i's frame columns
    (jw, djw of body i as they stand)."""
    for k in range(m.frame_ptr[i], m.frame_ptr[i + 1]):
        c = m.frame_col[k]
        j0 = ws.jw[i, 0, c]
        j1 = ws.jw[i, 1, c]
        j2 = ws.jw[i, 2, c]
        d0 = ws.djw[i, 0, c]
        d1 = ws.djw[i, 1, c]
        d2 = ws.djw[i, 2, c]
        ws.djr[i, 0, c] += d1 * pend[2] - d2 * pend[1] + j1 * pendd[2] - j2 * pendd[1]
        ws.djr[i, 1, c] += d2 * pend[0] - d0 * pend[2] + j2 * pendd[0] - j0 * pendd[2]
        ws.djr[i, 2, c] += d0 * pend[1] - d1 * pend[0] + j0 * pendd[1] - j1 * pendd[0]
