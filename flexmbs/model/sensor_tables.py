"""Sensors compiled into the arrays that `flexmbs.dynamics.sensors` reads.

Joint and actuator sensors name a coordinate or an actuator; marker sensors a marker
of the compiled marker table (`flexmbs.model.compiled`); beam sensors are linear in
the elastic coordinates, so they become rows over q: the axial strain at a section
point, the curvatures and the section forces at a place along an element
(`flexmbs.elements.beam`), and the displacements of the centre-line points, which the
kernel adds to their undeformed positions.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, cast

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..elements.beam import (
    axial_strain_row,
    curvature_rows,
    element_frame,
    element_length,
    element_transformation,
    section_force_rows,
    shape_matrix,
)
from ..errors import ModelError
from .description import GROUND, BeamBody

if TYPE_CHECKING:
    from .description import Model
    from .items import Joint, Sensor

__all__ = [
    "SENSOR_CODES",
    "SENSOR_SIZES",
    "SensorTables",
    "sensor_tables",
    "element_rows",
    "centerline_points",
]

SENSOR_CODES = {
    "joint_coordinate": 0,
    "joint_rate": 1,
    "marker_position": 2,
    "marker_orientation": 3,
    "marker_velocity": 4,
    "marker_angular_velocity": 5,
    "actuator_torque": 6,
    "actuator_work": 7,
    "beam_strain": 8,
    "marker_deflection": 9,
    "beam_curvature": 10,
    "beam_section_forces": 11,
    "beam_centerline": 12,
    "joint_reaction": 13,
    "constraint_residual": 14,
    "contact_reaction": 16,
    "coupler_reaction": 25,
    "strain_energy": 21,
    "elastic_coordinates": 22,
    "actuator_current": 23,
    "actuator_voltage": 24,
}
SENSOR_SIZES = {
    0: 1,
    1: 1,
    2: 3,
    3: 9,
    4: 3,
    5: 3,
    6: 1,
    7: 1,
    8: 1,
    9: 3,
    10: 2,
    11: 6,
    13: 6,
    16: 6,
    17: 1,
    18: 1,
    19: 1,
    20: 1,
    21: 1,
    23: 1,
    24: 1,
    25: 2,
}
CUT_COORDINATE_CODES = {
    (0, "translation"): 17,
    (1, "translation"): 18,
    (0, "rotation"): 19,
    (1, "rotation"): 20,
}
# joint_coordinate / joint_rate of a cut joint: from its two markers (sensor_values)
# beam_centerline: 3 per point; constraint_residual: 2 per row
ROW_ZERO = 1e-300  # |coefficient| at or below this is left out of a row


@dataclass
class SensorTables:
    """`arrays`: the sensor fields of ModelArrays; `sizes`: values per sensor."""

    arrays: dict
    sizes: list


def _xi(at: str | float) -> float:
    return {"start": 0.0, "end": 1.0}[at] if isinstance(at, str) else float(at)


def element_rows(beam: BeamBody, element: int, rows: ArrayLike) -> NDArray[np.float64]:
    """rows (k, 12) over an element's coordinates (element frame) turned into rows
    (k, nf) over the beam's elastic coordinates: e = T [node_rows(a); node_rows(b)] qf
    (docs/explanation/formulation.md section 3: T, B1, B2, and the mode basis if any)."""
    a, b = beam.connectivity[element]
    frame = element_frame(beam.nodes[a], beam.nodes[b], beam.reference)
    to_qf = element_transformation(frame) @ np.vstack([beam.node_rows(a), beam.node_rows(b)])
    return np.atleast_2d(rows) @ to_qf


def centerline_points(
    beam: BeamBody, subdivisions: int
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(positions (npt, 3), rows (3 npt, nf)): the undeformed points of the beam's
    axis, `subdivisions` per element (nodes included, each once), body axes, and the
    rows of their elastic displacement C S(xi, 0, 0) T over qf."""
    positions, rows = [], []
    for e, (a, b) in enumerate(beam.connectivity):
        frame = element_frame(beam.nodes[a], beam.nodes[b], beam.reference)
        length = element_length(beam.nodes[a], beam.nodes[b])
        first = 0 if e == 0 else 1
        for k in range(first, subdivisions + 1):
            xi = k / subdivisions
            positions.append(beam.nodes[a] + xi * length * frame[:, 0])
            rows.append(frame @ element_rows(beam, e, shape_matrix(xi, 0.0, 0.0, length)))
    return np.array(positions), np.vstack(rows)


def _beam_section_rows(beam: BeamBody, sensor: Sensor) -> NDArray[np.float64]:
    assert sensor.element is not None and sensor.at is not None  # set by Model.add_sensor
    a, b = beam.connectivity[sensor.element]
    length = element_length(beam.nodes[a], beam.nodes[b])
    xi = _xi(sensor.at)
    if sensor.type == "beam_strain":
        assert sensor.point is not None
        rows = axial_strain_row(xi, sensor.point[0], sensor.point[1], length)
    elif sensor.type == "beam_curvature":
        rows = curvature_rows(xi, length)
    else:
        rows = section_force_rows(xi, length, beam.section, beam.material)
    return element_rows(beam, sensor.element, rows)


def _cut_coordinate_axis(
    joint: Joint, coordinate: int, item: str
) -> tuple[str, NDArray[np.float64]]:
    """("translation" or "rotation", its axis in the parent marker's frame) of
    coordinate `coordinate` of a cut joint, which its two markers give exactly when the
    translation axes are orthogonal (d_k = (p_child - p_parent) . A_P a_k) and when the
    joint has one rotation (the angle about it); ModelError otherwise."""
    ntrans = len(joint.translation_axes)
    if coordinate < ntrans:
        axes = np.asarray(joint.translation_axes)
        if np.abs(axes @ axes.T - np.eye(ntrans)).max() > 1e-12:
            raise ModelError(
                f'joint "{joint.name}" is cut and its translation axes are not '
                "orthogonal: its coordinates cannot be read from its "
                "markers",
                item,
                "joint",
            )
        return "translation", axes[coordinate]
    if len(joint.rotation_axes) != 1:
        raise ModelError(
            f'joint "{joint.name}" is cut and has '
            f"{len(joint.rotation_axes)} rotations: the angle of a cut joint "
            "is read only for a joint with one rotation (revolute, "
            "cylindrical, planar)",
            item,
            "coordinate",
        )
    return "rotation", np.asarray(joint.rotation_axes[0])


def sensor_tables(
    model: Model,
    sensors: Sequence[Sensor],
    body_index: Mapping[str, int],
    coord_of: Mapping[tuple[str, int], int],
    act_index: Mapping[str, int],
    marker_id: Callable[[str, str], int],
    flex_q: Mapping[str, int],
    geo_first: Mapping[str, int],
    cut_joints: Sequence[str] = (),
    contacts: Sequence[str] = (),
) -> SensorTables:
    """SensorTables of `sensors`. body_index: body name -> index; coord_of:
    (joint, coordinate) -> column; act_index: actuator name -> index;
    marker_id(body, marker) -> marker-table index; flex_q: beam name -> q index of its
    first elastic coordinate; geo_first: beam name -> index of its first element in
    the geometric-stiffness tables (beams with geometric stiffness only); cut_joints:
    the names of the cut joints, in the order of the constraint tables (the reaction
    and constraint sensors name one); contacts: the names of the rolling contacts, in
    the order of the constraint tables (contact_reaction sensors name one).

    With consistent geometric stiffness the axial strain of the axis is the membrane
    strain
    u' + sbar/2 (docs/explanation/formulation.md section 6: the strain whose square the consistent
    energy 1/2 EA l (u' + sbar/2)^2 holds; sbar the element mean of v'^2 + w'^2; the
    thesis's variants keep the linear u', as the thesis computed its strains): the
    kernel adds sensor_geo_coef sbar / 2 to the first value of a beam_strain or
    beam_section_forces sensor (coefficient 1, or EA for the normal force N)."""
    compiler = _SensorCompiler(
        model,
        body_index,
        coord_of,
        act_index,
        marker_id,
        flex_q,
        geo_first,
        list(cut_joints),
        list(contacts),
    )
    rows = [compiler.row(s) for s in sensors]
    sizes = [int(r.size) for r in rows]
    lin_rows = compiler.lin_rows
    lin_ptr = np.zeros(len(lin_rows) + 1, dtype=np.int64)
    lin_ptr[1:] = np.cumsum([len(r) for r in lin_rows])
    i64 = np.int64
    arrays = dict(
        sensor_type=np.array([r.code for r in rows], dtype=i64),
        sensor_coord=np.array([r.coord for r in rows], dtype=i64),
        sensor_marker=np.array([r.marker for r in rows], dtype=i64),
        sensor_body=np.array([r.body for r in rows], dtype=i64),
        sensor_frame=np.array([r.frame for r in rows], dtype=i64),
        sensor_point=np.array([r.point for r in rows], dtype=i64),
        sensor_geo=np.array([r.geo for r in rows], dtype=i64),
        sensor_geo_coef=np.array([r.geo_coef for r in rows], dtype=float),
        sensor_offset=np.array(np.cumsum([0, *sizes]), dtype=i64),
        lin_ptr=lin_ptr,
        lin_q=np.array([q for r in lin_rows for q, _ in r], dtype=i64),
        lin_coef=np.array([c for r in lin_rows for _, c in r], dtype=float),
        point_position=np.array(compiler.points, dtype=float).reshape(-1, 3),
    )
    return SensorTables(arrays, sizes)


@dataclass
class _SensorRow:
    """One sensor's entries of the tables (-1: none): its code (SENSOR_CODES, or the
    code of a variant), the coordinate, actuator, constraint or first linear row it
    reads, its marker, body and frame, its first point, its first element in the
    geometric-stiffness tables with the coefficient of sbar / 2, and its size."""

    code: int
    size: int
    coord: int = -1
    marker: int = -1
    body: int = -1
    frame: int = -1
    point: int = -1
    geo: int = -1
    geo_coef: float = 0.0


@dataclass
class _SensorCompiler:
    """The rows of the sensors one by one (sensor_tables' arguments), with the linear
    rows over q and the points they add."""

    model: Model
    body_index: Mapping[str, int]
    coord_of: Mapping[tuple[str, int], int]
    act_index: Mapping[str, int]
    marker_id: Callable[[str, str], int]
    flex_q: Mapping[str, int]
    geo_first: Mapping[str, int]
    cut_joints: list[str]
    contacts: list[str]
    lin_rows: list[list[tuple[int, float]]] = field(default_factory=list)
    points: list[NDArray[np.float64]] = field(default_factory=list)

    def add_rows(self, rows: NDArray[np.float64], q_first: int) -> int:
        """Keep linear rows over the elastic coordinates from q index `q_first` (their
        nonzero coefficients); the index of the first."""
        first = len(self.lin_rows)
        for row in np.atleast_2d(rows):
            self.lin_rows.append(
                [(q_first + j, float(c)) for j, c in enumerate(row) if abs(c) > ROW_ZERO]
            )
        return first

    def frame_of(self, s: Sensor) -> int:
        """The index of the body whose axes the sensor's values are in (-1: global)."""
        return -1 if s.frame == GROUND else self.body_index[cast(str, s.frame)]

    def row(self, s: Sensor) -> _SensorRow:
        """The entries of sensor `s` (the fields its type names are set by
        Model.add_sensor: the asserts say so)."""
        code = SENSOR_CODES[s.type]
        size = SENSOR_SIZES.get(code, 0)
        if code in (0, 1):
            return self._joint_row(s, code, size)
        if code in (6, 7, 23, 24):
            assert s.actuator is not None
            return _SensorRow(code, size, coord=self.act_index[s.actuator])
        if code in (8, 10, 11):
            return self._section_row(s, code, size)
        if code == 21:
            assert s.body is not None
            return _SensorRow(code, size, body=self.body_index[s.body])
        if code == 22:
            assert s.body is not None
            nf = cast(BeamBody, self.model.bodies[s.body]).nf
            coord = self.add_rows(np.eye(nf), self.flex_q[s.body])
            return _SensorRow(code, nf, coord=coord, body=self.body_index[s.body])
        if code == 12:
            return self._centerline_row(s, code)
        if code in (13, 14):
            return self._reaction_row(s, code, size)
        if code == 25:
            assert s.coupler is not None
            return _SensorRow(code, size, coord=list(self.model.couplers).index(s.coupler))
        if code == 16:
            assert s.contact is not None
            coord = self.contacts.index(s.contact)
            return _SensorRow(code, size, coord=coord, frame=self.frame_of(s))
        assert s.body is not None and s.marker is not None
        return _SensorRow(
            code,
            size,
            marker=self.marker_id(s.body, s.marker),
            body=-1 if s.body == GROUND else self.body_index[s.body],
            frame=self.frame_of(s),
        )

    def _joint_row(self, s: Sensor, code: int, size: int) -> _SensorRow:
        """A joint coordinate or rate: a column of the tree, or of a cut joint read
        from its two markers along the coordinate's axis (a point)."""
        assert s.joint is not None and s.coordinate is not None
        if s.joint not in self.cut_joints:
            return _SensorRow(code, size, coord=self.coord_of[(s.joint, s.coordinate)])
        joint = self.model.joints[s.joint]
        kind, axis = _cut_coordinate_axis(joint, s.coordinate, f'sensor "{s.name}"')
        self.points.append(axis)
        return _SensorRow(
            CUT_COORDINATE_CODES[(code, kind)],
            size,
            coord=self.cut_joints.index(s.joint),
            point=len(self.points) - 1,
        )

    def _section_row(self, s: Sensor, code: int, size: int) -> _SensorRow:
        """A beam section's strain, curvatures or forces: linear rows, and with the
        consistent geometric stiffness the membrane strain's term."""
        assert s.body is not None and s.element is not None
        beam = self.model.bodies[s.body]
        assert isinstance(beam, BeamBody)
        row = _SensorRow(
            code,
            size,
            coord=self.add_rows(_beam_section_rows(beam, s), self.flex_q[s.body]),
            body=self.body_index[s.body],
        )
        if code != 10 and s.body in self.geo_first and beam.geometric == "consistent":
            row.geo = self.geo_first[s.body] + s.element
            row.geo_coef = 1.0 if code == 8 else beam.material.youngs_modulus * beam.section.area
        return row

    def _centerline_row(self, s: Sensor, code: int) -> _SensorRow:
        """A beam's centre line: its undeformed points and the rows of their
        displacements."""
        assert s.body is not None and s.subdivisions is not None
        beam = self.model.bodies[s.body]
        assert isinstance(beam, BeamBody)
        pos, rows = centerline_points(beam, s.subdivisions)
        coord = self.add_rows(rows, self.flex_q[s.body])
        self.points += list(pos)
        return _SensorRow(
            code,
            3 * len(pos),
            coord=coord,
            body=self.body_index[s.body],
            frame=self.frame_of(s),
            point=len(self.points) - len(pos),
        )

    def _reaction_row(self, s: Sensor, code: int, size: int) -> _SensorRow:
        """A joint's reaction (a tree joint's from its child body: code 15) or a cut
        joint's reaction or constraint residual."""
        assert s.joint is not None
        joint = self.model.joints[s.joint]
        if code == 13 and s.joint not in self.cut_joints:
            body = self.body_index[joint.child]
            return _SensorRow(
                15,
                size,
                coord=body,
                marker=self.marker_id(joint.child, joint.child_marker),
                body=body,
                frame=self.frame_of(s),
            )
        if s.joint not in self.cut_joints:
            raise ModelError(
                f'joint "{s.joint}" is a joint of the tree: {s.type} '
                "sensors read cut joints (closed loops; mark the joint "
                "cut = true)",
                f'sensor "{s.name}"',
                "joint",
            )
        if code == 14:
            size = 2 * (6 - joint.ndof)
        return _SensorRow(code, size, coord=self.cut_joints.index(s.joint), frame=self.frame_of(s))
