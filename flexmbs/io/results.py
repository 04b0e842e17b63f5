"""The HDF5 result file: written while the run goes, read back as numpy arrays.

Layout (docs/results.md; docs/explanation/method.md "Result file"):

    /                   attrs flexmbs_version, created (ISO 8601), status ("running",
                        "finished" or "failed: <reason>"), t_reached (s, nan before the
                        first commit), writer_host, writer_pid (the writing process),
                        heartbeat (s since the epoch, at each commit)
    /time               (n,) s; an HDF5 dimension scale attached to dim 0 of every
                        time series (netCDF-4 compatible: xarray opens the file)
    /coordinate         (nq,) names of the free coordinates; scale of dim 1 of q, u
    /component<k>       (k,) component labels; scale of dim 1 of the sensors of size k
    /q, /u              (n, nq) generalized coordinates and speeds, attr names
    /energy/<name>      (n,) J: kinetic, gravity, strain, spring, dissipated, total,
                        strain_axial_force, strain_foreshortening (parts of strain)
    /sensors/<name>     (n, size)
    /rest_column        (nrest,) names of the columns of state_rest (its dim-1 scale)
    /state_rest         (n, nrest) the rest of the integrator's state after q and u:
                        the works W_nc and W_a of the actuators (J), then the
                        multipliers of the active constraint rows; attr names
    /model              datasets text (the model file) and json (normalised model)
    /topology           body_names, joint_names, parent, marker_names, body_path,
                        joint_path, coordinate_names
    /solver             attrs method, rtol, atol, settings (JSON) and the statistics of
                        the run; array statistics as datasets
    /modes/<body>       the mode basis of each beam body with modal reduction:
                        basis, frequencies (Hz), descriptions, ... (docs/results.md)

Consistency after a crash: rows are buffered in memory and committed (every dataset
resized and written, `t_reached` updated, then `flush()`) at most once every
`flush_interval` seconds of wall time, or as soon as they hold PENDING_BYTES (so that
the memory of a run does not grow with its outputs). Between two commits the file is not
touched, so a process killed at any moment outside a commit (SIGKILL included) leaves a file
that
holds exactly the rows of the last commit and still says status "running". The file
is laid out under a hidden name and renamed when complete, so a reader never finds it
half laid out; a reader that falls inside a commit is told to try again (open_result
does, LIVE_READ_ATTEMPTS times).
"""

from __future__ import annotations

import contextlib
import datetime
import json
import math
import os
import re
import resource
import shutil
import signal
import socket
import time as _time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal, Self

import h5py
import numpy as np
from numpy.typing import ArrayLike, NDArray

import flexmbs

from ..errors import ResultFileError, ResultWriteError
from ..model.units import rate_units

if TYPE_CHECKING:
    from ..model.topology import Topology

__all__ = [
    "ResultWriter",
    "Result",
    "open_result",
    "ENERGY_COMPONENTS",
    "ENERGY_NAMES",
    "ENERGY_DESCRIPTIONS",
    "component_labels",
    "split_component",
    "column_index",
]

ENERGY_COMPONENTS = (
    "kinetic",
    "gravity",
    "strain",
    "spring",
    "dissipated",
    "strain_axial_force",
    "strain_foreshortening",
)
GEOMETRIC_ENERGIES = ("strain_axial_force", "strain_foreshortening")  # may be left out
ENERGY_NAMES = ENERGY_COMPONENTS + ("total",)
ENERGY_DESCRIPTIONS = {
    "kinetic": "kinetic energy T = 1/2 sum v_i^T M_i v_i (J)",
    "gravity": "gravitational potential V_g = -sum g^T (m_i r_i + A_i St_i) (J); "
    "its zero is arbitrary, only its variation matters",
    "strain": "strain energy U of the flexible bodies (J), geometric parts included; 0 "
    "for rigid models",
    "strain_axial_force": "the part U3 = 1/2 EA u' int (v'^2 + w'^2) dx of strain due to "
    "the axial force (geometric stiffness, docs/explanation/"
    "formulation.md section 6) (J)",
    "strain_foreshortening": "the part U4 of strain due to foreshortening (geometric "
    "stiffness, docs/explanation/formulation.md section 6) (J)",
    "spring": "potential of the joint springs V_s = sum 1/2 k (x - x0)^2 (J)",
    "dissipated": "W_nc: work done ON the system by the non-conservative forces "
    "(dampers, structural damping, drivers/prescribed motion, applied "
    "loads) since t = 0 (J); negative when energy is dissipated",
    "total": "E = kinetic + gravity + strain + spring - dissipated (J); constant in "
    "exact arithmetic for every model, damped or driven (docs/explanation/"
    "formulation.md section 7)",
}
MODE_DESCRIPTIONS = {
    "basis": "Phi (n, nm): the free nodal coordinates (m, rad; names in "
    "nodal_coordinates) per unit modal coordinate, qf_nodal = Phi eta; "
    "M-orthonormal",
    "nodal_coordinates": "(n,) names BODY.nNODE.DOF of the rows of basis",
    "coordinates": "(nm,) names of the modal coordinates eta (columns of basis, and of q)",
    "kinds": '(nm,) "mode" (an eigenvector), "correction" (a static correction mode) or '
    '"derivative" (a modal derivative)',
    "frequencies": "(nm,) Hz: natural frequency of each mode of the body alone under "
    "its reference conditions; for a correction mode or a modal derivative the Rayleigh "
    "quotient sqrt(phi^T K phi) / 2 pi",
    "reduced_frequencies": "(nm,) Hz: natural frequencies of the reduced body, "
    "eig(Phi^T K Phi, Phi^T M Phi)",
    "descriptions": "(nm,) what each column is: its dominant strain energy "
    "(axial, torsion, bending y, bending z)",
    "strain_energy_fractions": "(nm, 4) strain energy of each column split as attr energy_parts",
    "sources": "(nm, 2) node and dof (0..5 = u v w tx ty tz) of a correction mode; -1 for a mode",
}
STATUS_RUNNING = "running"
STATUS_FINISHED = "finished"
FAILED_PREFIX = "failed: "
STATUS_INTERRUPTED = FAILED_PREFIX + "interrupted by the user"
CHUNK_BYTES = 64 * 1024  # target size of one chunk of a time series
PENDING_BYTES = 8 * 1024 * 1024  # buffered rows beyond this are committed at once
MIN_CHUNK_ROWS = 16
DISK_RESERVE = 4 * 1024 * 1024  # kept free for the status and statistics at the end


def component_labels(size: int) -> list[str]:
    """Labels of the `size` columns of a sensor: x y z for 3 (vectors), xx xy .. zz for
    9 (a rotation matrix, row-major), value for 1, 0 1 2 .. otherwise."""
    if size == 1:
        return ["value"]
    if size == 3:
        return ["x", "y", "z"]
    if size == 9:
        return [a + b for a in "xyz" for b in "xyz"]
    return [str(k) for k in range(size)]


def split_component(name: str) -> tuple[str, str | None]:
    """A name with a component, "tip[1]" or "tip[y]", as ("tip", "1"); a name without
    one as (name, None). The syntax of `flexmbs plot` and `sweep --summary`."""
    if name.endswith("]") and "[" in name:
        base, _, component = name[:-1].rpartition("[")
        if base:
            return base, component.strip()
    return name, None


def column_index(component: str, size: int) -> int | None:
    """The column of a sensor of `size` columns that `component` names: its 0-based
    index ("1") or its label (component_labels: "y"); None if it names none."""
    labels = component_labels(size)
    if component in labels:
        return labels.index(component)
    try:
        k = int(component)
    except ValueError:
        return None
    return k if 0 <= k < size else None


def _strings(values: Iterable[object]) -> NDArray[np.object_]:
    """A numpy object array of str, stored by h5py as variable-length UTF-8."""
    return np.array([str(v) for v in values], dtype=object)


def _set_strings_attr(obj: h5py.Group | h5py.Dataset, name: str, values: Iterable[object]) -> None:
    """A list of str as an attr (variable-length UTF-8; an empty list works too)."""
    obj.attrs.create(name, _strings(values), dtype=h5py.string_dtype())


def _chunk_rows(ncols: int) -> int:
    """Rows per chunk so that a chunk holds about CHUNK_BYTES of float64."""
    return max(MIN_CHUNK_ROWS, CHUNK_BYTES // (8 * max(ncols, 1)))


def _now_iso() -> str:
    return datetime.datetime.now(datetime.UTC).astimezone().isoformat(timespec="seconds")


def _json_default(x: object) -> object:
    """json.dumps fallback: numpy scalars and arrays as Python numbers and lists."""
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, np.ndarray):
        return x.tolist()
    return str(x)


class ResultWriter:
    """Writes one result file while a run goes.

    Use `append` for each batch of output rows, `set_solver_statistics` at the end,
    then `close(status)`; or use it as a context manager, which closes with
    "finished", "failed: <exception>" or "failed: interrupted by the user".

    Parameters
    ----------
    path : the file (created, parent directories too; an existing file is replaced).
    model_text : the model file text ("" for a model built in Python).
    model_json : the normalised model as a JSON string.
    topology : flexmbs.model.topology.Topology of the model.
    coordinate_names : (nq,) names of the free coordinates (the columns of q and u).
    sensor_names, sensor_sizes : the sensors and their number of columns, in the
        column order of the `sensors` rows given to `append`.
    solver_name : the integration method, e.g. "BDF".
    settings : the run settings (t_end, rtol, atol, ...), numbers or strings.
    flush_interval : s of wall time between two commits to the file (0: every append).
    overrides : the "dotted.path=value" overrides applied to the model file, kept
        beside its text so that the run can be reproduced from the file alone.
    modes : {body: {"datasets": {name: array or list of str}, "attrs": {name: value}}}
        of the beam bodies with modal reduction, written to /modes/<body>
        (flexmbs.elements.modal.basis_record).
    state_rest_names : names of the state's columns after q and u (works, multipliers),
        written to /state_rest; None: no such dataset.
    coordinate_units : the unit of each coordinate (attr `units` of /q; /u gets their
        rates), flexmbs.model.units; None: none stored.
    sensor_units : the unit of each column of each sensor, in sensor_names's order
        (attr `units` of /sensors/<name>); None: none stored.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        model_text: str,
        model_json: str,
        topology: Topology,
        coordinate_names: Iterable[str],
        sensor_names: Sequence[str],
        sensor_sizes: Sequence[int],
        solver_name: str,
        settings: Mapping[str, float | str],
        flush_interval: float = 1.0,
        overrides: Iterable[str] = (),
        modes: Mapping[str, Mapping[str, Mapping[str, object]]] | None = None,
        state_rest_names: Iterable[str] | None = None,
        coordinate_units: Sequence[str] | None = None,
        sensor_units: Sequence[Sequence[str]] | None = None,
    ) -> None:
        if not flush_interval >= 0:
            raise ValueError(f"flush_interval must be >= 0 s, got {flush_interval}")
        if len(sensor_names) != len(sensor_sizes):
            raise ValueError(
                f"sensor_names ({len(sensor_names)}) and sensor_sizes "
                f"({len(sensor_sizes)}) differ in length"
            )
        self.path = os.fspath(path)
        self.flush_interval = float(flush_interval)
        self.coordinate_names = [str(c) for c in coordinate_names]
        self.sensor_names = [str(s) for s in sensor_names]
        self.sensor_sizes = [int(k) for k in sensor_sizes]
        self.state_rest_names = (
            None if state_rest_names is None else [str(n) for n in state_rest_names]
        )
        self.coordinate_units = None if coordinate_units is None else list(coordinate_units)
        self.sensor_units = None if sensor_units is None else [list(u) for u in sensor_units]
        self._sensor_offsets = np.concatenate([[0], np.cumsum(self.sensor_sizes)]).astype(int)
        self._pending: list[tuple[NDArray[np.float64], ...]] = []
        self._pending_bytes = 0
        self._pending_statistics: dict[str, object] | None = None
        self._n = 0
        self._t_last = -math.inf
        self._t_reached = math.nan
        self._closed = False
        self._write_failure: str | None = None
        parent = os.path.dirname(os.path.abspath(self.path))
        os.makedirs(parent, exist_ok=True)
        # libver v108: attributes over 64 KiB (long name lists) go to dense storage.
        # No file locking: readers (flexmbs info, h5py, xarray) may open the file while
        # the run goes; between commits it is consistent.
        self._t_integrated = -math.inf
        # No chunk cache: a commit writes whole batches of rows, and HDF5's cache of
        # the chunks written (1 MiB a dataset, by default) kept every dataset's recent
        # chunks, 150 MB more after 2 M rows of a small model.
        # The layout is written under a hidden name and renamed when complete, so that
        # a reader never finds the file half laid out (and an earlier result at `path`
        # stays whole until then).
        partial = os.path.join(parent, f".{os.path.basename(self.path)}.{os.getpid()}.partial")
        self._file = h5py.File(
            partial, "w", libver=("v108", "latest"), locking=False, rdcc_nbytes=0
        )
        try:
            self._create_layout(model_text, model_json, topology, solver_name, settings)
            _set_strings_attr(self._file["model"], "overrides", list(overrides))
            self._write_modes(modes or {})
            self._file.flush()
            os.replace(partial, self.path)
        except BaseException as exc:
            with contextlib.suppress(OSError, RuntimeError):
                self._file.close()
            with contextlib.suppress(OSError):
                os.remove(partial)
            if isinstance(exc, (OSError, RuntimeError)):
                free = _room_for(partial)
                raise ResultWriteError(
                    f"{self.path}: the result file could not be laid out "
                    f"({_system_reason(exc)}); {free / 1e6:.1f} MB left for it (the "
                    "disk's free space, or the file-size limit of `ulimit -f`); nothing "
                    "is written"
                ) from None
            raise
        self._last_commit = _time.monotonic()

    # ----------------------------------------------------------------- layout
    def _create_layout(
        self,
        model_text: str,
        model_json: str,
        topology: Topology,
        solver_name: str,
        settings: Mapping[str, float | str],
    ) -> None:
        f = self._file
        f.attrs["flexmbs_version"] = flexmbs.__version__
        f.attrs["created"] = _now_iso()
        f.attrs["status"] = STATUS_RUNNING
        f.attrs["t_reached"] = math.nan
        f.attrs["writer_host"] = socket.gethostname()
        f.attrs["writer_pid"] = os.getpid()
        f.attrs["heartbeat"] = _time.time()
        self._write_model(model_text, model_json)
        self._write_topology(topology)
        self._write_solver_settings(solver_name, settings)
        time = f.create_dataset(
            "time", shape=(0,), maxshape=(None,), dtype="f8", chunks=(_chunk_rows(1),)
        )
        time.attrs["units"] = "s"
        time.attrs["description"] = "simulated time of each output row (s)"
        time.make_scale("time")
        self._series: list[tuple[str, h5py.Dataset, int | None]] = [("time", time, None)]
        coord = f.create_dataset(
            "coordinate", data=_strings(self.coordinate_names), dtype=h5py.string_dtype()
        )
        coord.make_scale("coordinate")
        for name in ("q", "u"):
            self._add_series(name, len(self.coordinate_names), coord)
            _set_strings_attr(self._series[-1][1], "names", self.coordinate_names)
        f["q"].attrs["description"] = (
            "generalized coordinates: free joint coordinates "
            "(m for translations, rad for rotations)"
        )
        f["u"].attrs["description"] = "generalized speeds u = dq/dt (m/s, rad/s)"
        if self.coordinate_units is not None:
            _set_strings_attr(f["q"], "units", self.coordinate_units)
            _set_strings_attr(f["u"], "units", rate_units(self.coordinate_units))
        f.create_group("energy")
        for name in ENERGY_NAMES:
            ds = self._add_series(f"energy/{name}", None, None)
            ds.attrs["units"] = "J"
            ds.attrs["description"] = ENERGY_DESCRIPTIONS[name]
        _set_strings_attr(f.create_group("sensors"), "names", self.sensor_names)
        for k, (name, size) in enumerate(zip(self.sensor_names, self.sensor_sizes)):
            ds = self._add_series(f"sensors/{name}", size, self._component_scale(size))
            ds.attrs["size"] = size
            _set_strings_attr(ds, "components", component_labels(size))
            if self.sensor_units is not None:
                _set_strings_attr(ds, "units", self.sensor_units[k])
        if self.state_rest_names is not None:
            scale = f.create_dataset(
                "rest_column", data=_strings(self.state_rest_names), dtype=h5py.string_dtype()
            )
            scale.make_scale("rest_column")
            ds = self._add_series("state_rest", len(self.state_rest_names), scale)
            _set_strings_attr(ds, "names", self.state_rest_names)
            ds.attrs["description"] = (
                "the state after q and u: works W_nc, W_a (J), then the constraint multipliers"
            )

    def _component_scale(self, size: int) -> h5py.Dataset:
        """The dimension scale /component<size> (created on first use)."""
        name = f"component{size}"
        if name not in self._file:
            ds = self._file.create_dataset(
                name, data=_strings(component_labels(size)), dtype=h5py.string_dtype()
            )
            ds.make_scale(name)
        return self._file[name]

    def _add_series(
        self, name: str, ncols: int | None, column_scale: h5py.Dataset | None
    ) -> h5py.Dataset:
        """A resizable float64 dataset (0,) or (0, ncols) with /time attached to dim 0."""
        shape: tuple[int, ...]
        maxshape: tuple[int | None, ...]
        chunks: tuple[int, ...]
        if ncols is None:
            shape, maxshape, chunks = (0,), (None,), (_chunk_rows(1),)
        else:
            shape, maxshape = (0, ncols), (None, ncols)
            chunks = (_chunk_rows(ncols), max(ncols, 1))
            if ncols == 0:  # a chunk may not be wider than a fixed dimension
                maxshape = (None, None)
        ds = self._file.create_dataset(
            name, shape=shape, maxshape=maxshape, dtype="f8", chunks=chunks
        )
        ds.dims[0].attach_scale(self._file["time"])
        if column_scale is not None:
            ds.dims[1].attach_scale(column_scale)
        self._series.append((name, ds, ncols))
        return ds

    def _write_model(self, model_text: str, model_json: str) -> None:
        g = self._file.create_group("model")
        g.create_dataset("text", data=str(model_text), dtype=h5py.string_dtype())
        g.create_dataset("json", data=str(model_json), dtype=h5py.string_dtype())
        g["text"].attrs["description"] = (
            "the model file as given (empty for a model built in Python)"
        )
        g["json"].attrs["description"] = "the normalised model (JSON)"

    def _write_topology(self, topology: Topology) -> None:
        g = self._file.create_group("topology")
        s = h5py.string_dtype()
        g.create_dataset("body_names", data=_strings(topology.body_names), dtype=s)
        g.create_dataset("joint_names", data=_strings(topology.joint_names), dtype=s)
        g.create_dataset("parent", data=np.asarray(topology.parent, dtype=np.int64))
        g.create_dataset("marker_names", data=_strings(topology.marker_names), dtype=s)
        g.create_dataset("body_path", data=np.asarray(topology.body_path, dtype=np.int8))
        g.create_dataset("joint_path", data=np.asarray(topology.joint_path, dtype=np.int8))
        g.create_dataset("coordinate_names", data=_strings(self.coordinate_names), dtype=s)
        g["parent"].attrs["description"] = "parent body index of each body, -1 = ground"
        g["body_path"].attrs["description"] = (
            "T[i, j] = 1 if body j is on the path from the ground to body i (H2.1)"
        )
        g["joint_path"].attrs["description"] = "chi[i, k] over the 2N joint markers (H2.2)"

    def _write_modes(self, modes: Mapping[str, Mapping[str, Mapping[str, object]]]) -> None:
        """/modes/<body>: datasets (arrays, or lists of str) and attrs of each
        reduced beam body."""
        g = self._file.create_group("modes")
        g.attrs["description"] = (
            "mode bases of the beam bodies with modal reduction, "
            "qf = basis @ eta (docs/explanation/formulation.md section 8)"
        )
        for body, record in modes.items():
            b = g.create_group(str(body))
            for name, value in record.get("datasets", {}).items():
                if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
                    b.create_dataset(name, data=_strings(value), dtype=h5py.string_dtype())
                else:
                    b.create_dataset(name, data=np.asarray(value))
            for name, value in record.get("attrs", {}).items():
                if isinstance(value, (list, tuple)):
                    _set_strings_attr(b, name, [str(v) for v in value])
                else:
                    b.attrs[name] = value
            for name, text in MODE_DESCRIPTIONS.items():
                if name in b:
                    b[name].attrs["description"] = text

    def _write_solver_settings(self, solver_name: str, settings: Mapping[str, float | str]) -> None:
        g = self._file.create_group("solver")
        g.attrs["method"] = str(solver_name)
        g.attrs["rtol"] = float(settings.get("rtol", math.nan))
        g.attrs["atol"] = float(settings.get("atol", math.nan))
        g.attrs["settings"] = json.dumps(dict(settings), default=_json_default)

    # ----------------------------------------------------------------- rows
    @property
    def rows_committed(self) -> int:
        """Number of rows in the file (the rows of the last commit)."""
        return self._n

    @property
    def rows_pending(self) -> int:
        """Number of rows appended but not yet committed."""
        return sum(len(p[0]) for p in self._pending)

    def append(
        self,
        t: ArrayLike,
        q: ArrayLike,
        u: ArrayLike,
        energy: dict[str, ArrayLike] | ArrayLike,
        sensors: ArrayLike,
        rest: ArrayLike | None = None,
    ) -> None:
        """Buffer k output rows; commit them if flush_interval s passed since the last
        commit.

        t (k,) s, non-decreasing and not before the previous rows; q, u (k, nq);
        energy: dict of (k,) arrays named kinetic, gravity, strain, spring, dissipated,
        or a (k, 5) array in that column order (J; the total is computed here);
        sensors (k, sum(sensor_sizes)); rest (k, len(state_rest_names)), required
        when the writer has state_rest_names.
        """
        self._check_open()
        t = np.array(t, dtype=np.float64, ndmin=1)
        if t.ndim != 1:
            raise ValueError(f"t must be 1-D (k,), got shape {t.shape}")
        k = len(t)
        if k == 0:
            return
        if np.any(np.diff(t) < 0) or t[0] < self._t_last:
            raise ValueError("t must not decrease (within a batch and from batch to batch)")
        nq = len(self.coordinate_names)
        nrest = 0 if self.state_rest_names is None else len(self.state_rest_names)
        rows = (
            t,
            _rows("q", q, k, nq),
            _rows("u", u, k, nq),
            _energy_rows(energy, k),
            _rows("sensors", sensors, k, int(self._sensor_offsets[-1])),
            np.zeros((k, 0)) if nrest == 0 and rest is None else _rows("rest", rest, k, nrest),
        )
        self._pending.append(rows)
        self._pending_bytes += sum(r.nbytes for r in rows)
        self._t_last = t[-1]
        if (
            _time.monotonic() - self._last_commit >= self.flush_interval
            or self._pending_bytes >= PENDING_BYTES
        ):
            self._commit()

    def set_solver_statistics(self, statistics: Mapping[str, object]) -> None:
        """Record the solver's statistics (written at the next commit or at close).

        Scalars (int, float, str, bool) become attrs of /solver, arrays and lists of
        numbers (e.g. order_counts) datasets in /solver, None is left out, anything
        else is stored as a JSON string attr.
        """
        self._check_open()
        self._pending_statistics = dict(statistics)

    def flush(self) -> None:
        """Commit the buffered rows now."""
        self._check_open()
        self._commit()

    def commit_if_due(self, t_integrated: float) -> None:
        """Commit when flush_interval s passed since the last commit, recording how far
        the integration got (root attr `t_integrated`, s) even between output rows."""
        self._check_open()
        self._t_integrated = float(t_integrated)
        if _time.monotonic() - self._last_commit >= self.flush_interval:
            self._commit()

    def close(self, status: str) -> None:
        """Commit what is buffered, set the status and close the file.

        status : "finished" or "failed: <reason>". A second close does nothing.
        """
        if self._closed:
            return
        status = str(status)
        if status != STATUS_FINISHED and not status.startswith(FAILED_PREFIX):
            raise ValueError(f'status must be "finished" or "failed: <reason>", got {status!r}')
        if self._write_failure is not None:
            status = FAILED_PREFIX + self._write_failure
        try:
            self._commit(status)
        finally:
            self._closed = True
            try:
                self._file.close()
            except (OSError, RuntimeError) as exc:
                if self._write_failure is None:
                    raise ResultWriteError(
                        f"{self.path}: closing the result file failed: {exc}"
                    ) from None

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> Literal[False]:
        if exc_type is None:
            self.close(STATUS_FINISHED)
        elif issubclass(exc_type, KeyboardInterrupt):
            self.close(STATUS_INTERRUPTED)
        else:
            reason = f"{exc_type.__name__}: {exc}" if str(exc) else exc_type.__name__
            self.close(FAILED_PREFIX + reason)
        return False

    def _check_open(self) -> None:
        if self._closed:
            raise ValueError(f"the result file {self.path} is closed")

    def _commit(self, status: str | None = None) -> None:
        """Resize and write every time series, update the attrs, flush the file; the
        signals that end a run (SIGINT, SIGTERM, SIGHUP) wait until it is done, so
        that an interrupted run's file never holds half a commit."""
        with _signals_deferred():
            self._commit_now(status)

    def _commit_now(self, status: str | None) -> None:
        if self._write_failure is not None and status is None:
            raise ResultWriteError(self._write_failure)
        room = self._room_problem()
        if room is not None:
            # what is committed stays; the rows that do not fit are dropped, and the
            # file says why (the attrs fit in the reserve)
            self._pending, self._pending_bytes = [], 0
            self._write_failure = room
            status = FAILED_PREFIX + room
        try:
            self._write_pending(status)
        except (OSError, RuntimeError) as exc:
            self._write_failure = f"writing the result file failed: {exc}"
            raise ResultWriteError(f"{self.path}: {self._write_failure}") from None
        if room is not None:
            raise ResultWriteError(f"{self.path}: {room}")

    def _room_problem(self) -> str | None:
        """Why the pending rows cannot be committed (None if they can): the free space
        of the file's disk, or what a file-size limit (ulimit -f) leaves, below the
        rows, a new chunk per series and DISK_RESERVE."""
        if not self._pending:
            return None
        need = self._pending_bytes + 2 * len(self._series) * CHUNK_BYTES + DISK_RESERVE
        free = _room_for(self.path)
        if free >= need:
            return None
        written = (
            f"the rows up to t = {self._t_reached:g} s are written"
            if self._n
            else "no rows are written"
        )
        return (
            f"no room for the result file: {free / 1e6:.1f} MB left (the disk's free "
            f"space, or the file-size limit of `ulimit -f`), {need / 1e6:.1f} MB "
            f"needed for the next rows; the run stops, {written}"
        )

    def _write_pending(self, status: str | None) -> None:
        f = self._file
        if self._pending:
            t, q, u, e, s, rest = (np.concatenate(c) for c in zip(*self._pending))
            self._pending = []
            self._pending_bytes = 0
            n0, n1 = self._n, self._n + len(t)
            total = e[:, 0] + e[:, 1] + e[:, 2] + e[:, 3] - e[:, 4]
            columns = {"time": t, "q": q, "u": u, "energy/total": total, "state_rest": rest}
            for j, name in enumerate(ENERGY_COMPONENTS):
                columns[f"energy/{name}"] = e[:, j]
            for j, name in enumerate(self.sensor_names):
                a, b = self._sensor_offsets[j], self._sensor_offsets[j + 1]
                columns[f"sensors/{name}"] = s[:, a:b]
            for name, ds, _ in self._series:
                ds.resize(n1, axis=0)
                ds[n0:n1] = columns[name]
            self._n = n1
            self._t_reached = float(t[-1])
        f.attrs["t_reached"] = self._t_reached
        f.attrs["t_integrated"] = max(self._t_integrated, self._t_reached)
        f.attrs["heartbeat"] = _time.time()
        if self._pending_statistics is not None:
            _write_statistics(f["solver"], self._pending_statistics)
            self._pending_statistics = None
        if status is not None:
            f.attrs["status"] = status
        f.flush()
        self._last_commit = _time.monotonic()


def _system_reason(exc: BaseException) -> str:
    """The system's reason in an HDF5 write error ("File too large", "No space left on
    device"), else the error's first line."""
    found = re.search(r"error message = '([^']*)'", str(exc))
    if found:
        return found.group(1)
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


def _room_for(path: str) -> int:
    """Bytes `path` may still grow by: the free space of its disk (to an unprivileged
    user), or less under a file-size limit (RLIMIT_FSIZE, `ulimit -f`)."""
    folder = os.path.dirname(os.path.abspath(path))
    room = shutil.disk_usage(folder).free
    soft, _ = resource.getrlimit(resource.RLIMIT_FSIZE)
    if soft != resource.RLIM_INFINITY:
        size = os.path.getsize(path) if os.path.exists(path) else 0
        room = min(room, soft - size)
    return room


DEFERRED_SIGNALS = ("SIGINT", "SIGTERM", "SIGHUP")


@contextlib.contextmanager
def _signals_deferred() -> Iterator[None]:
    """Blocks DEFERRED_SIGNALS in this thread while the block runs; one that arrives
    meanwhile is delivered (its handler runs) when it ends. Where signals cannot be
    blocked (not POSIX), the block runs as it is."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    mask = {getattr(signal, n) for n in DEFERRED_SIGNALS if hasattr(signal, n)}
    old = signal.pthread_sigmask(signal.SIG_BLOCK, mask)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def _rows(name: str, x: object, k: int, ncols: int) -> NDArray[np.float64]:
    """x as a float64 (k, ncols) array; ValueError naming `name` if it does not fit."""
    a = np.array(x, dtype=np.float64)  # a copy: the caller may reuse its buffers
    if a.ndim == 1 and a.size == k * ncols and (k == 1 or ncols == 1):
        a = a.reshape(k, ncols)
    if a.shape != (k, ncols):
        raise ValueError(f"{name} must have shape ({k}, {ncols}), got {a.shape}")
    return a


def _energy_rows(energy: dict[str, ArrayLike] | ArrayLike, k: int) -> NDArray[np.float64]:
    """The (k, 7) energy rows from a dict (names ENERGY_COMPONENTS; the geometric parts
    may be left out: zero) or an array of 7 (or 5, without the geometric parts)
    columns."""
    n = len(ENERGY_COMPONENTS)
    if isinstance(energy, dict):
        unknown = set(energy) - set(ENERGY_COMPONENTS)
        missing = [c for c in ENERGY_COMPONENTS if c not in energy and c not in GEOMETRIC_ENERGIES]
        if unknown or missing:
            raise ValueError(
                "energy must have the keys "
                f"{', '.join(ENERGY_COMPONENTS[:5])} (and optionally "
                f"{', '.join(GEOMETRIC_ENERGIES)}; the total is computed); "
                f"missing {missing}, unknown {sorted(unknown)}"
            )
        return np.column_stack(
            [
                _rows(f"energy[{c!r}]", energy[c], k, 1)[:, 0] if c in energy else np.zeros(k)
                for c in ENERGY_COMPONENTS
            ]
        )
    a = np.asarray(energy, dtype=float)
    if a.ndim == 2 and a.shape == (k, n - len(GEOMETRIC_ENERGIES)):
        a = np.hstack([a, np.zeros((k, len(GEOMETRIC_ENERGIES)))])
    return _rows("energy", a, k, n)


def _write_statistics(group: h5py.Group, statistics: Mapping[str, object]) -> None:
    """Statistics as attrs (scalars) and datasets (arrays) of the /solver group."""
    for key, value in statistics.items():
        key = str(key)
        if value is None:
            continue
        if isinstance(value, (str, bool, int, float, np.generic)):
            group.attrs[key] = value
            continue
        if not isinstance(value, dict):
            a = np.asarray(value)
            if a.ndim >= 1 and a.dtype.kind in "biuf":
                if key in group:
                    del group[key]
                group.create_dataset(key, data=a)
                continue
        group.attrs[key] = json.dumps(value, default=_json_default)


# --------------------------------------------------------------------- reader
@dataclass
class Result:
    """A result file read into memory (numpy arrays).

    time (n,) s; q, u (n, nq); coordinate_names (nq,) list of str;
    energy: dict name -> (n,) J for kinetic, gravity, strain, spring, dissipated, total;
    sensors: dict name -> (n,) for sensors of size 1, else (n, size);
    status: "running" (the run was killed or is still going), "finished" or
    "failed: <reason>"; t_reached (s, nan if no row was committed);
    model_text, model_json (str); model_overrides: the --set overrides; topology: dict of
    arrays (body_names, joint_names, parent, marker_names, body_path, joint_path,
    coordinate_names);
    solver: attrs and arrays of /solver (method, rtol, atol, settings as a dict, and
    the statistics of the run); modes: body -> dict of the datasets (arrays; lists of
    str for names and descriptions) and attrs of /modes/<body> (beam bodies with
    modal reduction; empty otherwise); coordinate_units (nq,) and sensor_units (name
    -> the unit of each column), empty for a file written without them.
    """

    path: str
    time: np.ndarray
    q: np.ndarray
    u: np.ndarray
    coordinate_names: list
    energy: dict
    sensors: dict
    status: str
    t_reached: float
    model_text: str = ""
    model_json: str = ""
    model_overrides: list = field(default_factory=list)
    topology: dict = field(default_factory=dict)
    solver: dict = field(default_factory=dict)
    flexmbs_version: str = ""
    created: str = ""
    modes: dict = field(default_factory=dict)
    writer_host: str = ""
    writer_pid: int = 0
    heartbeat: float = math.nan
    coordinate_units: list[str] = field(default_factory=list)
    sensor_units: dict[str, list[str]] = field(default_factory=dict)

    @property
    def writer_gone(self) -> bool:
        """True when the status says "running" but the process that wrote the file has
        ended (it was killed: SIGKILL, a crash, a machine that went down): the writer
        ran on this machine and its process id is no longer in use. False when it may
        still be writing, or when that cannot be known (another machine)."""
        if self.status != STATUS_RUNNING or not self.writer_pid:
            return False
        if self.writer_host != socket.gethostname():
            return False
        try:
            os.kill(self.writer_pid, 0)
        except ProcessLookupError:
            return True
        except PermissionError:
            return False
        return False

    @property
    def status_text(self) -> str:
        """The status for the user: a run whose writer is gone is "unfinished: the
        writing process is gone", a live one names its process and last commit."""
        if self.status != STATUS_RUNNING:
            return self.status
        age = _time.time() - self.heartbeat
        last = f"last commit {age:.0f} s ago" if math.isfinite(age) else "no commit recorded"
        who = (
            f"pid {self.writer_pid} on {self.writer_host}"
            if self.writer_pid
            else "an unknown process"
        )
        if self.writer_gone:
            return (
                f"unfinished: the writing process is gone ({who}, {last}); the file "
                f"holds the rows up to t = {self.t_reached:.6g} s"
            )
        return f"running ({who}, {last})"

    @property
    def nsamples(self) -> int:
        """Number of output rows n."""
        return len(self.time)

    @property
    def finished(self) -> bool:
        return self.status == STATUS_FINISHED


LIVE_READ_ATTEMPTS = 20  # reads of a file caught inside a commit, LIVE_READ_WAIT s apart
LIVE_READ_WAIT = 0.1


def open_result(path: str | os.PathLike[str]) -> Result:
    """Read a result file (read-only) into a Result.

    Works on the file of a run that is still going (neither side uses HDF5 file
    locking, and between commits the writer leaves the file consistent) and on the
    file of a killed run (status stays "running"). A read that catches the writer
    inside a commit sees a half-written file; it is tried again, up to
    LIVE_READ_ATTEMPTS times LIVE_READ_WAIT s apart (a commit takes milliseconds).
    Raises ResultFileError if the file is missing, not HDF5, not a flexmbs result
    file, or still unreadable after those attempts.
    """
    for _ in range(LIVE_READ_ATTEMPTS - 1):
        try:
            return _open_result_once(path)
        except _HalfWritten:
            _time.sleep(LIVE_READ_WAIT)
    try:
        return _open_result_once(path)
    except _HalfWritten as exc:
        raise ResultFileError(str(exc)) from None


class _HalfWritten(Exception):
    """A result file that HDF5 could not read: damaged, or caught inside a commit."""


def _open_result_once(path: str | os.PathLike[str]) -> Result:
    path = os.fspath(path)
    if not os.path.exists(path):
        raise ResultFileError(f"{path}: no such result file")
    if os.path.isdir(path):
        raise ResultFileError(f"{path}: is a directory, not a result file")
    try:
        is_hdf5 = h5py.is_hdf5(path)
    except OSError as exc:
        raise ResultFileError(f"{path}: cannot be read ({exc})") from None
    if not is_hdf5:
        raise ResultFileError(f"{path}: not an HDF5 file (expected a flexmbs result file)")
    try:
        with h5py.File(path, "r", locking=False) as f:
            if "status" not in f.attrs:
                raise ResultFileError(
                    f"{path}: not a flexmbs result file (HDF5, but no "
                    "'status' attribute at the root)"
                )
            return _read(path, f)
    except ResultFileError:
        raise
    except (OSError, KeyError, ValueError, RuntimeError) as exc:
        raise _HalfWritten(
            f"{path}: damaged or incomplete flexmbs result file "
            f"({type(exc).__name__}: {exc}); if its run is still "
            "going, try again"
        ) from None


def _text(x: object) -> str:
    """An attr or a scalar string dataset value as str."""
    if isinstance(x, h5py.Dataset):
        x = x[()]
    return x.decode() if isinstance(x, bytes) else str(x)


def _string_list(ds: h5py.Dataset) -> list[str]:
    return [s.decode() if isinstance(s, bytes) else str(s) for s in ds[()]]


def _read(path: str, f: h5py.File) -> Result:
    """The Result of an open file; series cut to their common length (a file killed
    inside a commit may have some datasets longer than others)."""
    series = {"time": f["time"], "q": f["q"], "u": f["u"]}
    energy_names = [k for k in ENERGY_NAMES if k in f["energy"]]
    sensor_names = [str(k) for k in f["sensors"].attrs.get("names", sorted(f["sensors"]))]
    series.update({f"energy/{k}": f["energy"][k] for k in energy_names})
    series.update({f"sensors/{k}": f["sensors"][k] for k in sensor_names})
    n = min(ds.shape[0] for ds in series.values())
    energy = {k: f["energy"][k][:n] for k in energy_names}
    sensors = {}
    for k in sensor_names:
        a = f["sensors"][k][:n]
        sensors[k] = a[:, 0] if a.ndim == 2 and a.shape[1] == 1 else a
    topology = {}
    for k, ds in f["topology"].items():
        topology[k] = (
            np.array(_string_list(ds), dtype=object)
            if h5py.check_string_dtype(ds.dtype)
            else ds[()]
        )
    solver = {k: _attr_value(v) for k, v in f["solver"].attrs.items()}
    solver.update({k: ds[()] for k, ds in f["solver"].items()})
    if isinstance(solver.get("settings"), str):
        solver["settings"] = json.loads(solver["settings"])
    modes = {}
    for body, g in f["modes"].items() if "modes" in f else ():
        record = {k: _attr_value(v) for k, v in g.attrs.items()}
        for k, v in record.items():
            if isinstance(v, np.ndarray) and v.dtype.kind == "O":
                record[k] = [_attr_value(x) for x in v]
        for k, ds in g.items():
            record[k] = _string_list(ds) if h5py.check_string_dtype(ds.dtype) else ds[()]
        modes[body] = record
    return Result(
        path=path,
        time=f["time"][:n],
        q=f["q"][:n],
        u=f["u"][:n],
        coordinate_names=[str(s) for s in f["q"].attrs["names"]],
        coordinate_units=[str(u) for u in f["q"].attrs.get("units", [])],
        sensor_units={
            k: [str(u) for u in f["sensors"][k].attrs["units"]]
            for k in sensor_names
            if "units" in f["sensors"][k].attrs
        },
        energy=energy,
        sensors=sensors,
        status=_text(f.attrs["status"]),
        t_reached=float(f.attrs.get("t_reached", math.nan)),
        model_text=_text(f["model/text"]),
        model_json=_text(f["model/json"]),
        model_overrides=[str(v) for v in f["model"].attrs.get("overrides", [])],
        writer_host=_text(f.attrs.get("writer_host", "")),
        writer_pid=int(f.attrs.get("writer_pid", 0)),
        heartbeat=float(f.attrs.get("heartbeat", math.nan)),
        topology=topology,
        solver=solver,
        flexmbs_version=_text(f.attrs.get("flexmbs_version", "")),
        created=_text(f.attrs.get("created", "")),
        modes=modes,
    )


def _attr_value(v: object) -> Any:
    """numpy scalars as Python scalars, bytes as str."""
    if isinstance(v, bytes):
        return v.decode()
    if isinstance(v, np.generic):
        return v.item()
    return v
