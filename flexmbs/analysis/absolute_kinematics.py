"""The constraint Jacobian in absolute coordinates, Führer and Wallrapp's view of a linkage:
every moving rigid body has six position variables (its frame's translation and
rotation, both along its own axes) and every joint, tree or cut, gives its constraint
equations (flexmbs.model.constraint_tables). For Bricard's linkage that is 30
variables and 30 equations of rank 29 (Führer and Wallrapp section 5, table 1).

With a body's pose (r, A) and a marker at s (body axes), a variation (dr', dpi') of
the body moves the marker by A (dr' + dpi' x s) and turns it by A dpi'. A joint's
rows, with g = A_P x, h = A_O y, d = p_O - p_P (flexmbs.dynamics.constraints), vary as

    position row:     dphi = g . (dp_O - dp_P) + (A_P dpi'_P x g) . d
    orientation row:  dphi = (g x h) . (A_P dpi'_P - A_O dpi'_O)

C^t (rows = equations, columns = variables) is factorised by QR with column pivoting
as in flexmbs.analysis.linearize.independent_coordinates (Führer and Wallrapp (12)-(16)), giving its
rank, the degrees of freedom, the variables chosen as independent and J_y.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..dynamics import api
from ..errors import ModelError
from ..model.constraint_tables import POSITION, joint_constraint_rows
from ..model.description import GROUND, BeamBody
from .linearize import independent_coordinates

if TYPE_CHECKING:
    from ..model.compiled import CompiledModel

__all__ = [
    "AbsoluteKinematics",
    "absolute_kinematics",
    "absolute_constraint_jacobian",
    "VARIABLE_TEXTS",
]

VARIABLE_TEXTS = (
    "translation in 1",
    "translation in 2",
    "translation in 3",
    "rotation about 1",
    "rotation about 2",
    "rotation about 3",
)


@dataclass
class AbsoluteKinematics:
    """Rank, degrees of freedom, the independent variables and J_y (variables, ndof),
    each variable named (body, VARIABLE_TEXTS entry); rows name joint and equation."""

    jacobian: np.ndarray
    variables: list[tuple[str, str]]
    rows: list[str]
    rank: int
    independent: list[tuple[str, str]]
    J_y: np.ndarray

    @property
    def dof(self) -> int:
        return self.J_y.shape[1]

    def table(self) -> str:
        """J_y in the form of Führer and Wallrapp 1984 table 1: one line per variable."""
        head = "  ".join(f"y{k + 1:<9d}" for k in range(self.dof))
        lines = [f"{'body':<10s} {'variable':<18s} {head}"]
        for (body, text), row in zip(self.variables, self.J_y):
            values = "  ".join(f"{v:10.4f}" for v in row)
            lines.append(f"{body:<10s} {text:<18s} {values}")
        return "\n".join(lines)


def _marker_frame(
    cm: CompiledModel,
    poses: Mapping[str, tuple[NDArray[np.float64], NDArray[np.float64]]],
    body: str,
    name: str,
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """(position, axes, s, A) of a marker on a rigid body (or the ground), global."""
    marker = cm.model.marker(body, name)
    if body == GROUND:
        return marker.position, marker.orientation, marker.position, np.eye(3)
    r, a = poses[body]
    return r + a @ marker.position, a @ marker.orientation, marker.position, a


def absolute_constraint_jacobian(
    cm: CompiledModel, q: NDArray[np.float64], t: float = 0.0
) -> tuple[NDArray[np.float64], list[tuple[str, str]], list[str]]:
    """(C^t (rows, 6 x moving bodies), variable names, row texts) at the state q: the
    rows of every joint, the variables [dr'; dpi'] of each body in body axes. Rigid
    bodies only (ModelError otherwise)."""
    model = cm.model
    bodies = list(cm.topology.body_names)
    for name in bodies:
        if isinstance(model.bodies[name], BeamBody):
            raise ModelError(
                "the absolute-coordinate view is for rigid bodies only", f'body "{name}"', "type"
            )
    r, rot = api.body_poses(cm, q, t)
    poses = {name: (r[k], rot[k]) for k, name in enumerate(bodies)}
    column = {name: 6 * k for k, name in enumerate(bodies)}
    variables = [(name, text) for name in bodies for text in VARIABLE_TEXTS]
    rows, texts = [], []
    for joint in model.joints.values():
        pp, ap, sp, abp = _marker_frame(cm, poses, joint.parent, joint.parent_marker)
        po, ao, so, abo = _marker_frame(cm, poses, joint.child, joint.child_marker)
        d = po - pp
        for row in joint_constraint_rows(joint):
            out = np.zeros(6 * len(bodies))
            g = ap @ row.x
            if row.kind == POSITION:
                for body, sign, s, a in (
                    (joint.child, 1.0, so, abo),
                    (joint.parent, -1.0, sp, abp),
                ):
                    if body != GROUND:
                        gb = a.T @ g
                        out[column[body] : column[body] + 3] += sign * gb
                        out[column[body] + 3 : column[body] + 6] += sign * np.cross(s, gb)
                if joint.parent != GROUND:
                    c = column[joint.parent] + 3
                    out[c : c + 3] += abp.T @ np.cross(g, d)
            else:
                gh = np.cross(g, ao @ row.y)
                for body, sign, a in ((joint.parent, 1.0, abp), (joint.child, -1.0, abo)):
                    if body != GROUND:
                        c = column[body] + 3
                        out[c : c + 3] += sign * (a.T @ gh)
            rows.append(out)
            texts.append(f'joint "{joint.name}": {row.text}')
    return np.array(rows).reshape(-1, 6 * len(bodies)), variables, texts


def absolute_kinematics(
    cm: CompiledModel, q: ArrayLike | None = None, t: float = 0.0
) -> AbsoluteKinematics:
    """AbsoluteKinematics at q (default the initial state)."""
    q = np.array(cm.q0 if q is None else q, dtype=float)
    jac, variables, texts = absolute_constraint_jacobian(cm, q, t)
    independent, _, j_y, rank = independent_coordinates(jac)
    return AbsoluteKinematics(jac, variables, texts, rank, [variables[k] for k in independent], j_y)
