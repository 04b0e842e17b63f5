"""Generalized-alpha integrator for F(t, y, y') = 0 with the whole step loop in numba
(kernels and method in flexmbs.solvers.galpha_kernels).

It shares the BDF driver's interface, Newton iteration, iteration matrix, hooks,
counters and failure statuses (flexmbs.solvers.bdf); what differs is the step (one
second-order step with numerical dissipation rho_inf of the unresolved modes), the
error control (the positions' local error, C(rho) h^2 |u'_{n+1} - u'_n|) and the
dense output (cubic Hermite on the last step), and the carry across an input that
changed at the end of a step (carry_input_jump; flexmbs.Simulator's inputs).

    ga = GeneralizedAlpha(residual, args, t0, y0, yp0, t_end, rtol, atol,
                          rho_inf=0.9, second_order=ns)
    n, Y, YP = ga.advance(t_out)
"""

import time

import numba
import numpy as np

from . import bdf_kernels as _k
from . import galpha_kernels as _g
from .bdf import _F8, _JIT, BDF, _entry

__all__ = ["GeneralizedAlpha", "RHO_INF", "H0_FRACTION", "H0_MOVE"]

RHO_INF = 0.9
"""Default spectral radius at infinity (flexmbs.solvers.galpha_kernels)."""

H0_FRACTION = 1e-4
"""Longest first step of a variable-step run, relative to the span (the error control
takes it from there: it can double every step)."""
H0_MOVE = 0.01
"""The first step moves the positions by at most this much of their tolerance through
their initial accelerations (GeneralizedAlpha._first_step)."""


class GeneralizedAlpha(BDF):
    """Generalized-alpha integrator for F(t, y, y') = 0 (first-order form of Jansen,
    Whiting and Hulbert).

    Parameters as for flexmbs.solvers.bdf.BDF (residual, args, t0, y0, yp0, t_end,
    rtol, atol, algebraic, jacobian, jacobian_columns, second_order, mass, h0, h_max,
    h_min, epcon, fixed_step, index2, elastic_columns, layout), and

    rho_inf : spectral radius at infinity in [0, 1]: the amplitude factor per step of
        an undamped mode with h omega -> infinity (1: no numerical dissipation, the
        implicit midpoint rule; 0: an unresolved mode is gone in one step).

    positions : np > 0: y[:np] are positions whose speeds are y[np:2 np] (q' = u up
        to constraint terms); their local error controls the step. Default: the
        `second_order` count.

    yp0 must be consistent (F(t0, y0, yp0) = 0 on the differential rows). Without
    `fixed_step` the step is controlled by the local error of the positions, which
    needs positions; with `fixed_step` any residual runs, without error control.
    The counters are the BDF's; every step is counted at order 2.
    """

    def __init__(self, residual, args, t0, y0, yp0, t_end, rtol=1e-6, atol=1e-9, *,
                 rho_inf=RHO_INF, algebraic=None, jacobian=None, jacobian_columns=None,
                 second_order=0, mass=None, h0=None, h_max=np.inf, h_min=0.0,
                 epcon=0.33, fixed_step=None, index2=False, positions=None,
                 elastic_columns=None, layout=None, switches=None, nswitch=0,
                 quadrature=None):
        if not (isinstance(rho_inf, (int, float, np.floating, np.integer))
                and 0.0 <= rho_inf <= 1.0):
            raise ValueError(f"rho_inf must be a number in [0, 1], got {rho_inf!r}")
        npos = int(second_order if positions is None else positions)
        if npos != (second_order if positions is None else positions) or not \
                0 <= 2 * npos <= np.size(y0):
            raise ValueError(f"positions must be an integer in 0..{np.size(y0) // 2}, "
                             f"got {positions!r}")
        if fixed_step is None and not npos:
            raise ValueError("the error control estimates the positions' error: give "
                             "positions (or second_order) > 0, or a fixed_step")
        self.rho_inf = float(rho_inf)
        self.positions = npos
        if h0 is None and fixed_step is None:
            h0 = self._first_step(y0, yp0, float(t_end) - float(t0), rtol, atol, npos)
        super().__init__(residual, args, t0, y0, yp0, t_end, rtol, atol,
                         algebraic=algebraic, jacobian=jacobian,
                         jacobian_columns=jacobian_columns, second_order=second_order,
                         mass=mass, max_order=2, h0=h0, h_max=h_max, h_min=h_min,
                         calc_ic=False, epcon=epcon, fixed_step=fixed_step,
                         index2=index2, elastic_columns=elastic_columns,
                         layout=layout, switches=switches, nswitch=nswitch,
                         quadrature=quadrature)

    @staticmethod
    def _first_step(y0, yp0, span, rtol, atol, npos):
        """H0_FRACTION of the span, or less where the positions' accelerations a0
        would move them by more than H0_MOVE of their tolerance over it (h^2 |a0|_w):
        the start takes v0 = y'(t0), where the method's v is y' at a time shifted by
        O(h) for rho_inf < 1, and that O(h^2) defect of the positions is made on
        the first steps, before the error estimate has the history it needs."""
        y0 = np.asarray(y0, dtype=float)
        w = 1.0 / (np.asarray(rtol, dtype=float) * np.abs(y0[:npos])
                   + np.broadcast_to(np.asarray(atol, dtype=float), y0.shape)[:npos])
        a0 = np.asarray(yp0, dtype=float)[npos:2 * npos]
        anorm = float(np.sqrt(np.mean((a0 * w) ** 2))) if npos else 0.0
        h0 = H0_FRACTION * span
        if anorm > 0.0 and np.isfinite(anorm):
            h0 = min(h0, np.sqrt(H0_MOVE / anorm))
        return h0

    _interpolate_kernel = staticmethod(_g.galpha_interpolate)

    def _begin(self, s, t0, h_start, hist):
        """The first step from (t0, y0, y'0), its v0 for the positions shifted to
        where the method's v is (below); the rest from the start kernel."""
        npos = self.positions
        if npos and not s.fs[_k.F_H_FIXED] > 0.0:
            am, af, _, _ = _g.galpha_coefficients(self.rho_inf)
            h = min(h_start, s.fs[_k.F_H_MAX], s.fs[_k.F_T_END] - t0)
            # v_n is y' at t_n + (alpha_f - alpha_m) h: a position's v0 is its speed
            # there, u0 + (alpha_f - alpha_m) h u'0. Started at u0 instead, the
            # positions carry that O(h) defect on, unseen by the error estimate when
            # the motion is a parabola (a motor at its torque limit): 1.8e-6 rad on
            # a rotor 0.1 s into its limit at rtol 1e-8, 7e-16 with the shift.
            s.yp[:npos] += (af - am) * h * s.yp[npos:2 * npos]
        self._start_kernel(self._held_state, t0, h_start, self.rho_inf, float(npos))

    def _compile_kernels(self):
        """Entry points of the step loop and its start for these argument types (the
        carry across an input's change compiled at its first use)."""
        self._carry_kernel = None
        if not _JIT:
            self._advance = _g.galpha_advance_held
            self._start_kernel = _g.galpha_start
            self._functions = (self._residual, self._jacobian, self._mass,
                               self._switches)
            self._held_state = self._s
            self._advance_args = (self._functions, self._args, self._s)
            return
        targs, _, ftypes = self._function_types()
        self._advance = self._held_entry(_g.galpha_advance_held, targs, ftypes)
        self._start_kernel = _entry(_g.galpha_start, (numba.typeof(self._held_state), _F8,
                                                      _F8, _F8, _F8))

    def carry_input_jump(self):
        """Go on from t_n, where the last step ended, after an input of the model
        changed there (galpha_kernels.galpha_carry_input): the step, its history and
        the iteration matrix kept, the history moved by the jump of y'. Returns
        galpha_kernels.CARRIED, or CARRY_RESTART / CARRY_SWITCHED when the owner must
        start the driver again (nothing changed then)."""
        if self._carry_kernel is None:
            kernel = _g.galpha_carry_input_held
            self._carry_kernel = kernel if not _JIT else _entry(
                kernel, tuple(numba.typeof(a) for a in self._advance_args))
        start = time.perf_counter()
        code = int(self._carry_kernel(*self._advance_args))
        self.wall_time += time.perf_counter() - start
        return code

    def statistics(self):
        """The BDF's counters (order_counts: every step at order 2), and err_last,
        the weighted position error estimate of the last step."""
        stats = super().statistics()
        stats["err_last"] = float(self._s.fs[_g.F_ERR_K])
        stats["rho_inf"] = self.rho_inf
        return stats
