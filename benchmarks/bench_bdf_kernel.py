r"""The BDF integrator's own cost (flexmbs.solvers.bdf, docs/explanation/bdf.md): time
per step, fixed costs per call, and its work on IDA's Robertson example next to IDA's.

    FLEXMBS_CACHE_DIR=/tmp/fc_bench .venv/bin/python benchmarks/bench_bdf_kernel.py \
        --json benchmarks/results/bdf_kernel.json
    .venv/bin/python benchmarks/bench_bdf_kernel.py --table benchmarks/results/bdf_kernel.json

One process. Every residual takes args = (p,) with p a float64 array, so one compiled
step loop serves them all; each problem is solved once before anything is timed (the
residuals compile, the loop loads from the cache). Run times are the best of
--repeats runs (the counters are the same in every run); per-call costs are the median
over --calls calls.

1. van der Pol, mu = 1000 (y1' = y2, y2' = mu (1 - y1^2) y2 - y1), y(0) = (2, 0), over
   t = 0..3000 (two relaxation periods), rtol = atol = 1e-6, 31 outputs, Jacobians by
   differences, as tests/test_bdf.py poses it: `solve_dae`'s steps, residuals,
   Jacobians, Newton iterations, rejected steps; the time inside its step loop
   (DaeResult.wall_time, the `advance` calls) and of the whole call; microseconds per
   step from the step loop's time.
2. The same van der Pol with scipy's `solve_ivp(method="BDF")` at the same rtol and atol,
   its own difference Jacobian, every step stored (t_eval None; outputs do not change
   its steps): steps (len(t) - 1), residuals (nfev), Jacobians (njev), LU
   factorizations, the call's time, microseconds per step, and both ratios to flexmbs
   (per step, per run).
3. The planar pendulum in index-2 GGL form (n = 6: x, z, vx, vz and the multipliers
   lambda, mu, out of the error test), released at rest from 1 rad, over 10 s at
   rtol = atol = 1e-8, Newton tolerance epcon = 1e-3, 1001 outputs (tests/test_bdf.py's
   setting): one `solve_dae` call as in 1, and the same run one step per
   `BDF.advance(max_steps=1)` call (the test's loop), microseconds per call.
4. Fixed costs, median of --calls calls: a `solve_dae` call on y' = -y (n = 1) over
   t = 0..1 at rtol 1e-3, atol 1e-6 (whole call, and the part outside the step loop:
   checking and typing the arguments, building the state, the result); a
   `BDF.advance` call that takes no step (one output time inside the last step of the
   pendulum, interpolated).
5. Robertson's kinetics as IDA's example idaRoberts_dns poses it (SUNDIALS,
   examples/ida/serial/idaRoberts_dns.c): F = (y1' + 0.04 y1 - 1e4 y2 y3,
   y2' - 0.04 y1 + 1e4 y2 y3 + 3e7 y2^2, y1 + y2 + y3 - 1) with the first two rows
   negated and summed in the example's order (its resrob) and its Jacobian (jacrob),
   y(0) = (1, 0, 0), y'(0) = (-0.04, 0.04, 0) given (no initial-value computation),
   rtol 1e-4, atol (1e-8, 1e-6, 1e-6), y3 in the error test, outputs at 0.4 10^k,
   k = 0..11 (to 4e10); and the same with F written as above (the rows' terms in
   another order, equal up to rounding). flexmbs' counters (its last step ends at
   4e10), and IDA's from scikit-sundae in this process: the dense linear solver, the
   same residual and Jacobian as Python callbacks (their numba functions' Python
   code), IDA's normal mode (one internal step at a time until a step passes the
   output time, then IDA's interpolation there, so its last step passes 4e10).
   scikit-sundae gives IDA's residual and Jacobian counts; the steps are the one-step
   calls that advance IDA's time, and its rejected steps (error-test and Newton
   failures together) are the attempts beyond the steps, an attempt being a run of
   residual calls at one time. The example's root functions (y1 = 1e-4, y3 = 0.01) are
   left out on both sides (flexmbs has no root finding). IDA_PUBLISHED holds the
   counters of the example's published output (SUNDIALS,
   examples/ida/serial/idaRoberts_dns.out, with these tolerances and the root
   functions), for comparison.
"""

import argparse
import statistics
import sys
import time

import numpy as np
from peers import begin, finish, grouped, log, significant

from flexmbs.runtime.config import jit
from flexmbs.solvers.bdf import BDF, solve_dae

VDP_MU, VDP_T, VDP_TOL = 1000.0, 3000.0, 1e-6
VDP_TIMES = np.linspace(0.0, VDP_T, 31)
PEND = np.array([1.0, 1.0, 9.81])            # m (kg), L (m), g (m/s^2)
PEND_T, PEND_TOL, PEND_EPCON, PEND_THETA = 10.0, 1e-8, 1e-3, 1.0
PEND_TIMES = np.linspace(0.0, PEND_T, 1001)
DECAY_T, DECAY_RTOL, DECAY_ATOL = 1.0, 1e-3, 1e-6
NO_PARAMETERS = np.zeros(1)             # the args of the residuals that take none
ROB_Y0, ROB_YP0 = np.array([1.0, 0.0, 0.0]), np.array([-0.04, 0.04, 0.0])
ROB_RTOL, ROB_ATOL = 1e-4, np.array([1e-8, 1e-6, 1e-6])
ROB_TIMES = 0.4 * 10.0 ** np.arange(12)
IDA_PUBLISHED = {"source": "SUNDIALS examples/ida/serial/idaRoberts_dns.out",
                 "steps": 362, "residuals": 537, "jacobians": 60, "newton": 537,
                 "error_test_failures": 15, "step_newton_failures": 0}


@jit
def van_der_pol(t, y, yp, args, out):
    """y1' = y2, y2' = mu (1 - y1^2) y2 - y1; args[0] = [mu]."""
    mu = args[0][0]
    out[0] = yp[0] - y[1]
    out[1] = yp[1] - mu * (1.0 - y[0] * y[0]) * y[1] + y[0]


@jit
def pendulum_ggl(t, y, yp, args, out):
    """Planar pendulum, index-2 GGL form, y = [x, z, vx, vz, lambda, mu]:
    q' = u + G^T mu, m u' + G^T lambda = f, x^2 + z^2 - L^2 = 0, G u = 0,
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
def decay(t, y, yp, args, out):
    """y' = -k y; args[0] = [k]."""
    out[0] = yp[0] + args[0][0] * y[0]


@jit
def robertson(t, yy, yp, args, rr):
    """Robertson's kinetics as idaRoberts_dns writes its residual (resrob), term for
    term: the first two rows are -(y' + 0.04 y1 - ...); args unused."""
    r0 = -0.04 * yy[0] + 1.0e4 * yy[1] * yy[2]
    rr[1] = -r0 - 3.0e7 * yy[1] * yy[1] - yp[1]
    rr[0] = r0 - yp[0]
    rr[2] = yy[0] + yy[1] + yy[2] - 1.0


@jit
def robertson_jacobian(t, yy, yp, cj, args, jj):
    """dF/dy + cj dF/dy' of `robertson`, as idaRoberts_dns's jacrob."""
    jj[0, 0] = -0.04 - cj
    jj[1, 0] = 0.04
    jj[2, 0] = 1.0
    jj[0, 1] = 1.0e4 * yy[2]
    jj[1, 1] = -1.0e4 * yy[2] - 6.0e7 * yy[1] - cj
    jj[2, 1] = 1.0
    jj[0, 2] = 1.0e4 * yy[1]
    jj[1, 2] = -1.0e4 * yy[1]
    jj[2, 2] = 1.0


@jit
def robertson_reordered(t, y, yp, args, out):
    """The same F with its first two rows negated and summed in another order,
    y' + 0.04 y1 - 1e4 y2 y3 and y2' - 0.04 y1 + 1e4 y2 y3 + 3e7 y2^2 (tests/test_bdf.py's
    form): equal to `robertson` up to rounding."""
    out[0] = yp[0] + 0.04 * y[0] - 1.0e4 * y[1] * y[2]
    out[1] = yp[1] - 0.04 * y[0] + 1.0e4 * y[1] * y[2] + 3.0e7 * y[1] * y[1]
    out[2] = y[0] + y[1] + y[2] - 1.0


@jit
def robertson_reordered_jacobian(t, y, yp, cj, args, out):
    """dF/dy + cj dF/dy' of `robertson_reordered`."""
    out[0, 0] = cj + 0.04
    out[0, 1] = -1.0e4 * y[2]
    out[0, 2] = -1.0e4 * y[1]
    out[1, 0] = -0.04
    out[1, 1] = cj + 1.0e4 * y[2] + 6.0e7 * y[1]
    out[1, 2] = 1.0e4 * y[1]
    out[2, 0] = 1.0
    out[2, 1] = 1.0
    out[2, 2] = 1.0


ROBERTSON_FORMS = {"example": (robertson, robertson_jacobian),
                   "reordered": (robertson_reordered, robertson_reordered_jacobian)}
FORM_NAMES = {"example": "the example's residual", "reordered": "the residual reordered"}


def pendulum_start(theta):
    """Consistent y0, y'0 of the pendulum at rest at the angle theta (rad)."""
    m, length, grav = PEND
    x, z = length * np.sin(theta), -length * np.cos(theta)
    lam = -m * grav * z / (2 * length ** 2)
    y0 = np.array([x, z, 0.0, 0.0, lam, 0.0])
    yp0 = np.array([0.0, 0.0, -2 * x * lam / m, -2 * z * lam / m - grav, 0.0, 0.0])
    return y0, yp0


def solve_van_der_pol():
    return solve_dae(van_der_pol, (np.array([VDP_MU]),), (0.0, VDP_T),
                     np.array([2.0, 0.0]), None, VDP_TOL, VDP_TOL, t_eval=VDP_TIMES)


PEND_KW = dict(algebraic=np.array([0, 0, 0, 0, 1, 1]), calc_ic=False, epcon=PEND_EPCON)


def solve_pendulum():
    y0, yp0 = pendulum_start(PEND_THETA)
    return solve_dae(pendulum_ggl, (PEND,), (0.0, PEND_T), y0, yp0, PEND_TOL, PEND_TOL,
                     t_eval=PEND_TIMES, **PEND_KW)


def pendulum_solver():
    y0, yp0 = pendulum_start(PEND_THETA)
    return BDF(pendulum_ggl, (PEND,), 0.0, y0, yp0, PEND_T, PEND_TOL, PEND_TOL, **PEND_KW)


def solve_decay():
    return solve_dae(decay, (np.array([1.0]),), (0.0, DECAY_T), np.array([1.0]), None,
                     DECAY_RTOL, DECAY_ATOL)


def solve_robertson(form="example"):
    residual, jacobian = ROBERTSON_FORMS[form]
    return solve_dae(residual, (NO_PARAMETERS,), (0.0, ROB_TIMES[-1]), ROB_Y0, ROB_YP0,
                     ROB_RTOL, ROB_ATOL, t_eval=ROB_TIMES, jacobian=jacobian, calc_ic=False)


def counters(r):
    """The work counters of a DaeResult."""
    return {"steps": r.nsteps, "residuals": r.nres, "jacobians": r.njac,
            "lu": r.nlu, "newton": r.nnewton, "error_test_failures": r.nrejected,
            "step_newton_failures": r.nconvfail}


def best_run(solve, repeats):
    """Counters of `solve()`'s result and the best, over `repeats` runs, of the time
    inside its step loop (wall_time) and of the whole call (s)."""
    loop, call = np.inf, np.inf
    for _ in range(repeats):
        start = time.perf_counter()
        r = solve()
        call = min(call, time.perf_counter() - start)
        assert r.success, r.message
        loop = min(loop, r.wall_time)
    out = counters(r)
    out.update(loop_wall=loop, call_wall=call, us_per_step=loop / r.nsteps * 1e6)
    return out


def scipy_van_der_pol(repeats):
    """scipy's BDF on the van der Pol of solve_van_der_pol: counters and the best call
    time over `repeats` runs."""
    from scipy.integrate import solve_ivp

    def f(t, y):
        return [y[1], VDP_MU * (1 - y[0] ** 2) * y[1] - y[0]]

    wall = np.inf
    for _ in range(repeats):
        start = time.perf_counter()
        sol = solve_ivp(f, (0.0, VDP_T), [2.0, 0.0], method="BDF", rtol=VDP_TOL,
                        atol=VDP_TOL)
        wall = min(wall, time.perf_counter() - start)
        assert sol.success, sol.message
    steps = len(sol.t) - 1
    return {"steps": steps, "residuals": int(sol.nfev), "jacobians": int(sol.njev),
            "lu": int(sol.nlu), "call_wall": wall, "us_per_step": wall / steps * 1e6}


def median_call(call, calls):
    """Median wall time (s) of `calls` calls of call()."""
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def one_step_per_call(repeats):
    """The pendulum run one step per advance(max_steps=1) call: steps and the best,
    over `repeats` runs, of the time per call (s)."""
    best = np.inf
    for _ in range(repeats):
        solver = pendulum_solver()
        done, calls = 0, 0
        start = time.perf_counter()
        while solver.status == "running":
            done += solver.advance(PEND_TIMES[done:], max_steps=1)[0]
            calls += 1
        best = min(best, (time.perf_counter() - start) / calls)
        assert solver.status == "finished", solver.message
    return {"steps": solver.statistics()["nsteps"], "calls": calls, "us_per_call": best * 1e6}


def advance_without_step(calls):
    """Median time (s) of an advance call that takes no step: output times spread over
    the last step of a pendulum run, one per call."""
    solver = pendulum_solver()
    solver.advance(PEND_TIMES[1:2])
    lo = max(solver.t - solver.statistics()["h_last"], PEND_TIMES[1])
    times = lo + (solver.t - lo) * (np.arange(calls) + 1) / (calls + 1)
    k = iter(times)
    return median_call(lambda: solver.advance([next(k)]), calls)


def solve_dae_fixed_cost(calls):
    """Median times (s) of a solve_dae call on the decay problem, whole and outside
    its step loop, and its steps."""
    whole, outside = [], []
    for _ in range(calls):
        start = time.perf_counter()
        r = solve_decay()
        wall = time.perf_counter() - start
        whole.append(wall)
        outside.append(wall - r.wall_time)
    return {"steps": r.nsteps, "call": statistics.median(whole),
            "outside_loop": statistics.median(outside)}


def ida_robertson(form):
    """IDA (scikit-sundae) on idaRoberts_dns with the residual and Jacobian of
    ROBERTSON_FORMS[form] (their Python functions): counters, or None without
    scikit-sundae."""
    try:
        import sksundae
        from sksundae.ida import IDA
    except ImportError:
        return None
    residual, jacobian = (f.py_func for f in ROBERTSON_FORMS[form])
    times = []

    def resfn(t, y, yp, res):
        times.append(t)
        residual(t, y, yp, None, res)

    def jacfn(t, y, yp, res, cj, jj):
        jacobian(t, y, yp, cj, None, jj)

    ida = IDA(resfn, rtol=ROB_RTOL, atol=ROB_ATOL, linsolver="dense", jacfn=jacfn)
    r = ida.init_step(0.0, ROB_Y0, ROB_YP0)
    assert r.success, r.message
    steps, t_reached = 0, 0.0
    for tout in ROB_TIMES:
        while t_reached < tout:
            r = ida.step(float(tout), method="onestep")
            assert r.success, r.message
            if r.t > t_reached:  # after an interpolated output IDA first returns tn again
                steps += 1
                t_reached = float(r.t)
        r = ida.step(float(tout))
        assert r.success, r.message
    attempts = sum(1 for i, t in enumerate(times) if i == 0 or t != times[i - 1])
    return {"version": sksundae.__version__, "sundials": sksundae.SUNDIALS_VERSION,
            "steps": steps, "residuals": int(r.nfev), "jacobians": int(r.njev),
            "rejected": attempts - steps, "t_last": t_reached}


def _ms(s):
    return significant(s * 1e3, 2)


def _us(s):
    us = s * 1e6
    return grouped(round(us)) if us >= 1000 else significant(us, 2)


def table(results):
    v, s, p = results["van_der_pol"], results["scipy_van_der_pol"], results["pendulum"]
    one, fixed = results["pendulum_one_step_per_call"], results["fixed"]
    steps = ["| problem, integrator | steps | residuals | Jacobians | step loop (ms) | "
             "call (ms) | us per step |", "|---|---|---|---|---|---|---|"]
    steps.append(f"| van der Pol, mu = 1000, n = 2: `solve_dae` | {grouped(v['steps'])} | "
                 f"{grouped(v['residuals'])} | {grouped(v['jacobians'])} | {_ms(v['loop_wall'])} | "
                 f"{_ms(v['call_wall'])} | {significant(v['us_per_step'])} |")
    steps.append(f"| the same, scipy's `solve_ivp(method=\"BDF\")` | {grouped(s['steps'])} | "
                 f"{grouped(s['residuals'])} | {grouped(s['jacobians'])} | | "
                 f"{_ms(s['call_wall'])} | {significant(s['us_per_step'])} |")
    steps.append(f"| GGL pendulum, n = 6: `solve_dae` | {grouped(p['steps'])} | "
                 f"{grouped(p['residuals'])} | {grouped(p['jacobians'])} | {_ms(p['loop_wall'])} | "
                 f"{_ms(p['call_wall'])} | {significant(p['us_per_step'])} |")
    ratio = ["| scipy's BDF / flexmbs, van der Pol | steps | time per step | time per run |",
             "|---|---|---|---|",
             f"| ratio | {s['steps'] / v['steps']:.2f} | "
             f"{significant(s['us_per_step'] / v['us_per_step'])} | "
             f"{significant(s['call_wall'] / v['call_wall'])} |"]
    calls = ["| call | us per call |", "|---|---|",
             f"| `solve_dae`, y' = -y, n = 1, t = 0..1 ({fixed['solve_dae']['steps']} "
             f"steps) | {_us(fixed['solve_dae']['call'])} |",
             f"| the same, outside the step loop | {_us(fixed['solve_dae']['outside_loop'])} |",
             f"| `BDF.advance`, no step (one output inside the last step) | "
             f"{_us(fixed['advance_no_step'])} |",
             f"| `BDF.advance(max_steps=1)`, GGL pendulum ({grouped(one['steps'])} calls of "
             f"one step) | {significant(one['us_per_call'])} |"]
    rob, ida, pub = results["robertson"], results["ida_robertson"], results["ida_published"]

    def row(name, c, rejected):
        return (f"| {name} | {c['steps']} | {c['residuals']} | {c['jacobians']} | "
                f"{rejected} |")

    def split(c):
        etf, newton = c["error_test_failures"], c["step_newton_failures"]
        return f"{etf + newton} ({etf}, {newton})"

    work = ["| idaRoberts_dns | steps | residuals | Jacobians | rejected steps "
            "(error test, Newton) |", "|---|---|---|---|---|"]
    work += [row(f"flexmbs `solve_dae`, {FORM_NAMES[form]}", rob[form], split(rob[form]))
             for form in ROBERTSON_FORMS]
    for form in ROBERTSON_FORMS:
        if ida[form] is not None:
            i = ida[form]
            work.append(row(f"IDA (scikit-sundae {i['version']}, SUNDIALS {i['sundials']}), "
                            f"{FORM_NAMES[form]}", i, i["rejected"]))
    work.append(row("IDA, the example's published output", pub, split(pub)))
    return "\n\n".join("\n".join(t) for t in (steps, ratio, calls, work))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7,
                        help="runs per timed problem (the best is kept)")
    parser.add_argument("--calls", type=int, default=300,
                        help="calls per fixed cost (the median is kept)")
    started = begin(parser, table)
    if started is None:
        return 0
    args, info, start = started
    log("warm-up")
    for solve in (solve_van_der_pol, solve_pendulum, solve_decay, solve_robertson):
        assert solve().success
    assert solve_robertson("reordered").success
    log("van der Pol")
    results = {"machine": info, "repeats": args.repeats, "calls": args.calls,
               "statistic": "runs: best of repeats; calls: median of calls",
               "van_der_pol": best_run(solve_van_der_pol, args.repeats),
               "scipy_van_der_pol": scipy_van_der_pol(max(1, args.repeats // 2))}
    log("pendulum")
    results["pendulum"] = best_run(solve_pendulum, args.repeats)
    results["pendulum_one_step_per_call"] = one_step_per_call(args.repeats)
    log("fixed costs")
    results["fixed"] = {"solve_dae": solve_dae_fixed_cost(args.calls),
                        "advance_no_step": advance_without_step(args.calls)}
    log("Robertson")
    results["robertson"] = {form: counters(solve_robertson(form)) for form in ROBERTSON_FORMS}
    results["ida_robertson"] = {form: ida_robertson(form) for form in ROBERTSON_FORMS}
    results["ida_published"] = IDA_PUBLISHED
    finish(args, results, start, table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
