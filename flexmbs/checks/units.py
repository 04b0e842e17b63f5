"""The units of a model's outputs, column by column, as the result file stores them.

Joint coordinates are m (translations) or rad (rotations), in the order of the joint's
`coordinate_names` (translations first); nodal elastic coordinates m (u, v, w) or rad
(tx, ty, tz); modal amplitudes kg^(1/2) m (mass-normalised modes, phi^T M phi = 1,
flexmbs.elements.modal). Speeds are those per second. Sensors by their type
(docs/reference/model-file.md, the sensor table).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..model.description import Model
from ..model.fe_body import FeBody
from ..model.items import BeamBody, Sensor

__all__ = [
    "coordinate_units",
    "rate_units",
    "sensor_units",
    "sensor_type_units",
    "SI_QUANTITIES",
]

NODE_DOF_UNITS = {"u": "m", "v": "m", "w": "m", "tx": "rad", "ty": "rad", "tz": "rad"}
MODAL_UNIT = "kg^(1/2) m"
_FIXED = {
    "marker_position": ["m"] * 3,
    "marker_orientation": ["1"] * 9,
    "marker_velocity": ["m/s"] * 3,
    "marker_angular_velocity": ["rad/s"] * 3,
    "actuator_work": ["J"],
    "actuator_current": ["A"],
    "actuator_voltage": ["V"],
    "beam_strain": ["1"],
    "marker_deflection": ["m"] * 3,
    "beam_curvature": ["1/m"] * 2,
    "beam_section_forces": ["N", "N", "N", "N m", "N m", "N m"],
    "joint_reaction": ["N", "N", "N", "N m", "N m", "N m"],
    "contact_reaction": ["N", "N", "N", "m", "m", "m"],
}


SI_QUANTITIES = {
    "rad": "angle",
    "m": "length",
    "1": "dimensionless",
    "rad/s": "angular velocity",
    "m/s": "velocity",
    "m/s^2": "acceleration",
    "N": "force",
    "N m": "torque",
    "J": "energy",
    "W": "power",
    "1/m": "curvature",
    "V": "voltage",
    "A": "current",
    "Ohm": "resistance",
    "Hz": "frequency",
    "Pa": "pressure",
}
"""The physical quantity of each SI unit a value of the model may carry (the units of
its sensors' columns above, and the quantities an instrument on a rig measures): the
quantity a channel map's unit must have to be compared with the column
(flexmbs.analysis.channel_map)."""


def sensor_type_units(kind: str) -> list[str] | None:
    """The unit of each column of a sensor of type `kind` when it does not depend on the
    model (a marker's position, an actuator's current, ...); None for the types whose
    units follow the joint, the actuator's joint or the body they read."""
    if kind in _FIXED:
        return list(_FIXED[kind])
    if kind == "strain_energy":
        return ["J"]
    return None


def _joint_units(model: Model) -> dict[str, str]:
    """{joint coordinate name: m or rad} of every joint, cut joints included."""
    out = {}
    for joint in model.joints.values():
        ntrans = len(joint.translation_axes)
        for k, name in enumerate(joint.coordinate_names()):
            out[name] = "m" if k < ntrans else "rad"
    return out


def _joint_coordinate_unit(model: Model, joint: str, coordinate: int | None) -> str:
    j = model.joints[joint]
    return "m" if (coordinate or 0) < len(j.translation_axes) else "rad"


def coordinate_units(model: Model, coordinate_names: Sequence[str]) -> list[str]:
    """The unit of each coordinate of `coordinate_names` (those of the compiled model:
    joint coordinates, then the elastic ones); "" for a name that is neither (the
    absolute form's body coordinates: their unit is in the name's own description)."""
    joints = _joint_units(model)
    beams = {}
    for body in model.bodies.values():
        if isinstance(body, FeBody):
            for name in body.coordinate_names():
                beams[name] = MODAL_UNIT
        elif isinstance(body, BeamBody):
            nodal = body.basis is None
            for name in body.coordinate_names():
                beams[name] = NODE_DOF_UNITS[name.rsplit(".", 1)[1]] if nodal else MODAL_UNIT
    return [joints.get(n, beams.get(n, "")) for n in coordinate_names]


def rate_units(units: Sequence[str]) -> list[str]:
    """The units of the rates of quantities in `units`: X -> X/s."""
    return [f"{u}/s" if u and " " not in u else (f"({u})/s" if u else "") for u in units]


def sensor_units(model: Model, name: str, size: int) -> list[str]:
    """The unit of each of the `size` columns of sensor `name` ("" when `model` does
    not hold it)."""
    if name not in model.sensors:
        return [""] * size
    sensor: Sensor = model.sensors[name]
    kind = sensor.type
    fixed = sensor_type_units(kind)
    if fixed is not None:
        return fixed
    if kind == "beam_centerline":
        return ["m"] * size
    if kind == "elastic_coordinates":
        assert sensor.body is not None
        body = model.bodies[sensor.body]
        names = body.coordinate_names() if hasattr(body, "coordinate_names") else []
        return coordinate_units(model, names) or [""] * size
    if kind in ("joint_coordinate", "joint_rate"):
        assert sensor.joint is not None
        unit = _joint_coordinate_unit(model, sensor.joint, sensor.coordinate)
        return [unit if kind == "joint_coordinate" else f"{unit}/s"]
    if kind == "actuator_torque":
        assert sensor.actuator is not None
        actuator = model.actuators[sensor.actuator]
        unit = _joint_coordinate_unit(model, actuator.joint, actuator.coordinate)
        return ["N" if unit == "m" else "N m"]
    if kind == "coupler_reaction":
        assert sensor.coupler is not None
        c = model.couplers[sensor.coupler]
        return [
            "N" if _joint_coordinate_unit(model, joint, k) == "m" else "N m"
            for joint, k in (c.follower_key, c.leader_key)
        ]
    if kind == "constraint_residual":
        half = size // 2  # Phi of each row (m or rad), then dPhi/dt
        return ["m, rad"] * half + ["m/s, rad/s"] * (size - half)
    return [""] * size
