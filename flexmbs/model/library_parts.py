"""The pieces the benchmark models of flexmbs.model.library share: a model with the
benchmarks' solver settings, a straight beam (the Huang tube or another section), the
Huang arms' first link, revolute joints, and the sensors of joint values and of a
tip."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from numpy.typing import ArrayLike

from ..elements import general_section, material
from .description import Model

if TYPE_CHECKING:
    from ..elements.materials import Material
    from ..elements.sections import Section
    from .items import BeamBody, Joint

__all__ = [
    "HUANG_TUBE_MATERIAL",
    "huang_tube",
    "benchmark_model",
    "straight_beam",
    "tube_beam",
    "huang_link1",
    "revolute",
    "joint_sensors",
    "tip_sensors",
]

HUANG_TUBE_MATERIAL = dict(youngs_modulus=0.69e11, shear_modulus=0.26e11, density=2770.0)
Y_AXIS = (0.0, 1.0, 0.0)  # the section's y reference of every benchmark beam (body axes)


def huang_tube() -> Section:
    """The Huang tube of docs/explanation/benchmark-models.md: A, I_y = I_z, Saint-Venant J of
    the aluminium
    12.7 mm square tube with 1.6 mm walls; half-depth 6.35 mm for surface strains."""
    return general_section(7.104e-5, 1.4891e-9, 1.4891e-9, 2.188e-9, max_y=6.35e-3, max_z=6.35e-3)


def benchmark_model(
    name: str,
    t_end: float,
    step: float,
    gravity: Sequence[float] = (0.0, 0.0, -9.81),
    rtol: float = 1e-8,
    atol: float = 1e-10,
) -> Model:
    """An empty model run by BDF to `t_end` (s) at the tolerances `rtol`, `atol`,
    recording every `step` (s); gravity in m/s^2 along the global axes."""
    model = Model(name, gravity=gravity)
    model.set_solver(method="bdf", t_end=t_end, rtol=rtol, atol=atol)
    model.set_output(step=step)
    return model


def straight_beam(
    model: Model,
    name: str,
    end: Sequence[float],
    section: Section,
    beam_material: Material,
    elements: int,
    **fields: Any,
) -> BeamBody:
    """A beam body from its frame's origin to `end` (m, body axes) of `elements`
    elements, the section's y axis towards body y; `fields` as Model.add_beam_body's."""
    return model.add_beam_body(
        name,
        [[0.0, 0.0, 0.0], list(end)],
        section,
        beam_material,
        elements=elements,
        reference=Y_AXIS,
        **fields,
    )


def tube_beam(
    model: Model, name: str, end: Sequence[float], elements: int, **fields: Any
) -> BeamBody:
    """A straight beam (straight_beam) of the Huang tube in its aluminium."""
    return straight_beam(
        model, name, end, huang_tube(), material(**HUANG_TUBE_MATERIAL), elements, **fields
    )


def huang_link1(model: Model, along: Sequence[float]) -> None:
    """The first link of Huang's arms: rigid, 2.067 kg, 0.231 m along the unit vector
    `along` (a body axis) from its frame's origin to its marker "joint2", the centre of
    mass halfway; about the origin 3.752e-4 kg m^2 about its own axis and 0.08884 about
    the other two (docs/explanation/benchmark-models.md; library.huang_two_link says
    why not the table's)."""
    axial = max(range(3), key=lambda k: abs(along[k]))
    inertia = [0.08884] * 3
    inertia[axial] = 3.752e-4
    model.add_rigid_body(
        "link1",
        mass=2.067,
        com=tuple(0.1155 * a for a in along),
        inertia=tuple(inertia),
        inertia_about="origin",
    )
    model.add_marker("link1", "joint2", position=tuple(0.231 * a for a in along))


def revolute(
    model: Model, name: str, parent: str, child: str, axis: ArrayLike, **fields: Any
) -> Joint:
    """A revolute joint from `parent` to `child` about `axis`; `fields` as
    Model.add_joint's."""
    return model.add_joint(name, "revolute", parent=parent, child=child, axis=axis, **fields)


def joint_sensors(model: Model, sensors: Mapping[str, str]) -> None:
    """A joint_coordinate sensor {sensor name: joint name} of each joint's first
    coordinate."""
    for sensor, joint in sensors.items():
        model.add_sensor(sensor, "joint_coordinate", joint=joint)


def tip_sensors(model: Model, body: str) -> None:
    """The position ("tip") and the elastic displacement ("tip_deflection") of the
    marker "tip" of the flexible `body`, both in the axes of `body`."""
    model.add_sensor("tip", "marker_position", body=body, marker="tip", frame=body)
    model.add_sensor("tip_deflection", "marker_deflection", body=body, marker="tip", frame=body)
