"""What is in a result file, as text (`flexmbs info out.h5`)."""

from __future__ import annotations

import math
import os
import textwrap
from typing import TYPE_CHECKING

import numpy as np

from ..io.results import open_result
from .energy import energy_balance

if TYPE_CHECKING:
    from ..io.results import Result

__all__ = ["describe_result"]

WIDTH = 88  # characters per line of the description
LABEL = 14  # width of the label column


def _line(label: str, text: object) -> str:
    """`label` then `text`, wrapped and indented under the text column."""
    return textwrap.fill(
        str(text), width=WIDTH, initial_indent=f"{label:<{LABEL}}", subsequent_indent=" " * LABEL
    )


def _number(x: object) -> str:
    if isinstance(x, float):
        return "nan" if math.isnan(x) else f"{x:.6g}"
    return str(x)


def _time_line(r: Result) -> str:
    if r.nsamples == 0:
        return "no samples yet"
    return (
        f"{r.time[0]:.6g} .. {r.time[-1]:.6g} s, {r.nsamples} samples, "
        f"t_reached = {_number(r.t_reached)} s"
    )


def _sensor_text(r: Result) -> str:
    if not r.sensors:
        return "none"
    parts = []
    for name, a in r.sensors.items():
        size = 1 if a.ndim == 1 else a.shape[1]
        parts.append(f"{name} ({size})")
    return ", ".join(parts)


def _energy_text(r: Result) -> str:
    if r.nsamples == 0:
        return "no samples"
    b = energy_balance(r)
    verdict = "pass" if b["passed"] else "fail"
    return (
        f"E(0) = {_number(b['energy_initial'])} J, max |E - E(0)| = "
        f"{_number(b['drift_max'])} J, max U = {_number(b['strain_max'])} J; "
        f"{b['criterion']} criterion {_number(b['criterion_value'])} "
        f"(limit {b['ratio_limit']:g}): {verdict}"
    )


def _solver_lines(r: Result) -> list[str]:
    s = dict(r.solver)
    head = (
        f"{s.pop('method', '?')}, rtol {_number(s.pop('rtol', math.nan))}, "
        f"atol {_number(s.pop('atol', math.nan))}"
    )
    settings = s.pop("settings", {})
    lines = [_line("solver", head)]
    if settings:
        lines.append(
            _line("settings", ", ".join(f"{k} = {_number(v)}" for k, v in settings.items()))
        )
    stats = []
    for k, v in s.items():
        if isinstance(v, np.ndarray):
            v = np.array2string(v, separator=" ", threshold=20)
        stats.append(f"{k} = {_number(v)}")
    lines.append(_line("statistics", ", ".join(stats) if stats else "none recorded"))
    return lines


def describe_result(path: str | os.PathLike[str]) -> str:
    """A text description of the result file `path`: status, time span, number of
    samples, coordinates, sensors (with their sizes), energy summary and the solver's
    settings and statistics. Raises ResultFileError for a file that is not a result."""
    r = open_result(path)
    names = r.coordinate_names
    lines = [
        _line("file", r.path),
        _line("status", r.status_text),
        _line("created", f"{r.created} (flexmbs {r.flexmbs_version})"),
        _line("time", _time_line(r)),
        _line(
            "bodies",
            f"{len(r.topology.get('body_names', []))}: "
            + ", ".join(map(str, r.topology.get("body_names", []))),
        ),
        _line("coordinates", f"{len(names)}: " + ", ".join(names)),
        _line("sensors", _sensor_text(r)),
        _line("energy", _energy_text(r)),
    ]
    lines += _solver_lines(r)
    return "\n".join(lines)
