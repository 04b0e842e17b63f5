"""CompiledModel: the model as flat, immutable numpy arrays for the kernels; Workspace:
the preallocated scratch memory of one evaluation (Pinocchio's Model/Data split).

Sizes: N moving bodies (root to leaves), nc joint coordinates (all of them, prescribed
ones included, joint by joint in body order), nq = nu free coordinates (q), nf forces,
na actuators, ns sensors, ntf time functions. The state vector is
y = [q (nq), u (nq), w (1 + na)]: w[0] is the work of all the non-conservative forces
(FORMULATION.md section 7), w[1 + a] the work of actuator a alone.
"""

from typing import NamedTuple

import numpy as np

from ..errors import ModelError
from .description import GROUND, BeamBody
from .timefunctions import compile_time_functions
from .topology import build_topology

__all__ = ["ModelArrays", "Workspace", "CompiledModel", "compile_model",
           "SENSOR_CODES", "SENSOR_SIZES"]

SENSOR_CODES = {"joint_coordinate": 0, "joint_rate": 1, "marker_position": 2,
                "marker_orientation": 3, "marker_velocity": 4,
                "marker_angular_velocity": 5, "actuator_torque": 6, "actuator_work": 7,
                "beam_strain": 8}
SENSOR_SIZES = {0: 1, 1: 1, 2: 3, 3: 9, 4: 3, 5: 3, 6: 1, 7: 1, 8: 1}
ACTUATOR_CODES = {"pd": 0, "torque": 1}


class ModelArrays(NamedTuple):
    """The arrays the kernels read (never written after compilation).

    gravity (3,) global, m/s^2
    body_parent (N,) parent index, -1 = ground
    body_mass (N,) kg; body_first_moment (N, 3) = m c (kg m, body axes);
    body_inertia_origin (N, 3, 3) about the frame origin (kg m^2, body axes)
    joint_parent_position / joint_child_position (N, 3): marker origins in their bodies
    joint_parent_rotation / joint_child_rotation (N, 3, 3): marker axes in their bodies
    joint_coord_start (N+1,): joint k owns coordinates [start[k], start[k+1])
    joint_ntrans (N,): the first ntrans of them are translations
    coord_axis (nc, 3): axis in the parent marker frame
    coord_qindex (nc,): index in q, -1 if prescribed
    coord_function (nc,): time-function index of a prescribed coordinate, else -1
    coord_stiffness, coord_damping, coord_rest (nc,)
    ancestor_ptr (N+1,), ancestor_coord: coordinates of the joints on the path from the
        ground to body k are ancestor_coord[ancestor_ptr[k]:ancestor_ptr[k+1]] (sorted);
        the only non-zero columns of body k's rows of B (body path matrix)
    tf_kind, tf_ptr, tf_data: time functions
    act_coord (na,) coordinate index; act_type (na,) 0 pd, 1 torque; act_kp, act_kd;
        act_function (na,) time function of the setpoint or of the motor torque;
        act_gear (na,) n; act_max (na,) motor torque limit (N m, inf: none);
        act_inertia (na,) n^2 J_r; act_damping (na,) n^2 b_m (reflected to the joint)
    body_flex (N,) index of the body in the flexible tables, -1 for a rigid body
    flex_nf, flex_q (F,): number of elastic coordinates, index of the first in q;
        flex_mass (F,), flex_first (F, 3), flex_th0 (F, 3, 3): invariants m, int rho u0,
        Th0; flex_sbar, flex_ninv, flex_ss, flex_k, flex_d: Sbar (3, nf), N (3, 3, nf),
        SS (3, 3, nf, nf), K_ff and the damping D = alpha K + beta M_ff (nf, nf), each
        flattened, body k's at flex_ptr[k, j] : flex_ptr[k + 1, j] (j = 0..3 for
        3 nf, 9 nf, 9 nf^2, nf^2 values)
    sensor_node_q (ns, 3): q indices of the translations of a beam-body marker's node
        (-1: fixed, or not on a beam)
    strain_ptr (nstrain + 1,), strain_q, strain_coef: beam_strain sensor k (its
        sensor_coord) reads eps = sum coef q[strain_q] over strain_ptr[k]:strain_ptr[k+1]
    force_type (nf,) 0 force, 1 torque; force_body (nf,); force_position (nf, 3) and
        force_rotation (nf, 3, 3) of the marker; force_vector (nf, 3);
        force_frame (nf,) 0 global, 1 marker; force_function (nf,)
    sensor_type, sensor_coord, sensor_body (-1 ground), sensor_position,
        sensor_rotation, sensor_frame (-1 ground), sensor_offset (ns+1,) output columns
    """
    gravity: np.ndarray
    body_parent: np.ndarray
    body_mass: np.ndarray
    body_first_moment: np.ndarray
    body_inertia_origin: np.ndarray
    joint_parent_position: np.ndarray
    joint_parent_rotation: np.ndarray
    joint_child_position: np.ndarray
    joint_child_rotation: np.ndarray
    joint_coord_start: np.ndarray
    joint_ntrans: np.ndarray
    coord_axis: np.ndarray
    coord_qindex: np.ndarray
    coord_function: np.ndarray
    coord_stiffness: np.ndarray
    coord_damping: np.ndarray
    coord_rest: np.ndarray
    ancestor_ptr: np.ndarray
    ancestor_coord: np.ndarray
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
    flex_mass: np.ndarray
    flex_first: np.ndarray
    flex_th0: np.ndarray
    flex_ptr: np.ndarray
    flex_sbar: np.ndarray
    flex_ninv: np.ndarray
    flex_ss: np.ndarray
    flex_k: np.ndarray
    flex_d: np.ndarray
    sensor_node_q: np.ndarray
    strain_ptr: np.ndarray
    strain_q: np.ndarray
    strain_coef: np.ndarray
    force_type: np.ndarray
    force_body: np.ndarray
    force_position: np.ndarray
    force_rotation: np.ndarray
    force_vector: np.ndarray
    force_frame: np.ndarray
    force_function: np.ndarray
    sensor_type: np.ndarray
    sensor_coord: np.ndarray
    sensor_body: np.ndarray
    sensor_position: np.ndarray
    sensor_rotation: np.ndarray
    sensor_frame: np.ndarray
    sensor_offset: np.ndarray


class Workspace(NamedTuple):
    """Scratch arrays of one evaluation (written by the kernels).

    Per body (global axes unless said): r, rd, ar (N, 3) position, velocity and bias
    acceleration of the frame origin; rot (N, 3, 3) A (body to global); omega, aw (N, 3)
    angular velocity and bias angular acceleration; jr, jw (N, 3, nc) the partial
    velocities d(rd)/d(xd_c), d(omega)/d(xd_c).
    Per coordinate: x, xd, xdd (nc) values, rates, and accelerations (prescribed ones;
    zero for free coordinates in the bias pass); tau (nc) generalized force needed at a
    prescribed coordinate. mass (nq, nq) M*, force (nq,) Q*, accel (nq,) du/dt.
    body_force (N, 6): [Qv + Qe - M a] of each body in [global force; body-axes moment].
    bcol, mbcol (6, nc): one body's columns of B and of M_i B (assembly scratch).
    djr, djw (N, 3, nc): time derivatives of jr, jw (only filled on request: dB/dt).
    act_tau (na,): generalized force of each actuator on its coordinate.
    q, u (nq,): copies of the coordinates and speeds of the evaluation.
    flex_force (nq,): at the elastic coordinates of flexible bodies, the elastic part of
    [Qv + Qe - M a_bias] (the rigid part is in body_force).
    flex_mass_flat ((6 + nfmax)^2,), flex_vec, flex_vec2 (6 + nfmax,), flex_work
    (3, 3, nfmax + 2): a flexible body's mass matrix and scratch.
    Small temporaries: tf3 (3,), m33 (4, 3, 3), v3 (8, 3).
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
    tf3: np.ndarray
    m33: np.ndarray
    v3: np.ndarray


class CompiledModel:
    """A model compiled for the kernels: `arrays` (ModelArrays) plus the names and
    initial state the Python side needs."""

    def __init__(self, model, topology, arrays, coordinate_names, joint_coordinate_names,
                 sensor_names, sensor_sizes, q0, u0):
        self.model = model
        self.topology = topology
        self.arrays = arrays
        self.coordinate_names = coordinate_names
        self.joint_coordinate_names = joint_coordinate_names
        self.sensor_names = sensor_names
        self.sensor_sizes = sensor_sizes
        self.q0 = q0
        self.u0 = u0

    @property
    def nbodies(self):
        return len(self.arrays.body_mass)

    @property
    def ncoords(self):
        return len(self.arrays.coord_qindex)

    @property
    def nq(self):
        return len(self.q0)

    @property
    def nactuators(self):
        return len(self.arrays.act_coord)

    @property
    def nstate(self):
        """Length of y = [q, u, w] (w: W_nc and the work of each actuator)."""
        return 2 * self.nq + 1 + self.nactuators

    @property
    def nsensor_values(self):
        return int(self.arrays.sensor_offset[-1])

    def initial_state(self):
        return np.concatenate([self.q0, self.u0, np.zeros(1 + self.nactuators)])

    def new_workspace(self):
        n, nc, nq = self.nbodies, self.ncoords, self.nq
        nfm = int(self.arrays.flex_nf.max()) if len(self.arrays.flex_nf) else 0
        z = np.zeros
        return Workspace(
            r=z((n, 3)), rot=z((n, 3, 3)), rd=z((n, 3)), omega=z((n, 3)), ar=z((n, 3)),
            aw=z((n, 3)), jr=z((n, 3, nc)), jw=z((n, 3, nc)), x=z(nc), xd=z(nc), xdd=z(nc),
            tau=z(nc), mass=z((nq, nq)), force=z(nq), accel=z(nq), body_force=z((n, 6)),
            bcol=z((6, nc)), mbcol=z((6, nc)), djr=z((n, 3, nc)), djw=z((n, 3, nc)),
            act_tau=z(self.nactuators), q=z(nq), u=z(nq), flex_force=z(nq),
            flex_mass_flat=z((6 + nfm) ** 2), flex_vec=z(6 + nfm), flex_vec2=z(6 + nfm),
            flex_work=z((3, 3, nfm + 2)), tf3=z(3), m33=z((4, 3, 3)), v3=z((8, 3)))


def _strain_row(beam, sensor, q_first):
    """(q index, coefficient) pairs of a beam_strain sensor: eps = row . q_e of
    `axial_strain_row`, turned to the body-frame nodal coordinates of the element's
    nodes (T) and kept at the free ones."""
    from ..elements.beam import (axial_strain_row, element_frame, element_length,
                                 element_transformation)
    a, b = beam.connectivity[sensor.element]
    frame = element_frame(beam.nodes[a], beam.nodes[b], beam.reference)
    row = axial_strain_row(0.0 if sensor.at == "start" else 1.0, sensor.point[0],
                           sensor.point[1], element_length(beam.nodes[a], beam.nodes[b]))
    row = row @ element_transformation(frame)
    where = {int(k): j for j, k in enumerate(beam.free)}
    pairs = []
    for local, node in enumerate((a, b)):
        for d in range(6):
            j = where.get(6 * int(node) + d)
            if j is not None and row[6 * local + d] != 0.0:
                pairs.append((q_first + j, row[6 * local + d]))
    return pairs


def _flat(arrays):
    """The arrays raveled one after the other (float64)."""
    if not arrays:
        return np.zeros(0)
    return np.ascontiguousarray(np.concatenate([np.ravel(a) for a in arrays]), dtype=float)


def _check_beam_use(model):
    """What this version supports on beam bodies: a beam is a leaf of the tree, joined
    at its floating frame or at a node whose six coordinates are all fixed; loads and
    orientation sensors on its nodes come later."""
    beams = {name for name, b in model.bodies.items() if isinstance(b, BeamBody)}
    for j in model.joints.values():
        item = f'joint "{j.name}"'
        if j.parent in beams:
            raise ModelError(f'body "{j.parent}" is a beam: in this version a beam body '
                             f"ends a branch (it cannot carry another joint)", item, "parent")
        if j.child in beams and j.child_marker != "origin":
            b = model.bodies[j.child]
            mk = b.markers[j.child_marker]
            if np.any(b.node_columns(mk.node) >= 0):
                raise ModelError(f'marker "{mk.name}" is on node {mk.node} of beam '
                                 f'"{b.name}", which is not clamped: in this version a '
                                 f"beam is joined at a node whose six coordinates are fixed",
                                 item, "child_marker")
    for f in model.forces.values():
        if f.body in beams:
            raise ModelError(f'body "{f.body}" is a beam: loads on beams come in a later '
                             f"version", f'force "{f.name}"', "body")
    for s in model.sensors.values():
        if s.body in beams and s.type in ("marker_orientation", "marker_angular_velocity"):
            raise ModelError(f'body "{s.body}" is a beam: its markers give position and '
                             f"velocity sensors in this version", f'sensor "{s.name}"', "type")


def compile_model(model):
    """Validate the topology and pack the model into a CompiledModel."""
    topo = build_topology(model)
    index = {b: k for k, b in enumerate(topo.body_names)}
    n = len(topo.body_names)
    joints = [model.joints[j] for j in topo.joint_names]
    bodies = [model.bodies[b] for b in topo.body_names]

    def marker(body, name):
        return model.marker(body, name)

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
    actuators = list(model.actuators.values())
    act_index = {a.name: k for k, a in enumerate(actuators)}
    act_fidx = []
    for a in actuators:
        act_fidx.append(len(functions))
        functions.append(a.setpoint if a.type == "pd" else a.torque)
    _check_beam_use(model)
    beams = [(i, b) for i, b in enumerate(bodies) if isinstance(b, BeamBody)]
    body_flex = -np.ones(n, dtype=np.int64)
    flex_q, ptr = [], [np.zeros(4, dtype=np.int64)]
    for k, (i, b) in enumerate(beams):
        body_flex[i] = k
        flex_q.append(len(names))
        names += b.coordinate_names()
        q0 += [0.0] * b.nf
        u0 += [0.0] * b.nf
        ptr.append(ptr[-1] + np.array([3 * b.nf, 9 * b.nf, 9 * b.nf ** 2, b.nf ** 2]))
    node_q = {}
    for k, (i, b) in enumerate(beams):
        for name, mk in b.markers.items():
            if mk.node is not None:
                cols = b.node_columns(mk.node)[:3]
                node_q[(b.name, name)] = np.where(cols >= 0, cols + flex_q[k], -1)

    def damping(b):
        inv = b.invariants
        return b.alpha * inv.stiffness + b.beta * inv.mass_matrix()

    force_fidx = []
    for f in model.forces.values():
        force_fidx.append(len(functions))
        functions.append(f.function)
    tf_kind, tf_ptr, tf_data = compile_time_functions(functions)

    anc_ptr = np.zeros(n + 1, dtype=np.int64)
    anc = []
    for i in range(n):
        cols = []
        for j in range(n):
            if topo.body_path[i, j]:
                cols += list(range(coord_start[j], coord_start[j + 1]))
        anc += sorted(cols)
        anc_ptr[i + 1] = len(anc)

    forces = list(model.forces.values())
    fm = [marker(f.body, f.marker) for f in forces]
    sensors = list(model.sensors.values())
    strain_ptr, strain_q, strain_coef = [0], [], []
    s_type, s_coord, s_body, s_pos, s_rot, s_frame, s_off = [], [], [], [], [], [], [0]
    for s in sensors:
        code = SENSOR_CODES[s.type]
        s_type.append(code)
        if code == 8:
            s_coord.append(len(strain_ptr) - 1)
            k = [b.name for _, b in beams].index(s.body)
            for qi, coef in _strain_row(beams[k][1], s, flex_q[k]):
                strain_q.append(qi)
                strain_coef.append(coef)
            strain_ptr.append(len(strain_q))
            s_body.append(index[s.body])
            s_pos.append(np.zeros(3))
            s_rot.append(np.eye(3))
            s_frame.append(-1)
        elif code >= 6:
            s_coord.append(act_index[s.actuator])
            s_body.append(-1)
            s_pos.append(np.zeros(3))
            s_rot.append(np.eye(3))
            s_frame.append(-1)
        elif code <= 1:
            s_coord.append(coord_of[(s.joint, s.coordinate)])
            s_body.append(-1)
            s_pos.append(np.zeros(3))
            s_rot.append(np.eye(3))
            s_frame.append(-1)
        else:
            mk = marker(s.body, s.marker)
            s_coord.append(-1)
            s_body.append(-1 if s.body == GROUND else index[s.body])
            s_pos.append(mk.position)
            s_rot.append(mk.orientation)
            s_frame.append(-1 if s.frame == GROUND else index[s.frame])
        s_off.append(s_off[-1] + SENSOR_SIZES[code])
    s_node_q = [node_q.get((s.body, s.marker), -np.ones(3, dtype=np.int64))
                if s.body is not None else -np.ones(3, dtype=np.int64) for s in sensors]

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
        joint_parent_position=arr([marker(j.parent, j.parent_marker).position for j in joints],
                                  (0, 3)),
        joint_parent_rotation=arr([marker(j.parent, j.parent_marker).orientation
                                   for j in joints], (0, 3, 3)),
        joint_child_position=arr([marker(j.child, j.child_marker).position for j in joints],
                                 (0, 3)),
        joint_child_rotation=arr([marker(j.child, j.child_marker).orientation
                                  for j in joints], (0, 3, 3)),
        joint_coord_start=coord_start,
        joint_ntrans=arr([len(j.translation_axes) for j in joints], (0,), i64),
        coord_axis=arr(axes, (0, 3)),
        coord_qindex=arr(qindex, (0,), i64),
        coord_function=arr(fidx, (0,), i64),
        coord_stiffness=arr(stiff, (0,)),
        coord_damping=arr(damp, (0,)),
        coord_rest=arr(rest, (0,)),
        ancestor_ptr=anc_ptr,
        ancestor_coord=arr(anc, (0,), i64),
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
        flex_mass=arr([b.invariants.mass for _, b in beams], (0,)),
        flex_first=arr([b.invariants.first_moment for _, b in beams], (0, 3)),
        flex_th0=arr([b.invariants.th0 for _, b in beams], (0, 3, 3)),
        flex_ptr=np.array(ptr, dtype=i64),
        flex_sbar=_flat([b.invariants.sbar for _, b in beams]),
        flex_ninv=_flat([b.invariants.n for _, b in beams]),
        flex_ss=_flat([b.invariants.ss for _, b in beams]),
        flex_k=_flat([b.invariants.stiffness for _, b in beams]),
        flex_d=_flat([damping(b) for _, b in beams]),
        sensor_node_q=arr(s_node_q, (0, 3), i64),
        strain_ptr=np.array(strain_ptr, dtype=i64),
        strain_q=arr(strain_q, (0,), i64),
        strain_coef=arr(strain_coef, (0,)),
        force_type=arr([0 if f.type == "force" else 1 for f in forces], (0,), i64),
        force_body=arr([index[f.body] for f in forces], (0,), i64),
        force_position=arr([m.position for m in fm], (0, 3)),
        force_rotation=arr([m.orientation for m in fm], (0, 3, 3)),
        force_vector=arr([f.vector for f in forces], (0, 3)),
        force_frame=arr([0 if f.frame == "global" else 1 for f in forces], (0,), i64),
        force_function=arr(force_fidx, (0,), i64),
        sensor_type=arr(s_type, (0,), i64),
        sensor_coord=arr(s_coord, (0,), i64),
        sensor_body=arr(s_body, (0,), i64),
        sensor_position=arr(s_pos, (0, 3)),
        sensor_rotation=arr(s_rot, (0, 3, 3)),
        sensor_frame=arr(s_frame, (0,), i64),
        sensor_offset=arr(s_off, (-1,), i64),
    )
    cm = CompiledModel(model, topo, arrays, names, jnames, [s.name for s in sensors],
                       [SENSOR_SIZES[SENSOR_CODES[s.type]] for s in sensors],
                       np.array(q0, dtype=f64), np.array(u0, dtype=f64))
    for k, (i, b) in enumerate(beams):
        if b.initial == "static":
            _static_elastic_state(cm, k, b)
    return cm


STATIC_ITERATIONS = 3  # Newton steps on K (the elastic forces at rest are affine in qf)


def _static_elastic_state(cm, k, beam):
    """cm.q0 at beam k's elastic coordinates: K_ff qf = Q_f(q0, u = 0), the static
    equilibrium with gravity at the initial joint state, joints held (FORMULATION.md
    section 3, "Practical"). Q_f is the elastic rows of Q* without -K qf, from the
    kernels; at rest it does not depend on qf for a beam at the end of a branch."""
    from ..dynamics import api
    q0 = cm.arrays.flex_q[k]
    rows = slice(q0, q0 + beam.nf)
    kff = beam.invariants.stiffness
    for _ in range(STATIC_ITERATIONS):
        residual = api.generalized_forces(cm, cm.q0, np.zeros(cm.nq))[rows]
        cm.q0[rows] += np.linalg.solve(kff, residual)
