"""The linearization file (`flexmbs linearize -o FILE.h5`):

/                   attrs flexmbs_version, created, model, method, at, t (s)
/coordinate         (nq,) names of every generalized coordinate
/independent        (ny,) names of the independent coordinates y (attr prescribed:
                    those the user kept independent)
/q, /u              (nq,) the state linearized about
/M, /D, /K          (ny, ny) M dy'' + D dy' + K dy = 0 (SI units)
/J_y                (nq, ny) dq = J_y dy
/modes/frequency    (ny,) Hz, undamped natural frequencies (negative: unstable)
/modes/shape        (nq, ny) their shapes in every coordinate (largest entry 1)
/poles/s            (np, 2) real and imaginary parts (1/s), Im >= 0
/poles/natural_frequency, damping_ratio, damped_frequency   (np,) Hz, 1, Hz
/constraints        (closed loops) rows (texts of the active rows), rank (attr),
                    J_z (nq, rank), force (rank,) f_z = -lambda,
                    coordinate_force (nq,) g_z = Phi_q^T f_z, Fz_M, Fz_D, Fz_K
/absolute           (with --absolute) Führer and Wallrapp's view: jacobian, variables,
                    rows, rank (attr), independent, J_y
"""

from __future__ import annotations

import datetime
import os
from collections.abc import Iterable
from typing import Any, Protocol

import h5py
import numpy as np
from numpy.typing import NDArray

from .. import __version__

__all__ = ["write_linearization", "read_linearization"]

_STR = h5py.string_dtype()


class _Linearization(Protocol):
    """What is written of a flexmbs.analysis.linearize.Linearization (the analysis layer
    sits above this one)."""

    method: str
    t: float
    q: np.ndarray
    u: np.ndarray
    coordinate_names: list[str]
    names: list[str]
    M: np.ndarray
    D: np.ndarray
    K: np.ndarray
    J_y: np.ndarray
    frequencies: np.ndarray
    shapes: np.ndarray
    poles: np.ndarray
    rows: int
    rank: int
    row_texts: list[str]
    J_z: np.ndarray | None
    constraint_forces: np.ndarray | None
    coordinate_forces: np.ndarray | None
    Fz_M: np.ndarray | None
    Fz_D: np.ndarray | None
    Fz_K: np.ndarray | None
    prescribed: list[str]

    @property
    def natural_frequencies(self) -> NDArray[np.float64]: ...

    @property
    def damping_ratios(self) -> NDArray[np.float64]: ...

    @property
    def damped_frequencies(self) -> NDArray[np.float64]: ...


class _AbsoluteKinematics(Protocol):
    """What is written of a flexmbs.analysis.absolute_kinematics.AbsoluteKinematics."""

    jacobian: np.ndarray
    variables: list[tuple[str, str]]
    rows: list[str]
    rank: int
    independent: list[tuple[str, str]]
    J_y: np.ndarray


def _names(group: h5py.Group, key: str, names: Iterable[object]) -> None:
    group.create_dataset(key, data=np.array([str(n) for n in names], dtype=object), dtype=_STR)


def write_linearization(
    path: str | os.PathLike[str],
    lin: _Linearization,
    model_name: str,
    at: str,
    absolute: _AbsoluteKinematics | None = None,
) -> None:
    """Write a flexmbs.analysis.linearize.Linearization (and an AbsoluteKinematics)."""
    with h5py.File(path, "w") as f:
        f.attrs.update(
            flexmbs_version=__version__,
            model=model_name,
            method=lin.method,
            at=at,
            t=lin.t,
            created=datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        )
        _names(f, "coordinate", lin.coordinate_names)
        _names(f, "independent", lin.names)
        f["independent"].attrs["prescribed"] = ",".join(lin.prescribed)
        for key in ("q", "u", "M", "D", "K", "J_y"):
            f[key] = getattr(lin, key)
        modes = f.create_group("modes")
        modes["frequency"] = lin.frequencies
        modes["shape"] = lin.shapes
        poles = f.create_group("poles")
        poles["s"] = np.column_stack([lin.poles.real, lin.poles.imag]).reshape(-1, 2)
        poles["natural_frequency"] = lin.natural_frequencies
        poles["damping_ratio"] = lin.damping_ratios
        poles["damped_frequency"] = lin.damped_frequencies
        if lin.J_z is not None:
            con = f.create_group("constraints")
            con.attrs.update(rank=lin.rank, rows_total=lin.rows)
            _names(con, "rows", lin.row_texts)
            for key, value in (
                ("J_z", lin.J_z),
                ("force", lin.constraint_forces),
                ("coordinate_force", lin.coordinate_forces),
                ("Fz_M", lin.Fz_M),
                ("Fz_D", lin.Fz_D),
                ("Fz_K", lin.Fz_K),
            ):
                con[key] = value
        if absolute is not None:
            a = f.create_group("absolute")
            a.attrs["rank"] = absolute.rank
            a["jacobian"] = absolute.jacobian
            a["J_y"] = absolute.J_y
            _names(a, "variables", [f"{b}: {v}" for b, v in absolute.variables])
            _names(a, "rows", absolute.rows)
            _names(a, "independent", [f"{b}: {v}" for b, v in absolute.independent])


def read_linearization(path: str | os.PathLike[str]) -> dict[str, Any]:
    """dict of the file's arrays (names as lists of str) and its attrs under "attrs"."""
    out = {}
    with h5py.File(path, "r") as f:
        out["attrs"] = dict(f.attrs)

        def visit(name: str, obj: object) -> None:
            if isinstance(obj, h5py.Dataset):
                data = obj[()]
                if obj.dtype.kind == "O":
                    data = [v.decode() if isinstance(v, bytes) else str(v) for v in data]
                out[name] = data

        f.visititems(visit)
    return out
