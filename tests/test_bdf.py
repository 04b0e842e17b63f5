"""The BDF/DAE integrator (flexmbs.solvers.bdf): accuracy against exact solutions and
scipy references, orders of convergence, index-1 and index-2 DAEs, failure statuses,
dense output, chunked stepping, and the on-disk cache of the compiled driver.

Every residual takes args = (p,) with p a float64 array, so the driver compiles once
for the whole file (one compilation per type of args)."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from flexmbs.runtime import config
from flexmbs.runtime.config import jit
from flexmbs.solvers import bdf_kernels as K
from flexmbs.solvers.bdf import BDF, STATUS_MESSAGES, solve_dae

# ---- problems --------------------------------------------------------------------

@jit
def linear(t, y, yp, args, out):
    """F = y' - A y, A (n x n) row-major in args[0]."""
    a = args[0]
    n = y.size
    for i in range(n):
        s = yp[i]
        for j in range(n):
            s -= a[i * n + j] * y[j]
        out[i] = s


@jit
def van_der_pol(t, y, yp, args, out):
    """y1' = y2, y2' = mu (1 - y1^2) y2 - y1; args[0] = [mu]."""
    mu = args[0][0]
    out[0] = yp[0] - y[1]
    out[1] = yp[1] - mu * (1.0 - y[0] * y[0]) * y[1] + y[0]


@jit
def van_der_pol_jacobian(t, y, yp, cj, args, out):
    mu = args[0][0]
    out[0, 0] = cj
    out[0, 1] = -1.0
    out[1, 0] = 2.0 * mu * y[0] * y[1] + 1.0
    out[1, 1] = cj - mu * (1.0 - y[0] * y[0])


@jit
def robertson(t, y, yp, args, out):
    """Robertson's kinetics as an index-1 DAE, y3 = 1 - y1 - y2 algebraic."""
    k = args[0]
    out[0] = yp[0] + k[0] * y[0] - k[1] * y[1] * y[2]
    out[1] = yp[1] - k[0] * y[0] + k[1] * y[1] * y[2] + k[2] * y[1] * y[1]
    out[2] = y[0] + y[1] + y[2] - 1.0


@jit
def robertson_jacobian(t, y, yp, cj, args, out):
    k = args[0]
    out[0, 0] = cj + k[0]
    out[0, 1] = -k[1] * y[2]
    out[0, 2] = -k[1] * y[1]
    out[1, 0] = -k[0]
    out[1, 1] = cj + k[1] * y[2] + 2.0 * k[2] * y[1]
    out[1, 2] = k[1] * y[1]
    out[2, 0] = 1.0
    out[2, 1] = 1.0
    out[2, 2] = 1.0


@jit
def pendulum_ggl(t, y, yp, args, out):
    """Planar pendulum, index-2 GGL form, y = [x, z, vx, vz, lambda, mu]:
    q' = u + G^T mu, m u' + G^T lambda = f, g(q) = x^2 + z^2 - L^2 = 0, G u = 0,
    G = [2x, 2z], f = [0, -m g]; args[0] = [m, L, g]."""
    p = args[0]
    m, length, grav = p[0], p[1], p[2]
    x, z, vx, vz, lam, mu = y[0], y[1], y[2], y[3], y[4], y[5]
    out[0] = yp[0] - vx - 2.0 * x * mu
    out[1] = yp[1] - vz - 2.0 * z * mu
    out[2] = m * yp[2] + 2.0 * x * lam
    out[3] = m * yp[3] + 2.0 * z * lam + m * grav
    out[4] = x * x + z * z - length * length
    out[5] = 2.0 * x * vx + 2.0 * z * vz


@jit
def nan_after_one(t, y, yp, args, out):
    out[0] = yp[0] + y[0]
    if t > 1.0:
        out[0] = np.nan


@jit
def singular_problem(t, y, yp, args, out):
    """The second equation depends on nothing: G is singular."""
    out[0] = yp[0] + y[0]
    out[1] = 0.0 * y[1]


@jit
def nan_at_start(t, y, yp, args, out):
    out[0] = yp[0] + np.nan * y[0]


# stiff linear system: eigenvalues -1 and -1000
LAMBDA = np.array([-1.0, -1000.0])
V = np.array([[1.0, 1.0], [1.0, -1.0]])
A = V @ np.diag(LAMBDA) @ np.linalg.inv(V)
ARGS_A = (np.ascontiguousarray(A.ravel()),)


def linear_exact(t, c=(1.0, 1.0)):
    """y(t) = V diag(exp(lambda t)) c, shape (len(t), 2), and y'(t) = A y."""
    e = np.exp(np.outer(np.atleast_1d(t), LAMBDA))
    y = (e * np.asarray(c)) @ V.T
    return y, y @ A.T


# ---- linear algebra ----------------------------------------------------------------

def test_lu_factor_solve_matches_numpy():
    rng = np.random.default_rng(1)
    for n in (1, 2, 7, 40):
        a = rng.normal(size=(n, n)) + np.diag(rng.uniform(-1, 1, n))
        b = rng.normal(size=n)
        lu = a.copy()
        piv = np.zeros(n, dtype=np.int64)
        assert K.lu_factor(lu, piv) == 0
        x = b.copy()
        K.lu_solve(lu, piv, x)
        np.testing.assert_allclose(x, np.linalg.solve(a, b), rtol=1e-10, atol=1e-12)


def _textbook_lu(a):
    """Gaussian elimination with partial pivoting in plain Python floats (row-major
    loops, the first largest pivot): the operations lu_factor performs, in order."""
    a = [list(map(float, row)) for row in a]
    n = len(a)
    piv = []
    for k in range(n):
        p = max(range(k, n), key=lambda i: (abs(a[i][k]), -i))
        piv.append(p)
        a[k], a[p] = a[p], a[k]
        inv = 1.0 / a[k][k]
        for i in range(k + 1, n):
            f = a[i][k] * inv
            a[i][k] = f
            if f != 0.0:
                for j in range(k + 1, n):
                    a[i][j] -= f * a[k][j]
    return np.array(a), np.array(piv)


def test_lu_factor_is_the_textbook_elimination_bit_for_bit():
    """lu_factor vectorises its row updates; the factors and pivots stay those of
    the plain loops, to the last bit (the step counts of the benchmarks and the
    work counters of the tests depend on it). A zero below the pivot and a tie for
    the pivot (the first row wins) are included."""
    rng = np.random.default_rng(4)
    for n in (1, 5, 12, 33):
        a = rng.normal(size=(n, n))
        if n > 4:
            a[3, :2] = 0.0
            a[0, 0] = np.abs(a[:, 0]).max()
            a[4, 0] = -a[0, 0]
        lu = a.copy()
        piv = np.zeros(n, dtype=np.int64)
        assert K.lu_factor(lu, piv) == 0
        ref, ref_piv = _textbook_lu(a)
        assert np.array_equal(piv, ref_piv)
        assert np.array_equal(lu, ref)


def test_lu_factor_reports_singular_column():
    a = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.0, 0.0, 1.0]])
    assert K.lu_factor(a, np.zeros(3, dtype=np.int64)) == 2


# ---- (a) stiff linear system: accuracy, dense output, orders -------------------------

@pytest.mark.slow
def test_linear_stiff_accuracy_and_dense_output():
    """(a, f) adaptive run against the exact solution, at output times chosen
    independently of the steps (dense output), for y and y'."""
    y0 = np.array([2.0, 0.0])  # c = (1, 1)
    t_eval = np.linspace(0.0, 10.0, 137)
    for rtol in (1e-5, 1e-8):
        r = solve_dae(linear, ARGS_A, (0.0, 10.0), y0, None, rtol, rtol * 1e-2,
                      t_eval=t_eval)
        assert r.success, r.message
        assert r.status == 0 and r.t_last == 10.0
        np.testing.assert_array_equal(r.t, t_eval)
        y, yp = linear_exact(t_eval)
        err = np.abs(r.y - y).max()
        assert err < 10 * rtol, err
        # y' from the polynomial: one order less accurate, skip the initial layer
        late = t_eval > 0.05
        assert np.abs(r.yp[late] - yp[late]).max() < 100 * rtol
        assert r.nsteps < (190 if rtol == 1e-5 else 510)    # measured 168, 462


@pytest.mark.parametrize("order", [1, 2, 3, 4, 5])
def test_fixed_order_convergence(order):
    """(a) each order k with a fixed step, started from the exact history: the global
    error at t = 3 falls as h^k (the stiff mode makes h lambda up to -100)."""
    t0, t1 = 1.0, 3.0
    steps = [0.1 / 2 ** i for i in range(4)]
    errors = []
    for h in steps:
        history = linear_exact(t0 - h * np.arange(1, order + 1))[0]
        r = solve_dae(linear, ARGS_A, (t0, t1), linear_exact(t0)[0][0], None, 1e-13,
                      1e-13, max_order=order, fixed_step=h, history=history,
                      t_eval=[t1])
        assert r.success, r.message
        assert r.order_counts[order - 1] == r.nsteps == round((t1 - t0) / h)
        errors.append(np.abs(r.y[-1] - linear_exact(t1)[0][0]).max())
    slope = np.polyfit(np.log(steps), np.log(errors), 1)[0]
    assert abs(slope - order) < 0.3, (slope, errors)


# ---- (b) van der Pol, mu = 1000 ------------------------------------------------------

MU = 1000.0
VDP_T = 3000.0
VDP_TIMES = np.linspace(0.0, VDP_T, 31)


@pytest.fixture(scope="module")
def van_der_pol_reference():
    def f(t, y):
        return [y[1], MU * (1 - y[0] ** 2) * y[1] - y[0]]

    def jac(t, y):
        return [[0.0, 1.0], [-2 * MU * y[0] * y[1] - 1, MU * (1 - y[0] ** 2)]]

    ref = solve_ivp(f, (0, VDP_T), [2.0, 0.0], method="Radau", rtol=1e-10, atol=1e-10,
                    t_eval=VDP_TIMES, jac=jac)
    assert ref.success
    return ref.y.T


@pytest.mark.parametrize("analytic", [False, True])
def test_van_der_pol_stiff(van_der_pol_reference, analytic):
    """(b) two relaxation periods against Radau at rtol 1e-10, with work bounds
    (measured: 1408 steps, 2629 residuals (FD) / 2275 (analytic), 190 Jacobians,
    2244 Newton iterations, 28 rejected)."""
    jac = van_der_pol_jacobian if analytic else None
    r = solve_dae(van_der_pol, (np.array([MU]),), (0.0, VDP_T), np.array([2.0, 0.0]),
                  None, 1e-6, 1e-6, t_eval=VDP_TIMES, jacobian=jac)
    assert r.success, r.message
    err = np.abs(r.y - van_der_pol_reference) / (1 + np.abs(van_der_pol_reference))
    assert err[:, 0].max() < 2e-3
    assert err[:, 1].max() < 2e-4
    assert r.nsteps < 1550
    assert r.nrejected < 60
    assert r.njac < 230
    assert r.nres < (2900 if not analytic else 2500)
    assert r.nnewton < 2500
    assert r.order_counts.sum() == r.nsteps
    assert r.order_counts[4] > r.nsteps // 3     # mostly order 5


def test_second_order_elimination(van_der_pol_reference):
    """van der Pol is y1' = y2, ...: with second_order=1 the Newton iteration
    eliminates y1 (one residual per Jacobian instead of two, a 1 x 1 LU) and the run
    is as accurate as the full iteration."""
    r = solve_dae(van_der_pol, (np.array([MU]),), (0.0, VDP_T), np.array([2.0, 0.0]),
                  np.array([0.0, -2.0]), 1e-6, 1e-6, t_eval=VDP_TIMES, second_order=1,
                  calc_ic=False)
    assert r.success, r.message
    err = np.abs(r.y - van_der_pol_reference) / (1 + np.abs(van_der_pol_reference))
    assert err[:, 0].max() < 2e-3
    assert err[:, 1].max() < 2e-4
    assert r.nres == r.nnewton + r.njac
    # measured 1283 steps, 87 rejected (full iteration: 1408, 28)
    assert r.nsteps < 1550 and r.nrejected < 110
    with pytest.raises(ValueError, match="second_order=1"):    # F_0 is not y0' - y1
        solve_dae(robertson, (ROB_K,), (0.0, 1.0), np.array([1.0, 0.0, 0.0]), None,
                  1e-6, 1e-8, second_order=1)
    with pytest.raises(ValueError, match="cannot be algebraic"):
        solve_dae(van_der_pol, (np.array([MU]),), (0.0, 1.0), np.array([2.0, 0.0]),
                  None, 1e-6, 1e-6, second_order=1, algebraic=np.array([0, 1]))


# ---- (c) Robertson -------------------------------------------------------------------

ROB_K = np.array([0.04, 1e4, 3e7])
ROB_TIMES = 0.4 * 10.0 ** np.arange(0, 11)


@jit
def two_link(t, y, yp, args, out):
    """A two-link mechanism in second-order form, y = [q1, q2, u1, u2, w]:
    q' - u = 0, M(q) u' - f(q, u) = 0, w' - P(q, u) = 0; args[0] = [c], a constant
    added to and taken from f so that F carries the rounding of terms of size c."""
    c = args[0][0]
    q1, q2, u1, u2 = y[0], y[1], y[2], y[3]
    m11 = 2.0 + np.cos(q2)
    m12 = 0.5 + 0.5 * np.cos(q2)
    f1 = c + 0.5 * np.sin(q2) * (2.0 * u1 * u2 + u2 * u2) - 9.81 * np.sin(q1) - c
    f2 = c - 0.5 * np.sin(q2) * u1 * u1 - 0.3 * u2 - 2.0 * np.sin(q1 + q2) - c
    out[0] = yp[0] - u1
    out[1] = yp[1] - u2
    out[2] = m11 * yp[2] + m12 * yp[3] - f1
    out[3] = m12 * yp[2] + yp[3] - f2
    out[4] = yp[4] - (u1 * u1 + u2 * np.sin(q1))


@jit
def two_link_w_column(t, y, yp, cj, args, out):
    """The w column of dF/dy + cj dF/dy' (F depends on w' only)."""
    out[4, 4] += cj


def _reduced_matrix_reference(residual, args, t, y, yp, cj, ns):
    """Gr of the second-order form from dense central differences of F in y and y'
    (step 1e-6): G = dF/dy + cj dF/dy', then the positions eliminated,
    Gr = G[r, u] + G[r, q] / cj on the u columns, G[r, z] on the others."""
    n = y.size
    f_plus, f_minus = np.zeros(n), np.zeros(n)
    g = np.zeros((n, n))
    for j in range(n):
        for v, scale in ((y, 1.0), (yp, cj)):
            d = 1e-6
            save = v[j]
            v[j] = save + d
            residual(t, y, yp, args, f_plus)
            v[j] = save - d
            residual(t, y, yp, args, f_minus)
            v[j] = save
            g[:, j] += scale * (f_plus - f_minus) / (2 * d)
    gr = g[ns:, ns:].copy()
    gr[:, :ns] += g[ns:, :ns] / cj
    return gr


def _unpivoted(lu, piv):
    """A from the in-place factors of lu_factor (P A = L U)."""
    low = np.tril(lu, -1) + np.eye(len(lu))
    a = low @ np.triu(lu)
    for k in range(len(lu) - 1, -1, -1):
        a[[k, piv[k]]] = a[[piv[k], k]]
    return a


@pytest.mark.parametrize("hook", [False, True])
@pytest.mark.parametrize("state", ["moving", "at rest, atol 1e-13"])
def test_second_order_iteration_matrix_matches_dense_differences(hook, state):
    """The reduced iteration matrix of the second-order form (_setup_second_order:
    one residual per column along q, q', u and u' together; the w column from the
    hook or from differences) equals Gr = G[r, u] + G[r, q] / cj of a dense
    central-difference G.

    At rest, with atol 1e-13 and F carrying terms of 1e3, DASSL's increment would be
    sqrt(eps) atol ~ 1e-21, and each column rounding noise of ~1e+8; the floored
    increment sqrt(eps) 1e-3 leaves eps 1e3 / 1.5e-11 ~ 1.5e-2 in an entry, below 1e-4
    of Gr's largest (~cj); moving, the increments follow |y| and the error is that of
    a forward difference, below 1e-6."""
    c, ns, n, t = 1e3, 2, 5, 0.0
    if state == "moving":
        y = np.array([0.4, -0.7, 1.3, -0.2, 0.0])
        yp = np.array([1.3, -0.2, 0.8, -2.1, 1.7])
        atol, tol = 1e-8, 1e-6
    else:
        y, yp = np.zeros(n), np.zeros(n)
        atol, tol = 1e-13, 1e-4
    args = (np.array([c]),)
    s = K.new_state(n, ns)
    s.iv[K.I_NSECOND] = ns
    s.iv[K.I_USE_JAC] = K.JAC_HOOK_COLUMNS if hook else K.JAC_FD
    s.jcol[4] = 1.0 if hook else 0.0
    cj = 1e3
    s.fs[K.F_CJ] = cj
    s.fs[K.F_H] = 2.0 / cj
    s.ewt[:] = 1.0 / (1e-8 * np.abs(y) + atol)
    res = np.zeros(n)
    two_link(t, y, yp, args, res)
    y0, yp0 = y.copy(), yp.copy()
    assert K._setup_second_order.py_func(two_link, two_link_w_column, K.no_mass, args,
                                         s, t, y, yp, res) == K._OK
    assert np.array_equal(y, y0) and np.array_equal(yp, yp0)
    assert s.stats[K.S_NRES] == n - ns - (1 if hook else 0)   # a residual per column
    gr = _unpivoted(s.Gr, s.pivr)
    ref = _reduced_matrix_reference(two_link, args, t, y, yp, cj, ns)
    assert np.abs(gr - ref).max() <= tol * np.abs(ref).max()


@jit
def two_link_mass(t, y, yp, args, out):
    """dF_r/dy'_r of two_link over [u1, u2, w]: M(q2) and w's coefficient."""
    out[0, 0] = 2.0 + np.cos(y[1])
    out[0, 1] = 0.5 + 0.5 * np.cos(y[1])
    out[1, 0] = out[0, 1]
    out[1, 1] = 1.0
    out[2, 2] = 1.0


def _dense(fn, t, y, yp, args, m):
    out = np.zeros((m, m))
    fn(t, y, yp, args, out)
    return out


def test_reformed_iteration_matrix_keeps_the_rest_of_the_differences():
    """_reform_with_mass after a difference Jacobian at (y0, cj0): at (y1, cj1) the
    matrix is cj1 A(y1) + (Gr(y0, cj0) - cj0 A(y0)), no residual called; the mass
    term is then exact and only D + K / cj is stale, so against dense differences at
    (y1, cj1) it is far closer than the stale Gr(y0, cj0) (q moved by 0.3, cj by
    half: measured 0.2 against 7e2)."""
    ns, n, t = 2, 5, 0.0
    args = (np.array([0.0]),)
    y0 = np.array([0.4, -0.7, 1.3, -0.2, 0.0])
    yp0 = np.array([1.3, -0.2, 0.8, -2.1, 1.7])
    y1 = y0 + np.array([0.1, 0.3, -0.4, 0.5, 0.2])
    yp1 = yp0 + np.array([-0.4, 0.5, 1.0, -0.6, 0.3])
    cj0, cj1 = 1e3, 1.5e3
    s = K.new_state(n, ns, mass=True)
    s.iv[K.I_NSECOND] = ns
    s.iv[K.I_USE_MASS] = 1
    s.iv[K.I_USE_JAC] = K.JAC_HOOK_COLUMNS
    s.jcol[4] = 1.0
    s.fs[K.F_CJ] = cj0
    s.fs[K.F_H] = 2.0 / cj0
    s.ewt[:] = 1.0 / (1e-8 * np.abs(y0) + 1e-8)
    res = np.zeros(n)
    two_link(t, y0, yp0, args, res)
    assert K._setup_second_order.py_func(two_link, two_link_w_column, two_link_mass,
                                         args, s, t, y0, yp0, res) == K._OK
    nres = s.stats[K.S_NRES]
    s.fs[K.F_CJ] = cj1
    assert K._reform_with_mass.py_func(two_link_mass, args, s, t, y1, yp1) == K._OK
    assert s.stats[K.S_NRES] == nres and s.stats[K.S_NMASS] == 1
    assert s.fs[K.F_CJOLD] == cj1 and s.iv[K.I_JAC_AGE] == 0
    gr = _unpivoted(s.Gr, s.pivr)
    ref0 = _reduced_matrix_reference(two_link, args, t, y0, yp0, cj0, ns)
    ref1 = _reduced_matrix_reference(two_link, args, t, y1, yp1, cj1, ns)
    want = (cj1 * _dense(two_link_mass, t, y1, yp1, args, 3) + ref0
            - cj0 * _dense(two_link_mass, t, y0, yp0, args, 3))
    assert np.abs(gr - want).max() <= 1e-6 * np.abs(ref1).max()
    assert np.abs(gr - ref1).max() < 1e-2 * np.abs(ref0 - ref1).max()


def _two_link_run(mass, rtol=1e-8, atol=1e-10):
    y0 = np.array([1.0, 0.5, 0.0, 0.0, 0.0])
    yp0 = np.zeros(5)
    jcol = np.array([0, 0, 0, 0, 1])
    return solve_dae(two_link, (np.array([0.0]),), (0.0, 10.0), y0, yp0, rtol, atol,
                     t_eval=np.linspace(0.0, 10.0, 11), jacobian=two_link_w_column,
                     jacobian_columns=jcol, second_order=2, mass=mass, calc_ic=True)


def test_mass_hook_saves_difference_jacobians():
    """The two-link mechanism for 10 s at rtol 1e-8: with the mass hook the
    iteration matrix is mostly re-formed (nmass) instead of differenced (njac),
    fewer residuals are spent (measured 941 against 1049), and the solution is as
    accurate as without it against a run at rtol 1e-12 (both 7e-8 relative)."""
    reference = _two_link_run(None, 1e-12, 1e-14)
    plain = _two_link_run(None)
    hooked = _two_link_run(two_link_mass)
    for r in (reference, plain, hooked):
        assert r.success, r.message
    assert plain.nmass == 0 and plain.nlu == plain.njac
    assert hooked.nlu == hooked.njac + hooked.nmass
    assert hooked.nmass > 5 * hooked.njac
    assert hooked.nres < 0.95 * plain.nres

    def error(r):
        return (np.abs(r.y - reference.y) / (1.0 + np.abs(reference.y))).max()
    assert error(hooked) <= 3.0 * error(plain) <= 3e-6


@jit
def two_link_full_mass(t, y, yp, args, out):
    """dF/dy' of two_link over all five unknowns: 1 on q, M(q2) on u, 1 on w."""
    out[0, 0] = 1.0
    out[1, 1] = 1.0
    out[2:5, 2:5] = 0.0
    two_link_mass(t, y, yp, args, out[2:5, 2:5])


def test_first_order_reform_is_exact_in_cj():
    """Without eliminated positions (ns = 0, the form of a model with closed loops)
    _setup keeps R = G - cj A = dF/dy and _reform_with_mass gives R + cj1 A(y): at the
    state of the differences, the iteration matrix of a new step size exactly (up to
    the differences' own error), with no residual called; at a moved state only dF/dy
    is stale."""
    n, t = 5, 0.0
    args = (np.array([0.0]),)
    y = np.array([0.4, -0.7, 1.3, -0.2, 0.0])
    yp = np.array([1.3, -0.2, 0.8, -2.1, 1.7])
    cj0, cj1 = 1e3, 4e3          # far outside the ratio that forces new differences
    s = K.new_state(n, 0, mass=True)
    s.iv[K.I_USE_MASS] = 1
    s.iv[K.I_USE_JAC] = K.JAC_FD
    s.fs[K.F_CJ] = cj0
    s.fs[K.F_H] = 2.0 / cj0
    s.ewt[:] = 1.0 / (1e-8 * np.abs(y) + 1e-8)
    res = np.zeros(n)
    two_link(t, y, yp, args, res)
    assert K._setup.py_func(two_link, K.no_jacobian, two_link_full_mass, args, s, t, y,
                            yp, res) == K._OK
    nres = s.stats[K.S_NRES]
    s.fs[K.F_CJ] = cj1
    assert K._reform_with_mass.py_func(two_link_full_mass, args, s, t, y, yp) == K._OK
    assert s.stats[K.S_NRES] == nres and s.stats[K.S_NMASS] == 1
    g = _unpivoted(s.G, s.piv)
    ref = _reduced_matrix_reference(two_link, args, t, y, yp, cj1, 0)
    assert np.abs(g - ref).max() <= 1e-6 * np.abs(ref).max()


def test_mass_hook_on_a_first_order_residual_saves_difference_jacobians():
    """The two-link mechanism as a first-order DAE (no positions eliminated) with the
    full dF/dy' as its mass hook: a change of step re-forms the iteration matrix
    instead of differencing it again while dF/dy is at most REST_MAX_AGE_FIRST_ORDER
    steps old, so fewer difference Jacobians and residuals are spent, and the run is
    as accurate as without the hook (measured: 43 difference Jacobians and 28
    re-formed against 71, 1110 residuals against 1270, both 8.5e-8 relative)."""
    y0 = np.array([1.0, 0.5, 0.0, 0.0, 0.0])

    def run(mass, rtol=1e-8, atol=1e-10):
        return solve_dae(two_link, (np.array([0.0]),), (0.0, 10.0), y0, np.zeros(5),
                         rtol, atol, t_eval=np.linspace(0.0, 10.0, 11), mass=mass,
                         calc_ic=True)
    reference, plain, hooked = run(None, 1e-12, 1e-14), run(None), run(two_link_full_mass)
    for r in (reference, plain, hooked):
        assert r.success, r.message
    assert plain.nmass == 0
    assert hooked.nlu == hooked.njac + hooked.nmass
    assert hooked.nmass > 0.5 * hooked.njac and hooked.njac < 0.75 * plain.njac
    assert hooked.nres < 0.95 * plain.nres

    def error(r):
        return (np.abs(r.y - reference.y) / (1.0 + np.abs(reference.y))).max()
    assert error(hooked) <= 3.0 * error(plain) <= 3e-6


@jit
def robertson_y3_column(t, y, yp, cj, args, out):
    """Column 2 of dF/dy + cj dF/dy' only (F is linear in y3: differences get it
    exactly, up to rounding)."""
    k = args[0]
    out[0, 2] += -k[1] * y[1]
    out[1, 2] += k[1] * y[1]
    out[2, 2] += 1.0


@pytest.fixture(scope="module")
def robertson_reference():
    def f(t, y):
        return [-0.04 * y[0] + 1e4 * y[1] * y[2],
                0.04 * y[0] - 1e4 * y[1] * y[2] - 3e7 * y[1] ** 2, 3e7 * y[1] ** 2]

    def jac(t, y):
        return [[-0.04, 1e4 * y[2], 1e4 * y[1]],
                [0.04, -1e4 * y[2] - 6e7 * y[1], -1e4 * y[1]], [0.0, 6e7 * y[1], 0.0]]

    kw = dict(rtol=1e-10, atol=[1e-14, 1e-20, 1e-14], t_eval=ROB_TIMES, jac=jac)
    radau = solve_ivp(f, (0, ROB_TIMES[-1]), [1.0, 0.0, 0.0], method="Radau", **kw)
    lsoda = solve_ivp(f, (0, ROB_TIMES[-1]), [1.0, 0.0, 0.0], method="LSODA", **kw)
    assert radau.success and lsoda.success
    assert np.all(np.abs(radau.y - lsoda.y) <= 1e-7 * np.abs(radau.y))
    return radau.y.T


def test_robertson_dae_to_4e10(robertson_reference):
    """(c) index-1 DAE with the conservation law as its algebraic equation, to
    t = 4e10, analytic Jacobian: agreement with Radau/LSODA and y1 + y2 + y3 = 1 to
    round-off at every output."""
    rtol, atol = 1e-6, np.array([1e-10, 1e-16, 1e-8])
    r = solve_dae(robertson, (ROB_K,), (0.0, ROB_TIMES[-1]), np.array([1.0, 0.0, 0.0]),
                  None, rtol, atol, algebraic=np.array([0, 0, 1]), t_eval=ROB_TIMES,
                  jacobian=robertson_jacobian)
    assert r.success, r.message
    ref = robertson_reference
    scaled = np.abs(r.y - ref) / (rtol * np.abs(ref) + atol)
    assert scaled.max() < 50, scaled.max(axis=0)
    assert np.abs(r.y.sum(axis=1) - 1.0).max() < 1e-12
    assert r.nsteps < 1070                        # measured 967


def test_robertson_ida_example_work():
    """(c) IDA's idaRoberts_dns setting (rtol 1e-4, atol 1e-8, 1e-6, 1e-6, analytic
    Jacobian, y3 in the error test, y'0 given): IDA reports 362 steps, 537 residuals,
    60 Jacobians, 15 error-test failures; this integrator takes 357, 509, 59, 10
    (benchmarks/bench_bdf_kernel.py)."""
    r = solve_dae(robertson, (ROB_K,), (0.0, 4e10), np.array([1.0, 0.0, 0.0]),
                  np.array([-0.04, 0.04, 0.0]), 1e-4, np.array([1e-8, 1e-6, 1e-6]),
                  t_eval=ROB_TIMES, jacobian=robertson_jacobian, calc_ic=False)
    assert r.success, r.message
    assert r.nsteps < 400 and r.nres < 600 and r.njac < 75 and r.nrejected < 20


def test_robertson_finite_difference_jacobian(robertson_reference):
    """(c) finite-difference Jacobian (DASSL increments) with y2's atol at 1e-14:
    conservation holds to the Newton tolerance rather than round-off."""
    rtol, atol = 1e-6, np.array([1e-10, 1e-14, 1e-8])
    r = solve_dae(robertson, (ROB_K,), (0.0, ROB_TIMES[-1]), np.array([1.0, 0.0, 0.0]),
                  None, rtol, atol, algebraic=np.array([0, 0, 1]), t_eval=ROB_TIMES)
    assert r.success, r.message
    ref = robertson_reference
    scaled = np.abs(r.y - ref) / (rtol * np.abs(ref) + atol)
    assert scaled.max() < 50
    assert np.abs(r.y.sum(axis=1) - 1.0).max() < 1e-9
    assert r.nsteps < 1000                        # measured 907


def test_jacobian_hook_for_some_columns(robertson_reference):
    """An analytic block (here the y3 column) with differences for the other
    columns: as accurate as all-differences, with one residual fewer per Jacobian
    (every residual is a Newton iteration, a difference column or one of the few of
    the initial-value computation)."""
    rtol, atol = 1e-6, np.array([1e-10, 1e-14, 1e-8])
    args = (robertson, (ROB_K,), (0.0, ROB_TIMES[-1]), np.array([1.0, 0.0, 0.0]),
            None, rtol, atol)
    kw = dict(algebraic=np.array([0, 0, 1]), t_eval=ROB_TIMES)
    fd = solve_dae(*args, **kw)
    mixed = solve_dae(*args, **kw, jacobian=robertson_y3_column,
                      jacobian_columns=np.array([False, False, True]))
    assert fd.success and mixed.success, mixed.message
    scaled = np.abs(mixed.y - robertson_reference) / (rtol * np.abs(robertson_reference)
                                                      + atol)
    assert scaled.max() < 50
    assert np.abs(mixed.y.sum(axis=1) - 1.0).max() < 1e-9
    initial = 20
    assert 0 <= fd.nres - fd.nnewton - 3 * fd.njac <= initial
    assert 0 <= mixed.nres - mixed.nnewton - 2 * mixed.njac <= initial
    with pytest.raises(ValueError, match="jacobian_columns"):
        solve_dae(*args, **kw, jacobian_columns=np.array([False, False, True]))


# ---- (d) pendulum, index-2 GGL -------------------------------------------------------

PEND = np.array([1.0, 1.0, 9.81])     # m (kg), L (m), g (m/s^2)


def pendulum_start(theta=1.0):
    m, length, grav = PEND
    x, z = length * np.sin(theta), -length * np.cos(theta)
    lam = -m * grav * z / (2 * length ** 2)       # from G u' = 0 at rest
    y0 = np.array([x, z, 0.0, 0.0, lam, 0.0])
    yp0 = np.array([0.0, 0.0, -2 * x * lam / m, -2 * z * lam / m - grav, 0.0, 0.0])
    return y0, yp0


def pendulum_invariants(y):
    m, length, grav = PEND
    y = np.atleast_2d(y)
    gpos = y[:, 0] ** 2 + y[:, 1] ** 2 - length ** 2
    gvel = 2 * y[:, 0] * y[:, 2] + 2 * y[:, 1] * y[:, 3]
    energy = 0.5 * m * (y[:, 2] ** 2 + y[:, 3] ** 2) + m * grav * y[:, 1]
    return gpos, gvel, energy


def test_pendulum_ggl_index2_constraints_and_energy():
    """(d) 10 s of the swinging pendulum (index 2, lambda and mu algebraic, out of the
    error test). At every step both constraints hold to the Newton tolerance, here
    tightened (epcon 1e-3) to round-off level; between steps (dense output) they hold
    to the interpolation error, without drift; the energy error is within tolerance."""
    rtol = 1e-8
    y0, yp0 = pendulum_start()
    solver = BDF(pendulum_ggl, (PEND,), 0.0, y0, yp0, 10.0, rtol, rtol,
                 algebraic=np.array([0, 0, 0, 0, 1, 1]), calc_ic=False, epcon=1e-3)
    t_out = np.linspace(0.0, 10.0, 1001)
    worst_step = 0.0
    outputs = []
    done = 0
    while solver.status == "running":
        n, y, _ = solver.advance(t_out[done:], max_steps=1)
        done += n
        outputs.append(y)
        gpos, gvel, _ = pendulum_invariants(solver.y)
        worst_step = max(worst_step, abs(gpos[0]), abs(gvel[0]))
    assert solver.status == "finished", solver.message
    assert done == len(t_out)
    stats = solver.statistics()
    assert stats["nsteps"] < 1600 and stats["nrejected"] < 10   # measured 1378, 0
    assert worst_step < 1e-10
    gpos, gvel, energy = pendulum_invariants(np.concatenate(outputs))
    assert np.abs(gpos).max() < 1e-7 and np.abs(gvel).max() < 1e-6
    first, last = np.abs(gvel[:100]).max(), np.abs(gvel[-100:]).max()
    assert last < 10 * first                                      # no drift
    assert np.abs(energy - energy[0]).max() < 1e-5 * abs(energy[0])


# ---- (e) failures are statuses -------------------------------------------------------

def test_nan_residual_fails_with_status():
    r = solve_dae(nan_after_one, (np.zeros(1),), (0.0, 2.0), np.ones(1), None, 1e-6,
                  1e-9, t_eval=np.linspace(0.0, 2.0, 21))
    assert not r.success
    assert r.status == K.ST_NONFINITE
    assert "not finite" in r.message
    assert 0.99 < r.t_last <= 1.0
    assert len(r.t) == 10                        # outputs up to t = 0.9 delivered
    np.testing.assert_allclose(r.y_last, np.exp(-r.t_last), rtol=1e-4)


def test_nan_at_start_fails_with_status():
    r = solve_dae(nan_at_start, (np.zeros(1),), (0.0, 1.0), np.ones(1), None, 1e-6,
                  1e-9)
    assert r.status == K.ST_NONFINITE and not r.success
    assert len(r.t) == 0


def test_singular_problem_fails_with_status():
    r = solve_dae(singular_problem, (np.zeros(1),), (0.0, 1.0), np.ones(2), None, 1e-6,
                  1e-9)
    assert r.status == K.ST_IC_SINGULAR and "singular" in r.message
    r = solve_dae(singular_problem, (np.zeros(1),), (0.0, 1.0), np.ones(2),
                  np.array([-1.0, 0.0]), 1e-6, 1e-9, calc_ic=False)
    assert r.status == K.ST_SINGULAR and "singular" in r.message
    assert r.t_last == 0.0 and not r.success


def test_step_budget_and_messages():
    r = solve_dae(van_der_pol, (np.array([MU]),), (0.0, VDP_T), np.array([2.0, 0.0]),
                  None, 1e-6, 1e-6, max_steps=100)
    assert r.status == -8 and r.nsteps == 100 and "max_steps = 100" in r.message
    for _code, text in STATUS_MESSAGES.items():
        assert text.format(t=1.0, h=0.1, t0=0.0, tn=1.0, n=10, nic=10, max_steps=5)


# ---- (f) dense output and chunked stepping -------------------------------------------

def test_chunked_run_equals_single_run():
    """Resuming the compiled loop after each small step budget and output batch gives
    bit-identical results to one call."""
    y0 = np.array([2.0, 0.0])
    t_out = np.linspace(0.0, 5.0, 51)
    one = BDF(linear, ARGS_A, 0.0, y0, None, 5.0, 1e-7, 1e-9)
    n, y_one, yp_one = one.advance(t_out)
    assert n == 51 and one.status == "finished"
    many = BDF(linear, ARGS_A, 0.0, y0, None, 5.0, 1e-7, 1e-9)
    ys, yps, done = [], [], 0
    while many.status == "running":
        batch = t_out[done:done + 7]
        n, y, yp = many.advance(batch, max_steps=3)
        ys.append(y)
        yps.append(yp)
        done += n
    assert done == 51
    np.testing.assert_array_equal(np.concatenate(ys), y_one)
    np.testing.assert_array_equal(np.concatenate(yps), yp_one)
    assert many.statistics()["nsteps"] == one.statistics()["nsteps"]


def test_outputs_after_the_last_step_reached_t_end():
    """The step that fills a batch may reach t_end and finish the run; outputs of a
    later batch inside that last step still come from its polynomial."""
    solver = BDF(linear, ARGS_A, 0.0, np.array([2.0, 0.0]), None, 1.0, 1e-6, 1e-9)
    n, _, _ = solver.advance([1.0 - 1e-9])
    assert n == 1 and solver.status == "finished" and solver.t == 1.0
    n, y, yp = solver.advance([1.0 - 5e-10, 1.0])
    assert n == 2
    np.testing.assert_allclose(y, linear_exact([1.0 - 5e-10, 1.0])[0], rtol=1e-5)
    assert solver.advance([])[0] == 0


def test_exact_stop_at_t_end_and_h_max():
    r = solve_dae(linear, ARGS_A, (0.0, 1.2345), np.array([2.0, 0.0]), None, 1e-6, 1e-9,
                  h_max=0.01)
    assert r.success and r.t_last == 1.2345
    assert r.nsteps >= 123
    np.testing.assert_allclose(r.y[-1], linear_exact(1.2345)[0][0], rtol=1e-5)


def test_consistent_initial_values_index1():
    """YA_YDP_INIT: y' of the differential and y of the algebraic components."""
    solver = BDF(robertson, (ROB_K,), 0.0, np.array([1.0, 0.0, 0.7]), None, 1.0, 1e-6,
                 1e-10, algebraic=np.array([0, 0, 1]))
    np.testing.assert_allclose(solver.y0, [1.0, 0.0, 0.0], atol=1e-15)
    np.testing.assert_allclose(solver.yp0, [-0.04, 0.04, 0.0], atol=1e-12)


def test_invalid_input_names_the_argument():
    y0 = np.array([2.0, 0.0])
    cases = [
        (dict(rtol=-1.0), "rtol"), (dict(atol=0.0), "atol"),
        (dict(y0=[np.nan, 0]), "y0"),
        (dict(t_end=-1.0), "t_end"), (dict(max_order=6), "max_order"),
        (dict(algebraic=np.zeros(3)), "algebraic"), (dict(h_max=0.0), "h_max"),
        (dict(args=[1.0]), "args"),
        (dict(history=np.zeros((1, 2))), "history"), (dict(yp0=np.zeros(3)), "yp0"),
    ]
    for kw, name in cases:
        base = dict(residual=linear, args=ARGS_A, t0=0.0, y0=y0, yp0=None, t_end=1.0,
                    rtol=1e-6, atol=1e-9)
        base.update(kw)
        with pytest.raises(ValueError, match=name):
            BDF(**base)
    if os.environ.get("NUMBA_DISABLE_JIT") != "1":
        with pytest.raises(ValueError, match="residual"):
            BDF(lambda *a: None, ARGS_A, 0.0, y0, None, 1.0)
    solver = BDF(linear, ARGS_A, 0.0, y0, None, 1.0)
    with pytest.raises(ValueError, match="t_out"):
        solver.advance([0.5, 0.4])
    with pytest.raises(ValueError, match="t_out"):
        solver.advance([2.0])


# ---- the on-disk cache with function arguments ---------------------------------------

@pytest.mark.skipif(not config.CACHE or os.environ.get("NUMBA_DISABLE_JIT") == "1",
                    reason="numba cache off")
def test_second_process_loads_the_driver_from_cache(tmp_path):
    """A residual the driver has never seen, in a fresh process, with the argument
    types used above: the driver comes from the on-disk cache (no recompilation)."""
    solve_dae(linear, ARGS_A, (0.0, 1.0), np.array([2.0, 0.0]), None, 1e-6, 1e-9)
    (tmp_path / "fresh_residual.py").write_text(textwrap.dedent("""
        import numpy as np
        from flexmbs.runtime.config import jit
        from flexmbs.solvers import bdf_kernels as K
        from flexmbs.solvers.bdf import solve_dae

        @jit
        def decay(t, y, yp, args, out):
            for i in range(y.size):
                out[i] = yp[i] + args[0][0] * y[i]

        r = solve_dae(decay, (np.array([2.0]),), (0.0, 1.0), np.ones(3), None, 1e-8,
                      1e-10)
        assert r.success and abs(r.y[-1, 0] - np.exp(-2.0)) < 1e-6
        print(len(K.bdf_advance_held.stats.cache_hits),
              len(K.bdf_advance_held.stats.cache_misses))
    """))
    out = subprocess.run([sys.executable, "fresh_residual.py"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    hits, misses = map(int, out.stdout.split())
    assert (hits, misses) == (1, 0)
