"""`flexmbs export`: a result file's deformed shape over time as one VTKHDF file for
ParaView (flexmbs.io.vtkhdf, flexmbs.io.deformed_shape).

The shape needs the compiled model: it is rebuilt from the model text the result file
keeps (with its --set overrides) in the formulation of the run, and its coordinates
must be the file's. A model built in Python keeps no text: pass it as `model`.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import FlexmbsError, ResultFileError
from ..formats.toml_reader import loads_model
from ..io.deformed_shape import DEFAULT_SUBDIVISIONS, POINT_DATA, DeformedShape
from ..io.disk_room import room_for
from ..io.results import Result, open_result
from ..io.vtkhdf import VtkHdfWriter
from ..model.compiled import compile_model
from ..model.description import BeamBody, Model
from ..model.vocabulary import MAX_SUBDIVISIONS, SHAPE_MEMORY_LIMIT
from ..simulation.run import compile_absolute

__all__ = ["export_vtk", "shape_of_result", "default_vtk_path", "export_size"]

SHAPE_ROWS = 13  # rows a centre-line point takes in the shape: 3 displacements, 4 fibre
# strains, 6 section forces, each over the beam's elastic coordinates


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
    for _, beam in cm.beams:
        if not isinstance(beam, BeamBody):  # a finite-element body: its mesh's edges
            continue
        points = len(beam.connectivity) * subdivisions + 1
        need = 8.0 * SHAPE_ROWS * points * beam.nf
        if need > SHAPE_MEMORY_LIMIT:
            raise FlexmbsError(
                f'--subdivisions {subdivisions}: body "{beam.name}" would be drawn by '
                f"{points} points over {beam.nf} elastic coordinates, a "
                f"{need / 2**30:.3g} GiB matrix (at most {SHAPE_MEMORY_LIMIT / 2**30:g} "
                "GiB): expected fewer subdivisions"
            )
    return DeformedShape(cm, subdivisions)


def export_size(shape: DeformedShape, steps: int) -> int:
    """Bytes, about, of the VTKHDF file of `steps` steps of `shape`: its points and
    their point data at every step (the topology, written once, left out)."""
    per_point = 3 + sum(POINT_DATA.values())
    return 8 * per_point * shape.npoints * steps


def export_vtk(
    result: str | os.PathLike[str] | Result,
    path: str | os.PathLike[str] | None = None,
    model: Model | None = None,
    subdivisions: int = DEFAULT_SUBDIVISIONS,
) -> tuple[Path, int]:
    """Write the deformed shape at every output time of `result` (a path or a Result)
    to the VTKHDF file `path` (default: the result's name with .vtkhdf). Returns (the
    path written, the number of steps). Refused before it starts: `subdivisions` above
    MAX_SUBDIVISIONS, a shape whose matrices pass SHAPE_MEMORY_LIMIT, a file larger
    than its disk has room for."""
    if not 1 <= subdivisions <= MAX_SUBDIVISIONS:
        raise FlexmbsError(
            f"--subdivisions {subdivisions}: expected 1 .. {MAX_SUBDIVISIONS} centre-line "
            "points per beam element (the cubic shape functions are drawn smooth by far "
            "fewer)"
        )
    if not isinstance(result, Result):
        result = open_result(result)
    shape = shape_of_result(result, model, subdivisions)
    out = Path(path) if path is not None else default_vtk_path(result.path)
    size, room = export_size(shape, result.nsamples), room_for(str(out))
    if size > room:
        raise FlexmbsError(
            f"{out}: the export of {result.nsamples} steps of {shape.npoints} points "
            f"would take about {size / 1e9:.3g} GB, and its disk has {room / 1e9:.3g} GB "
            "left: expected fewer --subdivisions, or the export of a run with a longer "
            "output step"
        )
    with VtkHdfWriter(out, shape) as writer:
        for t, q in zip(result.time, result.q):
            writer.append(float(t), q)
    return out, len(result.time)
