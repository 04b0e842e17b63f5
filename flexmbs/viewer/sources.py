"""The viewer's scene of what a user has at hand: a result file (the run), a model
file or a Model (its initial state), with the meshes of the URDF it came from."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from ..analysis.vtk_export import shape_of_result
from ..errors import FlexmbsError, ResultFileError
from ..formats.toml_reader import load_model, loads_model
from ..formats.urdf import renamed_links
from ..io.results import Result, open_result
from ..model.compiled import compile_model
from ..model.description import Model
from .scene import DEFAULT_MAX_FRAMES, Scene, build_scene
from .visuals import VisualMesh, urdf_of_model_text, urdf_visuals

__all__ = ["scene_of", "scene_of_result", "scene_of_model", "RESULT_SUFFIXES"]

RESULT_SUFFIXES = (".h5", ".hdf5")


def _meshes(
    model: Model,
    urdf: str | os.PathLike[str] | None,
    text: str,
    near: Path | None,
    warnings: list[str],
) -> list[VisualMesh]:
    renamed = renamed_links(text)
    if urdf is not None:
        return urdf_visuals(urdf, model, warnings, renamed)
    named = urdf_of_model_text(text, near)
    if named is None:
        return []
    if not named.is_file():
        warnings.append(
            f"the model was imported from {named}, which is not there: no meshes "
            "(--urdf PATH gives it)"
        )
        return []
    return urdf_visuals(named, model, warnings, renamed)


def scene_of_result(
    result: str | os.PathLike[str] | Result,
    model: Model | None = None,
    urdf: str | os.PathLike[str] | None = None,
    max_frames: int = DEFAULT_MAX_FRAMES,
    scale: float | None = None,
) -> Scene:
    """The scene of the run in `result` (a path or a Result): its model rebuilt from
    the text the file keeps (or `model`, for a model built in Python), every output
    time up to `max_frames` frames, its sensors; `urdf` the robot's URDF for its
    meshes (default: the one an imported model names)."""
    if not isinstance(result, Result):
        result = open_result(result)
    if len(result.time) == 0:
        raise FlexmbsError(f"{result.path}: the file holds no output row to show")
    if model is None and not result.model_text:
        raise ResultFileError(
            f"{result.path}: the model was built in Python and its text is not in the "
            "file; show it from Python with flexmbs.show(result, model=MODEL)"
        )
    user = model
    if user is None:  # the files it names are where the run found them
        settings = result.solver.get("settings") or {}
        user = loads_model(
            result.model_text,
            source=f"{result.path} (its model)",
            overrides=result.model_overrides,
            base=str(settings.get("model_folder") or "") or None,
        )
    shape = shape_of_result(result, user)
    warnings: list[str] = []
    meshes = _meshes(user, urdf, result.model_text, Path(result.path).parent, warnings)
    scene = build_scene(
        shape.cm,
        user,
        result.time,
        result.q,
        Path(result.path).stem,
        sensors=result.sensors,
        sensor_units=result.sensor_units,
        meshes=meshes,
        max_frames=max_frames,
        scale=scale,
        source=os.fspath(result.path),
    )
    if result.status != "finished":
        warnings.append(f"{result.path}: {result.status_text}")
    scene.warnings += warnings
    return scene


def scene_of_model(
    model: str | os.PathLike[str] | Model,
    urdf: str | os.PathLike[str] | None = None,
    scale: float | None = None,
) -> Scene:
    """The scene of a model (a model file or a Model) at its initial state: the joints
    at their initial values, the beams in their initial elastic state (bent by gravity
    with initial = "static"), closed loops made consistent."""
    from ..dynamics.constrained import make_consistent

    if not isinstance(model, Model):
        model = load_model(model)
    cm = compile_model(model)
    if cm.has_constraints:
        make_consistent(cm)
    warnings: list[str] = []
    text = getattr(model, "source_text", "") or ""
    near = Path(model.source_path).parent if model.source_path else None
    meshes = _meshes(model, urdf, text, near, warnings)
    scene = build_scene(
        cm,
        model,
        np.zeros(1),
        cm.q0.reshape(1, -1),
        model.name,
        meshes=meshes,
        scale=scale,
        source=model.source_path or "",
    )
    scene.warnings += warnings
    return scene


def scene_of(
    what: Any,
    urdf: str | os.PathLike[str] | None = None,
    max_frames: int = DEFAULT_MAX_FRAMES,
    scale: float | None = None,
    model: Model | None = None,
) -> Scene:
    """The scene of `what`: a Result or a result file (.h5) is the run, a Model or a
    model file (.toml) its initial state; a Scene is itself."""
    if isinstance(what, Scene):
        return what
    if isinstance(what, Result):
        return scene_of_result(what, model, urdf, max_frames, scale)
    if isinstance(what, Model):
        return scene_of_model(what, urdf, scale)
    path = Path(os.fspath(what))
    if path.suffix.lower() in RESULT_SUFFIXES:
        return scene_of_result(path, model, urdf, max_frames, scale)
    if path.suffix.lower() == ".toml":
        return scene_of_model(path, urdf, scale)
    raise FlexmbsError(f"{path}: expected a result file (.h5) or a model file (.toml) to show")
