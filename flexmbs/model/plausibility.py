"""Notes on values that are legal but unlikely in the units the model file uses (SI: m,
kg, s, rad), each the mark of a common unit mistake: degrees for radians, rpm for
rad/s, mm for m, g/cm^3 for kg/m^3, mm/s^2 for m/s^2, GPa for Pa. They do not stop a
run: reading a model file warns of each (flexmbs.errors.PlausibilityWarning, which the
command line prints as one line "flexmbs: warning: FILE: ITEM: field ..."), and a value
that is meant is left as it is. A model built in Python is checked by calling
`plausibility_notes`.

    an angle of a rotation (a joint's `initial`, a driver's or a motor's set point)
        above PLAUSIBLE_ANGLE (2 pi: more than a turn)
    a rotation rate (`initial_rate`, a driver's `rate`) above PLAUSIBLE_RATE rad/s
    a beam section wider than its beam is long
    a beam material's density outside PLAUSIBLE_DENSITY kg/m^3, or its Young's
        modulus outside PLAUSIBLE_MODULUS Pa
    a gravity given whose magnitude is neither 0 nor within PLAUSIBLE_GRAVITY m/s^2
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np

from .description import Model
from .items import BeamBody, Joint
from .timefunctions import (
    Constant,
    ConstantRate,
    Harmonic,
    SpinUp,
    Steps,
    Table,
    TimeFunction,
    Trajectory,
)
from .vocabulary import GENERATED_PREFIX

__all__ = [
    "plausibility_notes",
    "PLAUSIBLE_ANGLE",
    "PLAUSIBLE_RATE",
    "PLAUSIBLE_DENSITY",
    "PLAUSIBLE_MODULUS",
    "PLAUSIBLE_GRAVITY",
]

PLAUSIBLE_ANGLE = 2.0 * math.pi  # rad
PLAUSIBLE_RATE = 1000.0  # rad/s, 9 549 rpm
PLAUSIBLE_DENSITY = (100.0, 25_000.0)  # kg/m^3: foams and balsa .. tungsten, osmium
PLAUSIBLE_MODULUS = (1e5, 1.2e12)  # Pa: soft rubber .. diamond
PLAUSIBLE_GRAVITY = (9.76, 9.84)  # m/s^2: Earth's, from the equator to the poles
STANDARD_GRAVITY = 9.80665


def _rotations(joint: Joint) -> range:
    """The indices of the joint's rotation coordinates (after its translations)."""
    return range(len(joint.translation_axes), joint.ndof)


def _law_angles(fn: TimeFunction | None) -> list[tuple[str, float]]:
    """(field, value) of a law's angles: its values and offsets, not its rates."""
    if fn is None:
        return []
    if isinstance(fn, Constant):
        return [("value", float(fn.value))]
    if isinstance(fn, ConstantRate):
        return [("value", float(fn.value))]
    if isinstance(fn, Harmonic):
        return [("amplitude", float(fn.amplitude)), ("offset", float(fn.offset))]
    if isinstance(fn, (Steps, Trajectory)):
        return [("values", float(np.max(np.abs(np.asarray(fn.values, float)))))]
    if isinstance(fn, Table):
        return [("value", float(np.max(np.abs(np.asarray(fn.value, float)))))]
    return []


def _law_rates(fn: TimeFunction | None) -> list[tuple[str, float]]:
    if isinstance(fn, (ConstantRate, SpinUp)):
        return [("rate", float(fn.rate))]
    return []


def _angle_note(where: str, value: float) -> str:
    return (
        f"{where} is {value:g} rad, more than a turn (2 pi): degrees where radians are "
        f"expected? ({value:g} deg = {math.radians(value):.4g} rad)"
    )


def _rate_note(where: str, value: float) -> str:
    return (
        f"{where} is {value:g} rad/s ({value * 30.0 / math.pi:.4g} rpm): rpm where rad/s "
        f"are expected? ({value:g} rpm = {value * math.pi / 30.0:.4g} rad/s)"
    )


def _joint_notes(model: Model) -> Iterator[str]:
    for name, joint in model.joints.items():
        if name.startswith(GENERATED_PREFIX):
            continue
        for k in _rotations(joint):
            which = "" if joint.ndof == 1 else f"[{k}]"
            if abs(joint.initial[k]) > PLAUSIBLE_ANGLE:
                yield _angle_note(f'joint "{name}": field "initial"{which}', joint.initial[k])
            if abs(joint.initial_rate[k]) > PLAUSIBLE_RATE:
                yield _rate_note(
                    f'joint "{name}": field "initial_rate"{which}', joint.initial_rate[k]
                )


def _law_notes(model: Model) -> Iterator[str]:
    laws: list[tuple[str, str, str, int, TimeFunction | None]] = [
        (f'driver "{n}"', "", d.joint, d.coordinate, d.function) for n, d in model.drivers.items()
    ]
    laws += [
        (f'actuator "{n}"', "setpoint.", a.joint, a.coordinate, a.setpoint)
        for n, a in model.actuators.items()
    ]
    for item, prefix, joint_name, coordinate, fn in laws:
        joint = model.joints.get(joint_name)
        if joint is None or coordinate not in _rotations(joint):
            continue
        for fld, value in _law_angles(fn):
            if abs(value) > PLAUSIBLE_ANGLE:
                yield _angle_note(f'{item}: field "{prefix}{fld}"', value)
        for fld, value in _law_rates(fn):
            if abs(value) > PLAUSIBLE_RATE:
                yield _rate_note(f'{item}: field "{prefix}{fld}"', value)


def _beam_notes(model: Model) -> Iterator[str]:
    for name, body in model.bodies.items():
        if not isinstance(body, BeamBody):
            continue
        length = float(np.sum(np.linalg.norm(np.diff(body.nodes, axis=0), axis=1)))
        section = body.section
        widths = [2.0 * w for w in (section.max_y, section.max_z) if w is not None]
        width = max(widths) if widths else math.sqrt(section.area)
        if width > length:
            yield (
                f'body "{name}": field "section": {width:g} m across, on a beam {length:g} m '
                "long: mm where m are expected?"
            )
        material = body.material
        for fld, value, (low, high), unit, likely in (
            ("density", material.density, PLAUSIBLE_DENSITY, "kg/m^3", ("g/cm^3", 1000.0)),
            ("youngs_modulus", material.youngs_modulus, PLAUSIBLE_MODULUS, "Pa", ("GPa", 1e9)),
        ):
            if not low <= value <= high:
                meant, factor = likely
                yield (
                    f'body "{name}": field "{fld}": {value:g} {unit}, outside {low:g} .. '
                    f"{high:g}: {meant} where {unit} are expected? ({value:g} {meant} = "
                    f"{value * factor:g} {unit})"
                )


def _gravity_notes(model: Model) -> Iterator[str]:
    g = float(np.linalg.norm(model.gravity))
    low, high = PLAUSIBLE_GRAVITY
    if g != 0.0 and not low <= g <= high:
        yield (
            f'model: field "gravity": |g| = {g:g} m/s^2, not Earth\'s {STANDARD_GRAVITY:g}: '
            f"mm/s^2 or g where m/s^2 are expected? (another planet's: leave it)"
        )


def plausibility_notes(model: Model) -> list[str]:
    """The notes on `model` (the module docstring), each naming the item and field."""
    return [
        *_gravity_notes(model),
        *_joint_notes(model),
        *_law_notes(model),
        *_beam_notes(model),
    ]
