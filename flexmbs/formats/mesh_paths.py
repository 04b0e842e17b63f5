"""Where a URDF's mesh file is: `package://`, `file://`, absolute and relative names.

A URDF names its meshes relative to its own file, absolutely, or as
`package://PACKAGE/PATH`, PATH inside the ROS package PACKAGE. ROS finds a package
in the folders of ROS_PACKAGE_PATH (and, for ROS 2, under the `share` folders of
AMENT_PREFIX_PATH); a URDF downloaded on its own has its package around it instead,
and a description package installed with pip (example-robot-data, under
`cmeel.prefix/share` of the site-packages) has it under a `share` folder. A
`package://` name is looked for, in this order:

1. in each folder R of ROS_PACKAGE_PATH: R/PACKAGE/PATH, or R/PATH where R is the
   package itself (its name PACKAGE), or a folder PACKAGE up to PACKAGE_DEPTH levels
   below R;
2. in the URDF's folder tree: for each folder A that holds the URDF, from its own
   upwards, A/PACKAGE/PATH, or A/PATH where A is named PACKAGE, then A/PATH;
3. in the `share` folders of AMENT_PREFIX_PATH, CMAKE_PREFIX_PATH, the Python
   prefix, and `cmeel.prefix/share` of the site-packages, and the `robots` folders of
   packages that keep their descriptions there, as example-robot-data does
   (S/NAME/robots): S/PACKAGE/PATH.

The first file that exists is the mesh; None when there is none.
"""

from __future__ import annotations

import os
import site
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from urllib.parse import unquote

__all__ = ["resolve_mesh_path", "package_share_folders", "PACKAGE_DEPTH"]

PACKAGE_DEPTH = 3
"""How many folder levels below a ROS_PACKAGE_PATH entry a package is looked for."""


def _split_package(name: str) -> tuple[str, str]:
    """(PACKAGE, PATH) of `package://PACKAGE/PATH`."""
    rest = name[len("package://") :].lstrip("/")
    package, _, path = rest.partition("/")
    return package, path


def package_share_folders(environ: Mapping[str, str] | None = None) -> list[Path]:
    """The `share` folders where installed description packages live (module text,
    3), those that exist, each once, in that order, then their `robots` folders."""
    env = os.environ if environ is None else environ
    found: list[Path] = []
    prefixes = [
        p
        for key in ("AMENT_PREFIX_PATH", "CMAKE_PREFIX_PATH")
        for p in env.get(key, "").split(os.pathsep)
        if p
    ]
    prefixes += [sys.prefix]
    for prefix in prefixes:
        found.append(Path(prefix) / "share")
    packages = list(site.getsitepackages()) if hasattr(site, "getsitepackages") else []
    packages += [p for p in sys.path if p.endswith("site-packages")]
    for folder in packages:
        found.append(Path(folder) / "cmeel.prefix" / "share")
    out: list[Path] = []
    for f in found:
        if f.is_dir() and f not in out:
            out.append(f)
    return out + sorted(r for share in out for r in share.glob("*/robots") if r.is_dir())


def _package_folders(root: Path, package: str, depth: int) -> Iterator[Path]:
    """Folders named `package` at root or up to `depth` levels below it."""
    if root.name == package:
        yield root
    if depth <= 0:
        return
    try:
        children = sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))
    except OSError:
        return
    for child in children:
        yield from _package_folders(child, package, depth - 1)


def _package_candidates(
    package: str, path: str, urdf_folder: Path, env: Mapping[str, str]
) -> Iterator[Path]:
    for entry in env.get("ROS_PACKAGE_PATH", "").split(os.pathsep):
        if not entry:
            continue
        root = Path(entry)
        yield root / package / path
        for folder in _package_folders(root, package, PACKAGE_DEPTH):
            yield folder / path
    for folder in [urdf_folder, *urdf_folder.parents]:
        yield folder / package / path
        if folder.name == package:
            yield folder / path
    for folder in [urdf_folder, *urdf_folder.parents]:
        yield folder / path
    for share in package_share_folders(env):
        yield share / package / path


def resolve_mesh_path(
    name: str, urdf_folder: str | os.PathLike[str], environ: Mapping[str, str] | None = None
) -> Path | None:
    """The file a URDF's mesh `name` names (module text), the URDF being in
    `urdf_folder`; None when no such file exists. `environ`: the environment
    variables to read (os.environ by default)."""
    env = os.environ if environ is None else environ
    folder = Path(urdf_folder).resolve()
    text = name.strip()
    if text.startswith("package://"):
        package, path = _split_package(text)
        if not package or not path:
            return None
        for candidate in _package_candidates(package, path, folder, env):
            if candidate.is_file():
                return candidate
        return None
    if text.startswith("file://"):
        text = unquote(text[len("file://") :])
    candidate = Path(text)
    if not candidate.is_absolute():
        candidate = folder / candidate
    return candidate if candidate.is_file() else None
