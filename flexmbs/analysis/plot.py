"""Plots of a result file (`flexmbs plot out.h5 [NAME ...]`), one panel per group.

Names: a coordinate name (its q(t)), a sensor name (all its columns), one column of a
sensor as `NAME[k]` (0-based) or `NAME[label]` (`tip[1]`, `tip[y]`: the syntax of
`sweep --summary`), `energy` (every energy curve) or `energy.<component>` (kinetic,
gravity, strain, spring, dissipated, total); each name is a panel. Without names,
panels by kind and unit: the joint coordinates, the elastic coordinates (one panel
per unit: m, rad, modal amplitudes), each sensor (one panel per unit of its columns: a
section-force sensor gives N and N m), and the energies. The y axes carry the units
the result file stores (flexmbs.checks.units), legends stand to the right of the data,
and a panel of more than MAX_LEGEND curves says how many it has instead. matplotlib
draws with its Agg canvas directly (no pyplot), so the caller's backend is left alone.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import TYPE_CHECKING

import numpy as np

from ..errors import FlexmbsError, ResultFileError
from ..io.results import (
    ENERGY_NAMES,
    column_index,
    component_labels,
    open_result,
    split_component,
)

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from ..io.results import Result

__all__ = ["plot_result", "available_names", "UnknownNameError", "IMAGE_FORMATS"]

IMAGE_FORMATS = ("png", "pdf", "svg", "svgz", "eps", "ps", "jpg", "jpeg", "tif", "tiff", "webp")
"""The file types `plot_result` writes (by the output's suffix; matplotlib's Agg,
PDF, SVG and PS backends)."""

MAX_LEGEND = 12  # curves in a panel beyond which it has no legend
PANEL_WIDTH = 9.0  # inches
PANEL_HEIGHT = 2.4  # inches
DPI = 110

Curves = list[tuple[str, np.ndarray]]


class UnknownNameError(ResultFileError, ValueError):
    """A plot name that the result file does not hold."""


def available_names(result: Result) -> list[str]:
    """The names plot_result accepts for this Result, in display order (a sensor of
    several columns also as NAME[k], not listed)."""
    return (
        list(result.coordinate_names)
        + list(result.sensors)
        + ["energy"] * bool(result.energy)
        + [f"energy.{n}" for n in ENERGY_NAMES if n in result.energy]
    )


def _unit_label(units: Iterable[str]) -> str:
    """The axis label of a panel whose curves have these units."""
    found = list(dict.fromkeys(u for u in units if u))
    return ", ".join(found) if found else "value"


def _sensor_units(result: Result, name: str, size: int) -> list[str]:
    return result.sensor_units.get(name) or [""] * size


def _panel(result: Result, name: str) -> tuple[str, str, Curves]:
    """(title, ylabel, [(label, (n,) values), ...]) of one name."""
    if name in result.coordinate_names:
        k = result.coordinate_names.index(name)
        unit = result.coordinate_units[k] if result.coordinate_units else ""
        return name, _unit_label([unit]), [(name, result.column(name))]
    if name in result.sensors:
        a = result.sensors[name]
        size = 1 if a.ndim == 1 else a.shape[1]
        label = _unit_label(_sensor_units(result, name, size))
        if a.ndim == 1:
            return f"sensor {name}", label, [(name, a)]
        return (f"sensor {name}", label, list(zip(component_labels(a.shape[1]), a.T)))
    base, component = split_component(name)
    if component is not None and base in result.sensors and result.sensors[base].ndim == 2:
        a = result.sensors[base]
        column = column_index(component, a.shape[1])
        if column is None:
            labels = component_labels(a.shape[1])
            raise UnknownNameError(
                f"{result.path}: sensor {base!r} has {a.shape[1]} columns "
                f"({', '.join(labels)}): expected {base}[0] to {base}[{a.shape[1] - 1}] "
                f"or {base}[{labels[0]}], got {name!r}"
            )
        unit = _sensor_units(result, base, a.shape[1])[column]
        return f"sensor {name}", _unit_label([unit]), [(name, a[:, column])]
    if name == "energy" and result.energy:
        return "energy", "J", _energy_curves(result)
    if name.startswith("energy.") and name[len("energy.") :] in result.energy:
        comp = name[len("energy.") :]
        return name, "J", [(comp, result.energy[comp])]
    raise UnknownNameError(
        f"{result.path}: nothing called {name!r} to plot; available: "
        + ", ".join(available_names(result))
        + " (one column of a sensor: NAME[k])"
    )


def _is_elastic(result: Result, name: str) -> bool:
    """An elastic coordinate is named BODY.<...> after a beam body."""
    bodies = {str(b) for b in result.topology.get("body_names", [])}
    return "." in name and name.split(".", 1)[0] in bodies


def _by_unit(curves: list[tuple[str, np.ndarray, str]]) -> dict[str, Curves]:
    groups: dict[str, Curves] = {}
    for label, values, unit in curves:
        groups.setdefault(unit, []).append((label, values))
    return groups


def _default_panels(result: Result) -> list[tuple[str, str, Curves]]:
    """The panels by kind and unit (the module docstring)."""
    names = result.coordinate_names
    units = result.coordinate_units or [""] * len(names)
    panels = []
    for kind, elastic in (("joint coordinates", False), ("elastic coordinates", True)):
        curves = [
            (n, result.q[:, k], units[k])
            for k, n in enumerate(names)
            if _is_elastic(result, n) == elastic
        ]
        for unit, group in _by_unit(curves).items():
            panels.append((kind, _unit_label([unit]) if unit else "m, rad", group))
    for name, a in result.sensors.items():
        columns = a[:, None] if a.ndim == 1 else a
        labels = [name] if a.ndim == 1 else component_labels(a.shape[1])
        unit_of = _sensor_units(result, name, columns.shape[1])
        curves = [(labels[j], columns[:, j], unit_of[j]) for j in range(columns.shape[1])]
        for unit, group in _by_unit(curves).items():
            panels.append((f"sensor {name}", _unit_label([unit]), group))
    if result.energy:
        panels.append(("energy", "J", _energy_curves(result)))
    return panels


def _energy_curves(result: Result) -> Curves:
    """The energies the file holds, in ENERGY_NAMES's order."""
    return [(n, result.energy[n]) for n in ENERGY_NAMES if n in result.energy]


def _figure(npanels: int) -> tuple[Figure, np.ndarray]:
    """A matplotlib Figure with an Agg canvas and `npanels` stacked axes."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise FlexmbsError("plotting needs matplotlib: pip install 'flexmbs[plot]'") from None
    fig = Figure(figsize=(PANEL_WIDTH, PANEL_HEIGHT * npanels), dpi=DPI, layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(npanels, 1, sharex=True, squeeze=False)[:, 0]
    return fig, axes


def plot_result(
    path: str | os.PathLike[str],
    names: Iterable[str] | None = None,
    out_png: str | os.PathLike[str] | None = None,
) -> str:
    """Plot the time series `names` of the result file `path` into the PNG `out_png`.

    names : list of names (see the module docstring); None or empty: the default.
    out_png : the PNG to write (parent directories created); None: `path` with the
        extension .png.
    Returns the path of the PNG. Raises UnknownNameError (a ResultFileError and a
    ValueError) naming an unknown name and listing the available ones, and
    ResultFileError for a file that is not a result.
    """
    result = open_result(path)
    names = list(names or [])
    panels = [_panel(result, n) for n in names] if names else _default_panels(result)
    fig, axes = _figure(len(panels))
    t = result.time
    for ax, (title, ylabel, curves) in zip(axes, panels):
        for label, y in curves:
            ax.plot(t, np.asarray(y), label=label, linewidth=1.0)
        many = len(curves) > MAX_LEGEND
        ax.set_title(
            f"{title} ({len(curves)} curves)" if many else title, fontsize="medium", loc="left"
        )
        ax.set_ylabel(ylabel)
        ax.grid(True, alpha=0.3)
        if 1 < len(curves) <= MAX_LEGEND:
            ax.legend(
                fontsize="small",
                loc="upper left",
                bbox_to_anchor=(1.01, 1.0),
                borderaxespad=0.0,
                ncols=1 if len(curves) <= 6 else 2,
            )
    axes[-1].set_xlabel("t (s)")
    if result.status != "finished":
        fig.suptitle(f"{os.path.basename(result.path)}: {result.status}", fontsize="medium")
    if out_png is None:
        out_png = os.path.splitext(result.path)[0] + ".png"
    out_png = os.fspath(out_png)
    os.makedirs(os.path.dirname(os.path.abspath(out_png)), exist_ok=True)
    fig.savefig(out_png)
    return out_png
