"""One flexible body in the floating frame (numba kernels): mass matrix, its product
with an acceleration, quadratic-velocity vector, gravity, point force, element by
element; the products with the blocks of K_ff and D (`add_block_product`,
`block_quadratic_form`), and dense forms of the elastic and damping forces and the
strain energy (`elastic_force`, `damping_force`, `strain_energy`: references).

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
    SS            SS[a, b] = int rho S_a^T S_b dV (3, 3, nf, nf), as blocks (below)

and, at the configuration qf,

    St = first_moment + Sbar qf                            (int rho u dV)
    P[c, b] = N[c, b] + qf^T SS[c, b]                      (int rho u_c S_b dV, length nf)
    Th[a, b] = Th0[a, b] + N[b, a] . qf + P[a, b] . qf     (int rho u_a u_b dV)
    Ibar = tr(Th) I3 - Th                                  (inertia about the frame origin)

Blocks. SS, K_ff and the damping D are sums of blocks (`flexmbs.elements.InvariantBlock`:
one per beam element and point mass; a reduced body is one block on all its
coordinates), each a dense matrix on a few coordinates of qf. The kernels take a
block set as a tuple

    blocks = (first, last, dof_ptr, dof, ptr, data)

blocks b = first .. last - 1, block b on the coordinates dof[dof_ptr[b]:dof_ptr[b+1]]
(nb of them, indices into qf) with its values at data[ptr[b]:ptr[b+1]]: (nb, nb, 3, 3)
row-major for SS (for each pair of coordinates i, j the 3 x 3 matrix SS[a, b][i, j],
so that the nine values a product needs lie together), (nb, nb) for M_ff = SS[0, 0] +
SS[1, 1] + SS[2, 2], K_ff or D; a block with no values there (ptr[b + 1] = ptr[b])
adds nothing. A new kind of body plugs in by giving its invariants in this form
(flexmbs.model.invariant_tables). Every product with SS, K_ff or D runs over the
blocks: its cost grows with the number of elements, not with nf^2.

Scratch `work` ((nf + 3, 3, 3), `flexible_workspace`) holds the moments at qf:
work[j, c, b] = P[c, b][j] (j < nf), work[nf] = Th, work[nf + 1] = Pd (the
quadratic-velocity vector's scratch), work[nf + 2, 0] = St; `flexible_moments` fills
them, and the mass matrix, its product and the quadratic-velocity vector read them.
Outputs are in the layout of v: rows 0-2 global (N), rows 3-5 body axes (N m), rows 6..
the elastic coordinates (N or N m each).
"""

import numpy as np

from ..runtime.config import jit, jit_inline

__all__ = [
    "flexible_workspace", "flexible_moments", "flexible_mass_matrix",
    "flexible_mass_times", "flexible_quadratic_velocity", "flexible_gravity_force",
    "flexible_point_force", "add_block_product", "block_quadratic_form",
    "add_blocks_dense", "elastic_force", "damping_force", "strain_energy",
]

RIGID_COORDS = 6  # dr/dt (3) and w (3) ahead of dqf/dt in v


def flexible_workspace(nf):
    """Scratch for the moments of a body with nf elastic coordinates (module text): a
    float64 array of shape (nf + 3, 3, 3)."""
    nf = int(nf)
    if nf < 0:
        raise ValueError(f"nf: expected a number of elastic coordinates >= 0, got {nf}")
    return np.zeros((nf + 3, 3, 3))


@jit
def flexible_moments(first_moment, sbar, th0, n_inv, ss_blocks, qf, work):
    """The moments of the body at qf into work (module text), element by element:

        P[c, b] = N[c, b] + sum over blocks of qf_e^T SS_e[c, b]   (int rho u_c S_b dV)
        Th[a, b] = Th0[a, b] + N[b, a] . qf + P[a, b] . qf          (int rho u_a u_b dV)
        St = first_moment + Sbar qf                                 (int rho u dV)

    docs/explanation/formulation.md section 2; kg m (kg m^2) for P, kg m^2 for Th,
    kg m for St. ss_blocks: the blocks of SS (module text)."""
    nf = qf.shape[0]
    first, last, dof_ptr, dof, ptr, data = ss_blocks
    wf = work.reshape(-1)
    for j in range(nf):
        for c in range(3):
            for b in range(3):
                wf[9 * j + 3 * c + b] = n_inv[c, b, j]
    for blk in range(first, last):
        p0 = ptr[blk]
        if ptr[blk + 1] == p0:
            continue
        d0 = dof_ptr[blk]
        nb = dof_ptr[blk + 1] - d0
        for kk in range(nb):
            qk = qf[dof[d0 + kk]]
            if qk == 0.0:
                continue
            row = data[p0 + 9 * nb * kk:p0 + 9 * nb * (kk + 1)]
            for jj in range(nb):
                pj = wf[9 * dof[d0 + jj]:9 * dof[d0 + jj] + 9]
                sj = row[9 * jj:9 * jj + 9]
                for t in range(9):
                    pj[t] += qk * sj[t]
    for a in range(3):
        for b in range(3):
            s = th0[a, b]
            for j in range(nf):
                s += (n_inv[b, a, j] + wf[9 * j + 3 * a + b]) * qf[j]
            work[nf, a, b] = s
    for r in range(3):
        s = first_moment[r]
        for j in range(nf):
            s += sbar[r, j] * qf[j]
        work[nf + 2, 0, r] = s


@jit
def add_blocks_dense(blocks, scale, out):
    """out[dof_e, dof_e] += scale B_e for every block e ((nb, nb): M_ff, K_ff or D);
    out (nf, nf)."""
    first, last, dof_ptr, dof, ptr, data = blocks
    for blk in range(first, last):
        p0 = ptr[blk]
        if ptr[blk + 1] == p0:
            continue
        d0 = dof_ptr[blk]
        nb = dof_ptr[blk + 1] - d0
        for ii in range(nb):
            for jj in range(nb):
                out[dof[d0 + ii], dof[d0 + jj]] += scale * data[p0 + ii * nb + jj]


@jit
def flexible_mass_matrix(mass, sbar, m_blocks, A, work, out):
    """out = M(A, qf) = int rho L^T L dV ((6 + nf) x (6 + nf)), docs/explanation/formulation.md
    section 2 (Huang H2.3, contractions H2.25-2.68):

        M = [[m I3,        -A ~St,     A Sbar],
             [~St A^T,      Ibar,      M_wf  ],
             [Sbar^T A^T,   M_wf^T,    M_ff  ]]

        M_wf rows = [P[1, 2] - P[2, 1], P[2, 0] - P[0, 2], P[0, 1] - P[1, 0]]
                    (= int rho ~u S dV)
        M_ff = SS[0, 0] + SS[1, 1] + SS[2, 2]   (= int rho S^T S dV, by blocks)

    with St, P, Th, Ibar of the module docstring. Units: kg (rr), kg m (rw), kg m^2
    (ww); the f rows and columns carry their coordinate's unit. Exactly symmetric.
    The dense matrix, for the dense paths (the Order-N formulation, tests); the
    equations of motion use `flexible_mass_times` and the blocks.

    mass (kg), sbar (3, nf), m_blocks (the blocks of M_ff): the body invariants. A
    (3, 3): body-to-global rotation. work: the moments at qf (`flexible_moments`).
    out ((6 + nf), (6 + nf)): written.
    """
    nf = sbar.shape[1]
    f0 = RIGID_COORDS
    st = work[nf + 2, 0]
    s0 = st[0]
    s1 = st[1]
    s2 = st[2]
    th = work[nf]
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
    tr = th[0, 0] + th[1, 1] + th[2, 2]
    for a in range(3):
        for b in range(3):
            out[3 + a, 3 + b] = -0.5 * (th[a, b] + th[b, a])
        out[3 + a, 3 + a] += tr
    for j in range(nf):
        # M_rf = A Sbar
        for r in range(3):
            x = A[r, 0] * sbar[0, j] + A[r, 1] * sbar[1, j] + A[r, 2] * sbar[2, j]
            out[r, f0 + j] = x
            out[f0 + j, r] = x
        # M_wf rows from P
        pj = work[j]
        x0 = pj[1, 2] - pj[2, 1]
        x1 = pj[2, 0] - pj[0, 2]
        x2 = pj[0, 1] - pj[1, 0]
        out[3, f0 + j] = x0
        out[4, f0 + j] = x1
        out[5, f0 + j] = x2
        out[f0 + j, 3] = x0
        out[f0 + j, 4] = x1
        out[f0 + j, 5] = x2
    for i in range(nf):
        for j in range(nf):
            out[f0 + i, f0 + j] = 0.0
    add_blocks_dense(m_blocks, 1.0, out[f0:, f0:])


@jit
def flexible_mass_times(mass, sbar, m_blocks, A, work, acc, elastic, out):
    """out = M acc (size 6 + nf) without forming M (`flexible_mass_matrix`'s blocks,
    docs/explanation/formulation.md section 2): acc = [ar (global, m/s^2); aw (body
    axes, rad/s^2); af (the elastic accelerations)],

        out_r = m ar - A (St x aw) + A Sbar af                      (N, global)
        out_w = St x (A^T ar) + Ibar aw + M_wf af                   (N m, body axes)
        out_f = Sbar^T A^T ar + M_wf^T aw + M_ff af                 (N or N m)

    M_ff af by blocks (m_blocks). With elastic False, af is taken as zero (acc[6:]
    not read). work: the moments at qf (`flexible_moments`). out must not be acc."""
    nf = sbar.shape[1]
    f0 = RIGID_COORDS
    wf = work.reshape(-1)
    st = work[nf + 2, 0]
    th = work[nf]
    ar0, ar1, ar2 = acc[0], acc[1], acc[2]
    aw0, aw1, aw2 = acc[3], acc[4], acc[5]
    # A^T ar (body axes)
    b0 = A[0, 0] * ar0 + A[1, 0] * ar1 + A[2, 0] * ar2
    b1 = A[0, 1] * ar0 + A[1, 1] * ar1 + A[2, 1] * ar2
    b2 = A[0, 2] * ar0 + A[1, 2] * ar1 + A[2, 2] * ar2
    # Sbar af (body axes) and M_wf af
    e0 = 0.0
    e1 = 0.0
    e2 = 0.0
    g0 = 0.0
    g1 = 0.0
    g2 = 0.0
    for j in range(nf):
        # M_wf column j: P[1, 2] - P[2, 1], P[2, 0] - P[0, 2], P[0, 1] - P[1, 0]
        x0 = wf[9 * j + 5] - wf[9 * j + 7]
        x1 = wf[9 * j + 6] - wf[9 * j + 2]
        x2 = wf[9 * j + 1] - wf[9 * j + 3]
        out[f0 + j] = (sbar[0, j] * b0 + sbar[1, j] * b1 + sbar[2, j] * b2
                       + x0 * aw0 + x1 * aw1 + x2 * aw2)
    if elastic:
        for j in range(nf):
            af = acc[f0 + j]
            e0 += sbar[0, j] * af
            e1 += sbar[1, j] * af
            e2 += sbar[2, j] * af
            g0 += (wf[9 * j + 5] - wf[9 * j + 7]) * af
            g1 += (wf[9 * j + 6] - wf[9 * j + 2]) * af
            g2 += (wf[9 * j + 1] - wf[9 * j + 3]) * af
    # St x aw - Sbar af, turned to global: out_r = m ar - A (St x aw - Sbar af)
    c0 = st[1] * aw2 - st[2] * aw1 - e0
    c1 = st[2] * aw0 - st[0] * aw2 - e1
    c2 = st[0] * aw1 - st[1] * aw0 - e2
    out[0] = mass * ar0 - (A[0, 0] * c0 + A[0, 1] * c1 + A[0, 2] * c2)
    out[1] = mass * ar1 - (A[1, 0] * c0 + A[1, 1] * c1 + A[1, 2] * c2)
    out[2] = mass * ar2 - (A[2, 0] * c0 + A[2, 1] * c1 + A[2, 2] * c2)
    # Ibar aw = tr(Th) aw - sym(Th) aw
    tr = th[0, 0] + th[1, 1] + th[2, 2]
    s01 = 0.5 * (th[0, 1] + th[1, 0])
    s02 = 0.5 * (th[0, 2] + th[2, 0])
    s12 = 0.5 * (th[1, 2] + th[2, 1])
    out[3] = (tr - th[0, 0]) * aw0 - s01 * aw1 - s02 * aw2 + st[1] * b2 - st[2] * b1 + g0
    out[4] = -s01 * aw0 + (tr - th[1, 1]) * aw1 - s12 * aw2 + st[2] * b0 - st[0] * b2 + g1
    out[5] = -s02 * aw0 - s12 * aw1 + (tr - th[2, 2]) * aw2 + st[0] * b1 - st[1] * b0 + g2
    if elastic:
        add_block_product(m_blocks, 1.0, acc[f0:f0 + nf], out[f0:f0 + nf])


@jit
def flexible_quadratic_velocity(sbar, ss_blocks, A, w, dqf, work, out):
    """out = Qv = -int rho L^T A (~w ~w u + 2 ~w S dqf) dV (size 6 + nf), the
    centrifugal, gyroscopic and Coriolis forces; docs/explanation/formulation.md section 2
    (Huang H2.3, contractions H2.25-2.68):

        Qv_r = -A (~w ~w St + 2 ~w Sbar dqf)                        (global, N)
        Qv_w = -~w Ibar w - 2 (w tr(Pd) - Pd^T w)                    (body axes, N m)
        Qv_f = -sum_ab (~w ~w)[a, b] P[b, a] - 2 sum_ab ~w[a, b] SS[a, b] dqf

    with Pd[c, a] = P[c, a] . dqf, so that w tr(Pd) - Pd^T w = int rho ~u ~w S dqf dV;
    the last sum by blocks.

    sbar (3, nf), ss_blocks: the body invariants. A (3, 3): body-to-global rotation.
    w (3,): angular velocity (body axes, rad/s). dqf (nf,): dqf/dt. work: the moments
    at qf (`flexible_moments`; its Pd is overwritten). out (6 + nf,): written.
    """
    nf = dqf.shape[0]
    f0 = RIGID_COORDS
    w0 = w[0]
    w1 = w[1]
    w2 = w[2]
    st = work[nf + 2, 0]
    s0 = st[0]
    s1 = st[1]
    s2 = st[2]
    # d = Sbar dqf
    d0 = 0.0
    d1 = 0.0
    d2 = 0.0
    for j in range(nf):
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
    # Pd[c, a] = P[c, a] . dqf
    wf = work.reshape(-1)
    pdf = wf[9 * (nf + 1):9 * (nf + 2)]
    for t in range(9):
        pdf[t] = 0.0
    for j in range(nf):
        x = dqf[j]
        if x != 0.0:
            pj = wf[9 * j:9 * j + 9]
            for t in range(9):
                pdf[t] += pj[t] * x
    pd = work[nf + 1]
    # Ibar w = tr(Th) w - Th w
    th = work[nf]
    tr = th[0, 0] + th[1, 1] + th[2, 2]
    h0 = tr * w0 - (th[0, 0] * w0 + th[0, 1] * w1 + th[0, 2] * w2)
    h1 = tr * w1 - (th[1, 0] * w0 + th[1, 1] * w1 + th[1, 2] * w2)
    h2 = tr * w2 - (th[2, 0] * w0 + th[2, 1] * w1 + th[2, 2] * w2)
    trd = pd[0, 0] + pd[1, 1] + pd[2, 2]
    out[3] = -(w1 * h2 - w2 * h1) - 2.0 * (w0 * trd - (pd[0, 0] * w0 + pd[1, 0] * w1
                                                        + pd[2, 0] * w2))
    out[4] = -(w2 * h0 - w0 * h2) - 2.0 * (w1 * trd - (pd[0, 1] * w0 + pd[1, 1] * w1
                                                        + pd[2, 1] * w2))
    out[5] = -(w0 * h1 - w1 * h0) - 2.0 * (w2 * trd - (pd[0, 2] * w0 + pd[1, 2] * w1
                                                        + pd[2, 2] * w2))
    # Qv_f: (~w ~w)[a, b] = w_a w_b - |w|^2 delta_ab; ~w[a, b] = -eps_abc w_c
    ww = w0 * w0 + w1 * w1 + w2 * w2
    # (~w ~w)[a, b] as nine numbers in the order of P[b, a]
    wa00 = w0 * w0 - ww
    wa11 = w1 * w1 - ww
    wa22 = w2 * w2 - ww
    wa01 = w0 * w1
    wa02 = w0 * w2
    wa12 = w1 * w2
    for j in range(nf):
        pj = wf[9 * j:9 * j + 9]
        out[f0 + j] = -(wa00 * pj[0] + wa11 * pj[4] + wa22 * pj[8]
                        + wa01 * (pj[1] + pj[3]) + wa02 * (pj[2] + pj[6])
                        + wa12 * (pj[5] + pj[7]))
    # -2 sum_ab ~w[a, b] SS[a, b] dqf, by blocks: ~w[0, 1] = -w2, ~w[1, 0] = w2, ...
    first, last, dof_ptr, dof, ptr, data = ss_blocks
    for blk in range(first, last):
        p0 = ptr[blk]
        if ptr[blk + 1] == p0:
            continue
        d0b = dof_ptr[blk]
        nb = dof_ptr[blk + 1] - d0b
        for ii in range(nb):
            row = data[p0 + 9 * nb * ii:p0 + 9 * nb * (ii + 1)]
            x = 0.0
            for jj in range(nb):
                v = dqf[dof[d0b + jj]]
                sj = row[9 * jj:9 * jj + 9]
                x += v * (w2 * (sj[3] - sj[1])       # SS10 - SS01
                          + w1 * (sj[2] - sj[6])     # SS02 - SS20
                          + w0 * (sj[7] - sj[5]))    # SS21 - SS12
            out[f0 + dof[d0b + ii]] -= 2.0 * x


@jit
def flexible_gravity_force(mass, sbar, A, g, work, out):
    """out = int rho L^T g dV = [m g; ~St A^T g; Sbar^T A^T g] (size 6 + nf), the
    generalized force of uniform gravity; docs/explanation/formulation.md section 2 (Huang H2.3).
    Row blocks: global force (N), moment about the frame origin in body axes (N m),
    elastic coordinates (N or N m).

    mass (kg), sbar (3, nf): body invariants. A (3, 3): body-to-global rotation.
    g (3,): gravitational acceleration (global, m/s^2). work: the moments at qf
    (`flexible_moments`: St). out (6 + nf,): written.
    """
    nf = sbar.shape[1]
    f0 = RIGID_COORDS
    st = work[nf + 2, 0]
    s0 = st[0]
    s1 = st[1]
    s2 = st[2]
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


@jit_inline
def add_block_product(blocks, scale, x, out):
    """out += scale B x, B = the sum of the blocks (K_ff or D: (nb, nb) each, module
    text) placed at their coordinates; x, out (nf,)."""
    first, last, dof_ptr, dof, ptr, data = blocks
    for blk in range(first, last):
        p0 = ptr[blk]
        if ptr[blk + 1] == p0:
            continue
        d0 = dof_ptr[blk]
        nb = dof_ptr[blk + 1] - d0
        for ii in range(nb):
            s = 0.0
            for jj in range(nb):
                s += data[p0 + ii * nb + jj] * x[dof[d0 + jj]]
            out[dof[d0 + ii]] += scale * s


@jit_inline
def block_quadratic_form(blocks, x):
    """x^T B x, B the sum of the blocks ((nb, nb) each) at their coordinates."""
    first, last, dof_ptr, dof, ptr, data = blocks
    e = 0.0
    for blk in range(first, last):
        p0 = ptr[blk]
        if ptr[blk + 1] == p0:
            continue
        d0 = dof_ptr[blk]
        nb = dof_ptr[blk + 1] - d0
        for ii in range(nb):
            s = 0.0
            for jj in range(nb):
                s += data[p0 + ii * nb + jj] * x[dof[d0 + jj]]
            e += x[dof[d0 + ii]] * s
    return e


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
