"""The joints of a URDF as flexmbs joints (flexmbs.formats.urdf): their types, limits
with compliant stops, starts inside the limits, revolute chains through massless links
made one `general` joint, the mimic joints as couplers, and the joints held fixed
(carrying no mass, or mimicking a held joint).

A mimic joint, q = multiplier q_leader + offset, whose leader is a moving joint of the
model (not held; a mimic that follows in turn counts) follows it through a coupler
(flexmbs.model.coupler, written by `mimic_coupler_lines`), its start its leader's
times the multiplier plus the offset. A mimic of a held joint is held at that value
of its leader's held value: the mimicking link then moves with its parent. A mimic
joint whose leader is not a joint of the URDF, is not a revolute, continuous or
prismatic joint, or mimics in a circle, moves freely (noted).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from .urdf_reader import UrdfJoint, UrdfRobot
from .urdf_repair import start_within

__all__ = [
    "JOINT_TYPES",
    "STOP_PENETRATION",
    "STOP_DAMPING_TIME",
    "toml_number",
    "toml_vector",
    "toml_matrix",
    "toml_key",
    "joint_start",
    "joint_motion",
    "mimic_values",
    "mimic_note",
    "mimic_followers",
    "mimic_coupler_lines",
    "massless_chains",
    "joint_lines",
    "general_lines",
]

JOINT_TYPES = {
    "revolute": "revolute",
    "continuous": "revolute",
    "prismatic": "prismatic",
    "floating": "free",
    "planar": "planar",
}

STOP_PENETRATION = {"rad": math.radians(1.0), "m": 1e-3}
"""How far into its stop a joint goes under its URDF effort: the stop's stiffness is
effort / STOP_PENETRATION (N m/rad or N/m)."""
STOP_DAMPING_TIME = 0.01
"""s: the stop's damping is its stiffness times this (N m s/rad or N s/m)."""


def toml_number(x: float) -> str:
    return repr(float(x))


def toml_vector(v: Sequence[float] | NDArray) -> str:
    return "[" + ", ".join(toml_number(x) for x in v) + "]"


def toml_matrix(m: NDArray) -> str:
    return "[" + ", ".join(toml_vector(row) for row in m) + "]"


def toml_key(name: str) -> str:
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


def joint_start(j: UrdfJoint) -> float:
    """The joint's coordinate at the start: 0, or inside its limits when 0 is not."""
    if j.type not in ("revolute", "prismatic") or j.limit is None:
        return 0.0
    lower, upper = j.limit.lower, j.limit.upper
    if lower is None or upper is None or not lower < upper:
        return 0.0
    inside = start_within(float(lower), float(upper), "m" if j.type == "prismatic" else "rad")
    return 0.0 if inside is None else inside


def joint_motion(j: UrdfJoint, q: float) -> NDArray[np.float64]:
    """The child frame in the joint frame at coordinate q of a revolute or prismatic joint."""
    pose = np.eye(4)
    if q == 0.0:
        return pose
    a = j.axis / np.linalg.norm(j.axis)
    if j.type == "prismatic":
        pose[:3, 3] = q * a
        return pose
    k = np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])
    pose[:3, :3] = np.eye(3) + math.sin(q) * k + (1.0 - math.cos(q)) * (k @ k)
    return pose


def joint_lines(
    j: UrdfJoint, name: str, parent: str, child: str, notes: list[str], coupled: bool = False
) -> list[str]:
    """The `[joints.NAME]` table of a revolute, continuous, prismatic, floating or
    planar joint; `coupled`: a mimic joint that follows its leader through a coupler
    (its start is the leader's, so no start of its own is written)."""
    kind = JOINT_TYPES[j.type]
    out = [
        "",
        f"[joints.{toml_key(name)}]  # URDF {j.type}" + (f' "{j.name}"' if name != j.name else ""),
    ]
    out += [
        f'type = "{kind}"',
        f"parent = {toml_key(parent)}",
        f"parent_marker = {toml_key(name)}",
        f"child = {toml_key(child)}",
    ]
    if kind in ("revolute", "prismatic", "planar"):
        out.append(f"axis = {toml_vector(j.axis)}")
    if j.type == "continuous":
        if j.limit is not None and j.limit.velocity is not None:
            out.append(f"# velocity limit {j.limit.velocity} rad/s (not enforced)")
    else:
        out += _limit_lines(kind, j, notes, own_start=not coupled)
    if j.mimic is not None:
        out.append(
            f"# mimics {j.mimic.joint} (multiplier {j.mimic.multiplier}, offset "
            f"{j.mimic.offset}): "
            + (
                "follows it through the coupler of the same name"
                if coupled
                else "not enforced, the joint moves freely"
            )
        )
    return out


def massless_chains(
    robot: UrdfRobot,
    by_parent: dict[str, list[UrdfJoint]],
    carried: dict[str, float],
    frozen: set[str],
) -> dict[str, list[UrdfJoint]]:
    """{first joint: its chain} of revolute joints (2 or 3) through links that carry
    no mass of their own and one joint each, at no distance from the next (a spherical
    or universal joint written as revolutes, as Pinocchio and MuJoCo take them): such
    a chain becomes one `general` joint of its rotations."""
    rotary = ("revolute", "continuous")
    out: dict[str, list[UrdfJoint]] = {}
    inner: set[str] = set()
    for j in robot.joints.values():
        if j.type not in rotary or j.name in frozen or j.name in inner:
            continue
        chain = [j]
        link = j.child
        while robot.links[link].mass <= 0.0 and carried[link] > 0.0 and len(chain) < 3:
            below = by_parent.get(link, [])
            if len(below) != 1 or below[0].type not in rotary:
                break
            nxt = below[0]
            if np.linalg.norm(nxt.origin[:3, 3]) > 0.0:
                break
            chain.append(nxt)
            link = nxt.child
        if len(chain) > 1 and robot.links[link].mass > 0.0:
            out[j.name] = chain
            inner.update(k.name for k in chain[1:])
    return out


def general_lines(
    chain: list[UrdfJoint], name: str, parent: str, child: str, notes: list[str]
) -> list[str]:
    """A `general` joint of the rotations of `chain`: with R_k the rotation of joint
    k's origin (k >= 2) and a_k its axis, O_1 Rot(a_1, q_1) R_2 Rot(a_2, q_2) ... =
    O_1 R_2 ... R_n Rot(b_1, q_1) Rot(b_2, q_2) ..., b_k = (R_{k+1} ... R_n)^T a_k,
    each rotation about its axis turned by those before it (the parent marker is
    O_1 R_2 ... R_n)."""
    axes = []
    for k, j in enumerate(chain):
        after = np.eye(3)
        for nxt in chain[k + 1 :]:
            after = after @ nxt.origin[:3, :3]
        axes.append(after.T @ (j.axis / np.linalg.norm(j.axis)))
    out = ["", f"[joints.{toml_key(name)}]  # URDF " + " + ".join(f'"{j.name}"' for j in chain)]
    out += [
        'type = "general"',
        f"parent = {toml_key(parent)}",
        f"parent_marker = {toml_key(name)}",
        f"child = {toml_key(child)}",
        f"rotation_axes = {toml_matrix(np.array(axes))}",
    ]
    limits: list[str] = []
    stiffness: list[float] = []
    damping: list[float] = []
    start: list[float] = []
    for j in chain:
        lim = j.limit
        ok = (
            j.type == "revolute"
            and lim is not None
            and lim.lower is not None
            and lim.upper is not None
            and lim.lower < lim.upper
            and (lim.effort or 0.0) > 0.0
        )
        if ok and lim is not None:
            stop = float(lim.effort or 0.0) / STOP_PENETRATION["rad"]
            limits.append(f"[{toml_number(lim.lower or 0.0)}, {toml_number(lim.upper or 0.0)}]")
            stiffness.append(stop)
            damping.append(stop * STOP_DAMPING_TIME)
            q0 = joint_start(j)
            start.append(q0)
            if q0 != 0.0:
                notes.append(
                    f'joint "{j.name}": 0 is not inside its limits; it starts at {q0:.6g} rad'
                )
        else:
            limits.append("[-inf, inf]")
            stiffness.append(1.0)
            damping.append(0.0)
            start.append(0.0)
    if any(x != "[-inf, inf]" for x in limits):
        out += [
            f"limits = [{', '.join(limits)}]  # rad; stops from the efforts: set the real ones",
            f"limit_stiffness = {toml_vector(stiffness)}",
            f"limit_damping = {toml_vector(damping)}",
        ]
    if any(start):
        out.append(f"initial = {toml_vector(start)}  # within the limits")
    return out


def _limit_lines(kind: str, j: UrdfJoint, notes: list[str], own_start: bool = True) -> list[str]:
    """The `limits` of a revolute or prismatic joint and their stops (module text),
    its start inside them (with `own_start`); comments for what is not enforced."""
    limit = j.limit
    if limit is None or limit.lower is None or limit.upper is None:
        return []
    unit = "m" if kind == "prismatic" else "rad"
    lower, upper = float(limit.lower), float(limit.upper)
    effort = float(limit.effort or 0.0)
    if kind not in ("revolute", "prismatic") or not lower < upper or not effort > 0:
        return [f"# limits {lower} .. {upper} {unit}, effort {limit.effort} (not enforced)"]
    stiffness = effort / STOP_PENETRATION[unit]
    out = [
        f"limits = {toml_vector([lower, upper])}  # {unit}; stops from the effort, "
        f"{effort:g}, at {STOP_PENETRATION[unit]:.4g} {unit} into them: set the real ones",
        f"limit_stiffness = {toml_number(stiffness)}",
        f"limit_damping = {toml_number(stiffness * STOP_DAMPING_TIME)}",
    ]
    start = joint_start(j) if own_start else 0.0
    if start != 0.0:
        out.append(f"initial = {toml_number(start)}  # within the limits")
        notes.append(
            f'joint "{j.name}": 0 is not inside its limits [{lower:g}, {upper:g}] {unit}; '
            f"it starts at {start:.6g} {unit}"
        )
    if limit.velocity is not None:
        out.append(f"# velocity limit {limit.velocity} {unit}/s (not enforced)")
    return out


MIMIC_KINDS = ("revolute", "continuous", "prismatic")


def _mimic_leader(robot: UrdfRobot, j: UrdfJoint) -> UrdfJoint | None:
    """The joint that mimic joint `j` follows, where it can: a revolute, continuous or
    prismatic joint of the URDF, its chain of leaders not coming back to `j`."""
    if j.mimic is None or j.type not in MIMIC_KINDS:
        return None
    leader = robot.joints.get(j.mimic.joint)
    seen = {j.name}
    k = leader
    while k is not None:
        if k.type not in MIMIC_KINDS or k.name in seen:
            return None
        if k.mimic is None:
            return leader
        seen.add(k.name)
        k = robot.joints.get(k.mimic.joint)
    return None


def mimic_values(robot: UrdfRobot, held: dict[str, float]) -> dict[str, float]:
    """{mimic joint: the coordinate it is held at} (the module docstring): q =
    multiplier q_leader + offset at the leader's held value, for the mimic joints whose
    leader is held (a joint of `held`, or a mimic held in turn); the joints of `held`,
    the mimic joints that follow a moving leader and those that move freely left
    out."""
    out: dict[str, float] = {}

    def value(j: UrdfJoint) -> float | None:
        if j.name in held:
            return held[j.name]
        if j.name in out:
            return out[j.name]
        leader = _mimic_leader(robot, j)
        if leader is None:
            return None
        q = value(leader)
        assert j.mimic is not None
        return None if q is None else j.mimic.multiplier * q + j.mimic.offset

    for j in robot.joints.values():
        if j.mimic is None or j.name in held:
            continue
        q = value(j)
        if q is not None:
            out[j.name] = q
    return out


def mimic_followers(robot: UrdfRobot, held: dict[str, float]) -> list[UrdfJoint]:
    """The mimic joints that follow a moving joint of the model through a coupler:
    neither they nor their leader held (`held`: every joint held, the mimic joints of
    `mimic_values` among them), their leader one that `_mimic_leader` accepts."""
    return [
        j
        for j in robot.joints.values()
        if j.mimic is not None
        and j.name not in held
        and _mimic_leader(robot, j) is not None
        and j.mimic.joint not in held
    ]


def mimic_coupler_lines(
    followers: Sequence[UrdfJoint], coordinate_of: dict[str, tuple[str, int]]
) -> list[str]:
    """The `[couplers.NAME]` tables of the mimic joints `followers`, each named after
    its joint in the model; coordinate_of: URDF joint -> (the model's joint, the
    coordinate) (a revolute of a chain made one `general` joint is one of its
    coordinates)."""
    out: list[str] = []
    for j in followers:
        assert j.mimic is not None
        joint, coordinate = coordinate_of[j.name]
        leader, leader_coordinate = coordinate_of[j.mimic.joint]
        unit = "m" if j.type == "prismatic" else "rad"
        out += [
            "",
            f"[couplers.{toml_key(joint if coordinate == 0 else f'{joint}_{coordinate}')}]"
            f"  # URDF mimic: {j.name} = {j.mimic.multiplier:g} {j.mimic.joint} "
            f"+ {j.mimic.offset:g} {unit}",
            f"joint = {toml_key(joint)}",
            f"leader = {toml_key(leader)}",
            f"multiplier = {toml_number(j.mimic.multiplier)}",
            f"offset = {toml_number(j.mimic.offset)}  # {unit}",
        ]
        if coordinate:
            out.append(f"coordinate = {coordinate}")
        if leader_coordinate:
            out.append(f"leader_coordinate = {leader_coordinate}")
    return out


def mimic_note(robot: UrdfRobot, mimics: dict[str, float]) -> str:
    """The note on the mimic joints held (`mimic_values`)."""
    held = []
    for name, q in mimics.items():
        j = robot.joints[name]
        leader = j.mimic.joint if j.mimic is not None else ""
        unit = "m" if j.type == "prismatic" else "rad"
        held.append(f"{name} (mimics {leader}) at {q:.6g} {unit}")
    return (
        "mimic joints of held joints, held at their leader's held value times the "
        "multiplier plus the offset (each link moves with its parent): " + ", ".join(held)
    )
