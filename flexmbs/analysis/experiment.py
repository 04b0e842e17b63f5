"""Experiment files: measured channels against time, from CSV or HDF5.

Both formats hold one time axis and any number of channels sampled at those times
(docs/reference/experiment-files.md):

* CSV: optional comment lines starting with `#` (the file's description), then a header
  row of column names with their units in brackets, `time [s], pot1 [V], ...`, then one
  row per sample. Columns are separated by commas (or tabs, or semicolons: whichever
  the header row uses). An empty field or `nan` is a missing value (a gap).
* HDF5: a group holding a 1-D dataset `time` and 1-D datasets of the same length, one
  per channel; the unit of each is its attribute `unit` (or `units`). The group's
  attributes are the file's description.

The time axis must be strictly increasing and given in a unit (s, ms, us, min); it is
converted to s. Missing channel values stay NaN in the `Experiment`; `resolve_gaps`
reports them and, as chosen, interpolates across them or cuts the record to its longest
stretch without one. Every error names the file, the line (CSV) or the dataset
(HDF5), the column or channel, and what was expected.
"""

from __future__ import annotations

import csv
import math
import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from ..errors import ExperimentError

if TYPE_CHECKING:
    import h5py

__all__ = [
    "Experiment",
    "Gap",
    "read_experiment",
    "find_gaps",
    "resolve_gaps",
    "TIME_UNITS",
    "GAP_POLICIES",
]

TIME_UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "min": 60.0}  # to s
GAP_POLICIES = ("error", "interpolate", "cut")
MISSING_TEXTS = ("", "nan", "na", "n/a")  # CSV fields read as a missing value (any case)
DELIMITERS = (",", "\t", ";")  # tried in this order on the header row
UNIT_IN_BRACKETS = re.compile(r"^(?P<name>.*?)\s*\[(?P<unit>[^\[\]]*)\]\s*$")
DEFAULT_TIME_NAME = "time"
MAX_LISTED = 12  # names listed in a message before "..."


def _listing(names: Iterable[str]) -> str:
    names = [str(n) for n in names]
    text = ", ".join(names[:MAX_LISTED])
    return text + (", ..." if len(names) > MAX_LISTED else "") if names else "(none)"


@dataclass
class Experiment:
    """A measured record: channels sampled at common times.

    path : the file; format : "csv" or "hdf5"; group : the HDF5 group ("" for CSV).
    time : (n,) s, strictly increasing.
    channels : name -> (n,) float array, NaN where a value is missing.
    units : name -> the unit as written in the file ("" when none), time included.
    lines : (n,) int, the CSV line (1-based) of each sample; None for HDF5.
    comments : the file's description (CSV comment lines, HDF5 group attributes).
    """

    path: str
    format: str
    time: np.ndarray
    channels: dict[str, NDArray[np.float64]]
    units: dict[str, str]
    lines: np.ndarray | None = None
    comments: list[str] = field(default_factory=list)
    group: str = ""
    time_name: str = DEFAULT_TIME_NAME

    @property
    def nsamples(self) -> int:
        return len(self.time)

    def location(self, k: int) -> str:
        """Where sample k is in the file: 'line N' (CSV) or 'sample k' (HDF5)."""
        if self.lines is not None:
            return f"line {int(self.lines[k])}"
        return f"sample {int(k)}"

    def item(self, channel: str) -> str:
        """The item of an error about a whole channel: 'column "x"' or 'dataset "/g/x"'."""
        if self.format == "csv":
            return f'column "{channel}"'
        return f'dataset "{self.group.rstrip("/")}/{channel}"'

    def select(self, keep: slice | NDArray[np.bool_] | NDArray[np.integer[Any]]) -> Experiment:
        """The record restricted to the samples `keep` (a boolean mask or indices)."""
        return replace(
            self,
            time=self.time[keep],
            channels={k: v[keep] for k, v in self.channels.items()},
            lines=None if self.lines is None else self.lines[keep],
        )

    def require(self, channel: str, item: str, field_name: str, source: str) -> NDArray[np.float64]:
        """The values of `channel`; else an ExperimentError at (source, item, field_name),
        e.g. the map entry that asks for it, listing the file's channels."""
        if channel not in self.channels:
            raise ExperimentError(
                f'the experiment file {self.path} has no channel "{channel}" (a 1-D '
                f"series as long as its time); its channels: {_listing(self.channels)}",
                item,
                field_name,
                source,
            )
        return self.channels[channel]


@dataclass
class Gap:
    """A run of missing values in one channel: samples first..last (inclusive)."""

    channel: str
    first: int
    last: int
    t_start: float  # s, time of the first missing sample
    t_end: float  # s, time of the last missing sample
    where: str  # 'lines 120-131' or 'samples 119-130'

    @property
    def nsamples(self) -> int:
        return self.last - self.first + 1

    def describe(self) -> str:
        return (
            f'channel "{self.channel}": {self.nsamples} missing value'
            f"{'s' if self.nsamples > 1 else ''} at {self.where} "
            f"(t = {self.t_start:.6g} to {self.t_end:.6g} s)"
        )


# ------------------------------------------------------------------------ reading
def read_experiment(
    path: str | os.PathLike[str], time_name: str = DEFAULT_TIME_NAME, group: str | None = None
) -> Experiment:
    """Read an experiment file: HDF5 when the file is HDF5, else CSV.

    time_name
        the time column (CSV) or dataset (HDF5).
    group
        the HDF5 group holding the record; None: the root if it holds `time_name`,
        else the one group that does.

    Raises ExperimentError naming the file, the line or dataset and what was expected.
    """
    path = os.fspath(path)
    if not os.path.exists(path):
        raise ExperimentError("no such experiment file", source=path)
    if os.path.isdir(path):
        raise ExperimentError("is a directory, not an experiment file", source=path)
    import h5py

    if h5py.is_hdf5(path):
        return _read_hdf5(path, time_name, group)
    if group is not None:
        raise ExperimentError(
            f'a group ("{group}") was given, but the file is not HDF5 '
            "(a CSV file holds one record)",
            source=path,
        )
    return _read_csv(path, time_name)


def _split_name_unit(text: str) -> tuple[str, str]:
    m = UNIT_IN_BRACKETS.match(text)
    if m:
        return m.group("name").strip(), m.group("unit").strip()
    return text.strip(), ""


def _time_scale(unit: str, item: str, field_name: str, source: str) -> float:
    if unit not in TIME_UNITS:
        got = f'"{unit}"' if unit else "none"
        raise ExperimentError(
            f"expected the time unit, one of {', '.join(TIME_UNITS)} "
            f'(e.g. "{field_name} [s]" in a CSV header, attribute '
            f'unit = "s" in HDF5); got {got}',
            item,
            field_name,
            source,
        )
    return TIME_UNITS[unit]


def _read_csv(path: str, time_name: str) -> Experiment:
    try:
        with open(path, encoding="utf-8-sig", newline="") as f:
            text_lines = f.read().splitlines()
    except UnicodeDecodeError as err:
        raise ExperimentError(
            f"expected a UTF-8 text file (CSV) or an HDF5 file: {err}", source=path
        ) from None
    comments, header, header_line = [], None, 0
    for number, line in enumerate(text_lines, start=1):
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith("#"):
            comments.append(stripped[1:].strip())
            continue
        header, header_line = stripped, number
        break
    if header is None:
        raise ExperimentError(
            'no header row: expected a row of column names with units, e.g. "time [s], pot1 [V]"',
            source=path,
        )
    delimiter = next((d for d in DELIMITERS if d in header), ",")
    columns = [c.strip() for c in next(csv.reader([header], delimiter=delimiter))]
    names, units = [], {}
    for k, column in enumerate(columns):
        name, unit = _split_name_unit(column)
        if not name:
            raise ExperimentError(
                f'column {k + 1} of the header has no name: expected "name [unit]"',
                f"line {header_line}",
                source=path,
            )
        if name in units:
            raise ExperimentError(
                f'two columns are called "{name}": expected distinct names',
                f"line {header_line}",
                source=path,
            )
        names.append(name)
        units[name] = unit
    if time_name not in units:
        raise ExperimentError(
            f'no time column "{time_name}" in the header; columns: {_listing(names)}',
            f"line {header_line}",
            source=path,
        )
    scale = _time_scale(units[time_name], f"line {header_line}", time_name, path)
    it = names.index(time_name)
    lines: list[int] | np.ndarray
    rows, lines = [], []
    for number in range(header_line + 1, len(text_lines) + 1):
        line = text_lines[number - 1].strip()
        if not line or line.startswith("#"):
            continue
        fields = [x.strip() for x in next(csv.reader([line], delimiter=delimiter))]
        if len(fields) != len(names):
            raise ExperimentError(
                f"expected {len(names)} values ({_listing(names)}), got {len(fields)}",
                f"line {number}",
                source=path,
            )
        row = []
        for name, text in zip(names, fields):
            row.append(_csv_number(text, name, name == time_name, number, path))
        rows.append(row)
        lines.append(number)
    if not rows:
        raise ExperimentError(f"no data rows after the header (line {header_line})", source=path)
    data = np.array(rows, dtype=float)
    lines = np.array(lines)
    time = data[:, it] * scale
    _check_increasing(time, lambda k: f"line {lines[k]}", time_name, scale, path)
    channels = {n: data[:, k].copy() for k, n in enumerate(names) if n != time_name}
    return Experiment(
        path=path,
        format="csv",
        time=time,
        channels=channels,
        units=units,
        lines=lines,
        comments=comments,
        time_name=time_name,
    )


def _csv_number(text: str, name: str, is_time: bool, line_number: int, path: str) -> float:
    if text.lower() in MISSING_TEXTS:
        if is_time:
            raise ExperimentError(
                f'expected a time value, got "{text}" (a sample needs its time)',
                f"line {line_number}",
                name,
                path,
            )
        return math.nan
    try:
        value = float(text)
    except ValueError:
        raise ExperimentError(
            f'expected a number, got "{text}"', f"line {line_number}", name, path
        ) from None
    if math.isinf(value):
        raise ExperimentError(
            f'expected a finite number, got "{text}"', f"line {line_number}", name, path
        )
    return value


def _check_increasing(
    time: NDArray[np.float64], where: Callable[[int], str], time_name: str, scale: float, path: str
) -> None:
    """time strictly increasing; else an error at the first sample that is not."""
    bad = np.flatnonzero(~(np.diff(time) > 0.0))
    if len(bad):
        k = int(bad[0]) + 1
        raise ExperimentError(
            f"expected strictly increasing time: {time[k] / scale:.9g} is not after the "
            f"previous sample's {time[k - 1] / scale:.9g} ({where(k - 1)})",
            where(k),
            time_name,
            path,
        )


def _read_hdf5(path: str, time_name: str, group: str | None) -> Experiment:
    import h5py

    try:
        with h5py.File(path, "r", locking=False) as f:
            g = _hdf5_group(f, path, time_name, group)
            return _read_hdf5_group(path, g, time_name)
    except ExperimentError:
        raise
    except (OSError, KeyError, ValueError, TypeError) as exc:
        raise ExperimentError(
            f"cannot read the HDF5 file ({type(exc).__name__}: {exc})", source=path
        ) from None


def _hdf5_group(f: h5py.File, path: str, time_name: str, group: str | None) -> h5py.Group:
    import h5py

    if group is not None:
        if group not in f or not isinstance(f[group], h5py.Group):
            raise ExperimentError(f'no group "{group}" in the file', source=path)
        return f[group]
    if isinstance(f.get(time_name), h5py.Dataset):
        return f["/"]
    holders = []
    f.visititems(
        lambda name, obj: (
            holders.append("/" + name)
            if isinstance(obj, h5py.Group) and isinstance(obj.get(time_name), h5py.Dataset)
            else None
        )
    )
    if len(holders) == 1:
        return f[holders[0]]
    if not holders:
        raise ExperimentError(
            f'no group holds a dataset "{time_name}": expected a group '
            f'with a "{time_name}" dataset and one dataset per channel',
            source=path,
        )
    raise ExperimentError(
        f'several groups hold a "{time_name}" dataset '
        f"({_listing(holders)}): choose one (--group, or group in the "
        "map's [experiment])",
        source=path,
    )


def _unit_attr(ds: h5py.Dataset) -> str:
    unit = ds.attrs.get("unit", ds.attrs.get("units", ""))
    return unit.decode() if isinstance(unit, bytes) else str(unit)


def _read_hdf5_group(path: str, g: h5py.Group, time_name: str) -> Experiment:
    import h5py

    prefix = g.name.rstrip("/")
    tds = g[time_name]
    item = f'dataset "{prefix}/{time_name}"'
    if not isinstance(tds, h5py.Dataset) or tds.ndim != 1 or tds.dtype.kind not in "fiu":
        raise ExperimentError(
            f"expected a 1-D dataset of numbers, got shape {tds.shape} of {tds.dtype}",
            item,
            source=path,
        )
    scale = _time_scale(_unit_attr(tds), item, time_name, path)
    time = np.asarray(tds[()], dtype=float) * scale
    if len(time) == 0:
        raise ExperimentError("expected at least one sample, got none", item, source=path)
    bad = np.flatnonzero(~np.isfinite(time))
    if len(bad):
        raise ExperimentError(
            f"expected a finite time at every sample, got {time[bad[0]]}",
            f"{item}: sample {bad[0]}",
            source=path,
        )
    _check_increasing(time, lambda k: f"{item}: sample {k}", time_name, scale, path)
    channels, units = {}, {time_name: _unit_attr(tds)}
    for name, ds in g.items():
        if name == time_name or not isinstance(ds, h5py.Dataset):
            continue
        if ds.ndim != 1 or ds.shape[0] != len(time) or ds.dtype.kind not in "fiu":
            continue  # not a channel; reported if a map asks for it (see Experiment.require)
        values = np.asarray(ds[()], dtype=float)
        if np.isinf(values).any():
            k = int(np.flatnonzero(np.isinf(values))[0])
            raise ExperimentError(
                f"expected finite numbers (NaN marks a missing value), got {values[k]}",
                f'dataset "{prefix}/{name}": sample {k}',
                source=path,
            )
        channels[name] = values
        units[name] = _unit_attr(ds)
    comments = [f"{k}: {v.decode() if isinstance(v, bytes) else v}" for k, v in g.attrs.items()]
    return Experiment(
        path=path,
        format="hdf5",
        time=time,
        channels=channels,
        units=units,
        lines=None,
        comments=comments,
        group=g.name,
        time_name=time_name,
    )


# ------------------------------------------------------------------------- gaps
def _runs(mask: NDArray[np.bool_]) -> list[tuple[np.intp, np.intp]]:
    """(first, last) index pairs of the runs of True in a boolean array."""
    padded = np.concatenate([[False], mask, [False]]).astype(np.int8)
    edges = np.diff(padded)
    return list(zip(np.flatnonzero(edges == 1), np.flatnonzero(edges == -1) - 1))


def find_gaps(experiment: Experiment, channels: Iterable[str]) -> list[Gap]:
    """The runs of missing values (NaN) in `channels` of the experiment, in file order."""
    gaps = []
    for name in channels:
        values = experiment.channels[name]
        for first, last in _runs(np.isnan(values)):
            if experiment.lines is not None:
                a, b = experiment.lines[first], experiment.lines[last]
                where = f"line {a}" if a == b else f"lines {a}-{b}"
            else:
                where = f"sample {first}" if first == last else f"samples {first}-{last}"
            gaps.append(
                Gap(
                    name,
                    int(first),
                    int(last),
                    float(experiment.time[first]),
                    float(experiment.time[last]),
                    where,
                )
            )
    return gaps


def resolve_gaps(
    experiment: Experiment, channels: Sequence[str], policy: str
) -> tuple[Experiment, list[Gap], str]:
    """Deal with missing values in `channels`: returns (experiment, gaps, note).

    policy "error": an ExperimentError describing the first gap and the choices;
    "interpolate": each gap inside the record is filled by linear interpolation in time
    between its neighbours; samples missing at the start or the end of the record (no
    neighbour on one side) are cut; "cut": the record is cut to its longest stretch of
    samples without a missing value in any of `channels`.
    `note` says what was done ("" when there was no gap).
    """
    if policy not in GAP_POLICIES:
        raise ValueError(f"policy must be one of {GAP_POLICIES}, got {policy!r}")
    gaps = find_gaps(experiment, channels)
    if not gaps:
        return experiment, gaps, ""
    listing = "; ".join(g.describe() for g in gaps[:3]) + ("; ..." if len(gaps) > 3 else "")
    if policy == "error":
        g = gaps[0]
        more = f"; {len(gaps)} gaps in all: {listing}" if len(gaps) > 1 else ""
        raise ExperimentError(
            f"{g.nsamples} missing value{'s' if g.nsamples > 1 else ''} (t = "
            f"{g.t_start:.6g} to {g.t_end:.6g} s){more}; expected a value in every sample, "
            'or gaps = "interpolate" or "cut" in the map\'s [experiment] (or --gaps)',
            g.where,
            g.channel,
            experiment.path,
        )
    missing_any = np.zeros(experiment.nsamples, dtype=bool)
    for name in channels:
        missing_any |= np.isnan(experiment.channels[name])
    if policy == "cut":
        good = _runs(~missing_any)
        if not good:
            raise ExperimentError(
                f"every sample misses a value in one of the channels {_listing(channels)}",
                source=experiment.path,
            )
        first, last = max(good, key=lambda r: r[1] - r[0])
        kept = experiment.select(slice(first, last + 1))
        note = (
            f"{len(gaps)} gap(s) ({listing}); cut to the longest stretch without one, "
            f"t = {kept.time[0]:.6g} to {kept.time[-1]:.6g} s "
            f"({kept.nsamples} of {experiment.nsamples} samples)"
        )
        return kept, gaps, note
    # interpolate: cut the ends that cannot be interpolated, fill the interior
    present = np.flatnonzero(~missing_any)
    if len(present) < 2:
        raise ExperimentError(
            "fewer than two samples hold every channel: nothing to interpolate between",
            source=experiment.path,
        )
    kept = experiment.select(slice(present[0], present[-1] + 1))
    channels_out = dict(kept.channels)
    for name in channels:
        v = channels_out[name].copy()
        nan = np.isnan(v)
        if nan.any():
            v[nan] = np.interp(kept.time[nan], kept.time[~nan], v[~nan])
        channels_out[name] = v
    kept = replace(kept, channels=channels_out)
    note = f"{len(gaps)} gap(s) ({listing}); interpolated linearly in time"
    if kept.nsamples < experiment.nsamples:
        note += (
            f"; {experiment.nsamples - kept.nsamples} sample(s) at the ends of the "
            "record, where there is nothing to interpolate from, cut"
        )
    return kept, gaps, note
