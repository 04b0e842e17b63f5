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
(`numba.cfunc`); the model keeps the address of that entry point as data and
`call_user_law` (an intrinsic) casts it to a pointer to a function of LAW_SIGNATURE
and calls it: the same call numba emits for a first-class function value
(`numba.types.FunctionType`) through its C address. The types of the kernels'
arguments do not depend on the laws, so one compiled kernel, cached on disk, serves
models with and without laws, whatever laws they use. (A FunctionType value in the
arguments would fix the number of laws in the type, a tuple of n functions, and
recompile the kernels for each n.) The call costs about 5 ns more than the same
arithmetic written in the kernel; the law is not inlined.

Where the laws are kept. Every field of ModelArrays and Workspace costs every
evaluation of every model a little (the kernels pass them as tuples: about 1 % of
H2's residual per array), so the laws add none. They are entries of the
time-function table after its time functions, joint laws (tf_kind JOINT_LAW) then
marker laws (MARKER_LAW), each with the data

    [address, target, axes, params...]

(target: the joint coordinate's column, or the marker's index in the marker table;
axes of a marker law's output: GLOBAL_AXES or MARKER_AXES). A model without laws pays
one comparison of the table's last kind per evaluation.

Where they enter (docs/explanation/formulation.md sections 5 and 7), evaluated on demand like the
joint springs and the point loads: `joint_law_forces` (in body_forces) puts each joint
law's force into ws.flex_force at its coordinate (an entry no other force uses there),
from where `add_joint_law_forces` adds it to Q* (and to M* u' - Q*) and
`joint_law_power` takes its power; `marker_law_loads` (in body_forces) adds the marker
laws' loads to the body forces like the point loads (`add_marker_load`), and
`marker_law_power` evaluates them again for their power. The power enters W_nc, so
that E = T + V_g + U + V_s - W_nc stays constant. Scratch: ws.law_out (a law's out).
"""

import sys

import numba
from numba import types
from numba.core.errors import TypingError
from numba.extending import intrinsic

from ..codes import GLOBAL_AXES, JOINT_LAW, MARKER_AXES, MARKER_LAW
from ..kinematics.markers import marker_frame
from ..runtime.config import jit, jit_inline
from .marker_loads import add_marker_load

__all__ = ["LAW_SIGNATURE", "LAW_FUNCTION_TYPE", "JOINT_LAW", "MARKER_LAW", "GLOBAL_AXES",
           "MARKER_AXES", "ADDRESS_LIMIT", "call_user_law", "compile_law", "register_law",
           "law_entry", "has_user_laws", "has_marker_laws", "joint_law_forces",
           "add_joint_law_forces", "joint_law_power", "marker_law_loads",
           "marker_law_power"]

VECTOR = types.Array(types.float64, 1, "C")
LAW_SIGNATURE = types.void(types.float64, VECTOR, VECTOR, VECTOR, VECTOR)
"""law(t, q, u, params, out): the one signature of every user law."""
LAW_FUNCTION_TYPE = types.FunctionType(LAW_SIGNATURE)

D_ADDRESS, D_TARGET, D_AXES, D_PARAMS = range(4)  # a law's data, params from D_PARAMS
ADDRESS_LIMIT = 2 ** 53  # addresses are kept as float64, exact below this

_PYTHON_LAWS: dict[int, object] = {}  # address -> the Python function, for NUMBA_DISABLE_JIT=1


def register_law(address, py_func):
    """Remember the Python function of the compiled law at `address` (the address
    stays valid: compiled laws are kept for the life of the process)."""
    _PYTHON_LAWS[int(address)] = py_func


def compile_law(py_func, name, cache):
    """The law `py_func` compiled by numba.cfunc for LAW_SIGNATURE (`name` for the
    error message), from numba's on-disk cache where it can keep it:
    not for a function numba cannot cache (typed at the interactive prompt) nor for
    one whose module is not importable by its name (a file run with importlib and not
    entered in sys.modules: numba would cache it but not load it back); and compiled
    afresh when loading from the cache fails."""
    def cfunc(use_cache):
        return numba.cfunc(LAW_SIGNATURE, error_model="numpy", cache=use_cache)(py_func)

    if getattr(py_func, "__module__", None) not in sys.modules:
        cache = False
    try:
        if cache:
            try:
                return cfunc(True)
            except Exception:  # noqa: BLE001 (numba's caching errors vary; retry fresh)
                pass
        return cfunc(False)
    except Exception as exc:
        first = str(exc).strip().splitlines()
        raise TypeError(f'user law "{name}" could not be compiled as law(t: float64, '
                        f"q, u, params, out: float64[::1]) -> None (write the result into "
                        f"out, return nothing): {type(exc).__name__}: "
                        f"{first[0] if first else ''}") from exc


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


if numba.config.DISABLE_JIT:  # type: ignore[attr-defined]
    def call_user_law(address, t, q, u, params, out):
        """The law at `address` (its Python function when numba is off)."""
        _PYTHON_LAWS[int(address)](t, q, u, params, out)
else:
    call_user_law = _call_at_address  # type: ignore[assignment]


def law_entry(address, target, axes, params):
    """The time-function data of a law (D_ADDRESS ...), float64."""
    if not 0 < address < ADDRESS_LIMIT:
        raise ValueError(f"a compiled law's address {address:#x} does not fit a float64")
    return [float(address), float(target), float(axes)] + [float(p) for p in params]


@jit_inline
def has_user_laws(tf_kind):
    """True if the time-function table ends with user laws."""
    return tf_kind.shape[0] > 0 and tf_kind[tf_kind.shape[0] - 1] < 0


@jit_inline
def has_marker_laws(tf_kind):
    """True if the time-function table ends with marker laws."""
    return tf_kind.shape[0] > 0 and tf_kind[tf_kind.shape[0] - 1] == MARKER_LAW


@jit
def _laws_start(tf_kind):
    """Index of the first user law (joint laws first) in the time-function table."""
    k = tf_kind.shape[0]
    while k > 0 and tf_kind[k - 1] < 0:
        k -= 1
    return k


@jit
def _marker_laws_start(tf_kind):
    """Index of the first marker law (the joint laws end there)."""
    k = tf_kind.shape[0]
    while k > 0 and tf_kind[k - 1] == MARKER_LAW:
        k -= 1
    return k


@jit
def _law_out(law_out, size):
    """The law's out: the first `size` (1 or 6) values of law_out (ws.law_out, (6,)),
    zeroed."""
    out = law_out[:size]
    out[:] = 0.0
    return out


@jit
def joint_law_forces(tf_kind, tf_ptr, tf_data, coord_qindex, q, u, t, law_out,
                     flex_force):
    """flex_force[q index of its coordinate] = each joint law's generalized force
    (N or N m) at time t (s) and the state q, u; law_out is ws.law_out (the law's
    out)."""
    for k in range(_laws_start(tf_kind), _marker_laws_start(tf_kind)):
        d = tf_data[tf_ptr[k]:tf_ptr[k + 1]]
        out = _law_out(law_out, 1)
        call_user_law(int(d[D_ADDRESS]), t, q, u, d[D_PARAMS:], out)
        flex_force[coord_qindex[int(d[D_TARGET])]] = out[0]


@jit
def add_joint_law_forces(tf_kind, tf_ptr, tf_data, coord_qindex, flex_force, out, sign):
    """out[q index] += sign * the joint laws' forces (after joint_law_forces): sign +1
    into Q*, -1 into M* u' - Q*."""
    for k in range(_laws_start(tf_kind), _marker_laws_start(tf_kind)):
        qc = coord_qindex[int(tf_data[tf_ptr[k] + D_TARGET])]
        out[qc] += sign * flex_force[qc]


@jit
def joint_law_power(tf_kind, tf_ptr, tf_data, coord_qindex, flex_force, u):
    """Power of the joint laws (W, after joint_law_forces): force times rate."""
    p = 0.0
    for k in range(_laws_start(tf_kind), _marker_laws_start(tf_kind)):
        qc = coord_qindex[int(tf_data[tf_ptr[k] + D_TARGET])]
        p += flex_force[qc] * u[qc]
    return p


@jit_inline
def _marker_law_wrench(m, ws, k, t):
    """Marker law k (its table index) at time t: its force and torque in global axes
    (N, N m; a view of ws.law_out) and its marker, after the marker's frame
    (`marker_frame` into ws.marker_pos ... marker_tangent)."""
    d = m.tf_data[m.tf_ptr[k]:m.tf_ptr[k + 1]]
    out = _law_out(ws.law_out, 6)
    call_user_law(int(d[D_ADDRESS]), t, ws.q, ws.u, d[D_PARAMS:], out)
    mk = int(d[D_TARGET])
    rot = ws.marker_axes
    marker_frame(m, ws, mk, ws.marker_pos, rot, ws.marker_vel, ws.marker_omega,
                 ws.marker_arm, ws.marker_tangent)
    if int(d[D_AXES]) == MARKER_AXES:
        for first in (0, 3):
            a0 = out[first]
            a1 = out[first + 1]
            a2 = out[first + 2]
            for r in range(3):
                out[first + r] = rot[r, 0] * a0 + rot[r, 1] * a1 + rot[r, 2] * a2
    return out, mk


@jit
def marker_law_loads(m, ws, t):
    """Adds every marker law's force and torque (at time t, s, and the state of the
    last forward_kinematics) at its marker to ws.body_force and ws.flex_force."""
    for k in range(_marker_laws_start(m.tf_kind), m.tf_kind.shape[0]):
        out, mk = _marker_law_wrench(m, ws, k, t)
        i = m.marker_body[mk]
        for part in range(2):   # the force, then the torque (a bool not a constant:
            # one compiled add_marker_load)
            add_marker_load(mk, part == 1, out[3 * part:3 * part + 3], ws.rot[i],
                            ws.marker_arm, ws.marker_tangent, m.marker_term_ptr,
                            m.marker_term_col, m.marker_term_coef, m.col_qindex,
                            ws.body_force[i], ws.flex_force)


@jit
def marker_law_power(m, ws, t):
    """Power of the marker laws (W): F . dp/dt + T . w_marker of each."""
    p = 0.0
    for k in range(_marker_laws_start(m.tf_kind), m.tf_kind.shape[0]):
        out, _ = _marker_law_wrench(m, ws, k, t)
        vel = ws.marker_vel
        om = ws.marker_omega
        p += out[0] * vel[0] + out[1] * vel[1] + out[2] * vel[2] + \
            out[3] * om[0] + out[4] * om[1] + out[5] * om[2]
    return p
