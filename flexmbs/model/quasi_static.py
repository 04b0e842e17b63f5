"""The quasi-static start of flexible bodies (`initial = "quasi-static"`).

A beam released undeformed, or in its static state with the joints held, starts with
elastic accelerations that ring every mode of it, the stiff axial and torsional ones
included. The quasi-static start removes them: the elastic coordinates qf of the
chosen beams are those at which their accelerations vanish at t = 0, with the joints
free and moving at their initial rates,

    a_f(t0, [q_r, qf], [u_r, uf]) = 0      (a = M*^-1 Q*, the model's accelerations)

and their rates uf are the rate of change of that state along the motion,

    uf = (qf*(t0 + dt) - qf*(t0 - dt)) / (2 dt),

with qf*(t) the solution at the joint state q_r(t) = q_r + (t - t0) u_r +
(t - t0)^2 a_r / 2, u_r(t) = u_r + (t - t0) a_r. Since uf enters a_f (damping,
Coriolis terms), the two are solved in turn QUASI_STATIC_ROUNDS times. Each solve is
Newton's method on the tangent da_f/dqf by central differences.
"""

from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from ..errors import ModelError

__all__ = ["quasi_static_state", "QUASI_STATIC_TOLERANCE"]

QUASI_STATIC_TOLERANCE = 1e-10
"""Convergence: max |a_f| at most this fraction of max |a_f| at the given start."""
QUASI_STATIC_ITERATIONS = 20
QUASI_STATIC_ROUNDS = 2
QUASI_STATIC_STEP = 1e-7  # m or rad (modal amplitude): the difference step of the tangent
QUASI_STATIC_DT = 1e-4  # s: the time step of the rates' central difference

Accelerations = Callable[[NDArray[np.float64], NDArray[np.float64], float], NDArray[np.float64]]
"""accelerations(q, u, t) -> u' (nq,) of the model."""


def _solve(
    accelerations: Accelerations,
    q: NDArray[np.float64],
    u: NDArray[np.float64],
    t: float,
    rows: NDArray[np.int64],
    scale: float,
    names: str,
) -> NDArray[np.float64]:
    """qf (at `rows` of q) with accelerations(q, u, t)[rows] = 0; q is updated."""
    a = accelerations(q, u, t)[rows]
    for _ in range(QUASI_STATIC_ITERATIONS):
        if np.abs(a).max() <= QUASI_STATIC_TOLERANCE * scale:
            return q
        tangent = np.zeros((len(rows), len(rows)))
        for j, row in enumerate(rows):
            d = np.zeros_like(q)
            d[row] = QUASI_STATIC_STEP
            tangent[:, j] = (
                accelerations(q + d, u, t)[rows] - accelerations(q - d, u, t)[rows]
            ) / (2 * QUASI_STATIC_STEP)
        try:
            step = np.linalg.solve(tangent, -a)
        except np.linalg.LinAlgError:
            break
        q[rows] += step
        a = accelerations(q, u, t)[rows]
        if not np.all(np.isfinite(a)):
            break
    if np.all(np.isfinite(a)) and np.abs(a).max() <= QUASI_STATIC_TOLERANCE * scale:
        return q
    raise ModelError(
        f"the quasi-static state of {names} did not converge in "
        f"{QUASI_STATIC_ITERATIONS} Newton iterations (largest elastic "
        f"acceleration {np.abs(a).max():.3g} against {scale:.3g} at the "
        f'start): use initial = "static" or "undeformed"',
        f"body {names}",
        "initial",
    )


def quasi_static_state(
    accelerations: Accelerations,
    q0: NDArray[np.float64],
    u0: NDArray[np.float64],
    t0: float,
    rows: NDArray[np.int64],
    names: str,
) -> tuple[NDArray[np.float64], NDArray[np.float64], float]:
    """(q0, u0) with the elastic coordinates `rows` of the chosen beams quasi-static
    (module text). accelerations(q, u, t) -> u' (nq,) of the model; names: the beams'
    names, for messages. Returns new arrays and the largest elastic acceleration at
    the given start (the scale of what was removed)."""
    q = np.array(q0, dtype=float)
    u = np.array(u0, dtype=float)
    scale = float(np.abs(accelerations(q, u, t0)[rows]).max())
    if scale == 0.0:
        return q, u, scale
    free = np.ones(len(q), dtype=bool)
    free[rows] = False
    for _ in range(QUASI_STATIC_ROUNDS):
        q = _solve(accelerations, q, u, t0, rows, scale, names)
        acc = accelerations(q, u, t0)
        shifted = []
        for sign in (-1.0, 1.0):
            dt = sign * QUASI_STATIC_DT
            qs = q.copy()
            us = u.copy()
            qs[free] += dt * u[free] + 0.5 * dt * dt * acc[free]
            us[free] += dt * acc[free]
            shifted.append(_solve(accelerations, qs, us, t0 + dt, rows, scale, names)[rows])
        u[rows] = (shifted[1] - shifted[0]) / (2.0 * QUASI_STATIC_DT)
    q = _solve(accelerations, q, u, t0, rows, scale, names)
    return q, u, scale
