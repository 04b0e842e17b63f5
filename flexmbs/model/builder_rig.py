"""The Model builder's methods that add the rig's parts (flexmbs.model.description):
motors on joint coordinates, their friction and backlash, and the controllers that
drive them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import ModelError
from .builder_base import DescriptionBase
from .drives import check_command, dc_motor_parameters
from .field_checks import _scalar
from .items import Actuator
from .timefunctions import Constant
from .vocabulary import ACTUATOR_TYPES

if TYPE_CHECKING:
    from .backlash import Backlash
    from .controllers import Controller
    from .friction import Friction
    from .timefunctions import TimeFunction

__all__ = ["RigItems"]


class RigItems(DescriptionBase):
    """Model.add_actuator, add_friction, add_backlash and add_controller."""

    def add_actuator(
        self,
        name: str,
        joint: str,
        type: str = "pd",
        coordinate: int = 0,
        kp: float = 0.0,
        kd: float = 0.0,
        setpoint: TimeFunction | None = None,
        torque: TimeFunction | None = None,
        max_torque: float = np.inf,
        gear_ratio: float = 1.0,
        rotor_inertia: float = 0.0,
        motor_damping: float = 0.0,
        voltage: TimeFunction | None = None,
        amplifier_gain: float | None = None,
        max_voltage: float | None = None,
        resistance: float | None = None,
        inductance: float | None = None,
        torque_constant: float | None = None,
        back_emf_constant: float | None = None,
        max_current: float | None = None,
        efficiency: float | None = None,
    ) -> Actuator:
        """A motor on coordinate `coordinate` of `joint` (see Actuator): a PD controller
        towards `setpoint` (a time function, type "pd"), an open-loop motor torque
        `torque` (a time function, N m, type "torque"; none: 0), or a DC motor driven by
        the amplifier input `voltage` (a time function, V, type "dc_motor") with its
        `resistance`, `inductance`, `torque_constant`, `back_emf_constant`,
        `efficiency`, `amplifier_gain`, `max_voltage` and `max_current`. The command
        of a controller (Model.add_controller) is added to the torque of the first
        two, to the voltage of the third."""
        item = f'actuator "{name}"'
        self._new_name(name, self.actuators, item)
        self._check_coordinate_free(joint, coordinate, item)
        if type not in ACTUATOR_TYPES:
            raise ModelError(
                f"expected one of {', '.join(ACTUATOR_TYPES)}, got {type!r}", item, "type"
            )
        kp = _scalar(kp, item, "kp", nonnegative=True)
        kd = _scalar(kd, item, "kd", nonnegative=True)
        if type == "torque" and torque is None:  # its command comes from a controller
            torque = Constant(0.0)
        functions = {"setpoint": setpoint, "torque": torque, "voltage": voltage}
        check_command(type, functions, kp, kd, item)
        if (
            isinstance(max_torque, bool)
            or not isinstance(max_torque, (int, float, np.floating, np.integer))
            or not max_torque > 0
        ):
            raise ModelError(
                f"expected a positive number (or inf), got {max_torque!r}", item, "max_torque"
            )
        if type == "dc_motor" and np.isfinite(max_torque):
            raise ModelError(
                "a DC motor's torque is limited through its current: give max_current "
                "(A; the torque limit is efficiency * torque_constant * max_current)",
                item,
                "max_torque",
            )
        motor = dc_motor_parameters(
            type,
            {
                "amplifier_gain": amplifier_gain,
                "max_voltage": max_voltage,
                "resistance": resistance,
                "inductance": inductance,
                "torque_constant": torque_constant,
                "back_emf_constant": back_emf_constant,
                "max_current": max_current,
                "efficiency": efficiency,
            },
            item,
        )
        self.actuators[name] = Actuator(
            name,
            joint,
            int(coordinate),
            type,
            kp,
            kd,
            setpoint,
            torque,
            float(max_torque),
            _scalar(gear_ratio, item, "gear_ratio", positive=True),
            _scalar(rotor_inertia, item, "rotor_inertia", nonnegative=True),
            _scalar(motor_damping, item, "motor_damping", nonnegative=True),
            voltage,
            **motor,
        )
        return self.actuators[name]

    def add_friction(self, name: str, joint: str, **fields: Any) -> Friction:
        """Friction on coordinate `coordinate` (default 0) of `joint`
        (flexmbs.model.friction): `coulomb`, `static` (N m or N),
        `stribeck_velocity` (rad/s or m/s), `viscous` (N m s/rad or N s/m), `law`
        ("regularized" or "stick-slip") and `regularization` (rad/s or m/s)."""
        from .friction import friction_item

        item = f'friction "{name}"'
        self._new_name(name, self.frictions, item)
        self.frictions[name] = friction_item(self, name, joint, **fields)
        return self.frictions[name]

    def add_backlash(self, name: str, joint: str, **fields: Any) -> Backlash:
        """The play of coordinate `coordinate` (default 0) of `joint` as a dead-band
        spring and damper (flexmbs.model.backlash): `gap` (the whole play, rad or
        m), `center`, `stiffness` (N m/rad or N/m) and `damping` (N m s/rad or
        N s/m) of its edges' contact."""
        from .backlash import backlash_item

        item = f'backlash "{name}"'
        self._new_name(name, self.backlashes, item)
        self.backlashes[name] = backlash_item(self, name, joint, **fields)
        return self.backlashes[name]

    def add_controller(
        self, name: str, actuator: str, inputs: Sequence[Mapping[str, Any]], **fields: Any
    ) -> Controller:
        """A linear controller driving `actuator`'s command from `inputs`, each a
        dict with a `sensor` (and `component`) or a `joint` (`coordinate`, `rate`),
        its `gain`, `rate_gain`, `integral_gain` and `setpoint` (a time function);
        `command` ("torque", "force" or "voltage"), `sample_time`, `delay` (s),
        `limits` and `offset` (flexmbs.model.controllers)."""
        from .controllers import controller_item

        item = f'controller "{name}"'
        self._new_name(name, self.controllers, item)
        self.controllers[name] = controller_item(self, name, actuator, inputs, **fields)
        return self.controllers[name]
