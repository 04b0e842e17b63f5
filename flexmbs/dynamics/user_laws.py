"""User force laws in the kernels (numba): the generalized force of a joint law on its
coordinate, the force and torque of a marker law at its marker, and their power.

A user law is a Python function compiled by numba for one fixed signature
(`flexmbs.model.user_laws.user_law`):

    law(t, q, u, params, out) -> None
        t       float64, s
        q, u    float64[::1] (nq): the coordinates and speeds of the model's state
        params  float64[::1]: the law's parameters
        out     float64[::1], zero on entry: a joint law writes out[0], the force
                (N) or torque (N m) on its coordinate; a marker law writes out[0:3],
                a force (N), and out[3:6], a torque (N m), in global axes or in the
                marker's axes

How the kernels call it. numba compiles the law as a C-callable function
(`numba.cfunc`); the model keeps the address of that entry point, an int64, in
ModelArrays.law_table, and `call_user_law` (an intrinsic) casts the address to a
pointer to a function of LAW_SIGNATURE and calls it: the same call numba emits for a
first-class function value (`numba.types.FunctionType`) through its C address. The
address is data, so the types of the kernels' arguments do not depend on the laws:
one compiled kernel, cached on disk, serves models with and without laws, whatever
laws they use. (A FunctionType value in the arguments would fix the number of laws in
the type, a tuple of n functions, and recompile the kernels for each n.) The call
costs about 5 ns more than the same arithmetic written in the kernel; the law is not
inlined.

Where they enter (FORMULATION.md sections 5 and 7): `user_law_forces` (in
body_forces) evaluates every law once per evaluation, adds the marker laws' loads to
the body forces like the point loads (`add_marker_load`), and keeps the outputs and
powers in ws.law_out; `add_joint_law_forces` adds the joint laws to Q* (and M* u' - Q*);
`user_law_power` is their power in the power of the non-conservative forces, so that
E = T + V_g + U + V_s - W_nc stays constant.
"""

import numba
from numba import types
from numba.core.errors import TypingError
from numba.extending import intrinsic

from ..config import jit
from ..kinematics.markers import marker_frame
from .marker_loads import add_marker_load

__all__ = ["LAW_SIGNATURE", "LAW_FUNCTION_TYPE", "JOINT_LAW", "MARKER_LAW",
           "LAW_TABLE_COLUMNS", "LAW_OUT_COLUMNS", "call_user_law", "register_law",
           "user_law_forces", "add_joint_law_forces", "user_law_power"]

VECTOR = types.Array(types.float64, 1, "C")
LAW_SIGNATURE = types.void(types.float64, VECTOR, VECTOR, VECTOR, VECTOR)
"""law(t, q, u, params, out): the one signature of every user law."""
LAW_FUNCTION_TYPE = types.FunctionType(LAW_SIGNATURE)

JOINT_LAW, MARKER_LAW = 0, 1  # law kinds
GLOBAL_AXES, MARKER_AXES = 0, 1  # axes of a marker law's force and torque

# columns of ModelArrays.law_table (nl, LAW_TABLE_COLUMNS), int64
L_KIND, L_ADDRESS, L_TARGET, L_AXES, L_PARAMS, L_PARAMS_END = range(6)
LAW_TABLE_COLUMNS = 6
"""kind; address of the compiled law; target: the joint coordinate's column (joint
law) or the marker's index in the marker table (marker law); axes of a marker law's
output; its params are law_params[start:end]."""

LAW_OUT_COLUMNS = 7
"""ws.law_out (nl, 7): the law's output (out[0] of a joint law; force and torque of a
marker law, turned to global axes) and, in column 6, its power (W)."""

_PYTHON_LAWS = {}  # address -> the Python function, for NUMBA_DISABLE_JIT=1


def register_law(address, py_func):
    """Remember the Python function of the compiled law at `address` (the address
    stays valid: compiled laws are kept for the life of the process)."""
    _PYTHON_LAWS[int(address)] = py_func


@intrinsic
def _call_at_address(typingctx, address, t, q, u, params, out):
    """Calls the function of LAW_SIGNATURE at `address` (int64) with
    (t, q, u, params, out)."""
    if not isinstance(address, types.Integer):
        raise TypingError(f"the address of a user law is an integer, got {address}")
    for name, a in (("q", q), ("u", u), ("params", params), ("out", out)):
        if not (isinstance(a, types.Array) and a.ndim == 1 and a.dtype == types.float64
                and a.layout == "C"):
            raise TypingError(f"user law argument {name}: expected a contiguous 1-D "
                              f"float64 array, got {a}")
    sig = types.void(types.int64, types.float64, VECTOR, VECTOR, VECTOR, VECTOR)

    def codegen(context, builder, signature, args):
        pointer_type = context.get_value_type(LAW_FUNCTION_TYPE.ftype)
        function = builder.inttoptr(args[0], pointer_type)
        builder.call(function, args[1:])
        return context.get_dummy_value()

    return sig, codegen


if numba.config.DISABLE_JIT:
    def call_user_law(address, t, q, u, params, out):
        """The law at `address` (its Python function when numba is off)."""
        _PYTHON_LAWS[int(address)](t, q, u, params, out)
else:
    call_user_law = _call_at_address


@jit
def user_law_forces(m, ws, t):
    """Evaluates every user law at time t (s) and the state of the last
    forward_kinematics (ws.q, ws.u): ws.law_out[l, :6] = its output (a marker law's
    force and torque in global axes) and ws.law_out[l, 6] its power, out[0] xd (joint
    law) or F . dp/dt + T . w_marker (marker law) (W); adds the marker laws' loads to
    ws.body_force and ws.flex_force."""
    pos = ws.v3[0]
    vel = ws.v3[1]
    om = ws.v3[2]
    arm = ws.v3[3]
    rot = ws.m33[3]
    tm = ws.m33[4]
    for law in range(m.law_table.shape[0]):
        row = m.law_table[law]
        out = ws.law_out[law]
        out[:] = 0.0
        params = m.law_params[row[L_PARAMS]:row[L_PARAMS_END]]
        if row[L_KIND] == JOINT_LAW:
            call_user_law(row[L_ADDRESS], t, ws.q, ws.u, params, out[0:1])
            out[6] = out[0] * ws.xd[row[L_TARGET]]
            continue
        call_user_law(row[L_ADDRESS], t, ws.q, ws.u, params, out[0:6])
        k = row[L_TARGET]
        marker_frame(m, ws, k, pos, rot, vel, om, arm, tm)
        if row[L_AXES] == MARKER_AXES:
            for first in (0, 3):
                a0 = out[first]
                a1 = out[first + 1]
                a2 = out[first + 2]
                for r in range(3):
                    out[first + r] = rot[r, 0] * a0 + rot[r, 1] * a1 + rot[r, 2] * a2
        i = m.marker_body[k]
        add_marker_load(k, False, out[0:3], ws.rot[i], arm, tm, m.marker_term_ptr,
                        m.marker_term_col, m.marker_term_coef, m.col_qindex,
                        ws.body_force[i], ws.flex_force)
        add_marker_load(k, True, out[3:6], ws.rot[i], arm, tm, m.marker_term_ptr,
                        m.marker_term_col, m.marker_term_coef, m.col_qindex,
                        ws.body_force[i], ws.flex_force)
        out[6] = out[0] * vel[0] + out[1] * vel[1] + out[2] * vel[2] + \
            out[3] * om[0] + out[4] * om[1] + out[5] * om[2]


@jit
def add_joint_law_forces(law_table, law_out, coord_qindex, out, sign):
    """out[q index of its coordinate] += sign * the generalized force of each joint
    law (after user_law_forces): sign +1 into Q*, -1 into M* u' - Q*."""
    for law in range(law_table.shape[0]):
        if law_table[law, L_KIND] == JOINT_LAW:
            out[coord_qindex[law_table[law, L_TARGET]]] += sign * law_out[law, 0]


@jit
def user_law_power(law_out):
    """The power of all user laws (W, after user_law_forces)."""
    p = 0.0
    for law in range(law_out.shape[0]):
        p += law_out[law, 6]
    return p
