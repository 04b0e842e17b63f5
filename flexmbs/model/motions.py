"""The kinematic chain of each body as a list of elementary motions, and the
deformation terms of markers on flexible bodies (docs/explanation/formulation.md section 4;
Huang H2.4, H2.148-2.166).

Body i's frame follows from its parent p's frame by a fixed sequence of elementary
motions of a moving frame (position P, rotation R), each given in the axes of the
frame as it stands at that point of the chain:

    OFFSET       P += R s                       (a constant vector s)
    ROTATE_FIXED R = R C                        (a constant rotation C)
    TRANSLATE    P += R a x                     (x = sum_k coef_k x[col_k])
    ROTATE       R = R Rot(a, x)                (x = sum_k coef_k x[col_k])

where x[col] is a joint coordinate (columns 0..nc-1) or an elastic coordinate
(columns nc..nc+ne-1, in the order of the elastic coordinates in q). For the joint
from marker P on p to marker O on i:

    parent marker: OFFSET s_P0, TRANSLATE along p's x, y, z by (S_P qf_p), ROTATE about
        p's x, then y, then z by th_P = (PS_P qf_p) (a Cardan sequence: an exact
        rotation whose tangent map is [e_x, Rx e_y, Rx Ry e_z]), ROTATE_FIXED C_P0;
    joint: TRANSLATE along its translation axes, ROTATE about its rotation axes;
    child marker, inverted: ROTATE_FIXED C_O0^T, ROTATE about z, y, x by -th_O,
        TRANSLATE along i's x, y, z by -(S_O qf_i), OFFSET -s_O0,

so that A_i = A_p R(th_P) C_P0 R_joint C_O0^T R(th_O)^T and
r_i = r_p + A_p s_P + A_F d - A_i s_O (s_P, s_O the deformed marker positions). A
marker on a rigid body, or on a clamped node, has no elastic terms. The kernels
(`flexmbs.kinematics.recursive`) run this list for positions, velocities, partial
velocities and bias accelerations alike, so B is the exact Jacobian of the position
map whatever the chain holds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, cast

import numpy as np
from numpy.typing import ArrayLike, NDArray

if TYPE_CHECKING:
    from .fe_body import FeBody
    from .items import BeamBody, Marker, RigidBody

__all__ = [
    "OFFSET",
    "ROTATE_FIXED",
    "TRANSLATE",
    "ROTATE",
    "Motion",
    "MarkerTerms",
    "marker_terms",
    "joint_motions",
    "TERM_ZERO",
]

OFFSET, ROTATE_FIXED, TRANSLATE, ROTATE = 0, 1, 2, 3
TERM_ZERO = 1e-300  # |coefficient| at or below this is no term
_AXES = np.eye(3)


@dataclass
class Motion:
    """One elementary motion: `kind` (OFFSET, ROTATE_FIXED, TRANSLATE, ROTATE),
    `vector` (the offset, m, or the unit axis), `rotation` (ROTATE_FIXED), and for
    TRANSLATE and ROTATE the amount sum_k coef_k x[col_k] as `terms` [(col, coef)]."""

    kind: int
    vector: np.ndarray = field(default_factory=lambda: np.zeros(3))
    rotation: np.ndarray = field(default_factory=lambda: np.eye(3))
    terms: list = field(default_factory=list)


@dataclass
class MarkerTerms:
    """A marker's undeformed `position` (m) and `orientation` (columns: marker axes) in
    its body's axes, and its deformation: `terms[d]` = [(col, coef)] giving the
    translation along body axis d (d = 0, 1, 2; m) and the Cardan rotation angle about
    x, y, z (d = 3, 4, 5; rad) as linear forms of the elastic coordinates."""

    position: np.ndarray
    orientation: np.ndarray
    terms: list


def _row_terms(row: NDArray[np.float64], first_col: int) -> list[tuple[int, float]]:
    return [(first_col + j, float(c)) for j, c in enumerate(row) if abs(c) > TERM_ZERO]


def marker_terms(
    marker: Marker, body: RigidBody | BeamBody | FeBody | None, first_col: int
) -> MarkerTerms:
    """MarkerTerms of `marker` on `body` (a RigidBody, a BeamBody, or None for the
    ground); `first_col` is the column of the body's first elastic coordinate."""
    terms: list[list[tuple[int, float]]] = [[] for _ in range(6)]
    if marker.node is not None and hasattr(body, "node_rows"):
        rows = cast("BeamBody", body).node_rows(marker.node)
        terms = [_row_terms(rows[d], first_col) for d in range(6)]
    return MarkerTerms(
        np.asarray(marker.position, dtype=float), np.asarray(marker.orientation, dtype=float), terms
    )


def _is_zero(v: ArrayLike) -> bool:
    return not np.any(np.asarray(v) != 0.0)


def _is_identity(c: ArrayLike) -> bool:
    return np.array_equal(np.asarray(c), np.eye(3))


def joint_motions(
    parent_marker: MarkerTerms,
    child_marker: MarkerTerms,
    translation_axes: NDArray[np.float64],
    rotation_axes: NDArray[np.float64],
    first_coordinate: int,
    reference_slots: bool = False,
) -> list[Motion]:
    """The motions from the parent's frame to the child's frame across one joint
    (module docstring). `parent_marker`, `child_marker`: MarkerTerms;
    `translation_axes`, `rotation_axes`: unit vectors in the parent marker's frame;
    the joint's coordinates are columns first_coordinate, first_coordinate + 1, ...
    (translations first). `reference_slots`: the parent marker's OFFSET and
    ROTATE_FIXED come first and always (even if zero and identity), so that they can
    be moved during a run (flexmbs.dynamics.absolute; the parent is the ground)."""
    out = []
    pm, cm = parent_marker, child_marker
    if reference_slots:
        out.append(Motion(OFFSET, vector=pm.position.copy()))
        out.append(Motion(ROTATE_FIXED, rotation=pm.orientation.copy()))
    elif not _is_zero(pm.position):
        out.append(Motion(OFFSET, vector=pm.position.copy()))
    for d in range(3):
        if pm.terms[d]:
            out.append(Motion(TRANSLATE, vector=_AXES[d].copy(), terms=list(pm.terms[d])))
    for d in range(3):
        if pm.terms[3 + d]:
            out.append(Motion(ROTATE, vector=_AXES[d].copy(), terms=list(pm.terms[3 + d])))
    if not reference_slots and not _is_identity(pm.orientation):
        out.append(Motion(ROTATE_FIXED, rotation=pm.orientation.copy()))
    col = first_coordinate
    for axis in translation_axes:
        out.append(Motion(TRANSLATE, vector=np.array(axis, dtype=float), terms=[(col, 1.0)]))
        col += 1
    for axis in rotation_axes:
        out.append(Motion(ROTATE, vector=np.array(axis, dtype=float), terms=[(col, 1.0)]))
        col += 1
    if not _is_identity(cm.orientation):
        out.append(Motion(ROTATE_FIXED, rotation=cm.orientation.T.copy()))
    for d in (2, 1, 0):
        if cm.terms[3 + d]:
            out.append(
                Motion(ROTATE, vector=_AXES[d].copy(), terms=[(c, -k) for c, k in cm.terms[3 + d]])
            )
    for d in range(3):
        if cm.terms[d]:
            out.append(
                Motion(TRANSLATE, vector=_AXES[d].copy(), terms=[(c, -k) for c, k in cm.terms[d]])
            )
    if not _is_zero(cm.position):
        out.append(Motion(OFFSET, vector=-cm.position))
    return out
