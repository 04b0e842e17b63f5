"""Controllers as model items: a linear control law from measurements to an
actuator's command.

A controller drives the command of one actuator (its `command`: the motor torque
of a "torque" or "pd" actuator, N m, added to its own law, or N on a prismatic
joint; the voltage of an actuator driven by voltage) with

    u = offset + sum_i [ gain_i (r_i(t) - y_i) - rate_gain_i y_i'
                         + integral_gain_i int (r_i - y_i) dt ]

limited to [min, max] (`limits`), y_i its inputs: a sensor's value (a component
of it) or a joint coordinate or rate, r_i(t) a set-point (a time law, 0 without
one). The derivative acts on the measurement, not on the error, so that a step of
the set-point is no kick.

With a `sample_time` T the controller is digital: at t_k = k T it reads its inputs
(each sensor as the instrument gives it: its dead time, lag and resolution,
flexmbs.simulation.instruments), forms u_k with the rate as the backward difference
(y_k - y_k-1) / T and the integral as a sum, and its output takes effect `delay`
seconds later and is held until the next one takes effect (a zero-order hold).
The sample instants and the instants the outputs take effect are breakpoints of
the run, which the integrator's steps end on; where only a held output changes, it
goes on across them with its history (flexmbs.solvers.bdf_integrator). Without a
sample time the controller is continuous: it reads joint coordinates and rates (y'
of a coordinate is its rate) and has no integral action, delay or instrument (those
need the sampled form, which a rig's controller is).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from ..errors import ModelError
from .field_checks import _check_joint_coordinate, _scalar
from .timefunctions import TIME_FUNCTION_LAWS, check_time_function

if TYPE_CHECKING:
    from .timefunctions import TimeFunction

__all__ = [
    "Controller",
    "ControllerInput",
    "controller_item",
    "CONTROLLER_COMMANDS",
    "INPUT_FIELDS",
]

CONTROLLER_COMMANDS = ("torque", "force", "voltage")
"""What a controller's output is, by the actuator it drives: the motor torque (N m)
of an actuator on a revolute coordinate, the force (N) of one on a prismatic
coordinate, or the voltage (V) of an actuator driven by voltage."""

INPUT_FIELDS = (
    "sensor",
    "component",
    "joint",
    "coordinate",
    "rate",
    "gain",
    "rate_gain",
    "integral_gain",
    "setpoint",
    "rate_cutoff",
    "rate_filter_order",
)

RATE_FILTER_ORDERS = (1, 2)
"""The orders of a sampled input's rate filter: stages of a first-order low-pass."""


@dataclass
class ControllerInput:
    """One input of a controller: `sensor` (with `component`, the index of the
    value among the sensor's) or coordinate `coordinate` of `joint` (its rate when
    `rate`); its gains (`gain` on the error, `rate_gain` on minus the measurement's
    rate, `integral_gain` on the error's integral) and `setpoint` (None: 0); the
    rate of a sampled input through a low-pass of `rate_filter_order` stages with the
    cut-off `rate_cutoff` (Hz; 0: the backward difference as it is)."""

    sensor: str | None
    component: int
    joint: str | None
    coordinate: int
    rate: bool
    gain: float
    rate_gain: float
    integral_gain: float
    setpoint: TimeFunction | None
    rate_cutoff: float = 0.0
    rate_filter_order: int = 1

    def label(self) -> str:
        """The input as the text names it: sensor "s" or joint "j" (rate)."""
        if self.sensor is not None:
            return f'sensor "{self.sensor}"' + (f"[{self.component}]" if self.component else "")
        return f'joint "{self.joint}"' + (" rate" if self.rate else "")


@dataclass
class Controller:
    """A linear controller (module text) driving actuator `actuator`'s `command`."""

    name: str
    actuator: str
    command: str
    inputs: list[ControllerInput]
    sample_time: float
    delay: float
    limits: tuple[float, float]
    offset: float

    @property
    def sampled(self) -> bool:
        return self.sample_time > 0.0


def _flag(value: object, item: str, fld: str) -> bool:
    if not isinstance(value, bool):
        raise ModelError(f"expected true or false, got {value!r}", item, fld)
    return value


def _index(value: object, item: str, fld: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        raise ModelError(f"expected an index >= 0, got {value!r}", item, fld)
    return int(value)


def _input(model: Any, table: Mapping[str, Any], item: str, k: int) -> ControllerInput:
    """One checked ControllerInput from its fields (a table of the `inputs` list)."""
    at = f"inputs[{k}]."
    if not isinstance(table, Mapping):
        raise ModelError(f"expected a table of an input's fields, got {table!r}", item, at[:-1])
    for key in table:
        if key not in INPUT_FIELDS:
            raise ModelError(
                f'unknown field "{key}"; allowed fields: {", ".join(INPUT_FIELDS)}',
                item,
                at + key,
            )
    sensor, joint = table.get("sensor"), table.get("joint")
    if (sensor is None) == (joint is None):
        raise ModelError(
            "expected a sensor or a joint (the measurement the input reads)", item, at + "sensor"
        )
    component = _index(table.get("component", 0), item, at + "component")
    coordinate = table.get("coordinate", 0)
    if sensor is not None:
        if sensor not in model.sensors:
            known = ", ".join(model.sensors) or "(none)"
            raise ModelError(
                f'unknown sensor "{sensor}"; the sensors are {known}', item, at + "sensor"
            )
        if "rate" in table or "coordinate" in table:
            raise ModelError(
                "a sensor input takes no joint coordinate or rate (name a joint for those)",
                item,
                at + ("rate" if "rate" in table else "coordinate"),
            )
    else:
        if not isinstance(joint, str):
            raise ModelError(f"expected a joint name, got {joint!r}", item, at + "joint")
        try:
            _check_joint_coordinate(model.joints, joint, coordinate, item)
        except ModelError as err:
            raise ModelError(err.message, item, at + (err.field or "joint")) from None
        for driver in model.drivers.values():
            if (driver.joint, driver.coordinate) == (joint, coordinate):
                raise ModelError(
                    f'coordinate {coordinate} of joint "{joint}" is prescribed by driver '
                    f'"{driver.name}": a controller reads a free coordinate',
                    item,
                    at + "joint",
                )
    given = table.get("setpoint")
    if given is not None and not isinstance(given, tuple(TIME_FUNCTION_LAWS.values())):
        raise ModelError("expected a time function (a table with a law)", item, at + "setpoint")
    setpoint = cast("TimeFunction | None", given)
    if setpoint is not None:
        check_time_function(setpoint, item, at + "setpoint")
    return ControllerInput(
        sensor,
        component,
        joint,
        int(coordinate) if joint is not None else 0,
        _flag(table.get("rate", False), item, at + "rate"),
        _scalar(table.get("gain", 0.0), item, at + "gain"),
        _scalar(table.get("rate_gain", 0.0), item, at + "rate_gain"),
        _scalar(table.get("integral_gain", 0.0), item, at + "integral_gain"),
        setpoint,
        _scalar(table.get("rate_cutoff", 0.0), item, at + "rate_cutoff", nonnegative=True),
        _filter_order(table.get("rate_filter_order", 1), item, at + "rate_filter_order"),
    )


def _filter_order(value: object, item: str, fld: str) -> int:
    if isinstance(value, bool) or value not in RATE_FILTER_ORDERS:
        orders = " or ".join(str(v) for v in RATE_FILTER_ORDERS)
        raise ModelError(f"expected {orders}, got {value!r}", item, fld)
    return int(value)  # type: ignore[call-overload]


def _limits(value: object, item: str) -> tuple[float, float]:
    """[min, max] from a number m (|u| <= m) or a pair."""
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool):
        top = float(value)
        if not top > 0:
            raise ModelError(
                f"expected a positive number or [min, max], got {value!r}", item, "limits"
            )
        return -top, top
    try:
        lo, hi = (float(v) for v in value)  # type: ignore[attr-defined]
    except (TypeError, ValueError):
        raise ModelError(
            f"expected a number or [min, max], got {value!r}", item, "limits"
        ) from None
    if np.isnan(lo) or np.isnan(hi) or not lo < hi:
        raise ModelError(f"expected min < max, got {value!r}", item, "limits")
    return lo, hi


def controller_item(
    model: Any,
    name: str,
    actuator: str,
    inputs: Sequence[Mapping[str, Any]],
    command: str = "torque",
    sample_time: float = 0.0,
    delay: float = 0.0,
    limits: object = np.inf,
    offset: float = 0.0,
) -> Controller:
    """A checked Controller for `model` (Model.add_controller's arguments)."""
    item = f'controller "{name}"'
    if actuator not in model.actuators:
        known = ", ".join(model.actuators) or "(none)"
        raise ModelError(
            f'unknown actuator "{actuator}"; the actuators are {known}', item, "actuator"
        )
    if command not in CONTROLLER_COMMANDS:
        raise ModelError(
            f"expected the actuator's command, one of {', '.join(CONTROLLER_COMMANDS)}; "
            f"got {command!r}",
            item,
            "command",
        )
    act = model.actuators[actuator]
    joint = model.joints[act.joint]
    prismatic = act.coordinate < len(joint.translation_axes)
    if act.type == "dc_motor":
        accepts: tuple[str, ...] = ("voltage",)
    else:
        accepts = ("force",) if prismatic else ("torque",)
    if command not in accepts:
        raise ModelError(
            f'actuator "{actuator}" takes the command {" or ".join(accepts)}, got {command!r}',
            item,
            "command",
        )
    if isinstance(inputs, (str, bytes, Mapping)) or not isinstance(inputs, Sequence) or not inputs:
        raise ModelError("expected a non-empty list of inputs", item, "inputs")
    checked = [_input(model, t, item, k) for k, t in enumerate(inputs)]
    ts = _scalar(sample_time, item, "sample_time", nonnegative=True)
    dt = _scalar(delay, item, "delay", nonnegative=True)
    if not ts:
        for k, inp in enumerate(checked):
            what = None
            if inp.sensor is not None:
                what = (
                    f"{inp.label()}: a continuous controller reads joint coordinates "
                    "and rates; give it a sample_time to read a sensor",
                    "sensor",
                )
            elif inp.integral_gain:
                what = (
                    "integral action needs a sample_time (the integral is the "
                    "sampled controller's sum)",
                    "integral_gain",
                )
            elif inp.rate_cutoff:
                what = (
                    "a rate filter needs a sample_time (it filters the sampled "
                    "controller's differences)",
                    "rate_cutoff",
                )
            elif inp.rate and inp.rate_gain:
                what = (
                    "a rate input has no rate_gain (it would act on an acceleration)",
                    "rate_gain",
                )
            if what is not None:
                raise ModelError(what[0], item, f"inputs[{k}].{what[1]}")
        if dt:
            raise ModelError(
                "a delay needs a sample_time (the output of a sample takes effect after it)",
                item,
                "delay",
            )
    return Controller(
        name,
        actuator,
        command,
        checked,
        ts,
        dt,
        _limits(limits, item),
        _scalar(offset, item, "offset"),
    )
