"""A run's deformed shape over time as one VTKHDF file (`.vtkhdf`), which ParaView (5.12
and later) and VTK's vtkHDFReader open as one time series.

Why VTKHDF: it is HDF5, written with h5py as the result file is (no further
dependency); one file holds every output time, with the times exact (`Steps/Values`);
it grows by appending, so a run writes it as it goes and what was flushed stays
readable after a failure.

Layout (VTKHDF 2.x, temporal PolyData, one part): the topology (lines of the beams'
centre lines and of the rigid bodies, vertices at the joints) and the cell data
(`body`) are written once, and every step appends its points and point data
(`flexmbs.io.deformed_shape`): step k reads points from k n at PointOffsets[k] and
the cells from offset 0. The body names are in `/flexmbs/body_names`, outside the
VTKHDF group, where readers leave them.
"""

from __future__ import annotations

import os

import h5py
import numpy as np
from numpy.typing import NDArray

from .deformed_shape import POINT_DATA, DeformedShape

__all__ = ["VtkHdfWriter", "VTKHDF_VERSION"]

VTKHDF_VERSION = (2, 2)
_CELL_KINDS = ("Vertices", "Lines", "Polygons", "Strips")


def _ascii(text: str) -> np.bytes_:
    return np.bytes_(text.encode("ascii"))


def _growing(group: h5py.Group, name: str, shape: tuple[int, ...], dtype: type) -> h5py.Dataset:
    return group.create_dataset(
        name,
        shape=(0, *shape),
        maxshape=(None, *shape),
        dtype=dtype,
        chunks=(max(1, 4096 // max(1, int(np.prod(shape)) if shape else 1)), *shape),
    )


def _append(ds: h5py.Dataset, rows: NDArray) -> None:
    n = ds.shape[0]
    ds.resize(n + len(rows), axis=0)
    ds[n:] = rows


class VtkHdfWriter:
    """Writes `shape` (a DeformedShape) at each `append(t, q)` to the VTKHDF file
    `path`; `flush()` makes what was appended readable; `close()` ends it. A context
    manager."""

    def __init__(self, path: str | os.PathLike[str], shape: DeformedShape) -> None:
        self.shape = shape
        self.path = os.fspath(path)
        self._file = h5py.File(self.path, "w", libver="latest")
        root = self._file.create_group("VTKHDF", track_order=True)
        root.attrs["Version"] = np.array(VTKHDF_VERSION, dtype=np.int64)
        root.attrs.create("Type", _ascii("PolyData"))
        n = shape.npoints
        root.create_dataset("NumberOfPoints", data=np.array([n], dtype=np.int64))
        self._points = _growing(root, "Points", (3,), np.float64)
        cells = {
            "Vertices": [[v] for v in shape.vertices],
            "Lines": shape.lines,
            "Polygons": [],
            "Strips": [],
        }
        for kind in _CELL_KINDS:
            group = root.create_group(kind)
            connectivity = [i for cell in cells[kind] for i in cell]
            offsets = np.cumsum([0] + [len(c) for c in cells[kind]])
            group.create_dataset("NumberOfCells", data=np.array([len(cells[kind])], np.int64))
            group.create_dataset(
                "NumberOfConnectivityIds", data=np.array([len(connectivity)], np.int64)
            )
            group.create_dataset("Offsets", data=offsets.astype(np.int64))
            group.create_dataset("Connectivity", data=np.array(connectivity, dtype=np.int64))
        point_data = root.create_group("PointData")
        self._point_data = {
            name: _growing(point_data, name, (size,) if size > 1 else (), np.float64)
            for name, size in POINT_DATA.items()
        }
        cell_data = root.create_group("CellData")
        # cell order: vertices, lines, polygons, strips
        cell_data.create_dataset(
            "body", data=np.array(shape.vertex_body + shape.line_body, dtype=np.int64)
        )
        steps = root.create_group("Steps")
        steps.attrs["NSteps"] = np.int64(0)
        self._steps = steps
        self._values = _growing(steps, "Values", (), np.float64)
        self._growing_steps = {
            "PartOffsets": _growing(steps, "PartOffsets", (), np.int64),
            "NumberOfParts": _growing(steps, "NumberOfParts", (), np.int64),
            "PointOffsets": _growing(steps, "PointOffsets", (), np.int64),
            "CellOffsets": _growing(steps, "CellOffsets", (4,), np.int64),
            "ConnectivityIdOffsets": _growing(steps, "ConnectivityIdOffsets", (4,), np.int64),
        }
        offsets = steps.create_group("PointDataOffsets")
        self._data_offsets = {name: _growing(offsets, name, (), np.int64) for name in POINT_DATA}
        cell_offsets = steps.create_group("CellDataOffsets")
        self._cell_offsets = _growing(cell_offsets, "body", (), np.int64)
        extra = self._file.create_group("flexmbs")
        extra.create_dataset(
            "body_names", data=np.array([_ascii(b) for b in shape.body_names], dtype="S")
        )
        self.nsteps = 0
        self.t_last = float("nan")  # s, the time of the last step written

    def append(self, t: float, q: NDArray[np.float64]) -> None:
        """The shape at time t (s) and coordinates q as the next step."""
        frame = self.shape.frame(t, q)
        n = self.shape.npoints
        first = self.nsteps * n
        _append(self._points, frame.points)
        for name, size in POINT_DATA.items():
            values = frame.point_data[name]
            _append(self._point_data[name], values if size > 1 else values[:, 0])
            _append(self._data_offsets[name], np.array([first], dtype=np.int64))
        _append(self._values, np.array([t]))
        _append(self._growing_steps["PartOffsets"], np.zeros(1, dtype=np.int64))
        _append(self._growing_steps["NumberOfParts"], np.ones(1, dtype=np.int64))
        _append(self._growing_steps["PointOffsets"], np.array([first], dtype=np.int64))
        _append(self._growing_steps["CellOffsets"], np.zeros((1, 4), dtype=np.int64))
        _append(self._growing_steps["ConnectivityIdOffsets"], np.zeros((1, 4), dtype=np.int64))
        _append(self._cell_offsets, np.zeros(1, dtype=np.int64))
        self.nsteps += 1
        self.t_last = t
        self._steps.attrs["NSteps"] = np.int64(self.nsteps)

    def flush(self) -> None:
        self._file.flush()

    def close(self) -> None:
        if self._file.id.valid:
            self._file.close()

    def __enter__(self) -> VtkHdfWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
