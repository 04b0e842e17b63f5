"""The tables of a compiled model: ModelArrays, the flat arrays the kernels read
(written once, by flexmbs.model.compiled.compile_model), and Workspace, the
preallocated scratch memory of one evaluation (written by the kernels), field by field.
Sizes: N moving bodies (root to leaves), nc joint coordinates (all of them, prescribed
ones included, joint by joint in body order), ne elastic coordinates (of all flexible
bodies, body by body), ncol = nc + ne columns (the velocity transformation's columns
before the prescribed ones are dropped), nq = nu free coordinates (q: the free joint
coordinates, then the elastic ones), nmk markers used by loads and sensors, nf forces,
na actuators, ns sensors. The state vector is y = [q (nq), u (nq), w (1 + na + nel)]:
w[0] is the work of all the non-conservative forces (docs/explanation/formulation.md
section 7), w[1 + a] the work of actuator a alone, then the nel electrical states of
the DC motors (flexmbs.dynamics.motors): per motor the work of its voltage source and
its resistive loss (J), and its current (A) when it has an inductance.
"""

from typing import NamedTuple

import numpy as np

__all__ = ["ACTUATOR_CODES", "ModelArrays", "Workspace"]

ACTUATOR_CODES = {"pd": 0, "torque": 1, "dc_motor": 2}


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
    DC motors (act_type 2; flexmbs.dynamics.motors), per actuator (zero for the others):
        act_resistance R (ohm), act_inductance L (H), act_kt (N m/A), act_ke (V s/rad),
        act_efficiency (the gear's, 0 < eta <= 1), act_amplifier (V/V), act_max_voltage
        (V), act_max_current (A) (inf: none); act_electric (na,) the first of the
        motor's electrical states, counted from w[1 + na] (-1 for other actuators);
        elec_actuator (nel,) the actuator of each electrical state
    stop_coord (nst,) the joint coordinate of each joint stop; stop_lower, stop_upper
        (m or rad, -inf / inf: none), stop_stiffness (N/m or N m/rad), stop_damping
        (N s/m or N m s/rad) (flexmbs.dynamics.stops)
    body_flex (N,) index of the body in the flexible tables, -1 for a rigid body
    flex_nf, flex_q, flex_col (F,): number of elastic coordinates, index of the first
        in q and its column; flex_mass (F,), flex_first (F, 3), flex_th0 (F, 3, 3):
        invariants m, int rho u0, Th0; flex_sbar, flex_ninv: Sbar (3, nf), N (3, 3,
        nf), flattened, body k's at flex_ptr[k, j] : flex_ptr[k + 1, j] (j = 0, 1 for
        3 nf, 9 nf values); SS, K_ff and the damping D = alpha K + beta M_ff (+ modal
        damping) as blocks: flex_block_ptr (F+1,), block_dof_ptr, block_dof,
        block_ss_ptr, block_ss, block_m_ptr, block_m (M_ff), block_k_ptr, block_k,
        block_d_ptr, block_d (the layout of flexmbs.model.invariant_tables)
    geo_code (F,) geometric stiffness of each flexible body (GEOMETRIC_CODES), geo_ptr
        (F+1,) its elements; per element geo_ea (N), geo_length (m), geo_gmat
        (12, 12), the elastic coordinates it depends on at geo_col_ptr into geo_col,
        the rows e = R qf[col] at geo_row_ptr into geo_row_data, slope rows
        geo_dv, geo_dw (5, 12) and weights geo_weight (5,) at the Gauss points
        (flexmbs.model.geometric_tables, flexmbs.dynamics.geometric)
    lin_pos (nq + 1 + na,), lin_dims (3,): the bordered band layout of the speeds and
        works (flexmbs.model.band_layout): lin_pos[r] the position of unknown r,
        interior (banded) ones first; lin_dims = [interior, border, half-bandwidth]
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
    coupler_col (ncoupler, 2): the columns [follower, leader] of each coupler,
        coupler_multiplier k, coupler_offset o (rad or m) (ncoupler,): its row
        x_f - k x_l - o (con_kind 4) is row contact_row_ptr[-1] + j of con_*
        (flexmbs.model.coupler)
    lin_ptr (nrow + 1,), lin_q, lin_coef: linear sensor rows, row r =
        sum coef q[lin_q] over lin_ptr[r]:lin_ptr[r+1]
    point_position (npt, 3): undeformed centre-line points (body axes, m)
    fric_coord (nfr,) the coordinate of each joint friction; fric_law (nfr,) 0
        regularized, 1 stick-slip; fric_data (nfr, 5) F_c, F_s (N m or N), v_s,
        c_v, v_eps (flexmbs.dynamics.friction)
    ctrl_act (nctl,) the actuator each controller drives; ctrl_sampled (nctl,) 1 for
        a sampled controller (its output held in ws.ctrl_held), 0 continuous;
        ctrl_limits (nctl, 2) [min, max]; ctrl_offset (nctl,); ctrl_in_ptr (nctl+1,)
        its inputs; per input of a continuous controller ctrl_in_q (the q index of
        the coordinate it reads), ctrl_in_rate (1: its rate), ctrl_in_gain (nin, 2)
        [gain, rate_gain], ctrl_in_setpoint (time function, -1: none)
        (flexmbs.dynamics.controllers)
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
    act_resistance: np.ndarray
    act_inductance: np.ndarray
    act_kt: np.ndarray
    act_ke: np.ndarray
    act_efficiency: np.ndarray
    act_amplifier: np.ndarray
    act_max_voltage: np.ndarray
    act_max_current: np.ndarray
    act_electric: np.ndarray
    elec_actuator: np.ndarray
    stop_coord: np.ndarray
    stop_lower: np.ndarray
    stop_upper: np.ndarray
    stop_stiffness: np.ndarray
    stop_damping: np.ndarray
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
    flex_block_ptr: np.ndarray
    block_dof_ptr: np.ndarray
    block_dof: np.ndarray
    block_ss_ptr: np.ndarray
    block_ss: np.ndarray
    block_m_ptr: np.ndarray
    block_m: np.ndarray
    block_k_ptr: np.ndarray
    block_k: np.ndarray
    block_d_ptr: np.ndarray
    block_d: np.ndarray
    geo_code: np.ndarray
    geo_ptr: np.ndarray
    geo_ea: np.ndarray
    geo_length: np.ndarray
    geo_gmat: np.ndarray
    geo_col_ptr: np.ndarray
    geo_col: np.ndarray
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
    coupler_col: np.ndarray
    coupler_multiplier: np.ndarray
    coupler_offset: np.ndarray
    lin_ptr: np.ndarray
    lin_q: np.ndarray
    lin_coef: np.ndarray
    point_position: np.ndarray
    lin_pos: np.ndarray
    lin_dims: np.ndarray
    fric_coord: np.ndarray
    fric_law: np.ndarray
    fric_data: np.ndarray
    ctrl_act: np.ndarray
    ctrl_sampled: np.ndarray
    ctrl_limits: np.ndarray
    ctrl_offset: np.ndarray
    ctrl_in_ptr: np.ndarray
    ctrl_in_q: np.ndarray
    ctrl_in_rate: np.ndarray
    ctrl_in_gain: np.ndarray
    ctrl_in_setpoint: np.ndarray


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
    flex_mb (fcmax, 6 + nfmax): a flexible body's M_i times each of its frame columns
    of B (fcmax: the most frame columns of a body).
    djr, djw (N, 3, ncol): time derivatives of jr, jw (only filled on request: dB/dt).
    act_tau (na,): generalized force of each actuator on its coordinate.
    q, u (nq,): copies of the coordinates and speeds of the evaluation.
    flex_force (nq,): at the elastic coordinates of flexible bodies, the elastic part of
    [Qv + Qe - M a_bias] (the rigid part is in body_force); at a joint coordinate
    with a user law, the law's force.
    flex_mass_flat ((6 + nfmax)^2,), flex_vec, flex_vec2, flex_acc (6 + nfmax,): a
    flexible body's dense mass matrix and scratch; flex_moments (nq + 3 F, 3, 3): the
    moments P, Th, St of each flexible body at its elastic coordinates (flexible body
    k's at rows flex_q[k] + 3 k ... + nf + 3: the `work` of
    flexmbs.dynamics.flexible_body), as the last body_forces or mass matrix left them;
    geo_scratch (16, 12): the geometric-stiffness kernels' (forces: rows 0-2; the
    tangent: all); geo_kr (12, ncmax): an element's K_e R (the tangent; ncmax the most
    coordinates of an element).
    Constraints (ncr rows of the cut joints): con_phi, con_phid (ncr,) position and
    velocity residuals, con_jac (ncr, nq) their Jacobian Phi_q, con_jacx (ncr, nc)
    its columns at the prescribed coordinates (whose drivers bear the constraint
    forces too); con_jv, con_jw
    (2, 3, ncol) the partial velocities of a cut joint's two markers (0 the parent
    marker P, 1 the child O; of a rolling contact: 0 the plane's, 1 the disk's); con_vec
    (2, 4, 3) their position, velocity, angular velocity and arm, con_mat (2, 2, 3, 3)
    their axes and tangent maps (the frames also of a cut joint's coordinate sensor,
    flexmbs.dynamics.sensors._cut_joint_coordinate). contact_vec (8, 3): a rolling
    contact's geometry (flexmbs.dynamics.constraints.contact_geometry).
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
    ode (2, 2 nq + 1 + na + nel): the state derivative's y' argument and second residual
    (flexmbs.dynamics.system.state_derivative).
    tf3 (3,): a time function's value and its first two derivatives
    (flexmbs.kinematics.timefunctions.evaluate_time_function).

    The discrete state of a run, set by the integrator between its segments and read
    by the kernels (flexmbs.solvers.events): segment_time (1,): a time (s) inside
    the integration segment at hand, from which the piecewise time functions take
    their piece (NaN outside a run: from t itself); act_branch (na,): the branch of
    each actuator's torque limit held over the segment, 0 within the limits, +1 at
    +max_torque, -1 at -max_torque (NaN outside a run: the torque is limited by
    value); motor_branch (na, 2): a DC motor's voltage limit and current limit, in
    the same code; stop_branch (nst,): each joint stop's contact, 0 free, +1 on the
    upper stop, -1 on the lower one (NaN: by the coordinate's value).
    motor_current (na,): the current of each DC motor with an inductance, read from
    the state (flexmbs.dynamics.motors.load_motor_state). fric_mode (nfr,): each
    stick-slip friction's +1 or -1 sliding that way, 0 stuck (NaN outside a run:
    regularized), fric_scale (nfr,) the row scale of a stuck coordinate (kg or kg
    m^2); ctrl_held (nctl,): the output of each sampled controller in force
    (flexmbs.dynamics.friction, flexmbs.dynamics.controllers). fric_force (nfr,):
    the friction forces; fric_hold (nfr,): the force holding each stuck joint;
    stick_scratch (2, 2 nq + nworks): the residual and state derivative of
    flexmbs.dynamics.stick_slip; act_command (na,): the controllers' command of each
    actuator (N m, N or V).

    Named work buffers: the kernels' small temporaries, one field per meaning (shape,
    units and axes; the kernels that write and read them).

    The frame of the marker at hand, written by marker_frame
    (flexmbs.kinematics.markers) and read by the kernel that called it: the load's
    (system._load_at_marker), a spring's (system._spring_state, _spring_forces), a
    marker law's (user_laws._marker_law_wrench), a tree joint reaction's child marker
    (reactions.tree_joint_reaction) and a marker sensor's (sensors.sensor_values).
    marker_pos (3,): its position (m, global); read by _spring_state,
    tree_joint_reaction, sensor_values.
    marker_axes (3, 3): its axes A_b C (global); read for follower loads
    (_load_at_marker), laws in marker axes (_marker_law_wrench) and sensor_values.
    marker_vel (3,): its velocity (m/s, global); read by _spring_state, _loads_power,
    marker_law_power, sensor_values.
    marker_omega (3,): its angular velocity (rad/s, global); read by _loads_power,
    marker_law_power, sensor_values.
    marker_arm (3,): A_b s, the marker from its body's origin (m, global); read by
    add_marker_load (through _applied_loads, _spring_forces, marker_law_loads).
    marker_tangent (3, 3): the tangent map Tm(th) of its Cardan angles (body axes);
    read as marker_arm.

    marker_frame's own (flexmbs.kinematics.markers; the first four also
    marker_deformation's, which sensor_values calls for a marker_deflection sensor):
    marker_deflection (3,): d, the marker's elastic translation (m, body axes).
    marker_deflection_rate (3,): dd/dt (m/s, body axes).
    marker_angles (3,): th, its elastic Cardan angles (rad).
    marker_angle_rates (3,): dth/dt (rad/s).
    marker_relative_omega (3,): Tm(th) dth/dt, its angular velocity relative to its
    body (rad/s, body axes).
    marker_body_axes (3, 3): A_b of its body (the identity for the ground).
    marker_rx, marker_ry, marker_rz (3, 3): Rx(th_0), Ry(th_1), Rz(th_2)
    (cardan_rotations).
    marker_product (3, 3): the partial products Rz C0, then Rx Ry Rz C0, of its axes.

    Loads, springs and user laws (flexmbs.dynamics.system, flexmbs.dynamics.user_laws):
    load_vector (3,): the vector of the point load at hand (N or N m, global), written
    by _load_at_marker, read by _applied_loads and _loads_power.
    spring_first_position (3,), spring_first_velocity (3,): the position (m) and
    velocity (m/s) of a spring's first marker (global), kept by _spring_state while
    it takes the second marker's frame.
    spring_direction (3,): the unit vector from a spring's first marker to its second
    (global), written by _spring_state, read by _spring_forces.
    spring_force (3,): the spring's force on one of its markers (N, global), written
    and applied by _spring_forces.
    law_out (6,): a user law's out, zeroed before each call: a joint law's force in
    out[0] (N or N m; joint_law_forces), a marker law's force (N) and torque (N m) in
    out[0:6], turned to global axes by _marker_law_wrench, read by marker_law_loads
    and marker_law_power.

    Bodies (flexmbs.dynamics.system, energy, order_n, composite):
    omega_body (3,): A_i^T omega_i, the angular velocity of the body at hand in its
    own axes (rad/s), written by body_forces and energies, read by
    _flexible_body_force and _flexible_energies too.
    aw_body (3,): A_i^T aw_i, its bias angular acceleration in its own axes
    (rad/s^2; body_forces).
    udot_ar (3,), udot_aw (3,): the acceleration of the body's origin (m/s^2) and its
    angular acceleration (rad/s^2) from du/dt alone (global), written by
    body_unbalanced_wrench and recursive_dynamic_rows, read by
    _wrench_of_acceleration.
    udot_aw_body (3,): A_i^T udot_aw (rad/s^2, body axes; _wrench_of_acceleration).
    parent_offset (3,): r_i - r_p, the body's origin from its parent's (m, global;
    recursive_dynamic_rows).
    mass_unit_vr (3,), mass_unit_vw (3,): a unit body velocity [dr/dt (global);
    w (body axes)] whose product with M_i is a column of M_i (order_n._global_mass).
    mass_turn (3,): three entries of a row or column of M_i while they are turned from
    body to global axes (order_n._global_mass).
    composite_io_at (3, 3): I_O A_i^T of a rigid body (kg m^2; composite
    ._body_inertia_about_origin).

    The run along a body's motions (flexmbs.kinematics.recursive: forward kinematics
    and velocity_transformation_rate, both writing and reading them):
    kin_frame_axes (3, 3): the axes of the frame where the next motion acts
    (global; velocity_transformation_rate; forward kinematics builds them in rot).
    kin_frame_omega (3,): that frame's angular velocity (rad/s, global;
    velocity_transformation_rate).
    kin_rotation (3, 3): Rot(a, x) of a ROTATE motion.
    kin_product (3, 3): the frame's axes times a motion's rotation, before they are
    copied back.
    kin_axis (3,): e = A a, the axis of a motion (global, unit).
    kin_axis_rate (3,): de/dt = w x e (1/s, global; velocity_transformation_rate).
    kin_step (3,): a motion's displacement y (OFFSET: A v; TRANSLATE: e x; m, global).
    kin_step_velocity (3,): w x y, the velocity the frame's rotation gives the
    displacement (m/s, global; forward kinematics).
    kin_pending (3,): the displacements since the body's frame columns were last moved
    (m, global).
    kin_pending_rate (3,): their rate (m/s, global; velocity_transformation_rate).

    Constraints and reactions (flexmbs.dynamics.constraints, reactions):
    con_g (3,), con_h (3,): g = A_P x (or A_P n) and h = A_O y of a cut joint's
    constraint row (global, unit), con_d (3,): d = p_O - p_P (m, global); written by
    _row_vectors, read by constraint_terms and cut_joint_reaction.
    con_gx (3,): g x d (m) of a position row, g x h of an orientation row
    (constraint_terms).
    contact_rd_e (3,), contact_rp_e (3,): rD x e and rP x e of a rolling contact's
    row e (m, global; _contact_rows).
    reaction_point (3,): the child marker's position about which tree_joint_reaction
    takes moments (m, global).
    tree_reaction_force (3,), tree_reaction_torque (3,): the reaction of a tree joint
    on its child body about its child marker (N, N m, global), written by
    tree_joint_reaction for reaction_sensor_values.
    cut_force (3,), cut_torque (3,): the reaction of a cut joint on its child body at
    its child marker (N, N m, global), written by cut_joint_reaction for
    tree_joint_reaction and reaction_sensor_values.
    contact_force (3,), contact_point (3,): the force of a rolling contact on its disk
    (N) and the contact point (m), global, written by contact_reaction for
    tree_joint_reaction and reaction_sensor_values.

    Sensors (flexmbs.dynamics.sensors: sensor_values, reaction_sensor_values):
    sensor_frame_axes (3, 3), sensor_frame_origin (3,): A_f and r_f (m) of the
    sensor's frame body (global; _frame_of).
    sensor_value (3,): the vector a sensor reports, in global axes before it is
    turned into the sensor's frame (A_f^T).
    centerline_point (3,): x0 + S(x0) qf, a point of a beam's deformed centre line
    (m, body axes).
    cut_axis (3,): a = A_P a0, the axis of a cut joint's coordinate (global, unit;
    _cut_joint_coordinate, which takes the joint's two markers' frames into
    con_vec, con_mat).
    cut_normal (3,): b0, normal to a0 (P's axes, not unit).
    cut_normal_parent (3,), cut_normal_child (3,): A_P b0 / |b0| and A_O b0 / |b0|
    (global, unit).

    The BDF step loop hands (m, ws) to its helpers and the residual by reference
    (flexmbs.runtime.tuple_ref), so the number of arrays here costs nothing per call there;
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
    flex_acc: np.ndarray
    flex_moments: np.ndarray
    geo_scratch: np.ndarray
    geo_kr: np.ndarray
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
    segment_time: np.ndarray
    act_branch: np.ndarray
    motor_branch: np.ndarray
    stop_branch: np.ndarray
    motor_current: np.ndarray
    fric_mode: np.ndarray
    fric_scale: np.ndarray
    fric_force: np.ndarray
    fric_hold: np.ndarray
    stick_scratch: np.ndarray
    ctrl_held: np.ndarray
    act_command: np.ndarray
    marker_pos: np.ndarray
    marker_axes: np.ndarray
    marker_vel: np.ndarray
    marker_omega: np.ndarray
    marker_arm: np.ndarray
    marker_tangent: np.ndarray
    marker_deflection: np.ndarray
    marker_deflection_rate: np.ndarray
    marker_angles: np.ndarray
    marker_angle_rates: np.ndarray
    marker_relative_omega: np.ndarray
    marker_body_axes: np.ndarray
    marker_rx: np.ndarray
    marker_ry: np.ndarray
    marker_rz: np.ndarray
    marker_product: np.ndarray
    load_vector: np.ndarray
    spring_first_position: np.ndarray
    spring_first_velocity: np.ndarray
    spring_direction: np.ndarray
    spring_force: np.ndarray
    law_out: np.ndarray
    omega_body: np.ndarray
    aw_body: np.ndarray
    udot_ar: np.ndarray
    udot_aw: np.ndarray
    udot_aw_body: np.ndarray
    parent_offset: np.ndarray
    mass_unit_vr: np.ndarray
    mass_unit_vw: np.ndarray
    mass_turn: np.ndarray
    composite_io_at: np.ndarray
    kin_frame_axes: np.ndarray
    kin_frame_omega: np.ndarray
    kin_rotation: np.ndarray
    kin_product: np.ndarray
    kin_axis: np.ndarray
    kin_axis_rate: np.ndarray
    kin_step: np.ndarray
    kin_step_velocity: np.ndarray
    kin_pending: np.ndarray
    kin_pending_rate: np.ndarray
    con_g: np.ndarray
    con_h: np.ndarray
    con_d: np.ndarray
    con_gx: np.ndarray
    contact_rd_e: np.ndarray
    contact_rp_e: np.ndarray
    reaction_point: np.ndarray
    tree_reaction_force: np.ndarray
    tree_reaction_torque: np.ndarray
    cut_force: np.ndarray
    cut_torque: np.ndarray
    contact_force: np.ndarray
    contact_point: np.ndarray
    sensor_frame_axes: np.ndarray
    sensor_frame_origin: np.ndarray
    sensor_value: np.ndarray
    centerline_point: np.ndarray
    cut_axis: np.ndarray
    cut_normal: np.ndarray
    cut_normal_parent: np.ndarray
    cut_normal_child: np.ndarray
