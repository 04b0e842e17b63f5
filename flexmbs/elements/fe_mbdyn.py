"""MBDyn's modal files (.fem) read and written for a finite-element body
(flexmbs.elements.fe_files)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from ..errors import ModelError
from .fe_body import FeModal
from .fe_units import data_file, unit_scales

__all__ = ["read_mbdyn_fem", "write_mbdyn_fem"]


def read_mbdyn_fem(
    path: str | os.PathLike[str],
    units: str = "m-kg-s",
    item: str | None = None,
    base: str | None = None,
) -> FeModal:
    """FeModal of an MBDyn modal file (.fem; record groups 1-13: header, node labels,
    initial modal states (ignored), coordinates, mode shapes, modal mass and
    stiffness, the lumped nodal masses, the rigid-body inertia (ignored: the nodes'
    masses give it) and the modal damping), in `units`, converted to SI."""
    p = data_file(path, base, item, "modal")
    scales = unit_scales(units, item)
    groups: dict[int, list[float]] = {}
    current = None
    text = p.read_bytes()
    if b"\0" in text[:4096]:
        raise ModelError(
            f"{p.name}: a binary file: expected an MBDyn modal file (text)", item, "modal"
        )
    for number, line in enumerate(text.decode("utf-8", errors="replace").splitlines(), 1):
        s = line.strip()
        m = re.match(r"\*\*\s*RECORD GROUP\s+(\d+)", s, re.IGNORECASE)
        if m:
            current = int(m.group(1))
            groups[current] = []
            continue
        if not s or s.startswith("**") or current is None:
            continue
        words = s.split()[1:] if current == 1 else s.replace(",", " ").split()
        try:
            values = [float(v) for v in words]
        except ValueError:
            raise ModelError(
                f"{p.name}: line {number} (record group {current}): expected numbers, got "
                f"{s[:60]!r}",
                item,
                "modal",
            ) from None
        if not all(np.isfinite(values)):
            raise ModelError(
                f"{p.name}: line {number} (record group {current}): expected finite numbers, "
                f"got {s[:60]!r}",
                item,
                "modal",
            )
        groups[current] += values

    def group(g: int, size: int, what: str) -> list[float]:
        values = groups.get(g)
        if values is None or len(values) < size:
            got = "none" if values is None else f"{len(values)} numbers"
            raise ModelError(
                f"{p.name}: record group {g} ({what}): expected {size} numbers, got {got}: "
                "not an MBDyn modal file, or one cut short",
                item,
                "modal",
            )
        return values[:size]

    header = [int(v) for v in group(1, 5, "the header: nodes and modes")]
    nnodes = header[0]
    nmodes = header[1] + header[2] + header[3] - header[4]
    if nnodes < 1 or nmodes < 1:
        raise ModelError(
            f"{p.name}: record group 1: {nnodes} nodes and {nmodes} modes: expected at least one "
            "of each",
            item,
            "modal",
        )
    labels = np.array(group(2, nnodes, "the node labels"), dtype=np.int64)
    x = np.column_stack([group(g, nnodes, "the nodes' coordinates") for g in (5, 6, 7)])
    x = x * scales[0]
    shapes = np.array(group(8, 6 * nnodes * nmodes, "the mode shapes"))
    shapes = shapes.reshape(nmodes, 6 * nnodes).T
    mass = np.array(group(9, nmodes * nmodes, "the modal mass")).reshape(nmodes, nmodes)
    stiff = np.array(group(10, nmodes * nmodes, "the modal stiffness")).reshape(nmodes, nmodes)
    if 11 not in groups or len(groups[11]) < 6 * nnodes:
        raise ModelError(
            f"{p.name}: no lumped nodal masses (record group 11): flexmbs takes the "
            "body's inertia from them",
            item,
            "modal",
        )
    length, mass_unit, time = scales
    rot = np.arange(6 * nnodes) % 6 >= 3
    shapes[~rot] *= length  # translations per modal unit; rotations stay rad
    lumped = np.array(groups[11][: 6 * nnodes]).reshape(nnodes, 6) * mass_unit
    lumped[:, 3:] *= length**2
    damping = None
    if 13 in groups and len(groups[13]) >= nmodes * nmodes:
        damping = np.array(groups[13][: nmodes * nmodes]).reshape(nmodes, nmodes)
    # modal coordinates keep the file's scale; their mass, stiffness, damping to SI
    mass = mass * mass_unit * length**2
    stiff = stiff * mass_unit * length**2 / time**2
    if damping is not None:
        damping = damping * mass_unit * length**2 / time
    return FeModal(x, labels, shapes, mass, stiff, lumped, damping, (), p.name)


def write_mbdyn_fem(
    path: str | os.PathLike[str],
    nodes: NDArray[np.float64],
    labels: NDArray[np.int64],
    shapes: NDArray[np.float64],
    mass: NDArray[np.float64],
    stiffness: NDArray[np.float64],
    lumped: NDArray[np.float64],
    damping: NDArray[np.float64] | None = None,
    total: tuple[float, NDArray[np.float64], NDArray[np.float64]] | None = None,
) -> None:
    """Write an MBDyn modal file (SI): nodes (n, 3) m, labels (n,), shapes (6 n, nm)
    at u v w tx ty tz, modal mass and stiffness (nm, nm), lumped (n, 6) the nodes'
    masses and rotary inertias, damping (nm, nm) or None, total (mass, centre of
    mass, inertia about it) or None."""
    n, nm = len(nodes), shapes.shape[1]
    out = [
        "** MBDyn MODAL DATA FILE",
        "** written by flexmbs",
        "",
        "** RECORD GROUP 1, HEADER",
        "**   REVISION,  NODE,  NORMAL, ATTACHMENT, CONSTRAINT, REJECTED MODES.",
        f"      REV0 {n} {nm} 0 0 0",
        "**",
        "",
        "** RECORD GROUP 2, FINITE ELEMENT NODE LIST",
        " ".join(str(int(v)) for v in labels),
        "**",
        "",
        "** RECORD GROUP 3, INITIAL MODAL DISPLACEMENTS",
        " ".join(["0"] * nm),
        "**",
        "",
        "** RECORD GROUP 4, INITIAL MODAL VELOCITIES",
        " ".join(["0"] * nm),
        "**",
    ]
    fmt = "{:.16e}".format
    for g, axis in ((5, "X"), (6, "Y"), (7, "Z")):
        out += ["", f"** RECORD GROUP {g}, NODAL {axis} COORDINATES"]
        out += [fmt(v) for v in nodes[:, g - 5]]
        out += ["**"]
    out += ["", "** RECORD GROUP 8, MODE SHAPES"]
    for k in range(nm):
        out.append(f"**    NORMAL MODE SHAPE #  {k + 1}")
        out += [" ".join(fmt(v) for v in row) for row in shapes[:, k].reshape(n, 6)]
    out += ["**", "", "** RECORD GROUP 9, MODAL MASS MATRIX"]
    out += [" ".join(fmt(v) for v in row) for row in mass]
    out += ["**", "", "** RECORD GROUP 10, MODAL STIFFNESS MATRIX"]
    out += [" ".join(fmt(v) for v in row) for row in stiffness]
    out += ["**", "", "** RECORD GROUP 11, DIAGONAL OF LUMPED MASS MATRIX"]
    out += [" ".join(fmt(v) for v in row) for row in lumped]
    out += ["**"]
    if total is not None:
        m, c, j = total
        out += [
            "",
            "** RECORD GROUP 12, RIGID BODY INERTIA MATRIX",
            fmt(m),
            " ".join(fmt(v) for v in c),
        ]
        out += [" ".join(fmt(v) for v in row) for row in j]
        out += ["**"]
    if damping is not None:
        out += ["", "** RECORD GROUP 13, MODAL DAMPING MATRIX"]
        out += [" ".join(fmt(v) for v in row) for row in damping]
        out += ["**"]
    Path(path).write_text("\n".join(out) + "\n", encoding="utf-8")
