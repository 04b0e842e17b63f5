"""Slow, obviously-correct reference implementations of the rigid-body kinematics and
dynamics, written independently of the numba kernels (docs/explanation/formulation.md
sections 1, 2, 4, 5, 7). Everything here reads the `Model` description objects directly
(never the compiled arrays), uses plain numpy and Python loops, and favours clarity over
speed.

Conventions (the same as the code):

* Body i: frame origin r_i (global), rotation A_i (body axes -> global). The ground has
  r = 0, A = I.
* A joint goes from marker P (position s_P, axes C_P on the parent) to marker O (s_O, C_O
  on the child). Its coordinates are translations x_t along axes t_k (P frame), then
  rotations x_r about axes a_k, each about its axis in the frame turned by the previous
  ones: R = Rot(a_1, x_1) Rot(a_2, x_2) ... (Rodrigues), d = sum_k t_k x_k (P frame),
      A_i = A_p C_P R C_O^T,     r_i = r_p + A_p (s_P + C_P d) - A_i s_O.
* q = the free joint coordinates, joint by joint in the order of `build_topology`
  (breadth first from the ground), each joint's coordinates in its own order; driven
  (prescribed) coordinates are not in q. u = dq/dt.
* Body velocities v_i = [dr_i/dt (global, 3); w_i (angular velocity, body axes, 3)],
  stacked body by body in `build_topology(model).body_names` order (6N).
  v = B u + b_t;  dv/dt = B du/dt + a_bias.

Two independent routes are provided:

1. Finite differences of the position map (`reference_poses`): B, b_t, a_bias. The
   driven coordinates are replaced by their second-order Taylor polynomial in time
   (x(t + s) ~ f + f' s + f'' s^2/2, with f, f', f'' from closed-form derivatives of
   the time-function laws). The position map depends on time only through the joint
   coordinates, so the first and second derivatives of the pose along the motion are
   unchanged by that substitution, while the function being differenced becomes
   smooth (a cubic-spline table is only C2 in t, which would spoil a high-order
   stencil straddling a knot).
   Stencils are the 8th-order central ones; steps are chosen so that truncation and
   round-off both stay near 1e-11 (see `FD_STEP_FIRST`, `FD_STEP_SECOND`).

2. A recursive Newton-Euler algorithm in Cartesian form, global axes
   (`newton_euler_joint_forces`): a forward pass for the exact body velocities and
   accelerations, then a backward pass of joint wrenches projected on the joint's
   motion axes. It never forms B nor a body mass matrix, so
   `M* du/dt - Q* == newton_euler_inverse_dynamics(...)` is a genuine cross-check of
   the assembly `M* = sum B_i^T M_i B_i`.
"""

import numpy as np
from scipy.interpolate import CubicSpline

from flexmbs.model.description import GROUND, JOINT_TYPES, Model
from flexmbs.model.timefunctions import Constant, ConstantRate, Harmonic, Polynomial, SpinUp, Table
from flexmbs.model.topology import build_topology

__all__ = [
    "FD_STEP_FIRST", "FD_STEP_SECOND",
    "skew", "vee", "rotation_about_axis", "time_function_derivatives",
    "coordinate_layout", "reference_coordinate_names", "reference_initial_state",
    "joint_coordinate_values",
    "reference_poses", "reference_velocity_transformation", "reference_bt",
    "reference_body_velocities_fd", "reference_bias_acceleration",
    "reference_body_mass_matrix", "reference_body_forces",
    "reference_mass_matrix", "reference_generalized_forces",
    "reference_body_motion", "newton_euler_joint_forces",
    "newton_euler_inverse_dynamics", "newton_euler_mass_matrix", "reference_accelerations",
    "reference_energies", "reference_power",
    "random_tree_model",
]

# 8th-order central stencils: offsets 1..4 (antisymmetric / symmetric weights).
FIRST_WEIGHTS = (4.0 / 5.0, -1.0 / 5.0, 4.0 / 105.0, -1.0 / 280.0)
SECOND_CENTER = -205.0 / 72.0
SECOND_WEIGHTS = (8.0 / 5.0, -1.0 / 5.0, 8.0 / 315.0, -1.0 / 560.0)

# Steps in units of 1 / (the rate scale of the motion, `_rate_scale`), chosen so that
# neither truncation nor round-off exceeds ~1e-11 of the quantity (measured against the
# exact Newton-Euler forward pass on random trees; see tests/test_kinematics_dynamics).
# First derivative: truncation ~ h^8 |f^(9)| / 630 (negligible), round-off
# ~ 2 eps |f| / h ~ 5e-14 |f|; observed errors in B and b_t <= 3e-13.
FD_STEP_FIRST = 1e-2
# Second derivative: round-off ~ 6.5 eps |f| / h^2 dominates below h ~ 0.2 (the rate
# scale over-estimates the true frequencies), truncation ~ h^8 |f^(10)| / 3150 grows
# above it; observed errors in a_bias: h = 0.05: 1e-10, 0.15: 2e-11, 0.2: 6e-12,
# 0.5: 3e-9. 0.15 leaves a margin on the truncation side.
FD_STEP_SECOND = 0.15


# --------------------------------------------------------------------- small algebra
def skew(a):
    """~a, with ~a b = a x b."""
    return np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])


def vee(w):
    """The vector of the skew-symmetric part of w (inverse of `skew`)."""
    return 0.5 * np.array([w[2, 1] - w[1, 2], w[0, 2] - w[2, 0], w[1, 0] - w[0, 1]])


def rotation_about_axis(axis, angle):
    """Rodrigues: I + sin(angle) ~n + (1 - cos(angle)) ~n ~n, n = axis / |axis|."""
    n = np.asarray(axis, dtype=float)
    n = n / np.linalg.norm(n)
    k = skew(n)
    return np.eye(3) + np.sin(angle) * k + (1.0 - np.cos(angle)) * (k @ k)


# ------------------------------------------------------------------- time functions
def time_function_derivatives(fn, t):
    """(f(t), f'(t), f''(t)) of a time-function law, in closed form (plain Python)."""
    t = float(t)
    if isinstance(fn, Constant):
        return float(fn.value), 0.0, 0.0
    if isinstance(fn, ConstantRate):
        return fn.value + fn.rate * t, float(fn.rate), 0.0
    if isinstance(fn, Polynomial):
        c = [float(x) for x in fn.coefficients]
        f = sum(ck * t ** k for k, ck in enumerate(c))
        fd = sum(k * ck * t ** (k - 1) for k, ck in enumerate(c) if k >= 1)
        fdd = sum(k * (k - 1) * ck * t ** (k - 2) for k, ck in enumerate(c) if k >= 2)
        return f, fd, fdd
    if isinstance(fn, Harmonic):
        phase = fn.omega * t + fn.phase
        return (fn.offset + fn.amplitude * np.sin(phase),
                fn.amplitude * fn.omega * np.cos(phase),
                -fn.amplitude * fn.omega ** 2 * np.sin(phase))
    if isinstance(fn, SpinUp):
        w, T = float(fn.rate), float(fn.duration)
        if t >= T:
            return w * (t - 0.5 * T), w, 0.0
        arg = 2.0 * np.pi * t / T
        c = T / (2.0 * np.pi)
        return ((w / T) * (0.5 * t * t + c * c * (np.cos(arg) - 1.0)),
                (w / T) * (t - c * np.sin(arg)),
                (w / T) * (1.0 - np.cos(arg)))
    if isinstance(fn, Table):
        tt = np.asarray(fn.time, dtype=float)
        vv = np.asarray(fn.value, dtype=float)
        # held outside [t_0, t_n]; the end points themselves belong to the table
        if t < tt[0]:
            return float(vv[0]), 0.0, 0.0
        if t > tt[-1]:
            return float(vv[-1]), 0.0, 0.0
        if fn.interpolation == "linear" or tt.size < 3:
            k = min(int(np.searchsorted(tt, t, side="right")) - 1, tt.size - 2)
            slope = (vv[k + 1] - vv[k]) / (tt[k + 1] - tt[k])
            return float(np.interp(t, tt, vv)), float(slope), 0.0
        spline = CubicSpline(tt, vv, bc_type="not-a-knot")
        return float(spline(t)), float(spline(t, 1)), float(spline(t, 2))
    raise TypeError(f"not a time-function law: {fn!r}")


# ------------------------------------------------------------------ coordinate layout
def coordinate_layout(model):
    """The joints in tree order and where each coordinate lives.

    Returns (topology, rows), rows a list over the joints in `build_topology` order of
    (joint, entries) with one entry per joint coordinate: (kind, index, driver), kind
    "t" (translation) or "r" (rotation), index its position in q (None if driven),
    driver the time-function law of a driven coordinate (else None).
    """
    topo = build_topology(model)
    driven = {(d.joint, d.coordinate): d.function for d in model.drivers.values()}
    rows = []
    nq = 0
    for jname in topo.joint_names:
        joint = model.joints[jname]
        entries = []
        kinds = ["t"] * len(joint.translation_axes) + ["r"] * len(joint.rotation_axes)
        for c, kind in enumerate(kinds):
            fn = driven.get((jname, c))
            if fn is None:
                entries.append((kind, nq, None))
                nq += 1
            else:
                entries.append((kind, None, fn))
        rows.append((joint, entries))
    return topo, rows


def reference_coordinate_names(model):
    """Names of the entries of q (rebuilt from the topology)."""
    _, rows = coordinate_layout(model)
    names = []
    for joint, entries in rows:
        cnames = joint.coordinate_names()
        names += [cnames[c] for c, e in enumerate(entries) if e[1] is not None]
    return names


def reference_initial_state(model):
    """(q0, u0) from the joints' `initial` and `initial_rate`."""
    _, rows = coordinate_layout(model)
    q0, u0 = [], []
    for joint, entries in rows:
        for c, (_, iq, _) in enumerate(entries):
            if iq is not None:
                q0.append(joint.initial[c])
                u0.append(joint.initial_rate[c])
    return np.array(q0, dtype=float), np.array(u0, dtype=float)


def joint_coordinate_values(model, q, u, udot, t):
    """dict joint name -> (x, xd, xdd), every coordinate of the joint (driven ones from
    their time functions at t; free ones from q, u, udot)."""
    _, rows = coordinate_layout(model)
    out = {}
    for joint, entries in rows:
        n = len(entries)
        x, xd, xdd = np.zeros(n), np.zeros(n), np.zeros(n)
        for c, (_, iq, fn) in enumerate(entries):
            if iq is None:
                x[c], xd[c], xdd[c] = time_function_derivatives(fn, t)
            else:
                x[c], xd[c], xdd[c] = q[iq], u[iq], udot[iq]
        out[joint.name] = (x, xd, xdd)
    return out


# ----------------------------------------------------------------- route 1: poses, FD
def _poses(model, topo, rows, xs):
    """r (N, 3), A (N, 3, 3) in topology order from all joint coordinates
    (xs: dict joint name -> x), by direct composition of the transforms."""
    n = len(topo.body_names)
    index = {b: k for k, b in enumerate(topo.body_names)}
    r = np.zeros((n, 3))
    a = np.zeros((n, 3, 3))
    for joint, _ in rows:
        if joint.parent == GROUND:
            r_p, a_p = np.zeros(3), np.eye(3)
        else:
            k = index[joint.parent]
            r_p, a_p = r[k], a[k]
        mp = model.marker(joint.parent, joint.parent_marker)
        mo = model.marker(joint.child, joint.child_marker)
        x = xs[joint.name]
        nt = len(joint.translation_axes)
        d = np.zeros(3)
        for k_ax, axis in enumerate(joint.translation_axes):
            d = d + axis * x[k_ax]
        rot = np.eye(3)
        for k_ax, axis in enumerate(joint.rotation_axes):
            rot = rot @ rotation_about_axis(axis, x[nt + k_ax])
        a_i = a_p @ mp.orientation @ rot @ mo.orientation.T
        r_i = r_p + a_p @ (mp.position + mp.orientation @ d) - a_i @ mo.position
        k = index[joint.child]
        r[k], a[k] = r_i, a_i
    return r, a


def reference_poses(model, q, t=0.0):
    """dict body name -> (r (3,), A (3, 3)) at free coordinates q and time t."""
    topo, rows = coordinate_layout(model)
    q = np.asarray(q, dtype=float)
    vals = joint_coordinate_values(model, q, np.zeros_like(q), np.zeros_like(q), t)
    r, a = _poses(model, topo, rows, {k: v[0] for k, v in vals.items()})
    return {b: (r[k], a[k]) for k, b in enumerate(topo.body_names)}


def _path_poses(model, q, u, t, s, order):
    """Poses at parameter s along the motion x(s) = x + s xd (+ s^2/2 xdd for driven
    coordinates when order = 2): free coordinates move as q + s u, driven ones follow
    the Taylor polynomial of their law (see the module docstring)."""
    topo, rows = coordinate_layout(model)
    vals = joint_coordinate_values(model, q, u, np.zeros_like(q), t)
    xs = {}
    for joint, _entries in rows:
        x, xd, xdd = vals[joint.name]
        xs[joint.name] = x + s * xd + (0.5 * s * s * xdd if order == 2 else 0.0)
    return _poses(model, topo, rows, xs)


def _first_derivative(pose_of, h):
    """(dr/ds, w) at s = 0 by the 8th-order central stencil: dr/ds (N, 3) global and
    w = vee(A^T dA/ds) (N, 3) body axes."""
    r0, a0 = pose_of(0.0)
    dr = np.zeros_like(r0)
    da = np.zeros_like(a0)
    for k, wk in enumerate(FIRST_WEIGHTS, start=1):
        rp, ap = pose_of(k * h)
        rm, am = pose_of(-k * h)
        dr += wk * (rp - rm)
        da += wk * (ap - am)
    dr /= h
    da /= h
    w = np.array([vee(a0[i].T @ da[i]) for i in range(len(a0))])
    return dr, w


def _second_derivative(pose_of, h):
    """(d2r/ds2, vee(A^T d2A/ds2)) at s = 0 by the 8th-order central stencil.

    With A' = A ~w (w in body axes), A^T A'' = d(~w)/ds + ~w ~w whose skew part is
    d(~w)/ds: vee(A^T A'') is the body-axes angular acceleration (A'^T A' is symmetric).
    """
    r0, a0 = pose_of(0.0)
    ddr = SECOND_CENTER * r0
    dda = SECOND_CENTER * a0
    for k, wk in enumerate(SECOND_WEIGHTS, start=1):
        rp, ap = pose_of(k * h)
        rm, am = pose_of(-k * h)
        ddr = ddr + wk * (rp + rm)
        dda = dda + wk * (ap + am)
    ddr /= h * h
    dda /= h * h
    dw = np.array([vee(a0[i].T @ dda[i]) for i in range(len(a0))])
    return ddr, dw


def _stack(dr, w):
    """Body rows [dr (3); w (3)] stacked body by body (6N,)."""
    return np.hstack([dr, w]).reshape(-1)


def _rate_scale(model, q, u, t):
    """A scale (1/s) of how fast the pose changes along the motion, to size the
    FD step: 1 + sum of |rates| + sqrt(sum of |driven accelerations|)."""
    vals = joint_coordinate_values(model, q, u, np.zeros_like(q), t)
    rates = sum(np.abs(v[1]).sum() for v in vals.values())
    accs = sum(np.abs(v[2]).sum() for v in vals.values())
    return 1.0 + rates + np.sqrt(accs)


def reference_velocity_transformation(model, q, t=0.0):
    """B (6N, nq) by central finite differences of the position map: column k holds,
    body by body, d r_i / d q_k (global) and vee(A_i^T dA_i/dq_k) (body axes)."""
    q = np.asarray(q, dtype=float)
    nq = q.size
    n = len(build_topology(model).body_names)
    b = np.zeros((6 * n, nq))
    for k in range(nq):
        e = np.zeros(nq)
        e[k] = 1.0
        # frozen drivers: the column is a pure partial derivative in q_k
        dr, w = _first_derivative(
            lambda s: _poses(*_frozen_args(model, q + s * e, t)), FD_STEP_FIRST)  # noqa: B023 (called at once)
        b[:, k] = _stack(dr, w)
    return b


def _frozen_args(model, q, t):
    topo, rows = coordinate_layout(model)
    vals = joint_coordinate_values(model, q, np.zeros_like(q), np.zeros_like(q), t)
    return model, topo, rows, {k: v[0] for k, v in vals.items()}


def reference_bt(model, q, t=0.0):
    """b_t (6N,): the body velocities when u = 0 (prescribed motion only), by
    differentiating the pose in time at fixed q."""
    q = np.asarray(q, dtype=float)
    z = np.zeros_like(q)
    h = FD_STEP_FIRST / _rate_scale(model, q, z, t)
    dr, w = _first_derivative(lambda s: _path_poses(model, q, z, t, s, 1), h)
    return _stack(dr, w)


def reference_body_velocities_fd(model, q, u, t=0.0):
    """v (6N,) = d(pose)/dt along q + s u with the drivers moving (B u + b_t)."""
    q = np.asarray(q, dtype=float)
    u = np.asarray(u, dtype=float)
    h = FD_STEP_FIRST / _rate_scale(model, q, u, t)
    dr, w = _first_derivative(lambda s: _path_poses(model, q, u, t, s, 1), h)
    return _stack(dr, w)


def reference_bias_acceleration(model, q, u, t=0.0):
    """a_bias (6N,) = dv/dt along the motion q(s) = q + s u (du/dt = 0), the driven
    coordinates following their laws (prescribed accelerations included):
    [d2 r_i/ds2 (global); dw_i/ds (body axes)], by the 8th-order second-derivative
    stencil of the pose (see `_second_derivative`)."""
    q = np.asarray(q, dtype=float)
    u = np.asarray(u, dtype=float)
    h = FD_STEP_SECOND / _rate_scale(model, q, u, t)
    ddr, dw = _second_derivative(lambda s: _path_poses(model, q, u, t, s, 2), h)
    return _stack(ddr, dw)


# ------------------------------------------------- body matrices and B^T M B assembly
def reference_body_mass_matrix(body, a):
    """M_i (6, 6) of a rigid body in [dr/dt global; w body axes] (FORMULATION 2)."""
    st = body.mass * body.com
    m = np.zeros((6, 6))
    m[:3, :3] = body.mass * np.eye(3)
    m[:3, 3:] = -a @ skew(st)
    m[3:, :3] = m[:3, 3:].T
    m[3:, 3:] = body.inertia_about_origin
    return m


def reference_body_forces(model, q, u, t=0.0):
    """(6N,) Qv_i + Qe_i of every body (quadratic velocity, gravity, point forces and
    torques), rows [global force; body-axes moment about the frame origin]."""
    topo = build_topology(model)
    poses = reference_poses(model, q, t)
    v = reference_body_velocities_fd(model, q, u, t).reshape(-1, 6)
    g = model.gravity
    out = np.zeros((len(topo.body_names), 6))
    for i, name in enumerate(topo.body_names):
        body = model.bodies[name]
        _, a = poses[name]
        w = v[i, 3:]
        st = body.mass * body.com
        io = body.inertia_about_origin
        out[i, :3] = -a @ (skew(w) @ skew(w) @ st) + body.mass * g
        out[i, 3:] = -skew(w) @ io @ w + skew(st) @ a.T @ g
    for f in model.forces.values():
        i = topo.body_names.index(f.body)
        _, a = poses[f.body]
        mk = model.marker(f.body, f.marker)
        vec = f.vector * time_function_derivatives(f.function, t)[0]
        if f.frame == "marker":
            vec = a @ mk.orientation @ vec
        if f.type == "force":
            out[i, :3] += vec
            out[i, 3:] += -(a @ skew(mk.position)).T @ vec  # L^T F, L = [I, -A ~s]
        else:
            out[i, 3:] += a.T @ vec
    return out.reshape(-1)


def reference_mass_matrix(model, q, t=0.0):
    """M* = sum_i B_i^T M_i B_i with the finite-difference B (a slow twin of the
    assembly; its accuracy is that of B, ~1e-12)."""
    topo = build_topology(model)
    b = reference_velocity_transformation(model, q, t)
    poses = reference_poses(model, q, t)
    m = np.zeros((b.shape[1], b.shape[1]))
    for i, name in enumerate(topo.body_names):
        bi = b[6 * i:6 * i + 6]
        m += bi.T @ reference_body_mass_matrix(model.bodies[name], poses[name][1]) @ bi
    return m


def reference_generalized_forces(model, q, u, t=0.0):
    """Q* = sum_i B_i^T (Qv_i + Qe_i - M_i a_bias_i) + Q_joint, by finite-difference
    B and a_bias (a slow twin of the assembly; accuracy ~1e-10 from a_bias)."""
    topo, rows = coordinate_layout(model)
    b = reference_velocity_transformation(model, q, t)
    abias = reference_bias_acceleration(model, q, u, t)
    qe = reference_body_forces(model, q, u, t)
    poses = reference_poses(model, q, t)
    out = np.zeros(b.shape[1])
    for i, name in enumerate(topo.body_names):
        rows_i = slice(6 * i, 6 * i + 6)
        mi = reference_body_mass_matrix(model.bodies[name], poses[name][1])
        out += b[rows_i].T @ (qe[rows_i] - mi @ abias[rows_i])
    for joint, entries in rows:
        for c, (_, iq, _) in enumerate(entries):
            if iq is not None:
                out[iq] += (-joint.stiffness[c] * (q[iq] - joint.rest[c])
                            - joint.damping[c] * u[iq])
    return out


# ------------------------------------------------- route 2: recursive Newton-Euler
def reference_body_motion(model, q, u, udot, t=0.0):
    """Exact body motion by a forward recursion in Cartesian form (global axes).

    Returns dict body name -> dict with r, A (pose), v, a (velocity and acceleration of
    the frame origin), omega, alpha (angular velocity and acceleration, global), and the
    joint data used by the backward pass: p_joint (global position of the child
    marker O, the joint point), t_axes (translation axes, global), r_axes (rotation
    axes, global, each turned by the previous rotations).
    """
    topo, rows = coordinate_layout(model)
    vals = joint_coordinate_values(model, np.asarray(q, float), np.asarray(u, float),
                                   np.asarray(udot, float), t)
    ground = dict(r=np.zeros(3), A=np.eye(3), v=np.zeros(3), a=np.zeros(3),
                  omega=np.zeros(3), alpha=np.zeros(3))
    out = {}
    for joint, _ in rows:
        par = ground if joint.parent == GROUND else out[joint.parent]
        mp = model.marker(joint.parent, joint.parent_marker)
        mo = model.marker(joint.child, joint.child_marker)
        x, xd, xdd = vals[joint.name]
        nt = len(joint.translation_axes)
        a_pm = par["A"] @ mp.orientation          # axes of marker P, global
        w_p, al_p = par["omega"], par["alpha"]

        # translations: the joint point O moves along axes fixed in P
        t_axes = [a_pm @ ax for ax in joint.translation_axes]
        d = sum((ax * x[k] for k, ax in enumerate(joint.translation_axes)), np.zeros(3))
        rho = par["A"] @ mp.position + a_pm @ d   # parent origin -> joint point
        e_d = sum((t_axes[k] * xd[k] for k in range(nt)), np.zeros(3))
        e_dd = sum((t_axes[k] * xdd[k] for k in range(nt)), np.zeros(3))
        p_o = par["r"] + rho
        v_o = par["v"] + np.cross(w_p, rho) + e_d
        a_o = (par["a"] + np.cross(al_p, rho) + np.cross(w_p, np.cross(w_p, rho))
               + 2.0 * np.cross(w_p, e_d) + e_dd)

        # rotations, in sequence: axis k is turned by rotations 1..k-1; the frame
        # before rotation k spins at w_frame, so d(axis_k)/dt = w_frame x axis_k
        rot = np.eye(3)
        w_frame = w_p.copy()
        al = al_p.copy()
        r_axes = []
        for k, ax in enumerate(joint.rotation_axes):
            g = a_pm @ rot @ ax
            r_axes.append(g)
            al = al + g * xdd[nt + k] + np.cross(w_frame, g) * xd[nt + k]
            w_frame = w_frame + g * xd[nt + k]
            rot = rot @ rotation_about_axis(ax, x[nt + k])
        a_i = a_pm @ rot @ mo.orientation.T
        sigma = -a_i @ mo.position                 # joint point -> child origin
        out[joint.child] = dict(
            r=p_o + sigma, A=a_i,
            v=v_o + np.cross(w_frame, sigma),
            a=a_o + np.cross(al, sigma) + np.cross(w_frame, np.cross(w_frame, sigma)),
            omega=w_frame, alpha=al,
            p_joint=p_o, t_axes=t_axes, r_axes=r_axes)
    return out


def _external_loads(model, motion, t):
    """dict body -> list of (point (global) or None for a torque, vector (global))."""
    loads = {b: [] for b in model.bodies}
    for f in model.forces.values():
        body = motion[f.body]
        mk = model.marker(f.body, f.marker)
        vec = f.vector * time_function_derivatives(f.function, t)[0]
        if f.frame == "marker":
            vec = body["A"] @ mk.orientation @ vec
        if f.type == "force":
            loads[f.body].append((body["r"] + body["A"] @ mk.position, vec))
        else:
            loads[f.body].append((None, vec))
    return loads


def newton_euler_joint_forces(model, q, u, udot, t=0.0):
    """Generalized joint forces, every coordinate (driven ones included): dict joint
    name -> (ndof,) array, what the joint's actuators must supply for the motion
    (q, u, udot) at time t (driven coordinates follow their laws).

    Backward pass: the wrench (f, n about the joint point) that the parent applies on
    the child through the joint is
        f_i = m_i a_c,i - m_i g - sum F_ext + sum_children f_c
        n_i = I_c,i alpha_i + omega_i x I_c,i omega_i + (c_i - p_i) x (m_i a_c,i - m_i g)
              - sum (p_F - p_i) x F_ext - sum T_ext
              + sum_children [n_c + (p_c - p_i) x f_c]
    (p_i the joint point, c_i the centre of mass, all global). A translation coordinate
    takes t_k . f_i, a rotation coordinate g_k . n_i (the joint point does not move when
    a rotation coordinate varies). Joint springs and dampers add k (x - rest) + c xd.
    """
    topo, rows = coordinate_layout(model)
    motion = reference_body_motion(model, q, u, udot, t)
    vals = joint_coordinate_values(model, np.asarray(q, float), np.asarray(u, float),
                                   np.asarray(udot, float), t)
    loads = _external_loads(model, motion, t)
    g = model.gravity
    wrench = {}
    children = {}
    for joint, _ in rows:
        children.setdefault(joint.parent, []).append(joint.child)
    out = {}
    for joint, _ in reversed(rows):
        name = joint.child
        body = model.bodies[name]
        s = motion[name]
        a_mat, w, al = s["A"], s["omega"], s["alpha"]
        c_rel = a_mat @ body.com
        c = s["r"] + c_rel
        a_c = s["a"] + np.cross(al, c_rel) + np.cross(w, np.cross(w, c_rel))
        i_c = a_mat @ body.inertia @ a_mat.T
        p = s["p_joint"]
        lin = body.mass * a_c - body.mass * g
        f = lin.copy()
        n = i_c @ al + np.cross(w, i_c @ w) + np.cross(c - p, lin)
        for point, vec in loads[name]:
            if point is None:
                n = n - vec
            else:
                f = f - vec
                n = n - np.cross(point - p, vec)
        for ch in children.get(name, []):
            f_c, n_c = wrench[ch]
            f = f + f_c
            n = n + n_c + np.cross(motion[ch]["p_joint"] - p, f_c)
        wrench[name] = (f, n)
        x, xd, _ = vals[joint.name]
        tau = np.array([ax @ f for ax in s["t_axes"]] + [ax @ n for ax in s["r_axes"]])
        out[joint.name] = tau + joint.stiffness * (x - joint.rest) + joint.damping * xd
    return out


def newton_euler_inverse_dynamics(model, q, u, udot, t=0.0):
    """tau (nq,) = M* udot - Q*: the free coordinates' entries of
    `newton_euler_joint_forces`, in q order."""
    _, rows = coordinate_layout(model)
    forces = newton_euler_joint_forces(model, q, u, udot, t)
    tau = np.zeros(len(q))
    for joint, entries in rows:
        for c, (_, iq, _) in enumerate(entries):
            if iq is not None:
                tau[iq] = forces[joint.name][c]
    return tau


def newton_euler_mass_matrix(model, q, t=0.0):
    """M* (nq, nq) column by column from inverse dynamics (Pinocchio's check):
    column k = tau(udot = e_k) - tau(udot = 0), at u = 0."""
    q = np.asarray(q, float)
    z = np.zeros_like(q)
    tau0 = newton_euler_inverse_dynamics(model, q, z, z, t)
    if q.size == 0:
        return np.zeros((0, 0))
    return np.column_stack([newton_euler_inverse_dynamics(model, q, z, e, t) - tau0
                            for e in np.eye(q.size)]).reshape(q.size, q.size)


def reference_accelerations(model, q, u, t=0.0):
    """du/dt (nq,) solving M* du/dt = Q* with M* and Q* = -tau(udot = 0) from the
    Newton-Euler algorithm."""
    q = np.asarray(q, float)
    q_star = -newton_euler_inverse_dynamics(model, q, u, np.zeros_like(q), t)
    return np.linalg.solve(newton_euler_mass_matrix(model, q, t), q_star)


# ------------------------------------------------------------------- energy and power
def reference_energies(model, q, u, t=0.0):
    """(kinetic, gravity, spring) (J), FORMULATION 7; kinetic from the exact body motion
    as 1/2 m |v_c|^2 + 1/2 omega . I_c omega, gravity -g . (m r + A m c), springs over
    every joint coordinate (driven ones included)."""
    q = np.asarray(q, float)
    motion = reference_body_motion(model, q, u, np.zeros_like(q), t)
    kinetic = gravity = 0.0
    for name, body in model.bodies.items():
        s = motion[name]
        c_rel = s["A"] @ body.com
        v_c = s["v"] + np.cross(s["omega"], c_rel)
        i_c = s["A"] @ body.inertia @ s["A"].T
        kinetic += 0.5 * body.mass * v_c @ v_c + 0.5 * s["omega"] @ i_c @ s["omega"]
        gravity -= model.gravity @ (body.mass * (s["r"] + c_rel))
    vals = joint_coordinate_values(model, q, u, np.zeros_like(q), t)
    spring = 0.0
    for name, (x, _, _) in vals.items():
        joint = model.joints[name]
        spring += 0.5 * np.sum(joint.stiffness * (x - joint.rest) ** 2)
    return kinetic, gravity, spring


def reference_power(model, q, u, t=0.0):
    """(damping power, load power) (W): -sum c xd^2 over the free coordinates, and
    sum F . v_point + T . omega over the loads."""
    q = np.asarray(q, float)
    _, rows = coordinate_layout(model)
    damping = 0.0
    for joint, entries in rows:
        for c, (_, iq, _) in enumerate(entries):
            if iq is not None:
                damping -= joint.damping[c] * u[iq] ** 2
    motion = reference_body_motion(model, q, u, np.zeros_like(q), t)
    load = 0.0
    for name, items in _external_loads(model, motion, t).items():
        s = motion[name]
        for point, vec in items:
            if point is None:
                load += vec @ s["omega"]
            else:
                load += vec @ (s["v"] + np.cross(s["omega"], point - s["r"]))
    return damping, load


# ---------------------------------------------------------------------- random models
def _unit(rng):
    v = rng.normal(size=3)
    return v / np.linalg.norm(v)


def _random_rotation(rng):
    return tuple(rng.uniform(-np.pi, np.pi, size=3))


def _random_time_function(rng, kind):
    if kind == "harmonic":
        return Harmonic(amplitude=rng.uniform(0.2, 0.8), omega=rng.uniform(0.5, 3.0),
                        phase=rng.uniform(-np.pi, np.pi), offset=rng.uniform(-0.3, 0.3))
    if kind == "polynomial":
        return Polynomial(tuple(rng.uniform(-0.5, 0.5, size=4)))
    if kind == "spinup":
        return SpinUp(rate=rng.uniform(0.5, 2.0), duration=rng.uniform(2.5, 4.0))
    if kind == "ramp":
        return ConstantRate(value=rng.uniform(-0.3, 0.3), rate=rng.uniform(-1.0, 1.0))
    if kind in ("table", "table-linear"):
        times = np.linspace(-1.0, 4.0, 7) + rng.uniform(-0.2, 0.2, size=7)
        return Table(time=tuple(times), value=tuple(rng.uniform(-0.6, 0.6, size=7)),
                     interpolation="cubic" if kind == "table" else "linear")
    raise ValueError(f"unknown time-function kind {kind!r}")


# (translations, rotations) of the joint types with a fixed number of coordinates
_JOINT_SIZES = {"revolute": (0, 1), "prismatic": (1, 0), "cylindrical": (1, 1),
                "universal": (0, 2), "spherical": (0, 3), "planar": (2, 1),
                "free": (3, 3), "fixed": (0, 0)}

DRIVER_LAWS = ("harmonic", "polynomial", "spinup", "table", "ramp", "table-linear")


def random_tree_model(rng, n_bodies, joint_types=JOINT_TYPES, n_drivers=0, n_forces=0,
                      springs=True):
    """A random tree `Model` of `n_bodies` rigid bodies.

    Body k (created in order b0, b1, ...) hangs from the ground or a random earlier body
    through a joint of type joint_types[k % len(joint_types)], between random markers
    (positions in [-0.5, 0.5]^3 m, random orientations from euler_xyz). Masses 0.5 to
    2 kg, centres of mass in [-0.3, 0.3]^3 m, inertias R diag(Jy+Jz, Jx+Jz, Jx+Jy) R^T
    from random second moments J (so SPD and obeying the triangle inequality).
    General joints get 0 to 3 random translation axes and 1 or 2 random rotation axes
    (not nearly parallel). Initial values: translations in [-0.5, 0.5] m, rotations in
    [-1, 1] rad (so the middle angle of spherical and free joints stays 0.57 rad away
    from the x-y-z singularity at +-pi/2), rates in [-1, 1]. `springs` gives every
    joint random stiffness, damping and rest values. `n_drivers` coordinates (never
    all of them) are prescribed with laws cycling through DRIVER_LAWS; `n_forces`
    random forces and torques (global or follower, constant or harmonic multipliers)
    act on random markers. Gravity has a random direction, magnitude 9.81.
    """
    model = Model("random", gravity=9.81 * _unit(rng))
    names = [f"b{k}" for k in range(n_bodies)]
    for name in names:
        m = rng.uniform(0.5, 2.0)
        jx, jy, jz = rng.uniform(0.02, 0.2, size=3) * m
        rot = np.linalg.qr(rng.normal(size=(3, 3)))[0]
        inertia = rot @ np.diag([jy + jz, jx + jz, jx + jy]) @ rot.T
        model.add_rigid_body(name, mass=m, com=rng.uniform(-0.3, 0.3, size=3),
                             inertia=0.5 * (inertia + inertia.T), inertia_about="com")
    for k, name in enumerate(names):
        jtype = str(joint_types[k % len(joint_types)])
        parent = GROUND if k == 0 else (GROUND if rng.uniform() < 0.2 else
                                        names[rng.integers(0, k)])
        pm = model.add_marker(parent, f"p{k}", position=rng.uniform(-0.5, 0.5, size=3),
                              euler_xyz=_random_rotation(rng))
        if rng.uniform() < 0.25:
            cm_name = "origin"
        else:
            cm_name = model.add_marker(name, f"c{k}",
                                       position=rng.uniform(-0.5, 0.5, size=3),
                                       euler_xyz=_random_rotation(rng)).name
        kw = {}
        if jtype in ("revolute", "prismatic", "cylindrical", "planar"):
            kw["axis"] = _unit(rng)
        elif jtype == "universal" and rng.uniform() < 0.5:
            a1 = _unit(rng)
            a2 = _unit(rng)
            while abs(a1 @ a2) > 0.8:
                a2 = _unit(rng)
            kw["axes"] = [a1, a2]
        elif jtype == "general":
            nt = int(rng.integers(0, 4))
            nr = int(rng.integers(1, 3))
            tr = np.array([_unit(rng) for _ in range(nt)]).reshape(-1, 3)
            while nt and np.linalg.svd(tr, compute_uv=False).min() < 0.3:
                tr = np.array([_unit(rng) for _ in range(nt)])
            ro = [_unit(rng)]
            if nr == 2:
                a2 = _unit(rng)
                while abs(ro[0] @ a2) > 0.8:
                    a2 = _unit(rng)
                ro.append(a2)
            if nt:
                kw["translation_axes"] = tr
            kw["rotation_axes"] = ro
        nt, nr = _JOINT_SIZES.get(jtype) or (len(kw.get("translation_axes", ())),
                                             len(kw["rotation_axes"]))
        spring = {}
        if springs:
            spring = dict(stiffness=rng.uniform(0.0, 5.0, nt + nr),
                          damping=rng.uniform(0.0, 0.5, nt + nr),
                          rest=rng.uniform(-0.3, 0.3, nt + nr))
        model.add_joint(f"j{k}", jtype, parent=parent, child=name, parent_marker=pm.name,
                        child_marker=cm_name,
                        initial=np.concatenate([rng.uniform(-0.5, 0.5, nt),
                                                rng.uniform(-1.0, 1.0, nr)]),
                        initial_rate=rng.uniform(-1.0, 1.0, nt + nr), **spring, **kw)

    coords = [(j.name, c) for j in model.joints.values() for c in range(j.ndof)]
    n_drivers = min(n_drivers, len(coords) - 1)
    if n_drivers > 0:
        picks = rng.choice(len(coords), size=n_drivers, replace=False)
        for k, idx in enumerate(picks):
            jname, c = coords[idx]
            law = DRIVER_LAWS[k % len(DRIVER_LAWS)]
            model.add_driver(f"d{k}", jname, _random_time_function(rng, law),
                             coordinate=c)
    for k in range(n_forces):
        body = names[rng.integers(0, n_bodies)]
        marker = "origin"
        if rng.uniform() < 0.7:
            marker = model.add_marker(body, f"f{k}",
                                      position=rng.uniform(-0.5, 0.5, size=3),
                                      euler_xyz=_random_rotation(rng)).name
        fn = (Constant(1.0) if rng.uniform() < 0.5 else
              Harmonic(amplitude=1.0, omega=rng.uniform(0.5, 3.0),
                       phase=rng.uniform(-np.pi, np.pi), offset=0.5))
        model.add_force(f"f{k}", "force" if k % 2 == 0 else "torque", body,
                        marker=marker, vector=rng.uniform(-3.0, 3.0, size=3),
                        frame="global" if rng.uniform() < 0.5 else "marker", function=fn)
    return model
