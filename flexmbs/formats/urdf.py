"""A robot described in URDF as a flexmbs model file (`flexmbs import-urdf`).

The URDF is read, every value checked, by flexmbs.formats.urdf_reader; the model is
written as TOML text, which `loads_model` reads like any model file, so the imported
robot can be edited, run and kept as a file; what that reading finds wrong is reported
against the URDF (its link or joint). The mapping:

* every link that a moving joint carries becomes a rigid body whose frame is the link
  frame; links fixed to it (`fixed` joints, any depth) are merged into it: their
  inertials add to its mass, centre of mass and inertia (parallel-axis theorem), and
  their frames become markers named after them. Links fixed to the root link, and the
  root link itself, are the ground.
* inertials: mass, the centre of mass at the inertial origin, the inertia about it
  turned into body axes, I_body = R I R^T (R the inertial frame's rotation);
* joints: `revolute` and `continuous` -> revolute, `prismatic` -> prismatic,
  `floating` -> free, `planar` -> planar (`axis`, the plane's normal); the joint's
  origin is a marker on the parent body (position and orientation of the joint frame),
  the axis in that frame, the child's frame at the joint frame when q = 0, as URDF has
  it. The limits of a revolute or prismatic joint become `limits` with compliant stops
  (flexmbs.dynamics.stops) that hold the joint's effort at STOP_PENETRATION into
  them, damped over STOP_DAMPING_TIME, written out for the user to set to the real
  stops; velocity limits and mimic relations are noted in comments (a mimic joint
  moves freely);
* gravity along -z (9.81 m/s^2), which URDF leaves to the simulator.

`flexible`: links replaced by beams, each "LINK:AXIS[:ELEMENTS]" (AXIS x, y or z of the
link frame, 4 elements by default): the beam runs from the link's frame along AXIS to
the point nearest the frame of the link's child joint, then on to that frame when it
lies off the axis; its section is an aluminium round tube (diameter / wall 10) of the
link's mass over that length, written out for the user to change. The rigid inertia
of the link is replaced by the beam's. The child joint sits at the beam's last node.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..errors import ModelError
from ..model.description import GROUND, Model
from .toml_reader import loads_model
from .urdf_beam import FlexibleSpec, beam_lines, beam_material, flexible_specs
from .urdf_geometry import shapes_inertial
from .urdf_reader import UrdfError, UrdfJoint, UrdfLink, UrdfRobot, parse_urdf
from .urdf_repair import legal_names, repaired_inertia, start_within

__all__ = [
    "urdf_model_text",
    "urdf_model",
    "import_urdf",
    "UrdfImport",
    "renamed_links",
    "load_urdf",
    "read_urdf",
    "UrdfError",
    "DEFAULT_GRAVITY",
]

DEFAULT_GRAVITY = (0.0, 0.0, -9.81)
JOINT_TYPES = {
    "revolute": "revolute",
    "continuous": "revolute",
    "prismatic": "prismatic",
    "floating": "free",
    "planar": "planar",
}
SOLVER_RIGID = ['method = "bdf"  # validation', "t_end = 1.0", "rtol = 1e-8", "atol = 1e-10"]
"""The rigid robot's solver: bdf at a tolerance that validates the energy balance."""
SOLVER_FLEXIBLE = [
    'method = "bdf"  # the beams reduced and damped: steps at the pace of the motion',
    "t_end = 1.0",
    "rtol = 1e-8",
    "atol = 1e-10",
]
"""A robot with beams (reduced to their lowest modes with modal derivatives, lightly
damped: flexmbs.formats.urdf_beam): bdf at the rigid robot's tolerance, where the energy
balance and `flexmbs verify` pass and the run costs a few times the rigid one."""
STOP_PENETRATION = {"rad": math.radians(1.0), "m": 1e-3}
"""How far into its stop a joint goes under its URDF effort: the stop's stiffness is
effort / STOP_PENETRATION (N m/rad or N/m)."""
STOP_DAMPING_TIME = 0.01
"""s: the stop's damping is its stiffness times this (N m s/rad or N s/m)."""


@dataclass
class _Body:
    name: str
    mass: float = 0.0
    first_moment: NDArray[np.float64] = field(default_factory=lambda: np.zeros(3))
    second: NDArray[np.float64] = field(default_factory=lambda: np.zeros((3, 3)))
    markers: dict[str, NDArray[np.float64]] = field(default_factory=dict)  # name -> 4 x 4
    notes: list[str] = field(default_factory=list)

    def add_inertial(self, pose: NDArray[np.float64], mass: float, inertia: NDArray) -> None:
        """A link's inertial at `pose` (4 x 4, body frame): mass, inertia about its
        centre of mass in the inertial frame's axes."""
        c, r = pose[:3, 3], pose[:3, :3]
        self.mass += mass
        self.first_moment += mass * c
        self.second += r @ inertia @ r.T + mass * (c @ c * np.eye(3) - np.outer(c, c))

    def com_and_inertia(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """(centre of mass, inertia about it in body axes) of what was added."""
        c = self.first_moment / self.mass
        about_com = self.second - self.mass * (c @ c * np.eye(3) - np.outer(c, c))
        return c, 0.5 * (about_com + about_com.T)


def read_urdf(path: str | os.PathLike[str]) -> Any:
    """The robot of the URDF `path` as yourdfpy reads it (links with their visuals,
    joints, materials: what the viewer draws, `pip install 'flexmbs[view]'`), once
    flexmbs's own strict reading (flexmbs.formats.urdf_reader.parse_urdf) has found
    nothing wrong with it."""
    parse_urdf(path)
    try:
        import yourdfpy
    except ImportError:
        raise UrdfError("URDF meshes need yourdfpy: pip install 'flexmbs[view]'") from None
    try:
        urdf = yourdfpy.URDF.load(
            os.fspath(path),
            build_scene_graph=False,
            build_collision_scene_graph=False,
            load_meshes=False,
            load_collision_meshes=False,
        )
    except Exception as exc:  # noqa: BLE001 - any parse failure is bad input
        raise UrdfError(
            f"not a readable URDF ({type(exc).__name__}: {exc})", source=os.fspath(path)
        ) from None
    return urdf.robot


def _num(x: float) -> str:
    return repr(float(x))


def _vector(v: Sequence[float] | NDArray) -> str:
    return "[" + ", ".join(_num(x) for x in v) + "]"


def _matrix(m: NDArray) -> str:
    return "[" + ", ".join(_vector(row) for row in m) + "]"


def _key(name: str) -> str:
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


def urdf_model_text(
    path: str | os.PathLike[str],
    flexible: Sequence[str] = (),
    gravity: Sequence[float] = DEFAULT_GRAVITY,
    name: str | None = None,
    density: float | None = None,
    floating_base: bool = False,
    material: str | None = None,
) -> str:
    """The flexmbs model file (TOML text) of the URDF `path` (the module docstring)."""
    return import_urdf(path, flexible, gravity, name, density, floating_base, material).text


def urdf_model(
    path: str | os.PathLike[str],
    flexible: Sequence[str] = (),
    gravity: Sequence[float] = DEFAULT_GRAVITY,
    name: str | None = None,
    density: float | None = None,
    floating_base: bool = False,
    material: str | None = None,
) -> tuple[str, Model]:
    """(the model file text, the Model read from it) of the URDF `path`; UrdfError,
    naming the URDF's link or joint, for anything wrong with it."""
    done = import_urdf(path, flexible, gravity, name, density, floating_base, material)
    return done.text, done.model


@dataclass
class UrdfImport:
    """An imported URDF: the model file's text, the Model read from it, and the notes
    on what the import changed to make the URDF a model (also comments of the text)."""

    text: str
    model: Model
    notes: list[str]


def import_urdf(
    path: str | os.PathLike[str],
    flexible: Sequence[str] = (),
    gravity: Sequence[float] = DEFAULT_GRAVITY,
    name: str | None = None,
    density: float | None = None,
    floating_base: bool = False,
    material: str | None = None,
) -> UrdfImport:
    """The URDF `path` as a model (the module docstring): `density` (kg/m^3) gives the
    links without <inertial> the mass of their shapes; `floating_base` joins the root
    link to the ground by a free joint instead of making it the ground."""
    if density is not None and not (math.isfinite(density) and density > 0.0):
        raise UrdfError(f"--density {density!r}: expected a density > 0, kg/m^3")
    flex = flexible_specs(flexible)
    beam_material(material)
    robot = parse_urdf(path)
    notes: list[str] = []
    text = _model_text(robot, path, flex, gravity, name, density, floating_base, material, notes)
    try:
        model = loads_model(text, source=os.fspath(path))
    except ModelError as exc:
        item = exc.item
        if item and item.startswith("body "):
            item = "link " + item[len("body ") :]
        raise UrdfError(
            exc.message + " (in the model made of it)", item, exc.field, os.fspath(path)
        ) from None
    return UrdfImport(text, model, notes)


def _inertia_from_shapes(
    robot: UrdfRobot, path: str | os.PathLike[str], density: float, notes: list[str]
) -> None:
    """Links without <inertial> given the mass and inertia of their collision shapes
    (else their visual ones) at `density` (flexmbs.formats.urdf_geometry)."""
    treated, missing = [], []
    for link in robot.links.values():
        if link.has_inertial:
            continue
        shapes = link.collisions or link.visuals
        solid = shapes_inertial(shapes, density, path) if shapes else None
        if solid is None:
            continue
        mass, com, inertia, lost = solid
        link.mass, link.inertia, link.has_inertial = mass, inertia, True
        link.inertial_origin = np.eye(4)
        link.inertial_origin[:3, 3] = com
        treated.append(link.name)
        missing += lost
    if treated:
        notes.append(
            f"mass and inertia from the shapes at {density:g} kg/m^3 (no <inertial>): "
            + ", ".join(treated)
        )
    if missing:
        notes.append(
            "mesh files not found or not read, left out of the mass: "
            + ", ".join(missing[:5])
            + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
        )


def _subtree_mass(robot: UrdfRobot, by_parent: dict[str, list[UrdfJoint]]) -> dict[str, float]:
    """The mass each link carries: its own and that of every link below it."""
    out: dict[str, float] = {}

    def visit(link: str) -> float:
        total = robot.links[link].mass
        for j in by_parent.get(link, []):
            total += visit(j.child)
        out[link] = total
        return total

    visit(robot.root)
    return out


def _start(j: UrdfJoint) -> float:
    """The joint's coordinate at the start: 0, or inside its limits when 0 is not."""
    if j.type not in ("revolute", "prismatic") or j.limit is None:
        return 0.0
    lower, upper = j.limit.lower, j.limit.upper
    if lower is None or upper is None or not lower < upper:
        return 0.0
    inside = start_within(float(lower), float(upper), "m" if j.type == "prismatic" else "rad")
    return 0.0 if inside is None else inside


def _joint_motion(j: UrdfJoint, q: float) -> NDArray[np.float64]:
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


def _model_text(
    robot: UrdfRobot,
    path: str | os.PathLike[str],
    flex: dict[str, FlexibleSpec],
    gravity: Sequence[float],
    name: str | None,
    density: float | None,
    floating_base: bool,
    material: str | None,
    notes: list[str],
) -> str:
    links = robot.links
    source = os.fspath(path)
    by_parent: dict[str, list[UrdfJoint]] = {}
    for j in robot.joints.values():
        by_parent.setdefault(j.parent, []).append(j)
    if density is not None:
        _inertia_from_shapes(robot, path, density, notes)
    carried = _subtree_mass(robot, by_parent)
    moving = [j.child for j in robot.joints.values() if j.type != "fixed"]
    if (moving or floating_base) and sum(carried[c] for c in moving) + (
        carried[robot.root] if floating_base else 0.0
    ) <= 0.0:
        raise UrdfError(
            "no link that moves carries mass (no <inertial>): there is nothing to "
            "simulate; give the links an <inertial>, or import with --density (kg/m^3) "
            "for the mass of their shapes",
            source=source,
        )
    frozen = {
        j.name
        for j in robot.joints.values()
        if j.type != "fixed"
        and carried[j.child] <= 0.0
        and j.type in ("revolute", "continuous", "prismatic")
    }
    frozen_top = [
        n for n in frozen if robot.joints[n].parent not in {robot.joints[m].child for m in frozen}
    ]
    if frozen_top:
        notes.append(
            "held fixed, carrying no mass (give their links an <inertial>, or --density "
            "for the mass of their shapes): joint " + ", ".join(sorted(frozen_top))
        )
    chains = _massless_chains(robot, by_parent, carried, frozen)
    if chains:
        notes.append(
            "revolute joints through links without mass (at one point) made one joint "
            "of their rotations: "
            + "; ".join(" + ".join(j.name for j in chain) for chain in chains.values())
        )
    link_names, joint_names, name_notes = legal_names(
        links, [(j.name, j.type != "fixed" and j.name not in frozen) for j in robot.joints.values()]
    )
    notes += name_notes
    flex = {link_names.get(k, k): v for k, v in flex.items()}
    new_to_old = {new: old for old, new in link_names.items()}
    unknown = sorted(set(flex) - set(link_names.values()))
    if unknown:
        raise UrdfError(f"--flexible: no link {unknown[0]!r} in the URDF", source=source)
    new_root = link_names[robot.root]
    if new_root in flex and not floating_base:
        raise UrdfError(
            f"--flexible {new_root}: the link is the root of the robot, which becomes "
            "the ground; only a link that a moving joint carries can be a beam",
            source=source,
        )
    ground = _Body(GROUND)
    bodies: dict[str, _Body] = {}
    place = {robot.root: (GROUND, np.eye(4))}  # link -> (body, link frame in body frame)
    joints_out: list[tuple[UrdfJoint, str, str]] = []  # (joint, its name, parent body)
    if floating_base:
        base = UrdfJoint("floating_base", 0, "floating", "", robot.root, np.eye(4), np.zeros(3))
        base_name = _free_name(
            "floating_base", set(link_names.values()) | set(joint_names.values())
        )
        bodies[new_root] = _Body(new_root)
        place[robot.root] = (new_root, np.eye(4))
        ground.markers[base_name] = np.eye(4)
        joints_out.append((base, base_name, GROUND))
    composite: dict[str, list[UrdfJoint]] = {}
    order = [robot.root]
    while order:
        link_name = order.pop(0)
        body_name, pose = place[link_name]
        body = ground if body_name == GROUND else bodies[body_name]
        link = links[link_name]
        if body_name != GROUND and link.mass:
            body.add_inertial(pose @ link.inertial_origin, link.mass, link.inertia)
        for j in by_parent.get(link_name, []):
            joint_pose = pose @ j.origin
            child = link_names[j.child]
            if j.type == "fixed" or j.name in frozen:
                if child in flex:
                    raise UrdfError(
                        f"--flexible {child}: the link is fixed to its parent "
                        f'(joint "{j.name}"); only a link that a moving joint carries can '
                        "be a beam",
                        source=source,
                    )
                if j.name in frozen:
                    joint_pose = joint_pose @ _joint_motion(j, _start(j))
                place[j.child] = (body_name, joint_pose)
                body.markers[child] = joint_pose
            elif j.name in chains:
                chain = chains[j.name]
                last = chain[-1].child
                turn = np.eye(4)
                for k in chain[1:]:
                    turn = turn @ k.origin
                body.markers[joint_names[j.name]] = joint_pose @ turn
                child = link_names[last]
                bodies[child] = _Body(child)
                place[last] = (child, np.eye(4))
                joints_out.append((j, joint_names[j.name], body_name))
                composite[j.name] = chain
                order.append(last)
                continue
            else:
                body.markers[joint_names[j.name]] = joint_pose
                bodies[child] = _Body(child)
                place[j.child] = (child, np.eye(4))
                joints_out.append((j, joint_names[j.name], body_name))
            order.append(j.child)
    if not bodies:
        raise UrdfError(
            "no link moves: every link is fixed to the root link, which becomes the "
            "ground, so there is nothing to simulate (add a moving joint, or import "
            "with --floating-base to let the robot move free)",
            source=source,
        )
    body_lines: list[str] = []
    for body in bodies.values():
        if body.name in flex:
            body_lines += _beam_body_lines(
                body, links[new_to_old[body.name]], flex[body.name], joints_out, material, notes
            )
            continue
        if body.mass <= 0.0:
            raise UrdfError(
                f'link "{body.name}" moves but carries no mass (no <inertial>, and none on '
                "the links fixed to it), while links below it do: flexmbs needs mass on "
                "every moving body; give it an <inertial>, or import with --density "
                "(kg/m^3) for the mass of its shapes",
                source=source,
            )
        com, inertia = body.com_and_inertia()
        inertia, note, refusal = repaired_inertia(body.mass, inertia)
        if refusal:
            raise UrdfError(
                f"{refusal}: give the link a consistent <inertial>",
                f'link "{body.name}"',
                "inertia",
                source=source,
            )
        if note:
            notes.append(f'link "{body.name}": {note}')
        body_lines += [
            "",
            f"[bodies.{_key(body.name)}]",
            f"mass = {_num(body.mass)}  # kg",
            f"com = {_vector(com)}  # m, link frame",
            f"inertia = {_matrix(inertia)}  # kg m^2, about the com",
            'inertia_about = "com"',
        ]
        for marker, pose in body.markers.items():
            body_lines += _marker_lines(body.name, marker, pose)
    mimics = [j.name for j, _, _ in joints_out if j.mimic is not None]
    if mimics:
        notes.append(
            "mimic joints move freely, their coupling not enforced (as Pinocchio reads "
            "them by default): " + ", ".join(mimics)
        )
    joint_lines: list[str] = []
    for j, jname, parent in joints_out:
        if j.name in composite:
            chain = composite[j.name]
            joint_lines += _general_lines(chain, jname, parent, link_names[chain[-1].child], notes)
        else:
            joint_lines += _joint_lines(j, jname, parent, link_names[j.child], notes)
    renamed = [(old, new) for old, new in link_names.items() if old != new]
    lines = [
        f"# Imported from {Path(path).name} by flexmbs import-urdf: links, inertials and",
        "# joints as the URDF gives them (links fixed to a moving link merged into it).",
        f"# urdf: {Path(path).resolve()}",
    ]
    lines += [f"# urdf link: {_key(old)} = {_key(new)}" for old, new in renamed]
    lines += [f"# note: {n}" for n in notes]
    lines += [
        "",
        "[model]",
        f"name = {_key(name or Path(path).stem)}",
        f"gravity = {_vector(gravity)}",
        "",
        "[solver]",
        *(SOLVER_FLEXIBLE if flex else SOLVER_RIGID),
        "",
        "[output]",
        "step = 0.01",
    ]
    for marker, pose in ground.markers.items():
        lines += _marker_lines("ground", marker, pose)
    return "\n".join(lines + body_lines + joint_lines) + "\n"


def _free_name(name: str, taken: set[str]) -> str:
    k = 1
    out = name
    while out in taken:
        k += 1
        out = f"{name}_{k}"
    return out


def _marker_lines(body: str, marker: str, pose: NDArray[np.float64]) -> list[str]:
    table = "ground.markers" if body == GROUND else f"bodies.{_key(body)}.markers"
    out = ["", f"[{table}.{_key(marker)}]", f"position = {_vector(pose[:3, 3])}"]
    if not np.allclose(pose[:3, :3], np.eye(3), rtol=0.0, atol=0.0):
        out.append(f"orientation = {_matrix(pose[:3, :3])}  # columns: the marker's axes")
    return out


def _beam_body_lines(
    body: _Body,
    link: UrdfLink,
    flex: FlexibleSpec,
    joints_out: list[tuple[UrdfJoint, str, str]],
    material: str | None,
    notes: list[str],
) -> list[str]:
    """The beam of a link (flexmbs.formats.urdf_beam), the joint it carries at its last
    node."""
    carried = [name for _, name, parent in joints_out if parent == body.name]
    if len(carried) > 1:
        raise UrdfError(
            f"--flexible {body.name}: the link carries {len(carried)} moving joints; a "
            "beam here carries one, at its last node"
        )
    if carried:
        end = body.markers[carried[0]][:3, 3]
    elif body.markers:
        end = max(body.markers.values(), key=lambda p: float(np.linalg.norm(p[:3, 3])))[:3, 3]
    else:
        raise UrdfError(f"--flexible {body.name}: the link carries nothing to end a beam at")
    lines = beam_lines(
        _key(body.name), link, body.mass, flex, np.asarray(end, float), material, notes
    )
    if carried:
        lines += [
            "",
            f"[bodies.{_key(body.name)}.markers.{_key(carried[0])}]",
            "node = -1",
        ]
        pose = body.markers[carried[0]]
        if not np.allclose(pose[:3, :3], np.eye(3), rtol=0.0, atol=0.0):
            lines.append(f"orientation = {_matrix(pose[:3, :3])}")
    return lines


def _joint_lines(j: UrdfJoint, name: str, parent: str, child: str, notes: list[str]) -> list[str]:
    kind = JOINT_TYPES[j.type]
    out = [
        "",
        f"[joints.{_key(name)}]  # URDF {j.type}" + (f' "{j.name}"' if name != j.name else ""),
    ]
    out += [
        f'type = "{kind}"',
        f"parent = {_key(parent)}",
        f"parent_marker = {_key(name)}",
        f"child = {_key(child)}",
    ]
    if kind in ("revolute", "prismatic", "planar"):
        out.append(f"axis = {_vector(j.axis)}")
    if j.type == "continuous":
        if j.limit is not None and j.limit.velocity is not None:
            out.append(f"# velocity limit {j.limit.velocity} rad/s (not enforced)")
    else:
        out += _limit_lines(kind, j, notes)
    if j.mimic is not None:
        out.append(
            f"# mimics {j.mimic.joint} (multiplier {j.mimic.multiplier}, offset "
            f"{j.mimic.offset}): not enforced, the joint moves freely"
        )
    return out


def _massless_chains(
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


def _general_lines(
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
    out = ["", f"[joints.{_key(name)}]  # URDF " + " + ".join(f'"{j.name}"' for j in chain)]
    out += [
        'type = "general"',
        f"parent = {_key(parent)}",
        f"parent_marker = {_key(name)}",
        f"child = {_key(child)}",
        f"rotation_axes = {_matrix(np.array(axes))}",
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
            limits.append(f"[{_num(lim.lower or 0.0)}, {_num(lim.upper or 0.0)}]")
            stiffness.append(stop)
            damping.append(stop * STOP_DAMPING_TIME)
            q0 = _start(j)
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
            f"limit_stiffness = {_vector(stiffness)}",
            f"limit_damping = {_vector(damping)}",
        ]
    if any(start):
        out.append(f"initial = {_vector(start)}  # within the limits")
    return out


def _limit_lines(kind: str, j: UrdfJoint, notes: list[str]) -> list[str]:
    """The `limits` of a revolute or prismatic joint and their stops (module text),
    its start inside them; comments for what is not enforced."""
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
        f"limits = {_vector([lower, upper])}  # {unit}; stops from the effort, "
        f"{effort:g}, at {STOP_PENETRATION[unit]:.4g} {unit} into them: set the real ones",
        f"limit_stiffness = {_num(stiffness)}",
        f"limit_damping = {_num(stiffness * STOP_DAMPING_TIME)}",
    ]
    start = _start(j)
    if start != 0.0:
        out.append(f"initial = {_num(start)}  # within the limits")
        notes.append(
            f'joint "{j.name}": 0 is not inside its limits [{lower:g}, {upper:g}] {unit}; '
            f"it starts at {start:.6g} {unit}"
        )
    if limit.velocity is not None:
        out.append(f"# velocity limit {limit.velocity} {unit}/s (not enforced)")
    return out


RENAMED_LINK = re.compile(r'^# urdf link: "((?:[^"\\]|\\.)*)" = "((?:[^"\\]|\\.)*)"$', re.MULTILINE)


def renamed_links(text: str) -> dict[str, str]:
    """{URDF link name: its name in the model} for the links an imported model file
    (its `text`) renamed (its `# urdf link: "OLD" = "NEW"` comments); a link not in it
    kept its name."""

    def unquote(x: str) -> str:
        return x.replace('\\"', '"').replace("\\\\", "\\")

    return {unquote(a): unquote(b) for a, b in RENAMED_LINK.findall(text)}


def load_urdf(
    path: str | os.PathLike[str],
    flexible: Sequence[str] = (),
    gravity: Sequence[float] = DEFAULT_GRAVITY,
) -> Model:
    """The Model of the URDF `path` (through its model file text, kept as the model's
    source text)."""
    return urdf_model(path, flexible, gravity)[1]
