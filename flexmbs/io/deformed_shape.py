"""What is drawn of a compiled model at a state: every beam as its deformed centre line,
every rigid body as lines from its frame to its markers, every joint as a point.

A beam's centre-line points are the undeformed points P (body axes,
`flexmbs.model.sensor_tables.centerline_points`, `subdivisions` per element) moved by
the elastic displacement d = C qf, all turned into global axes by the body's pose:

    x = r + A (P + C qf)    (m, global axes)

with their point data, each a linear form of the beam's elastic coordinates qf
(docs/explanation/formulation.md section 3):

* `elastic_displacement` (3, m, body axes): d = C qf;
* `outer_fibre_strain` (1): the axial strain eps = u' - y v'' - z w'' at the four outer
  fibres (y, z) = (+-max_y, 0), (0, +-max_z) of the section, the one of largest
  magnitude with its sign (0 when the section gives no outer fibres);
* `section_forces` (6: N, V_y, V_z, T, M_y, M_z; N and N m, element frame)
  (`flexmbs.elements.beam.section_force_rows`).

Points of rigid bodies and joints carry zeros there. Every cell has `body`, the index
of its body in `body_names` (joints: the index of the joint's child).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

import numpy as np
from numpy.typing import NDArray

from ..elements.beam import axial_strain_row, element_length, section_force_rows
from ..kinematics.recursive import forward_kinematics
from ..model.compiled import with_node_inertias
from ..model.description import GROUND, BeamBody, FeBody
from ..model.sensor_tables import centerline_points, element_rows

if TYPE_CHECKING:
    from ..model.compiled import CompiledModel

__all__ = ["DeformedShape", "ShapeFrame", "POINT_DATA", "DEFAULT_SUBDIVISIONS"]

DEFAULT_SUBDIVISIONS = 4
POINT_DATA = {"elastic_displacement": 3, "outer_fibre_strain": 1, "section_forces": 6}
SECTION_FORCE_NAMES = ("N", "V_y", "V_z", "T", "M_y", "M_z")


@dataclass
class ShapeFrame:
    """The drawing at one state: points (n, 3) m global, point data by POINT_DATA."""

    points: NDArray[np.float64]
    point_data: dict[str, NDArray[np.float64]]


@dataclass
class _BeamPart:
    body: int  # index in the compiled bodies (the pose's row)
    q_first: int  # its first elastic coordinate in q
    nf: int
    first_point: int
    local: NDArray[np.float64]  # (npt, 3) undeformed points, body axes
    displacement: NDArray[np.float64]  # (3 npt, nf)
    fibre_strain: NDArray[np.float64]  # (npt, 4, nf)
    forces: NDArray[np.float64]  # (npt, 6, nf)


def _element_places(beam: BeamBody, subdivisions: int) -> list[tuple[int, float]]:
    """(element, xi) of each centre-line point, in the order of centerline_points."""
    places = []
    for e in range(len(beam.connectivity)):
        first = 0 if e == 0 else 1
        places += [(e, k / subdivisions) for k in range(first, subdivisions + 1)]
    return places


def _beam_rows(beam: BeamBody, subdivisions: int) -> tuple[NDArray, NDArray, NDArray, NDArray]:
    local, displacement = centerline_points(beam, subdivisions)
    section = beam.section
    fibres: list[tuple[float, float]] = []
    if section.max_y is not None:
        fibres += [(section.max_y, 0.0), (-section.max_y, 0.0)]
    if section.max_z is not None:
        fibres += [(0.0, section.max_z), (0.0, -section.max_z)]
    places = _element_places(beam, subdivisions)
    strain = np.zeros((len(places), 4, beam.nf))
    forces = np.zeros((len(places), 6, beam.nf))
    for k, (e, xi) in enumerate(places):
        a, b = beam.connectivity[e]
        length = element_length(beam.nodes[a], beam.nodes[b])
        for j, (y, z) in enumerate(fibres):
            strain[k, j] = element_rows(beam, e, axial_strain_row(xi, y, z, length))[0]
        rows = section_force_rows(xi, length, beam.section, beam.material)
        forces[k] = element_rows(beam, e, rows)
    return local, displacement, strain, forces


class DeformedShape:
    """The drawing of compiled model `cm` (flexmbs.model.compiled.CompiledModel): its
    topology (lines, vertices, each cell's body) once, and `frame(t, q)` the points and
    point data at a state. `subdivisions`: centre-line points per beam element."""

    def __init__(self, cm: CompiledModel, subdivisions: int = DEFAULT_SUBDIVISIONS) -> None:
        self.cm = cm
        self._ws = cm.new_workspace()  # one for every frame
        self._rest = np.zeros(cm.nq)  # u = 0: poses only
        model = with_node_inertias(cm.model)  # the bodies the topology names
        names = list(cm.topology.body_names)
        self.body_names = names
        index = {name: k for k, name in enumerate(names)}
        flex_q = cm.arrays.flex_q
        flex_nf = cm.arrays.flex_nf
        self.beams: list[_BeamPart] = []
        # (body, first point, local points (frame origin, then the markers))
        self._rigid: list[tuple[int, int, NDArray[np.float64]]] = []
        lines: list[list[int]] = []
        line_body: list[int] = []
        npoints = 0
        flexible = {b.name: (k, b) for k, (_, b) in enumerate(cm.beams)}
        for name in names:
            body = model.bodies[name]
            if name in flexible and isinstance(flexible[name][1], FeBody):
                k, fe = flexible[name]
                local, disp, edges = cast(FeBody, fe).drawing()
                part = _BeamPart(
                    index[name],
                    int(flex_q[k]),
                    int(flex_nf[k]),
                    npoints,
                    local,
                    disp,
                    np.zeros((len(local), 4, fe.nf)),
                    np.zeros((len(local), 6, fe.nf)),
                )
                self.beams.append(part)
                for edge in edges:
                    lines.append([npoints + v for v in edge])
                    line_body.append(index[name])
                npoints += len(local)
            elif name in flexible:
                k, beam = flexible[name]
                local, disp, strain, forces = _beam_rows(cast(BeamBody, beam), subdivisions)
                part = _BeamPart(
                    index[name],
                    int(flex_q[k]),
                    int(flex_nf[k]),
                    npoints,
                    local,
                    disp,
                    strain,
                    forces,
                )
                self.beams.append(part)
                lines.append(list(range(npoints, npoints + len(local))))
                line_body.append(index[name])
                npoints += len(local)
            else:
                markers = [np.asarray(m.position, float) for m in body.markers.values()]
                away = [p for p in markers if np.linalg.norm(p) > 0.0]
                local = np.array([np.zeros(3)] + away)
                self._rigid.append((index[name], npoints, local))
                for j in range(1, len(local)):
                    lines.append([npoints, npoints + j])
                    line_body.append(index[name])
                npoints += len(local)
        self._joints = [
            (index[j.child], j.child, j.child_marker)
            for j in model.joints.values()
            if j.child != GROUND
        ]
        # each joint's point on its child: (undeformed position, translation rows over
        # the child's qf or None), read once (an FE body's basis is not at hand free)
        self._joint_points: list[tuple[NDArray[np.float64], NDArray[np.float64] | None]] = []
        for _, name, marker_name in self._joints:
            child = model.bodies[name]
            marker = child.markers[marker_name]
            if isinstance(child, FeBody) and marker.node is not None:
                rows = child.node_rows(marker.node)[:3]
                self._joint_points.append((np.asarray(marker.position, float), rows))
            elif isinstance(child, BeamBody) and marker.node is not None:
                node = marker.node % len(child.nodes)
                self._joint_points.append((child.nodes[node], child.node_rows(node)[:3]))
            else:
                self._joint_points.append((np.asarray(marker.position, float), None))
        self.vertices = list(range(npoints, npoints + len(self._joints)))
        self.vertex_body = [b for b, _, _ in self._joints]
        self.lines = lines
        self._part_of = {p.body: p for p in self.beams}
        self.line_body = line_body
        self.npoints = npoints + len(self._joints)
        self._model = model

    def frame(self, t: float, q: NDArray[np.float64], scale: float = 1.0) -> ShapeFrame:
        """The points (global axes, m) and point data at time t (s) and coordinates q;
        `scale` magnifies the elastic coordinates before the kinematics, so that a
        magnified beam carries the bodies it holds with it; the point data stay those of
        q."""
        if scale != 1.0:
            shown = np.array(q, dtype=float)
            for part in self.beams:
                shown[part.q_first : part.q_first + part.nf] *= scale
            scaled = self.frame(t, shown)
            true = self.frame(t, q)
            return ShapeFrame(scaled.points, true.point_data)
        forward_kinematics(
            self.cm.arrays,
            self._ws,
            float(t),
            np.ascontiguousarray(q, dtype=float),
            self._rest,
        )
        r, rot = self._ws.r, self._ws.rot
        points = np.zeros((self.npoints, 3))
        data = {name: np.zeros((self.npoints, size)) for name, size in POINT_DATA.items()}
        for part in self.beams:
            qf = q[part.q_first : part.q_first + part.nf]
            d = (part.displacement @ qf).reshape(-1, 3)
            deformed = part.local + d
            rows = slice(part.first_point, part.first_point + len(deformed))
            points[rows] = r[part.body] + deformed @ rot[part.body].T
            data["elastic_displacement"][rows] = d
            strain = part.fibre_strain @ qf
            pick = np.argmax(np.abs(strain), axis=1)
            data["outer_fibre_strain"][rows, 0] = strain[np.arange(len(strain)), pick]
            data["section_forces"][rows] = part.forces @ qf
        for body, first, local in self._rigid:
            points[first : first + len(local)] = r[body] + local @ rot[body].T
        for k, (body, _, _) in enumerate(self._joints):
            position, terms = self._joint_points[k]
            if terms is not None:
                part = self._part_of[body]
                position = position + terms @ q[part.q_first : part.q_first + part.nf]
            points[self.vertices[k]] = r[body] + rot[body] @ position
        return ShapeFrame(points, data)
