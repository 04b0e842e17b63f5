"""The input ports of a model: the time functions that a controller outside the model
sets while it runs (flexmbs.Simulator.step, the inputs of an exported FMU, the inputs
of the state-space model of flexmbs.analysis.statespace).

Every item whose effort is a time function has one: an actuator's command (the field
its law is given in: `setpoint` of a "pd" actuator, `torque` of a "torque" actuator,
`voltage` of a "dc_motor") and a load's `function` (the factor on its vector: the
load's magnitude when the vector has unit length). A port is named after its item and
that field, "ITEM.FIELD" ("shoulder.setpoint", "hub.voltage", "push.function").

Until it is set, a port follows its law from the model. Set, it holds the value given
(zero-order hold: its rate and acceleration are zero) until it is set again: its time
function becomes a constant of that value in the compiled tables (`hold_value`), which
the kernels read as any other law. A change of value is a jump in the forces, where
the integrator starts again (a breakpoint, flexmbs.solvers.events).
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import ModelError
from .timefunctions import LAW_CODES

if TYPE_CHECKING:
    from .description import Model

__all__ = ["Port", "input_ports", "hold_value", "checked_inputs", "COMMAND_FIELDS"]

COMMAND_FIELDS = {"pd": "setpoint", "torque": "torque", "dc_motor": "voltage"}
"""The field that holds the command of each type of actuator: its port's name."""

_COMMAND_UNITS = {"torque": "N m", "voltage": "V"}
CONSTANT = LAW_CODES["constant"]


@dataclass(frozen=True)
class Port:
    """An input of the model: `name` ("ITEM.FIELD"), the `item` and `field` it sets
    (as an error names them), `function` the index of its time function in the
    compiled tables (ModelArrays.tf_kind, tf_ptr, tf_data) and `unit` the unit of its
    value."""

    name: str
    item: str
    field: str
    function: int
    unit: str


def input_ports(
    model: Model, actuator_functions: Sequence[int], force_functions: Sequence[int]
) -> dict[str, Port]:
    """{name: Port} of the model's actuators (in order) and loads, `*_functions` the
    index of each one's time function in the compiled tables."""
    ports = {}
    for actuator, k in zip(model.actuators.values(), actuator_functions):
        field = COMMAND_FIELDS[actuator.type]
        unit = _COMMAND_UNITS.get(field)
        if unit is None:  # a set-point: the joint coordinate's unit
            joint = model.joints[actuator.joint]
            unit = "m" if actuator.coordinate < len(joint.translation_axes) else "rad"
        name = f"{actuator.name}.{field}"
        ports[name] = Port(name, f'actuator "{actuator.name}"', field, int(k), unit)
    for force, k in zip(model.forces.values(), force_functions):
        name = f"{force.name}.function"
        ports[name] = Port(name, f'force "{force.name}"', "function", int(k), "1")
    return ports


def hold_value(arrays: Any, port: Port, value: float) -> None:
    """Make the time function of `port` a constant `value` in the compiled tables
    `arrays` (in place: the kernels see it at their next call)."""
    k = port.function
    arrays.tf_kind[k] = CONSTANT
    arrays.tf_data[arrays.tf_ptr[k]] = value


def checked_inputs(ports: Mapping[str, Port], inputs: Mapping[str, object]) -> dict[Port, float]:
    """{Port: value} of `inputs` ({port name: number}); ModelError naming the port
    when a name is no port of the model or a value no finite number."""
    if not isinstance(inputs, Mapping):
        raise ModelError(
            f"expected a mapping {{port name: value}}, got {type(inputs).__name__} {inputs!r}",
            "inputs",
        )
    out = {}
    for name, value in inputs.items():
        port = ports.get(name)
        if port is None:
            known = ", ".join(ports) or "none: the model has no actuator and no load"
            raise ModelError(f"no input port {name!r}; the model's ports are {known}", "inputs")
        number = float(value) if isinstance(value, numbers.Real) else float("nan")
        if isinstance(value, bool) or not abs(number) < float("inf"):
            raise ModelError(
                f"expected a finite number ({port.unit}), got {type(value).__name__} {value!r}",
                name,
            )
        out[port] = number
    return out
