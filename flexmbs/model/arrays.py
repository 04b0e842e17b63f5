"""The tables of a compiled model: ModelArrays, the flat arrays the kernels read
(written once, by flexmbs.model.compiled.compile_model), and Workspace, the
preallocated scratch memory of one evaluation (written by the kernels), field by field.
Sizes: N moving bodies (root to leaves), nc joint coordinates (all of them, prescribed
ones included, joint by joint in body order), ne elastic coordinates (of all flexible
bodies, body by body), ncol = nc + ne columns (the velocity transformation's columns
before the prescribed ones are dropped), nq = nu free coordinates (q: the free joint
coordinates, then the elastic ones), nmk markers used by loads and sensors, nf forces,
na actuators, ns sensors. The state vector is y = [q (nq), u (nq), w (1 + na)]: w[0] is
the work of all the non-conservative forces (docs/explanation/formulation.md section 7), w[1
+ a] the work of actuator a alone.
"""

from typing import NamedTuple

import numpy as np

__all__ = ["ACTUATOR_CODES", "ModelArrays", "Workspace"]

ACTUATOR_CODES = {"pd": 0, "torque": 1}


class ModelArrays(NamedTuple):
    """The arrays the kernels read (never written after compilation).

    gravity (3,) global, m/s^2
    body_parent (N,) parent index, -1 = ground
    body_mass (N,) kg; body_first_moment (N, 3) = m c (kg m, body axes);
    body_inertia_origin (N, 3, 3) about the frame origin (kg m^2, body axes)
    joint_coord_start (N+1,): joint k owns coordinates [start[k], start[k+1])
    joint_ntrans (N,): the first ntrans of them are translations
    coord_axis (nc, 3): axis in the parent marker frame
    coord_qindex (nc,): index in q, -1 if prescribed
    coord_function (nc,): time-function index of a prescribed coordinate, else -1
    coord_stiffness, coord_damping, coord_rest (nc,)
    col_qindex (ncol,): index in q of each column (joint coordinates, then elastic
        ones), -1 for a prescribed coordinate
    motion_ptr (N+1,), motion_kind, motion_vector (nm, 3), motion_rotation
        (nm, 3, 3), motion_term_ptr (nm+1,), motion_term_col, motion_term_coef: the
        elementary motions from body k's parent to body k (flexmbs.model.motions):
        motions motion_ptr[k]:motion_ptr[k+1]; the amount of motion j is
        sum coef x[col] over its terms
    frame_ptr (N+1,), frame_col, frame_inherited: the columns on which body k's frame
        velocity depends (sorted; the body path and joint path matrices), and whether
        each is also a column of its parent's frame
    body_col_ptr (N+1,), body_col: the columns of body k's rows of B: its frame
        columns and, for a flexible body, its own elastic columns (sorted)
    tf_kind, tf_ptr, tf_data: time functions, then the user laws
        (flexmbs.dynamics.user_laws)
    act_coord (na,) coordinate index; act_type (na,) 0 pd, 1 torque; act_kp, act_kd;
        act_function (na,) time function of the setpoint or of the motor torque;
        act_gear (na,) n; act_max (na,) motor torque limit (N m, inf: none);
        act_inertia (na,) n^2 J_r; act_damping (na,) n^2 b_m (reflected to the joint)
    body_flex (N,) index of the body in the flexible tables, -1 for a rigid body
    flex_nf, flex_q, flex_col (F,): number of elastic coordinates, index of the first
        in q and its column; flex_mass (F,), flex_first (F, 3), flex_th0 (F, 3, 3):
        invariants m, int rho u0, Th0; flex_sbar, flex_ninv, flex_ss, flex_k, flex_d:
        Sbar (3, nf), N (3, 3, nf), SS (3, 3, nf, nf), K_ff and the damping
        D = alpha K + beta M_ff (nf, nf), each flattened, body k's at
        flex_ptr[k, j] : flex_ptr[k + 1, j] (j = 0..3 for 3 nf, 9 nf, 9 nf^2, nf^2 values)
    geo_code (F,) geometric stiffness of each flexible body (GEOMETRIC_CODES), geo_ptr
        (F+1,) its elements; per element geo_ea (N), geo_length (m), geo_gmat
        (12, 12), the rows e = R qf at geo_row_ptr into geo_row_data, slope rows
        geo_dv, geo_dw (5, 12) and weights geo_weight (5,) at the Gauss points
        (flexmbs.model.geometric_tables, flexmbs.dynamics.geometric)
    marker_body (nmk,) (-1 ground), marker_position (nmk, 3), marker_rotation
        (nmk, 3, 3): undeformed marker frames in their bodies; marker_term_ptr
        (6 nmk + 1,), marker_term_col, marker_term_coef: the translation along body
        axis d (d < 3, m) and Cardan angle d - 3 (rad) of marker k as
        sum coef x[col] over terms marker_term_ptr[6k + d]:marker_term_ptr[6k + d + 1]
    spring_marker (nsp, 2): the markers of each point-to-point spring; spring_k (N/m),
        spring_c (N s/m), spring_l0 (m) (nsp,)
    force_type (nf,) 0 force, 1 torque; force_marker (nf,) its marker;
        force_vector (nf, 3); force_frame (nf,) 0 global, 1 marker; force_function (nf,)
    sensor_type, sensor_coord (joint coordinate, actuator or first linear row),
        sensor_marker (marker index or -1), sensor_body (-1 ground), sensor_frame
        (-1 ground), sensor_point (first centre-line point), sensor_offset (ns+1,)
        output columns; sensor_geo: the element (geometric tables) whose membrane
        strain sbar/2 a beam_strain or beam_section_forces sensor adds, times
        sensor_geo_coef, to its first value (-1: none)
    cut_marker_parent, cut_marker_child (ncut,): the markers (marker table) of each cut
        joint; cut_row_ptr (ncut+1,): its constraint rows; per row con_kind (0
        position, 1 orientation), con_x, con_y (3,), con_c, and con_active: the row's
        place among the active constraints (the multipliers), -1 for a redundant row
        (flexmbs.model.constraint_tables); con_kind 2 and 3 are the rows of the
        rolling contacts, after the cut joints' rows
    contact_marker_disk, contact_marker_plane (ncontact,): the markers of each rolling
        contact's disk centre and plane point; contact_axis (ncontact, 3) the axle
        (disk marker axes), contact_normal (ncontact, 3) the plane's normal (plane
        marker axes), contact_radius (ncontact,) m; contact_row_ptr (ncontact+1,) its
        rows among con_*
    lin_ptr (nrow + 1,), lin_q, lin_coef: linear sensor rows, row r =
        sum coef q[lin_q] over lin_ptr[r]:lin_ptr[r+1]
    point_position (npt, 3): undeformed centre-line points (body axes, m)
    """

    gravity: np.ndarray
    body_parent: np.ndarray
    body_mass: np.ndarray
    body_first_moment: np.ndarray
    body_inertia_origin: np.ndarray
    joint_coord_start: np.ndarray
    joint_ntrans: np.ndarray
    coord_axis: np.ndarray
    coord_qindex: np.ndarray
    coord_function: np.ndarray
    coord_stiffness: np.ndarray
    coord_damping: np.ndarray
    coord_rest: np.ndarray
    col_qindex: np.ndarray
    motion_ptr: np.ndarray
    motion_kind: np.ndarray
    motion_vector: np.ndarray
    motion_rotation: np.ndarray
    motion_term_ptr: np.ndarray
    motion_term_col: np.ndarray
    motion_term_coef: np.ndarray
    frame_ptr: np.ndarray
    frame_col: np.ndarray
    frame_inherited: np.ndarray
    body_col_ptr: np.ndarray
    body_col: np.ndarray
    tf_kind: np.ndarray
    tf_ptr: np.ndarray
    tf_data: np.ndarray
    act_coord: np.ndarray
    act_type: np.ndarray
    act_kp: np.ndarray
    act_kd: np.ndarray
    act_function: np.ndarray
    act_gear: np.ndarray
    act_max: np.ndarray
    act_inertia: np.ndarray
    act_damping: np.ndarray
    body_flex: np.ndarray
    flex_nf: np.ndarray
    flex_q: np.ndarray
    flex_col: np.ndarray
    flex_mass: np.ndarray
    flex_first: np.ndarray
    flex_th0: np.ndarray
    flex_ptr: np.ndarray
    flex_sbar: np.ndarray
    flex_ninv: np.ndarray
    flex_ss: np.ndarray
    flex_k: np.ndarray
    flex_d: np.ndarray
    geo_code: np.ndarray
    geo_ptr: np.ndarray
    geo_ea: np.ndarray
    geo_length: np.ndarray
    geo_gmat: np.ndarray
    geo_row_ptr: np.ndarray
    geo_row_data: np.ndarray
    geo_dv: np.ndarray
    geo_dw: np.ndarray
    geo_weight: np.ndarray
    marker_body: np.ndarray
    marker_position: np.ndarray
    marker_rotation: np.ndarray
    marker_term_ptr: np.ndarray
    marker_term_col: np.ndarray
    marker_term_coef: np.ndarray
    spring_marker: np.ndarray
    spring_k: np.ndarray
    spring_c: np.ndarray
    spring_l0: np.ndarray
    force_type: np.ndarray
    force_marker: np.ndarray
    force_vector: np.ndarray
    force_frame: np.ndarray
    force_function: np.ndarray
    sensor_type: np.ndarray
    sensor_coord: np.ndarray
    sensor_marker: np.ndarray
    sensor_body: np.ndarray
    sensor_frame: np.ndarray
    sensor_point: np.ndarray
    sensor_geo: np.ndarray
    sensor_geo_coef: np.ndarray
    sensor_offset: np.ndarray
    cut_marker_parent: np.ndarray
    cut_marker_child: np.ndarray
    cut_row_ptr: np.ndarray
    con_kind: np.ndarray
    con_x: np.ndarray
    con_y: np.ndarray
    con_c: np.ndarray
    con_active: np.ndarray
    contact_marker_disk: np.ndarray
    contact_marker_plane: np.ndarray
    contact_axis: np.ndarray
    contact_normal: np.ndarray
    contact_radius: np.ndarray
    contact_row_ptr: np.ndarray
    lin_ptr: np.ndarray
    lin_q: np.ndarray
    lin_coef: np.ndarray
    point_position: np.ndarray


class Workspace(NamedTuple):
    """Scratch arrays of one evaluation (written by the kernels).

    Per body (global axes unless said): r, rd, ar (N, 3) position, velocity and bias
    acceleration of the frame origin; rot (N, 3, 3) A (body to global); omega, aw (N, 3)
    angular velocity and bias angular acceleration; jr, jw (N, 3, ncol) the partial
    velocities d(rd)/d(xd_c), d(omega)/d(xd_c) (non-zero at the body's frame columns).
    Per column: x, xd, xdd (ncol) values, rates, and accelerations (prescribed ones;
    zero for free coordinates in the bias pass); tau (nc) generalized force needed at a
    prescribed coordinate. mass (nq, nq) M*, force (nq,) Q*, accel (nq,) du/dt.
    body_force (N, 6): [Qv + Qe - M a] of each body in [global force; body-axes moment].
    bcol, mbcol (6, ncol): one body's columns of B and of M_i B (assembly scratch).
    flex_mb ((6 + nfmax), ncol): a flexible body's M_i times its columns of B.
    djr, djw (N, 3, ncol): time derivatives of jr, jw (only filled on request: dB/dt).
    act_tau (na,): generalized force of each actuator on its coordinate.
    q, u (nq,): copies of the coordinates and speeds of the evaluation.
    flex_force (nq,): at the elastic coordinates of flexible bodies, the elastic part of
    [Qv + Qe - M a_bias] (the rigid part is in body_force); at a joint coordinate
    with a user law, the law's force.
    flex_mass_flat ((6 + nfmax)^2,), flex_vec, flex_vec2 (6 + nfmax,), flex_work
    (3, 3, nfmax + 2): a flexible body's mass matrix and scratch; geo_scratch (16, 12):
    the geometric-stiffness kernels' (forces: rows 0-2; the tangent: all).
    Constraints (ncr rows of the cut joints): con_phi, con_phid (ncr,) position and
    velocity residuals, con_jac (ncr, nq) their Jacobian Phi_q, con_jacx (ncr, nc)
    its columns at the prescribed coordinates (whose drivers bear the constraint
    forces too); con_jv, con_jw
    (2, 3, ncol) the partial velocities of a cut joint's two markers; con_vec
    (2, 4, 3) their position, velocity, angular velocity and arm, con_mat (2, 2, 3, 3)
    their axes and tangent maps. contact_vec (8, 3): a rolling contact's geometry
    (flexmbs.dynamics.constraints.contact_geometry).
    The projection formulation's (flexmbs.dynamics.projection): proj_q (nq,) a
    displaced q, proj_eta (ncr,) eta = dC/dt u + dxi/dt, proj_c (ncr, nq) C of the
    active rows, proj_lam (ncr,) their multipliers, proj_a (nq,) scratch.
    The O(N) residual's (flexmbs.kinematics.recursive.forward_kinematics_terms,
    flexmbs.dynamics.system.recursive_dynamic_rows): term_jr, term_jw (nterms, 3) what
    each motion term of a body's joint adds to its partial velocities; body_acc (N, 6)
    [global acceleration of the origin; angular acceleration] from du/dt alone;
    body_wrench (N, 6) [force; moment about the origin], global, of a body and its
    subtree. kin_key (2,): [1, t] while ws holds forward_kinematics_terms at t and
    at ws.q, ws.u (flexmbs.kinematics.recursive.terms_current), [0, t] otherwise.
    ode (2, 2 nq + 1 + na): the state derivative's y' argument and second residual
    (flexmbs.dynamics.system.state_derivative).
    Small temporaries: tf3 (3,), m33 (10, 3, 3), v3 (16, 3).
    The BDF step loop hands (m, ws) to its helpers and the residual by reference
    (flexmbs.tuple_ref), so the number of arrays here costs nothing per call there;
    passed by value, as numba does, each call copies every array's fields.
    """

    r: np.ndarray
    rot: np.ndarray
    rd: np.ndarray
    omega: np.ndarray
    ar: np.ndarray
    aw: np.ndarray
    jr: np.ndarray
    jw: np.ndarray
    x: np.ndarray
    xd: np.ndarray
    xdd: np.ndarray
    tau: np.ndarray
    mass: np.ndarray
    force: np.ndarray
    accel: np.ndarray
    body_force: np.ndarray
    bcol: np.ndarray
    mbcol: np.ndarray
    flex_mb: np.ndarray
    djr: np.ndarray
    djw: np.ndarray
    act_tau: np.ndarray
    q: np.ndarray
    u: np.ndarray
    flex_force: np.ndarray
    flex_mass_flat: np.ndarray
    flex_vec: np.ndarray
    flex_vec2: np.ndarray
    flex_work: np.ndarray
    geo_scratch: np.ndarray
    con_phi: np.ndarray
    con_phid: np.ndarray
    con_jac: np.ndarray
    con_jacx: np.ndarray
    con_jv: np.ndarray
    con_jw: np.ndarray
    con_vec: np.ndarray
    con_mat: np.ndarray
    contact_vec: np.ndarray
    proj_q: np.ndarray
    proj_eta: np.ndarray
    proj_c: np.ndarray
    proj_lam: np.ndarray
    proj_a: np.ndarray
    term_jr: np.ndarray
    term_jw: np.ndarray
    body_acc: np.ndarray
    body_wrench: np.ndarray
    kin_key: np.ndarray
    ode: np.ndarray
    tf3: np.ndarray
    m33: np.ndarray
    v3: np.ndarray
