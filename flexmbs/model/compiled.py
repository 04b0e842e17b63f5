"""CompiledModel: the model as flat, immutable numpy arrays for the kernels; Workspace:
the preallocated scratch memory of one evaluation (Pinocchio's Model/Data split).

Sizes: N moving bodies (root to leaves), nc joint coordinates (all of them, prescribed
ones included, joint by joint in body order), ne elastic coordinates (of all flexible
bodies, body by body), ncol = nc + ne columns (the velocity transformation's columns
before the prescribed ones are dropped), nq = nu free coordinates (q: the free joint
coordinates, then the elastic ones), nmk markers used by loads and sensors, nf forces,
na actuators, ns sensors. The state vector is y = [q (nq), u (nq), w (1 + na)]: w[0] is
the work of all the non-conservative forces (docs/explanation/formulation.md section 7), w[1
+ a] the work of actuator a alone.
"""

import copy
import dataclasses
from typing import NamedTuple

import numpy as np

from ..elements.damping import modal_damping_matrix
from ..errors import ModelError
from ..tuple_ref import HeldTuple, held_ref
from .constraint_tables import constraint_tables
from .description import GROUND, BeamBody, Joint, Marker, RigidBody
from .geometric_tables import geometric_tables
from .motions import ROTATE, TRANSLATE, joint_motions, marker_terms
from .sensor_tables import SENSOR_CODES, SENSOR_SIZES, sensor_tables
from .timefunctions import compile_time_functions
from .topology import build_topology
from .user_laws import user_law_entries, with_user_laws

__all__ = ["ModelArrays", "Workspace", "CompiledModel", "compile_model",
           "SENSOR_CODES", "SENSOR_SIZES"]

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


class CompiledModel:
    """A model compiled for the kernels: `arrays` (ModelArrays) plus the names and
    initial state the Python side needs.

    `arrays` and each `new_workspace()` are HeldTuples (flexmbs.tuple_ref): in Python
    they read as the namedtuples they hold; a kernel receives each as one pointer,
    typed TupleRef. Every kernel is thus compiled once, for references, whoever calls
    it: a kernel whose arguments were the tuples themselves would convert their ~150
    arrays at each call from Python, and numba would build that conversion into
    its Python entry when compiling it (about 5 s a kernel)."""

    def __init__(self, model, topology, arrays, coordinate_names, joint_coordinate_names,
                 sensor_names, sensor_sizes, q0, u0, beams=(), absolute_joints=None):
        self.model = model
        # {joint name: body name} of the joints that place each body in the absolute
        # form (flexmbs.model.absolute), {} in joint coordinates
        self.absolute_joints = dict(absolute_joints or {})
        self.topology = topology
        self.arrays = arrays if isinstance(arrays, HeldTuple) else held_ref(arrays)
        self.coordinate_names = coordinate_names
        self.joint_coordinate_names = joint_coordinate_names
        self.sensor_names = sensor_names
        self.sensor_sizes = sensor_sizes
        self.q0 = q0
        self.u0 = u0
        self.beams = tuple(beams)  # (body index, BeamBody) of each flexible body
        self.warnings = model_warnings(self.beams)
        self.constraint_texts = []  # what each constraint row of the cut joints holds

    @property
    def nbodies(self):
        return len(self.arrays.body_mass)

    @property
    def ncoords(self):
        return len(self.arrays.coord_qindex)

    @property
    def ncolumns(self):
        return len(self.arrays.col_qindex)

    @property
    def nq(self):
        return len(self.q0)

    @property
    def nactuators(self):
        return len(self.arrays.act_coord)

    @property
    def ncontacts(self):
        return len(self.arrays.contact_radius)

    @property
    def has_constraints(self):
        """The model has cut joints or rolling contacts: a DAE (docs/explanation/formulation.md
        section 5)."""
        return len(self.arrays.con_kind) > 0

    @property
    def nconstraints(self):
        """Number of active constraint equations (multipliers lambda, and mu)."""
        return int(np.sum(self.arrays.con_active >= 0))

    @property
    def nstate(self):
        """Length of y = [q, u, w, lambda, mu] (w: W_nc and the work of each actuator;
        lambda, mu: the multipliers of the active constraints,
        docs/explanation/formulation.md section 5)."""
        return 2 * self.nq + 1 + self.nactuators + 2 * self.nconstraints

    @property
    def nsensor_values(self):
        return int(self.arrays.sensor_offset[-1])

    def initial_state(self):
        return np.concatenate([self.q0, self.u0, np.zeros(1 + self.nactuators
                                                          + 2 * self.nconstraints)])

    def new_workspace(self):
        """The work arrays of the kernels for this model (Workspace), held by reference
        (HeldTuple), zeroed."""
        n, nc, ncol, nq = self.nbodies, self.ncoords, self.ncolumns, self.nq
        ncr = len(self.arrays.con_kind)
        nfm = int(self.arrays.flex_nf.max()) if len(self.arrays.flex_nf) else 0
        nt = len(self.arrays.motion_term_col)
        z = np.zeros
        return held_ref(Workspace(
            r=z((n, 3)), rot=z((n, 3, 3)), rd=z((n, 3)), omega=z((n, 3)), ar=z((n, 3)),
            aw=z((n, 3)), jr=z((n, 3, ncol)), jw=z((n, 3, ncol)), x=z(ncol), xd=z(ncol),
            xdd=z(ncol), tau=z(nc), mass=z((nq, nq)), force=z(nq), accel=z(nq),
            body_force=z((n, 6)), bcol=z((6, ncol)), mbcol=z((6, ncol)),
            flex_mb=z((6 + nfm, ncol)), djr=z((n, 3, ncol)), djw=z((n, 3, ncol)),
            act_tau=z(self.nactuators), q=z(nq), u=z(nq), flex_force=z(nq),
            flex_mass_flat=z((6 + nfm) ** 2), flex_vec=z(6 + nfm), flex_vec2=z(6 + nfm),
            flex_work=z((3, 3, nfm + 2)), geo_scratch=z((16, 12)), con_phi=z(ncr),
            con_phid=z(ncr), con_jac=z((ncr, nq)), con_jacx=z((ncr, nc)),
            con_jv=z((2, 3, ncol)),
            con_jw=z((2, 3, ncol)), con_vec=z((2, 4, 3)), con_mat=z((2, 2, 3, 3)),
            contact_vec=z((8, 3)), proj_q=z(nq), proj_eta=z(ncr), proj_c=z((ncr, nq)),
            proj_lam=z(ncr), proj_a=z(nq),
            term_jr=z((nt, 3)), term_jw=z((nt, 3)), body_acc=z((n, 6)),
            body_wrench=z((n, 6)), kin_key=z(2),
            ode=z((2, 2 * nq + 1 + self.nactuators)),
            tf3=z(3), m33=z((10, 3, 3)), v3=z((16, 3))))


SPRING_LENGTH_MIN = 1e-9
"""A spring shorter than this (m) has no direction for its force
(docs/explanation/formulation.md section 4)."""


def _initial_spring_lengths(cm, names):
    """The rest lengths not given: the springs' lengths in the initial configuration.
    A spring whose markers coincide there is refused (ModelError naming it): the
    direction of its force, from one marker to the other, is undefined."""
    from ..dynamics.api import marker_frames
    pos = marker_frames(cm, cm.q0)[0]
    m = cm.arrays
    for s, name in enumerate(names):
        length = np.linalg.norm(pos[m.spring_marker[s, 1]] - pos[m.spring_marker[s, 0]])
        if length < SPRING_LENGTH_MIN:
            raise ModelError(f"its two markers coincide in the initial configuration "
                             f"(length {length:.3g} m): the direction of its force is "
                             f"undefined; expected markers at least "
                             f"{SPRING_LENGTH_MIN:g} m apart", f'spring "{name}"',
                             "marker1")
        if np.isnan(m.spring_l0[s]):
            m.spring_l0[s] = length


AXIAL_CAPABILITY_MIN = 1e-6  # below this a basis cannot stretch the beam


def model_warnings(beams):
    """Texts for the user about choices that compile but may not mean what they say:
    a beam whose kept modes cannot stretch it axially while its geometric stiffness is
    on (docs/explanation/formulation.md section 6: u' then stays zero, the axial force's
    stiffening is lost and the foreshortening term, which the axis can no longer relax,
    stiffens
    bending instead)."""
    from ..elements.modal import axial_stretch_capability
    out = []
    for _, b in beams:
        if b.modes == "all" or b.geometric == "none":
            continue
        capability = axial_stretch_capability(b)
        if capability < AXIAL_CAPABILITY_MIN:
            out.append(f'body "{b.name}": its elastic coordinates (modes = {b.modes}'
                       + (", with correction modes" if b.correction_modes else "")
                       + ") cannot stretch the beam axially (capability "
                       f"{capability:.2g}), so the geometric stiffness "
                       f'"{b.geometric}" sees no axial strain: the axial force\'s '
                       "stiffening is lost and foreshortening stiffens the bending "
                       "instead; add correction modes at the beam's markers "
                       '(correction_modes = true) or set geometric = "none"')
    return out


def _flat(arrays):
    """The arrays raveled one after the other (float64)."""
    if not arrays:
        return np.zeros(0)
    return np.ascontiguousarray(np.concatenate([np.ravel(a) for a in arrays]), dtype=float)


def _check_beam_markers(model):
    """Joints and loads on beam bodies act at markers on nodes (add_marker puts every
    named marker on one); the beam's `origin` marker is its floating frame, which
    moves with the body but not with the deformation: a joint there is a joint at the
    frame, which is a material point only where a node sits held by the reference
    conditions."""
    beams = {name for name, b in model.bodies.items() if isinstance(b, BeamBody)}

    def held_at_origin(b):
        return any(not np.any(b.nodes[k]) and not np.any(b.node_rows(k))
                   for k in range(len(b.nodes)))

    for j in model.joints.values():
        for side, body, mk in (("parent", j.parent, j.parent_marker),
                               ("child", j.child, j.child_marker)):
            if body in beams and mk == "origin" and not held_at_origin(model.bodies[body]):
                raise ModelError(
                    f'the "origin" marker of beam "{body}" is its floating frame, not a '
                    f"material point: join the beam at a marker on a node (add "
                    f"[bodies.{body}.markers.NAME] with node = K), or clamp the node at "
                    f"the origin", f'joint "{j.name}"', f"{side}_marker")
    loads = [(f, f'force "{f.name}"') for f in model.forces.values()] + [
        (law, f'user law "{law.name}"') for law in model.user_laws.values()
        if law.kind == "marker"]
    for f, item in loads:
        if f.body in beams and f.marker == "origin" and not held_at_origin(
                model.bodies[f.body]):
            raise ModelError(f'the "origin" marker of beam "{f.body}" is its floating '
                             f"frame, not a material point: apply the load at a marker "
                             f"on a node", item, "marker")


def _columns_of(motions):
    return sorted({c for mo in motions if mo.kind in (TRANSLATE, ROTATE)
                   for c, _ in mo.terms})


def _motion_arrays(per_body):
    kind, vec, rot, tptr, tcol, tcoef, ptr = [], [], [], [0], [], [], [0]
    for motions in per_body:
        for mo in motions:
            kind.append(mo.kind)
            vec.append(mo.vector)
            rot.append(mo.rotation)
            for c, k in mo.terms:
                tcol.append(c)
                tcoef.append(k)
            tptr.append(len(tcol))
        ptr.append(len(kind))
    i64 = np.int64
    return dict(
        motion_ptr=np.array(ptr, dtype=i64),
        motion_kind=np.array(kind, dtype=i64),
        motion_vector=np.array(vec, dtype=float).reshape(-1, 3),
        motion_rotation=np.array(rot, dtype=float).reshape(-1, 3, 3),
        motion_term_ptr=np.array(tptr, dtype=i64),
        motion_term_col=np.array(tcol, dtype=i64),
        motion_term_coef=np.array(tcoef, dtype=float))


def _ragged(lists, dtype=np.int64):
    ptr = np.zeros(len(lists) + 1, dtype=np.int64)
    ptr[1:] = np.cumsum([len(x) for x in lists])
    flat = np.array([v for x in lists for v in x], dtype=dtype)
    return ptr, flat


def node_inertia_body_name(beam, node):
    """Name of the massless rigid body that carries a beam node's rotary inertia."""
    return f"{beam}.node{node}"


def with_node_inertias(model):
    """The model with every rotary inertia at a beam node as a rigid body of no mass,
    that inertia about its origin, joined by a fixed joint to a marker on the node: it
    moves and turns with the node exactly (docs/explanation/formulation.md section 2: a
    lumped rotary
    inertia adds kinetic energy through the node's rotation). A shallow copy; the
    model itself is unchanged."""
    if not any(isinstance(b, BeamBody) and b.node_inertias for b in model.bodies.values()):
        return model
    out = copy.copy(model)
    out.bodies = dict(model.bodies)
    out.joints = dict(model.joints)
    for name, body in model.bodies.items():
        inertias = body.node_inertias if isinstance(body, BeamBody) else None
        if not inertias:
            continue
        beam = dataclasses.replace(body, markers=dict(body.markers))
        out.bodies[name] = beam
        for node, inertia in inertias.items():
            carrier = node_inertia_body_name(name, node)
            item = f'body "{name}"'
            if carrier in out.bodies:
                raise ModelError(f'the rotary inertia at node {node} is carried by a body '
                                 f'named "{carrier}", which the model already has: rename '
                                 f"that body", item, f"node_inertias.{node}")
            out.bodies[carrier] = RigidBody(carrier, 0.0, np.zeros(3), inertia)
            out.bodies[carrier].markers["origin"] = Marker("origin", carrier, np.zeros(3),
                                                           np.eye(3))
            beam.markers[carrier] = Marker(carrier, name, beam.nodes[node].copy(),
                                           np.eye(3), int(node))
            out.joints[carrier] = Joint(carrier, "fixed", name, carrier, carrier, "origin",
                                        np.zeros((0, 3)), np.zeros((0, 3)), *(
                                            [np.zeros(0)] * 5))
    return out


def compile_model(model, absolute_joints=None):
    """Validate the topology and pack the model into a CompiledModel. `absolute_joints`
    {joint name: body name}: the joints that place each body of an absolute-coordinate
    model (flexmbs.model.absolute.absolute_model gives them), None otherwise."""
    described = model
    model = with_node_inertias(model)
    topo = build_topology(model)
    index = {b: k for k, b in enumerate(topo.body_names)}
    n = len(topo.body_names)
    joints = [model.joints[j] for j in topo.joint_names]
    bodies = [model.bodies[b] for b in topo.body_names]
    _check_beam_markers(model)

    driven = {(d.joint, d.coordinate): d for d in model.drivers.values()}
    functions = []
    coord_start = np.zeros(n + 1, dtype=np.int64)
    axes, qindex, fidx, stiff, damp, rest = [], [], [], [], [], []
    names, jnames, q0, u0 = [], [], [], []
    coord_of = {}
    for k, j in enumerate(joints):
        coord_start[k + 1] = coord_start[k] + j.ndof
        for c, (axis, cname) in enumerate(zip(
                list(j.translation_axes) + list(j.rotation_axes), j.coordinate_names())):
            coord_of[(j.name, c)] = len(axes)
            axes.append(axis)
            jnames.append(cname)
            stiff.append(j.stiffness[c])
            damp.append(j.damping[c])
            rest.append(j.rest[c])
            d = driven.get((j.name, c))
            if d is None:
                qindex.append(len(names))
                fidx.append(-1)
                names.append(cname)
                q0.append(j.initial[c])
                u0.append(j.initial_rate[c])
            else:
                qindex.append(-1)
                fidx.append(len(functions))
                functions.append(d.function)
    nc = len(axes)
    nfree = len(names)
    actuators = list(model.actuators.values())
    act_index = {a.name: k for k, a in enumerate(actuators)}
    act_fidx = []
    for a in actuators:
        act_fidx.append(len(functions))
        functions.append(a.setpoint if a.type == "pd" else a.torque)

    # flexible bodies: elastic coordinates after the joint ones, in body order
    beams = [(i, b) for i, b in enumerate(bodies) if isinstance(b, BeamBody)]
    body_flex = -np.ones(n, dtype=np.int64)
    flex_q, flex_col, ptr = [], [], [np.zeros(4, dtype=np.int64)]
    first_col = {}
    for k, (i, b) in enumerate(beams):
        body_flex[i] = k
        flex_q.append(len(names))
        flex_col.append(nc + len(names) - nfree)
        first_col[b.name] = flex_col[-1]
        names += b.coordinate_names()
        q0 += list(_explicit_elastic_state(b))
        u0 += list(_explicit_elastic_rates(b))
        ptr.append(ptr[-1] + np.array([3 * b.nf, 9 * b.nf, 9 * b.nf ** 2, b.nf ** 2]))
    col_qindex = np.array(qindex + list(range(nfree, len(names))), dtype=np.int64)

    def terms_of(body_name, marker_name):
        body = None if body_name == GROUND else model.bodies[body_name]
        return marker_terms(model.marker(body_name, marker_name), body,
                            first_col.get(body_name, 0))

    # the kinematic chains, frame columns and B columns of every body
    per_body, frame, inherited, body_cols = [], [], [], []
    movable = absolute_joints or {}
    for k, j in enumerate(joints):
        motions = joint_motions(terms_of(j.parent, j.parent_marker),
                                terms_of(j.child, j.child_marker),
                                j.translation_axes, j.rotation_axes, coord_start[k],
                                reference_slots=j.name in movable)
        per_body.append(motions)
        p = topo.parent[k]
        parent_cols = set(frame[p]) if p >= 0 else set()
        cols = sorted(parent_cols | set(_columns_of(motions)))
        frame.append(cols)
        inherited.append([c in parent_cols for c in cols])
        own = []
        if body_flex[k] >= 0:
            b = beams[body_flex[k]][1]
            own = list(range(first_col[b.name], first_col[b.name] + b.nf))
        body_cols.append(sorted(set(cols) | set(own)))
    frame_ptr, frame_col = _ragged(frame)
    _, frame_inh = _ragged(inherited, np.int64)
    body_col_ptr, body_col = _ragged(body_cols)

    def damping(b):
        inv = b.invariants
        d = b.alpha * inv.stiffness + b.beta * inv.mass_matrix()
        if b.modal_damping is not None:
            d = d + modal_damping_matrix(inv.stiffness, inv.mass_matrix(),
                                         b.modal_damping, f'body "{b.name}"')
        return d

    # markers of loads and sensors
    marker_index, mk_list = {}, []

    def marker_id(body_name, marker_name):
        key = (body_name, marker_name)
        if key not in marker_index:
            marker_index[key] = len(mk_list)
            mk_list.append((-1 if body_name == GROUND else index[body_name],
                            terms_of(body_name, marker_name)))
        return marker_index[key]

    forces = list(model.forces.values())
    force_marker = [marker_id(f.body, f.marker) for f in forces]
    springs = list(model.springs.values())
    spring_marker = [(marker_id(s.body1, s.marker1), marker_id(s.body2, s.marker2))
                     for s in springs]
    force_fidx = []
    for f in forces:
        force_fidx.append(len(functions))
        functions.append(f.function)
    tf_kind, tf_ptr, tf_data = with_user_laws(
        *compile_time_functions(functions),
        user_law_entries(model, coord_of, qindex, names, marker_id))
    cut_joints = [model.joints[name] for name in topo.cut_joint_names]
    contacts = list(model.contacts.values())
    con_arrays, con_texts = constraint_tables(model, cut_joints, marker_id, contacts)
    sensors = list(model.sensors.values())
    geo_first, count = {}, 0
    for _, b in beams:
        if b.geometric != "none":
            geo_first[b.name] = count
            count += len(b.connectivity)
    stab = sensor_tables(model, sensors, index, coord_of, act_index, marker_id,
                         {b.name: flex_q[k] for k, (_, b) in enumerate(beams)}, geo_first,
                         topo.cut_joint_names, [c.name for c in contacts])

    mterm_lists = [mt.terms[d] for _, mt in mk_list for d in range(6)]
    mterm_ptr = np.zeros(len(mterm_lists) + 1, dtype=np.int64)
    mterm_ptr[1:] = np.cumsum([len(t) for t in mterm_lists])

    f64, i64 = np.float64, np.int64

    def arr(x, shape, dtype=f64):
        a = np.array(x, dtype=dtype)
        return a.reshape(shape) if a.size == 0 else np.ascontiguousarray(a)

    arrays = ModelArrays(
        gravity=np.array(model.gravity, dtype=f64),
        body_parent=np.array(topo.parent, dtype=i64),
        body_mass=arr([b.mass for b in bodies], (0,)),
        body_first_moment=arr([b.mass * b.com for b in bodies], (0, 3)),
        body_inertia_origin=arr([b.inertia_about_origin for b in bodies], (0, 3, 3)),
        joint_coord_start=coord_start,
        joint_ntrans=arr([len(j.translation_axes) for j in joints], (0,), i64),
        coord_axis=arr(axes, (0, 3)),
        coord_qindex=arr(qindex, (0,), i64),
        coord_function=arr(fidx, (0,), i64),
        coord_stiffness=arr(stiff, (0,)),
        coord_damping=arr(damp, (0,)),
        coord_rest=arr(rest, (0,)),
        col_qindex=col_qindex,
        **_motion_arrays(per_body),
        frame_ptr=frame_ptr, frame_col=frame_col, frame_inherited=frame_inh,
        body_col_ptr=body_col_ptr, body_col=body_col,
        tf_kind=tf_kind, tf_ptr=tf_ptr, tf_data=tf_data,
        act_coord=arr([coord_of[(a.joint, a.coordinate)] for a in actuators], (0,), i64),
        act_type=arr([ACTUATOR_CODES[a.type] for a in actuators], (0,), i64),
        act_kp=arr([a.kp for a in actuators], (0,)),
        act_kd=arr([a.kd for a in actuators], (0,)),
        act_function=arr(act_fidx, (0,), i64),
        act_gear=arr([a.gear_ratio for a in actuators], (0,)),
        act_max=arr([a.max_torque for a in actuators], (0,)),
        act_inertia=arr([a.gear_ratio ** 2 * a.rotor_inertia for a in actuators], (0,)),
        act_damping=arr([a.gear_ratio ** 2 * a.motor_damping for a in actuators], (0,)),
        body_flex=body_flex,
        flex_nf=arr([b.nf for _, b in beams], (0,), i64),
        flex_q=arr(flex_q, (0,), i64),
        flex_col=arr(flex_col, (0,), i64),
        flex_mass=arr([b.invariants.mass for _, b in beams], (0,)),
        flex_first=arr([b.invariants.first_moment for _, b in beams], (0, 3)),
        flex_th0=arr([b.invariants.th0 for _, b in beams], (0, 3, 3)),
        flex_ptr=np.array(ptr, dtype=i64),
        flex_sbar=_flat([b.invariants.sbar for _, b in beams]),
        flex_ninv=_flat([b.invariants.n for _, b in beams]),
        flex_ss=_flat([b.invariants.ss for _, b in beams]),
        flex_k=_flat([b.invariants.stiffness for _, b in beams]),
        flex_d=_flat([damping(b) for _, b in beams]),
        **geometric_tables([b for _, b in beams]),
        marker_body=arr([b for b, _ in mk_list], (0,), i64),
        marker_position=arr([mt.position for _, mt in mk_list], (0, 3)),
        marker_rotation=arr([mt.orientation for _, mt in mk_list], (0, 3, 3)),
        marker_term_ptr=mterm_ptr,
        marker_term_col=arr([c for t in mterm_lists for c, _ in t], (0,), i64),
        marker_term_coef=arr([k for t in mterm_lists for _, k in t], (0,)),
        spring_marker=arr(spring_marker, (0, 2), i64),
        spring_k=arr([s.stiffness for s in springs], (0,)),
        spring_c=arr([s.damping for s in springs], (0,)),
        spring_l0=arr([np.nan if s.rest_length is None else s.rest_length
                       for s in springs], (0,)),
        force_type=arr([0 if f.type == "force" else 1 for f in forces], (0,), i64),
        force_marker=arr(force_marker, (0,), i64),
        force_vector=arr([f.vector for f in forces], (0, 3)),
        force_frame=arr([0 if f.frame == "global" else 1 for f in forces], (0,), i64),
        force_function=arr(force_fidx, (0,), i64),
        **con_arrays,
        **stab.arrays,
    )
    cm = CompiledModel(described, topo, arrays, names, jnames, [s.name for s in sensors],
                       stab.sizes, np.array(q0, dtype=f64), np.array(u0, dtype=f64),
                       beams, movable)
    cm.constraint_texts = con_texts
    if len(springs):
        _initial_spring_lengths(cm, list(model.springs))
    for name, why in zip(topo.cut_joint_names, topo.cut_reasons):
        if why == "chosen":
            joint = model.joints[name]
            cm.warnings.append(f'joint "{name}" closes a loop and is cut: its '
                               f"{6 - joint.ndof} constraint equations hold the loop "
                               "closed (mark it cut = true, or another joint of the loop, "
                               "to choose yourself)")
    if any(_starts_static(b) for _, b in beams):
        static_elastic_state(cm)
    if any(_starts_quasi_static(b) for _, b in beams) and not cm.has_constraints:
        quasi_static_elastic_state(cm)
    return cm


STATIC_TOLERANCE = 1e-12  # of the largest elastic force: the static state's residual
STATIC_FLOOR = 1e-9  # ... or this, once Newton stops gaining (round-off of the forces)
STATIC_ITERATIONS = 30
STATIC_STEP = 1e-7  # m or rad: the difference step of the tangent stiffness
STATIC_GROWTH = 1e3  # a Newton step may raise the residual this much (the axial rows of
                     # a stiff beam overshoot on the first step), else it is halved


def _starts_static(beam):
    return isinstance(beam.initial, str) and beam.initial == "static"


def _starts_quasi_static(beam):
    return isinstance(beam.initial, str) and beam.initial == "quasi-static"


def quasi_static_elastic_state(cm, accelerations=None):
    """cm.q0, cm.u0 at the elastic coordinates and rates of the beams with initial =
    "quasi-static" (flexmbs.model.quasi_static), of a tree. accelerations(cm, q, u,
    t): the model's u' (default M*^-1 Q*). Returns the largest elastic acceleration
    of the given start."""
    from ..dynamics import api
    from .quasi_static import quasi_static_state
    accelerations = accelerations or api.accelerations
    chosen = [(k, b) for k, (_, b) in enumerate(cm.beams) if _starts_quasi_static(b)]
    rows = np.concatenate([np.arange(cm.arrays.flex_q[k], cm.arrays.flex_q[k] + b.nf)
                           for k, b in chosen])
    names = ", ".join(f'"{b.name}"' for _, b in chosen)
    q, u, scale = quasi_static_state(lambda q, u, t: accelerations(cm, q, u, t),
                                     cm.q0, cm.u0, 0.0, rows, names)
    cm.q0[:] = q
    cm.u0[:] = u
    return scale


def _explicit_elastic_rates(beam):
    """uf0 of a beam: its given `initial_rates`, else zeros."""
    if beam.initial_rates is None:
        return np.zeros(beam.nf)
    if len(beam.initial_rates) != beam.nf:
        first = ", ".join(beam.coordinate_names()[:3])
        raise ModelError(f"expected {beam.nf} elastic rates ({first}, ...), got "
                         f"{len(beam.initial_rates)}", f'body "{beam.name}"',
                         "initial_rates")
    return beam.initial_rates


def _explicit_elastic_state(beam):
    """qf0 of a beam: its given elastic coordinates, else zeros ("undeformed", and the
    start of "static")."""
    if isinstance(beam.initial, str):
        return np.zeros(beam.nf)
    if len(beam.initial) != beam.nf:
        first = ", ".join(beam.coordinate_names()[:3])
        raise ModelError(f"expected {beam.nf} elastic coordinates ({first}, ...), got "
                         f"{len(beam.initial)}", f'body "{beam.name}"', "initial")
    return beam.initial


def static_elastic_state(cm):
    """cm.q0 at the elastic coordinates of the beams with initial = "static": the
    static equilibrium Q_f(q0, u = 0) = 0 of the elastic rows of Q* (elastic,
    geometric, gravity and constant loads) at the initial joint state, joints held
    (docs/explanation/formulation.md section 3, "Practical"). Newton's method on the tangent
    stiffness
    -dQ_f/dqf by central differences (it holds the geometric stiffness, and the
    dependence of the loads on qf when a beam carries other bodies), with step halving
    when the residual becomes non-finite or grows by more than STATIC_GROWTH."""
    from ..dynamics import api
    rows = np.concatenate([np.arange(cm.arrays.flex_q[k], cm.arrays.flex_q[k] + b.nf)
                           for k, (_, b) in enumerate(cm.beams) if _starts_static(b)])
    zero = np.zeros(cm.nq)

    def residual(q):
        return api.generalized_forces(cm, q, zero)[rows]

    def elastic_force_scale(q):
        """max |K qf| over the static beams: the size of the forces in balance."""
        return max(np.abs(b.invariants.stiffness @ q[cm.arrays.flex_q[k]:
                                                    cm.arrays.flex_q[k] + b.nf]).max()
                   for k, (_, b) in enumerate(cm.beams) if _starts_static(b))

    r = residual(cm.q0)
    scale = max(np.abs(r).max(), 1e-300)
    for _ in range(STATIC_ITERATIONS):
        if np.abs(r).max() <= STATIC_TOLERANCE * scale:
            return
        tangent = np.zeros((len(rows), len(rows)))
        for j, row in enumerate(rows):
            d = np.zeros(cm.nq)
            d[row] = STATIC_STEP
            tangent[:, j] = -(residual(cm.q0 + d) - residual(cm.q0 - d)) / (2 * STATIC_STEP)
        step = np.linalg.solve(tangent, r)
        norm = np.abs(r).max()
        for _ in range(30):
            trial = cm.q0.copy()
            trial[rows] += step
            r_trial = residual(trial)
            if np.abs(r_trial).max() < STATIC_GROWTH * norm:  # False for nan
                break
            step *= 0.5
        cm.q0[:] = trial
        stalled = np.abs(r_trial).max() > 0.5 * norm
        r = r_trial
        scale = max(scale, elastic_force_scale(cm.q0))
        if stalled and np.abs(r).max() <= STATIC_FLOOR * scale:
            return
    if np.abs(r).max() <= STATIC_TOLERANCE * scale:
        return
    names = ", ".join(f'"{b.name}"' for _, b in cm.beams if _starts_static(b))
    raise ModelError(f"the static elastic state of {names} did not converge in "
                     f"{STATIC_ITERATIONS} Newton iterations (residual "
                     f"{np.abs(r).max():.3g} N): the beams may buckle under their loads "
                     f'at the initial joint state (use initial = "undeformed")',
                     f"body {names}", "initial")
