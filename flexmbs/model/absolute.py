"""The absolute-coordinate form of a model (seed 002; Huang chapter 5's comparison
with the method of ADAMS): every body gets its own Cartesian coordinates and every
joint of the model becomes a constraint with multipliers.

Each body b hangs from the ground on a joint "@b" of six coordinates: three
translations along, then three sequential rotations about, the axes of a ground marker
"@b" placed at b's frame in the initial state,

    r_b = r_ref + A_ref x,     A_b = A_ref Rx(th1) Ry(th2) Rz(th3),

so x = th = 0 at the start, and the elastic coordinates of a beam keep their meaning.
Every joint of the model is cut (`cut = true`): its constraint equations between its
two markers (FORMULATION.md section 5) join the equations of motion with multipliers,
and the stabilised index-2 form `M x'' + C^T lam = f`, `C x' + C_t = 0`, `C = 0`
(seed 002's `[M C^T; C 0][x''; lam] = [f; -C_xx x' x']` differentiated once less) is
integrated as for any closed loop. M* is then block-diagonal over the bodies (a body's
velocity depends on its own coordinates only).

Three sequential rotations are singular where the middle one reaches 90 degrees;
`flexmbs.dynamics.absolute.rebase_frames` moves a body's reference (r_ref, A_ref) to
its current pose before that (the angles restart at zero), so every orientation is
reached.

What stays with the joint coordinates: what acts on a joint's own coordinates
(drivers, actuators, joint springs and dampers, user laws) and rolling contacts; a
model with any of them is refused with the item named.
"""

import copy

import numpy as np

from ..errors import ModelError
from .description import GROUND, ORIGIN

__all__ = ["PREFIX", "absolute_model", "absolute_joint_name", "set_elastic_rates"]

PREFIX = "@"


def absolute_joint_name(body):
    """The name of body `body`'s six-coordinate joint (and of its ground marker)."""
    return PREFIX + body


def _refuse_joint_loads(model):
    item = None
    for kind, table in (("driver", model.drivers), ("actuator", model.actuators),
                        ("user law", getattr(model, "user_laws", {})),
                        ("contact", getattr(model, "contacts", {}))):
        for name in table:
            item = f'{kind} "{name}"'
            what = ("a rolling contact" if kind == "contact" else
                    f"a {kind} acts on a joint's own coordinates")
            raise ModelError(f'the absolute-coordinate formulation has no joint '
                             f'coordinates: {what} is not supported there; run it with '
                             f'formulation = "joint"', item, "formulation")
    for name, joint in model.joints.items():
        for fld, what in (("stiffness", "spring"), ("damping", "damper")):
            if np.any(getattr(joint, fld) != 0.0):
                raise ModelError(f"the absolute-coordinate formulation has no joint "
                                 f"coordinates for a joint {what} to act on; use a "
                                 f'point-to-point spring, or formulation = "joint"',
                                 f'joint "{name}"', fld)
    for name in list(model.bodies) + list(model.ground_markers):
        if name.startswith(PREFIX):
            raise ModelError(f'names starting with "{PREFIX}" are kept for the '
                             f"absolute-coordinate formulation's own joints and markers",
                             f'body "{name}"', "name")


def absolute_model(model, q0, u0, cm):
    """(the absolute-coordinate model, {elastic coordinate name: rate}) of `model` (a
    Model) started from the joint-coordinate state (q0, u0) of its compiled form `cm`
    (consistent with its constraints): the beams' elastic coordinates go into the
    model, their rates are for `set_elastic_rates` after compiling. A copy; `model` is
    unchanged. The returned model carries `absolute_joints` {joint name: body name}."""
    from ..dynamics import api
    _refuse_joint_loads(model)
    ws = api.kinematics(cm, q0, u0, 0.0)
    out = copy.copy(model)
    out.bodies = {}
    out.ground_markers = dict(model.ground_markers)
    out.joints = {}
    out.absolute_joints = {}
    pose = {}
    for k, name in enumerate(cm.topology.body_names):
        if name in model.bodies:
            pose[name] = (ws.r[k].copy(), ws.rot[k].copy(), ws.rd[k].copy(),
                          ws.omega[k].copy())
    index = {name: k for k, name in enumerate(cm.coordinate_names)}
    rates = {}
    for name, body in model.bodies.items():
        body = copy.copy(body)
        out.bodies[name] = body
        if hasattr(body, "nf"):
            names = body.coordinate_names()
            body.initial = np.array([q0[index[c]] for c in names])
            rates.update({c: u0[index[c]] for c in names})
        r, rot, rd, om = pose[name]
        joint = absolute_joint_name(name)
        out.add_marker(GROUND, joint, position=r, orientation=rot)
        out.add_joint(joint, "general", GROUND, name, parent_marker=joint,
                      child_marker=ORIGIN, translation_axes=np.eye(3),
                      rotation_axes=np.eye(3), initial=0.0,
                      initial_rate=np.concatenate([rot.T @ rd, rot.T @ om]))
        out.absolute_joints[joint] = name
    for name, joint in model.joints.items():
        joint = copy.copy(joint)
        joint.cut = True
        out.joints[name] = joint
    return out, rates


def set_elastic_rates(cm_abs, rates):
    """Put the elastic rates {name: rate} of `absolute_model` into cm_abs.u0."""
    index = {name: k for k, name in enumerate(cm_abs.coordinate_names)}
    for name, rate in rates.items():
        cm_abs.u0[index[name]] = rate
