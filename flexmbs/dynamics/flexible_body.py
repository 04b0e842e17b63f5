"""One flexible body in the floating frame (numba kernels): mass matrix, quadratic-velocity
vector, gravity, point force, elastic and damping forces, strain energy.

docs/explanation/formulation.md section 2 (Huang H2.3; the invariant contractions H2.25-2.68). Body
velocities v = [dr/dt (global, m/s); w (angular velocity, body axes, rad/s); dqf/dt]
(size 6 + nf). A is the body-to-global rotation, qf the elastic coordinates (nodal
translations in m and small rotations in rad, body axes, or modal amplitudes). A point
with undeformed position u0 moves to u = u0 + S qf (body frame), p = r + A u (global),
dp/dt = L v with L = [I3, -A ~u, A S].

Invariants (`flexmbs.elements.Invariants`, body frame; code name -> symbol):

    mass          m = int rho dV                      kg
    first_moment  int rho u0 dV (3,)                  kg m
    sbar          Sbar = int rho S dV (3, nf)
    th0           Th0 = int rho u0 u0^T dV (3, 3)     kg m^2
    n_inv         N[a, b] = int rho u0_a S_b dV (3, 3, nf)
    ss            SS[a, b] = int rho S_a^T S_b dV (3, 3, nf, nf)

and, at the configuration qf,

    St = first_moment + Sbar qf                            (int rho u dV)
    P[c, b] = N[c, b] + qf^T SS[c, b]                      (int rho u_c S_b dV, length nf)
    Th[a, b] = Th0[a, b] + N[b, a] . qf + P[a, b] . qf     (int rho u_a u_b dV)
    Ibar = tr(Th) I3 - Th                                  (inertia about the frame origin)

Every kernel takes plain float64 arrays and writes into preallocated outputs; scratch
lives in `work` (shape (3, 3, nf + 2), `flexible_workspace`): work[:, :, :nf] = P,
work[:, :, nf] = Th, work[:, :, nf + 1] = Pd. Outputs are in the layout of v: rows 0-2
global (N), rows 3-5 body axes (N m), rows 6.. the elastic coordinates (N or N m each).
"""

import numpy as np

from ..config import jit

__all__ = [
    "flexible_workspace", "flexible_mass_matrix", "flexible_quadratic_velocity",
    "flexible_gravity_force", "flexible_point_force", "elastic_force", "damping_force",
    "strain_energy",
]

RIGID_COORDS = 6  # dr/dt (3) and w (3) ahead of dqf/dt in v


def flexible_workspace(nf):
    """Scratch for `flexible_mass_matrix` and `flexible_quadratic_velocity` of a body
    with nf elastic coordinates: a float64 array of shape (3, 3, nf + 2)."""
    nf = int(nf)
    if nf < 0:
        raise ValueError(f"nf: expected a number of elastic coordinates >= 0, got {nf}")
    return np.zeros((3, 3, nf + 2))


@jit
def _fill_moments(th0, n_inv, ss, qf, work):
    """work[:, :, :nf] = P[c, b] = N[c, b] + qf^T SS[c, b] (int rho u_c S_b dV) and
    work[:, :, nf] = Th[a, b] = Th0[a, b] + N[b, a] . qf + P[a, b] . qf
    (int rho u_a u_b dV, kg m^2); docs/explanation/formulation.md section 2."""
    nf = qf.shape[0]
    for c in range(3):
        for b in range(3):
            for j in range(nf):
                work[c, b, j] = n_inv[c, b, j]
            for k in range(nf):
                qk = qf[k]
                if qk != 0.0:
                    for j in range(nf):
                        work[c, b, j] += qk * ss[c, b, k, j]
    for a in range(3):
        for b in range(3):
            s = th0[a, b]
            for j in range(nf):
                s += (n_inv[b, a, j] + work[a, b, j]) * qf[j]
            work[a, b, nf] = s


@jit
def flexible_mass_matrix(mass, first_moment, sbar, th0, n_inv, ss, A, qf, work, out):
    """out = M(A, qf) = int rho L^T L dV ((6 + nf) x (6 + nf)), docs/explanation/formulation.md
    section 2 (Huang H2.3, contractions H2.25-2.68):

        M = [[m I3,        -A ~St,     A Sbar],
             [~St A^T,      Ibar,      M_wf  ],
             [Sbar^T A^T,   M_wf^T,    M_ff  ]]

        M_wf rows = [P[1, 2] - P[2, 1], P[2, 0] - P[0, 2], P[0, 1] - P[1, 0]]
                    (= int rho ~u S dV)
        M_ff = SS[0, 0] + SS[1, 1] + SS[2, 2]   (= int rho S^T S dV)

    with St, P, Th, Ibar of the module docstring. Units: kg (rr), kg m (rw), kg m^2
    (ww); the f rows and columns carry their coordinate's unit. Exactly symmetric.

    mass (kg), first_moment (3,), sbar (3, nf), th0 (3, 3), n_inv (3, 3, nf),
    ss (3, 3, nf, nf): the body invariants. A (3, 3): body-to-global rotation.
    qf (nf,): elastic coordinates. work: `flexible_workspace(nf)`, overwritten.
    out ((6 + nf), (6 + nf)): written.
    """
    nf = qf.shape[0]
    f0 = RIGID_COORDS
    _fill_moments(th0, n_inv, ss, qf, work)
    s0 = first_moment[0]
    s1 = first_moment[1]
    s2 = first_moment[2]
    for j in range(nf):
        s0 += sbar[0, j] * qf[j]
        s1 += sbar[1, j] * qf[j]
        s2 += sbar[2, j] * qf[j]
    # M_rr = m I3
    for r in range(3):
        for c in range(3):
            out[r, c] = 0.0
        out[r, r] = mass
    # M_rw = -A ~St; the columns of ~St are St x e_c
    for r in range(3):
        x0 = A[r, 1] * s2 - A[r, 2] * s1   # (A ~St)[r, 0]
        x1 = A[r, 2] * s0 - A[r, 0] * s2   # (A ~St)[r, 1]
        x2 = A[r, 0] * s1 - A[r, 1] * s0   # (A ~St)[r, 2]
        out[r, 3] = -x0
        out[r, 4] = -x1
        out[r, 5] = -x2
        out[3, r] = -x0
        out[4, r] = -x1
        out[5, r] = -x2
    # M_ww = Ibar = tr(Th) I3 - Th
    tr = work[0, 0, nf] + work[1, 1, nf] + work[2, 2, nf]
    for a in range(3):
        for b in range(3):
            out[3 + a, 3 + b] = -0.5 * (work[a, b, nf] + work[b, a, nf])
        out[3 + a, 3 + a] += tr
    for j in range(nf):
        # M_rf = A Sbar
        for r in range(3):
            x = A[r, 0] * sbar[0, j] + A[r, 1] * sbar[1, j] + A[r, 2] * sbar[2, j]
            out[r, f0 + j] = x
            out[f0 + j, r] = x
        # M_wf rows from P
        x0 = work[1, 2, j] - work[2, 1, j]
        x1 = work[2, 0, j] - work[0, 2, j]
        x2 = work[0, 1, j] - work[1, 0, j]
        out[3, f0 + j] = x0
        out[4, f0 + j] = x1
        out[5, f0 + j] = x2
        out[f0 + j, 3] = x0
        out[f0 + j, 4] = x1
        out[f0 + j, 5] = x2
    # M_ff = SS00 + SS11 + SS22, upper triangle mirrored
    for i in range(nf):
        for j in range(i, nf):
            x = ss[0, 0, i, j] + ss[1, 1, i, j] + ss[2, 2, i, j]
            out[f0 + i, f0 + j] = x
            out[f0 + j, f0 + i] = x


@jit
def flexible_quadratic_velocity(first_moment, sbar, th0, n_inv, ss, A, qf, w, dqf, work,
                                out):
    """out = Qv = -int rho L^T A (~w ~w u + 2 ~w S dqf) dV (size 6 + nf), the
    centrifugal, gyroscopic and Coriolis forces; docs/explanation/formulation.md section 2
    (Huang H2.3, contractions H2.25-2.68):

        Qv_r = -A (~w ~w St + 2 ~w Sbar dqf)                        (global, N)
        Qv_w = -~w Ibar w - 2 (w tr(Pd) - Pd^T w)                    (body axes, N m)
        Qv_f = -sum_ab (~w ~w)[a, b] P[b, a] - 2 sum_ab ~w[a, b] SS[a, b] dqf

    with Pd[c, a] = P[c, a] . dqf, so that w tr(Pd) - Pd^T w = int rho ~u ~w S dqf dV.

    first_moment (3,), sbar (3, nf), th0 (3, 3), n_inv (3, 3, nf), ss (3, 3, nf, nf):
    the body invariants. A (3, 3): body-to-global rotation. qf (nf,): elastic
    coordinates. w (3,): angular velocity (body axes, rad/s). dqf (nf,): dqf/dt.
    work: `flexible_workspace(nf)`, overwritten. out (6 + nf,): written.
    """
    nf = qf.shape[0]
    f0 = RIGID_COORDS
    _fill_moments(th0, n_inv, ss, qf, work)
    w0 = w[0]
    w1 = w[1]
    w2 = w[2]
    # St = first_moment + Sbar qf, d = Sbar dqf
    s0 = first_moment[0]
    s1 = first_moment[1]
    s2 = first_moment[2]
    d0 = 0.0
    d1 = 0.0
    d2 = 0.0
    for j in range(nf):
        s0 += sbar[0, j] * qf[j]
        s1 += sbar[1, j] * qf[j]
        s2 += sbar[2, j] * qf[j]
        d0 += sbar[0, j] * dqf[j]
        d1 += sbar[1, j] * dqf[j]
        d2 += sbar[2, j] * dqf[j]
    # a = ~w ~w St + 2 ~w Sbar dqf (body axes), Qv_r = -A a
    c0 = w1 * s2 - w2 * s1
    c1 = w2 * s0 - w0 * s2
    c2 = w0 * s1 - w1 * s0
    a0 = w1 * c2 - w2 * c1 + 2.0 * (w1 * d2 - w2 * d1)
    a1 = w2 * c0 - w0 * c2 + 2.0 * (w2 * d0 - w0 * d2)
    a2 = w0 * c1 - w1 * c0 + 2.0 * (w0 * d1 - w1 * d0)
    for r in range(3):
        out[r] = -(A[r, 0] * a0 + A[r, 1] * a1 + A[r, 2] * a2)
    # Pd[c, a] = P[c, a] . dqf into work[:, :, nf + 1]
    for c in range(3):
        for a in range(3):
            x = 0.0
            for j in range(nf):
                x += work[c, a, j] * dqf[j]
            work[c, a, nf + 1] = x
    # Ibar w = tr(Th) w - Th w
    th = work[:, :, nf]
    tr = th[0, 0] + th[1, 1] + th[2, 2]
    h0 = tr * w0 - (th[0, 0] * w0 + th[0, 1] * w1 + th[0, 2] * w2)
    h1 = tr * w1 - (th[1, 0] * w0 + th[1, 1] * w1 + th[1, 2] * w2)
    h2 = tr * w2 - (th[2, 0] * w0 + th[2, 1] * w1 + th[2, 2] * w2)
    pd = work[:, :, nf + 1]
    trd = pd[0, 0] + pd[1, 1] + pd[2, 2]
    out[3] = -(w1 * h2 - w2 * h1) - 2.0 * (w0 * trd - (pd[0, 0] * w0 + pd[1, 0] * w1
                                                        + pd[2, 0] * w2))
    out[4] = -(w2 * h0 - w0 * h2) - 2.0 * (w1 * trd - (pd[0, 1] * w0 + pd[1, 1] * w1
                                                        + pd[2, 1] * w2))
    out[5] = -(w0 * h1 - w1 * h0) - 2.0 * (w2 * trd - (pd[0, 2] * w0 + pd[1, 2] * w1
                                                        + pd[2, 2] * w2))
    # Qv_f: (~w ~w)[a, b] = w_a w_b - |w|^2 delta_ab; ~w[a, b] = -eps_abc w_c
    ww = w0 * w0 + w1 * w1 + w2 * w2
    for j in range(nf):
        out[f0 + j] = 0.0
    for a in range(3):
        for b in range(3):
            w2ab = w[a] * w[b]
            if a == b:
                w2ab -= ww
                wab = 0.0
            else:
                wab = -w[3 - a - b] if (b - a + 3) % 3 == 1 else w[3 - a - b]
            for j in range(nf):
                out[f0 + j] -= w2ab * work[b, a, j]
            if wab != 0.0:
                for j in range(nf):
                    x = 0.0
                    for k in range(nf):
                        x += ss[a, b, j, k] * dqf[k]
                    out[f0 + j] -= 2.0 * wab * x


@jit
def flexible_gravity_force(mass, first_moment, sbar, A, qf, g, out):
    """out = int rho L^T g dV = [m g; ~St A^T g; Sbar^T A^T g] (size 6 + nf), the
    generalized force of uniform gravity; docs/explanation/formulation.md section 2 (Huang H2.3).
    Row blocks: global force (N), moment about the frame origin in body axes (N m),
    elastic coordinates (N or N m).

    mass (kg), first_moment (3,), sbar (3, nf): body invariants. A (3, 3):
    body-to-global rotation. qf (nf,): elastic coordinates. g (3,): gravitational
    acceleration (global, m/s^2). out (6 + nf,): written.
    """
    nf = qf.shape[0]
    f0 = RIGID_COORDS
    s0 = first_moment[0]
    s1 = first_moment[1]
    s2 = first_moment[2]
    for j in range(nf):
        s0 += sbar[0, j] * qf[j]
        s1 += sbar[1, j] * qf[j]
        s2 += sbar[2, j] * qf[j]
    b0 = A[0, 0] * g[0] + A[1, 0] * g[1] + A[2, 0] * g[2]
    b1 = A[0, 1] * g[0] + A[1, 1] * g[1] + A[2, 1] * g[2]
    b2 = A[0, 2] * g[0] + A[1, 2] * g[1] + A[2, 2] * g[2]
    for r in range(3):
        out[r] = mass * g[r]
    out[3] = s1 * b2 - s2 * b1
    out[4] = s2 * b0 - s0 * b2
    out[5] = s0 * b1 - s1 * b0
    for j in range(nf):
        out[f0 + j] = sbar[0, j] * b0 + sbar[1, j] * b1 + sbar[2, j] * b2


@jit
def flexible_point_force(A, u_point, S_point, F, out):
    """out += L(u)^T F = [F; ~u A^T F; S^T A^T F] (size 6 + nf): the generalized force
    of a global force F (N) at a material point; docs/explanation/formulation.md section 2 (applied
    forces). Row blocks: N (global), N m (body axes), N or N m (elastic coordinates).

    A (3, 3): body-to-global rotation. u_point (3,): the point's deformed position in
    the body frame, u0 + S qf (m). S_point (3, nf): its shape matrix, body frame
    (`node_selections` for a node). F (3,): the force, global axes (N). out (6 + nf,):
    added into.
    """
    nf = S_point.shape[1]
    f0 = RIGID_COORDS
    b0 = A[0, 0] * F[0] + A[1, 0] * F[1] + A[2, 0] * F[2]
    b1 = A[0, 1] * F[0] + A[1, 1] * F[1] + A[2, 1] * F[2]
    b2 = A[0, 2] * F[0] + A[1, 2] * F[1] + A[2, 2] * F[2]
    for r in range(3):
        out[r] += F[r]
    out[3] += u_point[1] * b2 - u_point[2] * b1
    out[4] += u_point[2] * b0 - u_point[0] * b2
    out[5] += u_point[0] * b1 - u_point[1] * b0
    for j in range(nf):
        out[f0 + j] += S_point[0, j] * b0 + S_point[1, j] * b1 + S_point[2, j] * b2


@jit
def elastic_force(K, qf, out):
    """out = -K_ff qf (size nf), the linear elastic force on the elastic coordinates
    (docs/explanation/formulation.md section 2; Huang H3.1-3.3). K (nf, nf): stiffness (N/m,
    N, N m/rad
    by coordinate pair). qf (nf,). out (nf,): written (N or N m)."""
    nf = qf.shape[0]
    for i in range(nf):
        x = 0.0
        for j in range(nf):
            x += K[i, j] * qf[j]
        out[i] = -x


@jit
def damping_force(K, M_ff, alpha, beta, dqf, out):
    """out = -(alpha K_ff + beta M_ff) dqf (size nf), Rayleigh damping of the elastic
    coordinates. docs/explanation/formulation.md section 2 writes structural damping -alpha
    K_ff dqf (Huang H3.1-3.3, H4.1): beta = 0 is that case. alpha (s), beta (1/s). K (nf,
    nf): stiffness. M_ff (nf, nf): SS00 + SS11 + SS22. dqf (nf,): dqf/dt.
    out (nf,): written (N or N m). Its power dqf . out <= 0."""
    nf = dqf.shape[0]
    for i in range(nf):
        x = 0.0
        for j in range(nf):
            x += (alpha * K[i, j] + beta * M_ff[i, j]) * dqf[j]
        out[i] = -x


@jit
def strain_energy(K, qf):
    """U2 = qf^T K_ff qf / 2 (J), the linear strain energy (docs/explanation/formulation.md
    sections 6,
    7; Huang H3.3). K (nf, nf), qf (nf,)."""
    nf = qf.shape[0]
    e = 0.0
    for i in range(nf):
        x = 0.0
        for j in range(nf):
            x += K[i, j] * qf[j]
        e += qf[i] * x
    return 0.5 * e
