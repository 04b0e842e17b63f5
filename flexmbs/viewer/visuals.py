"""The visual meshes of a robot's URDF, placed on the bodies of its imported model.

`flexmbs import-urdf` makes every link that a moving joint carries a body whose frame
is the link frame, and a link fixed to it a marker of that body named after the link
(flexmbs.formats.urdf). So each link's visuals go on a body at a known pose: on body L
itself, on the body that holds marker L, or on the ground (the root link and the links
fixed to it). A visual's geometry is a mesh file (STL, OBJ, DAE; read with trimesh,
DAE through pycollada) or a box, cylinder or sphere, with the URDF's colour when it
gives one and the mesh file's own otherwise; a mesh file that cannot be found
(flexmbs.formats.mesh_paths) or read leaves its link to its collision geometry, with
one warning. A model file written by import-urdf names
its URDF in a comment line (`# urdf: PATH`), which `urdf_of_model_text` finds.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..errors import FlexmbsError
from ..formats.mesh_paths import resolve_mesh_path
from ..formats.urdf import read_urdf, renamed_links
from ..model.description import GROUND, Model
from .array_text import packed

__all__ = ["VisualMesh", "urdf_visuals", "urdf_of_model_text", "URDF_COMMENT"]

URDF_COMMENT = re.compile(r"^# urdf: (.+)$", re.MULTILINE)
GREY = (0.72, 0.74, 0.78, 1.0)
NOT_FOUND = "not found"


@dataclass
class VisualMesh:
    """A triangle mesh drawn on body `body` (a body name or "ground") at `pose` (4 x 4,
    the mesh's frame in the body's axes, m): `vertices` (n, 3) m, `faces` (k, 3),
    `color` RGBA in 0..1, `name` what it came from."""

    body: str
    pose: NDArray[np.float64]
    vertices: NDArray[np.float64]
    faces: NDArray[np.int64]
    color: tuple[float, float, float, float]
    name: str

    def document(self, body_index: dict[str, int]) -> dict[str, Any]:
        """The viewer's record: body index (-1 the ground), pose, arrays, colour."""
        return {
            "body": body_index.get(self.body, -1),
            "name": self.name,
            "pose": np.asarray(self.pose, float).reshape(-1).tolist(),
            "vertices": packed(self.vertices),
            "faces": packed(self.faces, "<u4"),
            "color": list(self.color),
        }


def urdf_of_model_text(text: str, near: str | os.PathLike[str] | None = None) -> Path | None:
    """The URDF a model file was imported from, by its `# urdf: PATH` comment (a
    relative PATH is taken from the folder `near`); None when the text names none."""
    m = URDF_COMMENT.search(text or "")
    if not m:
        return None
    path = Path(m.group(1).strip())
    if not path.is_absolute() and near is not None:
        path = Path(near) / path
    return path


def _link_places(model: Model) -> dict[str, tuple[str, NDArray[np.float64]]]:
    """{link name: (body, link frame in the body's axes)} as import-urdf maps them."""
    places: dict[str, tuple[str, NDArray[np.float64]]] = {}
    holders = [(GROUND, model.ground_markers)] + [
        (name, body.markers) for name, body in model.bodies.items()
    ]
    for body, markers in holders:
        for name, m in markers.items():
            pose = np.eye(4)
            pose[:3, :3] = np.asarray(m.orientation, float)
            pose[:3, 3] = np.asarray(m.position, float)
            places.setdefault(name, (body, pose))
    for name in model.bodies:
        places[name] = (name, np.eye(4))
    return places


def _primitive(geometry: Any) -> Any:
    import trimesh

    if geometry.box is not None:
        return trimesh.creation.box(extents=np.asarray(geometry.box.size, float))
    if geometry.cylinder is not None:
        c = geometry.cylinder
        return trimesh.creation.cylinder(radius=float(c.radius), height=float(c.length))
    if geometry.sphere is not None:
        return trimesh.creation.icosphere(subdivisions=2, radius=float(geometry.sphere.radius))
    return None


def _mesh_color(mesh: Any) -> tuple[float, float, float, float] | None:
    visual = getattr(mesh, "visual", None)
    if visual is None:
        return None
    try:
        if visual.kind == "texture":
            material = visual.material
            rgba = getattr(material, "main_color", None)
            if rgba is None:
                rgba = getattr(material, "diffuse", None)
        elif visual.kind in ("face", "vertex"):
            colors = visual.face_colors if visual.kind == "face" else visual.vertex_colors
            rgba = np.median(np.asarray(colors, float), axis=0)
        else:
            rgba = getattr(getattr(visual, "material", None), "main_color", None)
    except (AttributeError, ValueError):
        return None
    if rgba is None:
        return None
    c = np.asarray(rgba, float).reshape(-1)[:4] / 255.0
    return (float(c[0]), float(c[1]), float(c[2]), float(c[3]) if len(c) > 3 else 1.0)


def _mesh_parts(filename: Path, scale: NDArray[np.float64]) -> list[tuple[Any, NDArray]]:
    """[(trimesh.Trimesh, 4 x 4 in the file's frame)] of a mesh file."""
    import trimesh

    try:
        loaded = trimesh.load(os.fspath(filename), process=False)
    except Exception as exc:  # noqa: BLE001 - any reader failure names the file
        hint = ""
        if filename.suffix.lower() == ".dae":
            hint = "; DAE files need pycollada (pip install 'flexmbs[view]')"
        raise FlexmbsError(
            f"{filename}: the URDF's mesh cannot be read ({type(exc).__name__}: {exc}){hint}"
        ) from None
    parts = []
    if isinstance(loaded, trimesh.Scene):
        for node in loaded.graph.nodes_geometry:
            transform, geometry_name = loaded.graph[node]
            parts.append((loaded.geometry[geometry_name], np.asarray(transform, float)))
    else:
        parts.append((loaded, np.eye(4)))
    out = []
    for mesh, transform in parts:
        if not hasattr(mesh, "faces") or len(mesh.faces) == 0:
            continue
        s = np.eye(4)
        s[:3, :3] = np.diag(scale)
        out.append((mesh, s @ transform))
    return out


def _material_colors(robot: Any) -> dict[str, tuple[float, float, float, float]]:
    colors = {}
    for material in getattr(robot, "materials", []) or []:
        if material.color is not None and material.name:
            r, g, b, a = (float(x) for x in material.color.rgba)
            colors[str(material.name)] = (r, g, b, a)
    return colors


def _geometry_parts(
    geometry: Any, urdf_folder: Path, missing: list[str]
) -> list[tuple[Any, NDArray]] | None:
    """[(trimesh.Trimesh, 4 x 4 in the geometry's frame)] of a URDF geometry; None
    when it is a mesh that cannot be found or read (its reason appended to
    `missing`)."""
    if geometry.mesh is None:
        primitive = _primitive(geometry)
        return [] if primitive is None else [(primitive, np.eye(4))]
    name = str(geometry.mesh.filename)
    filename = resolve_mesh_path(name, urdf_folder)
    if filename is None:
        missing.append(
            f"{name}: {NOT_FOUND} (ROS_PACKAGE_PATH, the URDF's folders, the installed "
            "description packages)"
        )
        return None
    scale = np.ones(3) if geometry.mesh.scale is None else geometry.mesh.scale
    try:
        parts = _mesh_parts(filename, np.broadcast_to(np.asarray(scale, float), 3))
    except FlexmbsError as exc:
        missing.append(str(exc))
        return None
    if not parts:
        missing.append(f"{filename}: the URDF's mesh cannot be read (it holds no triangles)")
        return None
    return parts


def urdf_visuals(
    path: str | os.PathLike[str],
    model: Model,
    warnings: list[str] | None = None,
    renamed: Mapping[str, str] | None = None,
) -> list[VisualMesh]:
    """The visual meshes of the URDF `path`, on the bodies of `model` imported from it
    (the module docstring); `renamed`: {URDF link name: its name in the model} of the
    links the import renamed (flexmbs.formats.urdf.renamed_links of the model file's
    text; by default of `model.source_text`). A link the model does not know is left
    out. A link with a
    visual mesh that cannot be found (flexmbs.formats.mesh_paths) or read is drawn by
    its collision geometry instead (boxes, cylinders, spheres, meshes found), or not
    at all: one line appended to `warnings` says how many and why."""
    try:
        import yourdfpy  # noqa: F401 - read_urdf reads through it
    except ImportError:
        raise FlexmbsError("URDF meshes need yourdfpy: pip install 'flexmbs[view]'") from None
    urdf_path = Path(path)
    robot = read_urdf(urdf_path)
    places = _link_places(model)
    named_colors = _material_colors(robot)
    out = []
    missing: list[str] = []
    fallback: list[str] = []
    drawn_nothing: list[str] = []
    if renamed is None:
        renamed = renamed_links(model.source_text or "")
    for link in robot.links:
        name = renamed.get(link.name, link.name)
        if name not in places:
            continue
        body, link_pose = places[name]
        shapes = []
        lost = False
        for k, visual in enumerate(link.visuals):
            parts = _geometry_parts(visual.geometry, urdf_path.parent, missing)
            if parts is None:
                lost = True
                continue
            shapes.append((visual, f"{link.name}/{visual.name or k}", parts))
        if lost:
            shapes = []
            for k, collision in enumerate(link.collisions):
                parts = _geometry_parts(collision.geometry, urdf_path.parent, [])
                if parts:
                    shapes.append(
                        (collision, f"{link.name}/collision {collision.name or k}", parts)
                    )
            (fallback if shapes else drawn_nothing).append(link.name)
        for shape, name, parts in shapes:
            origin = np.eye(4) if shape.origin is None else np.asarray(shape.origin, float)
            color = None
            material = getattr(shape, "material", None)
            if material is not None:
                if material.color is not None:
                    color = tuple(float(x) for x in material.color.rgba)
                elif material.name in named_colors:
                    color = named_colors[material.name]
            for mesh, transform in parts:
                rgba = color or _mesh_color(mesh) or GREY
                out.append(
                    VisualMesh(
                        body,
                        link_pose @ origin @ transform,
                        np.asarray(mesh.vertices, float),
                        np.asarray(mesh.faces, np.int64),
                        (float(rgba[0]), float(rgba[1]), float(rgba[2]), float(rgba[3])),
                        name,
                    )
                )
    if missing and warnings is not None:
        warnings.append(_missing_meshes_text(urdf_path, missing, fallback, drawn_nothing))
    return out


def _missing_meshes_text(
    urdf: Path, missing: list[str], fallback: list[str], nothing: list[str]
) -> str:
    """The one warning about a URDF's visual meshes that could not be drawn."""
    said = f"{urdf}: {len(missing)} visual mesh{'es' * (len(missing) > 1)} not drawn "
    said += f"(the first: {missing[0]})"
    if fallback:
        said += f"; drawn by their collision shapes: {', '.join(fallback)}"
    if nothing:
        said += f"; drawn without a shape: {', '.join(nothing)}"
    if any(NOT_FOUND in m for m in missing):
        said += " (set ROS_PACKAGE_PATH to the folder holding the package, or --urdf)"
    return said
