"""A force or a torque at a marker, as generalized body forces (numba).

docs/explanation/formulation.md section 2, applied forces: a force F (global) at the
marker's deformed position s (body axes of its body b, rotation A) gives

    L(s)^T F = [F; ~s A^T F; S^T A^T F],

a torque T (global) on the marker's node

    [0; A^T T; PS^T Tm(th)^T A^T T],

with S and PS the marker's translation and rotation terms over the elastic
coordinates (ModelArrays.marker_term_*) and Tm the tangent map of its Cardan angles
(`flexmbs.kinematics.markers.marker_frame`). A marker on a rigid body, or on a
clamped node, has no elastic terms. Used by the point loads of the model and by the
marker user laws.
"""

from ..runtime.config import jit

__all__ = ["add_marker_load"]


@jit
def add_marker_load(k, torque, load, rot, arm, tm, term_ptr, term_col, term_coef,
                    col_qindex, body_force, flex_force):
    """Adds load (3,) (global axes; a force in N if not `torque`, else a torque in N m)
    at marker k to body_force (6,) = [global force; body-axes moment] of its body and
    to flex_force (nq,) at the elastic coordinates it acts on.

    rot (3, 3): the body's rotation A; arm (3,): A s, the marker relative to the body
    origin (global, m); tm (3, 3): the marker's tangent map Tm(th) (body axes), as
    marker_frame gives them; term_ptr, term_col, term_coef, col_qindex: the marker
    terms and the q index of each column.
    """
    v0 = rot[0, 0] * load[0] + rot[1, 0] * load[1] + rot[2, 0] * load[2]  # A^T load
    v1 = rot[0, 1] * load[0] + rot[1, 1] * load[1] + rot[2, 1] * load[2]
    v2 = rot[0, 2] * load[0] + rot[1, 2] * load[1] + rot[2, 2] * load[2]
    if not torque:
        s0 = rot[0, 0] * arm[0] + rot[1, 0] * arm[1] + rot[2, 0] * arm[2]  # s = A^T arm
        s1 = rot[0, 1] * arm[0] + rot[1, 1] * arm[1] + rot[2, 1] * arm[2]
        s2 = rot[0, 2] * arm[0] + rot[1, 2] * arm[1] + rot[2, 2] * arm[2]
        for r in range(3):
            body_force[r] += load[r]
        body_force[3] += s1 * v2 - s2 * v1
        body_force[4] += s2 * v0 - s0 * v2
        body_force[5] += s0 * v1 - s1 * v0
        first = 0
        g0, g1, g2 = v0, v1, v2
    else:
        body_force[3] += v0
        body_force[4] += v1
        body_force[5] += v2
        first = 3
        g0 = tm[0, 0] * v0 + tm[1, 0] * v1 + tm[2, 0] * v2  # Tm^T A^T T
        g1 = tm[0, 1] * v0 + tm[1, 1] * v1 + tm[2, 1] * v2
        g2 = tm[0, 2] * v0 + tm[1, 2] * v1 + tm[2, 2] * v2
    for d in range(3):
        g = g0 if d == 0 else (g1 if d == 1 else g2)
        a = 6 * k + first + d
        for j in range(term_ptr[a], term_ptr[a + 1]):
            flex_force[col_qindex[term_col[j]]] += term_coef[j] * g
