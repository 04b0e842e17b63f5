"""Numba kernels of the generalized-alpha integrator for F(t, y, y') = 0 (the Python
face is flexmbs.solvers.galpha).

Method: the generalized-alpha method for first-order systems of Jansen, Whiting and
Hulbert ("A generalized-alpha method for integrating the filtered Navier-Stokes
equations with a stabilized finite element method", CMAME 190 (2000) 305), applied to
the mechanical residual in its first-order form y = [q, u, ...] as Kadapa, Dettmer and
Peric do for structural dynamics ("On the advantages of using the first-order
generalised-alpha scheme for structural dynamic problems", Computers & Structures
193 (2017) 226). With v the integrator's derivative variable,

    y_{n+1} = y_n + h v_n + h gamma (v_{n+1} - v_n)
    F(t_n + alpha_f h, y_n + alpha_f (y_{n+1} - y_n), v_n + alpha_m (v_{n+1} - v_n)) = 0

    alpha_m = (3 - rho) / (2 (1 + rho)),  alpha_f = 1 / (1 + rho),
    gamma = 1/2 + alpha_m - alpha_f,

second-order accurate for any rho = rho_inf in [0, 1], unconditionally stable, and
with spectral radius rho_inf as h omega -> infinity: an undamped mode that the step
does not resolve loses the factor rho_inf of its amplitude per step, one that it
resolves (h omega << 1) keeps it to O((h omega)^3). rho_inf = 1 is the implicit
midpoint rule, which keeps the energy of linear undamped systems at any step.

The unknown of a step is the state at the alpha point, y_a = y_n + alpha_f (y_{n+1} -
y_n); its derivative there, v_a = v_n (1 - alpha_m / gamma) + cj (y_a - y_n) with
cj = alpha_m / (alpha_f gamma h), is affine in it with slope cj. That is the form the
BDF driver's corrector solves (y' = y'_pred + cj (y - y_pred)), so the step reuses its
modified Newton iteration, iteration matrix dF/dy + cj dF/dy' (with the elimination of
the positions of a second-order residual, the mass hook's re-forming and the refresh
rule), all in flexmbs.solvers.bdf_kernels, and the same state tuple BdfState:

    s.y, s.yp           y_n, v_n at t_n = fs[F_T]
    s.phi[P_Y_PREV]     y_{n-1}, at t_n - fs[F_HUSED] (dense output, predictor)
    s.phi[P_YP_PREV]    v_{n-1}
    s.phi[P_Y_PREV2]    y_{n-2}, at t_n - fs[F_HUSED] - alpha[C_HPREV] (predictor,
                        error estimate)
    s.phi[P_V_STEP]     v_n taken to the step being tried (below)
    s.alpha[C_*]        alpha_m, alpha_f, gamma, the error constant, rho_inf, np,
                        the step before the last

v_n is, to first order, y' at t_n + (alpha_f - alpha_m) h: a step of another size
first moves it to that step's shift, v_n + (alpha_f - alpha_m) (h - h_used) y'' with
y'' from v_{n-1}, v_n over the time between the points they stand for (h_used + (alpha_f -
alpha_m) (h_used - h_before); over h_used alone a run whose steps double, as they do
through a parabola, gathers a defect of the order (alpha_f - alpha_m)^2 h^2 y''),
and the start shifts v_0 of the positions likewise, so that changing h does not
excite the method's spurious root
(v alternating by -rho_inf per step; on the oscillator at tol 1e-9, 7 731 rejected
steps without it, 32 with it). The predictor of y_{n+1} is the parabola through the
last three states (the states, not v: v of an unresolved stiff mode swings far more
than y does).

Error control (not with a fixed step): the local error of the positions q (the first
np unknowns, whose speeds u are the next np: q' = u, or q' = u + G^T mu in the
stabilised index-2 form of closed loops) is C(rho) h^3 q''' + O(h^4), with

    C(rho) = 1/12 + 2 (alpha_m - alpha_f)^2

(1/12 for rho = 1, the trapezoidal rule's constant), and q''' is taken from the
positions alone: the third divided difference of q over t_{n-2} .. t_{n+1}, that is
the gap between q_{n+1} and the parabola through the three positions before it. The
estimate is exact for a cubic q(t), and sees a mode the step does not resolve (its
positions alternate, damped by rho_inf) by its amplitude only, where an estimate
from the accelerations would see (h omega)^2 times it. A step is accepted when
the weighted RMS norm of est over the positions, weights 1 / (rtol |q_i| + atol_i),
is at most 1; the next step is h 0.9 err^(-0.7/3) (err_prev / err)^(0.4/3) (the PI
controller of Gustafsson), within [0.2 h, 0.9 h] after a rejected step. After an
accepted one h grows by a factor in [1.2, 2] or is kept, as CVODE keeps it for
factors below 1.5 (Hindmarsh et al. 2005): a step too long for its successor fails
that one's test and is retried shorter. Shrinking after accepted steps as well, the
noise of the third differences set h anew at most steps, down and up by turns (H2
with 10 elements at rtol 2e-5: h changed at 80 % of the steps, 24 % of the steps
rejected; kept: 17 % and 14 %, and 1 474 steps instead of 1 893), and every change
of h changes cj and needs the iteration matrix factored again (bdf_kernels._nls,
REFRESH_GALPHA).
Speeds, works and multipliers are not in the test: they follow the positions to the
method's order.

An input of the model that changes at t_n (a controller's output held over the next
step: flexmbs.Simulator) makes the forces jump with the state continuous. The step
loop goes on across it (galpha_carry_input): its step, its history and its iteration
matrix kept, v_n and the history moved by the jump of y' that one residual with the
new inputs gives, where a start again would lose the history (its first steps
predict from y_n alone) and, for a controller that changes its inputs every step,
take the ones after it on a cruder predictor each time.
"""

import numpy as np

from ..runtime.config import jit_entry
from ..runtime.tuple_ref import tuple_ref
from .bdf_kernels import (
    _ERR_TEST,
    _NLS_NONFINITE,
    _NLS_SINGULAR,
    _OK,
    EPS,
    F_CJ,
    F_CJLAST,
    F_CJOLD,
    F_ERR_K,
    F_ERR_KM1,
    F_H,
    F_H_FAIL,
    F_H_FIXED,
    F_H_MAX,
    F_H_MIN,
    F_HUSED,
    F_T,
    F_T_END,
    F_T_FAIL,
    H_MIN_UROUND,
    I_FORCE_SETUP,
    I_JAC_AGE,
    I_KUSED,
    I_REFRESH_RULE,
    I_REST_AGE,
    I_STATUS,
    MAX_CONV_FAILS,
    MAX_ERR_FAILS,
    REFRESH_GALPHA,
    S_NCONVFAIL,
    S_NREJECTED,
    S_NRES,
    S_NSTEPS,
    S_ORDER,
    ST_CONV_FAILS,
    ST_ERR_FAILS,
    ST_NONFINITE,
    ST_RUNNING,
    ST_SINGULAR,
    ST_STEP_TOO_SMALL,
    ST_SWITCHED,
    TSTOP_FUZZ,
    _all_finite,
    _nls,
    _set_weights,
    _solve_newton,
    next_step_size,
    switch_crossed,
)

__all__ = ["galpha_coefficients", "galpha_start", "galpha_advance", "galpha_advance_held",
           "galpha_interpolate", "galpha_carry_input", "galpha_carry_input_held", "CARRIED",
           "CARRY_RESTART", "CARRY_SWITCHED", "C_ALPHA_M", "C_ALPHA_F", "C_GAMMA", "C_ERROR",
           "C_RHO"]

# ---- where the method's numbers live in BdfState ---------------------------------
C_ALPHA_M = 0      # s.alpha[...]
C_ALPHA_F = 1
C_GAMMA = 2
C_ERROR = 3        # C(rho) of the position error estimate
C_RHO = 4
C_NPOS = 5         # np: the positions are y[:np], their speeds y[np:2 np] (a count)
C_HPREV = 6        # the step before the last one (0: none yet)
P_Y_PREV = 0       # s.phi[...]: the state before the last step, for dense output
P_YP_PREV = 1
P_Y_PREV2 = 2      # the state before that, for the predictor
P_V_STEP = 3       # v_n taken to the step being tried (_galpha_step)

# ---- galpha_carry_input's answers ------------------------------------------------
CARRIED = 0         # the step loop goes on across the jump
CARRY_RESTART = 1   # no step since the start, no current matrix, or F not finite
CARRY_SWITCHED = 2  # a switch function is on another side with the new inputs

# ---- step-size control -------------------------------------------------------------
SAFETY = 0.9
H_GROW_MAX = 2.0       # largest step ratio after an accepted step
H_GROW_MIN = 1.2       # smaller proposed ratios after an accepted step keep h
H_SHRINK_REJECTED = 0.2  # smallest ratio after a failed error test
H_REDUCE_CONV = 0.25   # after a Newton failure
ERR_FLOOR = 1e-4       # err below this counts as this (bounds the growth)
K_I = 0.7 / 3.0        # PI step controller (Gustafsson): h_new = h SAFETY
K_P = 0.4 / 3.0        # err_n^(-K_I) (err_{n-1} / err_n)^K_P


def galpha_coefficients(rho):
    """(alpha_m, alpha_f, gamma, C) of the first-order generalized-alpha method with
    spectral radius rho at infinity (C: the position error constant)."""
    am = (3.0 - rho) / (2.0 * (1.0 + rho))
    af = 1.0 / (1.0 + rho)
    gamma = 0.5 + am - af
    return am, af, gamma, 1.0 / 12.0 + 2.0 * (am - af) ** 2


@jit_entry
def galpha_start(s, t0, h0, rho, npos):
    """Prepare the first step from t0 with y0 = s.y, v0 = s.yp (consistent: F(t0,
    y0, v0) = 0 on the differential rows). h0 > 0: the first step (or the fixed
    step when fs[F_H_FIXED] > 0); npos: the number of positions (error test, dense
    output)."""
    fs, iv = s.fs, s.iv
    am = (3.0 - rho) / (2.0 * (1.0 + rho))
    af = 1.0 / (1.0 + rho)
    s.alpha[C_ALPHA_M] = am
    s.alpha[C_ALPHA_F] = af
    s.alpha[C_GAMMA] = 0.5 + am - af
    s.alpha[C_ERROR] = 1.0 / 12.0 + 2.0 * (am - af) ** 2
    s.alpha[C_RHO] = rho
    s.alpha[C_NPOS] = npos
    fs[F_T] = t0
    _set_weights(s.y, s.rtol, s.atol, s.ewt)
    hh = min(h0, fs[F_H_MAX])
    if t0 + hh > fs[F_T_END]:
        hh = fs[F_T_END] - t0
    fs[F_H] = hh
    fs[F_HUSED] = 0.0
    cj = am / (af * s.alpha[C_GAMMA] * hh)
    fs[F_CJ] = cj
    fs[F_CJLAST] = cj
    iv[I_FORCE_SETUP] = 1
    iv[I_REFRESH_RULE] = REFRESH_GALPHA
    iv[I_JAC_AGE] = 0
    iv[I_KUSED] = 2
    iv[I_STATUS] = ST_RUNNING
    n = s.y.size
    for i in range(n):
        s.phi[P_Y_PREV, i] = s.y[i]
        s.phi[P_YP_PREV, i] = s.yp[i]


@jit_entry
def _set_galpha_weights(s, h):
    """The Newton iteration's weights at y_n for a fixed step h: 1 / (rtol |y_i| +
    atol_i), except that a speed's weight is h times its position's: the iteration
    stops when its updates move the positions, directly or through the speeds over
    the step, by less than the tolerance. Weighed on their own, the speeds of the
    stiff modes a step does not resolve (small, fast, unpredictable) hold it to
    their own tolerance for nothing the positions show (H2, h = 1 ms: 2.9 residuals
    a step instead of 3.8, and Newton converges at 2 ms where it failed). Not with
    the error control: the estimate differences the positions of four steps, and
    the looser iterates' noise in them cut its steps (H2, rtol 1e-4: 19 000 steps
    instead of 3 100)."""
    y, ewt, rtol, atol = s.y, s.ewt, s.rtol, s.atol
    npos = int(s.alpha[C_NPOS])
    for i in range(y.size):
        if npos <= i < 2 * npos:
            j = i - npos
            ewt[i] = h / (rtol[j] * abs(y[j]) + atol[j])
        else:
            ewt[i] = 1.0 / (rtol[i] * abs(y[i]) + atol[i])


@jit_entry
def _position_error(s, h):
    """Weighted RMS norm of the positions' local error estimate C h^3 q''' (module
    text), q''' from the positions alone: 6 (q_{n+1} - P(t_{n+1})) / (h (h + h1)
    (h + h1 + h2)), P the parabola through q at t_{n-2}, t_{n-1}, t_n (h1, h2 the two
    steps before). On the first two steps, C h^2 (v_u,{n+1} - v_u,n) instead.
    q_{n+1} and v_{n+1} are in s.ypred, s.yppred."""
    ns = int(s.alpha[C_NPOS])
    c = s.alpha[C_ERROR]
    h1 = s.fs[F_HUSED]
    h2 = s.alpha[C_HPREV]
    y, ynew, ewt = s.y, s.ypred, s.ewt
    acc = 0.0
    if h1 > 0.0 and h2 > 0.0:
        y1 = s.phi[P_Y_PREV]
        y2 = s.phi[P_Y_PREV2]
        b = h * (h + h1) / (h1 + h2)
        f = c * 6.0 * h * h / ((h + h1) * (h + h1 + h2))
        for i in range(ns):
            d1 = y[i] - y1[i]
            p = y[i] + h * d1 / h1 + b * (d1 / h1 - (y1[i] - y2[i]) / h2)
            e = f * (ynew[i] - p) * ewt[i]
            acc += e * e
    else:
        f = c * h * h
        for i in range(ns):
            e = f * (s.yppred[ns + i] - s.yp[ns + i]) * ewt[i]
            acc += e * e
    return np.sqrt(acc / ns)


@jit_entry
def _galpha_step(residual, jacobian, mass, args, s):
    """One accepted step of size <= h from t_n, retried with smaller steps after a
    failed Newton iteration or error test. Returns 0 or a status < 0."""
    fs, iv, st = s.fs, s.iv, s.stats
    am = s.alpha[C_ALPHA_M]
    af = s.alpha[C_ALPHA_F]
    gamma = s.alpha[C_GAMMA]
    y, yp, yy, yyp, ypred, yppred = s.y, s.yp, s.yy, s.yyp, s.ypred, s.yppred
    n = y.size
    tn = fs[F_T]
    t_end = fs[F_T_END]
    fixed = fs[F_H_FIXED] > 0.0
    control = not fixed and s.alpha[C_NPOS] > 0.0
    hmin = max(fs[F_H_MIN], H_MIN_UROUND * EPS * abs(tn))
    nef = 0
    ncf = 0
    err = 0.0
    while True:
        hh = fs[F_H]
        t_new = tn + hh
        if t_new >= t_end - TSTOP_FUZZ * EPS * abs(t_end):
            t_new = t_end
        cj = am / (af * gamma * hh)
        if fixed:
            _set_galpha_weights(s, hh)
        else:
            _set_weights(s.y, s.rtol, s.atol, s.ewt)
        fs[F_CJLAST] = fs[F_CJ]
        fs[F_CJ] = cj
        c0 = 1.0 - am / gamma
        # predictor: y_{n+1} from the parabola through y_{n-2}, y_{n-1}, y_n (the
        # state itself: v of an unresolved stiff mode swings far more than y does;
        # a line through two points until there are three), taken to the alpha
        # point with its derivative there: y_a = y_n + c1 (y_n - y_{n-1}) + c2
        # ((y_n - y_{n-1}) / h1 - (y_{n-1} - y_{n-2}) / h2) at t_n + alpha_f h
        h1 = fs[F_HUSED]
        h2 = s.alpha[C_HPREV]
        ta = af * hh
        c1 = ta / h1 if h1 > 0.0 else 0.0
        c2 = ta * (ta + h1) / (h1 + h2) if (h1 > 0.0 and h2 > 0.0) else 0.0
        yprev = s.phi[P_Y_PREV]
        yprev2 = s.phi[P_Y_PREV2]
        # v_n is y' at t_n + (af - am) h1 (to first order): taken to the shift of this
        # step's h, so that a change of step does not excite the method's spurious
        # root (v alternating by -rho_inf per step); v_{n-1} stands for t_{n-1} + (af -
        # am) h2, a time h1 + (af - am) (h1 - h2) before v_n (h2 = h1 on the second
        # step: the start shifts v_0 by its first step, GeneralizedAlpha._begin)
        vn = s.phi[P_V_STEP]
        vprev = s.phi[P_YP_PREV]
        shift = 0.0
        if h1 > 0.0:
            gap = h1 + (af - am) * (h1 - (h2 if h2 > 0.0 else h1))
            shift = (af - am) * (hh - h1) / gap
        for i in range(n):
            vn[i] = yp[i] + shift * (yp[i] - vprev[i])
            d1 = y[i] - yprev[i]
            ypred[i] = y[i] + c1 * d1
            if c2 != 0.0:
                ypred[i] += c2 * (d1 / h1 - (yprev[i] - yprev2[i]) / h2)
            yppred[i] = c0 * vn[i] + cj * (ypred[i] - y[i])
        flag = _nls(residual, jacobian, mass, args, s, tn + af * hh)
        if flag == _OK:
            for i in range(n):
                ypred[i] = y[i] + (yy[i] - y[i]) / af       # y_{n+1}
                yppred[i] = vn[i] + (yyp[i] - vn[i]) / am   # v_{n+1}
            if control:
                err = _position_error(s, hh)
                if not err <= 1.0:
                    flag = _ERR_TEST
        if flag == _OK:
            break
        fs[F_T_FAIL] = t_new
        fs[F_H_FAIL] = hh
        if flag == _ERR_TEST:
            nef += 1
            st[S_NREJECTED] += 1
            if nef >= MAX_ERR_FAILS:
                return ST_ERR_FAILS
            rr = SAFETY * err ** (-1.0 / 3.0) if np.isfinite(err) else H_SHRINK_REJECTED
            rr = max(H_SHRINK_REJECTED, min(SAFETY, rr))
            if nef >= 3:
                rr = H_SHRINK_REJECTED
        else:
            ncf += 1
            st[S_NCONVFAIL] += 1
            iv[I_FORCE_SETUP] = 1
            rr = H_REDUCE_CONV
            if fixed or ncf >= MAX_CONV_FAILS:
                if flag == _NLS_SINGULAR:
                    return ST_SINGULAR
                if flag == _NLS_NONFINITE:
                    return ST_NONFINITE
                return ST_CONV_FAILS
        fs[F_H] = hh * rr
        if fs[F_H] < hmin:
            if flag == _NLS_NONFINITE:
                return ST_NONFINITE
            if flag == _NLS_SINGULAR:
                return ST_SINGULAR
            return ST_STEP_TOO_SMALL
    for i in range(n):
        s.phi[P_Y_PREV2, i] = s.phi[P_Y_PREV, i]
        s.phi[P_Y_PREV, i] = y[i]
        s.phi[P_YP_PREV, i] = yp[i]
        y[i] = ypred[i]
        yp[i] = yppred[i]
    fs[F_T] = t_new
    s.alpha[C_HPREV] = fs[F_HUSED]
    fs[F_HUSED] = t_new - tn
    fs[F_ERR_K] = err
    st[S_NSTEPS] += 1
    st[S_ORDER + 1] += 1
    iv[I_JAC_AGE] += 1
    iv[I_REST_AGE] += 1
    if control:
        e = max(err, ERR_FLOOR)
        rr = SAFETY * e ** (-K_I)
        if fs[F_ERR_KM1] > 0.0:
            rr *= (fs[F_ERR_KM1] / e) ** K_P
        fs[F_ERR_KM1] = e
        if rr >= H_GROW_MIN:
            fs[F_H] = hh * min(rr, H_GROW_MAX)
        if fs[F_H] > fs[F_H_MAX]:
            fs[F_H] = fs[F_H_MAX]
    return 0


@jit_entry
def galpha_interpolate(s, t, y_out, yp_out):
    """y(t), y'(t) on the last step [t_n - h_used, t_n] by cubic Hermite
    interpolation between its two end states. The slopes are v for every unknown
    but the positions, whose slopes are their speeds (u, second-order accurate where
    v is shifted by O(h) for rho < 1)."""
    fs = s.fs
    y, yp = s.y, s.yp
    n = y.size
    hh = fs[F_HUSED]
    if hh <= 0.0:
        for i in range(n):
            y_out[i] = y[i]
            yp_out[i] = yp[i]
        return
    ns = int(s.alpha[C_NPOS])
    y0 = s.phi[P_Y_PREV]
    v0 = s.phi[P_YP_PREV]
    th = (t - (fs[F_T] - hh)) / hh
    t2 = th * th
    t3 = t2 * th
    h00 = 2.0 * t3 - 3.0 * t2 + 1.0
    h10 = t3 - 2.0 * t2 + th
    h01 = 3.0 * t2 - 2.0 * t3
    h11 = t3 - t2
    d00 = (6.0 * t2 - 6.0 * th) / hh
    d10 = 3.0 * t2 - 4.0 * th + 1.0
    d11 = 3.0 * t2 - 2.0 * th
    for i in range(n):
        if i < ns:
            s0 = y0[ns + i]
            s1 = y[ns + i]
        else:
            s0 = v0[i]
            s1 = yp[i]
        y_out[i] = h00 * y0[i] + h01 * y[i] + hh * (h10 * s0 + h11 * s1)
        yp_out[i] = d00 * (y0[i] - y[i]) + d10 * s0 + d11 * s1


@jit_entry
def galpha_advance(residual, jacobian, mass, switches, args, s, t_out, y_out, yp_out,
                   max_steps):
    """Step until the outputs t_out (increasing, >= t_n - h_used, <= t_end) are all
    filled (an empty t_out: until t_end), t_end is reached, max_steps steps were
    taken, or a step fails; the contract of bdf_kernels.bdf_advance, with the
    generalized-alpha step and its Hermite dense output. Returns the number of
    outputs filled; s.iv[I_STATUS] says RUNNING, FINISHED or the failure."""
    ref = tuple_ref(args)
    sref = tuple_ref(s)
    nout = t_out.size
    i_out = 0
    nstep = 0
    while True:
        tn = s.fs[F_T]
        while i_out < nout and t_out[i_out] <= tn:
            galpha_interpolate(s, t_out[i_out], y_out[i_out], yp_out[i_out])
            i_out += 1
        if not next_step_size(sref, tn, i_out == nout and nout > 0, nstep >= max_steps):
            return i_out
        flag = _galpha_step(residual, jacobian, mass, ref, sref)
        nstep += 1
        if flag < 0:
            s.iv[I_STATUS] = flag
            return i_out
        if switch_crossed(switches, ref, sref):
            s.iv[I_STATUS] = ST_SWITCHED
            return i_out


@jit_entry
def galpha_advance_held(functions, args, s, t_out, y_out, yp_out, max_steps):
    """galpha_advance with its four functions in one tuple and the state held by
    reference (bdf_kernels.bdf_advance_held)."""
    return galpha_advance(functions[0], functions[1], functions[2], functions[3], args,
                          s, t_out, y_out, yp_out, max_steps)



@jit_entry
def galpha_carry_input(residual, switches, args, s):
    """Go on across a jump of the forces at t_n, where the last step ended, with the
    state continuous (an input of the model that changed there), as the step loop goes
    on from its own steps: the step, the iteration matrix and the history kept, v_n
    and the history moved by the jump.

    The solution after the jump, continued back over the last steps, is the one
    before it plus d(t), d(t_n) = 0, d' the jump of y' and, for the positions, d'' =
    the jump of their speeds' d' (q' = u is continuous). d' solves dF/dy' d' = -dF,
    dF the jump of the residual: F with the new inputs at the last step's alpha point
    (where F with the old ones is zero to the iteration's tolerance), and dF/dy' from
    the iteration matrix G = dF/dy + cj dF/dy' as d' = -cj G^-1 dF, exact where the
    step resolves the motion (cj dF/dy' outweighs dF/dy) and damped where it does
    not (a stiff mode's share of the jump left to the iteration, as the method
    leaves its motion). Then v_n += d'(t_n), v_{n-1} += d'(t_{n-1}), y_{n-j} +=
    d(t_{n-j}): the predictor's parabola through the states and the error estimate's
    third difference of the positions (module text) are those of the solution after
    the jump, exactly where d is quadratic. Without the move of v_n the step would
    blend the old acceleration into the new one over the step, an error of order h
    times the jump at every change (first order for a controller that changes its
    inputs every step).

    One residual and one solve with the factors in place; the switch functions at
    (t_n, y_n) with the new inputs become the reference of the next step's sign
    test. Returns CARRIED; CARRY_SWITCHED (one is on another side: the discrete state
    changes, the owner starts again) or CARRY_RESTART (no step since the start, no
    factored matrix, F not finite), with nothing changed but the counters."""
    fs, iv = s.fs, s.iv
    h1 = fs[F_HUSED]
    if not h1 > 0.0 or iv[I_FORCE_SETUP] != 0:
        return CARRY_RESTART
    y, yp, d, phi = s.y, s.yp, s.delta, s.phi
    tn = fs[F_T]
    nsw = s.gsw.size
    if nsw:
        switches(tn, y, args, s.gnew)
        for i in range(nsw):
            if (s.gsw[i] > 0.0) != (s.gnew[i] > 0.0):
                return CARRY_SWITCHED
    residual(tn - (1.0 - s.alpha[C_ALPHA_F]) * h1, s.yy, s.yyp, args, d)
    s.stats[S_NRES] += 1
    if not _all_finite(d):
        return CARRY_RESTART
    for i in range(nsw):
        s.gsw[i] = s.gnew[i]
    cj = fs[F_CJOLD]  # the cj of the factors
    _solve_newton(s, cj, d)
    npos = int(s.alpha[C_NPOS])
    c1 = h1
    h2 = s.alpha[C_HPREV]
    c2 = h1 + h2
    for i in range(y.size):
        # d(t) = a (t - t_n) + b (t - t_n)^2 / 2
        if i < npos:
            a = 0.0
            b = -cj * d[npos + i]
        else:
            a = -cj * d[i]
            b = 0.0
        yp[i] += a
        phi[P_Y_PREV, i] += c1 * (0.5 * c1 * b - a)
        phi[P_YP_PREV, i] += a - c1 * b
        if h2 > 0.0:
            phi[P_Y_PREV2, i] += c2 * (0.5 * c2 * b - a)
    return CARRIED


@jit_entry
def galpha_carry_input_held(functions, args, s):
    """galpha_carry_input with the step loop's functions in one tuple and the state
    held by reference (galpha_advance_held)."""
    return galpha_carry_input(functions[0], functions[3], tuple_ref(args), tuple_ref(s))
