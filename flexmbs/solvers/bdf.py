"""Variable-order (1..5), variable-step BDF integrator for F(t, y, y') = 0, with the
whole step loop in numba (kernels in flexmbs.solvers.bdf_kernels, method and
references in docs/bdf.md).

The method is DASSL's and IDA's fixed-leading-coefficient BDF in modified
divided-difference form (Brenan, Campbell & Petzold 1989, ch. 5; SUNDIALS IDA): a
predictor from the divided differences, a modified Newton corrector on
G = dF/dy + cj dF/dy' (dense LU, reused across steps), a local error test on the
differential components only, and IDA's step and order rules. Outputs come from the
interpolating polynomial; steps never pass t_end.

The residual `residual(t, y, yp, args, out)` and the optional Jacobian
`jacobian(t, y, yp, cj, args, out)` are numba-jitted functions; `args` is any tuple
that numba can type (arrays, namedtuples of arrays, scalars). Inside the step loop they
receive it by reference (flexmbs.runtime.tuple_ref.TupleRef: one pointer, not the
tuple's members, on each call), which supports `args[i]` with a constant i; from
Python (the consistency check of second_order) they receive the tuple itself, so the
functions must use args only through constant indices.
They reach the compiled loop as first-class functions (numba `FunctionType`), through
the entry point of an explicitly compiled signature: a dispatcher passed as an
ordinary argument makes numba key its on-disk cache on the dispatcher's memory
address, so the whole driver would recompile at every process start. With function
types, the driver is compiled once per type of `args`, cached on disk, and shared by
every residual with that signature.

    r = solve_dae(residual, (p,), (0.0, 10.0), y0, yp0, rtol=1e-6, atol=1e-9,
                  t_eval=np.linspace(0, 10, 101))
    r.t, r.y, r.yp, r.success, r.message, r.nsteps
"""

import time
from dataclasses import dataclass

import numba
import numpy as np
from numba.core import types
from numba.experimental.function_type import _get_wrapper_address

from ..runtime.tuple_ref import HeldTuple, TupleRef, entry_point, held_ref
from . import bdf_kernels as _k
from .bdf_arguments import (
    check_functions,
    checked_columns,
    checked_layout,
    checked_masks,
    checked_quadrature,
    checked_second_order_count,
    checked_span,
    checked_steps,
    checked_tolerance,
)

__all__ = ["BDF", "DaeResult", "solve_dae", "STATUS_MESSAGES", "MAX_ORDER",
           "EPCON", "CHUNK_STEPS"]

MAX_ORDER = _k.MAXORD      # highest order available
EPCON = 0.33               # Newton tolerance on the weighted correction (IDA epcon)
CHUNK_STEPS = 5000         # steps per call of the compiled loop in solve_dae
NO_STEP_LIMIT = 2 ** 62    # max_steps when there is no budget

STATUS_FINISHED = _k.ST_FINISHED
STATUS_RUNNING = _k.ST_RUNNING
STATUS_SWITCHED = _k.ST_SWITCHED
STATUS_TOO_MANY_STEPS = -8  # set here, by solve_dae's step budget

STATUS_MESSAGES = {
    _k.ST_FINISHED: "the integration reached t_end",
    _k.ST_RUNNING: "the integration is running",
    _k.ST_SWITCHED: "a switch function changed sign on the step to t = {tn:.6g}",
    _k.ST_ERR_FAILS: ("the local error test failed {n} times in one step at "
                      "t = {t:.6g} (h = {h:.3g})"),
    _k.ST_CONV_FAILS: ("the Newton iteration failed to converge {n} times in one "
                       "step at t = {t:.6g} (h = {h:.3g})"),
    _k.ST_SINGULAR: ("the iteration matrix dF/dy + cj dF/dy' is singular at "
                     "t = {t:.6g} (h = {h:.3g})"),
    _k.ST_STEP_TOO_SMALL: ("the step size fell below the floor h_min at t = {t:.6g} "
                           "(h = {h:.3g})"),
    _k.ST_NONFINITE: ("the residual (or its Jacobian) is not finite (NaN or inf) "
                      "at t = {t:.6g} (h = {h:.3g})"),
    _k.ST_IC_FAILED: ("consistent initial values: Newton's method did not converge "
                      "in {nic} iterations at t0 = {t0:.6g}"),
    _k.ST_IC_SINGULAR: ("consistent initial values: the matrix [dF/dy' for "
                        "differential, dF/dy for algebraic components] is singular at "
                        "t0 = {t0:.6g}; for a problem of index > 1 give consistent "
                        "y0, yp0 and calc_ic=False"),
    STATUS_TOO_MANY_STEPS: "the step budget max_steps = {max_steps} was used up "
                           "at t = {t:.6g}",
}

_F8 = types.float64
_VEC = types.Array(types.float64, 1, "C")
_MAT = types.Array(types.float64, 2, "C")
_JIT = hasattr(_k.bdf_advance, "compile")   # False under NUMBA_DISABLE_JIT=1


def _function_type(fn, argtypes, name):
    """The numba FunctionType of the jitted `fn` compiled for `argtypes`."""
    try:
        fn.compile(argtypes)
    except Exception as exc:
        raise ValueError(f"{name} could not be compiled for the argument types "
                         f"{argtypes}: {exc}") from exc
    ret = fn.overloads[tuple(argtypes)].signature.return_type
    return types.FunctionType(ret(*argtypes))


class _CompiledFunction:
    """The compiled code of a jitted function for one signature, as a first-class
    function value (numba's wrapper-address protocol).

    Passing the dispatcher itself makes each call of an entry point look its compiled
    code up again: numba hashes the signature, whose `args` type spans every array of
    a model (about 0.2 ms per function and call, several ms per second of a small
    model's run, which calls the step loop once per chunk of steps). The address is
    looked up once here; the dispatcher is kept so that the code stays alive.
    """

    def __init__(self, fn, ftype):
        self._fn = fn
        self._signature = ftype.signature
        self._address = _get_wrapper_address(fn, self._signature)

    def __wrapper_address__(self):
        return self._address

    def signature(self):
        return self._signature


def _entry(kernel, argtypes):
    """The compiled entry point of `kernel` for `argtypes` (from the on-disk cache
    when it is there). Calling it skips numba's type dispatch, so that the function
    arguments are taken as FunctionType values and not as dispatcher types."""
    if not _JIT:
        return kernel
    return kernel.compile(tuple(argtypes))


def _as_passed(args):
    """`args` as the step loop hands it to the residual, a reference to the tuple
    (flexmbs.runtime.tuple_ref), when its members are themselves held references (a model's
    (m, ws)): a call from Python then uses the residual compiled for the step loop
    instead of compiling it again for the plain tuple. Other tuples as they are."""
    if _JIT and args and all(isinstance(a, HeldTuple) for a in args):
        return held_ref(args)
    return args


@dataclass
class DaeResult:
    """Outcome of solve_dae.

    t (m,) output times reached; y, yp (m, n) solution and its derivative there;
    status 0 (t_end reached) or < 0 (failure, see STATUS_MESSAGES); message; success;
    work counters: nsteps (accepted steps), nrejected (error-test failures), nres
    (residual evaluations, finite-difference Jacobians included), njac (difference
    Jacobians), nmass (iteration matrices re-formed from the mass hook), nlu, nnewton
    (Newton iterations), nconvfail (Newton failures); order_counts (5,) accepted steps
    at orders 1..5; t_last, y_last, yp_last: the last accepted state (the state at a
    failure); wall_time (s).
    """
    t: np.ndarray
    y: np.ndarray
    yp: np.ndarray
    status: int
    message: str
    success: bool
    nsteps: int
    nres: int
    njac: int
    nmass: int
    nlu: int
    nnewton: int
    nrejected: int
    nconvfail: int
    order_counts: np.ndarray
    t_last: float
    y_last: np.ndarray
    yp_last: np.ndarray
    wall_time: float


class BDF:
    """Variable-order, variable-step BDF integrator for F(t, y, y') = 0.

    Parameters
    ----------
    residual : numba-jitted ``residual(t, y, yp, args, out)`` writing F (size n) into
        `out`; its return value is ignored.
    args : tuple for `residual`, `jacobian` and `mass`, which read it as `args[i]`
        (i a constant): in the step loop they receive a reference to it.
    t0, t_end : start and stop time, t_end > t0; no step passes t_end.
    y0 : (n,) initial state. yp0 : (n,) initial derivative, or a guess when
        `calc_ic` (None: zeros).
    rtol, atol : relative and absolute tolerances, scalars or (n,) arrays; the error
        weights are 1 / (rtol |y_i| + atol_i). rtol >= 0, atol > 0.
    algebraic : (n,) bool/int mask, true for algebraic components: they are solved
        for in the corrector but left out of the error test and the order choice
        (IDA's suppressalg), and are the y-unknowns of the initial-value computation.
    jacobian : optional numba-jitted ``jacobian(t, y, yp, cj, args, out)`` adding
        dF/dy + cj dF/dy' into the zeroed (n, n) `out`; None: finite differences.
    jacobian_columns : with `jacobian`, an (n,) bool mask of the columns the hook
        supplies (analytic blocks): the other columns come from differences (one
        residual each), the flagged ones are zeroed and the hook adds into them. None:
        the hook supplies every column.
    second_order : ns >= 0; ns > 0 declares that y = [q, u, ...] with q, u of size ns
        and F_i = y'_i - y_{ns+i} for i < ns (positions whose speeds are the next ns
        unknowns, as in mechanics). The Newton iteration then eliminates q: a
        Jacobian costs n - ns residuals instead of n and the LU is (n - ns)^2 (see
        bdf_kernels._setup_second_order). Checked on the residual at t0.
    mass : optional numba-jitted ``mass(t, y, yp, args, out)``: writes A =
        dF_r/dy'_r into the zeroed (n - ns, n - ns) `out`, the derivative of the rows
        after the first ns with respect to y' after the first ns (for F_u = M(q) u' -
        f(q, u): the mass matrix M, and the identity on the rows of quadratures
        z' - g); with ns = 0 the whole dF/dy'. Between difference Jacobians the
        (reduced) iteration matrix is then re-formed as cj A(y) + R, R the rest of the
        last difference Jacobian, without residuals (bdf_kernels._reform_with_mass):
        a change of step, which changes cj, costs no residuals. Parts of dF/dy' that
        A leaves out are kept in R at the cj of the differences. A must be that
        derivative: a matrix far too large gives small Newton updates that the
        convergence test takes for convergence.
    max_order : 1..5.
    h0 : first step (None: IDA's choice). h_max : largest step. h_min : step floor
        (the run fails when a retried step would be smaller; 4 eps |t| is always
        the floor).
    calc_ic : compute consistent initial values first (IDA's YA_YDP_INIT: y'_d and
        y_a from F(t0, y, y') = 0 with the differential y_d fixed; index 1 only).
    epcon : Newton tolerance on the weighted correction norm.
    fixed_step : constant step without error control (order rises one per step to
        max_order and stays), for convergence studies.
    history : with `fixed_step`, (k, n) states y(t0 - j fixed_step), j = 1..k, to
        start at order k at once.
    elastic_columns : with `mass` and `second_order`, an (n,) mask of the speeds of
        elastic coordinates: their columns of the iteration matrix are cj A + D +
        K / cj from the mass hook's elastic blocks (it then fills a (3 m, m) matrix:
        A, then K = dF_r/dq and D = dF_r/du on the speed columns), not differences,
        and a re-formed matrix has K / cj at the current cj.
    index2 : the algebraic components are index-2 variables (the multipliers of a
        stabilised index-2 system): their weights in the Newton convergence test are
        scaled by min(h, 1) (DASSL's index-2 scaling; bdf_kernels._wrms_newton).
    layout : with `second_order` and `elastic_columns`, (pos, dims): a bordered band
        layout of the n - ns unknowns after the positions (flexmbs.numerics.bordered_band;
        pos (n - ns,) their places, dims = [ni, nb, kd]), in which the reduced
        iteration matrix is then stored and factored, its cost linear in the
        interior unknowns. The mass hook then writes A, K and D in that packed
        storage (a (3, L) or, A alone, (1, L) array; flexmbs.dynamics.system's
        dae_mass_elastic_banded); every interior unknown must be an elastic
        column, and the columns a jacobian hook would supply are instead
        elastic columns too (cj A from the hook) or differences.
    error_test : optional (n,) bool mask of the components in the local error test
        and the order choice (None: every differential component). A mechanical
        system tests its positions and leaves out their speeds (flexmbs.solvers.
        bdf_integrator.BdfIntegrator), as the generalized-alpha driver does.
    quadrature : optional (n,) bool mask of the quadratures: differential
        components that no row of the residual reads (a mechanical system's works,
        W' = P(q, u)). They are in the Newton iteration's convergence test but not
        in its rate, which they follow (bdf_kernels._wrms_newton).
    switches : optional numba-jitted ``switches(t, y, args, out)`` writing the
        `nswitch` switch functions g(t, y) into `out`: the step loop stops after the
        step on which one changes sign (status "switched"; `interpolate` then gives
        the solution within that step, to locate the crossing: flexmbs.solvers.events).

    Numerical failure is a status ("failed") with a message, never an exception;
    invalid input raises ValueError naming the argument.
    """

    def __init__(self, residual, args, t0, y0, yp0, t_end, rtol=1e-6, atol=1e-9, *,
                 algebraic=None, jacobian=None, jacobian_columns=None,
                 second_order=0, mass=None, max_order=MAX_ORDER, h0=None,
                 h_max=np.inf, h_min=0.0, calc_ic=True, epcon=EPCON, fixed_step=None,
                 history=None, index2=False, elastic_columns=None, layout=None,
                 error_test=None, switches=None, nswitch=0, quadrature=None):
        check_functions(residual, args, jacobian, mass, switches, nswitch, _JIT)
        jcol, elastic_columns = checked_columns(
            np.size(y0), jacobian, jacobian_columns, mass, second_order, elastic_columns)
        t0, t_end, y0, yp0 = checked_span(t0, t_end, y0, yp0)
        n = y0.size
        rtol = checked_tolerance(rtol, n, "rtol")
        atol = checked_tolerance(atol, n, "atol")
        if np.any(rtol < 0):
            raise ValueError("rtol must be >= 0")
        if np.any(atol <= 0):
            raise ValueError("atol must be > 0")
        alg, etest = checked_masks(algebraic, error_test, n)
        ns = checked_second_order_count(second_order, n, alg, jcol)
        hist = checked_steps(max_order, h0, h_max, h_min, epcon, fixed_step, history, n)
        if layout is not None:
            layout = checked_layout(layout, n, ns, elastic_columns, jacobian)
        self.n = n
        self.t0 = t0
        self.t_end = t_end
        self._residual = residual
        self._jacobian = _k.no_jacobian if jacobian is None else jacobian
        self._mass = _k.no_mass if mass is None else mass
        self._switches = _k.no_switches if switches is None else switches
        self._args = args
        if ns:
            self._check_second_order(residual, args, t0, y0, yp0, ns)
        s = _k.new_state(n, ns, mass=mass is not None,
                         elastic=elastic_columns is not None, layout=layout,
                         nswitch=int(nswitch))
        self._s = s
        s.y[:] = y0
        s.yp[:] = yp0
        s.rtol[:] = rtol
        s.atol[:] = atol
        s.mask[:] = np.where(alg, 0.0, 1.0)
        if quadrature is not None:
            s.mask[checked_quadrature(quadrature, n, alg)] = _k.MASK_QUADRATURE
        s.etest[:] = np.where(etest, 1.0, 0.0)
        self._set_scalars(s, t0, t_end, h_max, h_min, epcon, fixed_step, max_order, ns,
                          index2, mass, jacobian, jcol, elastic_columns)
        self._compile_kernels()
        self._first_start(calc_ic, args, t0, fixed_step, h0, hist)

    @staticmethod
    def _set_scalars(s, t0, t_end, h_max, h_min, epcon, fixed_step, max_order, ns, index2,
                     mass, jacobian, jcol, elastic_columns):
        """The state's scalars (fs, iv) and the hooks' columns (s.jcol)."""
        fs, iv = s.fs, s.iv
        fs[_k.F_T] = t0
        fs[_k.F_T_END] = t_end
        fs[_k.F_H_MAX] = float(h_max)
        fs[_k.F_H_MIN] = float(h_min)
        fs[_k.F_EPCON] = float(epcon)
        fs[_k.F_H_FIXED] = 0.0 if fixed_step is None else float(fixed_step)
        fs[_k.F_NDIFF] = float(np.count_nonzero(s.etest))
        iv[_k.I_MAXORD] = int(max_order)
        iv[_k.I_NSECOND] = ns
        iv[_k.I_INDEX2] = 1 if index2 else 0
        iv[_k.I_USE_MASS] = 0 if mass is None else 1
        if jacobian is None:
            iv[_k.I_USE_JAC] = _k.JAC_FD
        elif jcol is None:
            iv[_k.I_USE_JAC] = _k.JAC_HOOK
        else:
            iv[_k.I_USE_JAC] = _k.JAC_HOOK_COLUMNS
            s.jcol[:] = np.where(jcol != 0, 1.0, 0.0)
        if elastic_columns is not None:
            iv[_k.I_USE_MASS] = 2
            s.jcol[np.asarray(elastic_columns) != 0] = 2.0
        iv[_k.I_STATUS] = _k.ST_RUNNING

    def _first_start(self, calc_ic, args, t0, fixed_step, h0, hist):
        """Consistent initial values (calc_ic), then the first step prepared."""
        s = self._s
        self._status = _k.ST_RUNNING
        self._last_out = -np.inf
        self.wall_time = 0.0
        start = time.perf_counter()
        if calc_ic:
            code = self._ic(*self._functions[:2], args, s, t0)
            if code < 0:
                s.iv[_k.I_STATUS] = code
                s.fs[_k.F_T_FAIL] = t0
                self._status = code
        self._started = self._status == _k.ST_RUNNING
        if self._started:
            h_start = fixed_step if fixed_step is not None else (h0 or 0.0)
            self._begin(s, t0, float(h_start), hist)
        self.y0 = s.y.copy()
        self.yp0 = s.yp.copy()
        self.wall_time += time.perf_counter() - start

    _interpolate_kernel = staticmethod(_k.bdf_interpolate)

    def _begin(self, s, t0, h_start, hist):
        """Prepare the first step (bdf_kernels.bdf_start)."""
        hist = np.ascontiguousarray(hist, dtype=float)
        if self._start_kernel is None:
            self._start_kernel = entry_point(_k.bdf_start, self._held_state, t0, h_start, hist)
        self._start_kernel(self._held_state, t0, h_start, hist)

    @staticmethod
    def _check_second_order(residual, args, t0, y0, yp0, ns):
        """ValueError unless F_i(t0, y0, y') = y'_i - y0_{ns+i} (i < ns) at a y'
        moved off yp0 (so that a residual using y'_i otherwise is caught)."""
        n = y0.size
        yp = yp0 + 1.0 + np.arange(n)
        out = np.zeros(n)
        residual(t0, y0.copy(), yp, _as_passed(args), out)
        want = yp[:ns] - y0[ns:2 * ns]
        scale = np.abs(yp[:ns]) + np.abs(y0[ns:2 * ns])
        if not np.all(np.abs(out[:ns] - want) <= 1e-12 * scale):
            raise ValueError(f"second_order={ns}: the first {ns} residuals must be "
                             f"y'_i - y_{{{ns}+i}}")

    def _compile_kernels(self):
        """Entry points of the driver and the initial-value kernel for these
        argument types (compiled once per type of args, then from the disk cache).
        The step loop is entered through its `_held` form, its functions and state
        held by reference (self._advance_args), so that a call costs a few
        microseconds whatever the size of the state."""
        self._start_kernel = None
        self._carry_kernel = None
        if not _JIT:
            self._advance = _k.bdf_advance_held
            self._ic = _k.bdf_initial_conditions
            self._functions = (self._residual, self._jacobian, self._mass,
                               self._switches)
            self._held_state = self._s
            self._advance_args = (self._functions, self._args, self._s)
            return
        targs, tstate, ftypes = self._function_types()
        self._advance = self._held_entry(_k.bdf_advance_held, targs, ftypes)
        self._ic = _entry(_k.bdf_initial_conditions, (ftypes[0], ftypes[1], targs,
                                                      tstate, _F8))

    def _held_entry(self, kernel, targs, ftypes):
        """The entry point of `kernel` (bdf_advance_held or its galpha form) for
        these types, and the held arguments it takes (self._advance_args: the
        functions' tuple, args, the state)."""
        held_functions = held_ref(self._functions, types.Tuple(ftypes))
        self._held_state = held_ref(self._s)
        self._advance_args = (held_functions, self._args, self._held_state)
        return _entry(kernel, (numba.typeof(held_functions), targs,
                               numba.typeof(self._held_state), _VEC, _MAT, _MAT,
                               types.int64))

    def _function_types(self):
        """(type of args, type of the state, the FunctionTypes of the residual, the
        Jacobian, the mass hook and the switch functions); sets self._functions to
        their compiled values."""
        try:
            targs = numba.typeof(self._args)
        except ValueError as exc:
            raise ValueError(f"args must be a tuple of values numba can type (arrays, "
                             f"scalars, namedtuples of arrays): {exc}") from exc
        tstate = numba.typeof(self._s)
        tref = TupleRef(targs)
        f_res = _function_type(self._residual, (_F8, _VEC, _VEC, tref, _VEC),
                               "residual")
        f_jac = _function_type(self._jacobian, (_F8, _VEC, _VEC, _F8, tref, _MAT),
                               "jacobian")
        f_mass = _function_type(self._mass, (_F8, _VEC, _VEC, tref, _MAT), "mass")
        f_sw = _function_type(self._switches, (_F8, _VEC, tref, _VEC), "switches")
        self._functions = (_CompiledFunction(self._residual, f_res),
                           _CompiledFunction(self._jacobian, f_jac),
                           _CompiledFunction(self._mass, f_mass),
                           _CompiledFunction(self._switches, f_sw))
        return targs, tstate, (f_res, f_jac, f_mass, f_sw)

    # ---- state ------------------------------------------------------------------
    @property
    def t(self):
        """Time of the last accepted step."""
        return float(self._s.fs[_k.F_T])

    @property
    def y(self):
        """State at t (a copy)."""
        return self._s.y.copy()

    @property
    def yp(self):
        """Derivative at t (a copy)."""
        return self._s.yp.copy()

    @property
    def t_fail(self):
        """The time (s) the failed step was to reach, None unless the driver failed."""
        return float(self._s.fs[_k.F_T_FAIL]) if self.status == "failed" else None

    @property
    def status_code(self):
        """1 running, 0 finished, < 0 failed (keys of STATUS_MESSAGES)."""
        return int(self._status)

    @property
    def status(self):
        """"running", "finished", "switched" (stopped after the step on which a
        switch function changed sign) or "failed"."""
        if self._status == _k.ST_RUNNING:
            return "running"
        if self._status == _k.ST_SWITCHED:
            return "switched"
        return "finished" if self._status == _k.ST_FINISHED else "failed"

    @property
    def message(self):
        """Why the run stopped ("" while running)."""
        if self._status == _k.ST_RUNNING:
            return ""
        return STATUS_MESSAGES[self._status].format(
            t=self._s.fs[_k.F_T_FAIL], h=self._s.fs[_k.F_H_FAIL], t0=self.t0, tn=self.t,
            n=(_k.MAX_ERR_FAILS if self._status == _k.ST_ERR_FAILS
               else _k.MAX_CONV_FAILS),
            nic=_k.IC_MAX_ITER, max_steps=getattr(self, "_max_steps", 0))

    def statistics(self):
        """Work counters: nsteps, nrejected, nres, njac (difference Jacobians), nmass
        (iteration matrices re-formed from the mass hook), nlu, nnewton, nconvfail,
        order_counts (orders 1..5), h_last, order_last, wall_time."""
        st = self._s.stats
        return {"nsteps": int(st[_k.S_NSTEPS]), "nrejected": int(st[_k.S_NREJECTED]),
                "nres": int(st[_k.S_NRES]), "njac": int(st[_k.S_NJAC]),
                "nmass": int(st[_k.S_NMASS]),
                "nlu": int(st[_k.S_NLU]), "nnewton": int(st[_k.S_NNEWTON]),
                "nconvfail": int(st[_k.S_NCONVFAIL]),
                "order_counts": st[_k.S_ORDER:_k.S_ORDER + MAX_ORDER].copy(),
                "h_last": float(self._s.fs[_k.F_HUSED]),
                "order_last": int(self._s.iv[_k.I_KUSED]),
                "wall_time": self.wall_time}

    # ---- stepping ---------------------------------------------------------------
    @property
    def step_start(self):
        """Start time (s) of the last accepted step (t itself before the first)."""
        return self.t - float(self._s.fs[_k.F_HUSED])

    def interpolate(self, t):
        """(y(t), y'(t)) on the last accepted step, step_start <= t <= self.t."""
        y = np.zeros(self.n)
        yp = np.zeros(self.n)
        self._interpolate_kernel(self._s, float(t), y, yp)
        return y, yp

    @property
    def switch_values(self):
        """The switch functions at t (the last accepted step), a copy."""
        return self._s.gnew.copy() if self.status == "switched" else self._s.gsw.copy()

    @property
    def switch_reference(self):
        """The switch functions' values at the start of the last step, against which
        it checked their signs (a copy)."""
        return self._s.gsw.copy()

    def set_switch_reference(self, g):
        """The switch functions' values at the start of the next step, against which
        the step loop checks their signs (after a restart at a crossing, the values
        on each function's new side)."""
        self._s.gsw[:] = g

    def go_on_across_jump(self, t_end, taylor):
        """Go on from t, where the driver ended, towards a later t_end (s), after the
        forces jumped at t with the state continuous (a held input that changed):
        taylor (K, n) holds the derivatives d^(m)(t), m = 1..K, of the difference
        d between the solutions after and before the jump (d' the jump of y'; K =
        `order_last` + 1 carries it exactly through the history's polynomial). The
        history is carried across the jump (bdf_kernels.bdf_carry_jump); the order,
        the step and the iteration matrix are kept. Counters go on."""
        t_end = float(t_end)
        if not t_end > self.t:
            raise ValueError(f"t_end must be after t = {self.t}, got {t_end}")
        s = self._s
        if not (type(taylor) is np.ndarray and taylor.ndim == 2 and taylor.dtype == np.float64
                and taylor.flags.c_contiguous):
            taylor = np.ascontiguousarray(np.atleast_2d(taylor), dtype=float)
        if taylor.shape[1] != self.n:
            raise ValueError(f"taylor must have {self.n} columns, got {taylor.shape}")
        if self._carry_kernel is None:
            self._carry_kernel = entry_point(_k.bdf_carry_jump, self._held_state, taylor)
        start = time.perf_counter()
        self._carry_kernel(self._held_state, taylor)
        s.fs[_k.F_T_END] = t_end
        s.iv[_k.I_STATUS] = _k.ST_RUNNING
        self.t_end = t_end
        self._status = _k.ST_RUNNING
        self.wall_time += time.perf_counter() - start

    def advance(self, t_out, max_steps=None):
        """Integrate until the solution at the times `t_out` is known.

        t_out : increasing times in [t0, t_end], after the last time delivered and
            not before t - h_used (the span of the last step).
        max_steps : step budget of this call (None: no budget).

        Returns (n_filled, Y, YP): the solution and its derivative (n_filled, n) at
        t_out[:n_filled], from the interpolating polynomial. n_filled < len(t_out)
        when the budget ran out (status still "running"), or the run failed or
        finished (see status, message).
        """
        t_out = np.ascontiguousarray(np.asarray(t_out, dtype=float).reshape(-1))
        m = t_out.size
        if m:
            if not np.all(np.isfinite(t_out)) or np.any(np.diff(t_out) <= 0):
                raise ValueError("t_out must be finite and strictly increasing")
            lo = max(self.t - float(self._s.fs[_k.F_HUSED]), self.t0)
            if t_out[0] <= self._last_out or t_out[0] < lo:
                raise ValueError(f"t_out must start after the last output time and "
                                 f"at or after {lo!r}, got {t_out[0]!r}")
            if t_out[-1] > self.t_end:
                raise ValueError(f"t_out must not pass t_end = {self.t_end!r}, got "
                                 f"{t_out[-1]!r}")
        if max_steps is None:
            max_steps = NO_STEP_LIMIT
        elif not (int(max_steps) == max_steps and max_steps >= 0):
            raise ValueError(f"max_steps must be None or an integer >= 0, "
                             f"got {max_steps}")
        Y = np.zeros((m, self.n))
        YP = np.zeros((m, self.n))
        if not self._started:
            return 0, Y[:0], YP[:0]          # initial values failed: nothing to give
        # after the end or a failure, the last step still serves outputs up to t
        start = time.perf_counter()
        nf = int(self._advance(*self._advance_args, t_out, Y, YP, int(max_steps)))
        self.wall_time += time.perf_counter() - start
        self._status = int(self._s.iv[_k.I_STATUS])
        if nf:
            self._last_out = t_out[nf - 1]
        return nf, Y[:nf], YP[:nf]

    def advance_into(self, t_out, y_out, yp_out, max_steps=NO_STEP_LIMIT):
        """advance(t_out, max_steps) (no budget by default), into the caller's arrays y_out,
        yp_out (len(t_out), n, float64, C order) and without checking its arguments:
        the caller keeps advance's contract (t_out float64, increasing, after the
        last output and within the last step's start and t_end). For a caller that
        asks for one output at a time (flexmbs.Simulator): the call costs what the
        steps cost. Returns the number of outputs filled."""
        if not self._started:
            return 0
        start = time.perf_counter()
        nf = int(self._advance(*self._advance_args, t_out, y_out, yp_out, max_steps))
        self.wall_time += time.perf_counter() - start
        self._status = int(self._s.iv[_k.I_STATUS])
        if nf:
            self._last_out = t_out[nf - 1]
        return nf

    def _give_up(self, code, max_steps):
        """Mark the run failed with a status set on the Python side."""
        self._status = code
        self._s.iv[_k.I_STATUS] = code
        self._s.fs[_k.F_T_FAIL] = self.t
        self._max_steps = max_steps


def solve_dae(residual, args, t_span, y0, yp0, rtol, atol, algebraic=None,
              t_eval=None, jacobian=None, max_order=MAX_ORDER, h0=None, h_max=np.inf,
              *, jacobian_columns=None, second_order=0, mass=None, h_min=0.0,
              calc_ic=True, epcon=EPCON, fixed_step=None, history=None,
              max_steps=None, progress=None):
    """Solve F(t, y, y') = 0 on t_span = (t0, t_end) with the BDF integrator.

    Arguments as for BDF; t_eval: increasing output times in t_span (None: t0 and
    t_end); max_steps: total step budget (None: none; when used up, status -8);
    progress: None or a callable progress(t, nsteps) called between chunks of
    CHUNK_STEPS steps. Returns a DaeResult with the outputs reached.
    """
    if len(t_span) != 2:
        raise ValueError(f"t_span must be (t0, t_end), got {t_span!r}")
    t0, t_end = float(t_span[0]), float(t_span[1])
    solver = BDF(residual, args, t0, y0, yp0, t_end, rtol, atol, algebraic=algebraic,
                 jacobian=jacobian, jacobian_columns=jacobian_columns,
                 second_order=second_order, mass=mass, max_order=max_order, h0=h0,
                 h_max=h_max, h_min=h_min, calc_ic=calc_ic, epcon=epcon, fixed_step=fixed_step,
                 history=history)
    if t_eval is None:
        t_eval = np.array([t0, t_end])
    t_eval = np.asarray(t_eval, dtype=float).reshape(-1)
    if t_eval.size and (t_eval[0] < t0 or t_eval[-1] > t_end
                        or np.any(np.diff(t_eval) <= 0)):
        raise ValueError("t_eval must be strictly increasing and within t_span")
    if max_steps is not None and not (int(max_steps) == max_steps and max_steps > 0):
        raise ValueError(f"max_steps must be None or a positive integer, got "
                         f"{max_steps}")
    budget = NO_STEP_LIMIT if max_steps is None else int(max_steps)
    n = solver.n
    ys, yps = [np.zeros((0, n))], [np.zeros((0, n))]
    done = 0
    while solver.status == "running":
        used = solver.statistics()["nsteps"]
        if used >= budget:
            solver._give_up(STATUS_TOO_MANY_STEPS, budget)
            break
        # after the last output the loop runs on to t_end (no more outputs)
        chunk = min(CHUNK_STEPS, budget - used)
        nf, Y, YP = solver.advance(t_eval[done:], chunk)
        ys.append(Y)
        yps.append(YP)
        done += nf
        if progress is not None:
            progress(solver.t, solver.statistics()["nsteps"])
    st = solver.statistics()
    code = solver.status_code
    return DaeResult(
        t=t_eval[:done].copy(), y=np.concatenate(ys), yp=np.concatenate(yps),
        status=code, message=solver.message, success=code == STATUS_FINISHED,
        nsteps=st["nsteps"], nres=st["nres"], njac=st["njac"], nmass=st["nmass"],
        nlu=st["nlu"], nnewton=st["nnewton"], nrejected=st["nrejected"], nconvfail=st["nconvfail"],
        order_counts=st["order_counts"], t_last=solver.t, y_last=solver.y,
        yp_last=solver.yp, wall_time=solver.wall_time)
