"""compile_model: a Model (the description) into a CompiledModel
(flexmbs.model.compiled_model), the flat arrays the kernels read
(flexmbs.model.arrays.ModelArrays) with the names and the initial state
(flexmbs.model.initial_state), as a sequence of small steps, one per table.

Sizes and the state vector's layout: flexmbs.model.arrays.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, cast

import numpy as np
from numpy.typing import ArrayLike, DTypeLike, NDArray

from ..errors import ModelError
from .arrays import ACTUATOR_CODES, ModelArrays, Workspace
from .band_layout import bordered_band_layout
from .compiled_model import CompiledModel
from .constraint_tables import constraint_tables
from .coupler import coupled_start, coupler_columns
from .description import GROUND, BeamBody, FeBody, Joint, Marker, RigidBody
from .drive_tables import motor_tables, stop_tables
from .geometric_tables import geometric_tables
from .initial_state import complete_initial_state
from .invariant_tables import invariant_tables
from .motions import ROTATE, TRANSLATE, MarkerTerms, Motion, joint_motions, marker_terms
from .ports import input_ports
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


@dataclass
class _Coordinates:
    """The joint coordinates (the columns x, in joint order) and the model's
    generalized coordinates q (the free joint coordinates, then each flexible body's
    elastic ones), with the time functions that prescribe or command them."""

    start: NDArray[np.int64]  # joint k owns columns [start[k], start[k + 1])
    axes: list[NDArray[np.float64]] = field(default_factory=list)
    qindex: list[int] = field(default_factory=list)  # column -> q index, -1 prescribed
    fidx: list[int] = field(default_factory=list)  # column -> its driver's function, -1 free
    stiffness: list[float] = field(default_factory=list)
    damping: list[float] = field(default_factory=list)
    rest: list[float] = field(default_factory=list)
    column_names: list[str] = field(default_factory=list)
    names: list[str] = field(default_factory=list)  # of q
    q0: list[float] = field(default_factory=list)
    u0: list[float] = field(default_factory=list)
    column_of: dict[tuple[str, int], int] = field(default_factory=dict)  # (joint, c) -> column
    functions: list[TimeFunction] = field(default_factory=list)  # drivers, actuators, loads
    actuator_functions: list[int] = field(default_factory=list)
    nfree: int = 0  # free joint coordinates: q[:nfree]


def _joint_coordinates(model: Model, joints: Sequence[Joint]) -> _Coordinates:
    """The columns of `joints` (in order) and the free ones as the first q, each
    driven coordinate and each actuator command a time function."""
    driven = {(d.joint, d.coordinate): d for d in model.drivers.values()}
    out = _Coordinates(np.zeros(len(joints) + 1, dtype=np.int64))
    for k, j in enumerate(joints):
        out.start[k + 1] = out.start[k] + j.ndof
        axes = list(j.translation_axes) + list(j.rotation_axes)
        for c, (axis, cname) in enumerate(zip(axes, j.coordinate_names())):
            out.column_of[(j.name, c)] = len(out.axes)
            out.axes.append(axis)
            out.column_names.append(cname)
            out.stiffness.append(j.stiffness[c])
            out.damping.append(j.damping[c])
            out.rest.append(j.rest[c])
            d = driven.get((j.name, c))
            if d is None:
                out.qindex.append(len(out.names))
                out.fidx.append(-1)
                out.names.append(cname)
                out.q0.append(j.initial[c])
                out.u0.append(j.initial_rate[c])
            else:
                out.qindex.append(-1)
                out.fidx.append(len(out.functions))
                out.functions.append(d.function)
    out.nfree = len(out.names)
    for a in model.actuators.values():
        out.actuator_functions.append(len(out.functions))
        out.functions.append(a.command)
    return out


@dataclass
class _Elastic:
    """The flexible bodies in body order and where their elastic coordinates sit."""

    beams: list[tuple[int, BeamBody | FeBody]]  # (body index, body)
    body_flex: NDArray[np.int64]  # body index -> its index in `beams`, -1 rigid
    flex_q: list[int]  # index in q of each one's first elastic coordinate
    flex_col: list[int]  # the same as a column of the B matrix (after the joints')
    first_col: dict[str, int]  # body name -> flex_col
    col_qindex: NDArray[np.int64]  # every column -> its q index (-1 prescribed)


def _elastic_coordinates(bodies: Sequence[object], coords: _Coordinates) -> _Elastic:
    """Each flexible body's elastic coordinates after the joint ones (appended to
    coords' q names and initial state)."""
    beams = [(i, b) for i, b in enumerate(bodies) if isinstance(b, (BeamBody, FeBody))]
    out = _Elastic(beams, -np.ones(len(bodies), dtype=np.int64), [], [], {}, np.zeros(0, np.int64))
    nc = len(coords.axes)
    for k, (i, b) in enumerate(beams):
        out.body_flex[i] = k
        out.flex_q.append(len(coords.names))
        out.flex_col.append(nc + len(coords.names) - coords.nfree)
        out.first_col[b.name] = out.flex_col[-1]
        coords.names += b.coordinate_names()
        coords.q0 += list(_explicit_elastic_state(b))
        coords.u0 += list(_explicit_elastic_rates(b))
    out.col_qindex = np.array(
        coords.qindex + list(range(coords.nfree, len(coords.names))), dtype=np.int64
    )
    return out


class _Markers:
    """The markers loads, sensors and constraints act at, numbered in the order they
    are first asked for, with their motion terms (flexmbs.model.motions)."""

    def __init__(self, model: Model, body_index: Mapping[str, int], elastic: _Elastic) -> None:
        self.model, self.body_index, self.first_col = model, body_index, elastic.first_col
        self.index: dict[tuple[str, str], int] = {}
        self.listed: list[tuple[int, MarkerTerms]] = []

    def terms(self, body_name: str, marker_name: str) -> MarkerTerms:
        body = None if body_name == GROUND else self.model.bodies[body_name]
        marker = self.model.marker(body_name, marker_name)
        return marker_terms(marker, body, self.first_col.get(body_name, 0))

    def id(self, body_name: str, marker_name: str) -> int:
        """The marker's index in the marker tables (given one at its first use)."""
        key = (body_name, marker_name)
        if key not in self.index:
            self.index[key] = len(self.listed)
            body = -1 if body_name == GROUND else self.body_index[body_name]
            self.listed.append((body, self.terms(body_name, marker_name)))
        return self.index[key]

    def arrays(self) -> dict[str, np.ndarray]:
        """The ModelArrays fields marker_*."""
        term_lists = [mt.terms[d] for _, mt in self.listed for d in range(6)]
        ptr = np.zeros(len(term_lists) + 1, dtype=np.int64)
        ptr[1:] = np.cumsum([len(t) for t in term_lists])
        return dict(
            marker_body=_packed([b for b, _ in self.listed], (0,), np.int64),
            marker_position=_packed([mt.position for _, mt in self.listed], (0, 3)),
            marker_rotation=_packed([mt.orientation for _, mt in self.listed], (0, 3, 3)),
            marker_term_ptr=ptr,
            marker_term_col=_packed([c for t in term_lists for c, _ in t], (0,), np.int64),
            marker_term_coef=_packed([k for t in term_lists for _, k in t], (0,)),
        )


def _packed(x: ArrayLike, shape: tuple[int, ...], dtype: DTypeLike = np.float64) -> np.ndarray:
    """`x` as a contiguous array; an empty one with `shape` (a list of nothing has none)."""
    a = np.array(x, dtype=dtype)
    return a.reshape(shape) if a.size == 0 else np.ascontiguousarray(a)


def _chain_arrays(
    joints: Sequence[Joint],
    topo: Topology,
    coords: _Coordinates,
    elastic: _Elastic,
    markers: _Markers,
    movable: Mapping[str, str],
) -> dict[str, np.ndarray]:
    """The kinematic chain of every body: its joint's motions (motion_*), the columns
    its frame moves with (frame_*, those it inherits from its parent marked), and the
    columns of its B rows (body_col_*: the frame's and its own elastic ones)."""
    per_body: list[list[Motion]] = []
    frame: list[list[int]] = []
    inherited: list[list[bool]] = []
    body_cols: list[list[int]] = []
    for k, j in enumerate(joints):
        motions = joint_motions(
            markers.terms(j.parent, j.parent_marker),
            markers.terms(j.child, j.child_marker),
            j.translation_axes,
            j.rotation_axes,
            coords.start[k],
            reference_slots=j.name in movable,
        )
        per_body.append(motions)
        p = topo.parent[k]
        parent_cols = set(frame[p]) if p >= 0 else set()
        cols = sorted(parent_cols | set(_columns_of(motions)))
        frame.append(cols)
        inherited.append([c in parent_cols for c in cols])
        own: list[int] = []
        if elastic.body_flex[k] >= 0:
            b = elastic.beams[elastic.body_flex[k]][1]
            own = list(range(elastic.first_col[b.name], elastic.first_col[b.name] + b.nf))
        body_cols.append(sorted(set(cols) | set(own)))
    frame_ptr, frame_col = _ragged(frame)
    _, frame_inh = _ragged(inherited, np.int64)
    body_col_ptr, body_col = _ragged(body_cols)
    return dict(
        **_motion_arrays(per_body),
        frame_ptr=frame_ptr,
        frame_col=frame_col,
        frame_inherited=frame_inh,
        body_col_ptr=body_col_ptr,
        body_col=body_col,
    )


def _body_and_joint_arrays(
    model: Model,
    topo: Topology,
    bodies: Sequence[RigidBody | BeamBody | FeBody],
    joints: Sequence[Joint],
    coords: _Coordinates,
) -> dict[str, np.ndarray]:
    """The ModelArrays fields of the bodies' inertia, the joints' coordinates and the
    actuators."""
    f64, i64 = np.float64, np.int64
    actuators = list(model.actuators.values())
    column = [coords.column_of[(a.joint, a.coordinate)] for a in actuators]
    return dict(
        gravity=np.array(model.gravity, dtype=f64),
        body_parent=np.array(topo.parent, dtype=i64),
        body_mass=_packed([b.mass for b in bodies], (0,)),
        body_first_moment=_packed([b.mass * b.com for b in bodies], (0, 3)),
        body_inertia_origin=_packed([b.inertia_about_origin for b in bodies], (0, 3, 3)),
        joint_coord_start=coords.start,
        joint_ntrans=_packed([len(j.translation_axes) for j in joints], (0,), i64),
        coord_axis=_packed(coords.axes, (0, 3)),
        coord_qindex=_packed(coords.qindex, (0,), i64),
        coord_function=_packed(coords.fidx, (0,), i64),
        coord_stiffness=_packed(coords.stiffness, (0,)),
        coord_damping=_packed(coords.damping, (0,)),
        coord_rest=_packed(coords.rest, (0,)),
        act_coord=_packed(column, (0,), i64),
        act_type=_packed([ACTUATOR_CODES[a.type] for a in actuators], (0,), i64),
        act_kp=_packed([a.kp for a in actuators], (0,)),
        act_kd=_packed([a.kd for a in actuators], (0,)),
        act_function=_packed(coords.actuator_functions, (0,), i64),
        act_gear=_packed([a.gear_ratio for a in actuators], (0,)),
        act_max=_packed([a.max_torque for a in actuators], (0,)),
        act_inertia=_packed([a.gear_ratio**2 * a.rotor_inertia for a in actuators], (0,)),
        act_damping=_packed([a.gear_ratio**2 * a.motor_damping for a in actuators], (0,)),
        **motor_tables(actuators),
        **stop_tables(
            model.joints.values(),
            topo.cut_joint_names,
            coords.column_of,
            coords.qindex,
            getattr(model, "backlashes", {}).values(),
        ),
    )


def _load_arrays(
    model: Model, coords: _Coordinates, markers: _Markers
) -> tuple[dict[str, np.ndarray], list[int]]:
    """The ModelArrays fields of the springs and the applied loads (spring_*, force_*),
    and the index of each load's time function (appended to coords.functions)."""
    i64 = np.int64
    forces = list(model.forces.values())
    force_marker = [markers.id(f.body, f.marker) for f in forces]
    springs = list(model.springs.values())
    spring_marker = [
        (markers.id(s.body1, s.marker1), markers.id(s.body2, s.marker2)) for s in springs
    ]
    force_functions = []
    for f in forces:
        force_functions.append(len(coords.functions))
        coords.functions.append(f.function)
    rest = [np.nan if s.rest_length is None else s.rest_length for s in springs]
    return dict(
        spring_marker=_packed(spring_marker, (0, 2), i64),
        spring_k=_packed([s.stiffness for s in springs], (0,)),
        spring_c=_packed([s.damping for s in springs], (0,)),
        spring_l0=_packed(rest, (0,)),
        force_type=_packed([0 if f.type == "force" else 1 for f in forces], (0,), i64),
        force_marker=_packed(force_marker, (0,), i64),
        force_vector=_packed([f.vector for f in forces], (0, 3)),
        force_frame=_packed([0 if f.frame == "global" else 1 for f in forces], (0,), i64),
        force_function=_packed(force_functions, (0,), i64),
    ), force_functions


def _flexible_arrays(
    model: Model, coords: _Coordinates, elastic: _Elastic, frame_col: NDArray[np.int64]
) -> dict[str, np.ndarray]:
    """The flexible bodies' tables (flex_*, the invariants, the geometric stiffness)
    and the bordered band layout of the iteration matrix (lin_*)."""
    i64 = np.int64
    bodies = [b for _, b in elastic.beams]
    tables = {**invariant_tables(bodies), **geometric_tables(bodies)}
    lin_pos, lin_dims = bordered_band_layout(
        len(coords.names),
        1 + len(model.actuators),
        np.array(elastic.flex_q, dtype=i64),
        np.array([b.nf for b in bodies], dtype=i64),
        frame_col,
        elastic.col_qindex,
        tables,
    )
    return dict(
        body_flex=elastic.body_flex,
        flex_nf=_packed([b.nf for b in bodies], (0,), i64),
        flex_q=_packed(elastic.flex_q, (0,), i64),
        flex_col=_packed(elastic.flex_col, (0,), i64),
        **tables,
        lin_pos=lin_pos,
        lin_dims=lin_dims,
    )


def _geometric_first_elements(elastic: _Elastic) -> dict[str, int]:
    """beam name -> index of its first element in the geometric-stiffness tables
    (beams with geometric stiffness only)."""
    first, count = {}, 0
    for _, b in elastic.beams:
        if b.geometric != "none":
            first[b.name] = count
            count += len(cast(BeamBody, b).connectivity)
    return first


def compile_model(model: Model, absolute_joints: Mapping[str, str] | None = None) -> CompiledModel:
    """Validate the topology and pack the model into a CompiledModel, its initial
    state completed (flexmbs.model.initial_state). `absolute_joints` {joint name: body
    name}: the joints that place each body of an absolute-coordinate model
    (flexmbs.model.absolute.absolute_model gives them), None otherwise.

    The order is the data's: joint coordinates, elastic coordinates, the chains, the
    loads, the time functions with the rig's and the user laws' entries, the
    constraints, the sensors, the flexible bodies' tables."""
    described, model = model, with_node_inertias(model)
    topo = build_topology(model)
    joints = [model.joints[j] for j in topo.joint_names]
    bodies = [model.bodies[b] for b in topo.body_names]
    _check_beam_markers(model)
    coords = _joint_coordinates(model, joints)
    elastic = _elastic_coordinates(bodies, coords)
    markers = _Markers(model, {b: k for k, b in enumerate(topo.body_names)}, elastic)
    chains = _chain_arrays(joints, topo, coords, elastic, markers, absolute_joints or {})
    loads, force_functions = _load_arrays(model, coords, markers)
    act_index = {a: k for k, a in enumerate(model.actuators)}
    rig = rig_tables(model, coords.column_of, coords.qindex, act_index, coords.functions)
    tf_kind, tf_ptr, tf_data = with_user_laws(
        *compile_time_functions(coords.functions),
        user_law_entries(model, coords.column_of, coords.qindex, coords.names, markers.id),
    )
    contacts = list(model.contacts.values())
    cut_joints = [model.joints[name] for name in topo.cut_joint_names]
    couplers = list(model.couplers.values())
    coupler_cols = coupler_columns(couplers, coords.column_of, coords.qindex)
    coupler_notes = coupled_start(couplers, coupler_cols, coords.qindex, coords.q0, coords.u0)
    con_arrays, con_texts = constraint_tables(
        model, cut_joints, markers.id, contacts, couplers, coupler_cols
    )
    sensors = list(model.sensors.values())
    stab = sensor_tables(
        model,
        sensors,
        markers.body_index,
        coords.column_of,
        act_index,
        markers.id,
        {b.name: elastic.flex_q[k] for k, (_, b) in enumerate(elastic.beams)},
        _geometric_first_elements(elastic),
        topo.cut_joint_names,
        [c.name for c in contacts],
    )
    _check_controller_components(model, dict(zip([s.name for s in sensors], stab.sizes)))
    arrays = ModelArrays(
        **_body_and_joint_arrays(model, topo, bodies, joints, coords),
        col_qindex=elastic.col_qindex,
        **chains,
        tf_kind=tf_kind,
        tf_ptr=tf_ptr,
        tf_data=tf_data,
        **_flexible_arrays(model, coords, elastic, chains["frame_col"]),
        **markers.arrays(),
        **loads,
        **con_arrays,
        **stab.arrays,
        **rig,
    )
    q0, u0 = np.array(coords.q0, dtype=np.float64), np.array(coords.u0, dtype=np.float64)
    cm = CompiledModel(
        described,
        topo,
        arrays,
        coords.names,
        coords.column_names,
        [s.name for s in sensors],
        stab.sizes,
        q0,
        u0,
        elastic.beams,
        absolute_joints or {},
    )
    cm.constraint_texts = con_texts
    cm.ports = input_ports(model, coords.actuator_functions, force_functions)
    cm.warnings += _cut_joint_notes(model, topo) + coupler_notes
    complete_initial_state(cm)
    return cm


def _check_controller_components(model: Model, sizes: Mapping[str, int]) -> None:
    """Each controller input that reads a sensor reads one of the values it gives
    (`component` 0 .. size - 1)."""
    for name, controller in model.controllers.items():
        for k, inp in enumerate(controller.inputs):
            if inp.sensor is None:
                continue
            size = int(sizes[inp.sensor])
            if not inp.component < size:
                raise ModelError(
                    f'expected a component 0 .. {size - 1} of sensor "{inp.sensor}" (a '
                    f"{model.sensors[inp.sensor].type} sensor of {size} value"
                    f"{'s' if size != 1 else ''}), got {inp.component}",
                    f'controller "{name}"',
                    f"inputs[{k}].component",
                )


def _cut_joint_notes(model: Model, topo: Topology) -> list[str]:
    """What the user is told of each joint cut to open a loop that they did not mark."""
    out = []
    for name, why in zip(topo.cut_joint_names, topo.cut_reasons):
        if why == "chosen":
            joint = model.joints[name]
            out.append(
                f'joint "{name}" closes a loop and is cut: its '
                f"{6 - joint.ndof} constraint equations hold the loop "
                "closed (mark it cut = true, or another joint of the loop, "
                "to choose yourself)"
            )
    return out


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
