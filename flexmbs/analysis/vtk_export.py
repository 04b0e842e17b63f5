"""`flexmbs export`: a result file's deformed shape over time as one VTKHDF file for
ParaView (flexmbs.io.vtkhdf, flexmbs.io.deformed_shape).

The shape needs the compiled model: it is rebuilt from the model text the result file
keeps (with its --set overrides) in the formulation of the run, and its coordinates
must be the file's. A model built in Python keeps no text: pass it as `model`.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import ResultFileError
from ..io.deformed_shape import DEFAULT_SUBDIVISIONS, DeformedShape
from ..io.results import Result, open_result
from ..io.vtkhdf import VtkHdfWriter
from ..model.compiled import compile_model
from ..model.description import Model
from ..model.toml_reader import loads_model
from ..simulation import compile_absolute

__all__ = ["export_vtk", "shape_of_result", "default_vtk_path"]


def default_vtk_path(result_path: str | os.PathLike[str]) -> Path:
    """RESULT.h5 -> RESULT.vtkhdf beside it."""
    return Path(result_path).with_suffix(".vtkhdf")


def shape_of_result(
    result: Result, model: Model | None = None, subdivisions: int = DEFAULT_SUBDIVISIONS
) -> DeformedShape:
    """The DeformedShape of the run that wrote `result`: its model (the text in the file,
    or `model`) compiled as the run compiled it."""
    settings = result.solver.get("settings") or {}
    if model is None:
        if not result.model_text:
            raise ResultFileError(
                f"{result.path}: the model was built in Python and its text is not in "
                "the file; export it from Python with export_vtk(result, model=MODEL)"
            )
        model = loads_model(
            result.model_text,
            source=f"{result.path} (its model)",
            overrides=result.model_overrides,
            base=str(settings.get("model_folder") or "") or None,
        )
    absolute = settings.get("formulation") == "absolute"
    cm = compile_absolute(model) if absolute else compile_model(model)
    if list(cm.coordinate_names) != list(result.coordinate_names):
        raise ResultFileError(
            f"{result.path}: the model's coordinates "
            f"({len(cm.coordinate_names)}) are not the file's "
            f"({len(result.coordinate_names)}): the model is not the one that was run"
        )
    return DeformedShape(cm, subdivisions)


def export_vtk(
    result: str | os.PathLike[str] | Result,
    path: str | os.PathLike[str] | None = None,
    model: Model | None = None,
    subdivisions: int = DEFAULT_SUBDIVISIONS,
) -> tuple[Path, int]:
    """Write the deformed shape at every output time of `result` (a path or a Result)
    to the VTKHDF file `path` (default: the result's name with .vtkhdf). Returns (the
    path written, the number of steps)."""
    if not isinstance(result, Result):
        result = open_result(result)
    shape = shape_of_result(result, model, subdivisions)
    out = Path(path) if path is not None else default_vtk_path(result.path)
    with VtkHdfWriter(out, shape) as writer:
        for t, q in zip(result.time, result.q):
            writer.append(float(t), q)
    return out, len(result.time)
