"""Reading a URDF file (the robot description of ROS) into what `flexmbs.formats.urdf`
maps to a model: its links (name, inertial) and joints (name, type, parent and child
links, origin, axis, limit, mimic), every value checked.

The file is parsed strictly (the standard library's expat): a file cut short or not
closed, xacro macros left unexpanded, a value that is not a number, a name given twice,
a link with two parents, joints that close a loop, a joint between links that do not
exist: each is an UrdfError naming the file, the link or joint (with its line) and the
field, never a model built from what could be read. Entity declarations are refused
(a URDF has none, and their expansion is unbounded).

Poses: `<origin xyz rpy>` is the 4 x 4 transform of the child frame in the parent's,
rotation R = Rz(yaw) Ry(pitch) Rx(roll) (fixed axes roll, pitch, yaw, as URDF says).
"""

from __future__ import annotations

import math
import os
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from xml.parsers import expat

import numpy as np
from numpy.typing import NDArray

from ..errors import ModelError

__all__ = [
    "UrdfError",
    "UrdfRobot",
    "UrdfLink",
    "UrdfJoint",
    "UrdfGeometry",
    "parse_urdf",
    "URDF_JOINT_TYPES",
]

URDF_JOINT_TYPES = ("revolute", "continuous", "prismatic", "fixed", "floating", "planar")
XACRO_NAMESPACES = ("http://www.ros.org/wiki/xacro", "http://wiki.ros.org/xacro")
XACRO_SUBSTITUTION = re.compile(r"\$\{|\$\(")


class UrdfError(ModelError):
    """A URDF that cannot become a flexmbs model (naming the file, the link or joint and
    the field), or a bad --flexible spec."""


@dataclass
class UrdfGeometry:
    """A link's collision or visual shape: `kind` box (`size` the three edges, m),
    cylinder (`size` = [radius, length], along z), sphere (`size` = [radius]) or mesh
    (`filename` as the URDF writes it, `size` the scale); `origin` its pose in the link
    frame (4 x 4)."""

    kind: str
    size: NDArray[np.float64]
    origin: NDArray[np.float64]
    filename: str = ""


@dataclass
class UrdfLink:
    name: str
    line: int
    mass: float = 0.0
    inertial_origin: NDArray[np.float64] = field(default_factory=lambda: np.eye(4))
    inertia: NDArray[np.float64] = field(default_factory=lambda: np.zeros((3, 3)))
    has_inertial: bool = False
    collisions: list[UrdfGeometry] = field(default_factory=list)
    visuals: list[UrdfGeometry] = field(default_factory=list)
    density_shapes: list[Any] = field(default_factory=list)  # its mass's shapes, --density


@dataclass
class UrdfLimit:
    lower: float | None
    upper: float | None
    effort: float | None
    velocity: float | None


@dataclass
class UrdfMimic:
    joint: str
    multiplier: float
    offset: float


@dataclass
class UrdfJoint:
    name: str
    line: int
    type: str
    parent: str
    child: str
    origin: NDArray[np.float64]
    axis: NDArray[np.float64]
    limit: UrdfLimit | None = None
    mimic: UrdfMimic | None = None


@dataclass
class UrdfRobot:
    name: str
    links: dict[str, UrdfLink]
    joints: dict[str, UrdfJoint]
    root: str


def _rpy(roll: float, pitch: float, yaw: float) -> NDArray[np.float64]:
    """R = Rz(yaw) Ry(pitch) Rx(roll)."""
    cr, sr, cp, sp, cy, sy = (
        math.cos(roll),
        math.sin(roll),
        math.cos(pitch),
        math.sin(pitch),
        math.cos(yaw),
        math.sin(yaw),
    )
    return np.array(
        [
            [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
            [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
            [-sp, cp * sr, cp * cr],
        ]
    )


class _Reader:
    """The checks of one file: each value read names the file, the item, its line and
    the field when it is not what URDF says."""

    def __init__(self, path: str, lines: dict[int, int]) -> None:
        self.path = path
        self.lines = lines

    def error(self, message: str, item: str | None = None, fld: str | None = None) -> UrdfError:
        return UrdfError(message, item, fld, source=self.path)

    def line(self, element: ET.Element) -> int:
        return self.lines.get(id(element), 0)

    def item(self, kind: str, name: str, element: ET.Element) -> str:
        return f'{kind} "{name}" (line {self.line(element)})'

    def numbers(
        self, element: ET.Element, attr: str, n: int, item: str, fld: str, default: str | None
    ) -> NDArray[np.float64]:
        text = element.get(attr, default)
        if text is None:
            raise self.error(f"expected {n} numbers, found none", item, fld)
        try:
            values = np.array([float(x) for x in text.split()])
        except ValueError:
            raise self.error(f"expected {n} numbers, got {text!r}", item, fld) from None
        if values.shape != (n,) or not np.all(np.isfinite(values)):
            raise self.error(f"expected {n} finite numbers, got {text!r}", item, fld)
        return values

    def number(
        self,
        element: ET.Element,
        attr: str,
        item: str,
        fld: str,
        default: float | None = None,
        nonnegative: bool = False,
    ) -> float | None:
        text = element.get(attr)
        if text is None:
            return default
        try:
            value = float(text)
        except ValueError:
            raise self.error(f"expected a number, got {text!r}", item, fld) from None
        if not math.isfinite(value):
            raise self.error(f"expected a finite number, got {text!r}", item, fld)
        if nonnegative and value < 0:
            raise self.error(f"expected a number >= 0, got {text!r}", item, fld)
        return value

    def origin(self, parent: ET.Element, item: str) -> NDArray[np.float64]:
        pose = np.eye(4)
        element = parent.find("origin")
        if element is None:
            return pose
        xyz = self.numbers(element, "xyz", 3, item, "origin xyz", "0 0 0")
        rpy = self.numbers(element, "rpy", 3, item, "origin rpy", "0 0 0")
        pose[:3, :3] = _rpy(*rpy)
        pose[:3, 3] = xyz
        return pose

    def geometry(self, element: ET.Element, item: str, tag: str) -> UrdfGeometry | None:
        """The shape of a <collision> or <visual> (None without a <geometry>)."""
        geometry = element.find("geometry")
        if geometry is None or len(geometry) == 0:
            return None
        shape = geometry[0]
        origin = self.origin(element, item)
        fld = f"{tag} {shape.tag}"
        if shape.tag == "box":
            size = self.numbers(shape, "size", 3, item, fld + " size", None)
        elif shape.tag == "cylinder":
            size = np.array(
                [
                    self.number(shape, k, item, f"{fld} {k}", 0.0, True) or 0.0
                    for k in ("radius", "length")
                ]
            )
        elif shape.tag == "sphere":
            size = np.array([self.number(shape, "radius", item, fld + " radius", 0.0, True) or 0.0])
        elif shape.tag == "mesh":
            scale = shape.get("scale")
            size = np.ones(3)
            if scale is not None:
                values = self.numbers(
                    shape, "scale", len(scale.split()) or 1, item, fld + " scale", None
                )
                size = np.broadcast_to(values, 3).astype(float) if len(values) in (1, 3) else size
            return UrdfGeometry("mesh", size, origin, shape.get("filename", ""))
        else:
            return None
        return UrdfGeometry(shape.tag, np.asarray(size, float), origin)

    def link(self, element: ET.Element) -> UrdfLink:
        name = element.get("name", "")
        if not name.strip():
            raise self.error("expected a name", f"link (line {self.line(element)})", "name")
        item = self.item("link", name, element)
        link = UrdfLink(name, self.line(element))
        for tag, shapes in (("collision", link.collisions), ("visual", link.visuals)):
            for shape in element.findall(tag):
                geometry = self.geometry(shape, item, tag)
                if geometry is not None:
                    shapes.append(geometry)
        inertial = element.find("inertial")
        if inertial is None:
            return link
        link.has_inertial = True
        link.inertial_origin = self.origin(inertial, item)
        mass = inertial.find("mass")
        if mass is not None:
            link.mass = float(
                self.number(mass, "value", item, "mass", default=0.0, nonnegative=True) or 0.0
            )
        inertia = inertial.find("inertia")
        if inertia is not None:
            v = {
                k: self.number(inertia, k, item, f"inertia {k}", default=0.0) or 0.0
                for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")
            }
            link.inertia = np.array(
                [
                    [v["ixx"], v["ixy"], v["ixz"]],
                    [v["ixy"], v["iyy"], v["iyz"]],
                    [v["ixz"], v["iyz"], v["izz"]],
                ]
            )
        return link

    def joint(self, element: ET.Element) -> UrdfJoint:
        name = element.get("name", "")
        if not name.strip():
            raise self.error("expected a name", f"joint (line {self.line(element)})", "name")
        item = self.item("joint", name, element)
        kind = element.get("type")
        if kind not in URDF_JOINT_TYPES:
            raise self.error(
                f"expected one of {', '.join(URDF_JOINT_TYPES)}, got {kind!r}", item, "type"
            )
        ends = {}
        for end in ("parent", "child"):
            tag = element.find(end)
            link = None if tag is None else tag.get("link")
            if not link:
                raise self.error(f'expected <{end} link="..."/>', item, end)
            ends[end] = link
        axis = np.array([1.0, 0.0, 0.0])
        tag = element.find("axis")
        if tag is not None:
            axis = self.numbers(tag, "xyz", 3, item, "axis", "1 0 0")
            if kind != "fixed" and not np.linalg.norm(axis) > 1e-12:
                raise self.error(f"expected a non-zero axis, got {tag.get('xyz')!r}", item, "axis")
        limit = None
        tag = element.find("limit")
        if tag is not None:
            limit = UrdfLimit(
                *(self.number(tag, k, item, f"limit {k}") for k in ("lower", "upper")),
                *(
                    self.number(tag, k, item, f"limit {k}", nonnegative=True)
                    for k in ("effort", "velocity")
                ),
            )
        mimic = None
        tag = element.find("mimic")
        if tag is not None:
            if not tag.get("joint"):
                raise self.error('expected <mimic joint="..."/>', item, "mimic")
            mimic = UrdfMimic(
                str(tag.get("joint")),
                float(self.number(tag, "multiplier", item, "mimic multiplier", 1.0) or 0.0),
                float(self.number(tag, "offset", item, "mimic offset", 0.0) or 0.0),
            )
        return UrdfJoint(
            name,
            self.line(element),
            kind,
            ends["parent"],
            ends["child"],
            self.origin(element, item),
            axis,
            limit,
            mimic,
        )


def _parse(path: str, text: str) -> tuple[ET.Element, dict[int, int]]:
    """The root element and the line of each element (by id), parsed by expat."""
    lines: dict[int, int] = {}
    builder = ET.TreeBuilder()
    parser = expat.ParserCreate(namespace_separator="}")

    def tag(name: str) -> str:
        return "{" + name if "}" in name else name

    def start(name: str, attrs: dict[str, str]) -> None:
        element = builder.start(tag(name), {tag(k): v for k, v in attrs.items()})
        lines[id(element)] = parser.CurrentLineNumber

    parser.StartElementHandler = start
    parser.EndElementHandler = lambda name: builder.end(tag(name))
    parser.CharacterDataHandler = builder.data
    try:
        parser.Parse(text, True)
        root = builder.close()
    except expat.ExpatError as exc:
        reason = expat.errors.messages[exc.code]
        if reason == expat.errors.XML_ERROR_UNBOUND_PREFIX and "<xacro:" in text:
            raise _xacro_error(path, exc.lineno, "<xacro:") from None
        hint = (
            " (cut short, or not closed with </robot>?)"
            if reason in (expat.errors.XML_ERROR_NO_ELEMENTS, expat.errors.XML_ERROR_UNCLOSED_TOKEN)
            else ""
        )
        raise UrdfError(
            f"not a readable URDF: not well-formed XML at line {exc.lineno}, column "
            f"{exc.offset + 1}: {reason}{hint}",
            source=path,
        ) from None
    except AssertionError:  # TreeBuilder: text outside the root element
        raise UrdfError(
            "not a readable URDF: not well-formed XML, no single root element", source=path
        ) from None
    return root, lines


def _xacro_error(path: str, line: int, what: str) -> UrdfError:
    return UrdfError(
        f"holds xacro macros (line {line}: {what}), not expanded: expected the URDF "
        "that `xacro FILE.urdf.xacro > FILE.urdf` writes",
        source=path,
    )


def _refuse_xacro(path: str, root: ET.Element, lines: dict[int, int]) -> None:
    """UrdfError at the first xacro element or ${...} / $(...) substitution."""
    for element in root.iter():
        namespace = element.tag[1:].partition("}")[0] if element.tag.startswith("{") else ""
        if namespace in XACRO_NAMESPACES or element.tag.startswith("xacro:"):
            name = element.tag.rpartition("}")[2]
            raise _xacro_error(path, lines.get(id(element), 0), f"<xacro:{name}>")
        for key, value in element.attrib.items():
            if XACRO_SUBSTITUTION.search(value):
                raise _xacro_error(path, lines.get(id(element), 0), f'{key}="{value}"')


def parse_urdf(path: str | os.PathLike[str]) -> UrdfRobot:
    """The robot of the URDF file `path`, every value checked (the module docstring);
    UrdfError otherwise."""
    path = os.fspath(path)
    if not Path(path).is_file():
        raise UrdfError("no such file", source=path)
    try:
        raw = Path(path).read_bytes()
        text = raw.decode("utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise UrdfError(f"not a readable URDF ({exc})", source=path) from None
    if "<!ENTITY" in text:
        raise UrdfError(
            "holds entity declarations (<!ENTITY>), which a URDF has no use for: "
            "expected plain links and joints",
            source=path,
        )
    root, lines = _parse(path, text)
    _refuse_xacro(path, root, lines)
    if root.tag != "robot":
        raise UrdfError(
            f"not a readable URDF: expected <robot> at the top, found <{root.tag}>", source=path
        )
    reader = _Reader(path, lines)
    links: dict[str, UrdfLink] = {}
    for element in root.findall("link"):
        link = reader.link(element)
        if link.name in links:
            raise reader.error(
                f"defined twice (lines {links[link.name].line} and {link.line}): expected "
                "each link once",
                f'link "{link.name}"',
            )
        links[link.name] = link
    if not links:
        raise UrdfError("not a readable URDF: no <link> in <robot>", source=path)
    joints: dict[str, UrdfJoint] = {}
    parent_joint: dict[str, UrdfJoint] = {}
    for element in root.findall("joint"):
        joint = reader.joint(element)
        item = f'joint "{joint.name}" (line {joint.line})'
        if joint.name in joints:
            raise reader.error(
                f"defined twice (lines {joints[joint.name].line} and {joint.line}): expected "
                "each joint once",
                f'joint "{joint.name}"',
            )
        for end in ("parent", "child"):
            if getattr(joint, end) not in links:
                raise reader.error(f'no link "{getattr(joint, end)}" in the file', item, end)
        if joint.parent == joint.child:
            raise reader.error(f'the link "{joint.child}" is its own parent', item, "child")
        if joint.child in parent_joint:
            first = parent_joint[joint.child]
            raise reader.error(
                f'the link "{joint.child}" already hangs from joint "{first.name}" (line '
                f"{first.line}, parent {first.parent}): a link has one parent joint; a "
                "closed loop is closed in the model file (a joint with cut = true)",
                item,
                "child",
            )
        joints[joint.name] = joint
        parent_joint[joint.child] = joint
    roots = [name for name in links if name not in parent_joint]
    if len(roots) != 1:
        if not roots:
            loop = _loop(next(iter(links)), parent_joint)
            raise UrdfError(
                f"the joints {', '.join(loop)} form a loop, and no link is the root: "
                "expected a tree from one root link",
                source=path,
            )
        raise UrdfError(
            f"expected one root link (a link no joint carries), found {len(roots)}: "
            + ", ".join(roots),
            source=path,
        )
    reached = _reached(roots[0], joints)
    for name in links:
        if name not in reached:
            loop = _loop(name, parent_joint)
            raise UrdfError(
                f"the joints {', '.join(loop)} form a loop, apart from the root link "
                f'"{roots[0]}": expected a tree',
                source=path,
            )
    return UrdfRobot(root.get("name", Path(path).stem), links, joints, roots[0])


def _reached(root: str, joints: dict[str, UrdfJoint]) -> set[str]:
    children: dict[str, list[str]] = {}
    for j in joints.values():
        children.setdefault(j.parent, []).append(j.child)
    seen, todo = {root}, [root]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in seen:
                seen.add(child)
                todo.append(child)
    return seen


def _loop(start: str, parent_joint: dict[str, UrdfJoint]) -> list[str]:
    """The joints of the loop that following the parents from `start` runs into."""
    order: list[str] = []
    seen: dict[str, int] = {}
    link = start
    while link in parent_joint and link not in seen:
        seen[link] = len(order)
        order.append(parent_joint[link].name)
        link = parent_joint[link].parent
    return order[seen.get(link, 0) :]
