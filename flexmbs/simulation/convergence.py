"""Did the run converge? The model run at its tolerance and at one `factor` times
tighter (flexmbs.simulate(..., verify=True), `flexmbs verify`), and the largest change
of each group of outputs measured against that group's own scale.

    change(group)  = max over the outputs and the group's columns of |x_tight - x|
    relative(group) = change / scale(group)

with the scales: a joint coordinate group, the range of its motion (max - min over
the run, per coordinate: a joint that moves 1 mrad about 1.5 rad is judged on the
1 mrad); the elastic coordinates, their largest value (they swing about zero); a
sensor, its largest magnitude; the energy terms (kinetic, gravity's variation,
strain, springs, W_nc), the largest energy the system holds. A group passes when its
relative change is below `limit`. For an integrator that keeps its tolerance the
change is about the error of the run at its tolerance, so a group that changes by
more than the accuracy asked of it shows that the tolerance does not give it (a step
the integrator misses, a stiff component it does not follow, a model at the edge of
its validity).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..checks.units import coordinate_units, sensor_units
from ..model.compiled import compile_model
from ..model.description import Model

__all__ = [
    "DEFAULT_FACTOR",
    "DEFAULT_LIMIT",
    "Convergence",
    "compare_runs",
    "format_convergence",
    "check_verify_settings",
]

DEFAULT_FACTOR = 10.0
DEFAULT_LIMIT = 1e-3
SCALE_FLOOR = 1e-12
"""Scales below this (in the group's unit) are taken as no motion: the change is then
judged on its absolute value against the limit."""


@dataclass
class GroupChange:
    """One group of outputs: its largest change between the two runs (in `unit`), its
    scale, the relative change, where it occurs, and the verdict."""

    name: str
    unit: str
    change: float
    scale: float
    relative: float
    at_time: float
    column: str
    passed: bool

    def as_dict(self) -> dict[str, Any]:
        return {
            k: (None if isinstance(v, float) and not math.isfinite(v) else v)
            for k, v in self.__dict__.items()
        }


@dataclass
class Convergence:
    """The outcome of verify_model: the settings of both runs, their statistics, each
    group's change and the verdict (`passed`: every group below `limit` and both runs
    finished)."""

    method: str
    rtol: float
    atol: float
    factor: float
    limit: float
    groups: list[GroupChange] = field(default_factory=list)
    statistics: tuple[dict[str, Any], dict[str, Any]] = ({}, {})
    wall_time: tuple[float, float] = (0.0, 0.0)
    status: tuple[str, str] = ("", "")
    message: str = ""
    window: tuple[float, float] | None = None

    @property
    def passed(self) -> bool:
        return self.status == ("finished", "finished") and all(g.passed for g in self.groups)

    @property
    def worst(self) -> GroupChange | None:
        return max(self.groups, key=lambda g: g.relative, default=None)

    def as_dict(self) -> dict[str, Any]:
        keep = ("nsteps", "nrejected", "nres", "wall_time")
        return {
            "method": self.method,
            "rtol": self.rtol,
            "atol": self.atol,
            "factor": self.factor,
            "limit": self.limit,
            "passed": self.passed,
            "status": list(self.status),
            "message": self.message,
            "window": list(self.window) if self.window is not None else None,
            "groups": [g.as_dict() for g in self.groups],
            "runs": [{k: s.get(k) for k in keep} for s in self.statistics],
        }


def _group(
    name: str,
    unit: str,
    coarse: NDArray[np.float64],
    fine: NDArray[np.float64],
    scale: NDArray[np.float64],
    t: NDArray[np.float64],
    columns: Sequence[str],
    limit: float,
) -> GroupChange:
    """The change of one group: columns of (n, k) arrays, per-column scales (k,)."""
    diff = np.abs(fine - coarse)
    scale = np.maximum(np.asarray(scale, dtype=float), SCALE_FLOOR)
    rel = diff / scale
    if rel.size == 0 or not np.all(np.isfinite(rel)):
        bad = rel.size > 0
        return GroupChange(
            name,
            unit,
            math.inf if bad else 0.0,
            0.0,
            math.inf if bad else 0.0,
            math.nan,
            "",
            not bad,
        )
    i, j = np.unravel_index(int(np.argmax(rel)), rel.shape)
    return GroupChange(
        name,
        unit,
        float(diff[i, j]),
        float(scale[j]),
        float(rel[i, j]),
        float(t[i]),
        columns[int(j)],
        bool(rel[i, j] < limit),
    )


def _unit_of(units: Sequence[str]) -> str:
    """One unit for a group (the units it has, joined)."""
    seen = list(dict.fromkeys(u for u in units if u))
    return "/".join(seen) if seen else "-"


_Compared = tuple[
    str, str, NDArray[np.float64], NDArray[np.float64], NDArray[np.float64], list[str]
]
"""A group to compare: its name, unit, the two runs' columns, each column's scale and
name."""


def compare_runs(
    model: Model,
    coarse: Any,
    fine: Any,
    limit: float,
    window: tuple[float, float] | None = None,
) -> list[GroupChange]:
    """The groups of module text, from two runs of `model` on the same output times;
    `window` (t0, t1): only the outputs from t0 to t1 s count (their changes and
    their scales)."""
    cm = compile_model(model)
    n = min(len(coarse.t), len(fine.t))
    rows = np.arange(n)
    if window is not None:
        times = np.asarray(coarse.t[:n])
        rows = rows[(times >= window[0] - 1e-12) & (times <= window[1] + 1e-12)]
    t = np.asarray(coarse.t)[rows]
    yc, yf = np.asarray(coarse.y)[rows], np.asarray(fine.y)[rows]
    sc, sf = np.asarray(coarse.sensors)[rows], np.asarray(fine.sensors)[rows]
    ec = np.array(np.asarray(coarse.energy)[rows, :5])
    ef = np.array(np.asarray(fine.energy)[rows, :5])
    groups = (
        _coordinate_groups(model, cm, yc, yf)
        + _sensor_groups(model, cm, sc, sf)
        + [_energy_group(ec, ef)]
    )
    return [
        _group(name, unit, c, f, scale, t, columns, limit)
        for name, unit, c, f, scale, columns in groups
    ]


def _coordinate_groups(model: Model, cm: Any, yc: Any, yf: Any) -> list[_Compared]:
    """The joint coordinates' group (each against the range of its motion) and the
    elastic coordinates' (against their largest value), those the model has, from the
    states yc, yf of the two runs."""
    nq = cm.nq
    nel = int(np.sum(cm.arrays.flex_nf))
    nj = nq - nel
    names = list(cm.coordinate_names)
    units = coordinate_units(model, names)
    groups = []
    if nj:
        x = yf[:, :nj]
        scale = x.max(axis=0) - x.min(axis=0)
        groups.append(("joint coordinates", _unit_of(units[:nj]), yc[:, :nj], x, scale, names[:nj]))
    if nel:
        x = yf[:, nj:nq]
        scale = np.full(nel, np.abs(x).max())
        elastic = names[nj:nq]
        groups.append(
            ("elastic coordinates", _unit_of(units[nj:nq]), yc[:, nj:nq], x, scale, elastic)
        )
    return groups


def _sensor_groups(model: Model, cm: Any, sc: Any, sf: Any) -> list[_Compared]:
    """A group a sensor, against its largest magnitude, from the sensor values sc, sf
    of the two runs."""
    groups = []
    k = 0
    for name, size in zip(cm.sensor_names, cm.sensor_sizes):
        x = sf[:, k : k + size]
        columns = [name] if size == 1 else [f"{name}[{i}]" for i in range(size)]
        unit = _unit_of(sensor_units(model, name, size))
        scale = np.full(size, np.abs(x).max())
        groups.append((f"sensor {name}", unit, sc[:, k : k + size], x, scale, columns))
        k += size
    return groups


def _energy_group(ec: NDArray[np.float64], ef: NDArray[np.float64]) -> _Compared:
    """The energy terms' group from the first five energy columns of the two runs (own
    copies: gravity's is made its variation, its zero being arbitrary), against the
    largest energy the system holds."""
    ec[:, 1] -= ec[0, 1]
    ef[:, 1] -= ef[0, 1]
    held = np.abs(ef[:, :4]).max()
    terms = ["kinetic", "gravity", "strain", "spring", "dissipated"]
    return ("energy", "J", ec, ef, np.full(5, held), terms)


def check_verify_settings(factor: float, limit: float) -> None:
    """ValueError unless factor > 1 and limit > 0 (finite numbers)."""
    if not (isinstance(factor, (int, float)) and factor > 1.0 and math.isfinite(factor)):
        raise ValueError(f"the tolerance factor must be a number > 1, got {factor!r}")
    if not (isinstance(limit, (int, float)) and limit > 0.0 and math.isfinite(limit)):
        raise ValueError(f"the limit must be a positive number, got {limit!r}")


def _g(x: float | None) -> str:
    return "n/a" if x is None or not math.isfinite(x) else f"{x:.3g}"


def format_convergence(conv: Convergence, source: str = "") -> str:
    """The convergence check as text for people: the runs, then a line per group."""
    s0, s1 = conv.statistics
    lines = [
        f"convergence{' of ' + source if source else ''}: {conv.method} at rtol "
        f"{conv.rtol:g}, atol {conv.atol:g} against rtol {conv.rtol / conv.factor:g}, "
        f"atol {conv.atol / conv.factor:g}"
        + (
            f", compared from t = {conv.window[0]:g} to {conv.window[1]:g} s"
            if conv.window is not None
            else ""
        ),
        f"  runs: {s0.get('nsteps', 0)} and {s1.get('nsteps', 0)} steps, "
        f"{s0.get('wall_time', math.nan):.3g} and {s1.get('wall_time', math.nan):.3g} s "
        "integrating",
    ]
    if conv.status != ("finished", "finished"):
        lines.append(f"  a run did not finish ({conv.status[0]}, {conv.status[1]}): {conv.message}")
    else:
        lines.append(
            f"  {'group':28s} {'largest change':>16s} {'scale':>12s} {'relative':>10s}  where"
        )
        for g in conv.groups:
            lines.append(
                f"  {g.name[:28]:28s} {_g(g.change):>10s} {g.unit[:5]:5s} "
                f"{_g(g.scale):>12s} {_g(g.relative):>10s}  {g.column} at t = "
                f"{_g(g.at_time)} s{'' if g.passed else '  FAIL'}"
            )
    verdict = "PASS" if conv.passed else "FAIL"
    worst = conv.worst
    tail = f" (largest: {worst.name}, {_g(worst.relative)})" if worst is not None else ""
    lines.append(f"verdict: every group within {conv.limit:g} of its scale: {verdict}{tail}")
    if not conv.passed and conv.status == ("finished", "finished"):
        lines.append(
            "  remedy: tighten the tolerance (--rtol, --atol, or [solver] in the model "
            "file) until the check passes, or validate with bdf (docs/guides/solvers.md)"
        )
    return "\n".join(lines)
