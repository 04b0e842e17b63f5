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

and, judged against the model's own scale and its run:

    a joint's `limits` on a rotation above PLAUSIBLE_LIMIT (two turns: a joint may
        turn a whole turn either way, as industrial arms' wrists do), or a marker's
        `euler_xyz` above PLAUSIBLE_ANGLE
    a joint's `initial_rate` that turns it more than PLAUSIBLE_TURNS times in the run
        and is RATE_FACTOR times the model's own rate sqrt(|g| / L) (L the median size
        of its bodies): rpm for rad/s
    a beam SIZE_FACTOR times longer than the model's other bodies (its median body
        size): mm for m
    a rigid body MASS_FACTOR times lighter than the model's heaviest
    a sensor's `dead_time` or `lag`, a controller's `delay` or `sample_time`, longer
        than the run (ms for s: it never reads, or its output never acts, in the run)
    a sensor's `resolution` larger than the range of what it reads (a turn, 2 pi, for
        an angle; the model's size for a position): every reading 0 (counts a turn
        where rad a count are expected?)
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np

from ..model.description import Model
from ..model.items import BeamBody, Joint, RigidBody
from ..model.timefunctions import (
    Constant,
    ConstantRate,
    Harmonic,
    SpinUp,
    Steps,
    Table,
    TimeFunction,
    Trajectory,
)
from ..model.vocabulary import GENERATED_PREFIX

__all__ = [
    "plausibility_notes",
    "PLAUSIBLE_ANGLE",
    "PLAUSIBLE_LIMIT",
    "PLAUSIBLE_RATE",
    "PLAUSIBLE_DENSITY",
    "PLAUSIBLE_MODULUS",
    "PLAUSIBLE_GRAVITY",
]

PLAUSIBLE_ANGLE = 2.0 * math.pi  # rad
PLAUSIBLE_LIMIT = 4.0 * math.pi  # rad: a turn either way, printed rounded, is meant
PLAUSIBLE_RATE = 1000.0  # rad/s, 9 549 rpm
PLAUSIBLE_DENSITY = (100.0, 25_000.0)  # kg/m^3: foams and balsa .. tungsten, osmium
PLAUSIBLE_MODULUS = (1e5, 1.2e12)  # Pa: soft rubber .. diamond
PLAUSIBLE_GRAVITY = (9.76, 9.84)  # m/s^2: Earth's, from the equator to the poles
STANDARD_GRAVITY = 9.80665
PLAUSIBLE_TURNS = 10.0  # turns in a run at a joint's initial rate
RATE_FACTOR = 10.0  # an initial rate this many times the model's sqrt(|g| / L)
SIZE_FACTOR = 100.0  # a beam this many times longer than the model's bodies
MASS_FACTOR = 1e9  # a rigid body this many times lighter than the model's heaviest
ANGLE_SENSORS = ("joint_coordinate",)  # sensors whose value is a joint's angle
POSITION_SENSORS = ("marker_position", "marker_deflection")  # m


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


def _angle_note(where: str, value: float, beyond: str = "a turn (2 pi)") -> str:
    return (
        f"{where} is {value:g} rad, more than {beyond}: degrees where radians are "
        f"expected? ({value:g} deg = {math.radians(value):.4g} rad)"
    )


def _rate_note(where: str, value: float) -> str:
    return (
        f"{where} is {value:g} rad/s ({value * 30.0 / math.pi:.4g} rpm): rpm where rad/s "
        f"are expected? ({value:g} rpm = {value * math.pi / 30.0:.4g} rad/s)"
    )


def _body_size(body: object) -> float:
    """A body's size (m): a beam's length; a rigid body's farthest marker or centre
    of mass from its origin; 0 when it has none."""
    if isinstance(body, BeamBody):
        return float(np.sum(np.linalg.norm(np.diff(body.nodes, axis=0), axis=1)))
    if isinstance(body, RigidBody):
        points = [body.com] + [m.position for m in body.markers.values()]
        return float(max(np.linalg.norm(p) for p in points))
    return 0.0


def _model_size(model: Model, without: str | None = None) -> float | None:
    """The median size of the model's bodies (m), `without` one; None if none has a
    size."""
    sizes = [_body_size(b) for n, b in model.bodies.items() if n != without]
    sizes = [x for x in sizes if x > 0.0]
    return float(np.median(sizes)) if sizes else None


def _rate_beyond_the_model(model: Model, rate: float) -> str | None:
    """Why a joint's initial rate is unlikely for this model, or None (module text)."""
    size = _model_size(model)
    g = float(np.linalg.norm(model.gravity))
    turns = abs(rate) * model.solver.t_end / (2.0 * math.pi)
    if size is None or g == 0.0 or turns <= PLAUSIBLE_TURNS:
        return None
    own = math.sqrt(g / size)
    if abs(rate) <= RATE_FACTOR * own:
        return None
    return (
        f"{turns:.3g} turns in the run's {model.solver.t_end:g} s, {abs(rate) / own:.3g} "
        f"times the model's own rate sqrt(|g| / L) = {own:.3g} rad/s"
    )


def _joint_notes(model: Model) -> Iterator[str]:
    for name, joint in model.joints.items():
        if name.startswith(GENERATED_PREFIX):
            continue
        for k in _rotations(joint):
            which = "" if joint.ndof == 1 else f"[{k}]"
            if abs(joint.initial[k]) > PLAUSIBLE_ANGLE:
                yield _angle_note(f'joint "{name}": field "initial"{which}', joint.initial[k])
            rate = float(joint.initial_rate[k])
            where = f'joint "{name}": field "initial_rate"{which}'
            if abs(rate) > PLAUSIBLE_RATE:
                yield _rate_note(where, rate)
            elif rate:
                why = _rate_beyond_the_model(model, rate)
                if why is not None:
                    yield _rate_note(where, rate) + f" ({why})"
            stops = [] if joint.limits is None else [v for v in joint.limits[k] if np.isfinite(v)]
            if stops:  # an infinite side has no stop to note
                widest = float(max(stops, key=abs))
                if abs(widest) > PLAUSIBLE_LIMIT:
                    yield _angle_note(
                        f'joint "{name}": field "limits"{which}', widest, "two turns (4 pi)"
                    )


def _given_angle_notes(model: Model) -> Iterator[str]:
    for where, value in getattr(model, "given_angles", []):
        if abs(value) > PLAUSIBLE_ANGLE:
            yield _angle_note(where, value)


def _size_notes(model: Model) -> Iterator[str]:
    heaviest = max((b.mass for b in model.bodies.values() if isinstance(b, RigidBody)), default=0.0)
    for name, body in model.bodies.items():
        if isinstance(body, RigidBody) and body.mass * MASS_FACTOR < heaviest:
            yield (
                f'body "{name}": field "mass": {body.mass:g} kg, {heaviest / body.mass:.3g} '
                f"times lighter than the model's heaviest body ({heaviest:g} kg): a body of "
                "no mass leaves the mass matrix nearly singular (g or t where kg are "
                "expected? a massless link: merge it into its neighbour)"
            )
        if not isinstance(body, BeamBody):
            continue
        others = _model_size(model, without=name)
        length = _body_size(body)
        if others is not None and length > SIZE_FACTOR * others:
            yield (
                f'body "{name}": field "points": a beam {length:g} m long, '
                f"{length / others:.3g} times the model's other bodies ({others:g} m): mm "
                f"where m are expected? ({length:g} mm = {length / 1000:g} m)"
            )


def _run_notes(model: Model) -> Iterator[str]:
    t_end = model.solver.t_end
    size = _model_size(model)
    for name, sensor in model.sensors.items():
        for fld in ("dead_time", "lag"):
            value = getattr(sensor, fld)
            if value > t_end:
                yield (
                    f'sensor "{name}": field "{fld}": {value:g} s, longer than the run '
                    f"({t_end:g} s): ms where s are expected?"
                )
        resolution = sensor.resolution
        if sensor.type in ANGLE_SENSORS and sensor.joint in model.joints:
            joint = model.joints[sensor.joint]
            if sensor.coordinate is not None and sensor.coordinate not in _rotations(joint):
                continue
            if resolution > PLAUSIBLE_ANGLE:
                yield (
                    f'sensor "{name}": field "resolution": {resolution:g} rad, more than a '
                    "turn: every reading is 0 (counts a turn where rad a count are "
                    f"expected? {resolution:g} counts a turn = {2 * math.pi / resolution:.4g} "
                    "rad)"
                )
        elif sensor.type in POSITION_SENSORS and size is not None and resolution > size:
            yield (
                f'sensor "{name}": field "resolution": {resolution:g} m, more than the '
                f"model's size ({size:g} m): every reading is 0 (mm where m are expected?)"
            )
    for name, controller in model.controllers.items():
        for fld in ("delay", "sample_time"):
            value = getattr(controller, fld)
            if value > t_end:
                yield (
                    f'controller "{name}": field "{fld}": {value:g} s, longer than the run '
                    f"({t_end:g} s): its output never acts in it (ms where s are expected?)"
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
        *_given_angle_notes(model),
        *_size_notes(model),
        *_run_notes(model),
    ]
