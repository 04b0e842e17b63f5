"""Reading a result file: `open_result` reads what describes the run (status, names,
topology, solver, modes) at once and each time series when it is first asked for, so
that a command reads only the columns and the rows it uses, however large the file.

    r = open_result("arm.h5")                   # a few kB: no series read yet
    r.energy["total"]                           # reads /energy/total alone
    r.column("elbow.rz")                        # one column of /q
    r.window(0.5, 1.0).sensors["tip"]           # the rows of 0.5 <= t <= 1 s only
    open_result("arm.h5", window=(0.5, 1.0))    # the same window from the start

A series once read is kept (asking again costs nothing). The peak memory of a command is
that of the series it reads (docs/reference/result-file.md, "Reading large files").
"""

from __future__ import annotations

import json
import math
import os
import time as _time
import warnings
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import h5py
import numpy as np

from ..errors import ResultFileError, ResultFileWarning
from .output_lock import process_lives

__all__ = [
    "Result",
    "open_result",
    "ENERGY_COMPONENTS",
    "ENERGY_NAMES",
    "STATUS_RUNNING",
    "STATUS_FINISHED",
    "FAILED_PREFIX",
    "LIVE_READ_ATTEMPTS",
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
ENERGY_NAMES = ENERGY_COMPONENTS + ("total",)
STATUS_RUNNING = "running"
STATUS_FINISHED = "finished"
FAILED_PREFIX = "failed: "
LIVE_READ_ATTEMPTS = 20  # reads of a file caught inside a commit, LIVE_READ_WAIT s apart
LIVE_READ_WAIT = 0.1
COMPONENT_SUFFIXES = {"x": 0, "y": 1, "z": 2}
READ_BLOCK_CHUNKS = 1024  # chunks of a series read at once


class _Rows:
    """Where a Result's series come from: the file, the rows a:b of its datasets."""

    def __init__(self, path: str, start: int, stop: int) -> None:
        self.path, self.start, self.stop = path, start, stop

    def read(self, name: str, column: int | None = None) -> np.ndarray:
        """The rows of dataset `name` (one column of it if `column` is given), read
        READ_BLOCK_CHUNKS chunks at a time into the array returned: HDF5 lays out its
        plan of a read chunk by chunk first, some 8 kB a chunk, which for a whole
        series of a long run (10 000 chunks) was 70 MB on top of the array."""
        for attempt in range(LIVE_READ_ATTEMPTS):
            try:
                with h5py.File(self.path, "r", locking=False) as f:
                    return _read_rows(f[name], self.start, self.stop, column)
            except (OSError, KeyError, RuntimeError) as exc:
                if attempt == LIVE_READ_ATTEMPTS - 1:
                    raise ResultFileError(
                        f"{self.path}: {name} cannot be read ({type(exc).__name__}: {exc})"
                    ) from None
                _time.sleep(LIVE_READ_WAIT)
        raise AssertionError("unreachable")


def _read_rows(ds: h5py.Dataset, start: int, stop: int, column: int | None) -> np.ndarray:
    """Rows start:stop of `ds` (its column `column` only, if given), a block of
    READ_BLOCK_CHUNKS chunks at a time."""
    shape = (stop - start,) + (ds.shape[1:] if column is None else ())
    out = np.empty(shape, dtype=ds.dtype)
    step = (ds.chunks[0] if ds.chunks else max(1, stop - start)) * READ_BLOCK_CHUNKS
    for a in range(start, stop, step):
        b = min(stop, a + step)
        source = np.s_[a:b] if column is None else np.s_[a:b, column]
        if out.size:
            ds.read_direct(out, source, np.s_[a - start : b - start])
    return out


class _Series(Mapping[str, np.ndarray]):
    """Named series (the energies, the sensors) read from the file when first asked
    for; sensors of one column as (n,) arrays."""

    def __init__(self, names: list[str], load: Callable[[str], np.ndarray]) -> None:
        self._names = list(names)
        self._load = load
        self._read: dict[str, np.ndarray] = {}

    def __getitem__(self, name: str) -> np.ndarray:
        if name not in self._read:
            if name not in self._names:
                raise KeyError(name)
            self._read[name] = self._load(name)
        return self._read[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)

    def __repr__(self) -> str:
        return f"<{len(self)} series: {', '.join(self._names)}>"


def _squeezed(a: np.ndarray) -> np.ndarray:
    return a[:, 0] if a.ndim == 2 and a.shape[1] == 1 else a


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


class Result:
    """A result file's run: what describes it, and its time series.

    time (n,) s; q, u (n, nq); coordinate_names (nq,) list of str;
    energy: name -> (n,) J for kinetic, gravity, strain, spring, dissipated, total
    (and the geometric parts of strain); sensors: name -> (n,) for sensors of size 1,
    else (n, size); status: "running" (the run was killed or is still going),
    "finished" or "failed: <reason>"; t_reached (s, nan if no row was committed);
    model_text, model_json (str); model_overrides: the --set overrides; topology: dict
    of arrays (body_names, joint_names, parent, marker_names, body_path, joint_path,
    coordinate_names); solver: attrs and arrays of /solver (method, rtol, atol,
    settings as a dict, and the statistics of the run); modes: body -> dict of the
    datasets and attrs of /modes/<body> (beam bodies with modal reduction);
    coordinate_units (nq,) and sensor_units (name -> the unit of each column), empty
    for a file written without them; damage: "" for a whole file, else what is wrong
    with it (its series differ in length: only their common rows are read).

    From `open_result`, time, q, u and each energy and sensor are read from the file
    when first asked for; `column` reads one column, `window` the rows of a time
    span. Built in Python, it holds the arrays it is given.
    """

    def __init__(
        self,
        path: str,
        time: np.ndarray | None,
        q: np.ndarray | None,
        u: np.ndarray | None,
        coordinate_names: list[str],
        energy: Mapping[str, np.ndarray],
        sensors: Mapping[str, np.ndarray],
        status: str,
        t_reached: float,
        model_text: str = "",
        model_json: str = "",
        model_overrides: list[str] | None = None,
        topology: dict[str, Any] | None = None,
        solver: dict[str, Any] | None = None,
        flexmbs_version: str = "",
        created: str = "",
        modes: dict[str, Any] | None = None,
        writer_host: str = "",
        writer_pid: int = 0,
        heartbeat: float = math.nan,
        coordinate_units: list[str] | None = None,
        sensor_units: dict[str, list[str]] | None = None,
        damage: str = "",
    ) -> None:
        self.path = path
        self._arrays: dict[str, np.ndarray | None] = {"time": time, "q": q, "u": u}
        self._rows: _Rows | None = None
        self._nrows: int | None = None
        self.coordinate_names = list(coordinate_names)
        self.energy = energy
        self.sensors = sensors
        self.status = status
        self.t_reached = t_reached
        self.model_text = model_text
        self.model_json = model_json
        self.model_overrides = list(model_overrides or [])
        self.topology = dict(topology or {})
        self.solver = dict(solver or {})
        self.flexmbs_version = flexmbs_version
        self.created = created
        self.modes = dict(modes or {})
        self.writer_host = writer_host
        self.writer_pid = writer_pid
        self.heartbeat = heartbeat
        self.coordinate_units = list(coordinate_units or [])
        self.sensor_units = dict(sensor_units or {})
        self.damage = damage
        self._sensor_names = list(sensors)

    def _array(self, name: str) -> np.ndarray:
        a = self._arrays[name]
        if a is None:
            assert self._rows is not None
            a = self._rows.read(name)
            self._arrays[name] = a
        return a

    time = property(lambda self: self._array("time"), doc="(n,) s")
    q = property(lambda self: self._array("q"), doc="(n, nq) generalized coordinates")
    u = property(lambda self: self._array("u"), doc="(n, nq) generalized speeds")

    def column(self, name: str) -> np.ndarray:
        """One (n,) series by name, read alone: a coordinate ("elbow.rz", from q), a
        sensor of one column ("tip_angle"), a column of a larger sensor ("tip[2]", "tip[z]" or
        "tip.z" for the third of x y z), or an energy ("energy.kinetic"). KeyError
        naming what there is when there is no such series."""
        if name in self.coordinate_names:
            j = self.coordinate_names.index(name)
            if self._arrays["q"] is not None or self._rows is None:
                return self.q[:, j]
            return self._rows.read("q", j)
        if name.startswith("energy.") and name[len("energy.") :] in self.energy:
            return self.energy[name[len("energy.") :]]
        sensor, k = _sensor_column(name, self._sensor_names)
        if sensor is None and name.endswith("]") and name[: name.rfind("[")] in self.sensors:
            sensor = name[: name.rfind("[")]
            size = self.sensors[sensor].shape[1] if self.sensors[sensor].ndim == 2 else 1
            k = column_index(name[name.rfind("[") + 1 : -1].strip(), size)
            if k is None:
                raise KeyError(f'{self.path}: sensor "{sensor}" has {_columns(size)}; got "{name}"')
        if sensor is None:
            raise KeyError(
                f'{self.path}: no series "{name}"; expected a coordinate '
                f"({', '.join(self.coordinate_names) or 'none'}), a sensor "
                f"({', '.join(self._sensor_names) or 'none'}, NAME[k] for a column) or "
                f"energy.COMPONENT ({', '.join(self.energy)})"
            )
        values = self.sensors[sensor]
        if values.ndim == 1:
            if k not in (None, 0):
                raise KeyError(f'{self.path}: sensor "{sensor}" has 1 column; got "{name}"')
            return values
        if k is None:
            raise KeyError(
                f'{self.path}: sensor "{sensor}" has {_columns(values.shape[1])}; name one '
                f"as {sensor}[k], k = 0 .. {values.shape[1] - 1}, or by its label"
            )
        if not 0 <= k < values.shape[1]:
            raise KeyError(
                f'{self.path}: sensor "{sensor}" has {_columns(values.shape[1])}; "{name}" '
                f"asks for column {k} (expected 0 .. {values.shape[1] - 1})"
            )
        return values[:, k]

    def window(self, t0: float, t1: float) -> Result:
        """The rows of t0 <= t <= t1 (s) as a Result (read when asked for, as from
        open_result)."""
        if not (math.isfinite(t0) and math.isfinite(t1)) or t1 < t0:
            raise ValueError(f"expected finite t0 <= t1 (s), got {t0!r}, {t1!r}")
        time = self.time
        a = int(np.searchsorted(time, t0, side="left"))
        b = int(np.searchsorted(time, t1, side="right"))
        if self._rows is None:  # arrays in memory
            return Result(
                **{**self._describing(), "time": time[a:b], "q": self.q[a:b], "u": self.u[a:b]},
                energy={k: v[a:b] for k, v in self.energy.items()},
                sensors={k: v[a:b] for k, v in self.sensors.items()},
            )
        rows = _Rows(self.path, self._rows.start + a, self._rows.start + b)
        return _lazy_result(self._describing(), rows, list(self.energy), self._sensor_names)

    def _describing(self) -> dict[str, Any]:
        """The constructor's arguments other than the series."""
        return dict(
            path=self.path,
            coordinate_names=self.coordinate_names,
            status=self.status,
            t_reached=self.t_reached,
            model_text=self.model_text,
            model_json=self.model_json,
            model_overrides=self.model_overrides,
            topology=self.topology,
            solver=self.solver,
            flexmbs_version=self.flexmbs_version,
            created=self.created,
            modes=self.modes,
            writer_host=self.writer_host,
            writer_pid=self.writer_pid,
            heartbeat=self.heartbeat,
            coordinate_units=self.coordinate_units,
            sensor_units=self.sensor_units,
            damage=self.damage,
        )

    @property
    def writer_gone(self) -> bool:
        """True when the status says "running" but the process that wrote the file has
        ended (it was killed: SIGKILL, a crash, a machine that went down): the writer
        ran on this machine and its process id is no longer in use. False when it may
        still be writing, or when that cannot be known (another machine)."""
        if self.status != STATUS_RUNNING or not self.writer_pid:
            return False
        return not process_lives(self.writer_host, self.writer_pid)

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
        """Number of output rows n (read from the file's layout, not its data)."""
        if self._nrows is not None and self._arrays["time"] is None:
            return self._nrows
        return len(self.time)

    @property
    def finished(self) -> bool:
        return self.status == STATUS_FINISHED

    def __repr__(self) -> str:
        return f"<Result {self.path}: {self.status_text}, {self.nsamples} rows>"


def _columns(size: int) -> str:
    """ "3 columns (x, y, z)": a sensor's columns and their labels."""

    if size == 1:
        return "1 column (value)"
    return f"{size} columns ({', '.join(component_labels(size))})"


def _sensor_column(name: str, sensors: list[str]) -> tuple[str | None, int | None]:
    """(sensor, column) of NAME, NAME[k] or NAME.x|y|z; (None, None) if no sensor."""
    if name in sensors:
        return name, None
    if name.endswith("]") and "[" in name:
        base, _, index = name[:-1].rpartition("[")
        if base in sensors and index.lstrip("-").isdigit():
            return base, int(index)
    base, _, suffix = name.rpartition(".")
    if base in sensors and suffix in COMPONENT_SUFFIXES:
        return base, COMPONENT_SUFFIXES[suffix]
    return None, None


def _lazy_result(
    describing: dict[str, Any], rows: _Rows, energy_names: list[str], sensor_names: list[str]
) -> Result:
    """A Result whose series are read from `rows` when asked for."""
    r = Result(
        **describing,
        time=None,
        q=None,
        u=None,
        energy=_Series(energy_names, lambda k: rows.read(f"energy/{k}")),
        sensors=_Series(sensor_names, lambda k: _squeezed(rows.read(f"sensors/{k}"))),
    )
    r._rows = rows
    r._nrows = rows.stop - rows.start
    return r


def open_result(path: str | os.PathLike[str], window: tuple[float, float] | None = None) -> Result:
    """The Result of a result file: what describes the run read at once, each time
    series when first asked for (`Result.column` one column, `window` or
    `Result.window` the rows of t0 <= t <= t1 s only).

    Works on the file of a run that is still going (neither side uses HDF5 file
    locking, and between commits the writer leaves the file consistent) and on the
    file of a killed run (status stays "running"). A read that catches the writer
    inside a commit sees a half-written file; it is tried again, up to
    LIVE_READ_ATTEMPTS times LIVE_READ_WAIT s apart (a commit takes milliseconds). A
    file whose series differ in length (cut inside a commit by a killed writer, or
    edited) is read up to their common length, with a ResultFileWarning and the
    Result's `damage` saying so. Raises ResultFileError if the file is missing, not
    HDF5, not a flexmbs result file, or still unreadable after those attempts.
    """
    for _ in range(LIVE_READ_ATTEMPTS - 1):
        try:
            result = _open_result_once(path)
            break
        except _HalfWritten:
            _time.sleep(LIVE_READ_WAIT)
    else:
        try:
            result = _open_result_once(path)
        except _HalfWritten as exc:
            raise ResultFileError(str(exc)) from None
    if result.damage:
        warnings.warn(ResultFileWarning(f"{result.path}: {result.damage}"), stacklevel=2)
    if window is not None:
        return result.window(*window)
    return result


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
        raise ResultFileError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    if not is_hdf5:
        raise ResultFileError(f"{path}: not an HDF5 file (expected a flexmbs result file)")
    try:
        with h5py.File(path, "r", locking=False) as f:
            if "status" not in f.attrs:
                raise ResultFileError(
                    f"{path}: not a flexmbs result file (HDF5, but no "
                    "'status' attribute at the root)"
                )
            missing = [k for k in ("time", "q", "u", "energy", "sensors", "model") if k not in f]
            if missing:
                raise ResultFileError(
                    f"{path}: not a whole flexmbs result file: it has no "
                    + ", ".join(f"/{k}" for k in missing)
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


def _series_lengths(f: h5py.File, sensor_names: list[str]) -> dict[str, int]:
    names = ["time", "q", "u"] + [f"energy/{k}" for k in ENERGY_NAMES if k in f["energy"]]
    names += [f"sensors/{k}" for k in sensor_names if k in f["sensors"]]
    if "state_rest" in f:
        names.append("state_rest")
    return {name: f[name].shape[0] for name in names}


def _rows_and_damage(path: str, f: h5py.File, sensor_names: list[str]) -> tuple[int, str]:
    """(the rows to read, "" or what is wrong): the rows committed (root attr `rows`)
    or, for a file without it, the series' common length. Series that differ in length
    are damage, unless the writer is live (a read inside a commit: tried again)."""
    lengths = _series_lengths(f, sensor_names)
    shortest = min(lengths.values())
    committed = int(f.attrs["rows"]) if "rows" in f.attrs else None
    n = shortest if committed is None else min(shortest, committed)
    short = {k: v for k, v in lengths.items() if v < (committed or max(lengths.values()))}
    if not short:
        return n, ""
    status = _text(f.attrs["status"])
    if status == STATUS_RUNNING and _writer_may_run(f):
        raise _HalfWritten(f"{path}: caught inside a commit of its running writer")
    longest = max(lengths.values()) if committed is None else committed
    listed = ", ".join(f"/{k} {v}" for k, v in sorted(short.items(), key=lambda kv: kv[1]))
    return n, (
        f"its time series differ in length ({listed} rows, "
        f"{'the rows committed' if committed is not None else 'the longest'} {longest}): "
        f"the file was cut or edited after it was written; only the first {n} rows are read"
    )


def _writer_may_run(f: h5py.File) -> bool:
    """Whether the file's writer may still be writing it (this host's process lives,
    or another host's, which cannot be asked)."""
    pid = int(f.attrs.get("writer_pid", 0))
    return bool(pid) and process_lives(_text(f.attrs.get("writer_host", "")), pid)


def _read(path: str, f: h5py.File) -> Result:
    """The Result of an open file, its series left in the file."""
    sensor_names = [str(k) for k in f["sensors"].attrs.get("names", sorted(f["sensors"]))]
    n, damage = _rows_and_damage(path, f, sensor_names)
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
    describing = dict(
        path=path,
        coordinate_names=[str(s) for s in f["q"].attrs["names"]],
        coordinate_units=[str(u) for u in f["q"].attrs.get("units", [])],
        sensor_units={
            k: [str(u) for u in f["sensors"][k].attrs["units"]]
            for k in sensor_names
            if "units" in f["sensors"][k].attrs
        },
        status=_text(f.attrs["status"]),
        t_reached=float(f.attrs.get("t_reached", math.nan)),
        model_text=_text(f["model/text"]) if "text" in f["model"] else "",
        model_json=_text(f["model/json"]) if "json" in f["model"] else "",
        model_overrides=[str(v) for v in f["model"].attrs.get("overrides", [])],
        writer_host=_text(f.attrs.get("writer_host", "")),
        writer_pid=int(f.attrs.get("writer_pid", 0)),
        heartbeat=float(f.attrs.get("heartbeat", math.nan)),
        topology=topology,
        solver=solver,
        flexmbs_version=_text(f.attrs.get("flexmbs_version", "")),
        created=_text(f.attrs.get("created", "")),
        modes=modes,
        damage=damage,
    )
    energy_names = [k for k in ENERGY_NAMES if k in f["energy"]]
    present = [k for k in sensor_names if k in f["sensors"]]
    return _lazy_result(describing, _Rows(path, 0, n), energy_names, present)


def _attr_value(v: object) -> Any:
    """numpy scalars as Python scalars, bytes as str."""
    if isinstance(v, bytes):
        return v.decode()
    if isinstance(v, np.generic):
        return v.item()
    return v
