"""What the browser viewer draws, as one JSON document: the model's bodies, joints,
payloads and meshes once, and per frame what moves.

Every body's pose at deflection scale K is rebuilt in the page by the kinematic chain
of `flexmbs.model.motions`, with the elastic coordinates magnified K times before the
kinematics (as `flexmbs animate` and `DeformedShape.frame(t, q, K)` do):

    T_i(K) = T_p(K) M_P(K) J_i M_O(K)^-1,    M(K) = [Rx Ry Rz(K th) C_0 | s_0 + K d]

with T_p the parent's pose (the identity for the ground), M_P and M_O the joint's
markers on the parent and the child (undeformed position s_0 and axes C_0 in body
axes, elastic translation d and Cardan angles th of their node, linear in qf), and
J_i = M_P(1)^-1 T_p(1)^-1 T_i(1) M_O(1) the joint's own motion, which the elastic
coordinates do not change: it is computed here from the poses of the run, so that
K = 1 is the run's kinematics exactly. A beam's centre line in its body axes is
P + K d (d = C qf, flexmbs.io.deformed_shape), its point data those of the run; a
finite-element body's surface X + K Phi_t eta (flexmbs.viewer.fe_surface), the page
given X and Phi_t once and the body's eta per frame (`feCoordinates`).

Arrays travel as base64 of little-endian float32 (per frame, for drawing) or
float64 (the times), as {"dtype", "shape", "b64"}.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

import numpy as np
from numpy.typing import NDArray

from ..analysis.deflection_scale import DeflectionScale, arm_size, readable_scale
from ..elements.beam import element_frame
from ..errors import ModelError
from ..io.deformed_shape import DEFAULT_SUBDIVISIONS, SECTION_FORCE_NAMES, DeformedShape
from ..io.results import component_labels
from ..kinematics.recursive import forward_kinematics
from ..model.description import GROUND, ORIGIN, BeamBody, FeBody, RigidBody
from .array_text import packed
from .fe_surface import FeSurface, fe_surface

if TYPE_CHECKING:
    from ..model.compiled import CompiledModel
    from ..model.description import Model
    from .visuals import VisualMesh

__all__ = [
    "Scene",
    "SceneFrames",
    "build_scene",
    "FIELDS",
    "DEFAULT_MAX_FRAMES",
    "MAX_SENSOR_SAMPLES",
    "payload_density",
    "ball_radius",
]

DEFAULT_MAX_FRAMES = 600
MAX_SENSOR_SAMPLES = 4000
PAYLOAD_DENSITY = 7850.0  # kg/m^3: a node mass is drawn as a steel ball of its mass,
PAYLOAD_SHOWN = 1.5  # or at least this many times its tube's radius (payload_density)
FIELDS = (
    ("outer_fibre_strain", "outer-fibre strain", ""),
    ("N", "normal force N", "N"),
    ("V_y", "shear force V_y", "N"),
    ("V_z", "shear force V_z", "N"),
    ("T", "torque T", "N m"),
    ("M_y", "bending moment M_y", "N m"),
    ("M_z", "bending moment M_z", "N m"),
    ("displacement", "elastic displacement |d|", "m"),
)
"""(key, label, unit) of the colour maps: the outer-fibre strain, the section forces in
the order of flexmbs.io.deformed_shape.SECTION_FORCE_NAMES, then the length of the
elastic displacement (a beam's d = C qf, a finite-element body's nodal Phi_t eta: the
one map FE bodies take; the page computes theirs)."""
assert tuple(k for k, _, _ in FIELDS[1:7]) == SECTION_FORCE_NAMES


@dataclass
class Scene:
    """The viewer's document (`data`, JSON-ready) and the default deflection scale
    with the figures it was chosen from."""

    data: dict[str, Any]
    scale: DeflectionScale
    frames: int
    warnings: list[str] = field(default_factory=list)
    moving: SceneFrames | None = None  # what moves: a frame of any state (live view)

    def to_json(self) -> str:
        """The document as JSON text."""
        return json.dumps(self.data, separators=(",", ":"), allow_nan=False)


@dataclass
class _MarkerSlot:
    body: int  # compiled body index, -1 the ground
    position: NDArray[np.float64]
    rotation: NDArray[np.float64]
    rows: NDArray[np.float64] | None  # (6, nf) of the node over qf, or None
    q_first: int = 0


def _cardan(th: NDArray[np.float64]) -> NDArray[np.float64]:
    """Rx(th_0) Ry(th_1) Rz(th_2) (flexmbs.kinematics.markers)."""
    c, s = np.cos(th), np.sin(th)
    rx = np.array([[1.0, 0.0, 0.0], [0.0, c[0], -s[0]], [0.0, s[0], c[0]]])
    ry = np.array([[c[1], 0.0, s[1]], [0.0, 1.0, 0.0], [-s[1], 0.0, c[1]]])
    rz = np.array([[c[2], -s[2], 0.0], [s[2], c[2], 0.0], [0.0, 0.0, 1.0]])
    return rx @ ry @ rz


def _pose(rotation: NDArray[np.float64], position: NDArray[np.float64]) -> NDArray[np.float64]:
    t = np.eye(4)
    t[:3, :3] = rotation
    t[:3, 3] = position
    return t


def _inverse(t: NDArray[np.float64]) -> NDArray[np.float64]:
    out = np.eye(4)
    out[:3, :3] = t[:3, :3].T
    out[:3, 3] = -t[:3, :3].T @ t[:3, 3]
    return out


class _Markers:
    """The markers the drawing needs, each once, with their elastic slots."""

    def __init__(self, cm: CompiledModel, model: Model, body_index: Mapping[str, int]) -> None:
        self.cm, self.model, self.body_index = cm, model, body_index
        self.slots: list[_MarkerSlot] = []
        self.index: dict[tuple[str, str], int] = {}
        self.elastic: list[int] = []  # slots with elastic terms, in their column order
        self.q_first = {}
        flex_q = cm.arrays.flex_q
        for k, (_, b) in enumerate(cm.beams):
            self.q_first[b.name] = int(flex_q[k])

    def of(self, body: str, name: str) -> int:
        key = (body, name)
        if key in self.index:
            return self.index[key]
        marker = self.model.marker(body, name)
        item = None if body == GROUND else self.model.bodies[body]
        rows = None
        if isinstance(item, (BeamBody, FeBody)) and marker.node is not None:
            r = item.node_rows(marker.node)
            if np.any(r != 0.0):
                rows = r
        slot = _MarkerSlot(
            self.body_index.get(body, -1),
            np.asarray(marker.position, float),
            np.asarray(marker.orientation, float),
            rows,
            self.q_first.get(body, 0),
        )
        self.index[key] = len(self.slots)
        if rows is not None:
            self.elastic.append(len(self.slots))
        self.slots.append(slot)
        return self.index[key]

    def elastic_values(self, q: NDArray[np.float64]) -> NDArray[np.float64]:
        """(number of elastic slots, 6): d (m) and th (rad) of each at q."""
        out = np.zeros((len(self.elastic), 6))
        for k, s in enumerate(self.elastic):
            slot = self.slots[s]
            assert slot.rows is not None
            out[k] = slot.rows @ q[slot.q_first : slot.q_first + slot.rows.shape[1]]
        return out

    def frame(self, k: int, elastic: NDArray[np.float64]) -> NDArray[np.float64]:
        """The 4 x 4 frame of marker k in its body's axes with elastic values `elastic`."""
        slot = self.slots[k]
        if slot.rows is None:
            return _pose(slot.rotation, slot.position)
        e = elastic[self.elastic.index(k)]
        return _pose(_cardan(e[3:]) @ slot.rotation, slot.position + e[:3])

    def document(self) -> list[dict[str, Any]]:
        return [
            {
                "body": s.body,
                "position": s.position.tolist(),
                "rotation": s.rotation.reshape(-1).tolist(),
                "elastic": self.elastic.index(k) if s.rows is not None else -1,
            }
            for k, s in enumerate(self.slots)
        ]


def _section_shape(beam: BeamBody) -> dict[str, Any]:
    """How the beam's section is drawn: its outline ("round" or "rect") and half
    sizes along the section's y and z axes (m)."""
    s = beam.section
    round_kinds = ("circle", "round tube")
    if s.max_y is not None and s.max_z is not None:
        outline = "round" if s.kind in round_kinds else "rect"
        return {"outline": outline, "half": [s.max_y, s.max_z], "kind": s.kind}
    radius = math.sqrt(s.area / math.pi)  # a solid circle of the section's area
    return {"outline": "round", "half": [radius, radius], "kind": s.kind}


def ball_radius(mass: float, density: float) -> float:
    """The radius (m) of a ball of `mass` (kg) at `density` (kg/m^3): its volume
    4 pi r^3 / 3 = mass / density."""
    return float((3.0 * mass / (4.0 * math.pi * density)) ** (1.0 / 3.0))


def payload_density(bodies: Sequence[Mapping[str, Any]]) -> float:
    """The one density (kg/m^3) at which the scene draws its node masses as balls,
    each ball's volume its mass over it: steel's (PAYLOAD_DENSITY), or lower where at
    steel's no ball would stand out of its tube: then the density at which the ball
    that stands out most is PAYLOAD_SHOWN times its tube's radius (the others in
    proportion, lighter ones smaller).

    bodies: the scene's body documents, a beam's with its `payloads` (mass, kg) and
    its `section` (`half`: the half-widths of the drawn section, m)."""
    stands_out = False
    wanted = 0.0  # the density at which the best-standing ball is PAYLOAD_SHOWN tubes
    for doc in bodies:
        half = max(doc.get("section", {}).get("half", [0.0]))
        for ball in doc.get("payloads", ()):
            if half <= 0.0 or ball_radius(ball["mass"], PAYLOAD_DENSITY) > half:
                stands_out = True
            else:
                volume = 4.0 * math.pi * (PAYLOAD_SHOWN * half) ** 3 / 3.0
                wanted = max(wanted, ball["mass"] / volume)
    return PAYLOAD_DENSITY if stands_out or wanted == 0.0 else float(wanted)


def _beam_document(beam: BeamBody, local: NDArray[np.float64], subdivisions: int) -> dict:
    """Undeformed centre line, section axes per point (body axes), node points."""
    axes_y, axes_z = [], []
    for e, (a, b) in enumerate(beam.connectivity):
        frame = element_frame(beam.nodes[a], beam.nodes[b], beam.reference)
        for _ in range(0 if e == 0 else 1, subdivisions + 1):
            axes_y.append(frame[:, 1])
            axes_z.append(frame[:, 2])
    nodes = [int(np.argmin(np.linalg.norm(local - n, axis=1))) for n in beam.nodes]
    return {
        "local": packed(local),
        "axisY": packed(np.array(axes_y)),
        "axisZ": packed(np.array(axes_z)),
        "section": _section_shape(beam),
        "nodePoints": nodes,
    }


def _fe_document(body: FeBody, surface: FeSurface, first: int, slots: dict) -> dict[str, Any]:
    """How an FE body is drawn (flexmbs.viewer.fe_surface): its surface's undeformed
    points (body frame), their translations per unit eta (3 k, nf), the triangles
    (none: the points as dots of radius `pointRadius`) and the elements' edges, where
    its elastic coordinates start in `feCoordinates`, and its markers' slots."""
    return {
        "kind": "fe",
        "points": len(surface.local),
        "local": packed(surface.local),
        "modes": packed(surface.modes),
        "nf": int(surface.modes.shape[1]),
        "coordinateFirst": first,
        "triangles": packed(surface.triangles, "<u4"),
        "edges": packed(surface.edges, "<u4"),
        "pointRadius": surface.point_radius,
        "markerSlots": slots,
    }


def _rigid_document(body: RigidBody) -> dict[str, Any]:
    markers = {
        name: np.asarray(m.position, float).tolist()
        for name, m in body.markers.items()
        if np.linalg.norm(m.position) > 0.0
    }
    return {"markers": markers, "com": np.asarray(body.com, float).tolist()}


def _joint_glyph(axes_t: NDArray[np.float64], axes_r: NDArray[np.float64]) -> tuple[str, list]:
    """(shape, axis in the joint's marker frames) of a joint's glyph: a cylinder on
    the axis of a one-axis rotation, a box along a one-axis translation, a ball
    otherwise."""
    if len(axes_r) == 1 and len(axes_t) == 0:
        return "hinge", np.asarray(axes_r[0], float).tolist()
    if len(axes_t) == 1 and len(axes_r) == 0:
        return "slider", np.asarray(axes_t[0], float).tolist()
    if len(axes_t) == 1 and len(axes_r) == 1:
        return "hinge", np.asarray(axes_r[0], float).tolist()
    return "ball", [0.0, 0.0, 1.0]


def _rows_to_draw(n: int, max_frames: int) -> NDArray[np.int64]:
    if n <= max_frames:
        return np.arange(n)
    return np.unique(np.round(np.linspace(0, n - 1, max_frames)).astype(np.int64))


def _sensor_documents(
    time: NDArray[np.float64],
    sensors: Mapping[str, NDArray[np.float64]],
    units: Mapping[str, Sequence[str]],
) -> tuple[list[dict[str, Any]], NDArray[np.int64]]:
    stride = max(1, math.ceil(len(time) / MAX_SENSOR_SAMPLES))
    rows = np.arange(0, len(time), stride)
    if len(time) and rows[-1] != len(time) - 1:
        rows = np.append(rows, len(time) - 1)
    out = []
    for name, values in sensors.items():
        v = np.asarray(values, float)
        v = v.reshape(len(time), -1)
        size = v.shape[1]
        unit = list(units.get(name, [])) or [""] * size
        out.append(
            {
                "name": name,
                "labels": component_labels(size) if size > 1 else [name],
                "units": unit,
                "values": packed(v[rows]),
            }
        )
    return out, rows


class SceneFrames:
    """What moves in a scene, frame by frame (the document's `relative`,
    `markerElastic`, `deflection`, `fieldValues`, `feCoordinates`): `fill(f, t, q)`
    writes frame f of the state q at time t (s) into arrays of `frames` frames; the
    live view (flexmbs.viewer.live) fills one frame at a time, `build_scene` all."""

    def __init__(
        self,
        cm: CompiledModel,
        shape: DeformedShape,
        markers: _Markers,
        chain: list[tuple[int, int, int]],
        disks: list[dict[str, Any]],
        frames: int,
    ) -> None:
        self.cm, self.shape, self.markers, self.chain, self.disks = cm, shape, markers, chain, disks
        names = list(cm.topology.body_names)
        bodies = cm.model.bodies
        self.nb = len(names)
        self.beam_parts = [p for p in shape.beams if isinstance(bodies[names[p.body]], BeamBody)]
        self.fe_parts = [p for p in shape.beams if isinstance(bodies[names[p.body]], FeBody)]
        self.surfaces = {
            p.body: fe_surface(cast(FeBody, bodies[names[p.body]])) for p in self.fe_parts
        }
        self.fe_first = np.cumsum([0] + [p.nf for p in self.fe_parts])
        self.npoints = sum(len(p.local) for p in self.beam_parts)
        nt = frames
        self.fe_coordinates = np.zeros((nt, int(self.fe_first[-1])))
        self.fe_largest = 0.0
        self.relative = np.zeros((nt, self.nb, 12))
        self.elastic = np.zeros((nt, len(markers.elastic), 6))
        self.deflection = np.zeros((nt, self.npoints, 3))
        self.fields = np.zeros((nt, len(FIELDS), self.npoints))
        self.drawn = np.zeros((nt, shape.npoints, 3))
        self.ws = cm.new_workspace()
        self.rest = np.zeros(cm.nq)
        self.reach: list[NDArray[np.float64]] = []
        self.beam_rows = []
        first = 0
        for part in self.beam_parts:
            self.beam_rows.append(
                (
                    slice(part.first_point, part.first_point + len(part.local)),
                    slice(first, first + len(part.local)),
                )
            )
            first += len(part.local)

    def fill(self, f: int, t: float, q: NDArray[np.float64]) -> None:
        """Frame f of the state with coordinates q (nq) at time t (s)."""
        cm, markers = self.cm, self.markers
        fr = self.shape.frame(t, q)
        self.drawn[f] = fr.points
        for k, part in enumerate(self.fe_parts):  # (the bounds hold the surface: drawn)
            eta = q[part.q_first : part.q_first + part.nf]
            self.fe_coordinates[f, self.fe_first[k] : self.fe_first[k + 1]] = eta
            moved = (self.surfaces[part.body].modes @ eta).reshape(-1, 3)
            if len(moved):
                largest = float(np.linalg.norm(moved, axis=1).max())
                self.fe_largest = max(self.fe_largest, largest)
        for src, dst in self.beam_rows:
            d = fr.point_data["elastic_displacement"][src]
            self.deflection[f, dst] = d
            self.fields[f, 0, dst] = fr.point_data["outer_fibre_strain"][src, 0]
            self.fields[f, 1:7, dst] = fr.point_data["section_forces"][src].T
            self.fields[f, 7, dst] = np.linalg.norm(d, axis=1)
        ws = self.ws
        forward_kinematics(cm.arrays, ws, t, q, self.rest)
        poses = [_pose(ws.rot[b], ws.r[b]) for b in range(self.nb)]
        e = markers.elastic_values(q)
        self.elastic[f] = e
        for disk in self.disks:  # the disk's rim in the bounds: a ball of its radius
            slot = markers.slots[disk["marker"]]
            holder = poses[slot.body] if slot.body >= 0 else np.eye(4)
            centre = (holder @ markers.frame(disk["marker"], e))[:3, 3]
            self.reach.append(centre - disk["radius"])
            self.reach.append(centre + disk["radius"])
        for b, (p, mp, mc) in enumerate(self.chain):
            parent = poses[p] if p >= 0 else np.eye(4)
            jb = _inverse(markers.frame(mp, e)) @ _inverse(parent) @ poses[b] @ markers.frame(mc, e)
            self.relative[f, b, :9] = jb[:3, :3].reshape(-1)
            self.relative[f, b, 9:] = jb[:3, 3]

    def document(self) -> dict[str, Any]:
        """The moving part of the document, of every frame (packed as build_scene
        packs it)."""
        return {
            "relative": packed(self.relative),
            "markerElastic": packed(self.elastic),
            "deflection": packed(self.deflection),
            "fieldValues": packed(self.fields),
            "feCoordinates": packed(self.fe_coordinates),
        }


def build_scene(
    cm: CompiledModel,
    model: Model,
    times: NDArray[np.float64],
    qs: NDArray[np.float64],
    title: str,
    *,
    sensors: Mapping[str, NDArray[np.float64]] | None = None,
    sensor_units: Mapping[str, Sequence[str]] | None = None,
    meshes: Sequence[VisualMesh] = (),
    max_frames: int = DEFAULT_MAX_FRAMES,
    scale: float | None = None,
    subdivisions: int = DEFAULT_SUBDIVISIONS,
    source: str = "",
) -> Scene:
    """The viewer's document of compiled model `cm` at times `times` (s, n) and
    coordinates `qs` (n, nq): at most `max_frames` frames spread over them (the
    first and the last kept); `model` is the model as the user wrote it (its joints
    drawn); `sensors` {name: (n,) or (n, size)} plotted against `times`; `meshes`
    drawn on their bodies; `scale` the starting deflection scale (None: chosen by
    flexmbs.analysis.deflection_scale)."""
    times = np.asarray(times, float)
    qs = np.asarray(qs, float).reshape(len(times), -1)
    shape = DeformedShape(cm, subdivisions)
    body_index = {name: k for k, name in enumerate(cm.topology.body_names)}
    markers = _Markers(cm, cm.model, body_index)
    # every marker drawn has its slot before the frames are made
    chain = _chain(cm, markers)
    joints = _joint_documents(model, markers)
    fe_markers = {  # an FE body's markers are drawn (its triad at ORIGIN is)
        name: {m: markers.of(name, m) for m in item.markers if m != ORIGIN}
        for name, item in cm.model.bodies.items()
        if isinstance(item, FeBody) and name in body_index
    }
    disks = _disk_documents(model, markers)
    rows = _rows_to_draw(len(times), max_frames)
    frames = SceneFrames(cm, shape, markers, chain, disks, len(rows))
    for f, row in enumerate(rows):
        frames.fill(f, float(times[row]), np.ascontiguousarray(qs[row]))
    chosen, size = _deflection_scale(frames, len(rows), scale)
    bodies = _body_documents(cm, chain, frames, fe_markers, subdivisions)
    sensor_docs: list[dict[str, Any]] = []
    sensor_rows = np.arange(0)
    if sensors:
        sensor_docs, sensor_rows = _sensor_documents(times, sensors, sensor_units or {})
    density = payload_density(bodies)
    for doc in bodies:
        for ball in doc.get("payloads", ()):
            ball["radius"] = ball_radius(ball["mass"], density)
    data: dict[str, Any] = {
        "format": 1,
        "title": title,
        "source": source,
        "time": packed(times[rows], "<f8"),
        "bounds": _bounds(frames, bodies),
        "size": size if size > 0.0 else 1.0,
        "scale": {"value": chosen.scale, "largest": chosen.largest, "describe": chosen.describe()},
        "bodies": bodies,
        "markers": markers.document(),
        "joints": joints,
        "disks": disks,
        "relative": packed(frames.relative),
        "markerElastic": packed(frames.elastic),
        "deflection": packed(frames.deflection),
        "fields": _field_documents(frames.fields, frames.fe_largest),
        "fieldValues": packed(frames.fields),
        "feCoordinates": packed(frames.fe_coordinates),
        "sensorTime": packed(times[sensor_rows], "<f8"),
        "sensors": sensor_docs,
        "meshes": [m.document(body_index) for m in meshes],
        "gravity": np.asarray(cm.model.gravity, float).tolist(),
        "payloadDensity": density,
    }
    return Scene(data, chosen, len(rows), moving=frames)


def _chain(cm: CompiledModel, markers: _Markers) -> list[tuple[int, int, int]]:
    """(parent body, marker slot on the parent, marker slot on the child) of each joint
    of the tree, in the topology's order."""
    topo, chain_model = cm.topology, cm.model
    chain = []
    for k, jname in enumerate(topo.joint_names):
        j = chain_model.joints[jname]
        chain.append(
            (
                int(topo.parent[k]),
                markers.of(j.parent, j.parent_marker),
                markers.of(j.child, j.child_marker),
            )
        )
    return chain


def _joint_documents(model: Model, markers: _Markers) -> list[dict[str, Any]]:
    """The glyph of each joint the user wrote (cut joints too), on its child's marker
    (its parent's for a joint to the ground)."""
    joints = []
    for j in model.joints.values():
        on_child = j.child != GROUND
        body, marker = (j.child, j.child_marker) if on_child else (j.parent, j.parent_marker)
        try:
            slot = markers.of(body, marker)
        except ModelError:  # a marker the absolute form does not keep: no glyph
            continue
        glyph, axis = _joint_glyph(np.asarray(j.translation_axes), np.asarray(j.rotation_axes))
        joints.append(
            {
                "name": j.name,
                "type": j.type,
                "glyph": glyph,
                "axis": axis,
                "marker": slot,
                "cut": bool(j.cut),
            }
        )
    return joints


def _disk_documents(model: Model, markers: _Markers) -> list[dict[str, Any]]:
    """The rolling contacts' disks: drawn as disks of their radius, on their axle."""
    disks = []
    for c in getattr(model, "contacts", {}).values():
        if c.radius > 0.0:
            try:
                slot = markers.of(c.disk, c.disk_marker)
            except ModelError:
                continue
            axle = [float(x) for x in c.axis]
            disks.append({"name": c.name, "marker": slot, "axis": axle, "radius": float(c.radius)})
    return disks


def _deflection_scale(
    frames: SceneFrames, nt: int, scale: float | None
) -> tuple[DeflectionScale, float]:
    """(the starting deflection scale, the size of the arm, m): `scale` if given, else
    the readable one for the largest deflection drawn (beams' and FE bodies')."""
    largest = 0.0
    if frames.npoints and nt:
        largest = float(np.linalg.norm(frames.deflection, axis=2).max())
    largest = max(largest, frames.fe_largest)
    size = arm_size(frames.drawn) if nt else 0.0
    if frames.reach:
        size = max(size, float(np.linalg.norm(np.ptp(np.array(frames.reach), axis=0))))
    chosen = readable_scale(largest, size)
    if scale is not None:
        chosen = DeflectionScale(float(scale), chosen.largest, chosen.size)
    return chosen, size


def _body_documents(
    cm: CompiledModel,
    chain: list[tuple[int, int, int]],
    frames: SceneFrames,
    fe_markers: dict[str, dict[str, int]],
    subdivisions: int,
) -> list[dict[str, Any]]:
    """The document of each body of the tree, in its order: its place in the chain,
    and a beam's points, payloads and markers, an FE body's surface and markers (their
    slots `fe_markers`), or a rigid body's markers and centre of mass (the payloads'
    radii set after)."""
    chain_model = cm.model
    names = list(cm.topology.body_names)
    beam_of = {p.body: p for p in frames.beam_parts}
    fe_of = {p.body: k for k, p in enumerate(frames.fe_parts)}
    bodies = []
    point_first = 0
    for b, name in enumerate(names):
        item = chain_model.bodies[name]
        doc: dict[str, Any] = {
            "name": name,
            "parent": chain[b][0],
            "markerP": chain[b][1],
            "markerO": chain[b][2],
        }
        if b in beam_of and isinstance(item, BeamBody):
            doc.update(_beam_body_document(item, beam_of[b].local, point_first, subdivisions))
            point_first += len(beam_of[b].local)
        elif b in fe_of and isinstance(item, FeBody):
            first = int(frames.fe_first[fe_of[b]])
            doc.update(_fe_document(item, frames.surfaces[b], first, fe_markers[name]))
        elif isinstance(item, RigidBody):
            doc["kind"] = "rigid"
            doc.update(_rigid_document(item))
        else:
            doc["kind"] = "rigid"
            doc.update({"markers": {}, "com": [0.0, 0.0, 0.0]})
        bodies.append(doc)
    return bodies


def _beam_body_document(
    item: BeamBody, local: NDArray[np.float64], point_first: int, subdivisions: int
) -> dict[str, Any]:
    """A beam's part of its body's document: its points from `point_first` on, its
    payloads and markers at its nodes' points."""
    doc: dict[str, Any] = {"kind": "beam", "firstPoint": point_first, "points": len(local)}
    doc.update(_beam_document(item, local, subdivisions))
    doc["payloads"] = [
        {"point": doc["nodePoints"][node % len(item.nodes)], "mass": float(m)}
        for node, m in item.node_masses.items()
        if m > 0.0
    ]
    doc["markers"] = {
        mname: doc["nodePoints"][mk.node % len(item.nodes)]
        for mname, mk in item.markers.items()
        if mk.node is not None
    }
    return doc


def _field_documents(fields: NDArray[np.float64], fe_largest: float) -> list[dict[str, Any]]:
    """Each field the page may colour by (FIELDS), with the largest magnitude it takes
    (the FE bodies' displacements included)."""
    return [
        {
            "key": key,
            "label": label,
            "unit": unit,
            "range": max(
                float(np.abs(fields[:, k]).max()) if fields.size else 0.0,
                fe_largest if key == "displacement" else 0.0,
            ),
        }
        for k, (key, label, unit) in enumerate(FIELDS)
    ]


def _bounds(frames: SceneFrames, bodies: list[dict[str, Any]]) -> list[list[float]]:
    """[lower, upper] corners of the box of everything drawn over the frames, widened
    by the largest payload ball's radius."""
    drawn, reach = frames.drawn, frames.reach
    bounds = np.vstack([drawn.reshape(-1, 3), *[r.reshape(1, 3) for r in reach]])
    if len(bounds) == 0:
        bounds = np.zeros((1, 3))
    ball = max((b["radius"] for doc in bodies for b in doc.get("payloads", ())), default=0.0)
    return [(bounds.min(axis=0) - ball).tolist(), (bounds.max(axis=0) + ball).tolist()]
