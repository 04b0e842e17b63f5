"""The HDF5 result file: written while the run goes (ResultWriter); read back by
flexmbs.io.result_reader (open_result, Result: re-exported here). The writer's
pieces beside it: the rows and attributes made of what it is given (result_rows),
the groups that do not grow and the descriptions it writes (result_groups), the disk
room a commit holds (disk_room), what it does when a write fails or a signal comes
(write_failures).

Layout (docs/results.md; docs/explanation/method.md "Result file"):

    /                   attrs flexmbs_version, created (ISO 8601), status ("running",
                        "finished" or "failed: <reason>"), t_reached (s, nan before the
                        first commit), t_integrated (s), rows (the rows committed),
                        writer_host, writer_pid (the writing process), heartbeat (s
                        since the epoch, at each commit)
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
resized and written, `t_reached` and `rows` updated, then `flush()`) at most once every
`flush_interval` seconds of wall time, or as soon as they hold PENDING_BYTES (so that
the memory of a run does not grow with its outputs). Between two commits the file is
not touched, so a process killed at any moment outside a commit (SIGKILL included)
leaves a file that holds exactly the rows of the last commit and still says status
"running". The file is laid out under a hidden name and renamed when complete, so a
reader never finds it half laid out; a reader that falls inside a commit is told to try
again (open_result does, LIVE_READ_ATTEMPTS times).

A full disk: before a commit writes anything it holds the disk room the commit can
grow the file by (flexmbs.io.disk_room, an upper bound: the chunks it opens, their
index, the metadata), and STATUS_ROOM more stays held past the end of the file between
commits, so that no write of a commit, nor the status written at the end, can fail for
want of space, whatever another process does to the disk meanwhile. With less room
the rows that fit are committed and the run stops ("failed: no room for the result
file: ..."). A write that fails all the same (an I/O error; a file system where room
cannot be held, and another process took the room seen) is not followed by HDF5's view
of the file: that view is dropped unwritten and the file, as the last commit left it on
the disk, is opened again to record why the run stopped.

One writer per file: the writer holds flexmbs.io.output_lock's lock on its path from
before the layout (or from before the run compiles, in `simulate`) until its close.
"""

from __future__ import annotations

import contextlib
import datetime
import errno
import math
import os
import socket
import time as _time
from collections.abc import Callable, Iterable, Mapping, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Literal, Self

import h5py
import numpy as np
from numpy.typing import ArrayLike, NDArray

import flexmbs

from ..checks.units import rate_units
from ..errors import ResultWriteError
from .disk_room import hold_by_writing, release, reserve, room_for, size_limit_room
from .output_lock import OutputLock
from .result_groups import (
    ENERGY_DESCRIPTIONS,
    write_model,
    write_modes,
    write_solver_settings,
    write_topology,
)
from .result_reader import (
    ENERGY_COMPONENTS,
    ENERGY_NAMES,
    FAILED_PREFIX,
    STATUS_FINISHED,
    STATUS_RUNNING,
    Result,
    column_index,
    component_labels,
    open_result,
    split_component,
)
from .result_rows import (
    energy_rows,
    float_rows,
    set_strings_attr,
    statistics_bytes,
    utf8_strings,
    write_statistics,
)
from .write_failures import discard_view, signals_deferred, system_reason, write_ballast

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

STATUS_INTERRUPTED = FAILED_PREFIX + "interrupted by the user"
# target size of one chunk of a time series (HDF5 allocates chunks whole: the first row
# of a run takes one a series)
CHUNK_BYTES = 16 * 1024
PENDING_BYTES = 8 * 1024 * 1024  # buffered rows beyond this are committed at once
MIN_CHUNK_ROWS = 16
# The disk room a commit holds before it writes (flexmbs.io.disk_room), an upper bound
# of what HDF5 allocates: the new chunks, then for their index (an extensible array) an
# entry a chunk and a block a series, and the metadata a commit rewrites. STATUS_ROOM
# stays held past the end of the file between commits, for the status and attrs of the
# end whatever another process does to the disk meanwhile.
CHUNK_INDEX_ROOM = 64
SERIES_INDEX_ROOM = 4 * 1024
COMMIT_METADATA_ROOM = 64 * 1024
STATUS_ROOM = 64 * 1024
ROOM_ATTEMPTS = 8  # times the rows that fit are sought again when the room seen is taken


def _chunk_rows(ncols: int) -> int:
    """Rows per chunk so that a chunk holds about CHUNK_BYTES of float64."""
    return max(MIN_CHUNK_ROWS, CHUNK_BYTES // (8 * max(ncols, 1)))


def _now_iso() -> str:
    return datetime.datetime.now(datetime.UTC).astimezone().isoformat(timespec="seconds")


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
        rates), flexmbs.checks.units; None: none stored.
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
        lock: OutputLock | None = None,
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
        self._room_note = ""
        self._t_integrated = -math.inf
        # one writer per file: the lock is held until close (a lock given is taken over)
        self._lock = lock if lock is not None else OutputLock(self.path)
        if not self._lock.held:
            self._lock.acquire()
        self._create_file(
            lambda: self._create_layout(model_text, model_json, topology, solver_name, settings),
            overrides,
            modes or {},
        )
        self._last_commit = _time.monotonic()

    # ----------------------------------------------------------------- layout
    def _create_file(
        self,
        create_layout: Callable[[], None],
        overrides: Iterable[str],
        modes: Mapping[str, Mapping[str, Mapping[str, object]]],
    ) -> None:
        """Write the file's layout (`create_layout()`, then the model file's overrides
        and the modes) under a hidden name and rename it when complete, so
        that a reader never finds the file half laid out (and an earlier result at
        `path` stays whole until then), the room for its end held; on a failure
        nothing is left, the lock released, and an OSError is a ResultWriteError
        with the system's reason and the room left."""
        parent = os.path.dirname(os.path.abspath(self.path))
        partial = os.path.join(parent, f".{os.path.basename(self.path)}.{os.getpid()}.partial")
        self._fd = -1
        self._ballast: str | None = None
        try:
            os.makedirs(parent, exist_ok=True)
            # libver v108: attributes over 64 KiB (long name lists) go to dense
            # storage. No file locking: readers (flexmbs info, h5py, xarray) may open
            # the file while the run goes; between commits it is consistent. No chunk
            # cache: a commit writes whole batches of rows, and HDF5's cache of the
            # chunks written (1 MiB a dataset, by default) kept every dataset's recent
            # chunks, 150 MB more after 2 M rows of a small model.
            self._file = h5py.File(
                partial, "w", libver=("v108", "latest"), locking=False, rdcc_nbytes=0
            )
            create_layout()
            set_strings_attr(self._file["model"], "overrides", list(overrides))
            write_modes(self._file, modes)
            self._file.flush()
            self._fd = os.open(partial, os.O_RDWR | getattr(os, "O_CLOEXEC", 0))
            held = reserve(self._fd, STATUS_ROOM)
            if held is False:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            if held is None:  # no room can be held here: keep it in a side file
                self._ballast = write_ballast(self.path, STATUS_ROOM)
            os.replace(partial, self.path)
        except BaseException as exc:
            if hasattr(self, "_file"):
                discard_view(self._file)
            if self._fd >= 0:
                os.close(self._fd)
            for name in (partial, self._ballast):
                with contextlib.suppress(OSError, TypeError):
                    os.remove(name)  # type: ignore[arg-type]
            self._lock.release()
            if isinstance(exc, (OSError, RuntimeError)):
                free = room_for(partial)
                raise ResultWriteError(
                    f"{self.path}: the result file could not be laid out "
                    f"({system_reason(exc)}); {free / 1e6:.1f} MB left for it (the "
                    "disk's free space, or the file-size limit of `ulimit -f`); nothing "
                    "is written"
                ) from None
            raise

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
        f.attrs["t_integrated"] = math.nan
        f.attrs["rows"] = np.int64(0)
        f.attrs["writer_host"] = socket.gethostname()
        f.attrs["writer_pid"] = os.getpid()
        f.attrs["heartbeat"] = _time.time()
        write_model(self._file, model_text, model_json)
        write_topology(self._file, topology, self.coordinate_names)
        write_solver_settings(self._file, solver_name, settings)
        time = f.create_dataset(
            "time", shape=(0,), maxshape=(None,), dtype="f8", chunks=(_chunk_rows(1),)
        )
        time.attrs["units"] = "s"
        time.attrs["description"] = "simulated time of each output row (s)"
        time.make_scale("time")
        self._series: list[tuple[str, h5py.Dataset, int | None]] = [("time", time, None)]
        coord = f.create_dataset(
            "coordinate", data=utf8_strings(self.coordinate_names), dtype=h5py.string_dtype()
        )
        coord.make_scale("coordinate")
        for name in ("q", "u"):
            self._add_series(name, len(self.coordinate_names), coord)
            set_strings_attr(self._series[-1][1], "names", self.coordinate_names)
        f["q"].attrs["description"] = (
            "generalized coordinates: free joint coordinates "
            "(m for translations, rad for rotations)"
        )
        f["u"].attrs["description"] = "generalized speeds u = dq/dt (m/s, rad/s)"
        if self.coordinate_units is not None:
            set_strings_attr(f["q"], "units", self.coordinate_units)
            set_strings_attr(f["u"], "units", rate_units(self.coordinate_units))
        f.create_group("energy")
        for name in ENERGY_NAMES:
            ds = self._add_series(f"energy/{name}", None, None)
            ds.attrs["units"] = "J"
            ds.attrs["description"] = ENERGY_DESCRIPTIONS[name]
        set_strings_attr(f.create_group("sensors"), "names", self.sensor_names)
        for k, (name, size) in enumerate(zip(self.sensor_names, self.sensor_sizes)):
            ds = self._add_series(f"sensors/{name}", size, self._component_scale(size))
            ds.attrs["size"] = size
            set_strings_attr(ds, "components", component_labels(size))
            if self.sensor_units is not None:
                set_strings_attr(ds, "units", self.sensor_units[k])
        if self.state_rest_names is not None:
            scale = f.create_dataset(
                "rest_column", data=utf8_strings(self.state_rest_names), dtype=h5py.string_dtype()
            )
            scale.make_scale("rest_column")
            ds = self._add_series("state_rest", len(self.state_rest_names), scale)
            set_strings_attr(ds, "names", self.state_rest_names)
            ds.attrs["description"] = (
                "the state after q and u: works W_nc, W_a (J), then the constraint multipliers"
            )

    def _component_scale(self, size: int) -> h5py.Dataset:
        """The dimension scale /component<size> (created on first use)."""
        name = f"component{size}"
        if name not in self._file:
            ds = self._file.create_dataset(
                name, data=utf8_strings(component_labels(size)), dtype=h5py.string_dtype()
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
            float_rows("q", q, k, nq),
            float_rows("u", u, k, nq),
            energy_rows(energy, k),
            float_rows("sensors", sensors, k, int(self._sensor_offsets[-1])),
            np.zeros((k, 0)) if nrest == 0 and rest is None else float_rows("rest", rest, k, nrest),
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
        """Commit what is buffered, set the status and close the file (and give back
        the disk room held for it, and its lock).

        status : "finished" or "failed: <reason>". A second close does nothing.
        """
        if self._closed:
            return
        status = str(status)
        if status != STATUS_FINISHED and not status.startswith(FAILED_PREFIX):
            raise ValueError(f'status must be "finished" or "failed: <reason>", got {status!r}')
        if self._write_failure is not None:
            status = FAILED_PREFIX + self._write_failure
            self._pending, self._pending_bytes = [], 0  # the run stopped at the failure
        try:
            self._commit(status)
        finally:
            self._closed = True
            try:
                self._close_file()
            finally:
                release(self._fd)
                os.close(self._fd)
                self._free_ballast()
                self._lock.release()

    def _close_file(self) -> None:
        """Close the HDF5 file; one whose last write failed is closed without writing
        (discard_view)."""
        try:
            self._file.flush()
        except (OSError, RuntimeError):
            discard_view(self._file)
            return
        try:
            self._file.close()
        except (OSError, RuntimeError) as exc:
            if self._write_failure is None:
                raise ResultWriteError(
                    f"{self.path}: closing the result file failed: {exc}"
                ) from None

    def _free_ballast(self) -> None:
        """Give back the room kept in a side file for the end (where none is held)."""
        if self._ballast is not None:
            with contextlib.suppress(OSError):
                os.remove(self._ballast)
            self._ballast = None

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
        with signals_deferred():
            self._commit_now(status)

    def _commit_now(self, status: str | None) -> None:
        """One commit: hold the disk room it needs first, so that no write of it can
        fail for want of space (flexmbs.io.disk_room); with less room, commit the rows
        that fit and stop the run. A write that fails all the same (an I/O error)
        leaves the file as the last commit left it, the status saying why."""
        if self._write_failure is not None and status is None:
            raise ResultWriteError(f"{self.path}: {self._write_failure}")
        pending = self.rows_pending
        fit, with_statistics = self._hold_room(pending)
        short = None
        if fit < pending:
            self._keep_pending(fit)
            short = self._no_room_text()
            self._write_failure = short
            status = FAILED_PREFIX + short
        if not with_statistics:
            self._pending_statistics = None
        try:
            self._write_pending(status)
        except (OSError, RuntimeError) as exc:
            self._write_failure = f"writing the result file failed: {system_reason(exc)}"
            self._reopen_as_committed(FAILED_PREFIX + self._write_failure)
            raise ResultWriteError(
                f"{self.path}: {self._write_failure}; {self._written_text()}"
            ) from None
        reserve(self._fd, STATUS_ROOM)  # what the commit used of the room for the end
        if short is not None:
            raise ResultWriteError(f"{self.path}: {short}")

    def _hold_room(self, rows: int) -> tuple[int, bool]:
        """(number of the pending rows to commit, whether the pending statistics go
        too): all of them when the disk room they need (and STATUS_ROOM after them)
        could be held; else the rows that fit in the room there is, without the
        statistics (a file-size limit, `ulimit -f`, counts as no room)."""
        statistics = statistics_bytes(self._pending_statistics)
        whole = self._bytes_for_rows(rows) + statistics + STATUS_ROOM
        self._room_seen = (room_for(self.path), whole)
        if whole <= size_limit_room(self.path) and self._hold(whole, self._room_seen[0]):
            return rows, True
        for _ in range(ROOM_ATTEMPTS):  # another process may take the room seen first
            room = room_for(self.path)
            self._room_seen = (room, whole)
            fit = self._rows_within(rows, room - STATUS_ROOM)
            if fit == 0:
                return 0, False
            if self._hold(self._bytes_for_rows(fit) + STATUS_ROOM, room):
                return fit, False
        return 0, False

    def _hold(self, nbytes: int, room: int) -> bool:
        """Hold `nbytes` of disk for the next writes (disk_room): past the file's end
        where the file system can (`reserve`), else, within the `room` seen, by
        writing zeros from where HDF5 writes next, the end of its address space."""
        held = reserve(self._fd, nbytes)
        if held is None and nbytes <= room:
            held = hold_by_writing(self._fd, self._file.id.get_filesize(), nbytes)
        return bool(held)

    def _rows_within(self, rows: int, room: int) -> int:
        """The most of the first `rows` pending rows whose commit needs at most `room`
        bytes (0 if none)."""
        lo, hi = 0, rows
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self._bytes_for_rows(mid) <= room:
                lo = mid
            else:
                hi = mid - 1
        return lo

    def _bytes_for_rows(self, rows: int) -> int:
        """An upper bound of the bytes the file grows by when the next `rows` rows are
        committed: the chunks they open in every series (HDF5 allocates a chunk whole),
        the chunk index's entries and blocks, and the metadata written at a commit."""
        if rows <= 0:
            return 0
        n0, n1 = self._n, self._n + rows
        total = COMMIT_METADATA_ROOM
        for _, ds, _ in self._series:
            per_chunk = ds.chunks[0]
            new_chunks = -(-n1 // per_chunk) - -(-n0 // per_chunk)
            if new_chunks:
                chunk_bytes = 8 * int(np.prod(ds.chunks))
                total += new_chunks * (chunk_bytes + CHUNK_INDEX_ROOM) + SERIES_INDEX_ROOM
        return total

    def _keep_pending(self, rows: int) -> None:
        """Keep the first `rows` pending rows, drop the rest."""
        kept: list[tuple[NDArray[np.float64], ...]] = []
        left = rows
        for batch in self._pending:
            if left <= 0:
                break
            k = min(left, len(batch[0]))
            kept.append(tuple(a[:k] for a in batch))
            left -= k
        self._pending = kept
        self._pending_bytes = sum(a.nbytes for batch in kept for a in batch)

    def _written_text(self) -> str:
        """What the file holds, for a message: the rows up to t = ... s, or none."""
        t = self._t_reached
        if self._pending:
            t = float(self._pending[-1][0][-1])
        if self._n == 0 and not self._pending:
            return "no rows are written"
        return f"the rows up to t = {t:g} s are written"

    def _no_room_text(self) -> str:
        room, need = self._room_seen
        return (
            f"no room for the result file: {max(room, 0) / 1e6:.1f} MB left (the disk's "
            f"free space, or the file-size limit of `ulimit -f`), {need / 1e6:.1f} MB "
            f"needed for the next rows; the run stops, {self._written_text()}"
        )

    def _reopen_as_committed(self, status: str) -> None:
        """After a write that failed inside a commit: drop HDF5's view of the file
        (ahead of what the disk holds: closing it would write that view), open the file
        as the last commit left it on the disk, and record `status` there."""
        self._pending, self._pending_bytes, self._pending_statistics = [], 0, None
        discard_view(self._file)
        self._free_ballast()  # the room kept for this
        try:
            self._file = h5py.File(self.path, "r+", locking=False, rdcc_nbytes=0)
            self._series = [(name, self._file[name], ncols) for name, _, ncols in self._series]
            self._n = min(ds.shape[0] for _, ds, _ in self._series)
            self._file.attrs["status"] = status
            self._file.flush()
        except (OSError, RuntimeError, KeyError) as exc:
            self._write_failure = (self._write_failure or "") + (
                f"; the file could not be opened again to record it ({system_reason(exc)})"
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
        # the attrs of numbers are written in place: a commit allocates nothing for them
        f.attrs.modify("t_reached", self._t_reached)
        f.attrs.modify("t_integrated", max(self._t_integrated, self._t_reached))
        f.attrs.modify("rows", np.int64(self._n))
        f.attrs.modify("heartbeat", _time.time())
        if self._pending_statistics is not None:
            write_statistics(f["solver"], self._pending_statistics)
            self._pending_statistics = None
        if status is not None:
            f.attrs["status"] = status
        f.flush()
        self._last_commit = _time.monotonic()
