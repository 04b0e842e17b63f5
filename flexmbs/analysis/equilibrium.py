"""Static equilibrium under gravity, springs, constant loads and the elastic and
geometric stiffness (docs/explanation/formulation.md section 9), with the loops closed.

At rest (u = 0) at time t the reduced equations are

    R(q) = N(q)^T Q*(q, 0, t) = 0,    Phi(q) = 0

(N spans the null space of Phi_q over independent rows, chosen afresh at each
iteration by pivoted QR as the linkage moves, Bae, Choi and Kim (20); for a tree N = I
and R = Q*). Newton's method on the independent coordinates y (chosen as in
flexmbs.analysis.linearize): dy = K^-1 R with the reduced stiffness K = -dR/dq J_y
by central differences (it holds the geometric stiffness and the pre-load of the
constraint forces), dq = J_y dy, at most MAX_STEP (m or rad); the dependent
coordinates then close the loops again (Gauss-Newton on Phi); a step that does not
lower |R| is halved (line search).

Where K is not positive definite (an arm held out sideways, a pendulum upside down)
Newton's step may run off or climb to an unstable equilibrium. There, in K's
eigenvectors, each component of the step is R's divided by |eigenvalue| (downhill in
potential energy for a conservative model), components along neutral directions
(|eigenvalue| below NEUTRAL_TOL of the largest: a free turntable, no gravity) are left
out, or where a load pushes along them taken as PROBE_STEP (m or rad) in its
direction (the next iteration sees the curvature there), and the step is taken at
most MAX_STEP long without the line search.

Converged when the step is below STEP_TOLERANCE (1 + |q|) or |R| is below
STEP_TOLERANCE times the largest diagonal stiffness (the force of a 1e-12 m or rad
displacement); then also an unstable or neutral equilibrium is returned, and
flexmbs.analysis.linearize at the result tells which it is.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..dynamics import api
from ..dynamics.constrained import PROJECTION_TOLERANCE, active_rows, independent_rows
from ..errors import FlexmbsError, ModelError
from .linearize import _null_basis, central_differences, independent_coordinates

if TYPE_CHECKING:
    from ..model.compiled import CompiledModel

__all__ = [
    "Equilibrium",
    "NotConverged",
    "static_equilibrium",
    "equilibrium_assignments",
    "close_loops",
    "STEP_TOLERANCE",
    "MAX_ITERATIONS",
    "MAX_STEP",
]

STEP_TOLERANCE = 1e-12  # m or rad (scaled by 1 + |q|): the last Newton step
MAX_ITERATIONS = 100
MAX_STEP = 0.5  # m or rad: the longest step
NEUTRAL_TOL = 1e-8  # |eigenvalue| / largest below this: a neutral direction
PROBE_STEP = 0.1  # m or rad: the step along a neutral direction that a load pushes
LINE_SEARCH_HALVINGS = 30
CLOSE_ITERATIONS = 50
PRESCRIBED_SPEED = 1e-12  # m/s or rad/s: a prescribed coordinate counts as held below


class NotConverged(FlexmbsError):
    """Newton's method did not find an equilibrium."""


@dataclass
class Equilibrium:
    """The equilibrium coordinates q (and the start), iterations, the residual R
    (N or N m per coordinate) and the last step."""

    q: np.ndarray
    start: np.ndarray
    iterations: int
    residual: float
    step: float
    names: list[str]


def close_loops(
    cm: CompiledModel,
    q: NDArray[np.float64],
    t: float,
    dependent: NDArray[np.intp],
    rows: NDArray[np.intp] | None = None,
) -> NDArray[np.float64]:
    """q with its dependent coordinates moved so that Phi(q) = 0 over `rows` (default
    all; Gauss-Newton, to PROJECTION_TOLERANCE of the model's size or until it stops
    gaining)."""
    q = q.copy()
    if len(dependent) == 0:
        return q
    r, _ = api.body_poses(cm, q, t)
    tol = PROJECTION_TOLERANCE * max(1.0, float(np.abs(r).max(initial=0.0)))
    last = np.inf
    for _ in range(CLOSE_ITERATIONS):
        phi, _, jac, _ = api.constraint_values(cm, q, None, t)
        if rows is not None:
            phi, jac = phi[rows], jac[rows]
        size = np.abs(phi).max(initial=0.0)
        if size <= tol or (size >= 0.5 * last and size <= 1e3 * tol):
            return q
        last = size
        q[dependent] -= np.linalg.lstsq(jac[:, dependent], phi, rcond=None)[0]
    raise NotConverged(
        "the loops could not be closed during the equilibrium search "
        f"(constraint residual {size:.3g})"
    )


def _check_at_rest(cm: CompiledModel, q: NDArray[np.float64], t: float) -> None:
    """ModelError when a prescribed motion moves at time t (no static state)."""
    speed = np.abs(api.prescribed_velocity(cm, q, t)).max(initial=0.0)
    if speed > PRESCRIBED_SPEED:
        raise ModelError(
            f"a prescribed motion moves at t = {t:g} s (body speeds up to "
            f"{speed:.3g}): a static equilibrium needs every driver at "
            "rest",
            "drivers",
        )


def _step(
    tangent: NDArray[np.float64], r: NDArray[np.float64]
) -> tuple[NDArray[np.floating[Any]], bool]:
    """(dy, definite): Newton's step, or the descent step of the module docstring
    where -tangent (the reduced stiffness K) is not positive definite."""
    stiffness = -tangent
    lam, vec = np.linalg.eigh(0.5 * (stiffness + stiffness.T))
    big = np.abs(lam).max(initial=0.0)
    neutral = np.abs(lam) <= NEUTRAL_TOL * big
    if lam.size and lam.min() > NEUTRAL_TOL * big:
        return np.linalg.solve(stiffness, r), True
    comp = vec.T @ r
    pushed = neutral & (np.abs(comp) > NEUTRAL_TOL * np.abs(r).max(initial=0.0))
    comp[~neutral] /= np.abs(lam[~neutral])
    comp[neutral] = 0.0
    comp[pushed] = PROBE_STEP * np.sign((vec.T @ r)[pushed])
    return vec @ comp, False


def static_equilibrium(
    cm: CompiledModel,
    t: float = 0.0,
    q: ArrayLike | None = None,
    log: Callable[[str], object] | None = None,
) -> Equilibrium:
    """Equilibrium from the state q (default cm.q0, made consistent first for loops
    by flexmbs.dynamics.constrained.make_consistent, which chooses the active rows).
    NotConverged when it stalls, runs out of iterations or the rank of the loops'
    equations changes on the way."""
    if getattr(cm, "ncontacts", 0):
        raise ModelError(
            "the static equilibrium of a model with rolling contacts is not "
            "available (their velocity rows do not fix a configuration)",
            "contacts",
        )
    q = np.array(cm.q0 if q is None else q, dtype=float)
    start = q.copy()
    _check_at_rest(cm, q, t)
    zero = np.zeros(cm.nq)
    nrows = len(active_rows(cm)) if len(cm.arrays.con_kind) else 0
    rows = np.zeros(0, dtype=int)

    def reduced(
        x: NDArray[np.float64], independent: NDArray[np.intp], dependent: NDArray[np.intp]
    ) -> NDArray[np.float64]:
        force = api.generalized_forces(cm, x, zero, t)
        if len(rows) == 0:
            return force
        jac = api.constraint_values(cm, x, None, t)[2][rows]
        return _null_basis(jac, independent, dependent).T @ force

    step_norm = np.inf
    for it in range(1, MAX_ITERATIONS + 1):
        if nrows:  # the rows best conditioned here (a linkage folds: flexmbs.
            jac = api.constraint_values(cm, q, None, t)[2]  # dynamics.constrained)
            rows = independent_rows(jac, nrows)
            jac = jac[rows]
        else:
            jac = np.zeros((0, cm.nq))
        independent, dependent, j_y, rank = independent_coordinates(jac)
        if rank != nrows:
            raise NotConverged(
                f"the loops' equations lost rank on the way ({rank} of "
                f"{nrows} rows independent): the linkage "
                "passed a singular configuration; start nearer the "
                "equilibrium"
            )
        r, dr = central_differences(lambda x: reduced(x, independent, dependent), q)  # noqa: B023 (called at once)
        tangent = dr @ j_y
        norm = np.abs(r).max(initial=0.0)
        scale = np.abs(np.diag(tangent)).max(initial=0.0)
        dy, definite = _step(tangent, r)
        dq = j_y @ dy
        step_norm = np.abs(dq).max(initial=0.0)
        if log:
            log(
                f"equilibrium: iteration {it}: |R| = {norm:.3g}, step {step_norm:.3g}"
                + ("" if definite else " (stiffness not positive: a descent step)")
            )
        small = step_norm <= STEP_TOLERANCE * (1.0 + np.abs(q).max(initial=0.0))
        if (definite and small) or norm <= STEP_TOLERANCE * scale or norm == 0.0:
            return Equilibrium(q, start, it, norm, step_norm, list(cm.coordinate_names))
        if not definite and step_norm == 0.0:
            raise NotConverged(
                f"the loads push along directions that nothing holds "
                f"(reduced force {norm:.3g} with no stiffness against "
                "it): there is no static equilibrium"
            )
        if step_norm > MAX_STEP:
            dq *= MAX_STEP / step_norm
        if not definite:
            q = close_loops(cm, q + dq, t, dependent, rows)
            continue
        alpha = 1.0
        for _ in range(LINE_SEARCH_HALVINGS):
            trial = close_loops(cm, q + alpha * dq, t, dependent, rows)
            r_trial = reduced(trial, independent, dependent)
            if np.abs(r_trial).max() < norm or alpha * step_norm <= STEP_TOLERANCE:
                break
            alpha *= 0.5
        q = trial
    raise NotConverged(
        f"no equilibrium within {MAX_ITERATIONS} iterations (last step "
        f"{step_norm:.3g}, reduced force {norm:.3g})"
    )


def equilibrium_assignments(
    cm: CompiledModel, q: NDArray[np.float64]
) -> dict[str, float | list[float]]:
    """{dotted model-file path: value}: the joints' `initial` (and `initial_rate` = 0)
    and the beams' elastic `initial` that start the model at q at rest."""
    m = cm.arrays
    out = {}
    for k, name in enumerate(cm.topology.joint_names):
        cols = range(m.joint_coord_start[k], m.joint_coord_start[k + 1])
        joint = cm.model.joints[name]
        values = [
            float(q[m.coord_qindex[c]])
            if m.coord_qindex[c] >= 0
            else float(joint.initial[c - m.joint_coord_start[k]])
            for c in cols
        ]
        if not values or all(m.coord_qindex[c] < 0 for c in cols):
            continue
        out[f"joints.{name}.initial"] = values[0] if len(values) == 1 else values
        out[f"joints.{name}.initial_rate"] = 0.0 if len(values) == 1 else [0.0] * len(values)
    for k, (_, beam) in enumerate(cm.beams):
        start = m.flex_q[k]
        out[f"bodies.{beam.name}.initial"] = [float(v) for v in q[start : start + beam.nf]]
    return out
