"""compile_model: a Model (the description) into a CompiledModel, the flat arrays the
kernels read (flexmbs.model.arrays.ModelArrays) with the names, the initial state
(flexmbs.model.initial_state) and the Workspace factory the Python side needs
(Pinocchio's Model/Data split).

Sizes and the state vector's layout: flexmbs.model.arrays.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, cast

import numpy as np
from numpy.typing import ArrayLike, DTypeLike, NDArray

from ..errors import ModelError
from ..tuple_ref import HeldTuple, held_ref
from .arrays import ACTUATOR_CODES, ModelArrays, Workspace
from .band_layout import bordered_band_layout
from .constraint_tables import constraint_tables
from .description import GROUND, BeamBody, FeBody, Joint, Marker, RigidBody
from .drive_tables import motor_tables, stop_tables
from .geometric_tables import geometric_tables
from .initial_state import (
    initial_spring_lengths,
    quasi_static_elastic_state,
    starts_quasi_static,
    starts_static,
    static_elastic_state,
)
from .invariant_tables import invariant_tables
from .mode_start import mode_elastic_state
from .motions import ROTATE, TRANSLATE, MarkerTerms, Motion, joint_motions, marker_terms
from .ports import Port, input_ports
from .rig_tables import rig_tables
from .sensor_tables import SENSOR_CODES, SENSOR_SIZES, sensor_tables
from .timefunctions import compile_time_functions
from .topology import build_topology
from .user_laws import user_law_entries, with_user_laws

if TYPE_CHECKING:
    from .description import Model
    from .timefunctions import TimeFunction
    from .topology import Topology

__all__ = [
    "ModelArrays",
    "Workspace",
    "CompiledModel",
    "compile_model",
    "SENSOR_CODES",
    "SENSOR_SIZES",
]


class CompiledModel:
    """A model compiled for the kernels: `arrays` (ModelArrays) plus the names and
    initial state the Python side needs.

    `arrays` and each `new_workspace()` are HeldTuples (flexmbs.tuple_ref): in Python
    they read as the namedtuples they hold; a kernel receives each as one pointer,
    typed TupleRef. Every kernel is thus compiled once, for references, whoever calls
    it: a kernel whose arguments were the tuples themselves would convert their ~150
    arrays at each call from Python, and numba would build that conversion into
    its Python entry when compiling it (about 5 s a kernel)."""

    def __init__(
        self,
        model: Model,
        topology: Topology,
        arrays: ModelArrays | HeldTuple,
        coordinate_names: list[str],
        joint_coordinate_names: list[str],
        sensor_names: list[str],
        sensor_sizes: list[int],
        q0: NDArray[np.float64],
        u0: NDArray[np.float64],
        beams: Iterable[tuple[int, BeamBody | FeBody]] = (),
        absolute_joints: Mapping[str, str] | None = None,
    ) -> None:
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
        self.constraint_texts: list[str] = []  # what each constraint row of the cut joints holds
        self.ports: dict[str, Port] = {}  # the input ports (flexmbs.model.ports)
        # the currents of the DC motors with an inductance in a new workspace (A): zero,
        # or the operating point of a linearization (flexmbs.analysis.linearize)
        self.operating_currents = np.zeros(len(self.arrays.act_coord))
        self._scratch: dict[int, HeldTuple | Workspace] = {}  # by thread

    @property
    def nbodies(self) -> int:
        return len(self.arrays.body_mass)

    @property
    def ncoords(self) -> int:
        return len(self.arrays.coord_qindex)

    @property
    def ncolumns(self) -> int:
        return len(self.arrays.col_qindex)

    @property
    def nq(self) -> int:
        return len(self.q0)

    @property
    def nactuators(self) -> int:
        return len(self.arrays.act_coord)

    @property
    def ncontacts(self) -> int:
        return len(self.arrays.contact_radius)

    @property
    def has_constraints(self) -> bool:
        """The model has cut joints or rolling contacts: a DAE (docs/explanation/formulation.md
        section 5)."""
        return len(self.arrays.con_kind) > 0

    @property
    def nconstraints(self) -> int:
        """Number of active constraint equations (multipliers lambda, and mu)."""
        return int(np.sum(self.arrays.con_active >= 0))

    @property
    def nworks(self) -> int:
        """Length of w: W_nc, the work of each actuator, the DC motors' electrical
        states (flexmbs.model.arrays)."""
        return 1 + self.nactuators + len(self.arrays.elec_actuator)

    @property
    def nstate(self) -> int:
        """Length of y = [q, u, w, lambda, mu] (w: nworks; lambda, mu: the
        multipliers of the active constraints, docs/explanation/formulation.md
        section 5)."""
        return 2 * self.nq + self.nworks + 2 * self.nconstraints

    @property
    def nsensor_values(self) -> int:
        return int(self.arrays.sensor_offset[-1])

    def initial_state(self) -> NDArray[np.float64]:
        return np.concatenate([self.q0, self.u0, np.zeros(self.nworks + 2 * self.nconstraints)])

    def scratch_workspace(self) -> HeldTuple | Workspace:
        """One workspace per thread kept with the model for the calls from Python that
        copy what they return out of it (flexmbs.dynamics.api.constraint_values):
        making one costs about 2 ms, and a closed loop asks for the constraint values
        at every check of its active rows. The kernels release the GIL, so each thread
        has its own."""
        thread = threading.get_ident()
        if thread not in self._scratch:
            self._scratch[thread] = self.new_workspace()
        return self._scratch[thread]

    def __getstate__(self) -> dict[str, object]:
        """A copy or a pickle leaves the scratch workspaces behind (made again on use)."""
        state = dict(self.__dict__)
        state["_scratch"] = {}
        return state

    def new_workspace(self) -> HeldTuple | Workspace:
        """The work arrays of the kernels for this model (Workspace), held by reference
        (HeldTuple), zeroed."""
        n, nc, ncol, nq = self.nbodies, self.ncoords, self.ncolumns, self.nq
        ncr = len(self.arrays.con_kind)
        nfm = int(self.arrays.flex_nf.max()) if len(self.arrays.flex_nf) else 0
        nflex = len(self.arrays.flex_nf)
        fcm = int(np.diff(self.arrays.frame_ptr).max()) if n else 0
        ncm = int(np.diff(self.arrays.geo_col_ptr).max()) if len(self.arrays.geo_ea) else 0
        nt = len(self.arrays.motion_term_col)
        z = np.zeros
        return held_ref(
            Workspace(
                r=z((n, 3)),
                rot=z((n, 3, 3)),
                rd=z((n, 3)),
                omega=z((n, 3)),
                ar=z((n, 3)),
                aw=z((n, 3)),
                jr=z((n, 3, ncol)),
                jw=z((n, 3, ncol)),
                x=z(ncol),
                xd=z(ncol),
                xdd=z(ncol),
                tau=z(nc),
                mass=z((nq, nq)),
                force=z(nq),
                accel=z(nq),
                body_force=z((n, 6)),
                bcol=z((6, ncol)),
                mbcol=z((6, ncol)),
                flex_mb=z((fcm, 6 + nfm)),
                djr=z((n, 3, ncol)),
                djw=z((n, 3, ncol)),
                act_tau=z(self.nactuators),
                q=z(nq),
                u=z(nq),
                flex_force=z(nq),
                flex_mass_flat=z((6 + nfm) ** 2),
                flex_vec=z(6 + nfm),
                flex_vec2=z(6 + nfm),
                flex_acc=z(6 + nfm),
                flex_moments=z((nq + 3 * nflex, 3, 3)),
                geo_scratch=z((16, 12)),
                geo_kr=z((12, ncm)),
                con_phi=z(ncr),
                con_phid=z(ncr),
                con_jac=z((ncr, nq)),
                con_jacx=z((ncr, nc)),
                con_jv=z((2, 3, ncol)),
                con_jw=z((2, 3, ncol)),
                con_vec=z((2, 4, 3)),
                con_mat=z((2, 2, 3, 3)),
                contact_vec=z((8, 3)),
                proj_q=z(nq),
                proj_eta=z(ncr),
                proj_c=z((ncr, nq)),
                proj_lam=z(ncr),
                proj_a=z(nq),
                term_jr=z((nt, 3)),
                term_jw=z((nt, 3)),
                body_acc=z((n, 6)),
                body_wrench=z((n, 6)),
                kin_key=z(2),
                ode=z((2, 2 * nq + self.nworks)),
                tf3=z(3),
                segment_time=np.full(1, np.nan),
                act_branch=np.full(self.nactuators, np.nan),
                motor_branch=np.full((self.nactuators, 2), np.nan),
                stop_branch=np.full(len(self.arrays.stop_coord), np.nan),
                motor_current=self.operating_currents.copy(),
                fric_mode=np.full(len(self.arrays.fric_coord), np.nan),
                fric_scale=np.ones(len(self.arrays.fric_coord)),
                fric_force=z(len(self.arrays.fric_coord)),
                fric_hold=z(len(self.arrays.fric_coord)),
                stick_scratch=z((2, 2 * nq + self.nworks)),
                ctrl_held=z(len(self.arrays.ctrl_act)),
                act_command=z(self.nactuators),
                marker_pos=z(3),
                marker_axes=z((3, 3)),
                marker_vel=z(3),
                marker_omega=z(3),
                marker_arm=z(3),
                marker_tangent=z((3, 3)),
                marker_deflection=z(3),
                marker_deflection_rate=z(3),
                marker_angles=z(3),
                marker_angle_rates=z(3),
                marker_relative_omega=z(3),
                marker_body_axes=z((3, 3)),
                marker_rx=z((3, 3)),
                marker_ry=z((3, 3)),
                marker_rz=z((3, 3)),
                marker_product=z((3, 3)),
                load_vector=z(3),
                spring_first_position=z(3),
                spring_first_velocity=z(3),
                spring_direction=z(3),
                spring_force=z(3),
                law_out=z(6),
                omega_body=z(3),
                aw_body=z(3),
                udot_ar=z(3),
                udot_aw=z(3),
                udot_aw_body=z(3),
                parent_offset=z(3),
                mass_unit_vr=z(3),
                mass_unit_vw=z(3),
                mass_turn=z(3),
                composite_io_at=z((3, 3)),
                kin_frame_axes=z((3, 3)),
                kin_frame_omega=z(3),
                kin_rotation=z((3, 3)),
                kin_product=z((3, 3)),
                kin_axis=z(3),
                kin_axis_rate=z(3),
                kin_step=z(3),
                kin_step_velocity=z(3),
                kin_pending=z(3),
                kin_pending_rate=z(3),
                con_g=z(3),
                con_h=z(3),
                con_d=z(3),
                con_gx=z(3),
                contact_rd_e=z(3),
                contact_rp_e=z(3),
                reaction_point=z(3),
                tree_reaction_force=z(3),
                tree_reaction_torque=z(3),
                cut_force=z(3),
                cut_torque=z(3),
                contact_force=z(3),
                contact_point=z(3),
                sensor_frame_axes=z((3, 3)),
                sensor_frame_origin=z(3),
                sensor_value=z(3),
                centerline_point=z(3),
                cut_axis=z(3),
                cut_normal=z(3),
                cut_normal_parent=z(3),
                cut_normal_child=z(3),
            )
        )


def model_warnings(beams: Iterable[tuple[int, BeamBody | FeBody]]) -> list[str]:
    """Texts for the user about choices that compile but may not mean what they say: a
    reduced beam with the consistent geometric stiffness whose basis answers the loads a beam sees
    (flexmbs.elements.basis_check: a uniform load, forces at its marker nodes, a spin)
    with a static deflection further than BASIS_TOLERANCE from the nodal beam's, at a
    deflection of half the small-deformation range. The usual cause is a basis without
    axial freedom: the foreshortening of the bent beam then stiffens its bending
    (docs/explanation/formulation.md sections 6 and 8); modal derivatives restore it."""
    from ..elements.basis_check import (
        BASIS_TOLERANCE,
        RESPONSE_FRACTION,
        basis_static_differences,
    )

    out = []
    for _, body in beams:
        if not isinstance(body, BeamBody) or not body.reduced or body.geometric != "consistent":
            continue
        b = body
        cases = basis_static_differences(b)
        if not cases:
            continue
        worst = max(cases, key=lambda c: c.difference)
        if worst.difference <= BASIS_TOLERANCE:
            continue
        assert b.basis is not None
        kinds = b.basis.kinds
        held = f"{kinds.count('mode')} modes"
        for kind, word in (("correction", "correction modes"), ("derivative", "derivatives")):
            if kind in kinds:
                held += f", {kinds.count(kind)} {word}"
        remedy = (
            "add more modes or correction modes (correction_modes = true)"
            if b.with_modal_derivatives
            else "add the modal derivatives (modal_derivatives = true)"
        )
        out.append(
            f'body "{b.name}": its reduced basis ({held}) answers a {worst.name} with a '
            f"static deflection {worst.difference:.1%} away from the nodal beam's, with "
            f'the geometric stiffness "{b.geometric}" and a deflection of '
            f"{RESPONSE_FRACTION:.0%} of the beam's length (tolerance "
            f'{BASIS_TOLERANCE:.0%}); {remedy}, or set geometric = "none"'
        )
    return out


def _check_beam_markers(model: Model) -> None:
    """Joints and loads on beam bodies act at markers on nodes (add_marker puts every
    named marker on one); the beam's `origin` marker is its floating frame, which
    moves with the body but not with the deformation: a joint there is a joint at the
    frame, which is a material point only where a node sits held by the reference
    conditions."""
    beams = {name for name, b in model.bodies.items() if isinstance(b, (BeamBody, FeBody))}

    def held_at_origin(b: BeamBody | FeBody) -> bool:
        if isinstance(b, FeBody):  # an interface at the origin that the frame holds
            return any(
                not np.any(b.attachment_position(k)) and not np.any(b.node_rows(k))
                for k in range(len(b.attachments))
            )
        return any(
            not np.any(b.nodes[k]) and not np.any(b.node_rows(k)) for k in range(len(b.nodes))
        )

    for j in model.joints.values():
        for side, body, mk in (
            ("parent", j.parent, j.parent_marker),
            ("child", j.child, j.child_marker),
        ):
            if (
                body in beams
                and mk == "origin"
                and not held_at_origin(cast(BeamBody | FeBody, model.bodies[body]))
            ):
                raise ModelError(
                    f'the "origin" marker of beam "{body}" is its floating frame, not a '
                    f"material point: join the beam at a marker on a node (add "
                    f"[bodies.{body}.markers.NAME] with node = K; on a finite-element "
                    f"body with interface = NAME), or clamp the node at the origin",
                    f'joint "{j.name}"',
                    f"{side}_marker",
                )
    loads = [(f, f'force "{f.name}"') for f in model.forces.values()] + [
        (law, f'user law "{law.name}"') for law in model.user_laws.values() if law.kind == "marker"
    ]
    for f, item in loads:
        if (
            f.body in beams
            and f.marker == "origin"
            and not held_at_origin(cast(BeamBody | FeBody, model.bodies[f.body]))
        ):
            raise ModelError(
                f'the "origin" marker of beam "{f.body}" is its floating '
                f"frame, not a material point: apply the load at a marker "
                f"on a node",
                item,
                "marker",
            )


def _columns_of(motions: Iterable[Motion]) -> list[int]:
    return sorted({c for mo in motions if mo.kind in (TRANSLATE, ROTATE) for c, _ in mo.terms})


def _motion_arrays(per_body: Iterable[Iterable[Motion]]) -> dict[str, np.ndarray]:
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
        motion_term_coef=np.array(tcoef, dtype=float),
    )


def _ragged(
    lists: Sequence[Sequence[int]], dtype: DTypeLike = np.int64
) -> tuple[NDArray[np.int64], np.ndarray]:
    ptr = np.zeros(len(lists) + 1, dtype=np.int64)
    ptr[1:] = np.cumsum([len(x) for x in lists])
    flat = np.array([v for x in lists for v in x], dtype=dtype)
    return ptr, flat


def node_inertia_body_name(beam: str, node: int) -> str:
    """Name of the massless rigid body that carries a beam node's rotary inertia."""
    return f"{beam}.node{node}"


def with_node_inertias(model: Model) -> Model:
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
        assert isinstance(body, BeamBody)  # it has node inertias
        beam = copy.copy(body)  # keeps its derived data, which check their inputs
        beam.markers = dict(body.markers)
        out.bodies[name] = beam
        for node, inertia in inertias.items():
            carrier = node_inertia_body_name(name, node)
            item = f'body "{name}"'
            if carrier in out.bodies:
                raise ModelError(
                    f"the rotary inertia at node {node} is carried by a body "
                    f'named "{carrier}", which the model already has: rename '
                    f"that body",
                    item,
                    f"node_inertias.{node}",
                )
            out.bodies[carrier] = RigidBody(carrier, 0.0, np.zeros(3), inertia)
            out.bodies[carrier].markers["origin"] = Marker(
                "origin", carrier, np.zeros(3), np.eye(3)
            )
            beam.markers[carrier] = Marker(
                carrier, name, beam.nodes[node].copy(), np.eye(3), int(node)
            )
            out.joints[carrier] = Joint(
                carrier,
                "fixed",
                name,
                carrier,
                carrier,
                "origin",
                np.zeros((0, 3)),
                np.zeros((0, 3)),
                *((np.zeros(0),) * 5),
            )
    return out


def compile_model(model: Model, absolute_joints: Mapping[str, str] | None = None) -> CompiledModel:
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
    functions: list[TimeFunction] = []
    coord_start = np.zeros(n + 1, dtype=np.int64)
    axes: list[NDArray[np.float64]]
    names: list[str]
    axes, qindex, fidx, stiff, damp, rest = [], [], [], [], [], []
    names, jnames, q0, u0 = [], [], [], []
    coord_of = {}
    for k, j in enumerate(joints):
        coord_start[k + 1] = coord_start[k] + j.ndof
        for c, (axis, cname) in enumerate(
            zip(list(j.translation_axes) + list(j.rotation_axes), j.coordinate_names())
        ):
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
        functions.append(a.command)

    # flexible bodies: elastic coordinates after the joint ones, in body order
    beams = [(i, b) for i, b in enumerate(bodies) if isinstance(b, (BeamBody, FeBody))]
    body_flex = -np.ones(n, dtype=np.int64)
    flex_q, flex_col = [], []
    first_col = {}
    for k, (i, b) in enumerate(beams):
        body_flex[i] = k
        flex_q.append(len(names))
        flex_col.append(nc + len(names) - nfree)
        first_col[b.name] = flex_col[-1]
        names += b.coordinate_names()
        q0 += list(_explicit_elastic_state(b))
        u0 += list(_explicit_elastic_rates(b))
    col_qindex = np.array(qindex + list(range(nfree, len(names))), dtype=np.int64)

    def terms_of(body_name: str, marker_name: str) -> MarkerTerms:
        body = None if body_name == GROUND else model.bodies[body_name]
        return marker_terms(model.marker(body_name, marker_name), body, first_col.get(body_name, 0))

    # the kinematic chains, frame columns and B columns of every body
    frame: list[list[int]]
    per_body, frame, inherited, body_cols = [], [], [], []
    movable = absolute_joints or {}
    for k, j in enumerate(joints):
        motions = joint_motions(
            terms_of(j.parent, j.parent_marker),
            terms_of(j.child, j.child_marker),
            j.translation_axes,
            j.rotation_axes,
            coord_start[k],
            reference_slots=j.name in movable,
        )
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

    # markers of loads and sensors
    mk_list: list[tuple[int, MarkerTerms]]
    marker_index, mk_list = {}, []

    def marker_id(body_name: str, marker_name: str) -> int:
        key = (body_name, marker_name)
        if key not in marker_index:
            marker_index[key] = len(mk_list)
            mk_list.append(
                (-1 if body_name == GROUND else index[body_name], terms_of(body_name, marker_name))
            )
        return marker_index[key]

    forces = list(model.forces.values())
    force_marker = [marker_id(f.body, f.marker) for f in forces]
    springs = list(model.springs.values())
    spring_marker = [
        (marker_id(s.body1, s.marker1), marker_id(s.body2, s.marker2)) for s in springs
    ]
    force_fidx = []
    for f in forces:
        force_fidx.append(len(functions))
        functions.append(f.function)
    rig = rig_tables(model, coord_of, qindex, act_index, functions)
    tf_kind, tf_ptr, tf_data = with_user_laws(
        *compile_time_functions(functions),
        user_law_entries(model, coord_of, qindex, names, marker_id),
    )
    cut_joints = [model.joints[name] for name in topo.cut_joint_names]
    contacts = list(model.contacts.values())
    con_arrays, con_texts = constraint_tables(model, cut_joints, marker_id, contacts)
    sensors = list(model.sensors.values())
    geo_first, count = {}, 0
    for _, b in beams:
        if b.geometric != "none":
            geo_first[b.name] = count
            count += len(cast(BeamBody, b).connectivity)
    stab = sensor_tables(
        model,
        sensors,
        index,
        coord_of,
        act_index,
        marker_id,
        {b.name: flex_q[k] for k, (_, b) in enumerate(beams)},
        geo_first,
        topo.cut_joint_names,
        [c.name for c in contacts],
    )

    mterm_lists = [mt.terms[d] for _, mt in mk_list for d in range(6)]
    mterm_ptr = np.zeros(len(mterm_lists) + 1, dtype=np.int64)
    mterm_ptr[1:] = np.cumsum([len(t) for t in mterm_lists])

    f64, i64 = np.float64, np.int64

    def arr(x: ArrayLike, shape: tuple[int, ...], dtype: DTypeLike = f64) -> np.ndarray:
        a = np.array(x, dtype=dtype)
        return a.reshape(shape) if a.size == 0 else np.ascontiguousarray(a)

    flex_tables = {
        **invariant_tables([b for _, b in beams]),
        **geometric_tables([b for _, b in beams]),
    }
    lin_pos, lin_dims = bordered_band_layout(
        len(names),
        1 + len(actuators),
        np.array(flex_q, dtype=np.int64),
        np.array([b.nf for _, b in beams], dtype=np.int64),
        frame_col,
        col_qindex,
        flex_tables,
    )
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
        frame_ptr=frame_ptr,
        frame_col=frame_col,
        frame_inherited=frame_inh,
        body_col_ptr=body_col_ptr,
        body_col=body_col,
        tf_kind=tf_kind,
        tf_ptr=tf_ptr,
        tf_data=tf_data,
        act_coord=arr([coord_of[(a.joint, a.coordinate)] for a in actuators], (0,), i64),
        act_type=arr([ACTUATOR_CODES[a.type] for a in actuators], (0,), i64),
        act_kp=arr([a.kp for a in actuators], (0,)),
        act_kd=arr([a.kd for a in actuators], (0,)),
        act_function=arr(act_fidx, (0,), i64),
        act_gear=arr([a.gear_ratio for a in actuators], (0,)),
        act_max=arr([a.max_torque for a in actuators], (0,)),
        act_inertia=arr([a.gear_ratio**2 * a.rotor_inertia for a in actuators], (0,)),
        act_damping=arr([a.gear_ratio**2 * a.motor_damping for a in actuators], (0,)),
        **motor_tables(actuators),
        **stop_tables(model.joints.values(), topo.cut_joint_names, coord_of, qindex),
        body_flex=body_flex,
        flex_nf=arr([b.nf for _, b in beams], (0,), i64),
        flex_q=arr(flex_q, (0,), i64),
        flex_col=arr(flex_col, (0,), i64),
        **flex_tables,
        marker_body=arr([b for b, _ in mk_list], (0,), i64),
        marker_position=arr([mt.position for _, mt in mk_list], (0, 3)),
        marker_rotation=arr([mt.orientation for _, mt in mk_list], (0, 3, 3)),
        marker_term_ptr=mterm_ptr,
        marker_term_col=arr([c for t in mterm_lists for c, _ in t], (0,), i64),
        marker_term_coef=arr([k for t in mterm_lists for _, k in t], (0,)),
        spring_marker=arr(spring_marker, (0, 2), i64),
        spring_k=arr([s.stiffness for s in springs], (0,)),
        spring_c=arr([s.damping for s in springs], (0,)),
        spring_l0=arr([np.nan if s.rest_length is None else s.rest_length for s in springs], (0,)),
        force_type=arr([0 if f.type == "force" else 1 for f in forces], (0,), i64),
        force_marker=arr(force_marker, (0,), i64),
        force_vector=arr([f.vector for f in forces], (0, 3)),
        force_frame=arr([0 if f.frame == "global" else 1 for f in forces], (0,), i64),
        force_function=arr(force_fidx, (0,), i64),
        **con_arrays,
        **stab.arrays,
        lin_pos=lin_pos,
        lin_dims=lin_dims,
        **rig,
    )
    cm = CompiledModel(
        described,
        topo,
        arrays,
        names,
        jnames,
        [s.name for s in sensors],
        stab.sizes,
        np.array(q0, dtype=f64),
        np.array(u0, dtype=f64),
        beams,
        movable,
    )
    cm.constraint_texts = con_texts
    cm.ports = input_ports(model, act_fidx, force_fidx)
    if len(springs):
        initial_spring_lengths(cm, list(model.springs))
    for name, why in zip(topo.cut_joint_names, topo.cut_reasons):
        if why == "chosen":
            joint = model.joints[name]
            cm.warnings.append(
                f'joint "{name}" closes a loop and is cut: its '
                f"{6 - joint.ndof} constraint equations hold the loop "
                "closed (mark it cut = true, or another joint of the loop, "
                "to choose yourself)"
            )
    if any(getattr(b, "initial_modes", None) for _, b in beams):
        mode_elastic_state(cm)
    if any(starts_static(b) for _, b in beams):
        static_elastic_state(cm)
    if any(starts_quasi_static(b) for _, b in beams) and not cm.has_constraints:
        quasi_static_elastic_state(cm)
    return cm


def _explicit_elastic_rates(beam: BeamBody | FeBody) -> NDArray[np.float64] | list[float]:
    """uf0 of a beam: its given `initial_rates`, else zeros."""
    if beam.initial_rates is None:
        return np.zeros(beam.nf)
    if len(beam.initial_rates) != beam.nf:
        first = ", ".join(beam.coordinate_names()[:3])
        raise ModelError(
            f"expected {beam.nf} elastic rates ({first}, ...), got {len(beam.initial_rates)}",
            f'body "{beam.name}"',
            "initial_rates",
        )
    return beam.initial_rates


def _explicit_elastic_state(beam: BeamBody | FeBody) -> NDArray[np.float64] | list[float]:
    """qf0 of a beam: its given elastic coordinates, else zeros ("undeformed", and the
    start of "static")."""
    if isinstance(beam.initial, str):
        return np.zeros(beam.nf)
    if len(beam.initial) != beam.nf:
        first = ", ".join(beam.coordinate_names()[:3])
        raise ModelError(
            f"expected {beam.nf} elastic coordinates ({first}, ...), got {len(beam.initial)}",
            f'body "{beam.name}"',
            "initial",
        )
    return beam.initial
