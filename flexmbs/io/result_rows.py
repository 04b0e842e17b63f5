"""The values a result file's writer is given, made its rows and attributes: strings
as HDF5 strings, rows checked for their shape, the energies' columns, the run's
statistics as attrs and datasets (and the room they take)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping

import h5py
import numpy as np
from numpy.typing import ArrayLike, NDArray

from .result_reader import ENERGY_COMPONENTS

__all__ = [
    "GEOMETRIC_ENERGIES",
    "energy_rows",
    "float_rows",
    "json_default",
    "set_strings_attr",
    "statistics_bytes",
    "utf8_strings",
    "write_statistics",
]

GEOMETRIC_ENERGIES = ("strain_axial_force", "strain_foreshortening")  # may be left out
STATISTIC_ROOM = 4 * 1024  # bytes of the /solver group a statistic takes beyond its data


def utf8_strings(values: Iterable[object]) -> NDArray[np.object_]:
    """A numpy object array of str, stored by h5py as variable-length UTF-8."""
    return np.array([str(v) for v in values], dtype=object)


def set_strings_attr(obj: h5py.Group | h5py.Dataset, name: str, values: Iterable[object]) -> None:
    """A list of str as an attr (variable-length UTF-8; an empty list works too)."""
    obj.attrs.create(name, utf8_strings(values), dtype=h5py.string_dtype())


def json_default(x: object) -> object:
    """json.dumps fallback: numpy scalars and arrays as Python numbers and lists."""
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, np.ndarray):
        return x.tolist()
    return str(x)


def float_rows(name: str, x: object, k: int, ncols: int) -> NDArray[np.float64]:
    """x as a float64 (k, ncols) array; ValueError naming `name` if it does not fit."""
    a = np.array(x, dtype=np.float64)  # a copy: the caller may reuse its buffers
    if a.ndim == 1 and a.size == k * ncols and (k == 1 or ncols == 1):
        a = a.reshape(k, ncols)
    if a.shape != (k, ncols):
        raise ValueError(f"{name} must have shape ({k}, {ncols}), got {a.shape}")
    return a


def energy_rows(energy: dict[str, ArrayLike] | ArrayLike, k: int) -> NDArray[np.float64]:
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
                float_rows(f"energy[{c!r}]", energy[c], k, 1)[:, 0] if c in energy else np.zeros(k)
                for c in ENERGY_COMPONENTS
            ]
        )
    a = np.asarray(energy, dtype=float)
    if a.ndim == 2 and a.shape == (k, n - len(GEOMETRIC_ENERGIES)):
        a = np.hstack([a, np.zeros((k, len(GEOMETRIC_ENERGIES)))])
    return float_rows("energy", a, k, n)


def write_statistics(group: h5py.Group, statistics: Mapping[str, object]) -> None:
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
        group.attrs[key] = json.dumps(value, default=json_default)


def statistics_bytes(statistics: Mapping[str, object] | None) -> int:
    """An upper bound of the bytes the /solver group grows by with these statistics."""
    if not statistics:
        return 0
    total = 0
    for value in statistics.values():
        a = np.asarray(value) if isinstance(value, (list, tuple, np.ndarray)) else None
        if a is not None and a.dtype.kind in "biuf":
            total += STATISTIC_ROOM + a.nbytes
        else:
            total += STATISTIC_ROOM + 4 * len(json.dumps(value, default=json_default))
    return total
