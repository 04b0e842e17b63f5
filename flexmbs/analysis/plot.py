"""PNG plots of a result file (`flexmbs plot out.h5 [NAME ...]`), one panel per name.

Names: a coordinate name (its q(t)), a sensor name (all its columns), `energy` (every
energy curve) or `energy.<component>` (kinetic, gravity, strain, spring, dissipated,
total). Without names: the coordinates (one panel each, or one panel for all when there
are more than MAX_COORDINATE_PANELS) and the energies. matplotlib draws with its Agg
canvas directly (no pyplot), so the caller's backend is left alone.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import TYPE_CHECKING

import numpy as np

from ..errors import FlexmbsError, ResultFileError
from ..io.results import ENERGY_NAMES, component_labels, open_result

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from ..io.results import Result

__all__ = ["plot_result", "available_names", "UnknownNameError", "IMAGE_FORMATS"]

IMAGE_FORMATS = ("png", "pdf", "svg", "svgz", "eps", "ps", "jpg", "jpeg", "tif", "tiff", "webp")
"""The file types `plot_result` writes (by the output's suffix; matplotlib's Agg,
PDF, SVG and PS backends)."""

MAX_COORDINATE_PANELS = 8  # default plot: more coordinates than this share one panel
PANEL_WIDTH = 8.0  # inches
PANEL_HEIGHT = 2.4  # inches
DPI = 110
ALL_COORDINATES = "coordinates"  # the panel name used for all coordinates together


class UnknownNameError(ResultFileError, ValueError):
    """A plot name that the result file does not hold."""


def available_names(result: Result) -> list[str]:
    """The names plot_result accepts for this Result, in display order."""
    return (
        list(result.coordinate_names)
        + list(result.sensors)
        + ["energy"]
        + [f"energy.{n}" for n in ENERGY_NAMES]
    )


def _panel(result: Result, name: str) -> tuple[str, str, list[tuple[str, np.ndarray]]]:
    """(title, ylabel, [(label, (n,) values), ...]) of one name."""
    if name in result.coordinate_names:
        return name, name, [(name, result.q[:, result.coordinate_names.index(name)])]
    if name in result.sensors:
        a = result.sensors[name]
        if a.ndim == 1:
            return f"sensor {name}", name, [(name, a)]
        return (f"sensor {name}", name, list(zip(component_labels(a.shape[1]), a.T)))
    if name == "energy":
        return "energy", "J", [(n, result.energy[n]) for n in ENERGY_NAMES]
    if name.startswith("energy.") and name[len("energy.") :] in result.energy:
        comp = name[len("energy.") :]
        return name, "J", [(comp, result.energy[comp])]
    if name == ALL_COORDINATES:
        return "coordinates q", "m, rad", list(zip(result.coordinate_names, result.q.T))
    raise UnknownNameError(
        f"{result.path}: nothing called {name!r} to plot; available: "
        + ", ".join(available_names(result))
    )


def _default_names(result: Result) -> list[str]:
    if len(result.coordinate_names) > MAX_COORDINATE_PANELS:
        return [ALL_COORDINATES, "energy"]
    return list(result.coordinate_names) + ["energy"]


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
    names = list(names) if names else _default_names(result)
    panels = [_panel(result, n) for n in names]  # every name checked before drawing
    fig, axes = _figure(len(panels))
    t = result.time
    for ax, (title, ylabel, curves) in zip(axes, panels):
        for label, y in curves:
            ax.plot(t, np.asarray(y), label=label, linewidth=1.0)
        ax.set_title(title, fontsize="medium", loc="left")
        ax.set_ylabel(ylabel)
        ax.grid(True, alpha=0.3)
        if len(curves) > 1:
            ax.legend(fontsize="small", ncols=min(len(curves), 6), loc="best")
    axes[-1].set_xlabel("t (s)")
    if result.status != "finished":
        fig.suptitle(f"{os.path.basename(result.path)}: {result.status}", fontsize="medium")
    if out_png is None:
        out_png = os.path.splitext(result.path)[0] + ".png"
    out_png = os.fspath(out_png)
    os.makedirs(os.path.dirname(os.path.abspath(out_png)), exist_ok=True)
    fig.savefig(out_png)
    return out_png
