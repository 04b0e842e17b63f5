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
  turned into body axes, I_body = R I R^T (R the inertial frame's rotation); with
  `density`, a body whose links have no <inertial> is written as that `density` and
  its links' collision (else visual) `shapes` in the body frame, which the reader
  turns into its mass and inertia (flexmbs.model.solid_shapes);
* joints: `revolute` and `continuous` -> revolute, `prismatic` -> prismatic,
  `floating` -> free, `planar` -> planar (`axis`, the plane's normal); the joint's
  origin is a marker on the parent body (position and orientation of the joint frame),
  the axis in that frame, the child's frame at the joint frame when q = 0, as URDF has
  it. The limits of a revolute or prismatic joint become `limits` with compliant stops
  (flexmbs.dynamics.stops) that hold the joint's effort at STOP_PENETRATION into
  them, damped over STOP_DAMPING_TIME, written out for the user to set to the real
  stops; velocity limits are noted in comments; a mimic joint follows its leader
  through a coupler, or is held where a held leader puts it
  (flexmbs.formats.urdf_joints);
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
from ..model.solid_shapes import Shape, shapes_solid
from .toml_reader import loads_model
from .urdf_beam import FlexibleSpec, beam_lines, beam_material, flexible_specs
from .urdf_geometry import density_lines, link_shapes, posed_shape
from .urdf_joints import (  # noqa: F401 - the stops' constants, read from here too
    STOP_DAMPING_TIME,
    STOP_PENETRATION,
    general_lines,
    joint_lines,
    joint_motion,
    joint_start,
    massless_chains,
    mimic_coupler_lines,
    mimic_followers,
    mimic_note,
    mimic_values,
    toml_key,
    toml_matrix,
    toml_number,
    toml_vector,
)
from .urdf_reader import UrdfError, UrdfJoint, UrdfLink, UrdfRobot, parse_urdf
from .urdf_repair import legal_names, repaired_inertia

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
SOLVER_RIGID = ['method = "bdf"  # validation', "t_end = 1.0", "rtol = 1e-8", "atol = 1e-10"]
"""The rigid robot's solver: bdf at a tolerance that validates the energy balance."""
SOLVER_FLEXIBLE = [
    'method = "bdf"  # the beams reduced and damped: steps at the pace of the motion',
    "t_end = 1.0",
    "rtol = 1e-6",
    "atol = 1e-10  # below a hundredth of the links' modal amplitudes",
]
"""A robot with beams (reduced to their lowest modes with modal derivatives and
correction modes, their modes damped: flexmbs.formats.urdf_beam): bdf at rtol 1e-6, as the
solvers guide has it for damped flexible mechanisms with stops and loops, where the
energy balance and `flexmbs verify` pass on the six arms of
benchmarks/bench_urdf_robots.py (galpha at rtol 1e-5 to 1e-6 fails `flexmbs verify` on
the arms whose joints strike their stops: the ringing the impacts start differs
between the tolerances)."""


@dataclass
class _Body:
    name: str
    mass: float = 0.0
    first_moment: NDArray[np.float64] = field(default_factory=lambda: np.zeros(3))
    second: NDArray[np.float64] = field(default_factory=lambda: np.zeros((3, 3)))
    markers: dict[str, NDArray[np.float64]] = field(default_factory=dict)  # name -> 4 x 4
    notes: list[str] = field(default_factory=list)
    given_mass: float = 0.0  # of <inertial>s, not of shapes at a --density
    shapes: list[Shape] = field(default_factory=list)  # body frame, --density

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
        found, lost = link_shapes(link.collisions or link.visuals, path)
        missing += lost
        if not found:
            continue
        mass, com, inertia = shapes_solid(found, density)
        link.mass, link.inertia, link.has_inertial = mass, inertia, True
        link.inertial_origin = np.eye(4)
        link.inertial_origin[:3, 3] = com
        link.density_shapes = found
        treated.append(link.name)
    if treated:
        notes.append(
            f"mass and inertia from the shapes at {density:g} kg/m^3 (no <inertial>; "
            "the bodies' `density` and `shapes`): " + ", ".join(treated)
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


@dataclass
class _Held:
    """The joints held fixed ({joint: its coordinate there}) and the revolute chains
    made one `general` joint ({first joint: the chain})."""

    values: dict[str, float]
    chains: dict[str, list[UrdfJoint]]


@dataclass
class _Tree:
    """The bodies of a URDF: the ground and the moving bodies (with the links merged
    into them as markers), the joints between them (joint, its name, parent body), the
    chains among them, and the model names of links and joints."""

    ground: _Body
    bodies: dict[str, _Body]
    joints: list[tuple[UrdfJoint, str, str]]
    composite: dict[str, list[UrdfJoint]]
    link_names: dict[str, str]
    joint_names: dict[str, str]


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
    """The model file's text of `robot` (the module docstring); what the import changed
    is added to `notes`."""
    by_parent: dict[str, list[UrdfJoint]] = {}
    for j in robot.joints.values():
        by_parent.setdefault(j.parent, []).append(j)
    if density is not None:
        _inertia_from_shapes(robot, path, density, notes)
    held = _held_joints(robot, by_parent, floating_base, os.fspath(path), notes)
    tree = _tree(robot, by_parent, held, flex, floating_base, os.fspath(path), notes)
    flex = {tree.link_names.get(k, k): v for k, v in flex.items()}
    new_to_old = {new: old for old, new in tree.link_names.items()}
    body_lines: list[str] = []
    for body in tree.bodies.values():
        if body.name in flex:
            link = robot.links[new_to_old[body.name]]
            body_lines += _beam_body_lines(
                body, link, flex[body.name], tree.joints, material, notes
            )
        else:
            body_lines += _rigid_body_lines(body, os.fspath(path), density, notes)
    followers = mimic_followers(robot, held.values)
    coupled = {j.name for j in followers}
    loose = [jname for j, jname, _ in tree.joints if j.mimic is not None and j.name not in coupled]
    if loose:
        notes.append(
            "mimic joints move freely, their leader not a revolute, continuous or "
            "prismatic joint of the URDF: " + ", ".join(loose)
        )
    joint_text: list[str] = []
    for j, jname, parent in tree.joints:
        if j.name in tree.composite:
            chain = tree.composite[j.name]
            child = tree.link_names[chain[-1].child]
            joint_text += general_lines(chain, jname, parent, child, notes)
        else:
            child = tree.link_names[j.child]
            joint_text += joint_lines(j, jname, parent, child, notes, j.name in coupled)
    if followers:
        joint_text += mimic_coupler_lines(followers, _model_coordinates(tree))
        notes.append(
            "mimic joints follow their leader through a coupler (q = multiplier "
            "q_leader + offset, a constraint; their start is their leader's): "
            + ", ".join(f"{j.name} (mimics {j.mimic.joint})" for j in followers if j.mimic)
        )
    lines = _head_lines(path, tree, name, gravity, bool(flex), notes)
    return "\n".join(lines + body_lines + joint_text) + "\n"


def _model_coordinates(tree: _Tree) -> dict[str, tuple[str, int]]:
    """URDF joint -> (the model's joint, its coordinate) of every moving joint: a
    revolute of a chain made one `general` joint is that joint's coordinate."""
    out = {}
    for j, jname, _ in tree.joints:
        for k, member in enumerate(tree.composite.get(j.name, [j])):
            out[member.name] = (jname, k)
    return out


def _held_joints(
    robot: UrdfRobot,
    by_parent: dict[str, list[UrdfJoint]],
    floating_base: bool,
    source: str,
    notes: list[str],
) -> _Held:
    """The joints held fixed: those carrying no mass (at their start) and the mimic
    joints of held joints (at their relation to their leader's held value,
    flexmbs.formats.urdf_joints); the revolute chains through massless links;
    UrdfError when no moving link carries mass."""
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
    values = {
        j.name: joint_start(j)
        for j in robot.joints.values()
        if j.type in ("revolute", "continuous", "prismatic") and carried[j.child] <= 0.0
    }
    top = [
        n for n in values if robot.joints[n].parent not in {robot.joints[m].child for m in values}
    ]
    if top:
        notes.append(
            "held fixed, carrying no mass (give their links an <inertial>, or --density "
            "for the mass of their shapes): joint " + ", ".join(sorted(top))
        )
    mimics = mimic_values(robot, values)
    if mimics:
        notes.append(mimic_note(robot, mimics))
    values.update(mimics)
    chains = massless_chains(robot, by_parent, carried, set(values))
    if chains:
        notes.append(
            "revolute joints through links without mass (at one point) made one joint "
            "of their rotations: "
            + "; ".join(" + ".join(j.name for j in chain) for chain in chains.values())
        )
    return _Held(values, chains)


def _tree(
    robot: UrdfRobot,
    by_parent: dict[str, list[UrdfJoint]],
    held: _Held,
    flex: dict[str, FlexibleSpec],
    floating_base: bool,
    source: str,
    notes: list[str],
) -> _Tree:
    """The bodies of the links, from the root down: each link that a moving joint
    carries a body, the links held or fixed to it merged in as markers; names made
    legal (noted); UrdfError for a --flexible link that cannot be a beam."""
    link_names, joint_names, name_notes = legal_names(
        robot.links,
        [(j.name, j.type != "fixed" and j.name not in held.values) for j in robot.joints.values()],
    )
    notes += name_notes
    beams = {link_names.get(k, k) for k in flex}
    unknown = sorted(beams - set(link_names.values()))
    if unknown:
        raise UrdfError(f"--flexible: no link {unknown[0]!r} in the URDF", source=source)
    new_root = link_names[robot.root]
    if new_root in beams and not floating_base:
        raise UrdfError(
            f"--flexible {new_root}: the link is the root of the robot, which becomes "
            "the ground; only a link that a moving joint carries can be a beam",
            source=source,
        )
    tree = _Tree(_Body(GROUND), {}, [], {}, link_names, joint_names)
    place = {robot.root: (GROUND, np.eye(4))}  # link -> (body, link frame in body frame)
    if floating_base:
        base = UrdfJoint("floating_base", 0, "floating", "", robot.root, np.eye(4), np.zeros(3))
        base_name = _free_name(
            "floating_base", set(link_names.values()) | set(joint_names.values())
        )
        tree.bodies[new_root] = _Body(new_root)
        place[robot.root] = (new_root, np.eye(4))
        tree.ground.markers[base_name] = np.eye(4)
        tree.joints.append((base, base_name, GROUND))
    order = [robot.root]
    while order:
        link_name = order.pop(0)
        body_name, pose = place[link_name]
        body = tree.ground if body_name == GROUND else tree.bodies[body_name]
        link = robot.links[link_name]
        if body_name != GROUND and link.mass:
            body.add_inertial(pose @ link.inertial_origin, link.mass, link.inertia)
            body.shapes += [posed_shape(shape, pose) for shape in link.density_shapes]
            body.given_mass += 0.0 if link.density_shapes else link.mass
        for j in by_parent.get(link_name, []):
            joint_pose = pose @ j.origin
            child, last = link_names[j.child], j.child
            if j.type == "fixed" or j.name in held.values:
                if child in beams:
                    raise UrdfError(
                        f"--flexible {child}: the link is fixed to its parent "
                        f'(joint "{j.name}"); only a link that a moving joint carries can '
                        "be a beam",
                        source=source,
                    )
                if j.name in held.values:
                    joint_pose = joint_pose @ joint_motion(j, held.values[j.name])
                place[j.child] = (body_name, joint_pose)
                body.markers[child] = joint_pose
                order.append(j.child)
                continue
            if j.name in held.chains:
                chain = held.chains[j.name]
                last = chain[-1].child
                for k in chain[1:]:
                    joint_pose = joint_pose @ k.origin
                tree.composite[j.name] = chain
            child = link_names[last]
            body.markers[joint_names[j.name]] = joint_pose
            tree.bodies[child] = _Body(child)
            place[last] = (child, np.eye(4))
            tree.joints.append((j, joint_names[j.name], body_name))
            order.append(last)
    if not tree.bodies:
        raise UrdfError(
            "no link moves: every link is fixed to the root link, which becomes the "
            "ground, so there is nothing to simulate (add a moving joint, or import "
            "with --floating-base to let the robot move free)",
            source=source,
        )
    return tree


def _rigid_body_lines(
    body: _Body, source: str, density: float | None, notes: list[str]
) -> list[str]:
    """The `[bodies.NAME]` table of a rigid body and its markers: the links merged
    into it, their inertia repaired where it is inconsistent (noted); UrdfError for a
    body without mass or an inertia no repair can make."""
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
    if body.shapes and density is not None:
        if body.given_mass == 0.0:
            lines = ["", f"[bodies.{toml_key(body.name)}]"]
            lines += density_lines(body.name, density, body.mass, body.shapes)
            for marker, pose in body.markers.items():
                lines += _marker_lines(body.name, marker, pose)
            return lines
        notes.append(
            f'link "{body.name}": its mass written as numbers, the links merged into it '
            "given by <inertial> and by their shapes at the density together"
        )
    lines = [
        "",
        f"[bodies.{toml_key(body.name)}]",
        f"mass = {toml_number(body.mass)}  # kg",
        f"com = {toml_vector(com)}  # m, link frame",
        f"inertia = {toml_matrix(inertia)}  # kg m^2, about the com",
        'inertia_about = "com"',
    ]
    for marker, pose in body.markers.items():
        lines += _marker_lines(body.name, marker, pose)
    return lines


def _head_lines(
    path: str | os.PathLike[str],
    tree: _Tree,
    name: str | None,
    gravity: Sequence[float],
    flexible: bool,
    notes: list[str],
) -> list[str]:
    """The model file's head: its comments (the URDF, the links renamed, the notes),
    `[model]`, `[solver]` (SOLVER_FLEXIBLE with beams, else SOLVER_RIGID), `[output]`
    and the ground's markers."""
    renamed = [(old, new) for old, new in tree.link_names.items() if old != new]
    lines = [
        f"# Imported from {Path(path).name} by flexmbs import-urdf: links, inertials and",
        "# joints as the URDF gives them (links fixed to a moving link merged into it).",
        f"# urdf: {Path(path).resolve()}",
    ]
    lines += [f"# urdf link: {toml_key(old)} = {toml_key(new)}" for old, new in renamed]
    lines += [f"# note: {n}" for n in notes]
    lines += [
        "",
        "[model]",
        f"name = {toml_key(name or Path(path).stem)}",
        f"gravity = {toml_vector(gravity)}",
        "",
        "[solver]",
        *(SOLVER_FLEXIBLE if flexible else SOLVER_RIGID),
        "",
        "[output]",
        "step = 0.01",
    ]
    for marker, pose in tree.ground.markers.items():
        lines += _marker_lines("ground", marker, pose)
    return lines


def _free_name(name: str, taken: set[str]) -> str:
    k = 1
    out = name
    while out in taken:
        k += 1
        out = f"{name}_{k}"
    return out


def _marker_lines(body: str, marker: str, pose: NDArray[np.float64]) -> list[str]:
    table = "ground.markers" if body == GROUND else f"bodies.{toml_key(body)}.markers"
    out = ["", f"[{table}.{toml_key(marker)}]", f"position = {toml_vector(pose[:3, 3])}"]
    if not np.allclose(pose[:3, :3], np.eye(3), rtol=0.0, atol=0.0):
        out.append(f"orientation = {toml_matrix(pose[:3, :3])}  # columns: the marker's axes")
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
        toml_key(body.name), link, body.mass, flex, np.asarray(end, float), material, notes
    )
    if carried:
        lines += [
            "",
            f"[bodies.{toml_key(body.name)}.markers.{toml_key(carried[0])}]",
            "node = -1",
        ]
        pose = body.markers[carried[0]]
        if not np.allclose(pose[:3, :3], np.eye(3), rtol=0.0, atol=0.0):
            lines.append(f"orientation = {toml_matrix(pose[:3, :3])}")
    return lines


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
