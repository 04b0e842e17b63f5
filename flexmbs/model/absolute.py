"""The absolute-coordinate form of a model (Schwab 2009; Huang chapter 5's comparison
with the method of ADAMS): every body gets its own Cartesian coordinates and every
joint of the model becomes a constraint with multipliers.

Each body b hangs from the ground on a joint "@b" of six coordinates: three
translations along, then three sequential rotations about, the axes of a ground marker
"@b" placed at b's frame in the initial state,

    r_b = r_ref + A_ref x,     A_b = A_ref Rx(th1) Ry(th2) Rz(th3),

so x = th = 0 at the start, and the elastic coordinates of a beam keep their meaning.
Every joint of the model is cut (`cut = true`): its constraint equations between its
two markers (docs/explanation/formulation.md section 5) join the equations of motion with
multipliers, and the stabilised index-2 form `M x'' + C^T lam = f`, `C x' + C_t = 0`, `C =
0` (Schwab's `[M C^T; C 0][x''; lam] = [f; -C_xx x' x']` differentiated once less) is
integrated as for any closed loop. M* is then block-diagonal over the bodies (a body's
velocity depends on its own coordinates only).

A joint that something acts on through its own coordinates (a driver, a motor, a joint
spring or damper) keeps them as the motor coordinates of ADAMS's joint motions and
forces: the joint J then carries, from its parent, a massless frame "@@J" (its child
marker's frame), and a fixed cut joint "@@J" ties that frame to the child marker. The
child body keeps its six coordinates; J's coordinates carry the rotor inertia of its
motors (or none), and they are determined by the fixed joint's constraints.

Three sequential rotations are singular where the middle one reaches 90 degrees;
`flexmbs.dynamics.absolute.rebase_frames` moves a body's reference (r_ref, A_ref) to
its current pose before that (the angles restart at zero), so every orientation is
reached.

Refused (with the item named): user force laws (functions of the model's q and u,
whose meaning changes with the coordinates) and rolling contacts.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from ..errors import ModelError
from .description import GROUND, ORIGIN, BeamBody, FeBody, Marker, RigidBody

if TYPE_CHECKING:
    from .compiled import CompiledModel
    from .description import Model
    from .items import Joint

__all__ = [
    "PREFIX",
    "absolute_model",
    "absolute_joint_name",
    "copy_name",
    "joints_with_coordinates",
    "set_elastic_rates",
]

PREFIX = "@"


def absolute_joint_name(body: str) -> str:
    """The name of body `body`'s six-coordinate joint (and of its ground marker)."""
    return PREFIX + body


def copy_name(joint: str) -> str:
    """The name of the massless frame (and of its fixed cut joint) that carries the
    coordinates of joint `joint` in the absolute form."""
    return 2 * PREFIX + joint


def _refuse(model: Model) -> None:
    for kind, table in (
        ("user law", getattr(model, "user_laws", {})),
        ("contact", getattr(model, "contacts", {})),
        ("coupler", getattr(model, "couplers", {})),
        ("friction", getattr(model, "frictions", {})),
        ("backlash", getattr(model, "backlashes", {})),
        ("controller", getattr(model, "controllers", {})),
    ):
        for name in table:
            what = {
                "contact": "rolling contacts are",
                "coupler": "couplers are",
                "friction": "joint friction is",
                "backlash": "backlash is",
                "controller": "controllers are",
            }.get(kind, "user force laws (functions of the model's q and u) are")
            raise ModelError(
                f"the absolute-coordinate formulation: {what} not supported "
                f'there; run the model with formulation = "joint"',
                f'{kind} "{name}"',
                "formulation",
            )
    for name in list(model.bodies) + list(model.ground_markers):
        if name.startswith(PREFIX):
            raise ModelError(
                f'names starting with "{PREFIX}" are kept for the '
                f"absolute-coordinate formulation's own joints and markers",
                f'body "{name}"',
                "name",
            )


def joints_with_coordinates(model: Model) -> set[str]:
    """The joints that keep their coordinates in the absolute form: those with a
    driver, a motor, or a joint spring or damper (module docstring)."""
    keep = {d.joint for d in model.drivers.values()}
    keep |= {a.joint for a in model.actuators.values()}
    keep |= {
        name
        for name, j in model.joints.items()
        if np.any(j.stiffness != 0.0) or np.any(j.damping != 0.0)
    }
    return keep


def absolute_model(
    model: Model, q0: NDArray[np.float64], u0: NDArray[np.float64], cm: CompiledModel
) -> tuple[Model, dict[str, float], dict[str, str]]:
    """(the absolute-coordinate model, {coordinate name: rate}) of `model` (a Model)
    started from the joint-coordinate state (q0, u0) of its compiled form `cm`
    (consistent with its constraints): the beams' elastic coordinates and the kept
    joints' coordinates go into the model, the elastic rates are for
    `set_elastic_rates` after compiling. A copy; `model` is unchanged.

    Returns (model, rates, absolute_joints): absolute_joints {joint name: body name}
    are the joints that place each body, for compile_model."""
    from ..dynamics import api

    _refuse(model)
    ws = api.kinematics(cm, q0, u0, 0.0)
    out = copy.copy(model)
    out.bodies = {}
    out.ground_markers = dict(model.ground_markers)
    out.joints = {}
    placing = {}
    pose = {}
    for k, name in enumerate(cm.topology.body_names):
        if name in model.bodies:
            pose[name] = (ws.r[k].copy(), ws.rot[k].copy(), ws.rd[k].copy(), ws.omega[k].copy())
    index = {name: k for k, name in enumerate(cm.coordinate_names)}
    rates = {}
    joint: str | Joint  # a name here, a Joint in the second loop
    for name, body in model.bodies.items():
        body = copy.copy(body)
        out.bodies[name] = body
        if hasattr(body, "nf"):
            assert isinstance(body, (BeamBody, FeBody))
            names = body.coordinate_names()
            body.initial = np.array([q0[index[c]] for c in names])
            rates.update({c: u0[index[c]] for c in names})
        r, rot, rd, om = pose[name]
        joint = absolute_joint_name(name)
        out.add_marker(GROUND, joint, position=r, orientation=rot)
        out.add_joint(
            joint,
            "general",
            GROUND,
            name,
            parent_marker=joint,
            child_marker=ORIGIN,
            translation_axes=np.eye(3),
            rotation_axes=np.eye(3),
            initial=0.0,
            initial_rate=np.concatenate([rot.T @ rd, rot.T @ om]),
        )
        placing[joint] = name
    keep = joints_with_coordinates(model)
    for name, joint in model.joints.items():
        joint = copy.copy(joint)
        if name not in keep:
            joint.cut = True
            out.joints[name] = joint
            continue
        frame = copy_name(name)
        out.bodies[frame] = RigidBody(
            frame,
            0.0,
            np.zeros(3),
            np.zeros((3, 3)),
            {ORIGIN: Marker(ORIGIN, frame, np.zeros(3), np.eye(3))},
        )
        values = joint.coordinate_names()
        joint.initial = np.array(
            [q0[index[c]] if c in index else joint.initial[k] for k, c in enumerate(values)]
        )
        joint.initial_rate = np.array([u0[index[c]] if c in index else 0.0 for c in values])
        child, child_marker = joint.child, joint.child_marker
        joint.child, joint.child_marker, joint.cut = frame, ORIGIN, False
        out.joints[name] = joint
        out.add_joint(
            frame, "fixed", frame, child, parent_marker=ORIGIN, child_marker=child_marker, cut=True
        )
    return out, rates, placing


def set_elastic_rates(cm_abs: CompiledModel, rates: Mapping[str, float]) -> None:
    """Put the elastic rates {name: rate} of `absolute_model` into cm_abs.u0 (a beam
    has initial elastic coordinates in the model file, not rates)."""
    index = {name: k for k, name in enumerate(cm_abs.coordinate_names)}
    for name, rate in rates.items():
        cm_abs.u0[index[name]] = rate
