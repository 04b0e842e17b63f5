"""One rigid body in the floating-frame velocities v = [dr/dt (global); w (body axes)].

docs/explanation/formulation.md section 2 with nf = 0: St = m c (first moment, body axes),
I_O the inertia about the frame origin (body axes), A the body-to-global rotation.

    M = [[m I3, -A ~St], [~St A^T, I_O]]
    Qv = [-A (~w ~w St); -~w I_O w]
    gravity g (global): [m g; ~St A^T g]
"""

from ..runtime.config import jit_inline, jit_shared

# Helpers called per body take arrays, not the model tuple: a call that passes the
# tuple pays a reference count for each of its arrays. They are inlined: a compiled
# call passes each array as its 7 to 9 fields (some 50 words pushed a call).

__all__ = ["apply_body_mass", "body_inertial_and_gravity_force"]


@jit_inline
def apply_body_mass(mass, st, io, rot, vr, vw, out, col):
    """out[0:6, col] = M_i [vr; vw] (vr global, vw body axes; out: [global; body axes]);
    mass (kg), st = St (kg m) and io = I_O (kg m^2) of the body, in body axes."""
    # st x vw (body axes), then -A (st x vw)
    a0 = st[1] * vw[2] - st[2] * vw[1]
    a1 = st[2] * vw[0] - st[0] * vw[2]
    a2 = st[0] * vw[1] - st[1] * vw[0]
    for r in range(3):
        out[r, col] = mass * vr[r] - (rot[r, 0] * a0 + rot[r, 1] * a1 + rot[r, 2] * a2)
    # st x (A^T vr) + I_O vw
    b0 = rot[0, 0] * vr[0] + rot[1, 0] * vr[1] + rot[2, 0] * vr[2]
    b1 = rot[0, 1] * vr[0] + rot[1, 1] * vr[1] + rot[2, 1] * vr[2]
    b2 = rot[0, 2] * vr[0] + rot[1, 2] * vr[1] + rot[2, 2] * vr[2]
    out[3, col] = st[1] * b2 - st[2] * b1 + io[0, 0] * vw[0] + io[0, 1] * vw[1] + io[0, 2] * vw[2]
    out[4, col] = st[2] * b0 - st[0] * b2 + io[1, 0] * vw[0] + io[1, 1] * vw[1] + io[1, 2] * vw[2]
    out[5, col] = st[0] * b1 - st[1] * b0 + io[2, 0] * vw[0] + io[2, 1] * vw[1] + io[2, 2] * vw[2]


@jit_shared
def body_inertial_and_gravity_force(mass, st, io, g, rot, w, out):
    """out[0:6] = Qv_i + Qe_gravity_i ([global force; body-axes moment], N and N m).

    mass, st, io as in apply_body_mass; g gravity (global, m/s^2); w angular velocity
    in body axes (rad/s).
    """
    # w x (w x St) in body axes
    c0 = w[1] * st[2] - w[2] * st[1]
    c1 = w[2] * st[0] - w[0] * st[2]
    c2 = w[0] * st[1] - w[1] * st[0]
    e0 = w[1] * c2 - w[2] * c1
    e1 = w[2] * c0 - w[0] * c2
    e2 = w[0] * c1 - w[1] * c0
    for r in range(3):
        out[r] = mass * g[r] - (rot[r, 0] * e0 + rot[r, 1] * e1 + rot[r, 2] * e2)
    # -w x (I_O w) + St x (A^T g)
    h0 = io[0, 0] * w[0] + io[0, 1] * w[1] + io[0, 2] * w[2]
    h1 = io[1, 0] * w[0] + io[1, 1] * w[1] + io[1, 2] * w[2]
    h2 = io[2, 0] * w[0] + io[2, 1] * w[1] + io[2, 2] * w[2]
    gb0 = rot[0, 0] * g[0] + rot[1, 0] * g[1] + rot[2, 0] * g[2]
    gb1 = rot[0, 1] * g[0] + rot[1, 1] * g[1] + rot[2, 1] * g[2]
    gb2 = rot[0, 2] * g[0] + rot[1, 2] * g[1] + rot[2, 2] * g[2]
    out[3] = -(w[1] * h2 - w[2] * h1) + st[1] * gb2 - st[2] * gb1
    out[4] = -(w[2] * h0 - w[0] * h2) + st[2] * gb0 - st[0] * gb2
    out[5] = -(w[0] * h1 - w[1] * h0) + st[0] * gb1 - st[1] * gb0
