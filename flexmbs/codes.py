"""Integer codes that the model's tables write and the kernels read: a leaf module, so
that both sides name the same constant without importing each other.

Constraint rows (flexmbs.model.constraint_tables, flexmbs.dynamics.constraints):
POSITION and ORIENTATION rows of cut joints; CONTACT_NORMAL (holonomic) and
CONTACT_TANGENT (nonholonomic, no position equation) rows of rolling contacts; COUPLER
rows of couplers (one joint coordinate tied linearly to another).

User force laws (flexmbs.model.user_laws, flexmbs.dynamics.user_laws): JOINT_LAW and
MARKER_LAW are the tf_kind of a law's entry (time functions have kinds >= 0);
GLOBAL_AXES and MARKER_AXES are the axes of a marker law's force and torque.
"""

__all__ = [
    "POSITION",
    "ORIENTATION",
    "CONTACT_NORMAL",
    "CONTACT_TANGENT",
    "COUPLER",
    "JOINT_LAW",
    "MARKER_LAW",
    "GLOBAL_AXES",
    "MARKER_AXES",
]

POSITION, ORIENTATION, CONTACT_NORMAL, CONTACT_TANGENT, COUPLER = 0, 1, 2, 3, 4
JOINT_LAW, MARKER_LAW = -1, -2
GLOBAL_AXES, MARKER_AXES = 0, 1
