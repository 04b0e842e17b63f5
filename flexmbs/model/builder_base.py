"""What every `add_*` method of the Model builder (flexmbs.model.description) shares:
the tables of the items, and the checks of a new item's name and of the bodies,
markers and joint coordinates it names. The methods themselves are grouped by the
items they add: bodies and markers (flexmbs.model.builder_bodies), joints and loads
(builder_joints), the rig's motors and their controllers (builder_rig), sensors
(builder_sensors)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from ..errors import ModelError
from .fe_body import FeBody
from .field_checks import _check_joint_coordinate, _vector
from .items import Marker, OutputSettings, SolverSettings
from .vocabulary import GENERATED_PREFIX, GROUND, NAME_PATTERN, ORIGIN, SENSOR_NAME_PATTERN

if TYPE_CHECKING:
    from .backlash import Backlash
    from .controllers import Controller
    from .coupler import Coupler
    from .friction import Friction
    from .items import Actuator, BeamBody, Contact, Driver, Force, Joint, RigidBody, Sensor, Spring
    from .user_laws import UserLawItem

__all__ = ["DescriptionBase"]


class DescriptionBase:
    """A model's items by kind, each a table {name: item} in the order they were added,
    and the checks its builder methods share."""

    def __init__(self, name: str = "model", gravity: ArrayLike = (0.0, 0.0, -9.81)) -> None:
        if not isinstance(name, str) or not name.strip() or "/" in name or "\\" in name:
            raise ModelError(
                "expected a non-empty name without '/' or '\\' (it names the "
                f"default result file), got {name!r}",
                "model",
                "name",
            )
        self.name = name
        self.gravity = _vector(gravity, 3, "model", "gravity")
        self.bodies: dict[str, RigidBody | BeamBody | FeBody] = {}
        self.ground_markers = {ORIGIN: Marker(ORIGIN, GROUND, np.zeros(3), np.eye(3))}
        self.joints: dict[str, Joint] = {}
        self.drivers: dict[str, Driver] = {}
        self.couplers: dict[str, Coupler] = {}
        self.actuators: dict[str, Actuator] = {}
        self.forces: dict[str, Force] = {}
        self.springs: dict[str, Spring] = {}
        self.user_laws: dict[str, UserLawItem] = {}
        self.frictions: dict[str, Friction] = {}
        self.backlashes: dict[str, Backlash] = {}
        self.controllers: dict[str, Controller] = {}
        self.sensors: dict[str, Sensor] = {}
        self.contacts: dict[str, Contact] = {}
        self.solver = SolverSettings()
        self.output = OutputSettings()
        self.source_path: str | None = None
        self.source_text: str | None = None
        self.overrides: list[str] = []
        self.given_angles: list[tuple[str, float]] = []
        """(where, value) of the angles given as numbers that the description keeps as
        something else (a marker's euler_xyz, kept as its rotation): for the notes on
        values unlikely in radians (flexmbs.checks.plausibility)."""

    def _markers_of(self, body: str, item: str | None) -> dict[str, Marker]:
        if body == GROUND:
            return self.ground_markers
        if body not in self.bodies:
            raise ModelError(f'unknown body "{body}"', item, "body")
        return self.bodies[body].markers

    def _check_body(self, body: str | None, item: str, fld: str) -> None:
        """`body` names the ground or a body of the model."""
        if body != GROUND and body not in self.bodies:
            raise ModelError(f'unknown body "{body}"', item, fld)

    def _check_marker(self, body: str, marker: str | None, item: str, fld: str) -> None:
        """`marker` names a marker of `body` (a known body or the ground)."""
        if marker not in self._markers_of(body, item):
            raise ModelError(f'unknown marker "{marker}" on body "{body}"', item, fld)

    def _new_body(self, name: str, item: str) -> None:
        """A name for a new body: as _new_name's, and not the ground's."""
        self._new_name(name, self.bodies, item, self.joints, "joint")
        if name == GROUND:
            raise ModelError(f'"{GROUND}" is reserved for the fixed frame', item, "name")

    def _check_coordinate_free(self, joint: str, coordinate: int, item: str) -> None:
        """`coordinate` is an index of `joint`'s coordinates that has no driver and no
        actuator yet (a coordinate takes one of them)."""
        _check_joint_coordinate(self.joints, joint, coordinate, item)
        taken: tuple[tuple[Mapping[str, Driver | Actuator], str], ...] = (
            (self.drivers, "is already driven by driver"),
            (self.actuators, "already has actuator"),
        )
        for table, text in taken:
            for other in table.values():
                if other.joint == joint and other.coordinate == coordinate:
                    raise ModelError(
                        f'coordinate {coordinate} of joint "{joint}" {text} "{other.name}"',
                        item,
                        "coordinate",
                    )

    @staticmethod
    def _new_name(
        name: str,
        table: Mapping[str, object],
        item: str,
        other: Mapping[str, object] | None = None,
        other_kind: str = "",
        sensor: bool = False,
    ) -> None:
        """A name for a new item of `table`: non-empty, of NAME_PATTERN's characters
        (a dot would be read as a separator of coordinate names and of --set paths),
        not in `table` nor in `other` (bodies and joints, whose names make the
        coordinate names). Names that start with GENERATED_PREFIX are the items
        flexmbs adds itself (flexmbs.model.absolute), which no user name can be."""
        if not isinstance(name, str) or not name:
            raise ModelError("expected a non-empty name", item, "name")
        if name.startswith(GENERATED_PREFIX):  # an item flexmbs makes (absolute form)
            if name in table:
                raise ModelError("the name is used twice", item, "name")
            return
        if sensor and not SENSOR_NAME_PATTERN.fullmatch(name):
            raise ModelError(
                f"expected a name without spaces or '/', and not of dots alone (it "
                f"names a dataset of the result file), got {name!r}",
                item,
                "name",
            )
        if not sensor and not NAME_PATTERN.fullmatch(name):
            raise ModelError(
                f"expected a name of letters, digits, '_' and '-' (no "
                f"spaces or dots: dots separate the parts of coordinate "
                f"names and --set paths), got {name!r}",
                item,
                "name",
            )
        if name in table:
            raise ModelError("the name is used twice", item, "name")
        if other is not None and name in other:
            raise ModelError(
                f"the name is that of a {other_kind}: bodies and joints "
                f"name the coordinates, and must differ",
                item,
                "name",
            )
