"""The initial values that need the compiled model's kinematics and forces: the springs'
rest lengths not given (their lengths in the initial configuration), and the elastic
states of beams that start in their modes (flexmbs.model.mode_start), "static" (Q_f = 0, joints
held) or "quasi-static" (their elastic accelerations zero, flexmbs.model.quasi_static).
compile_model calls complete_initial_state once the arrays are built; each step
writes only what it is named for (spring_l0's missing entries, q0 and u0 at the
elastic rows).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from ..dynamics import api
from ..errors import ModelError
from .mode_start import mode_elastic_state
from .quasi_static import quasi_static_state

if TYPE_CHECKING:
    from .compiled_model import CompiledModel
    from .fe_body import FeBody
    from .items import BeamBody

__all__ = [
    "SPRING_LENGTH_MIN",
    "complete_initial_state",
    "initial_spring_lengths",
    "starts_static",
    "starts_quasi_static",
    "static_elastic_state",
    "quasi_static_elastic_state",
]

SPRING_LENGTH_MIN = 1e-9
"""A spring shorter than this (m) has no direction for its force
(docs/explanation/formulation.md section 4)."""


def complete_initial_state(cm: CompiledModel) -> None:
    """The initial values of a freshly packed model that need its kinematics and
    forces, in order: the springs' missing rest lengths, then the elastic states of
    beams started in their modes, "static", and (trees only) "quasi-static"."""
    if cm.model.springs:
        initial_spring_lengths(cm, list(cm.model.springs))
    beams = [b for _, b in cm.beams]
    if any(getattr(b, "initial_modes", None) for b in beams):
        mode_elastic_state(cm)
    if any(starts_static(b) for b in beams):
        static_elastic_state(cm)
    if any(starts_quasi_static(b) for b in beams) and not cm.has_constraints:
        quasi_static_elastic_state(cm)


def initial_spring_lengths(cm: CompiledModel, names: Sequence[str]) -> None:
    """The rest lengths not given: the springs' lengths in the initial configuration.
    A spring whose markers coincide there is refused (ModelError naming it): the
    direction of its force, from one marker to the other, is undefined."""
    pos = api.marker_frames(cm, cm.q0)[0]
    m = cm.arrays
    for s, name in enumerate(names):
        length = np.linalg.norm(pos[m.spring_marker[s, 1]] - pos[m.spring_marker[s, 0]])
        if length < SPRING_LENGTH_MIN:
            raise ModelError(
                f"its two markers coincide in the initial configuration "
                f"(length {length:.3g} m): the direction of its force is "
                f"undefined; expected markers at least "
                f"{SPRING_LENGTH_MIN:g} m apart",
                f'spring "{name}"',
                "marker1",
            )
        if np.isnan(m.spring_l0[s]):
            m.spring_l0[s] = length


STATIC_TOLERANCE = 1e-12  # of the largest elastic force: the static state's residual
STATIC_FLOOR = 1e-9  # ... or this, once Newton stops gaining (round-off of the forces)
STATIC_ITERATIONS = 30
STATIC_STEP = 1e-7  # m or rad: the difference step of the tangent stiffness
STATIC_GROWTH = 1e3  # a Newton step may raise the residual this much (the axial rows of
# a stiff beam overshoot on the first step), else it is halved


def starts_static(beam: BeamBody | FeBody) -> bool:
    return isinstance(beam.initial, str) and beam.initial == "static"


def starts_quasi_static(beam: BeamBody | FeBody) -> bool:
    return isinstance(beam.initial, str) and beam.initial == "quasi-static"


def quasi_static_elastic_state(
    cm: CompiledModel,
    accelerations: Callable[
        [CompiledModel, NDArray[np.float64], NDArray[np.float64], float], NDArray[np.float64]
    ]
    | None = None,
) -> float:
    """cm.q0, cm.u0 at the elastic coordinates and rates of the beams with initial =
    "quasi-static" (flexmbs.model.quasi_static), of a tree. accelerations(cm, q, u,
    t): the model's u' (default M*^-1 Q*). Returns the largest elastic acceleration
    of the given start."""
    accelerations = accelerations or api.accelerations
    chosen = [(k, b) for k, (_, b) in enumerate(cm.beams) if starts_quasi_static(b)]
    rows = np.concatenate(
        [np.arange(cm.arrays.flex_q[k], cm.arrays.flex_q[k] + b.nf) for k, b in chosen]
    )
    names = ", ".join(f'"{b.name}"' for _, b in chosen)
    q, u, scale = quasi_static_state(
        lambda q, u, t: accelerations(cm, q, u, t), cm.q0, cm.u0, 0.0, rows, names
    )
    cm.q0[:] = q
    cm.u0[:] = u
    return scale


def static_elastic_state(cm: CompiledModel) -> None:
    """cm.q0 at the elastic coordinates of the beams with initial = "static": the
    static equilibrium Q_f(q0, u = 0) = 0 of the elastic rows of Q* (elastic,
    geometric, gravity and constant loads) at the initial joint state, joints held
    (docs/explanation/formulation.md section 3, "Practical"). Newton's method on the tangent
    stiffness
    -dQ_f/dqf by central differences (it holds the geometric stiffness, and the
    dependence of the loads on qf when a beam carries other bodies), with step halving
    when the residual becomes non-finite or grows by more than STATIC_GROWTH."""
    rows = np.concatenate(
        [
            np.arange(cm.arrays.flex_q[k], cm.arrays.flex_q[k] + b.nf)
            for k, (_, b) in enumerate(cm.beams)
            if starts_static(b)
        ]
    )
    zero = np.zeros(cm.nq)

    def residual(q: NDArray[np.float64]) -> NDArray[np.float64]:
        return api.generalized_forces(cm, q, zero)[rows]

    def elastic_force_scale(q: NDArray[np.float64]) -> float:
        """max |K qf| over the static beams: the size of the forces in balance."""
        return max(
            np.abs(
                b.invariants.stiffness @ q[cm.arrays.flex_q[k] : cm.arrays.flex_q[k] + b.nf]
            ).max()
            for k, (_, b) in enumerate(cm.beams)
            if starts_static(b)
        )

    r = residual(cm.q0)
    scale = max(np.abs(r).max(), 1e-300)
    for _ in range(STATIC_ITERATIONS):
        if np.abs(r).max() <= STATIC_TOLERANCE * scale:
            return
        tangent = np.zeros((len(rows), len(rows)))
        for j, row in enumerate(rows):
            d = np.zeros(cm.nq)
            d[row] = STATIC_STEP
            tangent[:, j] = -(residual(cm.q0 + d) - residual(cm.q0 - d)) / (2 * STATIC_STEP)
        step = np.linalg.solve(tangent, r)
        norm = np.abs(r).max()
        for _ in range(30):
            trial = cm.q0.copy()
            trial[rows] += step
            r_trial = residual(trial)
            if np.abs(r_trial).max() < STATIC_GROWTH * norm:  # False for nan
                break
            step *= 0.5
        cm.q0[:] = trial
        stalled = np.abs(r_trial).max() > 0.5 * norm
        r = r_trial
        scale = max(scale, elastic_force_scale(cm.q0))
        if stalled and np.abs(r).max() <= STATIC_FLOOR * scale:
            return
    if np.abs(r).max() <= STATIC_TOLERANCE * scale:
        return
    names = ", ".join(f'"{b.name}"' for _, b in cm.beams if starts_static(b))
    raise ModelError(
        f"the static elastic state of {names} did not converge in "
        f"{STATIC_ITERATIONS} Newton iterations (residual "
        f"{np.abs(r).max():.3g} N): the beams may buckle under their loads "
        f'at the initial joint state (use initial = "undeformed")',
        f"body {names}",
        "initial",
    )
