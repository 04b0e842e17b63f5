"""The Model builder's method that adds sensors (flexmbs.model.description): each
kind of sensor checked by its own step, what it reads and the instrument it reads
through (flexmbs.simulation.instruments)."""

from __future__ import annotations

from typing import cast

import numpy as np
from numpy.typing import ArrayLike

from ..errors import ModelError
from .builder_base import DescriptionBase
from .fe_body import FeBody
from .field_checks import _check_centerline, _check_section_point, _scalar, _vector
from .items import BeamBody, Sensor
from .vocabulary import BEAM_SECTION_SENSORS, FLEXIBLE_BODY_SENSORS, GROUND, SENSOR_TYPES

__all__ = ["SensorItems"]


class SensorItems(DescriptionBase):
    """Model.add_sensor."""

    def add_sensor(
        self,
        name: str,
        type: str,
        joint: str | None = None,
        coordinate: int | None = None,
        body: str | None = None,
        marker: str | None = None,
        frame: str = GROUND,
        actuator: str | None = None,
        element: int = 0,
        at: str | float = "start",
        point: ArrayLike | None = None,
        subdivisions: int = 1,
        contact: str | None = None,
        coupler: str | None = None,
        dead_time: float = 0.0,
        lag: float = 0.0,
        resolution: float = 0.0,
        controller_dead_time: float | None = None,
        controller_lag: float | None = None,
        controller_resolution: float | None = None,
    ) -> Sensor:
        """Record a joint coordinate or rate; a marker's position, orientation
        (rotation matrix, row-major), velocity, angular velocity or elastic deflection
        in the axes of body `frame` (positions relative to its origin); an actuator's
        torque on its joint (N m or N) or the work it has done (J); on a beam body, at
        the position `at` ("start", "end" or xi in [0, 1]) of element `element`: the
        axial strain at the section point `point` = [y, z] (m, section axes), the
        curvatures or the section forces; or the beam's deformed centre line
        (`subdivisions` points per element); or the force of a rolling `contact` on
        its disk and the contact point (type "contact_reaction"); or the generalized
        forces of a `coupler` on its follower's and its leader's coordinates (type
        "coupler_reaction", N m or N). As an instrument
        gives it (flexmbs.simulation.instruments): through a first-order `lag` (time constant,
        s), after a `dead_time` (s), rounded to its `resolution` (an encoder's
        step; 0: none). What a sampled controller reads goes through its own
        `controller_dead_time`, `controller_lag` and `controller_resolution` (None:
        the record's)."""
        item = f'sensor "{name}"'
        _check_names_given(
            item,
            joint=joint,
            body=body,
            marker=marker,
            frame=frame,
            actuator=actuator,
            contact=contact,
            coupler=coupler,
        )
        instrument = _instrument(
            item,
            dead_time=dead_time,
            lag=lag,
            resolution=resolution,
            controller_dead_time=controller_dead_time,
            controller_lag=controller_lag,
            controller_resolution=controller_resolution,
        )
        self._new_name(name, self.sensors, item, sensor=True)
        if type not in SENSOR_TYPES:
            raise ModelError(
                f"expected a sensor type, one of {', '.join(SENSOR_TYPES)}; got {type!r}",
                item,
                "type",
            )
        if type in BEAM_SECTION_SENSORS or type == "beam_centerline":
            self._check_beam_of_sensor(body, frame, item)
        sensor: Sensor
        if type in FLEXIBLE_BODY_SENSORS:
            sensor = self._flexible_body_sensor(name, type, body, item)
        elif type == "beam_centerline":
            sensor = self._centerline_sensor(name, cast(str, body), frame, subdivisions, item)
        elif type in BEAM_SECTION_SENSORS:
            sensor = self._section_sensor(name, type, cast(str, body), element, at, point, item)
        elif type == "contact_reaction":
            sensor = self._contact_sensor(name, contact, frame, item)
        elif type == "coupler_reaction":
            if coupler not in self.couplers:
                raise ModelError(f'unknown coupler "{coupler}"', item, "coupler")
            sensor = Sensor(name, type, coupler=coupler)
        elif type.startswith("actuator"):
            sensor = self._actuator_sensor(name, type, actuator, item)
        elif type in ("joint_reaction", "constraint_residual"):
            sensor = self._cut_joint_sensor(name, type, joint, frame, item)
        elif type.startswith("joint"):
            sensor = self._joint_sensor(name, type, joint, coordinate, item)
        else:
            sensor = self._marker_sensor(name, type, body, marker, frame, item)
        for key, value in instrument.items():
            setattr(sensor, key, value)
        self.sensors[name] = sensor
        return sensor

    def _check_beam_of_sensor(self, body: str | None, frame: str, item: str) -> None:
        """A sensor of a beam's sections or centre line names a beam body and a frame."""
        if body not in self.bodies or not isinstance(self.bodies[body], BeamBody):
            raise ModelError(f'expected a beam body, got "{body}"', item, "body")
        self._check_body(frame, item, "frame")

    def _flexible_body_sensor(self, name: str, type: str, body: str | None, item: str) -> Sensor:
        """A sensor of a whole flexible body (FLEXIBLE_BODY_SENSORS)."""
        if body not in self.bodies or not isinstance(self.bodies[body], (BeamBody, FeBody)):
            raise ModelError(f'expected a flexible body, got "{body}"', item, "body")
        return Sensor(name, type, body=body)

    def _centerline_sensor(
        self, name: str, body: str, frame: str, subdivisions: int, item: str
    ) -> Sensor:
        """A beam's deformed centre line, `subdivisions` points per element."""
        if (
            isinstance(subdivisions, bool)
            or not isinstance(subdivisions, (int, np.integer))
            or subdivisions < 1
        ):
            raise ModelError(
                f"expected a positive integer, got {subdivisions!r}", item, "subdivisions"
            )
        beam = cast(BeamBody, self.bodies[body])
        _check_centerline(int(subdivisions), len(beam.connectivity), len(beam.free), item)
        return Sensor(
            name, "beam_centerline", body=body, frame=frame, subdivisions=int(subdivisions)
        )

    def _section_sensor(
        self,
        name: str,
        type: str,
        body: str,
        element: int,
        at: str | float,
        point: ArrayLike | None,
        item: str,
    ) -> Sensor:
        """A section's strain at a point, its curvatures or its forces, at `at` along
        element `element` of the beam `body`."""
        beam = cast(BeamBody, self.bodies[body])
        ne = len(beam.connectivity)
        if (
            isinstance(element, bool)
            or not isinstance(element, (int, np.integer))
            or not -ne <= element < ne
        ):
            raise ModelError(
                f"expected an element index 0..{ne - 1} (or -1 for the last), got {element!r}",
                item,
                "element",
            )
        _check_place_along_element(at, item)
        pt = None
        if type == "beam_strain":
            if point is None:
                raise ModelError(
                    "a beam_strain sensor needs the section point [y, z] (m)", item, "point"
                )
            pt = _vector(point, 2, item, "point")
            _check_section_point(beam, pt, item)
        elif point is not None:
            raise ModelError(f"a {type} sensor takes no section point", item, "point")
        return Sensor(name, type, body=body, element=int(element) % ne, at=at, point=pt)

    def _contact_sensor(self, name: str, contact: str | None, frame: str, item: str) -> Sensor:
        """The force of a rolling contact on its disk and the contact point."""
        if contact not in self.contacts:
            raise ModelError(f'unknown contact "{contact}"', item, "contact")
        self._check_body(frame, item, "frame")
        return Sensor(name, "contact_reaction", contact=contact, frame=frame)

    def _actuator_sensor(self, name: str, type: str, actuator: str | None, item: str) -> Sensor:
        """An actuator's torque, work, or a DC motor's current or voltage."""
        if actuator not in self.actuators:
            raise ModelError(f'unknown actuator "{actuator}"', item, "actuator")
        electric = type in ("actuator_current", "actuator_voltage")
        if electric and self.actuators[actuator].type != "dc_motor":
            raise ModelError(
                f'a {type} sensor reads a "dc_motor" actuator; "{actuator}" is a '
                f'"{self.actuators[actuator].type}"',
                item,
                "actuator",
            )
        return Sensor(name, type, actuator=actuator)

    def _cut_joint_sensor(
        self, name: str, type: str, joint: str | None, frame: str, item: str
    ) -> Sensor:
        """A joint's reaction or a cut joint's constraint residual."""
        if joint not in self.joints:
            raise ModelError(f'unknown joint "{joint}"', item, "joint")
        self._check_body(frame, item, "frame")
        return Sensor(name, type, joint=joint, frame=frame)

    def _joint_sensor(
        self, name: str, type: str, joint: str | None, coordinate: int | None, item: str
    ) -> Sensor:
        """A joint coordinate or rate (the joint's only one when `coordinate` is None)."""
        if joint not in self.joints:
            raise ModelError(f'unknown joint "{joint}"', item, "joint")
        nd = self.joints[joint].ndof
        if coordinate is None:
            coordinate = 0
            if nd > 1:
                raise ModelError(
                    f'joint "{joint}" has {nd} coordinates: say which', item, "coordinate"
                )
        if (
            isinstance(coordinate, bool)
            or not isinstance(coordinate, (int, np.integer))
            or not 0 <= coordinate < nd
        ):
            raise ModelError(
                f"expected a coordinate index 0..{nd - 1}, got {coordinate!r}",
                item,
                "coordinate",
            )
        return Sensor(name, type, joint=joint, coordinate=int(coordinate))

    def _marker_sensor(
        self,
        name: str,
        type: str,
        body: str | None,
        marker: str | None,
        frame: str,
        item: str,
    ) -> Sensor:
        """A marker's position, orientation, velocities or elastic deflection in the
        axes of body `frame`."""
        for fld, v in (("body", body), ("marker", marker)):
            if v is None:
                raise ModelError(f"a {type} sensor needs a '{fld}'", item, fld)
        assert body is not None
        self._check_body(body, item, "body")
        self._check_marker(body, marker, item, "marker")
        self._check_body(frame, item, "frame")
        if type == "marker_deflection" and (
            body == GROUND or not isinstance(self.bodies[body], (BeamBody, FeBody))
        ):
            raise ModelError(
                "a marker_deflection sensor reads a marker on a flexible "
                f'body; "{body}" is not one',
                item,
                "body",
            )
        return Sensor(name, type, body=body, marker=marker, frame=frame)


def _check_names_given(item: str, **names: object) -> None:
    """Each of the fields that name another item is a name (or None)."""
    for fld, given in names.items():
        if given is not None and not isinstance(given, str):
            raise ModelError(
                f"expected a name, got {given.__class__.__name__} {given!r}", item, fld
            )


def _instrument(item: str, **fields: float | None) -> dict[str, float | None]:
    """The instrument's times and resolution (s, s, the value's unit), each >= 0: the
    record's dead_time, lag and resolution, and the controller_* ones (None: the
    record's)."""
    return {
        key: (
            None
            if value is None and key.startswith("controller_")
            else _scalar(value, item, key, nonnegative=True)
        )
        for key, value in fields.items()
    }


def _check_place_along_element(at: object, item: str) -> None:
    """`at` is "start", "end" or a number in [0, 1]."""
    xi = (
        {"start": 0.0, "end": 1.0}.get(at)
        if isinstance(at, str)
        else (None if isinstance(at, bool) else at)
    )
    if not isinstance(xi, (int, float, np.floating, np.integer)) or not 0.0 <= xi <= 1.0:
        raise ModelError(
            f"expected 'start', 'end' or a number in [0, 1] (the "
            f"position along the element), got {at!r}",
            item,
            "at",
        )
