"""The compiled tables of the DC motors and of the joint stops (flexmbs.model.arrays:
the act_* motor fields, elec_actuator, the stop_* fields), read by
flexmbs.dynamics.motors and flexmbs.dynamics.stops."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from ..errors import ModelError
from .backlash import Backlash
from .items import Actuator, Joint

__all__ = ["motor_tables", "stop_tables", "electrical_state_names"]


def _electrical_states(actuator: Actuator) -> list[str]:
    """The electrical states of an actuator: a DC motor's source work and resistive
    loss (J), and its current (A) when it has an inductance; none for another."""
    if actuator.type != "dc_motor":
        return []
    names = [f"W_source_{actuator.name}", f"W_resistive_{actuator.name}"]
    return names + [f"i_{actuator.name}"] * (actuator.inductance > 0)


def electrical_state_names(actuators: Iterable[Actuator]) -> list[str]:
    """The names of the state's electrical columns, in their order (after the works
    W_nc and W_<actuator>)."""
    return [name for a in actuators for name in _electrical_states(a)]


def motor_tables(actuators: Sequence[Actuator]) -> dict[str, np.ndarray]:
    """The DC-motor fields of ModelArrays for the actuators in their order."""
    first: list[int] = []
    owner: list[int] = []
    for k, a in enumerate(actuators):
        states = _electrical_states(a)
        first.append(len(owner) if states else -1)
        owner += [k] * len(states)

    def column(name: str) -> np.ndarray:
        return np.array([float(getattr(a, name)) for a in actuators], dtype=float)

    return {
        "act_resistance": column("resistance"),
        "act_inductance": column("inductance"),
        "act_kt": column("torque_constant"),
        "act_ke": column("back_emf_constant"),
        "act_efficiency": column("efficiency"),
        "act_amplifier": column("amplifier_gain"),
        "act_max_voltage": column("max_voltage"),
        "act_max_current": column("max_current"),
        "act_electric": np.array(first, dtype=np.int64),
        "elec_actuator": np.array(owner, dtype=np.int64),
    }


def stop_tables(
    joints: Iterable[Joint],
    cut_joints: Iterable[str],
    coord_of: Mapping[tuple[str, int], int],
    qindex: Sequence[int],
    backlashes: Iterable[Backlash] = (),
) -> dict[str, np.ndarray]:
    """The stop fields of ModelArrays: one stop per limited coordinate of the
    joints (a cut joint or a driven coordinate with limits is refused), then one
    per backlash, its play's edges the stop's limits (flexmbs.model.backlash)."""
    coord, lower, upper, stiffness, damping = [], [], [], [], []
    cut = set(cut_joints)
    for j in joints:
        if j.limits is None:
            continue
        assert j.limit_stiffness is not None and j.limit_damping is not None
        item = f'joint "{j.name}"'
        if j.name in cut:
            raise ModelError(
                "the joint closes a loop and is cut, so its coordinates are not the "
                "model's and its limits cannot act: mark another joint of the loop "
                "cut = true",
                item,
                "limits",
            )
        for c in range(j.ndof):
            lo, hi = j.limits[c]
            if not (np.isfinite(lo) or np.isfinite(hi)):
                continue
            col = coord_of[(j.name, c)]
            if qindex[col] < 0:
                raise ModelError(
                    f"coordinate {c} is prescribed by a driver, which its limits cannot "
                    "stop: remove them or the driver",
                    item,
                    "limits",
                )
            coord.append(col)
            lower.append(lo)
            upper.append(hi)
            stiffness.append(j.limit_stiffness[c])
            damping.append(j.limit_damping[c])
    for b in backlashes:
        if b.joint in cut:
            raise ModelError(
                "the joint closes a loop and is cut, so its coordinates are not the "
                "model's: put the backlash on another joint of the loop or mark another "
                "one cut = true",
                f'backlash "{b.name}"',
                "joint",
            )
        coord.append(coord_of[(b.joint, b.coordinate)])
        lower.append(b.edges[0])
        upper.append(b.edges[1])
        stiffness.append(b.stiffness)
        damping.append(b.damping)
    return {
        "stop_coord": np.array(coord, dtype=np.int64),
        "stop_lower": np.array(lower, dtype=float),
        "stop_upper": np.array(upper, dtype=float),
        "stop_stiffness": np.array(stiffness, dtype=float),
        "stop_damping": np.array(damping, dtype=float),
    }
