"""Numba kernels of the variable-order (1..5), variable-step BDF integrator for
F(t, y, y') = 0 (the Python face is flexmbs.solvers.bdf).

Method: the fixed-leading-coefficient BDF in the modified-divided-difference form of
DASSL and IDA (Brenan, Campbell & Petzold 1989, "Numerical Solution of Initial-Value
Problems in Differential-Algebraic Equations", ch. 5.2-5.3 (DASSL); Hindmarsh et al.,
"SUNDIALS: suite of nonlinear and differential/algebraic equation solvers", ACM TOMS
31 (2005) 363; IDA User Guide, ch. 2 "Mathematical considerations"). The step follows
IDA's `IDAStep` (`IDASetCoeffs`, `IDAPredict`, `IDANls`, `IDATestError`,
`IDAHandleNFlag`, `IDACompleteStep`, `IDAGetSolution`); the finite-difference Jacobian
follows DASSL's `DDAJAC`. Symbols (code name = book / IDA name):

    phi[j]      modified divided differences phi*_j(n), j = 0..k+1   (size NPHI x n)
    psi[j]      t_{n+1} - t_{n-j}                                    psi_j
    alpha, beta, sigma, gamma                                        IDA's coefficients
    cj          leading coefficient  -alpha_s / h,  alpha_s = -sum_{j=1..k} 1/j
    ee          corrector correction y_{n+1} - y_{n+1}^(0)            (size n)
    G           iteration matrix dF/dy + cj dF/dy', LU-factored in place (size n x n)

Everything the step loop needs lives in one `BdfState` namedtuple of arrays, so that
the loop can stop after a batch of outputs or a step budget and resume. bdf_advance
hands it to the step and its helpers by reference (flexmbs.runtime.tuple_ref), as it hands
args to the residual: passed by value, numba copies every array's fields per call.
Scalars are kept in `fs` (float64), `iv` (int64) and `stats` (int64) at the indices
F_*, I_*, S_*.

The residual and the Jacobian reach the kernels as first-class functions
(numba `FunctionType`), not as dispatchers: a dispatcher argument makes numba key its
on-disk cache on the dispatcher's memory address, which changes every process, so the
driver would be recompiled on every start (see flexmbs.solvers.bdf).
"""

from collections import namedtuple

import numpy as np

from ..numerics.bordered_band import (
    band_index,
    bordered_band_factor,
    bordered_band_solve,
    factor_size,
    packed_size,
)
from ..numerics.linalg import lu_factor, lu_solve
from ..runtime.config import jit, jit_entry
from ..runtime.tuple_ref import tuple_ref

__all__ = ["BdfState", "new_state", "bdf_start", "bdf_carry_jump", "bdf_advance_held",
           "bdf_initial_conditions", "bdf_advance", "bdf_interpolate", "lu_factor",
           "lu_solve", "no_jacobian", "no_switches", "switch_crossed", "MAXORD", "NPHI"]

MAXORD = 5                 # highest BDF order
INDEX2_MIN_ORDER = 3
"""Lowest order of a stabilised index-2 system (iv[I_INDEX2]) once the start-up is
over: neither the order control nor the retries after error-test failures go below
it (below it only if the start-up never reached it). In the GGL form
q' = u + Phi_q^T mu the multiplier mu is the defect of the BDF formula along the
constraint normals, O(h^k) at order k: at order 1 about h gamma / 2 (gamma the
constraints' bias acceleration), constant while h is, so that Phi_q^T mu moves
coordinates that u does not, every step. Where those are the elastic coordinates of a
beam end held by the constraint (the slider-crank's rod), the stiff beam answers with
forces far above the tolerance on the elastic rates; the error test shrinks h, which
keeps the order at 1 (an accepted step, a rejected doubled one), and the run crawls
(SC: 61 720 steps at order 1 for 4.6 ms). From order 3 mu is O(h^3) and SC runs its
2 s (docs/guides/closed-loops.md). BDF3 is not A-stable, but stable on the negative real axis
and within 86 degrees of it, where damped elastic modes lie. It is a preference, not a
wall: from the INDEX2_FLOOR_FAILS-th failed error test of one step on, the retries go
lower as IDA's do (a rolling disk at atol 1e-10 needs order 2 for a while)."""
INDEX2_FLOOR_FAILS = 5
NPHI = MAXORD + 2          # rows of phi and length of the coefficient arrays
EPS = np.finfo(np.float64).eps
SQRT_EPS = np.sqrt(EPS)

# ---- tuning constants (IDA defaults unless said otherwise) -------------------------
MAX_NEWTON_ITER = 4        # corrector iterations per attempt (IDA maxcor)
MAX_CONV_FAILS = 10        # Newton failures in one step before giving up (IDA maxncf)
MAX_ERR_FAILS = 10         # error-test failures in one step before giving up (maxnef)
RATE_MAX = 0.9             # Newton rate above which the iteration is declared failing
RATE_NOISE = 1e-6          # a first update (less the quadratures) below this times epcon
                           # is converged: the ratio of the next to it is rounding's (an
                           # exact predictor: a history carried across a held jump)
MASK_QUADRATURE = 2.0      # s.mask of a quadrature (BdfState)
SS_FRESH = 20.0            # initial rate factor s = rate / (1 - rate) (IDA: 20)
SS_CJ_CHANGED = 100.0      # s after cj changed since the last step (IDA: 100)
SS_MIN = 0.1               # floor of s in the test s |delta| <= epcon; IDA has none
                           # and, after a near-exact iteration (s ~ 1e-9), accepts
                           # single large updates on later steps (pendulum, index 2)
NEWTON_TINY = 100.0        # first update <= NEWTON_TINY * eps * |y|: converged (DASSL)
XRATE = 0.25               # refactor when cj/cj_at_factor is outside
CJ_RATIO_MIN = (1.0 - XRATE) / (1.0 + XRATE)    # [0.6, 1.667] (IDA, DASSL)
CJ_RATIO_MAX = 1.0 / CJ_RATIO_MIN
JAC_MAX_AGE = 20           # refactor after this many steps on one matrix (CVODE msbp)
REST_MAX_AGE = 1000        # with a mass hook: differences again after this many steps
REST_MAX_AGE_FIRST_ORDER = JAC_MAX_AGE  # ... without eliminated positions: R = dF/dy
                           # holds a closed loop's constraint Jacobian, which, stale, lets
                           # Newton settle on inexact multipliers near a singular position
                           # (Bricard's linkage, rtol 1e-10: fails at 1000; 3 881 steps
                           # at 20, 4 836 at 50, 7 364 at 300, 3 266 without re-forming);
                           # at 20, dF/dy is never older than G was before re-forming
REFORM_MIN_ITER = 3        # with a mass hook: a step that took this many updates to
                           # converge has the next step re-form G at its first iterate
REFORM_MIN_RATE = 0.2      # ... under REFRESH_GALPHA, only if they contracted slower
                           # than this (their number says how far the predictor was)
H_REDUCE_CONV = 0.25       # step factor after a Newton failure (IDA, DASSL)
H_REDUCE_MIN = 0.25        # first error-test failure: factor in [0.25, 0.9]
H_REDUCE_MAX = 0.9
H_DECREASE_MIN = 0.5       # accepted step, error too large for h: factor in [0.5, 0.9]
H_INCREASE = 2.0           # accepted step: h doubles when the estimate allows 2 h
ERR_BIAS = 2.0             # r = (ERR_BIAS * err + ERR_FLOOR) ** (-1 / (k + 1))
ERR_FLOOR = 1e-4
H0_FRACTION = 1e-3         # first step: 1e-3 (t_end - t0), and h |y'|_w <= 1/2 (IDA)
H0_YP_LIMIT = 0.5
H_MIN_UROUND = 4.0         # step floor: 4 eps |t| (DASSL: 4 eps max(|t|, |t_out|))
TSTOP_FUZZ = 100.0         # a step within 100 eps of t_end is stretched to end there
ALIGN_FUZZ = 1e-9          # r / h within this above an integer n: n equal steps (_aligned_step)
FD_MIN_SCALE = 1e-3        # a value that is small, not negligible, in any component:
                           # SQRT_EPS * FD_MIN_SCALE floors difference increments
IC_MAX_ITER = 10           # Newton iterations for consistent initial values
IC_TOL = 1e-3              # their convergence: weighted correction norm <= IC_TOL
IC_MAX_BACKTRACK = 10      # halvings of an initial-value update with a non-finite F
IC_FD_TRIES = 3            # difference increments tried per initial-value column,
IC_FD_GROW = 1e4           # each IC_FD_GROW times the last, until the change of F
IC_FD_NOISE = 1e3          # exceeds IC_FD_NOISE eps max|F|

# ---- status codes (messages in flexmbs.solvers.bdf) ---------------------------------
ST_FINISHED = 0
ST_RUNNING = 1
ST_SWITCHED = 2    # stopped after the step on which a switch function changed sign
ST_ERR_FAILS = -1
ST_CONV_FAILS = -2
ST_SINGULAR = -3
ST_STEP_TOO_SMALL = -4
ST_NONFINITE = -5
ST_IC_FAILED = -6
ST_IC_SINGULAR = -7

# ---- internal flags of the Newton solve and the error test --------------------------
_OK = 0
_NLS_CONV = 1
_NLS_NONFINITE = 2
_NLS_SINGULAR = 3
_ERR_TEST = 4

# ---- float scalars fs[...] ----------------------------------------------------------
F_T = 0            # t_n, time of the last accepted step
F_H = 1            # h, step to try next
F_HUSED = 2        # last accepted step
F_CJ = 3           # leading coefficient of the current step
F_CJOLD = 4        # cj when G was last factored
F_CJLAST = 5       # cj of the previous step
F_CJRATIO = 6      # cj / cj_old
F_SS = 7           # Newton rate factor rate / (1 - rate)
F_OLDNRM = 8       # norm of the first Newton update, less its quadratures
F_RR = 9           # last step ratio
F_T_END = 10       # t_stop, never stepped past
F_H_MAX = 11
F_H_MIN = 12       # user floor; the working floor adds H_MIN_UROUND eps max|t|
F_EPCON = 13       # Newton tolerance on the weighted update (IDA epcon = 0.33)
F_H_FIXED = 14     # > 0: fixed step, no error control
F_NDIFF = 15       # number of components in the error test (s.etest)
F_ERR_K = 16
F_ERR_KM1 = 17
F_T_FAIL = 18      # time of the failed step attempt
F_H_FAIL = 19      # its step size
NF = 20

# ---- int scalars iv[...] ------------------------------------------------------------
I_K = 0            # order of the current step
I_KUSED = 1        # order of the last accepted step
I_KNEW = 2         # order suggested by the error test
I_NS = 3           # steps taken at constant h and k (+1)
I_PHASE = 4        # 0: start-up (raise k, double h), 1: normal
I_MAXORD = 5
I_STATUS = 6
I_FORCE_SETUP = 7  # 1: the next Newton solve refactors G
I_JAC_AGE = 8      # steps since G was factored
I_USE_JAC = 9      # JAC_FD, JAC_HOOK or JAC_HOOK_COLUMNS
I_HISTORY = 10     # 1: started from a given history at full order
I_NSECOND = 11     # ns > 0: F_i = y'_i - y_{ns+i} for i < ns (second-order structure)
I_INDEX2 = 12      # 1: the algebraic components are index-2 multipliers (see _wrms_newton)
I_USE_MASS = 13    # 1: a mass hook re-forms Gr = R + cj A(y) between difference Jacobians;
                   # 2: it also gives the elastic blocks K, D (Gr = R + cj A + K / cj)
I_REST_AGE = 14    # steps since the difference Jacobian behind R
I_REFORM_DUE = 15  # 1: the last step's iteration was slow; re-form G from the mass hook
I_REFRESH_RULE = 16  # REFRESH_IDA or REFRESH_GALPHA (_nls)
I_ALIGN = 17       # 1: the steps are spread to end on t_end in equal steps (_aligned_step)
NI = 18

# ---- when a kept G is refreshed (iv[I_REFRESH_RULE]) -------------------------------
REFRESH_IDA = 0     # IDA's: kept while cj / cj_old is in [0.6, 1.667], updates scaled
REFRESH_GALPHA = 1  # any change of cj refactors the kept matrix at the new cj

# ---- where G comes from (iv[I_USE_JAC]) ------------------------------------------
JAC_FD = 0            # finite differences, every column
JAC_HOOK = 1          # the jacobian hook, every column
JAC_HOOK_COLUMNS = 2  # the hook for the columns flagged in s.jcol, differences for the rest

# ---- counters stats[...] ------------------------------------------------------------
S_NSTEPS = 0
S_NREJECTED = 1    # error-test failures
S_NRES = 2         # residual evaluations, finite-difference ones included
S_NJAC = 3
S_NLU = 4
S_NNEWTON = 5      # Newton iterations
S_NCONVFAIL = 6    # Newton failures (step retried)
S_ORDER = 7        # S_ORDER + k - 1: accepted steps at order k (k = 1..5)
S_NMASS = S_ORDER + MAXORD  # iteration matrices re-formed from the mass hook
NS = S_NMASS + 1

BdfState = namedtuple("BdfState", [
    "phi", "psi", "alpha", "beta", "sigma", "gamma",
    "y", "yp", "yy", "yyp", "ypred", "yppred", "ee", "delta", "res", "tmp",
    "ewt", "rtol", "atol", "mask", "etest", "jcol", "G", "G2", "piv", "Gr", "pivr", "dz",
    "Ar", "Rr", "bpos", "bdims", "Gb", "Rb", "Ab", "Fb", "pivb", "wb", "gsw", "gnew",
    "fs", "iv", "stats"])
BdfState.__doc__ = """Resumable state of the integrator (all arrays; n unknowns).

phi (NPHI, n) divided differences; psi, alpha, beta, sigma, gamma (NPHI,) method
coefficients; y, yp (n,) solution at t_n; yy, yyp, ypred, yppred, ee, delta, res, tmp
(n,) work vectors; ewt (n,) error weights 1 / (rtol |y| + atol); rtol, atol (n,);
mask (n,) 1.0 for differential components, 0.0 for algebraic ones, MASK_QUADRATURE
for the quadratures (differential components no other row depends on, such as a
mechanical system's works: left out of the Newton rate, _wrms_newton); etest (n,) 1.0 for
the components in the local error test (differential ones, less those the owner
leaves out: the speeds of a mechanical system, flexmbs.solvers.bdf.BDF), else 0.0;
jcol (n,) 1.0 for the columns of G the hook supplies (JAC_HOOK_COLUMNS), 2.0 for the
speed columns of elastic coordinates (from the mass hook's K and D blocks); Gr (m, m),
pivr (m,), dz (m,): the reduced iteration matrix (LU), its pivots and a work vector
of the second-order form, m = n - ns (see _setup_second_order); G, G2 (n, n)
iteration matrix (LU) and scratch; piv (n,) int64 pivots; Ar, Rr (m, m) with a mass
hook, else (0, 0): its matrix A and the rest R = Gr - cj A of the last difference
Jacobian (_reform_with_mass); with the elastic blocks Ar is (3 m, m): A, then K and
D, and R = Gr - cj A - K / cj; gsw, gnew (nsw,) the switch functions at t_n and
after the step being checked (switch_crossed); fs (NF,) float scalars, iv (NI,) int
scalars, stats (NS,) counters.

With a bordered band layout of the reduced unknowns (flexmbs.numerics.bordered_band: bpos
(m,) their places, bdims = [ni, nb, kd]) the reduced iteration matrix is held and
factored in that storage instead: Gb, Rb (L,) packed (L = packed_size), Ab (3, L)
the mass hook's A, K, D packed, Fb its factors, pivb (ni + nb,) their pivots, wb (m,)
scratch; G, G2, Gr, Ar, Rr are then empty. Without one, bpos, Gb ... wb are empty."""


def new_state(n, nsecond=0, mass=False, elastic=False, layout=None, nswitch=0):
    """A zeroed BdfState for n unknowns, the first `nsecond` of them positions whose
    speeds follow them, with room for a mass hook's matrices if `mass` (and its
    elastic blocks if `elastic`), in the bordered band layout (pos, dims) of the
    other n - nsecond unknowns if `layout` is given, and for `nswitch` switch
    functions (numpy allocation, outside numba)."""
    nr = n - nsecond
    na = nr if mass else 0
    v = lambda: np.zeros(n)  # noqa: E731
    c = lambda: np.zeros(NPHI)  # noqa: E731
    i64 = np.int64
    if layout is None:
        nd, nb = n, nr
        bpos, bdims = np.zeros(0, dtype=i64), np.zeros(3, dtype=i64)
        size = fsize = nw = 0
    else:
        nd = nb = na = 0
        bpos = np.ascontiguousarray(layout[0], dtype=i64)
        bdims = np.ascontiguousarray(layout[1], dtype=i64)
        size, fsize, nw = packed_size(bdims), factor_size(bdims), nr
    return BdfState(
        phi=np.zeros((NPHI, n)), psi=c(), alpha=c(), beta=c(), sigma=c(), gamma=c(),
        y=v(), yp=v(), yy=v(), yyp=v(), ypred=v(), yppred=v(), ee=v(), delta=v(),
        res=v(), tmp=v(), ewt=v(), rtol=v(), atol=v(), mask=v(), etest=v(), jcol=v(),
        G=np.zeros((nd, nd)), G2=np.zeros((nd, nd)), piv=np.zeros(n, dtype=i64),
        Gr=np.zeros((nb, nb)), pivr=np.zeros(nb, dtype=i64), dz=np.zeros(nr),
        Ar=np.zeros((3 * na if elastic else na, na)), Rr=np.zeros((na, na)),
        bpos=bpos, bdims=bdims, Gb=np.zeros(size), Rb=np.zeros(size),
        Ab=np.zeros((3 if layout is not None else 0, size)), Fb=np.zeros(fsize),
        pivb=np.zeros(nw, dtype=i64), wb=np.zeros(nw),
        gsw=np.zeros(nswitch), gnew=np.zeros(nswitch),
        fs=np.zeros(NF), iv=np.zeros(NI, dtype=i64),
        stats=np.zeros(NS, dtype=i64))


# ===================================================================================
# norms, weights, small helpers
# ===================================================================================

@jit_entry
def _wrms(v, w):
    """Weighted RMS norm sqrt(sum (v_i w_i)^2 / n)."""
    s = 0.0
    for i in range(v.size):
        x = v[i] * w[i]
        s += x * x
    return np.sqrt(s / v.size)


@jit_entry
def _wrms_newton(v, w, mask, h, index2):
    """The Newton iteration's norms of an update v: (over every component, over all
    but the quadratures). The first is the convergence test's; the second the rate's:
    a quadrature (mask MASK_QUADRATURE: a work W' = P(q, u), which no other row reads)
    follows the components it integrates, and its first update, linear in their
    updates where P is quadratic in them (the dissipated work u^T D u of a damped
    beam), can be undone by the second whole while the rest converged (the
    imported UR5 with a beam in critically damped modes at h = 1 ms: the work's
    updates 4.0e3 and 4.0e3 in the weighted norm, the speeds' 1.1e2 and 1.0e-4; the
    rate 0.98 over every component failed the iteration). With `index2` the weights
    of the algebraic components (mask 0) are multiplied by min(h, 1) (DASSL's
    scaling of index-2 variables, Brenan, Campbell & Petzold 1989, 5.4.1: a
    multiplier's Newton error is 1/h times larger for the same error in the positions
    it moves; unscaled, a tight atol makes the iteration fail on rounding)."""
    f = min(h, 1.0) if index2 != 0 else 1.0
    s = 0.0  # the sums apart: the quadratures' may outweigh the rest by 1e40
    sq = 0.0
    for i in range(v.size):
        x = v[i] * w[i]
        if mask[i] == 0.0:
            x *= f
        if mask[i] == MASK_QUADRATURE:
            sq += x * x
        else:
            s += x * x
    return np.sqrt((s + sq) / v.size), np.sqrt(s / v.size)


@jit_entry
def _wrms_masked(v, w, mask, ndiff):
    """Weighted RMS norm over the ndiff components with mask 1 (the error-test norm;
    IDA divides by n instead of ndiff)."""
    if ndiff == 0.0:
        return 0.0
    s = 0.0
    for i in range(v.size):
        x = v[i] * w[i] * mask[i]
        s += x * x
    return np.sqrt(s / ndiff)


@jit_entry
def _set_weights(y, rtol, atol, ewt):
    """ewt_i = 1 / (rtol_i |y_i| + atol_i)."""
    for i in range(y.size):
        ewt[i] = 1.0 / (rtol[i] * abs(y[i]) + atol[i])


@jit_entry
def _all_finite(v):
    for i in range(v.size):
        if not np.isfinite(v[i]):
            return False
    return True


@jit_entry
def _matrix_finite(a):
    n, m = a.shape
    for i in range(n):
        for j in range(m):
            if not np.isfinite(a[i, j]):
                return False
    return True


@jit
def no_jacobian(t, y, yp, cj, args, out):
    """Stand-in for an absent Jacobian hook (never called)."""
    out[0, 0] = np.nan


@jit
def no_mass(t, y, yp, args, out):
    """Stand-in for an absent mass hook (never called)."""
    out[0, 0] = np.nan


@jit
def no_switches(t, y, args, out):
    """Stand-in for absent switch functions (never called: the state has none)."""
    out[0] = np.nan


@jit_entry
def switch_crossed(switches, args, s):
    """After an accepted step: s.gnew = the switch functions at (t_n, y_n); True if
    one of them changed sign since s.gsw (their values at the step's start, which
    then become s.gnew's). A function that reaches zero from either side counts as
    changed; one that leaves zero does not (it was zero at a restart, on its new
    side). State events (flexmbs.solvers.events): the step loop stops there, and
    the driver's owner locates the crossing on the step's interpolant."""
    if s.gsw.size == 0:
        return False
    switches(s.fs[F_T], s.y, args, s.gnew)
    crossed = False
    for i in range(s.gsw.size):
        a = s.gsw[i]
        b = s.gnew[i]
        if (a > 0.0 and b <= 0.0) or (a < 0.0 and b >= 0.0):
            crossed = True
    if not crossed:
        for i in range(s.gsw.size):
            s.gsw[i] = s.gnew[i]
    return crossed


# ===================================================================================
# iteration matrix
# ===================================================================================

@jit_entry
def _fd_increment(y, yp, h, w):
    """DASSL's difference increment (DDAJAC) for a component with value y, rate yp
    and error weight w: sqrt(eps) max(|y|, |h yp|, 1/w), signed as h yp, rounded so
    that (y + d) - y is exact."""
    d = SQRT_EPS * max(abs(y), abs(h * yp), 1.0 / w)
    if h * yp < 0.0:
        d = -d
    return (y + d) - y


@jit_entry
def _fd_increment_floored(y, yp, h, w):
    """_fd_increment, at least SQRT_EPS * FD_MIN_SCALE in size: with a tight atol,
    a coordinate at rest and at zero (a joint rate of a chain at rest) would get an
    increment near sqrt(eps) atol, whose change of F drowns in the residual's
    rounding and gives a column of noise that dwarfs the others (measured: Newton
    updates of 1e9 tolerances and 30 000 failed steps in 1 s of CHAIN-32 at rtol
    1e-11)."""
    d = _fd_increment(y, yp, h, w)
    floor = SQRT_EPS * FD_MIN_SCALE
    if abs(d) < floor:
        d = (y + (floor if d >= 0.0 else -floor)) - y
    return d


@jit_entry
def _jacobian_fd(residual, args, t, y, yp, res, cj, h, ewt, G, tmp, skip, mask, index2):
    """G = dF/dy + cj dF/dy' by forward differences, one column per residual call;
    columns with skip[j] != 0 are zeroed instead. Returns the number of residual calls.

    Increments from _fd_increment (DASSL's). With `index2` (a stabilised index-2
    system: position constraints Phi(q) among the rows, whose rounding is eps times
    the model's lengths, not eps times atol) the increments have a floor: SQRT_EPS
    for the algebraic columns (multipliers, in which the residual is linear) and
    SQRT_EPS * FD_MIN_SCALE for the others; an increment tied to a tiny atol at a
    state at rest would drown in the residual's rounding and leave a zero column.
    `res` is F(t, y, y'); y and y' are restored.
    """
    n = y.size
    calls = 0
    for j in range(n):
        if skip[j] != 0.0:
            for i in range(n):
                G[i, j] = 0.0
            continue
        calls += 1
        ysave = y[j]
        ypsave = yp[j]
        d = _fd_increment(ysave, ypsave, h, ewt[j])
        if index2 != 0:
            floor = SQRT_EPS if mask[j] == 0.0 else SQRT_EPS * FD_MIN_SCALE
            if abs(d) < floor:
                d = (ysave + (floor if d >= 0.0 else -floor)) - ysave
        y[j] = ysave + d
        yp[j] = ypsave + cj * d
        residual(t, y, yp, args, tmp)
        inv = 1.0 / d
        for i in range(n):
            G[i, j] = (tmp[i] - res[i]) * inv
        y[j] = ysave
        yp[j] = ypsave
    return calls


@jit_entry
def _setup(residual, jacobian, mass, args, s, t, y, yp, res):
    """Evaluate and LU-factor G = dF/dy + cj dF/dy' at (t, y, y'), F(t, y, y') = res.
    With a mass hook (iv[I_USE_MASS]) its A = dF/dy' at (t, y, y') is evaluated too
    and R = G - cj A kept (s.Rr): R is dF/dy, free of cj, so that _reform_with_mass
    gives G at another cj exactly, without residuals.

    Returns _OK, _NLS_SINGULAR (a zero pivot) or _NLS_NONFINITE (G not finite).
    """
    fs, iv, st = s.fs, s.iv, s.stats
    if iv[I_NSECOND] > 0:
        return _setup_second_order(residual, jacobian, mass, args, s, t, y, yp, res)
    cj = fs[F_CJ]
    G = s.G
    if iv[I_USE_JAC] == JAC_HOOK:
        G[:, :] = 0.0
        jacobian(t, y, yp, cj, args, G)
    else:
        st[S_NRES] += _jacobian_fd(residual, args, t, y, yp, res, cj, fs[F_H], s.ewt,
                                   G, s.tmp, s.jcol, s.mask, iv[I_INDEX2])
        if iv[I_USE_JAC] == JAC_HOOK_COLUMNS:
            jacobian(t, y, yp, cj, args, G)
    st[S_NJAC] += 1
    fs[F_CJOLD] = cj
    fs[F_CJRATIO] = 1.0
    iv[I_JAC_AGE] = 0
    iv[I_REST_AGE] = 0
    iv[I_FORCE_SETUP] = 1          # until a factorization succeeds
    if not _matrix_finite(G):
        return _NLS_NONFINITE
    if iv[I_USE_MASS] != 0:
        Ar, Rr = s.Ar, s.Rr
        Ar[:, :] = 0.0
        mass(t, y, yp, args, Ar)
        n = G.shape[0]
        for i in range(n):
            for j in range(n):
                Rr[i, j] = G[i, j] - cj * Ar[i, j]
        if not _matrix_finite(Rr):
            return _NLS_NONFINITE
    st[S_NLU] += 1
    if lu_factor(G, s.piv) != 0:
        return _NLS_SINGULAR
    iv[I_FORCE_SETUP] = 0
    return _OK


@jit_entry
def _setup_second_order(residual, jacobian, mass, args, s, t, y, yp, res):
    """_setup for residuals whose first ns rows are F_q = q' - u, y = [q, u, z'],
    eliminating the positions: with the q-rows of G (cj I, -I) solved exactly,

        delta_q = (delta_u + r_q) / cj,   Gr [delta_u; delta_z'] = r_rest,
        Gr = d F_rest / d[u, z'] + (d F_rest / dq) / cj  (on the u columns),

    valid while r_q = 0 (the corrector keeps it so: _nls). Column j of Gr is one
    residual call along the direction (q_j + d/cj, q'_j + d, u_j + d, u'_j + cj d),
    so a Jacobian costs n - ns residuals, not n, and the LU is (n - ns)^2. Columns
    flagged 1.0 in s.jcol come from the hook, which fills the full G (into s.G2): for
    a flagged u_j it must supply the q_j column too. Increments from
    _fd_increment_floored. With a mass hook (iv[I_USE_MASS]) the hook's A at (t, y)
    is evaluated too and R = Gr - cj A kept (s.Rr) for _reform_with_mass. With its
    elastic blocks (I_USE_MASS = 2) the columns flagged 2.0, the speeds of elastic
    coordinates, are cj A + D + K / cj without residuals: the inertia, the elastic
    damping and the elastic stiffness (linear and geometric) of the beams, leaving
    out the smaller dependence of the inertial, gyroscopic and gravity forces on the
    elastic coordinates, which the modified Newton iteration absorbs.
    """
    if s.bpos.shape[0] > 0:
        return _setup_bordered(residual, mass, args, s, t, y, yp, res)
    fs, iv, st = s.fs, s.iv, s.stats
    cj = fs[F_CJ]
    h = fs[F_H]
    ns = iv[I_NSECOND]
    n = y.size
    nr = n - ns
    Gr, tmp, ewt, jcol = s.Gr, s.tmp, s.ewt, s.jcol
    use_hook = iv[I_USE_JAC] == JAC_HOOK_COLUMNS
    if use_hook:
        s.G2[:, :] = 0.0
        jacobian(t, y, yp, cj, args, s.G2)
    elastic = iv[I_USE_MASS] == 2
    if elastic:
        s.Ar[:, :] = 0.0
        mass(t, y, yp, args, s.Ar)
    calls = 0
    for jr in range(nr):
        j = ns + jr
        if elastic and jcol[j] == 2.0:
            for i in range(nr):
                Gr[i, jr] = (cj * s.Ar[i, jr] + s.Ar[2 * nr + i, jr]
                             + s.Ar[nr + i, jr] / cj)
            continue
        if use_hook and jcol[j] == 1.0:
            for i in range(nr):
                v = s.G2[ns + i, j]
                if jr < ns:
                    v += s.G2[ns + i, jr] / cj
                Gr[i, jr] = v
            continue
        calls += 1
        ysave = y[j]
        ypsave = yp[j]
        d = _fd_increment_floored(ysave, ypsave, h, ewt[j])
        y[j] = ysave + d
        yp[j] = ypsave + cj * d
        if jr < ns:
            qsave = y[jr]
            qpsave = yp[jr]
            y[jr] = qsave + d / cj
            yp[jr] = qpsave + d
        residual(t, y, yp, args, tmp)
        inv = 1.0 / d
        for i in range(nr):
            Gr[i, jr] = (tmp[ns + i] - res[ns + i]) * inv
        y[j] = ysave
        yp[j] = ypsave
        if jr < ns:
            y[jr] = qsave
            yp[jr] = qpsave
    st[S_NRES] += calls
    st[S_NJAC] += 1
    fs[F_CJOLD] = cj
    fs[F_CJRATIO] = 1.0
    iv[I_JAC_AGE] = 0
    iv[I_REST_AGE] = 0
    iv[I_FORCE_SETUP] = 1
    if not _matrix_finite(Gr):
        return _NLS_NONFINITE
    if iv[I_USE_MASS] != 0:
        Ar, Rr = s.Ar, s.Rr
        if not elastic:
            Ar[:, :] = 0.0
            mass(t, y, yp, args, Ar)
        for i in range(nr):
            for j in range(nr):
                Rr[i, j] = Gr[i, j] - cj * Ar[i, j]
                if elastic:
                    Rr[i, j] -= Ar[nr + i, j] / cj
        if not _matrix_finite(Rr):
            return _NLS_NONFINITE
    st[S_NLU] += 1
    if lu_factor(Gr, s.pivr) != 0:
        return _NLS_SINGULAR
    iv[I_FORCE_SETUP] = 0
    return _OK


@jit_entry
def _reform_with_mass(mass, args, s, t, y, yp):
    """Gr = R + cj A(t, y, y') and its LU, without residuals: A from the mass hook at
    the current iterate, R = Gr_0 - cj_0 A_0 of the last difference Jacobian
    (_setup_second_order). For a mechanical residual M(q) u' - f(q, u), Gr = cj M + D
    + K / cj (D, K: the derivatives of -f in u and q): the re-formed matrix has M at
    the current q and cj exact, D and K / cj_0 kept from the differences; with the
    elastic blocks (I_USE_MASS = 2) the elastic stiffness K_e / cj has cj exact too
    (R = Gr_0 - cj_0 A_0 - K_e0 / cj_0, and K_e0 of the last full setup kept: the
    mass hook is asked for A alone here), which matters for stiff beams, whose
    K / cj outweighs cj M at steps beyond their highest frequencies. Returns
    _OK, _NLS_SINGULAR or _NLS_NONFINITE, like _setup. Without eliminated positions
    (a first-order residual, _setup's R = dF/dy) G = R + cj A is the full matrix,
    exact in cj, and only its dependence on y is carried from the differences.
    """
    _evaluate_mass(mass, args, s, t, y, yp)
    s.stats[S_NMASS] += 1
    s.iv[I_JAC_AGE] = 0
    return _refactor_kept(s)


@jit_entry
def _evaluate_mass(mass, args, s, t, y, yp):
    """The mass hook's A at (t, y, y') into its place among the kept matrices: s.Ab[0]
    in the bordered band layout, else the first rows of s.Ar (the K and D below them
    are those of the last full setup)."""
    if s.bpos.shape[0] > 0:
        a_only = s.Ab[:1]
        a_only[:, :] = 0.0
        mass(t, y, yp, args, a_only)
    else:
        a = s.Ar[:s.Rr.shape[0]]
        a[:, :] = 0.0
        mass(t, y, yp, args, a)


@jit_entry
def _refactor_kept(s):
    """G = R + cj A at the current cj from the kept R and A (+ K / cj with the elastic
    blocks: Gr = R + cj A + K / cj; without eliminated positions the full G = R + cj
    A), and its LU, without residuals and without the mass hook. After
    _evaluate_mass it is the re-formed matrix of _reform_with_mass; alone, it is the
    kept matrix at a new cj (REFRESH_GALPHA), with the A of the last re-forming.
    Records the cj the factors hold. Returns _OK, _NLS_SINGULAR or _NLS_NONFINITE."""
    fs, iv, st = s.fs, s.iv, s.stats
    cj = fs[F_CJ]
    fs[F_CJOLD] = cj
    fs[F_CJRATIO] = 1.0
    iv[I_FORCE_SETUP] = 1
    if s.bpos.shape[0] > 0:
        Gb, Rb, a, k = s.Gb, s.Rb, s.Ab[0], s.Ab[1]
        for i in range(Gb.shape[0]):
            Gb[i] = Rb[i] + cj * a[i] + k[i] / cj
        if not _all_finite(Gb):
            return _NLS_NONFINITE
        st[S_NLU] += 1
        if bordered_band_factor(Gb, s.bdims, s.Fb, s.pivb) != 0:
            return _NLS_SINGULAR
        iv[I_FORCE_SETUP] = 0
        return _OK
    Rr = s.Rr
    nr = Rr.shape[0]
    first_order = iv[I_NSECOND] == 0
    G = s.G if first_order else s.Gr
    elastic = not first_order and iv[I_USE_MASS] == 2
    for i in range(nr):
        for j in range(nr):
            G[i, j] = Rr[i, j] + cj * s.Ar[i, j]
            if elastic:
                G[i, j] += s.Ar[nr + i, j] / cj
    if not _matrix_finite(G):
        return _NLS_NONFINITE
    st[S_NLU] += 1
    if lu_factor(G, s.piv if first_order else s.pivr) != 0:
        return _NLS_SINGULAR
    iv[I_FORCE_SETUP] = 0
    return _OK


@jit_entry
def _solve_newton(s, cj, delta):
    """delta <- G^-1 delta with the factors of _setup (full, or second-order form)."""
    ns = s.iv[I_NSECOND]
    if ns == 0:
        lu_solve(s.G, s.piv, delta)
        return
    n = delta.size
    dz = s.dz
    for i in range(n - ns):
        dz[i] = delta[ns + i]
    if s.bpos.shape[0] > 0:
        bordered_band_solve(s.Fb, s.pivb, s.bdims, s.bpos, dz, s.wb)
    else:
        lu_solve(s.Gr, s.pivr, dz)
    for i in range(ns):
        delta[i] = (dz[i] + delta[i]) / cj
    for i in range(n - ns):
        delta[ns + i] = dz[i]


# ===================================================================================
# the iteration matrix in a bordered band layout
# ===================================================================================

@jit_entry
def _setup_bordered(residual, mass, args, s, t, y, yp, res):
    """_setup_second_order with the reduced iteration matrix in the bordered band
    layout (s.bpos, s.bdims; flexmbs.numerics.bordered_band): the columns flagged 2.0 in
    s.jcol (every interior unknown among them) are cj A + D + K / cj from the mass
    hook, which writes A, K, D packed into s.Ab; the other columns, all of them
    border columns, come from differences as there, scattered into the packed
    storage. R = Gb - cj A - K / cj is kept (s.Rb) for _refactor_kept. The matrix
    is the one _setup_second_order forms; its factorization (bordered_band_factor)
    and storage grow linearly with the interior unknowns."""
    fs, iv, st = s.fs, s.iv, s.stats
    cj = fs[F_CJ]
    h = fs[F_H]
    ns = iv[I_NSECOND]
    n = y.size
    nr = n - ns
    Gb, Ab, tmp, ewt, jcol = s.Gb, s.Ab, s.tmp, s.ewt, s.jcol
    pos = s.bpos
    dims = (s.bdims[0], s.bdims[1], s.bdims[2])
    Ab[:, :] = 0.0
    mass(t, y, yp, args, Ab)
    a, k, d = Ab[0], Ab[1], Ab[2]
    for i in range(Gb.shape[0]):
        Gb[i] = cj * a[i] + d[i] + k[i] / cj
    calls = 0
    for jr in range(nr):
        j = ns + jr
        if jcol[j] == 2.0:
            continue
        calls += 1
        ysave = y[j]
        ypsave = yp[j]
        dd = _fd_increment_floored(ysave, ypsave, h, ewt[j])
        y[j] = ysave + dd
        yp[j] = ypsave + cj * dd
        if jr < ns:
            qsave = y[jr]
            qpsave = yp[jr]
            y[jr] = qsave + dd / cj
            yp[jr] = qpsave + dd
        residual(t, y, yp, args, tmp)
        inv = 1.0 / dd
        for i in range(nr):
            Gb[band_index(pos, dims, i, jr)] = (tmp[ns + i] - res[ns + i]) * inv
        y[j] = ysave
        yp[j] = ypsave
        if jr < ns:
            y[jr] = qsave
            yp[jr] = qpsave
    st[S_NRES] += calls
    st[S_NJAC] += 1
    fs[F_CJOLD] = cj
    fs[F_CJRATIO] = 1.0
    iv[I_JAC_AGE] = 0
    iv[I_REST_AGE] = 0
    iv[I_FORCE_SETUP] = 1
    if not _all_finite(Gb):
        return _NLS_NONFINITE
    Rb = s.Rb
    for i in range(Gb.shape[0]):
        Rb[i] = Gb[i] - cj * a[i] - k[i] / cj
    if not _all_finite(Rb):
        return _NLS_NONFINITE
    st[S_NLU] += 1
    if bordered_band_factor(Gb, s.bdims, s.Fb, s.pivb) != 0:
        return _NLS_SINGULAR
    iv[I_FORCE_SETUP] = 0
    return _OK


# ===================================================================================
# one step (IDAStep)
# ===================================================================================

@jit_entry
def _set_coeffs(s):
    """IDASetCoeffs: psi, alpha, beta, sigma, gamma and cj for (h, k); phi -> phi*.

    Returns ck, the variable-step error coefficient of the local error estimate.
    """
    fs, iv = s.fs, s.iv
    psi, alpha, beta, sigma, gamma = s.psi, s.alpha, s.beta, s.sigma, s.gamma
    phi = s.phi
    hh = fs[F_H]
    kk = iv[I_K]
    if hh != fs[F_HUSED] or kk != iv[I_KUSED]:
        iv[I_NS] = 0
    iv[I_NS] = min(iv[I_NS] + 1, iv[I_KUSED] + 2)
    ns = iv[I_NS]
    if kk + 1 >= ns:
        beta[0] = 1.0
        alpha[0] = 1.0
        temp1 = hh
        gamma[0] = 0.0
        sigma[0] = 1.0
        for i in range(1, kk + 1):
            temp2 = psi[i - 1]
            psi[i - 1] = temp1
            beta[i] = beta[i - 1] * psi[i - 1] / temp2
            temp1 = temp2 + hh
            alpha[i] = hh / temp1
            sigma[i] = i * sigma[i - 1] * alpha[i]
            gamma[i] = gamma[i - 1] + alpha[i - 1] / hh
        psi[kk] = temp1
    alphas = 0.0
    alpha0 = 0.0
    for i in range(kk):
        alphas -= 1.0 / (i + 1)
        alpha0 -= alpha[i]
    fs[F_CJLAST] = fs[F_CJ]
    fs[F_CJ] = -alphas / hh
    ck = abs(alpha[kk] + alphas - alpha0)
    ck = max(ck, alpha[kk])
    n = phi.shape[1]
    for j in range(ns, kk + 1):
        b = beta[j]
        for i in range(n):
            phi[j, i] *= b
    return ck


@jit_entry
def _predict(s):
    """IDAPredict: y^(0) = sum_{j<=k} phi*_j, y'^(0) = sum_{1<=j<=k} gamma_j phi*_j."""
    kk = s.iv[I_K]
    phi, gamma, ypred, yppred = s.phi, s.gamma, s.ypred, s.yppred
    n = ypred.size
    for i in range(n):
        ypred[i] = phi[0, i]
        yppred[i] = 0.0
    for j in range(1, kk + 1):
        pj = phi[j]
        g = gamma[j]
        for i in range(n):
            ypred[i] += pj[i]
            yppred[i] += g * pj[i]


@jit_entry
def _restore(s, saved_t):
    """IDARestore after a failed attempt: psi and phi* back to their values at t_n."""
    fs, iv = s.fs, s.iv
    kk = iv[I_K]
    psi, phi, beta = s.psi, s.phi, s.beta
    fs[F_T] = saved_t
    for j in range(1, kk + 1):
        psi[j - 1] = psi[j] - fs[F_H]
    n = phi.shape[1]
    for j in range(iv[I_NS], kk + 1):
        b = 1.0 / beta[j]
        for i in range(n):
            phi[j, i] *= b


@jit_entry
def _nls(residual, jacobian, mass, args, s, tn):
    """IDANls + modified Newton: solve F(tn, y0 + e, y0' + cj e) = 0 for e (= s.ee).

    G is refactored when forced (first step, after a failure), when
    cj / cj_old is outside [CJ_RATIO_MIN, CJ_RATIO_MAX], or when it is JAC_MAX_AGE
    steps old; otherwise each update is scaled by 2 / (1 + cj / cj_old) (IDA). The
    iteration stops when max(s, SS_MIN) |delta| <= epcon (s = rate / (1 - rate),
    carried over from earlier steps until measured again) or when |delta| <=
    NEWTON_TINY eps |y|; it fails when the rate exceeds RATE_MAX or after
    MAX_NEWTON_ITER updates, and is then retried once with a fresh G. On an old G it
    also stops as soon as the rate shows it will not converge in the updates left,
    s |delta| rate^left > epcon (the test of Hairer and Wanner's RADAU5, Solving ODEs
    II, section IV.8). With a mass hook a fresh G is first re-formed from it
    (_reform_with_mass, no residuals) unless forced or the differences behind R are
    REST_MAX_AGE steps old; if the iteration fails on a re-formed G, it is retried
    once more on a difference Jacobian; s restarts at SS_FRESH on any fresh G. A step
    that converged only after REFORM_MIN_ITER updates has the next step re-form G at
    once.

    Under REFRESH_GALPHA (iv[I_REFRESH_RULE], with a mass hook) the kept G is
    refactored at the new cj whenever cj changed (_refactor_kept: R and A kept, one
    LU, no residual, no mass hook), and nothing is scaled: the generalized-alpha
    matrix cj M + D + K / cj of a beam at steps beyond its highest frequencies is
    dominated by K / cj, which moves against the scaling's cj, and a kept matrix
    at another cj failed its iteration where the same matrix at its own cj took the
    updates a fresh one takes (H2, 10 elements). There a step's update count says
    how far the predictor was, not how stale G is (the first update of the unresolved
    elastic speeds is thousands of tolerances, three updates on a fresh G), so a step
    re-forms the next one's G only if its REFORM_MIN_ITER or more updates also
    contracted slower than REFORM_MIN_RATE.
    Returns _OK, _NLS_CONV, _NLS_NONFINITE or _NLS_SINGULAR; on _OK, s.yy, s.yyp hold
    y_{n+1}, y'_{n+1}.
    """
    fs, iv, st = s.fs, s.iv, s.stats
    ee, yy, yyp, ypred, yppred, res, delta, ewt = (s.ee, s.yy, s.yyp, s.ypred,
                                                    s.yppred, s.res, s.delta, s.ewt)
    n = yy.size
    cj = fs[F_CJ]
    epcon = fs[F_EPCON]
    call_setup = iv[I_FORCE_SETUP] != 0 or iv[I_JAC_AGE] >= JAC_MAX_AGE
    cjratio = cj / fs[F_CJOLD]
    if cj != fs[F_CJLAST]:
        fs[F_SS] = SS_CJ_CHANGED
    ynorm = _wrms(ypred, ewt)
    ns = iv[I_NSECOND]
    reform = iv[I_USE_MASS] != 0 and iv[I_REST_AGE] < (REST_MAX_AGE if ns > 0 else
                                                       REST_MAX_AGE_FIRST_ORDER)
    galpha_rule = reform and iv[I_REFRESH_RULE] == REFRESH_GALPHA
    if not galpha_rule and (cjratio < CJ_RATIO_MIN or cjratio > CJ_RATIO_MAX):
        call_setup = True
    if reform and iv[I_REFORM_DUE] != 0:
        call_setup = True
    iv[I_REFORM_DUE] = 0
    refactor = galpha_rule and not call_setup and cjratio != 1.0
    while True:
        for i in range(n):
            ee[i] = 0.0
            yy[i] = ypred[i]
            yyp[i] = yppred[i]
        for i in range(ns):
            # start where q' = u holds, so the eliminated rows stay solved
            ee[i] = (ypred[ns + i] - yppred[i]) / cj
            yy[i] = ypred[i] + ee[i]
            yyp[i] = yppred[i] + cj * ee[i]
        residual(tn, yy, yyp, args, res)
        st[S_NRES] += 1
        if not _all_finite(res):
            return _NLS_NONFINITE
        jcur = False
        reformed = False
        flag = _OK
        if call_setup:
            if reform and iv[I_FORCE_SETUP] == 0:
                flag = _reform_with_mass(mass, args, s, tn, yy, yyp)
                reformed = True
                fs[F_SS] = SS_FRESH  # the rate of the old matrix says nothing of it
            else:
                flag = _setup(residual, jacobian, mass, args, s, tn, yy, yyp, res)
            if flag != _OK and not reformed:
                return flag
            jcur = True
            cjratio = 1.0
        elif refactor:
            flag = _refactor_kept(s)  # failing, a re-formed G next
            refactor = False
            cjratio = 1.0
        fs[F_CJRATIO] = cjratio
        scale = 2.0 / (1.0 + cjratio)
        rate = 0.0
        if flag != _OK:
            m = MAX_NEWTON_ITER  # a re-formed G that would not factor: differences next
        else:
            flag = _NLS_CONV
            m = 0
        while m < MAX_NEWTON_ITER:
            st[S_NNEWTON] += 1
            for i in range(n):
                delta[i] = res[i]
            _solve_newton(s, cj, delta)
            if cjratio != 1.0:
                for i in range(n):
                    delta[i] *= scale
            for i in range(n):
                ee[i] -= delta[i]
                yy[i] = ypred[i] + ee[i]
                yyp[i] = yppred[i] + cj * ee[i]
            delnrm, ratenrm = _wrms_newton(delta, ewt, s.mask, fs[F_H], iv[I_INDEX2])
            if not np.isfinite(delnrm):
                flag = _NLS_NONFINITE
                break
            if m == 0:
                fs[F_OLDNRM] = ratenrm
                if delnrm <= NEWTON_TINY * EPS * ynorm:
                    return _OK
            else:
                rate = ((ratenrm / fs[F_OLDNRM]) ** (1.0 / m)
                        if fs[F_OLDNRM] > RATE_NOISE * epcon else 0.0)
                if rate > RATE_MAX:
                    break
                fs[F_SS] = rate / (1.0 - rate)
            if max(fs[F_SS], SS_MIN) * delnrm <= epcon:
                if (reform and m + 1 >= REFORM_MIN_ITER
                        and (not galpha_rule or rate > REFORM_MIN_RATE)):
                    iv[I_REFORM_DUE] = 1
                return _OK
            if m == MAX_NEWTON_ITER - 1:
                break
            if m > 0 and not jcur and (fs[F_SS] * delnrm * rate ** (MAX_NEWTON_ITER - 1 - m)
                                       > epcon):
                break
            residual(tn, yy, yyp, args, res)
            st[S_NRES] += 1
            if not _all_finite(res):
                flag = _NLS_NONFINITE
                break
            m += 1
        if jcur and not reformed:
            return flag
        if reformed:
            reform = False         # failed on a re-formed G: differences next
        call_setup = True          # stale G: retry once with a fresh one


@jit_entry
def _test_error(s, ck):
    """IDATestError: local error estimates at orders k, k-1, k-2 (on the components
    of s.etest), the order suggestion I_KNEW and the error test
    ck |ee| <= 1. Returns _OK or _ERR_TEST."""
    fs, iv = s.fs, s.iv
    kk = iv[I_K]
    ee, phi, tmp, ewt, mask, sigma = s.ee, s.phi, s.tmp, s.ewt, s.etest, s.sigma
    nd = fs[F_NDIFF]
    n = ee.size
    enorm_k = _wrms_masked(ee, ewt, mask, nd)
    err_k = sigma[kk] * enorm_k
    terr_k = (kk + 1) * err_k
    fs[F_ERR_K] = err_k
    fs[F_ERR_KM1] = 0.0
    iv[I_KNEW] = kk
    if kk > 1:
        for i in range(n):
            tmp[i] = phi[kk, i] + ee[i]
        err_km1 = sigma[kk - 1] * _wrms_masked(tmp, ewt, mask, nd)
        terr_km1 = kk * err_km1
        fs[F_ERR_KM1] = err_km1
        if kk > 2:
            for i in range(n):
                tmp[i] += phi[kk - 1, i]
            err_km2 = sigma[kk - 2] * _wrms_masked(tmp, ewt, mask, nd)
            terr_km2 = (kk - 1) * err_km2
            if max(terr_km1, terr_km2) <= terr_k:
                iv[I_KNEW] = kk - 1
        elif terr_km1 <= 0.5 * terr_k:
            iv[I_KNEW] = kk - 1
    if ck * enorm_k > 1.0:
        return _ERR_TEST
    return _OK


@jit_entry
def _complete_step(s):
    """IDACompleteStep: counters, next order and step (IDA's rules, module constants),
    and the update of the divided differences phi to t_{n+1}."""
    fs, iv, st = s.fs, s.iv, s.stats
    phi, ee, ewt, mask, tmp = s.phi, s.ee, s.ewt, s.etest, s.tmp
    n = ee.size
    kk = iv[I_K]
    st[S_NSTEPS] += 1
    st[S_ORDER + kk - 1] += 1
    iv[I_JAC_AGE] += 1
    iv[I_REST_AGE] += 1
    kdiff = kk - iv[I_KUSED]
    iv[I_KUSED] = kk
    kused = kk
    fs[F_HUSED] = fs[F_H]
    hh = fs[F_H]
    maxord = iv[I_MAXORD]
    hmax = fs[F_H_MAX]
    if fs[F_H_FIXED] > 0.0:
        # fixed step: raise the order one by one up to max_order, keep h
        if kk < maxord and (st[S_NSTEPS] > 1 or iv[I_HISTORY] != 0):
            iv[I_K] = kk + 1
    else:
        if iv[I_KNEW] == kk - 1 or kk == maxord:
            iv[I_PHASE] = 1
        if iv[I_PHASE] == 0:
            # start-up: raise the order and double h until the order first drops
            if st[S_NSTEPS] > 1:
                iv[I_K] = kk + 1
                hnew = H_INCREASE * hh
                if abs(hnew) > hmax:
                    hnew = hmax
                fs[F_H] = hnew
        else:
            err_k = fs[F_ERR_K]
            err_km1 = fs[F_ERR_KM1]
            action = 0          # -1 lower, 0 keep, +1 raise
            err_kp1 = 0.0
            if iv[I_KNEW] == kk - 1:
                action = -1
            elif kk == maxord or kk + 1 >= iv[I_NS] or kdiff == 1:
                action = 0
            else:
                for i in range(n):
                    tmp[i] = ee[i] - phi[kk + 1, i]
                err_kp1 = _wrms_masked(tmp, ewt, mask, fs[F_NDIFF]) / (kk + 2)
                terr_k = (kk + 1) * err_k
                terr_kp1 = (kk + 2) * err_kp1
                if kk == 1:
                    action = 0 if terr_kp1 >= 0.5 * terr_k else 1
                else:
                    terr_km1 = kk * err_km1
                    if terr_km1 <= min(terr_k, terr_kp1):
                        action = -1
                    elif terr_kp1 >= terr_k:
                        action = 0
                    else:
                        action = 1
            if action == -1 and iv[I_INDEX2] != 0 and kk <= INDEX2_MIN_ORDER:
                action = 0      # INDEX2_MIN_ORDER
            if action == 1:
                iv[I_K] = kk + 1
                err_knew = err_kp1
            elif action == -1:
                iv[I_K] = kk - 1
                err_knew = err_km1
            else:
                err_knew = err_k
            knew = iv[I_K]
            rr = (ERR_BIAS * err_knew + ERR_FLOOR) ** (-1.0 / (knew + 1))
            hnew = hh
            if rr >= H_INCREASE:
                hnew = H_INCREASE * hh
                if abs(hnew) > hmax:
                    hnew = hmax
            elif rr <= 1.0:
                rr = max(H_DECREASE_MIN, min(H_REDUCE_MAX, rr))
                hnew = hh * rr
            fs[F_H] = hnew
    # save ee for a possible order increase, then phi_j(n+1) from phi*_j(n)
    if kused < maxord:
        for i in range(n):
            phi[kused + 1, i] = ee[i]
    pk = phi[kused]
    for i in range(n):
        pk[i] += ee[i]
    for j in range(kused - 1, -1, -1):
        pj = phi[j]
        pn = phi[j + 1]
        for i in range(n):
            pj[i] += pn[i]


@jit_entry
def _step(residual, jacobian, mass, args, s):
    """IDAStep: one accepted step of size <= h from t_n (retrying with smaller steps
    and lower orders after failures, IDAHandleNFlag). Returns 0 or a status < 0."""
    fs, iv, st = s.fs, s.iv, s.stats
    phi = s.phi
    n = phi.shape[1]
    saved_t = fs[F_T]
    fixed = fs[F_H_FIXED] > 0.0
    if st[S_NSTEPS] == 0 and iv[I_HISTORY] == 0:
        hh = fs[F_H]
        iv[I_K] = 1
        iv[I_KUSED] = 0
        fs[F_HUSED] = 0.0
        s.psi[0] = hh
        fs[F_CJ] = 1.0 / hh
        iv[I_PHASE] = 0
        iv[I_NS] = 0
        for i in range(n):
            phi[0, i] = s.y[i]
            phi[1, i] = hh * s.yp[i]
    ncf = 0
    nef = 0
    t_end = fs[F_T_END]
    hmin = max(fs[F_H_MIN], H_MIN_UROUND * EPS * abs(saved_t))
    while True:
        ck = _set_coeffs(s)
        tn = saved_t + fs[F_H]
        if tn >= t_end - TSTOP_FUZZ * EPS * abs(t_end):
            tn = t_end
        _predict(s)
        nflag = _nls(residual, jacobian, mass, args, s, tn)
        if nflag == _OK and not fixed:
            nflag = _test_error(s, ck)
        if nflag == _OK:
            break
        # failed attempt: restore t_n, decide how to retry
        fs[F_T_FAIL] = tn
        fs[F_H_FAIL] = fs[F_H]
        _restore(s, saved_t)
        if nflag == _ERR_TEST:
            nef += 1
            st[S_NREJECTED] += 1
            floor = 1     # the lowest order to retry at (INDEX2_MIN_ORDER)
            if iv[I_INDEX2] != 0 and iv[I_PHASE] == 1 and nef < INDEX2_FLOOR_FAILS:
                floor = min(INDEX2_MIN_ORDER, iv[I_K])
            if nef == 1:
                kk = iv[I_K]
                err_knew = fs[F_ERR_K] if iv[I_KNEW] == kk else fs[F_ERR_KM1]
                if iv[I_KNEW] < floor:
                    err_knew = fs[F_ERR_K]
                iv[I_K] = max(iv[I_KNEW], floor)
                rr = H_REDUCE_MAX * (ERR_BIAS * err_knew + ERR_FLOOR) ** (
                    -1.0 / (iv[I_K] + 1))
                rr = max(H_REDUCE_MIN, min(H_REDUCE_MAX, rr))
            elif nef == 2:
                iv[I_K] = max(iv[I_KNEW], floor)
                rr = H_REDUCE_MIN
            else:
                iv[I_K] = floor
                rr = H_REDUCE_MIN
            if nef >= MAX_ERR_FAILS:
                return ST_ERR_FAILS
        else:
            ncf += 1
            st[S_NCONVFAIL] += 1
            iv[I_FORCE_SETUP] = 1
            rr = H_REDUCE_CONV
            if fixed or ncf >= MAX_CONV_FAILS:
                if nflag == _NLS_SINGULAR:
                    return ST_SINGULAR
                if nflag == _NLS_NONFINITE:
                    return ST_NONFINITE
                return ST_CONV_FAILS
        iv[I_PHASE] = 1
        fs[F_RR] = rr
        fs[F_H] *= rr
        if abs(fs[F_H]) < hmin:
            # name the cause when the steps shrank because F was NaN or G singular
            if nflag == _NLS_NONFINITE:
                return ST_NONFINITE
            if nflag == _NLS_SINGULAR:
                return ST_SINGULAR
            return ST_STEP_TOO_SMALL
        if st[S_NSTEPS] == 0 and iv[I_HISTORY] == 0:
            # IDAReset: still on the first step, phi_1 = h y'_0 follows h
            s.psi[0] = fs[F_H]
            for i in range(n):
                phi[1, i] *= rr
    fs[F_T] = tn
    _complete_step(s)
    for i in range(n):
        s.y[i] = s.yy[i]
        s.yp[i] = s.yyp[i]
    return 0


# ===================================================================================
# dense output, start, initial values, the driver loop
# ===================================================================================

@jit_entry
def bdf_interpolate(s, t, y_out, yp_out):
    """IDAGetSolution: y(t), y'(t) from the interpolating polynomial of the last
    step, valid for t_n - h_used <= t <= t_n (phi at t_n, psi of the last step)."""
    fs, iv = s.fs, s.iv
    phi, psi = s.phi, s.psi
    n = phi.shape[1]
    kord = iv[I_KUSED]
    if kord == 0:
        kord = 1
    delt = t - fs[F_T]
    c = 1.0
    d = 0.0
    gam = delt / psi[0]
    for i in range(n):
        y_out[i] = phi[0, i]
        yp_out[i] = 0.0
    for j in range(1, kord + 1):
        d = d * gam + c / psi[j - 1]
        c = c * gam
        if j < kord:
            gam = (delt + psi[j - 1]) / psi[j]
        for i in range(n):
            y_out[i] += c * phi[j, i]
            yp_out[i] += d * phi[j, i]


@jit
def bdf_start(s, t0, h0, y_hist):
    """Prepare the first step from t0 with y0 = s.y, y'0 = s.yp (consistent).

    h0 <= 0 picks IDA's first step: min(H0_FRACTION (t_end - t0), H0_YP_LIMIT /
    |y'0|_w, h_max), raised to the floor h_min (IDA's choice is cautious: from rest
    under tight tolerances it can fall below a floor the run passes easily). y_hist (k, n),
    k >= 1, holds y(t0 - j h0) for j = 1..k: the run then starts at order k from that
    history (only with a fixed step, for convergence studies); k = 0 starts at order 1 as
    usual.
    """
    fs, iv = s.fs, s.iv
    n = s.y.size
    fs[F_T] = t0
    _set_weights(s.y, s.rtol, s.atol, s.ewt)
    hh = h0
    if not hh > 0.0:
        hh = H0_FRACTION * (fs[F_T_END] - t0)
        ypnorm = _wrms_masked(s.yp, s.ewt, s.etest, fs[F_NDIFF])
        if ypnorm > H0_YP_LIMIT / hh:
            hh = H0_YP_LIMIT / ypnorm
        hh = max(hh, fs[F_H_MIN])
    hh = min(hh, fs[F_H_MAX])
    if t0 + hh > fs[F_T_END]:
        hh = fs[F_T_END] - t0
    fs[F_H] = hh
    fs[F_HUSED] = 0.0
    fs[F_SS] = SS_FRESH
    fs[F_CJ] = 1.0 / hh
    fs[F_CJOLD] = fs[F_CJ]
    fs[F_CJLAST] = fs[F_CJ]
    fs[F_CJRATIO] = 1.0
    iv[I_FORCE_SETUP] = 1
    iv[I_REFORM_DUE] = 0
    iv[I_REFRESH_RULE] = REFRESH_IDA
    iv[I_JAC_AGE] = 0
    iv[I_NS] = 0
    iv[I_KNEW] = 1
    iv[I_STATUS] = ST_RUNNING
    k = y_hist.shape[0]
    phi = s.phi
    for i in range(n):
        phi[0, i] = s.y[i]
        phi[1, i] = hh * s.yp[i]
    s.psi[0] = hh
    if k == 0:
        iv[I_K] = 1
        iv[I_KUSED] = 0
        iv[I_PHASE] = 0
        iv[I_HISTORY] = 0
        return
    # constant-step history: phi_j = backward difference nabla^j y at t0
    vals = np.empty((k + 1, n))
    vals[0, :] = s.y
    for j in range(k):
        vals[j + 1, :] = y_hist[j]
    for j in range(k + 1):
        # nabla^j y_0 = sum_m (-1)^m C(j, m) y_{-m}
        for i in range(n):
            acc = 0.0
            binom = 1.0
            for m in range(j + 1):
                acc += (-1.0) ** m * binom * vals[m, i]
                binom = binom * (j - m) / (m + 1)
            phi[j, i] = acc
    for j in range(k + 1):
        s.psi[j] = (j + 1) * hh
    iv[I_K] = k
    iv[I_KUSED] = k
    iv[I_PHASE] = 1
    iv[I_HISTORY] = 1
    fs[F_HUSED] = hh


@jit
def bdf_carry_jump(s, taylor):
    """Carry the history of the last steps across a jump of the forces at t_n with
    the state continuous (a held input that changed).

    The solution after the jump, continued back over the last steps, is the one
    before it plus d(t), d(t_n) = 0, whose derivatives at t_n are taylor[m - 1] =
    d^(m)(t_n), m = 1..K (d' the jump of y', d'' = J d', ... with J = df/dy: the
    linear response to the jump). The history's points t_n - c_j (c_0 = 0, c_j =
    psi_{j-1}) move by the Taylor polynomial of d there, and phi_j = psi_0 ...
    psi_{j-1} [y_n, ..., y_{n-j}] (the modified divided differences, j = 1..k) by
    those of the moves. The order, the step and the iteration matrix stay as they
    are; s.yp += taylor[0]."""
    phi, psi = s.phi, s.psi
    n = phi.shape[1]
    kk = s.iv[I_KUSED]
    if kk < 1:
        kk = 1
    nterms = taylor.shape[0]
    c = np.zeros(kk + 1)
    for j in range(1, kk + 1):
        c[j] = psi[j - 1]
    dd = np.zeros(kk + 1)
    for i in range(n):
        for j in range(kk + 1):
            v = 0.0
            power = 1.0
            for m in range(nterms):
                power *= -c[j] / (m + 1)
                v += power * taylor[m, i]
            dd[j] = v
        # divided differences in place: dd[j] = [p(t_n), ..., p(t_n - c_j)]
        for level in range(1, kk + 1):
            for j in range(kk, level - 1, -1):
                dd[j] = (dd[j - 1] - dd[j]) / (c[j] - c[j - level])
        scale = 1.0
        for j in range(1, kk + 1):
            scale *= psi[j - 1]
            phi[j, i] += scale * dd[j]
        s.yp[i] += taylor[0, i]


@jit
def _ic_column(residual, args, t0, y, yp, res, differential, j, d, G, tmp):
    """Column j of the initial-value matrix by a forward difference of size d in
    y'_j (differential) or y_j (algebraic). Returns max_i |F_i(+d) - F_i|."""
    n = y.size
    v = yp if differential else y
    save = v[j]
    d = (save + d) - save
    v[j] = save + d
    residual(t0, y, yp, args, tmp)
    v[j] = save
    change = 0.0
    for i in range(n):
        diff = tmp[i] - res[i]
        change = max(change, abs(diff))
        G[i, j] = diff / d
    return change


@jit
def bdf_initial_conditions(residual, jacobian, args, s, t0):
    """Consistent initial values (IDA's IDACalcIC, mode YA_YDP_INIT).

    With y_d (mask 1) fixed, solve F(t0, y, y') = 0 for y'_d and y_a (mask 0) by
    Newton's method on u = [y'_d, y_a], starting from s.y, s.yp. The matrix is
    dF/dy'_j for differential and dF/dy_j for algebraic columns (from the hook as
    J(cj=1) - J(cj=0) and J(cj=0), else by differences, with increments
    sqrt(eps) max(|u_j|, 1/w_j) and, for y'_j, at least sqrt(eps) |y_j| / h_ic,
    h_ic = H0_FRACTION (t_end - t0), enlarged while the change of F is lost in its
    rounding). Converged when the weighted update (weights 1 / (rtol |u| + atol))
    is <= IC_TOL. An update that makes F non-finite is halved. Needs an index-1
    problem: for higher index the matrix is singular (status ST_IC_SINGULAR).
    Returns 0 or a status < 0; s.y, s.yp updated.
    """
    ref = tuple_ref(args)
    fs, iv, st = s.fs, s.iv, s.stats
    y, yp, res, G, G2, tmp, delta, mask = (s.y, s.yp, s.res, s.G, s.G2, s.tmp,
                                           s.delta, s.mask)
    rtol, atol = s.rtol, s.atol
    n = y.size
    w = s.ewt
    h_ic = H0_FRACTION * (fs[F_T_END] - t0)
    oldnrm = 0.0
    for it in range(IC_MAX_ITER):
        residual(t0, y, yp, ref, res)
        st[S_NRES] += 1
        if not _all_finite(res):
            return ST_NONFINITE
        for i in range(n):
            u = yp[i] if mask[i] != 0.0 else y[i]
            w[i] = 1.0 / (rtol[i] * abs(u) + atol[i])
        if iv[I_USE_JAC] == JAC_HOOK:
            G[:, :] = 0.0
            jacobian(t0, y, yp, 0.0, ref, G)
            G2[:, :] = 0.0
            jacobian(t0, y, yp, 1.0, ref, G2)
            st[S_NJAC] += 2
            for j in range(n):
                if mask[j] != 0.0:
                    for i in range(n):
                        G[i, j] = G2[i, j] - G[i, j]
        else:
            rnorm = 0.0
            for i in range(n):
                rnorm = max(rnorm, abs(res[i]))
            for j in range(n):
                if mask[j] != 0.0:
                    # y'_j varies on the scale y_j / h_ic (h_ic ~ a first step)
                    d = SQRT_EPS * max(abs(yp[j]), 1.0 / w[j],
                                       (abs(y[j]) + atol[j]) / h_ic)
                else:
                    d = SQRT_EPS * max(abs(y[j]), 1.0 / w[j])
                for _ in range(IC_FD_TRIES):
                    change = _ic_column(residual, ref, t0, y, yp, res, mask[j] != 0.0,
                                        j, d, G, tmp)
                    st[S_NRES] += 1
                    # accept unless the change drowned in the rounding of F
                    if change > IC_FD_NOISE * EPS * rnorm:
                        break
                    d *= IC_FD_GROW
            st[S_NJAC] += 1
        if not _matrix_finite(G):
            return ST_NONFINITE
        st[S_NLU] += 1
        if lu_factor(G, s.piv) != 0:
            return ST_IC_SINGULAR
        for i in range(n):
            delta[i] = res[i]
        lu_solve(G, s.piv, delta)
        lam = 1.0
        ok = False
        for _ in range(IC_MAX_BACKTRACK):
            for i in range(n):
                if mask[i] != 0.0:
                    s.yyp[i] = yp[i] - lam * delta[i]
                    s.yy[i] = y[i]
                else:
                    s.yy[i] = y[i] - lam * delta[i]
                    s.yyp[i] = yp[i]
            residual(t0, s.yy, s.yyp, ref, tmp)
            st[S_NRES] += 1
            if _all_finite(tmp):
                ok = True
                break
            lam *= 0.5
        if not ok:
            return ST_NONFINITE
        for i in range(n):
            y[i] = s.yy[i]
            yp[i] = s.yyp[i]
        delnrm = lam * _wrms(delta, w)
        if not np.isfinite(delnrm):
            return ST_NONFINITE
        if delnrm <= IC_TOL:
            return 0
        if it > 0 and delnrm < oldnrm:
            rate = delnrm / oldnrm
            if rate / (1.0 - rate) * delnrm <= IC_TOL:
                return 0
        oldnrm = delnrm
    return ST_IC_FAILED


@jit_entry
def _aligned_step(h, h_used, r, snap):
    """The step that reaches t_end, r (s) ahead, in equal steps no longer than the
    step h the error control proposed: r / ceil(r / h). The last accepted step h_used
    is kept, to the bit, where it reaches t_end in as many steps (within `snap`, half
    of which _step stretches or cuts the last one by, TSTOP_FUZZ): the steps at
    constant h and order then go on counting across t_end (_set_coeffs), so that the
    order can rise (_complete_step) where t_end is a held breakpoint, the segments
    are equal and the step a sample takes is the same every sample. ALIGN_FUZZ: a
    ratio r / h within it above an integer is that integer (rounding)."""
    if h >= r:
        if h_used > 0.0 and abs(r - h_used) <= 0.5 * snap:
            return h_used
        return r
    n = np.ceil(r / h * (1.0 - ALIGN_FUZZ))
    if h_used > 0.0 and h >= h_used:
        m = np.floor(r / h_used + 0.5)
        if m == n and abs(r - m * h_used) <= 0.5 * snap:
            return h_used
    return r / n


@jit_entry
def next_step_size(s, tn, outputs_done, budget_used):
    """The head of a step loop once the outputs up to t_n are filled (bdf_advance,
    galpha_kernels.galpha_advance): marks the run finished at t_end, and returns
    False when the loop stops (not running, outputs done, step budget used, or the
    step below the floor h_min: ST_STEP_TOO_SMALL); else sets fs[F_H], the step from
    t_n (the fixed step if there is one), cut or stretched to end at t_end (with
    s.iv[I_ALIGN] set, spread to reach it in equal steps: _aligned_step), and
    returns True."""
    fs, iv = s.fs, s.iv
    t_end = fs[F_T_END]
    if iv[I_STATUS] == ST_RUNNING and tn >= t_end:
        iv[I_STATUS] = ST_FINISHED
    if iv[I_STATUS] != ST_RUNNING or outputs_done or budget_used:
        return False
    if fs[F_H_FIXED] > 0.0:
        fs[F_H] = fs[F_H_FIXED]
    elif iv[I_ALIGN] != 0:
        fs[F_H] = _aligned_step(fs[F_H], fs[F_HUSED], t_end - tn,
                                TSTOP_FUZZ * EPS * abs(t_end))
    if tn + fs[F_H] * (1.0 + TSTOP_FUZZ * EPS) >= t_end and iv[I_ALIGN] == 0:
        fs[F_H] = t_end - tn
    elif fs[F_H] < max(fs[F_H_MIN], H_MIN_UROUND * EPS * abs(tn)):
        fs[F_T_FAIL] = tn
        fs[F_H_FAIL] = fs[F_H]
        iv[I_STATUS] = ST_STEP_TOO_SMALL
        return False
    return True


@jit_entry
def bdf_advance(residual, jacobian, mass, switches, args, s, t_out, y_out, yp_out,
                max_steps):
    """Step until the outputs t_out (increasing, >= t_n - h_used, <= t_end) are all
    filled (an empty t_out: until t_end), t_end is reached, max_steps steps were
    taken, or a step fails. Outputs at or before t_n are filled first, also after
    the run has finished or failed.

    residual(t, y, yp, args, out) writes F (size n); jacobian(t, y, yp, cj, args, G)
    writes dF/dy + cj dF/dy' into the zeroed G (n x n) and is used when
    s.iv[I_USE_JAC] = JAC_HOOK (with JAC_HOOK_COLUMNS it adds the columns flagged in
    s.jcol into G, whose other columns hold differences); mass(t, y, yp, args, A)
    writes dF_r/dy'_r of the second-order form's remaining rows and columns into the
    zeroed A and is used when s.iv[I_USE_MASS] = 1 (_reform_with_mass). y_out, yp_out
    (len(t_out), n) receive the interpolated solution. Steps never pass t_end (the last one
    ends exactly there). Returns the number of outputs filled; s.iv[I_STATUS] says RUNNING,
    FINISHED or the failure, or SWITCHED: a switch function (switches(t, y, args,
    g), s.gsw.size of them) changed sign on the last step (switch_crossed); the
    outputs after the step's start are then left unfilled.

    The functions receive args as a reference (flexmbs.runtime.tuple_ref): args[i]
    with a constant i reads member i.
    """
    ref = tuple_ref(args)
    sref = tuple_ref(s)
    nout = t_out.size
    i_out = 0
    nstep = 0
    while True:
        tn = s.fs[F_T]
        while i_out < nout and t_out[i_out] <= tn:
            bdf_interpolate(s, t_out[i_out], y_out[i_out], yp_out[i_out])
            i_out += 1
        if not next_step_size(sref, tn, i_out == nout and nout > 0, nstep >= max_steps):
            return i_out
        flag = _step(residual, jacobian, mass, ref, sref)
        nstep += 1
        if flag < 0:
            s.iv[I_STATUS] = flag
            return i_out
        if switch_crossed(switches, ref, sref):
            s.iv[I_STATUS] = ST_SWITCHED
            return i_out
        _set_weights(s.y, s.rtol, s.atol, s.ewt)


@jit_entry
def bdf_advance_held(functions, args, s, t_out, y_out, yp_out, max_steps):
    """bdf_advance with its four functions in one tuple (residual, jacobian, mass,
    switches), called from Python with that tuple and the state s held by reference
    (flexmbs.runtime.tuple_ref.held_ref), as the model's args are: the call converts no
    array and no function (numba converts a first-class function argument through
    Python on every call, about 10 us each, and the state's 43 arrays one by one)."""
    return bdf_advance(functions[0], functions[1], functions[2], functions[3], args, s,
                       t_out, y_out, yp_out, max_steps)
