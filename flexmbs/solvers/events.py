"""Discontinuities as events: integration in segments between breakpoints, and state
events located by root finding.

A model whose forces jump or kink in time (a `steps` set-point, a `linear` table, the
ends of trajectory segments) or in the state (a motor entering or leaving its torque
limit) breaks the smoothness that an integrator's order and error estimate assume.
Stepped over, a jump costs a cascade of rejected steps, or, worse, is missed: a
generalized-alpha step evaluates the forces at one point inside the step, so a jump
between that point and the step's end is seen one step late, a delay of the order of
the step that no tolerance removes. Here, as in the hybrid-system integrators of
Modelica tools and in SUNDIALS' root finding:

* time events (`System.breakpoints`, known before the run): the run is cut into
  segments that end on them; each segment's steps land exactly on its end, where the
  integrator restarts (BDF at order 1 with its history dropped, generalized-alpha
  with consistent accelerations). Within a segment the forces are one smooth
  function: the system's `set_segment(t_start, t_end)` makes the piecewise laws keep
  the piece in force inside the segment, also at its end.
* state events (`System.switches`, g(t, y) of which a sign change is an event): the
  step loop stops after the step on which a g changes sign; the crossing is located
  on that step's interpolant by the Illinois variant of regula falsi (Dowell and
  Jarratt 1971), the outputs up to it are taken from the interpolant, the system's
  `switched(t, y, g)` sets the discrete state for the new side (an actuator now at its
  limit, say), and the integrator restarts at the crossing. Within a segment the
  discrete state is held, so the residual is smooth there too.
"""

import bisect

import numpy as np

__all__ = ["next_breakpoint", "locate_crossing", "sorted_times", "BREAKPOINT_FUZZ", "EPS",
           "ROOT_MAX_ITER"]

EPS = float(np.finfo(float).eps)
"""The machine epsilon of float64 (np.finfo costs microseconds a call)."""

BREAKPOINT_FUZZ = 100.0
"""A breakpoint within this many ulps of t (times max(1, |t|)) is at t: the run is
on it and the next segment starts there."""

ROOT_MAX_ITER = 60
"""Iterations of the crossing's location; each halves the bracket at worst (a
bisection step is taken when the secant stalls)."""


def sorted_times(times):
    """The distinct values of `times` (s), sorted, as a float array: np.unique's
    result, without its first call's import of numpy's masked arrays (10 ms at the
    start of every run)."""
    t = np.sort(np.asarray(times, dtype=float).ravel())
    if t.size < 2:
        return t
    return t[np.concatenate(([True], t[1:] != t[:-1]))]


def next_breakpoint(breakpoints, t, t_end):
    """The first breakpoint after t (beyond BREAKPOINT_FUZZ ulps), or t_end;
    `breakpoints` sorted, an array or a list (a list's bisection costs a tenth of
    an array's searchsorted, once a sample of a sampled controller)."""
    fuzz = BREAKPOINT_FUZZ * EPS * max(1.0, abs(t))
    k = bisect.bisect_right(breakpoints, t + fuzz)
    if k < len(breakpoints) and breakpoints[k] < t_end - fuzz:
        return float(breakpoints[k])
    return float(t_end)


def _changed(a, b):
    """Mask of the functions whose sign changes from a to b (reaching zero counts;
    leaving zero does not)."""
    return ((a > 0.0) & (b <= 0.0)) | ((a < 0.0) & (b >= 0.0))


def locate_crossing(g_of, t_lo, g_lo, t_hi, g_hi, t_tol):
    """The earliest crossing of the switch functions on [t_lo, t_hi].

    g_of(t) -> g (nsw,) evaluates them (on the step's interpolant); g_lo, g_hi their
    values at the ends, with at least one sign change between them (_changed). The
    bracket [a, b] keeps a sign change; each trial point is the earliest secant root
    of the functions that change sign on it, with the value at an end kept twice in
    a row halved (Illinois), and a bisection whenever two trials left more than half
    the bracket, until the bracket is below t_tol (s).

    Returns (t_star, crossed, g_star): t_star the right end of the final bracket
    (so that the crossed functions have their new sign there or are zero), the mask
    of the functions crossed at t_star, and g at t_star.
    """
    a, ga = float(t_lo), np.asarray(g_lo, dtype=float).copy()
    b, gb = float(t_hi), np.asarray(g_hi, dtype=float).copy()
    if not np.any(_changed(ga, gb)):
        raise ValueError("no switch function changes sign on the interval")
    wa = wb = 1.0           # Illinois weights of the values at a and b
    kept = 0                # +1: a kept on the last trial, -1: b kept
    width = b - a
    for it in range(ROOT_MAX_ITER):
        if b - a <= t_tol:
            break
        i = np.flatnonzero(_changed(ga, gb))
        fa, fb = wa * ga[i], wb * gb[i]
        with np.errstate(divide="ignore", invalid="ignore"):
            roots = b - fb * (b - a) / (fb - fa)
        roots = roots[np.isfinite(roots) & (roots > a) & (roots < b)]
        tm = float(np.min(roots)) if roots.size else 0.5 * (a + b)
        if it % 2 == 1:
            if b - a > 0.5 * width:
                tm = 0.5 * (a + b)
            width = b - a
        gm = np.asarray(g_of(tm), dtype=float)
        if np.any(_changed(ga, gm)):
            b, gb = tm, gm
            if np.any(_changed(ga, gm) & (gm == 0.0)):
                break   # a root hit exactly
            wb = 1.0
            wa = wa * 0.5 if kept == 1 else 1.0
            kept = 1
        else:
            a, ga = tm, gm
            wa = 1.0
            wb = wb * 0.5 if kept == -1 else 1.0
            kept = -1
    return b, _changed(ga, gb), gb
