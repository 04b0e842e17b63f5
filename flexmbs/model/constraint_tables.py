"""The constraint equations of cut joints (docs/explanation/formulation.md section 5; Huang
H2.145-2.147) as the rows that `flexmbs.dynamics.constraints` evaluates.

A cut joint from marker P (on its parent) to marker O (on its child) allows the
translations along its translation axes t_k and the rotations about its rotation axes
a_k (in P's axes; O coincides with P at zero joint values). With A_P, A_O the global
axes of the (deformed) markers and d = p_O - p_P:

* position rows (3 - nt): (A_P n) . d = 0 for an orthonormal basis n of the
  complement of the translation axes (the relative position stays in their span);
* orientation rows, by the number of rotation axes nr:
    nr = 0: (A_P e_y) . (A_O e_z) = (A_P e_z) . (A_O e_x) = (A_P e_x) . (A_O e_y) = 0;
    nr = 1 (axis a): (A_P b_1) . (A_O a) = (A_P b_2) . (A_O a) = 0, b_1, b_2 normal to a;
    nr = 2: (A_P a_1) . (A_O a_2) = a_1 . a_2 (a rotation about a_1, then about the
            turned a_2, keeps the angle between a_1 and A_O a_2);
    nr = 3: none.

So a revolute joint has 5 rows, prismatic 5, cylindrical 4, universal 4, spherical 3,
planar 3, fixed 6, free 0. Each row is (kind, x, y, c): kind 0, position, x = n (P
axes); kind 1, orientation, (A_P x) . (A_O y) - c with x in P axes and y in O axes.

The rolling contacts (flexmbs.model.items.Contact) follow the cut joints' rows:
a rolling disk has 3 rows, kind 2 (CONTACT_NORMAL: the position equation along the
plane's normal, holonomic) and twice kind 3 (CONTACT_TANGENT: the no-slip velocity
equations along the plane's two tangent directions, nonholonomic: no position
equation). A knife edge is the same with radius 0 and the first tangent row only (t1,
across the blade). Their geometry is in the contact_* arrays; x, y, c of their rows
are unused.

A coupler (flexmbs.model.coupler) gives one row of kind 4 (COUPLER), after the
contacts' rows: x_f - k x_l - o = 0 between the joint coordinates of columns
coupler_col = [follower, leader], k and o in coupler_multiplier, coupler_offset; x, y,
c of its row are unused.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from ..codes import CONTACT_NORMAL, CONTACT_TANGENT, COUPLER, ORIENTATION, POSITION

if TYPE_CHECKING:
    from .coupler import Coupler
    from .description import Model
    from .items import Contact, Joint

__all__ = [
    "ConstraintRow",
    "joint_constraint_rows",
    "constraint_tables",
    "POSITION",
    "ORIENTATION",
    "CONTACT_NORMAL",
    "CONTACT_TANGENT",
    "COUPLER",
    "CONTACT_ROWS",
]

CONTACT_ROWS = {
    "rolling_disk": (
        (CONTACT_NORMAL, "normal contact (position)"),
        (CONTACT_TANGENT, "no slip along the rolling direction"),
        (CONTACT_TANGENT, "no slip across the disk"),
    ),
    "knife_edge": (
        (CONTACT_NORMAL, "normal contact (position)"),
        (CONTACT_TANGENT, "no slip across the blade"),
    ),
}


@dataclass
class ConstraintRow:
    """One constraint equation of a cut joint (module docstring)."""

    kind: int
    x: np.ndarray
    y: np.ndarray
    c: float
    text: str


def _complement(vectors: NDArray[np.float64]) -> NDArray[np.float64]:
    """An orthonormal basis (rows) of the complement of span(vectors) in R^3."""
    if len(vectors) == 0:
        return np.eye(3)
    u, s, _ = np.linalg.svd(np.asarray(vectors, dtype=float).T)
    rank = int(np.sum(s > 1e-9 * s.max()))
    return u[:, rank:].T


def joint_constraint_rows(joint: Joint) -> list[ConstraintRow]:
    """The ConstraintRows of `joint` when it is cut."""
    rows = []
    for _k, n in enumerate(_complement(joint.translation_axes)):
        rows.append(
            ConstraintRow(
                POSITION, n, np.zeros(3), 0.0, f"position along {np.round(n, 6).tolist()}"
            )
        )
    axes = np.asarray(joint.rotation_axes, dtype=float)
    e = np.eye(3)
    if len(axes) == 0:
        for a, b, name in ((1, 2, "y.z"), (2, 0, "z.x"), (0, 1, "x.y")):
            rows.append(ConstraintRow(ORIENTATION, e[a], e[b], 0.0, f"orientation {name}"))
    elif len(axes) == 1:
        for _k, b in enumerate(_complement(axes)):
            rows.append(
                ConstraintRow(
                    ORIENTATION,
                    b,
                    axes[0],
                    0.0,
                    f"axis {np.round(axes[0], 6).tolist()} normal to {np.round(b, 6).tolist()}",
                )
            )
    elif len(axes) == 2:
        rows.append(
            ConstraintRow(
                ORIENTATION,
                axes[0],
                axes[1],
                float(axes[0] @ axes[1]),
                "angle between the two rotation axes",
            )
        )
    return rows


def constraint_tables(
    model: Model,
    cut_joints: Sequence[Joint],
    marker_id: Callable[[str, str], int],
    contacts: Sequence[Contact] = (),
    couplers: Sequence[Coupler] = (),
    coupler_cols: Sequence[tuple[int, int]] = (),
) -> tuple[dict[str, np.ndarray], list[str]]:
    """dict of the ModelArrays fields cut_*, contact_*, coupler_* and con_* and the
    row descriptions, for the cut joints `cut_joints` (Joint objects), the rolling
    contacts `contacts` (Contact objects), then the couplers `couplers` at their
    columns `coupler_cols` ((follower, leader) each); marker_id(body, marker) gives
    marker-table indices. Every row starts active (`con_active`); redundant ones are switched off
    when the initial state is made consistent (flexmbs.dynamics.constrained)."""
    kind, x, y, c, joint_of, texts = [], [], [], [], [], []
    mp, mo, ptr = [], [], [0]
    for j, joint in enumerate(cut_joints):
        mp.append(marker_id(joint.parent, joint.parent_marker))
        mo.append(marker_id(joint.child, joint.child_marker))
        for row in joint_constraint_rows(joint):
            kind.append(row.kind)
            x.append(row.x)
            y.append(row.y)
            c.append(row.c)
            joint_of.append(j)
            texts.append(f'joint "{joint.name}": {row.text}')
        ptr.append(len(kind))
    cd, cp, axis, normal, radius, cptr = [], [], [], [], [], [len(kind)]
    for contact in contacts:
        cd.append(marker_id(contact.disk, contact.disk_marker))
        cp.append(marker_id(contact.plane, contact.plane_marker))
        axis.append(contact.axis)
        normal.append(contact.normal)
        radius.append(contact.radius)
        for row_kind, text in CONTACT_ROWS[contact.type]:
            kind.append(row_kind)
            x.append(np.zeros(3))
            y.append(np.zeros(3))
            c.append(0.0)
            texts.append(f'contact "{contact.name}": {text}')
        cptr.append(len(kind))
    for coupler in couplers:
        kind.append(COUPLER)
        x.append(np.zeros(3))
        y.append(np.zeros(3))
        c.append(0.0)
        texts.append(
            f'coupler "{coupler.name}": {coupler.joint}[{coupler.coordinate}] = '
            f"{coupler.multiplier:g} {coupler.leader}[{coupler.leader_coordinate}] "
            f"+ {coupler.offset:g}"
        )
    i64 = np.int64
    arrays = dict(
        cut_marker_parent=np.array(mp, dtype=i64),
        cut_marker_child=np.array(mo, dtype=i64),
        cut_row_ptr=np.array(ptr, dtype=i64),
        contact_marker_disk=np.array(cd, dtype=i64),
        contact_marker_plane=np.array(cp, dtype=i64),
        contact_axis=np.array(axis, dtype=float).reshape(-1, 3),
        contact_normal=np.array(normal, dtype=float).reshape(-1, 3),
        contact_radius=np.array(radius, dtype=float),
        contact_row_ptr=np.array(cptr, dtype=i64),
        coupler_col=np.array(coupler_cols, dtype=i64).reshape(-1, 2),
        coupler_multiplier=np.array([k.multiplier for k in couplers], dtype=float),
        coupler_offset=np.array([k.offset for k in couplers], dtype=float),
        con_kind=np.array(kind, dtype=i64),
        con_x=np.array(x, dtype=float).reshape(-1, 3),
        con_y=np.array(y, dtype=float).reshape(-1, 3),
        con_c=np.array(c, dtype=float),
        con_active=np.arange(len(kind), dtype=i64),
    )
    return arrays, texts
